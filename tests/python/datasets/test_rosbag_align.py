"""robocache.align on a real bag: the Husky's IMU (30 Hz) and wheel odometry
(10 Hz) of robot_localization_test1, taken as robocache.Stream.from_series
and aligned onto a 30 Hz grid, equal np.interp per column and SciPy's Slerp
for the quaternions, computed here from the streams' own samples."""

import pathlib

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

import robocache
import robocache.datasets as rd

ROBOT = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot"


# robocache's slerp is nlerp between samples whose dot product exceeds 0.9995
# (include/robocache.h); there nlerp and slerp differ by at most 5.1e-7 in
# angle (max over w of |atan2(w sin a, 1 - w + w cos a) - w a|, a = acos 0.9995)
NLERP_BOUND = 6e-7


def same_rotation(q, want):
    """Unit quaternions equal up to sign (q and -q are one rotation)."""
    sign = np.sign(np.sum(q * want, axis=1, keepdims=True))
    np.testing.assert_allclose(q * sign, want, rtol=0, atol=NLERP_BOUND)


@pytest.mark.parametrize("path", [ROBOT / "ros2" / "robot_localization_test1_mcap",
                                  ROBOT / "ros1" / "robot_localization_test1.bag"])
def test_align_imu_and_odometry_on_30hz_grid(path):
    ep = rd.open(path).episodes[0]
    names = ["/imu/data/angular_velocity", "/imu/data/orientation",
             "/husky_velocity_controller/odom/pose/position",
             "/husky_velocity_controller/odom/pose/orientation"]
    series = [ep.streams[n] for n in names]
    start = max(s.times[0] for s in series)
    end = min(s.times[-1] for s in series)
    grid = np.arange(start, end, 1_000_000_000 // 30, dtype=np.int64)
    assert grid.size > 11_000
    out, valid = robocache.align([robocache.Stream.from_series(s) for s in series], grid,
                                 out_dtype=np.float64)
    assert out.shape == (grid.size, 3 + 4 + 3 + 4) and valid.all()

    col = 0
    for s in series:
        t = (s.times - start).astype(np.float64)
        x = (grid - start).astype(np.float64)
        got = out[:, col:col + s.values.shape[1]]
        if s.kind == "quaternion":
            want = Slerp(t, Rotation.from_quat(s.values))(x).as_quat()
            same_rotation(got, want)
        else:
            want = np.column_stack([np.interp(x, t, s.values[:, d])
                                    for d in range(s.values.shape[1])])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        col += s.values.shape[1]
