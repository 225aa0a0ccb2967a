"""robocache.ray against robocache.convert: the same recordings converted
serially and on a local Ray (2 CPUs) give the same LeRobot v3.0 dataset, file
for file, also after a worker dies mid-shard (Ray's retry), when a job that
stopped before its last shard is rerun (completed shards skipped) and when the
shards are written out of input order (the merge streams them in order); the
merge's writer rotates data files as the serial one. Inputs: the
real Husky recording as MCAP and as ROS 1 bag, plus two copies of it written
here with rosbags, cut to a part of the drive and shifted in time."""

import gc
import json
import os
import sys
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
rr = pytest.importorskip("robocache.ray")
from robocache.convert import convert  # noqa: E402

from ray_support import (FPS, HUSKY_BAG, HUSKY_MCAP, ODOM, STREAMS,  # noqa: E402
                         assert_same_dataset, counting, local_ray)


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    local_ray(sys.modules[__name__])
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


def test_ray_equals_serial(inputs, serial, tmp_path):
    out = tmp_path / "husky"
    rr.convert(inputs, str(out), streams=STREAMS, fps=FPS, num_workers=2)
    assert_same_dataset(serial, out)
    info = json.loads((out / "meta/info.json").read_text())
    assert info["total_episodes"] == 4  # one per recording, none merged or lost
    assert not os.path.exists(f"{out.parent}/.husky.shards")


def test_several_recordings_per_task_equal_serial(inputs, serial, tmp_path):
    out = tmp_path / "husky"
    rr.convert(inputs, str(out), streams=STREAMS, fps=FPS, num_workers=1, recordings_per_task=3)
    assert_same_dataset(serial, out)
    with pytest.raises(ValueError, match="recordings_per_task must be >= 1, got 0"):
        rr.convert(inputs, str(tmp_path / "other"), streams=STREAMS, fps=FPS,
                   recordings_per_task=0)
    assert not os.path.exists(tmp_path / "other")


def test_read_recordings_blocks(inputs, tmp_path):
    # recordings_per_block rows in each block Ray's object store gets, rows in input order
    out = str(tmp_path / "husky")
    for per_block, blocks in ((1, 4), (3, 2), (4, 1), (9, 1)):
        ds = rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=out,
                                recordings_per_block=per_block)
        assert ds.num_blocks() == blocks
        assert [(r["shard"], r["path"]) for r in ds.take_all()] == list(enumerate(inputs))
    with pytest.raises(ValueError, match="recordings_per_block must be >= 1, got 0"):
        rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(tmp_path / "other"),
                           recordings_per_block=0)
    with pytest.raises(FileNotFoundError, match="^file:///no/r.mcap: no such file or directory$"):
        rr.read_recordings([inputs[0], "file:///no/r.mcap"], streams=STREAMS, fps=FPS,
                           output=str(tmp_path / "other"))
    assert not os.path.exists(tmp_path / ".other.shards")


def test_last_recordings_one_per_block():
    # rr.convert's tail: the last rows one per block (one per task with batch_size=None)
    from robocache.ray._read import dataset
    rows = [{"i": i} for i in range(10)]

    def tasks(ds):
        out = ds.map_batches(lambda b: {"first": b["i"][:1], "n": [len(b["i"])]},
                             batch_size=None, batch_format="numpy").take_all()
        return sorted((int(r["first"]), int(r["n"])) for r in out)

    assert tasks(dataset(rows, 3, 4)) == [(0, 3), (3, 3), (6, 1), (7, 1), (8, 1), (9, 1)]
    assert tasks(dataset(rows, 3, 0)) == [(0, 3), (3, 3), (6, 2), (8, 2)]
    assert tasks(dataset(rows, 3, 12)) == [(i, 1) for i in range(10)]
    assert sorted(r["i"] for r in dataset(rows, 4, 3).take_all()) == list(range(10))


def test_gpu_workers_pass_ray_datas_checks(inputs, tmp_path, monkeypatch):
    # rr.convert's dataset with GPU actors and the single-recording tail is one Ray Data
    # accepts (it runs on a GPU in test_cuda_ray); stopped before it runs, as this has no GPU
    import robocache.ray._convert as rc
    made = []
    monkeypatch.setattr(rc, "write_lerobot", lambda ds, output, **kw: made.append(ds))
    rr.convert(inputs, str(tmp_path / "gpu"), streams=STREAMS, fps=FPS, num_workers=2,
               recordings_per_task=2, num_gpus_per_worker=0.5)
    assert len(made) == 1 and isinstance(made[0], ray.data.Dataset)


def test_actors_freeze_their_imports(inputs, tmp_path):
    # Align's actors move their imports' objects out of the cyclic GC; the driver's stay
    class FreezeCount(rr.Align):
        def __call__(self, batch):
            out = super().__call__(batch)
            out["frozen"] = np.full(len(out["key"]), gc.get_freeze_count())
            return out

    before = gc.get_freeze_count()
    ds = rr.read_recordings(inputs[:1], streams=STREAMS, fps=FPS, output=str(tmp_path / "h"))
    actors = ds.map_batches(FreezeCount, batch_size=1, batch_format="numpy",
                            compute=ray.data.ActorPoolStrategy(size=1)).take_all()
    assert [r["frozen"] > 10_000 for r in actors] == [True]
    ds = rr.read_recordings(inputs[:1], streams=STREAMS, fps=FPS, output=str(tmp_path / "t"))
    tasks = ds.map_batches(FreezeCount("cpu"), batch_size=1, batch_format="numpy").take_all()
    assert gc.get_freeze_count() == before
    assert len(tasks) == 1


