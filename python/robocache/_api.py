"""robocache.resample, robocache.align, robocache.Stream, robocache.uniform_grid.

Any object with __dlpack__ goes in (PyTorch, NumPy >= 1.22, CuPy, JAX); the
results come back in the framework of `values` (align: of the first stream's
values), on its device. PyTorch tensors go through torch.library custom ops
(autograd, torch.compile); the rest through the C extension directly.

Time units: int64 times are nanoseconds, float times (float32/float64) are
seconds. The time options max_gap, tolerance and time_offset are in the unit of
the times: an int (or a whole float such as 2e7) of ns for int64 times, a
number of seconds for float times.
"""

import math
import sys

from . import _C, _frameworks

# The torch.library ops (PyTorch is optional): registered now when torch is
# already imported, else at the first torch.Tensor passed, so that importing
# robocache does not import torch (a second of start-up in every process).
_torch_ops = None
if "torch" in sys.modules:
    from . import _torch_ops

_OPTION_NAMES = ("method", "extrapolate", "fill_value", "max_gap", "tolerance", "time_offset",
                 "quat_order")


def _is_torch(x):
    global _torch_ops
    if _torch_ops is None:
        if not _frameworks.is_torch_tensor(x):
            return False
        from . import _torch_ops
    return isinstance(x, _torch_ops.torch.Tensor)


def resample(values, times, target_times, *, lengths=None, target_lengths=None,
             method="linear", extrapolate="clamp", fill_value=math.nan, max_gap=None,
             tolerance=None, time_offset=0, quat_order="xyzw", return_valid=False, out=None,
             valid=None, out_dtype=None, stream=None, check=True):
    """Resamples one stream onto target times, per row (DESIGN §1.1).

    Shapes (B batch rows, S samples, T targets, D channels):
      values        [B,S,D] or [B,S] (float32, float64, float16, bfloat16)
      times         [B,S]   int64 ns, or float64/float32 s; strictly increasing
                            within each row's valid prefix, no NaN
      target_times  [B,T]   same dtype as times; need not be sorted
      lengths       [B] int64 or None: valid prefix of each row (1..S)
      target_lengths[B] int64 or None: valid targets per row (0..T); padded
                            targets get out = 0 and valid = False
    Unbatched: values [S,D] or [S], times [S], target_times [T] -> out [T,D] or
    [T] (lengths/target_lengths not allowed).

    Options:
      method        "linear" (numpy.interp per channel), "nearest" (ties to the
                    earlier sample, as scipy interp1d kind="nearest"),
                    "previous" (zero-order hold), "next", "slerp" (each 4
                    channels a unit quaternion, shortest arc, renormalised,
                    nlerp when nearly parallel: scipy.spatial.transform.Slerp)
      extrapolate   targets before the first / after the last sample:
                    "clamp" (edge value), "fill" (fill_value), "extrapolate"
                    (linear/slerp from the edge pair; others as clamp), "error"
      fill_value    value written by extrapolate="fill" (default NaN)
      max_gap       a target strictly inside a source interval longer than this
                    is invalid (sensor drop-out); its value follows extrapolate
                    (clamp: nearer edge). None: no limit
      tolerance     nearest/previous/next only: a target farther than this from
                    the sample it takes is invalid. None: no limit
      time_offset   added to times first (Kalibr: t_imu = t_cam + offset)
      quat_order    "xyzw" (scipy, ROS) or "wxyz" (Eigen, EuRoC), slerp only
    max_gap, tolerance and time_offset are in the unit of the times: ns (int)
    for int64 times, seconds for float times. int64 times (also after
    time_offset) and time_offset must lie within +-2^62 ns (about 146 years),
    else ValueError naming the row and index.

    Returns out [B,T,D] (dtype of values, or out_dtype), or (out, valid) with
    return_valid=True; valid [B,T] bool is True where the target lies within the
    row's first..last valid sample time and passes max_gap/tolerance (LeRobot's
    `_is_pad` inverted). A target exactly on a sample returns it bit-exactly.
    out= and valid= may be given: writable arrays of exactly those shapes (valid
    bool or uint8); valid= implies return_valid.
    CUDA inputs run on `stream` (an int cudaStream_t or torch.cuda.Stream),
    default the framework's current stream.
    check         CUDA inputs only (the CPU always checks). True (default): the
                  data are verified on the device and the stream is
                  synchronised once to raise the errors below (tens of us of
                  wall time per call). False: fully asynchronous, no error
                  for bad data: targets of a row whose length is out of
                  range, non-finite target times, non-increasing
                  extrapolation pairs and extrapolate="error" targets come out
                  NaN with valid False (no gradient); a target inside a
                  locally increasing bracket of an otherwise bad row is still
                  interpolated. For training loops, once the dataset has been
                  validated with check=True.

    Raises ValueError (shapes, option values, lengths, non-increasing or NaN
    times naming row and index, targets out of range with extrapolate="error"),
    TypeError (dtypes), BufferError (DLPack export/import, read-only out=),
    MemoryError, robocache.RobocacheError (CUDA or internal errors).
    """
    if _is_torch(values):
        return _torch_ops.resample(
            values, times, target_times, lengths=lengths, target_lengths=target_lengths,
            method=method, extrapolate=extrapolate, fill_value=fill_value, max_gap=max_gap,
            tolerance=tolerance, time_offset=time_offset, quat_order=quat_order,
            return_valid=return_valid, out=out, valid=valid, out_dtype=out_dtype, stream=stream,
            check=check)
    fw = _frameworks.of(values)
    out_dtype = fw.out_dtype(out_dtype)
    return_valid = return_valid or valid is not None
    if (out is None or (valid is None and return_valid)) and fw.is_cuda(values):
        out_shape, valid_shape = _C.resample_shapes(values.shape, times.shape,
                                                    target_times.shape)
        if out is None:
            out = fw.empty(out_shape, out_dtype or values.dtype, values)
        if valid is None and return_valid:
            valid = fw.empty(valid_shape, bool, values)
        stream = fw.stream(values) if stream is None else stream
    o, v = _C.resample(values, times, target_times, lengths=lengths, target_lengths=target_lengths,
                       method=method, extrapolate=extrapolate, fill_value=fill_value,
                       max_gap=max_gap, tolerance=tolerance, time_offset=time_offset,
                       quat_order=quat_order, out=out, valid=valid, out_dtype=out_dtype,
                       return_valid=return_valid, stream=stream, check=check)
    return (fw.wrap(o), fw.wrap(v)) if return_valid else fw.wrap(o)


