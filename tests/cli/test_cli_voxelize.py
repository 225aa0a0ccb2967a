"""`robocache voxelize` against NumPy oracles written here: voxel indices
floor((p - min) / size) in float32 (as mmcv / spconv), dense grids with
numpy.bincount / numpy.maximum.at, mmcv's deterministic hard voxelization
(voxels in order of their first point, first P points, voxels past M
dropped), PCL VoxelGrid downsampling (tests/oracles/voxel_oracle.py, shared
with the Python tests). Inputs: real clouds in data/pointclouds and random
clouds."""
import re

import h5py
import numpy as np
import pytest

from cli_support import robocache  # noqa: F401 (robocache is a fixture)
from voxel_oracle import (CUPCL, KITTI, KITTI1, NUS, PRESETS, dense_oracle, finite,
                          first_appearance, hard_oracle, load_bin, load_pcd_ascii,
                          pcl_downsample, random_cloud, range_downsample, voxel_keys)


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
    want = range_downsample(pts, size, rng)
    with h5py.File(out) as f:
        assert f["offsets"][:].tolist() == [0, len(want)]
        np.testing.assert_array_equal(f["points"][:], want)


def test_info_point_cloud(robocache):
    r = robocache("info", KITTI)
    assert r.returncode == 0, r.stderr
    pts = load_bin(KITTI, 4)
    assert f"{len(pts)} points" in r.stdout
    for name, (size, rng, _, _) in PRESETS.items():
        rows, keys, _, _ = voxel_keys(pts, size, rng)
        line = re.search(rf"^\s+{name}\s+(\d+) points in range, (\d+) non-empty", r.stdout, re.M)
        assert (int(line.group(1)), int(line.group(2))) == (len(rows), len(np.unique(keys)))



@pytest.mark.parametrize("args", [("-p", "second-kitti", KITTI),
                                  ("-m", "downsample", "-s", "0.2,0.2,0.2", KITTI, KITTI1)])
def test_info_on_voxelize_output(robocache, tmp_path, args):
    """`robocache info` of a voxelize HDF5 file lists the arrays h5py finds in
    it with their shapes and dtypes, and the point counts (in-range points
    against NumPy for the preset)."""
    out = tmp_path / "v.h5"
    run_ok(robocache, *args, "-o", out)
    r = robocache("info", out)
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        assert f"mode {f.attrs['mode']}" in r.stdout
        assert f"{len(f.attrs['sources'])} cloud(s)" in r.stdout
        arrays = [name for name in f if name not in ("voxel_size", "point_cloud_range")]
        assert arrays
        for name in arrays:
            shape = ", ".join(map(str, f[name].shape))
            assert re.search(rf"^  /{name} +\[{shape}\] {f[name].dtype}$", r.stdout, re.M), name
        size = " ".join(f"{v:g}" for v in f["voxel_size"][:])
        assert f"voxel_size   {size} m" in r.stdout
        assert ("point_cloud_range" in f) == ("point_cloud_range none" not in r.stdout)
        counts = re.search(r"points +(\d+), in range (\d+), non-empty voxels (\d+)", r.stdout)
        assert [int(c) for c in counts.groups()] == [
            f.attrs[k] for k in ("points_in", "points_in_range", "voxels_nonempty")]
    if args[1] == "second-kitti":
        size, rng, _, _ = PRESETS["second-kitti"]
        rows, _, _, _ = voxel_keys(load_bin(KITTI, 4), size, rng)
        assert int(counts.group(2)) == len(rows)

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
