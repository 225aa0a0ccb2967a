"""Times of step-indexed datasets (RLDS, robomimic, ALOHA): step index / control rate."""

import math

import numpy as np


def rate(value):
    """`value` as a float rate in Hz; ValueError unless positive and finite."""
    hz = float(value)
    if not (math.isfinite(hz) and hz > 0):
        raise ValueError(f"rate_hz must be a positive number of steps per second, got {value!r}")
    return hz


def times(steps, rate_hz):
    """int64 [steps] ns: round(i * 1e9 / rate_hz), the LeRobot rule
    timestamp = frame_index / fps in nanoseconds."""
    return np.round(np.arange(steps, dtype=np.float64) * (1e9 / rate_hz)).astype(np.int64)
