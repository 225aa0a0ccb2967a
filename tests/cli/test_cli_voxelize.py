"""`robocache voxelize` against NumPy oracles written here: voxel indices
floor((p - min) / size) in float32 (as mmcv / spconv), dense grids with
numpy.bincount / numpy.maximum.at, mmcv's deterministic hard voxelization
(voxels in order of their first point, first P points, voxels past M
dropped), PCL VoxelGrid downsampling. Inputs: real clouds in
data/pointclouds and random clouds written here."""
import re

import h5py
import numpy as np
import pytest

from cli_support import ROOT, robocache  # noqa: F401 (robocache is a fixture)

PC = ROOT / "data" / "pointclouds"
KITTI = PC / "kitti_raw_hdl64_0000000000.bin"
KITTI1 = PC / "kitti_raw_hdl64_0000000001.bin"
NUS = PC / "nuscenes_lidar_top_1532402927647951.pcd.bin"
CUPCL = PC / "cupcl_sample.pcd"

# DESIGN.md §1.3 presets: voxel_size, point_cloud_range, max_points, max_voxels (test)
PRESETS = {
    "second-kitti": ((0.05, 0.05, 0.1), (0, -40, -3, 70.4, 40, 1), 5, 40000),
    "pointpillars-kitti": ((0.16, 0.16, 4), (0, -39.68, -3, 69.12, 39.68, 1), 32, 40000),
    "centerpoint-nus": ((0.1, 0.1, 0.2), (-51.2, -51.2, -5, 51.2, 51.2, 3), 10, 120000),
}


def load_bin(path, cols):
    return np.fromfile(path, dtype="<f4").reshape(-1, cols)


def load_pcd_ascii(path):
    lines = path.read_text().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("DATA")) + 1
    return np.loadtxt(lines[start:], dtype=np.float32, ndmin=2)


def finite(points):
    return points[np.isfinite(points[:, :3]).all(axis=1)]


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


def dense_oracle(points, size, rng, mode):
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
            np.maximum.at(m, keys, f)
            out.append(np.where(count > 0, m, 0).astype(np.float32))
        else:
            s = np.bincount(keys, weights=f.astype(np.float64), minlength=G)
            if mode == "mean":
                s = np.divide(s, count, out=np.zeros(G), where=count > 0)
            out.append(s.astype(np.float32))
    return np.stack(out).reshape(shape)


def run_ok(robocache, *args):
    r = robocache("voxelize", *args)
    assert r.returncode == 0, r.stderr
    return r.stdout


def printed(stdout, label):
    return int(re.search(rf"^\s+{label}\s+(\d+)", stdout, re.M).group(1))


def test_second_kitti_full_scan(robocache, tmp_path):
    """In-range points, non-empty voxels and the whole hard voxelization of the
    full KITTI-raw scan equal NumPy, including which voxels survive max_voxels."""
    size, rng, P, M = PRESETS["second-kitti"]
    points = load_bin(KITTI, 4)
    out = tmp_path / "second.h5"
    stdout = run_ok(robocache, "--preset", "second-kitti", KITTI, "-o", out)
    voxels, coords, num_points, nonempty = hard_oracle(points, size, rng, P, M)
    rows, _, _, _ = voxel_keys(points, size, rng)
    assert printed(stdout, "in-range points") == len(rows)
    assert printed(stdout, "non-empty voxels") == nonempty
    assert nonempty > M  # the cap really drops voxels here
    with h5py.File(out) as f:
        assert f.attrs["points_in_range"] == len(rows)
        assert f.attrs["voxels_nonempty"] == nonempty
        assert f.attrs["voxels_dropped_max_voxels"] == nonempty - M
        assert f["num_voxels"][:].tolist() == [M]
        np.testing.assert_array_equal(f["coords"][:], coords)
        np.testing.assert_array_equal(f["num_points"][:], num_points)
        np.testing.assert_array_equal(f["voxels"][:], voxels)
        assert f.attrs["points_dropped_max_points"] == int(
            np.maximum(np.bincount(first_appearance(voxel_keys(points, size, rng)[1])[0])[:M]
                       - P, 0).sum())


@pytest.mark.parametrize("preset,path,cols", [("pointpillars-kitti", KITTI, 4),
                                              ("centerpoint-nus", NUS, 5)])
