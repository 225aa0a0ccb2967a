"""robocache.datasets reading LeRobot v2.1 and v3.0 folders: every stream of the
real fixtures in data/robot/lerobot against a plain pyarrow read in the test,
fields against info.json, the time rule against exact rational arithmetic,
episode metadata, laziness, and robocache.align on a real episode."""

import json
import pathlib
from fractions import Fraction

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import robocache  # noqa: E402
import robocache.datasets as rd  # noqa: E402
from lerobot_testdata import write_v30  # noqa: E402

LEROBOT = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot" / "lerobot"
SO101 = LEROBOT / "so101_record_test_v30_novideo"
LINGZU = LEROBOT / "lingzu_open50_v30_subset"
UNITREE = LEROBOT / "unitree_g1_inspire_v21_subset"
# (folder, episodes present, episodes listed in its metadata)
FIXTURES = [(SO101, [0, 1, 2, 3], 4), (LINGZU, [3, 4], 50), (UNITREE, [2], 100)]


def info_of(root):
    return json.loads((root / "meta" / "info.json").read_text())


def ns_exact(seconds_f32):
    """round(t * 10**9) with t the float32 value as an exact rational (half to even)."""
    return np.array([round(Fraction(float(t)) * 10**9) for t in seconds_f32], dtype=np.int64)


def plain_episode(data_file, episode):
    """The rows of one episode of a data file, read with plain pyarrow."""
    table = pq.read_table(data_file)
    return table.filter(pa.compute.equal(table["episode_index"], episode))


def numeric_features(info):
    index = {"timestamp", "frame_index", "episode_index", "index", "task_index"}
    return [k for k, f in info["features"].items() if k not in index and f["dtype"] != "video"]


@pytest.mark.parametrize("root,present,listed", FIXTURES, ids=lambda v: getattr(v, "name", None))
def test_every_stream_equals_plain_pyarrow(root, present, listed):
    rec = rd.open(root)
    info = info_of(root)
    assert rec.format == "lerobot"
    assert [ep.index for ep in rec.episodes] == present
    assert rec.meta["episodes_listed"] == listed
    assert rec.meta["missing_episodes"] == sorted(set(range(listed)) - set(present))
    assert rec.meta["codebase_version"] == info["codebase_version"]
    for ep in rec.episodes:
        rows = plain_episode(ep.meta["data_file"], ep.index)
        assert rows.num_rows == ep.meta["length"] > 0
        ts = rows["timestamp"].to_numpy()
        assert ts.dtype == np.float32
        times = ns_exact(ts)
        names = numeric_features(info)
        assert [n for n, s in ep.streams.items() if s.kind == "vector"] == names
        for name in names:
            s = ep.streams[name]
            assert s.clock == "timestamp"
            np.testing.assert_array_equal(s.times, times)
            expected = np.array(rows[name].to_pylist(), dtype=np.float32)
            assert s.values.dtype == np.float32
            np.testing.assert_array_equal(s.values, expected)
            declared = info["features"][name]["names"]
            flat = declared[0] if isinstance(declared[0], list) else declared
            assert s.fields == flat and len(flat) == expected.shape[1]


def test_time_rule_on_a_float32_value():
    # 1/30 s as float32 is 0.033333335071802139282226562500 s: 33333335 ns
    t = np.float32(1 / 30)
    ep = rd.open(SO101).episodes[0]
    assert ep.streams["action"].times[1] == 33333335
    assert ns_exact([t])[0] == 33333335


@pytest.mark.parametrize("root", [SO101, LINGZU], ids=["so101", "lingzu"])
def test_v30_episode_meta_from_the_episodes_parquet(root):
    table = pq.read_table(next((root / "meta" / "episodes").rglob("*.parquet"))).to_pylist()
    by_index = {row["episode_index"]: row for row in table}
    info = info_of(root)
    rec = rd.open(root)
    for ep in rec.episodes:
        row = by_index[ep.index]
        assert ep.meta["tasks"] == row["tasks"]
        assert ep.meta["length"] == row["length"]
        assert ep.meta["fps"] == info["fps"] and ep.meta["robot_type"] == info["robot_type"]
        assert ep.meta["dataset_from_index"] == row["dataset_from_index"]
        assert ep.meta["dataset_to_index"] == row["dataset_to_index"]
        assert pathlib.Path(ep.meta["data_file"]) == root / "data" / "chunk-{:03d}".format(
            row["data/chunk_index"]) / "file-{:03d}.parquet".format(row["data/file_index"])
        for key, video in ep.meta["videos"].items():
            assert video["from_timestamp"] == row[f"videos/{key}/from_timestamp"]
            assert video["to_timestamp"] == row[f"videos/{key}/to_timestamp"]
            assert pathlib.Path(video["file"]).is_file()


