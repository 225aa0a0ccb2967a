"""Align: the callable class ray.data.Dataset.map_batches runs (as actors)
to convert recordings: read each one, align its episodes through
robocache.convert (the C core; on a GPU when the actor has one), compute
their columns and per-episode statistics, and write them as the recording's
shard."""

import gc
import os
import pickle

import numpy as np

from ..convert._convert import episodes
from ..convert._lerobot_writer import episode_part
from . import _remote, _shards
from ._shards import StagedPart
from ._video import RecordingVideos

OUTPUT_COLUMNS = ("shard", "path", "key")


class Align:
    """map_batches(Align, fn_constructor_kwargs={"device": ...}, ...) (actors)
    or map_batches(Align("cpu"), ...) (tasks: the instance is pickled to
    Ray's worker processes) over read_recordings rows. Per row it converts
    the recording (a URL's first copied, file or folder tree, into a local
    temporary folder under its base name, removed once its shard is
    written: the worker's TMPDIR needs room for one recording; the reports
    name the URL) and writes its shard (its converted episodes,
    rejected-episode reports and the MP4s of its image features, encoded
    here by robocache.convert's LeRobot writer; see _shards and
    _video.RecordingVideos) into the row's staging folder;
    a shard already complete there (a retried task) is kept. Output: one row
    per recording, shard (int), path (str), key (str): nothing of the
    episodes goes through Ray's object store.

    device  "auto" (default): the GPU Ray gave this actor (num_gpus > 0),
            else the CPU backend; "cpu"; or a torch device string ("cuda:0").
            The CUDA context and robocache's are created here, once per actor.
            Tasks take "cpu" (a GPU needs the actor to keep its context).
    In an actor, __init__ ends with gc.freeze(): the objects of the imports
    (about 130k under the cyclic GC in a Ray worker, against 35k in a plain
    process converting the same recording) stay out of the collections the
    conversions trigger.
    """

    def __init__(self, device="auto"):
        import robocache  # noqa: F401  (the C core, loaded once per actor)
        self.device = _device(device)
        if self.device is not None:
            import torch
            torch.zeros(1, device=self.device)  # creates the CUDA context now
        _freeze_in_actor()

    def __call__(self, batch):
        for path, plan, root, key in zip(batch["path"], batch["plan"], batch["staging"],
                                         batch["key"]):
            root, key = str(root), str(key)
            if _shards.is_complete(os.path.join(root, key)):
                continue
            specs, fps, options = pickle.loads(plan)
            with _remote.local_copy(str(path)) as local:
                convs = episodes([local], specs, fps, options, self.device, names=[str(path)])
                _shards.write_shard(root, key, *_staged(convs, fps))
        return {k: np.array(list(batch[k])) for k in OUTPUT_COLUMNS}


def _freeze_in_actor():
    """gc.freeze() when this process is a Ray actor (an Align instance made
    for tasks is built in the driver, whose objects are left alone)."""
    import ray
    if ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None:
        gc.collect()
        gc.freeze()


def _device(device):
    if device == "cpu":
        return None
    if device != "auto":
        return device
    import ray
    if not ray.get_gpu_ids():
        return None
    return "cuda:0"  # Ray sets CUDA_VISIBLE_DEVICES to the GPU it assigned


def _staged(convs, fps):
    """(items, files) of one recording's converted episodes."""
    items, with_video, videos = [], [], None
    try:
        for conv in convs:
            if isinstance(conv, dict):
                items.append(conv)
                continue
            p = episode_part(conv, fps)
            items.append(StagedPart(report=conv.report, policies=conv.policies, videos={},
                                    **{k: getattr(p, k) for k in p.__slots__}))
            if any(f.kind == "image" for f in conv.features):
                videos = videos or RecordingVideos(fps)
                videos.add(conv)
                with_video.append(items[-1])
        if videos is None:
            return items, {}
        per_episode, files = videos.finish()
    except BaseException:
        if videos is not None:
            videos.close()
        raise
    for part, v in zip(with_video, per_episode):
        part.videos = v
    return items, files
