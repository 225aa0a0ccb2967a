"""Reading LeRobot datasets: robocache.datasets against the plain pyarrow / PyAV
code a user writes, measured in the same run on one core.

    python3 bench/bench_read_lerobot.py [--repeat 21] [--frames 32] [--out bench/results]

Numeric extraction, per dataset: `rd.open` + times, values and fields of every
numeric stream of every episode as NumPy (a fresh open each pass, so nothing is
cached) against the plain loop: `pq.read_table` of each data file, the rows of
each episode (`table.filter(episode_index == e)`), timestamp and each numeric
column `to_numpy` ([S, D] from the list column's flat values). Datasets: the three
LeRobot fixtures in data/robot/lerobot and a generated v3.0 dataset (200 episodes
x 500 rows, state and action float32 [32], 4 data files, one row group per episode
as LeRobot writes them; tests/python/datasets/lerobot_testdata.py). MB/s counts
the bytes of the arrays produced (times int64 + values), rows/s the episode rows.

Video: frames decoded per second for --frames random frames (fixed seed) of one
episode, through `Series.frames` (seek to the keyframe before each group, decode
forward) against plain PyAV decoding the file sequentially up to the last wanted
frame (converting only the wanted frames to RGB).

Both sides run with pyarrow's CPU and I/O pools at one thread and FFmpeg's
decoder threads at its default. Times: median, p10, p90 over --repeat passes after
one warm-up pass, wall-clock and CPU time of the process (the robust figure on a
machine shared with other work). Writes <out>/read_lerobot_<cpu>.json and prints a
table.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_common import commit, cpu_model, slug, write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python" / "datasets"))
FIXTURES = ["so101_record_test_v30_novideo", "lingzu_open50_v30_subset",
            "unitree_g1_inspire_v21_subset"]
INDEX = ("timestamp", "frame_index", "episode_index", "index", "task_index")


def stats(seconds, prefix):
    q = np.percentile(seconds, [10, 90])
    return {f"{prefix}median_s": statistics.median(seconds), f"{prefix}p10_s": float(q[0]),
            f"{prefix}p90_s": float(q[1])}


def timed(fn, repeat):
    """Wall-clock (median_s, p10_s, p90_s) and CPU time of this process (cpu_median_s,
    ...) of `repeat` calls after a warm-up call (imports, page cache)."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {**stats(wall, ""), **stats(cpu, "cpu_")}


def robocache_pass(rd, path):
    rows = nbytes = 0
    for ep in rd.open(path).episodes:
        for s in ep.streams.values():
            if s.kind == "vector":
                s.fields
                nbytes += s.times.nbytes + s.values.nbytes
                rows += len(s.times)
    return rows, nbytes


def numeric_columns(path):
    with open(os.path.join(path, "meta", "info.json")) as f:
        features = json.load(f)["features"]
    return [k for k, v in features.items()
            if k not in INDEX and v["dtype"] not in ("video", "image", "string")]


def plain_pass(pa, pc, pq, path, columns):
    rows = nbytes = 0
    for f in sorted(Path(path, "data").rglob("*.parquet")):
        table = pq.read_table(f)
        for e in pc.unique(table["episode_index"]).to_pylist():
            ep = table.filter(pc.equal(table["episode_index"], e))
            times = ep["timestamp"].to_numpy()
            for c in columns:
                col = ep[c].combine_chunks()
                values = col.flatten().to_numpy().reshape(len(col), -1)
                nbytes += times.nbytes * 2 + values.nbytes  # times as int64 ns: 8 bytes
                rows += len(col)
    return rows, nbytes


def numeric_rows(rd, pa, pc, pq, name, path, repeat):
    ours = robocache_pass(rd, path)
    plain = plain_pass(pa, pc, pq, path, numeric_columns(path))
    if ours != plain:
        raise SystemExit(f"{name}: robocache read {ours} (rows, bytes), the plain loop {plain}")
    t_rc = timed(lambda: robocache_pass(rd, path), repeat)
    t_pl = timed(lambda: plain_pass(pa, pc, pq, path, numeric_columns(path)), repeat)
    rows, nbytes = ours
    return {"dataset": name, "stream_rows": rows, "bytes": nbytes, "robocache": t_rc,
            "plain_pyarrow": t_pl,
            "robocache_MB_per_s": nbytes / t_rc["median_s"] / 1e6,
            "plain_MB_per_s": nbytes / t_pl["median_s"] / 1e6,
            "robocache_rows_per_s": rows / t_rc["median_s"],
            "plain_rows_per_s": rows / t_pl["median_s"],
            "ratio_median": t_rc["median_s"] / t_pl["median_s"],
            "ratio_cpu_median": t_rc["cpu_median_s"] / t_pl["cpu_median_s"]}


def sequential_frames(av, path, wanted_pts):
    last, out = max(wanted_pts), []
    with av.open(path) as c:
        for frame in c.decode(c.streams.video[0]):
            if frame.pts in wanted_pts:
                out.append(frame.to_ndarray(format="rgb24"))
            if frame.pts >= last:
                break
    return out


