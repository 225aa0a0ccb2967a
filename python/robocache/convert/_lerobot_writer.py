"""LeRobot v3.0 dataset writer (the layout LeRobotDataset(root=...) loads):

  meta/info.json                       codebase_version "v3.0", fps, features, paths
  meta/stats.json                      per feature min/max/mean/std/count/q01..q99
  meta/tasks.parquet                   task_index, indexed by the task string
  meta/episodes/chunk-000/file-000.parquet  one row per episode: length, tasks, data and
                                       video file indices, from/to timestamps, stats/...
  meta/robocache.json                  what was converted and how (policies per series)
  data/chunk-CCC/file-FFF.parquet      one row per frame, episodes back to back
  videos/<key>/chunk-CCC/file-FFF.mp4  image features, episodes back to back (copied
                                       packets or encoded: robocache.convert._video)

A data or video file takes episodes until the bytes written to it reach
data_files_size_in_mb / video_files_size_in_mb (MiB, as LeRobot); the next
episode starts the next file (an episode never splits; the file index rolls
into a new chunk every chunks_size = 1000 files).

timestamp = frame_index / fps (float32), as LeRobot's check_timestamps_sync expects.
"""

import json
import os

import numpy as np

from ..datasets._deps import require
from . import _stats
from ._video import PATH as VIDEO_PATH
from ._video import VideoFeature, next_index
from ._video_copy import Sources

CHUNKS_SIZE = 1000
DATA_MB = 100
VIDEO_MB = 500
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
FRAMES_PER_DECODE = 64
IMAGE_STATS_FRAMES = 100
_INDEX_FEATURES = ("timestamp", "frame_index", "episode_index", "index", "task_index")
# Parquet encodings of the data files: dictionaries only for the columns that
# repeat one value per episode (pyarrow's default tries one on every column,
# which float columns overflow, and took most of the write), frame counters
# delta-coded.
_DATA_PARQUET = dict(use_dictionary=["episode_index", "task_index"],
                     column_encoding={"frame_index": "DELTA_BINARY_PACKED",
                                      "index": "DELTA_BINARY_PACKED"})


def _pa():
    return require("pyarrow", purpose="write LeRobot Parquet files")


class EpisodePart:
    """What one converted episode adds to a dataset, apart from its place in
    it (indices, task index, video offsets): `where`, `task`, `length` (T),
    `layout` ([(feature, kind, width)]), `features` (info.json entries of the
    feature and valid columns, in order), `valid` (names of the bool
    "<feature>.valid" columns), `columns` (name -> float32 [T, D] or bool [T];
    vector and valid columns) and `stats` (name -> per-episode statistics of
    those columns and of the timestamp and frame_index columns, which do not
    depend on the episode's place; robocache.convert._stats.of_array).
    Picklable."""

    __slots__ = ("where", "task", "length", "layout", "features", "valid", "columns", "stats")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


def episode_part(ep, fps):
    """EpisodePart of a converted episode at `fps` (image features: declared
    in `features` and `layout`, written by LeRobotWriter from the episode)."""
    layout = [(f.name, f.kind, f.cols.stop - f.cols.start) for f in ep.features]
    feats, columns, stats = {}, {}, {}
    for f in ep.features:
        if f.kind == "image":
            feats[f.name] = {"dtype": "video", "shape": None,
                             "names": ["height", "width", "channels"]}
            continue
        feats[f.name] = {"dtype": "float32", "shape": [len(f.names)], "names": f.names}
        x = ep.values[:, f.cols].astype(np.float32)
        columns[f.name] = x
        stats[f.name] = _stats.of_array(x)
    for name, v in ep.valid_columns.items():
        feats[name] = {"dtype": "bool", "shape": [1], "names": None}
        columns[name] = v
        stats[name] = _stats.of_array(v.reshape(-1, 1))
    for name, v in _counters(ep.length, fps).items():
        stats[name] = _stats.of_array(v.reshape(-1, 1))
    feats["timestamp"] = {"dtype": "float32", "shape": [1], "names": None}
    for name in _INDEX_FEATURES[1:]:
        feats[name] = {"dtype": "int64", "shape": [1], "names": None}
    return EpisodePart(where=ep.where, task=ep.task, length=ep.length, layout=layout,
                       features=feats, valid=list(ep.valid_columns), columns=columns,
                       stats=stats)


