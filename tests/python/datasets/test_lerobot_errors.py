"""Bad LeRobot folders, made as corrupted copies of the fixtures in tmp_path: each is a
DatasetError naming the file, episode, stream and index, or (a missing data file) an
episode left out and reported in rec.meta."""

import json
import pathlib
import shutil
from fractions import Fraction

import numpy as np
import pytest

av = pytest.importorskip("av")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import robocache.datasets as rd  # noqa: E402
from lerobot_testdata import encode_gray_video, write_v30  # noqa: E402

LEROBOT = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot" / "lerobot"


def copy(name, tmp_path):
    dst = tmp_path / name
    shutil.copytree(LEROBOT / name, dst)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def edit_info(root, **changes):
    path = root / "meta" / "info.json"
    info = json.loads(path.read_text())
    info.update(changes)
    path.write_text(json.dumps(info))


def rewrite(path, fn):
    """Rewrites a Parquet file with fn(dict of column lists) -> dict, schema kept where
    the columns are kept."""
    table = pq.read_table(path)
    columns = fn({n: table[n].to_pylist() for n in table.column_names})
    fields = [table.schema.field(n) for n in columns if n in table.column_names]
    pq.write_table(pa.table(columns, schema=pa.schema(fields)), path)


SO101 = "so101_record_test_v30_novideo"
SO101_DATA = pathlib.Path("data", "chunk-000", "file-000.parquet")


def test_folder_without_info_json(tmp_path):
    root = copy(SO101, tmp_path)
    (root / "meta" / "info.json").unlink()
    with pytest.raises(rd.DatasetError, match=r"not a LeRobot dataset folder: meta/info.json is "
                                              r"missing"):
        rd.open(root, format="lerobot")
    with pytest.raises(rd.DatasetError, match=r"LeRobot: meta/info.json"):
        rd.open(root)


def test_unknown_codebase_version(tmp_path):
    root = copy(SO101, tmp_path)
    edit_info(root, codebase_version="v9.9")
    with pytest.raises(rd.DatasetError, match=r"info.json: codebase_version 'v9.9' is not one "
                                              r"this reader knows \(v2.0, v2.1, v3.0\)"):
        rd.open(root)


def test_info_json_that_is_not_json(tmp_path):
    root = copy(SO101, tmp_path)
    (root / "meta" / "info.json").write_text('{"codebase_version": "v3.0",')
    with pytest.raises(rd.DatasetError, match=r"meta/info.json: cannot read it as JSON"):
        rd.open(root, format="lerobot")


def test_missing_episodes_metadata(tmp_path):
    root = copy(SO101, tmp_path)
    shutil.rmtree(root / "meta" / "episodes")
    with pytest.raises(rd.DatasetError, match=r"no episodes metadata "
                                              r"\(meta/episodes/chunk-\*/file-\*.parquet\)"):
        rd.open(root)
    root = copy("unitree_g1_inspire_v21_subset", tmp_path)
    (root / "meta" / "episodes.jsonl").unlink()
    with pytest.raises(rd.DatasetError, match=r"meta/episodes.jsonl: is missing"):
        rd.open(root)


def test_bad_line_in_episodes_jsonl(tmp_path):
    root = copy("unitree_g1_inspire_v21_subset", tmp_path)
    path = root / "meta" / "episodes.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = lines[4][:-3]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(rd.DatasetError, match=r"episodes.jsonl: line 5: not JSON"):
        rd.open(root)


def test_missing_data_file_is_a_skip_reported_in_meta(tmp_path):
    root = copy("lingzu_open50_v30_subset", tmp_path)
    (root / "data" / "chunk-000" / "file-004.parquet").unlink()
    rec = rd.open(root)
    assert [ep.index for ep in rec.episodes] == [3]
    assert rec.meta["missing_episodes"] == [e for e in range(50) if e != 3]
    assert rec.episodes[0].streams["state"].values.shape == (429, 34)


