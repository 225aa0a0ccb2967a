"""Shared fixtures of the Python tests: the real sensor data in data/sensors,
an independent NumPy oracle of resample's semantics (DESIGN §1.1 plus the
lead's bracket/max_gap/tolerance rules), and torch availability. Also puts
tests/oracles on sys.path (NumPy oracles shared with the CLI tests:
`from voxel_oracle import ...`)."""

import math
import pathlib
import sys

import numpy as np
import pytest

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "sensors"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "oracles"))

try:
    import torch
except ImportError:  # the torch tests skip
    torch = None

requires_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
requires_cuda = pytest.mark.skipif(torch is None or not torch.cuda.is_available(),
                                   reason="no CUDA device")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def euroc_imu():
    """EuRoC V1_01_easy IMU: (t [S] int64 ns, values [S,6] float64)."""
    raw = np.loadtxt(DATA / "euroc_V1_01_easy_imu0.csv", delimiter=",", comments="#",
                     dtype=np.float64)
    t = np.loadtxt(DATA / "euroc_V1_01_easy_imu0.csv", delimiter=",", comments="#",
                   usecols=0, dtype=np.int64)
    return t, raw[:, 1:]


@pytest.fixture(scope="session")
def euroc_gt():
    """EuRoC V1_01_easy ground truth at 200 Hz: (t [S] float64 s, position [S,3],
    quaternion [S,4] xyzw)."""
    raw = np.loadtxt(DATA / "euroc_V1_01_easy_groundtruth_200hz.txt", comments="#")
    return raw[:, 0], raw[:, 1:4], raw[:, 4:8]


@pytest.fixture(scope="session")
def euroc_cam():
    """EuRoC V1_01_easy cam0 frame times [F] int64 ns."""
    return np.loadtxt(DATA / "euroc_V1_01_easy_cam0_timestamps.txt", dtype=np.int64)


@pytest.fixture(scope="session")
def tum_gt():
    """TUM fr1/xyz ground truth: (t [S] float64 s, position [S,3], quaternion xyzw)."""
    raw = np.loadtxt(DATA / "tum_fr1_xyz_groundtruth.txt", comments="#")
    return raw[:, 0], raw[:, 1:4], raw[:, 4:8]


@pytest.fixture(scope="session")
def tum_rgb_times():
    """TUM fr1/xyz RGB frame times [F] float64 s."""
    return np.loadtxt(DATA / "tum_fr1_xyz_rgb_depth_associations.txt", usecols=0)


# ---- NumPy oracle -----------------------------------------------------------------

def _slerp(q0, q1, w):
    """Shortest-arc slerp of unit quaternions (any component order), nlerp when
    nearly parallel, renormalised; w may lie outside [0, 1]."""
    d = float(np.dot(q0, q1))
    if d < 0:
        q1, d = -q1, -d
    if d > 0.9995:
        q = q0 + w * (q1 - q0)
    else:
        th = math.acos(min(d, 1.0))
        q = (math.sin((1 - w) * th) * q0 + math.sin(w * th) * q1) / math.sin(th)
    return q / np.linalg.norm(q)


def _interp(v0, v1, w, method):
    if method == "slerp":
        return np.concatenate([_slerp(v0[c:c + 4], v1[c:c + 4], w)
                               for c in range(0, v0.shape[0], 4)])
    return v0 + w * (v1 - v0)


def oracle_row(values, times, targets, method="linear", extrapolate="clamp",
               fill_value=math.nan, max_gap=None, tolerance=None, time_offset=0):
    """resample of one row in float64: values [n,D], times [n] (int64 ns or float
    s), targets [T]; time options in the unit of times. Returns (out [T,D],
    valid [T] bool). quat_order does not matter (slerp is order-free up to
    where w sits, which only moves components)."""
    values = np.asarray(values, dtype=np.float64)
    t = np.asarray(times) + time_offset
    n, D = values.shape
    out = np.empty((len(targets), D))
    valid = np.zeros(len(targets), dtype=bool)

    def frac(x, i0, i1):
        return float(x - t[i0]) / float(t[i1] - t[i0])

    for j, x in enumerate(targets):
        edge = 0 if x < t[0] else n - 1
        if (x < t[0] or x > t[-1]) and tolerance is not None \
                and method in ("nearest", "previous", "next") and abs(x - t[edge]) <= tolerance:
            out[j], valid[j] = values[edge], True  # the span widened by tolerance
            continue
        if x < t[0] or x > t[-1]:
            if extrapolate == "error":
                raise ValueError("target out of range")
            edge = 0 if x < t[0] else n - 1
            if extrapolate == "fill":
                out[j] = fill_value
            elif extrapolate == "extrapolate" and n > 1 and method in ("linear", "slerp"):
                i0 = 0 if x < t[0] else n - 2
                out[j] = _interp(values[i0], values[i0 + 1], frac(x, i0, i0 + 1), method)
            else:
                out[j] = values[edge]
            continue
        i0 = int(np.searchsorted(t, x, side="right")) - 1
        if t[i0] == x:
            out[j], valid[j] = values[i0], True
            continue
        i1 = i0 + 1
        w = frac(x, i0, i1)
        nearer = i0 if (x - t[i0]) <= (t[i1] - x) else i1
        used = {"nearest": nearer, "previous": i0, "next": i1}.get(method)
        value = values[used] if used is not None else _interp(values[i0], values[i1], w, method)
        if max_gap is not None and t[i1] - t[i0] > max_gap:
            if extrapolate == "error":
                raise ValueError("target in a gap")
            out[j] = {"clamp": values[nearer], "fill": fill_value}.get(extrapolate, value)
            continue
        if tolerance is not None and abs(x - t[used]) > tolerance:
            if extrapolate == "error":
                raise ValueError("target beyond tolerance")
            out[j] = fill_value if extrapolate == "fill" else value
            continue
        out[j], valid[j] = value, True
    return out, valid


def oracle(values, times, targets, lengths=None, target_lengths=None, **options):
    """Batched oracle: values [B,S,D], times [B,S], targets [B,T] -> (out, valid)."""
    B, S, D = values.shape
    T = targets.shape[1]
    out = np.zeros((B, T, D))
    valid = np.zeros((B, T), dtype=bool)
    for b in range(B):
        n = S if lengths is None else int(lengths[b])
        m = T if target_lengths is None else int(target_lengths[b])
        out[b, :m], valid[b, :m] = oracle_row(values[b, :n], times[b, :n], targets[b, :m],
                                              **options)
    return out, valid


def increasing_times(rng, B, S, *, start=0, max_step=1000, dtype=np.int64):
    """[B,S] strictly increasing int64 times (steps 1..max_step)."""
    steps = rng.integers(1, max_step + 1, size=(B, S))
    return (start + np.cumsum(steps, axis=1)).astype(dtype)
