"""NumPy oracle of one window key of robocache.torch.WindowLoader, one episode
at a time (no timeline, no robocache): what the samples' windows must hold.

Semantics written out from DESIGN §1.1 and LeRobot: nearest takes the sample
closest to the target (the earlier one on a tie) and is valid when it lies
within tolerance (so a target just outside the episode's first..last span but
within tolerance counts as inside); previous / next take the last sample at
or before / the first at or after the target (the edge sample when there is
none); linear interpolates with numpy.interp (edge values outside) and is
valid inside first..last; max_gap makes a target strictly inside a longer
interval invalid with the nearer edge's value.
"""

import numpy as np


def _nearest(times, x):
    """Index of the sample nearest each target (earlier on ties)."""
    i1 = np.clip(np.searchsorted(times, x, side="left"), 0, times.size - 1)
    i0 = np.clip(i1 - 1, 0, times.size - 1)
    take0 = np.abs(x - times[i0]) <= np.abs(times[i1] - x)
    return np.where(take0, i0, i1)


def window_values(times, values, targets, *, method="nearest", tolerance=None, max_gap=None):
    """times int64 [S] ns, values [S, D], targets int64 [N] ns ->
    (out float64 [N, D], valid bool [N])."""
    times = np.asarray(times, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    x = np.asarray(targets, dtype=np.int64)
    if method == "linear":
        # relative to the first sample: exact in float64 (absolute ns are not)
        xr, tr = (x - times[0]).astype(np.float64), (times - times[0]).astype(np.float64)
        out = np.stack([np.interp(xr, tr, values[:, d]) for d in range(values.shape[1])],
                       axis=1)
        valid = (x >= times[0]) & (x <= times[-1])
    else:
        if method == "nearest":
            used = _nearest(times, x)
        elif method == "previous":
            used = np.clip(np.searchsorted(times, x, side="right") - 1, 0, times.size - 1)
        elif method == "next":
            used = np.clip(np.searchsorted(times, x, side="left"), 0, times.size - 1)
        else:
            raise ValueError(method)
        out = values[used]
        dist = np.abs(x - times[used])
        valid = dist <= tolerance if tolerance is not None else \
            (x >= times[0]) & (x <= times[-1])
    if max_gap is not None:
        i0 = np.searchsorted(times, x, side="right") - 1
        inside = (i0 >= 0) & (i0 < times.size - 1)
        i0c = np.clip(i0, 0, times.size - 2)
        gap = inside & (times[i0c + 1] - times[i0c] > max_gap) & (x != times[i0c])
        nearer = np.where(x - times[i0c] <= times[i0c + 1] - x, i0c, i0c + 1)
        out = np.where(gap[:, None], values[nearer], out)
        valid = valid & ~gap
    return out, valid
