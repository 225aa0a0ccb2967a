"""robocache.datasets' RLDS reader on the real BridgeData fixture, checked
against an independent read: the `tfrecord` package's record iterator and its
compiled tf.train.Example (example_pb2), Pillow and PyAV for the JPEG frames."""

import io
import json
import pathlib
import shutil

import av
import numpy as np
import pytest
from PIL import Image
from tfrecord import example_pb2
from tfrecord.reader import tfrecord_iterator

import robocache
import robocache.datasets as rd

FOLDER = (pathlib.Path(__file__).resolve().parents[3] / "data" / "robot" / "rlds" /
          "bridge_dataset" / "1.0.0")
TRAIN = FOLDER / "bridge_dataset-train.tfrecord-00000-of-00001"
RATE = 5.0


def oracle_records():
    """Every record of the train shard as {key: list of values} through tfrecord."""
    out = []
    for raw in tfrecord_iterator(str(TRAIN)):
        ex = example_pb2.Example()
        ex.ParseFromString(bytes(raw))
        rec = {}
        for key, feat in ex.features.feature.items():
            kind = feat.WhichOneof("kind")
            rec[key] = list(getattr(feat, kind).value)
        out.append(rec)
    return out


@pytest.fixture(scope="module")
def oracle():
    return oracle_records()


@pytest.fixture(scope="module")
def rec():
    return rd.open(FOLDER, rate_hz=RATE)


def copy_dataset(tmp_path):
    dst = tmp_path / "bridge"
    dst.mkdir()
    for name in ("dataset_info.json", "features.json", TRAIN.name):
        shutil.copy(FOLDER / name, dst / name)
    return dst


def test_detects_and_lists_the_train_split(rec, oracle):
    assert rd.detect(str(FOLDER)) == "rlds"
    assert rec.format == "rlds"
    assert len(rec.episodes) == len(oracle) == 25
    assert rec.meta["splits"] == {"train": 25}
    # dataset_info.json lists a val shard that is not in the folder
    assert [pathlib.Path(m).name for m in rec.meta["missing"]] == [
        "bridge_dataset-val.tfrecord-00000-of-00001"]
    assert all(ep.meta["split"] == "train" for ep in rec.episodes)
    with pytest.raises(rd.DatasetError, match="val.*missing"):
        rd.open(FOLDER, rate_hz=RATE, split="val")
    with pytest.raises(rd.DatasetError, match="no split 'test'"):
        rd.open(FOLDER, rate_hz=RATE, split="test")
    one = rd.open(TRAIN, rate_hz=RATE)  # a shard alone: its split, nothing missing
    assert rd.detect(str(TRAIN)) == "rlds"
    assert one.meta["splits"] == {"train": 25} and one.meta["missing"] == []


@pytest.mark.parametrize("name,key,dim,dtype", [
    ("observation/state", "steps/observation/state", 7, np.float32),
    ("action", "steps/action", 7, np.float32),
    ("language_embedding", "steps/language_embedding", 512, np.float32),
    ("reward", "steps/reward", 1, np.float32),
    ("discount", "steps/discount", 1, np.float32),
    ("is_first", "steps/is_first", 1, np.bool_),
    ("is_last", "steps/is_last", 1, np.bool_),
])
def test_step_features_equal_the_tfrecord_read(rec, oracle, name, key, dim, dtype):
    for ep, raw in zip(rec.episodes, oracle):
        s = ep.streams[name]
        want = np.asarray(raw[key]).astype(dtype).reshape(-1, dim)
        assert s.values.dtype == dtype
        np.testing.assert_array_equal(s.values, want)
        steps = want.shape[0]
        np.testing.assert_array_equal(s.times, np.round(np.arange(steps) * 1e9 / RATE))
        assert s.clock == "step" and s.kind == "vector"


def test_episode_meta_equals_the_tfrecord_read(rec, oracle):
    for ep, raw in zip(rec.episodes, oracle):
        texts = [b.decode() for b in raw["steps/language_instruction"]]
        assert len(set(texts)) == 1
        assert ep.meta["language_instruction"] == texts[0]
        assert ep.meta["steps"] == len(texts)
        em = ep.meta["episode_metadata"]
        assert em["file_path"] == raw["episode_metadata/file_path"][0].decode()
        assert em["episode_id"] == raw["episode_metadata/episode_id"][0]
        assert em["has_language"] is bool(raw["episode_metadata/has_language"][0])