def test_hard_presets(robocache, tmp_path, preset, path, cols):
    size, rng, P, M = PRESETS[preset]
    out = tmp_path / "h.h5"
    run_ok(robocache, "--preset", preset, path, "-o", out)
    voxels, coords, num_points, _ = hard_oracle(load_bin(path, cols), size, rng, P, M)
    with h5py.File(out) as f:
        np.testing.assert_array_equal(f["coords"][:], coords)
        np.testing.assert_array_equal(f["num_points"][:], num_points)
        np.testing.assert_array_equal(f["voxels"][:], voxels)


@pytest.mark.parametrize("mode", ["count", "occupancy", "sum", "mean", "max"])
def test_dense_pointpillars_grid(robocache, tmp_path, mode):
    size, rng, _, _ = PRESETS["pointpillars-kitti"]
    out = tmp_path / "grid.npy"
    run_ok(robocache, "--preset", "pointpillars-kitti", "--mode", mode, KITTI, "-o", out)
    np.testing.assert_array_equal(np.load(out), dense_oracle(load_bin(KITTI, 4), size, rng, mode))


def random_cloud(seed, n, cols):
    g = np.random.default_rng(seed)
    pts = g.uniform(-1, 11, (n, cols)).astype(np.float32)
    pts[:, 3:] = g.uniform(-3, 3, (n, cols - 3))
    snap = g.random(n) < 0.1  # points on voxel faces
    pts[snap, 0] = np.floor(pts[snap, 0])
    pts[g.random(n) < 0.01, 1] = np.nan
    pts[g.random(n) < 0.01, 2] = np.inf
    return pts


@pytest.mark.parametrize("cols", [3, 5])
@pytest.mark.parametrize("mode", ["count", "sum", "mean", "max"])
def test_dense_random(robocache, tmp_path, cols, mode):
    pts = random_cloud(cols * 10 + len(mode), 20000, cols)
    path = tmp_path / "r.bin"
    pts.tofile(path)
    size, rng = (0.5, 0.25, 1.0), (0, 0, 0, 10, 8, 6)
    out = tmp_path / "g.npy"
    run_ok(robocache, "-c", cols, "-s", "0.5,0.25,1", "-r", "0,0,0,10,8,6", "-m", mode, path,
           "-o", out)
    np.testing.assert_array_equal(np.load(out), dense_oracle(finite(pts), size, rng, mode))


def test_hard_random_caps(robocache, tmp_path):
    pts = random_cloud(3, 30000, 4)
    path = tmp_path / "r.bin"
    pts.tofile(path)
    out = tmp_path / "h.h5"
    stdout = run_ok(robocache, "-s", "0.5,0.5,0.5", "-r", "0,0,0,10,10,10", "-P", "3", "-M",
                    "2000", path, "-o", out)
    voxels, coords, num_points, nonempty = hard_oracle(finite(pts), (0.5,) * 3,
                                                       (0, 0, 0, 10, 10, 10), 3, 2000)
    assert printed(stdout, "non-empty voxels") == nonempty > 2000
    with h5py.File(out) as f:
        np.testing.assert_array_equal(f["coords"][:], coords)
        np.testing.assert_array_equal(f["num_points"][:], num_points)
        np.testing.assert_array_equal(f["voxels"][:], voxels)
        assert f.attrs["points_dropped_nonfinite"] == len(pts) - len(finite(pts))


def test_batch_equals_single_files(robocache, tmp_path):
    single = []
    for i, path in enumerate([KITTI, KITTI1]):
        run_ok(robocache, "--preset", "second-kitti", "--train", path, "-o", tmp_path / f"{i}.h5")
        single.append(h5py.File(tmp_path / f"{i}.h5"))
    run_ok(robocache, "--preset", "second-kitti", "--train", KITTI, KITTI1, "-o",
           tmp_path / "b.h5")
    with h5py.File(tmp_path / "b.h5") as b:
        assert b["num_voxels"][:].tolist() == [16000, 16000]
        coords = np.concatenate([s["coords"][:] + np.array([i, 0, 0, 0], np.int32)
                                 for i, s in enumerate(single)])
        np.testing.assert_array_equal(b["coords"][:], coords)
        for name in ("voxels", "num_points"):
            np.testing.assert_array_equal(b[name][:],
                                          np.concatenate([s[name][:] for s in single]))
    for s in single:
        s.close()


