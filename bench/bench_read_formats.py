"""Read throughput of robocache.datasets' rlds, robomimic, aloha and ulog
readers against the loop a user writes with the underlying library, one core.

    python bench/bench_read_formats.py [--repeats 7] [--demos 100] [--steps 300]
                                       [--aloha-steps 100]

Each case reads everything a training loop needs from the file(s) and is
timed `repeats` times (after one warm-up run; the files are in the page
cache), ours and the plain loop alternating in the same run:
  rlds        rd.open(folder, rate_hz=5) and every stream's times + values
              (frame indices for images, no JPEG decode) of every episode,
              vs the `tfrecord` package's tfrecord_loader (no CRC checks)
              with each step feature reshaped to [T, ...]
  rlds frames every frame of observation/image_0 through frames(), vs
              Pillow on the JPEG bytes from tfrecord_loader
  robomimic   a file written here (low_dim: 3 obs keys, actions, rewards,
              dones, states): every stream of every demo, vs h5py reading
              every dataset of every demo
  aloha       a folder of 3 episode_N.hdf5 written here (qpos, qvel, effort,
              action, one 240x320 uint8 camera): every vector stream and
              every frame, vs h5py reading every dataset of every file
  ulog        the real PX4 log: every stream (one pyulog pass per topic,
              the default) and with topics= (one pass), vs ULog(path) and
              its data_list stacked to [S, D]; and one topic (sensor_combined)
              vs ULog(path, ["sensor_combined"])
Throughput: file bytes / median time (MB/s) and steps or messages / median
time. Target: within 1.5x of the plain loop. Prints a table and writes
bench/results/read_formats_<cpu>.json.
"""

import argparse
import importlib.metadata
import io
import json
import os
import pathlib
import platform
import shutil
import statistics
import sys
import tempfile
import timeit

import h5py
import numpy as np
import pyulog
import tfrecord
from PIL import Image

import bench_common
import robocache
import robocache.datasets as rd

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
RLDS = ROOT / "data" / "robot" / "rlds" / "bridge_dataset" / "1.0.0"
SHARD = RLDS / "bridge_dataset-train.tfrecord-00000-of-00001"
ULOG = ROOT / "data" / "robot" / "px4" / "pyulog_sample.ulg"
TARGET = 1.5
ALOHA_EPISODES = 3
FRAME = (240, 320, 3)


def timed(ours, plain, repeats):
    """(ours seconds, plain seconds): `repeats` calls of each, alternating so
    that both see the same load of a shared machine, after one warm-up call."""
    ours(), plain()
    a, b = [], []
    for _ in range(repeats):
        a += timeit.repeat(ours, repeat=1, number=1)
        b += timeit.repeat(plain, repeat=1, number=1)
    return a, b


def read_all(rec, frames=False):
    """Reads every stream of every episode (and every frame); the total steps."""
    steps = 0
    for ep in rec.episodes:
        longest = 0
        for s in ep.streams.values():
            s.times, s.values
            if frames and s.kind == "image":
                s.frames(np.arange(len(s)))
            longest = max(longest, len(s))
            s.release()
        steps += longest
    return steps


# ---- RLDS ----

def rlds_ours():
    return read_all(rd.open(RLDS, rate_hz=5))


def rlds_plain():
    steps = 0
    shapes = {"steps/action": 7, "steps/observation/state": 7, "steps/language_embedding": 512}
    for record in tfrecord.tfrecord_loader(str(SHARD), None):
        t = len(record["steps/is_first"])
        for key, value in record.items():
            if key.startswith("steps/") and value.dtype.kind != "S":
                value.reshape(t, shapes.get(key, 1))
        steps += t
    return steps


def rlds_frames_ours():
    rec = rd.open(RLDS, rate_hz=5)
    n = 0
    for ep in rec.episodes:
        s = ep.streams["observation/image_0"]
        n += len(s.frames(np.arange(len(s))))
    return n


