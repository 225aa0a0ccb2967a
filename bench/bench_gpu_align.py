"""GPU benchmark of robocache.resample / robocache.align (CUDA backend)
against PyTorch baselines measured in the same run, and the memory floor.

    python3 bench/bench_gpu_align.py [--out bench/results] [--quick]

Cases (DESIGN §6 and the CUDA backend issue):
  resample, f32 and bf16 values (int64 ns times, linear, clamp):
    B32 S500 T250 D256, B64 S4096 T1024 D32, B256 S1000 T500 D64,
    B1024 S2000 T1000 D12, B256 S4096 T1024 D256
  align (multimodal, 1 s window -> 50 frames): vision 30 Hz x 512 +
    proprio 100 Hz x 64 + IMU 200 Hz x 12, f32 values, f32 and bf16 out,
    B = 1, 32, 256

Baselines: PyTorch eager searchsorted + gather + lerp (align: one per stream
+ torch.cat), the same function under torch.compile, and the memory floor =
(bytes of out + bytes of the distinct source rows that bracket the targets +
bytes of all timestamps) / device-to-device copy bandwidth measured in this
run (bytes read + written, on a 1 GiB copy). For scale, each case also times
copies that move the floor's bytes (half read, half written:
"copy_same_bytes", a memcpy and an elementwise kernel, median_us the faster),
timed as the case is: what the floor's bytes cost at this size, the ramp-up
and tail of a launch included.

Timing: every variant is captured in a CUDA graph of R calls that rotate over
R input sets (R chosen so that the sets span more than 3x the L2 cache), the
graph is replayed after warm-up and each replay is timed with CUDA events;
per-call time = replay time / R; median, p10, p90, p99 over the replays.
Graph capture puts robocache in its unchecked mode (docs/cuda.md); the
eager per-call wall time of robocache in checked mode (one stream
synchronisation per call) is reported too. Writes
<out>/gpu_align_<device>.json and prints a table.
"""

import argparse
import json
import math
import os
import platform
import re
import statistics
import sys
import time
import traceback

import torch
import torch._dynamo

import robocache
from bench_common import align_case_name, slug

L2_FACTOR = 3


