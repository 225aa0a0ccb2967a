"""The LeRobot output loads in the real `lerobot` package (LeRobotDataset(root=...),
default tolerance_s) and its frames equal the converter's Parquet rows; an
image feature's MP4 decodes in LeRobot (pyav backend, both episodes of one
shared file) to the frames robocache.datasets decodes from it.

lerobot needs Python >= 3.12 and torch < 2.12, so it runs in its own
environment through a subprocess (convert_support.run_lerobot:
$ROBOCACHE_LEROBOT_PYTHON, else .venv-lerobot/bin/python at the repository
root, built by scripts/install-lerobot-oracle.sh). Skipped when neither exists."""

import json

import numpy as np
import pyarrow.parquet as pq

from robocache.convert import convert
from robocache.convert._check import check

from convert_support import HUSKY_MCAP, HUSKY_STREAMS, ROOT, needs_lerobot, run_lerobot

LOAD = r"""
import json, sys
import numpy as np
from lerobot.datasets.lerobot_dataset import LeRobotDataset
root, out = sys.argv[1], sys.argv[2]
ds = LeRobotDataset("local/robocache_convert", root=root)
keys = ["observation.imu", "observation.state", "action", "timestamp", "frame_index", "index"]
rows = [ds[i] for i in range(len(ds))]
np.savez(out, tolerance_s=ds.tolerance_s, fps=ds.fps, n=len(ds),
         **{k: np.stack([r[k].numpy() for r in rows]) for k in keys})
"""


@needs_lerobot
def test_loads_in_lerobot(tmp_path):
    out = tmp_path / "ds"
    convert([str(HUSKY_MCAP)], str(out), to="lerobot", fps=30, streams=HUSKY_STREAMS)
    assert check(str(out)) == []
    dump = tmp_path / "frames.npz"
    run_lerobot(LOAD, out, dump)
    got = np.load(dump)
    assert float(got["tolerance_s"]) == 1e-4 and int(got["fps"]) == 30
    table = pq.read_table(next((out / "data").rglob("*.parquet")))
    assert int(got["n"]) == table.num_rows
    for k in ("observation.imu", "observation.state", "action", "timestamp", "frame_index",
              "index"):
        want = np.array(table.column(k).to_pylist())
        np.testing.assert_array_equal(got[k].reshape(want.shape), want)
    info = json.loads((out / "meta/info.json").read_text())
    assert info["total_frames"] == table.num_rows


LOAD_VIDEO = r"""
import sys
import numpy as np
from lerobot.datasets.lerobot_dataset import LeRobotDataset
root, out = sys.argv[1], sys.argv[2]
ds = LeRobotDataset("local/robocache_convert", root=root, video_backend="pyav")
picks = [0, ds.meta.episodes[0]["length"] - 1, ds.meta.episodes[0]["length"], len(ds) - 1]
rows = [ds[i] for i in picks]
np.savez(out, picks=picks, n=len(ds),
         frames=np.stack([r["observation.images.cam"].numpy() for r in rows]),
         episode=np.array([int(r["episode_index"]) for r in rows]))
"""


@needs_lerobot
def test_video_loads_in_lerobot(tmp_path):
    import robocache.datasets as rd
    out = tmp_path / "ds"
    src = ROOT / "data/robot/lerobot/lingzu_open50_v30_subset"
    convert([str(src)], str(out), to="lerobot", reference="image",
            streams=["observation.state=state", "action=actions", "observation.images.cam=image"])
    dump = tmp_path / "frames.npz"
    run_lerobot(LOAD_VIDEO, out, dump)
    got = np.load(dump)
    ours = rd.open(str(out))
    lengths = [len(ep.streams["observation.images.cam"]) for ep in ours.episodes]
    assert int(got["n"]) == sum(lengths)
    np.testing.assert_array_equal(got["episode"], [0, 0, 1, 1])
    for k, i in enumerate(got["picks"]):
        e = 0 if i < lengths[0] else 1
        want = ours.episodes[e].streams["observation.images.cam"].frames(
            [i - (0 if e == 0 else lengths[0])])[0]
        # LeRobot returns float [C, H, W] in [0, 1] of the same FFmpeg decode
        np.testing.assert_allclose(got["frames"][k].transpose(1, 2, 0) * 255, want, atol=0.5)
