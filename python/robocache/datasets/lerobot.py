"""LeRobot dataset folders (codebase v2.0, v2.1 and v3.0) as episodes of streams.

    rec = rd.open("data/robot/lerobot/lingzu_open50_v30_subset")
    ep = rec.episodes[0]                       # Episode(3, ...): only episodes with data
    ep.streams["state"].times                  # int64 [S] ns, from the timestamp column
    ep.streams["state"].values                 # float32 [S, 34], fields from info.json names
    ep.streams["image"].frames([0, 10])        # uint8 [2, 480, 640, 3], decoded on demand

Streams, in info.json's feature order (index columns timestamp, frame_index,
episode_index, index and task_index are not streams):
  numeric features (float*, int*, uint*, bool; scalars, fixed-size or variable-length
  lists) -> kind "vector", values [S, D] as stored, fields = info.json's names
  flattened (nested lists in order; a one-key dict is its value; several keys give
  "key.name"), or "0".."D-1" when names are absent or do not count D
  video features -> kind "image", values = the frame's row number in the episode
  ([S, 1] int64, LeRobot's frame_index), frames(indices) decodes those frames
  other features (string, image stored in Parquet, audio) are listed in
  rec.meta["skipped_features"]
All streams of an episode share its times, clock "timestamp": each float32 value of the
timestamp column widened exactly to float64 t, then round(t * 1e9) (round half to even)
as int64 ns; e.g. 1/30 stored as float32 0.0333333351... becomes 33333335 ns.

Video frame of row r (LeRobot's rule, lerobot_dataset._query_videos and
video_utils.decode_video_frames): the video time from_timestamp + t_r in the
episode's MP4 (from_timestamp is the episode's videos/<key>/from_timestamp in v3.0,
where many episodes share one MP4; 0 in v2.x, one MP4 per episode), and the frame whose
PTS is nearest that time, required to be less than tolerance_s (default 1e-4 s, as
LeRobotDataset) away.

Lazy: open reads meta/ only (info.json, episodes, tasks) and checks which data and
video files exist. A stream reads its column for the episode's rows on first access
(only the Parquet row groups holding them); the episode's timestamp column is read once
and shared by its streams.

Errors (DatasetError naming file, episode, stream, index): no meta/info.json, an
unknown codebase_version, unreadable metadata, a data file without a needed column or
whose rows of the episode do not count the metadata's length, a timestamp that is not
finite or repeats / goes back (order="drop" drops those rows instead), a requested frame
the video does not have. An episode whose data file is missing is left out and listed
in rec.meta["missing_episodes"]; a video file that is missing leaves its stream out of
that episode (ep.meta["missing_videos"], rec.meta["missing_videos"]).
"""

import functools
import os

import numpy as np

from . import _lerobot_meta as meta
from ._parquet import OpenFiles, ParquetRows, to_matrix
from ._series import DatasetError, Episode, Recording, Series
from .video import VideoFile

INDEX_COLUMNS = ("timestamp", "frame_index", "episode_index", "index", "task_index")
TOLERANCE_S = 1e-4  # LeRobotDataset's default tolerance_s


def _is_numeric(dtype):
    if not isinstance(dtype, str):
        return False
    try:
        return np.dtype(dtype).kind in "biuf"
    except TypeError:
        return False


def _flatten(names):
    if isinstance(names, str):
        return [names]
    if isinstance(names, dict):
        if len(names) == 1:
            return _flatten(next(iter(names.values())))
        out = []
        for key, value in names.items():
            sub = _flatten(value)
            if sub is None:
                return None
            out += [f"{key}.{s}" for s in sub]
        return out
    if isinstance(names, (list, tuple)):
        out = []
        for value in names:
            sub = _flatten(value)
            if sub is None:
                return None
            out += sub
        return out
    return None


def field_names(feature):
    """The D field names of a numeric feature of info.json (see the module docstring),
    or None (then the stream's fields are "0".."D-1")."""
    width = int(np.prod(feature.get("shape") or [1]))
    flat = _flatten(feature.get("names"))
    return flat if flat is not None and len(flat) == width else None


