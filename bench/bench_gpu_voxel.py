"""GPU benchmark of the CUDA voxelize backend against PyTorch baselines
measured in the same run.

    python3 bench/bench_gpu_voxel.py --bin BUILD/bench/bench_voxel_cuda [--out bench/results]

robocache is timed by the C harness bench/bench_voxel_cuda.c (the C API,
without the Python binding's overhead): each robocache call, including its one
stream synchronisation (stats), between two CUDA events, 20 warm-up calls,
then 200 calls rotating over input/output sets that span > 150 MB (3x L2);
then the same calls captured in a CUDA graph (robocache unchecked: no
read-back, no sync), replays timed, per call = replay / calls in the graph;
then "back to back": unchecked calls issued one after another with no
synchronisation (launch overheads overlap the GPU's work), 20 batches of 50
timed, per call = batch / 50. Throughput (G points/s) is quoted for each
column; the back-to-back one is the throughput of a stream of calls. For
each dense case the harness also times a cudaMemsetAsync of the output grid
alone, in a graph and back to back (what writing the grid once, and issuing
one call, cost: a lower bound for any dense call).
The PyTorch baselines are timed here the same way (CUDA events per call after
warm-up, inputs rotated, eager); the speed-ups divide PyTorch's median by
each robocache column's.

Cases (DESIGN §1.3):
  dense, 128^3 grid over [-40, 40] x [-40, 40] x [-3, 1] m, points x y z
  intensity: 500K uniform points, and the real KITTI HDL-64 scan
  (data/pointclouds/kitti_raw_hdl64_0000000000.bin, 122,626 points);
  modes count (i32), occupancy (u8), sum, mean, max (f32); count also for a
  batch of 8 KITTI scans (the two raw frames alternating, offsets), one
  128^3 grid each (PyTorch: cloud * G + key, then bincount).
    PyTorch: keys (floor, range mask) then bincount / index_fill_ /
    index_add_ / index_add_ + bincount / scatter_reduce_(amax).
  dense sum with all 500K points in one voxel (the worst case of the GPU's
  grouping, one sequential f64 sum).
  hard, second-kitti preset (P 5, M 40000): the KITTI scan, a batch of 8
  (the two raw KITTI frames alternating) in the padded layout (cloud b from
  row b*M) and in the packed one (robocache_voxelize_hard_packed: the clouds'
  voxels one after another, mmdet3d's layout), and 500K points in one voxel.
    PyTorch: unique(return_inverse) on batch*G + key, first point per voxel by
    scatter_reduce(amin), argsort for first-appearance order, stable sort for
    the slot in the voxel, one scatter of the kept points (packed: rows from
    a cumsum of the clouds' kept voxels).
  downsample, PCL VoxelGrid voxels (no range), x y z: the KITTI scan at 0.1 m
  and 1 m, cuPCL's sample cloud (data/pointclouds/cupcl_sample.pcd, 119,978
  points) at 1 m, and a batch of 4 KITTI scans (frames 0, 1, 0, 1, offsets)
  at 0.1 m; the voxel counts of PyTorch and robocache must agree.
    PyTorch: floor(p / leaf), shifted by the minimum, ravelled (cloud first),
    unique(return_inverse, return_counts), index_add_ of the points (f32),
    divided by the counts.
Targets (the issue): count >= 30 G points/s (back to back); sum / mean / max
>= 5x PyTorch (every column); hard <= 100 us (one scan), <= 300 us (8 scans)
(eager).
Writes <out>/gpu_voxel_<device>.json and prints a table.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

from bench_common import slug

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


def torch_dense(mode, size, rng, batch=None):
    """batch: cloud of each point (count only), None for one cloud."""
    grid = grid_of(size, rng)
    G = grid[0] * grid[1] * grid[2]
    B = 1 if batch is None else int(batch.max()) + 1

    def fn(p):
        key, ok = keys(p, size, rng, grid)
        if batch is not None:
            key = batch * G + key
        k, feat = key[ok], p[ok, 3]
        if mode == "count":
            return torch.bincount(k, minlength=B * G)
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


def torch_hard(size, rng, P, M, batch, packed=False):
    """mmcv-style deterministic hard voxelization with torch ops (batch: cloud of each point),
    padded or packed rows."""
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
        base = torch.arange(B, device=p.device) * M
        if packed:
            kept = torch.bincount(vb, minlength=B).clamp(max=M)
            base = torch.cumsum(kept, 0) - kept
        row = base[vb[inv]] + lv
        voxels = torch.zeros(B * M, P, p.shape[1], device=p.device)
        voxels[row[keep], slot[keep]] = p[sel[keep]]
        kv = local < M
        vrow = base[vb] + local
        coords = torch.full((B * M, 4), -1, dtype=torch.int32, device=p.device)
        u = uniq[kv] % G
        coords[vrow[kv]] = torch.stack([vb[kv], u // (grid[0] * grid[1]),
                                        (u // grid[0]) % grid[1], u % grid[0]], 1).int()
        num = torch.zeros(B * M, dtype=torch.int32, device=p.device)
        num[vrow[kv]] = counts[kv].clamp(max=P).int()
        return voxels, coords, num
    return fn


def torch_downsample(leaf, batch):
    """Voxel-grid mean of the points with torch ops (batch: cloud of each point)."""
    def fn(p):
        ijk = torch.floor(p[:, :3] * (1.0 / leaf)).long()
        ijk = ijk - ijk.min(0).values
        ext = ijk.max(0).values + 1
        key = ((batch * ext[2] + ijk[:, 2]) * ext[1] + ijk[:, 1]) * ext[0] + ijk[:, 0]
        _, inv, cnt = torch.unique(key, return_inverse=True, return_counts=True)
        s = torch.zeros(cnt.numel(), p.shape[1], device=p.device).index_add_(0, inv, p)
        return s / cnt[:, None]
    return fn


def load_pcd(path):
    """The x y z rows of an ascii PCD file."""
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("DATA")) + 1
    return np.loadtxt(lines[start:], dtype=np.float32)[:, :3].copy()


def clouds():
    """The benchmark's clouds: 500K uniform points x y z intensity over the
    128^3 grid's box (seeded), and the two raw KITTI scans."""
    rng = np.random.default_rng(2026)
    n = 500_000
    uniform = np.stack([rng.uniform(-40, 40, n), rng.uniform(-40, 40, n), rng.uniform(-3, 1, n),
                        rng.uniform(0, 1, n)], 1).astype(np.float32)
    return uniform, [np.fromfile(f, dtype=np.float32).reshape(-1, 4) for f in KITTI]


