"""robocache.datasets on the text formats (EuRoC, TUM, CSV, timestamp lists):
the real files of data/sensors through rd.open against a parse written here
(times from their decimal strings with Python's decimal and int arithmetic,
exact to the ns; values with float()), and the C reader's errors surfaced
with file and line."""

import pathlib
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

import robocache
import robocache.datasets as rd
from robocache.datasets import text

DATA = pathlib.Path(__file__).resolve().parents[3] / "data" / "sensors"
IMU = DATA / "euroc_V1_01_easy_imu0.csv"
CAM = DATA / "euroc_V1_01_easy_cam0_timestamps.txt"
EUROC_GT = DATA / "euroc_V1_01_easy_groundtruth_200hz.txt"
TUM_GT = DATA / "tum_fr1_xyz_groundtruth.txt"
ASSOC = DATA / "tum_fr1_xyz_rgb_depth_associations.txt"


def ns(decimal_text, unit_digits):
    """round(value * 10^unit_digits) of a decimal string, halves away from zero."""
    scaled = Decimal(decimal_text).scaleb(unit_digits)
    return int(scaled.to_integral_value(rounding=ROUND_HALF_UP))


def rows(path, sep=None):
    """The data lines of a text file split into fields ('#' lines skipped)."""
    lines = pathlib.Path(path).read_text().splitlines()
    return [[f.strip() for f in line.split(sep)] for line in lines
            if line.strip() and not line.lstrip().startswith("#")]


def parse(path, sep, unit_digits, time_field=0):
    """(times int64 ns, values float64 [rows, fields - 1]) of every line."""
    fields = rows(path, sep)
    times = np.array([ns(f[time_field], unit_digits) for f in fields], dtype=np.int64)
    values = np.array([[float(x) for i, x in enumerate(f) if i != time_field] for f in fields])
    return times, values


@pytest.mark.parametrize("path,fmt", [(IMU, "euroc"), (CAM, "timestamps"), (EUROC_GT, "tum"),
                                      (TUM_GT, "tum"), (ASSOC, "timestamps")])
def test_detect(path, fmt):
    assert text.detect(path) == fmt
    assert rd.detect(str(path)) == fmt
    assert rd.open(path).format == fmt


def test_euroc_imu_streams():
    times, values = parse(IMU, ",", 0)
    rec = rd.open(IMU)
    (ep,) = rec.episodes
    assert list(ep.streams) == ["angular_velocity", "linear_acceleration"]
    gyro, accel = ep["angular_velocity"], ep["linear_acceleration"]
    for s, cols, fields in ((gyro, slice(0, 3), ["w_RS_S_x", "w_RS_S_y", "w_RS_S_z"]),
                            (accel, slice(3, 6), ["a_RS_S_x", "a_RS_S_y", "a_RS_S_z"])):
        assert s.kind == "vector" and s.clock == "timestamp" and s.fields == fields
        assert np.array_equal(s.times, times)
        assert s.values.dtype == np.float64 and np.array_equal(s.values, values[:, cols])
    assert len(times) == 29120 and times[0] == 1403715273262142976


def test_euroc_columns_give_one_stream_named_after_the_file():
    times, values = parse(IMU, ",", 0)
    (ep,) = rd.open(IMU, columns=["a_RS_S_z", 1]).episodes
    (s,) = ep.streams.values()
    assert s.name == "euroc_V1_01_easy_imu0"
    assert s.fields == ["a_RS_S_z", "w_RS_S_x"]
    assert np.array_equal(s.values, values[:, [5, 0]]) and np.array_equal(s.times, times)


def test_asl_data_csv_stream_takes_its_folder_name(tmp_path):
    folder = tmp_path / "mav0" / "leica0"
    folder.mkdir(parents=True)
    (folder / "data.csv").write_text("#timestamp [ns],p_RS_R_x [m]\n100,1.5\n200,2.5\n")
    (ep,) = rd.open(folder / "data.csv").episodes
    assert list(ep.streams) == ["leica0"]
    assert ep["leica0"].fields == ["p_RS_R_x"]
    assert ep["leica0"].times.tolist() == [100, 200]


@pytest.mark.parametrize("path", [EUROC_GT, TUM_GT])
def test_tum_position_and_orientation(path):
    times, values = parse(path, None, 9)
    (ep,) = rd.open(path).episodes
    assert list(ep.streams) == ["position", "orientation"]
    pos, quat = ep["position"], ep["orientation"]
    assert pos.kind == "vector" and pos.fields == ["tx", "ty", "tz"]
    assert quat.kind == "quaternion" and quat.fields == ["qx", "qy", "qz", "qw"]
    assert np.array_equal(pos.times, times) and np.array_equal(quat.times, times)
    assert np.array_equal(pos.values, values[:, :3])
    assert np.array_equal(quat.values, values[:, 3:])


def test_tum_seconds_are_exact_nanoseconds():
    (ep,) = rd.open(EUROC_GT).episodes
    # 1403715274.30214 s is 1403715274302140000 ns; through a double it is not
    assert ep["position"].times[0] == 1403715274302140000
    assert int(np.float64(1403715274.30214) * 1e9) != 1403715274302140000


