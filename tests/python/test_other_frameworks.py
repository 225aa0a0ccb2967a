"""CuPy (CUDA) and JAX (CPU) arrays in, the same framework out. Skipped where
the framework (or a CUDA device for CuPy) is missing."""

import numpy as np
import pytest

import robocache
from conftest import increasing_times, oracle


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    t = increasing_times(rng, 2, 50)
    v = rng.standard_normal((2, 50, 4)).astype(np.float32)
    x = rng.integers(t[:, :1] - 500, t[:, -1:] + 500, size=(2, 33))
    return v, t, x


def _cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device")
    if not robocache.has_cuda():
        pytest.skip("robocache built without CUDA")
    return cupy


def test_cupy_in_cupy_out_on_its_stream():
    cupy = _cupy()
    v, t, x = _problem()
    ref, ref_valid = oracle(v, t, x)
    with cupy.cuda.Stream(non_blocking=True) as s:
        out, valid = robocache.resample(cupy.asarray(v), cupy.asarray(t), cupy.asarray(x),
                                        return_valid=True)
        aligned = robocache.align([robocache.Stream(cupy.asarray(v), cupy.asarray(t))],
                                  cupy.asarray(x), return_valid=False)
        s.synchronize()
    assert isinstance(out, cupy.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(cupy.asnumpy(out), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(cupy.asnumpy(valid), ref_valid)
    np.testing.assert_array_equal(cupy.asnumpy(aligned), cupy.asnumpy(out))


def test_jax_cpu_in_jax_out():
    jax = pytest.importorskip("jax")
    v, t, x = _problem(1)
    ts, xs = (t / 1e3).astype(np.float32), (x / 1e3).astype(np.float32)  # float32 seconds
    cpu = jax.devices("cpu")[0]
    out = robocache.resample(*(jax.device_put(a, cpu) for a in (v, ts, xs)))
    assert isinstance(out, jax.Array)
    ref = oracle(v, ts.astype(np.float64), xs.astype(np.float64))[0]
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5, atol=1e-5)
