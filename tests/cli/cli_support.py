"""Shared pieces of the CLI tests: the `robocache` fixture running the built
binary (env ROBOCACHE_BIN, default build/robocache), the data paths, and
raw-file parsers written with NumPy only (independent of robocache's readers).

Test modules import from here (`from cli_support import robocache, IMU`):
tests/cli has no conftest.py, because `from conftest import ...` would clash
with tests/python/conftest.py when both folders run in one pytest session.
Importing this module also puts tests/oracles on sys.path (the NumPy oracles
shared with tests/python: `from voxel_oracle import ...`)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "oracles"))
SENSORS = ROOT / "data" / "sensors"
IMU = SENSORS / "euroc_V1_01_easy_imu0.csv"
GT = SENSORS / "euroc_V1_01_easy_groundtruth_200hz.txt"
CAM = SENSORS / "euroc_V1_01_easy_cam0_timestamps.txt"
TUM_GT = SENSORS / "tum_fr1_xyz_groundtruth.txt"
ASSOC = SENSORS / "tum_fr1_xyz_rgb_depth_associations.txt"


def _binary():
    path = Path(os.environ.get("ROBOCACHE_BIN", ROOT / "build" / "robocache"))
    return path if path.is_absolute() else ROOT / path


@pytest.fixture(scope="session")
def robocache():
    """run(*args) -> CompletedProcess of the robocache binary (text, captured)."""
    binary = _binary()
    if not binary.exists():
        pytest.fail(f"robocache binary not found at {binary}; build it or set ROBOCACHE_BIN")

    def run(*args, cwd=None):
        return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                              cwd=cwd, timeout=120)

    return run


def seconds_to_ns(text):
    """Decimal seconds (a string) to integer ns, exactly, with Python ints."""
    sec, _, frac = text.partition(".")
    sign = -1 if sec.startswith("-") else 1
    frac = (frac + "000000000")[:9]
    return sign * (abs(int(sec)) * 10**9 + int(frac))


def load_euroc(path):
    """(times int64 ns [N], values float64 [N, D]) of an EuRoC CSV."""
    times = np.loadtxt(path, delimiter=",", comments="#", usecols=0, dtype=np.int64)
    values = np.loadtxt(path, delimiter=",", comments="#", dtype=np.float64)[:, 1:]
    return times, values


def load_tum(path):
    """(times int64 ns [N], values float64 [N, 7]) of a TUM trajectory."""
    rows = [line.split() for line in Path(path).read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    times = np.array([seconds_to_ns(r[0]) for r in rows], dtype=np.int64)
    values = np.array([[float(x) for x in r[1:]] for r in rows], dtype=np.float64)
    return times, values


def load_ns_list(path):
    return np.loadtxt(path, dtype=np.int64, ndmin=1)
