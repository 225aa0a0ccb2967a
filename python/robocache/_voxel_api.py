"""robocache.voxelize, robocache.voxelize_hard, robocache.voxel_downsample,
robocache.voxel_preset (DESIGN §1.3).

points [N,C] float32 (any strides): x, y, z in metres, then features. A batch
is the points of B clouds concatenated, with offsets [B+1] int64 (cloud b is
rows offsets[b]..offsets[b+1]-1). voxel_size (vx, vy, vz) (or one number for
cubic voxels) and point_cloud_range (xmin, ymin, zmin, xmax, ymax, zmax) in
metres, as mmdet3d / OpenPCDet name them; grid round((max - min) / size) per
axis; a point's voxel is floor((p - min) / size) in float32 (mmcv / spconv);
out-of-range and non-finite points are dropped and counted.

Outputs come back in the framework of `points` (PyTorch, NumPy, CuPy, JAX)
on its device. PyTorch tensors go through torch.library custom ops
(torch.compile, autograd for the features of dense sum / mean).
return_stats=True adds a dict of the call's counters (STATS).

check (CUDA points only; the CPU always checks): True (default) reads the
call's counters back (one stream synchronisation) to fill the stats and to
raise on bad offsets (and, for voxel_downsample, a PCL grid of more than
2^62 voxels). False: no synchronisation in the library call (training loops,
after validating the dataset once with check=True); stats then hold only
points_in (the other counters are -1), and bad offsets give unspecified
outputs (never out of bounds) instead of ValueError.
"""

import numbers
import sys

from . import _C, _frameworks

# The torch.library ops, registered as robocache._api's: now when torch is
# already imported, else at the first torch.Tensor passed.
_torch_voxel = None
if "torch" in sys.modules:
    from . import _torch_voxel

STATS = ("points_in", "points_in_range", "points_dropped_range", "points_dropped_nonfinite",
         "voxels_nonempty", "points_dropped_max_points", "voxels_dropped_max_voxels",
         "points_dropped_max_voxels")

# dense mode -> accepted out dtypes, the default first
_DENSE_DTYPES = {"count": ("int32", "float32"), "occupancy": ("uint8", "float32", "bool"),
                 "sum": ("float32",), "mean": ("float32",), "max": ("float32",)}


def _is_torch(x):
    global _torch_voxel
    if _torch_voxel is None:
        if not _frameworks.is_torch_tensor(x):
            return False
        from . import _torch_voxel
    return isinstance(x, _torch_voxel.torch.Tensor)


def _floats(name, x, n, labels):
    """x as a list of n floats (voxel_size: one number means n equal ones)."""
    if n == 3 and isinstance(x, numbers.Real) and not isinstance(x, bool):
        return [float(x)] * 3
    try:
        values = [float(v) for v in x]
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a sequence of {n} numbers {labels}, got "
                        f"{x!r}") from None
    if len(values) != n:
        raise ValueError(f"{name}: expected {n} numbers {labels}, got {len(values)}")
    return values


def _voxel_size(x):
    return _floats("voxel_size", x, 3, "(vx, vy, vz)")


def _range(x):
    return _floats("point_cloud_range", x, 6, "(xmin, ymin, zmin, xmax, ymax, zmax)")


def _dense_dtype(mode, out_dtype):
    allowed = _DENSE_DTYPES.get(mode) if isinstance(mode, str) else None
    if allowed is None:
        raise ValueError(f"mode: expected one of {', '.join(_DENSE_DTYPES)}, got {mode!r}")
    name = _frameworks.dtype_name(out_dtype) or allowed[0]
    name = "bool" if name == "bool_" else name
    if name not in allowed:
        raise TypeError(f"out_dtype: mode {mode!r} gives {' or '.join(allowed)}, got {name}")
    return name


def _stats(values):
    values = values.tolist() if hasattr(values, "tolist") else values
    return dict(zip(STATS, (int(v) for v in values)))


def _host_ints(x):
    """A small integer array of any framework as a list of ints (a device
    synchronisation for CUDA arrays)."""
    return [int(v) for v in x.tolist()]


def _copy(x):
    """A copy of array x of any framework (never a view of it)."""
    return x.clone() if hasattr(x, "clone") else x.copy()


