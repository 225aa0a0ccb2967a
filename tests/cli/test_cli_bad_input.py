"""Bad inputs given to `robocache align`, `info` and `voxelize`: FIFOs and
devices, directories, huge point-cloud headers, .bin files that fit no column
count, decimal seconds that start with the integer 0, fractions of a
nanosecond, non-finite values, offsets past the int64 range, absurd --rate and
--threads values, raw bytes in messages. Each gets the documented exit code
(docs/cli.md "Bad input") and a message naming what is wrong, quickly (the
fixture's 120 s timeout fails a hang). Expected values come from NumPy or
Python's exact decimal arithmetic."""
import math
import os
import threading
from decimal import Decimal
from pathlib import Path

import h5py
import numpy as np
import pytest

from cli_support import IMU, load_euroc, robocache  # noqa: F401 (robocache is a fixture)
from voxel_oracle import KITTI


def write(path, data):
    Path(path).write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def feed_fifo(path, data):
    """Writes data into the FIFO at path from a thread, once a reader opens it."""
    def run():
        with open(path, "wb") as f:
            f.write(data)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_fifo_input_is_read_once(robocache, tmp_path):
    """align and voxelize read a FIFO (auto-detection included) as they read the
    same bytes from a regular file, also when the writer comes after robocache
    opened the FIFO; info on a FIFO nobody writes to stops after 5 s."""
    text = b"".join(IMU.read_bytes().splitlines(keepends=True)[:400])
    regular = write(tmp_path / "imu.csv", text)
    fifo = tmp_path / "imu.fifo"
    os.mkfifo(fifo)
    want = tmp_path / "want.h5"
    assert robocache("align", "--stream", f"imu={regular}", "--rate", "100", "-q",
                     "-o", want).returncode == 0
    feed_fifo(fifo, text)
    got = tmp_path / "got.h5"
    r = robocache("align", "--stream", f"imu={fifo}", "--rate", "100", "-q", "-o", got)
    assert r.returncode == 0, r.stderr
    with h5py.File(want) as a, h5py.File(got) as b:
        np.testing.assert_array_equal(a["data/demo_0/obs/imu"][:], b["data/demo_0/obs/imu"][:])
    cloud = tmp_path / "cloud.bin"
    os.mkfifo(cloud)
    feed_fifo(cloud, KITTI.read_bytes()[:16 * 1000])
    r = robocache("voxelize", "--voxel-size", "1,1,1", "--mode", "downsample", cloud)
    assert r.returncode == 0, r.stderr
    assert f"{cloud}: bin, 1000 points" in r.stdout
    r = robocache("info", fifo)  # no writer: an error after 5 s
    assert r.returncode == 3 and f"{fifo}: a FIFO that no process writes to" in r.stderr


def test_endless_device_and_directory(robocache, tmp_path):
    r = robocache("align", "--stream", "z=/dev/zero,format=csv", "--rate", "10")
    assert r.returncode == 3
    assert "/dev/zero: not a regular file (a character device) and longer than 256 MiB" in r.stderr
    for args in (("info", tmp_path), ("align", "--stream", f"d={tmp_path}", "--rate", "1"),
                 ("voxelize", "--voxel-size", "1,1,1", "--mode", "downsample",
                  tmp_path / "sub.bin")):
        (tmp_path / "sub.bin").mkdir(exist_ok=True)
        r = robocache(*args)
        assert r.returncode == 3, r.stderr
        assert ": is a directory" in r.stderr and r.stderr.count("robocache") == 1


@pytest.mark.parametrize("name, text, needle", [
    ("vertex.ply", b"ply\nformat binary_little_endian 1.0\nelement vertex 4611686018427387904\n"
     b"property float x\nproperty float y\nproperty float z\nend_header\n" + bytes(24),
     "4611686018427387904 points of 12 bytes are more than any file holds"),
    ("points.pcd", b"VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n"
     b"WIDTH 4611686018427387904\nHEIGHT 1\nPOINTS 4611686018427387904\nDATA binary\n" + bytes(24),
     "4611686018427387904 points of 12 bytes are more than any file holds"),
    ("organized.pcd", b"VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n"
     b"WIDTH 3\nHEIGHT 6148914691236517206\nPOINTS 2\nDATA ascii\n1 2 3\n4 5 6\n",
     "WIDTH 3 x HEIGHT 6148914691236517206 overflows int64"),
])
def test_point_cloud_headers_larger_than_the_file(robocache, tmp_path, name, text, needle):
    path = write(tmp_path / name, text)
    for args in (("info", path), ("voxelize", "--preset", "second-kitti", path)):
        r = robocache(*args)
        assert r.returncode == 1, r.stderr
        assert f"{path}: truncated" in r.stderr or f"{path}: PCD header" in r.stderr
        assert needle in r.stderr


def test_bin_size_and_unknown_extensions(robocache, tmp_path):
    cut = write(tmp_path / "cut.bin", KITTI.read_bytes()[:1000])
    floats = 1000 // 4
    fit = ", ".join(str(c) for c in range(3, 65) if floats % c == 0)
    r = robocache("info", cut)
    assert r.returncode == 1
    assert f"size 1000 bytes is not a multiple of 16" in r.stderr
    assert f"column counts 3..64 that fit: {fit})" in r.stderr
    odd = write(tmp_path / "scan.dat", KITTI.read_bytes()[:1600])
    r = robocache("voxelize", "--preset", "second-kitti", odd)
    assert r.returncode == 1 and "unknown point-cloud file name" in r.stderr
    r = robocache("voxelize", "--preset", "second-kitti", "--columns", "4", odd)
    assert r.returncode == 0, r.stderr
    assert f"{odd}: bin, 100 points" in r.stdout


