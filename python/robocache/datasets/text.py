"""Text recordings: EuRoC / ASL CSV, TUM trajectories, generic CSV and
timestamp lists, read by the C library's readers (robocache.read_table:
times parsed exactly from their decimal digits to int64 ns, errors
"path:line: what").

A text file has no index to read first: rd.open reads the whole file once
(one pass of the C reader) and its streams are slices of that table.
"""

import os

import numpy as np

from .. import _C
from .._table_api import read_table
from ._series import DatasetError, Episode, Recording, Series

_TEXT_FORMATS = ("euroc", "tum", "csv", "timestamps")
# EuRoC imu0/data.csv: stream name -> its columns (the names without " [unit]")
_EUROC_IMU = {"angular_velocity": ("w_RS_S_x", "w_RS_S_y", "w_RS_S_z"),
              "linear_acceleration": ("a_RS_S_x", "a_RS_S_y", "a_RS_S_z")}
# TUM trajectory columns: stream name -> (columns, kind)
_TUM = {"position": (("tx", "ty", "tz"), "vector"),
        "orientation": (("qx", "qy", "qz", "qw"), "quaternion")}


def detect(path):
    """"euroc", "tum", "csv" or "timestamps", from the file's first lines (the
    C detector: a '#' header with commas -> euroc; 8 numeric blank-separated
    fields -> tum; a leading number -> timestamps; a comma-separated header ->
    csv). DatasetError when the file is none of them; OSError when it cannot
    be read."""
    try:
        fmt = _C.detect_format(os.fspath(path))
    except ValueError as e:
        raise DatasetError(str(e)) from None
    if fmt not in _TEXT_FORMATS:
        raise DatasetError(f"{path}: a {fmt} file, not a text recording (euroc, tum, csv or "
                           "timestamps)")
    return fmt


def _unitless(name):
    """"w_RS_S_x [rad s^-1]" -> "w_RS_S_x"."""
    return name.split(" [", 1)[0] if name.endswith("]") else name


def _stream_name(path):
    """The file's stem, or its folder's name for the ASL layout's data.csv
    (mav0/imu0/data.csv -> "imu0")."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "data":
        return os.path.basename(os.path.dirname(os.path.abspath(path))) or stem
    return stem


def _series(name, table, cols, *, kind, order, where, meta):
    """A Series of the columns `cols` (indices into table.values) of table."""
    def load():
        return table.times, np.ascontiguousarray(table.values[:, cols])

    fields = [_unitless(table.columns[c]) for c in cols]
    return Series(name, load, kind=kind, clock="timestamp", fields=fields, order=order,
                  where=where, meta=meta)


def _streams(path, fmt, table, explicit_columns, order):
    """name -> Series of one text file, as the module docstring of open says."""
    where = os.fspath(path)
    meta = {"source": where, "columns": list(table.columns), "time_column": table.time_column,
            "time_unit": table.time_unit}
    names = [_unitless(c) for c in table.columns]
    groups = {}
    if fmt == "tum":
        groups = {stream: ([names.index(c) for c in cols], kind)
                  for stream, (cols, kind) in _TUM.items()}
    elif fmt == "euroc" and explicit_columns is None and \
            all(c in names for cols in _EUROC_IMU.values() for c in cols):
        groups = {stream: ([names.index(c) for c in cols], "vector")
                  for stream, cols in _EUROC_IMU.items()}
    else:
        kind = "event" if fmt == "timestamps" else "vector"
        groups = {_stream_name(path): (list(range(len(names))), kind)}
    return {stream: _series(stream, table, cols, kind=kind, order=order, where=where, meta=meta)
            for stream, (cols, kind) in groups.items()}


def open(path, *, format, columns=None, time_column=None, time_unit="auto", order="error", **_):
    """One text file as a Recording of one episode (clock "timestamp"):

      euroc       an IMU file (w_RS_S_x..z and a_RS_S_x..z columns, as
                  mav0/imu0/data.csv): streams "angular_velocity" [S,3]
                  (rad/s) and "linear_acceleration" [S,3] (m/s^2); any other
                  EuRoC file, or columns= given: one stream named after the
                  file with the (selected) value columns
      tum         "position" (tx ty tz, kind "vector") and "orientation"
                  (qx qy qz qw, kind "quaternion", x y z w order)
      csv         one stream named after the file with the selected columns
      timestamps  one stream of kind "event" named after the file, values
                  [S, 0] (no columns)
    A stream named after the file takes its stem, or its folder's name for
    the ASL layout's data.csv ("imu0"). fields are the column names without
    their " [unit]"; meta holds the file's columns as written, the time column
    and the unit the times were read in.
    columns, time_column, time_unit: as robocache.read_table (columns=
    selects value columns of csv and euroc files). order: "error" (a time not
    after the previous one is a DatasetError naming file, stream and index)
    or "drop". Errors of the reader: DatasetError "path:line: what", OSError.
    """
    if format not in _TEXT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(_TEXT_FORMATS)}; got {format!r}")
    if columns is not None and format in ("tum", "timestamps"):
        raise DatasetError(f"{path}: columns= selects value columns of csv and euroc files; "
                           f"{format} files have fixed streams")
    try:
        table = read_table(path, format=format, columns=columns, time_column=time_column,
                           time_unit=time_unit)
    except ValueError as e:
        raise DatasetError(str(e)) from None
    episode = Episode(0, _streams(path, format, table, columns, order),
                      meta={"source": os.fspath(path)})
    return Recording(format, path, [episode], meta={"time_unit": table.time_unit})
