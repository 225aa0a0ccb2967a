"""`robocache info`: rows, span, median rate, jitter, largest gaps and
non-increasing steps, compared with NumPy on the raw files."""
import re

import numpy as np

from cli_support import ASSOC, CAM, GT, IMU, TUM_GT, load_euroc, load_tum, robocache


def info(robocache, *args, code=0):
    r = robocache("info", *args)
    assert r.returncode == code, r.stderr
    return r.stdout


def number(pattern, text):
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in:\n{text}"
    return m.groups()


def test_tum_groundtruth_gap_after_row_1017(robocache):
    out = info(robocache, TUM_GT)
    t, _ = load_tum(TUM_GT)
    dt = np.diff(t)
    assert "format tum" in out and f"{len(t)} rows" in out
    ms, row, line = number(r"gap 1 +([\d.]+) ms after row (\d+) \(t = [\d.]+ s, line (\d+)\)", out)
    assert int(row) == int(np.argmax(dt)) == 1017
    assert abs(float(ms) - dt.max() / 1e6) < 1e-6
    assert 105 < float(ms) < 115
    assert int(line) == 1017 + 4  # 3 comment lines, rows counted from 0
    hz, median_ms, jitter_ms = number(r"([\d.]+) Hz median \(dt ([\d.]+) ms\); jitter ([\d.]+) ms",
                                      out)
    assert abs(float(median_ms) - np.median(dt) / 1e6) < 1e-6
    assert abs(float(jitter_ms) - np.std(dt) / 1e6) < 1e-6
    assert abs(float(hz) - 1e9 / np.median(dt)) < 1e-3
    second = sorted(range(len(dt)), key=lambda i: (-dt[i], i))[1]
    assert int(number(r"gap 2 +[\d.]+ ms after row (\d+)", out)[0]) == second
    assert "non-increasing steps  0" in out


def test_euroc_imu_and_lists(robocache):
    out = info(robocache, IMU, CAM, ASSOC, GT)
    t, _ = load_euroc(IMU)
    assert f"{IMU}: format euroc, 1 stream, {len(t)} rows, 6 value columns" in out
    assert "'w_RS_S_x [rad s^-1]'" in out
    assert f"{CAM}: format timestamps, 1 stream, 2912 rows" in out
    assert f"{ASSOC}: format timestamps, 1 stream, 792 rows" in out
    first, last = number(r"([\d.]+) \.\. ([\d.]+) s", out)
    assert first == f"{t[0] // 10**9}.{t[0] % 10**9:09d}"
    assert last == f"{t[-1] // 10**9}.{t[-1] % 10**9:09d}"
    assert "200.00" in out


def test_non_increasing_steps_reported(robocache, tmp_path):
    src = tmp_path / "u.csv"
    src.write_text("#timestamp [ns],v\n1000,1\n3000,2\n2000,3\n2000,4\n5000,5\n")
    out = info(robocache, src)
    assert "non-increasing steps  2 (first after row 1, line 4)" in out


def test_info_on_align_output(robocache, tmp_path):
    h5 = tmp_path / "a.h5"
    r = robocache("align", "--stream", f"imu={IMU}", "--stream", f"pos={GT},columns=tx:ty:tz",
                  "--target-file", CAM, "-o", h5)
    assert r.returncode == 0, r.stderr
    out = info(robocache, h5)
    gt_t, _ = load_tum(GT)
    cam = np.loadtxt(CAM, dtype=np.int64)
    n_valid = int(((cam >= gt_t[0]) & (cam <= gt_t[-1])).sum())
    assert "format hdf5" in out and "2 streams, 2912 rows" in out
    assert "stream imu          obs [2912, 6] float32, valid 2912 / 2912" in out
    assert f"stream pos          obs [2912, 3] float32, valid {n_valid} / 2912" in out


def test_info_errors_continue_with_other_files(robocache, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("#timestamp [ns],v\n1000,1\n2000\n")
    r = robocache("info", bad, TUM_GT)
    assert r.returncode == 1
    assert f"{bad}:3: expected 2 fields, found 1" in r.stderr
    assert f"{TUM_GT}: format tum" in r.stdout
    r = robocache("info", tmp_path / "missing.txt")
    assert r.returncode == 3 and "cannot open" in r.stderr


def test_time_column_of_associations(robocache):
    out = info(robocache, "--time-column", "2", ASSOC)
    depth = [line.split()[2] for line in ASSOC.read_text().splitlines()]
    first, last = number(r"([\d.]+) \.\. ([\d.]+) s", out)
    assert first == depth[0] + "000" and last == depth[-1] + "000"  # 6 decimals -> 9
    assert "time column  'column 2' (s)" in out
