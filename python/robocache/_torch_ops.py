"""PyTorch integration: robocache ops registered with torch.library.

robocache::resample, robocache::align and robocache::resample_backward are
custom ops with fake (shape-only) implementations, so torch.compile(
fullgraph=True) keeps them in the graph and CUDA graphs can capture them;
autograd flows to `values` through robocache_resample_backward (the transpose
of the interpolation weights, deterministic). robocache::resample_out and
robocache::align_out fill caller-allocated out=/valid= tensors (no autograd).
Outputs are allocated with torch.empty on the input's device; CUDA work runs
on torch.cuda.current_stream() unless a stream is given. Every op ends with
`check: bool = True`: False skips the CUDA data checks' stream
synchronisation (robocache_ctx_set_sync_checks; the fake implementations do
not depend on it). A plain eager call that needs no autograd runs the op's
implementation directly (see _eager).
"""

import operator
from typing import List, Optional, Union

import torch
from torch import Tensor

from . import _C, _shapes

Scalar = Union[int, float, bool]
# torch.library schemas have no list of str: per-stream strings of align
# travel joined with this separator.
_SEP = "\x1f"
_to_dlpack = getattr(torch._C, "_to_dlpack", None)
# torch.cuda.current_stream(device).cuda_stream without building a Stream
# object (the getter torch.compile's generated code uses)
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _cap(t):
    """A DLPack capsule of t (fast path), or t itself (its __dlpack__)."""
    if t is None or _to_dlpack is None:
        return t
    return _to_dlpack(t)


def _stream(t, stream):
    if stream is not None or t.device.type != "cuda":
        return stream
    if _raw_stream is not None:
        return _raw_stream(t.device.index)
    return torch.cuda.current_stream(t.device).cuda_stream


def _stream_arg(stream):
    return getattr(stream, "cuda_stream", stream)


def _scalar(x):
    """A time option as int or float for the op schema (None kept)."""
    if x is None or isinstance(x, (int, float)):
        return x
    try:
        return operator.index(x)
    except TypeError:
        return float(x)


def _tensor(name, x):
    """x as a torch tensor (zero-copy through DLPack when it is another array)."""
    if x is None or isinstance(x, torch.Tensor):
        return x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"{name}: expected a tensor or array supporting DLPack (__dlpack__), "
                        f"got {type(x).__name__}")
    return torch.from_dlpack(x)


_dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 1)
_function_modes = getattr(torch._C, "_is_torch_function_mode_enabled", lambda: True)


def _eager(differentiable, others):
    """True for a plain eager call that needs no autograd, no tracing and no
    mode or subclass handling: the op's implementation then runs directly,
    skipping the dispatcher (about 13 us per call). torch.compile, autograd,
    FakeTensor and other modes always go through the registered op."""
    if torch.compiler.is_compiling() or _dispatch_modes() or _function_modes():
        return False
    if torch.is_grad_enabled() and any(t.requires_grad for t in differentiable):
        return False
    return all(type(t) is torch.Tensor for t in (*differentiable, *others) if t is not None)


def _positive(name, x):
    """max_gap / tolerance for the align op: None -> 0 (no limit)."""
    if x is None:
        return 0
    x = _scalar(x)
    if isinstance(x, bool) or not x > 0:
        raise ValueError(f"{name}: must be > 0, or None for no limit; got {x!r}")
    return x


def _torch_dtype(dtype):
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
    result = getattr(torch, name.replace("torch.", ""), None)
    if not isinstance(result, torch.dtype):
        raise TypeError(
            f"out_dtype: expected float32, float64, float16 or bfloat16, got {dtype!r}")
    return result


# ---- resample -----------------------------------------------------------------

def _resample_empty(values, times, target_times, out_dtype):
    out_shape, valid_shape = _shapes.resample(values.shape, times.dim(), target_times.shape)
    out = values.new_empty(out_shape, dtype=out_dtype or values.dtype)
    return out, values.new_empty(valid_shape, dtype=torch.bool)


