"""PyTorch integration of voxelization: robocache::voxelize,
robocache::voxelize_backward, robocache::voxelize_hard and
robocache::voxel_downsample are torch.library custom ops with fake
(shape-only) implementations; the output shapes are static (the dense grid
follows from voxel_size and point_cloud_range, hard voxelization and
downsampling return their fixed capacity), so torch.compile(fullgraph=True)
keeps them in the graph. Each op also returns the call's 8 stats counters as
a CPU int64 tensor, and ends with `check: bool = True` (False: no stream
synchronisation for CUDA points; the stats then hold only points_in). A plain
eager call (see _torch_ops._eager) skips the op and its CPU stats tensor: it
calls the _run function, which returns the stats as a tuple of ints.

Autograd: the features of mode "sum" and "mean" (DESIGN §5). d out[b,f,v] /
d feature[i,f] is 1 (sum) or 1 / count[v] (mean) when point i lies in voxel v
of cloud b, else 0; the backward gathers grad_out at each point's voxel. The
voxel of a point is computed with torch as the C library computes it
(src/common/voxel.h): v = (p - min) / voxel_size in float32, in range when
0 <= v < grid on every axis, index = trunc(v). It runs inside the opaque
robocache::voxelize_backward op, so no compiler rewrites that arithmetic.
"""

from typing import List, Optional

import torch
from torch import Tensor

from . import _C, _frameworks
from ._torch_ops import _cap, _eager, _stream, _stream_arg, _tensor

_DIFFERENTIABLE = ("sum", "mean")


def _shape(t):
    return None if t is None else tuple(t.shape)


def _stats(stats):
    return torch.tensor(stats, dtype=torch.int64)


def _fake_stats(points):
    return points.new_empty((8,), dtype=torch.int64, device="cpu")


# ---- dense ----------------------------------------------------------------------

def _dense_empty(points, offsets, voxel_size, point_cloud_range, mode, out_dtype):
    shape = _C.voxelize_shape(points.shape, voxel_size, point_cloud_range, mode=mode,
                              offsets=_shape(offsets))
    return points.new_empty(shape, dtype=out_dtype)


def _voxelize_run(points, offsets, voxel_size, point_cloud_range, mode, out_dtype, stream,
                  check):
    out = _dense_empty(points, offsets, voxel_size, point_cloud_range, mode, out_dtype)
    _, stats = _C.voxelize(_cap(points), voxel_size, point_cloud_range,
                           out_dtype=_frameworks.dtype_name(out_dtype), mode=mode,
                           offsets=_cap(offsets), out=_cap(out), stream=_stream(points, stream),
                           check=check)
    return out, stats


def _voxelize_impl(points: Tensor, offsets: Optional[Tensor], voxel_size: List[float],
                   point_cloud_range: List[float], mode: str, out_dtype: torch.dtype,
                   stream: Optional[int], check: bool = True) -> tuple[Tensor, Tensor]:
    out, stats = _voxelize_run(points, offsets, voxel_size, point_cloud_range, mode, out_dtype,
                               stream, check)
    return out, _stats(stats)


voxelize_op = torch.library.custom_op("robocache::voxelize", _voxelize_impl, mutates_args=())


@voxelize_op.register_fake
def _(points, offsets, voxel_size, point_cloud_range, mode, out_dtype, stream, check=True):
    return (_dense_empty(points, offsets, voxel_size, point_cloud_range, mode, out_dtype),
            _fake_stats(points))


def point_voxels(points, offsets, voxel_size, point_cloud_range):
    """(cloud [N] int64, key [N] int64 = (z*Y + y)*X + x, inside [N] bool) of
    each point, with the C library's float32 arithmetic (key 0 when outside)."""
    device = points.device
    lo = torch.tensor(point_cloud_range[:3], dtype=torch.float32, device=device)
    size = torch.tensor(voxel_size, dtype=torch.float32, device=device)
    X, Y, Z = _C.voxel_grid_size(voxel_size, point_cloud_range)
    grid = torch.tensor([X, Y, Z], dtype=torch.float32, device=device)
    v = (points[:, :3] - lo) / size
    inside = ((v >= 0) & (v < grid)).all(dim=1)
    ijk = torch.where(inside[:, None], v, 0).to(torch.int64)  # trunc == floor for v >= 0
    key = (ijk[:, 2] * Y + ijk[:, 1]) * X + ijk[:, 0]
    N = points.shape[0]
    if offsets is None:
        cloud = torch.zeros(N, dtype=torch.int64, device=device)
    else:
        rows = torch.arange(N, dtype=torch.int64, device=device)
        cloud = torch.searchsorted(offsets.to(device), rows, right=True) - 1
    return cloud, key, inside


