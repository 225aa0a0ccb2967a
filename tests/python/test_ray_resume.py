"""write_lerobot's merge journal (robocache.ray._resume): with data files
of 0.5 MiB (one Husky episode each) the merge journals each closed file and
removes the shards merged; a job that stops before its last shards leaves the
journal, and the rerun converts only the recordings neither journalled nor
in a complete shard, giving the serial dataset file for file. A journalled
file that fails its checksum, or a torn record, drops what it covers: those
recordings are converted again. Inputs: the real Husky recording as MCAP and
ROS 1 bag, and copies of both under other names."""

import os
import shutil
import sys

import pytest

ray = pytest.importorskip("ray")
rr = pytest.importorskip("robocache.ray")
from robocache.convert import OutputError, convert  # noqa: E402
from robocache.ray import _resume  # noqa: E402
from robocache.ray._read import load_shard_list  # noqa: E402

from ray_support import (FPS, HUSKY_BAG, HUSKY_MCAP, STREAMS,  # noqa: E402
                         assert_same_dataset, counting, local_ray)

DATA_MB = 0.5


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    local_ray(sys.modules[__name__])
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("recordings")
    out = [str(HUSKY_MCAP), str(HUSKY_BAG)]
    for i in range(3):
        src = (HUSKY_BAG, HUSKY_MCAP)[i % 2]
        dst = d / f"copy{i}{src.suffix}"
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
        out.append(str(dst))
    return out


@pytest.fixture(scope="module")
def serial(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("serial") / "husky"
    convert(inputs, str(out), to="lerobot", fps=FPS, streams=STREAMS,
            data_files_size_in_mb=DATA_MB)
    return out


Counting = counting()


def run(inputs, out, log, limit=None, **kwargs):
    """read_recordings -> Counting -> write_lerobot; the names converted."""
    for f in os.listdir(log):
        os.unlink(os.path.join(log, f))
    ds = rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(out))
    if limit is not None:
        ds = ds.limit(limit)
    ds = ds.map_batches(Counting, fn_constructor_kwargs={"log": str(log)}, batch_size=1,
                        batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=2))
    try:
        rr.write_lerobot(ds, str(out), data_files_size_in_mb=kwargs.get("data_mb", DATA_MB))
    finally:
        done = sorted(os.listdir(log))
    return done


def stopped(inputs, tmp_path):
    """A job that stopped before the shards of inputs[3:] were written."""
    out, log = tmp_path / "husky", tmp_path / "converted"
    log.mkdir()
    with pytest.raises(OSError, match="missing"):
        run(inputs, out, log, limit=3)
    return out, log, tmp_path / ".husky.shards"


def names(paths):
    return sorted(os.path.basename(p) for p in paths)


def test_rerun_resumes_the_journalled_merge(inputs, serial, tmp_path):
    out, log, stage = stopped(inputs, tmp_path)
    assert not out.exists()
    # Shards 1 and 2 each closed the data file before them: shards 0 and 1
    # are journalled and removed, shard 2 is complete, the merge's file-002
    # (shard 2's episode, after the last record) is not journalled.
    recs = _resume.records(stage)
    keys = [k for r in recs for k in r["keys"]]
    assert len(keys) == 2 and not any((stage / k).exists() for k in keys)
    assert len([d for d in os.listdir(stage) if len(d) == 16]) == 1
    files = {rel for r in recs for rel in r["files"]}
    assert files == {f"data/chunk-000/file-00{i}.parquet" for i in (0, 1)}
    assert (stage / "merge/data/chunk-000/file-002.parquet").exists()
    with open(stage / _resume.JOURNAL, "ab") as fh:  # a record torn by the interruption
        fh.write(b"\x10\x00\x00\x00\x00\x00\x00\x00torn")
    assert run(inputs, out, log) == names(inputs[3:])
    assert_same_dataset(serial, out)
    assert not stage.exists()


def test_damaged_journalled_file_is_converted_again(inputs, serial, tmp_path):
    out, log, stage = stopped(inputs, tmp_path)
    damaged = stage / "merge/data/chunk-000/file-001.parquet"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    # The journal is dropped: the journalled (removed) shards 0 and 1 are
    # converted again, shard 2 is complete.
    assert run(inputs, out, log) == names(inputs[:2] + inputs[3:])
    assert_same_dataset(serial, out)


def test_resume_with_other_data_file_size_is_refused(inputs, serial, tmp_path):
    out, log, stage = stopped(inputs, tmp_path)
    with pytest.raises(OutputError, match="data files of 0.5 MiB"):
        run(inputs, out, log, data_mb=1.0)
    assert not out.exists() and len(_resume.records(stage)) == 2
    assert run(inputs, out, log) == names(inputs[3:])
    assert_same_dataset(serial, out)


def test_failed_record_keeps_the_shards_and_no_output(inputs, tmp_path):
    # merge.journal made a folder once read_recordings has run: appending the
    # first record fails, the next record raises it, nothing is removed or
    # renamed; the rerun drops that folder and writes the serial dataset.
    out, log, stage = tmp_path / "husky", tmp_path / "converted", tmp_path / ".husky.shards"
    log.mkdir()
    ds = rr.read_recordings(inputs, streams=STREAMS, fps=FPS, output=str(out))
    (stage / _resume.JOURNAL).mkdir()
    ds = ds.map_batches(Counting, fn_constructor_kwargs={"log": str(log)}, batch_size=1,
                        batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=2))
    with pytest.raises(IsADirectoryError):
        rr.write_lerobot(ds, str(out), data_files_size_in_mb=DATA_MB)
    assert not out.exists()
    keys = load_shard_list(str(stage))[1]
    kept = [p for p, k in zip(inputs, keys) if (stage / k).is_dir()]
    assert inputs[:2] == kept[:2]  # the shards of the failed record are kept
    assert run(inputs, out, log) == names(p for p in inputs if p not in kept)
