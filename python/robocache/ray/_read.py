"""read_recordings: the recordings to convert as a ray.data.Dataset, one row
(one shard, one unit of work) per input."""

import base64
import json
import os
import pickle
from concurrent import futures

from ..convert._convert import plan
from . import _remote, _resume, _shards
from ._deps import ray_data

THREADS = 16  # URL inputs checked, or listed for their shard keys, at once (round trips)


def read_recordings(paths, *, streams, output, fps=None, reference=None, span="overlap",
                    invalid="trim", split_gap=None, split_by=None, task=None, order="error",
                    recordings_per_block=1):
    """A ray.data.Dataset with one row per recording still to convert, in
    input order: shard (int, its place in the input order), path (str: the
    input), key (str, 16 hex digits: input files' names, sizes, mtimes and
    the plan), plan (bytes: the checked streams, fps and options of
    robocache.convert.convert, whose arguments these are), staging (str: the
    folder Align writes the shard into). Map it with robocache.ray.Align, then
    write_lerobot(ds, output).

    paths   recordings (files or folders): paths every Ray node reads at the
            same path, or URLs pyarrow.fs.FileSystem.from_uri opens
            (s3://bucket/run.mcap, gs://..., hdfs://..., file://..., with
            pyarrow's query options, e.g. ?endpoint_override=host:9000), each
            one recording as a path would be; a URL whose last component
            holds a glob (`*`, `[...]`: s3://bucket/bags/*.bag) stands for the
            entries of its folder that match, in sorted order. A URL's key
            hashes the URL and the name, size and mtime pyarrow.fs lists of
            each file under it; the workers copy it to a local temporary
            folder to convert it (docs/ray.md)
    output  the dataset folder write_lerobot will write. Its staging folder
            (`.NAME.shards/` beside it) gets the full shard list; recordings
            whose shard is already complete there (checksums verified), or
            that an interrupted merge's journal holds (see _resume), are left
            out, so a rerun after an interruption converts only the rest.
    recordings_per_block  rows per block of the dataset (the driver puts each
            block into Ray's object store, a few ms each): map_batches'
            batch_size, or a divisor of it, keeps its tasks that size
    Raises SpecError (bad arguments), FileNotFoundError (a path that is not a
    file or folder here, a URL with nothing there, a glob matching nothing),
    ValueError (a URL pyarrow.fs does not open, recordings_per_block < 1),
    OSError (pyarrow's, the URL in front: credentials, network), ImportError
    naming robocache[ray].
    """
    if int(recordings_per_block) < 1:
        raise ValueError(f"recordings_per_block must be >= 1, got {recordings_per_block}")
    rows = recording_rows(check_inputs(paths), streams=streams, output=output, fps=fps,
                          reference=reference, span=span, invalid=invalid, split_gap=split_gap,
                          split_by=split_by, task=task, order=order)
    return dataset(rows, recordings_per_block)


def dataset(rows, recordings_per_block, last_singles=0):
    """ray.data.from_items(rows) in blocks of recordings_per_block rows, the
    last `last_singles` rows (at most all) one per block, after the others
    (a union of two from_items: Ray Data runs the first one's blocks first)."""
    data = ray_data()

    def blocks(part, per_block):
        return data.from_items(part, override_num_blocks=max(1, -(-len(part) // per_block)))

    split = max(0, len(rows) - int(last_singles))
    if split == len(rows):
        return blocks(rows, int(recordings_per_block))
    if split == 0:
        return blocks(rows, 1)
    return blocks(rows[:split], int(recordings_per_block)).union(blocks(rows[split:], 1))


def check_inputs(paths):
    """The inputs to convert, in order (str): each path here as given (a
    FileNotFoundError names the first that is not a file or folder), each
    URL checked and expanded (_remote.expand: FileNotFoundError naming one
    that is not there, ValueError for one pyarrow.fs does not open, OSError
    with pyarrow's text, e.g. credentials)."""
    def one(p):
        if _remote.is_url(p):
            return _remote.expand(p)
        if os.path.exists(p):
            return [p]
        raise FileNotFoundError(f"{p}: no such file or directory")

    return [q for found in _each(one, [str(p) for p in paths]) for q in found]


def _each(fn, paths):
    """[fn(p) for p in paths], on THREADS threads when a path is a URL (network
    round trips; local paths: os.stat, faster without threads)."""
    if not any(_remote.is_url(p) for p in paths):
        return [fn(p) for p in paths]
    with futures.ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(fn, paths))


def recording_rows(paths, *, streams, output, fps, reference, span, invalid, split_gap,
                   split_by, task, order):
    """read_recordings' rows (a list), its shard list saved (the inputs
    checked and expanded by the caller: check_inputs; a URL's first recording
    is copied here when plan reads it for the reference stream's rate)."""
    ray_data()
    paths = [str(p) for p in paths]
    specs, fps, options = plan(paths, to="lerobot", streams=streams, fps=fps,
                               reference=reference, span=span, invalid=invalid,
                               split_gap=split_gap, split_by=split_by, task=task, order=order,
                               local_copy=_remote.local_copy)
    plan_bytes = pickle.dumps((specs, fps, options))
    plan_text = repr((specs, fps, sorted(options.items())))
    keys = _each(lambda p: _shards.shard_key(p, plan_text), paths)
    root = _shards.staging(output)
    os.makedirs(root, exist_ok=True)
    merged = _resume.resume(root, keys)
    rows = [{"shard": i, "path": p, "key": k, "plan": plan_bytes, "staging": root}
            for i, (p, k) in enumerate(zip(paths, keys))
            if i >= merged and not _shards.is_complete(os.path.join(root, k))]
    _save_shard_list(root, paths, keys, [r["key"] for r in rows], plan_bytes, merged)
    return rows


def _save_shard_list(root, paths, keys, todo, plan_bytes, merged):
    tmp = os.path.join(root, "shards.json.tmp")
    with open(tmp, "w") as fh:
        json.dump({"paths": paths, "keys": keys, "todo": todo, "merged": merged,
                   "plan": base64.b64encode(plan_bytes).decode()}, fh)
    os.replace(tmp, os.path.join(root, "shards.json"))


def load_shard_list(root):
    """(paths, keys, todo: the keys of the rows read_recordings returned,
    plan bytes, merged: how many shards the merge's journal holds) saved by
    read_recordings, or None."""
    try:
        with open(os.path.join(root, "shards.json")) as fh:
            d = json.load(fh)
        return d["paths"], d["keys"], d["todo"], base64.b64decode(d["plan"]), d["merged"]
    except (OSError, ValueError, KeyError):
        return None