def _resample_out_impl(values: Tensor, times: Tensor, target_times: Tensor,
                       lengths: Optional[Tensor], target_lengths: Optional[Tensor], method: str,
                       extrapolate: str, fill_value: float, max_gap: Optional[Scalar],
                       tolerance: Optional[Scalar], time_offset: Optional[Scalar],
                       quat_order: str, out: Tensor, valid: Optional[Tensor],
                       stream: Optional[int], check: bool = True) -> None:
    _C.resample(_cap(values), _cap(times), _cap(target_times), _cap(lengths),
                _cap(target_lengths), method, extrapolate, fill_value, max_gap, tolerance,
                time_offset, quat_order, _cap(out), _cap(valid), None, False,
                _stream(values, stream), check)


resample_out = torch.library.custom_op("robocache::resample_out", _resample_out_impl,
                                       mutates_args=("out", "valid"))


@resample_out.register_fake
def _(values, times, target_times, lengths, target_lengths, method, extrapolate, fill_value,
      max_gap, tolerance, time_offset, quat_order, out, valid, stream, check=True):
    return None


def _resample_op_impl(values: Tensor, times: Tensor, target_times: Tensor,
                      lengths: Optional[Tensor], target_lengths: Optional[Tensor], method: str,
                      extrapolate: str, fill_value: float, max_gap: Optional[Scalar],
                      tolerance: Optional[Scalar], time_offset: Optional[Scalar],
                      quat_order: str, out_dtype: Optional[torch.dtype],
                      stream: Optional[int], check: bool = True) -> tuple[Tensor, Tensor]:
    out, valid = _resample_empty(values, times, target_times, out_dtype)
    _C.resample(_cap(values), _cap(times), _cap(target_times), _cap(lengths),
                _cap(target_lengths), method, extrapolate, fill_value, max_gap, tolerance,
                time_offset, quat_order, _cap(out), _cap(valid), None, True,
                _stream(values, stream), check)
    return out, valid


resample_op = torch.library.custom_op("robocache::resample", _resample_op_impl, mutates_args=())


@resample_op.register_fake
def _(values, times, target_times, lengths, target_lengths, method, extrapolate, fill_value,
      max_gap, tolerance, time_offset, quat_order, out_dtype, stream, check=True):
    return _resample_empty(values, times, target_times, out_dtype)


@torch.library.custom_op("robocache::resample_backward", mutates_args=())
def resample_backward(grad_out: Tensor, times: Tensor, target_times: Tensor,
                      lengths: Optional[Tensor], target_lengths: Optional[Tensor], method: str,
                      extrapolate: str, fill_value: float, max_gap: Optional[Scalar],
                      tolerance: Optional[Scalar], time_offset: Optional[Scalar],
                      quat_order: str, values_shape: List[int], values_dtype: torch.dtype,
                      stream: Optional[int], check: bool = True) -> Tensor:
    """grad of values: the transpose of resample's weights applied to grad_out
    (computed in float64 for float64 grad_out, else float32)."""
    work = grad_out.dtype if grad_out.dtype in (torch.float32, torch.float64) else torch.float32
    grad_values = grad_out.new_empty(values_shape, dtype=work)
    _C.resample_backward(_cap(grad_out.to(work)), _cap(times), _cap(target_times), _cap(lengths),
                         _cap(target_lengths), method, extrapolate, fill_value, max_gap,
                         tolerance, time_offset, quat_order, _cap(grad_values),
                         _stream(grad_out, stream), check)
    return grad_values.to(values_dtype)


@resample_backward.register_fake
def _(grad_out, times, target_times, lengths, target_lengths, method, extrapolate, fill_value,
      max_gap, tolerance, time_offset, quat_order, values_shape, values_dtype, stream,
      check=True):
    return grad_out.new_empty(values_shape, dtype=values_dtype)


