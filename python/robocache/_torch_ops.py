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

import inspect
import operator
from typing import List, Optional, Union

import torch
from torch import Tensor

from . import _C

Scalar = Union[int, float, bool]
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


def _named(fn, inputs):
    """The inputs of a custom op (as setup_context gets them, in schema
    order) by parameter name; a trailing argument left at its default may be
    missing."""
    return dict(zip(inspect.signature(fn).parameters, inputs))


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

# the interpolation options of one stream, as the resample ops take them
_OPTIONS = ("method", "extrapolate", "fill_value", "max_gap", "tolerance", "time_offset",
            "quat_order")


def _resample_empty(values, times, target_times, out_dtype):
    out_shape, valid_shape = _C.resample_shapes(values.shape, times.shape, target_times.shape)
    out = values.new_empty(out_shape, dtype=out_dtype or values.dtype)
    return out, values.new_empty(valid_shape, dtype=torch.bool)


def _resample_out_impl(values: Tensor, times: Tensor, target_times: Tensor,
                       lengths: Optional[Tensor], target_lengths: Optional[Tensor], method: str,
                       extrapolate: str, fill_value: float, max_gap: Optional[Scalar],
                       tolerance: Optional[Scalar], time_offset: Optional[Scalar],
                       quat_order: str, out: Tensor, valid: Optional[Tensor],
                       stream: Optional[int], check: bool = True) -> None:
    """Fills out, and valid when given."""
    _C.resample(_cap(values), _cap(times), _cap(target_times), lengths=_cap(lengths),
                target_lengths=_cap(target_lengths), method=method, extrapolate=extrapolate,
                fill_value=fill_value, max_gap=max_gap, tolerance=tolerance,
                time_offset=time_offset, quat_order=quat_order, out=_cap(out), valid=_cap(valid),
                stream=_stream(values, stream), check=check)


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
    _resample_out_impl(values, times, target_times, lengths, target_lengths, method, extrapolate,
                       fill_value, max_gap, tolerance, time_offset, quat_order, out, valid,
                       stream, check)
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
    _C.resample_backward(_cap(grad_out.to(work)), _cap(times), _cap(target_times),
                         grad_values=_cap(grad_values), lengths=_cap(lengths),
                         target_lengths=_cap(target_lengths), method=method,
                         extrapolate=extrapolate, fill_value=fill_value, max_gap=max_gap,
                         tolerance=tolerance, time_offset=time_offset, quat_order=quat_order,
                         stream=_stream(grad_out, stream), check=check)
    return grad_values.to(values_dtype)


@resample_backward.register_fake
def _(grad_out, times, target_times, lengths, target_lengths, method, extrapolate, fill_value,
      max_gap, tolerance, time_offset, quat_order, values_shape, values_dtype, stream,
      check=True):
    return grad_out.new_empty(values_shape, dtype=values_dtype)


def _resample_setup(ctx, inputs, output):
    a = _named(_resample_op_impl, inputs)
    ctx.save_for_backward(a["times"], a["target_times"], a["lengths"], a["target_lengths"])
    ctx.options = {k: a[k] for k in _OPTIONS}
    ctx.values_shape = list(a["values"].shape)
    ctx.values_dtype = a["values"].dtype
    ctx.stream, ctx.check = a["stream"], a.get("check", True)


def _resample_grad(ctx, grad_out, grad_valid):
    times, target_times, lengths, target_lengths = ctx.saved_tensors
    grad_values = None
    if ctx.needs_input_grad[0]:
        grad_values = resample_backward(grad_out, times, target_times, lengths, target_lengths,
                                        **ctx.options, values_shape=ctx.values_shape,
                                        values_dtype=ctx.values_dtype, stream=ctx.stream,
                                        check=ctx.check)
    return (grad_values,) + (None,) * (len(ctx.needs_input_grad) - 1)


resample_op.register_autograd(_resample_grad, setup_context=_resample_setup)


