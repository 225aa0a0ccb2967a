#!/usr/bin/env python3
"""Read throughput of robocache.datasets on ROS bags against the loops a user
would write, on one core.

For each bag in data/robot (ROS 1 .bag, rosbag2 MCAP and sqlite3) and a larger
MCAP bag written here from the real messages of
robot_localization_test1_mcap repeated with shifted times (log times and
header stamps moved on by whole seconds per copy; default 4 copies):

  robocache.datasets  rd.open(path) + times and values of every stream
                      (header.stamp clock, NumPy arrays)
  rosbags loop        AnyReader + deserialize + append the same fields to
                      lists per stream -> np.array (rosbags.rosbag1.Reader +
                      the ROS 1 Noetic type store for the bag AnyReader
                      refuses, as data/robot/README.md says)
  mcap-ros2 loop      MCAP bags only: mcap's reader + mcap-ros2-support's
                      decoder + the same lists -> np.array

Every implementation must give the same arrays (times and values of every
stream) or the script exits 1. Runs are interleaved (one of each per round,
each implementation first in turn) after a warm-up round, with the garbage
collected before and no collection during each timed run (as timeit). Prints a table and writes
bench/results/read_rosbag_<cpu-model>.json: device, versions, command, commit,
per bag its size and messages, median/p10/p90 CPU seconds of this process
(the machine may be shared: CPU time is what another process's load moves
least) and the wall-clock ones, MB/s (file bytes / CPU median), messages/s
and each loop's CPU time over robocache's.

usage: python bench/bench_read_rosbag.py [--repeats R] [--copies N] [--out FILE]
"""
import argparse
import gc
import os
import pathlib
import struct
import sys
import tempfile
import time

import numpy as np

from bench_common import commit, cpu_model, slug, write_json

ROOT = pathlib.Path(__file__).resolve().parents[1]
ROBOT = ROOT / "data" / "robot"
BAGS = ["ros1/robot_localization_test1.bag", "ros1/robot_localization_test2.bag",
        "ros1/robot_state_publisher_joint_states_indexed.bag",
        "ros2/robot_localization_test1_mcap", "ros2/evo_nav2_turtlebot.mcap",
        "ros2/evo_tf_example"]
LEGACY = "robot_state_publisher_joint_states_indexed.bag"  # AnyReader refuses its types


def ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def fields(topic, t, msg):
    """[(stream name, header stamp ns, values)] of one message of type t, as a
    user would pick them (the streams robocache.datasets names)."""
    if t.endswith("TFMessage"):
        out = []
        for tr in msg.transforms:
            pair = f"{topic}/{tr.header.frame_id.lstrip('/')}/{tr.child_frame_id.lstrip('/')}"
            tl, r = tr.transform.translation, tr.transform.rotation
            out += [(pair + "/translation", ns(tr.header.stamp), (tl.x, tl.y, tl.z)),
                    (pair + "/rotation", ns(tr.header.stamp), (r.x, r.y, r.z, r.w))]
        return out
    h = ns(msg.header.stamp)
    if t.endswith("Imu"):
        o, a, la = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        return [(topic + "/orientation", h, (o.x, o.y, o.z, o.w)),
                (topic + "/angular_velocity", h, (a.x, a.y, a.z)),
                (topic + "/linear_acceleration", h, (la.x, la.y, la.z))]
    if t.endswith("Odometry"):
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
        return [(topic + "/pose/position", h, (p.x, p.y, p.z)),
                (topic + "/pose/orientation", h, (o.x, o.y, o.z, o.w)),
                (topic + "/twist/linear", h, (lin.x, lin.y, lin.z)),
                (topic + "/twist/angular", h, (ang.x, ang.y, ang.z))]
    if t.endswith("PoseWithCovarianceStamped"):
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        return [(topic + "/position", h, (p.x, p.y, p.z)),
                (topic + "/orientation", h, (o.x, o.y, o.z, o.w))]
    if t.endswith("NavSatFix"):
        return [(topic, h, (msg.latitude, msg.longitude, msg.altitude))]
    if t.endswith("JointState"):
        return [(f"{topic}/{f}", h, getattr(msg, f)) for f in ("position", "velocity", "effort")]
    raise SystemExit(f"no fields for {t}")


