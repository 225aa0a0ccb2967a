#!/usr/bin/env python3
"""Conversion throughput of `robocache convert` against the converter users
write with rosbags + pandas.merge_asof, on one core, same machine, same run.

Input: a rosbag2 MCAP written here from the real messages of
data/robot/ros2/robot_localization_test1_mcap repeated with shifted times
(bench_read_rosbag.write_larger: uncompressed, 7.6 MB a copy; --copies, default
16: about 120 MB; the issue's 1 GB is 131 copies, scaled down for the 2-core
shared machine's time).
Both converters write the same three features at --fps (default 30) over the
IMU/odometry overlap to Parquet:

  robocache convert   robocache.convert.convert(..., to="lerobot"): LeRobot v3.0,
                      linear IMU and position, slerp orientation, held action,
                      stats and metadata
  rosbags + pandas    AnyReader + deserialize into lists, one DataFrame per
                      topic, pandas.merge_asof(direction="nearest") of each onto
                      the frame grid, DataFrame.to_parquet (nearest sample, no
                      interpolation: less work than the converter does)

Runs alternate (one of each per round) after a warm-up round, the process
pinned to one CPU. Times are CPU seconds of the process (the machine is
shared; as bench_read_rosbag), wall-clock medians kept beside them. Prints a table and writes
bench/results/convert_<cpu-model>.json: device, versions, command, commit, bag
bytes and messages, frames, median/p10/p90 seconds, MB of bag per second per
core, frames per second, the baseline's time over robocache's, and the
minutes per GB of bag on one core and on a 16-core node (one bag per core).

usage: python bench/bench_convert.py [--copies N] [--repeats R] [--fps F] [--out FILE]
"""
import argparse
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time

import numpy as np

from bench_common import commit, cpu_model, slug
from bench_read_rosbag import bag_bytes, stats, write_larger

ROOT = pathlib.Path(__file__).resolve().parents[1]
ODOM = "/husky_velocity_controller/odom"
STREAMS = ["observation.imu=/imu/data/angular_velocity,/imu/data/linear_acceleration",
           f"observation.state={ODOM}/pose", f"action={ODOM}/twist"]


def robocache_convert(bag, out, fps):
    from robocache.convert import convert
    report = convert([str(bag)], str(out), to="lerobot", fps=fps, streams=STREAMS,
                     overwrite=True)
    return sum(e["frames"] for e in report["episodes"])


def pandas_convert(bag, out, fps):
    """The converter a user writes: read every message, one DataFrame per
    topic, merge_asof each onto a fixed-rate grid, write Parquet."""
    import pandas as pd
    from rosbags.highlevel import AnyReader
    imu, odom = [], []
    with AnyReader([bag]) as reader:
        for conn, _, raw in reader.messages():
            msg = reader.deserialize(raw, conn.msgtype)
            t = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            if conn.topic == "/imu/data":
                a, la = msg.angular_velocity, msg.linear_acceleration
                imu.append((t, a.x, a.y, a.z, la.x, la.y, la.z))
            elif conn.topic == ODOM:
                p, o = msg.pose.pose.position, msg.pose.pose.orientation
                v, w = msg.twist.twist.linear, msg.twist.twist.angular
                odom.append((t, p.x, p.y, p.z, o.x, o.y, o.z, o.w, v.x, v.y, v.z, w.x, w.y, w.z))
    imu = pd.DataFrame(imu, columns=["t", "wx", "wy", "wz", "ax", "ay", "az"]).sort_values("t")
    odom = pd.DataFrame(odom, columns=["t", "px", "py", "pz", "qx", "qy", "qz", "qw",
                                       "vx", "vy", "vz", "rx", "ry", "rz"]).sort_values("t")
    start = max(imu.t.iloc[0], odom.t.iloc[0])
    end = min(imu.t.iloc[-1], odom.t.iloc[-1])
    grid = pd.DataFrame({"t": np.arange(start, end + 1, int(round(1e9 / fps)), dtype=np.int64)})
    frame = pd.merge_asof(grid, imu, on="t", direction="nearest")
    frame = pd.merge_asof(frame, odom, on="t", direction="nearest")
    frame["timestamp"] = (np.arange(len(frame)) / fps).astype(np.float32)
    frame["frame_index"] = np.arange(len(frame))
    frame.to_parquet(out)
    return len(frame)


def versions():
    from importlib.metadata import version
    import robocache
    return dict(robocache=robocache.__version__, rosbags=version("rosbags"),
                pandas=version("pandas"), pyarrow=version("pyarrow"), numpy=np.__version__,
                python=sys.version.split()[0])



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--out")
    args = ap.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    os.environ["OMP_NUM_THREADS"] = "1"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench_convert_"))
    try:
        bag = tmp / "husky_repeated"
        messages = write_larger(bag, args.copies)
        nbytes = bag_bytes(bag)
        impls = {"robocache convert": (robocache_convert, tmp / "lerobot"),
                 "rosbags + pandas.merge_asof": (pandas_convert, tmp / "pandas.parquet")}
        frames = {name: fn(bag, out, args.fps) for name, (fn, out) in impls.items()}
        cpu, wall = ({name: [] for name in impls} for _ in range(2))
        for _ in range(args.repeats):
            for name, (fn, out) in impls.items():
                c0, w0 = time.process_time(), time.perf_counter()
                fn(bag, out, args.fps)
                cpu[name].append(time.process_time() - c0)
                wall[name].append(time.perf_counter() - w0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res = {}
    for name in impls:
        s = stats(cpu[name], wall[name])
        s.update(frames=frames[name], mb_per_s_per_core=nbytes / s["median_s"] / 1e6,
                 frames_per_s=frames[name] / s["median_s"],
                 minutes_per_gb_one_core=s["median_s"] / (nbytes / 1e9) / 60,
                 minutes_per_gb_16_cores=s["median_s"] / (nbytes / 1e9) / 60 / 16)
        res[name] = s
    base = res["robocache convert"]["median_s"]
    out = dict(device=cpu_model(), cores_used=1, versions=versions(),
               command=" ".join(["python", "bench/bench_convert.py"] + sys.argv[1:]),
               commit=commit(), bag=dict(copies=args.copies, bytes=nbytes, messages=messages),
               fps=args.fps, implementations=res,
               time_over_robocache={n: v["median_s"] / base for n, v in res.items()})
    print(f"bag: {args.copies} copies of robot_localization_test1, {nbytes / 1e6:.1f} MB, "
          f"{messages} messages; {args.fps} fps; one core of {out['device']}")
    print("times: CPU seconds of this process (median, p10, p90), wall median")
    print(f"{'converter':30s} {'median s':>9s} {'p10':>7s} {'p90':>7s} {'wall s':>7s} "
          f"{'MB/s/core':>10s} "
          f"{'frames/s':>10s} {'min/GB/core':>12s} {'x robocache':>12s}")
    for name, v in res.items():
        print(f"{name:30s} {v['median_s']:9.2f} {v['p10_s']:7.2f} {v['p90_s']:7.2f} "
              f"{v['wall_median_s']:7.2f} "
              f"{v['mb_per_s_per_core']:10.2f} {v['frames_per_s']:10.0f} "
              f"{v['minutes_per_gb_one_core']:12.2f} {out['time_over_robocache'][name]:12.2f}")
    path = pathlib.Path(args.out) if args.out else \
        ROOT / "bench" / "results" / f"convert_{slug(out['device'])}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
