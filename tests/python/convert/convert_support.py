"""Support of the convert / check tests: the real Husky recording (rosbag2
MCAP conversion of robot_localization's test1.bag: IMU 30 Hz, wheel odometry
10 Hz, GPS 2.5 Hz) read message by message through mcap + mcap-ros2-support,
which the converter does not use (it reads through rosbags)."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
HUSKY_MCAP = ROOT / "data/robot/ros2/robot_localization_test1_mcap"
HUSKY_BAG = ROOT / "data/robot/ros1/robot_localization_test1.bag"
LEROBOT = ROOT / "data/robot/lerobot"
ODOM = "/husky_velocity_controller/odom"
HUSKY_STREAMS = ["observation.imu=/imu/data/angular_velocity,/imu/data/linear_acceleration",
                 f"observation.state={ODOM}/pose",
                 f"action={ODOM}/twist,method=previous"]


def _xyz(v):
    return [v.x, v.y, v.z]


@pytest.fixture(scope="session")
def husky_messages():
    """topic -> (header stamps int64 ns [S], dict of float64 arrays)."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    rows = {"/imu/data": [], ODOM: []}
    path = next(HUSKY_MCAP.glob("*.mcap"))
    with open(path, "rb") as fh:
        reader = make_reader(fh, decoder_factories=[DecoderFactory()])
        for _, channel, _, msg in reader.iter_decoded_messages(topics=list(rows)):
            stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            if channel.topic == "/imu/data":
                rows["/imu/data"].append((stamp, _xyz(msg.angular_velocity)
                                          + _xyz(msg.linear_acceleration)))
            else:
                p, t = msg.pose.pose, msg.twist.twist
                o = p.orientation
                rows[ODOM].append((stamp, _xyz(p.position) + [o.x, o.y, o.z, o.w]
                                   + _xyz(t.linear) + _xyz(t.angular)))
    out = {}
    for topic, r in rows.items():
        r.sort(key=lambda x: x[0])
        out[topic] = (np.array([x[0] for x in r], np.int64), np.array([x[1] for x in r]))
    return out


# NumPy oracles of the converter's grid and methods

def oracle_grid(times, fps):
    start = max(int(t[0]) for t in times)
    end = min(int(t[-1]) for t in times)
    n = np.arange(int((end - start) * fps / 1e9) + 2)
    grid = start + np.round(n * 1e9 / fps).astype(np.int64)
    return grid[grid <= end]


def hold(t, v, grid):
    return v[np.searchsorted(t, grid, side="right") - 1]


def interp(t, v, grid):
    tt = (t - t[0]).astype(np.float64)
    g = (grid - t[0]).astype(np.float64)
    return np.stack([np.interp(g, tt, v[:, j]) for j in range(v.shape[1])], axis=1)


def no_gap_holds_a_frame(t, grid):
    """The default max_gap (3 median periods): no frame may fall in a longer gap, else
    the converter marks it invalid (checked separately)."""
    dt = np.diff(t)
    limit = 3 * np.median(dt)
    gaps = np.flatnonzero(dt > limit)
    return all(not np.any((grid > t[i]) & (grid < t[i + 1])) for i in gaps)


def write_bag(path, topics, modes=None):
    """A rosbag2 (sqlite3) of sensor_msgs/Imu topics: {topic: [stamp ns, ...]};
    angular_velocity = (message number, 0, 0), or (0, 0, modes[topic][i])."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore
    ts = get_typestore(Stores.ROS2_HUMBLE)
    Imu, Header, Time = (ts.types[n] for n in ("sensor_msgs/msg/Imu", "std_msgs/msg/Header",
                                                "builtin_interfaces/msg/Time"))
    Quat, Vec = ts.types["geometry_msgs/msg/Quaternion"], ts.types["geometry_msgs/msg/Vector3"]
    cov = np.zeros(9)
    with Writer(path, version=9) as w:
        for topic, stamps in topics.items():
            conn = w.add_connection(topic, Imu.__msgtype__, typestore=ts)
            for i, t in enumerate(stamps):
                msg = Imu(Header(Time(t // 10**9, t % 10**9), "imu"), Quat(0, 0, 0, 1), cov,
                          Vec(0, 0, modes[topic][i]) if topic in (modes or {}) else Vec(i, 0, 0),
                          cov, Vec(0, 0, 9.8), cov)
                w.write(conn, t, ts.serialize_cdr(msg, Imu.__msgtype__))


# The real `lerobot` package as an oracle. It needs Python >= 3.12 and torch < 2.12, so it
# runs in its own environment through a subprocess: $ROBOCACHE_LEROBOT_PYTHON, else
# .venv-lerobot/bin/python at the repository root (scripts/install-lerobot-oracle.sh).

LEROBOT_PYTHON = (os.environ.get("ROBOCACHE_LEROBOT_PYTHON")
                  or str(ROOT / ".venv-lerobot/bin/python"))
needs_lerobot = pytest.mark.skipif(not os.access(LEROBOT_PYTHON, os.X_OK),
                                   reason=f"no lerobot environment at {LEROBOT_PYTHON}")


def run_lerobot(script, *args):
    """Runs `script` in the lerobot environment (offline) with sys.argv[1:] = args;
    asserts it succeeded."""
    p = subprocess.run([LEROBOT_PYTHON, "-c", script, *map(str, args)], capture_output=True,
                       text=True, env={**os.environ, "HF_HUB_OFFLINE": "1",
                                       "HF_DATASETS_OFFLINE": "1"})
    assert p.returncode == 0, p.stderr[-3000:]


LOAD_FRAMES = r"""
import sys
import numpy as np
from lerobot.datasets.lerobot_dataset import LeRobotDataset
root, key, out = sys.argv[1], sys.argv[2], sys.argv[3]
ds = LeRobotDataset("local/robocache_convert", root=root, video_backend="pyav")
picks = [int(i) for i in sys.argv[4].split(",")]
rows = [ds[i] for i in picks]
np.savez(out, n=len(ds), frames=np.stack([r[key].numpy() for r in rows]),
         episode=np.array([int(r["episode_index"]) for r in rows]),
         frame=np.array([int(r["frame_index"]) for r in rows]))
"""


def lerobot_frames(root, key, picks, dump):
    """LeRobotDataset(root)[i][key] for i in picks (pyav backend, default tolerance_s):
    dict n (rows), frames uint8-scale float [n, H, W, 3], episode, frame (indices)."""
    run_lerobot(LOAD_FRAMES, root, key, dump, ",".join(map(str, picks)))
    got = np.load(dump)
    return {"n": int(got["n"]), "frames": got["frames"].transpose(0, 2, 3, 1) * 255,
            "episode": got["episode"], "frame": got["frame"]}


# PyAV oracles of an MP4: the packets and frames of [t0, t1) (LeRobot's from_timestamp and
# to_timestamp), read directly from the file

def video_packets(path, t0, t1, tol=1e-4):
    """bytes of the packets whose PTS time is in [t0 - tol, t1 - tol), decode order."""
    import av
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return [bytes(p) for p in c.demux(s)
                if p.pts is not None and t0 - tol <= float(p.pts * s.time_base) < t1 - tol]


def video_frames(path, t0, t1, tol=1e-4):
    """uint8 [n, H, W, 3] RGB of the frames in [t0 - tol, t1 - tol), decoded in order."""
    import av
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(s)
                         if t0 - tol <= float(f.pts * s.time_base) < t1 - tol])
