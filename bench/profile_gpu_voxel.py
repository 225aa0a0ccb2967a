"""Where the time of a CUDA voxelize call goes: each kernel's GPU time,
measured with Nsight Compute, for the cases of bench/bench_gpu_voxel.py.

    python3 bench/profile_gpu_voxel.py --bin BUILD/bench/bench_voxel_cuda --out OUT_DIR
                                       [--cases REGEX]

For each case the harness (bench/bench_voxel_cuda.c) runs once alone (its
eager and graph medians), then under `ncu --metrics gpu__time_duration.sum`
at the GPU's own clocks with warm caches (--clock-control none
--cache-control none), profiling 60 kernel launches after the first 150
(past the harness's warm-up). Prints, per case, each kernel's launches per
call and median time, and their sum per call (memsets and copies are not
kernels and are not in it); writes the ncu CSV logs to OUT_DIR.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ncu_csv  # noqa: E402
from bench_gpu_voxel import (CUBE_RANGE, CUBE_SIZE, SECOND, clouds,  # noqa: E402
                             harness_cmd, run_harness)


def cases(uniform, scans):
    cube = list(CUBE_SIZE) + list(CUBE_RANGE)
    hard = ["hard", SECOND["P"], SECOND["M"]] + list(SECOND["size"]) + list(SECOND["range"])
    batch = [scans[i % 2] for i in range(8)]
    sizes = [0] + [len(q) for q in batch]
    off8 = [sum(sizes[:k + 1]) for k in range(9)]
    for cloud, pts, modes in (("500K", uniform, (("count", 0, 5), ("sum", 2, 0), ("max", 4, 0))),
                              ("KITTI", scans[0], (("count", 0, 5), ("sum", 2, 0)))):
        for mode, code, dtype in modes:
            yield f"dense-{mode}-{cloud}", pts, [0, len(pts)], ["dense", code, dtype] + cube
    yield "hard-KITTI", scans[0], [0, len(scans[0])], hard
    yield "hard-8xKITTI", np.concatenate(batch), off8, hard
    xyz = scans[0][:, :3].copy()
    for leaf in (0.1, 1.0):
        yield f"downsample-{leaf:g}-KITTI", xyz, [0, len(xyz)], ["downsample", leaf, leaf, leaf]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default="", help="only the cases whose name matches (re.search)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    uniform, scans = clouds()
    with tempfile.TemporaryDirectory() as tmp:
        for name, pts, off, args in cases(uniform, scans):
            if not re.search(a.cases, name):
                continue
            alone = run_harness(a.bin, tmp, "p", pts, off, args)
            log = os.path.join(a.out, f"ncu_{name}.csv")
            cmd = ["ncu", "--csv", "--log-file", log, "--metrics", "gpu__time_duration.sum",
                   "--print-units", "base", "--clock-control", "none", "--cache-control", "none",
                   "--launch-skip", "150", "--launch-count", "60"]
            cmd += harness_cmd(a.bin, tmp, "p", pts, off, args)
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{name}: ncu failed ({r.returncode}): {r.stderr[-2000:]}")
                continue
            times = {k: [m["gpu__time_duration.sum"] / 1e3 for m in launches]
                     for k, launches in ncu_csv.read(log, templates=False).items()}
            # most kernels run once per call
            calls = statistics.mode(len(v) for v in times.values()) if times else 1
            per_call = sum(sum(v) for v in times.values()) / calls
            print(f"== {name}: eager {alone['median_us']:.1f} us, graph "
                  f"{alone['graph_median_us']:.1f} us; kernels {per_call:.1f} us per call "
                  f"({calls} calls profiled)")
            for k, v in times.items():
                print(f"   {k:40s} {len(v) / calls:4.1f}/call  median {statistics.median(v):7.2f} us")


if __name__ == "__main__":
    main()
