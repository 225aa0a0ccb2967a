"""Framework round trips: NumPy in -> NumPy out, torch in -> torch out,
non-contiguous and read-only inputs, out= arrays, dtypes."""

import numpy as np
import pytest

import robocache
from conftest import increasing_times, oracle, requires_torch, torch


def _problem(rng, B=2, S=40, T=25, D=3):
    t = increasing_times(rng, B, S)
    v = rng.standard_normal((B, S, D))
    x = rng.integers(t[:, :1] - 100, t[:, -1:] + 100, size=(B, T))
    return v, t, x


def test_numpy_in_numpy_out(rng):
    v, t, x = _problem(rng)
    out, valid = robocache.resample(v, t, x, return_valid=True)
    assert type(out) is np.ndarray and type(valid) is np.ndarray
    assert out.dtype == np.float64 and valid.dtype == np.bool_
    assert out.flags.writeable and out.flags.c_contiguous


def test_non_contiguous_inputs(rng):
    v, t, x = _problem(rng, D=6)
    v_nc = np.asfortranarray(v)[:, :, ::2]  # strided channels, Fortran order
    t_nc = np.repeat(t, 2, axis=1)[:, ::2]
    x_nc = np.ascontiguousarray(x.T).T
    assert not v_nc.flags.c_contiguous and not t_nc.flags.c_contiguous
    out = robocache.resample(v_nc, t_nc, x_nc)
    ref = robocache.resample(np.ascontiguousarray(v_nc), t, x)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_allclose(out, oracle(v[:, :, ::2], t, x)[0], rtol=1e-12)


def test_read_only_inputs(rng):
    v, t, x = _problem(rng)
    for a in (v, t, x):
        a.flags.writeable = False
    out = robocache.resample(v, t, x)
    np.testing.assert_allclose(out, oracle(v, t, x)[0], rtol=1e-12)


def test_out_argument_is_filled_in_place(rng):
    v, t, x = _problem(rng)
    out = np.full((2, 25, 3), 123.0, dtype=np.float32)
    valid = np.zeros((2, 25), dtype=np.bool_)
    got, got_valid = robocache.resample(v, t, x, out=out, valid=valid, return_valid=True)
    assert got is out and got_valid is valid
    ref, ref_valid = oracle(v, t, x)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    np.testing.assert_array_equal(valid, ref_valid)


def test_strided_out_argument(rng):
    v, t, x = _problem(rng)
    big = np.zeros((2, 25, 8))
    robocache.resample(v, t, x, out=big[:, :, 2:8:2])
    np.testing.assert_allclose(big[:, :, 2:8:2], oracle(v, t, x)[0], rtol=1e-12)
    assert not big[:, :, 3:8:2].any()


def test_read_only_out_is_rejected(rng):
    v, t, x = _problem(rng)
    out = np.zeros((2, 25, 3))
    out.flags.writeable = False
    with pytest.raises(BufferError, match="out: .*read-only"):
        robocache.resample(v, t, x, out=out)


@requires_torch
def test_torch_in_torch_out(rng):
    v, t, x = _problem(rng)
    out, valid = robocache.resample(torch.from_numpy(v), torch.from_numpy(t),
                                    torch.from_numpy(x), return_valid=True)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    assert valid.dtype == torch.bool
    ref, ref_valid = oracle(v, t, x)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    np.testing.assert_array_equal(valid.numpy(), ref_valid)


@requires_torch
def test_torch_non_contiguous_and_bfloat16(rng):
    v, t, x = _problem(rng, D=4)
    tv = torch.from_numpy(v).to(torch.bfloat16).transpose(0, 1).contiguous().transpose(0, 1)
    assert not tv.is_contiguous()
    out = robocache.resample(tv, torch.from_numpy(t), torch.from_numpy(x))
    assert out.dtype == torch.bfloat16
    ref = oracle(tv.double().numpy(), t, x)[0]
    np.testing.assert_allclose(out.double().numpy(), ref, rtol=1e-2, atol=1e-2)
    out32 = robocache.resample(tv, torch.from_numpy(t), torch.from_numpy(x),
                               out_dtype=torch.float32)
    assert out32.dtype == torch.float32


@requires_torch
def test_torch_out_argument(rng):
    v, t, x = _problem(rng)
    out = torch.empty(2, 25, 3, dtype=torch.float64)
    got, valid = robocache.resample(torch.from_numpy(v), torch.from_numpy(t),
                                    torch.from_numpy(x), out=out, return_valid=True)
    assert got is out
    ref, ref_valid = oracle(v, t, x)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    np.testing.assert_array_equal(valid.numpy(), ref_valid)


@requires_torch
def test_torch_values_numpy_times(rng):
    """values pick the framework of the result; other inputs may differ."""
    v, t, x = _problem(rng)
    out = robocache.resample(torch.from_numpy(v), t, x)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), oracle(v, t, x)[0], rtol=1e-12)


def test_align_matches_per_stream_resample(rng, euroc_imu, euroc_gt, euroc_cam):
    t_imu, imu = euroc_imu
    t_gt, pos, q = euroc_gt
    t_gt_ns = np.round(t_gt * 1e9).astype(np.int64)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    streams = [robocache.Stream(imu, t_imu, name="imu"),
               robocache.Stream(pos, t_gt_ns, name="pos", extrapolate="fill", fill_value=0.0),
               robocache.Stream(q, t_gt_ns, name="quat", method="slerp"),
               robocache.Stream(imu[:, 0], t_imu, name="gyro_x", method="previous",
                                max_gap=10**7)]
    out, valid = robocache.align(streams, euroc_cam, out_dtype="float64")
    assert out.shape == (len(euroc_cam), 6 + 3 + 4 + 1) and valid.shape == (len(euroc_cam), 4)
    col = 0
    for k, s in enumerate(streams):
        ref, ref_valid = robocache.resample(
            s.values, s.times, euroc_cam, method=s.method, extrapolate=s.extrapolate,
            fill_value=s.fill_value, max_gap=s.max_gap, return_valid=True)
        ref = ref.reshape(len(euroc_cam), -1)
        np.testing.assert_array_equal(out[:, col:col + ref.shape[1]], ref)
        np.testing.assert_array_equal(valid[:, k], ref_valid)
        col += ref.shape[1]


def test_align_default_float32_and_batched_lengths(rng):
    t1 = increasing_times(rng, 2, 30)
    t2 = increasing_times(rng, 2, 12, max_step=3000)
    v1, v2 = rng.standard_normal((2, 30, 2)), rng.standard_normal((2, 12, 3))
    x = rng.integers(0, 20000, size=(2, 9))
    L1, L2, TL = np.array([30, 4]), np.array([12, 12]), np.array([9, 5])
    out, valid = robocache.align([robocache.Stream(v1, t1, lengths=L1),
                                  robocache.Stream(v2, t2, lengths=L2, method="nearest")],
                                 x, target_lengths=TL)
    assert out.dtype == np.float32 and out.shape == (2, 9, 5) and valid.shape == (2, 9, 2)
    r1, m1 = oracle(v1, t1, x, L1, TL)
    r2, m2 = oracle(v2, t2, x, L2, TL, method="nearest")
    np.testing.assert_allclose(out, np.concatenate([r1, r2], axis=2), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(valid, np.stack([m1, m2], axis=2))
