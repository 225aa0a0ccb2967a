"""Image keys: which frames a batch needs, decoded ahead of the training step.

The frame of each window target is chosen on the host by robocache.align on
the image stream's frame times (the same timeline and options as the
low-dimensional keys, so the same choice as on the device). The frames of a
video file (LeRobot MP4s pack many episodes) are gathered over the batch's
episodes and cut between groups of pictures into up to `threads` runs
(VideoFile.split), each decoded in ONE call, on one of the plan's decode
threads, by that thread's own container or decoder (_decoders: PyAV, or
torchcodec on the host or by NVDEC); the frames of other image streams are
decoded in one call of the reader's Series.frames per episode. The loader
plans and decodes batches in background threads (_prefetch.Prefetch) ahead of
the one the training loop asks for, into pinned host memory when the device is
a GPU (or into device memory when NVDEC decodes); the loop then only starts an
asynchronous copy. With decode workers (_workers) the parent chooses the frames
(choose: robocache.align, whose OpenMP threads a forked process must not use)
and worker processes decode them (decode) into shared memory.
"""

import copy
import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

import robocache


class ImagePlan:
    """The image keys of a Timeline: load(idx) -> {key: uint8 [B, W, H, W, C],
    f"{key}_is_pad": bool [B, W]} on the decoder's device (the host: pinned
    when `pin`), frames decoded on up to `threads` threads."""

    def __init__(self, timeline, max_gap_ns, pin, decoder, threads=1):
        self.timeline = timeline
        self.threads = max(1, int(threads))
        self.pin = pin and decoder.device.type == "cpu"
        self.shared = False
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
        self._pool = None

    def _threads(self):
        """The plan's decode threads, where every decode runs, started at the first batch and
        kept: a thread keeps its open decoders (NVDEC decoders are used only by the thread
        that opened them, so decoding on the loader's prefetch threads, new at every
        iteration, would open new ones)."""
        with self._guard:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="robocache-decode")
            return self._pool

    def close(self):
        """Stops the decode threads and waits for them; the next batch starts new ones."""
        with self._guard:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _lock(self, name):
        """One lock per series (a reader's decoder need not be thread-safe)."""
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def for_worker(self):
        """A copy for a decode worker process (_workers): its own decoder, so that no
        container or decoder opened in the parent is shared across the fork; its own
        locks (one held by a parent thread at the fork would never be released); batches
        allocated in shared memory, which the worker hands to the parent without a copy,
        and never pinned (no CUDA in a forked process)."""
        plan = copy.copy(self)
        plan.decoder = self.decoder.fresh()
        plan.pin, plan.shared = False, True
        plan._locks, plan._guard, plan._pool = {}, threading.Lock(), None
        return plan

    def choose(self, idx):
        """The frames of samples `idx` (int64 [B]): (episode int64 [B], {key: int64
        [B, W] rows of the key's series}, {f"{key}_is_pad": bool [B, W] tensor})."""
        idx = np.asarray(idx, dtype=np.int64)
        t = self.timeline.sample_time[idx]
        episode = self.timeline.sample_episode[idx]
        frames, pads = {}, {}
        for spec, _, stream, offsets in self.keys:
            B, W = idx.size, offsets.size
            targets = (t[:, None] + offsets[None, :]).reshape(-1)
            frame, valid = robocache.align([stream], targets, out_dtype="float64")
            frames[spec.key] = frame.reshape(B, W).astype(np.int64)
            pads[f"{spec.key}_is_pad"] = torch.from_numpy(~valid.reshape(B, W))
        return episode, frames, pads

    def decode(self, episode, frames):
        """{key: uint8 [B, W, H, W, C]}: the frames chosen by choose()."""
        return {spec.key: self._decode(spec.key, d, episode, frames[spec.key])
                for spec, d, _, _ in self.keys}

    def load(self, idx):
        """choose(idx) and decode(): the batch's image keys and their `_is_pad`."""
        episode, frames, batch = self.choose(idx)
        batch.update(self.decode(episode, frames))
        return batch

    def _decode(self, key, d, episode, frame):
        """uint8 [B, W, H, W, C]: the frames `frame` (int64 [B, W], rows of the series)
        of the samples' episodes `episode` (int64 [B])."""
        B, W = frame.shape
        slot = np.arange(B * W).reshape(B, W)
        tasks, files = [], {}
        for p in np.unique(episode):
            rows = np.flatnonzero(episode == p)
            wanted, where = np.unique(frame[rows], return_inverse=True)
            series = d.series[p]
            if series.has_video_file:
                video, pos = series.video_frames(wanted)
                _, slots, positions = files.setdefault(video.path, (video, [], []))
                slots.append(slot[rows].reshape(-1))
                positions.append(pos[where.reshape(-1)])
            else:
                tasks.append((f"episode {self.timeline.episode_index[p]}",
                              self._episode_task(series, wanted), slot[rows].reshape(-1),
                              where.reshape(-1)))
        for path, (video, slots, positions) in files.items():
            slots = np.concatenate(slots)
            wanted, where = np.unique(np.concatenate(positions), return_inverse=True)
            first = 0
            for run in video.split(wanted, self.threads):
                mine = (where >= first) & (where < first + run.size)
                tasks.append((path, self._video_task(video, run), slots[mine],
                              where[mine] - first))
                first += run.size
        return self._assemble(key, B, W, tasks)

    def _episode_task(self, series, wanted):
        def decode():
            with self._lock(id(series)):
                return self.decoder.frames(series, wanted)
        return decode

    def _video_task(self, video, run):
        return lambda: self.decoder.video(video, run)

    def _assemble(self, key, B, W, tasks):
        """Runs the tasks (where, decode, slots, pick) on the plan's decode threads and
        writes the frames decode()[pick] to the slots b * W + w of the batch."""
        return self._place(key, B, W, tasks, self._threads().map(lambda t: t[1](), tasks))

    def _place(self, key, B, W, tasks, results):
        out = None
        for (where, _, slots, pick), images in zip(tasks, results):
            shape = tuple(images.shape)
            n = int(pick.max()) + 1
            if images.dim() != 4 or shape[0] != n or images.dtype != torch.uint8:
                raise ValueError(f"key {key!r}: {where}: {self.decoder.name} gave "
                                 f"{images.dtype} {shape} for {n} frames; expected uint8 "
                                 "[n, H, W, C]")
            if out is None:
                out = self._empty((B, W) + shape[1:], images.device)
            elif shape[1:] != tuple(out.shape[2:]):
                raise ValueError(f"key {key!r}: {where}: frames of shape {shape[1:]}, "
                                 f"{tuple(out.shape[2:])} elsewhere in the batch")
            dev = images.device
            out.view((B * W,) + shape[1:])[torch.from_numpy(slots).to(dev)] = \
                images[torch.from_numpy(pick).to(dev)]
        if out.is_cuda:
            torch.cuda.current_stream(out.device).synchronize()  # decoded before handed out
        return out

    def _empty(self, shape, device):
        if self.shared:  # a shared-memory segment from the start: sent to the parent as is
            storage = torch.UntypedStorage._new_shared(math.prod(shape))
            return torch.empty(0, dtype=torch.uint8).set_(storage).view(shape)
        return torch.empty(shape, dtype=torch.uint8, device=device, pin_memory=self.pin)


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