def collect(decoded):
    """(topic, msgtype, message) -> {stream: (times int64, values)}."""
    rows = {}
    for topic, msgtype, msg in decoded:
        for name, stamp, values in fields(topic, msgtype, msg):
            r = rows.setdefault(name, ([], []))
            r[0].append(stamp)
            r[1].append(values)
    return {n: (np.array(t, dtype=np.int64), np.array(v, dtype=np.float64))
            for n, (t, v) in rows.items()}


def robocache_read(path):
    import robocache.datasets as rd
    ep = rd.open(path).episodes[0]
    return {n: (s.times, s.values) for n, s in ep.streams.items()}


def rosbags_loop(path):
    from rosbags.highlevel import AnyReader
    if path.name == LEGACY:
        from rosbags.rosbag1 import Reader
        from rosbags.typesys import Stores, get_typestore
        store = get_typestore(Stores.ROS1_NOETIC)
        with Reader(path) as reader:
            return collect((c.topic, c.msgtype, store.deserialize_ros1(raw, c.msgtype))
                           for c, _, raw in reader.messages())
    with AnyReader([path]) as reader:
        return collect((c.topic, c.msgtype, reader.deserialize(raw, c.msgtype))
                       for c, _, raw in reader.messages())


def mcap_file(path):
    """The .mcap file of a bag (a rosbag2 folder's storage file), or None."""
    if path.is_dir():
        return next(path.glob("*.mcap"), None)
    return path if path.suffix == ".mcap" else None


def mcap_loop(path):
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    with open(mcap_file(path), "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        return collect((channel.topic, schema.name, msg)
                       for schema, channel, _, msg in reader.iter_decoded_messages())


def write_larger(dst, copies):
    """rosbag2 MCAP of robot_localization_test1_mcap's messages `copies` times,
    copy k with log times and header stamps (the CDR int32 seconds right after
    the 4-byte encapsulation header) moved on by k * (span rounded up to whole
    seconds + 1 s). Returns the number of messages."""
    from rosbags.rosbag2 import Reader, StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_HUMBLE)
    with Reader(ROBOT / "ros2" / "robot_localization_test1_mcap") as reader:
        messages = [(c.topic, c.msgtype, t, bytes(raw)) for c, t, raw in reader.messages()]
        shift_s = (reader.end_time - reader.start_time) // 1_000_000_000 + 2
    n = 0
    with Writer(dst, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        conns = {}
        for k in range(copies):
            for topic, msgtype, t, raw in messages:
                if topic not in conns:
                    conns[topic] = w.add_connection(topic, msgtype, typestore=store)
                data = bytearray(raw)
                (sec,) = struct.unpack_from("<i", data, 4)
                struct.pack_into("<i", data, 4, sec + k * shift_s)
                w.write(conns[topic], t + k * shift_s * 1_000_000_000, bytes(data))
                n += 1
    return n


def bag_bytes(path):
    return sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else \
        path.stat().st_size


def stats(cpu, wall):
    c, w = np.asarray(cpu), np.asarray(wall)
    return dict(median_s=float(np.median(c)), p10_s=float(np.percentile(c, 10)),
                p90_s=float(np.percentile(c, 90)), wall_median_s=float(np.median(w)),
                wall_p10_s=float(np.percentile(w, 10)), wall_p90_s=float(np.percentile(w, 90)),
                repeats=len(c))


def same(a, b):
    return a.keys() == b.keys() and all(
        np.array_equal(a[k][0], b[k][0]) and np.array_equal(a[k][1], b[k][1]) for k in a)


def bench_bag(path, repeats, generated=None):
    impls = {"robocache.datasets": robocache_read, "rosbags loop": rosbags_loop}
    if mcap_file(path) is not None:
        impls["mcap-ros2 loop"] = mcap_loop
    reference = None
    for name, fn in impls.items():  # warm-up round, and the results must agree
        got = fn(path)
        if reference is None:
            reference = got
        elif not same(reference, got):
            sys.exit(f"{path}: {name} gives other arrays than robocache.datasets")
    import robocache.datasets as rd
    messages = rd.open(path).meta["messages"]
    cpu, wall = ({name: [] for name in impls} for _ in range(2))
    names = list(impls)
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:  # each goes first in turn
            gc.collect()  # no garbage of the one before; no collection while timed (as timeit)
            gc.disable()
            c0, w0 = time.process_time(), time.perf_counter()
            impls[name](path)
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - w0)
            gc.enable()
    nbytes = bag_bytes(path)
    out = {name: stats(cpu[name], wall[name]) for name in impls}
    for v in out.values():
        v["mb_per_s"] = nbytes / v["median_s"] / 1e6
        v["messages_per_s"] = messages / v["median_s"]
    base = out["robocache.datasets"]["median_s"]
    return dict(bag=str(path.relative_to(ROOT)) if generated is None else generated,
                bytes=nbytes, streams=len(reference), messages=messages,
                implementations=out,
                time_over_robocache={n: v["median_s"] / base for n, v in out.items()})


