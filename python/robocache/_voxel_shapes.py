"""Output shapes of voxelize / voxelize_hard / voxel_downsample before
compaction (the C library's layouts, DESIGN §1.3), for outputs allocated by
the caller's framework (CUDA) and for the fake implementations of the torch
ops. Shapes the library would refuse are left for it to report."""

from . import _C

_SINGLE_CHANNEL = ("count", "occupancy")


def num_clouds(offsets_shape):
    """B: offsets [B+1], or 1 without offsets."""
    if offsets_shape is None or len(offsets_shape) != 1 or offsets_shape[0] < 2:
        return 1
    return offsets_shape[0] - 1


def _columns(points_shape):
    return points_shape[1] if len(points_shape) == 2 else 3


def dense(points_shape, offsets_shape, voxel_size, point_cloud_range, mode):
    """[B,F,Z,Y,X]: F = 1 for count/occupancy, else the feature columns (C-3,
    or 3 when C = 3)."""
    X, Y, Z = _C.voxel_grid_size(voxel_size, point_cloud_range)
    C = _columns(points_shape)
    F = 1 if mode in _SINGLE_CHANNEL else (3 if C == 3 else C - 3)
    return (num_clouds(offsets_shape), F, Z, Y, X)


def hard(points_shape, offsets_shape, max_points_per_voxel, max_voxels):
    """(voxels [B*M,P,C], coords [B*M,4], num_points [B*M], num_voxels [B])."""
    B = num_clouds(offsets_shape)
    rows = B * max_voxels
    return ((rows, max_points_per_voxel, _columns(points_shape)), (rows, 4), (rows,), (B,))


def downsample(points_shape, offsets_shape):
    """(out [N,C] (capacity N), out_offsets [B+1])."""
    N = points_shape[0] if len(points_shape) >= 1 else 0
    return (N, _columns(points_shape)), (num_clouds(offsets_shape) + 1,)
