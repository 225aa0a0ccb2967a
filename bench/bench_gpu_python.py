"""Per-call time of the public Python calls on CUDA PyTorch tensors, against
the C library's own time for the same call: what the Python layer (argument
checks, output allocation, DLPack, stats, row slices) adds to each GPU call.

    python3 bench/bench_gpu_python.py [--out bench/results] [--calls 300] [--bin PATH]

Each public call is timed on the host, perf_counter from before the call to
after a torch.cuda.synchronize() that follows it (a checked call has already
synchronised once inside): the time a data loader waits for the result.
30 warm-up calls, then `calls` calls; median, p10, p90.
  public   robocache.<op>(...) as a user calls it (defaults: check=True)
  out=     resample only: the public call with out= and valid= allocated
           once before the loop (the op's output-allocation-free form)
  C call   the voxel ops: the C harness bench/bench_voxel_cuda.c (--bin) on
           the same points, its eager time (CUDA events around one checked
           robocache call, which ends with its stream synchronisation; the
           harness rotates its inputs over copies larger than the L2 cache)
  overhead = median(public) - median(C call)
Cases: voxelize_hard with the second-kitti preset on the KITTI scan
(data/pointclouds/kitti_raw_hdl64_0000000000.bin, x y z intensity; checked
and check=False, which has no C-harness counterpart) and on 8 scans (the two
raw frames alternating, offsets); voxel_downsample of the scan's x y z at
0.1 m and 1 m (PCL voxels); voxelize count into 128^3 over [-40, 40] x
[-40, 40] x [-3, 3.4] m; resample f32 B32 S500 T250 D256 (linear, int64 ns).
Writes <out>/gpu_python_<device>.json and prints a table.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch

import robocache
from bench_common import ROOT, find_binary, slug, write_json
from bench_gpu_voxel import run_harness

SCANS = [os.path.join(ROOT, "data", "pointclouds", f"kitti_raw_hdl64_000000000{i}.bin")
         for i in (0, 1)]
SECOND = robocache.voxel_preset("second-kitti")
CUBE = ([80 / 128, 80 / 128, 6.4 / 128], [-40, -40, -3, 40, 40, 3.4])
DENSE_COUNT = ["dense", 0, 5]  # the harness's mode (count) and dtype (int32) codes


def time_calls(fn, calls):
    for _ in range(30):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e6)
    q = statistics.quantiles(out, n=10)
    return {"median_us": statistics.median(out), "p10_us": q[0], "p90_us": q[-1]}


def hard_case(pts, offsets, check):
    """(public call, harness arguments or None)."""
    harness = ["hard-packed", SECOND["max_points_per_voxel"], SECOND["max_voxels"][1],
               *SECOND["voxel_size"], *SECOND["point_cloud_range"]]
    return (lambda: robocache.voxelize_hard(pts, **SECOND, offsets=offsets, check=check),
            harness if check else None)


def downsample_case(pts, leaf):
    return lambda: robocache.voxel_downsample(pts, leaf), ["downsample", leaf, leaf, leaf]


def count_case(pts):
    return lambda: robocache.voxelize(pts, *CUBE), DENSE_COUNT + CUBE[0] + CUBE[1]


def resample_case():
    """(public call, public call with out= and valid= allocated once)."""
    B, S, T, D = 32, 500, 250, 256
    g = torch.Generator(device="cuda").manual_seed(0)
    values = torch.randn((B, S, D), device="cuda", generator=g)
    times = (torch.arange(S, device="cuda") * 10_000_000).expand(B, S).contiguous()
    targets = (torch.arange(T, device="cuda") * 19_990_000).expand(B, T).contiguous()
    out, valid = robocache.resample(values, times, targets, return_valid=True)
    return (lambda: robocache.resample(values, times, targets),
            lambda: robocache.resample(values, times, targets, out=out, valid=valid))


def c_call(binary, tmp, pts, offsets, args):
    """The harness's eager per-call time of the case (None without args)."""
    if args is None:
        return None
    host = pts.cpu().numpy()
    off = [0, host.shape[0]] if offsets is None else offsets.cpu().numpy()
    r = run_harness(binary, tmp, "case", host, off, args)
    return {k: r[k] for k in ("median_us", "p10_us", "p90_us")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--bin", help="path to bench_voxel_cuda (default build/bench/)")
    a = ap.parse_args()
    if not (torch.cuda.is_available() and robocache.has_cuda()):
        sys.exit("needs a CUDA device and robocache built with CUDA")
    binary = find_binary(a.bin, "bench_voxel_cuda")
    scans = [np.fromfile(p, dtype=np.float32).reshape(-1, 4) for p in SCANS]
    scan = torch.from_numpy(scans[0]).cuda()
    xyz = scan[:, :3].contiguous()
    eight = torch.from_numpy(np.concatenate([scans[i % 2] for i in range(8)])).cuda()
    offsets = torch.tensor(np.cumsum([0] + [len(scans[i % 2]) for i in range(8)]),
                           device="cuda")
    voxel_cases = [("voxelize_hard second-kitti", "KITTI scan", scan, None,
                    hard_case(scan, None, True)),
                   ("voxelize_hard second-kitti check=False", "KITTI scan", scan, None,
                    hard_case(scan, None, False)),
                   ("voxelize_hard second-kitti", "8 KITTI scans", eight, offsets,
                    hard_case(eight, offsets, True)),
                   ("voxel_downsample 0.1 m", "KITTI scan x y z", xyz, None,
                    downsample_case(xyz, 0.1)),
                   ("voxel_downsample 1 m", "KITTI scan x y z", xyz, None,
                    downsample_case(xyz, 1.0)),
                   ("voxelize count 128^3", "KITTI scan x y z", xyz, None, count_case(xyz))]
    name = torch.cuda.get_device_name(0)
    results = {"device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
               "command": "python3 bench/bench_gpu_python.py " + " ".join(sys.argv[1:]),
               "method": __doc__.split("\n\n")[2].strip(), "calls": a.calls, "cases": []}
    print(f"device {name}; per call incl. synchronisation, median us (p10-p90)")
    print(f"{'case':40s} {'input':20s} {'public':>18s} {'out= / C call':>18s} {'overhead':>9s}")

    def report(case, data, p, out=None, c=None):
        base = c or out
        over = p["median_us"] - c["median_us"] if c else None
        results["cases"].append({"case": case, "input": data, "public": p, "public_out": out,
                                 "c_call": c, "overhead_us": over})
        right = f"{base['median_us']:7.1f} ({base['p10_us']:.0f}-{base['p90_us']:.0f})" \
            if base else f"{'-':>18s}"
        print(f"{case:40s} {data:20s} {p['median_us']:7.1f} ({p['p10_us']:.0f}-{p['p90_us']:.0f})"
              f" {right} {'-' if over is None else f'{over:9.1f}':>9s}", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        for case, data, pts, off, (public, harness) in voxel_cases:
            report(case, data, time_calls(public, a.calls),
                   c=c_call(binary, tmp, pts, off, harness))
    public, with_out = resample_case()
    report("resample f32", "B32 S500 T250 D256", time_calls(public, a.calls),
           out=time_calls(with_out, a.calls))
    write_json(os.path.join(a.out, f"gpu_python_{slug(name)}.json"), results)


if __name__ == "__main__":
    main()