def test_missing_column(tmp_path):
    root = copy(SO101, tmp_path)
    rewrite(root / SO101_DATA, lambda c: {k: v for k, v in c.items() if k != "action"})
    ep = rd.open(root).episodes[0]
    with pytest.raises(rd.DatasetError, match=rf"{root / SO101_DATA}: no column 'action' "
                                              rf"\(.*episode 0: stream 'action'\)"):
        ep.streams["action"].values
    assert ep.streams["observation.state"].values.shape == (373, 6)


def test_missing_timestamp_column(tmp_path):
    root = copy(SO101, tmp_path)
    rewrite(root / SO101_DATA, lambda c: {k: v for k, v in c.items() if k != "timestamp"})
    with pytest.raises(rd.DatasetError, match=r"no column 'timestamp' \(.*episode 2: stream "
                                              r"'observation.state'\)"):
        rd.open(root).episodes[2].streams["observation.state"].times


def _reset_time(columns, episode, at):
    """Restarts the timestamps of `episode` at 0 from its row `at` on."""
    ts, ep = columns["timestamp"], columns["episode_index"]
    first = ep.index(episode)
    for i in range(first + at, first + ep.count(episode)):
        ts[i] = float(np.float32((i - first - at) / 30))
    return columns


def test_timestamps_that_reset_inside_an_episode(tmp_path):
    root = copy(SO101, tmp_path)
    rewrite(root / SO101_DATA, lambda c: _reset_time(c, 1, 100))
    ep = rd.open(root).episodes[1]
    before = round(Fraction(float(np.float32(99 / 30))) * 10**9)
    with pytest.raises(rd.DatasetError, match=rf"{root / SO101_DATA}: episode 1: stream "
                                              rf"'action': time goes back at index 100 "
                                              rf"\(0 ns after {before} ns\)"):
        ep.streams["action"].times
    assert len(rd.open(root).episodes[0].streams["action"].times) == 373  # others unaffected


def test_order_drop_leaves_the_rows_out(tmp_path):
    root = copy(SO101, tmp_path)
    rewrite(root / SO101_DATA, lambda c: _reset_time(c, 1, 100))
    table = pq.read_table(root / SO101_DATA)
    rows = table.filter(pa.compute.equal(table["episode_index"], 1))
    ts = rows["timestamp"].to_numpy().astype(np.float64)
    keep = np.ones(len(ts), dtype=bool)
    keep[100:200] = False  # the reset rows at or before 99 / 30 s
    s = rd.open(root, order="drop").episodes[1].streams["observation.state"]
    times = s.times
    assert s.meta["dropped"] == 100
    np.testing.assert_array_equal(times, np.rint(ts[keep] * 1e9).astype(np.int64))
    np.testing.assert_array_equal(
        s.values, np.array(rows["observation.state"].to_pylist(), dtype=np.float32)[keep])


def test_repeated_and_nan_timestamps(tmp_path):
    root = copy(SO101, tmp_path)

    def repeat(c):
        c["timestamp"][373 + 40] = c["timestamp"][373 + 39]
        c["timestamp"][5] = float("nan")
        return c

    rewrite(root / SO101_DATA, repeat)
    rec = rd.open(root)
    with pytest.raises(rd.DatasetError, match=r"episode 1: stream 'action': time repeats at "
                                              r"index 40"):
        rec.episodes[1].streams["action"].values
    with pytest.raises(rd.DatasetError, match=rf"{root / SO101_DATA}: episode 0: timestamp at "
                                              r"index 5 is nan"):
        rec.episodes[0].streams["action"].values


def test_list_of_another_length_and_null(tmp_path):
    root = copy("lingzu_open50_v30_subset", tmp_path)
    data = root / "data" / "chunk-000" / "file-003.parquet"

    def shorten(c):
        c["state"][10] = c["state"][10][:-1]
        c["actions"][20] = None
        return c

    rewrite(data, shorten)
    ep = rd.open(root).episodes[0]
    with pytest.raises(rd.DatasetError, match=rf"{data}: episode 3: stream 'state': row 10 has "
                                              r"a list of 33 values where the first row has 34"):
        ep.streams["state"].values
    with pytest.raises(rd.DatasetError, match=r"episode 3: stream 'actions': null at row 20"):
        ep.streams["actions"].values