def resample(values, times, target_times, *, lengths, target_lengths, method, extrapolate,
             fill_value, max_gap, tolerance, time_offset, quat_order, return_valid, out, valid,
             out_dtype, stream, check):
    """robocache.resample for torch tensors (see its docstring)."""
    return_valid = return_valid or valid is not None
    stream, check = _stream_arg(stream), bool(check)
    times, target_times, lengths, target_lengths, out, valid = (
        _tensor(name, x) for name, x in (("times", times), ("target_times", target_times),
                                         ("lengths", lengths),
                                         ("target_lengths", target_lengths), ("out", out),
                                         ("valid", valid)))
    fill_value, max_gap = float(fill_value), _scalar(max_gap)
    tolerance, time_offset = _scalar(tolerance), _scalar(time_offset)
    eager = _eager((values,), (times, target_times, lengths, target_lengths, out, valid))
    # a plain eager call that returns no mask allocates none (the out= path)
    if out is None and valid is None and (return_valid or not eager):
        op = _resample_op_impl if eager else resample_op
        result, mask = op(values, times, target_times, lengths, target_lengths, method=method,
                          extrapolate=extrapolate, fill_value=fill_value, max_gap=max_gap,
                          tolerance=tolerance, time_offset=time_offset, quat_order=quat_order,
                          out_dtype=_torch_dtype(out_dtype), stream=stream, check=check)
        return (result, mask) if return_valid else result
    if torch.is_grad_enabled() and values.requires_grad:
        raise ValueError("out: resample(..., out=...) does not support autograd; "
                         "call it without out= to get gradients for values")
    if out is None or (valid is None and return_valid):
        out_shape, valid_shape = _C.resample_shapes(values.shape, times.shape,
                                                    target_times.shape)
        if out is None:
            out = values.new_empty(out_shape, dtype=_torch_dtype(out_dtype) or values.dtype)
        if valid is None and return_valid:
            valid = values.new_empty(valid_shape, dtype=torch.bool)
    op = _resample_out_impl if eager else resample_out
    op(values, times, target_times, lengths, target_lengths, method=method,
       extrapolate=extrapolate, fill_value=fill_value, max_gap=max_gap, tolerance=tolerance,
       time_offset=time_offset, quat_order=quat_order, out=out, valid=valid, stream=stream,
       check=check)
    return (out, valid) if return_valid else out


# ---- align --------------------------------------------------------------------

# per-stream lists of the align ops (robocache.Stream attribute of each)
_STREAM_LISTS = {"names": "name", "methods": "method", "extrapolates": "extrapolate",
                 "fill_values": "fill_value", "max_gaps": "max_gap", "tolerances": "tolerance",
                 "time_offsets": "time_offset", "quat_orders": "quat_order"}
_ALIGN_INPUTS = ("Tensor[] values, Tensor[] times, Tensor?[] lengths, Tensor target_times, "
                 "Tensor? target_lengths, str?[] names, str[] methods, str[] extrapolates, "
                 "float[] fill_values, Scalar?[] max_gaps, Scalar?[] tolerances, "
                 "Scalar[] time_offsets, str[] quat_orders")


def _align_empty(values, times, target_times, names, out_dtype):
    out_shape, valid_shape = _C.align_shapes([v.shape for v in values], [t.shape for t in times],
                                             target_times.shape, names=names)
    device = values[0].device
    out = target_times.new_empty(out_shape, dtype=out_dtype or torch.float32, device=device)
    return out, target_times.new_empty(valid_shape, dtype=torch.bool, device=device)


def _c_align(values, times, lengths, target_times, target_lengths, lists, out, valid,
             return_valid, stream, check):
    _C.align([_cap(v) for v in values], [_cap(t) for t in times], _cap(target_times),
             lengths=[_cap(x) for x in lengths], **lists, target_lengths=_cap(target_lengths),
             out=_cap(out), valid=_cap(valid), return_valid=return_valid,
             stream=_stream(values[0], stream), check=check)


def _align_op_impl(values, times, lengths, target_times, target_lengths, names, methods,
                   extrapolates, fill_values, max_gaps, tolerances, time_offsets, quat_orders,
                   out_dtype, stream, check=True):
    out, valid = _align_empty(values, times, target_times, names, out_dtype)
    lists = dict(names=names, methods=methods, extrapolates=extrapolates,
                 fill_values=fill_values, max_gaps=max_gaps, tolerances=tolerances,
                 time_offsets=time_offsets, quat_orders=quat_orders)
    _c_align(values, times, lengths, target_times, target_lengths, lists, out, valid, True,
             stream, check)
    return out, valid


align_op = torch.library.custom_op(
    "robocache::align", _align_op_impl, mutates_args=(),
    schema=f"({_ALIGN_INPUTS}, ScalarType? out_dtype, int? stream, bool check=True) "
           "-> (Tensor, Tensor)")


@align_op.register_fake
def _(values, times, lengths, target_times, target_lengths, names, methods, extrapolates,
      fill_values, max_gaps, tolerances, time_offsets, quat_orders, out_dtype, stream,
      check=True):
    return _align_empty(values, times, target_times, names, out_dtype)


def _align_out_impl(values, times, lengths, target_times, target_lengths, names, methods,
                    extrapolates, fill_values, max_gaps, tolerances, time_offsets, quat_orders,
                    out, valid, stream, check=True):
    lists = dict(names=names, methods=methods, extrapolates=extrapolates,
                 fill_values=fill_values, max_gaps=max_gaps, tolerances=tolerances,
                 time_offsets=time_offsets, quat_orders=quat_orders)
    _c_align(values, times, lengths, target_times, target_lengths, lists, out, valid, False,
             stream, check)


align_out = torch.library.custom_op(
    "robocache::align_out", _align_out_impl, mutates_args=("out", "valid"),
    schema=f"({_ALIGN_INPUTS}, Tensor(a!) out, Tensor(b!)? valid, int? stream, "
           "bool check=True) -> ()")


@align_out.register_fake
def _(values, times, lengths, target_times, target_lengths, names, methods, extrapolates,
      fill_values, max_gaps, tolerances, time_offsets, quat_orders, out, valid, stream,
      check=True):
    return None


