"""One episode (or one segment of it) onto one time grid.

The grid is `fps` frames per second over the selected series' overlap (or
union), t_i = start + round(i * 1e9 / fps) ns as robocache.uniform_grid, or the
frame times of a reference series. The values come from robocache.align (the
C core), one call per window of WINDOW target frames, each series sliced to
the samples that window needs (two samples of margin each side, so every
window's result equals one call over the whole episode).
"""

import numpy as np

import robocache

from ._errors import ConvertError
from ._policy import median_period_ns, series_options
from ._spec import resolve

WINDOW = 1 << 15
SPANS = ("overlap", "union")


class Feature:
    """One output feature: `name`, `kind` ("vector" or "image"), `names`
    (column names), `cols` (slice into the aligned values), `series` (list of
    input Series) and `options` (one dict of Stream options per series)."""

    __slots__ = ("name", "kind", "names", "cols", "series", "options")

    def __init__(self, name, kind, names, cols, series, options):
        self.name, self.kind, self.names, self.cols = name, kind, names, cols
        self.series, self.options = series, options


def features_of(episode, specs, fps, where):
    """Resolves every StreamSpec against the episode: list of Feature."""
    feats, col = [], 0
    for spec in specs:
        series = resolve(spec, episode, where)
        kinds = {s.kind for s in series}
        if "image" in kinds and len(series) > 1:
            raise ConvertError(f"{where}: --stream {spec.name}: an image feature takes one "
                               f"image stream, got {len(series)}")
        opts = [series_options(s, spec.name, spec.options, fps) for s in series]
        width = sum(s.values.shape[1] for s in series)
        names = [n for s in series for n in _field_names(s, len(series) > 1)]
        kind = "image" if "image" in kinds else "vector"
        feats.append(Feature(spec.name, kind, names, slice(col, col + width), series, opts))
        col += width
    return feats


def _field_names(series, qualify):
    base = series.name.rsplit("/", 1)[-1]
    return [f"{base}.{f}" if qualify else f for f in series.fields]


def segments(feats, split_gap_ns=None, split_by=None):
    """[(start_ns, end_ns)] half-open spans of the episode to convert apart:
    one span of everything; with split_gap_ns, cut where no selected series has
    a sample for longer than that; with split_by (a Series), cut before each
    sample whose value differs from the previous one."""
    times = np.concatenate([s.times for f in feats for s in f.series])
    if times.size == 0:
        return []
    cuts = []
    if split_gap_ns is not None:
        times = np.unique(times)  # sorted: gaps between consecutive samples of any series
        gaps = np.flatnonzero(np.diff(times) > split_gap_ns)
        cuts.extend(int(times[i + 1]) for i in gaps)
    if split_by is not None:
        v = split_by.values
        change = np.flatnonzero(np.any(v[1:] != v[:-1], axis=1)) + 1
        cuts.extend(int(split_by.times[i]) for i in change)
    edges = [int(times.min())] + sorted(set(cuts)) + [int(times.max()) + 1]
    return [(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _streams(feats, span):
    """robocache.Stream of every series restricted to span [a, b)."""
    out = []
    for f in feats:
        for s, o in zip(f.series, f.options):
            i0, i1 = np.searchsorted(s.times, span, side="left")
            values = s.values[i0:i1]
            if values.dtype not in (np.float32, np.float64):
                values = values.astype(np.float64)
            out.append(robocache.Stream(np.ascontiguousarray(values),
                                        np.ascontiguousarray(s.times[i0:i1]), name=s.name, **o))
    return out


def grid(streams, fps, span, reference, where):
    """Target frame times int64 [T] ns: the reference series' times inside
    the span, or robocache.uniform_grid at fps over the streams' span."""
    empty = [s.name for s in streams if s.times.shape[0] == 0]
    if empty:
        raise ConvertError(f"{where}: stream {empty[0]!r} has no sample in this episode")
    if reference is not None:
        if reference.shape[0] < 2:
            raise ConvertError(f"{where}: the reference stream has {reference.shape[0]} frame(s); "
                               "a frame grid needs at least 2")
        return reference
    try:
        times, _ = robocache.uniform_grid(streams, fps, span=span)
    except ValueError as exc:
        raise ConvertError(f"{where}: {exc}") from None
    return np.asarray(times)


def align(streams, target, device=None):
    """(values float64 [T, sum D], valid bool [T, K]) by robocache.align,
    window by window; device None: NumPy arrays (the CPU backend), else a
    torch device string ("cuda:0"): each window goes there as torch tensors
    and its result comes back."""
    T = target.shape[0]
    width = sum(s.values.shape[1] for s in streams)
    values = np.empty((T, width), np.float64)
    valid = np.empty((T, len(streams)), bool)
    put = _to_device(device)
    for w0 in range(0, T, WINDOW):
        w1 = min(T, w0 + WINDOW)
        part = [_window(s, target[w0], target[w1 - 1], put) for s in streams]
        out, ok = robocache.align(part, put(target[w0:w1]), out_dtype=np.float64)
        if device is not None:
            out, ok = out.cpu().numpy(), ok.cpu().numpy()
        values[w0:w1], valid[w0:w1] = out, ok
    return values, valid


def _to_device(device):
    if device is None:
        return lambda x: x
    import torch
    return lambda x: torch.from_numpy(np.ascontiguousarray(x)).to(device)


def _window(s, first, last, put):
    t = s.times + s.time_offset if s.time_offset else s.times
    n = t.shape[0]
    i0 = max(int(np.searchsorted(t, first, side="right")) - 2, 0)
    i1 = min(int(np.searchsorted(t, last, side="left")) + 2, n)
    w = robocache.Stream(put(s.values[i0:i1]), put(s.times[i0:i1]), name=s.name)
    for k in ("method", "extrapolate", "fill_value", "max_gap", "tolerance", "time_offset",
              "quat_order"):
        setattr(w, k, getattr(s, k))
    return w


def sync_report(streams, target, valid, fps):
    """Per series: samples, rate_hz, jitter_ms, gaps (steps longer than its
    max_gap, or 1.5 median periods without one), uncovered (target frames it
    could not fill), the options used, and for nearest series the worst
    |frame time - sample time| in ms."""
    rows = []
    for k, s in enumerate(streams):
        t = s.times + s.time_offset
        period = median_period_ns(t)
        row = {"stream": s.name, "samples": int(t.shape[0]), "method": s.method,
               "max_gap_ms": None if s.max_gap is None else s.max_gap / 1e6,
               "tolerance_ms": None if s.tolerance is None else s.tolerance / 1e6,
               "offset_ms": s.time_offset / 1e6,
               "uncovered": int(np.count_nonzero(~valid[:, k]))}
        if period:
            dt = np.diff(t)
            limit = s.max_gap if s.max_gap is not None else 1.5 * period
            row.update(rate_hz=1e9 / period, jitter_ms=float(dt.std()) / 1e6,
                       gaps=int(np.count_nonzero(dt > limit)))
        if s.method == "nearest" and t.shape[0]:
            row["worst_nearest_ms"] = _worst_nearest(t, target) / 1e6
        rows.append(row)
    return rows


def _worst_nearest(t, target):
    j = np.clip(np.searchsorted(t, target), 1, max(t.shape[0] - 1, 1))
    before = np.abs(target - t[j - 1])
    after = np.abs(t[np.minimum(j, t.shape[0] - 1)] - target)
    return float(np.minimum(before, after).max()) if target.size else 0.0
