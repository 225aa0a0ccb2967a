"""Hypothesis property tests: for random strictly increasing timestamps,
lengths, targets, methods and options, robocache equals the NumPy oracle of
conftest (written from the semantics, not from the implementation)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import robocache
from conftest import oracle

METHODS = ["linear", "nearest", "previous", "next"]


@st.composite
def problems(draw):
    B = draw(st.integers(1, 3))
    S = draw(st.integers(1, 12))
    T = draw(st.integers(0, 10))
    D = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    start = draw(st.integers(-10**12, 10**12))
    steps = rng.integers(1, draw(st.sampled_from([2, 50, 10**6])) + 1, size=(B, S))
    t = start + np.cumsum(steps, axis=1)
    lo, hi = int(t.min()) - 2000, int(t.max()) + 2000
    x = rng.integers(lo, hi + 1, size=(B, T))
    on_sample = rng.random((B, T)) < 0.3  # targets exactly on samples
    x = np.where(on_sample, t[np.arange(B)[:, None], rng.integers(0, S, size=(B, T))], x)
    lengths = rng.integers(1, S + 1, size=B) if draw(st.booleans()) else None
    target_lengths = rng.integers(0, T + 1, size=B) if draw(st.booleans()) else None
    method = draw(st.sampled_from(METHODS))
    options = dict(method=method,
                   extrapolate=draw(st.sampled_from(["clamp", "fill", "extrapolate"])),
                   fill_value=draw(st.sampled_from([np.nan, -1.5])),
                   time_offset=draw(st.integers(-1000, 1000)))
    if draw(st.booleans()):
        options["max_gap"] = draw(st.integers(1, 10**6))
    if method != "linear" and draw(st.booleans()):
        options["tolerance"] = draw(st.integers(1, 10**5))
    values = rng.standard_normal((B, S, D))
    return values, t.astype(np.int64), x.astype(np.int64), lengths, target_lengths, options


@settings(max_examples=300, deadline=None)
@given(problems())
def test_resample_equals_numpy_oracle(problem):
    values, t, x, lengths, target_lengths, options = problem
    out, valid = robocache.resample(values, t, x, lengths=lengths,
                                    target_lengths=target_lengths, return_valid=True,
                                    **options)
    ref, ref_valid = oracle(values, t, x, lengths, target_lengths, **options)
    np.testing.assert_array_equal(valid, ref_valid)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(problems(), st.integers(1, 3))
def test_align_equals_concatenated_resamples(problem, K):
    values, t, x, lengths, target_lengths, options = problem
    streams = [robocache.Stream(values[..., : k + 1], t, lengths=lengths, name=f"s{k}",
                                **options) for k in range(K)]
    out, valid = robocache.align(streams, x, target_lengths=target_lengths,
                                 out_dtype="float64")
    refs = [oracle(s.values, t, x, lengths, target_lengths, **options) for s in streams]
    np.testing.assert_allclose(out, np.concatenate([r[0] for r in refs], axis=2), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_array_equal(valid, np.stack([r[1] for r in refs], axis=2))


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 40), st.floats(0.5, 5000.0), st.integers(0, 3))
def test_uniform_grid_equals_closed_form(n, rate_hz, offset_steps):
    rng = np.random.default_rng(n)
    t1 = np.cumsum(rng.integers(10**7, 10**8, size=(2, n)), axis=1)
    t2 = t1 + offset_steps * 10**6
    streams = [robocache.Stream(t1.astype(float), t1), robocache.Stream(t2.astype(float), t2)]
    grid, lengths = robocache.uniform_grid(streams, rate_hz)
    for b in range(2):
        start, end = max(t1[b, 0], t2[b, 0]), min(t1[b, -1], t2[b, -1])
        ref = []
        i = 0
        while start + round(i * 1e9 / rate_hz) <= end:
            ref.append(start + round(i * 1e9 / rate_hz))
            i += 1
        assert lengths[b] == len(ref)
        np.testing.assert_array_equal(grid[b, : len(ref)], ref)


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from([np.float64, np.float32]))
def test_float_second_times_equal_numpy_oracle(problem, time_dtype):
    """The same problems with float seconds (no time options: those are
    covered in ns above); float32 times are rounded first, then both sides
    use the rounded times."""
    values, t, x, lengths, target_lengths, options = problem
    t_s = ((t - t.min()) / 1e6).astype(time_dtype)  # ms scale keeps float32 increasing
    if (np.diff(t_s, axis=1) <= 0).any():
        return
    x_s = ((x - t.min()) / 1e6).astype(time_dtype)
    opts = dict(method=options["method"], extrapolate=options["extrapolate"],
                fill_value=options["fill_value"])
    out, valid = robocache.resample(values, t_s, x_s, lengths=lengths,
                                    target_lengths=target_lengths, return_valid=True, **opts)
    ref, ref_valid = oracle(values, t_s.astype(np.float64), x_s.astype(np.float64), lengths,
                            target_lengths, **opts)
    np.testing.assert_array_equal(valid, ref_valid)
    np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-9)
