"""GPU benchmark of the CUDA voxelize backend against PyTorch baselines
measured in the same run.

    python3 bench/bench_gpu_voxel.py --bin BUILD/bench/bench_voxel_cuda [--out bench/results]

robocache is timed by the C harness bench/bench_voxel_cuda.c (the C API,
without the Python binding's overhead): each robocache call, including its one
stream synchronisation (stats), between two CUDA events, 20 warm-up calls,
then 200 calls rotating over input/output sets that span > 150 MB (3x L2);
then the same calls captured in a CUDA graph (robocache unchecked: no
read-back, no sync), replays timed, per call = replay / calls in the graph.
The PyTorch baselines are timed here the same way (CUDA events per call after
warm-up, inputs rotated).

Cases (DESIGN §1.3):
  dense, 128^3 grid over [-40, 40] x [-40, 40] x [-3, 1] m, points x y z
  intensity: 500K uniform points, and the real KITTI HDL-64 scan
  (data/pointclouds/kitti_raw_hdl64_0000000000.bin, 122,626 points);
  modes count (i32), occupancy (u8), sum, mean, max (f32).
    PyTorch: keys (floor, range mask) then bincount / index_fill_ /
    index_add_ / index_add_ + bincount / scatter_reduce_(amax).
  hard, second-kitti preset (P 5, M 40000): the KITTI scan, and a batch of 8
  (the two raw KITTI frames alternating).
    PyTorch: unique(return_inverse) on batch*G + key, first point per voxel by
    scatter_reduce(amin), argsort for first-appearance order, stable sort for
    the slot in the voxel, one scatter of the kept points.
Targets (the issue): count >= 30 G points/s; dense modes >= 5x PyTorch; hard
<= 100 us (one scan), <= 300 us (8 scans).
Writes <out>/gpu_voxel_<device>.json and prints a table.
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KITTI = [os.path.join(ROOT, "data", "pointclouds", f"kitti_raw_hdl64_000000000{i}.bin")
         for i in (0, 1)]
CUBE_SIZE = (0.625, 0.625, 0.03125)
CUBE_RANGE = (-40.0, -40.0, -3.0, 40.0, 40.0, 1.0)
SECOND = dict(size=(0.05, 0.05, 0.1), range=(0.0, -40.0, -3.0, 70.4, 40.0, 1.0), P=5, M=40000)
# (name, robocache_voxel_mode, robocache_dtype of out: 5 int32, 6 uint8, 0 float32)
MODES = [("count", 0, 5), ("occupancy", 1, 6), ("sum", 2, 0), ("mean", 3, 0), ("max", 4, 0)]
ROTATE_BYTES = 150 << 20


def percentile(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def time_torch(fn, sets, warmup=10, calls=100):
    for i in range(warmup):
        fn(sets[i % len(sets)])
    torch.cuda.synchronize()
    us = []
    for i in range(calls):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(sets[i % len(sets)])
        e.record()
        e.synchronize()
        us.append(s.elapsed_time(e) * 1e3)
    return {"median_us": statistics.median(us), "p10_us": percentile(us, 0.1),
            "p90_us": percentile(us, 0.9), "calls": calls}


def rotation(points, extra_bytes):
    n = max(1, min(16, ROTATE_BYTES // (points.nbytes + extra_bytes) + 1))
    return [points.clone() for _ in range(n)]


def keys(p, size, rng, grid):
    lo = torch.tensor(rng[:3], device=p.device)
    sz = torch.tensor(size, device=p.device)
    idx = torch.floor((p[:, :3] - lo) / sz)
    g = torch.tensor(grid, device=p.device, dtype=torch.float32)
    ok = ((idx >= 0) & (idx < g)).all(1)
    idx = idx.long()
    key = (idx[:, 2] * grid[1] + idx[:, 1]) * grid[0] + idx[:, 0]
    return key, ok


def grid_of(size, rng):
    return [int(round(np.float32(rng[a + 3] - rng[a]) / np.float32(size[a]))) for a in range(3)]


def torch_dense(mode, size, rng):
    grid = grid_of(size, rng)
    G = grid[0] * grid[1] * grid[2]

    def fn(p):
        key, ok = keys(p, size, rng, grid)
        k, feat = key[ok], p[ok, 3]
        if mode == "count":
            return torch.bincount(k, minlength=G)
        if mode == "occupancy":
            return torch.zeros(G, dtype=torch.uint8, device=p.device).index_fill_(0, k, 1)
        if mode == "max":
            return torch.zeros(G, device=p.device).scatter_reduce_(0, k, feat, "amax",
                                                                  include_self=False)
        s = torch.zeros(G, device=p.device).index_add_(0, k, feat)
        if mode == "mean":
            s = s / torch.bincount(k, minlength=G).clamp_(min=1)
        return s
    return fn


def torch_hard(size, rng, P, M, batch):
    """mmcv-style deterministic hard voxelization with torch ops (batch: cloud of each point)."""
    grid = grid_of(size, rng)
    G = grid[0] * grid[1] * grid[2]
    B = int(batch.max()) + 1

    def fn(p):
        key, ok = keys(p, size, rng, grid)
        sel = ok.nonzero().squeeze(1)
        k = batch[sel] * G + key[sel]
        n_pts = k.numel()
        uniq, inv = torch.unique(k, return_inverse=True)
        n = uniq.numel()
        ar = torch.arange(n_pts, device=p.device)
        first = torch.full((n,), n_pts, device=p.device, dtype=torch.long).scatter_reduce_(
            0, inv, ar, "amin")
        order = torch.argsort(first)
        rank = torch.empty_like(order)
        rank[order] = torch.arange(n, device=p.device)
        vb = uniq // G
        start = torch.searchsorted(vb[order], torch.arange(B, device=p.device))
        local = rank - start[vb]
        sinv, sidx = torch.sort(inv, stable=True)
        counts = torch.bincount(inv, minlength=n)
        seg = torch.cumsum(counts, 0) - counts
        slot = torch.empty_like(inv)
        slot[sidx] = ar - seg[sinv]
        lv = local[inv]
        keep = (slot < P) & (lv < M)
        row = vb[inv] * M + lv
        voxels = torch.zeros(B * M, P, p.shape[1], device=p.device)
        voxels[row[keep], slot[keep]] = p[sel[keep]]
        kv = local < M
        vrow = vb * M + local
        coords = torch.full((B * M, 4), -1, dtype=torch.int32, device=p.device)
        u = uniq[kv] % G
        coords[vrow[kv]] = torch.stack([vb[kv], u // (grid[0] * grid[1]),
                                        (u // grid[0]) % grid[1], u % grid[0]], 1).int()
        num = torch.zeros(B * M, dtype=torch.int32, device=p.device)
        num[vrow[kv]] = counts[kv].clamp(max=P).int()
        return voxels, coords, num
    return fn


def run_harness(binary, tmp, name, pts, offsets, args):
    path = os.path.join(tmp, name + ".f32")
    pts.astype(np.float32).tofile(path)
    np.asarray(offsets, dtype=np.int64).tofile(path + ".off")
    cmd = [binary, args[0], path, str(pts.shape[0]), str(pts.shape[1]), str(len(offsets) - 1)]
    cmd += [str(a) for a in args[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("BENCH_VOXEL_BIN"), required=False)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    a = ap.parse_args()
    if not a.bin:
        for cand in ("/tmp/robocache-gpu-build", os.path.join(ROOT, "build")):
            if os.path.exists(os.path.join(cand, "bench", "bench_voxel_cuda")):
                a.bin = os.path.join(cand, "bench", "bench_voxel_cuda")
                break
    if not a.bin or not torch.cuda.is_available():
        sys.exit("need --bin path/to/bench_voxel_cuda and a CUDA device for torch")
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(0)
    rng = np.random.default_rng(2026)
    n = 500_000
    uniform = np.stack([rng.uniform(-40, 40, n), rng.uniform(-40, 40, n), rng.uniform(-3, 1, n),
                        rng.uniform(0, 1, n)], 1).astype(np.float32)
    scans = [np.fromfile(f, dtype=np.float32).reshape(-1, 4) for f in KITTI]
    results = {"device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
               "method": __doc__.split("\n\n")[2].strip(), "cases": []}
    rows = []
    cube = list(CUBE_SIZE) + list(CUBE_RANGE)
    with tempfile.TemporaryDirectory() as tmp:
        for cloud_name, pts in (("uniform 500K", uniform), ("KITTI scan", scans[0])):
            tp = torch.from_numpy(pts).to(dev)
            for mode, mcode, dtype in MODES:
                rc = run_harness(a.bin, tmp, "dense", pts, [0, pts.shape[0]],
                                 ["dense", mcode, dtype] + cube)
                tt = time_torch(torch_dense(mode, CUBE_SIZE, CUBE_RANGE),
                                rotation(tp, 128 ** 3 * 4))
                case = {"op": "dense", "mode": mode, "cloud": cloud_name, "points": pts.shape[0],
                        "grid": [128, 128, 128], "robocache": rc, "torch": tt,
                        "speedup": tt["median_us"] / rc["median_us"],
                        "gpoints_per_s": pts.shape[0] / rc["median_us"] / 1e3,
                        "gpoints_per_s_graph": pts.shape[0] / rc["graph_median_us"] / 1e3}
                results["cases"].append(case)
                rows.append((f"dense {mode}", cloud_name, rc, tt))
        for label, parts in (("KITTI scan", [scans[0]]),
                             ("8 KITTI scans", [scans[i % 2] for i in range(8)])):
            pts = np.concatenate(parts)
            off = np.concatenate([[0], np.cumsum([len(q) for q in parts])])
            rc = run_harness(a.bin, tmp, "hard", pts, off,
                             ["hard", SECOND["P"], SECOND["M"]] + list(SECOND["size"])
                             + list(SECOND["range"]))
            tp = torch.from_numpy(pts).to(dev)
            batch = torch.repeat_interleave(torch.arange(len(parts), device=dev),
                                            torch.tensor(np.diff(off), device=dev))
            tt = time_torch(torch_hard(SECOND["size"], SECOND["range"], SECOND["P"], SECOND["M"],
                                       batch), rotation(tp, 0))
            case = {"op": "hard", "preset": "second-kitti (P 5, M 40000)", "cloud": label,
                    "points": int(pts.shape[0]), "clouds": len(parts), "robocache": rc,
                    "torch": tt, "speedup": tt["median_us"] / rc["median_us"],
                    "gpoints_per_s": pts.shape[0] / rc["median_us"] / 1e3,
                    "gpoints_per_s_graph": pts.shape[0] / rc["graph_median_us"] / 1e3}
            results["cases"].append(case)
            rows.append(("hard second-kitti", label, rc, tt))
    os.makedirs(a.out, exist_ok=True)
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    path = os.path.join(a.out, f"gpu_voxel_{slug}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"device {name}; per call, median (p10-p90) us; robocache eager (one sync per call) "
          "and in a CUDA graph; x = torch / robocache eager")
    print(f"{'case':18s} {'cloud':13s} {'robocache':>20s} {'graph':>7s} {'torch':>22s} {'x':>5s}"
          f" {'Gpt/s':>6s} {'graph':>6s}")
    for what, cloud, rc, tt in rows:
        r = f"{rc['median_us']:.1f} ({rc['p10_us']:.1f}-{rc['p90_us']:.1f})"
        t = f"{tt['median_us']:.1f} ({tt['p10_us']:.1f}-{tt['p90_us']:.1f})"
        n = next(c["points"] for c in results["cases"]
                 if c["robocache"] is rc)
        print(f"{what:18s} {cloud:13s} {r:>20s} {rc['graph_median_us']:7.1f} {t:>22s}"
              f" {tt['median_us'] / rc['median_us']:5.1f} {n / rc['median_us'] / 1e3:6.2f}"
              f" {n / rc['graph_median_us'] / 1e3:6.2f}")
    print("wrote", path)


if __name__ == "__main__":
    main()
