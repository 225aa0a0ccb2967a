"""An image stream to a LeRobot v3.0 video feature: the real LeRobot v3.0
fixture (two episodes of one AV1 camera at 30 fps) converted on its camera's
frame times (--reference); check reports it clean, the MP4 holds every frame
(PyAV demux), decoded frames are close to the source's (AV1 at LeRobot's crf
30 is lossy) and the state rows equal the source's bit for bit (the grid is
the source's own sample times)."""

import av
import numpy as np
import pyarrow.parquet as pq

import robocache.datasets as rd
from robocache.convert import convert
from robocache.convert._check import check

from conftest import LEROBOT

SRC = LEROBOT / "lingzu_open50_v30_subset"


def test_image_stream_to_video(tmp_path):
    out = tmp_path / "ds"
    convert([str(SRC)], str(out), to="lerobot", reference="image",
            streams=["observation.state=state", "action=actions",
                     "observation.images.cam=image"])
    assert check(str(out)) == []
    src = rd.open(str(SRC))
    lengths = [len(ep.streams["image"]) for ep in src.episodes]
    mp4 = next((out / "videos").rglob("*.mp4"))
    with av.open(str(mp4)) as c:
        assert sum(1 for p in c.demux(c.streams.video[0]) if p.pts is not None) == sum(lengths)
    got = rd.open(str(out))
    table = pq.read_table(next((out / "data").rglob("*.parquet")))
    state = np.array(table.column("observation.state").to_pylist(), np.float32)
    start = 0
    for s_ep, g_ep, n in zip(src.episodes, got.episodes, lengths):
        np.testing.assert_array_equal(state[start:start + n], s_ep.streams["state"].values)
        pick = [0, n // 2, n - 1]
        a = s_ep.streams["image"].frames(pick).astype(np.int16)
        b = g_ep.streams["observation.images.cam"].frames(pick).astype(np.int16)
        assert a.shape == b.shape and np.abs(a - b).mean() < 6
        start += n
