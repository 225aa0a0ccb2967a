"""Default resample policy of each input series by kind and feature, as
recorded in the output metadata:

  quaternion                      slerp (x, y, z, w)
  image                           nearest, tolerance = half a target frame
  feature named action / action.* previous (zero-order hold: never looks ahead)
  anything else (state, IMU, pose) linear
  max_gap                         3 x the series' median sample period (not for images)
  extrapolate                     clamp (frames outside a series are invalid anyway)

Options given in --stream override these for every series of that feature.
"""

import numpy as np

MAX_GAP_PERIODS = 3


def median_period_ns(times):
    """Median step of int64 ns times, or None with fewer than two samples."""
    if times.shape[0] < 2:
        return None
    return int(np.median(np.diff(times)))


def is_action(feature):
    return feature == "action" or feature.startswith("action.")


def series_options(series, feature, user, fps):
    """The robocache.Stream options (method, extrapolate, max_gap, tolerance,
    ...) of one series of output feature `feature` at target rate `fps`."""
    if series.kind == "image":
        opts = {"method": "nearest", "tolerance": int(round(0.5e9 / fps))}
    else:
        if series.kind == "quaternion":
            method = "slerp"
        elif is_action(feature):
            method = "previous"
        else:
            method = "linear"
        opts = {"method": method}
        period = median_period_ns(series.times)
        if period:
            opts["max_gap"] = MAX_GAP_PERIODS * period
    opts.update(user)
    return opts