def _align_setup(ctx, inputs, output):
    a = _named(_align_op_impl, inputs)
    values, times, lengths = a["values"], a["times"], a["lengths"]
    K = len(values)
    ctx.save_for_backward(*times, *lengths, a["target_times"], a["target_lengths"])
    ctx.num_streams = K
    ctx.lists = {key: a[key] for key in _STREAM_LISTS if key != "names"}
    ctx.needs = [v.requires_grad for v in values]
    ctx.values_shapes = [list(v.shape) for v in values]
    ctx.values_dtypes = [v.dtype for v in values]
    # the columns of out that each stream fills (D, or 1 without a channel axis)
    ctx.channels = [v.dim() == t.dim() + 1 for v, t in zip(values, times)]
    ctx.dims = [v.shape[-1] if c else 1 for v, c in zip(values, ctx.channels)]
    ctx.stream, ctx.check = a["stream"], a.get("check", True)
    ctx.lengths_grad = [None] * K if all(x is not None for x in lengths) else None


def _align_grad(ctx, grad_out, grad_valid):
    K = ctx.num_streams
    saved = ctx.saved_tensors
    times, lengths = saved[:K], saved[K:2 * K]
    target_times, target_lengths = saved[2 * K], saved[2 * K + 1]
    lists = ctx.lists
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
            g, times[k], target_times, lengths[k], target_lengths, method=lists["methods"][k],
            extrapolate=lists["extrapolates"][k], fill_value=lists["fill_values"][k],
            max_gap=lists["max_gaps"][k], tolerance=lists["tolerances"][k],
            time_offset=lists["time_offsets"][k], quat_order=lists["quat_orders"][k],
            values_shape=ctx.values_shapes[k], values_dtype=ctx.values_dtypes[k],
            stream=ctx.stream, check=ctx.check))
    # one entry per input (needs_input_grad has one per input as the op was
    # called: a trailing check=True, the default, may be left out); Tensor[]
    # inputs (a list with no None) get a list
    return (grads, [None] * K, ctx.lengths_grad) + (None,) * (len(ctx.needs_input_grad) - 3)


align_op.register_autograd(_align_grad, setup_context=_align_setup)


def _stream_list(streams, attr):
    """One option of every stream, as the align op's schema takes it."""
    values = [getattr(s, attr) for s in streams]
    if attr == "fill_value":
        return [float(x) for x in values]
    if attr == "time_offset":  # None: no offset
        return [0 if x is None else _scalar(x) for x in values]
    if attr in ("max_gap", "tolerance"):
        return [_scalar(x) for x in values]
    return values


def align(streams, target_times, *, target_lengths, out_dtype, return_valid, out, valid, stream,
          check):
    """robocache.align for torch tensors (see its docstring)."""
    stream = _stream_arg(stream)
    target_times, target_lengths, out, valid = (
        _tensor(name, x) for name, x in (("target_times", target_times),
                                         ("target_lengths", target_lengths), ("out", out),
                                         ("valid", valid)))
    tensors = {field: [_tensor(f"stream {k}: {field}", getattr(s, field))
                       for k, s in enumerate(streams)]
               for field in ("values", "times", "lengths")}
    lists = {key: _stream_list(streams, attr) for key, attr in _STREAM_LISTS.items()}
    args = dict(**tensors, target_times=target_times, target_lengths=target_lengths, **lists)
    eager = _eager(tensors["values"], (*tensors["times"], *tensors["lengths"], target_times,
                                       target_lengths, out, valid))
    if out is None and valid is None:
        op = _align_op_impl if eager else align_op
        result, mask = op(**args, out_dtype=_torch_dtype(out_dtype), stream=stream,
                          check=bool(check))
        return (result, mask) if return_valid else result
    if torch.is_grad_enabled() and any(v.requires_grad for v in tensors["values"]):
        raise ValueError("out: align(..., out=...) does not support autograd; "
                         "call it without out= to get gradients for values")
    if out is None or (valid is None and return_valid):
        empty_out, empty_valid = _align_empty(tensors["values"], tensors["times"], target_times,
                                              lists["names"], _torch_dtype(out_dtype))
        out = empty_out if out is None else out
        valid = empty_valid if valid is None and return_valid else valid
    (_align_out_impl if eager else align_out)(**args, out=out, valid=valid, stream=stream,
                                              check=bool(check))
    return (out, valid) if return_valid else out


def uniform_grid(streams, rate_hz, span):
    """robocache.uniform_grid for torch tensors: the span is found on the CPU."""
    device = streams[0].times.device
    grid, lengths = _C.uniform_grid(
        [s.times.cpu() for s in streams], rate_hz, span=span,
        lengths=[None if s.lengths is None else s.lengths.cpu() for s in streams],
        time_offsets=[s.time_offset for s in streams])
    grid = torch.from_dlpack(grid).to(device)
    return grid, (None if lengths is None else torch.from_dlpack(lengths).to(device))