def _resample_setup(ctx, inputs, output):
    values, times, target_times, lengths, target_lengths = inputs[:5]
    ctx.save_for_backward(times, target_times, lengths, target_lengths)
    ctx.options = inputs[5:12]
    ctx.values_shape = list(values.shape)
    ctx.values_dtype = values.dtype
    ctx.stream, ctx.check = inputs[13:15]


def _resample_grad(ctx, grad_out, grad_valid):
    times, target_times, lengths, target_lengths = ctx.saved_tensors
    grad_values = None
    if ctx.needs_input_grad[0]:
        grad_values = resample_backward(grad_out, times, target_times, lengths, target_lengths,
                                        *ctx.options, ctx.values_shape, ctx.values_dtype,
                                        ctx.stream, ctx.check)
    return (grad_values,) + (None,) * (len(ctx.needs_input_grad) - 1)


resample_op.register_autograd(_resample_grad, setup_context=_resample_setup)


def resample(values, times, target_times, lengths, target_lengths, method, extrapolate,
             fill_value, max_gap, tolerance, time_offset, quat_order, return_valid, out, valid,
             out_dtype, stream, check):
    """robocache.resample for torch tensors (see its docstring)."""
    return_valid = return_valid or valid is not None
    stream = _stream_arg(stream)
    times, target_times, lengths, target_lengths, out, valid = (
        _tensor(name, x) for name, x in (("times", times), ("target_times", target_times),
                                         ("lengths", lengths),
                                         ("target_lengths", target_lengths), ("out", out),
                                         ("valid", valid)))
    opts = (method, extrapolate, float(fill_value), _scalar(max_gap), _scalar(tolerance),
            _scalar(time_offset), quat_order)
    eager = _eager((values,), (times, target_times, lengths, target_lengths, out, valid))
    # a plain eager call that returns no mask allocates none (the out= path)
    if out is None and valid is None and (return_valid or not eager):
        op = _resample_op_impl if eager else resample_op
        result, mask = op(values, times, target_times, lengths, target_lengths, *opts,
                          _torch_dtype(out_dtype), stream, bool(check))
        return (result, mask) if return_valid else result
    if torch.is_grad_enabled() and values.requires_grad:
        raise ValueError("out: resample(..., out=...) does not support autograd; "
                         "call it without out= to get gradients for values")
    out_shape, valid_shape = _shapes.resample(values.shape, times.dim(), target_times.shape)
    if out is None:
        out = values.new_empty(out_shape, dtype=_torch_dtype(out_dtype) or values.dtype)
    if valid is None and return_valid:
        valid = values.new_empty(valid_shape, dtype=torch.bool)
    op = _resample_out_impl if eager else resample_out
    op(values, times, target_times, lengths, target_lengths, *opts, out, valid, stream,
       bool(check))
    return (out, valid) if return_valid else out


# ---- align --------------------------------------------------------------------

def _align_empty(values, times, target_times, out_dtype):
    dims = [_shapes.channels(v.shape, t.dim()) for v, t in zip(values, times)]
    out_shape, valid_shape = _shapes.align(dims, target_times.shape, len(values))
    out = target_times.new_empty(out_shape, dtype=out_dtype or torch.float32,
                                 device=values[0].device)
    return out, target_times.new_empty(valid_shape, dtype=torch.bool, device=values[0].device)


def _c_streams(values, times, lengths, names, methods, extrapolates, fill_values, max_gaps,
               tolerances, time_offsets, quat_orders):
    names, methods, extrapolates, quat_orders = (
        x.split(_SEP) for x in (names, methods, extrapolates, quat_orders))
    return [(_cap(values[k]), _cap(times[k]), _cap(lengths[k]), names[k] or None, methods[k],
             extrapolates[k], fill_values[k], max_gaps[k] or None, tolerances[k] or None,
             time_offsets[k], quat_orders[k]) for k in range(len(values))]