def rlds_frames_plain():
    n = 0
    for record in tfrecord.tfrecord_loader(str(SHARD), None):
        for blob in record["steps/observation/image_0"]:
            np.asarray(Image.open(io.BytesIO(blob)).convert("RGB"))
            n += 1
    return n


# ---- robomimic / ALOHA (files written here) ----

def write_robomimic(path, demos, steps):
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        data = f.create_group("data")
        data.attrs["env_args"] = json.dumps({"env_name": "Lift", "env_kwargs":
                                             {"control_freq": 20}})
        for i in range(demos):
            g = data.create_group(f"demo_{i}")
            for key, dim in (("obs/robot0_eef_pos", 3), ("obs/robot0_joint_pos", 7),
                             ("obs/object", 10), ("actions", 7), ("states", 32)):
                g.create_dataset(key, data=rng.normal(size=(steps, dim)))
            g.create_dataset("rewards", data=rng.random(steps))
            g.create_dataset("dones", data=np.zeros(steps, dtype=np.int64))


def robomimic_plain(path):
    steps = 0
    with h5py.File(path, "r") as f:
        for demo in f["data"]:
            g = f["data"][demo]
            for key in g["obs"]:
                g["obs"][key][()]
            for key in ("actions", "rewards", "dones", "states"):
                g[key][()]
            steps += g["actions"].shape[0]
    return steps


def write_aloha(folder, episodes, steps):
    rng = np.random.default_rng(1)
    for i in range(episodes):
        with h5py.File(folder / f"episode_{i}.hdf5", "w") as f:
            f.attrs["sim"], f.attrs["compress"] = True, False
            for key in ("observations/qpos", "observations/qvel", "observations/effort",
                        "action"):
                f.create_dataset(key, data=rng.normal(size=(steps, 14)))
            f.create_dataset("observations/images/top",
                             data=rng.integers(0, 255, size=(steps,) + FRAME, dtype=np.uint8))


def aloha_plain(folder):
    steps = 0
    for name in sorted(os.listdir(folder)):
        with h5py.File(folder / name, "r") as f:
            for key in ("observations/qpos", "observations/qvel", "observations/effort",
                        "action", "observations/images/top"):
                f[key][()]
            steps += f["action"].shape[0]
    return steps


# ---- ULog ----

def ulog_plain():
    n = 0
    for d in pyulog.ULog(str(ULOG)).data_list:
        if d.name == "commander_state" or not d.data["timestamp"].any():
            continue  # as the reader: repeated or all-zero timestamps
        names = [k for k in d.data if k != "timestamp" and not k.startswith("_padding")]
        d.data["timestamp"].astype(np.int64) * 1000
        np.stack([d.data[k].astype(np.float64) for k in names], axis=1)
        n += len(d.data["timestamp"])
    return n


def ulog_ours(topics=None):
    rec = rd.open(ULOG, topics=topics)
    n = 0
    for s in rec.episodes[0].streams.values():
        if s.name == "commander_state":  # repeats one timestamp: DatasetError by design
            continue
        s.times, s.values
        if s.kind == "vector":
            n += len(s)
    return n


def ulog_all_topics():
    return sorted({d.name for d in pyulog.ULog(str(ULOG)).data_list
                   if d.data["timestamp"].any()} - {"commander_state"})


def ulog_one_plain():
    d = pyulog.ULog(str(ULOG), ["sensor_combined"]).data_list[0]
    names = [k for k in d.data if k != "timestamp"]
    d.data["timestamp"].astype(np.int64) * 1000
    return len(np.stack([d.data[k].astype(np.float64) for k in names], axis=1))


def ulog_one_ours():
    s = rd.open(ULOG, topics=["sensor_combined"]).episodes[0].streams["sensor_combined"]
    s.times, s.values
    return len(s)



