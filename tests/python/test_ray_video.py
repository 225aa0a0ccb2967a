"""Image features on Ray: three rosbag2 MCAP recordings of raw rgb8 camera
frames (frame i = one random image rolled i columns) and a 210 Hz IMU,
written here with rosbags, converted serially and on a local Ray (2 CPUs).

The serial converter writes every episode into one MP4; on Ray each
recording's worker encodes its own MP4 with the same writer and the merge
places them as videos/<key>/chunk-000/file-000..002.mp4, each episode's
from/to timestamps relative to its own file. The decoded frames (PyAV) are
equal frame for frame: the writer starts every episode on a key frame, so
an episode in the middle of the serial file is encoded as if it started a
file (the first recording has an odd length: the second episode starts at an
odd frame, off LeRobot's g=2 key frame grid). Every Parquet value equals the serial one apart from
those four video columns, `robocache check` reports the Ray dataset clean,
and lerobot (its own Python, see convert/test_lerobot_oracle.py) loads it."""

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

ray = pytest.importorskip("ray")
av = pytest.importorskip("av")
rr = pytest.importorskip("robocache.ray")
from robocache.convert import convert  # noqa: E402
from robocache.convert._check import check  # noqa: E402
from robocache.ray import _resume  # noqa: E402

from ray_support import ROOT, local_ray  # noqa: E402

S = 10**9
H, W = 48, 64
CAM = "observation.images.cam"
STREAMS = [f"{CAM}=/cam", "observation.imu=/imu/linear_acceleration"]
FRAMES = (25, 32, 20)   # camera frames per recording
ORACLE = os.environ.get("ROBOCACHE_LEROBOT_PYTHON") or str(ROOT / ".venv-lerobot/bin/python")

LOAD = r"""
import sys
import numpy as np
from lerobot.datasets.lerobot_dataset import LeRobotDataset
ds = LeRobotDataset("local/robocache_ray", root=sys.argv[1], video_backend="pyav")
rows = [ds[i] for i in range(len(ds))]
np.savez(sys.argv[2], frames=np.stack([r["observation.images.cam"].numpy() for r in rows]),
         episode=np.array([int(r["episode_index"]) for r in rows]))
"""


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    d = tmp_path_factory.mktemp("bags")
    out = []
    for seed, n in enumerate(FRAMES):
        p = subprocess.run([sys.executable, str(ROOT / "tests/oracles/camera_bag.py"),
                            str(d / f"cam{seed}"), str(n), str(seed), str(H), str(W)],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-3000:]
        out.append(str(d / f"cam{seed}"))
    return out


@pytest.fixture(scope="module")
def datasets(recordings, tmp_path_factory):
    d = tmp_path_factory.mktemp("out")
    convert(recordings, str(d / "serial"), to="lerobot", fps=30, streams=STREAMS)
    local_ray(sys.modules[__name__])
    try:
        rr.convert(recordings, str(d / "ray"), streams=STREAMS, fps=30, num_workers=2)
    finally:
        ray.shutdown()
    return d / "serial", d / "ray"


def episodes(root):
    return pq.read_table(root / "meta/episodes/chunk-000/file-000.parquet").to_pylist()


def decoded(root, ep):
    """The episode's frames uint8 [T, H, W, 3], decoded by PyAV from its file."""
    p = f"videos/{CAM}/"
    path = root / f"{p}chunk-{ep[p + 'chunk_index']:03d}/file-{ep[p + 'file_index']:03d}.mp4"
    with av.open(str(path)) as c:
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    first, last = (round(ep[p + k] * 30) for k in ("from_timestamp", "to_timestamp"))
    return np.stack(frames[first:last])


def test_video_frames_equal_serial(datasets):
    serial, out = datasets
    a, b = episodes(serial), episodes(out)
    lengths = [e["length"] for e in a]
    assert len(lengths) == len(FRAMES) and lengths[0] % 2 == 1, lengths
    assert [e["length"] for e in b] == lengths
    for i, (ea, eb) in enumerate(zip(a, b)):
        fa, fb = decoded(serial, ea), decoded(out, eb)
        assert fa.shape == fb.shape == (lengths[i], H, W, 3)
        np.testing.assert_array_equal(fb, fa, err_msg=f"episode {i}")
    # one file per recording, each episode at the start of its own
    p = f"videos/{CAM}/"
    assert [(e[p + "chunk_index"], e[p + "file_index"]) for e in b] == [(0, 0), (0, 1), (0, 2)]
    assert [e[p + "from_timestamp"] for e in b] == [0.0, 0.0, 0.0]
    assert [e[p + "to_timestamp"] for e in b] == [n / 30 for n in lengths]
    assert sorted(os.listdir(out / f"videos/{CAM}/chunk-000")) == [
        "file-000.mp4", "file-001.mp4", "file-002.mp4"]


