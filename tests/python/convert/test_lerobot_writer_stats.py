"""LeRobotWriter keeps each per-episode statistic as a column over the
episodes: meta/episodes and meta/stats.json hold every episode's values, in
order, and an episode whose statistics differ in their names from the first
episode's is refused before anything of it is written. The index columns'
statistics (the counters' from the part, the constants' in closed form) are
NumPy's of the columns written."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from robocache.convert import _stats  # noqa: E402
from robocache.convert._lerobot_writer import EpisodePart, LeRobotWriter  # noqa: E402

RNG = np.random.default_rng(3)
FPS = 10
INDEX_COLUMNS = ("timestamp", "frame_index", "episode_index", "index", "task_index")


def part(where, length):
    x = RNG.standard_normal((length, 2)).astype(np.float32)
    frame_index = np.arange(length).reshape(-1, 1)
    return EpisodePart(where=where, task="push", length=length,
                       layout=[("observation.state", "vector", 2)],
                       features={"observation.state": {"dtype": "float32", "shape": [2],
                                                       "names": ["a", "b"]}},
                       valid=[], columns={"observation.state": x},
                       stats={"observation.state": _stats.of_array(x),
                              "timestamp": _stats.of_array(
                                  (frame_index / FPS).astype(np.float32)),
                              "frame_index": _stats.of_array(frame_index)})


def test_episode_statistics_in_order(tmp_path):
    parts = [part(f"rec.mcap: episode {i}", n) for i, n in enumerate((5, 9, 2))]
    writer = LeRobotWriter(str(tmp_path), FPS)
    for p in parts:
        writer.write(p)
    writer.finish({})
    meta = pq.read_table(tmp_path / "meta/episodes/chunk-000/file-000.parquet").to_pydict()
    for k in ("min", "max", "mean", "std", "q50", "count"):
        assert meta[f"stats/observation.state/{k}"] == [p.stats["observation.state"][k]
                                                        for p in parts]
    assert meta["stats/index/min"] == [[0], [5], [14]]
    assert meta["stats/episode_index/max"] == [[0], [1], [2]]
    stats = json.loads((tmp_path / "meta/stats.json").read_text())
    every = np.concatenate([p.columns["observation.state"] for p in parts]).astype(np.float64)
    assert stats["observation.state"]["min"] == every.min(axis=0).tolist()
    np.testing.assert_allclose(stats["observation.state"]["std"], every.std(axis=0),
                               rtol=1e-12)
    assert stats["observation.state"]["count"] == [16]


def test_episode_with_other_statistics_is_refused(tmp_path):
    writer = LeRobotWriter(str(tmp_path), FPS)
    writer.write(part("rec.mcap: episode 0", 5))
    odd = part("rec.mcap: episode 1", 4)
    del odd.stats["observation.state"]["q99"]
    with pytest.raises(ValueError, match=r"rec.mcap: episode 1: its statistics .* differ"):
        writer.write(odd)
    writer.write(part("rec.mcap: episode 1", 4))
    writer.finish({})
    info = json.loads((tmp_path / "meta/info.json").read_text())
    assert info["total_episodes"] == 2 and info["total_frames"] == 9


def test_index_statistics_are_those_of_the_columns(tmp_path):
    parts = [part(f"rec.mcap: episode {i}", n) for i, n in enumerate((5, 1, 12))]
    parts[1].task = "pull"
    writer = LeRobotWriter(str(tmp_path), FPS)
    for p in parts:
        writer.write(p)
    writer.finish({})
    data = pq.read_table(next((tmp_path / "data").rglob("*.parquet"))).to_pydict()
    meta = pq.read_table(tmp_path / "meta/episodes/chunk-000/file-000.parquet").to_pydict()
    at = 0
    for e, p in enumerate(parts):
        for name in INDEX_COLUMNS:
            column = np.array(data[name][at:at + p.length]).reshape(-1, 1)
            want = _stats.of_array(column)
            assert {k: meta[f"stats/{name}/{k}"][e] for k in want} == want, (e, name)
        at += p.length
    assert meta["stats/task_index/max"] == [[0], [1], [0]]


@settings(max_examples=200, deadline=None)
@given(st.integers(-2**20, 2**31), st.integers(1, 4096))
def test_constant_statistics_equal_numpys(value, count):
    assert _stats.of_constant(value, count) == _stats.of_array(np.full((count, 1), value))
