"""Errors of the voxelization functions: ValueError naming the argument (and
carrying the C library's message) for bad voxel_size / point_cloud_range /
shapes / offsets / options, TypeError for dtypes."""

import numpy as np
import pytest

from conftest import torch

import robocache

POINTS = np.random.default_rng(0).uniform(0, 4, (100, 4)).astype(np.float32)
SIZE, RANGE = (0.5, 0.5, 0.5), (0, 0, 0, 4, 4, 4)


def dense(**kw):
    args = {"points": POINTS, "voxel_size": SIZE, "point_cloud_range": RANGE, **kw}
    return robocache.voxelize(args.pop("points"), args.pop("voxel_size"),
                              args.pop("point_cloud_range"), **args)


def hard(**kw):
    args = {"points": POINTS, "voxel_size": SIZE, "point_cloud_range": RANGE,
            "max_points_per_voxel": 5, "max_voxels": 100, **kw}
    return robocache.voxelize_hard(**args)


def down(**kw):
    args = {"points": POINTS, "voxel_size": SIZE, **kw}
    return robocache.voxel_downsample(**args)


CALLS = [dense, hard, down]


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("size,message", [
    ((0, 0.5, 0.5), r"voxel_size\[0\] \(x\) must be > 0 and finite, got 0"),
    ((0.5, float("nan"), 0.5), r"voxel_size\[1\] \(y\) must be > 0"),
    ((0.5, 0.5), r"voxel_size: expected 3 numbers \(vx, vy, vz\), got 2"),
    (-1.0, r"voxel_size\[0\] \(x\) must be > 0")])
def test_bad_voxel_size(call, size, message):
    with pytest.raises(ValueError, match=message):
        call(voxel_size=size)


@pytest.mark.parametrize("call", CALLS)
def test_voxel_size_not_numbers(call):
    with pytest.raises(TypeError, match="voxel_size: expected a sequence of 3 numbers"):
        call(voxel_size=("a", 1, 1))


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("rng,message", [
    ((0, 0, 0, 4, 4), r"point_cloud_range: expected 6 numbers .*got 5"),
    ((0, 5, 0, 4, 4, 4), r"point_cloud_range on y: need finite min < max, got \[5, 4\]"),
    ((0, 0, 0, 4, 4, 0.1), r"grid on z is round\(\(0.1 - 0\) / 0.5\) = 0: must be >= 1")])
def test_bad_range(call, rng, message):
    kw = {"point_cloud_range": rng}
    with pytest.raises(ValueError, match=message):
        call(**kw)


@pytest.mark.parametrize("call", CALLS)
def test_points_shape_and_dtype(call):
    with pytest.raises(ValueError, match=r"points: need at least 3 columns \(x, y, z\), got C = 2"):
        call(points=POINTS[:, :2])
    with pytest.raises(ValueError, match="points"):
        call(points=POINTS[:, 0].copy())
    with pytest.raises(TypeError, match="points: dtype must be float32, got float64"):
        call(points=POINTS.astype(np.float64))
    with pytest.raises(TypeError, match="points: expected a tensor or array supporting DLPack"):
        call(points=POINTS.tolist())


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("offsets,error,message", [
    (np.array([0, 50, 99]), ValueError, r"offsets\[B\] = 99 must equal the number of points"),
    (np.array([0, 60, 40, 100]), ValueError, r"offsets decrease: offsets\[1\] = 60"),
    (np.array([1, 100]), ValueError, r"offsets\[0\] must be 0, got 1"),
    (np.array([100]), ValueError, r"offsets: need B\+1 >= 2 entries"),
    (np.array([0, 100], np.int32), TypeError, "offsets: dtype must be int64, got int32")])
def test_bad_offsets(call, offsets, error, message):
    with pytest.raises(error, match=message):
        call(offsets=offsets)


def test_dense_mode_and_out_dtype():
    with pytest.raises(ValueError, match="mode: expected one of count, occupancy, sum, mean, "
                                         "max, got 'median'"):
        dense(mode="median")
    with pytest.raises(TypeError, match="out_dtype: mode 'sum' gives float32, got int32"):
        dense(mode="sum", out_dtype=np.int32)
    with pytest.raises(TypeError, match="out_dtype: mode 'count' gives int32 or float32, got "
                                        "uint8"):
        dense(mode="count", out_dtype="uint8")


def test_grid_too_large():
    with pytest.raises(ValueError, match="more than 2\\^60 elements|at most 2\\^62 voxels"):
        dense(voxel_size=1e-6, point_cloud_range=(0, 0, 0, 1000, 1000, 1000))


@pytest.mark.parametrize("name,value,error,message", [
    ("max_points_per_voxel", 0, ValueError, r"max_points_per_voxel: must be an int in 1\.\."),
    ("max_voxels", -3, ValueError, r"max_voxels: must be an int in 1\.\."),
    ("max_voxels", 2**31, ValueError, r"max_voxels: must be an int in 1\.\."),
    ("max_voxels", 10.5, TypeError, "max_voxels: expected an int, got float"),
    ("max_points_per_voxel", True, TypeError, "max_points_per_voxel: expected an int, got bool"),
    ("max_voxels", (1, 2, 3), ValueError, r"max_voxels: expected an int or a \(train, test\)")])
def test_hard_capacities(name, value, error, message):
    with pytest.raises(error, match=message):
        hard(**{name: value})


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_torch_errors():
    pts = torch.from_numpy(POINTS)
    with pytest.raises(TypeError, match="points: dtype must be float32, got float64"):
        robocache.voxelize(pts.double(), SIZE, RANGE)
    with pytest.raises(ValueError, match=r"voxel_size\[2\] \(z\) must be > 0"):
        robocache.voxelize_hard(pts, (1, 1, 0), RANGE, 5, 10)
    with pytest.raises(ValueError, match=r"offsets\[B\] = 99"):
        robocache.voxel_downsample(pts, 1.0, offsets=np.array([0, 99]))