def test_metadata_length_that_does_not_match_the_rows(tmp_path):
    root = copy(SO101, tmp_path)
    meta = root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(meta)
    lengths = table["length"].to_pylist()
    lengths[2] = 400
    pq.write_table(table.set_column(table.column_names.index("length"), "length",
                                    pa.array(lengths, type=table.schema.field("length").type)),
                   meta)
    with pytest.raises(rd.DatasetError, match=r"episode 2: 372 rows where the metadata gives "
                                              r"length 400"):
        rd.open(root).episodes[2].streams["action"].values


def _truncate(src, dst, keep):
    """Copies the first `keep` packets of an MP4's video stream (no re-encoding)."""
    with av.open(str(src)) as inp, av.open(str(dst), "w") as out:
        stream = inp.streams.video[0]
        copy_to = out.add_stream_from_template(stream)
        for k, packet in enumerate(inp.demux(stream)):
            if packet.dts is None or k >= keep:
                continue
            packet.stream = copy_to
            out.mux(packet)


def test_video_shorter_than_its_data(tmp_path):
    root = copy("lingzu_open50_v30_subset", tmp_path)
    mp4 = root / "videos" / "image" / "chunk-000" / "file-004.mp4"
    full = tmp_path / "full.mp4"
    mp4.rename(full)
    _truncate(full, mp4, 300)
    s = rd.open(root).episodes[1].streams["image"]
    assert len(s) == 395
    assert s.frames([0, 299]).shape == (2, 480, 640, 3)
    with pytest.raises(rd.DatasetError, match=rf"{mp4}: episode 4: stream 'image': frame index "
                                              r"300 \(row 300, video time 10.000000 s\) has no "
                                              r"frame within 0.0001 s; the video has 300 frames"):
        s.frames([5, 300, 394])


def test_video_shorter_than_its_data_v30_shared(tmp_path):
    write_v30(tmp_path, [8, 9], video=True)
    mp4 = tmp_path / "videos" / "observation.images.cam" / "chunk-000" / "file-000.mp4"
    encode_gray_video(str(mp4), 14, 30)  # 17 rows, 14 frames
    s = rd.open(tmp_path).episodes[1].streams["observation.images.cam"]
    assert s.frames([5]).shape[0] == 1
    with pytest.raises(rd.DatasetError, match=r"episode 1: stream 'observation.images.cam': "
                                              r"frame index 6 "):
        s.frames([0, 6])


def test_unknown_option_is_refused(tmp_path):
    with pytest.raises(ValueError, match="the lerobot reader takes no option clock"):
        rd.open(LEROBOT / SO101, clock="log")


def test_episodes_metadata_with_a_null_or_a_missing_field(tmp_path):
    write_v30(tmp_path / "v30", [4, 5], video=True)
    meta = tmp_path / "v30" / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    rows = pq.read_table(meta).to_pylist()
    rows[1]["videos/observation.images.cam/from_timestamp"] = None
    pq.write_table(pa.Table.from_pylist(rows), meta)
    with pytest.raises(rd.DatasetError, match=rf"{meta}: row 1: videos/observation.images.cam/"
                                              r"from_timestamp is None, not a number"):
        rd.open(tmp_path / "v30")
    root = copy("unitree_g1_inspire_v21_subset", tmp_path)
    path = root / "meta" / "episodes.jsonl"
    lines = path.read_text().splitlines()
    lines[7] = json.dumps({"episode_index": 7, "tasks": []})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(rd.DatasetError, match=r"episodes.jsonl: line 8: no 'length'"):
        rd.open(root)
