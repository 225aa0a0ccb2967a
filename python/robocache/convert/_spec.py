"""`--stream NAME=SOURCE[,SOURCE...][,KEY=VALUE...]`: one output feature built
from one or more input series, with the resample options of `robocache align`.

A SOURCE names a series of the episode exactly, or a prefix: `/odom/pose`
selects every series named `/odom/pose/...` in the reader's order (each keeps
its own kind's default method, e.g. the orientation's slerp). Keys as the C
`robocache align --stream`: method, extrapolate, fill, max-gap, tolerance,
offset, quat-order; durations carry a unit (`20ms`, `0.5s`, `100ns`).
"""

import re
from decimal import Decimal, InvalidOperation

METHODS = ("linear", "nearest", "previous", "next", "slerp")
EXTRAPOLATE = ("clamp", "fill", "extrapolate", "error")
_UNITS = {"ns": 1, "us": 1000, "ms": 1_000_000, "s": 1_000_000_000}
_DURATION = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(ns|us|ms|s)?$")
_KEYS = ("method", "extrapolate", "fill", "max-gap", "tolerance", "offset", "quat-order")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-/]*$")


class SpecError(ValueError):
    """A --stream, --fps or other option that cannot be used (exit code 2)."""


def duration_ns(text, what):
    """'20ms' -> 20000000 (int ns, exact from the decimal digits); a bare 0 is allowed."""
    m = _DURATION.match(text.strip())
    if not m or (m.group(2) is None and Decimal(m.group(1)) != 0):
        raise SpecError(f"{what}: {text!r} is not a duration with a unit (e.g. 20ms, 0.5s, 100ns)")
    try:
        ns = Decimal(m.group(1)) * _UNITS[m.group(2) or "ns"]
    except InvalidOperation:
        raise SpecError(f"{what}: {text!r} is not a duration") from None
    if ns != ns.to_integral_value():
        raise SpecError(f"{what}: {text!r} is not a whole number of nanoseconds")
    return int(ns)


class StreamSpec:
    """One output feature: `name`, `sources` (list of str) and `options`
    (dict with keys method, extrapolate, fill_value, max_gap, tolerance,
    time_offset, quat_order: only those given on the command line)."""

    __slots__ = ("name", "sources", "options")

    def __init__(self, name, sources, options=None):
        if not _NAME.match(name or ""):
            raise SpecError(f"--stream: bad feature name {name!r} (letters, digits, _ . - /)")
        if not sources:
            raise SpecError(f"--stream {name}: no source stream given")
        self.name = name
        self.sources = list(sources)
        self.options = dict(options or {})

    def __repr__(self):
        return f"StreamSpec({self.name!r}, {self.sources!r}, {self.options!r})"


def parse_stream(text):
    """'observation.imu=/imu/data/angular_velocity,/imu/data/linear_acceleration,method=linear'
    -> StreamSpec. Raises SpecError naming the bad part."""
    name, eq, rest = text.partition("=")
    if not eq:
        raise SpecError(f"--stream {text!r}: expected NAME=SOURCE[,SOURCE...][,KEY=VALUE...]")
    sources, options = [], {}
    for token in rest.split(","):
        token = token.strip()
        key, eq, value = token.partition("=")
        if not eq:
            if token:
                sources.append(token)
            continue
        if key not in _KEYS:
            raise SpecError(f"--stream {name}: unknown key {key!r} (keys: {', '.join(_KEYS)})")
        options.update(_option(name, key, value))
    return StreamSpec(name, sources, options)


def _option(name, key, value):
    what = f"--stream {name}: {key}"
    if key == "method":
        if value not in METHODS:
            raise SpecError(f"{what}: {value!r} is not one of {', '.join(METHODS)}")
        return {"method": value}
    if key == "extrapolate":
        if value not in EXTRAPOLATE:
            raise SpecError(f"{what}: {value!r} is not one of {', '.join(EXTRAPOLATE)}")
        return {"extrapolate": value}
    if key == "fill":
        try:
            return {"fill_value": float(value)}
        except ValueError:
            raise SpecError(f"{what}: {value!r} is not a number") from None
    if key == "quat-order":
        if value not in ("xyzw", "wxyz"):
            raise SpecError(f"{what}: {value!r} is not xyzw or wxyz")
        return {"quat_order": value}
    ns = duration_ns(value, what)
    if key != "offset" and ns <= 0:
        raise SpecError(f"{what}: must be positive, got {value!r}")
    return {{"max-gap": "max_gap", "tolerance": "tolerance", "offset": "time_offset"}[key]: ns}


def resolve(spec, episode, where):
    """The series of `episode` that spec.sources select, in order: a source
    equal to a series name selects it, else every series under `source/`.
    Raises ConvertError naming the source and the available streams."""
    from ._errors import ConvertError
    chosen = []
    for src in spec.sources:
        if src in episode.streams:
            hits = [src]
        else:
            prefix = src.rstrip("/") + "/"
            hits = [n for n in episode.streams if n.startswith(prefix)]
        if not hits:
            names = ", ".join(episode.streams) or "none"
            raise ConvertError(f"{where}: --stream {spec.name}: source {src!r} matches no stream "
                            f"(streams: {names})")
        chosen.extend(episode.streams[n] for n in hits)
    return chosen
