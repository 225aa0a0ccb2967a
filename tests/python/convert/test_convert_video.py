"""An image stream of a LeRobot video input to a LeRobot v3.0 video feature.

On the camera's own frames (--reference on it, at the input's 30 fps) every
episode's packets are copied: the output's packets of each episode are the
input episode's packets byte for byte (PyAV demux of both files, the input's
episode span from its own meta/episodes), info.json describes the input's
stream (codec, pix_fmt, size as PyAV reads them), the real lerobot loads it
and decodes the input's frames, robocache check reports it clean. Other
grids re-encode, and the reason is recorded (the decision of every rule on
the real fixture, and a conversion at 15 fps whose AV1 frames lerobot loads).
"""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import robocache.datasets as rd
from robocache.convert import convert
from robocache.convert._check import check
from robocache.convert._convert import episodes, plan
from robocache.convert._episode import Feature
from robocache.convert._stats import of_array, of_images
from robocache.convert._video_copy import Sources
from robocache.datasets._series import Series

from convert_support import (LEROBOT, V30, assert_lerobot_frames, assert_passthrough,
                             needs_lerobot, output_episodes, v30_source_episodes, video_frames)

V21 = LEROBOT / "unitree_g1_inspire_v21_subset"
CAM = "observation.images.cam"


def test_v30_video_passes_through(tmp_path):
    out = tmp_path / "ds"
    convert([str(V30)], str(out), to="lerobot", reference="image",
            streams=["observation.state=state", "action=actions", f"{CAM}=image"])
    assert_passthrough(out, CAM, v30_source_episodes())
    table = pq.read_table(next((out / "data").rglob("*.parquet")))
    state = np.array(table.column("observation.state").to_pylist(), np.float32)
    np.testing.assert_array_equal(
        state, np.concatenate([ep.streams["state"].values for ep in rd.open(str(V30)).episodes]))


def test_v21_video_passes_through(tmp_path):
    out = tmp_path / "ds"
    key = "observation.images.cam_high"
    convert([str(V21)], str(out), to="lerobot", reference=key,
            streams=["observation.state=observation.state", f"{key}={key}"])
    mp4 = next(V21.rglob("*.mp4"))
    n = json.loads((V21 / "meta/episodes.jsonl").read_text().splitlines()[2])["length"]
    assert_passthrough(out, key, [(mp4, 0.0, n / 30)])


def _decisions(**grid):
    specs, fps, options = plan([str(V30)], to="lerobot", streams=grid.pop("streams"), **grid)
    out = []
    for ep in episodes([str(V30)], specs, fps, options):
        f = ep.features[0]
        idx = np.rint(ep.values[:, f.cols.start]).astype(np.int64)
        clip, reason = Sources().clip(f, idx, fps)
        out.append("passthrough" if clip is not None else reason.split(":")[0])
    return out


@pytest.mark.parametrize("grid, want", [
    ({"reference": "image"}, "passthrough"),
    # the uniform 30 fps grid ends past the last frame's float32 timestamp: the
    # last frame is not on the grid
    ({"fps": 30}, "frames"),
    ({"fps": 15}, "frames"),
    ({"fps": 20, "reference": "image"}, "grid"),
    ({"reference": "image", "streams": [f"{CAM}=image,method=previous"]}, "method"),
    ({"reference": "image", "streams": [f"{CAM}=image", "s=state,offset=40ms"]}, "frames"),
])
def test_passthrough_rule(grid, want):
    assert _decisions(**{"streams": [f"{CAM}=image"], **grid}) == [want, want]


def _clip_of(mp4, from_timestamp, n):
    """The passthrough decision for n frames at k / 30 s after from_timestamp."""
    times = np.rint(np.arange(n) / 30 * 1e9).astype(np.int64)
    s = Series("cam", lambda: (times, np.arange(n).reshape(-1, 1)), kind="image",
               clock="timestamp", meta={"video_file": str(mp4), "from_timestamp": from_timestamp})
    f = Feature("cam", "image", ["frame_index"], slice(0, 1), [s], [{"method": "nearest"}])
    return Sources().clip(f, np.arange(n), 30)


def test_passthrough_needs_keyframe_edges():
    """Frames consecutive in the MP4 and on the grid, but starting one frame late or
    ending one frame early (the fixture's frame 1 and its last frame are not
    keyframes), are re-encoded; the whole episode is copied."""
    mp4, t0, t1 = v30_source_episodes()[0]
    n = round((t1 - t0) * 30)
    for start, count in ((t0 + 1 / 30, n - 1), (t0, n - 1)):
        clip, reason = _clip_of(mp4, start, count)
        assert clip is None and reason.startswith("keyframe")
    clip, reason = _clip_of(mp4, t0, n)
    assert reason is None and clip.count == n


@needs_lerobot
def test_other_fps_reencodes(tmp_path):
    out = tmp_path / "ds"
    convert([str(V30)], str(out), to="lerobot", fps=15, streams=[f"{CAM}=image"],
            video_files_size_in_mb=0.01)
    meta = json.loads((out / "meta/robocache.json").read_text())["videos"][CAM]
    assert [e["path"] for e in meta["episodes"]] == ["reencode", "reencode"]
    assert all(e["reason"].startswith("frames:") for e in meta["episodes"])
    # 0.01 MiB: every episode in its own AV1 file
    assert [(f["file"].rsplit("/", 1)[1], f["codec"], f["episodes"]) for f in meta["files"]] \
        == [("file-000.mp4", "av1", 1), ("file-001.mp4", "av1", 1)]
    assert check(str(out)) == []
    got_eps = output_episodes(out, CAM)
    assert [e[0].name for e in got_eps] == ["file-000.mp4", "file-001.mp4"]
    ours = [video_frames(*e) for e in got_eps]
    # lerobot decodes our files to what PyAV decodes from them; the frames are the
    # input's every other frame through lossy AV1
    assert_lerobot_frames(out, CAM, got_eps, tmp_path, step=41)
    for o, src in zip(ours, v30_source_episodes()):
        want = video_frames(*src)[::2][:len(o)].astype(np.int16)
        assert np.abs(o.astype(np.int16) - want).mean() < 6


def test_image_stats_from_histograms():
    """The image statistics of meta/stats.json (per channel in [0, 1]) from the
    histogram equal NumPy's over the float frames: real frames of the fixture and
    random ones (odd counts: quantiles between two levels)."""
    frames = rd.open(str(V30)).episodes[0].streams["image"].frames([0, 100, 200, 428])
    rng = np.random.default_rng(5)
    for x in (frames, rng.integers(0, 256, (3, 7, 5, 3), dtype=np.uint8)):
        want, got = of_array(x.transpose(0, 3, 1, 2) / 255.0), of_images(x)
        assert got.keys() == want.keys() and got["count"] == want["count"]
        for k in ("min", "max", "q01", "q10", "q50", "q90", "q99"):
            assert got[k] == want[k], k
        for k in ("mean", "std"):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-10)  # NumPy sums floats
