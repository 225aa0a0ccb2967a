"""Every episode of a recording on one int64 ns timeline (host arrays).

Episode e's times are shifted by shift[e] so that the episodes follow each
other in order, `gap_ns` apart: each series of all episodes is then ONE
strictly increasing row, and a window of any sample is resolved by one
robocache.align call over those rows, with no per-episode padding.

The gap is wider than twice the longest episode plus the longest window
reach, and every stream gets max_gap_ns (shorter than the gap, longer than
any interval inside an episode). A target past an episode's end therefore
lies inside an interval longer than max_gap: it is invalid (`_is_pad`) and,
with extrapolate="clamp", takes the nearer edge, which is its own
episode's edge sample, exactly as align on that episode alone gives it.
Streams whose method takes a tolerance repeat their edge samples
`tolerance` before the first and after the last sample of each episode
(DESIGN §1.1: a target within tolerance outside the first..last span counts
as inside; LeRobot's float32 timestamps put the end of an action chunk a few
hundred ns past the last frame). align widens a row's own two ends that way
itself, so the rows handed to it leave out their first and last repeat.
"""

import numpy as np

from robocache.datasets import DatasetError

TIME_LIMIT_NS = 1 << 62  # robocache's bound on int64 ns times


class StreamData:
    """One series of one key, every episode concatenated on the timeline.

    spec    the KeySpec it belongs to; name: the series name; kind: its kind
    times   int64 [S] shifted ns (with the edge repeats of tolerant keys)
    values  [S, D] float32 / float64 (other dtypes as float64); image
            streams: the frame's position in its episode's series [S, 1]
    starts  int64 [E + 1]: episode e's rows are starts[e]:starts[e + 1]
    fields  D names
    series  list of E Series (image streams decode frames through them)
    """

    __slots__ = ("spec", "name", "kind", "times", "values", "starts", "fields", "series")

    @property
    def nbytes(self):
        return self.times.nbytes + self.values.nbytes

    @property
    def rows_key(self):
        """Equal for two StreamData with the same times and values (two keys
        reading one series with the same edge repeats): one device copy."""
        return self.name, self.spec.tolerance_ns if self.spec.sentinels else None

    def rows(self, e0, e1):
        """slice of the rows of episodes [e0, e1) handed to align as one row:
        without its first and last edge repeat, since align widens a row's
        own ends by the tolerance itself."""
        a, b = int(self.starts[e0]), int(self.starts[e1])
        return slice(a + 1, b - 1) if self.spec.sentinels else slice(a, b)


