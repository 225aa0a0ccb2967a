"""The `windows=` argument of WindowLoader: one KeySpec per output key.

    windows = {"observation.state": [-1/30, 0.0],                  # offsets in seconds
               "observation.imu": {"offsets": [0.0], "method": "linear",
                                   "streams": ["/imu/data/angular_velocity",
                                               "/imu/data/linear_acceleration"]}}
"""

import math

METHODS = ("nearest", "previous", "next", "linear", "slerp")
TOLERANT = ("nearest", "previous", "next")  # methods that take a tolerance
EXTRAPOLATE = ("clamp", "fill")
OPTIONS = ("offsets", "streams", "method", "tolerance", "max_gap", "extrapolate", "fill_value",
           "time_offset", "quat_order")


def _ns(key, what, seconds, *, positive=False):
    """seconds (a finite number) -> int ns; ValueError naming the key and option."""
    try:
        x = float(seconds)
    except (TypeError, ValueError):
        raise TypeError(f"windows[{key!r}]: {what} must be a number of seconds, got "
                        f"{type(seconds).__name__}") from None
    if not math.isfinite(x) or (positive and x <= 0):
        need = "a positive" if positive else "a finite"
        raise ValueError(f"windows[{key!r}]: {what} must be {need} number of seconds, got {x}")
    return int(round(x * 1e9))


class KeySpec:
    """One output key: its window offsets and the series and options it reads.

    key          output name ("action"; the pad mask is f"{key}_is_pad")
    offsets_s    tuple of W offsets in seconds relative to the sample time
    offsets_ns   list of W int ns (round(offset * 1e9))
    streams      names of the series concatenated on the channel axis
    method, tolerance_ns (None or int ns), max_gap_ns (None or int ns),
    extrapolate ("clamp" or "fill"), fill_value, time_offset_ns, quat_order:
                 robocache.Stream's options, times in int ns
    """

    __slots__ = ("key", "offsets_s", "offsets_ns", "streams", "method", "tolerance_ns",
                 "max_gap_ns", "extrapolate", "fill_value", "time_offset_ns", "quat_order")

    def __init__(self, key, value, *, tolerance_s):
        options = value if isinstance(value, dict) else {"offsets": value}
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"windows[{key!r}]: unknown option(s) {', '.join(unknown)}; "
                             f"options are {', '.join(OPTIONS)}")
        if "offsets" not in options:
            raise ValueError(f"windows[{key!r}]: no 'offsets' (seconds relative to the sample "
                             "time, e.g. [0.0])")
        offsets = options["offsets"]
        if isinstance(offsets, (str, bytes)) or not hasattr(offsets, "__len__") \
                or len(offsets) == 0:
            raise ValueError(f"windows[{key!r}]: offsets must be a non-empty list of seconds")
        self.key = key
        self.offsets_ns = [_ns(key, f"offsets[{i}]", o) for i, o in enumerate(offsets)]
        self.offsets_s = tuple(float(o) for o in offsets)
        streams = options.get("streams", [key])
        if isinstance(streams, str):
            streams = [streams]
        if not streams or not all(isinstance(s, str) for s in streams):
            raise ValueError(f"windows[{key!r}]: streams must be a non-empty list of series "
                             "names")
        self.streams = list(streams)
        self.method = options.get("method", "nearest")
        if self.method not in METHODS:
            raise ValueError(f"windows[{key!r}]: method must be one of {', '.join(METHODS)}, "
                             f"got {self.method!r}")
        tolerance = options.get("tolerance", tolerance_s if self.method in TOLERANT else None)
        if tolerance is not None and self.method not in TOLERANT:
            raise ValueError(f"windows[{key!r}]: tolerance applies to methods "
                             f"{', '.join(TOLERANT)}, not {self.method!r}")
        self.tolerance_ns = None if tolerance is None else _ns(key, "tolerance", tolerance,
                                                               positive=True)
        max_gap = options.get("max_gap")
        self.max_gap_ns = None if max_gap is None else _ns(key, "max_gap", max_gap,
                                                           positive=True)
        self.extrapolate = options.get("extrapolate", "clamp")
        if self.extrapolate not in EXTRAPOLATE:
            raise ValueError(f"windows[{key!r}]: extrapolate must be 'clamp' (the edge "
                             "sample, as LeRobot pads) or 'fill' (fill_value), got "
                             f"{self.extrapolate!r}")
        self.fill_value = float(options.get("fill_value", math.nan))
        self.time_offset_ns = _ns(key, "time_offset", options.get("time_offset", 0.0))
        self.quat_order = options.get("quat_order", "xyzw")

    @property
    def sentinels(self):
        """Whether each episode's edge samples are repeated `tolerance` outside
        it: nearest / previous / next with a tolerance take a target within
        tolerance of the first..last span as inside (DESIGN §1.1)."""
        return self.tolerance_ns is not None

    @property
    def reach_ns(self):
        """The farthest a target of this key lies from its sample time."""
        return max(abs(o) for o in self.offsets_ns) + abs(self.time_offset_ns)


def parse_windows(windows, *, tolerance_s):
    """{key: offsets or dict} -> list of KeySpec, in the order given."""
    if not isinstance(windows, dict) or not windows:
        raise ValueError("windows must be a non-empty dict {key: offsets in seconds, or a "
                         "dict of options}")
    specs = []
    for key, value in windows.items():
        if not isinstance(key, str):
            raise TypeError(f"windows: keys must be str, got {type(key).__name__}")
        specs.append(KeySpec(key, value, tolerance_s=tolerance_s))
    return specs
