"""robocache.torch.WindowLoader(decode_workers=2) on the real LeRobot v3.0 video fixture
(data/robot/lerobot/lingzu_open50_v30_subset, MPEG-4 640 x 480, 30 fps): image keys
decoded in two DataLoader worker processes give the batches of the in-process decode
(decode_workers=0, computed when asked for), shuffled, across an epoch boundary, after a
resume in the middle of an epoch and after a loop left early (also torchcodec, and the
in-memory frames of the EuRoC camera); a damaged video raises in
the caller the DatasetError the in-process decode raises, word for word, and leaves no
worker process; close() and deleting the loader leave none either."""

import multiprocessing
import shutil

import pytest

from conftest import requires_torch, torch
from test_window_loader_torchcodec import DATA, _loader, requires_torchcodec

pytestmark = requires_torch

KW = dict(rate_hz=2.0, seed=5, batch_size=12)  # 5 shuffled batches an epoch, windows padded


def _equal(want, have):
    assert len(want) == len(have) > 0
    for w, h in zip(want, have):
        assert w.keys() == h.keys()
        for key in w:
            assert torch.equal(w[key], h[key]), key


def _no_children():
    assert multiprocessing.active_children() == []


def test_workers_give_the_in_process_batches_across_epochs_resume_and_break():
    reference = _loader(prefetch=0, **KW)
    epochs = [list(reference), list(reference)]
    assert not torch.equal(epochs[0][0]["sample_index"], epochs[1][0]["sample_index"])
    padded = torch.cat([b["image_is_pad"] for b in epochs[0]])
    assert padded.any() and not padded.all()  # windows past the episodes' ends

    ahead = _loader(decode_workers=2, prefetch=2, **KW)
    it = iter(ahead)
    head = [next(it) for _ in range(3)]
    assert len(multiprocessing.active_children()) == 2
    state = ahead.state_dict()
    it.close()  # a loop left early: batches decoded ahead are not consumed
    assert state["batch"] == 3
    _equal(epochs[0][3:], list(ahead))  # the same loader goes on where it stopped

    resumed = _loader(decode_workers=2, prefetch=1, **KW)
    resumed.load_state_dict(state)
    _equal(epochs[0], head + list(resumed))
    _equal(epochs[1], list(resumed))  # the next epoch, same worker processes
    assert len(multiprocessing.active_children()) == 4
    ahead.close()
    resumed.close()
    _no_children()


def test_workers_decode_image_streams_that_are_not_video_files(euroc_imu, euroc_gt, euroc_cam):
    """The EuRoC camera as in-memory frames coding their frame number (the reader's
    Series.frames, inherited by the fork): the batches of the in-process decode."""
    from test_window_loader import _loader as euroc_loader, _recording, coded_frames

    rec = _recording(euroc_imu, euroc_gt, euroc_cam, frames=coded_frames)
    kw = dict(seed=3, windows={"cam": [-0.1, 0.0, 0.05], "imu": [0.0]}, batch_size=256)
    _equal(list(euroc_loader(rec, prefetch=0, **kw)),
           list(euroc_loader(rec, decode_workers=2, **kw)))
    _no_children()


@requires_torchcodec
def test_torchcodec_in_workers_gives_the_pyav_batches():
    """Each worker opens its own torchcodec decoders (none is shared across the fork)."""
    want = list(_loader(prefetch=0, **KW))
    workers = _loader(decoder="torchcodec", decode_workers=2, **KW)
    workers.frames(torch.arange(4))  # torchcodec decoders open in the parent
    _equal(want, list(workers))
    workers.close()
    _no_children()


def test_close_and_deleting_the_loader_stop_the_workers():
    reference = list(_loader(prefetch=0, **KW))
    loader = _loader(decode_workers=2, **KW)
    next(iter(loader))
    loader.close()
    _no_children()
    loader.set_epoch(0)
    _equal(reference, list(loader))  # new workers after close()
    assert len(multiprocessing.active_children()) == 2
    del loader
    _no_children()


def test_a_damaged_video_raises_the_in_process_error_and_stops_the_workers(tmp_path):
    import robocache.datasets as rd
    import robocache.torch as rt

    root = tmp_path / "lingzu"
    shutil.copytree(DATA, root)
    mp4 = root / "videos/image/chunk-000/file-003.mp4"  # episode 3's frames
    data = bytearray(mp4.read_bytes())
    data[100_000:1_900_000] = bytes(1_800_000)  # the coded frames zeroed, the index kept
    mp4.write_bytes(data)

    def error(**kw):
        loader = rt.WindowLoader(root, windows={"image": [0.0]}, device="cpu", shuffle=False,
                                 **KW, **kw)
        with pytest.raises(rd.DatasetError) as raised:
            for _ in loader:
                pass
        return str(raised.value)

    want = error(prefetch=0)
    assert want.startswith(f"{mp4}: cannot decode the video")
    assert error(decode_workers=2) == want
    _no_children()


def test_decode_worker_options_are_checked():
    with pytest.raises(ValueError, match="decode_workers must be >= 0, got -1"):
        _loader(decode_workers=-1)
    with pytest.raises(ValueError, match="decode_workers > 0 decodes batches ahead: it needs "
                                         "prefetch >= 1"):
        _loader(decode_workers=2, prefetch=0)
    with pytest.raises(ValueError, match=r"decode_device='cuda' \(NVDEC\) decodes in the "
                                         "training process"):
        _loader(decode_workers=2, decoder="torchcodec", decode_device="cuda")
    with pytest.raises(ValueError, match="inherit the loader's readers by fork; "
                                         "multiprocessing_context 'spawn'"):
        _loader(decode_workers=2, multiprocessing_context="spawn")
    _no_children()
