"""File roll-over of a LeRobot v3.0 output (robocache convert --video-file-size-mb,
--data-file-size-mb): the video fixture given twice (four episodes, packets
copied) with a 3 MiB video limit and a 0.01 MiB data limit. A file takes
episodes until the bytes in it reach the limit: the video files expected
from the input episodes' packet sizes (PyAV demux of the inputs), each data
file one episode (each episode's rows are more than 0.01 MiB). meta/episodes
points every episode at its files and its span in them: the packets there are
the input episode's, lerobot loads every episode's frames and rows from
them, and robocache check reports the output clean."""

import json
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq

import robocache.datasets as rd
from robocache.convert._check import check

from convert_support import (V30, assert_lerobot_frames, needs_lerobot, output_episodes,
                             v30_source_episodes, video_packets)

CAM = "observation.images.cam"
VIDEO_MB, DATA_MB = 3, 0.01


def expected_files(sizes, limit):
    """The file index of each episode of `sizes` bytes: a new file once the current
    one holds `limit` bytes or more."""
    out, file, held = [], 0, 0
    for n in sizes:
        if held >= limit:
            file, held = file + 1, 0
        out.append(file)
        held += n
    return out


def convert_twice(tmp_path):
    out = tmp_path / "ds"
    p = subprocess.run([sys.executable, "-m", "robocache.cli", "convert", str(V30), str(V30),
                        "-o", str(out), "--to", "lerobot", "--reference", "image", "-q",
                        "--stream", "observation.state=state", "--stream", f"{CAM}=image",
                        "--video-file-size-mb", str(VIDEO_MB),
                        "--data-file-size-mb", str(DATA_MB)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out


def test_rollover(tmp_path):
    out = convert_twice(tmp_path)
    sources = v30_source_episodes() * 2
    sizes = [sum(map(len, video_packets(*s))) for s in sources]
    want = expected_files(sizes, VIDEO_MB * 2 ** 20)
    assert len(set(want)) >= 2 and len(set(want)) < len(want)  # several files, shared
    eps = pq.read_table(out / "meta/episodes/chunk-000/file-000.parquet").to_pylist()
    assert [e[f"videos/{CAM}/file_index"] for e in eps] == want
    assert [e[f"videos/{CAM}/chunk_index"] for e in eps] == [0] * len(want)
    got = output_episodes(out, CAM)
    for (mp4, t0, t1), src in zip(got, sources):
        assert video_packets(mp4, t0, t1) == video_packets(*src)
    assert [e["data/file_index"] for e in eps] == list(range(len(eps)))
    lengths = [e["length"] for e in eps]
    for e, n in zip(eps, lengths):
        data = out / "data/chunk-000/file-{:03d}.parquet".format(e["data/file_index"])
        assert pq.read_metadata(data).num_rows == n
    info = json.loads((out / "meta/info.json").read_text())
    assert (info["video_files_size_in_mb"], info["data_files_size_in_mb"]) == (VIDEO_MB, DATA_MB)
    files = json.loads((out / "meta/robocache.json").read_text())["videos"][CAM]["files"]
    assert [f["bytes"] for f in files] == [sum(s for s, w in zip(sizes, want) if w == k)
                                           for k in sorted(set(want))]
    assert check(str(out)) == []


@needs_lerobot
def test_rollover_loads_in_lerobot(tmp_path):
    out = convert_twice(tmp_path)
    picks, got = assert_lerobot_frames(out, CAM, v30_source_episodes() * 2, tmp_path, 53,
                                       "observation.state", "index")
    np.testing.assert_array_equal(got["index"].reshape(-1), picks)
    state = np.concatenate([ep.streams["state"].values for ep in rd.open(str(V30)).episodes] * 2)
    np.testing.assert_array_equal(got["observation.state"], state[picks])


def test_size_limits_are_checked(tmp_path):
    """A limit that is not positive, or given for robomimic, is a usage error (exit 2)
    raised before anything is written."""
    for to, args in (("lerobot", ["--video-file-size-mb", "0"]),
                     ("lerobot", ["--data-file-size-mb", "-1"]),
                     ("robomimic", ["--video-file-size-mb", "5"])):
        out = tmp_path / ("ds" if to == "lerobot" else "ds.hdf5")
        p = subprocess.run([sys.executable, "-m", "robocache.cli", "convert", str(V30),
                            "-o", str(out), "--to", to, "--reference", "image", "-q",
                            "--stream", "action=state", *args], capture_output=True, text=True)
        assert p.returncode == 2 and args[0] in p.stderr, p.stderr
        assert not out.exists() and list(tmp_path.iterdir()) == []
