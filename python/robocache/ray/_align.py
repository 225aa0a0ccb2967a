"""Align: the callable class ray.data.Dataset.map_batches runs (as actors)
to convert recordings: read each one, align its episodes through
robocache.convert (the C core; on a GPU when the actor has one) and compute
their columns and per-episode statistics."""

import pickle

import numpy as np

from ..convert._convert import episodes
from ..convert._lerobot_writer import episode_part
from ._shards import StagedPart
from ._video import RecordingVideos


class Align:
    """map_batches(Align, fn_constructor_kwargs={"device": ...}, ...) over
    read_recordings rows. Each output row is one recording: its read_recordings
    columns plus `episodes` (bytes: the pickled pair (items, files): its
    converted episodes, StagedPart, and rejected-episode reports, in order;
    files {relative path: bytes} of the MP4s of its image features, encoded
    here by robocache.convert's LeRobot writer; see _video.RecordingVideos).

    device  "auto" (default): the GPU Ray gave this actor (num_gpus > 0),
            else the CPU backend; "cpu"; or a torch device string ("cuda:0").
            The CUDA context and robocache's are created here, once per actor.
    """

    def __init__(self, device="auto"):
        import robocache  # noqa: F401  (the C core, loaded once per actor)
        self.device = _device(device)
        if self.device is not None:
            import torch
            torch.zeros(1, device=self.device)  # creates the CUDA context now

    def __call__(self, batch):
        out = {k: list(v) for k, v in batch.items()}
        out["episodes"] = []
        for path, plan in zip(batch["path"], batch["plan"]):
            specs, fps, options = pickle.loads(plan)
            convs = episodes([str(path)], specs, fps, options, self.device)
            out["episodes"].append(pickle.dumps(_staged(convs, fps), protocol=5))
        return {k: np.array(v, dtype=object) if k in ("plan", "episodes") else np.array(v)
                for k, v in out.items()}


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
            p = episode_part(conv)
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
