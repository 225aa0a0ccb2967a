"""write_lerobot: the shards Align actors write, merged into one LeRobot v3.0
dataset on the driver by robocache.convert's own writer while the actors are
still converting."""

import os
import pickle
import shutil
from concurrent import futures

from ..convert import _output
from ..convert._convert import write
from . import _shards
from ._read import load_shard_list
from ._merge import MergeWriter


def write_lerobot(ds, output, *, overwrite=False, robot_type=None, log=None):
    """Runs `ds` (read_recordings(..., output=output) mapped by Align) and
    writes the LeRobot v3.0 dataset at `output`: the same dataset (every file
    byte for byte) as robocache.convert.convert of the same inputs in order;
    with image features the same frames and Parquet values, one MP4 file (or
    more) per recording.

    The driver writes the dataset from the shards episode by episode, in input
    order, into a temporary folder renamed to `output` at the end (data files,
    meta/episodes, meta/stats.json merged from the per-episode statistics the
    workers computed, tasks, info; each shard's MP4 files placed as
    videos/<key>/chunk-CCC/file-FFF.mp4; Parquet writes overlap the reading
    of the next shard, _merge.MergeWriter), then OUTPUT.sync.json while
    the staging folder is removed. It takes shard i as soon as the rows of
    shards 0..i have come out of `ds` (ds.iter_rows: rows arrive as actors
    finish), so the merge runs while later recordings are converted.
    Returns convert's sync report. Raises OutputError (output exists without
    overwrite, no shard list, a shard missing or damaged), ConvertError (no
    episode converted; a recording's error from a worker), SpecError.
    """
    _output.check_target(output, overwrite)
    root = _shards.staging(output)
    saved = load_shard_list(root)
    if saved is None:
        raise _output.OutputError(f"{root}: no shard list there; make `ds` with "
                                  f"read_recordings(..., output={output!r})")
    paths, keys, todo, plan = saved
    specs, fps, options = pickle.loads(plan)
    with futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1)) as pool:
        report = write(_in_order(ds, root, keys, todo), output, to="lerobot", inputs=paths,
                       fps=fps, options=options, robot_type=robot_type, log=log,
                       writer_class=MergeWriter, committed=lambda: _remove_shards(root, pool))
    shutil.rmtree(root, ignore_errors=True)  # (the pool's exit waited for the shards' removal)
    return report


def _remove_shards(root, pool):
    """Starts removing the staging folder's shard folders on `pool`'s threads:
    one thread unlinking a few GB of shards takes seconds (the kernel frees
    their pages and blocks), while the cores that converted them are idle."""
    try:
        shards = [e.path for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for path in shards:
        pool.submit(shutil.rmtree, path, ignore_errors=True)


def _in_order(ds, root, keys, todo):
    """The items of the shards `keys` in order, each shard once the row of
    every shard in `todo` up to it has come out of ds (the others were
    complete before ds ran); read_shard raises OutputError for one that ds
    ended without writing."""
    waiting = set(todo)
    rows = iter(ds.iter_rows())
    for key in keys:
        while key in waiting:
            row = next(rows, None)
            if row is None:
                break
            waiting.discard(str(row["key"]))
        yield from _shards.read_shard(os.path.join(root, key))
    for _ in rows:  # runs ds to its end (a row of a shard not listed: nothing to merge)
        pass