def test_timestamps_are_one_event_stream():
    times = np.array([int(f[0]) for f in rows(CAM)], dtype=np.int64)
    (ep,) = rd.open(CAM).episodes
    (s,) = ep.streams.values()
    assert s.name == "euroc_V1_01_easy_cam0_timestamps"
    assert s.kind == "event" and s.clock == "timestamp" and s.fields == []
    assert s.values.shape == (len(times), 0)
    assert np.array_equal(s.times, times)


@pytest.mark.parametrize("column", [0, 2])
def test_associations_time_column(column):
    times = np.array([ns(f[column], 9) for f in rows(ASSOC)], dtype=np.int64)
    (ep,) = rd.open(ASSOC, time_column=column).episodes
    (s,) = ep.streams.values()
    assert np.array_equal(s.times, times) and s.values.shape == (792, 0)


def test_csv_selected_columns_and_unit(tmp_path):
    path = tmp_path / "joints.csv"
    path.write_text("stamp_ms,q0,q1,gripper\n"
                    "0.5,1.0,2.0,0\n"
                    "\n"
                    "10.25,1.5,2.5,1\n"
                    "# a comment\n"
                    "20.000001,-1e-3,3,1\n")
    (ep,) = rd.open(path, format="csv", columns=["q1", "gripper"], time_unit="ms").episodes
    (s,) = ep.streams.values()
    assert s.name == "joints" and s.fields == ["q1", "gripper"]
    assert s.times.tolist() == [ns("0.5", 6), ns("10.25", 6), ns("20.000001", 6)]
    assert s.values.tolist() == [[2.0, 0.0], [2.5, 1.0], [3.0, 1.0]]


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("#timestamp [ns],w_RS_S_x\n1,0.5\n2,0.25\n3\n")
    with pytest.raises(rd.DatasetError, match=r"bad\.csv:4: "):
        rd.open(path)
    with pytest.raises(ValueError, match=r"bad\.csv:4: "):
        robocache.read_table(path)


def test_unknown_column_lists_the_available_ones():
    with pytest.raises(rd.DatasetError, match=r"unknown column 'w_x'; available columns: "
                                              r"'timestamp \[ns\]', 'w_RS_S_x \[rad s\^-1\]'"):
        rd.open(IMU, columns=["w_x"])


def test_file_of_no_text_format_is_a_dataset_error(tmp_path):
    path = tmp_path / "blob.txt"
    path.write_bytes(b"hello world\nfoo bar\n")
    with pytest.raises(rd.DatasetError, match="cannot tell the format"):
        text.detect(path)
    with pytest.raises(rd.DatasetError, match="cannot tell the format"):
        rd.open(path)


def test_times_that_go_back_name_stream_and_index(tmp_path):
    path = tmp_path / "imu0.csv"
    header = "#timestamp [ns]," + ",".join(f"{c} [x]" for cols in (
        ("w_RS_S_x", "w_RS_S_y", "w_RS_S_z"), ("a_RS_S_x", "a_RS_S_y", "a_RS_S_z")) for c in cols)
    path.write_text(header + "\n10,1,2,3,4,5,6\n20,1,2,3,4,5,6\n15,1,2,3,4,5,6\n30,1,2,3,4,5,6\n")
    (ep,) = rd.open(path).episodes
    with pytest.raises(rd.DatasetError, match=r"imu0\.csv: stream 'angular_velocity': time goes "
                                              r"back at index 2"):
        ep["angular_velocity"].times
    (ep,) = rd.open(path, order="drop").episodes
    s = ep["linear_acceleration"]
    assert s.times.tolist() == [10, 20, 30] and s.meta["dropped"] == 1


def test_columns_are_refused_for_fixed_streams():
    with pytest.raises(rd.DatasetError, match="columns= selects value columns of csv and euroc"):
        rd.open(TUM_GT, columns=["tx"])


def test_orientation_feeds_align():
    """The orientation stream goes to robocache.align as a slerp stream: the
    result is scipy's Slerp between the file's quaternions."""
    from scipy.spatial.transform import Rotation, Slerp

    (ep,) = rd.open(EUROC_GT).episodes
    quat = ep["orientation"]
    targets = quat.times[10:20] + 2_500_000  # halfway between samples
    out, valid = robocache.align([robocache.Stream.from_series(quat)], targets)
    t0 = quat.times[0]
    oracle = Slerp((quat.times[:30] - t0) * 1e-9, Rotation.from_quat(quat.values[:30]))(
        (targets - t0) * 1e-9).as_quat()
    assert valid.all()
    error = (Rotation.from_quat(out) * Rotation.from_quat(oracle).inv()).magnitude()
    step = (Rotation.from_quat(quat.values[11:21]) *
            Rotation.from_quat(quat.values[10:20]).inv()).magnitude()
    assert np.all(error < 1e-6) and np.all(step > 5e-5)  # far below one sample's rotation
