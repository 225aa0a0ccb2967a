"""Outputs that cannot or must not be written, and HDF5 files that are not
what they claim: a full disk (RLIMIT_FSIZE, as root or not, no mount needed),
-o naming a symbolic link, a device or an input, SIGINT while the output is
written, and corrupted or foreign .h5 files given to `robocache info`. Each
gets its exit code and message, leaves no file behind and replaces nothing
(docs/cli.md "Bad input")."""
import os
import resource
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest

from cli_support import IMU, ROOT, _binary, robocache  # noqa: F401 (robocache is a fixture)
from voxel_oracle import KITTI


def full_disk(limit):
    """preexec_fn: files of the child cannot grow past `limit` bytes (EFBIG)."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


ALIGN = ("align", "--stream", f"imu={IMU}", "--rate", "50", "-q")
DENSE = ("voxelize", "--preset", "pointpillars-kitti", "--mode", "count", str(KITTI))


@pytest.mark.parametrize("args, name", [(ALIGN, "out.h5"), (DENSE, "grid.npy"),
                                        (DENSE, "grid.h5")])
def test_full_disk(tmp_path, args, name):
    """Exit 3 with the reason, no output and no temporary file: HDF5 is built
    in memory and written by robocache, so libhdf5 never fails mid-flush (it
    used to crash at exit after such a failure)."""
    out = tmp_path / name
    r = subprocess.run([str(_binary()), *args, "-o", str(out)], capture_output=True, text=True,
                       preexec_fn=full_disk(20000), timeout=120)
    assert r.returncode == 3, r.stderr
    assert f"cannot write '{out}': File too large" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_outputs_that_are_not_replaced(robocache, tmp_path):
    data = IMU.read_bytes()[:20000].rsplit(b"\n", 1)[0] + b"\n"
    src = tmp_path / "imu.csv"
    src.write_bytes(data)
    link = tmp_path / "link.h5"
    link.symlink_to(src)
    hard = tmp_path / "hard.h5"
    os.link(src, hard)
    cases = [(link, "it exists and is a symbolic link"), ("/dev/null", "it exists and is a character device"),
             (hard, f"it is the input '{src}'"), (src, f"it is the input '{src}'"),
             (tmp_path, "it exists and is a directory")]
    for out, needle in cases:
        r = robocache("align", "--stream", f"imu={src}", "--rate", "50", "-q", "-o", out)
        assert r.returncode == 3, r.stderr
        assert f"cannot write '{out}': {needle}" in r.stderr
    cloud = tmp_path / "cloud.npy"  # a headerless float32 cloud, read with --columns
    cloud.write_bytes(KITTI.read_bytes()[:1600])
    r = robocache("voxelize", "--voxel-size", "1,1,1", "--mode", "downsample", "--columns", "4",
                  cloud, "-o", cloud)
    assert r.returncode == 3 and f"it is the input '{cloud}'" in r.stderr
    assert src.read_bytes() == data and cloud.read_bytes() == KITTI.read_bytes()[:1600]
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == [
        "cloud.npy", "hard.h5", "imu.csv", "link.h5"]


def test_interrupt_removes_the_temporary_file(tmp_path):
    """SIGINT while the output is written: the process dies of the signal and
    its <out>.tmp-XXXXXX file is gone."""
    out = tmp_path / "grid.npy"
    args = ["voxelize", "--preset", "second-kitti", "--mode", "count", str(KITTI), "-o", str(out)]
    p = subprocess.Popen([str(_binary()), *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline:
        if any(".tmp-" in f.name for f in tmp_path.iterdir()):
            p.send_signal(signal.SIGINT)
            break
        time.sleep(0.0005)
    p.wait(timeout=120)
    if p.returncode == 0:
        pytest.skip("the 360 MB grid was written before the signal arrived")
    assert p.returncode == -signal.SIGINT
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, robocache):
    """An align and a voxelize output to corrupt."""
    d = tmp_path_factory.mktemp("h5")
    imu = d / "imu.csv"
    imu.write_bytes(b"".join(IMU.read_bytes().splitlines(keepends=True)[:200]))
    cloud = d / "cloud.bin"
    cloud.write_bytes(KITTI.read_bytes()[:16 * 500])
    assert robocache("align", "--stream", f"imu={imu}", "--rate", "100", "-q",
                     "-o", d / "align.h5").returncode == 0
    assert robocache("voxelize", "--voxel-size", "1,1,1", "--mode", "downsample", cloud,
                     "-o", d / "voxels.h5").returncode == 0
    return d


def edit(src, dst, fn):
    dst.write_bytes(src.read_bytes())
    with h5py.File(dst, "r+") as f:
        fn(f)
    return dst


def set_attr(name, value):
    """Replaces attribute name ("attr" of the root, or "object@attr")."""
    def fn(f):
        obj, _, attr = name.rpartition("@")
        del f[obj or "/"].attrs[attr]
        f[obj or "/"].attrs[attr] = value
    return fn


def replace(name, data, **kw):
    def fn(f):
        del f[name]
        f.create_dataset(name, data=data, **kw)
    return fn


CORRUPT = [  # (file, edit, message)
    ("voxels.h5", set_attr("points_in", np.arange(1000)),  # 8000 bytes into one int64
     "a robocache_voxel_stats counter attribute is missing or not one integer"),
    ("voxels.h5", set_attr("sources", np.array([b"fixed"], dtype="S5")),
     "no root attributes sources and columns"),
    ("voxels.h5", set_attr("layout", 7), "no root attribute layout"),
    ("align.h5", set_attr("layout", np.array([b"robocache-align/1"])),
     "no root attribute layout = 'robocache-align/1'"),
    ("align.h5", replace("data/demo_0/timestamps", None, shape=(1 << 28,), dtype="i8",
                         chunks=(1 << 20,)),
     "no int64 dataset /data/demo_0/timestamps [T]"),
    ("align.h5", replace("data/demo_0/valid", np.zeros((100, 1), "f4")),
     "no uint8 dataset /data/demo_0/valid [T,K]"),
    ("align.h5", set_attr("data/demo_0/valid@streams", np.arange(3)),
     "attribute 'streams' of /data/demo_0/valid is not a list of strings"),
    ("align.h5", replace("data/demo_0/obs/imu", np.zeros((5, 6), "f8")),
     "a stream named in 'streams' has no float32 obs/<name> [T,D]"),
]


@pytest.mark.parametrize("case", range(len(CORRUPT)))
def test_corrupted_hdf5(robocache, outputs, tmp_path, case):
    """Foreign types, shapes and sizes in a robocache HDF5 file: checked before
    anything is read, exit 3 naming what is wrong (a 1000-element counter
    used to overflow a stack variable; a 2 GiB dataset without stored data was
    allocated and filled)."""
    name, fn, needle = CORRUPT[case]
    path = edit(outputs / name, tmp_path / name, fn)
    r = robocache("info", path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert f"{path}: not a robocache" in r.stderr and needle in r.stderr


def test_damaged_hdf5_bytes(robocache, outputs, tmp_path):
    """Truncated files and flipped bytes: an error or a summary, never a crash
    of robocache (libhdf5 reads them in a child process first; Debian 12's
    libhdf5 1.10.8 crashes on some of these)."""
    for name in ("align.h5", "voxels.h5"):
        data = bytearray((outputs / name).read_bytes())
        rng = np.random.default_rng(7)
        for i in range(40):
            bad = bytearray(data[:len(data) * (i + 1) // 41]) if i % 2 else bytearray(data)
            if i % 2 == 0:
                for k in rng.integers(0, len(bad), 16):
                    bad[k] ^= 1 << int(rng.integers(0, 8))
            path = tmp_path / f"bad{i}.h5"
            path.write_bytes(bytes(bad))
            r = robocache("info", path)
            assert r.returncode in (0, 3), (i, r.returncode, r.stderr)


def test_fifo_named_h5(robocache, tmp_path):
    fifo = tmp_path / "x.h5"
    os.mkfifo(fifo)
    r = robocache("info", fifo)
    assert r.returncode == 3 and f"{fifo}: not a regular file (a FIFO)" in r.stderr


@pytest.mark.parametrize("name", ["libhdf5-crashes-reading-vlen-string.h5",
                                  "libhdf5-loops-in-global-heap.h5"])
def test_files_libhdf5_cannot_read(robocache, tmp_path, name):
    """Damaged files on which Debian 12's libhdf5 crashes (SIGSEGV in H5HG_read)
    or loops (found by fuzz_hdf5, kept in tests/fuzz/regressions/hdf5): exit 3
    within the 10 s given to libhdf5."""
    path = tmp_path / "damaged.h5"
    path.write_bytes((ROOT / "tests" / "fuzz" / "regressions" / "hdf5" / name).read_bytes())
    r = robocache("info", path)
    assert r.returncode == 3, r.stderr
    assert f"{path}: not a robocache" in r.stderr