def one_voxel(lo, hi, n=500_000):
    """n points x y z intensity uniform in the box lo..hi (inside one voxel)."""
    rng = np.random.default_rng(1)
    xyz = rng.uniform(lo, hi, (n, 3))
    return np.concatenate([xyz, rng.uniform(0, 1, (n, 1))], 1).astype(np.float32)


def batched(parts, dev):
    """The clouds one after another: points, offsets [B+1], cloud of each
    point (a tensor on dev)."""
    off = np.concatenate([[0], np.cumsum([len(q) for q in parts])])
    batch = torch.repeat_interleave(torch.arange(len(parts), device=dev),
                                    torch.tensor(np.diff(off), device=dev))
    return np.concatenate(parts), off, batch


def add_case(results, rows, what, cloud, n, rc, tt, **extra):
    """Records one case: robocache's three columns against PyTorch."""
    case = dict(extra, cloud=cloud, points=int(n), robocache=rc, torch=tt)
    for col, key in (("", "median_us"), ("_graph", "graph_median_us"),
                     ("_b2b", "b2b_median_us")):
        case["speedup" + col] = tt["median_us"] / rc[key]
        case["gpoints_per_s" + col] = n / rc[key] / 1e3
    results["cases"].append(case)
    rows.append((what, cloud, n, rc, tt))


def harness_cmd(binary, tmp, name, pts, offsets, args):
    """Writes the points (and offsets) under tmp; the harness's command line."""
    path = os.path.join(tmp, name + ".f32")
    pts.astype(np.float32).tofile(path)
    np.asarray(offsets, dtype=np.int64).tofile(path + ".off")
    cmd = [binary, args[0], path, str(pts.shape[0]), str(pts.shape[1]), str(len(offsets) - 1)]
    return cmd + [str(a) for a in args[1:]]