def voxelize(points, voxel_size, point_cloud_range, *, mode="count", offsets=None,
             out_dtype=None, return_stats=False, stream=None, check=True):
    """Dense voxelization (DESIGN §1.3 "dense"): a grid ready for Conv3d or,
    with one z cell, a BEV Conv2d.

    points        [N,C] float32, C >= 3 (x, y, z, features)
    offsets       [B+1] int64 or None (one cloud, B = 1)
    mode          "count" (points per voxel; numpy.bincount), "occupancy" (1 where
                  a voxel holds a point), "sum" / "mean" of the feature columns
                  (float64 sums in input order rounded once: numpy.bincount with
                  weights), "max" (numpy.maximum.at: a NaN in a voxel gives NaN;
                  +0.0 beats -0.0; empty voxels 0); NaN outputs are 0x7fc00000
    out_dtype     count: int32 (default) or float32; occupancy: uint8 (default),
                  float32 or bool; sum / mean / max: float32
    Returns out [B,F,Z,Y,X] (channels first, x fastest; B = 1 without offsets),
    F = 1 for count / occupancy, else C-3 (3 when C = 3: the features are x, y,
    z); with return_stats=True, (out, stats dict). Empty voxels are 0.
    Autograd (torch): the feature columns of points get gradients for "sum"
    and "mean" (1, or 1 / the voxel's point count, at the point's voxel).
    check=False (CUDA): fully asynchronous, see the module docstring.
    Raises ValueError (voxel_size, point_cloud_range, mode, shapes, offsets),
    TypeError (dtypes of points / offsets, out_dtype), MemoryError.
    """
    dtype = _dense_dtype(mode, out_dtype)
    voxel_size, point_cloud_range = _voxel_size(voxel_size), _range(point_cloud_range)
    if _is_torch(points):
        out, stats = _torch_voxel.voxelize(points, offsets, voxel_size, point_cloud_range, mode,
                                           dtype, stream, check)
        return (out, _stats(stats)) if return_stats else out
    fw = _frameworks.of(points)
    out = None
    if fw.is_cuda(points):
        shape = _C.voxelize_shape(points.shape, voxel_size, point_cloud_range, mode=mode,
                                  offsets=getattr(offsets, "shape", None))
        out = fw.empty(shape, dtype, points)
        stream = fw.stream(points) if stream is None else stream
    o, stats = _C.voxelize(points, voxel_size, point_cloud_range, out_dtype=dtype, mode=mode,
                           offsets=offsets, out=out, stream=stream, check=check)
    return (fw.wrap(o), _stats(stats)) if return_stats else fw.wrap(o)


def _max_voxels(max_voxels, training):
    """max_voxels as int: a (train, test) pair (mmdet3d) picks by `training`."""
    if isinstance(max_voxels, (tuple, list)):
        if len(max_voxels) != 2:
            raise ValueError("max_voxels: expected an int or a (train, test) pair, got "
                             f"{len(max_voxels)} values")
        return max_voxels[0] if training else max_voxels[1]
    return max_voxels


def voxelize_hard(points, voxel_size, point_cloud_range, max_points_per_voxel, max_voxels, *,
                  offsets=None, training=False, padded=False, return_stats=False, stream=None,
                  check=True):
    """Hard voxelization, as mmcv's Voxelization in deterministic mode (the
    input of PointPillars / SECOND / CenterPoint): per cloud, voxels numbered
    in the order of their first in-range point, each keeping its first
    max_points_per_voxel (P) points in input order; voxels past max_voxels (M)
    dropped with their points. Bitwise identical across runs and devices.

    points      [N,C] float32; offsets [B+1] int64 or None (one cloud)
    max_voxels  int, or mmdet3d's (train, test) pair chosen by `training`
    Returns (voxels [V,P,C] float32 (unused point slots 0), coords [V,4] int32
    (batch, z, y, x), num_points [V] int32 (1..P), num_voxels [B] int32):
    V = sum(num_voxels), each cloud's voxels together in batch order — the
    layout mmdet3d's data preprocessor builds (mmcv's coords are coords[:,
    1:]), written so by the library (robocache_voxelize_hard_packed).
    voxels / coords / num_points are views of the first V rows of outputs of
    B*M rows, as mmcv's are of its max_voxels rows (clone() them to keep them
    without the rest). CUDA: V comes from the checked stats, or with
    check=False from reading num_voxels back, a device synchronisation.
    padded=True returns the fixed-capacity layout instead (no read-back,
    static shapes for torch.compile / CUDA graphs): B*M rows, cloud b's voxels
    in rows b*M .. b*M+num_voxels[b]-1, padding rows 0 (coords -1).
    With return_stats=True a stats dict is appended. No gradient.
    check=False (CUDA): no synchronisation in the library call (see the
    module docstring); with padded=True the whole call is asynchronous.
    Raises ValueError (voxel_size, point_cloud_range, P or M < 1, shapes,
    offsets), TypeError (dtypes), MemoryError.
    """
    voxel_size, point_cloud_range = _voxel_size(voxel_size), _range(point_cloud_range)
    max_voxels = _max_voxels(max_voxels, training)
    if _is_torch(points):
        *outs, stats = _torch_voxel.voxelize_hard(points, offsets, voxel_size, point_cloud_range,
                                                  max_points_per_voxel, max_voxels, not padded,
                                                  stream, check)
    else:
        fw = _frameworks.of(points)
        empty = {}
        if fw.is_cuda(points):
            shapes = _C.voxelize_hard_shapes(points.shape, max_points_per_voxel, max_voxels,
                                             offsets=getattr(offsets, "shape", None))
            empty = {name: fw.empty(s, d, points) for name, s, d in
                     zip(("voxels", "coords", "num_points", "num_voxels"), shapes,
                         ("float32", "int32", "int32", "int32"))}
            stream = fw.stream(points) if stream is None else stream
        *outs, stats = _C.voxelize_hard(points, voxel_size, point_cloud_range,
                                        max_points_per_voxel, max_voxels, offsets=offsets,
                                        packed=not padded, **empty, stream=stream, check=check)
        outs = [fw.wrap(o) for o in outs]
    stats = _stats(stats)
    if not padded:  # the packed rows: views, as mmcv's
        n = stats["voxels_nonempty"] - stats["voxels_dropped_max_voxels"]
        if stats["voxels_nonempty"] < 0:  # unchecked
            n = sum(_host_ints(outs[3]))
        outs[:3] = [x[:n] for x in outs[:3]]
    return (*outs, stats) if return_stats else tuple(outs)


