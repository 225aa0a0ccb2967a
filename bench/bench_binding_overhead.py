"""Per-call overhead of the public Python calls against the direct C call, for a
tiny resample (B=1, S=16, T=8, D=4, float32 values, int64 ns times).

    python bench/bench_binding_overhead.py [--samples 200] [--calls 200] [--bin PATH]

The direct C time comes from the C harness build/bench/bench_resample_cpu
(bench/bench_resample_cpu.c, --bin): robocache_resample called samples x
calls times on the harness's own inputs, each call timed with
CLOCK_MONOTONIC (the two clock reads, some tens of ns, are inside each
sample). The harness dumps those inputs, and each public path is timed on
them from Python (perf_counter_ns around `calls` back-to-back calls, `samples`
times). Overhead = median(path) - median(direct C). Target: <= 5 us for the
NumPy path. Prints a table and writes bench/results/binding_overhead_<cpu>.json.
"""

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import robocache
from bench_common import cpu_model, find_binary, slug

try:
    import torch
except ImportError:
    torch = None

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
TARGET_US = 5.0
B, S, T, D = 1, 16, 8, 4


def summary(per_call_ns):
    q = statistics.quantiles(per_call_ns, n=10)
    return {"median_us": statistics.median(per_call_ns) / 1e3, "p10_us": q[0] / 1e3,
            "p90_us": q[-1] / 1e3}


def time_python(fn, samples, calls):
    for _ in range(calls):  # warm-up
        fn()
    out = []
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter_ns() - t0) / calls)
    return out


def direct_c(binary, samples, calls, dump):
    """The harness's per-call time (ns: median, p10, p90) and its inputs."""
    cmd = [binary, "--batch", str(B), "--samples", str(S), "--targets", str(T), "--channels",
           str(D), "--repeats", str(samples * calls), "--warmup", str(calls), "--dump", dump]
    res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    data = [np.fromfile(os.path.join(dump, name), dtype).reshape(shape) for name, dtype, shape in
            (("values.f32", np.float32, (B, S, D)), ("times.i64", np.int64, (B, S)),
             ("targets.i64", np.int64, (B, T)))]
    ns = {k: res[f"{k}_s"] * 1e9 for k in ("median", "p10", "p90")}
    return ns, data


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--bin", help="path to bench_resample_cpu (default build/bench/)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as dump:
        c_ns, (v, t, x) = direct_c(find_binary(args.bin), args.samples, args.calls, dump)

    paths = {}
    paths["robocache.resample (NumPy)"] = time_python(
        lambda: robocache.resample(v, t, x), args.samples, args.calls)
    out = np.empty((B, T, D), dtype=np.float32)
    paths["robocache.resample (NumPy, out=)"] = time_python(
        lambda: robocache.resample(v, t, x, out=out), args.samples, args.calls)
    if torch is not None:
        tv, tt, tx = (torch.from_numpy(a) for a in (v, t, x))
        paths["robocache.resample (torch CPU, eager)"] = time_python(
            lambda: robocache.resample(tv, tt, tx), args.samples, args.calls)
        op = torch.ops.robocache.resample.default
        nan = float("nan")
        paths["torch.ops.robocache.resample (dispatcher)"] = time_python(
            lambda: op(tv, tt, tx, None, None, "linear", "clamp", nan, None, None, 0, "xyzw",
                       None, None), args.samples, args.calls)

    direct = c_ns["median"] / 1e3
    rows = [{"path": "direct C call (bench_resample_cpu)", "median_us": direct,
             "p10_us": c_ns["p10"] / 1e3, "p90_us": c_ns["p90"] / 1e3, "overhead_us": 0.0}]
    rows += [{"path": name, **summary(samples)} for name, samples in paths.items()]
    print(f"{'path':45s} {'median us':>10s} {'p10':>8s} {'p90':>8s} {'overhead us':>12s}")
    for r in rows:
        r["overhead_us"] = r["median_us"] - direct
        print(f"{r['path']:45s} {r['median_us']:10.3f} {r['p10_us']:8.3f} {r['p90_us']:8.3f} "
              f"{r['overhead_us']:12.3f}")
    numpy_overhead = rows[1]["overhead_us"]
    print(f"binding overhead (robocache.resample, NumPy): {numpy_overhead:.2f} us "
          f"(target <= {TARGET_US} us: {'met' if numpy_overhead <= TARGET_US else 'NOT met'})")

    cpu = cpu_model()
    result = {
        "benchmark": "binding_overhead",
        "command": "python bench/bench_binding_overhead.py " + " ".join(sys.argv[1:]),
        "device": cpu,
        "versions": {"robocache": robocache.__version__, "python": platform.python_version(),
                     "numpy": np.__version__, "torch": torch.__version__ if torch else None},
        "shapes": {"B": B, "S": S, "T": T, "D": D, "values": "float32", "times": "int64 ns"},
        "samples": args.samples, "calls_per_sample": args.calls,
        "target_overhead_us": TARGET_US,
        "binding_overhead_us": numpy_overhead,
        "paths": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"binding_overhead_{slug(cpu)}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
