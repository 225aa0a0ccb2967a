"""robocache.torch.collate_ragged: padding, lengths, and a DataLoader batch
aligned in the main process equals per-episode alignment."""

import numpy as np
import pytest

from conftest import requires_torch, torch

import robocache

pytestmark = requires_torch


def _episodes(euroc_imu, euroc_cam, sizes):
    t_imu, imu = euroc_imu
    episodes, start = [], 0
    for n in sizes:
        t = t_imu[start:start + n]
        cams = euroc_cam[(euroc_cam >= t[0]) & (euroc_cam <= t[-1])]
        episodes.append({"imu": imu[start:start + n].astype(np.float32), "imu_times": t,
                         "camera_times": cams, "name": f"ep{len(episodes)}"})
        start += n
    return episodes


def test_collate_pads_and_reports_lengths(euroc_imu, euroc_cam):
    import robocache.torch as rt

    eps = _episodes(euroc_imu, euroc_cam, [200, 57, 120])
    batch = rt.collate_ragged(eps)
    assert batch["imu"].shape == (3, 200, 6) and batch["imu"].dtype == torch.float32
    assert batch["imu_lengths"].tolist() == [200, 57, 120]
    assert batch["name"] == ["ep0", "ep1", "ep2"]
    np.testing.assert_array_equal(batch["imu"][1, :57].numpy(), eps[1]["imu"])
    assert (batch["imu_times"][1, 57:] == int(eps[1]["imu_times"][-1])).all()
    zero = rt.collate_ragged(eps, pad_value=0.0)
    assert (zero["imu"][1, 57:] == 0).all()
    with pytest.raises(ValueError, match="'imu' of item 1"):
        rt.collate_ragged([eps[0], {**eps[1], "imu": eps[1]["imu"][:, :3]}, eps[2]])


def test_dataloader_batch_aligned_equals_per_episode(euroc_imu, euroc_cam):
    import robocache.torch as rt

    eps = _episodes(euroc_imu, euroc_cam, [300, 80, 150, 410])
    loader = torch.utils.data.DataLoader(eps, batch_size=4, collate_fn=rt.collate_ragged)
    batch = next(iter(loader))
    out, valid = robocache.align(
        [robocache.Stream(batch["imu"], batch["imu_times"], lengths=batch["imu_lengths"],
                          name="imu")],
        batch["camera_times"], target_lengths=batch["camera_times_lengths"])
    for b, ep in enumerate(eps):
        n = len(ep["camera_times"])
        ref, ref_valid = robocache.resample(ep["imu"], ep["imu_times"], ep["camera_times"],
                                            return_valid=True)
        np.testing.assert_array_equal(out[b, :n].numpy(), ref)
        np.testing.assert_array_equal(valid[b, :n, 0].numpy(), ref_valid)
        assert not valid[b, n:].any() and (out[b, n:] == 0).all()
