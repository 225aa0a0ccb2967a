"""Image keys: which frames a batch needs, decoded ahead of the training step.

The frame of each window target is chosen on the host by robocache.align on
the image stream's frame times (the same timeline and options as the
low-dimensional keys, so the same choice as on the device), then each
episode's frames are decoded in ONE Series.frames(indices) call (PyAV or the
reader's decoder underneath). The loader plans and decodes batches in
background threads (_prefetch.Prefetch) ahead of the one the training loop
asks for, into pinned host memory when the device is a GPU; the loop then
only starts an asynchronous copy.
"""

import threading

import numpy as np
import torch

import robocache


class ImagePlan:
    """The image keys of a Timeline: load(idx) -> {key: uint8 [B, W, C, H, W],
    f"{key}_is_pad": bool [B, W]} on the host (pinned when `pin`)."""

    def __init__(self, timeline, max_gap_ns, pin):
        self.timeline = timeline
        self.pin = pin
        self.keys = []
        for d in timeline.images:
            spec = d.spec
            gap = max_gap_ns if spec.max_gap_ns is None else min(spec.max_gap_ns, max_gap_ns)
            cut = d.rows(0, d.starts.size - 1)
            stream = robocache.Stream(d.values[cut], d.times[cut], name=d.name, method=spec.method,
                                      max_gap=gap, tolerance=spec.tolerance_ns,
                                      time_offset=spec.time_offset_ns)
            self.keys.append((spec, d, stream, np.asarray(spec.offsets_ns, dtype=np.int64)))
        self._locks = {}
        self._guard = threading.Lock()

    def _lock(self, series):
        """One lock per video file: a reader's decoder need not be thread-safe."""
        name = series.meta.get("video_file", id(series))
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def load(self, idx):
        idx = np.asarray(idx, dtype=np.int64)
        t = self.timeline.sample_time[idx]
        episode = self.timeline.sample_episode[idx]
        batch = {}
        for spec, d, stream, offsets in self.keys:
            B, W = idx.size, offsets.size
            targets = (t[:, None] + offsets[None, :]).reshape(-1)
            frame, valid = robocache.align([stream], targets, out_dtype="float64")
            frame = frame.reshape(B, W).astype(np.int64)
            batch[f"{spec.key}_is_pad"] = torch.from_numpy(~valid.reshape(B, W))
            batch[spec.key] = self._decode(spec.key, d, episode, frame)
        return batch

    def _decode(self, key, d, episode, frame):
        B, W = frame.shape
        out = None
        for p in np.unique(episode):
            rows = np.flatnonzero(episode == p)
            wanted, where = np.unique(frame[rows], return_inverse=True)
            series = d.series[p]
            with self._lock(series):
                images = np.asarray(series.frames(wanted))
            if images.ndim != 4 or images.shape[0] != wanted.size or images.dtype != np.uint8:
                raise ValueError(f"key {key!r}: episode {self.timeline.episode_index[p]}: "
                                 f"frames() gave {images.dtype} {images.shape} for "
                                 f"{wanted.size} frames; expected uint8 [n, H, W, C]")
            if out is None:
                out = torch.empty((B, W) + images.shape[1:], dtype=torch.uint8,
                                  pin_memory=self.pin)
                host = out.numpy()
            elif images.shape[1:] != host.shape[2:]:
                raise ValueError(f"key {key!r}: episode {self.timeline.episode_index[p]}: "
                                 f"frames of shape {images.shape[1:]}, {host.shape[2:]} in "
                                 "another episode of the batch")
            host[rows] = images[where.reshape(rows.size, W)]
        return out


def to_device(batch, device):
    """Host image tensors -> device; images [B, W, H, W, C] become channel-first
    [B, W, C, H, W] (LeRobot's layout) on the device."""
    out = {}
    for k, v in batch.items():
        v = v.to(device, non_blocking=True)
        out[k] = v.permute(0, 1, 4, 2, 3).contiguous() if v.dim() == 5 else v
    return out
