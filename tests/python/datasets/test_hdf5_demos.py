"""robocache.datasets' robomimic and ALOHA readers on files written here with
h5py in the documented layouts; values are checked against what was written,
compressed ALOHA frames against Pillow and PyAV decodes of the stored JPEG."""

import io
import json

import av
import h5py
import numpy as np
import pytest
from PIL import Image

import robocache.datasets as rd
from robocache.datasets import hdf5

RNG = np.random.default_rng(7)
DEMO_STEPS = {"demo_0": 5, "demo_1": 7, "demo_2": 4, "demo_10": 6}


def image_stack(steps, h=16, w=24):
    """Smooth uint8 [steps, h, w, 3] pictures (JPEG keeps them close)."""
    y, x = np.mgrid[0:h, 0:w]
    frames = [np.stack([(x * 9 + 20 * t) % 256, (y * 13 + 5 * t) % 256,
                        np.full_like(x, 40 + 30 * t)], axis=-1) for t in range(steps)]
    return np.asarray(frames, dtype=np.uint8)


@pytest.fixture
def robomimic_file(tmp_path):
    path = tmp_path / "low_dim.hdf5"
    written = {}
    with h5py.File(path, "w") as f:
        data = f.create_group("data")
        data.attrs["env_args"] = json.dumps({"env_name": "Lift", "type": 1,
                                             "env_kwargs": {"control_freq": 20}})
        data.attrs["total"] = sum(DEMO_STEPS.values())
        for demo, steps in DEMO_STEPS.items():
            g = data.create_group(demo)
            g.attrs["num_samples"] = steps
            arrays = {"obs/robot0_eef_pos": RNG.normal(size=(steps, 3)),
                      "obs/agentview_image": image_stack(steps),
                      "actions": RNG.normal(size=(steps, 7)),
                      "rewards": RNG.random(steps),
                      "dones": (np.arange(steps) == steps - 1).astype(np.int64),
                      "states": RNG.normal(size=(steps, 5))}
            for key, value in arrays.items():
                g.create_dataset(key, data=value)
            written[demo] = arrays
        mask = f.create_group("mask")
        mask.create_dataset("train", data=np.array([b"demo_0", b"demo_2", b"demo_10"]))
        mask.create_dataset("valid", data=np.array([b"demo_1"]))
    return path, written


def test_robomimic_demos_equal_what_was_written(robomimic_file):
    path, written = robomimic_file
    assert rd.detect(str(path)) == "robomimic"
    rec = rd.open(path)
    assert rec.format == "robomimic"
    assert [ep.index for ep in rec.episodes] == [0, 1, 2, 10]  # numeric order of demo_N
    assert rec.meta["rate_hz"] == 20.0 and rec.meta["masks"] == {"train": 3, "valid": 1}
    for ep in rec.episodes:
        arrays = written[ep.meta["demo"]]
        steps = DEMO_STEPS[ep.meta["demo"]]
        assert list(ep.streams) == ["obs/agentview_image", "obs/robot0_eef_pos", "actions",
                                    "rewards", "dones", "states"]
        for key in ("obs/robot0_eef_pos", "actions", "rewards", "dones", "states"):
            s = ep.streams[key]
            np.testing.assert_array_equal(s.values, arrays[key].reshape(steps, -1))
            np.testing.assert_array_equal(s.times, np.arange(steps) * 50_000_000)
            assert s.kind == "vector" and s.clock == "step"
        img = ep.streams["obs/agentview_image"]
        assert img.kind == "image"
        np.testing.assert_array_equal(img.values.ravel(), np.arange(steps))
        np.testing.assert_array_equal(img.frames([3, 0, 3]), arrays["obs/agentview_image"][[3, 0, 3]])
    assert rec.episodes[1].meta["splits"] == ["valid"]
    assert rec.episodes[3].meta["splits"] == ["train"]


def test_robomimic_split_and_rate_options(robomimic_file):
    path, _ = robomimic_file
    rec = rd.open(path, split="valid", rate_hz=10)
    assert [ep.meta["demo"] for ep in rec.episodes] == ["demo_1"]
    np.testing.assert_array_equal(rec.episodes[0].streams["actions"].times[:2], [0, 100_000_000])
    with pytest.raises(rd.DatasetError, match="no mask/test"):
        rd.open(path, split="test")


def test_robomimic_without_control_freq_asks_for_rate_hz(robomimic_file):
    path, _ = robomimic_file
    with h5py.File(path, "a") as f:
        f["data"].attrs["env_args"] = json.dumps({"env_name": "Lift", "env_kwargs": {}})
    with pytest.raises(rd.DatasetError, match="rate_hz="):
        rd.open(path)
    assert rd.open(path, rate_hz=15).meta["rate_hz"] == 15.0


def test_robomimic_missing_actions_names_file_episode_and_key(robomimic_file):
    path, _ = robomimic_file
    with h5py.File(path, "a") as f:
        del f["data/demo_2/actions"]
    with pytest.raises(rd.DatasetError, match=r"low_dim\.hdf5: episode demo_2: missing key 'actions'"):
        rd.open(path)


def test_robomimic_length_mismatch_names_key(robomimic_file):
    path, _ = robomimic_file
    with h5py.File(path, "a") as f:
        del f["data/demo_1/rewards"]
        f["data/demo_1"].create_dataset("rewards", data=np.zeros(3))
    with pytest.raises(rd.DatasetError, match=r"episode demo_1: 'rewards' has shape \(3,\), "
                                              "expected 7 rows"):
        rd.open(path)