def run_harness(binary, tmp, name, pts, offsets, args):
    cmd = harness_cmd(binary, tmp, name, pts, offsets, args)
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
    uniform, scans = clouds()
    results = {"device": name, "torch": torch.__version__, "cuda": torch.version.cuda,
               "method": __doc__.split("\n\n")[2].strip(), "cases": []}
    rows = []
    cube = list(CUBE_SIZE) + list(CUBE_RANGE)
    with tempfile.TemporaryDirectory() as tmp:
        kitti8 = [scans[i % 2] for i in range(8)]
        dense = [("uniform 500K", [uniform], MODES), ("KITTI scan", [scans[0]], MODES),
                 ("8 KITTI scans", kitti8, MODES[:1]),
                 ("1 voxel 500K", [one_voxel((0.1, 0.1, -2.99), (0.5, 0.5, -2.975))],
                  MODES[2:3])]
        for cloud_name, parts, modes in dense:
            pts, off, batch = batched(parts, dev)
            tp = torch.from_numpy(pts).to(dev)
            for mode, mcode, dtype in modes:
                rc = run_harness(a.bin, tmp, "dense", pts, off, ["dense", mcode, dtype] + cube)
                tt = time_torch(torch_dense(mode, CUBE_SIZE, CUBE_RANGE,
                                            batch if len(parts) > 1 else None),
                                rotation(tp, 128 ** 3 * 4 * len(parts)))
                add_case(results, rows, f"dense {mode}", cloud_name, pts.shape[0], rc, tt,
                         op="dense", mode=mode, grid=[128, 128, 128], clouds=len(parts))
        hard = [("KITTI scan", [scans[0]], False), ("8 KITTI scans", kitti8, False),
                ("8 KITTI scans", kitti8, True),
                ("1 voxel 500K", [one_voxel((10.01, 0.01, -2.99), (10.04, 0.04, -2.91))], False)]
        for label, parts, packed in hard:
            pts, off, batch = batched(parts, dev)
            rc = run_harness(a.bin, tmp, "hard", pts, off,
                             ["hard-packed" if packed else "hard", SECOND["P"], SECOND["M"]]
                             + list(SECOND["size"]) + list(SECOND["range"]))
            tp = torch.from_numpy(pts).to(dev)
            tt = time_torch(torch_hard(SECOND["size"], SECOND["range"], SECOND["P"], SECOND["M"],
                                       batch, packed), rotation(tp, 0))
            add_case(results, rows, "hard packed" if packed else "hard second-kitti", label,
                     pts.shape[0], rc, tt, op="hard", preset="second-kitti (P 5, M 40000)",
                     clouds=len(parts), layout="packed" if packed else "padded")
        cupcl = load_pcd(os.path.join(ROOT, "data", "pointclouds", "cupcl_sample.pcd"))
        xyz = [q[:, :3].copy() for q in scans]
        down = [("KITTI scan", [xyz[0]], 0.1), ("KITTI scan", [xyz[0]], 1.0),
                ("cuPCL sample", [cupcl], 1.0), ("4 KITTI scans", [xyz[i % 2] for i in range(4)],
                                                 0.1)]
        for label, parts, leaf in down:
            pts, off, batch = batched(parts, dev)
            rc = run_harness(a.bin, tmp, "down", pts, off, ["downsample", leaf, leaf, leaf])
            tp = torch.from_numpy(pts).to(dev)
            fn = torch_downsample(leaf, batch)
            n_torch = fn(tp).shape[0]
            if n_torch != rc["voxels_nonempty"]:
                sys.exit(f"downsample {label} {leaf} m: PyTorch {n_torch} voxels, robocache "
                         f"{rc['voxels_nonempty']}")
            tt = time_torch(fn, rotation(tp, pts.nbytes))
            add_case(results, rows, f"downsample {leaf:g} m", label, pts.shape[0], rc, tt,
                     op="downsample", leaf=leaf, clouds=len(parts))
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"gpu_voxel_{slug(name)}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"device {name}; per call, median us; robocache eager (one sync per call), in a CUDA "
          "graph, back to back (unchecked, no sync) and the host's time to issue one of those; "
          "x = torch / robocache; G points/s back to back")
    print(f"{'case':18s} {'cloud':13s} {'eager':>7s} {'graph':>7s} {'b2b':>7s} {'host':>6s}"
          f" {'torch':>8s} {'x eager':>7s} {'x graph':>7s} {'x b2b':>6s} {'Gpt/s':>6s}"
          "  memset of the grid: graph / b2b / host")
    for what, cloud, n, rc, tt in rows:
        t = tt["median_us"]
        print(f"{what:18s} {cloud:13s} {rc['median_us']:7.1f} {rc['graph_median_us']:7.1f}"
              f" {rc['b2b_median_us']:7.1f} {rc['b2b_host_median_us']:6.1f}"
              f" {t:8.1f} {t / rc['median_us']:7.1f}"
              f" {t / rc['graph_median_us']:7.1f} {t / rc['b2b_median_us']:6.1f}"
              f" {n / rc['b2b_median_us'] / 1e3:6.2f}"
              + (f"  {rc['grid_memset_graph_us']:.1f} / {rc['grid_memset_b2b_us']:.1f} / "
                 f"{rc['grid_memset_host_us']:.1f}" if "grid_memset_graph_us" in rc else ""))
    print("wrote", path)


if __name__ == "__main__":
    main()