def pcl_downsample(points, leaf):
    """PCL VoxelGrid: floor(p * (1/leaf)) in float32 from the cloud's minimum; mean
    of all columns (f64 sums), voxels in order of first appearance."""
    inv = np.float32(1) / np.float32(leaf)
    idx = np.floor(points[:, :3] * inv)
    idx = (idx - np.floor(points[:, :3].min(axis=0) * inv)).astype(np.int64)
    dims = idx.max(axis=0) + 1
    keys = (idx[:, 2] * dims[1] + idx[:, 1]) * dims[0] + idx[:, 0]
    vr, counts, _, _ = first_appearance(keys)
    sums = np.stack([np.bincount(vr, weights=c.astype(np.float64)) for c in points.T], axis=1)
    return (sums / counts[:, None]).astype(np.float32)


def test_downsample_cupcl_pcl_semantics(robocache, tmp_path):
    """cuPCL's sample at a 1 m leaf gives 3,440 voxels (the count cuPCL and PCL
    publish); the points equal the NumPy PCL VoxelGrid oracle."""
    out = tmp_path / "d.npy"
    stdout = run_ok(robocache, "-m", "downsample", "-s", "1,1,1", CUPCL, "-o", out)
    want = pcl_downsample(load_pcd_ascii(CUPCL), 1.0)
    assert len(want) == 3440
    assert printed(stdout, "non-empty voxels") == 3440
    np.testing.assert_array_equal(np.load(out), want)


def test_downsample_with_range(robocache, tmp_path):
    size, rng, _, _ = PRESETS["centerpoint-nus"]
    pts = load_bin(NUS, 5)
    out = tmp_path / "d.h5"
    run_ok(robocache, "-m", "downsample", "--preset", "centerpoint-nus", NUS, "-o", out)
    rows, keys, _, _ = voxel_keys(pts, size, rng)
    vr, counts, _, _ = first_appearance(keys)
    sums = np.stack([np.bincount(vr, weights=c.astype(np.float64)) for c in pts[rows].T], 1)
    with h5py.File(out) as f:
        assert f["offsets"][:].tolist() == [0, len(counts)]
        np.testing.assert_array_equal(f["points"][:], (sums / counts[:, None]).astype(np.float32))


def test_info_point_cloud(robocache):
    r = robocache("info", KITTI)
    assert r.returncode == 0, r.stderr
    pts = load_bin(KITTI, 4)
    assert f"{len(pts)} points" in r.stdout
    for name, (size, rng, _, _) in PRESETS.items():
        rows, keys, _, _ = voxel_keys(pts, size, rng)
        line = re.search(rf"^\s+{name}\s+(\d+) points in range, (\d+) non-empty", r.stdout, re.M)
        assert (int(line.group(1)), int(line.group(2))) == (len(rows), len(np.unique(keys)))


def test_errors(robocache, tmp_path):
    bad = tmp_path / "cut.bin"
    bad.write_bytes(b"\0" * 21)
    cases = [  # arguments, exit code, text of the message
        (("--preset", "second-kitti", bad), 1, "not a multiple of 16"),
        (("--preset", "second", KITTI), 2, "--preset 'second'"),
        (("--preset", "second-kitti", KITTI, "-o", tmp_path / "h.npy"), 2, "write .h5"),
        (("-m", "count", "-s", "1,1,1", KITTI), 2, "needs --preset or --range"),
        (("--preset", "second-kitti", KITTI, NUS), 1, "equal columns"),
        (("-s", "0,1,1", "-r", "0,0,0,1,1,1", "-P", "1", "-M", "1", KITTI), 1,
         "voxel_size[0] (x)"),
        (("--preset", "second-kitti", KITTI, "-o", tmp_path / "no" / "x.h5"), 3,
         "cannot write"),
    ]
    for args, code, text in cases:
        r = robocache("voxelize", *args)
        assert r.returncode == code and text in r.stderr, (args, r.stderr)
        assert "Sanitizer" not in r.stderr  # leak-free when ROBOCACHE_BIN is an ASan build
    assert str(bad) in robocache("voxelize", "--preset", "second-kitti", bad).stderr
    assert not list(tmp_path.glob("*.tmp-*"))
