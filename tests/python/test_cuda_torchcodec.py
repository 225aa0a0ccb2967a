"""WindowLoader(decoder="torchcodec", decode_device="cuda"): the frames of the lingzu
video fixture decoded by NVDEC on the loader's GPU, against decoder="pyav" (FFmpeg on
the host). NVDEC's decoder and torchcodec's CUDA colour conversion are not FFmpeg's
swscale, so the frames are compared within a bound: each NVDEC frame is nearer (mean
absolute difference) to the PyAV frame of the same time than to the PyAV frames of the
previous and next video frames, and within MEAN_LEVELS of it. Skipped, with the reason,
without a CUDA device, without torchcodec, or when its FFmpeg cannot decode the fixture
on the GPU."""

import pytest

from conftest import torch
from test_window_loader_torchcodec import DATA, UNUSABLE, _loader

MEAN_LEVELS = 3.0  # of 255; measured on an H100 (torchcodec 0.14 NVDEC, FFmpeg 7.1): <= 1.04


def _skip_reason():
    if torch is None or not torch.cuda.is_available():
        return "no CUDA device"
    if UNUSABLE is not None:
        return UNUSABLE
    from torchcodec.decoders import VideoDecoder
    try:
        VideoDecoder(str(DATA / "videos/image/chunk-000/file-003.mp4"), device="cuda")[0]
    except RuntimeError as e:
        return f"torchcodec cannot decode the fixture on the GPU (NVDEC) ({e})"
    return None


REASON = _skip_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=str(REASON))


def _mean_diff(a, b):
    """[n] mean absolute difference of frames a, b [n, C, H, W] uint8."""
    return (a.float() - b.float()).abs().mean(dim=(1, 2, 3))


def test_nvdec_frames_are_the_pyav_frames_within_the_bound():
    windows = {"image": [0.0]}
    nvdec = _loader(windows=windows, device="cuda", decoder="torchcodec", decode_device="cuda")
    pyav = _loader(windows=windows, device="cuda")
    idx = torch.arange(100, 140)  # consecutive frames of episode 3
    got = nvdec.frames(idx)["image"]
    want = pyav.frames(idx)["image"]
    assert got.device.type == "cuda" and got.shape == want.shape == (40, 3, 480, 640)
    same = _mean_diff(got, want)
    assert same.max() < MEAN_LEVELS, same
    inner = same[1:-1]
    assert torch.all(inner < _mean_diff(got[1:-1], want[:-2]))  # the previous frame
    assert torch.all(inner < _mean_diff(got[1:-1], want[2:]))  # the next frame


def test_nvdec_batches_ahead_on_the_callers_stream_match_pyav():
    """Batches decoded ahead by NVDEC in two threads, consumed and kept on a
    stream of the caller's, against decoder="pyav" computed when asked for."""
    kw = dict(rate_hz=2.0, seed=5, batch_size=12, device="cuda")
    reference = list(_loader(prefetch=0, **kw))
    mine = torch.cuda.Stream()
    with torch.cuda.stream(mine):
        got = list(_loader(decoder="torchcodec", decode_device="cuda", prefetch=2,
                           decode_threads=2, **kw))
        sums = [b["image"].sum(dtype=torch.int64) for b in got]
    torch.cuda.synchronize()
    assert len(got) == len(reference) > 1
    for want, have, total in zip(reference, got, sums):
        assert want.keys() == have.keys()
        for key in want:
            assert have[key].device.type == "cuda"
            if key != "image":
                assert torch.equal(want[key], have[key]), key
        assert total == have["image"].sum(dtype=torch.int64)  # not overwritten since
        frames = have["image"].flatten(0, 1)
        assert _mean_diff(frames, want["image"].flatten(0, 1)).max() < MEAN_LEVELS
