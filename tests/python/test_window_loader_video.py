"""robocache.torch.WindowLoader(decode_threads=) on the real LeRobot v3.0 video fixture
(data/robot/lerobot/lingzu_open50_v30_subset, MPEG-4 640 x 480, 30 fps, one MP4 per
episode here): a video file's frames of a batch are cut between groups of pictures into
runs decoded on several threads by several PyAV containers. The batches equal those of
one decode thread (computed when asked for), the frames equal a sequential PyAV decode,
and a spy on av.open checks that one file's runs are decoded at the same time by two
containers. VideoFile.split's runs are checked against keyframes demuxed here."""

import threading

import numpy as np
import pytest

from conftest import requires_torch, torch
from test_window_loader_torchcodec import (DATA, EPISODES, _loader, _pyav_frames,
                                           assert_resumed_equal)

pytestmark = requires_torch

MP4 = DATA / "videos/image/chunk-000/file-003.mp4"  # episode 3's frames


def test_batches_with_four_decode_threads_equal_one_thread_ahead_and_resumed():
    kw = dict(rate_hz=2.0, seed=5, batch_size=12)
    reference = list(_loader(prefetch=0, decode_threads=1, **kw))
    assert_resumed_equal(reference, _loader(prefetch=2, decode_threads=4, **kw),
                         _loader(prefetch=1, decode_threads=3, **kw))
    assert reference[0]["image"].shape[1:] == (3, 3, 480, 640)
    padded = torch.cat([b["image_is_pad"] for b in reference])
    assert padded.any() and not padded.all()  # windows past the episodes' ends


def test_one_files_frames_are_decoded_by_two_containers_at_once(monkeypatch):
    """The first two containers opened on decode threads must be open at the same time:
    a barrier of two parties fails (after 20 s) when one file's frames are decoded in one
    run or the runs one after the other."""
    import av

    loader = _loader(windows={"image": [0.0]}, decode_threads=4)
    n = len(next(e for e in loader.recording.episodes if e.index == EPISODES[0])
            .streams["image"].times)
    rows = np.linspace(0, n - 1, 40).astype(np.int64)  # spread over the episode's GOPs
    real_open = av.open
    both = threading.Barrier(2, timeout=20)
    opened = []

    def spy(path, *args, **kw):
        decoding = threading.current_thread().name.startswith("robocache-decode")
        if decoding and str(path) == str(MP4):
            opened.append(threading.current_thread().name)
            if len(opened) <= 2:
                both.wait()
        return real_open(path, *args, **kw)

    monkeypatch.setattr(av, "open", spy)
    got = loader.frames(torch.from_numpy(rows))  # samples 0 .. n-1 are episode 3's
    assert len(opened) >= 2 and len(set(opened[:2])) == 2
    np.testing.assert_array_equal(got["image"].permute(0, 2, 3, 1).numpy(),
                                  _pyav_frames(EPISODES[0], rows))


def _keyframes(path):
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        packets = sorted((p.pts, p.is_keyframe) for p in container.demux(stream)
                         if p.pts is not None)
    return np.array([k for _, k in packets], dtype=bool)


@pytest.mark.parametrize("parts", [1, 2, 3, 4, 16])
def test_split_cuts_only_between_groups_of_pictures(parts):
    from robocache.datasets.video import VideoFile

    key = _keyframes(MP4)
    gop = np.cumsum(key) - 1  # group of pictures of each frame (the file starts on a keyframe)
    assert key[0] and key.sum() > 8
    video = VideoFile(MP4)
    rng = np.random.default_rng(parts)
    for size in (1, 5, 60, key.size):
        wanted = np.sort(rng.choice(key.size, size, replace=False))
        runs = video.split(wanted, parts)
        np.testing.assert_array_equal(np.concatenate(runs), wanted)
        assert all(r.size for r in runs)
        assert len(runs) == min(parts, np.unique(gop[wanted]).size)
        for a, b in zip(runs[:-1], runs[1:]):
            assert gop[a[-1]] < gop[b[0]]  # no group of pictures decoded by two runs