def versions():
    from importlib.metadata import version
    import robocache
    return dict(robocache=robocache.__version__, rosbags=version("rosbags"),
                mcap=version("mcap"), mcap_ros2_support=version("mcap-ros2-support"),
                numpy=np.__version__, python=sys.version.split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--out")
    args = ap.parse_args()
    cpu = sorted(os.sched_getaffinity(0))[0]
    os.sched_setaffinity(0, {cpu})  # one core
    device = cpu_model()
    load_before = os.getloadavg()
    results = [bench_bag(ROBOT / b, args.repeats) for b in BAGS]
    with tempfile.TemporaryDirectory() as tmp:
        big = pathlib.Path(tmp) / "larger"
        written = write_larger(big, args.copies)
        results.append(bench_bag(big, args.repeats, generated=(
            f"generated: ros2/robot_localization_test1_mcap x{args.copies}, times shifted "
            f"({written} messages, uncompressed MCAP)")))
    report = dict(benchmark="read_rosbag", command="python bench/bench_read_rosbag.py " +
                  " ".join(sys.argv[1:]), commit=commit(), device=device, cores_used=1,
                  load_average_before_after=[load_before[0], os.getloadavg()[0]],
                  versions=versions(), clock="header", results=results)
    print(f"read ROS bags to NumPy, one core — {device} (rosbags {report['versions']['rosbags']}"
          f", mcap-ros2-support {report['versions']['mcap_ros2_support']})")
    print("times: CPU seconds of this process (median, p10, p90), wall median; MB/s and msgs/s "
          "from the CPU median")
    print(f"{'bag':<58}{'MB':>6}{'implementation':>20}{'median s':>10}{'p10':>8}{'p90':>8}"
          f"{'wall s':>8}{'MB/s':>7}{'msgs/s':>9}{'x robocache':>12}")
    for r in results:
        for name, v in r["implementations"].items():
            print(f"{r['bag'][:57]:<58}{r['bytes'] / 1e6:>6.2f}{name:>20}{v['median_s']:>10.3f}"
                  f"{v['p10_s']:>8.3f}{v['p90_s']:>8.3f}{v['wall_median_s']:>8.3f}"
                  f"{v['mb_per_s']:>7.2f}{v['messages_per_s']:>9.0f}"
                  f"{r['time_over_robocache'][name]:>12.2f}")
    path = args.out or ROOT / "bench" / "results" / f"read_rosbag_{slug(device) or 'cpu'}.json"
    write_json(path, report)


if __name__ == "__main__":
    main()