def percentile(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary(per_call_us):
    return {"median_us": statistics.median(per_call_us), "p10_us": percentile(per_call_us, 0.1),
            "p90_us": percentile(per_call_us, 0.9), "p99_us": percentile(per_call_us, 0.99),
            "replays": len(per_call_us)}


# Replays of each graph before the timed ones, in ms of device time (as
# triton.testing.do_bench's warm-up): right after the case's heavy setup the
# first replays can run slower than the steady state (docs/cuda.md).
WARMUP_MS = 25.0


def time_graph(calls, replays):
    """Captures calls (a list of R closures) in one CUDA graph; replays it for
    WARMUP_MS, then times `replays` replays."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            for f in calls:
                f()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for f in calls:
            f()
    first, last = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    first.record()
    graph.replay()
    last.record()
    torch.cuda.synchronize()
    for _ in range(min(10_000, math.ceil(WARMUP_MS / max(first.elapsed_time(last), 1e-3)))):
        graph.replay()
    torch.cuda.synchronize()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    for i in range(replays):
        start[i].record()
        graph.replay()
        end[i].record()
    torch.cuda.synchronize()
    per_call = [s.elapsed_time(e) * 1e3 / len(calls) for s, e in zip(start, end)]
    del graph
    return summary(per_call)


def time_eager_wall(call, n):
    """Wall-clock per call of n back-to-back eager calls (host overhead and,
    for robocache in checked mode, its stream synchronisation included)."""
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def copy_bandwidth():
    """Device-to-device copy bandwidth (bytes read + written per second)."""
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    a.fill_(1)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1e-3)
    del a, b
    return 2 * n / statistics.median(ts)


# ---- inputs -----------------------------------------------------------------------------


def make_times(B, S, rate_hz, start_ns, gen):
    """[B,S] int64 ns: a nominal rate with +-10 % jitter per step, per-row start."""
    dt = 1e9 / rate_hz
    steps = dt * (0.9 + 0.2 * torch.rand(B, S, generator=gen, device="cuda", dtype=torch.float64))
    steps[:, 0] = 0
    starts = start_ns + (torch.rand(B, 1, generator=gen, device="cuda",
                                    dtype=torch.float64) * dt)
    return (starts + torch.cumsum(steps, 1)).round().to(torch.int64)


def make_targets(B, T, first, last):
    """[B,T] uniform grid over [first, last] of each row (int64 ns)."""
    frac = torch.linspace(0, 1, T, device="cuda", dtype=torch.float64)
    span = (last - first).to(torch.float64)
    return (first.to(torch.float64) + frac * span).round().to(torch.int64)


def resample_inputs(B, S, T, D, dtype, gen):
    """One resample case's (values, times, targets, out): 100 Hz rows, targets a uniform grid
    over each row (as the benchmark's; also for bench/profile_gpu_align.py and
    bench/trace_gpu_resample.py)."""
    times = make_times(B, S, 100.0, 1_600_000_000_000_000_000, gen)
    targets = make_targets(B, T, times[:, :1], times[:, -1:])
    values = torch.randn(B, S, D, generator=gen, device="cuda").to(dtype)
    return values, times, targets, torch.empty(B, T, D, dtype=dtype, device="cuda")


def unchecked_resample(B, S, T, D, dtype_name, gen):
    """A closure making one unchecked robocache.resample call on a case's resample_inputs
    (dtype_name "f32" or "bf16"), for bench/profile_gpu_align.py and
    bench/trace_gpu_resample.py."""
    dtype = torch.float32 if dtype_name == "f32" else torch.bfloat16
    values, times, targets, out = resample_inputs(B, S, T, D, dtype, gen)
    return lambda: robocache.resample(values, times, targets, out=out, check=False)


def time_copy(floor_bytes, l2, replays):
    """Copies of floor_bytes / 2 bytes (so floor_bytes are read and written),
    over rotating buffer pairs as the cases rotate their sets, two ways: a
    device-to-device memcpy (copy_) and an elementwise kernel (bitwise_not of
    int32 words). Both summaries, and which was faster ("best")."""
    n = max(1, floor_bytes // 8)
    pairs = [(torch.ones(n, dtype=torch.int32, device="cuda"),
              torch.empty(n, dtype=torch.int32, device="cuda"))
             for _ in range(n_sets(8 * n, l2, 4 << 30))]
    res = {"memcpy": time_graph([lambda p=p: p[1].copy_(p[0]) for p in pairs], replays),
           "kernel": time_graph([lambda p=p: torch.bitwise_not(p[0], out=p[1]) for p in pairs],
                                replays)}
    res["best"] = min(("memcpy", "kernel"), key=lambda k: res[k]["median_us"])
    res["median_us"] = res[res["best"]]["median_us"]
    return res


def floor_rows(times, targets):
    """Number of distinct (row, sample) pairs that bracket the targets."""
    B, S = times.shape
    i1 = torch.searchsorted(times, targets, right=True).clamp(1, S - 1)
    used = torch.zeros(B, S, dtype=torch.bool, device="cuda")
    used.scatter_(1, i1 - 1, True)
    used.scatter_(1, i1, True)
    return int(used.sum())


# ---- the PyTorch baseline --------------------------------------------------------------


def torch_resample(values, times, targets):
    """Linear interpolation with clamp, per row: searchsorted + gather + lerp."""
    S, D = values.shape[1], values.shape[2]
    i1 = torch.searchsorted(times, targets, right=True).clamp(1, S - 1)
    i0 = i1 - 1
    t0, t1 = times.gather(1, i0), times.gather(1, i1)
    w = ((targets - t0).to(torch.float32) / (t1 - t0).to(torch.float32)).clamp(0, 1)
    v0 = values.gather(1, i0.unsqueeze(-1).expand(-1, -1, D))
    v1 = values.gather(1, i1.unsqueeze(-1).expand(-1, -1, D))
    return torch.lerp(v0, v1, w.unsqueeze(-1).to(values.dtype))


def torch_align(streams, targets, out_dtype):
    return torch.cat([torch_resample(v, t, targets).to(out_dtype) for v, t in streams], dim=-1)


# ---- cases ---------------------------------------------------------------------------------


def n_sets(set_bytes, l2_bytes, cap_bytes):
    want = max(1, math.ceil(L2_FACTOR * l2_bytes / max(set_bytes, 1)))
    return max(1, min(want, 64, cap_bytes // max(set_bytes, 1)))


def resample_case(B, S, T, D, dtype, l2, bw, compile_cache, replays):
    gen = torch.Generator(device="cuda").manual_seed(B * 7 + S + T + D)
    esize = torch.tensor([], dtype=dtype).element_size()
    set_bytes = B * S * D * esize + B * T * D * esize + B * S * 8 + B * T * 8
    R = n_sets(set_bytes, l2, 8 << 30)
    sets = [resample_inputs(B, S, T, D, dtype, gen) for _ in range(R)]
    values, times, targets, out = sets[0]
    # correctness of what is timed, against the baseline (same semantics)
    robocache.resample(values, times, targets, out=out)
    ref = torch_resample(values.float(), times, targets)
    err = (out.float() - ref).abs().max().item()
    floor_bytes = (B * T * D * esize + floor_rows(times, targets) * D * esize
                   + times.numel() * 8 + targets.numel() * 8)
    key = ("resample", dtype)
    if key not in compile_cache:
        compile_cache[key] = torch.compile(torch_resample, dynamic=False)
    compiled = compile_cache[key]
    res = {
        "op": "resample", "B": B, "S": S, "T": T, "D": D, "dtype": str(dtype).split(".")[-1],
        "rotating_sets": R, "set_bytes": set_bytes, "max_abs_diff_vs_eager": err,
        "floor_bytes": floor_bytes, "floor_us": floor_bytes / bw * 1e6,
        "robocache": time_graph([lambda s=s: robocache.resample(s[0], s[1], s[2], out=s[3])
                                 for s in sets], replays),
        "torch_eager": time_graph([lambda s=s: torch_resample(s[0], s[1], s[2]) for s in sets],
                                  replays),
        "torch_compile": time_graph([lambda s=s: compiled(s[0], s[1], s[2]) for s in sets],
                                    replays),
    }
    res["robocache_eager_wall_us"] = time_eager_wall(
        lambda: robocache.resample(values, times, targets, out=out), 50)
    del sets, values, times, targets, out
    res["copy_same_bytes"] = time_copy(floor_bytes, l2, replays)
    return res


MODALITIES = (("vision", 30.0, 512), ("proprio", 100.0, 64), ("imu", 200.0, 12))


def align_case(B, out_dtype, l2, bw, compile_cache, replays):
    gen = torch.Generator(device="cuda").manual_seed(B + 3)
    T = 50
    in_bytes = sum(B * int(r) * D * 4 + B * int(r) * 8 for _, r, D in MODALITIES)
    Dout = sum(D for _, _, D in MODALITIES)
    esize = torch.tensor([], dtype=out_dtype).element_size()
    set_bytes = in_bytes + B * T * Dout * esize + B * T * 8
    R = n_sets(set_bytes, l2, 4 << 30)
    sets = []
    start = 1_600_000_000_000_000_000
    for _ in range(R):
        streams = []
        for _, rate, D in MODALITIES:
            S = int(rate)  # 1 s window
            streams.append((torch.randn(B, S, D, generator=gen, device="cuda"),
                            make_times(B, S, rate, start, gen)))
        first = torch.stack([t[:, 0] for _, t in streams], 1).max(1, keepdim=True).values
        last = torch.stack([t[:, -1] for _, t in streams], 1).min(1, keepdim=True).values
        targets = make_targets(B, T, first, last)
        out = torch.empty(B, T, Dout, dtype=out_dtype, device="cuda")
        valid = torch.empty(B, T, len(MODALITIES), dtype=torch.bool, device="cuda")
        sets.append((streams, targets, out, valid))

    def ours(s):
        rs = [robocache.Stream(v, t, name=n) for (v, t), (n, _, _) in zip(s[0], MODALITIES)]
        return robocache.align(rs, s[1], out=s[2], valid=s[3])

    streams, targets, out, valid = sets[0]
    ours(sets[0])
    err = (out.float() - torch_align(streams, targets, torch.float32)).abs().max().item()
    floor_bytes = B * T * Dout * esize + targets.numel() * 8
    for (v, t), (_, _, D) in zip(streams, MODALITIES):
        floor_bytes += floor_rows(t, targets) * D * 4 + t.numel() * 8
    key = ("align", out_dtype)
    if key not in compile_cache:
        compile_cache[key] = torch.compile(torch_align, dynamic=False)
    compiled = compile_cache[key]
    res = {
        "op": "align", "B": B, "T": T, "streams": [list(m) for m in MODALITIES],
        "dtype": "float32", "out_dtype": str(out_dtype).split(".")[-1], "rotating_sets": R,
        "set_bytes": set_bytes, "max_abs_diff_vs_eager": err, "floor_bytes": floor_bytes,
        "floor_us": floor_bytes / bw * 1e6,
        "robocache": time_graph([lambda s=s: ours(s) for s in sets], replays),
        "torch_eager": time_graph([lambda s=s: torch_align(s[0], s[1], out_dtype)
                                   for s in sets], replays),
        "torch_compile": time_graph([lambda s=s: compiled(s[0], s[1], out_dtype)
                                     for s in sets], replays),
    }
    res["robocache_eager_wall_us"] = time_eager_wall(lambda: ours(sets[0]), 200)
    del sets, streams, targets, out, valid
    res["copy_same_bytes"] = time_copy(floor_bytes, l2, replays)
    return res


def finish(res):
    ours = res["robocache"]["median_us"]
    res["robocache_GBps"] = res["floor_bytes"] / (ours * 1e-6) / 1e9
    res["pct_of_floor"] = 100.0 * res["floor_us"] / ours
    res["speedup_vs_eager"] = res["torch_eager"]["median_us"] / ours
    res["speedup_vs_compile"] = res["torch_compile"]["median_us"] / ours
    res["x_copy_same_bytes"] = ours / res["copy_same_bytes"]["median_us"]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--quick", action="store_true", help="fewer replays (smoke run)")
    ap.add_argument("--cases", default="", metavar="REGEX",
                    help="only the cases whose name matches (e.g. 'B1024.*bfloat16'; A/B runs)")
    args = ap.parse_args()
    if not torch.cuda.is_available() or not robocache.has_cuda():
        print("bench_gpu_align: no CUDA device (or robocache built without CUDA): skipped")
        return 0
    # one compiled baseline per dtype serves several static shapes: allow the recompiles
    for name in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    bw = copy_bandwidth()
    replays = 5 if args.quick else 30
    compile_cache = {}
    results = []
    name = torch.cuda.get_device_name(0)
    doc = {
        "benchmark": "bench/bench_gpu_align.py", "device": name,
        "sm_count": props.multi_processor_count, "l2_bytes": l2,
        "copy_bandwidth_GBps": bw / 1e9, "torch": torch.__version__,
        "robocache": robocache.__version__, "python": platform.python_version(),
        "timing": "CUDA graph of R rotating calls, CUDA events per replay, per-call = replay/R",
        "results": results,
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"gpu_align_{slug(name)}.json")

    def record(case, run):
        """Runs one case; the JSON is rewritten after every case, so a cut-short run keeps
        what it measured, and a failing case is recorded without stopping the others."""
        if not re.search(args.cases, case):
            return
        try:
            results.append(finish(run()))
        except Exception as e:  # noqa: BLE001 - reported in the JSON and on stderr
            traceback.print_exc()
            results.append({"op": case, "error": f"{type(e).__name__}: {e}"})
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"done {case}", file=sys.stderr, flush=True)

    shapes = [(32, 500, 250, 256), (64, 4096, 1024, 32), (256, 1000, 500, 64),
              (1024, 2000, 1000, 12), (256, 4096, 1024, 256)]
    for dtype in (torch.float32, torch.bfloat16):
        for B, S, T, D in shapes:
            record(f"resample B{B} S{S} T{T} D{D} {dtype}",
                   lambda: resample_case(B, S, T, D, dtype, l2, bw, compile_cache, replays))
    for out_dtype in (torch.float32, torch.bfloat16):
        for B in (1, 32, 256):
            record(f"align B{B} out {out_dtype}",
                   lambda: align_case(B, out_dtype, l2, bw, compile_cache, replays))
    print(f"device {name}, copy bandwidth {bw / 1e9:.0f} GB/s; wrote {path}")
    hdr = (f"{'case':34} {'ours us':>9} {'eager':>9} {'compile':>9} {'floor':>8} "
           f"{'%floor':>7} {'GB/s':>6} {'xeager':>7} {'xcomp':>6} {'wall us':>8} {'copy us':>8}")
    print(hdr)
    for r in results:
        if "error" in r:
            print(f"{r['op']:34} FAILED: {r['error'][:80]}")
            continue
        print(f"{align_case_name(r):34} {r['robocache']['median_us']:9.2f} {r['torch_eager']['median_us']:9.2f} "
              f"{r['torch_compile']['median_us']:9.2f} {r['floor_us']:8.2f} "
              f"{r['pct_of_floor']:7.1f} {r['robocache_GBps']:6.0f} "
              f"{r['speedup_vs_eager']:7.2f} {r['speedup_vs_compile']:6.2f} "
              f"{r['robocache_eager_wall_us']:8.1f} {r['copy_same_bytes']['median_us']:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