def _align_op_impl(values: List[Tensor], times: List[Tensor], lengths: List[Optional[Tensor]],
                   target_times: Tensor, target_lengths: Optional[Tensor], names: str,
                   methods: str, extrapolates: str, fill_values: List[float],
                   max_gaps: List[Scalar], tolerances: List[Scalar], time_offsets: List[Scalar],
                   quat_orders: str, out_dtype: Optional[torch.dtype],
                   stream: Optional[int], check: bool = True) -> tuple[Tensor, Tensor]:
    """max_gaps / tolerances: 0 means no limit; names, methods, extrapolates,
    quat_orders: one str per stream joined by _SEP (a name "" means none)."""
    out, valid = _align_empty(values, times, target_times, out_dtype)
    streams = _c_streams(values, times, lengths, names, methods, extrapolates, fill_values,
                         max_gaps, tolerances, time_offsets, quat_orders)
    _C.align(streams, _cap(target_times), _cap(target_lengths), _cap(out), _cap(valid), None,
             True, _stream(values[0], stream), check)
    return out, valid


align_op = torch.library.custom_op("robocache::align", _align_op_impl, mutates_args=())


@align_op.register_fake
def _(values, times, lengths, target_times, target_lengths, names, methods, extrapolates,
      fill_values, max_gaps, tolerances, time_offsets, quat_orders, out_dtype, stream,
      check=True):
    return _align_empty(values, times, target_times, out_dtype)


def _align_out_impl(values: List[Tensor], times: List[Tensor], lengths: List[Optional[Tensor]],
                    target_times: Tensor, target_lengths: Optional[Tensor], names: str,
                    methods: str, extrapolates: str, fill_values: List[float],
                    max_gaps: List[Scalar], tolerances: List[Scalar], time_offsets: List[Scalar],
                    quat_orders: str, out: Tensor, valid: Optional[Tensor],
                    stream: Optional[int], check: bool = True) -> None:
    streams = _c_streams(values, times, lengths, names, methods, extrapolates, fill_values,
                         max_gaps, tolerances, time_offsets, quat_orders)
    _C.align(streams, _cap(target_times), _cap(target_lengths), _cap(out), _cap(valid), None,
             False, _stream(values[0], stream), check)


align_out = torch.library.custom_op("robocache::align_out", _align_out_impl,
                                    mutates_args=("out", "valid"))


@align_out.register_fake
def _(values, times, lengths, target_times, target_lengths, names, methods, extrapolates,
      fill_values, max_gaps, tolerances, time_offsets, quat_orders, out, valid, stream,
      check=True):
    return None


def _align_setup(ctx, inputs, output):
    values, times, lengths, target_times, target_lengths = inputs[:5]
    K = len(values)
    ctx.save_for_backward(*times, *lengths, target_times, target_lengths)
    ctx.num_streams = K
    ctx.options = inputs[6:13]
    ctx.needs = [v.requires_grad for v in values]
    ctx.values_shapes = [list(v.shape) for v in values]
    ctx.values_dtypes = [v.dtype for v in values]
    ctx.dims = [_shapes.channels(v.shape, t.dim()) for v, t in zip(values, times)]
    ctx.channels = [_shapes.has_channels(v.shape, t.dim()) for v, t in zip(values, times)]
    ctx.stream, ctx.check = inputs[14:16]
    ctx.lengths_grad = [None] * K if all(x is not None for x in lengths) else None


