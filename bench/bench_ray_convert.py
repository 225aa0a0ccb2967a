#!/usr/bin/env python3
"""Throughput of `robocache convert` on Ray against the serial converter and
a multiprocessing.Pool of it, by number of workers.

Input: N recordings built by repetition from the real Husky fixtures (copies
of data/robot/ros1/robot_localization_test1.bag and of the rosbag2 MCAP folder
data/robot/ros2/robot_localization_test1_mcap, alternating; identical content,
one 395 s episode each), converted to LeRobot v3.0 at 30 fps with the IMU,
odometry pose and twist streams of tests/python/test_ray_convert.py. The
defaults (48 recordings, 2 runs per case, --workers 1 2 4 8 16) give each of
16 workers 3 recordings.

  serial   robocache.convert.convert(all inputs) -> one dataset; with
           --serial-recordings M, of the first M inputs only (M even: both
           fixtures M / 2 times), compared by throughput (episodes/s);
           --serial-repeats runs (default 1)
  pool W   multiprocessing.Pool(W).map of convert([one input]) -> one dataset
           per input (what a user would write; no merged dataset). The
           spawn start method: each pool process imports robocache.convert
           once (about 0.2 s), as each Ray actor does; fork would share the
           parent's imports.
  merge W  multiprocessing.Pool(W).imap of robocache.ray's Align (the CPU
           backend) over read_recordings' rows, its shards merged in input
           order by write_lerobot in the parent as they come -> one dataset,
           the same files as serial and Ray (checked every run): Ray's job
           with a Pool in place of Ray Data.
  ray W    robocache.ray.convert(all inputs, num_workers=W,
           recordings_per_task=K) for each K of --recordings-per-task
           ("auto": its default, recordings // (50 W)), on a
           local Ray started with num_cpus=W before timing -> one dataset, the
           same files as serial (checked every run). Not timed: ray.init
           (which starts Ray's worker processes) and a 1-row Ray Data job (the
           cluster's start-up, once per cluster; recorded as ray_start_s).
At each W the cases alternate: --repeats rounds of a Pool run, a merge
run, then a Ray run on a fresh local Ray (--ray-first: the reverse), as a
host's speed drifts over minutes of full load; the order is recorded, and
ray_start_s is the median over the rounds.

Reports per case median/p10/p90 seconds, episodes/s and MB/s (input bytes /
median time), the scaling efficiency of Ray (per K) and of the pool
(throughput at W / (W x throughput at the fewest workers)), the efficiency
against serial (throughput / (W x serial throughput)) and Ray's overhead over
the pool and the merge Pool at equal W (ray median / their median - 1), and
per run the host's busy cores (busy_cores: CPU seconds of all processes /
seconds, from /proc/stat) and the CPU seconds of its processes by name
(cpu_s_by_process: "driver" this process, "ray::MapWorker" the Align actors,
"pool worker" the Pool's processes, Ray's daemons; process_cpu.py). Ray's
phases, from a thread listing the staging folder every 0.1 s and the merge's
per-episode log: first_shard_s (start-up until the first
shard is written), last_shard_s (until the last one is), merged_s (until the
merge has written the last episode), committed_s (the dataset renamed into
place: its meta/ written) and end_s (rr.convert returned: sync report written,
staging folder removed). The first serial run's dataset is the reference every
Ray run is checked against, file for file; with --serial-recordings below
--recordings, each Ray dataset is checked to hold every episode and to be the
first Ray run's dataset, file for file. Prints each run's time to stderr as
it ends, then a table, and writes
ray_convert_<cpu-model>_<N>cpu.json to --out (a folder, default
bench/results/, or a file name).

usage: python bench/bench_ray_convert.py [--workers 1 2 4 8 16] [--recordings N]
                                          [--serial-recordings M]
                                          [--recordings-per-task auto 1 4] [--repeats R]
                                          [--serial-repeats S] [--ray-first]
                                          [--out PATH]
"""
import argparse
import filecmp
import json
import multiprocessing
import os
import pathlib
import platform
import shutil
import sys
import tempfile
import threading
import time

import numpy as np

from bench_common import commit, cpu_model, slug, write_json
from process_cpu import ProcessCpu

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "data/robot/ros1/robot_localization_test1.bag",
           ROOT / "data/robot/ros2/robot_localization_test1_mcap"]
ODOM = "/husky_velocity_controller/odom"
STREAMS = ["observation.imu=/imu/data/angular_velocity,/imu/data/linear_acceleration",
           f"observation.state={ODOM}/pose", f"action={ODOM}/twist,method=previous"]
