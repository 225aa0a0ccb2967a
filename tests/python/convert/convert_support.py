"""Support of the convert / check tests: the real Husky recording (rosbag2
MCAP conversion of robot_localization's test1.bag: IMU 30 Hz, wheel odometry
10 Hz, GPS 2.5 Hz) read message by message through mcap + mcap-ros2-support,
which the converter does not use (it reads through rosbags)."""

import json
import os
import pathlib
import subprocess

import av
import numpy as np
import pyarrow.parquet as pq
import pytest

from robocache.convert._check import check

ROOT = pathlib.Path(__file__).resolve().parents[3]
HUSKY_MCAP = ROOT / "data/robot/ros2/robot_localization_test1_mcap"
HUSKY_BAG = ROOT / "data/robot/ros1/robot_localization_test1.bag"
LEROBOT = ROOT / "data/robot/lerobot"
V30 = LEROBOT / "lingzu_open50_v30_subset"
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
extra = {k: np.stack([r[k].numpy() for r in rows]) for k in sys.argv[5:]}
np.savez(out, n=len(ds), frames=np.stack([r[key].numpy() for r in rows]),
         episode=np.array([int(r["episode_index"]) for r in rows]),
         frame=np.array([int(r["frame_index"]) for r in rows]), **extra)
"""


def lerobot_frames(root, key, picks, dump, *vectors):
    """LeRobotDataset(root)[i] for i in picks (pyav backend, default tolerance_s):
    dict n (rows), frames (of `key`, uint8-scale float [n, H, W, 3]), episode,
    frame (indices) and each of `vectors` (feature names)."""
    run_lerobot(LOAD_FRAMES, root, key, dump, ",".join(map(str, picks)), *vectors)
    got = dict(np.load(dump))
    got["frames"] = got["frames"].transpose(0, 2, 3, 1) * 255
    got["n"] = int(got["n"])
    return got


# PyAV oracles of an MP4: the packets and frames of [t0, t1) (LeRobot's from_timestamp and
# to_timestamp), read directly from the file

def video_packets(path, t0, t1, tol=1e-4):
    """bytes of the packets whose PTS time is in [t0 - tol, t1 - tol), decode order."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return [bytes(p) for p in c.demux(s)
                if p.pts is not None and t0 - tol <= float(p.pts * s.time_base) < t1 - tol]


def video_frames(path, t0, t1, tol=1e-4):
    """uint8 [n, H, W, 3] RGB of the frames in [t0 - tol, t1 - tol), decoded in order."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(s)
                         if t0 - tol <= float(f.pts * s.time_base) < t1 - tol])


# The LeRobot v3.0 video fixture and converted datasets, episode by episode; a converted
# dataset's image feature copied from its sources (one (mp4, t0, t1) per output episode)

def v30_source_episodes():
    """[(mp4, from_timestamp, from_timestamp + length / fps)] of the fixture's episodes,
    from its meta (its to_timestamp is the last frame's time, one frame short)."""
    t = pq.read_table(next((V30 / "meta/episodes").rglob("*.parquet"))).to_pylist()
    out = []
    for row in sorted(t, key=lambda r: r["episode_index"]):
        mp4 = V30 / "videos/image/chunk-{:03d}/file-{:03d}.mp4".format(
            row["videos/image/chunk_index"], row["videos/image/file_index"])
        if mp4.exists():
            t0 = row["videos/image/from_timestamp"]
            out.append((mp4, t0, t0 + row["length"] / 30))
    return out


def output_episodes(out, key):
    """[(mp4, from_timestamp, to_timestamp)] of a converted dataset's episodes."""
    t = pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    return [(out / "videos/{}/chunk-{:03d}/file-{:03d}.mp4".format(
        key, r[f"videos/{key}/chunk_index"], r[f"videos/{key}/file_index"]),
        r[f"videos/{key}/from_timestamp"], r[f"videos/{key}/to_timestamp"]) for r in t]


def stream_info(mp4):
    with av.open(str(mp4)) as c:
        cc = c.streams.video[0].codec_context
        return {"video.codec": cc.codec.canonical_name, "video.pix_fmt": cc.pix_fmt,
                "video.width": cc.width, "video.height": cc.height}


def assert_passthrough(out, key, sources):
    got = output_episodes(out, key)
    assert len(got) == len(sources)
    for (mp4, a0, a1), (src, b0, b1) in zip(got, sources):
        want = video_packets(src, b0, b1)
        assert len(want) > 0 and video_packets(mp4, a0, a1) == want
    info = json.loads((out / "meta/info.json").read_text())["features"][key]["info"]
    assert {k: info[k] for k in stream_info(sources[0][0])} == stream_info(sources[0][0])
    meta = json.loads((out / "meta/robocache.json").read_text())["videos"][key]
    assert [e["path"] for e in meta["episodes"]] == ["passthrough"] * len(sources)
    report = json.loads((out.parent / (out.name + ".sync.json")).read_text())
    assert [e["videos"][key]["path"] for e in report["episodes"]] == ["passthrough"] * len(sources)
    assert check(str(out)) == []


def assert_lerobot_frames(out, key, sources, tmp_path, step, *vectors):
    """lerobot's frames of every `step`-th row and each episode's first and last
    equal the frames of `sources` ([(mp4, t0, t1)] per episode) decoded by PyAV.
    Returns the picked rows and lerobot_frames' dict (with `vectors`)."""
    want = [video_frames(*s) for s in sources]
    starts = np.cumsum([0] + [len(w) for w in want])
    picks = sorted(set(range(0, starts[-1], step)) | set(starts[1:] - 1) | set(starts[:-1]))
    got = lerobot_frames(out, key, picks, tmp_path / "frames.npz", *vectors)
    assert got["n"] == starts[-1]
    for k, i in enumerate(picks):
        e = int(np.searchsorted(starts, i, side="right")) - 1
        assert got["episode"][k] == e and got["frame"][k] == i - starts[e]
        np.testing.assert_allclose(got["frames"][k], want[e][i - starts[e]], atol=0.5)
    return picks, got
