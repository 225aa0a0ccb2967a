#!/usr/bin/env python3
"""CPU benchmark of robocache.resample against PyTorch and NumPy baselines.

resample of float32 values [B,S,D] with int64 ns times onto sorted targets
[B,T] (linear, clamp), for the shapes B32 S500 T250 D256 and
B64 S4096 T1024 D32, all in the same run and with the same thread count:

  robocache      the C call robocache_resample, timed in C by
                 build/bench/bench_resample_cpu (repeated runs after warm-up)
  torch          PyTorch CPU searchsorted + gather + lerp (torch.set_num_threads)
  numpy.interp   a Python loop of numpy.interp over rows and channels
                 (single-threaded, as numpy.interp is)

The C binary generates the data from --seed and dumps it; the baselines run
on the same arrays, and the results must agree (max |diff| <= 1e-5, values
in [-1, 1]) or the script exits 1. Run it on an otherwise idle machine (the
1-minute load average before and after is recorded). Prints a table and writes
bench/results/resample_cpu_<cpu-model>.json: device, threads, library
versions, shapes, median/p10/p90 seconds per implementation, GB/s (bytes of
values + times + targets + out divided by the median) and the speed-up of
robocache over each baseline.

usage: python bench/bench_resample_cpu.py [--threads N] [--repeats R]
       [--numpy-repeats R] [--seed X] [--bin PATH] [--out FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

from bench_common import ROOT, cpu_model, find_binary, slug, write_json

SHAPES = [dict(B=32, S=500, T=250, D=256), dict(B=64, S=4096, T=1024, D=32)]
TOLERANCE = 1e-5


def stats(seconds):
    s = np.asarray(seconds)
    return dict(median_s=float(np.median(s)), p10_s=float(np.percentile(s, 10)),
                p90_s=float(np.percentile(s, 90)), repeats=len(s))


def time_fn(fn, repeats, warmup):
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return stats(out)


def run_robocache(binary, shape, threads, repeats, seed, dump):
    cmd = [binary, "--batch", str(shape["B"]), "--samples", str(shape["S"]), "--targets",
           str(shape["T"]), "--channels", str(shape["D"]), "--threads", str(threads),
           "--repeats", str(repeats), "--warmup", "3", "--seed", str(seed), "--dump", dump]
    res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    B, S, T, D = (shape[k] for k in "BSTD")
    data = dict(
        values=np.fromfile(os.path.join(dump, "values.f32"), np.float32).reshape(B, S, D),
        times=np.fromfile(os.path.join(dump, "times.i64"), np.int64).reshape(B, S),
        targets=np.fromfile(os.path.join(dump, "targets.i64"), np.int64).reshape(B, T),
        out=np.fromfile(os.path.join(dump, "out.f32"), np.float32).reshape(B, T, D))
    return res, data


def torch_resample(values, times, targets):
    """Linear interpolation, clamp at the ends: searchsorted + gather + lerp."""
    S, D = values.shape[1], values.shape[2]
    idx = torch.searchsorted(times, targets, right=True).sub_(1).clamp_(0, S - 2)
    t0 = times.gather(1, idx)
    t1 = times.gather(1, idx + 1)
    w = ((targets - t0).to(torch.float32) / (t1 - t0).to(torch.float32)).clamp_(0, 1)
    gidx = idx.unsqueeze(-1).expand(-1, -1, D)
    v0 = values.gather(1, gidx)
    v1 = values.gather(1, gidx + 1)
    return torch.lerp(v0, v1, w.unsqueeze(-1))


def numpy_loop(values, times_s, targets_s, out):
    """numpy.interp per row and channel (clamps at the ends)."""
    B, _, D = values.shape
    for b in range(B):
        for d in range(D):
            out[b, :, d] = np.interp(targets_s[b], times_s[b], values[b, :, d])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--numpy-repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin")
    ap.add_argument("--out")
    args = ap.parse_args()
    binary = find_binary(args.bin)
    torch.set_num_threads(args.threads)
    device = cpu_model()
    load_before = os.getloadavg()
    results, version = [], None
    for shape in SHAPES:
        with tempfile.TemporaryDirectory() as dump:
            rc, data = run_robocache(binary, shape, args.threads, args.repeats, args.seed, dump)
        version = rc.pop("version")
        values, times, targets = (torch.from_numpy(data[k]) for k in ("values", "times", "targets"))
        out_torch = torch_resample(values, times, targets).numpy()
        t_torch = time_fn(lambda: torch_resample(values, times, targets), args.repeats, 3)
        times_s, targets_s = data["times"].astype(np.float64), data["targets"].astype(np.float64)
        out_np = np.empty_like(data["out"])
        numpy_loop(data["values"], times_s, targets_s, out_np)
        t_np = time_fn(lambda: numpy_loop(data["values"], times_s, targets_s, out_np),
                       args.numpy_repeats, 1)
        diff_torch = float(np.abs(data["out"] - out_torch).max())
        diff_np = float(np.abs(data["out"] - out_np).max())
        if not (diff_torch <= TOLERANCE and diff_np <= TOLERANCE):
            sys.exit(f"results disagree for {shape}: max |robocache - torch| = {diff_torch}, "
                     f"max |robocache - numpy| = {diff_np}")
        B, S, T, D = (shape[k] for k in "BSTD")
        nbytes = B * S * D * 4 + B * S * 8 + B * T * 8 + B * T * D * 4
        impls = {"robocache": rc, "torch": t_torch, "numpy.interp loop": t_np}
        for v in impls.values():
            v["gb_per_s"] = nbytes / v["median_s"] / 1e9
        results.append(dict(
            shape=shape, bytes=nbytes, implementations=impls,
            max_abs_diff={"torch": diff_torch, "numpy.interp loop": diff_np},
            speedup={"vs torch": t_torch["median_s"] / rc["median_s"],
                     "vs numpy.interp loop": t_np["median_s"] / rc["median_s"]}))
    report = dict(
        benchmark="resample_cpu", command="python bench/bench_resample_cpu.py " +
        " ".join(sys.argv[1:]), device=device, threads=args.threads, cpu_count=os.cpu_count(),
        load_average_before_after=[load_before[0], os.getloadavg()[0]],
        numpy_threads="1 (numpy.interp is single-threaded)",
        versions=dict(robocache=version, torch=torch.__version__, numpy=np.__version__,
                      python=sys.version.split()[0]),
        method="linear", extrapolate="clamp", values_dtype="float32", times_dtype="int64 ns",
        seed=args.seed, results=results)
    print(f"resample, float32, linear — {device}, {args.threads} threads "
          f"(robocache {version}, torch {torch.__version__}, numpy {np.__version__})")
    print(f"{'shape':<24}{'implementation':<20}{'median ms':>10}{'p10 ms':>9}{'p90 ms':>9}"
          f"{'GB/s':>8}{'robocache x':>13}")
    for r in results:
        name = "B{B} S{S} T{T} D{D}".format(**r["shape"])
        for impl, v in r["implementations"].items():
            ratio = v["median_s"] / r["implementations"]["robocache"]["median_s"]
            print(f"{name:<24}{impl:<20}{v['median_s'] * 1e3:>10.3f}{v['p10_s'] * 1e3:>9.3f}"
                  f"{v['p90_s'] * 1e3:>9.3f}{v['gb_per_s']:>8.2f}{ratio:>13.1f}")
    path = args.out or os.path.join(ROOT, "bench", "results",
                                    f"resample_cpu_{slug(device) or 'cpu'}.json")
    write_json(path, report)


if __name__ == "__main__":
    main()
