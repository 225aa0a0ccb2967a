"""robocache.datasets' ULog reader on the real PX4 log in data/robot/px4.

pyulog is the reader's parser, so the checks go through other paths: a
single pyulog parse of every topic (no message filter) against the lazy
per-topic reads and the reader's own framing index, the rates, counts and
dropouts measured in data/robot's README (from the fixture's source
description), and robocache.align against np.interp."""

import pathlib

import numpy as np
import pytest
from pyulog import ULog

import robocache
import robocache.datasets as rd

LOG = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot" / "px4" / "pyulog_sample.ulg"


@pytest.fixture(scope="module")
def full():
    """Every topic in one pyulog parse: {(topic, multi_id): data dict}."""
    return {(d.name, d.multi_id): d.data for d in ULog(str(LOG)).data_list}


@pytest.fixture(scope="module")
def rec():
    return rd.open(LOG)


def vector_streams(rec):
    return {n: s for n, s in rec.episodes[0].streams.items() if s.kind == "vector"}


def test_detected_and_topics_listed(rec, full):
    assert rd.detect(str(LOG)) == "ulog"
    assert rec.format == "ulog" and len(rec.episodes) == 1
    streams = vector_streams(rec)
    # every instance pyulog parsed is a stream or skipped for its all-zero timestamps
    assert set(streams) | set(rec.meta["skipped"]) == {t for t, _ in full}
    assert rec.meta["skipped"] == {"ekf2_innovations": "all timestamps 0",
                                   "sensor_preflight": "all timestamps 0"}
    for name in rec.meta["skipped"]:
        assert not full[(name, 0)]["timestamp"].any()
    assert rec.meta["dropouts"] == {"count": 4, "total_ms": 119}  # data/robot README
    assert rec.meta["info"]["sys_name"] == "PX4" and rec.meta["info"]["ver_hw"] == "AUAV_X21"


def test_lazy_reads_equal_one_full_parse(rec, full):
    for name, s in vector_streams(rec).items():
        if name == "commander_state":
            continue
        data = full[(name, 0)]
        t = data["timestamp"].astype(np.int64)
        assert s.meta["messages"] == len(t)
        assert (s.meta["first_timestamp_us"], s.meta["last_timestamp_us"]) == (t[0], t[-1])
        np.testing.assert_array_equal(s.times, t * 1000)
        names = [k for k in data if k != "timestamp" and not k.startswith("_padding")]
        assert s.fields == names
        want = np.stack([data[k].astype(np.float64) for k in names], axis=1)
        np.testing.assert_array_equal(s.values.astype(np.float64), want)
        assert s.clock == "timestamp"


@pytest.mark.parametrize("name,messages,median_ms", [
    ("sensor_combined", 17070, 4.000),
    ("vehicle_attitude", 6461, 12.0),
    ("vehicle_rates_setpoint", 6448, 11.88),
    ("control_state", 3268, 20.00),
    ("vehicle_local_position", 678, 100.08),
    ("cpuload", 69, 1006.2),
])
def test_rates_match_the_measured_table(rec, name, messages, median_ms):
    s = rec.episodes[0].streams[name]
    assert len(s) == messages
    summary = rd.summarize(s)
    assert summary["median_period_s"] * 1e3 == pytest.approx(median_ms, abs=0.01)


def test_repeated_timestamps_name_topic_and_index():
    ep = rd.open(LOG).episodes[0]
    with pytest.raises(rd.DatasetError, match=r"'commander_state': time repeats at index 1"):
        ep.streams["commander_state"].times
    kept = rd.open(LOG, order="drop").episodes[0].streams["commander_state"]
    assert len(kept) == 1 and kept.meta["dropped"] == 677


def test_quaternion_stream_is_xyzw(rec, full):
    q = rec.episodes[0].streams["vehicle_attitude/q"]
    assert q.kind == "quaternion" and q.fields == ["x", "y", "z", "w"]
    data = full[("vehicle_attitude", 0)]
    want = np.stack([data["q[1]"], data["q[2]"], data["q[3]"], data["q[0]"]], axis=1)
    np.testing.assert_array_equal(q.values, want)
    np.testing.assert_allclose(np.linalg.norm(q.values, axis=1), 1.0, atol=1e-5)


def test_align_gyro_onto_attitude_times_equals_np_interp(rec, full):
    ep = rec.episodes[0]
    gyro = ep.streams["sensor_combined"]
    target = ep.streams["vehicle_attitude"].times
    out, valid = robocache.align([robocache.Stream.from_series(gyro)], target)
    out, valid = np.asarray(out, dtype=np.float64), np.asarray(valid)[:, 0]
    data = full[("sensor_combined", 0)]
    t = data["timestamp"].astype(np.int64) * 1000
    inside = (target >= t[0]) & (target <= t[-1])
    np.testing.assert_array_equal(valid, inside)
    assert inside.sum() > 6000
    for j in range(3):
        want = np.interp(target[inside], t, data[f"gyro_rad[{j}]"].astype(np.float64))
        np.testing.assert_allclose(out[inside, j], want, rtol=1e-5, atol=1e-6)


def test_open_parses_no_data_and_each_topic_once(monkeypatch):
    import pyulog
    calls = []
    real = pyulog.ULog

    class Spy(real):
        def __init__(self, path, message_name_filter_list=None, *args, **kwargs):
            if not kwargs.get("parse_header_only"):
                calls.append(sorted(message_name_filter_list))
            super().__init__(path, message_name_filter_list, *args, **kwargs)

    monkeypatch.setattr(pyulog, "ULog", Spy)
    ep = rd.open(LOG).episodes[0]
    assert calls == []
    ep.streams["vehicle_attitude"].values
    ep.streams["vehicle_attitude/q"].values
    assert calls == [["vehicle_attitude"]]
    ep = rd.open(LOG, topics=["sensor_combined", "cpuload"]).episodes[0]
    assert sorted(ep.streams) == ["cpuload", "sensor_combined"]
    ep.streams["cpuload"].values
    ep.streams["sensor_combined"].values
    assert calls[1:] == [["cpuload", "sensor_combined"]]
    with pytest.raises(rd.DatasetError, match="topic 'gps' was not logged"):
        rd.open(LOG, topics=["gps"])


def test_truncated_copy_reads_to_the_last_whole_message(tmp_path):
    cut = tmp_path / "cut.ulg"
    cut.write_bytes(LOG.read_bytes()[:2_000_003])
    rec = rd.open(cut)
    assert rec.meta["truncated"]["reason"] == "truncated"
    assert rec.meta["truncated"]["file_bytes"] == 2_000_003
    assert rec.meta["truncated"]["at_byte"] < 2_000_003
    independent = {(d.name, d.multi_id): len(d.data["timestamp"])
                   for d in ULog(str(cut)).data_list}
    streams = vector_streams(rec)
    assert 0 < len(streams["sensor_combined"]) < 17070
    for name, s in streams.items():
        if name != "commander_state":
            assert len(s) == independent[(name, 0)] == s.meta["messages"]


def test_not_a_ulog_is_an_error(tmp_path):
    bad = tmp_path / "short.ulg"
    bad.write_bytes(LOG.read_bytes()[:10])
    with pytest.raises(rd.DatasetError, match="short.ulg: not a readable ULog"):
        rd.open(bad, format="ulog")