def _feature_columns(C):
    return slice(0, 3) if C == 3 else slice(3, C)


@torch.library.custom_op("robocache::voxelize_backward", mutates_args=())
def voxelize_backward(grad_out: Tensor, points: Tensor, offsets: Optional[Tensor],
                      voxel_size: List[float], point_cloud_range: List[float],
                      mode: str) -> Tensor:
    """grad of points for mode sum / mean: grad_out [B,F,Z,Y,X] gathered at
    each in-range point's voxel (mean: divided by the voxel's point count),
    into the feature columns; 0 elsewhere."""
    cloud, key, inside = point_voxels(points, offsets, voxel_size, point_cloud_range)
    B, F = grad_out.shape[:2]
    g = grad_out.reshape(B, F, -1)[cloud, :, key]  # [N, F]
    if mode == "mean":
        cells = grad_out[0, 0].numel()
        flat = torch.where(inside, cloud * cells + key, -1)
        _, inverse, counts = torch.unique(flat, return_inverse=True, return_counts=True)
        g = g / counts[inverse].to(g.dtype)[:, None]
    grad = torch.zeros_like(points)
    grad[:, _feature_columns(points.shape[1])] = torch.where(inside[:, None], g, 0)
    return grad


@voxelize_backward.register_fake
def _(grad_out, points, offsets, voxel_size, point_cloud_range, mode):
    return torch.empty_like(points)


def _voxelize_setup(ctx, inputs, output):
    points, offsets, voxel_size, point_cloud_range, mode = inputs[:5]
    ctx.save_for_backward(points, offsets)
    ctx.options = (voxel_size, point_cloud_range, mode)


def _voxelize_grad(ctx, grad_out, grad_stats):
    points, offsets = ctx.saved_tensors
    voxel_size, point_cloud_range, mode = ctx.options
    if mode not in _DIFFERENTIABLE:
        raise ValueError(f"voxelize: mode {mode!r} has no gradient; only the features of "
                         "mode 'sum' and 'mean' do")
    grad = voxelize_backward(grad_out, points, offsets, voxel_size, point_cloud_range, mode)
    return (grad,) + (None,) * (len(ctx.needs_input_grad) - 1)


voxelize_op.register_autograd(_voxelize_grad, setup_context=_voxelize_setup)


def voxelize(points, offsets, voxel_size, point_cloud_range, mode, out_dtype, stream, check):
    """robocache.voxelize for torch points -> (out, stats: 8 ints, or a CPU
    int64 tensor from the op)."""
    offsets = _tensor("offsets", offsets)
    op = _voxelize_run if _eager((points,), (offsets,)) else voxelize_op
    return op(points, offsets, voxel_size, point_cloud_range, mode,
              getattr(torch, out_dtype), _stream_arg(stream), bool(check))


# ---- hard -----------------------------------------------------------------------

def _hard_empty(points, offsets, max_points_per_voxel, max_voxels):
    shapes = _C.voxelize_hard_shapes(points.shape, max_points_per_voxel, max_voxels,
                                     offsets=_shape(offsets))
    dtypes = (torch.float32, torch.int32, torch.int32, torch.int32)
    return tuple(points.new_empty(s, dtype=d) for s, d in zip(shapes, dtypes))


