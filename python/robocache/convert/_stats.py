"""Feature statistics as LeRobot stores them (meta/stats.json and the
stats/<feature>/<stat> columns of meta/episodes): min, max, mean, std
(population), count and the quantiles q01, q10, q50, q90, q99, per column."""

import numpy as np

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
Q_NAMES = ("q01", "q10", "q50", "q90", "q99")


def of_array(x):
    """x [N, D] (or [N, C, H, W] for images, reduced over N, H, W) -> dict of
    lists; float64 arithmetic."""
    x = np.asarray(x, dtype=np.float64)
    axes = (0,) if x.ndim <= 2 else (0, 2, 3)
    keep = x.ndim > 2
    out = {"min": x.min(axis=axes, keepdims=keep), "max": x.max(axis=axes, keepdims=keep),
           "mean": x.mean(axis=axes, keepdims=keep), "std": x.std(axis=axes, keepdims=keep)}
    qs = np.quantile(x, QUANTILES, axis=axes, keepdims=keep)
    out = {k: (v[0] if keep else v) for k, v in out.items()}
    for name, q in zip(Q_NAMES, qs):
        out[name] = q[0] if keep else q
    out = {k: np.asarray(v).tolist() for k, v in out.items()}
    out["count"] = [int(x.shape[0])]
    return out


def of_constant(value, count):
    """of_array of a column of `count` (>= 1) copies of the integer `value`
    (|value| x count < 2**53: its float64 sum is exact), without the column."""
    v = float(value)
    out = {"min": [v], "max": [v], "mean": [v], "std": [0.0]}
    out.update((name, [v]) for name in Q_NAMES)
    out["count"] = [int(count)]
    return out


def of_images(frames):
    """of_array(frames.transpose(0, 3, 1, 2) / 255.0) of uint8 [N, H, W, C] frames
    (per channel, in [0, 1]) from each channel's histogram of the 256 levels:
    min, max and the quantiles (NumPy's linear rule on the sorted values) exact,
    mean and std to float64 rounding, without a float copy of the frames."""
    frames = np.asarray(frames)
    levels = np.arange(256) / 255.0
    n = frames.shape[0] * frames.shape[1] * frames.shape[2]
    out = {k: [] for k in ("min", "max", "mean", "std", *Q_NAMES)}
    for c in range(frames.shape[3]):
        counts = np.bincount(frames[..., c].reshape(-1), minlength=256)
        seen = np.flatnonzero(counts)
        mean = float(counts @ levels) / n
        ends = np.cumsum(counts)
        pos = np.asarray(QUANTILES) * (n - 1)
        lo = np.floor(pos)
        a = levels[np.searchsorted(ends, lo, side="right")]
        b = levels[np.searchsorted(ends, np.minimum(lo + 1, n - 1), side="right")]
        t = pos - lo
        q = np.where(t >= 0.5, b - (b - a) * (1 - t), a + (b - a) * t)
        values = {"min": levels[seen[0]], "max": levels[seen[-1]], "mean": mean,
                  "std": float(np.sqrt(counts @ (levels - mean) ** 2 / n))}
        values.update(zip(Q_NAMES, q))
        for k, v in values.items():
            out[k].append([[float(v)]])
    out["count"] = [int(frames.shape[0])]
    return out


def aggregate(stacked):
    """Dataset statistics from per-episode ones, stacked ({stat: array
    [episodes, ...]}, count [episodes, 1]): exact min, max, mean and
    population std (parallel variance); quantiles the count-weighted mean of
    the episodes' quantiles (as LeRobot's aggregate_stats)."""
    n = np.asarray(stacked["count"], dtype=np.float64)[:, 0]
    total = n.sum()

    def of(stat):  # [episodes, ...] float64
        return np.asarray(stacked[stat], dtype=np.float64)
    mean, std = of("mean"), of("std")
    w = (n / total).reshape((-1,) + (1,) * (mean.ndim - 1))
    m = (w * mean).sum(axis=0)
    var = (w * (std ** 2 + (mean - m) ** 2)).sum(axis=0)
    out = {"min": of("min").min(axis=0).tolist(), "max": of("max").max(axis=0).tolist(),
           "mean": m.tolist(), "std": np.sqrt(var).tolist(), "count": [int(total)]}
    for q in Q_NAMES:
        out[q] = (w * of(q)).sum(axis=0).tolist()
    return out
