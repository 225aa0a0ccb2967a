"""Per-kernel GPU times of repeated CUDA resample calls, from the PyTorch profiler (CUPTI): for
each call, the robocache kernels' durations and the gaps between them (e.g. whether the split
path's move kernel, a programmatic dependent launch, starts before its decide kernel ends).

    python3 bench/trace_gpu_resample.py [--shape B S T D] [--dtype bf16|f32] [--eager] [-n N]

Default: the benchmark's bf16 B256 S4096 T1024 D256 case, one unchecked call per CUDA graph
replay (as bench/bench_gpu_align.py times it), 60 replays. Prints one line per call.
"""

import argparse

import torch
from torch.profiler import ProfilerActivity, profile

from bench_gpu_align import unchecked_resample


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", type=int, nargs=4, default=[256, 4096, 1024, 256])
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    ap.add_argument("--eager", action="store_true", help="calls, not graph replays")
    ap.add_argument("-n", type=int, default=60)
    a = ap.parse_args()
    B, S, T, D = a.shape
    call = unchecked_resample(B, S, T, D, a.dtype, torch.Generator(device="cuda").manual_seed(1))
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    if not a.eager:
        with torch.cuda.graph(graph):
            call()
        for _ in range(3):
            graph.replay()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(a.n)]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for start, end in events:
            start.record()
            call() if a.eager else graph.replay()
            end.record()
        torch.cuda.synchronize()
    kernels = sorted((e for e in prof.events()
                      if e.device_type.name == "CUDA" and "::rc_" in e.name),
                     key=lambda e: e.time_range.start)
    per_call = len(kernels) // a.n
    print(f"{'eager' if a.eager else 'graph'} B{B} S{S} T{T} D{D} {a.dtype}: {a.n} calls, "
          f"{per_call} kernels each; us")
    for i, (start, end) in enumerate(events):
        ks = kernels[i * per_call:(i + 1) * per_call]
        parts = [f"{k.name[k.name.index('::rc_') + 2:].split('(')[0].split('<')[0]} "
                 f"{k.time_range.elapsed_us():6.1f}" for k in ks]
        gaps = [f"{ks[j + 1].time_range.start - ks[j].time_range.end:5.1f}"
                for j in range(len(ks) - 1)]
        print(f"{i:3d} call {start.elapsed_time(end) * 1e3:7.1f}  " + "  ".join(parts)
              + ("  gaps " + " ".join(gaps) if gaps else ""))


if __name__ == "__main__":
    main()
