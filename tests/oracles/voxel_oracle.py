"""NumPy oracles of robocache's voxelization (DESIGN.md §1.3), shared by the
CLI tests (tests/cli) and the Python tests (tests/python), independent of
robocache: voxel indices floor((p - min) / size) in float32 (as mmcv /
spconv), dense grids with numpy.bincount / numpy.maximum.at, mmcv's
deterministic hard voxelization (voxels in order of their first point, first
P points, voxels past M dropped), PCL VoxelGrid downsampling, and raw-file
readers of the real clouds in data/pointclouds written with NumPy only."""
from pathlib import Path

import numpy as np

PC = Path(__file__).resolve().parents[2] / "data" / "pointclouds"
KITTI = PC / "kitti_raw_hdl64_0000000000.bin"
KITTI1 = PC / "kitti_raw_hdl64_0000000001.bin"
KITTI_OBJ = PC / "kitti_000008_reduced.bin"
NUS = PC / "nuscenes_lidar_top_1532402927647951.pcd.bin"
CUPCL = PC / "cupcl_sample.pcd"

# DESIGN.md §1.3 presets: voxel_size, point_cloud_range, max_points, max_voxels (test)
PRESETS = {
    "second-kitti": ((0.05, 0.05, 0.1), (0, -40, -3, 70.4, 40, 1), 5, 40000),
    "pointpillars-kitti": ((0.16, 0.16, 4), (0, -39.68, -3, 69.12, 39.68, 1), 32, 40000),
    "centerpoint-nus": ((0.1, 0.1, 0.2), (-51.2, -51.2, -5, 51.2, 51.2, 3), 10, 120000),
}


def load_bin(path, cols):
    """A KITTI / nuScenes .bin: float32 rows of `cols` values."""
    return np.fromfile(path, dtype="<f4").reshape(-1, cols)


def load_pcd_ascii(path):
    """The points of an ASCII PCD file as float32 [N, fields]."""
    lines = Path(path).read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("DATA")) + 1
    return np.loadtxt(lines[start:], dtype=np.float32, ndmin=2)


def finite(points):
    return points[np.isfinite(points[:, :3]).all(axis=1)]


def random_cloud(seed, n, cols):
    """Points in [-1, 11)^3 (features in [-3, 3)), 10% snapped onto voxel faces
    in x, about 1% NaN y and 1% inf z."""
    g = np.random.default_rng(seed)
    pts = g.uniform(-1, 11, (n, cols)).astype(np.float32)
    pts[:, 3:] = g.uniform(-3, 3, (n, cols - 3))
    snap = g.random(n) < 0.1  # points on voxel faces
    pts[snap, 0] = np.floor(pts[snap, 0])
    pts[g.random(n) < 0.01, 1] = np.nan
    pts[g.random(n) < 0.01, 2] = np.inf
    return pts


def special_cloud(seed, n, cols):
    """random_cloud with about 5% of the feature values NaN, -0.0, +0.0, +inf
    or -inf."""
    pts = random_cloud(seed, n, cols)
    g = np.random.default_rng(seed + 1)
    special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf], np.float32)
    mask = g.random((n, cols - 3)) < 0.05
    feats = pts[:, 3:]
    feats[mask] = special[g.integers(0, 5, int(mask.sum()))]
    pts[:, 3:] = feats
    return pts


def voxel_keys(points, size, rng):
    """(in-range row indices, linear keys (z*Y+y)*X+x, grid (X, Y, Z), ijk)."""
    size = np.asarray(size, np.float32)
    lo, hi = np.asarray(rng[:3], np.float32), np.asarray(rng[3:], np.float32)
    grid = np.round((hi - lo) / size).astype(np.int64)
    with np.errstate(invalid="ignore"):
        ijk = np.floor((points[:, :3] - lo) / size)
        ok = np.isfinite(points[:, :3]).all(axis=1) & ((ijk >= 0) & (ijk < grid)).all(axis=1)
    rows = np.nonzero(ok)[0]
    ijk = ijk[rows].astype(np.int64)
    keys = (ijk[:, 2] * grid[1] + ijk[:, 1]) * grid[0] + ijk[:, 0]
    return rows, keys, grid, ijk