def test_so101_videos_declared_but_absent_are_reported():
    rec = rd.open(SO101)
    keys = ["observation.images.front", "observation.images.top"]
    assert rec.meta["missing_videos"] == {k: [0, 1, 2, 3] for k in keys}
    for ep in rec.episodes:
        assert ep.meta["missing_videos"] == keys
        assert not any(s.kind == "image" for s in ep.streams.values())
    # the shared-MP4 offsets are still in the metadata: episode 2 starts at 24.9 s
    assert rec.episodes[2].meta["dataset_from_index"] == 747


def test_v21_episode_meta():
    rec = rd.open(UNITREE)
    (ep,) = rec.episodes
    lines = [json.loads(x) for x in (UNITREE / "meta" / "episodes.jsonl").read_text().split("\n")
             if x]
    row = next(r for r in lines if r["episode_index"] == 2)
    assert ep.meta["tasks"] == row["tasks"] and ep.meta["length"] == row["length"] == 343
    assert ep.meta["task"] == "Pick up the yellow bottle on the table."
    assert rec.meta["tasks"] == {0: "Pick up the yellow bottle on the table."}
    video = ep.meta["videos"]["observation.images.cam_high"]
    assert video["from_timestamp"] == 0.0
    assert pathlib.Path(video["file"]) == (UNITREE / "videos" / "chunk-000" /
                                           "observation.images.cam_high" / "episode_000002.mp4")


def test_v30_tasks_from_the_pandas_index_column():
    assert rd.open(LINGZU).meta["tasks"] == {0: "lingzu teleoperation"}
    assert rd.open(SO101).meta["tasks"] == {0: "Pick the orange cube and place it in the box"}


@pytest.mark.parametrize("grouped", [True, False], ids=["group-per-episode", "straddling"])
def test_generated_v30_shared_files(tmp_path, grouped):
    truth = write_v30(tmp_path, [9, 13, 6, 11], per_file=3, group_per_episode=grouped)
    rec = rd.open(tmp_path)
    assert [ep.index for ep in rec.episodes] == [0, 1, 2, 3]
    assert rec.meta["tasks"] == {0: "move the block"}
    for ep in rec.episodes:
        t = truth[ep.index]
        for name in ("observation.state", "action"):
            np.testing.assert_array_equal(ep.streams[name].values, t[name])
            np.testing.assert_array_equal(ep.streams[name].times, ns_exact(t["timestamp"]))
            assert ep.streams[name].fields == ["j0", "j1", "j2", "j3"]


def test_open_reads_no_data_file(monkeypatch):
    """rd.open reads meta/ only; a stream reads its own column and the timestamps."""
    opened, columns = [], []
    real_init = pq.ParquetFile.__init__
    real_rrg = pq.ParquetFile.read_row_groups
    real_read_table = pq.read_table

    def init(self, source, *a, **k):
        opened.append(pathlib.Path(source))
        real_init(self, source, *a, **k)

    def read_row_groups(self, groups, columns=None, **k):
        columns_read.extend(columns or ["<all>"])
        return real_rrg(self, groups, columns=columns, **k)

    def read_table(source, *a, **k):
        opened.append(pathlib.Path(source))
        return real_read_table(source, *a, **k)

    columns_read = columns
    monkeypatch.setattr(pq.ParquetFile, "__init__", init)
    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", read_row_groups)
    monkeypatch.setattr(pq, "read_table", read_table)
    for root in (SO101, LINGZU, UNITREE):
        opened.clear()
        columns.clear()
        rec = rd.open(root)
        assert {p.relative_to(root).parts[0] for p in opened} <= {"meta"}, opened
        assert columns == []
        ep = rec.episodes[-1]
        assert not any(s.loaded for s in ep.streams.values())
        name = next(n for n, s in ep.streams.items() if s.kind == "vector")
        ep.streams[name].values
        assert [p for p in opened if p.relative_to(root).parts[0] != "meta"] == \
            [pathlib.Path(ep.meta["data_file"])]
        assert sorted(columns) == sorted(["timestamp", name])
        assert [n for n, s in ep.streams.items() if s.loaded] == [name]


def test_align_on_a_real_episode():
    (ep,) = rd.open(UNITREE).episodes
    s = ep.streams["observation.state"]
    nearest = robocache.Stream.from_series(s, method="nearest")
    out, valid = robocache.align([nearest], s.times)
    assert valid.all()
    np.testing.assert_array_equal(out, s.values)

    grid = np.arange(s.times[0], s.times[-1] + 1, 20_000_000, dtype=np.int64)  # 50 Hz
    out = robocache.align([robocache.Stream.from_series(s)], grid, out_dtype=np.float64,
                          return_valid=False)
    t = s.times.astype(np.float64)
    expected = np.stack([np.interp(grid.astype(np.float64), t, s.values[:, d].astype(np.float64))
                         for d in range(s.values.shape[1])], axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