def test_default_recordings_per_task():
    # about 50 tasks per worker, at least one recording per task
    from robocache.ray._convert import default_per_task
    assert default_per_task(4800, 16) == 6 and default_per_task(6400, 16) == 8
    assert default_per_task(76_000, 16) == 95
    assert default_per_task(799, 16) == 1 and default_per_task(800, 16) == 1
    assert default_per_task(1600, 16) == 2 and default_per_task(3, 0) == 1


@pytest.mark.parametrize("manifest", ['{"sha256": []}', '{"sha256": {"x": 1}}', '[]', '{'])
def test_damaged_manifest_is_an_incomplete_shard(tmp_path, manifest):
    from robocache.ray import _shards
    from robocache.convert._errors import OutputError
    (tmp_path / "manifest.json").write_text(manifest)
    assert not _shards.is_complete(str(tmp_path))
    with pytest.raises(OutputError, match="shard missing or its checksums do not match"):
        _shards.read_shard(str(tmp_path))


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


@pytest.mark.parametrize("workers", ["actors", "tasks"])
def test_worker_killed_mid_shard_is_retried(inputs, serial, tmp_path, workers):
    # Ray retries the task of a dead actor (restarted) or of a dead worker
    # process (tasks: an Align("cpu") instance, as docs/ray.md shows).
    out = tmp_path / "husky"
    flag = tmp_path / "crashed"
    kwargs = {"victim": inputs[2], "flag": str(flag)}
    fn, args = ((CrashOnce, {"fn_constructor_kwargs": kwargs,
                             "compute": ray.data.ActorPoolStrategy(size=2)})
                if workers == "actors" else
                (CrashOnce(**kwargs), {"compute": ray.data.TaskPoolStrategy(size=2)}))
    ds = rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(out))
    ds = ds.map_batches(fn, batch_size=1, batch_format="numpy", **args)
    rr.write_lerobot(ds, str(out))
    assert flag.exists()
    assert_same_dataset(serial, out)


Counting = counting()


def test_rerun_skips_completed_shards(inputs, serial, tmp_path):
    out = tmp_path / "husky"
    log = tmp_path / "converted"
    log.mkdir()
    stage = tmp_path / ".husky.shards"

    def run(ds):
        ds = ds.map_batches(Counting, fn_constructor_kwargs={"log": str(log)}, batch_size=1,
                            batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=2))
        return rr.write_lerobot(ds, str(out))

    # A job that stopped before the shard of inputs[3] was written: no dataset.
    ds = rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(out))
    with pytest.raises(OSError, match="missing"):
        run(ds.limit(3))
    assert not out.exists() and sorted(os.listdir(log)) == sorted(
        os.path.basename(p) for p in inputs[:3])
    shards = [d for d in os.listdir(stage) if len(d) == 16]
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


class LastFirst(rr.Align):
    """Converts `first` only once every other recording's shard is in the
    staging folder (or after 60 s), so its row comes out of the dataset last."""

    def __init__(self, first, others, flag):
        super().__init__("cpu")
        self.first, self.others, self.flag = first, others, flag

    def __call__(self, batch):
        if self.first in list(batch["path"]):
            stage = str(batch["staging"][0])
            for _ in range(600):
                if sum(len(d) == 16 for d in os.listdir(stage)) == self.others:
                    open(self.flag, "w").close()
                    break
                time.sleep(0.1)
        return super().__call__(batch)


def test_merge_waits_for_shards_in_input_order(inputs, serial, tmp_path):
    # The merge takes shard i once shards 0..i are written: rows arriving out
    # of input order (the first recording's last) still give the serial dataset.
    out = tmp_path / "husky"
    flag = tmp_path / "first_was_last"
    ds = rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(out))
    ds = ds.map_batches(LastFirst, fn_constructor_kwargs={
        "first": inputs[0], "others": len(inputs) - 1, "flag": str(flag)},
        batch_size=1, batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=2, max_tasks_in_flight_per_actor=1))
    rr.write_lerobot(ds, str(out))
    assert flag.exists()
    assert_same_dataset(serial, out)


def test_merge_writer_rotates_data_files_as_serial(inputs, tmp_path):
    # MergeWriter writes Parquet on a background thread: with data files of
    # 0.5 MiB (several per dataset) its files equal LeRobotWriter's.
    from robocache.convert._convert import episodes, plan, write
    from robocache.ray._merge import MergeWriter
    convert(inputs, str(tmp_path / "serial"), to="lerobot", fps=FPS, streams=STREAMS,
            data_files_size_in_mb=0.5)
    specs, fps, options = plan(inputs, to="lerobot", streams=STREAMS, fps=FPS)
    write(episodes(inputs, specs, fps, options), str(tmp_path / "merged"), to="lerobot",
          inputs=inputs, fps=fps, options=options, writer_class=MergeWriter,
          sizes={"data_files_size_in_mb": 0.5})
    assert len(os.listdir(tmp_path / "merged/data/chunk-000")) > 2
    assert_same_dataset(tmp_path / "serial", tmp_path / "merged")
