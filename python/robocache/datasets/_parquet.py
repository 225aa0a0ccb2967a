"""Row ranges and columns of a Parquet file as NumPy arrays, through pyarrow.

A ParquetRows reads the file's footer once, then each `read(column, start, stop)`
decodes only that column of the row groups that overlap the rows asked for. The
open files are kept in an OpenFiles cache shared by the files of a dataset, which
closes the least recently used beyond its size.
"""

from collections import OrderedDict

import numpy as np

from ._deps import require
from ._series import DatasetError


def _pq():
    return require("pyarrow.parquet", purpose="read Parquet files")


class OpenFiles:
    """Open pyarrow ParquetFile objects by path, at most `size` (least recently used
    closed first)."""

    def __init__(self, size=16):
        self.size = size
        self._files = OrderedDict()

    def get(self, path, metadata=None):
        f = self._files.pop(path, None)
        if f is None:
            f = _pq().ParquetFile(path, metadata=metadata, pre_buffer=False)
            while len(self._files) >= self.size:
                self._files.popitem(last=False)[1].close()
        self._files[path] = f
        return f


class ParquetRows:
    """One Parquet file. `names`: its top-level column names; `num_rows`.
    `files`: the OpenFiles cache to open it through (default: its own).
    Errors: DatasetError naming the file (unreadable file, missing column)."""

    def __init__(self, path, files=None):
        self.path = str(path)
        self._files = files if files is not None else OpenFiles(1)
        self._meta = None
        self._names = None
        self._starts = None
        self._groups = {}

    def _metadata(self):
        if self._meta is None:
            try:
                self._meta = self._files.get(self.path).metadata
            except OSError as e:
                raise DatasetError(f"{self.path}: cannot read the Parquet file: {e}") from e
            sizes = [self._meta.row_group(i).num_rows for i in range(self._meta.num_row_groups)]
            self._starts = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
        return self._meta

    @property
    def names(self):
        if self._names is None:
            self._names = self._metadata().schema.to_arrow_schema().names
        return self._names

    @property
    def num_rows(self):
        return int(self._metadata().num_rows)

    def read(self, columns, start=0, stop=None, *, what=""):
        """pyarrow Arrays of `columns` (a list of names), rows [start, stop) of the
        file (stop None: to the end). `what` prefixes a missing-column error
        (episode, stream)."""
        meta = self._metadata()
        stop = self.num_rows if stop is None else stop
        first = int(np.searchsorted(self._starts, start, side="right")) - 1
        last = int(np.searchsorted(self._starts, stop, side="left"))
        groups = list(range(max(first, 0), min(last, meta.num_row_groups)))
        try:
            table = self._files.get(self.path, meta).read_row_groups(groups, columns=columns)
        except OSError as e:
            raise DatasetError(f"{self.path}: cannot read {', '.join(columns)}: {e}") from e
        missing = [c for c in columns if c not in table.column_names]
        if missing:
            where = f" ({what})" if what else ""
            raise DatasetError(f"{self.path}: no column {missing[0]!r}{where}; columns: "
                               f"{', '.join(self.names)}")
        offset = start - int(self._starts[groups[0]]) if groups else 0
        table = table.slice(offset, stop - start)
        return [table.column(c).combine_chunks() for c in columns]

    def ranges(self, column):
        """{value: (start, stop)} of an integer column whose equal values sit in
        contiguous rows (an episode_index column), cached. From the row groups'
        min / max statistics when each row group holds one value (LeRobot writes a
        row group per episode), else from the column read once. DatasetError
        naming the file and value if a value's rows are split."""
        if column not in self._groups:
            values, starts, stops = self._runs(column)
            found = {}
            for v, a, b in zip(values, starts, stops):
                if v in found:
                    raise DatasetError(f"{self.path}: the rows of {column} {v} are not "
                                       f"contiguous (rows {found[v][0]}..{found[v][1] - 1} "
                                       f"and from row {a})")
                found[v] = (a, b)
            self._groups[column] = found
        return self._groups[column]

    def _runs(self, column):
        """(values, starts, stops) of the runs of equal values of `column`."""
        meta = self._metadata()
        leaves = [meta.schema.column(i).path for i in range(meta.num_columns)]
        index = leaves.index(column) if column in leaves else None
        per_group = [] if index is not None else None
        for g in range(meta.num_row_groups if index is not None else 0):
            st = meta.row_group(g).column(index).statistics
            if st is None or not st.has_min_max or st.min != st.max:
                per_group = None
                break
            per_group.append(int(st.min))
        if per_group is not None:
            values, starts, stops = [], [], []
            for g, v in enumerate(per_group):
                if values and values[-1] == v:
                    stops[-1] = int(self._starts[g + 1])
                else:
                    values.append(v)
                    starts.append(int(self._starts[g]))
                    stops.append(int(self._starts[g + 1]))
            return values, starts, stops
        data = self.read([column])[0].to_numpy(zero_copy_only=False)
        cuts = np.flatnonzero(np.diff(data)) + 1
        starts = np.concatenate(([0], cuts)).astype(np.int64).tolist()
        stops = np.concatenate((cuts, [data.size])).astype(np.int64).tolist()
        return [int(data[a]) for a in starts], starts, stops


def to_matrix(array, *, what):
    """NumPy [S, D] of a pyarrow Array: a number / bool column gives D = 1; a
    fixed-size or variable-length list column (nested lists flattened row by row)
    gives D = the list length, which must be the same in every row. dtype as
    stored. DatasetError prefixed by `what` (file, episode, stream) naming the row
    of a null or of a list of another length, or the unsupported type."""
    pa = require("pyarrow")
    pc = require("pyarrow.compute")
    rows = len(array)
    width = 1
    while pa.types.is_list(array.type) or pa.types.is_large_list(array.type) \
            or pa.types.is_fixed_size_list(array.type):
        if array.null_count:
            raise DatasetError(f"{what}: null at row {_first_null(array) // width}")
        if pa.types.is_fixed_size_list(array.type):
            n = array.type.list_size
        else:
            lengths = pc.list_value_length(array).to_numpy(zero_copy_only=False)
            n = int(lengths[0]) if lengths.size else 0
            if lengths.size and np.any(lengths != n):
                row = int(np.flatnonzero(lengths != n)[0])
                raise DatasetError(f"{what}: row {row // width} has a list of "
                                   f"{int(lengths[row])} values where the first row has {n}")
        width *= n
        array = array.flatten()
    if not (pa.types.is_integer(array.type) or pa.types.is_floating(array.type)
            or pa.types.is_boolean(array.type)):
        raise DatasetError(f"{what}: values of type {array.type} are not numbers")
    if array.null_count:
        raise DatasetError(f"{what}: null at row {_first_null(array) // max(width, 1)}")
    return array.to_numpy(zero_copy_only=False).reshape(rows, width)


def _first_null(array):
    return int(np.flatnonzero(array.is_null().to_numpy(zero_copy_only=False))[0])