class Stream:
    """One input stream of align: values [B,S,D] (or [B,S]; unbatched [S,D] or
    [S]), times [B,S] (int64 ns or float s), optional lengths [B] int64, and
    its own resample options (see robocache.resample). `name` appears in
    error messages ("stream 1 (imu): times not increasing: row 0, index 17")."""

    __slots__ = ("values", "times", "lengths", "name") + _OPTION_NAMES

    def __init__(self, values, times, *, name=None, method="linear", extrapolate="clamp",
                 fill_value=math.nan, max_gap=None, tolerance=None, time_offset=0,
                 quat_order="xyzw", lengths=None):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Stream: name must be a str, got {type(name).__name__}")
        self.values = values
        self.times = times
        self.lengths = lengths
        self.name = name
        self.method = method
        self.extrapolate = extrapolate
        self.fill_value = fill_value
        self.max_gap = max_gap
        self.tolerance = tolerance
        self.time_offset = time_offset
        self.quat_order = quat_order

    @classmethod
    def from_series(cls, series, **options):
        """A Stream of a robocache.datasets Series: its times (int64 ns) and
        values ([S, D]; float32/float64 used as they are, other dtypes
        converted to float64), name = the series' name. Default method by
        kind: "slerp" for quaternions (x, y, z, w), "nearest" for images (the
        values are frame indices), "linear" otherwise; any keyword of Stream
        overrides."""
        import numpy as np
        values = series.values
        if values.dtype not in (np.float32, np.float64):
            values = values.astype(np.float64)
        defaults = {"quaternion": "slerp", "image": "nearest"}
        options.setdefault("method", defaults.get(series.kind, "linear"))
        options.setdefault("name", series.name)
        return cls(values, series.times, **options)

    def __repr__(self):
        shape = tuple(getattr(self.values, "shape", ()))
        return f"robocache.Stream(name={self.name!r}, values{shape}, method={self.method!r})"


