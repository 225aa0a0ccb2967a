"""robocache.torch.WindowLoader on the real LeRobot v3.0 fixtures (data/robot/lerobot)
equals what LeRobotDataset of the real `lerobot` package (0.6.1) returns for the same item
index with the same delta_timestamps: every value and every `_is_pad`, including windows
that cross episode ends, from LeRobot's float32 timestamps; and the video frames it
decodes for windows at episode edges.

The oracle runs in its own environment (Python 3.12: scripts/install-lerobot-oracle.sh,
which `make test` runs; or ROBOCACHE_LEROBOT_PYTHON) through tests/oracles/lerobot_items.py,
which dumps the items to .npz files compared here."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import requires_torch, torch

pytestmark = requires_torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "robot" / "lerobot"
ORACLE = os.environ.get("ROBOCACHE_LEROBOT_PYTHON",
                        str(ROOT / ".venv-lerobot" / "bin" / "python"))
CHUNK = [k / 30 for k in range(50)]
CASES = {
    "so101": ("so101_record_test_v30_novideo", None,
              {"observation.state": [-2 / 30, -1 / 30, 0.0], "action": CHUNK}),
    "lingzu": ("lingzu_open50_v30_subset", [3, 4],
               {"state": [-1 / 30, 0.0], "actions": CHUNK}),
}
# windows of frames around both episodes' first and last frames; a one-frame window
# (LeRobot returns its frame without the window axis: [C, H, W])
VIDEOS = {
    "video": ("lingzu_open50_v30_subset", [3, 4],
              {"image": [-1 / 30, 0.0, 1 / 30], "state": [0.0]},
              [0, 1, 427, 428, 429, 430, 822, 823]),
    "video1": ("lingzu_open50_v30_subset", [3, 4], {"image": [0.0], "state": [0.0]},
               [0, 428, 429, 823]),
}


@pytest.fixture(scope="module")
def lerobot_items(tmp_path_factory):
    if not os.path.exists(ORACLE):
        pytest.skip(f"no LeRobot oracle environment at {ORACLE}: run "
                    "scripts/install-lerobot-oracle.sh")
    tmp = tmp_path_factory.mktemp("lerobot")
    jobs = [{"root": str(DATA / folder), "out": str(tmp / f"{name}.npz"), "delta": delta,
             "episodes": episodes} for name, (folder, episodes, delta) in CASES.items()]
    for name, (folder, episodes, delta, indices) in VIDEOS.items():
        jobs.append({"root": str(DATA / folder), "out": str(tmp / f"{name}.npz"),
                     "delta": delta, "episodes": episodes, "indices": indices, "videos": True})
    (tmp / "jobs.json").write_text(json.dumps(jobs))
    subprocess.run([ORACLE, "-W", "ignore", str(ROOT / "tests" / "oracles" / "lerobot_items.py"),
                    str(tmp / "jobs.json")], check=True, timeout=900)
    return {job["out"].rsplit("/", 1)[1][:-4]: dict(np.load(job["out"])) for job in jobs}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_item_equals_lerobot_dataset(lerobot_items, case):
    import robocache.datasets as rd
    import robocache.torch as rt

    folder, episodes, delta = CASES[case]
    want = lerobot_items[case]
    loader = rt.WindowLoader(rd.open(DATA / folder), delta, batch_size=97, shuffle=False,
                             device="cpu", episodes=episodes)
    batches = list(loader)
    got = {k: torch.cat([b[k] for b in batches]).numpy() for k in batches[0]}
    n = want["index"].size
    assert loader.num_samples == n and got["sample_index"].tolist() == list(range(n))
    np.testing.assert_array_equal(got["episode_index"], want["episode_index"])
    np.testing.assert_array_equal(got["frame_index"], want["frame_index"])
    for key in delta:
        np.testing.assert_array_equal(got[f"{key}_is_pad"], want[f"{key}_is_pad"], err_msg=key)
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)  # frames copied: exact
    # windows that cross episode ends are part of the comparison
    assert want["action_is_pad" if case == "so101" else "actions_is_pad"].any()


@pytest.mark.parametrize("case", sorted(VIDEOS))
def test_video_frames_equal_lerobot_dataset(lerobot_items, case):
    import robocache.datasets as rd
    import robocache.torch as rt

    folder, episodes, delta, indices = VIDEOS[case]
    want = lerobot_items[case]
    loader = rt.WindowLoader(rd.open(DATA / folder), delta, batch_size=8, shuffle=False,
                             device="cpu", episodes=episodes)
    got = loader.frames(torch.tensor(indices))
    np.testing.assert_array_equal(got["image_is_pad"].numpy(), want["image_is_pad"])
    assert got["image"].shape == want["image"].shape  # [N, 3, C, H, W] / [N, C, H, W]
    # both decode with PyAV's rgb24 conversion; LeRobot's float frames * 255 round back
    np.testing.assert_array_equal(got["image"].numpy(), want["image"])
    low = loader.gather(torch.tensor(indices))
    np.testing.assert_array_equal(low["state"].numpy(), want["state"])
