"""robocache convert on the real Husky recording: every column of the LeRobot
v3.0 output equals a NumPy / SciPy computation made here from messages read
through mcap-ros2-support (np.interp for linear, scipy Slerp for the
orientation, a searchsorted hold for `previous`), on a grid computed here."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy.spatial.transform import Rotation, Slerp

from robocache.convert import convert

from conftest import HUSKY_MCAP, HUSKY_STREAMS, ODOM, hold, interp, no_gap_holds_a_frame, oracle_grid


@pytest.fixture(scope="module", params=[30, 50])
def converted(request, husky_messages, tmp_path_factory):
    fps = request.param
    out = tmp_path_factory.mktemp(f"husky{fps}") / "ds"
    report = convert([str(HUSKY_MCAP)], str(out), to="lerobot", fps=fps, streams=HUSKY_STREAMS)
    return fps, out, report


def test_every_column_equals_numpy(converted, husky_messages):
    fps, out, report = converted
    t_imu, imu = husky_messages["/imu/data"]
    t_odom, odom = husky_messages[ODOM]
    grid = oracle_grid([t_imu, t_odom], fps)
    assert no_gap_holds_a_frame(t_imu, grid) and no_gap_holds_a_frame(t_odom, grid)
    table = pq.read_table(next((out / "data").rglob("*.parquet")))
    assert table.num_rows == grid.shape[0]
    col = {n: np.array(table.column(n).to_pylist()) for n in table.column_names}

    np.testing.assert_allclose(col["observation.imu"], interp(t_imu, imu, grid).astype(np.float32),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(col["observation.state"][:, :3],
                               interp(t_odom, odom[:, :3], grid).astype(np.float32),
                               rtol=1e-6, atol=1e-6)
    q = Slerp((t_odom - t_odom[0]) * 1e-9, Rotation.from_quat(odom[:, 3:7]))(
        (grid - t_odom[0]) * 1e-9).as_quat()
    got = col["observation.state"][:, 3:7]
    err = np.minimum(np.abs(got - q).max(axis=1), np.abs(got + q).max(axis=1))
    assert err.max() < 2e-6
    np.testing.assert_array_equal(col["action"], hold(t_odom, odom[:, 7:13], grid).astype(np.float32))

    frame = np.arange(grid.shape[0])
    np.testing.assert_array_equal(col["frame_index"], frame)
    np.testing.assert_array_equal(col["index"], frame)
    np.testing.assert_array_equal(col["episode_index"], 0)
    np.testing.assert_array_equal(col["timestamp"], (frame / fps).astype(np.float32))


def test_metadata_and_report(converted, husky_messages):
    fps, out, report = converted
    info = json.loads((out / "meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["fps"] == fps
    assert info["features"]["observation.state"]["names"] == [
        "position.x", "position.y", "position.z",
        "orientation.x", "orientation.y", "orientation.z", "orientation.w"]
    meta = json.loads((out / "meta/robocache.json").read_text())
    methods = [o["method"] for o in meta["features"]["observation.state"]["options"]]
    assert methods == ["linear", "slerp"]
    assert [o["method"] for o in meta["features"]["action"]["options"]] == ["previous"] * 2
    t_imu = husky_messages["/imu/data"][0]
    gap = meta["features"]["observation.imu"]["options"][0]["max_gap"]
    assert gap == 3 * int(np.median(np.diff(t_imu)))
    sync = json.loads((out.parent / "ds.sync.json").read_text())
    streams = {s["stream"]: s for s in sync["episodes"][0]["streams"]}
    assert streams["/imu/data/angular_velocity"]["rate_hz"] == pytest.approx(
        1e9 / np.median(np.diff(t_imu)))
    assert sync["episodes"][0]["frames"] == pq.read_metadata(
        next((out / "data").rglob("*.parquet"))).num_rows
    stats = json.loads((out / "meta/stats.json").read_text())
    imu = np.array(pq.read_table(next((out / "data").rglob("*.parquet")),
                                 columns=["observation.imu"]).column(0).to_pylist())
    np.testing.assert_allclose(stats["observation.imu"]["mean"], imu.mean(axis=0), rtol=1e-9)
    np.testing.assert_allclose(stats["observation.imu"]["std"], imu.std(axis=0), rtol=1e-9)
