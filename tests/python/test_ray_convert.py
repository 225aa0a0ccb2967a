"""robocache.ray against robocache.convert: the same recordings converted
serially and on a local Ray (2 CPUs) give the same LeRobot v3.0 dataset, file
for file, also after a worker dies mid-shard (Ray's retry) and when a job that
stopped before its last shard is rerun (completed shards skipped). Inputs: the
real Husky recording as MCAP and as ROS 1 bag, plus two copies of it written
here with rosbags, cut to a part of the drive and shifted in time."""

import filecmp
import json
import os
import pathlib
import sys

import numpy as np
import pytest

ray = pytest.importorskip("ray")
rr = pytest.importorskip("robocache.ray")
from robocache.convert import convert  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
HUSKY_MCAP = ROOT / "data/robot/ros2/robot_localization_test1_mcap"
HUSKY_BAG = ROOT / "data/robot/ros1/robot_localization_test1.bag"
ODOM = "/husky_velocity_controller/odom"
STREAMS = ["observation.imu=/imu/data/angular_velocity,/imu/data/linear_acceleration",
           f"observation.state={ODOM}/pose", f"action={ODOM}/twist,method=previous"]
FPS = 30


def _cuda():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


requires_cuda = pytest.mark.skipif(not _cuda(), reason="no CUDA device")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    import ray.cloudpickle
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False)
    yield
    ray.shutdown()


def shifted_copy(src, dst, shift_ns, keep_s):
    """A rosbag2 (MCAP) copy of `src` with the first keep_s seconds of each
    topic of STREAMS, log times and header stamps moved by shift_ns."""
    from rosbags.highlevel import AnyReader
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    ts = get_typestore(Stores.ROS2_HUMBLE)
    with AnyReader([src], default_typestore=ts) as reader, \
            Writer(dst, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        conns = [c for c in reader.connections if c.topic in ("/imu/data", ODOM)]
        out = {c.topic: w.add_connection(c.topic, c.msgtype, typestore=ts) for c in conns}
        start = reader.start_time
        for c, t, raw in reader.messages(connections=conns):
            if t - start > keep_s * 10**9:
                continue
            msg = reader.deserialize(raw, c.msgtype)
            stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec + shift_ns
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
            w.write(out[c.topic], t + shift_ns, ts.serialize_cdr(msg, c.msgtype))
    return dst


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("recordings")
    return [str(HUSKY_MCAP), str(HUSKY_BAG),
            str(shifted_copy(HUSKY_MCAP, d / "early", -3_600 * 10**9 + 123_456_789, 120)),
            str(shifted_copy(HUSKY_BAG, d / "late", 86_400 * 10**9, 60))]


@pytest.fixture(scope="module")
def serial(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("serial") / "husky"
    convert(inputs, str(out), to="lerobot", fps=FPS, streams=STREAMS)
    return out


def files(root):
    return sorted(str(p.relative_to(root)) for p in pathlib.Path(root).rglob("*") if p.is_file())


def assert_same_dataset(a, b):
    """Every file byte for byte (data Parquet, meta/episodes, stats.json,
    info.json, tasks), Parquet values through pyarrow, and the sync reports."""
    import pyarrow.parquet as pq
    assert files(a) == files(b)
    for rel in files(a):
        assert filecmp.cmp(a / rel, b / rel, shallow=False), rel
        if rel.endswith(".parquet"):
            assert pq.read_table(a / rel).equals(pq.read_table(b / rel)), rel
    ra, rb = (json.loads(pathlib.Path(f"{p}.sync.json").read_text()) for p in (a, b))
    assert ra.pop("output") == str(a) and rb.pop("output") == str(b)
    assert ra == rb


def test_ray_equals_serial(inputs, serial, tmp_path):
    out = tmp_path / "husky"
    rr.convert(inputs, str(out), streams=STREAMS, fps=FPS, num_workers=2)
    assert_same_dataset(serial, out)
    info = json.loads((out / "meta/info.json").read_text())
    assert info["total_episodes"] == 4  # one per recording, none merged or lost
    assert not os.path.exists(f"{out.parent}/.husky.shards")


class CrashOnce(rr.Align):
    """Kills its worker process the first time it meets `victim`."""

    def __init__(self, victim, flag):
        super().__init__("cpu")
        self.victim, self.flag = victim, flag

    def __call__(self, batch):
        if self.victim in list(batch["path"]) and not os.path.exists(self.flag):
            open(self.flag, "w").close()
            os._exit(1)
        return super().__call__(batch)


def test_worker_killed_mid_shard_is_retried(inputs, serial, tmp_path):
    out = tmp_path / "husky"
    flag = tmp_path / "crashed"
    ds = rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(out))
    ds = ds.map_batches(CrashOnce, fn_constructor_kwargs={"victim": inputs[2], "flag": str(flag)},
                        batch_size=1, batch_format="numpy", concurrency=2)
    rr.write_lerobot(ds, str(out))
    assert flag.exists()
    assert_same_dataset(serial, out)


class Counting(rr.Align):
    """Records every recording it converts as a file in `log`."""

    def __init__(self, log):
        super().__init__("cpu")
        self.log = log

    def __call__(self, batch):
        for p in batch["path"]:
            open(os.path.join(self.log, os.path.basename(str(p))), "w").close()
        return super().__call__(batch)


def test_rerun_skips_completed_shards(inputs, serial, tmp_path):
    out = tmp_path / "husky"
    log = tmp_path / "converted"
    log.mkdir()
    stage = tmp_path / ".husky.shards"

    def run(ds):
        ds = ds.map_batches(Counting, fn_constructor_kwargs={"log": str(log)}, batch_size=1,
                            batch_format="numpy", concurrency=2)
        return rr.write_lerobot(ds, str(out))

    # A job that stopped before the shard of inputs[3] was written: no dataset.
    ds = rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(out))
    with pytest.raises(OSError, match="missing"):
        run(ds.limit(3))
    assert not out.exists() and sorted(os.listdir(log)) == sorted(
        os.path.basename(p) for p in inputs[:3])
    shards = [d for d in os.listdir(stage) if not d.endswith(".json")]
    assert len(shards) == 3
    # Damage one completed shard: its checksum fails, so it is converted again.
    damaged = stage / shards[0] / "episodes.npz"
    data = bytearray(damaged.read_bytes())
    data[-100] ^= 0xFF
    damaged.write_bytes(bytes(data))
    for f in os.listdir(log):
        os.unlink(log / f)
    run(rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(out)))
    redone = sorted(os.listdir(log))
    assert len(redone) == 2 and os.path.basename(inputs[3]) in redone
    assert_same_dataset(serial, out)


@requires_cuda
def test_gpu_actors_match_cpu(inputs, serial, tmp_path):
    import pyarrow.parquet as pq
    out = tmp_path / "husky"
    rr.convert(inputs, str(out), streams=STREAMS, fps=FPS, num_gpus_per_worker=0.5)
    a = pq.read_table(serial / "data/chunk-000/file-000.parquet")
    b = pq.read_table(out / "data/chunk-000/file-000.parquet")
    assert a.column_names == b.column_names and a.num_rows == b.num_rows
    for name in ("observation.imu", "observation.state", "action"):
        x = np.stack(a[name].to_numpy(zero_copy_only=False))
        y = np.stack(b[name].to_numpy(zero_copy_only=False))
        np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-6, err_msg=name)
