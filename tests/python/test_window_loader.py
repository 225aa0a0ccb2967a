"""robocache.torch.WindowLoader on real multi-rate streams (the EuRoC V1_01_easy
flight in data/sensors: IMU 200 Hz, Vicon pose 200 Hz, camera frame times 20 Hz)
cut into episodes: every window value and `_is_pad` equals the NumPy oracle
computed on the sample's episode alone (tests/oracles/window_oracle.py); epochs,
ranks, resume, weights, paging, fixed-rate samples, image decode and errors."""

import logging
import threading

import numpy as np
import pytest

from conftest import requires_torch, torch
from window_oracle import window_values

pytestmark = requires_torch

# (start s after the first camera frame, length s) of each episode
CHUNKS = [(2.0, 3.0), (20.0, 6.5), (40.0, 1.7), (70.0, 4.2)]


def _recording(euroc_imu, euroc_gt, euroc_cam, frames=None):
    """A Recording of 4 episodes cut from the flight; each stream is cut to the
    chunk on its own clock, so first/last times differ between streams."""
    from robocache.datasets import Episode, Recording, Series

    t_imu, imu = euroc_imu
    t_gt = np.round(euroc_gt[0] * 1e9).astype(np.int64)
    position, quat = euroc_gt[1], euroc_gt[2]
    cam = euroc_cam
    episodes = []
    for e, (start, length) in enumerate(CHUNKS):
        a = cam[0] + int(start * 1e9)
        b = a + int(length * 1e9)

        def cut(t, v, a=a, b=b):
            m = (t >= a) & (t < b)
            return lambda: (t[m], v[m])

        mc = (cam >= a) & (cam < b)
        cam_index = np.flatnonzero(mc).reshape(-1, 1)
        streams = {
            "imu": Series("imu", cut(t_imu, imu.astype(np.float32)), clock="header"),
            "position": Series("position", cut(t_gt, position), clock="header"),
            "orientation": Series("orientation", cut(t_gt, quat), kind="quaternion",
                                  clock="header"),
            "cam": Series("cam", lambda m=mc, i=cam_index: (cam[m], i), kind="image",
                          clock="header", frames=frames and (lambda idx, i=cam_index:
                                                             frames(i[idx, 0])),
                          meta={"video_file": f"episode_{e}.mp4"}),
        }
        episodes.append(Episode(10 + e, streams))
    return Recording("test", "euroc-episodes", episodes)


def coded_frames(camera_index):
    """4 x 6 RGB frames that encode the camera frame number (red + 256 green)."""
    img = np.zeros((len(camera_index), 4, 6, 3), dtype=np.uint8)
    img[..., 0] = np.asarray(camera_index)[:, None, None] % 256
    img[..., 1] = np.asarray(camera_index)[:, None, None] // 256
    return img


@pytest.fixture
def rec(euroc_imu, euroc_gt, euroc_cam):
    return _recording(euroc_imu, euroc_gt, euroc_cam)


WINDOWS = {
    "imu": {"offsets": [-0.0125, 0.0, 0.0031, 0.5], "method": "linear", "streams": ["imu"]},
    "position": {"offsets": [-0.2, -0.05, 0.0, 0.25], "tolerance": 0.003},
    "pose": {"streams": ["position", "orientation"], "offsets": [0.0, 0.1, 1.0],
             "method": "previous", "tolerance": None},
    "imu_next": {"streams": ["imu"], "offsets": [-0.3, 0.0, 0.011], "method": "next",
                 "tolerance": 0.002},
}


def _loader(rec, **kw):
    import robocache.torch as rt

    kw.setdefault("windows", WINDOWS)
    kw.setdefault("batch_size", 37)
    kw.setdefault("device", "cpu")
    kw.setdefault("reference", "cam")
    return rt.WindowLoader(rec, **kw)


def _epoch(loader):
    batches = list(loader)
    return {k: torch.cat([b[k] for b in batches]) for k in batches[0]}, batches


