"""Image keys: which frames a batch needs, decoded ahead of the training step.

The frame of each window target is chosen on the host by robocache.align on
the image stream's frame times (the same timeline and options as the
low-dimensional keys, so the same choice as on the device), then each
episode's frames are decoded in ONE call of the decoder (_decoders: the
reader's Series.frames, PyAV for video files, or torchcodec on the host or by
NVDEC). The loader plans and decodes batches in background threads
(_prefetch.Prefetch) ahead of the one the training loop asks for, into pinned
host memory when the device is a GPU (or into device memory when NVDEC
decodes); the loop then only starts an asynchronous copy.
"""

import threading

import numpy as np
import torch

import robocache


class ImagePlan:
    """The image keys of a Timeline: load(idx) -> {key: uint8 [B, W, H, W, C],
    f"{key}_is_pad": bool [B, W]} on the decoder's device (the host: pinned
    when `pin`)."""

    def __init__(self, timeline, max_gap_ns, pin, decoder):
        self.timeline = timeline
        self.pin = pin and decoder.device.type == "cpu"
        self.decoder = decoder
        self.keys = []
        for d in timeline.images:
            spec = d.spec
            for series in d.series:
                decoder.check(spec.key, series)
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
                images = self.decoder.frames(series, wanted)
            shape = tuple(images.shape)
            if images.dim() != 4 or shape[0] != wanted.size or images.dtype != torch.uint8:
                raise ValueError(f"key {key!r}: episode {self.timeline.episode_index[p]}: "
                                 f"{self.decoder.name} gave {images.dtype} {shape} for "
                                 f"{wanted.size} frames; expected uint8 [n, H, W, C]")
            if out is None:
                out = torch.empty((B, W) + shape[1:], dtype=torch.uint8,
                                  device=images.device, pin_memory=self.pin)
            elif shape[1:] != tuple(out.shape[2:]):
                raise ValueError(f"key {key!r}: episode {self.timeline.episode_index[p]}: "
                                 f"frames of shape {shape[1:]}, {tuple(out.shape[2:])} in "
                                 "another episode of the batch")
            pick = torch.from_numpy(where.reshape(rows.size, W)).to(images.device)
            out[torch.from_numpy(rows).to(images.device)] = images[pick]
        if out.is_cuda:
            torch.cuda.current_stream(out.device).synchronize()  # decoded before handed out
        return out


def to_device(batch, device):
    """Image tensors -> device; images [B, W, H, W, C] become channel-first
    [B, W, C, H, W] (LeRobot's layout) on the device, [B, C, H, W] for a
    one-frame window (LeRobot drops that window axis of video frames). A tensor already on the
    CUDA device (NVDEC) is marked as read by the caller's stream, so that its
    memory is reused only once that stream is done with it."""
    out = {}
    for k, v in batch.items():
        if v.is_cuda:
            v.record_stream(torch.cuda.current_stream(v.device))
        v = v.to(device, non_blocking=True)
        if v.dim() == 5:
            v = v.permute(0, 1, 4, 2, 3)
            v = (v[:, 0] if v.shape[1] == 1 else v).contiguous()
        out[k] = v
    return out
