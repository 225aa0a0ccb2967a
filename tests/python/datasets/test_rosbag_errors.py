"""Damaged and missing bags (copies of the fixtures damaged here): a
DatasetError or OSError naming the file (and topic and message index where
the damage is found while reading a topic), never a crash, a hang or fewer
messages passed off as the whole topic."""

import pathlib
import shutil
import struct
import zlib

import pytest
import zstandard
from mcap.reader import make_reader

import robocache.datasets as rd

ROBOT = pathlib.Path(__file__).resolve().parents[3] / "data" / "robot"
TEST1_BAG = ROBOT / "ros1" / "robot_localization_test1.bag"
TEST1_DIR = ROBOT / "ros2" / "robot_localization_test1_mcap"
TEST1_MCAP = TEST1_DIR / "robot_localization_test1_mcap.mcap"
NAV2_MCAP = ROBOT / "ros2" / "evo_nav2_turtlebot.mcap"
TF_DIR = ROBOT / "ros2" / "evo_tf_example"


def load_all(path, **options):
    for s in rd.open(path, **options).episodes[0].streams.values():
        s.values


def chunks(path):
    with open(path, "rb") as f:
        return make_reader(f).get_summary().chunk_indexes


@pytest.mark.parametrize("src,name", [(TEST1_BAG, "t.bag"), (TEST1_MCAP, "t.mcap"),
                                      (NAV2_MCAP, "n.mcap")])
@pytest.mark.parametrize("keep", [0.0, 0.01, 0.5, 0.999])
def test_truncated_file(tmp_path, src, name, keep):
    data = src.read_bytes()
    bad = tmp_path / name
    bad.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(rd.DatasetError, match=str(bad)):
        load_all(bad)


def test_truncated_db3(tmp_path):
    bag = tmp_path / "tf"
    shutil.copytree(TF_DIR, bag)
    db3 = bag / "tf_example.db3"
    db3.write_bytes(db3.read_bytes()[:40_000])
    with pytest.raises(rd.DatasetError, match=r"tf_example\.db3.*malformed"):
        load_all(bag)


def with_chunk_crc(src, dst, flip):
    """Copies the single-chunk `src` to `dst` with the chunk's CRC field set to
    the CRC-32 of its uncompressed data (the writer left it 0: "not stored"),
    one bit flipped if `flip`."""
    data = bytearray(src.read_bytes())
    (chunk,) = chunks(src)
    crc_at = chunk.chunk_start_offset + 1 + 8 + 24  # opcode, length, start, end, size
    assert chunk.compression == "zstd" and struct.unpack_from("<I", data, crc_at)[0] == 0
    records_at = crc_at + 4 + 4 + len(chunk.compression) + 8
    raw = zstandard.ZstdDecompressor().decompress(
        bytes(data[records_at:records_at + chunk.compressed_size]),
        max_output_size=chunk.uncompressed_size)
    struct.pack_into("<I", data, crc_at, zlib.crc32(raw) ^ int(flip))
    dst.write_bytes(bytes(data))
    return dst


def test_mcap_chunk_with_bad_crc(tmp_path):
    """The index is intact, so open works until a topic in the chunk is read:
    the error names file, topic and chunk (the /tf topics are decoded at open)."""
    good = with_chunk_crc(NAV2_MCAP, tmp_path / "good.mcap", flip=False)
    load_all(good)
    bad = with_chunk_crc(NAV2_MCAP, tmp_path / "nav2.mcap", flip=True)
    with pytest.raises(rd.DatasetError,
                       match=r"nav2\.mcap: topic '/tf': chunk at byte 58: .*checksum"):
        rd.open(bad)
    ep = rd.open(bad, topics=["/odom"]).episodes[0]
    with pytest.raises(rd.DatasetError,
                       match=r"nav2\.mcap: topic '/odom': chunk at byte 58: .*checksum"):
        ep.streams["/odom/pose/position"].values


def test_mcap_chunk_with_corrupt_data_and_no_crc(tmp_path):
    """rosbags' MCAP writer stores no chunk CRC; zeroed bytes inside chunk 2 of
    test1 decompress to damaged records: an error naming the chunk and the
    record (rosbags skips the records whose log time is out of the chunk's
    range, so read through it the topic has fewer messages than the index
    lists, also an error), not a short stream."""
    data = bytearray(TEST1_MCAP.read_bytes())
    c = chunks(TEST1_MCAP)[2]
    middle = c.chunk_start_offset + c.chunk_length // 2
    data[middle:middle + 64] = bytes(64)
    bag = tmp_path / "bag"
    bag.mkdir()
    shutil.copy(TEST1_DIR / "metadata.yaml", bag)
    (bag / TEST1_MCAP.name).write_bytes(bytes(data))
    ep = rd.open(bag).episodes[0]
    with pytest.raises(rd.DatasetError, match=rf"topic '/imu/data': chunk at byte "
                       rf"{c.chunk_start_offset}: record \d+ at byte \d+: message log_time "):
        ep.streams["/imu/data/orientation"].values


def test_ros1_chunk_with_corrupt_data(tmp_path):
    data = bytearray(TEST1_BAG.read_bytes())
    at = len(data) // 3
    data[at:at + 64] = bytes(64)
    bad = tmp_path / "t1.bag"
    bad.write_bytes(bytes(data))
    ep = rd.open(bad).episodes[0]
    with pytest.raises(rd.DatasetError, match=r"t1\.bag: topic '/imu/data', message \d+: "):
        ep.streams["/imu/data/orientation"].values


def test_missing_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.bag"):
        rd.open(tmp_path / "nothing.bag")
    with pytest.raises(FileNotFoundError, match="nothing.mcap"):
        rd.open(tmp_path / "nothing.mcap", format="rosbag2")
    bag = tmp_path / "bag"
    bag.mkdir()
    shutil.copy(TEST1_DIR / "metadata.yaml", bag)  # its .mcap is missing
    with pytest.raises(rd.DatasetError, match=r"bag.*robot_localization_test1_mcap\.mcap"):
        rd.open(bag)


def test_not_a_bag(tmp_path):
    junk = tmp_path / "junk.bag"
    junk.write_bytes(b"#ROSBAG V2.0\n" + b"\x07" * 100)
    with pytest.raises(rd.DatasetError, match=r"junk\.bag"):
        rd.open(junk)
    empty = tmp_path / "empty.mcap"
    empty.write_bytes(b"")
    with pytest.raises(rd.DatasetError, match=r"empty\.mcap"):
        rd.open(empty)
    folder = tmp_path / "two"
    folder.mkdir()
    (folder / "a.mcap").write_bytes(TEST1_MCAP.read_bytes()[:100])
    (folder / "b.mcap").write_bytes(TEST1_MCAP.read_bytes()[:100])
    with pytest.raises(rd.DatasetError, match=r"two: .*exactly one \.mcap or \.db3 file"):
        rd.open(folder)
    with pytest.raises(rd.DatasetError, match="a ROS 1 bag is a file ending in .bag"):
        rd.open(folder, format="rosbag1")