def _oracle(rec, spec_streams, method, tolerance, episode_pos, frame, offsets_s):
    """Expected (values [W, D], is_pad [W]) of one sample."""
    ep = rec.episodes[episode_pos]
    t = ep.streams["cam"].times[frame]
    targets = t + np.round(np.asarray(offsets_s) * 1e9).astype(np.int64)
    outs, valid = [], np.ones(len(offsets_s), dtype=bool)
    tol = None if tolerance is None else int(round(tolerance * 1e9))
    for name in spec_streams:
        s = ep.streams[name]
        o, v = window_values(s.times, s.values, targets, method=method, tolerance=tol)
        outs.append(o)
        valid &= v
    return np.concatenate(outs, axis=1), ~valid


def test_every_window_equals_the_per_episode_oracle(rec):
    loader = _loader(rec, shuffle=False)
    got, _ = _epoch(loader)
    n = sum(len(ep.streams["cam"].times) for ep in rec.episodes)
    assert loader.num_samples == n and got["sample_index"].tolist() == list(range(n))
    pos = {ep.index: p for p, ep in enumerate(rec.episodes)}
    pads = 0
    for i in range(n):
        p = pos[int(got["episode_index"][i])]
        f = int(got["frame_index"][i])
        for key, w in WINDOWS.items():
            method = w.get("method", "nearest")
            tol = w.get("tolerance", 1e-4 if method != "linear" else None)
            want, pad = _oracle(rec, w.get("streams", [key]), method, tol, p, f, w["offsets"])
            np.testing.assert_array_equal(got[f"{key}_is_pad"][i].numpy(), pad,
                                          err_msg=f"{key} sample {i}")
            if method == "linear":
                np.testing.assert_allclose(got[key][i].numpy(), want, rtol=1e-5, atol=1e-5,
                                           err_msg=f"{key} sample {i}")
            else:  # a sample copied: bit-exact after the float32 conversion
                np.testing.assert_array_equal(got[key][i].numpy(), want.astype(np.float32),
                                              err_msg=f"{key} sample {i}")
            pads += int(pad.sum())
    assert pads > 0  # windows reach past episode ends


def test_slerp_key_equals_scipy_per_episode(rec):
    from scipy.spatial.transform import Rotation, Slerp

    offsets = [-0.5, 0.0, 0.0137, 0.6]
    loader = _loader(rec, shuffle=False, windows={
        "q": {"streams": ["orientation"], "offsets": offsets, "method": "slerp"}})
    got, _ = _epoch(loader)
    for i in range(loader.num_samples):
        ep = rec.episodes[int(got["episode_index"][i]) - 10]
        s = ep.streams["orientation"]
        x = ep.streams["cam"].times[int(got["frame_index"][i])] + \
            np.round(np.asarray(offsets) * 1e9).astype(np.int64)
        inside = (x >= s.times[0]) & (x <= s.times[-1])
        xc = np.clip(x, s.times[0], s.times[-1]) - s.times[0]
        want = Slerp((s.times - s.times[0]).astype(np.float64),
                     Rotation.from_quat(s.values))(xc.astype(np.float64)).as_quat()
        q = got["q"][i].numpy().astype(np.float64)
        sign = np.sign(np.sum(q * want, axis=1, keepdims=True))
        # the file's quaternions have 6 decimals (norm 1 +- 1e-6): scipy normalises
        # them before the slerp, robocache after it
        np.testing.assert_allclose(q, sign * want, atol=1e-5)
        np.testing.assert_array_equal(got["q_is_pad"][i].numpy(), ~inside)


def test_fixed_rate_samples_cover_each_episodes_overlap(rec):
    rate = 7.5
    loader = _loader(rec, shuffle=False, reference=None, rate_hz=rate,
                     windows={"imu": {"offsets": [0.0], "method": "linear"},
                              "position": {"offsets": [0.0], "method": "linear"}})
    got, _ = _epoch(loader)
    assert not got["imu_is_pad"].any() and not got["position_is_pad"].any()
    for p, ep in enumerate(rec.episodes):
        a = max(ep.streams["imu"].times[0], ep.streams["position"].times[0])
        b = min(ep.streams["imu"].times[-1], ep.streams["position"].times[-1])
        grid = a + np.round(np.arange(0, 1000) * 1e9 / rate).astype(np.int64)
        grid = grid[grid <= b]
        mine = got["episode_index"] == ep.index
        assert got["frame_index"][mine].tolist() == list(range(grid.size))
        want, _ = window_values(ep.streams["imu"].times, ep.streams["imu"].values, grid,
                                method="linear")
        np.testing.assert_allclose(got["imu"][mine][:, 0].numpy(), want, rtol=1e-5, atol=1e-5)


