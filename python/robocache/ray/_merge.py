"""MergeWriter: the writer of write_lerobot's merge on the driver."""

from concurrent import futures

from ._video import VideoPlacer


class MergeWriter(VideoPlacer):
    """VideoPlacer whose Parquet data writes run on one background thread, in
    order: while pyarrow encodes and writes episode i (without the GIL), the
    driver reads the next shard and builds its columns and index statistics.
    Each write is waited for before the next episode's data file is chosen,
    so the file rotation (data_files_size_in_mb) sees the same bytes as
    LeRobotWriter's and the files are the same, byte for byte. A write's
    error is raised by the next write_data, close or finish."""

    def __init__(self, root, fps, robot_type=None, **sizes):
        super().__init__(root, fps, robot_type, **sizes)
        self._thread = futures.ThreadPoolExecutor(1, thread_name_prefix="robocache-parquet")
        self._pending = None

    def _wait(self):
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _write_data(self, table):
        self._wait()
        writer, chunk, file = self._data_file(table.schema)
        self._pending = self._thread.submit(writer.write_table, table)
        return chunk, file

    def _close_data(self):
        self._wait()
        super()._close_data()

    def finish(self, meta):
        try:
            super().finish(meta)
        finally:
            self._thread.shutdown()

    def abort(self):
        if self._pending is not None:  # its error, if any, follows the one being handled
            futures.wait([self._pending])
            self._pending = None
        super().abort()
        self._thread.shutdown()
