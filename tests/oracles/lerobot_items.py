"""Dumps what LeRobotDataset (the real `lerobot` package) returns for items of
local LeRobot v3.0 folders, for tests/python/test_window_loader_lerobot.py. Runs
in the oracle environment (.venv-lerobot, scripts/install-lerobot-oracle.sh);
imports nothing of robocache.

    python lerobot_items.py JOBS.json

JOBS.json: a list of {"root": dataset folder, "out": .npz path, "delta":
delta_timestamps, "episodes": [..] or null, "indices": [..] or null (all),
"videos": bool}. Each .npz holds, for the items asked, stacked in item order:
  "<key>" float32 [N, W, ...] (video keys: uint8 [N, W, C, H, W], [N, C, H, W] for a
  one-frame window as LeRobot returns it; LeRobot's float frames * 255 rounded), "<key>_is_pad" bool [N, W], "episode_index",
  "frame_index", "index" int64 [N].
Without "videos" the video features are dropped from a copy of meta/info.json
(the Parquet data do not hold them), so LeRobotDataset neither decodes nor
looks for the MP4 files; with it they stay and are decoded with PyAV.
"""

import json
import os
import pathlib
import shutil
import sys
import tempfile

import numpy as np


def _without_videos(root, tmp):
    """A view of the dataset folder whose info.json declares no video feature."""
    view = pathlib.Path(tmp) / "dataset"
    shutil.copytree(root / "meta", view / "meta")
    os.symlink(root / "data", view / "data")
    info = json.loads((root / "meta" / "info.json").read_text())
    info["features"] = {k: f for k, f in info["features"].items() if f.get("dtype") != "video"}
    (view / "meta" / "info.json").write_text(json.dumps(info))
    return view


def _dump(LeRobotDataset, job, tmp):
    root = pathlib.Path(job["root"])
    delta = job["delta"]
    if not job.get("videos"):
        root = _without_videos(root, tempfile.mkdtemp(dir=tmp))
    ds = LeRobotDataset("local/oracle", root=root, episodes=job.get("episodes"),
                        delta_timestamps=delta, video_backend="pyav")
    indices = job.get("indices")
    indices = range(len(ds)) if indices is None else indices
    out = {k: [] for k in list(delta) + [f"{k}_is_pad" for k in delta]
           + ["episode_index", "frame_index", "index"]}
    video = set(ds.meta.video_keys) if job.get("videos") else set()
    for i in indices:
        item = ds[i]
        for k in out:
            v = item[k].numpy()
            if k in video:
                v = np.round(v * 255).astype(np.uint8)
            out[k].append(v)
    np.savez(job["out"], **{k: np.stack(v) for k, v in out.items()})


def main():
    jobs = json.loads(pathlib.Path(sys.argv[1]).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HF_HOME"] = os.path.join(tmp, "hf")  # datasets' Arrow cache
        os.environ["HF_HUB_OFFLINE"] = "1"
        from lerobot.datasets.lerobot_dataset import LeRobotDataset

        for job in jobs:
            _dump(LeRobotDataset, job, tmp)


if __name__ == "__main__":
    main()