class Timeline:
    """The episodes on one timeline.

    episodes        list of E Episode (the loader's selection, in order)
    episode_index   int64 [E]: their Episode.index
    shift           int64 [E]: added to episode e's times
    gap_ns          distance between one episode's end and the next's start
    max_gap_ns      the max_gap every stream gets (a key's own max_gap when
                    smaller)
    streams         list of StreamData: the low-dimensional keys' series, in
                    key order then stream order
    images          list of StreamData of the image keys (one series each)
    sample_time     int64 [N] shifted ns of every sample, episode by episode
    sample_episode  int64 [N] position of the sample's episode in `episodes`
    sample_frame    int64 [N] position of the sample within its episode
    sample_starts   int64 [E + 1]: episode e's samples
    """

    def __init__(self, where, episodes, specs, *, reference=None, rate_hz=None):
        self.episodes = list(episodes)
        if not self.episodes:
            raise ValueError(f"{where}: no episodes to load")
        self.episode_index = np.asarray([ep.index for ep in self.episodes], dtype=np.int64)
        raw = {}  # (spec index, stream name) -> list over episodes of (times, values, Series)
        kinds = {}
        ref_times, origin, end = [], [], []
        for p, ep in enumerate(self.episodes):
            lows = []
            for k, spec in enumerate(specs):
                for name in spec.streams:
                    s = _series(where, ep, spec.key, name)
                    times, values = _read(where, ep, s)
                    kind = kinds.setdefault((k, name), s.kind)
                    if s.kind != kind:
                        raise DatasetError(f"{where}: episode {ep.index}: stream {name!r} of key "
                                           f"{spec.key!r} is of kind {s.kind!r}, {kind!r} in "
                                           "the episodes before")
                    raw.setdefault((k, name), []).append((times, values, s))
                    if kind != "image":
                        lows.append((times, values))
            if rate_hz is not None:
                ref = _grid(where, ep, lows or [raw[(k, n)][p][:2] for k, n in raw], rate_hz)
            else:
                ref_name = reference or specs[0].streams[0]
                known = [key for key in raw if key[1] == ref_name]
                ref = raw[known[0]][p][0] if known else \
                    _read(where, ep, _series(where, ep, "reference", ref_name))[0]
            firsts = [raw[key][p][0][0] for key in raw] + [ref[0]]
            lasts = [raw[key][p][0][-1] for key in raw] + [ref[-1]]
            ref_times.append(ref)
            origin.append(min(int(x) for x in firsts))
            end.append(max(int(x) for x in lasts))
        self._check_images(where, specs, kinds)
        span = [b - a for a, b in zip(origin, end)]
        reach = max(spec.reach_ns for spec in specs)
        tol = max((spec.tolerance_ns or 0) for spec in specs)
        longest = max(span)
        self.gap_ns = 2 * (longest + reach) + 4 * tol + 2_000_000_000
        self.max_gap_ns = longest + reach + 2 * tol + 1_000_000_000
        base = np.concatenate(([0], np.cumsum(np.asarray(span, dtype=object) + self.gap_ns)))
        if int(base[-1]) + reach >= TIME_LIMIT_NS:
            raise ValueError(f"{where}: {len(span)} episodes of up to {longest * 1e-9:.0f} s do "
                             "not fit robocache's int64 ns time range (+-2^62 ns) on one "
                             "timeline")
        self.shift = np.asarray([int(b) - o for b, o in zip(base[:-1], origin)], dtype=np.int64)
        self.streams, self.images = [], []
        for (k, name), per_episode in raw.items():
            data = self._concatenate(where, specs[k], name, kinds[(k, name)], per_episode)
            (self.images if data.kind == "image" else self.streams).append(data)
        counts = np.asarray([r.size for r in ref_times], dtype=np.int64)
        self.sample_starts = np.concatenate(([0], np.cumsum(counts)))
        self.sample_time = np.concatenate([r + s for r, s in zip(ref_times, self.shift)])
        self.sample_episode = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        self.sample_frame = np.concatenate([np.arange(n, dtype=np.int64) for n in counts])

    @staticmethod
    def _check_images(where, specs, kinds):
        for k, spec in enumerate(specs):
            image = [kinds[(k, n)] == "image" for n in spec.streams]
            if any(image) and len(spec.streams) > 1:
                raise ValueError(f"{where}: key {spec.key!r}: an image stream must be the "
                                 "key's only stream")
            if any(image) and (spec.method not in ("nearest", "previous", "next")
                               or spec.extrapolate != "clamp"):
                raise ValueError(f"{where}: key {spec.key!r} is an image stream: it takes "
                                 "method nearest, previous or next with extrapolate='clamp', "
                                 f"not {spec.method!r} with {spec.extrapolate!r}")

    def _concatenate(self, where, spec, name, kind, per_episode):
        d = StreamData()
        d.spec, d.name, d.kind = spec, name, kind
        d.series = [s for _, _, s in per_episode]
        d.fields = per_episode[0][2].fields
        width = per_episode[0][1].shape[1]
        dtype = np.result_type(*[v.dtype for _, v, _ in per_episode])
        if kind == "image" or dtype not in (np.float32, np.float64):
            dtype = np.dtype(np.float64)
        times, values, counts = [], [], []
        tol = spec.tolerance_ns if spec.sentinels else None
        for p, (t, v, _) in enumerate(per_episode):
            if v.shape[1] != width:
                raise DatasetError(f"{where}: episode {self.episodes[p].index}: stream {name!r} "
                                   f"has {v.shape[1]} columns, {width} in the first episode")
            if kind == "image":  # frames() takes positions in the series
                v = np.arange(t.size, dtype=np.float64).reshape(-1, 1)
            t = t + self.shift[p]
            if tol is not None:
                t = np.concatenate(([t[0] - tol], t, [t[-1] + tol]))
                v = np.concatenate((v[:1], v, v[-1:]))
            times.append(t)
            values.append(v.astype(dtype, copy=False))
            counts.append(t.size)
        d.times = np.concatenate(times)
        d.values = np.ascontiguousarray(np.concatenate(values))
        d.starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        return d

    def episode_bytes(self):
        """int64 [E]: bytes of each episode's low-dimensional rows (a series
        read by several keys once) and samples."""
        total = np.diff(self.sample_starts) * 3 * 8
        for d in {d.rows_key: d for d in self.streams}.values():
            row = 8 + d.values.shape[1] * d.values.itemsize
            total = total + np.diff(d.starts) * row
        return total


def _series(where, ep, key, name):
    s = ep.streams.get(name)
    if s is None:
        names = ", ".join(ep.streams) or "none"
        raise DatasetError(f"{where}: episode {ep.index}: no stream {name!r} for key {key!r} "
                           f"(streams: {names})")
    return s


def _read(where, ep, series):
    """(times, values) of a Series. The arrays of a vector series it had not
    read before are released again (the timeline keeps its own copy); image
    series stay loaded for frames()."""
    loaded = series.loaded
    times, values = series.times, series.values
    if times.size == 0:
        raise DatasetError(f"{where}: episode {ep.index}: stream {series.name!r} has no "
                           "samples")
    if not loaded and series.kind != "image":
        series.release()
    return times, values


def _grid(where, ep, streams, rate_hz):
    import robocache
    try:
        grid, _ = robocache.uniform_grid(
            [robocache.Stream(t, t) for t, _ in streams], rate_hz)
    except ValueError as e:
        raise ValueError(f"{where}: episode {ep.index}: no sample times at {rate_hz} Hz: "
                         f"{e}") from None
    return np.asarray(grid, dtype=np.int64)