def align(streams, target_times, *, target_lengths=None, out_dtype=None, return_valid=True,
          out=None, valid=None, stream=None, check=True):
    """Aligns K streams onto one time grid (multimodal fusion, DESIGN §1.2).

    streams        sequence of robocache.Stream (each its own method,
                   extrapolate, max_gap, tolerance, time_offset); all times and
                   target_times share one dtype (int64 ns or float s)
    target_times   [B,T] (unbatched: [T]); target_lengths [B] int64 or None
    Returns (out [B,T,sum D_k], valid [B,T,K] bool): each stream resampled as
    robocache.resample does, concatenated in order on the last axis (a stream
    without a channel axis gives one column); out dtype float32 unless
    out_dtype (float64, float16, bfloat16). With return_valid=False, out only.
    Output framework: that of the first stream's values. Errors as resample,
    naming the stream; check=False (CUDA only) as in resample: no
    synchronisation, bad targets NaN with valid False instead of errors.
    """
    streams = list(streams)
    if not streams:
        raise ValueError("streams: need at least one robocache.Stream")
    for k, s in enumerate(streams):
        if not isinstance(s, Stream):
            raise TypeError(f"streams[{k}]: expected a robocache.Stream, got {type(s).__name__}")
    first = streams[0].values
    if _is_torch(first):
        return _torch_ops.align(streams, target_times, target_lengths=target_lengths,
                                out_dtype=out_dtype, return_valid=return_valid, out=out,
                                valid=valid, stream=stream, check=check)
    fw = _frameworks.of(first)
    out_dtype = fw.out_dtype(out_dtype)
    return_valid = return_valid or valid is not None
    values, times = [s.values for s in streams], [s.times for s in streams]
    names = [s.name for s in streams]
    if (out is None or (valid is None and return_valid)) and fw.is_cuda(first):
        out_shape, valid_shape = _C.align_shapes([v.shape for v in values],
                                                 [t.shape for t in times], target_times.shape,
                                                 names=names)
        if out is None:
            out = fw.empty(out_shape, out_dtype or "float32", first)
        if valid is None and return_valid:
            valid = fw.empty(valid_shape, bool, first)
        stream = fw.stream(first) if stream is None else stream
    o, v = _C.align(values, times, target_times, lengths=[s.lengths for s in streams],
                    names=names, methods=[s.method for s in streams],
                    extrapolates=[s.extrapolate for s in streams],
                    fill_values=[s.fill_value for s in streams],
                    max_gaps=[s.max_gap for s in streams],
                    tolerances=[s.tolerance for s in streams],
                    time_offsets=[s.time_offset for s in streams],
                    quat_orders=[s.quat_order for s in streams], target_lengths=target_lengths,
                    out=out, valid=valid, out_dtype=out_dtype, return_valid=return_valid,
                    stream=stream, check=check)
    return (fw.wrap(o), fw.wrap(v)) if return_valid else fw.wrap(o)


def uniform_grid(streams, rate_hz, span="overlap"):
    """A uniform target grid at rate_hz over the streams' common time span.

    streams  sequence of robocache.Stream with int64 (ns) times [B,S] (or [S]);
             their lengths and time_offset apply
    span     "overlap" (latest first sample .. earliest last sample) or
             "union" (earliest first .. latest last)
    Returns (target_times [B,T] int64 ns, target_lengths [B] int64): row b
    holds t_i = start_b + round(i * 1e9 / rate_hz) for t_i <= end_b, padded
    to T = the longest row by repeating its last time. Unbatched streams give
    (target_times [T], None). Times on a CUDA device are copied to the CPU to
    find the span (a synchronisation); the grid goes back to their device.
    Raises ValueError (rate_hz, span, rows with no overlap), TypeError (times
    not int64).
    """
    streams = list(streams)
    for k, s in enumerate(streams):
        if not isinstance(s, Stream):
            raise TypeError(f"streams[{k}]: expected a robocache.Stream, got {type(s).__name__}")
    if streams and _is_torch(streams[0].times):
        return _torch_ops.uniform_grid(streams, rate_hz, span)
    grid, lengths = _C.uniform_grid([s.times for s in streams], rate_hz, span=span,
                                    lengths=[s.lengths for s in streams],
                                    time_offsets=[s.time_offset for s in streams])
    fw = _frameworks.of(streams[0].times) if streams else None
    return fw.wrap(grid), (fw.wrap(lengths) if lengths is not None else None)