def test_same_seed_same_batches_and_each_epoch_a_permutation(rec):
    a, b, c = (_loader(rec, seed=s, shuffle=True) for s in (3, 3, 4))
    for epoch in range(2):
        ga, _ = _epoch(a)
        gb, _ = _epoch(b)
        gc, _ = _epoch(c)
        for k in ga:
            assert torch.equal(ga[k], gb[k]), k
        assert not torch.equal(ga["sample_index"], gc["sample_index"])
        assert sorted(ga["sample_index"].tolist()) == list(range(a.num_samples))
    assert not torch.equal(a.sample_indices(0), a.sample_indices(1))


def test_ranks_draw_disjoint_shards_of_one_epoch(rec):
    n = _loader(rec).num_samples
    world = 2 if n % 2 == 0 else 3
    world = world if n % world == 0 else 1  # an exact split: every sample once
    if world == 1:
        pytest.skip(f"{n} samples do not split evenly over 2 or 3 ranks")
    seen = []
    for r in range(world):
        loader = _loader(rec, rank=r, world_size=world, seed=7)
        got, _ = _epoch(loader)
        assert len(loader) == -(-(n // world) // 37)
        seen.append(got["sample_index"])
        assert torch.equal(got["sample_index"], loader.sample_indices(0))
    everything = torch.cat(seen)
    assert sorted(everything.tolist()) == list(range(n))


def test_ranks_with_an_uneven_split(rec):
    n = _loader(rec).num_samples
    world = next(w for w in (3, 4, 5, 7) if n % w)
    dropped = [_loader(rec, rank=r, world_size=world, drop_last=True).sample_indices(2)
               for r in range(world)]
    padded = [_loader(rec, rank=r, world_size=world).sample_indices(2) for r in range(world)]
    assert {len(s) for s in dropped} == {n // world}
    assert len(set(torch.cat(dropped).tolist())) == n // world * world  # disjoint
    assert {len(s) for s in padded} == {-(-n // world)}
    assert set(torch.cat(padded).tolist()) == set(range(n))  # all, a few twice


def test_state_dict_resume_gives_the_remaining_batches(rec):
    import robocache.torch as rt

    first = _loader(rec, seed=11)
    _epoch(first)  # epoch 0
    it = iter(first)
    for _ in range(3):
        next(it)
    state = first.state_dict()
    assert state["epoch"] == 1 and state["batch"] == 3
    rest = list(it) + list(first)  # the end of epoch 1, then epoch 2
    second = _loader(rec, seed=11)
    second.load_state_dict(state)
    again = list(second) + list(second)
    assert len(again) == len(rest)
    for x, y in zip(rest, again):
        for k in x:
            assert torch.equal(x[k], y[k]), k
    other = _loader(rec, seed=12)
    with pytest.raises(ValueError, match="seed 11"):
        other.load_state_dict(state)
    assert isinstance(first, rt.WindowLoader)


def test_prefetch_gives_the_batches_computed_when_asked_for(euroc_imu, euroc_gt, euroc_cam):
    """prefetch=0 computes each batch in the caller's thread: the reference for
    the batches computed ahead (windows and decoded frames), across a resume
    in the middle of an epoch."""
    rec = _recording(euroc_imu, euroc_gt, euroc_cam, frames=coded_frames)
    kw = dict(seed=3, windows=dict(WINDOWS, cam=[-0.1, 0.0]))
    plain, batches = _epoch(_loader(rec, prefetch=0, **kw))
    ahead = _loader(rec, prefetch=3, **kw)
    it = iter(ahead)
    head = [next(it) for _ in range(4)]
    state = ahead.state_dict()
    assert state["batch"] == 4  # the batches computed ahead are not consumed
    it.close()
    resumed = _loader(rec, prefetch=2, **kw)
    resumed.load_state_dict(state)
    for x, y in zip(batches, head + list(resumed)):
        assert x.keys() == y.keys()
        for k in x:
            assert torch.equal(x[k], y[k]), k
    with pytest.raises(ValueError, match="prefetch"):
        _loader(rec, prefetch=-1)


def test_keys_reading_one_series_share_its_rows(rec):
    """Two keys on the same series (same edge repeats) read one copy of its
    rows; each key still equals the key alone."""
    a = {"offsets": [-0.05, 0.0], "method": "linear", "streams": ["imu"]}
    b = {"offsets": [0.0, 0.3], "method": "linear", "streams": ["imu"]}
    both = _loader(rec, shuffle=False, windows={"a": a, "b": b})
    s0, s1 = both._resident.streams
    assert s0.values.data_ptr() == s1.values.data_ptr()
    assert s0.times.data_ptr() == s1.times.data_ptr()
    alone = _loader(rec, shuffle=False, windows={"b": b})
    assert int(both.timeline.episode_bytes().sum()) == int(alone.timeline.episode_bytes().sum())
    got, want = _epoch(both)[0], _epoch(alone)[0]
    assert torch.equal(got["b"], want["b"]) and torch.equal(got["b_is_pad"], want["b_is_pad"])


def test_episode_weights(rec):
    weights = {10: 1.0, 11: 0.0, 12: 4.0, 13: 1.0}
    loader = _loader(rec, episode_weights=weights, seed=5)
    got, _ = _epoch(loader)
    counts = {e: int((got["episode_index"] == e).sum()) for e in weights}
    assert counts[11] == 0 and sum(counts.values()) == loader.num_samples
    sizes = {ep.index: len(ep.streams["cam"].times) for ep in rec.episodes}
    # per sample of episode 12, four times the draws of episode 10 (2000+ draws)
    ratio = (counts[12] / sizes[12]) / (counts[10] / sizes[10])
    assert 2.5 < ratio < 6.5
    again, _ = _epoch(_loader(rec, episode_weights=weights, seed=5))
    assert torch.equal(got["sample_index"], again["sample_index"])
    with pytest.raises(ValueError, match="episode_weights"):
        _loader(rec, episode_weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="-1.0 of episode 11"):
        _loader(rec, episode_weights=[1.0, -1.0, 1.0, 1.0])


def test_paging_by_episode_groups(rec, caplog):
    whole = _loader(rec, shuffle=False)
    total = int(whole.timeline.episode_bytes().sum())
    budget = int(whole.timeline.episode_bytes().max()) + 1
    with caplog.at_level(logging.INFO, logger="robocache.torch"):
        paged = _loader(rec, max_device_bytes=budget, seed=2)
    assert len(paged.groups) > 1 and budget < total
    assert f"paged in {len(paged.groups)} groups" in caplog.text
    got, _ = _epoch(paged)
    assert sorted(got["sample_index"].tolist()) == list(range(paged.num_samples))
    # the epoch visits the groups one after the other
    group = paged.group_of_sample[got["sample_index"]]
    assert int((group[1:] != group[:-1]).sum()) == len(paged.groups) - 1
    want = whole.gather(got["sample_index"])
    for k in want:
        assert torch.equal(got[k], want[k]), k
    with pytest.raises(ValueError, match="alone needs"):
        _loader(rec, max_device_bytes=100)


def test_image_keys_decode_the_chosen_frames_once_per_episode(euroc_imu, euroc_gt, euroc_cam):
    calls = []

    def frames(camera_index):
        calls.append(len(camera_index))
        return coded_frames(camera_index)

    rec = _recording(euroc_imu, euroc_gt, euroc_cam, frames=frames)
    offsets = [-0.1, 0.0, 0.05, 0.2]
    loader = _loader(rec, shuffle=True, seed=1, batch_size=16, windows={
        "cam": offsets, "imu": {"offsets": [0.0], "method": "linear"}}, decode_threads=2)
    before = threading.active_count()
    got, batches = _epoch(loader)
    kept = threading.active_count() - before
    assert 0 < kept <= 2  # the loader's decode threads, kept for the next batches
    assert got["cam"].dtype == torch.uint8 and got["cam"].shape[1:] == (4, 3, 4, 6)
    # one frames() call per episode present in each batch
    assert len(calls) == sum(len(set(b["episode_index"].tolist())) for b in batches)
    number = got["cam"][:, :, 0, 0, 0].long() + 256 * got["cam"][:, :, 1, 0, 0].long()
    for i in range(loader.num_samples):
        ep = rec.episodes[int(got["episode_index"][i]) - 10]
        cam = ep.streams["cam"]
        t = cam.times[int(got["frame_index"][i])]
        targets = t + np.round(np.asarray(offsets) * 1e9).astype(np.int64)
        want, valid = window_values(cam.times, cam.values, targets, tolerance=100_000)
        np.testing.assert_array_equal(number[i].numpy(), want[:, 0])
        np.testing.assert_array_equal(got["cam_is_pad"][i].numpy(), ~valid)
    assert got["cam_is_pad"].any() and not got["cam_is_pad"].all()
    _epoch(loader)
    assert threading.active_count() - before == kept  # the same threads, no new ones
    loader.close()
    assert threading.active_count() == before  # decode threads joined


def test_errors_name_what_is_wrong(rec):
    import robocache.datasets as rd

    with pytest.raises(rd.DatasetError, match="episode 10: no stream 'gps' for key 'g'"):
        _loader(rec, windows={"g": {"offsets": [0.0], "streams": ["gps"]}})
    with pytest.raises(ValueError, match=r"windows\['imu'\]: unknown option\(s\) offset"):
        _loader(rec, windows={"imu": {"offset": [0.0]}})
    with pytest.raises(ValueError, match="tolerance applies to methods"):
        _loader(rec, windows={"imu": {"offsets": [0.0], "method": "linear",
                                      "tolerance": 0.1}})
    with pytest.raises(ValueError, match=r"offsets\[1\] must be a finite"):
        _loader(rec, windows={"imu": [0.0, float("nan")]})
    with pytest.raises(ValueError, match=r"episodes \[99\] are not in the recording"):
        _loader(rec, episodes=[10, 99])
    with pytest.raises(ValueError, match="rank must lie in"):
        _loader(rec, rank=2, world_size=2)
    with pytest.raises(ValueError, match="image stream"):
        _loader(rec, windows={"cam": {"offsets": [0.0], "method": "linear"}})
    with pytest.raises(ValueError, match="not both"):
        _loader(rec, rate_hz=10.0)


def test_episode_subset_keeps_episode_indices(rec):
    loader = _loader(rec, episodes=[13, 11], shuffle=False)
    got, _ = _epoch(loader)
    assert got["episode_index"].unique_consecutive().tolist() == [13, 11]


def _rank_main(rank, world, store, out, data):
    """One process of a torch.distributed (gloo) group: its loader's sample order."""
    torch.distributed.init_process_group(
        "gloo", rank=rank, world_size=world, init_method=f"file://{store}")
    try:
        loader = _loader(_recording(*data), seed=21)
        assert (loader.rank, loader.world_size) == (rank, world)
        got = torch.cat([b["sample_index"] for b in loader])
        torch.save({"indices": got, "batches": len(loader)}, f"{out}.{rank}")
    finally:
        torch.distributed.destroy_process_group()


def test_ranks_from_torch_distributed(euroc_imu, euroc_gt, euroc_cam, tmp_path):
    import torch.multiprocessing as mp

    world = 2
    n = _loader(_recording(euroc_imu, euroc_gt, euroc_cam)).num_samples
    mp.spawn(_rank_main, args=(world, tmp_path / "store", tmp_path / "out",
                               (euroc_imu, euroc_gt, euroc_cam)), nprocs=world)
    got = [torch.load(tmp_path / f"out.{r}") for r in range(world)]
    assert got[0]["batches"] == got[1]["batches"]
    both = torch.cat([g["indices"] for g in got]).tolist()
    assert len(both) == world * -(-n // world)
    assert set(both) == set(range(n))
    assert len(set(both)) == len(both) - (world * -(-n // world) - n)  # only the wrap repeats