def ns_of(text):
    """Decimal seconds to ns exactly (the oracle), half away from zero."""
    return int((Decimal(text) * 10**9).to_integral_value(rounding="ROUND_HALF_UP"))


def test_seconds_starting_with_integer_zero(robocache, tmp_path):
    """A LeRobot-style CSV at 30 Hz whose first timestamp is written "0": the
    whole column decides the unit (seconds), so the span is 12.4 s, not 12 ns."""
    stamps = ["0"] + [repr(float(np.float32(i / 30))) for i in range(1, 373)]
    rows = "".join(f"{t},{i},{-i}\n" for i, t in enumerate(stamps))
    csv = write(tmp_path / "so101.csv", "timestamp,shoulder_pan.pos,gripper.pos\n" + rows)
    r = robocache("info", csv)
    assert r.returncode == 0, r.stderr
    assert "'timestamp' (s)" in r.stdout
    want = ns_of(stamps[-1])
    assert f"time span    0.000000000 .. {want // 10**9}.{want % 10**9:09d} s" in r.stdout
    out = tmp_path / "so101.h5"
    r = robocache("align", "--stream", f"arm={csv}", "--target", "arm", "-q", "-o", out)
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        assert f["data/demo_0/timestamps"][:].tolist() == [ns_of(t) for t in stamps]


def test_fraction_of_a_nanosecond(robocache, tmp_path):
    csv = write(tmp_path / "euroc.csv", "#timestamp [ns],x\n1000,1\n2000.5,2\n")
    r = robocache("info", csv)
    assert r.returncode == 1
    assert f"{csv}:3: bad timestamp '2000.5'" in r.stderr and "time-unit=s" in r.stderr


def test_nonfinite_values(robocache, tmp_path):
    """Default: an error naming file:line. nonfinite=drop: those rows are left
    out (counted on stderr) and the stream is interpolated between the others."""
    csv = write(tmp_path / "nf.csv", "t,x\n0,0\n10,1e999\n20,NaN\n30,3\n40,-inf\n50,5\n")
    grid = write(tmp_path / "grid.txt", "".join(f"{t}\n" for t in range(0, 51, 5)))
    r = robocache("align", "--stream", f"a={csv}", "--target-file", grid)
    assert r.returncode == 1
    assert f"{csv}:3: value '1e999' in column 'x' is not finite" in r.stderr
    out = tmp_path / "nf.h5"
    r = robocache("align", "--stream", f"a={csv},nonfinite=drop", "--target-file", grid,
                  "-o", out)
    assert r.returncode == 0, r.stderr
    assert "stream 'a': 3 rows with non-finite values dropped" in r.stderr
    with h5py.File(out) as f:
        got = f["data/demo_0/obs/a"][:, 0]
    want = np.interp(np.arange(0, 51, 5), [0, 30, 50], [0, 3, 5]).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    r = robocache("info", csv)
    assert r.returncode == 0 and "3 rows with NaN or infinite values left out" in r.stdout


def test_offset_past_the_int64_range(robocache):
    r = robocache("align", "--stream", f"imu={IMU},offset=9000000000s", "--rate", "10")
    assert r.returncode == 1
    assert "stream 'imu': offset 9000000000000000000 ns moves its times" in r.stderr
    assert "outside the int64 nanosecond range" in r.stderr


def test_absurd_rates_and_threads(robocache):
    times, _ = load_euroc(IMU)
    span_s = (float(times[-1]) - float(times[0])) * 1e-9
    rate = 14.7e6
    targets = math.floor(span_s * rate) + 1
    r = robocache("align", "--stream", f"imu={IMU}", "--rate", "14.7e6")
    assert r.returncode == 1
    assert f"would take {targets} targets; at most 100000000" in r.stderr
    for rate in ("1e-310", "2e9"):
        r = robocache("align", "--stream", f"imu={IMU}", "--rate", rate)
        assert r.returncode == 2 and "is outside 1 ns .. the int64 ns range" in r.stderr
    for n in ("100000", "2147483647", "-1"):
        r = robocache("align", "--stream", f"imu={IMU}", "--rate", "10", "-j", n)
        assert r.returncode == 2
        assert f"--threads '{n}': expected 0..1024" in r.stderr


def test_messages_escape_raw_bytes_and_skip_the_bom(robocache, tmp_path):
    garbage = write(tmp_path / "garbage.pcd", b"\x89PNG\x1b[2J\r\n\x00\x01junk\n")
    r = robocache("info", garbage)
    assert r.returncode == 1
    err = r.stderr
    assert "unknown PCD header keyword '\\x89PNG\\x1b[2J'" in err
    assert not any(c in err for c in "\x1b\x89\x00")
    bom = write(tmp_path / "bom.csv", b"\xef\xbb\xbft,x\n1,1\n2,2\n")
    r = robocache("info", bom)
    assert r.returncode == 0 and "time column  't' (ns)" in r.stdout
    quoted = write(tmp_path / "tolerance.csv", "t,x\n1,1\n")
    r = robocache("align", "--stream", f"a={quoted},tolerance=1ms", "--rate", "1")
    assert r.returncode == 2
    assert r.stderr.startswith(f"robocache align: --stream 'a={quoted},tolerance=1ms': "
                               "tolerance applies to methods nearest, previous and next")
