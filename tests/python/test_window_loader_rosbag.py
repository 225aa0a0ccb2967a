"""robocache.torch.WindowLoader on a real multi-rate bag (the Clearpath Husky of
data/robot/ros1/robot_localization_test1.bag: IMU 30 Hz, wheel odometry 10 Hz
with two drop-outs, GPS 2.5 Hz, header stamps): every window of every sample
equals an independent NumPy interpolation of the bag's streams."""

import pathlib

import numpy as np
import pytest

from conftest import requires_torch, torch
from window_oracle import window_values

pytestmark = requires_torch

BAG = pathlib.Path(__file__).resolve().parents[2] / "data" / "robot" / "ros1" / \
    "robot_localization_test1.bag"
IMU = ["/imu/data/angular_velocity", "/imu/data/linear_acceleration"]
ODOM = "/husky_velocity_controller/odom/pose/position"
WINDOWS = {
    "observation.imu": {"streams": IMU, "offsets": [-0.1, -1 / 30, 0.0, 0.05],
                        "method": "linear"},
    "odom": {"streams": [ODOM], "offsets": [0.0, 0.5, 1.0, 2.0], "method": "linear",
             "max_gap": 0.15},
    "fix": {"streams": ["/fix"], "offsets": [-0.4, 0.0], "tolerance": 0.25},
    "twist": {"streams": ["/husky_velocity_controller/odom/twist/linear"],
              "offsets": [0.0, 0.1], "method": "previous", "tolerance": None},
}


@pytest.fixture(scope="module")
def bag():
    pytest.importorskip("rosbags")
    import robocache.datasets as rd

    return rd.open(BAG)


@pytest.mark.parametrize("sampling", [{"reference": ODOM}, {"rate_hz": 7.0}])
def test_bag_windows_equal_numpy(bag, sampling):
    import robocache.torch as rt

    loader = rt.WindowLoader(bag, WINDOWS, batch_size=500, device="cpu", shuffle=True, seed=3,
                             **sampling)
    batches = list(loader)
    got = {k: torch.cat([b[k] for b in batches]) for k in batches[0]}
    ep = bag.episodes[0]
    order = torch.argsort(got["sample_index"])
    assert got["sample_index"][order].tolist() == list(range(loader.num_samples))
    if "reference" in sampling:
        sample_t = ep.streams[ODOM].times
    else:
        first = max(ep.streams[n].times[0] for w in WINDOWS.values() for n in w["streams"])
        last = min(ep.streams[n].times[-1] for w in WINDOWS.values() for n in w["streams"])
        sample_t = first + np.round(np.arange(loader.num_samples) * 1e9 / 7.0).astype(np.int64)
        assert sample_t[-1] <= last < sample_t[-1] + 1e9 / 7.0
    frame = got["frame_index"][order].numpy()
    assert frame.tolist() == list(range(sample_t.size))
    pads = {}
    for key, w in WINDOWS.items():
        method = w.get("method", "nearest")
        tol = w.get("tolerance", 1e-4 if method != "linear" else None)
        tol = None if tol is None else int(round(tol * 1e9))
        gap = None if "max_gap" not in w else int(round(w["max_gap"] * 1e9))
        offsets = np.round(np.asarray(w["offsets"]) * 1e9).astype(np.int64)
        targets = (sample_t[:, None] + offsets[None, :]).reshape(-1)
        outs, valid = [], np.ones(targets.size, dtype=bool)
        for name in w["streams"]:
            s = ep.streams[name]
            o, v = window_values(s.times, s.values, targets, method=method, tolerance=tol,
                                 max_gap=gap)
            outs.append(o)
            valid &= v
        want = np.concatenate(outs, axis=1).reshape(sample_t.size, offsets.size, -1)
        mine = got[key][order].numpy()
        if method == "linear":
            # float32 output: relative to each channel (some channels are all 0)
            scale = np.maximum(np.abs(want).max(axis=(0, 1)), 1e-12)
            np.testing.assert_allclose(mine / scale, want / scale, rtol=0, atol=1e-6,
                                       err_msg=key)
        else:
            np.testing.assert_array_equal(mine, want.astype(np.float32), err_msg=key)
        pad = ~valid.reshape(sample_t.size, offsets.size)
        np.testing.assert_array_equal(got[f"{key}_is_pad"][order].numpy(), pad, err_msg=key)
        pads[key] = int(pad.sum())
    assert pads["odom"] > 0  # the 2 s window reaches past the end, and the drop-outs
    assert pads["fix"] > 0   # GPS fixes farther than 0.25 s