class _EpisodeRows:
    """The rows of one episode in its data file and their timestamps."""

    def __init__(self, data, episode, shared):
        self.data = data
        self.episode = episode
        self.shared = shared  # v3.0: several episodes per file, found by episode_index
        self.where = f"{data.path}: episode {episode['episode_index']}"
        self._span = None
        self._seconds = None
        self._ns = None

    def span(self):
        if self._span is None:
            e = self.episode["episode_index"]
            if self.shared:
                span = self.data.ranges("episode_index").get(e)
                if span is None:
                    raise DatasetError(f"{self.where}: the data file has no rows of this episode")
            else:
                span = (0, self.data.num_rows)
            if span[1] - span[0] != self.episode["length"]:
                raise DatasetError(f"{self.where}: {span[1] - span[0]} rows where the metadata "
                                   f"gives length {self.episode['length']}")
            self._span = span
        return self._span

    def seconds(self):
        """float64 [S]: the timestamp column widened exactly."""
        if self._seconds is None:
            self._read([])
        return self._seconds

    def times_ns(self):
        if self._ns is None:
            self._ns = np.rint(self.seconds() * 1e9).astype(np.int64)
        return self._ns

    def load(self, name):
        """(times int64 [S] ns, values [S, D]) of a numeric column, read together with
        the timestamps the first time."""
        values = self._read([name])[0]
        return self.times_ns(), values

    def _read(self, names):
        fresh = self._seconds is None
        columns = (["timestamp"] if fresh else []) + names
        what = f"{self.where}: stream {names[0]!r}" if names else self.where
        arrays = self.data.read(columns, *self.span(), what=what)
        if fresh:
            t = to_matrix(arrays[0], what=f"{self.where}: timestamp").reshape(-1)
            t = t.astype(np.float64)
            bad = np.flatnonzero(~np.isfinite(t))
            if bad.size:
                raise DatasetError(f"{self.where}: timestamp at index {int(bad[0])} is "
                                   f"{t[bad[0]]}")
            self._seconds = t
        return [to_matrix(a, what=f"{self.where}: stream {n!r}")
                for a, n in zip(arrays[1 if fresh else 0:], names)]


class _VideoStream:
    """An image stream: times of the episode's rows, frames from its MP4."""

    def __init__(self, rows, name, entry, video, tolerance_s):
        self.rows = rows
        self.name = name
        self.entry = entry
        self.video = video
        self.tolerance_s = tolerance_s
        self.series = None

    def load(self):
        t = self.rows.times_ns()
        return t, np.arange(t.size, dtype=np.int64).reshape(-1, 1)

    def positions(self, indices):
        """(VideoFile, int64 [n]): the frames of rows `indices` in the episode's MP4."""
        row = self.series.values[indices, 0]
        query = self.entry["from_timestamp"] + self.rows.seconds()[row]
        pos = self.video.match(query, self.tolerance_s)
        bad = np.flatnonzero(pos < 0)
        if bad.size:
            raise self._missing(int(bad[0]), indices, row, query)
        return self.video, pos

    def frames(self, indices):
        video, pos = self.positions(indices)
        return video.decode(pos)

    def _missing(self, k, indices, row, query):
        t = self.video.times_s
        have = (f"the video has {t.size} frames, PTS {t[0]:.6f} .. {t[-1]:.6f} s" if t.size
                else "the video has no frames")
        return DatasetError(
            f"{self.video.path}: episode {self.rows.episode['episode_index']}: stream "
            f"{self.name!r}: frame index {int(indices[k])} (row {int(row[k])}, video time "
            f"{query[k]:.6f} s) has no frame within {self.tolerance_s} s; {have}")


