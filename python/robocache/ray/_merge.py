"""MergeWriter: the writer of write_lerobot's merge on the driver."""

import os
from concurrent import futures

from ._video import VideoPlacer, _Placed


class MergeWriter(VideoPlacer):
    """VideoPlacer whose Parquet data writes run on one background thread, in
    order: while pyarrow encodes and writes episode i (without the GIL), the
    driver reads the next shard and builds its columns and index statistics.
    Each write is waited for before the next episode's data file is chosen,
    so the file rotation (data_files_size_in_mb) sees the same bytes as
    LeRobotWriter's and the files are the same, byte for byte. A write's
    error is raised by the next write_data, close or finish.

    rotated: None, or called as rotated(mark) each time a data file is
    closed for the episode being written (every episode before it is then in
    closed files); mark: the writer as it was before that episode
    (delta(since, mark) gives what it holds between two marks, restore()
    takes deltas back)."""

    def __init__(self, root, fps, robot_type=None, **sizes):
        super().__init__(root, fps, robot_type, **sizes)
        self._thread = futures.ThreadPoolExecutor(1, thread_name_prefix="robocache-parquet")
        self._pending = None
        self.rotated = None
        self._before = None

    def write(self, ep):
        self._before = self.mark() if self.rotated is not None else None
        try:
            super().write(ep)
        finally:
            self._before = None

    def mark(self):
        """The lengths of what the writer has written (episodes, tasks,
        frames, per video feature its placed files and episode paths), and
        the next data file's position."""
        return {"episodes": len(self.episodes), "tasks": len(self.tasks), "frames": self.frames,
                "data_pos": self._data_pos, "count": dict(self._count),
                "paths": {n: len(v) for n, v in self._video_paths.items()},
                "files": {n: len(v.files) for n, v in self._videos.items()}}

    def closed_files(self, mark):
        """The files (paths relative to the output) complete at `mark`, while
        no data file is open: every data file and the video files placed."""
        data = os.path.join(self.root, "data")
        out = [os.path.relpath(os.path.join(d, n), self.root)
               for d, _, names in os.walk(data) for n in names]
        for n, v in self._videos.items():
            out += [f["file"] for f in v.files[:mark["files"].get(n, 0)]]
        return out

    def delta(self, since, mark):
        """What the writer wrote between two marks (since None: from the
        start), as restore() takes it: its meta/episodes rows, per-episode
        statistics, tasks, video placements, and the state at `mark`."""
        since = since or {"episodes": 0, "tasks": 0, "paths": {}, "files": {}}
        a, b = since["episodes"], mark["episodes"]
        return {"episodes": self.episodes[a:b],
                "stats": {f: {k: v[a:b] for k, v in per.items()}
                          for f, per in self.stats.items()},
                "tasks": list(self.tasks)[since["tasks"]:mark["tasks"]],
                "paths": {n: v[since["paths"].get(n, 0):mark["paths"].get(n, 0)]
                          for n, v in self._video_paths.items()},
                "files": {n: v.files[since["files"].get(n, 0):mark["files"].get(n, 0)]
                          for n, v in self._videos.items()},
                "videos": {n: (v.shape, v.info()) for n, v in self._videos.items()},
                "frames": mark["frames"], "data_pos": mark["data_pos"], "count": mark["count"],
                "features": self.features, "layout": self.layout, "stat_names": self.stat_names}

    def restore(self, deltas):
        """Takes back the deltas of an earlier merge into this fresh writer:
        it then writes on as that merge would have after the last one."""
        for d in deltas:
            self.episodes += d["episodes"]
            for f, per in d["stats"].items():
                for k, v in per.items():
                    self.stats.setdefault(f, {}).setdefault(k, []).extend(v)
            for t in d["tasks"]:
                self.tasks[t] = len(self.tasks)
            for n, v in d["paths"].items():
                self._video_paths.setdefault(n, []).extend(v)
            for n, (shape, info) in d["videos"].items():
                placed = self._videos.setdefault(n, _Placed(shape, info))
                placed.files += d["files"].get(n, [])
            self.frames, self._data_pos, self._count = d["frames"], d["data_pos"], d["count"]
            self.features, self.layout, self.stat_names = (d["features"], d["layout"],
                                                           d["stat_names"])

    def _wait(self):
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _write_data(self, table):
        self._wait()
        writer, chunk, file = self._data_file(table.schema)
        self._pending = self._thread.submit(writer.write_table, table)
        return chunk, file

    def _data_file(self, schema):
        if self._data is not None and self._data[3].tell() >= self.data_mb * 2 ** 20:
            self._close_data()
            if self._before is not None:
                self.rotated(self._before)
        return super()._data_file(schema)

    def _close_data(self):
        self._wait()
        super()._close_data()

    def finish(self, meta):
        try:
            super().finish(meta)
        finally:
            self._thread.shutdown()

    def abort(self):
        self._before = None
        if self._pending is not None:  # its error, if any, follows the one being handled
            futures.wait([self._pending])
            self._pending = None
        super().abort()
        self._thread.shutdown()
