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

import av
import numpy as np
import pyarrow.parquet as pq
import pytest

import robocache.datasets as rd
from robocache.convert import convert
from robocache.convert._check import check
from robocache.convert._convert import episodes, plan
from robocache.convert._episode import Feature
from robocache.convert._video_copy import Sources
from robocache.datasets._series import Series

from convert_support import (LEROBOT, lerobot_frames, needs_lerobot, video_frames,
                             video_packets)

V30 = LEROBOT / "lingzu_open50_v30_subset"
V21 = LEROBOT / "unitree_g1_inspire_v21_subset"
CAM = "observation.images.cam"


def v30_source_episodes():
    """[(mp4, from_timestamp, from_timestamp + length / fps)] of the fixture's episodes,
    from its meta (its to_timestamp is the last frame's time, one frame short)."""
    t = pq.read_table(next((V30 / "meta/episodes").rglob("*.parquet"))).to_pylist()
    out = []
    for row in sorted(t, key=lambda r: r["episode_index"]):
        mp4 = V30 / "videos/image/chunk-{:03d}/file-{:03d}.mp4".format(
            row["videos/image/chunk_index"], row["videos/image/file_index"])
        if mp4.exists():
            t0 = row["videos/image/from_timestamp"]
            out.append((mp4, t0, t0 + row["length"] / 30))
    return out


def output_episodes(out, key):
    """[(mp4, from_timestamp, to_timestamp)] of a converted dataset's episodes."""
    t = pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    return [(out / "videos/{}/chunk-{:03d}/file-{:03d}.mp4".format(
        key, r[f"videos/{key}/chunk_index"], r[f"videos/{key}/file_index"]),
        r[f"videos/{key}/from_timestamp"], r[f"videos/{key}/to_timestamp"]) for r in t]


def stream_info(mp4):
    with av.open(str(mp4)) as c:
        cc = c.streams.video[0].codec_context
        return {"video.codec": cc.codec.canonical_name, "video.pix_fmt": cc.pix_fmt,
                "video.width": cc.width, "video.height": cc.height}


def assert_passthrough(out, key, sources):
    got = output_episodes(out, key)
    assert len(got) == len(sources)
    for (mp4, a0, a1), (src, b0, b1) in zip(got, sources):
        want = video_packets(src, b0, b1)
        assert len(want) > 0 and video_packets(mp4, a0, a1) == want
    info = json.loads((out / "meta/info.json").read_text())["features"][key]["info"]
    assert {k: info[k] for k in stream_info(sources[0][0])} == stream_info(sources[0][0])
    meta = json.loads((out / "meta/robocache.json").read_text())["videos"][key]
    assert [e["path"] for e in meta["episodes"]] == ["passthrough"] * len(sources)
    report = json.loads((out.parent / (out.name + ".sync.json")).read_text())
    assert [e["videos"][key]["path"] for e in report["episodes"]] == ["passthrough"] * len(sources)
    assert check(str(out)) == []


def assert_lerobot_frames(out, key, sources, tmp_path, step):
    """lerobot's frames of every `step`-th row and each episode's last equal the
    input episode's frames decoded by PyAV."""
    want = [video_frames(*s) for s in sources]
    starts = np.cumsum([0] + [len(w) for w in want])
    picks = sorted(set(range(0, starts[-1], step)) | set(starts[1:] - 1))
    got = lerobot_frames(out, key, picks, tmp_path / "frames.npz")
    assert got["n"] == starts[-1]
    for k, i in enumerate(picks):
        e = int(np.searchsorted(starts, i, side="right")) - 1
        assert got["episode"][k] == e and got["frame"][k] == i - starts[e]
        np.testing.assert_allclose(got["frames"][k], want[e][i - starts[e]], atol=0.5)


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


@needs_lerobot
def test_passthrough_loads_in_lerobot(tmp_path):
    out = tmp_path / "ds"
    convert([str(V30)], str(out), to="lerobot", reference="image", streams=[f"{CAM}=image"])
    assert_lerobot_frames(out, CAM, v30_source_episodes(), tmp_path, step=37)


def _decisions(**grid):
    specs, fps, options = plan([str(V30)], to="lerobot", streams=grid.pop("streams"), **grid)
    out = []
    for ep in episodes([str(V30)], specs, fps, options):
        f = ep.features[0]
        idx = np.rint(ep.values[:, f.cols.start]).astype(np.int64)
        clip, reason = Sources().clip(f, idx, ep.frame_times, fps)
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
    return Sources().clip(f, np.arange(n), times, 30)


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
