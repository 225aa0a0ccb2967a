"""robocache.read_table: the C text readers from Python, against a parse of
the same files written here (decimal strings to ns with int arithmetic,
values with float())."""

import pathlib

import numpy as np
import pytest

import robocache

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "sensors"
IMU = DATA / "euroc_V1_01_easy_imu0.csv"
ASSOC = DATA / "tum_fr1_xyz_rgb_depth_associations.txt"


def _imu_oracle():
    lines = IMU.read_text().splitlines()
    header = [c.strip() for c in lines[0].lstrip("#").split(",")]
    fields = [line.split(",") for line in lines[1:] if line.strip()]
    times = np.array([int(f[0]) for f in fields], dtype=np.int64)
    values = np.array([[float(x) for x in f[1:]] for f in fields])
    return header, times, values


def test_euroc_table():
    header, times, values = _imu_oracle()
    table = robocache.read_table(IMU)
    assert isinstance(table, robocache.Table)
    assert table.format == "euroc" and table.time_unit == "ns"
    assert table.time_column == header[0] == "timestamp [ns]"
    assert table.columns == tuple(header[1:])
    assert table.times.dtype == np.int64 and np.array_equal(table.times, times)
    assert table.values.dtype == np.float64 and np.array_equal(table.values, values)


def test_columns_by_name_index_and_without_unit():
    header, times, values = _imu_oracle()
    table = robocache.read_table(IMU, format="euroc", columns=["a_RS_S_y", 3, header[1]])
    assert table.columns == (header[5], header[3], header[1])
    assert np.array_equal(table.values, values[:, [4, 2, 0]])


def test_time_column_and_unit():
    fields = [line.split() for line in ASSOC.read_text().splitlines() if line.strip()]
    # seconds with 6 decimals, read as ms: the same digits scaled by 10^6
    depth_us = [int(f[2].replace(".", "")) for f in fields]
    table = robocache.read_table(ASSOC, format="timestamps", time_column=2)
    assert table.time_unit == "s" and table.values.shape == (792, 0)
    assert table.times.tolist() == [t * 1000 for t in depth_us]
    as_ms = robocache.read_table(ASSOC, time_column=2, time_unit="ms")
    assert as_ms.times.tolist() == depth_us


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(format="parquet"), ValueError, "format: expected one of auto, euroc"),
    (dict(time_unit="min"), ValueError, "time_unit: expected one of auto, ns"),
    (dict(columns="w_RS_S_x"), TypeError, "columns: expected a list"),
    (dict(columns=[]), ValueError, "columns: empty"),
    (dict(columns=[1.5]), TypeError, "columns: expected a column name"),
    (dict(columns=["a:b"]), ValueError, "cannot be selected by name"),
    (dict(columns=[9]), ValueError, r"column index 9 out of range"),
    (dict(time_column=-1), ValueError, "time_column: column index -1 < 0"),
])
def test_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        robocache.read_table(IMU, **kwargs)


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(OSError, match="cannot open"):
        robocache.read_table(tmp_path / "none.csv", format="csv")


def test_bad_timestamp_names_file_and_line(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("1.5\n2.5\nnan\n")
    with pytest.raises(ValueError, match=r"t\.txt:3: "):
        robocache.read_table(path)