def first_appearance(keys):
    """Voxel rank of each point (voxels numbered by first point), counts per rank,
    unique keys in rank order, and each point's position within its voxel."""
    uniq, first, inv, counts = np.unique(keys, return_index=True, return_inverse=True,
                                         return_counts=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    vr = rank[inv.ravel()]
    srt = np.argsort(vr, kind="stable")
    starts = np.cumsum(counts[order]) - counts[order]
    pos = np.empty(len(vr), np.int64)
    pos[srt] = np.arange(len(vr)) - starts[vr[srt]]
    return vr, counts[order], uniq[order], pos


def hard_oracle(points, size, rng, P, M):
    """mmcv deterministic hard voxelization of one cloud: (voxels [V,P,C],
    coords [V,4] (0, z, y, x), num_points [V], non-empty voxels before the cap)."""
    rows, keys, grid, _ = voxel_keys(points, size, rng)
    vr, counts, ukeys, pos = first_appearance(keys)
    V = min(len(counts), M)
    keep = (vr < M) & (pos < P)
    voxels = np.zeros((V, P, points.shape[1]), np.float32)
    voxels[vr[keep], pos[keep]] = points[rows[keep]]
    k = ukeys[:V]
    coords = np.stack([np.zeros(V, np.int64), k // (grid[0] * grid[1]),
                       (k // grid[0]) % grid[1], k % grid[0]], axis=1).astype(np.int32)
    return voxels, coords, np.minimum(counts[:V], P).astype(np.int32), len(counts)


QUIET_NAN = np.array([0x7FC00000], np.uint32).view(np.float32)[0]


def canonical_nan(x):
    """float32 x with every NaN as the quiet NaN 0x7fc00000 (robocache's NaN
    output)."""
    return np.where(np.isnan(x), QUIET_NAN, x).astype(np.float32)


def dense_oracle(points, size, rng, mode):
    """Dense grid [1,F,Z,Y,X] of one cloud: count (int32), occupancy (uint8),
    sum / mean (float64 sums in input order, rounded once), max (float32, in
    the total order -inf < ... < -0.0 < +0.0 < ... < +inf < NaN); empty voxels
    0, NaN results 0x7fc00000. Compare bitwise (view as uint32)."""
    rows, keys, grid, _ = voxel_keys(points, size, rng)
    G = int(np.prod(grid))
    shape = (1, -1, grid[2], grid[1], grid[0])
    count = np.bincount(keys, minlength=G)
    if mode == "count":
        return count.astype(np.int32).reshape(shape)
    if mode == "occupancy":
        return (count > 0).astype(np.uint8).reshape(shape)
    feats = points[rows, 3:] if points.shape[1] > 3 else points[rows, :3]
    out = []
    for f in feats.T:
        if mode == "max":
            m = np.full(G, -np.inf, np.float32)
            with np.errstate(invalid="ignore"):
                np.maximum.at(m, keys, f)  # propagates NaN; the sign of a zero maximum: below
            plus_zero = np.bincount(keys, weights=(f == 0) & ~np.signbit(f), minlength=G) > 0
            m = np.where(m == 0, np.where(plus_zero, np.float32(0), np.float32(-0.0)), m)
            out.append(canonical_nan(np.where(count > 0, m, np.float32(0))))
        else:
            s = np.bincount(keys, weights=f.astype(np.float64), minlength=G)
            if mode == "mean":
                with np.errstate(invalid="ignore"):
                    s = np.divide(s, count, out=np.zeros(G), where=count > 0)
            out.append(canonical_nan(s.astype(np.float32)))
    return np.stack(out).reshape(shape)


def _voxel_means(points, keys):
    """Mean of all columns per voxel (float64 sums), voxels in order of first
    appearance, as float32 (NaN 0x7fc00000)."""
    vr, counts, _, _ = first_appearance(keys)
    sums = np.stack([np.bincount(vr, weights=c.astype(np.float64), minlength=len(counts))
                     for c in points.T], axis=1)
    with np.errstate(invalid="ignore"):
        return canonical_nan((sums / counts[:, None]).astype(np.float32))


def range_downsample(points, size, rng):
    """Downsampling on the point_cloud_range grid: points outside dropped."""
    rows, keys, _, _ = voxel_keys(points, size, rng)
    return _voxel_means(points[rows], keys)


def pcl_downsample(points, leaf):
    """PCL VoxelGrid: floor(p * (1/leaf)) in float32 from the cloud's minimum; mean
    of all columns (f64 sums), voxels in order of first appearance."""
    inv = np.float32(1) / np.float32(leaf)
    idx = np.floor(points[:, :3] * inv)
    idx = (idx - np.floor(points[:, :3].min(axis=0) * inv)).astype(np.int64)
    dims = idx.max(axis=0) + 1
    keys = (idx[:, 2] * dims[1] + idx[:, 1]) * dims[0] + idx[:, 0]
    return _voxel_means(points, keys)
