"""Output shapes of resample / align as the Python API returns them.

Batched calls use target_times [B,T]; unbatched ones target_times [T] (no B
axis in the results). values [..,S,D] give outputs [..,T,D]; values without a
channel axis ([B,S] or [S], as numpy.interp) give outputs without one.
"""


def has_channels(values_shape, times_ndim):
    """True when values carry a trailing channel axis D beyond times' axes."""
    return len(values_shape) == times_ndim + 1


def resample(values_shape, times_ndim, target_shape):
    """(out shape, valid shape) of resample."""
    lead = tuple(target_shape[:-1])
    T = target_shape[-1]
    tail = (values_shape[-1],) if has_channels(values_shape, times_ndim) else ()
    return lead + (T,) + tail, lead + (T,)


def channels(values_shape, times_ndim):
    """Number of output columns a stream contributes to align (D, or 1)."""
    return values_shape[-1] if has_channels(values_shape, times_ndim) else 1


def align(dims, target_shape, num_streams):
    """(out shape, valid shape) of align; dims: channels() of each stream."""
    lead = tuple(target_shape[:-1])
    T = target_shape[-1]
    return lead + (T, sum(dims)), lead + (T, num_streams)