FPS = 30


def size_of(path):
    p = pathlib.Path(path)
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() \
        else p.stat().st_size


def make_inputs(folder, n):
    out = []
    for i in range(n):
        src = SOURCES[i % 2]
        dst = folder / f"rec{i:03d}{'.bag' if src.suffix == '.bag' else ''}"
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
        out.append(str(dst))
    return out


def convert_one(args):
    from robocache.convert import convert
    path, out = args
    convert([path], out, to="lerobot", fps=FPS, streams=STREAMS)


def run_serial(inputs, out):
    from robocache.convert import convert
    convert(inputs, out, to="lerobot", fps=FPS, streams=STREAMS)


def run_pool(inputs, out, workers):
    os.makedirs(out)
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        pool.map(convert_one, [(p, f"{out}/{i}") for i, p in enumerate(inputs)], chunksize=1)


def shard_one(row):
    """A merge Pool process's work: Align's conversion of one read_recordings
    row (its shard written); the row's key."""
    from robocache.ray import Align
    Align("cpu")({k: [v] for k, v in row.items()})
    return row["key"]


class Written:
    """The stand-in for write_lerobot's dataset: iter_rows() yields a row
    {"key": ...} per shard written, as `keys` gives them."""

    def __init__(self, keys):
        self.keys = keys

    def iter_rows(self):
        return ({"key": k} for k in self.keys)


def run_pool_merge(inputs, out, workers):
    from robocache.ray import write_lerobot
    from robocache.ray._read import recording_rows
    rows = recording_rows(inputs, streams=STREAMS, output=out, fps=FPS, reference=None,
                          span="overlap", invalid="trim", split_gap=None, split_by=None,
                          task=None, order="error")
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        write_lerobot(Written(pool.imap(shard_one, rows, chunksize=1)), out)


def run_ray(inputs, out, workers, per_task, phases):
    """robocache.ray.convert; appends the run's phases (seconds from its start)."""
    import robocache.ray as rr
    from robocache.ray._shards import staging
    stage, t0, marks, merged = staging(out), time.perf_counter(), {}, []
    done = threading.Event()

    def watch():  # completed shards: the 16-hex-digit folders of the staging folder
        seen = set()  # (the merge removes the shards it has journalled)
        while not done.wait(0.1):
            now = time.perf_counter() - t0
            if "committed_s" not in marks and os.path.exists(out):
                marks["committed_s"] = now
            try:
                new = {d for d in os.listdir(stage) if len(d) == 16} - seen
            except OSError:
                continue
            if new:
                seen |= new
                marks.setdefault("first_shard_s", now)
                marks["last_shard_s"] = now
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        rr.convert(inputs, out, streams=STREAMS, fps=FPS, num_workers=workers,
                   recordings_per_task=per_task,
                   log=lambda line: merged.append(time.perf_counter() - t0))
    finally:
        end = time.perf_counter() - t0
        done.set()
        watcher.join()
    phases.append({"first_shard_s": marks["first_shard_s"],
                   "last_shard_s": marks["last_shard_s"], "merged_s": merged[-1],
                   "committed_s": marks.get("committed_s", end),  # (less than a poll before)
                   "end_s": end})


