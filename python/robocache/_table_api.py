"""robocache.read_table: the library's text readers (src/io reader.h: EuRoC,
TUM, generic CSV, timestamp lists) from Python."""

import os
from typing import NamedTuple, Tuple

from . import _C


class Table(NamedTuple):
    """A timestamped table read by robocache.read_table.

    times        NumPy int64 [rows], nanoseconds, parsed exactly from the
                 file's decimal digits (never through a double); in file order
                 (not checked for order)
    values       NumPy float64 [rows, cols]: the selected value columns
                 (cols = 0 for a timestamp list)
    columns      tuple of cols names, as the file's header writes them
                 ("w_RS_S_x [rad s^-1]"; TUM: "tx" ... "qw")
    time_column  name of the time column ("#timestamp [ns]" -> "timestamp [ns]")
    format       "euroc", "tum", "csv" or "timestamps" (the one read)
    time_unit    "ns", "us", "ms" or "s": the unit the times were read in
    """

    times: object
    values: object
    columns: Tuple[str, ...]
    time_column: str
    format: str
    time_unit: str


def read_table(path, format="auto", columns=None, time_column=None, time_unit="auto"):
    """Reads a timestamped text file into a Table (times int64 ns [rows],
    values float64 [rows, cols], column names, time column, format, unit).

    format       "auto" (from the first lines: a '#' header with commas ->
                 euroc; 8 numeric blank-separated fields -> tum; a leading
                 number -> timestamps; a comma-separated header -> csv),
                 "euroc" (ASL CSV: '#timestamp [ns],...' header), "tum"
                 ("timestamp tx ty tz qx qy qz qw", seconds), "csv" (the first
                 line names the columns) or "timestamps" (one time per line)
    columns      None (every column but the time column) or a list of column
                 names / 0-based indices (the time column counts); a name
                 matches exactly or without its trailing " [unit]"
    time_column  name or index of the time column; None: the format's
                 (column 0)
    time_unit    "auto" (the format's: euroc ns, tum s; csv and timestamps
                 decide from the first data row: a number with '.', 'e' or
                 'E' is seconds, an integer nanoseconds), "ns", "us", "ms", "s"
    Blank lines are skipped and '#' lines after the header are comments.
    Raises OSError (the file cannot be opened or read), ValueError naming
    "path:line: what" (a malformed row, a bad number or timestamp, an unknown
    column listing the available ones, no data rows, a file of no known
    format; bytes that are not UTF-8 shown escaped), TypeError (argument
    types).
    """
    import numpy as np

    times, values, names, time_name, fmt, unit = _C.read_table(
        os.fspath(path), format=format, columns=columns, time_column=time_column,
        time_unit=time_unit)
    return Table(np.from_dlpack(times), np.from_dlpack(values), names, time_name, fmt, unit)