def test_robomimic_reads_one_dataset_per_series(robomimic_file, monkeypatch):
    path, _ = robomimic_file
    reads = []
    real = hdf5._read
    monkeypatch.setattr(hdf5, "_read", lambda files, p, key, *a, **k: reads.append(key) or
                        real(files, p, key, *a, **k))
    rec = rd.open(path)
    assert reads == []
    rec.episodes[2].streams["actions"].values
    rec.episodes[2].streams["actions"].times
    assert reads == ["data/demo_2/actions"]


def act_jpeg_rows(frames):
    """Frames stored the way ACT's compress_data.py does: cv2.imencode reads
    the array as BGR (so the JPEG holds the channels reversed), rows
    zero-padded to the longest encoding. Pillow stands in for cv2 here."""
    blobs = []
    for frame in frames:
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(frame[..., ::-1])).save(buf, "JPEG", quality=95)
        blobs.append(buf.getvalue())
    rows = np.zeros((len(blobs), max(map(len, blobs))), dtype=np.uint8)
    for i, b in enumerate(blobs):
        rows[i, :len(b)] = np.frombuffer(b, dtype=np.uint8)
    return rows, blobs


def write_aloha(path, steps, *, compress, effort=True):
    arrays = {"observations/qpos": RNG.normal(size=(steps, 14)),
              "observations/qvel": RNG.normal(size=(steps, 14)),
              "action": RNG.normal(size=(steps, 14))}
    if effort:
        arrays["observations/effort"] = RNG.normal(size=(steps, 14))
    frames = image_stack(steps)
    with h5py.File(path, "w") as f:
        f.attrs["sim"] = not compress
        f.attrs["compress"] = compress
        for key, value in arrays.items():
            f.create_dataset(key, data=value)
        if compress:
            rows, blobs = act_jpeg_rows(frames)
            f.create_dataset("observations/images/cam_high", data=rows)
            f.create_dataset("compress_len", data=np.array([[len(b) for b in blobs]]))
        else:
            f.create_dataset("observations/images/top", data=frames)
    return arrays, frames


@pytest.fixture
def aloha_dir(tmp_path):
    folder = tmp_path / "aloha_task"
    folder.mkdir()
    written = {0: write_aloha(folder / "episode_0.hdf5", 6, compress=False, effort=False),
               2: write_aloha(folder / "episode_2.hdf5", 5, compress=False),
               10: write_aloha(folder / "episode_10.hdf5", 4, compress=True)}
    return folder, written


def test_aloha_folder_equals_what_was_written(aloha_dir):
    folder, written = aloha_dir
    assert rd.detect(str(folder)) == "aloha"
    assert rd.detect(str(folder / "episode_2.hdf5")) == "aloha"
    rec = rd.open(folder)
    assert [ep.index for ep in rec.episodes] == [0, 2, 10]
    assert rec.meta["rate_hz"] == 50.0
    for ep in rec.episodes:
        arrays, frames = written[ep.index]
        steps = frames.shape[0]
        assert set(arrays) <= set(ep.streams)
        assert ("observations/effort" in ep.streams) == (ep.index != 0)
        for key, value in arrays.items():
            s = ep.streams[key]
            np.testing.assert_array_equal(s.values, value)
            np.testing.assert_array_equal(s.times, np.arange(steps) * 20_000_000)
        assert ep.meta["compress"] == (ep.index == 10)
    top = rec.episodes[1].streams["observations/images/top"]
    assert top.kind == "image"
    np.testing.assert_array_equal(top.frames([4, 1]), written[2][1][[4, 1]])


def test_aloha_compressed_frames_decode_like_act(aloha_dir):
    folder, written = aloha_dir
    ep = rd.open(folder / "episode_10.hdf5").episodes[0]
    cam = ep.streams["observations/images/cam_high"]
    assert cam.kind == "image" and "compress_len" not in ep.streams
    got = cam.frames([2, 0])
    frames = written[10][1]
    with h5py.File(folder / "episode_10.hdf5") as f:
        rows, lens = f["observations/images/cam_high"][()], f["compress_len"][0]
    codec = av.CodecContext.create("mjpeg", "r")
    for k, i in enumerate([2, 0]):
        blob = rows[i, :lens[i]].tobytes()
        pil = np.asarray(Image.open(io.BytesIO(blob)).convert("RGB"))[..., ::-1]
        np.testing.assert_array_equal(got[k], pil)
        # another decoder (its own chroma upsampling) and the recorded array
        # (JPEG is lossy) agree to a few levels; reversed channels would be
        # some 40 levels off (the red ramp against the flat blue)
        other = codec.decode(av.Packet(blob))[0].to_ndarray(format="rgb24")[..., ::-1]
        assert np.abs(got[k].astype(int) - other.astype(int)).mean() < 6.0
        assert np.abs(got[k].astype(int) - frames[i].astype(int)).mean() < 6.0


def test_aloha_rate_option(aloha_dir):
    folder, _ = aloha_dir
    rec = rd.open(folder, rate_hz=30)
    np.testing.assert_array_equal(rec.episodes[0].streams["action"].times[:3],
                                  [0, 33_333_333, 66_666_667])


def test_aloha_missing_qpos_names_file_episode_and_key(aloha_dir):
    folder, _ = aloha_dir
    with h5py.File(folder / "episode_2.hdf5", "a") as f:
        del f["observations/qpos"]
    with pytest.raises(rd.DatasetError,
                       match=r"episode_2\.hdf5: episode 2: missing key 'observations/qpos'"):
        rd.open(folder)


def test_hdf5_of_neither_layout_is_an_error(tmp_path):
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("points", data=np.zeros((3, 3)))
    with pytest.raises(rd.DatasetError, match="neither robomimic.*nor ALOHA.*points"):
        rd.open(path)
