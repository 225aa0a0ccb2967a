"""Where the time of a CUDA align / resample call goes: each robocache
kernel's GPU time, DRAM bytes and achieved occupancy, measured with Nsight
Compute, for cases of bench/bench_gpu_align.py.

    python3 bench/profile_gpu_align.py --out OUT_DIR [CASE ...]

CASE: align-B256-f32, align-B256-bf16, align-B32-f32, or
resample-B<B>-S<S>-T<T>-D<D>-<f32|bf16> (default: the two align B256 cases).
Each case runs in a child process under `ncu` at the GPU's own clocks, with
the caches flushed before each kernel (cold inputs, as the benchmark's
rotating input sets); 10 unchecked calls are made and the last 4 profiled.
Prints, per case and kernel, the median time, DRAM read / write bytes and
achieved occupancy; writes the ncu CSV logs to OUT_DIR.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

import ncu_csv

METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
           "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread"]
DEFAULT_CASES = ["align-B256-f32", "align-B256-bf16"]


def run_case(case):
    """The child: 10 unchecked calls of CASE on the current stream."""
    import torch

    import robocache
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_gpu_align import MODALITIES, make_targets, make_times, unchecked_resample

    gen = torch.Generator(device="cuda").manual_seed(1)
    start = 1_600_000_000_000_000_000
    m = re.fullmatch(r"align-B(\d+)-(f32|bf16)", case)
    if m:
        B, T = int(m[1]), 50
        out_dtype = torch.float32 if m[2] == "f32" else torch.bfloat16
        streams = [(torch.randn(B, int(r), D, generator=gen, device="cuda"),
                    make_times(B, int(r), r, start, gen)) for _, r, D in MODALITIES]
        first = torch.stack([t[:, 0] for _, t in streams], 1).max(1, keepdim=True).values
        last = torch.stack([t[:, -1] for _, t in streams], 1).min(1, keepdim=True).values
        targets = make_targets(B, T, first, last)
        out = torch.empty(B, T, sum(D for _, _, D in MODALITIES), dtype=out_dtype, device="cuda")
        rs = [robocache.Stream(v, t, name=n) for (v, t), (n, _, _) in zip(streams, MODALITIES)]

        def call():
            robocache.align(rs, targets, out=out, check=False)
    else:
        m = re.fullmatch(r"resample-B(\d+)-S(\d+)-T(\d+)-D(\d+)-(f32|bf16)", case)
        if not m:
            sys.exit(f"unknown case {case}")
        call = unchecked_resample(*(int(x) for x in m.groups()[:4]), m[5], gen)
    for _ in range(10):
        call()
    torch.cuda.synchronize()


def profile(case, out_dir):
    log = os.path.join(out_dir, f"ncu_{case}.csv")
    cmd = ["ncu", "--csv", "--log-file", log, "--metrics", ",".join(METRICS),
           "--print-units", "base", "--clock-control", "none", "--kernel-name", "regex:rc_",
           "--launch-skip", "0", sys.executable, os.path.abspath(__file__), "--child", case]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"{case}: ncu failed ({r.returncode}): {r.stderr[-2000:]}")
        return
    kernels = ncu_csv.read(log)
    print(f"{case}:")
    for name, launches in kernels.items():
        last = launches[-4:]

        def med(metric):
            return statistics.median(x[metric] for x in last)
        print(f"  {name:28s} {med('gpu__time_duration.sum') / 1e3:8.2f} us"
              f"  read {med('dram__bytes_read.sum') / 1e6:7.2f} MB"
              f"  write {med('dram__bytes_write.sum') / 1e6:7.2f} MB"
              f"  occupancy {med('sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f} %"
              f"  regs {med('launch__registers_per_thread'):.0f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--child")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    if a.child:
        return run_case(a.child)
    if not a.out:
        ap.error("--out is required")
    os.makedirs(a.out, exist_ok=True)
    for case in a.cases or DEFAULT_CASES:
        profile(case, a.out)


if __name__ == "__main__":
    main()
