"""Per-call overhead of the Python binding against the direct C call, for a
tiny resample (B=1, S=16, T=8, D=4, float32 values, int64 ns times).

    python bench/bench_binding_overhead.py [--samples 200] [--calls 200]

The direct C time comes from robocache._C.time_direct_resample: the same
tensors imported once, then robocache_resample called back to back from C and
timed with CLOCK_MONOTONIC. Each binding path is timed the same way from
Python (perf_counter_ns around `calls` back-to-back calls). Overhead =
median(path) - median(direct). Target: <= 5 us for the NumPy path. Prints a
table and writes bench/results/binding_overhead_<cpu>.json.
"""

import argparse
import json
import pathlib
import platform
import statistics
import sys
import time

import numpy as np

import robocache
from robocache import _C

from bench_common import cpu_model, slug

try:
    import torch
except ImportError:
    torch = None

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
TARGET_US = 5.0


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    B, S, T, D = 1, 16, 8, 4
    rng = np.random.default_rng(0)
    v = rng.standard_normal((B, S, D)).astype(np.float32)
    t = (np.arange(S, dtype=np.int64) * 5_000_000)[None]
    x = np.sort(rng.integers(0, int(t[0, -1]), size=(B, T)), axis=1)

    paths = {}
    _C.time_direct_resample(v, t, x, 10, args.calls)  # warm-up
    paths["direct C call"] = _C.time_direct_resample(v, t, x, args.samples, args.calls)
    nan = float("nan")
    paths["robocache._C.resample (NumPy)"] = time_python(
        lambda: _C.resample(v, t, x, None, None, "linear", "clamp", nan, None, None, None,
                            "xyzw", None, None, None, False, None), args.samples, args.calls)
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
        paths["torch.ops.robocache.resample (dispatcher)"] = time_python(
            lambda: op(tv, tt, tx, None, None, "linear", "clamp", nan, None, None, 0, "xyzw",
                       None, None), args.samples, args.calls)

    direct = statistics.median(paths["direct C call"])
    rows = []
    print(f"{'path':45s} {'median us':>10s} {'p10':>8s} {'p90':>8s} {'overhead us':>12s}")
    for name, samples in paths.items():
        s = summary(samples)
        s["overhead_us"] = s["median_us"] - direct / 1e3
        rows.append({"path": name, **s})
        print(f"{name:45s} {s['median_us']:10.3f} {s['p10_us']:8.3f} {s['p90_us']:8.3f} "
              f"{s['overhead_us']:12.3f}")
    numpy_overhead = rows[2]["overhead_us"]
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
