"""Video features of LeRobot datasets: frame counts and PTS against plain PyAV, frames
decoded on demand against a sequential PyAV decode (bit-exact: same FFmpeg decoder),
and LeRobot's v3.0 rule (video time = from_timestamp + timestamp in a shared MP4) on a
generated dataset whose frames carry their frame number."""

import json
import pathlib
from fractions import Fraction

import numpy as np
import pytest

av = pytest.importorskip("av")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import robocache.datasets as rd  # noqa: E402
from lerobot_testdata import frame_number, write_v30  # noqa: E402
from robocache.datasets.video import VideoFile  # noqa: E402

LEROBOT = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot" / "lerobot"
CASES = [("lingzu_open50_v30_subset", 3, "image"), ("lingzu_open50_v30_subset", 4, "image"),
         ("unitree_g1_inspire_v21_subset", 2, "observation.images.cam_high")]
IDS = ["lingzu-3-mpeg4", "lingzu-4-mpeg4", "unitree-2-av1"]


def sequential(path, keep):
    """Plain PyAV: (PTS in seconds of every decoded frame, {position: RGB} for the
    positions in `keep`), decoding the whole file in order."""
    times, frames = [], {}
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        for k, frame in enumerate(c.decode(stream)):
            times.append(float(frame.pts * stream.time_base))
            if k in keep:
                frames[k] = frame.to_ndarray(format="rgb24")
    return np.array(times), frames


def packet_times(path):
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        return sorted(float(p.pts * stream.time_base) for p in c.demux(stream)
                      if p.pts is not None)


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def case(request):
    folder, episode, key = request.param
    rec = rd.open(LEROBOT / folder)
    ep = next(e for e in rec.episodes if e.index == episode)
    s = ep.streams[key]
    n = len(s)
    picks = [0, n // 2, n - 1, 7]
    times, frames = sequential(s.meta["video_file"], set(picks))
    return ep, s, times, frames, picks


def test_frame_count_and_pts(case):
    ep, s, times, _, _ = case
    assert s.kind == "image" and s.clock == "timestamp" and s.fields == ["frame_index"]
    np.testing.assert_array_equal(s.values[:, 0], np.arange(len(s)))
    assert len(times) == len(s) == ep.meta["length"]
    np.testing.assert_array_equal(times, packet_times(s.meta["video_file"]))
    # LeRobot's rule: frame k of the episode is the one at from_timestamp + timestamp[k]
    seconds = s.times.astype(np.float64) * 1e-9 + s.meta["from_timestamp"]
    assert np.max(np.abs(times - seconds)) < 1e-4
    # the reader's packet index gives the same PTS as the decoder, as exact fractions
    with av.open(s.meta["video_file"]) as c:
        base = c.streams.video[0].time_base
    video = VideoFile(s.meta["video_file"])
    assert list(video.times_s) == [float(Fraction(int(p)) * base) for p in video.pts]
    np.testing.assert_array_equal(video.times_s, times)


@pytest.mark.parametrize("order", ["sorted", "unsorted", "repeated"])
def test_frames_equal_sequential_decode(case, order):
    _, s, _, frames, picks = case
    first, mid, last, seventh = picks
    indices = {"sorted": [first, seventh, mid, last], "unsorted": [last, first, mid, seventh],
               "repeated": [mid, mid, first, mid]}[order]
    got = s.frames(indices)
    h, w = s.meta["shape"][:2]
    assert got.dtype == np.uint8 and got.shape == (len(indices), h, w, 3)
    for image, i in zip(got, indices):
        np.testing.assert_array_equal(image, frames[i])


def test_negative_empty_and_out_of_range_indices(case):
    _, s, _, frames, picks = case
    np.testing.assert_array_equal(s.frames([-1])[0], frames[picks[2]])
    assert s.frames([]).shape == (0,) + tuple(frames[0].shape)
    with pytest.raises(IndexError):
        s.frames([len(s)])


def test_v30_shared_mp4_uses_from_timestamp(tmp_path):
    lengths = [10, 12, 7]
    write_v30(tmp_path, lengths, per_file=3, video=True)
    rec = rd.open(tmp_path)
    mp4 = tmp_path / "videos" / "observation.images.cam" / "chunk-000" / "file-000.mp4"
    times, frames = sequential(mp4, set(range(sum(lengths))))
    assert len(times) == sum(lengths)
    for ep, first in zip(rec.episodes, np.cumsum([0] + lengths[:-1])):
        s = ep.streams["observation.images.cam"]
        assert s.meta["from_timestamp"] == first / 30
        indices = [len(s) - 1, 0, 3, 3, len(s) // 2]
        got = s.frames(indices)
        assert [frame_number(g) for g in got] == [first + i for i in indices]
        for image, i in zip(got, indices):
            np.testing.assert_array_equal(image, frames[first + i])


def test_tolerance_of_the_frame_match(tmp_path):
    """A from_timestamp 0.15 ms off: no frame within LeRobot's 1e-4 s, one within 2e-4 s."""
    write_v30(tmp_path, [6, 8], video=True)
    path = tmp_path / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(path).to_pylist()
    table[1]["videos/observation.images.cam/from_timestamp"] += 1.5e-4
    pq.write_table(pa.Table.from_pylist(table), path)
    s = rd.open(tmp_path).episodes[1].streams["observation.images.cam"]
    with pytest.raises(rd.DatasetError, match=r"frame index 2 .* no frame within 0.0001 s"):
        s.frames([2])
    s = rd.open(tmp_path, tolerance_s=2e-4).episodes[1].streams["observation.images.cam"]
    assert frame_number(s.frames([2])[0]) == 6 + 2


def test_open_and_times_decode_nothing(monkeypatch):
    calls = []
    real = av.open

    def spy(*a, **k):
        calls.append(a[0])
        return real(*a, **k)

    monkeypatch.setattr(av, "open", spy)
    rec = rd.open(LEROBOT / "lingzu_open50_v30_subset")
    for ep in rec.episodes:
        ep.streams["image"].times
    assert calls == []
    rec.episodes[0].streams["image"].frames([5])
    assert calls and set(calls) == {rec.episodes[0].meta["videos"]["image"]["file"]}


def test_info_json_video_shape_matches_decoded_frames():
    info = json.loads((LEROBOT / "lingzu_open50_v30_subset" / "meta" / "info.json").read_text())
    s = rd.open(LEROBOT / "lingzu_open50_v30_subset").episodes[0].streams["image"]
    assert s.frames([0]).shape[1:] == tuple(info["features"]["image"]["shape"])
