"""LeRobotWriter keeps each per-episode statistic as a column over the
episodes: meta/episodes and meta/stats.json hold every episode's values, in
order, and an episode whose statistics differ in their names from the first
episode's is refused before anything of it is written."""

import json

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from robocache.convert import _stats  # noqa: E402
from robocache.convert._lerobot_writer import EpisodePart, LeRobotWriter  # noqa: E402

RNG = np.random.default_rng(3)


def part(where, length):
    x = RNG.standard_normal((length, 2)).astype(np.float32)
    return EpisodePart(where=where, task="push", length=length,
                       layout=[("observation.state", "vector", 2)],
                       features={"observation.state": {"dtype": "float32", "shape": [2],
                                                       "names": ["a", "b"]}},
                       valid=[], columns={"observation.state": x},
                       stats={"observation.state": _stats.of_array(x)})


def test_episode_statistics_in_order(tmp_path):
    parts = [part(f"rec.mcap: episode {i}", n) for i, n in enumerate((5, 9, 2))]
    writer = LeRobotWriter(str(tmp_path), 10)
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
    writer = LeRobotWriter(str(tmp_path), 10)
    writer.write(part("rec.mcap: episode 0", 5))
    odd = part("rec.mcap: episode 1", 4)
    del odd.stats["observation.state"]["q99"]
    with pytest.raises(ValueError, match=r"rec.mcap: episode 1: its statistics .* differ"):
        writer.write(odd)
    writer.write(part("rec.mcap: episode 1", 4))
    writer.finish({})
    info = json.loads((tmp_path / "meta/info.json").read_text())
    assert info["total_episodes"] == 2 and info["total_frames"] == 9
