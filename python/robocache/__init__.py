"""robocache: resample and align multi-rate robot sensor streams and voxelize
point clouds, on CPU and CUDA, zero-copy through DLPack (PyTorch, NumPy, CuPy, JAX).

    import robocache
    out = robocache.resample(values, times, target_times, method="linear")
    out, valid = robocache.align([robocache.Stream(imu, t_imu, name="imu"),
                                  robocache.Stream(quat, t_gt, method="slerp")],
                                 target_times)
    imu = robocache.read_table("imu0.csv")    # EuRoC / TUM / CSV: int64 ns times, values
    points = robocache.read_point_cloud("scan.pcd")
    grid = robocache.voxelize(points, voxel_size, point_cloud_range, mode="count")
    voxels, coords, num_points, num_voxels = robocache.voxelize_hard(
        points, **robocache.voxel_preset("pointpillars-kitti"))

int64 times are nanoseconds, float times seconds. See docs/python.md.
"""

from . import _C
from ._version import __version__

if _C.version() != __version__:
    raise ImportError(
        f"robocache: the Python package is version {__version__} but its C extension "
        f"{_C.__file__} was built from robocache {_C.version()}; rebuild and reinstall "
        "it (pip install .)")

from ._api import Stream, align, resample, uniform_grid  # noqa: E402
from ._pointcloud_api import read_point_cloud  # noqa: E402
from ._table_api import Table, read_table  # noqa: E402
from ._voxel_api import (voxel_downsample, voxel_preset, voxel_preset_names,  # noqa: E402
                         voxelize, voxelize_hard)

RobocacheError = _C.RobocacheError
has_cuda = _C.has_cuda

__all__ = ["RobocacheError", "Stream", "Table", "__version__", "align", "has_cuda",
           "read_point_cloud", "read_table", "resample", "uniform_grid", "voxel_downsample",
           "voxel_preset", "voxel_preset_names", "voxelize", "voxelize_hard"]
