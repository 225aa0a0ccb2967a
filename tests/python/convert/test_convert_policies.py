"""Episode splitting and the invalid-frame policies on small rosbag2 files
written here with rosbags (sensor_msgs/Imu, angular_velocity.x = message
number): the frames, values and validity columns against values computed
in the test."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from robocache.convert import ConvertError, convert

from conftest import write_bag

S = 10**9
STREAMS = ["observation.a=/a/angular_velocity", "observation.b=/b/angular_velocity"]


def rows(out):
    t = pq.read_table(next((out / "data").rglob("*.parquet")))
    return {n: np.array(t.column(n).to_pylist()) for n in t.column_names}


def test_split_by_gap(tmp_path):
    times = [S + i * S // 10 for i in range(11)] + [5 * S + i * S // 10 for i in range(11)]
    bag = tmp_path / "gap"
    write_bag(bag, {"/a": times, "/b": times})
    out = tmp_path / "ds"
    report = convert([str(bag)], str(out), to="lerobot", fps=10, streams=STREAMS,
                     split_gap=S)
    assert [e["frames"] for e in report["episodes"]] == [11, 11]
    r = rows(out)
    np.testing.assert_array_equal(r["episode_index"], [0] * 11 + [1] * 11)
    np.testing.assert_array_equal(r["frame_index"], list(range(11)) * 2)
    # message number i is sample i: the second episode starts at message 11
    np.testing.assert_array_equal(r["observation.a"][:, 0], np.arange(22))


def test_split_by_a_mode_stream(tmp_path):
    times = [S + i * S // 10 for i in range(30)]
    mode = [0] * 8 + [1] * 12 + [2] * 10
    bag = tmp_path / "modes"
    write_bag(bag, {"/a": times, "/mode": times}, modes={"/mode": mode})
    report = convert([str(bag)], str(tmp_path / "ds"), to="lerobot", fps=10,
                     streams=["observation.a=/a/angular_velocity"],
                     split_by="/mode/angular_velocity")
    assert [e["frames"] for e in report["episodes"]] == [8, 12, 10]
    r = rows(tmp_path / "ds")
    np.testing.assert_array_equal(r["episode_index"], np.repeat([0, 1, 2], [8, 12, 10]))
    np.testing.assert_array_equal(r["observation.a"][:, 0], np.arange(30))


@pytest.fixture
def staggered(tmp_path):
    """/a at 10 Hz over 1.0..2.0 s, /b at 10 Hz over 1.5..2.5 s."""
    bag = tmp_path / "staggered"
    write_bag(bag, {"/a": [S + i * S // 10 for i in range(11)],
                    "/b": [S + S // 2 + i * S // 10 for i in range(11)]})
    return bag


def test_union_trim_keeps_the_overlap(tmp_path, staggered):
    out = tmp_path / "ds"
    report = convert([str(staggered)], str(out), to="lerobot", fps=10, streams=STREAMS,
                     span="union")
    ep = report["episodes"][0]
    assert ep["frames_grid"] == 16 and ep["frames_trimmed"] == [5, 5] and ep["frames"] == 6
    r = rows(out)
    np.testing.assert_array_equal(r["observation.a"][:, 0], np.arange(5, 11))
    np.testing.assert_array_equal(r["observation.b"][:, 0], np.arange(0, 6))


def test_union_keep_writes_validity(tmp_path, staggered):
    out = tmp_path / "ds"
    convert([str(staggered)], str(out), to="lerobot", fps=10, streams=STREAMS, span="union",
            invalid="keep")
    r = rows(out)
    frame = np.arange(16)
    np.testing.assert_array_equal(r["observation.a.valid"], frame <= 10)
    np.testing.assert_array_equal(r["observation.b.valid"], frame >= 5)
    info = json.loads((out / "meta/info.json").read_text())
    assert info["features"]["observation.a.valid"]["dtype"] == "bool"


def test_union_reject_rejects_every_episode(tmp_path, staggered):
    with pytest.raises(ConvertError, match="no episode was converted.*10 frame"):
        convert([str(staggered)], str(tmp_path / "ds"), to="lerobot", fps=10, streams=STREAMS,
                span="union", invalid="reject")
    assert not (tmp_path / "ds").exists()
