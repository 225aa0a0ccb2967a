"""robocache.voxelize (dense grids) against the NumPy oracle of
tests/oracles/voxel_oracle.py (numpy.bincount / numpy.maximum.at on
floor((p - min) / size) in float32), on the real clouds of data/pointclouds
and on random clouds with NaN / inf / face points; NaN / +-0 / +-inf features
bit for bit (MAX's total order, NaN outputs); NumPy and torch in/out,
batches == each cloud alone, strided points, output dtypes."""

import numpy as np
import pytest

from conftest import torch
from voxel_oracle import (KITTI, KITTI_OBJ, NUS, PRESETS, dense_oracle, load_bin,
                          random_cloud, special_cloud, voxel_keys)

import robocache

MODES = ["count", "occupancy", "sum", "mean", "max"]
# (path, columns, voxel_size, point_cloud_range): presets with small grids, and
# a 0.2 m pillar grid over the centerpoint-nus range for the nuScenes sweep
REAL = [
    (KITTI, 4) + PRESETS["pointpillars-kitti"][:2],
    (KITTI_OBJ, 4) + PRESETS["pointpillars-kitti"][:2],
    (NUS, 5, (0.2, 0.2, 8), PRESETS["centerpoint-nus"][1]),
]
RANDOM_SIZE, RANDOM_RANGE = (0.5, 0.25, 1.0), (0, 0, 0, 10, 8, 6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", REAL, ids=["kitti-raw", "kitti-object", "nuscenes"])
def test_real_clouds_numpy(case, mode):
    path, cols, size, rng = case
    pts = load_bin(path, cols)
    out = robocache.voxelize(pts, size, rng, mode=mode)
    want = dense_oracle(pts, size, rng, mode)
    assert type(out) is np.ndarray and out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("cols", [3, 4, 6])
@pytest.mark.parametrize("mode", MODES)
def test_random_clouds(cols, mode):
    pts = random_cloud(100 * cols + len(mode), 30000, cols)
    np.testing.assert_array_equal(robocache.voxelize(pts, RANDOM_SIZE, RANDOM_RANGE, mode=mode),
                                  dense_oracle(pts, RANDOM_SIZE, RANDOM_RANGE, mode))


@pytest.mark.parametrize("mode", ["sum", "max"])
def test_strided_points(mode):
    """Every other row of a column-major array (strides of 2 and N elements) is
    read in place, as its contiguous copy."""
    view = np.asfortranarray(random_cloud(7, 10000, 5))[::2]
    assert not view.flags.c_contiguous and not view.flags.f_contiguous
    np.testing.assert_array_equal(
        robocache.voxelize(view, RANDOM_SIZE, RANDOM_RANGE, mode=mode),
        dense_oracle(np.ascontiguousarray(view), RANDOM_SIZE, RANDOM_RANGE, mode))


@pytest.mark.parametrize("mode,out_dtype,np_dtype", [
    ("count", "float32", np.float32), ("count", np.int32, np.int32),
    ("occupancy", "float32", np.float32), ("occupancy", bool, np.bool_)])
def test_out_dtypes(mode, out_dtype, np_dtype):
    pts = random_cloud(11, 8000, 4)
    out = robocache.voxelize(pts, RANDOM_SIZE, RANDOM_RANGE, mode=mode, out_dtype=out_dtype)
    assert out.dtype == np_dtype
    np.testing.assert_array_equal(out, dense_oracle(pts, RANDOM_SIZE, RANDOM_RANGE,
                                                    mode).astype(np_dtype))


@pytest.mark.parametrize("mode", MODES)
def test_batch_equals_each_cloud(mode):
    """Three real scans and an empty cloud in one call: cloud b of out [B,...] is
    that cloud alone."""
    size, rng = PRESETS["pointpillars-kitti"][:2]
    clouds = [load_bin(KITTI, 4), np.zeros((0, 4), np.float32), load_bin(KITTI_OBJ, 4),
              load_bin(KITTI, 4)[::3]]
    offsets = np.cumsum([0] + [len(c) for c in clouds]).astype(np.int64)
    out = robocache.voxelize(np.concatenate(clouds), size, rng, mode=mode, offsets=offsets)
    assert out.shape[0] == len(clouds)
    for b, c in enumerate(clouds):
        np.testing.assert_array_equal(out[b:b + 1], robocache.voxelize(c, size, rng, mode=mode))
        np.testing.assert_array_equal(out[b:b + 1], dense_oracle(c, size, rng, mode))


def test_stats():
    pts = random_cloud(5, 20000, 4)
    _, stats = robocache.voxelize(pts, RANDOM_SIZE, RANDOM_RANGE, return_stats=True)
    rows, keys, _, _ = voxel_keys(pts, RANDOM_SIZE, RANDOM_RANGE)
    nonfinite = int((~np.isfinite(pts[:, :3]).all(axis=1)).sum())
    assert stats == {"points_in": len(pts), "points_in_range": len(rows),
                     "points_dropped_range": len(pts) - len(rows) - nonfinite,
                     "points_dropped_nonfinite": nonfinite,
                     "voxels_nonempty": len(np.unique(keys)), "points_dropped_max_points": 0,
                     "voxels_dropped_max_voxels": 0, "points_dropped_max_voxels": 0}


def test_scalar_voxel_size_is_cubic():
    pts = random_cloud(6, 5000, 3)
    np.testing.assert_array_equal(robocache.voxelize(pts, 0.5, RANDOM_RANGE, mode="sum"),
                                  dense_oracle(pts, (0.5, 0.5, 0.5), RANDOM_RANGE, "sum"))


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("mode", MODES)
def test_torch_in_torch_out(mode):
    size, rng = PRESETS["pointpillars-kitti"][:2]
    a, b = load_bin(KITTI, 4), load_bin(KITTI_OBJ, 4)
    pts = torch.from_numpy(np.concatenate([a, b]))
    offsets = torch.tensor([0, len(a), len(a) + len(b)])
    out = robocache.voxelize(pts, size, rng, mode=mode, offsets=offsets)
    want = np.concatenate([dense_oracle(a, size, rng, mode), dense_oracle(b, size, rng, mode)])
    assert isinstance(out, torch.Tensor) and out.device == pts.device
    np.testing.assert_array_equal(out.numpy(), want)


# One voxel per x = 0..7 of a 9 x 1 x 1 grid (x = 8 empty), features with NaN (one
# with the sign set and a payload), +-0.0 and +-inf, and the bits of each voxel's
# MAX (total order -inf < ... < -0.0 < +0.0 < ... < +inf < NaN) and SUM (f64 from
# 0.0: 0.0 + -0.0 = +0.0, inf + -inf = NaN); NaN outputs are 0x7fc00000.
_NEG_NAN = np.array([0xFFC00001], np.uint32).view(np.float32)[0]
SPECIAL_X = [0, 1, 2, 0, 1, 2, 0, 3, 4, 4, 5, 6, 7, 7]
SPECIAL_F = [1.0, -0.0, 0.0, np.nan, 0.0, -0.0, 2.0, -0.0, -np.inf, -3.0, _NEG_NAN, -np.inf,
             np.inf, -np.inf]
SPECIAL_BITS = {
    "max": [0x7FC00000, 0, 0, 0x80000000, 0xC0400000, 0x7FC00000, 0xFF800000, 0x7F800000, 0],
    "sum": [0x7FC00000, 0, 0, 0, 0xFF800000, 0x7FC00000, 0xFF800000, 0x7FC00000, 0],
}


@pytest.mark.parametrize("mode", ["max", "sum"])
def test_special_values_bitwise(mode):
    pts = np.array([[x + 0.5, 0.5, 0.5, f] for x, f in zip(SPECIAL_X, SPECIAL_F)], np.float32)
    want = np.array(SPECIAL_BITS[mode], np.uint32)
    size, rng = (1, 1, 1), (0, 0, 0, 9, 1, 1)
    np.testing.assert_array_equal(dense_oracle(pts, size, rng, mode).view(np.uint32).ravel(), want)
    out = robocache.voxelize(pts, size, rng, mode=mode)
    np.testing.assert_array_equal(out.view(np.uint32).ravel(), want)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_special_features_bitwise(mode):
    """Random clouds whose features hold NaN, +-0.0 and +-inf, bit for bit."""
    pts = special_cloud(31, 30000, 5)
    out = robocache.voxelize(pts, RANDOM_SIZE, RANDOM_RANGE, mode=mode)
    want = dense_oracle(pts, RANDOM_SIZE, RANDOM_RANGE, mode)
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))
