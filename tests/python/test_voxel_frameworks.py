"""Voxelization with CuPy (CUDA) and JAX (CPU) arrays: the same framework
out, equal to the NumPy results (and so to the oracles the other
test_voxel_* files check them with). Skipped where the framework (or a CUDA
device for CuPy) is missing."""

import numpy as np
import pytest

from test_other_frameworks import _cupy
from voxel_oracle import KITTI, KITTI_OBJ, PRESETS, load_bin

import robocache


def _batch():
    a, b = load_bin(KITTI, 4), load_bin(KITTI_OBJ, 4)
    return np.concatenate([a, b]), np.array([0, len(a), len(a) + len(b)], np.int64)


def _check(convert, back, kind):
    points, offsets = _batch()
    size, rng, P, M = PRESETS["pointpillars-kitti"]
    calls = [
        lambda p, o: (robocache.voxelize(p, size, rng, mode="mean", offsets=o),),
        lambda p, o: robocache.voxelize_hard(p, size, rng, P, M, offsets=o),
        lambda p, o: robocache.voxel_downsample(p, 0.3, offsets=o),
    ]
    for call in calls:
        got = call(convert(points), convert(offsets))
        want = call(points, offsets)
        for g, w in zip(got, want):
            assert isinstance(g, kind)
            np.testing.assert_array_equal(back(g), w)


def test_cupy_in_cupy_out():
    cupy = _cupy()
    _check(cupy.asarray, cupy.asnumpy, cupy.ndarray)


def test_jax_cpu_in_jax_out():
    jax = pytest.importorskip("jax")
    from jax.experimental import enable_x64  # int64 offsets stay int64

    cpu = jax.devices("cpu")[0]
    with enable_x64():
        _check(lambda a: jax.device_put(a, cpu), np.asarray, jax.Array)