def voxel_downsample(points, voxel_size, *, point_cloud_range=None, offsets=None,
                     return_stats=False, stream=None, check=True):
    """Voxel-grid downsampling: one point per non-empty voxel, the mean of all
    C columns of its points (float64 sums in input order / count, rounded to
    float32), voxels in order of first appearance.

    points             [N,C] float32; offsets [B+1] int64 or None
    voxel_size         (vx, vy, vz) or one number (the leaf size)
    point_cloud_range  None: PCL VoxelGrid voxels, floor(p * (1/leaf)) in
                       float32 from each cloud's minimum, no range check (PCL
                       outputs the same voxels sorted by index); or a range:
                       the voxels of voxelize, points outside dropped
    Returns points [V,C] float32, or (points [V,C], out_offsets [B+1] int64)
    when offsets are given (output cloud b is rows out_offsets[b] ..
    out_offsets[b+1]-1); with return_stats=True a stats dict is appended.
    Reading the number of voxels is a device synchronisation for CUDA
    tensors (check=False only drops the library call's own one: see the
    module docstring). No gradient.
    Raises ValueError (voxel_size, point_cloud_range, shapes, offsets, a PCL
    grid of more than 2^62 voxels), TypeError (dtypes), MemoryError.
    """
    voxel_size = _voxel_size(voxel_size)
    point_cloud_range = None if point_cloud_range is None else _range(point_cloud_range)
    if _is_torch(points):
        out, out_offsets, stats = _torch_voxel.voxel_downsample(points, offsets, voxel_size,
                                                                point_cloud_range, stream, check)
    else:
        fw = _frameworks.of(points)
        out = out_offsets = None
        if fw.is_cuda(points):
            shapes = _C.voxel_downsample_shapes(points.shape,
                                                offsets=getattr(offsets, "shape", None))
            out = fw.empty(shapes[0], "float32", points)
            out_offsets = fw.empty(shapes[1], "int64", points)
            stream = fw.stream(points) if stream is None else stream
        out, out_offsets, stats = _C.voxel_downsample(
            points, voxel_size, point_cloud_range=point_cloud_range, offsets=offsets, out=out,
            out_offsets=out_offsets, stream=stream, check=check)
        out, out_offsets = fw.wrap(out), fw.wrap(out_offsets)
    stats = _stats(stats)
    n = stats["voxels_nonempty"]  # -1 when unchecked
    out = _copy(out[:n if n >= 0 else _host_ints(out_offsets)[-1]])
    result = (out,) if offsets is None else (out, out_offsets)
    if return_stats:
        result += (stats,)
    return result if len(result) > 1 else out


def voxel_preset_names():
    """Names of the built-in presets ("second-kitti", "pointpillars-kitti", ...)."""
    return tuple(p[0] for p in _C.voxel_presets())


def voxel_preset(name):
    """The voxelization settings of a standard mmdet3d / OpenPCDet config:
    dict(voxel_size=(vx, vy, vz), point_cloud_range=(xmin, .., zmax),
    max_points_per_voxel=P, max_voxels=(train, test)), so that
    robocache.voxelize_hard(points, **robocache.voxel_preset("second-kitti"))
    runs the test-time setting (training=True: the training one).
    Raises ValueError for an unknown name (listing the known ones)."""
    for p_name, size, rng, P, m_train, m_test in _C.voxel_presets():
        if p_name == name:
            return {"voxel_size": size, "point_cloud_range": rng, "max_points_per_voxel": P,
                    "max_voxels": (m_train, m_test)}
    raise ValueError(f"voxel_preset: unknown preset {name!r}; known: "
                     f"{', '.join(voxel_preset_names())}")
