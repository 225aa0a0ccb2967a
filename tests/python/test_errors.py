"""Each exception type, with a message naming the argument and the problem."""

import numpy as np
import pytest

import robocache

T = np.array([0, 10, 20, 30], dtype=np.int64)
V = np.arange(8.0).reshape(4, 2)
X = np.array([5, 15], dtype=np.int64)


@pytest.mark.parametrize("kwargs,match", [
    (dict(method="cubic"), "method: expected one of linear, nearest, previous, next, slerp"),
    (dict(extrapolate="wrap"), "extrapolate: expected one of clamp, fill, extrapolate, error"),
    (dict(quat_order="zyxw", method="slerp"), "quat_order: expected one of xyzw, wxyz"),
    (dict(max_gap=0), "max_gap: must be > 0"),
    (dict(tolerance=-5, method="nearest"), "tolerance: must be > 0"),
    (dict(max_gap=2.5), "max_gap: times are int64 nanoseconds"),
    (dict(tolerance=3, method="linear"), "tolerance applies to methods nearest"),
    (dict(method="slerp"), "slerp needs channels in groups of 4"),
    (dict(lengths=np.array([2])), "lengths: only for batched inputs"),
])
def test_value_errors_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        robocache.resample(V, T, X, **kwargs)


def test_non_increasing_times_name_row_and_index():
    t = np.array([[0, 10, 20, 30], [0, 10, 10, 30]], dtype=np.int64)
    with pytest.raises(ValueError, match=r"times not increasing: row 1, index 2"):
        robocache.resample(np.stack([V, V]), t, np.stack([X, X]))


def test_nan_times_are_an_error():
    t = np.array([0.0, 1.0, np.nan, 3.0])
    with pytest.raises(ValueError, match=r"time is NaN: row 0, index 2"):
        robocache.resample(V, t, np.array([0.5]))


def test_int64_times_beyond_2_62_ns_are_an_error():
    big = np.array([0, 10, 20, 2**62], dtype=np.int64)
    with pytest.raises(ValueError, match=r"time out of range: row 0, index 3"):
        robocache.resample(V, big, X)
    with pytest.raises(ValueError, match=r"time_offset_ns = -4611686018427387904 is outside"):
        robocache.resample(V, T, X, time_offset=-2**62)
    with pytest.raises(ValueError, match=r"target_times: out of range: row 0, index 1"):
        robocache.resample(V, T, np.array([5, -2**63], dtype=np.int64))


def test_extrapolate_error_names_row_and_target():
    with pytest.raises(ValueError, match=r"target out of range: row 0, index 1"):
        robocache.resample(V, T, np.array([5, 99], dtype=np.int64), extrapolate="error")


def test_shape_errors():
    with pytest.raises(ValueError, match=r"times: expected \[S\]"):
        robocache.resample(V, T[None], X)
    with pytest.raises(ValueError, match="values: expected"):
        robocache.resample(V[None, None], T, X)
    with pytest.raises(ValueError, match=r"out: expected shape \(2, 2\), got \(2, 3\)"):
        robocache.resample(V, T, X, out=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="target_times: expected"):
        robocache.resample(V, T, np.zeros((1, 1, 1), dtype=np.int64))


def test_type_errors_for_dtypes():
    with pytest.raises(TypeError, match="values: dtype must be float32, float64"):
        robocache.resample(V.astype(np.int32), T, X)
    with pytest.raises(TypeError, match="differs from target_times dtype"):
        robocache.resample(V, T, X.astype(np.float64))
    with pytest.raises(TypeError, match="values: unsupported dtype"):
        robocache.resample(V.astype(np.complex64), T, X)
    with pytest.raises(TypeError, match="out_dtype: expected one of float32"):
        robocache.resample(V, T, X, out_dtype="int8")
    with pytest.raises(TypeError, match="out_dtype: NumPy has no bfloat16"):
        robocache.resample(V, T, X, out_dtype="bfloat16")
    with pytest.raises(TypeError, match="values: expected a tensor or array supporting DLPack"):
        robocache.resample([[1.0]], T, X)
    with pytest.raises(TypeError, match="max_gap: times are int64 nanoseconds"):
        robocache.resample(V, T, X, max_gap="1ms")
    with pytest.raises(TypeError, match="fill_value: expected a real number"):
        robocache.resample(V, T, X, fill_value="nan")


def test_align_errors_name_the_stream():
    good = robocache.Stream(V, T, name="imu")
    bad = robocache.Stream(V, np.array([0, 5, 5, 9], dtype=np.int64), name="cam")
    with pytest.raises(ValueError, match=r"stream 1 \(cam\).*times not increasing"):
        robocache.align([good, bad], X)
    with pytest.raises(ValueError, match=r"stream 1 \(gps\): method: expected one of"):
        robocache.align([good, robocache.Stream(V, T, name="gps", method="spline")], X)
    with pytest.raises(TypeError, match=r"streams\[0\]: expected a robocache.Stream"):
        robocache.align([(V, T)], X)
    with pytest.raises(ValueError, match="streams: need at least one"):
        robocache.align([], X)


def test_uniform_grid_errors():
    s = robocache.Stream(V, T)
    with pytest.raises(ValueError, match="rate_hz: must be a positive"):
        robocache.uniform_grid([s], 0.0)
    with pytest.raises(ValueError, match="span: expected one of overlap, union"):
        robocache.uniform_grid([s], 10.0, span="middle")
    with pytest.raises(TypeError, match=r"streams\[0\] times: uniform_grid needs int64"):
        robocache.uniform_grid([robocache.Stream(V, T / 1e9)], 10.0)
    late = robocache.Stream(V, T + 1000)
    with pytest.raises(ValueError, match="do not overlap in time: row 0"):
        robocache.uniform_grid([s, late], 10.0)


def test_buffer_error_and_robocache_error_types():
    assert issubclass(robocache.RobocacheError, RuntimeError)

    class Broken:
        def __dlpack__(self, **kw):
            raise BufferError("cannot export")

    with pytest.raises(BufferError, match="values: __dlpack__ failed: cannot export"):
        robocache.resample(Broken(), T, X)


def test_version_matches_header():
    import pathlib
    import re

    header = pathlib.Path(__file__).resolve().parents[2] / "include" / "robocache.h"
    parts = [re.search(rf"#define ROBOCACHE_VERSION_{k} (\d+)", header.read_text()).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    assert robocache.__version__ == ".".join(parts) == robocache._C.version()
