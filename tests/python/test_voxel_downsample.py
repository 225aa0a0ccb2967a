"""robocache.voxel_downsample against NumPy oracles (tests/oracles): PCL
VoxelGrid voxels without a range (cuPCL's sample at a 1 m leaf gives the
published 3,440 points), the point_cloud_range grid with one, batches ==
each cloud alone, NumPy and torch in/out."""

import numpy as np
import pytest

from conftest import torch
from voxel_oracle import (CUPCL, KITTI, KITTI_OBJ, NUS, PC, PRESETS, load_bin, load_pcd_ascii,
                          pcl_downsample, random_cloud, range_downsample)

import robocache


@pytest.fixture(scope="module")
def cupcl():
    return load_pcd_ascii(CUPCL)


def test_cupcl_sample_1m(cupcl):
    out = robocache.voxel_downsample(cupcl, 1.0)
    assert out.shape == (3440, 3)
    np.testing.assert_array_equal(out, pcl_downsample(cupcl, 1.0))


@pytest.mark.parametrize("leaf", [0.05, 0.2, 0.5])
def test_pcl_grid_real_clouds(cupcl, leaf):
    for pts in (cupcl, load_bin(KITTI, 4), load_pcd_ascii(PC / "bunny.pcd")):
        np.testing.assert_array_equal(robocache.voxel_downsample(pts, leaf),
                                      pcl_downsample(pts, leaf))


@pytest.mark.parametrize("preset,path,cols", [("centerpoint-nus", NUS, 5),
                                              ("second-kitti", KITTI, 4)])
def test_with_range(preset, path, cols):
    size, rng = PRESETS[preset][:2]
    pts = load_bin(path, cols)
    out, stats = robocache.voxel_downsample(pts, size, point_cloud_range=rng, return_stats=True)
    want = range_downsample(pts, size, rng)
    np.testing.assert_array_equal(out, want)
    assert stats["voxels_nonempty"] == len(want)


def test_random_with_range_drops_nonfinite():
    pts = random_cloud(21, 20000, 4)
    size, rng = (0.5, 0.5, 1.0), (0, 0, 0, 10, 10, 10)
    np.testing.assert_array_equal(robocache.voxel_downsample(pts, size, point_cloud_range=rng),
                                  range_downsample(pts, size, rng))


def _batch(cupcl):
    clouds = [cupcl, load_bin(KITTI_OBJ, 4)[:, :3], np.zeros((0, 3), np.float32),
              load_bin(KITTI, 4)[:, :3]]
    return clouds, np.cumsum([0] + [len(c) for c in clouds]).astype(np.int64)


def test_batch_equals_each_cloud(cupcl):
    clouds, offsets = _batch(cupcl)
    out, out_offsets = robocache.voxel_downsample(np.concatenate(clouds), 0.3, offsets=offsets)
    singles = [pcl_downsample(c, 0.3) if len(c) else np.zeros((0, 3), np.float32)
               for c in clouds]
    assert out_offsets.tolist() == np.cumsum([0] + [len(s) for s in singles]).tolist()
    np.testing.assert_array_equal(out, np.concatenate(singles))


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_torch_in_torch_out(cupcl):
    clouds, offsets = _batch(cupcl)
    pts = np.concatenate(clouds)
    out, out_offsets = robocache.voxel_downsample(torch.from_numpy(pts), 0.3,
                                                  offsets=torch.from_numpy(offsets))
    want, want_offsets = robocache.voxel_downsample(pts, 0.3, offsets=offsets)
    assert isinstance(out, torch.Tensor) and out_offsets.dtype == torch.int64
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(out_offsets.numpy(), want_offsets)
    single = robocache.voxel_downsample(torch.from_numpy(cupcl), 1.0)
    np.testing.assert_array_equal(single.numpy(), pcl_downsample(cupcl, 1.0))
