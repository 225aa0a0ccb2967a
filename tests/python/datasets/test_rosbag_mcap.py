"""The chunk reader of rosbag2 MCAP files (robocache.datasets.ros_mcap and
the C record scan under it) against rosbags' per-message iterator on the
same files: every topic's log times and message bytes equal, in the same
order, and every stream of robocache.datasets.open bit-identical to the one
read through rosbags, on the MCAP bags in data/robot/ros2 and on bags written
here with mcap's writer (chunks uncompressed, zstd and lz4, small chunks,
channels interleaved, log times out of order and repeated, two channels on
one topic, a topic whose message length changes mid-bag) and with rosbags'
writer (zstd chunks; per-message compression, which stays on rosbags' path).
Damaged chunks (record length, CRC, sizes, compressed bytes, log time out of
its chunk's range) are DatasetErrors naming file, topic, chunk and record;
the record scan itself is checked on records packed here with struct."""

import pathlib
import struct

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap.writer import CompressionType
from mcap.writer import Writer as McapWriter
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin
from rosbags.rosbag2 import Reader as Reader2
from rosbags.rosbag2 import Writer
from rosbags.typesys import Stores, get_typestore

import robocache.datasets as rd
from robocache import _C
from robocache.datasets import ros_mcap, rosbag

ROBOT = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot"
FIXTURES = [ROBOT / "ros2" / "robot_localization_test1_mcap",
            ROBOT / "ros2" / "evo_nav2_turtlebot.mcap"]
TS = get_typestore(Stores.ROS2_HUMBLE)
T = TS.types
S = 1_000_000_000
POINT, IMU = "geometry_msgs/msg/PointStamped", "sensor_msgs/msg/Imu"


def by_rosbags(path):
    """{topic: [(log time, bytes)]} in the order rosbags' reader gives them."""
    out = {}
    with Reader2(path) as reader:
        for c, t, raw in reader.messages():
            out.setdefault(c.topic, []).append((t, bytes(raw)))
    return out


def mcap_file(path):
    return path if path.is_file() else next(path.glob("*.mcap"))


def assert_same_messages(path):
    """ros_mcap.read == rosbags' messages, topic by topic; returns the row
    type (array or list) of each topic."""
    index = ros_mcap.index(mcap_file(path))
    want = by_rosbags(path)
    got = ros_mcap.read(index, set(index.channels.values()))
    assert {t for t, (times, _) in got.items() if len(times)} == set(want)
    for topic, messages in want.items():
        times, rows = got[topic]
        assert times.dtype == np.int64
        assert times.tolist() == [t for t, _ in messages], topic
        assert [bytes(r) for r in rows] == [raw for _, raw in messages], topic
    return {t: type(rows) for t, (_, rows) in got.items()}


def streams(path, monkeypatch, fast):
    """{stream: (times, values)} of every numeric stream; fast=False reads
    every topic through rosbags' iterator."""
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(rosbag._Bag, "mcap_index", property(lambda bag: None))
        rec = rd.open(path, order="drop")
        return {n: (s.times, s.values) for n, s in rec.episodes[0].streams.items()
                if s.kind != "image"}


def assert_same_streams(path, monkeypatch):
    fast, slow = streams(path, monkeypatch, True), streams(path, monkeypatch, False)
    assert fast.keys() == slow.keys() and fast
    for name, (t, v) in fast.items():
        assert np.array_equal(t, slow[name][0]), name
        assert v.dtype == slow[name][1].dtype and v.tobytes() == slow[name][1].tobytes(), name


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixtures_same_as_rosbags(path, monkeypatch):
    assert_same_messages(path)
    assert_same_streams(path, monkeypatch)


def point(stamp, x, frame="base"):
    header = T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp // S, nanosec=stamp % S), frame_id=frame)
    return T[POINT](header=header, point=T["geometry_msgs/msg/Point"](x=x, y=-x, z=2 * x))


def imu(stamp, v, frame):
    h = point(stamp, 0.0, frame).header
    v3 = T["geometry_msgs/msg/Vector3"]
    q = T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=np.sin(v), w=np.cos(v))
    return T[IMU](header=h, orientation=q, orientation_covariance=np.zeros(9),
                  angular_velocity=v3(x=v, y=2 * v, z=3 * v), angular_velocity_covariance=np.zeros(9),
                  linear_acceleration=v3(x=-v, y=0.5, z=9.8),
                  linear_acceleration_covariance=np.zeros(9))


def messages(rng, n=600):
    """[(topic key, log time, msgtype, message)] interleaved: points on two
    channels of /points, IMU messages whose frame_id grows after message 400
    (the message length changes in a later chunk), log times that go back and
    repeat."""
    t0 = 1_700_000_000 * S
    out = []
    for i in range(n):
        log = t0 + i * 10_000_000 + int(rng.integers(-25_000_000, 25_000_000))
        if i % 7 == 0:
            log = out[-1][1] if out else log  # a repeated log time
        kind = i % 3
        if kind == 2:
            out.append(("imu", log, IMU, imu(log - 1000, i / n, "imu" if i < 400 else "imu_link")))
        else:
            out.append((f"points{kind}", log, POINT, point(log - 500, float(i))))
    return out


