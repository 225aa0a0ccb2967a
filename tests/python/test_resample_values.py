"""resample values against independent anchors: numpy.interp, scipy interp1d,
scipy Slerp, and the NumPy oracle of conftest, on random and real data."""

import math

import numpy as np
import pytest
from scipy.interpolate import interp1d
from scipy.spatial.transform import Rotation, Slerp

import robocache
from conftest import increasing_times, oracle


def test_linear_matches_numpy_interp_random(rng):
    t = np.sort(rng.choice(10**6, size=200, replace=False)).astype(np.int64)
    v = rng.standard_normal((200, 5))
    x = rng.integers(t[0], t[-1] + 1, size=1000)
    out = robocache.resample(v, t, x)
    for c in range(5):
        np.testing.assert_allclose(out[:, c], np.interp(x, t, v[:, c]), rtol=1e-12, atol=1e-12)


def test_linear_matches_numpy_interp_on_euroc_imu(euroc_imu, euroc_cam):
    """IMU (200 Hz, int64 ns) resampled at the camera frames (20 Hz)."""
    t, v = euroc_imu
    out, valid = robocache.resample(v, t, euroc_cam, return_valid=True)
    inside = (euroc_cam >= t[0]) & (euroc_cam <= t[-1])
    np.testing.assert_array_equal(valid, inside)
    for c in range(v.shape[1]):
        ref = np.interp(euroc_cam, t, v[:, c])  # numpy.interp clamps outside, as "clamp"
        np.testing.assert_allclose(out[:, c], ref, rtol=1e-12, atol=1e-12)


def test_float_seconds_match_numpy_interp_on_tum(tum_gt, tum_rgb_times):
    t, pos, _ = tum_gt
    out = robocache.resample(pos, t, tum_rgb_times, extrapolate="fill", fill_value=-7.0)
    inside = (tum_rgb_times >= t[0]) & (tum_rgb_times <= t[-1])
    for c in range(3):
        ref = np.where(inside, np.interp(tum_rgb_times, t, pos[:, c]), -7.0)
        np.testing.assert_allclose(out[:, c], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["nearest", "previous", "next"])
def test_step_methods_match_scipy_interp1d(rng, method):
    t = np.cumsum(rng.integers(1, 50, size=300)).astype(np.float64)
    v = rng.standard_normal((300, 3))
    x = rng.uniform(t[0], t[-1], size=500)
    x[:50] = t[rng.integers(0, 300, size=50)]  # exactly on samples
    x[50:60] = (t[10:20] + t[11:21]) / 2  # exact halfway: nearest takes the earlier
    ref = interp1d(t, v, kind=method, axis=0)(x)
    np.testing.assert_array_equal(robocache.resample(v, t, x, method=method), ref)


def test_slerp_matches_scipy_on_euroc_ground_truth(euroc_gt):
    t, _, q = euroc_gt
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    targets = np.linspace(t[0], t[-1], 777)
    out = robocache.resample(q, t, targets, method="slerp")
    ref = Slerp(t, Rotation.from_quat(q))(targets).as_quat()
    # q and -q are the same rotation: compare up to sign
    dots = np.abs(np.sum(out * ref, axis=1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-12)


def test_slerp_wxyz_only_moves_w(euroc_gt):
    t, _, q = euroc_gt
    q = q[:400] / np.linalg.norm(q[:400], axis=1, keepdims=True)
    targets = np.linspace(t[0], t[399], 333)
    xyzw = robocache.resample(q, t[:400], targets, method="slerp")
    wxyz = robocache.resample(q[:, [3, 0, 1, 2]], t[:400], targets, method="slerp",
                              quat_order="wxyz")
    np.testing.assert_allclose(wxyz[:, [1, 2, 3, 0]], xyzw, rtol=1e-12, atol=1e-12)


def test_target_on_sample_is_bit_exact(rng):
    t = increasing_times(rng, 1, 100)[0]
    v = rng.standard_normal((100, 4)).astype(np.float32)
    for method in ["linear", "nearest", "previous", "next", "slerp"]:
        out = robocache.resample(v, t, t, method=method)
        np.testing.assert_array_equal(out, v, err_msg=method)


@pytest.mark.parametrize("extrapolate", ["clamp", "fill", "extrapolate"])
@pytest.mark.parametrize("method", ["linear", "nearest", "previous", "next", "slerp"])
def test_batched_matches_oracle(rng, method, extrapolate):
    B, S, T, D = 3, 20, 40, 8
    t = increasing_times(rng, B, S)
    v = rng.standard_normal((B, S, D))
    if method == "slerp":
        v /= np.linalg.norm(v.reshape(B, S, 2, 4), axis=3, keepdims=True).repeat(4, 3).reshape(
            B, S, D)
    x = rng.integers(t[:, :1] - 3000, t[:, -1:] + 3000, size=(B, T))
    lengths = np.array([S, 5, 1])
    target_lengths = np.array([T, 17, 0])
    out, valid = robocache.resample(v, t, x, lengths=lengths, target_lengths=target_lengths,
                                    method=method, extrapolate=extrapolate, fill_value=2.5,
                                    return_valid=True)
    ref, ref_valid = oracle(v, t, x, lengths, target_lengths, method=method,
                            extrapolate=extrapolate, fill_value=2.5)
    np.testing.assert_array_equal(valid, ref_valid)
    np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-9)


