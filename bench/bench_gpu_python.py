"""Per-call time of the public Python calls on CUDA PyTorch tensors, against
the extension's C entry point called with outputs allocated once: what the
Python layer (argument checks, output allocation, DLPack, stats, row slices)
adds to each GPU call.

    python3 bench/bench_gpu_python.py [--out bench/results] [--calls 300]

Each call is timed on the host, perf_counter from before the call to after a
torch.cuda.synchronize() that follows it (a checked call has already
synchronised once inside): the time a data loader waits for the result.
30 warm-up calls, then `calls` calls; median, p10, p90.
  public   robocache.<op>(...) as a user calls it (defaults: check=True)
  _C call  robocache._C.<op> on DLPack capsules of the same inputs and of
           outputs allocated before the loop (a capsule per call)
  overhead = median(public) - median(_C call)
Cases: voxelize_hard with the second-kitti preset on the KITTI scan
(data/pointclouds/kitti_raw_hdl64_0000000000.bin, x y z intensity; checked
and check=False) and on 8 scans (the two raw frames alternating, offsets);
voxel_downsample of the scan's x y z at 0.1 m and 1 m (PCL voxels); voxelize
count into 128^3 over [-40, 40] x [-40, 40] x [-3, 3.4] m; resample f32
B32 S500 T250 D256 (linear, int64 ns).
Writes <out>/gpu_python_<device>.json and prints a table.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

import robocache
from robocache import _C
from robocache._torch_ops import _cap, _resample_empty, _stream
from robocache._torch_voxel import _dense_empty, _downsample_empty, _hard_empty

from bench_common import slug

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCANS = [os.path.join(ROOT, "data", "pointclouds", f"kitti_raw_hdl64_000000000{i}.bin")
         for i in (0, 1)]
SECOND = robocache.voxel_preset("second-kitti")
CUBE = ([80 / 128, 80 / 128, 6.4 / 128], [-40, -40, -3, 40, 40, 3.4])


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
    size, rng = list(SECOND["voxel_size"]), list(SECOND["point_cloud_range"])
    P, M = SECOND["max_points_per_voxel"], SECOND["max_voxels"][1]
    outs, stream = _hard_empty(pts, offsets, P, M), _stream(pts, None)
    return (lambda: robocache.voxelize_hard(pts, **SECOND, offsets=offsets, check=check),
            lambda: _C.voxelize_hard(_cap(pts), _cap(offsets), size, rng, P, M, True,
                                     *map(_cap, outs), stream, check))


def downsample_case(pts, leaf):
    (out, out_offsets), stream = _downsample_empty(pts, None, zeroed=False), _stream(pts, None)
    return (lambda: robocache.voxel_downsample(pts, leaf),
            lambda: _C.voxel_downsample(_cap(pts), None, [leaf] * 3, None, _cap(out),
                                        _cap(out_offsets), stream, True))


def count_case(pts):
    out = _dense_empty(pts, None, *CUBE, "count", torch.int32)
    stream = _stream(pts, None)
    return (lambda: robocache.voxelize(pts, *CUBE),
            lambda: _C.voxelize(_cap(pts), None, *CUBE, "count", _cap(out), "int32", stream,
                                True))


def resample_case():
    B, S, T, D = 32, 500, 250, 256
    g = torch.Generator(device="cuda").manual_seed(0)
    values = torch.randn((B, S, D), device="cuda", generator=g)
    times = (torch.arange(S, device="cuda") * 10_000_000).expand(B, S).contiguous()
    targets = (torch.arange(T, device="cuda") * 19_990_000).expand(B, T).contiguous()
    (out, valid), stream = _resample_empty(values, times, targets, None), _stream(values, None)
    nan = float("nan")
    return (lambda: robocache.resample(values, times, targets),
            lambda: _C.resample(_cap(values), _cap(times), _cap(targets), None, None, "linear",
                                "clamp", nan, None, None, None, "xyzw", _cap(out), _cap(valid),
                                None, True, stream, True))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--calls", type=int, default=300)
    a = ap.parse_args()
    if not (torch.cuda.is_available() and robocache.has_cuda()):
        sys.exit("needs a CUDA device and robocache built with CUDA")
    scans = [np.fromfile(p, dtype=np.float32).reshape(-1, 4) for p in SCANS]
    scan = torch.from_numpy(scans[0]).cuda()
    xyz = scan[:, :3].contiguous()
    eight = torch.from_numpy(np.concatenate([scans[i % 2] for i in range(8)])).cuda()
    offsets = torch.tensor(np.cumsum([0] + [len(scans[i % 2]) for i in range(8)]),
                           device="cuda")
    cases = [("voxelize_hard second-kitti", "KITTI scan", hard_case(scan, None, True)),
             ("voxelize_hard second-kitti check=False", "KITTI scan",
              hard_case(scan, None, False)),
             ("voxelize_hard second-kitti", "8 KITTI scans", hard_case(eight, offsets, True)),
             ("voxel_downsample 0.1 m", "KITTI scan x y z", downsample_case(xyz, 0.1)),
             ("voxel_downsample 1 m", "KITTI scan x y z", downsample_case(xyz, 1.0)),
             ("voxelize count 128^3", "KITTI scan x y z", count_case(xyz)),
             ("resample f32", "B32 S500 T250 D256", resample_case())]
    name = torch.cuda.get_device_name(0)
    results = {"device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
               "command": "python3 bench/bench_gpu_python.py " + " ".join(sys.argv[1:]),
               "method": __doc__.split("\n\n")[2].strip(), "calls": a.calls, "cases": []}
    print(f"device {name}; per call incl. synchronisation, median us (p10-p90)")
    print(f"{'case':40s} {'input':20s} {'public':>18s} {'_C call':>18s} {'overhead':>9s}")
    for case, data, (public, direct) in cases:
        p, d = time_calls(public, a.calls), time_calls(direct, a.calls)
        over = p["median_us"] - d["median_us"]
        results["cases"].append({"case": case, "input": data, "public": p, "c_call": d,
                                 "overhead_us": over})
        print(f"{case:40s} {data:20s} {p['median_us']:7.1f} ({p['p10_us']:.0f}-{p['p90_us']:.0f})"
              f" {d['median_us']:7.1f} ({d['p10_us']:.0f}-{d['p90_us']:.0f}) {over:9.1f}",
              flush=True)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"gpu_python_{slug(name)}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
