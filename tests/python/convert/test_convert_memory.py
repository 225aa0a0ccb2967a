"""A recording larger than the process' address-space limit converts: image
frames are read and written 64 at a time. A rosbag2 MCAP of raw 640x480 rgb8
frames (frame i = the same random image rolled i columns) plus a 210 Hz IMU is
written by tests/oracles/camera_bag.py, larger than an RLIMIT_AS set in the converting subprocess to
the peak of converting a 30-frame bag plus 200 MB (the interpreter and its
imports alone reserve most of that). The output's frames equal np.roll."""

import os
import pathlib
import shutil
import subprocess
import sys

import h5py
import numpy as np

S = 10**9
H, W = 480, 640

WRITE = str(pathlib.Path(__file__).resolve().parents[2] / "oracles" / "camera_bag.py")

CONVERT = r"""
import resource, sys
limit = int(sys.argv[3])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from robocache.convert import convert
convert([sys.argv[1]], sys.argv[2], to="robomimic", reference="/cam", overwrite=True,
        streams=["observation.imu=/imu/angular_velocity", "observation.cam=/cam",
                 "action=/imu/linear_acceleration"])
status = open("/proc/self/status").read()
print(int(status.split("VmPeak:")[1].split()[0]) * 1024)
"""


def run(*args):
    """python ARGS in a new interpreter (a script's path, or "-c" and source, then its
    arguments); returns its stdout."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    p = subprocess.run([sys.executable, *map(str, args)], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def bag_bytes(path):
    return sum(f.stat().st_size for f in path.iterdir())


def test_bag_larger_than_the_memory_limit(tmp_path):
    small = tmp_path / "small"
    run(WRITE, small, 30, 0, H, W)
    floor = int(run("-c", CONVERT, small, tmp_path / "small.hdf5", 0).split()[-1])
    limit = floor + 200 * 2**20
    frames = int(1.1 * limit / (H * W * 3)) + 1
    big = tmp_path / "big"
    out = tmp_path / "big.hdf5"
    try:
        run(WRITE, big, frames, 0, H, W)
        assert bag_bytes(big) > limit
        run("-c", CONVERT, big, out, limit)
        base = np.random.default_rng(0).integers(0, 255, (H, W, 3), dtype=np.uint8)
        with h5py.File(out, "r") as f:
            cam = f["data/demo_0/obs/cam"]
            assert cam.shape == (frames, H, W, 3)
            for i in (0, frames // 2, frames - 1):
                np.testing.assert_array_equal(cam[i], np.roll(base, i, axis=1))
            imu = f["data/demo_0/obs/imu"][()]
            np.testing.assert_array_equal(imu[:, 0], np.arange(frames))  # V(i, 0, 0) at t
    finally:
        shutil.rmtree(big, ignore_errors=True)
        if out.exists():
            out.unlink()