def write_mcap(path, rows, compression, chunk_size=4000, crcs=True):
    topics = {"points0": "/points", "points1": "/points", "imu": "/imu"}
    with open(path, "wb") as f:
        w = McapWriter(f, chunk_size=chunk_size, compression=compression, enable_crcs=crcs)
        w.start(profile="ros2", library="test")
        schemas = {t: w.register_schema(name=t, encoding="ros2msg",
                                        data=TS.generate_msgdef(t, ros_version=2)[0].encode())
                   for t in (POINT, IMU)}
        types = {"points0": POINT, "points1": POINT, "imu": IMU}
        channels = {k: w.register_channel(topic=topic, message_encoding="cdr",
                                          schema_id=schemas[types[k]])
                    for k, topic in topics.items()}
        for seq, (key, log, msgtype, msg) in enumerate(rows):
            w.add_message(channels[key], log_time=log, publish_time=log, sequence=seq,
                          data=bytes(TS.serialize_cdr(msg, msgtype)))
        w.finish()
    return path


@pytest.mark.parametrize("compression", [CompressionType.NONE, CompressionType.ZSTD,
                                         CompressionType.LZ4], ids=lambda c: c.name)
def test_written_mcap_same_as_rosbags(tmp_path, rng, monkeypatch, compression):
    path = write_mcap(tmp_path / "w.mcap", messages(rng), compression)
    with open(path, "rb") as f:
        summary = make_reader(f).get_summary()
    assert len(summary.chunk_indexes) > 5
    assert {c.compression for c in summary.chunk_indexes} == {
        {"NONE": "", "ZSTD": "zstd", "LZ4": "lz4"}[compression.name]}
    kinds = assert_same_messages(path)
    assert kinds == {"/points": np.ndarray, "/imu": list}  # /imu: lengths differ, per message
    assert_same_streams(path, monkeypatch)


@pytest.mark.parametrize("scale", [0, 0.5, 1, 2])
def test_statistics_counts_are_only_a_size_hint(tmp_path, rng, monkeypatch, scale):
    """The Statistics record's message counts size the topic's block; counts
    that are missing, too small or too large give the same messages."""
    path = write_mcap(tmp_path / "w.mcap", messages(rng), CompressionType.ZSTD)
    real = ros_mcap.index
    counts = real(path).counts
    assert sum(counts.values()) == 600

    def index(p):
        i = real(p)
        return i._replace(counts={c: int(n * scale) for c, n in i.counts.items()})
    monkeypatch.setattr(ros_mcap, "index", index)
    assert_same_messages(path)


@pytest.mark.parametrize("mode", [CompressionMode.STORAGE, CompressionMode.MESSAGE],
                         ids=lambda m: m.name)
def test_rosbags_writer_compression(tmp_path, rng, monkeypatch, mode):
    """zstd chunks (STORAGE) take the chunk reader; messages compressed one by
    one (MESSAGE, noted in metadata.yaml) stay on rosbags' path."""
    path = tmp_path / "bag"
    w = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    w.set_compression(mode, CompressionFormat.ZSTD)
    with w:
        conns = {}
        for key, log, msgtype, msg in messages(rng, 300):
            topic = "/imu" if key == "imu" else "/points"
            if topic not in conns:
                conns[topic] = w.add_connection(topic, msgtype, typestore=TS)
            w.write(conns[topic], log, bytes(TS.serialize_cdr(msg, msgtype)))
    bag = rosbag._Bag(str(path), "rosbag2")
    assert (bag.mcap_index is not None) == (mode == CompressionMode.STORAGE)
    if mode == CompressionMode.STORAGE:
        assert_same_messages(path)
    assert_same_streams(path, monkeypatch)


def chunk_of(path, k=0):
    with open(path, "rb") as f:
        return make_reader(f).get_summary().chunk_indexes[k]


def damaged(tmp_path, rng, edit, compression=CompressionType.NONE, crcs=False):
    """An MCAP written here, one of its chunks changed by edit(data, chunk
    index record, offset of the chunk's records)."""
    path = write_mcap(tmp_path / "bad.mcap", messages(rng), compression, crcs=crcs)
    data = bytearray(path.read_bytes())
    c = chunk_of(path, 1)
    records_at = c.chunk_start_offset + 9 + 8 + 8 + 8 + 4 + 4 + len(c.compression) + 8
    edit(data, c, records_at)
    path.write_bytes(bytes(data))
    return path, c


def read_points(path):
    rd.open(path, topics=["/points"]).episodes[0].streams["/points/point"].values


def test_bad_record_length(tmp_path, rng):
    def edit(data, c, at):
        struct.pack_into("<Q", data, at + 1, c.uncompressed_size)  # first record: past the end
    path, c = damaged(tmp_path, rng, edit)
    with pytest.raises(rd.DatasetError, match=rf"bad\.mcap: topic '/points': chunk at byte "
                       rf"{c.chunk_start_offset}: record 0 at byte 0: record length past the end"):
        read_points(path)