def _hard_run(points, offsets, voxel_size, point_cloud_range, max_points_per_voxel, max_voxels,
              packed, stream, check):
    outs = _hard_empty(points, offsets, max_points_per_voxel, max_voxels)
    voxels, coords, num_points, num_voxels = map(_cap, outs)
    *_, stats = _C.voxelize_hard(_cap(points), voxel_size, point_cloud_range,
                                 max_points_per_voxel, max_voxels, offsets=_cap(offsets),
                                 packed=packed, voxels=voxels, coords=coords,
                                 num_points=num_points, num_voxels=num_voxels,
                                 stream=_stream(points, stream), check=check)
    return outs + (stats,)


def _hard_impl(points: Tensor, offsets: Optional[Tensor], voxel_size: List[float],
               point_cloud_range: List[float], max_points_per_voxel: int, max_voxels: int,
               packed: bool, stream: Optional[int],
               check: bool = True) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    *outs, stats = _hard_run(points, offsets, voxel_size, point_cloud_range,
                             max_points_per_voxel, max_voxels, packed, stream, check)
    return (*outs, _stats(stats))


voxelize_hard_op = torch.library.custom_op("robocache::voxelize_hard", _hard_impl,
                                           mutates_args=())


@voxelize_hard_op.register_fake
def _(points, offsets, voxel_size, point_cloud_range, max_points_per_voxel, max_voxels, packed,
      stream, check=True):
    return _hard_empty(points, offsets, max_points_per_voxel, max_voxels) + (_fake_stats(points),)


def voxelize_hard(points, offsets, voxel_size, point_cloud_range, max_points_per_voxel,
                  max_voxels, packed, stream, check):
    """robocache.voxelize_hard for torch points (no gradient, as mmcv's):
    the outputs of B*M rows (packed or padded layout) and the stats (8 ints,
    or a CPU int64 tensor)."""
    points, offsets = points.detach(), _tensor("offsets", offsets)
    op = _hard_run if _eager((points,), (offsets,)) else voxelize_hard_op
    return op(points, offsets, voxel_size, point_cloud_range, max_points_per_voxel, max_voxels,
              bool(packed), _stream_arg(stream), bool(check))


# ---- downsample -----------------------------------------------------------------

def _downsample_empty(points, offsets, zeroed=True):
    """Rows of out past out_offsets[B] are not written by the library: zeroed
    for the op, so that its outputs are deterministic (the plain eager call
    returns only the written rows)."""
    out_shape, offsets_shape = _C.voxel_downsample_shapes(points.shape, offsets=_shape(offsets))
    return ((points.new_zeros if zeroed else points.new_empty)(out_shape, dtype=torch.float32),
            points.new_empty(offsets_shape, dtype=torch.int64))


def _downsample_run(points, offsets, voxel_size, point_cloud_range, stream, check, zeroed=False):
    out, out_offsets = _downsample_empty(points, offsets, zeroed)
    *_, stats = _C.voxel_downsample(_cap(points), voxel_size, point_cloud_range=point_cloud_range,
                                    offsets=_cap(offsets), out=_cap(out),
                                    out_offsets=_cap(out_offsets),
                                    stream=_stream(points, stream), check=check)
    return out, out_offsets, stats


def _downsample_impl(points: Tensor, offsets: Optional[Tensor], voxel_size: List[float],
                     point_cloud_range: Optional[List[float]], stream: Optional[int],
                     check: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    out, out_offsets, stats = _downsample_run(points, offsets, voxel_size, point_cloud_range,
                                              stream, check, zeroed=True)
    return out, out_offsets, _stats(stats)


voxel_downsample_op = torch.library.custom_op("robocache::voxel_downsample", _downsample_impl,
                                              mutates_args=())


@voxel_downsample_op.register_fake
def _(points, offsets, voxel_size, point_cloud_range, stream, check=True):
    return _downsample_empty(points, offsets) + (_fake_stats(points),)


def voxel_downsample(points, offsets, voxel_size, point_cloud_range, stream, check):
    """robocache.voxel_downsample for torch points (no gradient): (out [N,C],
    out_offsets [B+1], stats)."""
    points, offsets = points.detach(), _tensor("offsets", offsets)
    op = _downsample_run if _eager((points,), (offsets,)) else voxel_downsample_op
    return op(points, offsets, voxel_size, point_cloud_range, _stream_arg(stream), bool(check))