def summary(seconds, nbytes, items):
    q = statistics.quantiles(seconds, n=10)
    med = statistics.median(seconds)
    return {"median_s": med, "p10_s": q[0], "p90_s": q[-1], "MB_per_s": nbytes / med / 1e6,
            "items_per_s": items / med}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--demos", type=int, default=100)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--aloha-steps", type=int, default=100)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="robocache_bench_read_"))
    try:
        demo_file = tmp / "robomimic_low_dim.hdf5"
        write_robomimic(demo_file, args.demos, args.steps)
        aloha_dir = tmp / "aloha"
        aloha_dir.mkdir()
        write_aloha(aloha_dir, ALOHA_EPISODES, args.aloha_steps)
        aloha_bytes = sum(p.stat().st_size for p in aloha_dir.iterdir())
        every = ulog_all_topics()
        cases = [
            ("rlds", "steps", SHARD.stat().st_size, rlds_ours, rlds_plain),
            ("rlds frames (JPEG decode)", "frames", SHARD.stat().st_size, rlds_frames_ours,
             rlds_frames_plain),
            ("robomimic low_dim", "steps", demo_file.stat().st_size,
             lambda: read_all(rd.open(demo_file)), lambda: robomimic_plain(demo_file)),
            ("aloha (vectors + frames)", "steps", aloha_bytes,
             lambda: read_all(rd.open(aloha_dir), frames=True), lambda: aloha_plain(aloha_dir)),
            ("ulog all topics (pass per topic)", "messages", ULOG.stat().st_size, ulog_ours,
             ulog_plain),
            ("ulog all topics (topics=, one pass)", "messages", ULOG.stat().st_size,
             lambda: ulog_ours(every), ulog_plain),
            ("ulog one topic (sensor_combined)", "messages", ULOG.stat().st_size, ulog_one_ours,
             ulog_one_plain),
        ]
        rows = []
        print(f"{'case':38s} {'unit':>8s} {'ours s':>9s} {'plain s':>9s} {'ours MB/s':>10s} "
              f"{'plain MB/s':>10s} {'ours items/s':>13s} {'ratio':>6s}")
        for name, unit, nbytes, ours, plain in cases:
            items_ours, items_plain = ours(), plain()
            if items_ours != items_plain:
                raise SystemExit(f"{name}: ours read {items_ours} {unit}, plain {items_plain}")
            seconds_ours, seconds_plain = timed(ours, plain, args.repeats)
            a = summary(seconds_ours, nbytes, items_ours)
            b = summary(seconds_plain, nbytes, items_plain)
            ratio = a["median_s"] / b["median_s"]
            rows.append({"case": name, "unit": unit, "bytes": nbytes, "items": items_ours,
                         "ours": a, "plain": b, "ratio": ratio, "within_target": ratio <= TARGET})
            print(f"{name:38s} {unit:>8s} {a['median_s']:9.4f} {b['median_s']:9.4f} "
                  f"{a['MB_per_s']:10.1f} {b['MB_per_s']:10.1f} {a['items_per_s']:13.0f} "
                  f"{ratio:6.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    cpu = bench_common.cpu_model()
    result = {
        "benchmark": "read_formats",
        "command": "python bench/bench_read_formats.py " + " ".join(sys.argv[1:]),
        "commit": bench_common.commit(),
        "device": cpu + " (one core)",
        "versions": {"robocache": robocache.__version__, "python": platform.python_version(),
                     **{p: importlib.metadata.version(p) for p in
                        ("numpy", "h5py", "pyulog", "pillow", "protobuf", "crc32c",
                         "tfrecord")}},
        "shapes": {"rlds": "bridge_dataset train shard, 25 episodes x 10 steps",
                   "robomimic": f"{args.demos} demos x {args.steps} steps, low_dim",
                   "aloha": f"{ALOHA_EPISODES} files x {args.aloha_steps} steps, 14-D "
                            f"qpos/qvel/effort/action, {FRAME} uint8 camera",
                   "ulog": "pyulog_sample.ulg, 4.05 MB"},
        "repeats": args.repeats, "target_ratio": TARGET, "cases": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"read_formats_{bench_common.slug(cpu)}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