def test_short_message_record(tmp_path, rng):
    """A message record too short for its header, cut from the next record's
    bytes: named by its index (the second record of the chunk)."""
    def edit(data, c, at):
        (first,) = struct.unpack_from("<Q", data, at + 1)
        second = at + 9 + first
        assert data[second] == 0x05
        struct.pack_into("<Q", data, second + 1, 21)
    path, c = damaged(tmp_path, rng, edit)
    with pytest.raises(rd.DatasetError, match=r"chunk at byte \d+: record 1 at byte \d+: message "
                       r"record shorter than its 22-byte header"):
        read_points(path)


def test_bad_crc(tmp_path, rng):
    def edit(data, c, at):
        data[at + 40] ^= 0x10  # a byte of the first message's log time
    path, c = damaged(tmp_path, rng, edit, crcs=True)
    with pytest.raises(rd.DatasetError, match=rf"chunk at byte {c.chunk_start_offset}: CRC-32 "
                       "checksum of the decompressed records does not match"):
        read_points(path)


def test_chunk_sizes_differ_from_index(tmp_path, rng):
    def edit(data, c, at):
        struct.pack_into("<Q", data, at - 8, c.compressed_size - 1)  # records field shorter
    path, c = damaged(tmp_path, rng, edit)
    with pytest.raises(rd.DatasetError, match=rf"chunk at byte {c.chunk_start_offset}: the "
                       "chunk's times, sizes or compression differ from its chunk index"):
        read_points(path)


@pytest.mark.parametrize("compression", [CompressionType.ZSTD, CompressionType.LZ4],
                         ids=lambda c: c.name)
def test_truncated_compressed_chunk(tmp_path, rng, compression):
    """The compressed bytes cut short inside the chunk (the rest zeroed)."""
    def edit(data, c, at):
        cut = at + c.compressed_size // 2
        data[cut:at + c.compressed_size] = bytes(at + c.compressed_size - cut)
    path, c = damaged(tmp_path, rng, edit, compression)
    with pytest.raises(rd.DatasetError, match=rf"chunk at byte {c.chunk_start_offset}: "
                       rf"{compression.name.lower()} decompression failed|bytes decompressed"):
        read_points(path)


def test_log_time_outside_its_chunk(tmp_path, rng):
    def edit(data, c, at):
        struct.pack_into("<Q", data, at + 9 + 6, c.message_end_time + 1)  # first message
    path, c = damaged(tmp_path, rng, edit)
    with pytest.raises(rd.DatasetError, match=rf"chunk at byte {c.chunk_start_offset}: a "
                       "message's log time is outside the chunk's"):
        read_points(path)


def record(op, content):
    return struct.pack("<BQ", op, len(content)) + content


def message(channel, seq, log, data):
    return record(0x05, struct.pack("<HIQQ", channel, seq, log, log + 1) + data)


def scan(buf):
    return np.frombuffer(_C.mcap_scan(buf), dtype=np.int64).reshape(-1, 4).tolist()


def test_scan_packed_records():
    """Channel and schema records skipped, messages found with their data's
    offset and length (oracle: the packing here)."""
    schema = record(0x03, b"\x01\x00" + b"x" * 10)
    m1, m2 = message(3, 0, 5 * S, b"abc"), message(65535, 1, 2**63 - 1, b"")
    buf = schema + m1 + record(0x04, b"\x00" * 7) + m2
    assert scan(buf) == [[3, 5 * S, len(schema) + 9 + 22, 3],
                         [65535, 2**63 - 1, len(buf), 0]]
    assert scan(b"") == []


@pytest.mark.parametrize("buf,what", [
    (b"\x05\x00\x00", "record 0 at byte 0: record header"),
    (message(1, 0, 1, b"ab") + b"\x05" + struct.pack("<Q", 3), "record 1 at byte 33: record "
     "length past the end"),
    (record(0x05, b"\x00" * 21), "record 0 at byte 0: message record shorter"),
    (message(1, 0, 2**63, b""), "record 0 at byte 0: message log_time above the int64"),
    (record(0x04, b"") + record(0x05, b"\x00" * 30) + struct.pack("<BQ", 5, 2**64 - 1),
     "record 2 at byte 48: record length past the end"),
])
def test_scan_damaged_records(buf, what):
    with pytest.raises(ValueError, match=what):
        _C.mcap_scan(buf)


def test_gather_rows_checks_offsets():
    src = bytes(range(20))
    dst = np.zeros((2, 4), dtype=np.uint8)
    _C.gather_rows(src, np.array([16, 3], dtype=np.int64), 4, dst)
    assert dst.tolist() == [list(range(16, 20)), list(range(3, 7))]
    with pytest.raises(ValueError, match="row 1 .* past the 20 source bytes"):
        _C.gather_rows(src, np.array([0, 17], dtype=np.int64), 4, dst)
    with pytest.raises(ValueError, match="row 0 "):
        _C.gather_rows(src, np.array([-1, 0], dtype=np.int64), 4, dst)
    with pytest.raises(ValueError, match="dst hold"):
        _C.gather_rows(src, np.array([0], dtype=np.int64), 4, dst)