def _streams(rows, info, order, present_videos, videos, tolerance_s):
    streams = {}
    for name, feature in info["features"].items():
        if name in INDEX_COLUMNS or not isinstance(feature, dict):
            continue
        dtype = feature.get("dtype")
        if dtype == "video":
            if name not in present_videos:
                continue
            entry = present_videos[name]
            video = videos.setdefault(entry["file"], VideoFile(entry["file"]))
            vs = _VideoStream(rows, name, entry, video, tolerance_s)
            vs.series = Series(name, vs.load, kind="image", clock="timestamp",
                               fields=["frame_index"], frames=vs.frames,
                               video_frames=vs.positions, order=order,
                               where=rows.where,
                               meta={"video_file": entry["file"], "dtype": dtype,
                                     "from_timestamp": entry["from_timestamp"],
                                     "shape": feature.get("shape"),
                                     "info": feature.get("info")})
            streams[name] = vs.series
        elif _is_numeric(dtype):
            streams[name] = Series(
                name, lambda n=name: rows.load(n), kind="vector",
                clock="timestamp", fields=field_names(feature), order=order, where=rows.where,
                meta={"data_file": rows.data.path, "dtype": dtype, "shape": feature.get("shape"),
                      "names": feature.get("names")})
    return streams


def _episode_meta(root, info, ep, present, missing_videos):
    tasks = ep["tasks"]
    out = {"episode_index": ep["episode_index"], "tasks": tasks, "task": "; ".join(tasks),
           "length": ep["length"], "fps": info["fps"], "robot_type": info.get("robot_type"),
           "codebase_version": info["codebase_version"], "path": root,
           "data_file": ep["data_file"], "videos": present, "missing_videos": missing_videos}
    for key in ("dataset_from_index", "dataset_to_index"):
        if key in ep:
            out[key] = ep[key]
    return out


def open(path, *, format="lerobot", order="error", tolerance_s=TOLERANCE_S):
    """Opens a LeRobot dataset folder (the one holding meta/info.json) lazily.

    format       "lerobot" (given by robocache.datasets.open)
    order        "error" (a timestamp that repeats or goes back inside an episode is
                 a DatasetError naming file, episode, stream and index) or "drop"
                 (those rows are left out of every stream and counted in
                 series.meta["dropped"])
    tolerance_s  a video frame's PTS must be less than this from the row's video time
                 (seconds, LeRobot's tolerance_s)
    Returns a Recording: one Episode per episode whose data file exists (index =
    episode_index), meta as in the module docstring. Errors: DatasetError.
    """
    if format != "lerobot":
        raise ValueError(f"format must be 'lerobot', got {format!r}")
    root = os.path.abspath(os.fspath(path))
    info = meta.read_info(root)
    listed, tasks = meta.list_episodes(root, info)
    shared = meta.LAYOUTS[info["codebase_version"]] == 3
    data_files, videos, episodes, open_files = {}, {}, [], OpenFiles()
    missing, missing_videos = [], {}
    isfile = functools.lru_cache(maxsize=None)(os.path.isfile)  # v3.0 files are shared
    for ep in listed:
        if not isfile(ep["data_file"]):
            missing.append(ep["episode_index"])
            continue
        data = data_files.setdefault(ep["data_file"], ParquetRows(ep["data_file"], open_files))
        present = {k: v for k, v in ep["videos"].items() if isfile(v["file"])}
        absent = [k for k in ep["videos"] if k not in present]
        for k in absent:
            missing_videos.setdefault(k, []).append(ep["episode_index"])
        rows = _EpisodeRows(data, ep, shared)
        episodes.append(Episode(ep["episode_index"],
                                _streams(rows, info, order, present, videos, tolerance_s),
                                _episode_meta(root, info, ep, present, absent)))
    skipped = {k: f.get("dtype") for k, f in info["features"].items()
               if k not in INDEX_COLUMNS and isinstance(f, dict)
               and f.get("dtype") != "video" and not _is_numeric(f.get("dtype"))}
    return Recording("lerobot", root, episodes, meta={
        "codebase_version": info["codebase_version"], "fps": info["fps"],
        "robot_type": info.get("robot_type"), "total_episodes": info.get("total_episodes"),
        "episodes_listed": len(listed), "missing_episodes": missing,
        "missing_videos": missing_videos, "tasks": tasks, "skipped_features": skipped,
        "features": info["features"]})
