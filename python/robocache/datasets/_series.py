"""Series, Episode and Recording: what every reader of robocache.datasets returns.

A Series is one timestamped stream of one episode. Its arrays are read on
first access (the reader hands a loader, not data), one stream at a time, and
cached on the Series; `Series.release()` drops them again.
"""

import numpy as np

KINDS = ("vector", "quaternion", "image", "event")
ORDER_POLICIES = ("error", "drop")


class DatasetError(ValueError):
    """A recording that cannot be read as its format says: names the file,
    episode, stream and index where that applies."""


class Series:
    """One stream of an episode.

    name    str, e.g. "/imu/data/angular_velocity" or "observation.state"
    times   numpy int64 [S], ns, strictly increasing (checked on first access:
            DatasetError naming stream and index, or with order="drop" the
            samples not after the last kept one are dropped and counted in
            meta["dropped"]; never reordered)
    values  numpy [S, D] as stored (float32 / float64 / integer); for kind
            "image" the frame index [S, 1] int64 (decode with frames())
    fields  list of D names ("x", "y", "z"; joint names; "frame_index")
    kind    "vector", "quaternion" (x, y, z, w), "image" or "event"
    clock   which time `times` is: "header" (header.stamp), "log" (the
            recorder's receive time), "timestamp" (a dataset's timestamp
            column), "step" (step index / control rate), ...
    meta    dict: message type, source file, rate given by the format, ...
    """

    __slots__ = ("name", "kind", "clock", "meta", "order", "_fields", "_load", "_frames",
                 "_video_frames", "_times", "_values", "_where")

    def __init__(self, name, load, *, kind="vector", clock, fields=None, frames=None,
                 video_frames=None, meta=None, order="error", where=""):
        """load() -> (times int64 [S] ns, values [S, D]); frames(indices) ->
        uint8 [n, H, W, C] for images; video_frames(indices) -> (VideoFile,
        int64 [n] frame positions) for images that are frames of a video file;
        fields may be None until loaded (then load() may return (times,
        values, fields)); `where` prefixes errors (file and episode)."""
        if kind not in KINDS:
            raise ValueError(f"Series {name!r}: kind must be one of {KINDS}, got {kind!r}")
        if order not in ORDER_POLICIES:
            raise ValueError(f"order must be one of {ORDER_POLICIES}, got {order!r}")
        self.name = name
        self.kind = kind
        self.clock = clock
        self.meta = dict(meta or {})
        self.order = order
        self._fields = None if fields is None else list(fields)
        self._load = load
        self._frames = frames
        self._video_frames = video_frames
        self._times = None
        self._values = None
        self._where = where

    def _error(self, what):
        prefix = f"{self._where}: " if self._where else ""
        return DatasetError(f"{prefix}stream {self.name!r}: {what}")

    def _ensure(self):
        if self._times is not None:
            return
        got = self._load()
        times, values = got[0], got[1]
        if len(got) > 2 and got[2] is not None:
            self._fields = list(got[2])
        times = np.ascontiguousarray(times, dtype=np.int64).reshape(-1)
        values = np.asarray(values)
        if values.ndim == 1:
            values = values.reshape(-1, 1)
        if values.ndim != 2 or values.shape[0] != times.shape[0]:
            raise self._error(f"values of shape {values.shape} for {times.shape[0]} times")
        if self._fields is not None and len(self._fields) != values.shape[1]:
            raise self._error(f"{len(self._fields)} field names for {values.shape[1]} columns")
        times, values = self._ordered(times, values)
        self._times, self._values = times, values

    def _ordered(self, times, values):
        if times.shape[0] < 2:
            return times, values
        steps = np.diff(times)
        bad = np.flatnonzero(steps <= 0)
        if bad.size == 0:
            return times, values
        if self.order == "error":
            i = int(bad[0]) + 1
            kind = "repeats" if steps[bad[0]] == 0 else "goes back"
            raise self._error(
                f"time {kind} at index {i} ({int(times[i])} ns after {int(times[i - 1])} ns); "
                "open with order='drop' to drop samples that are not after the last kept one")
        keep = times > np.maximum.accumulate(np.concatenate(([np.iinfo(np.int64).min],
                                                             times[:-1])))
        self.meta["dropped"] = int(times.shape[0] - np.count_nonzero(keep))
        return np.ascontiguousarray(times[keep]), np.ascontiguousarray(values[keep])

    @property
    def times(self):
        self._ensure()
        return self._times

    @property
    def values(self):
        self._ensure()
        return self._values

    @property
    def fields(self):
        if self._fields is None:
            self._ensure()
        return list(self._fields) if self._fields is not None else \
            [str(i) for i in range(self.values.shape[1])]

    @property
    def loaded(self):
        """True once times and values have been read."""
        return self._times is not None

    def release(self):
        """Drops the cached arrays (read again on next access)."""
        self._times = self._values = None

    def _frame_indices(self, indices):
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(self.times)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"stream {self.name!r}: frame index out of range for {n} frames")
        return np.where(idx < 0, idx + n, idx)

    def frames(self, indices):
        """Decodes frames `indices` (ints into this series) of an image stream:
        uint8 [n, H, W, C]. Only those frames are decoded."""
        if self.kind != "image" or self._frames is None:
            raise TypeError(f"stream {self.name!r} is of kind {self.kind!r}: no frames to decode")
        return self._frames(self._frame_indices(indices))

    @property
    def has_video_file(self):
        """True when the frames are frames of a video file (video_frames works)."""
        return self._video_frames is not None

    def video_frames(self, indices):
        """Where frames `indices` (as for frames()) lie in their video file:
        (robocache.datasets.video.VideoFile, int64 [n] positions into its PTS
        index), the same frames frames() decodes, for another decoder to
        decode (robocache.torch's decoder="torchcodec"). TypeError when the
        stream's frames are not frames of a video file."""
        if self._video_frames is None:
            raise TypeError(f"stream {self.name!r}: its frames are not frames of a video file")
        return self._video_frames(self._frame_indices(indices))

    def __len__(self):
        return int(self.times.shape[0])

    def __repr__(self):
        state = f"{len(self)} samples" if self.loaded else "not loaded"
        return (f"Series({self.name!r}, kind={self.kind!r}, clock={self.clock!r}, {state})")


class Episode:
    """One episode: `index` (int), `meta` (dict: task, fps, robot type,
    source path, ...), `streams` (dict name -> Series in the reader's
    documented order)."""

    __slots__ = ("index", "meta", "streams")

    def __init__(self, index, streams, meta=None):
        self.index = int(index)
        self.streams = dict(streams)
        self.meta = dict(meta or {})

    def __getitem__(self, name):
        try:
            return self.streams[name]
        except KeyError:
            names = ", ".join(self.streams) or "none"
            raise KeyError(f"episode {self.index}: no stream {name!r} (streams: {names})") \
                from None

    def __repr__(self):
        return f"Episode({self.index}, {len(self.streams)} streams)"


class Recording:
    """What robocache.datasets.open returns: `format` (str), `path`, `meta`
    (dict) and `episodes` (list of Episode; a bag or a ULog is one episode)."""

    __slots__ = ("format", "path", "meta", "episodes")

    def __init__(self, format, path, episodes, meta=None):
        self.format = format
        self.path = str(path)
        self.episodes = list(episodes)
        self.meta = dict(meta or {})

    def __len__(self):
        return len(self.episodes)

    def __iter__(self):
        return iter(self.episodes)

    def __repr__(self):
        return f"Recording({self.format!r}, {self.path!r}, {len(self.episodes)} episodes)"