def _align_grad(ctx, grad_out, grad_valid):
    K = ctx.num_streams
    saved = ctx.saved_tensors
    times, lengths = saved[:K], saved[K:2 * K]
    target_times, target_lengths = saved[2 * K], saved[2 * K + 1]
    methods, extrapolates, fill_values, max_gaps, tolerances, offsets, quat_orders = ctx.options
    methods, extrapolates, quat_orders = (x.split(_SEP) for x in (methods, extrapolates,
                                                                   quat_orders))
    grads, col = [], 0
    for k in range(K):
        g = grad_out[..., col:col + ctx.dims[k]]
        col += ctx.dims[k]
        if not ctx.needs[k]:
            grads.append(None)
            continue
        if not ctx.channels[k]:
            g = g[..., 0]
        grads.append(resample_backward(
            g, times[k], target_times, lengths[k], target_lengths, methods[k], extrapolates[k],
            fill_values[k], max_gaps[k] or None, tolerances[k] or None, offsets[k],
            quat_orders[k], ctx.values_shapes[k], ctx.values_dtypes[k], ctx.stream,
            ctx.check))
    # one entry per input (needs_input_grad has one per input as the op was
    # called: a trailing check=True, the default, may be left out); Tensor[]
    # inputs (a list with no None) get a list
    return (grads, [None] * K, ctx.lengths_grad) + (None,) * (len(ctx.needs_input_grad) - 3)


align_op.register_autograd(_align_grad, setup_context=_align_setup)


def align(streams, target_times, target_lengths, out_dtype, return_valid, out, valid, stream,
          check):
    """robocache.align for torch tensors (see its docstring)."""
    stream = _stream_arg(stream)
    target_times, target_lengths, out, valid = (
        _tensor(name, x) for name, x in (("target_times", target_times),
                                         ("target_lengths", target_lengths), ("out", out),
                                         ("valid", valid)))
    args = ([_tensor(f"stream {k}: values", s.values) for k, s in enumerate(streams)],
            [_tensor(f"stream {k}: times", s.times) for k, s in enumerate(streams)],
            [_tensor(f"stream {k}: lengths", s.lengths) for k, s in enumerate(streams)],
            target_times, target_lengths,
            _SEP.join(s.name or "" for s in streams), _SEP.join(s.method for s in streams),
            _SEP.join(s.extrapolate for s in streams), [float(s.fill_value) for s in streams],
            [_positive(f"stream {k}: max_gap", s.max_gap) for k, s in enumerate(streams)],
            [_positive(f"stream {k}: tolerance", s.tolerance) for k, s in enumerate(streams)],
            [_scalar(s.time_offset) or 0 for s in streams],
            _SEP.join(s.quat_order for s in streams))
    eager = _eager(args[0], (*args[1], *args[2], target_times, target_lengths, out, valid))
    if out is None and valid is None:
        op = _align_op_impl if eager else align_op
        result, mask = op(*args, _torch_dtype(out_dtype), stream, bool(check))
        return (result, mask) if return_valid else result
    if torch.is_grad_enabled() and any(v.requires_grad for v in args[0]):
        raise ValueError("out: align(..., out=...) does not support autograd; "
                         "call it without out= to get gradients for values")
    if out is None:
        dims = [_shapes.channels(s.values.shape, s.times.dim()) for s in streams]
        out = target_times.new_empty(_shapes.align(dims, target_times.shape, len(streams))[0],
                                     dtype=_torch_dtype(out_dtype) or torch.float32,
                                     device=streams[0].values.device)
    if valid is None and return_valid:
        valid = out.new_empty(tuple(out.shape[:-1]) + (len(streams),), dtype=torch.bool)
    (_align_out_impl if eager else align_out)(*args, out, valid, stream, bool(check))
    return (out, valid) if return_valid else out


def uniform_grid(streams, rate_hz, span):
    """robocache.uniform_grid for torch tensors: the span is found on the CPU."""
    device = streams[0].times.device
    tuples = [(s.times.cpu(), None if s.lengths is None else s.lengths.cpu(), s.time_offset)
              for s in streams]
    grid, lengths = _C.uniform_grid(tuples, rate_hz, span)
    grid = torch.from_dlpack(grid).to(device)
    return grid, (None if lengths is None else torch.from_dlpack(lengths).to(device))