def start_ray(workers):
    """ray.init and a 1-row Ray Data job (Ray Data's actors started); seconds."""
    import ray
    t0 = time.perf_counter()
    ray.init(num_cpus=workers, log_to_driver=False, include_dashboard=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    ray.data.range(1).map_batches(lambda b: b).take_all()
    return time.perf_counter() - t0


def total_episodes(dataset):
    return json.loads(pathlib.Path(f"{dataset}/meta/info.json").read_text())["total_episodes"]


def same_dataset(a, b):
    rels = sorted(str(p.relative_to(a)) for p in pathlib.Path(a).rglob("*") if p.is_file())
    return all(filecmp.cmp(f"{a}/{r}", f"{b}/{r}", shallow=False) for r in rels)


def busy_cpu_s():
    """CPU seconds the host's cores have been busy since boot (/proc/stat: all
    but idle and iowait), or None where there is no /proc/stat."""
    try:
        with open("/proc/stat") as fh:
            ticks = [int(v) for v in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def timed(label, fn, tmp, repeats, check=None, keep=None):
    """(seconds, busy cores: the host's busy CPU seconds / seconds, or None,
    CPU seconds by process name: process_cpu) of `repeats` runs of
    fn(output), each printed to stderr after `label`; keep: the first run's
    output is moved there."""
    times, busy, by_process = [], [], []
    for r in range(repeats):
        out = f"{tmp}/out{time.monotonic_ns()}"
        with ProcessCpu() as cpu:
            b0, t0 = busy_cpu_s(), time.perf_counter()
            fn(out)
            times.append(time.perf_counter() - t0)
            b1 = busy_cpu_s()
        busy.append(None if b0 is None else (b1 - b0) / times[-1])
        by_process.append(cpu.seconds())
        print(f"{label}: {times[-1]:.2f} s", file=sys.stderr, flush=True)
        if check is not None and not check(out):
            sys.exit(f"{out}: differs from the serial dataset")
        if keep is not None and r == 0:
            os.rename(out, keep)
        else:
            shutil.rmtree(out)
        for f in pathlib.Path(tmp).glob("*.sync.json"):
            f.unlink()
    return times, busy, by_process


def summary(name, workers, timing, episodes, mb):
    times, busy, by_process = timing
    med = float(np.median(times))
    return {"case": name, "workers": workers, "median_s": med, "busy_cores": busy,
            "cpu_s_by_process": by_process,
            "p10_s": float(np.percentile(times, 10)), "p90_s": float(np.percentile(times, 90)),
            "runs_s": times, "episodes_per_s": episodes / med, "mb_per_s": mb / med}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument("--recordings", type=int, default=48)
    ap.add_argument("--recordings-per-task", nargs="+", default=["auto"],
                    type=lambda k: k if k == "auto" else int(k))
    ap.add_argument("--serial-recordings", type=int,
                    help="serial conversion of the first M recordings only (default: all; "
                         "M even, as the inputs alternate the two fixtures)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--serial-repeats", type=int, default=1)
    ap.add_argument("--ray-first", action="store_true",
                    help="at each W, Ray's runs before the Pool's (default: after)")
    ap.add_argument("--out", help="result folder or .json file (default bench/results/)")
    args = ap.parse_args()
    m = args.serial_recordings
    if m is not None and not (0 < m <= args.recordings and m % len(SOURCES) == 0
                              and (m == args.recordings or args.recordings % len(SOURCES) == 0)):
        ap.error("--serial-recordings: an even number from 2 to --recordings "
                 "(--recordings even too when it is less)")
    import ray
    import robocache
    from robocache.ray._convert import default_per_task
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench_ray_convert_"))
    t_start = time.perf_counter()
    inputs = make_inputs(tmp, args.recordings)
    mb = sum(size_of(p) for p in inputs) / 1e6
    load = os.getloadavg()
    serial_inputs = inputs[:args.serial_recordings or len(inputs)]
    reference = f"{tmp}/serial_reference"
    timing = timed("serial", lambda o: run_serial(serial_inputs, o), tmp,
                   args.serial_repeats, keep=reference)
    rows = [summary("serial", 1, timing, total_episodes(reference),
                    sum(size_of(p) for p in serial_inputs) / 1e6)]
    rows[0]["recordings"] = len(serial_inputs)
    episodes = total_episodes(reference) * len(inputs) // len(serial_inputs)
    # every Ray dataset holds every episode and equals the serial one (of the same inputs),
    # else the first Ray run's
    ray_reference = reference if serial_inputs == inputs else f"{tmp}/ray_reference"

    def check(out):
        return total_episodes(out) == episodes and (not os.path.exists(ray_reference)
                                                     or same_dataset(ray_reference, out))
    for w in args.workers:
        pool_times, merge_times, starts = ([], [], []), ([], [], []), []
        # per K of --recordings-per-task: recordings_per_task ("auto": None), times, phases
        ray_runs = {k: (None if k == "auto" else k, ([], [], []), [])
                    for k in args.recordings_per_task}

        def pool_round():
            for acc, x in zip(pool_times, timed(f"pool {w}", lambda o: run_pool(inputs, o, w),
                                                tmp, 1)):
                acc.extend(x)

        def merge_round():
            keep = None if os.path.exists(ray_reference) else ray_reference
            for acc, x in zip(merge_times, timed(f"merge {w}",
                                                 lambda o: run_pool_merge(inputs, o, w), tmp, 1,
                                                 check, keep)):
                acc.extend(x)

        def ray_round():  # a fresh local Ray, started untimed
            starts.append(start_ray(w))
            for per_task, times, phases in ray_runs.values():
                keep = None if os.path.exists(ray_reference) else ray_reference
                run = timed(f"ray {w} K={per_task or 'auto'}",
                            lambda o: run_ray(inputs, o, w, per_task, phases), tmp, 1, check, keep)
                for acc, x in zip(times, run):
                    acc.extend(x)
            ray.shutdown()
        for _ in range(args.repeats):
            cases = (pool_round, merge_round, ray_round)
            for case in cases[::-1] if args.ray_first else cases:
                case()
        rows.append(summary("pool", w, pool_times, episodes, mb))
        rows.append(summary("merge", w, merge_times, episodes, mb))
        for k, (per_task, times, phases) in ray_runs.items():
            rows.append(summary("ray", w, times, episodes, mb))
            rows[-1].update(recordings_per_task=k, ray_start_s=float(np.median(starts)),
                            phases=phases,
                            per_task=per_task or default_per_task(len(inputs), w),
                            phases_median={p: float(np.median([x[p] for x in phases]))
                                           for p in phases[0]})
    for r in rows[1:]:
        base = next(b for b in rows if b["case"] == r["case"] and b["workers"] == min(
            args.workers) and b.get("recordings_per_task") == r.get("recordings_per_task"))
        r["scaling_efficiency"] = (r["episodes_per_s"] * base["workers"]
                                   / (base["episodes_per_s"] * r["workers"]))
        r["efficiency_vs_serial"] = r["episodes_per_s"] / (r["workers"]
                                                           * rows[0]["episodes_per_s"])
    for r in rows:
        if r["case"] == "ray":
            for case in ("pool", "merge"):
                base = next(p for p in rows if p["case"] == case and p["workers"] == r["workers"])
                r[f"overhead_vs_{case}"] = r["median_s"] / base["median_s"] - 1
    print(f"{len(inputs)} recordings ({mb:.1f} MB, {episodes} episodes; serial: "
          f"{rows[0]['recordings']}), "
          f"{args.repeats} runs each (serial {args.serial_repeats}), {os.cpu_count()} CPUs, "
          f"load average before: {load[0]:.1f}, {time.perf_counter() - t_start:.0f} s in all")
    print(f"{'case':8s} {'W':>3s} {'K':>2s} {'median s':>9s} {'p10':>7s} {'p90':>7s} {'ep/s':>7s} "
          f"{'MB/s':>7s} {'cores':>5s} {'eff':>6s} {'vs ser':>6s} {'vs pool':>8s} "
          f"{'vs merge':>8s}  "
          "ray phases (median s: first shard, last shard, merged, committed, end; "
          "start-up not timed)")
    for r in rows:
        eff = f"{r['scaling_efficiency']:.2f}" if "scaling_efficiency" in r else "-"
        ser = f"{r['efficiency_vs_serial']:.2f}" if "efficiency_vs_serial" in r else "-"
        ovh, ovm = (f"{100 * r[k]:+.0f}%" if k in r else "-"
                    for k in ("overhead_vs_pool", "overhead_vs_merge"))
        cores = ("-" if None in r["busy_cores"]
                 else f"{float(np.median(r['busy_cores'])):.1f}")
        ph = ("  " + " ".join(f"{v:.2f}" for v in r["phases_median"].values())
              + f" ({r['ray_start_s']:.1f})") if "phases_median" in r else ""
        print(f"{r['case']:8s} {r['workers']:3d} {r.get('per_task', 1):2d} "
              f"{r['median_s']:9.2f} {r['p10_s']:7.2f} "
              f"{r['p90_s']:7.2f} {r['episodes_per_s']:7.2f} {r['mb_per_s']:7.2f} {cores:>5s} "
              f"{eff:>6s} {ser:>6s} {ovh:>8s} {ovm:>8s}{ph}")
    result = {"benchmark": "ray_convert", "device": cpu_model(), "cpus": os.cpu_count(),
              "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
              "load_average_before": load, "python": platform.python_version(),
              "ray": ray.__version__, "robocache": robocache.__version__,
              "command": " ".join(["python"] + sys.argv), "commit": commit(),
              "inputs": {"recordings": len(inputs), "mb": mb, "episodes": episodes,
                         "built_from": [str(s.relative_to(ROOT)) for s in SOURCES],
                         "fps": FPS, "streams": STREAMS},
              "ray_init_timed": False, "ray_data_warmup_timed": False,
              "order": "ray, merge, pool" if args.ray_first else "pool, merge, ray",
              "results": rows}
    out = pathlib.Path(args.out or ROOT / "bench" / "results")
    if out.suffix != ".json":
        out = out / f"ray_convert_{slug(cpu_model())}_{os.cpu_count()}cpu.json"
    write_json(str(out), result)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
