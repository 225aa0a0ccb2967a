"""Bad inputs and bad command lines: non-zero exit with the documented code,
a clear message naming file:line (or the available columns), and no output
file left behind. Exit codes: 1 data error, 2 usage error, 3 I/O error."""
import re

import pytest

from cli_support import CAM, GT, IMU, robocache

HEADER = "#timestamp [ns],x [m],y [m]\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def align_fails(robocache, tmp_path, stream_text, *extra, code=1, name="bad.csv"):
    """Runs align with one crafted stream plus the IMU; returns stderr."""
    src = write(tmp_path, name, stream_text)
    out = tmp_path / "out.h5"
    r = robocache("align", "--stream", f"bad={src}", "--stream", f"imu={IMU}",
                  "--target-file", CAM, "-o", out, *extra)
    assert r.returncode == code, r.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file either
    return r.stderr, src


@pytest.mark.parametrize("body, line, what", [
    ("1000,1,2\n3000,3,4\n2000,5,6\n", 4, "before the previous row's"),
    ("1000,1,2\n1000,3,4\n", 3, "equal to the previous row's"),
    ("1000,1,2\nnan,3,4\n", 3, "bad timestamp 'nan'"),
    ("1000,1,2\n2000,3\n", 3, "expected 3 fields, found 2"),
    ("1000,1,2\n2000,3,x1\n", 3, "bad number 'x1'"),
    ("1000,1,2\n2000,3,4,5\n", 3, "expected 3 fields, found 4"),
])
def test_bad_rows_name_file_and_line(robocache, tmp_path, body, line, what):
    err, src = align_fails(robocache, tmp_path, HEADER + body)
    assert f"{src}:{line}:" in err
    assert what in err


def test_nan_in_tum_seconds(robocache, tmp_path):
    err, src = align_fails(robocache, tmp_path, "# t\n1.0 0 0 0 0 0 0 1\nNaN 0 0 0 0 0 0 1\n",
                           name="gt.txt")
    assert f"{src}:3: bad timestamp 'NaN'" in err


def test_empty_stream(robocache, tmp_path):
    err, src = align_fails(robocache, tmp_path, HEADER)
    assert f"{src}: no data rows" in err


def test_unknown_column_lists_available(robocache, tmp_path):
    out = tmp_path / "out.h5"
    r = robocache("align", "--stream", f"imu={IMU},columns=w_RS_S_x:speed", "--rate", "10",
                  "-o", out)
    assert r.returncode == 1
    assert "unknown column 'speed'" in r.stderr
    assert "'timestamp [ns]', 'w_RS_S_x [rad s^-1]'" in r.stderr and "'a_RS_S_z [m s^-2]'" in r.stderr
    assert not out.exists()


def test_target_grid_without_overlap(robocache, tmp_path):
    grid = write(tmp_path, "grid.txt", "100\n200\n300\n")
    out = tmp_path / "out.h5"
    r = robocache("align", "--stream", f"imu={IMU}", "--target-file", grid, "-o", out)
    assert r.returncode == 1
    assert "does not overlap stream 'imu'" in r.stderr
    assert not out.exists()


def test_streams_without_overlap(robocache, tmp_path):
    early = write(tmp_path, "early.csv", HEADER + "1000,1,2\n2000,3,4\n")
    r = robocache("align", "--stream", f"early={early}", "--stream", f"imu={IMU}", "--rate", "50",
                  "-o", tmp_path / "out.h5")
    assert r.returncode == 1
    assert "do not overlap" in r.stderr
    assert not (tmp_path / "out.h5").exists()


def test_unwritable_output(robocache, tmp_path):
    out = tmp_path / "missing-dir" / "out.h5"
    r = robocache("align", "--stream", f"imu={IMU}", "--rate", "50", "-o", out)
    assert r.returncode == 3
    assert f"cannot write '{out}'" in r.stderr
    assert not out.parent.exists()


def test_failed_run_keeps_existing_output(robocache, tmp_path):
    out = write(tmp_path, "out.h5", "previous contents")
    bad = write(tmp_path, "bad.csv", HEADER + "2000,1,2\n1000,3,4\n")
    r = robocache("align", "--stream", f"bad={bad}", "--rate", "50", "-o", out)
    assert r.returncode == 1
    assert out.read_text() == "previous contents"


def test_missing_input_is_io_error(robocache, tmp_path):
    r = robocache("align", "--stream", f"imu={tmp_path / 'nope.csv'}", "--rate", "50")
    assert r.returncode == 3
    assert "cannot open" in r.stderr and "nope.csv" in r.stderr


@pytest.mark.parametrize("args, needle", [
    (["--stream", f"imu={IMU}", "--bogus"], "unknown option '--bogus'"),
    (["--rate", "50"], "at least one --stream"),
    (["--stream", f"imu={IMU}"], "exactly one of --rate, --target, --target-file"),
    (["--stream", f"imu={IMU}", "--rate", "50", "--target", "imu"], "exactly one of"),
    (["--stream", f"imu={IMU}", "--target-file", CAM, "--target-file", CAM], "exactly one of"),
    (["--stream", f"imu={IMU}", "--rate", "-3"], "--rate '-3'"),
    (["--stream", f"imu={IMU},method=cubic", "--rate", "50"], "bad method 'cubic'"),
    (["--stream", f"imu={IMU},max-gap=20", "--rate", "50"], "a unit"),
    (["--stream", f"imu={IMU},colour=red", "--rate", "50"], "unknown key 'colour'"),
    (["--stream", f"imu={IMU},method=linear,tolerance=1ms", "--rate", "50"], "tolerance"),
    (["--stream", f"imu={IMU}", "--stream", f"imu={GT}", "--rate", "50"], "used twice"),
    (["--stream", f"a/b={IMU}", "--rate", "50"], "bad stream name"),
    (["--stream", f"imu={IMU}", "--target", "cam"], "names no --stream"),
    (["--stream", f"imu={IMU}", "--target-file", f"{CAM},method=linear"], "--stream only"),
    (["--stream", f"imu={IMU}", "--target", "imu", "--span", "union"], "--span applies"),
    (["--stream", f"imu={IMU}", "--rate"], "needs a value"),
    (["--stream", f"imu={IMU}", "--rate", "50", "extra"], "unexpected argument"),
])
def test_usage_errors(robocache, args, needle):
    r = robocache("align", *args)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr
    assert "robocache align --help" in r.stderr


def test_help_version_and_unknowns(robocache):
    r = robocache("--help")
    assert r.returncode == 0 and "Usage: robocache" in r.stdout and "align" in r.stdout
    r = robocache("--version")
    assert r.returncode == 0 and re.fullmatch(r"robocache \d+\.\d+\.\d+\n", r.stdout)
    for sub in ("align", "info"):
        r = robocache(sub, "--help")
        assert r.returncode == 0 and f"Usage: robocache {sub}" in r.stdout
    assert robocache().returncode == 2
    r = robocache("frobnicate")
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr
    r = robocache("--frobnicate")
    assert r.returncode == 2 and "unknown option" in r.stderr
    r = robocache("info")
    assert r.returncode == 2 and "at least one FILE" in r.stderr