def test_parquet_and_metadata_equal_serial(datasets):
    serial, out = datasets
    data = "data/chunk-000/file-000.parquet"
    assert pq.read_table(serial / data).equals(pq.read_table(out / data))
    where = {f"videos/{CAM}/{k}" for k in ("file_index", "from_timestamp", "to_timestamp")}
    a, b = (pq.read_table(r / "meta/episodes/chunk-000/file-000.parquet") for r in datasets)
    assert a.column_names == b.column_names
    for name in a.column_names:
        if name not in where:
            assert a.column(name).equals(b.column(name)), name
    for rel in ("meta/stats.json", "meta/info.json", "meta/tasks.parquet"):
        assert (serial / rel).read_bytes() == (out / rel).read_bytes(), rel
    # the same meta/robocache.json and sync report but for where the videos are
    ma, mb = (json.loads((r / "meta/robocache.json").read_text()) for r in datasets)
    va, vb = ma.pop("videos")[CAM], mb.pop("videos")[CAM]
    assert ma == mb
    assert [f["file"] for f in vb["files"]] == [
        f"videos/{CAM}/chunk-000/file-00{i}.mp4" for i in range(3)]
    assert unplaced(va["episodes"]) == unplaced(vb["episodes"])
    assert [(e["chunk_index"], e["file_index"]) for e in vb["episodes"]] == [(0, 0), (0, 1),
                                                                              (0, 2)]
    ra, rb = (json.loads((r.parent / f"{r.name}.sync.json").read_text()) for r in datasets)
    assert unplaced([e.pop("videos")[CAM] for e in ra["episodes"]]) == unplaced(
        [e.pop("videos")[CAM] for e in rb["episodes"]])
    assert ra["episodes"] == rb["episodes"]


def unplaced(paths):
    """The video path entries without the file they name."""
    return [{k: v for k, v in p.items() if k not in ("chunk_index", "file_index")}
            for p in paths]


def test_check_clean(datasets):
    assert check(str(datasets[1])) == []


@pytest.mark.skipif(not os.access(ORACLE, os.X_OK), reason=f"no lerobot environment at {ORACLE}")
def test_loads_in_lerobot(datasets, tmp_path):
    out = datasets[1]
    dump = tmp_path / "frames.npz"
    p = subprocess.run([ORACLE, "-c", LOAD, str(out), str(dump)], capture_output=True, text=True,
                       env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    got = np.load(dump)
    eps = episodes(out)
    want = np.concatenate([decoded(out, e) for e in eps])
    assert got["episode"].tolist() == [i for i, e in enumerate(eps) for _ in range(e["length"])]
    # lerobot returns float [C, H, W] in [0, 1] of the same FFmpeg decode
    np.testing.assert_allclose(got["frames"].transpose(0, 2, 3, 1) * 255, want, atol=0.5)


def test_resumed_merge_places_the_journalled_videos(recordings, datasets, tmp_path):
    # Data files of 1 byte: each episode's closes the one before, so the merge
    # journals shard 0 (its data file and placed MP4) and removes its shard
    # before a job that stops at shard 2; the rerun converts only
    # recordings[2] and writes the dataset of an uninterrupted job (data and
    # metadata byte for byte, the same decoded frames).
    mb = 2.0 ** -20
    local_ray(sys.modules[__name__])
    try:
        rr.convert(recordings, str(tmp_path / "whole"), streams=STREAMS, fps=30, num_workers=2,
                   data_files_size_in_mb=mb)
        out = tmp_path / "resumed"
        ds = rr.read_recordings(recordings, streams=STREAMS, fps=30, output=str(out))
        with pytest.raises(OSError, match="missing"):
            rr.write_lerobot(ds.limit(2).map_batches(rr.Align, batch_size=1,
                                                     batch_format="numpy"),
                             str(out), data_files_size_in_mb=mb)
        ds = rr.read_recordings(recordings, streams=STREAMS, fps=30, output=str(out))
        assert [r["path"] for r in ds.take_all()] == recordings[2:]
        (rec,) = _resume.records(tmp_path / ".resumed.shards")
        assert sorted(rec["files"]) == ["data/chunk-000/file-000.parquet",
                                         f"videos/{CAM}/chunk-000/file-000.mp4"]
        assert not (tmp_path / ".resumed.shards" / rec["keys"][0]).exists()
        rr.convert(recordings, str(out), streams=STREAMS, fps=30, num_workers=2,
                   data_files_size_in_mb=mb)
    finally:
        ray.shutdown()
    whole = tmp_path / "whole"
    assert len(os.listdir(out / "data/chunk-000")) == len(FRAMES)
    for rel in ["meta/stats.json", "meta/info.json", "meta/tasks.parquet",
                "meta/robocache.json", "meta/episodes/chunk-000/file-000.parquet"] + [
            f"data/chunk-000/file-00{i}.parquet" for i in range(len(FRAMES))]:
        assert (whole / rel).read_bytes() == (out / rel).read_bytes(), rel
    for ea, eb in zip(episodes(whole), episodes(out)):
        np.testing.assert_array_equal(decoded(out, eb), decoded(whole, ea))