def video_rows(rd, av, name, path, count, repeat):
    rec = rd.open(path)
    ep = rec.episodes[0]
    key = next(k for k, s in ep.streams.items() if s.kind == "image")
    series = ep.streams[key]
    picks = np.sort(np.random.default_rng(7).choice(len(series), count, replace=False))
    file = series.meta["video_file"]
    with av.open(file) as c:
        stream = c.streams.video[0]
        codec = stream.codec_context.name
        pts = sorted(p.pts for p in c.demux(stream) if p.pts is not None)
    wanted = {pts[i] for i in picks}  # one MP4 per episode here: frame i of the episode
    ours = series.frames(picks)
    plain = sequential_frames(av, file, wanted)
    if not all(np.array_equal(a, b) for a, b in zip(ours, plain)):
        raise SystemExit(f"{name}: frames differ from the sequential decode")

    def decode_ours():
        rd.open(path).episodes[0].streams[key].frames(picks)

    t_rc = timed(decode_ours, repeat)
    t_pl = timed(lambda: sequential_frames(av, file, wanted), repeat)
    return {"dataset": name, "episode": ep.index, "stream": key, "codec": codec,
            "video_frames": len(pts), "frames_requested": count,
            "last_frame_requested": int(picks[-1]), "robocache": t_rc, "plain_av": t_pl,
            "robocache_frames_per_s": count / t_rc["median_s"],
            "plain_frames_per_s": count / t_pl["median_s"],
            "speedup_median": t_pl["median_s"] / t_rc["median_s"],
            "speedup_cpu_median": t_pl["cpu_median_s"] / t_rc["cpu_median_s"]}



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--frames", type=int, default=32)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    import av
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    import robocache
    import robocache.datasets as rd
    from lerobot_testdata import write_v30
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)

    numeric, video, load_before = [], [], os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        generated = os.path.join(tmp, "generated_v30")
        write_v30(generated, [500] * 200, dim=32, per_file=50)
        sets = [(n, str(ROOT / "data" / "robot" / "lerobot" / n)) for n in FIXTURES]
        for name, path in sets + [("generated v3.0, 200 x 500 rows, D 32", generated)]:
            numeric.append(numeric_rows(rd, pa, pc, pq, name, path, args.repeat))
    for name, path in sets[1:]:
        video.append(video_rows(rd, av, name, path, args.frames, args.repeat))

    print("numeric streams, open + to NumPy (wall-clock medians; ratio = robocache / plain, "
          "also on CPU time)")
    print(f"{'dataset':38s} {'rows':>7s} {'MB':>6s} {'rc ms':>7s} {'plain ms':>8s} "
          f"{'rc MB/s':>8s} {'plain MB/s':>10s} {'rc rows/s':>10s} {'ratio':>6s} {'cpu':>5s}")
    for r in numeric:
        print(f"{r['dataset']:38s} {r['stream_rows']:7d} {r['bytes'] / 1e6:6.2f} "
              f"{r['robocache']['median_s'] * 1e3:7.2f} "
              f"{r['plain_pyarrow']['median_s'] * 1e3:8.2f} {r['robocache_MB_per_s']:8.1f} "
              f"{r['plain_MB_per_s']:10.1f} {r['robocache_rows_per_s']:10.0f} "
              f"{r['ratio_median']:6.2f} {r['ratio_cpu_median']:5.2f}")
    print(f"\n{'video (random frames of one episode)':38s} {'codec':8s} {'frames':>6s} "
          f"{'asked':>5s} {'rc f/s':>7s} {'plain f/s':>9s} {'speedup':>7s} {'cpu':>5s}")
    for r in video:
        print(f"{r['dataset']:38s} {r['codec']:8s} {r['video_frames']:6d} "
              f"{r['frames_requested']:5d} {r['robocache_frames_per_s']:7.1f} "
              f"{r['plain_frames_per_s']:9.1f} {r['speedup_median']:7.2f} "
              f"{r['speedup_cpu_median']:5.2f}")

    cpu = cpu_model()
    result = {"benchmark": "read_lerobot", "cpu": cpu, "cores": os.cpu_count(),
              "threads": 1, "repeat": args.repeat, "frames": args.frames,
              "command": "python3 " + " ".join(sys.argv), "commit": commit(),
              "robocache_version": getattr(robocache, "__version__", None),
              "pyarrow_version": pa.__version__, "av_version": av.__version__,
              "ffmpeg_versions": {k: v for k, v in av.library_versions.items()},
              "numpy_version": np.__version__, "python": platform.python_version(),
              "load_average_1_5_15min_before": load_before,
              "load_average_1_5_15min": os.getloadavg(),
              "numeric": numeric, "video": video}
    write_json(os.path.join(args.out, f"read_lerobot_{slug(cpu)}.json"), result)


if __name__ == "__main__":
    main()
