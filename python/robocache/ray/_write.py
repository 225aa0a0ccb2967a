"""write_lerobot: the shards Align actors write, merged into one LeRobot v3.0
dataset on the driver by robocache.convert's own writer while the actors are
still converting."""

import os
import pickle
import shutil
from concurrent import futures

from ..convert import _output
from ..convert._convert import _file_sizes, write
from ..convert._lerobot_writer import DATA_MB
from . import _resume, _shards
from ._read import load_shard_list
from ._merge import MergeWriter


def write_lerobot(ds, output, *, overwrite=False, robot_type=None, data_files_size_in_mb=None,
                  log=None):
    """Runs `ds` (read_recordings(..., output=output) mapped by Align) and
    writes the LeRobot v3.0 dataset at `output`: the same dataset (every file
    byte for byte) as robocache.convert.convert of the same inputs in order,
    with the same data_files_size_in_mb (MiB of Parquet after which a data
    file takes no more episodes; default LeRobot's 100, or the interrupted
    merge's being resumed); with image features the same frames and Parquet
    values, one MP4 file (or more) per recording.

    The driver writes the dataset from the shards episode by episode, in input
    order, into the staging folder's `merge/`, renamed to `output` at the end
    (data files, meta/episodes, meta/stats.json merged from the per-episode
    statistics the workers computed, tasks, info; each shard's MP4 files
    placed as videos/<key>/chunk-CCC/file-FFF.mp4; Parquet writes overlap the
    reading of the next shard, _merge.MergeWriter), then OUTPUT.sync.json while
    the staging folder is removed. It takes shard i as soon as the rows of
    shards 0..i have come out of `ds` (ds.iter_rows: rows arrive as actors
    finish), so the merge runs while later recordings are converted. Each
    data file closed at the start of a recording's episodes is journalled
    (_resume) and the shards merged into the files before it are removed, so
    the staging folder holds the shards not merged yet, and a rerun after an
    interruption resumes the merge there.
    Returns convert's sync report. Raises OutputError (output exists without
    overwrite, no shard list, a shard missing or damaged, a resumed merge's
    data_files_size_in_mb differs), ConvertError (no episode converted; a
    recording's error from a worker), SpecError (data_files_size_in_mb not
    positive).
    """
    _output.check_target(output, overwrite)
    root = _shards.staging(output)
    saved = load_shard_list(root)
    if saved is None:
        raise _output.OutputError(f"{root}: no shard list there; make `ds` with "
                                  f"read_recordings(..., output={output!r})")
    paths, keys, todo, plan, merged = saved
    specs, fps, options = pickle.loads(plan)
    with futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
        def remove(shards):
            for key in shards:
                pool.submit(shutil.rmtree, os.path.join(root, key), ignore_errors=True)

        recs = _resumed(root, merged)
        state = _merge_state(root, output, fps, robot_type, data_files_size_in_mb, recs)
        journal = _resume.Journal(root, keys, recs, state, remove)
        state["writer"].rotated = journal.rotated
        try:
            report = write(_in_order(ds, root, keys[merged:], todo, journal, merged), output,
                           to="lerobot", inputs=paths, fps=fps, options=options, log=log,
                           state=state, committed=lambda: remove(_shard_folders(root)))
        finally:
            journal.close()
    shutil.rmtree(root, ignore_errors=True)  # (the pool's exit waited for the shards' removal)
    return report


def _resumed(root, merged):
    """The journal's records of its first `merged` shards (read_recordings'
    count); OutputError when it holds another number."""
    recs, taken = [], 0
    for rec in _resume.records(root):
        if taken == merged:
            break
        recs.append(rec)
        taken += len(rec["keys"])
    if taken != merged:
        raise _output.OutputError(f"{root}: the merge journal holds {taken} shards, the shard "
                                  f"list {merged}; run read_recordings again")
    return recs


def _merge_state(root, output, fps, robot_type, data_mb, recs):
    """write()'s state for the merge: a MergeWriter on the merge folder with
    the journal's records `recs` taken back."""
    _file_sizes("lerobot", data_mb, None)
    if recs and data_mb is not None and data_mb != recs[0]["data_mb"]:
        raise _output.OutputError(
            f"{root}: the merge being resumed writes data files of {recs[0]['data_mb']} MiB, "
            f"not {data_mb}; pass data_files_size_in_mb={recs[0]['data_mb']} or remove {root}")
    data_mb = recs[0]["data_mb"] if recs else data_mb or DATA_MB
    tmp = _resume.folder(root)
    os.makedirs(tmp, exist_ok=True)
    writer = MergeWriter(tmp, fps, robot_type, data_files_size_in_mb=data_mb)
    writer.restore([r["writer"] for r in recs])
    report = {"output": output, "to": "lerobot", "fps": fps,
              "episodes": [e for r in recs for e in r["episodes"]],
              "rejected": [e for r in recs for e in r["rejected"]]}
    return {"tmp": tmp, "writer": writer, "report": report,
            "policies": recs[-1]["policies"] if recs else None}


def _shard_folders(root):
    """The shard folders left in the staging folder (none if it is gone;
    called once the merge folder is renamed into place)."""
    try:
        return [e.name for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _in_order(ds, root, keys, todo, journal, first):
    """The items of the shards `keys` (shards first, first + 1, ... of the
    input order) in order, each shard once the row of every shard in `todo`
    up to it has come out of ds (the others were complete before ds ran);
    journal.at is the shard's index while its first item is written; the
    journal's last record is waited for after the last item.
    read_shard raises OutputError for one that ds ended without writing."""
    waiting = set(todo)
    rows = iter(ds.iter_rows())
    for i, key in enumerate(keys, first):
        while key in waiting:
            row = next(rows, None)
            if row is None:
                break
            waiting.discard(str(row["key"]))
        items = _shards.read_shard(os.path.join(root, key))
        for j, item in enumerate(items):
            journal.at = i if j == 0 else None
            yield item
        journal.at = None
    for _ in rows:  # runs ds to its end (a row of a shard not listed: nothing to merge)
        pass
    journal.wait()  # before the merge folder is renamed into place