def _counters(length, fps):
    """The timestamp (float32 seconds, frame_index / fps) and frame_index
    (int64) columns of an episode of `length` frames."""
    frame_index = np.arange(length, dtype=np.int64)
    return {"timestamp": (frame_index.astype(np.float64) / fps).astype(np.float32),
            "frame_index": frame_index}


def _feature(ep, name):
    return next(f for f in ep.features if f.name == name)


class LeRobotWriter:
    """write(ep) per converted episode, then finish(meta) once.
    data_files_size_in_mb / video_files_size_in_mb: MiB after which a data /
    video file takes no more episodes (LeRobot's defaults 100 and 500)."""

    def __init__(self, root, fps, robot_type=None, *, data_files_size_in_mb=DATA_MB,
                 video_files_size_in_mb=VIDEO_MB):
        self.pa = _pa()
        import pyarrow.parquet as pq
        self.pq = pq
        self.root = root
        self.fps = fps
        self.robot_type = robot_type
        self.features = None      # name -> info.json entry
        self.layout = None        # [(name, kind, cols)] of the first episode
        self.stat_names = None    # [(name, [stat, ...])] of the first episode's part.stats
        self.episodes = []        # rows of meta/episodes
        self.stats = {}           # feature -> stat -> its value per episode, in order
        self.tasks = {}
        self.frames = 0
        self.data_mb, self.video_mb = data_files_size_in_mb, video_files_size_in_mb
        self._data = None         # (writer, chunk, file, sink)
        self._data_pos = (0, 0)
        self._videos = {}
        self._sources = Sources()
        self._video_paths = {}    # feature -> per episode: passthrough or reencode, why

    def write(self, ep):
        """ep: a converted episode (robocache.convert._convert.Converted), or
        its EpisodePart (vector features only) computed elsewhere."""
        part = ep if isinstance(ep, EpisodePart) else episode_part(ep, self.fps)
        names = [(name, list(st)) for name, st in part.stats.items()]
        if self.features is None:
            self.features, self.layout, self.stat_names = dict(part.features), part.layout, names
        elif part.layout != self.layout:
            raise ValueError(f"{part.where}: its features {part.layout} differ from the "
                             f"first episode's {self.layout}")
        elif names != self.stat_names:
            raise ValueError(f"{part.where}: its statistics {names} differ from the first "
                             f"episode's {self.stat_names}")
        index = len(self.episodes)
        task = self.tasks.setdefault(part.task, len(self.tasks))
        T = part.length
        row = {"episode_index": index, "tasks": [part.task], "length": T}
        cols = {}
        stats = {}
        for name, kind, _ in part.layout:
            if kind == "image":
                row.update(self._write_video(name, ep, stats))
                continue
            x = part.columns[name]
            cols[name] = self.pa.FixedSizeListArray.from_arrays(
                self.pa.array(x.reshape(-1)), x.shape[1])
            stats[name] = part.stats[name]
        for name in part.valid:
            cols[name] = self.pa.array(part.columns[name])
            stats[name] = part.stats[name]
        counters = _counters(T, self.fps)
        index_cols = {**counters, "episode_index": np.full(T, index, np.int64),
                      "index": counters["frame_index"] + self.frames,
                      "task_index": np.full(T, task, np.int64)}
        for name, v in index_cols.items():
            cols[name] = self.pa.array(v)
        stats.update({"timestamp": part.stats["timestamp"],  # (computed with the part)
                      "frame_index": part.stats["frame_index"],
                      "episode_index": _stats.of_constant(index, T),
                      "index": _stats.of_array(index_cols["index"].reshape(-1, 1)),
                      "task_index": _stats.of_constant(task, T)})
        chunk, file = self._write_data(self.pa.table(cols))
        row.update({"data/chunk_index": chunk, "data/file_index": file,
                    "dataset_from_index": self.frames, "dataset_to_index": self.frames + T})
        self.frames += T
        self.episodes.append(row)
        for name, st in stats.items():
            per_stat = self.stats.setdefault(name, {})
            for k, v in st.items():
                per_stat.setdefault(k, []).append(v)

    def _write_data(self, table):
        writer, chunk, file = self._data_file(table.schema)
        writer.write_table(table)
        return chunk, file

    def _data_file(self, schema):
        """(ParquetWriter, chunk, file) of the data file the next episode goes
        to: the open one unless its bytes reached data_files_size_in_mb."""
        if self._data is not None and self._data[3].tell() >= self.data_mb * 2 ** 20:
            self._close_data()
        if self._data is None:
            chunk, file = self._data_pos
            self._data_pos = next_index(chunk, file, CHUNKS_SIZE)
            path = os.path.join(self.root, DATA_PATH.format(chunk_index=chunk, file_index=file))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            sink = self.pa.OSFile(path, "wb")
            self._data = (self.pq.ParquetWriter(sink, schema, **_DATA_PARQUET), chunk, file,
                          sink)
        return self._data[:3]

    def _close_data(self):
        if self._data is not None:
            self._data[0].close()
            self._data[3].close()
            self._data = None

    def _write_video(self, name, ep, stats):
        """Encodes (or copies) the episode's video of image feature `name`,
        puts its statistics in `stats`; returns its meta/episodes columns."""
        f = _feature(ep, name)
        v = self._videos.get(name)
        if v is None:
            v = self._videos[name] = VideoFeature(self.root, name, self.fps,
                                                  self.video_mb * 2 ** 20, CHUNKS_SIZE)
        series = f.series[0]
        idx = np.rint(ep.values[:, f.cols.start]).astype(np.int64)
        clip, reason = self._sources.clip(f, idx, self.fps)
        pick = np.unique(np.linspace(0, len(idx) - 1, min(IMAGE_STATS_FRAMES, len(idx)))
                         .astype(np.int64))
        sample = []
        if clip is not None:
            chunk, file, t0, t1 = v.copy(clip, ep.where)
            sample = [series.frames(idx[pick[w0:w0 + FRAMES_PER_DECODE]])
                      for w0 in range(0, len(pick), FRAMES_PER_DECODE)]
        else:
            def chunks():
                for w0 in range(0, len(idx), FRAMES_PER_DECODE):
                    frames = series.frames(idx[w0:w0 + FRAMES_PER_DECODE])
                    sample.append(frames[pick[(pick >= w0) & (pick < w0 + len(frames))] - w0])
                    yield frames
            chunk, file, t0, t1 = v.encode(chunks(), ep.where)
        # per channel in [0, 1], from up to IMAGE_STATS_FRAMES frames spread over the episode
        stats[name] = _stats.of_images(np.concatenate(sample))
        self._record_path(name, ep, {"path": "reencode" if clip is None else "passthrough",
                                     "reason": reason, "chunk_index": chunk,
                                     "file_index": file})
        prefix = f"videos/{name}/"
        return {prefix + "chunk_index": chunk, prefix + "file_index": file,
                prefix + "from_timestamp": t0, prefix + "to_timestamp": t1}

    def _record_path(self, name, ep, path):
        """Where the episode's video of feature `name` went and how (`path`:
        passthrough or reencode, why, chunk and file index): in its sync
        report and in meta/robocache.json."""
        ep.report.setdefault("videos", {})[name] = path
        self._video_paths.setdefault(name, []).append(
            dict(path, episode_index=len(self.episodes), episode=ep.where))

    def finish(self, meta):
        """Closes the files and writes meta/ (meta: dict for meta/robocache.json,
        completed with "videos": per image feature its files and the path,
        passthrough or reencode, each episode took and why)."""
        self._close_data()
        for name, v in self._videos.items():
            v.close()
            self.features[name]["shape"] = list(v.shape)
            self.features[name]["info"] = v.info()
        if self._videos:
            meta = dict(meta, videos={name: {"files": v.files,
                                             "episodes": self._video_paths[name]}
                                      for name, v in self._videos.items()})
        os.makedirs(os.path.join(self.root, "meta", "episodes", "chunk-000"), exist_ok=True)
        # each per-episode statistic as one array [episodes, ...], for both files
        stacked = {f: {k: _stacked(values) for k, values in per_stat.items()}
                   for f, per_stat in self.stats.items()}
        self._write_episodes(stacked)
        self._write_tasks()
        stats = {n: _stats.aggregate(stacked[n]) for n in self.features}
        self._json("meta/stats.json", stats)
        self._json("meta/info.json", self._info())
        self._json("meta/robocache.json", meta)

    def _info(self):
        return {"codebase_version": "v3.0", "robot_type": self.robot_type,
                "total_episodes": len(self.episodes), "total_frames": self.frames,
                "total_tasks": len(self.tasks), "chunks_size": CHUNKS_SIZE,
                "data_files_size_in_mb": self.data_mb, "video_files_size_in_mb": self.video_mb,
                "fps": self.fps, "splits": {"train": f"0:{len(self.episodes)}"},
                "data_path": DATA_PATH, "video_path": VIDEO_PATH if self._videos else None,
                "features": self.features}

    def _write_episodes(self, stacked):
        columns = {k: [row.get(k) for row in self.episodes] for k in self.episodes[0]}
        for feat, per_stat in stacked.items():
            for k, arr in per_stat.items():
                columns[f"stats/{feat}/{k}"] = arr if arr is not None else self.stats[feat][k]
        n = len(self.episodes)
        columns["meta/episodes/chunk_index"] = [0] * n
        columns["meta/episodes/file_index"] = [0] * n
        table = self.pa.table({k: _column(self.pa, v) for k, v in columns.items()})
        self.pq.write_table(table, os.path.join(self.root, "meta", "episodes", "chunk-000",
                                                "file-000.parquet"))

    def _write_tasks(self):
        # pandas' own layout (what DataFrame.to_parquet writes for a frame indexed by
        # task): LeRobot reads it with pandas.read_parquet.
        tasks = sorted(self.tasks, key=self.tasks.get)
        pandas_meta = {"index_columns": ["__index_level_0__"], "column_indexes": [],
                       "columns": [{"name": "task_index", "field_name": "task_index",
                                    "pandas_type": "int64", "numpy_type": "int64",
                                    "metadata": None},
                                   {"name": None, "field_name": "__index_level_0__",
                                    "pandas_type": "unicode", "numpy_type": "object",
                                    "metadata": None}],
                       "attributes": {}, "creator": {"library": "robocache"}}
        table = self.pa.table({"task_index": self.pa.array([self.tasks[t] for t in tasks],
                                                           self.pa.int64()),
                               "__index_level_0__": self.pa.array(tasks, self.pa.string())})
        table = table.replace_schema_metadata({"pandas": json.dumps(pandas_meta)})
        self.pq.write_table(table, os.path.join(self.root, "meta", "tasks.parquet"))

    def _json(self, rel, obj):
        with open(os.path.join(self.root, rel), "w") as fh:
            json.dump(obj, fh, indent=4)

    def abort(self):
        self._close_data()
        for v in self._videos.values():
            v.abort()


def _stacked(values):
    """values (equal-shape nested lists of floats or ints: per-episode
    statistics) as one float64 or int64 array, or None for other values."""
    if not isinstance(values[0], list):
        return None
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged
        return None
    return arr if arr.size and arr.dtype in (np.float64, np.int64) else None


def _column(pa, values):
    """pa.array(values), the column Table.from_pylist would make; values
    that _stacked turns into one array (or that array itself) are built from
    it instead of inferred value by value."""
    arr = values if isinstance(values, np.ndarray) else _stacked(values)
    if arr is None:
        return pa.array(values)
    out = pa.array(arr.reshape(-1))
    for width in reversed(arr.shape[1:]):
        out = pa.ListArray.from_arrays(
            pa.array(np.arange(0, len(out) + 1, width, dtype=np.int32)), out)
    return out