def test_max_gap_tolerance_and_time_offset_in_ns(rng):
    t = np.array([0, 10, 20, 100, 110], dtype=np.int64)
    v = np.arange(5.0)[:, None] * np.array([[1.0, -2.0]])
    x = np.arange(-10, 130, 3, dtype=np.int64)
    for opts in [dict(max_gap=50), dict(max_gap=50, extrapolate="fill", fill_value=0.0),
                 dict(method="nearest", tolerance=4), dict(method="previous", tolerance=7,
                                                           extrapolate="fill", fill_value=9.0),
                 dict(time_offset=-13), dict(time_offset=7, max_gap=80)]:
        out, valid = robocache.resample(v, t, x, return_valid=True, **opts)
        ref, ref_valid = oracle(v[None], t[None], x[None], **opts)
        np.testing.assert_array_equal(valid, ref_valid[0], err_msg=str(opts))
        np.testing.assert_allclose(out, ref[0], rtol=1e-12, err_msg=str(opts))


def test_time_options_in_seconds_for_float_times():
    t_ns = np.array([0, 10, 20, 100, 110], dtype=np.int64) * 10**6
    t_s = t_ns / 1e9
    v = np.arange(5.0)[:, None]
    x_ns = np.arange(-10, 130, 3, dtype=np.int64) * 10**6
    a = robocache.resample(v, t_ns, x_ns, max_gap=50 * 10**6, time_offset=-2 * 10**6,
                           extrapolate="fill", return_valid=True)
    b = robocache.resample(v, t_s, x_ns / 1e9, max_gap=0.05, time_offset=-0.002,
                           extrapolate="fill", return_valid=True)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_allclose(a[0], b[0], rtol=1e-9, atol=1e-9)
    # a whole float is accepted as ns for int64 times
    c = robocache.resample(v, t_ns, x_ns, max_gap=5e7, time_offset=-2e6, extrapolate="fill")
    np.testing.assert_array_equal(c, a[0])


def test_unbatched_and_channel_less_shapes(rng):
    t = increasing_times(rng, 2, 30)
    v = rng.standard_normal((2, 30))
    x = rng.integers(t[:, :1], t[:, -1:], size=(2, 11))
    batched = robocache.resample(v, t, x)
    assert batched.shape == (2, 11)
    one = robocache.resample(v[1], t[1], x[1])
    assert one.shape == (11,)
    np.testing.assert_array_equal(one, batched[1])
    np.testing.assert_allclose(one, np.interp(x[1], t[1], v[1]), rtol=1e-12)
    with_d = robocache.resample(v[..., None], t, x)
    assert with_d.shape == (2, 11, 1)
    np.testing.assert_array_equal(with_d[..., 0], batched)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-6), (np.float16, 1e-3)])
def test_float32_and_float16_values(rng, dtype, rtol):
    t = increasing_times(rng, 1, 50)[0]
    v = rng.standard_normal((50, 3)).astype(dtype)
    x = rng.integers(t[0], t[-1], size=64)
    out = robocache.resample(v, t, x)
    assert out.dtype == dtype
    ref = np.stack([np.interp(x, t, v[:, c].astype(np.float64)) for c in range(3)], axis=1)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=rtol, atol=rtol)
    out32 = robocache.resample(v, t, x, out_dtype="float32")
    assert out32.dtype == np.float32


def test_fill_default_is_nan():
    out = robocache.resample(np.ones((2, 1)), np.array([0, 1]), np.array([-1, 2]),
                             extrapolate="fill")
    assert np.isnan(out).all() and math.isnan(float(out[0, 0]))
