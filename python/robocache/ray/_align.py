"""Align: the callable class ray.data.Dataset.map_batches runs (as actors)
to convert recordings: read each one, align its episodes through
robocache.convert (the C core; on a GPU when the actor has one) and compute
their columns and per-episode statistics."""

import pickle

import numpy as np

from ..convert._convert import episodes
from ..convert._errors import ConvertError
from ..convert._lerobot_writer import episode_part
from ._shards import StagedPart


class Align:
    """map_batches(Align, fn_constructor_kwargs={"device": ...}, ...) over
    read_recordings rows. Each output row is one recording: its read_recordings
    columns plus `episodes` (bytes: the pickled list of its converted episodes,
    StagedPart, and rejected-episode reports, in order).

    device  "auto" (default): the GPU Ray gave this actor (num_gpus > 0),
            else the CPU backend; "cpu"; or a torch device string ("cuda:0").
            The CUDA context and robocache's are created here, once per actor.
    Image features are refused (ConvertError): convert them without Ray.
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
            items = [_staged(c, path) for c in episodes([str(path)], specs, fps, options,
                                                        self.device)]
            out["episodes"].append(pickle.dumps(items, protocol=5))
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


def _staged(conv, path):
    if isinstance(conv, dict):
        return conv
    if any(f.kind == "image" for f in conv.features):
        raise ConvertError(f"{path}: image features are not converted on Ray yet; "
                           "run robocache convert without --ray")
    p = episode_part(conv)
    return StagedPart(report=conv.report, policies=conv.policies,
                      **{k: getattr(p, k) for k in p.__slots__})