def test_jpeg_frames_equal_pillow_and_match_pyav(rec, oracle):
    ep, raw = rec.episodes[7], oracle[7]
    s = ep.streams["observation/image_0"]
    assert s.kind == "image"
    np.testing.assert_array_equal(s.values.ravel(), np.arange(len(s)))
    picks = [9, 0, 4]
    got = s.frames(picks)
    assert got.shape == (3, 64, 64, 3) and got.dtype == np.uint8
    blobs = [raw["steps/observation/image_0"][i] for i in picks]
    pil = np.stack([np.asarray(Image.open(io.BytesIO(b)).convert("RGB")) for b in blobs])
    np.testing.assert_array_equal(got, pil)
    codec = av.CodecContext.create("mjpeg", "r")
    for frame, blob in zip(got, blobs):
        decoded = codec.decode(av.Packet(blob))[0].to_ndarray(format="rgb24")
        # another JPEG decoder: same picture up to colour-conversion rounding
        assert np.abs(frame.astype(int) - decoded.astype(int)).mean() < 3.0


def test_stream_feeds_align(rec, oracle):
    s = rec.episodes[0].streams["observation/state"]
    target = np.array([100_000_000, 900_000_000], dtype=np.int64)
    out, valid = robocache.align([robocache.Stream.from_series(s)], target)
    v = np.asarray(oracle[0]["steps/observation/state"], dtype=np.float64).reshape(-1, 7)
    t = np.arange(v.shape[0]) * 1e9 / RATE
    want = np.stack([np.interp(target, t, v[:, j]) for j in range(7)], axis=1)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)
    assert np.asarray(valid).all()


def test_missing_rate_asks_for_rate_hz():
    with pytest.raises(rd.DatasetError, match=r"rate_hz=5"):
        rd.open(FOLDER)


def test_rate_from_metadata_json(tmp_path):
    dst = copy_dataset(tmp_path)
    (dst / "metadata.json").write_text(json.dumps({"control_frequency": 10}))
    r = rd.open(dst)
    assert r.meta["rate_hz"] == 10.0
    np.testing.assert_array_equal(r.episodes[0].streams["action"].times[:3],
                                  [0, 100_000_000, 200_000_000])


def damaged(tmp_path, edit):
    """A copy of the dataset whose train shard is edit(bytes, record start offsets)."""
    dst = copy_dataset(tmp_path)
    shard = dst / TRAIN.name
    data = shard.read_bytes()
    starts, pos = [], 0
    while pos < len(data):
        starts.append(pos)
        pos += 16 + int.from_bytes(data[pos:pos + 8], "little")
    shard.write_bytes(edit(bytearray(data), starts))
    return dst


def flip(offset):
    def edit(data, starts):
        data[offset(starts)] ^= 0x40
        return bytes(data)
    return edit


def test_flipped_data_byte_is_a_crc_error_naming_file_and_record(tmp_path):
    dst = damaged(tmp_path, flip(lambda starts: starts[6] + 12 + 100))
    r = rd.open(dst, rate_hz=RATE)  # framing is intact: open succeeds
    assert r.episodes[5].streams["action"].values.shape == (10, 7)
    with pytest.raises(rd.DatasetError, match=rf"{TRAIN.name}: record 6 .*data CRC"):
        r.episodes[6].streams["action"].values


def test_flipped_length_byte_is_an_error_at_open(tmp_path):
    dst = damaged(tmp_path, flip(lambda starts: starts[3] + 1))
    with pytest.raises(rd.DatasetError, match=rf"{TRAIN.name}: record 3 .*length CRC"):
        rd.open(dst, rate_hz=RATE)


def test_truncated_shard_names_file_and_record(tmp_path):
    dst = damaged(tmp_path, lambda data, starts: bytes(data[:starts[11] + 5000]))
    with pytest.raises(rd.DatasetError, match=rf"{TRAIN.name}: record 11 .*truncated"):
        rd.open(dst, rate_hz=RATE)


def test_record_count_is_checked_against_dataset_info(tmp_path):
    dst = damaged(tmp_path, lambda data, starts: bytes(data[:starts[20]]))
    with pytest.raises(rd.DatasetError, match="20 records, dataset_info.json says 25"):
        rd.open(dst, rate_hz=RATE)


def test_open_parses_no_record(tmp_path, monkeypatch):
    from robocache.datasets import _tfexample
    calls = []
    real = _tfexample.parse
    monkeypatch.setattr(_tfexample, "parse", lambda data: calls.append(1) or real(data))
    r = rd.open(FOLDER, rate_hz=RATE)
    assert calls == []
    ep = r.episodes[2]
    ep.streams["action"].values
    ep.streams["observation/state"].values
    ep.meta["language_instruction"]
    assert calls == [1]  # one parse for the episode, shared by its streams and meta
