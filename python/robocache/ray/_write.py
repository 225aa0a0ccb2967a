"""write_lerobot: shards written by Ray workers, then one LeRobot v3.0 dataset
written from them on the driver by robocache.convert's own writer."""

import os
import pickle
import shutil

import numpy as np

from ..convert import _output
from ..convert._convert import write
from . import _shards
from ._read import load_shard_list
from ._video import StagedEpisode, VideoPlacer

_ROW_KEYS = ("shard", "num_shards", "path", "key", "plan")


def write_lerobot(ds, output, *, overwrite=False, robot_type=None, log=None):
    """Writes the rows of `ds` (read_recordings mapped by Align) as a LeRobot
    v3.0 dataset at `output`, the same dataset (every file byte for byte) as
    robocache.convert.convert of the same inputs in order; with image features
    the same frames and Parquet values, one MP4 file (or more) per recording.

    1. each Ray task writes the shard of its rows' recordings into the staging
       folder (`.NAME.shards/` beside output; a complete shard is kept);
    2. the driver writes the dataset from the shards, episode by episode, in
       input order, into a temporary folder renamed to `output` at the end
       (data files, meta/episodes, meta/stats.json merged from the per-episode
       statistics the workers computed, tasks, info; each shard's MP4 files
       placed as videos/<key>/chunk-CCC/file-FFF.mp4), then OUTPUT.sync.json,
       and removes the staging folder.
    Returns convert's sync report. Raises OutputError (output exists without
    overwrite, a shard missing), ConvertError (no episode converted; a
    recording's error from a worker), SpecError.
    """
    _output.check_target(output, overwrite)
    root = _shards.staging(output)
    rows = ds.map_batches(_write_shards, fn_kwargs={"root": root}, batch_format="numpy",
                          batch_size=1).take_all()
    paths, keys, plan = _shard_list(root, rows)
    specs, fps, options = pickle.loads(plan)
    items = (StagedEpisode(it) if getattr(it, "videos", None) else it
             for k in keys for it in _shards.read_shard(os.path.join(root, k)))
    report = write(items, output, to="lerobot", inputs=paths, fps=fps, options=options,
                   robot_type=robot_type, log=log, writer_class=VideoPlacer)
    shutil.rmtree(root, ignore_errors=True)
    return report


def _write_shards(batch, root):
    for key, payload in zip(batch["key"], batch["episodes"]):
        items, files = pickle.loads(payload)
        _shards.write_shard(root, str(key), items, files)
    return {k: np.array(list(batch[k]), dtype=object if k == "plan" else None)
            for k in _ROW_KEYS}


def _shard_list(root, rows):
    """(paths, keys, plan) of the whole dataset in input order."""
    saved = load_shard_list(root)
    if saved is not None and {r["key"] for r in rows} <= set(saved[1]):
        return saved
    if not rows:
        raise _output.OutputError(f"{root}: no shard was written and no shard list is "
                                  "saved there (read_recordings(..., output=...))")
    rows = sorted(rows, key=lambda r: int(r["shard"]))
    n = int(rows[0]["num_shards"])
    have = [int(r["shard"]) for r in rows]
    if have != list(range(n)):
        missing = sorted(set(range(n)) - set(have))
        raise _output.OutputError(f"{root}: shards {missing} of {n} were not written")
    return [str(r["path"]) for r in rows], [str(r["key"]) for r in rows], rows[0]["plan"]
