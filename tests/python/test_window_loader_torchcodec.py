"""robocache.torch.WindowLoader(decoder="torchcodec") on the real LeRobot v3.0 video
fixture (data/robot/lerobot/lingzu_open50_v30_subset, MPEG-4 640 x 480, 30 fps): the
frames equal those of a sequential PyAV decode of the MP4 chosen by LeRobot's rule
(from_timestamp + timestamp, nearest frame within 1e-4 s), computed here from the
Parquet files; the batches equal those of decoder="pyav", computed ahead and across a
resume; the options' errors, and the error naming robocache[torchcodec] when the
package is missing. Both decoders convert with FFmpeg's swscale: the frames are equal
byte for byte (the bound is 0)."""

import pathlib
import sys

import numpy as np
import pytest

from conftest import requires_torch, torch

pytestmark = requires_torch

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "robot" / "lerobot" / \
    "lingzu_open50_v30_subset"
EPISODES = (3, 4)


def torchcodec_unusable():
    """Why torchcodec cannot decode the fixture here (None when it can)."""
    try:
        from torchcodec.decoders import VideoDecoder
    except ImportError as e:
        return f"torchcodec is not installed ({e})"
    except RuntimeError as e:  # installed, but its libraries do not load (FFmpeg, torch)
        return f"torchcodec cannot load its libraries ({str(e).splitlines()[0]})"
    try:
        VideoDecoder(str(DATA / "videos/image/chunk-000/file-003.mp4"))[0]
    except RuntimeError as e:
        return f"torchcodec cannot decode with this FFmpeg ({e})"
    return None


UNUSABLE = torchcodec_unusable()
requires_torchcodec = pytest.mark.skipif(UNUSABLE is not None, reason=str(UNUSABLE))


def _loader(**kw):
    import robocache.datasets as rd
    import robocache.torch as rt

    kw.setdefault("windows", {"image": [-1 / 30, 0.0, 1 / 30], "state": [0.0]})
    kw.setdefault("device", "cpu")
    return rt.WindowLoader(rd.open(DATA), batch_size=kw.pop("batch_size", 16), **kw)


def assert_resumed_equal(reference, ahead, resumed):
    """Three batches of `ahead`, then its state_dict() loaded into `resumed` for
    the rest of the epoch: every batch equals `reference`'s (an epoch's list)."""
    it = iter(ahead)
    head = [next(it) for _ in range(3)]
    state = ahead.state_dict()
    it.close()
    resumed.load_state_dict(state)
    got = head + list(resumed)
    assert len(got) == len(reference) > 3
    for want, have in zip(reference, got):
        assert want.keys() == have.keys()
        for key in want:
            assert torch.equal(want[key], have[key]), key


def _pyav_frames(episode, rows):
    """uint8 [len(rows), H, W, 3]: the frames of `rows` of the episode, by LeRobot's
    rule on a sequential PyAV decode of its MP4."""
    import av
    import pyarrow.parquet as pq

    meta = pq.read_table(DATA / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    entry = next(m for m in meta if m["episode_index"] == episode)
    data = pq.read_table(DATA / f"data/chunk-000/file-{entry['data/file_index']:03d}.parquet",
                         columns=["timestamp", "episode_index"]).to_pydict()
    ts = np.array([t for t, e in zip(data["timestamp"], data["episode_index"]) if e == episode],
                  dtype=np.float32).astype(np.float64)
    query = entry["videos/image/from_timestamp"] + ts[rows]
    path = DATA / (f"videos/image/chunk-{entry['videos/image/chunk_index']:03d}/"
                   f"file-{entry['videos/image/file_index']:03d}.mp4")
    out = [None] * rows.size
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            # 1e-4 s is far below half the frame interval: at most one frame is that close
            for i in np.flatnonzero(np.abs(query - frame.time) < 1e-4):
                out[i] = frame.to_ndarray(format="rgb24")
    assert all(f is not None for f in out)
    return np.stack(out)


@requires_torchcodec
def test_torchcodec_frames_equal_a_sequential_pyav_decode():
    loader = _loader(windows={"image": [0.0]}, decoder="torchcodec")
    starts = np.concatenate(([0], np.cumsum([len(e.streams["image"].times)
                                             for e in loader.recording.episodes
                                             if e.index in EPISODES])))
    rng = np.random.default_rng(0)
    for k, episode in enumerate(EPISODES):
        n = starts[k + 1] - starts[k]
        rows = np.concatenate(([0, 1, n - 2, n - 1], rng.choice(n, 24, replace=False)))
        got = loader.frames(torch.from_numpy(starts[k] + rows))
        assert not got["image_is_pad"].any()
        assert got["image"].shape == (rows.size, 3, 480, 640)  # one frame: no window axis
        want = _pyav_frames(episode, rows)
        np.testing.assert_array_equal(got["image"].permute(0, 2, 3, 1).numpy(), want,
                                      err_msg=f"episode {episode}")


@requires_torchcodec
def test_torchcodec_batches_equal_pyav_batches_ahead_and_resumed():
    """decoder="pyav" computed when asked for is the reference; torchcodec in two
    threads with batches decoded ahead, stopped after 3 batches and resumed."""
    kw = dict(rate_hz=2.0, seed=5, batch_size=12)
    reference = list(_loader(prefetch=0, **kw))
    assert_resumed_equal(reference, _loader(decoder="torchcodec", prefetch=3, decode_threads=2,
                                            **kw), _loader(decoder="torchcodec", prefetch=2, **kw))
    padded = torch.cat([b["image_is_pad"] for b in reference])
    assert padded.any() and not padded.all()  # windows past the episodes' ends


def test_missing_torchcodec_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchcodec", None)
    monkeypatch.setitem(sys.modules, "torchcodec.decoders", None)
    with pytest.raises(ImportError, match=r"pip install 'robocache\[torchcodec\]'"):
        _loader(decoder="torchcodec")


def test_decoder_options_are_checked():
    with pytest.raises(ValueError, match="decoder must be one of 'pyav', 'torchcodec'"):
        _loader(decoder="opencv")
    with pytest.raises(ValueError, match="decode_device must be one of"):
        _loader(decode_device="gpu")
    with pytest.raises(ValueError, match=r"decode_device='cuda' needs decoder='torchcodec'"):
        _loader(decode_device="cuda")
    with pytest.raises(ValueError, match="decodes on the loader's GPU, but device is cpu"):
        _loader(decoder="torchcodec", decode_device="cuda")


@requires_torchcodec
def test_torchcodec_refuses_frames_that_are_not_a_video_file(euroc_imu, euroc_gt, euroc_cam):
    from test_window_loader import _loader as euroc_loader, _recording, coded_frames

    rec = _recording(euroc_imu, euroc_gt, euroc_cam, frames=coded_frames)
    with pytest.raises(ValueError, match="key 'cam': decoder='torchcodec' decodes video "
                                         "files; stream 'cam' is not"):
        euroc_loader(rec, windows={"cam": [0.0]}, decoder="torchcodec")
