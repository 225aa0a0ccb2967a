"""robocache.torch.WindowLoader: batches of windows for a training loop,
computed on the device from device-resident episodes (docs/loader.md)."""

import logging
import math
import os
import weakref

import numpy as np
import torch

from ._decoders import make_decoder
from ._frames import ImagePlan, to_device
from ._prefetch import Prefetch, SideStream
from ._order import EpochOrder
from ._resident import Resident
from ._spec import parse_windows
from ._timeline import Timeline
from ._workers import DecodeWorkers

log = logging.getLogger("robocache.torch")

_STATE_KEYS = ("num_samples", "batch_size", "world_size", "seed", "shuffle", "drop_last")


def _device(device):
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def _ranks(rank, world_size):
    if (rank is None) != (world_size is None):
        raise ValueError("give both rank= and world_size=, or neither (then they come from "
                         "torch.distributed when it is initialised)")
    if rank is None:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
        return 0, 1
    rank, world_size = int(rank), int(world_size)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank must lie in 0..world_size-1, got rank={rank}, "
                         f"world_size={world_size}")
    return rank, world_size


def _select(rec, episodes):
    if episodes is None:
        return list(rec.episodes)
    by_index = {ep.index: ep for ep in rec.episodes}
    missing = [e for e in episodes if e not in by_index]
    if missing:
        have = ", ".join(str(i) for i in sorted(by_index)) or "none"
        raise ValueError(f"{rec.path}: episodes {missing} are not in the recording "
                         f"(episodes: {have})")
    return [by_index[e] for e in episodes]


def _weights(where, timeline, episode_weights):
    if episode_weights is None:
        return None
    if isinstance(episode_weights, dict):
        missing = [i for i in timeline.episode_index.tolist() if i not in episode_weights]
        if missing:
            raise ValueError(f"{where}: episode_weights has no weight for episodes {missing}")
        episode_weights = [episode_weights[i] for i in timeline.episode_index.tolist()]
    w = np.asarray(episode_weights, dtype=np.float64).reshape(-1)
    if w.size != timeline.episode_index.size:
        raise ValueError(f"{where}: episode_weights has {w.size} weights for "
                         f"{timeline.episode_index.size} episodes")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size or not w.sum() > 0:
        what = f"weight {w[bad[0]]} of episode {timeline.episode_index[bad[0]]}" if bad.size \
            else "all weights are 0"
        raise ValueError(f"{where}: episode_weights must be finite, >= 0 and not all 0: {what}")
    return torch.from_numpy(w[timeline.sample_episode])


def _groups(where, timeline, budget):
    """Contiguous episode ranges [e0, e1) whose device bytes fit the budget."""
    sizes = timeline.episode_bytes()
    if budget is None:
        return [(0, sizes.size)]
    groups, start, used = [], 0, 0
    for e, size in enumerate(sizes.tolist()):
        if size > budget:
            raise ValueError(f"{where}: episode {timeline.episode_index[e]} alone needs {size} "
                             f"bytes of device memory, more than max_device_bytes = {budget}")
        if used + size > budget:
            groups.append((start, e))
            start, used = e, 0
        used += size
    groups.append((start, sizes.size))
    return groups


def _check_workers(workers, decode_device, prefetch):
    workers = int(workers)
    if workers < 0:
        raise ValueError(f"decode_workers must be >= 0, got {workers}")
    if workers and decode_device == "cuda":
        raise ValueError("decode_device='cuda' (NVDEC) decodes in the training process: it "
                         "cannot be combined with decode_workers > 0 (no CUDA in forked "
                         "worker processes)")
    if workers and int(prefetch) == 0:
        raise ValueError("decode_workers > 0 decodes batches ahead: it needs prefetch >= 1")
    return workers


class WindowLoader:
    """Batches of time windows of a recording's streams, for a training loop.

        loader = robocache.torch.WindowLoader(
            rd.open("path/to/lerobot_dataset"),
            windows={"observation.state": [-1/30, 0.0],
                     "action": [k / 30 for k in range(50)],
                     "observation.images.top": [0.0]},
            batch_size=256, device="cuda", shuffle=True, seed=0, drop_last=True)
        for batch in loader:
            batch["action"]          # [256, 50, D] float32
            batch["action_is_pad"]   # [256, 50] bool, LeRobot's meaning

    Samples are the times of a reference stream (default: the first key's
    first stream; LeRobot: one sample per frame, sample i = LeRobotDataset's
    item i) or a fixed rate (rate_hz) over each episode's overlap of the
    keys' streams. Sample s of episode e gets, for key k and offset o of its
    window, the value of k's streams at time t_s + o within episode e alone,
    as robocache.align computes it (method, tolerance, max_gap, time_offset),
    with extrapolate "clamp": a window that reaches past the episode's ends
    repeats the edge sample and is marked `_is_pad` (LeRobot's padding). With
    nearest (the default) and tolerance_s, LeRobot data give LeRobotDataset's
    frame choice and `_is_pad` (docs/loader.md).

    recording   a robocache.datasets Recording, or a path for rd.open
    windows     {key: offsets in seconds, or {"offsets": [...], "streams":
                [series names, concatenated on the channel axis; default
                [key]], "method": "nearest" | "previous" | "next" | "linear"
                | "slerp", "tolerance": s, "max_gap": s, "extrapolate":
                "clamp" | "fill", "fill_value", "time_offset": s,
                "quat_order"}}; an image series (kind "image") is decoded
    batch_size, shuffle, drop_last
                as torch.utils.data.DataLoader
    device      "cuda", "cuda:1", "cpu", a torch.device; default: CUDA when
                available
    seed        epoch e's order comes from torch.Generator seeded seed + e
    episodes    Episode.index values to use (default: all, in order)
    episode_weights
                per-episode relative sampling weights (a list in episode order
                or {Episode.index: w}); each epoch then draws num_samples
                samples with replacement, each with its episode's weight
    reference   series name whose times are the samples; or rate_hz
    tolerance_s default tolerance of nearest / previous / next keys (LeRobot's
                tolerance_s, 1e-4 s)
    out_dtype   dtype of the low-dimensional outputs (torch.float32; bfloat16
                or float16 halve them)
    rank, world_size
                this process's shard; default from torch.distributed when it
                is initialised (torchrun, DDP, accelerate), else 0 and 1
    max_device_bytes
                device memory for the low-dimensional streams; more is paged
                by groups of consecutive episodes (each epoch visits the groups
                in a drawn order). Default: half the free memory of a CUDA
                device, no limit on the CPU
    prefetch    batches prepared ahead while the training step runs: the
                next batch's windows (CUDA: enqueued on a side stream; CPU: a
                background thread), image keys `prefetch` batches decoded
                ahead; 0: every batch computed when asked for, in the
                caller's thread and stream
    decode_threads
                threads decoding image keys: batches decoded ahead, and a
                video file's frames of a batch in up to this many runs
                (cut between groups of pictures), each on its own thread
    decoder     "pyav" (default: each reader's decoder, PyAV for video files)
                or "torchcodec" (video files through torchcodec's
                VideoDecoder, one kept open per file; the optional extra
                robocache[torchcodec]): the same frames (docs/loader.md)
    decode_device
                "cpu" (default: decoded on the host, copied to the device) or
                "cuda" (decoder="torchcodec" only: NVDEC on the loader's GPU)
    decode_workers
                0 (default): image keys decoded by threads of this process (above).
                N > 0: decoded by N worker processes, as DataLoader(num_workers=N)
                (torch.utils.data.DataLoader runs them: forked at the first
                iteration and kept until close() or the loader's deletion), each
                with decode_threads threads and `prefetch` batches in flight; the
                frames are chosen in this process, the batches are the same as with
                0. Keeps decoding off the interpreter lock of the training loop.
                Needs prefetch >= 1 and decode_device "cpu"; ignored without image
                keys
    multiprocessing_context
                the workers' start method: None (fork) or "fork" or a fork context;
                the workers inherit the recording's readers, which do not pickle

    Each batch: {key: [B, W, D] out_dtype (images: [B, W, C, H, W] uint8),
    f"{key}_is_pad": [B, W] bool, "episode_index", "frame_index" (the
    sample's position in its episode), "sample_index": [B] int64}, on device.

    Raises ValueError (windows, options, episodes, weights, ranks, a
    decoder that cannot decode a key's stream, decode_workers with prefetch 0,
    decode_device "cuda" or a start method other than fork),
    robocache.datasets.DatasetError (a missing stream, a stream whose columns
    change between episodes, naming file, episode and stream; a video the
    decoder cannot read, also from a decode worker, with the same message), ImportError
    from rd.open for a missing format extra, or naming robocache[torchcodec].
    """

    def __init__(self, recording, windows, *, batch_size, device=None, shuffle=True, seed=0,
                 drop_last=False, episodes=None, episode_weights=None, reference=None,
                 rate_hz=None, tolerance_s=1e-4, out_dtype=torch.float32, rank=None,
                 world_size=None, max_device_bytes=None, prefetch=2, decode_threads=1,
                 decoder="pyav", decode_device="cpu", decode_workers=0,
                 multiprocessing_context=None):
        if isinstance(recording, (str, os.PathLike)):
            import robocache.datasets as rd
            recording = rd.open(recording)
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if reference is not None and rate_hz is not None:
            raise ValueError("give reference= (a series whose times are the samples) or "
                             "rate_hz= (a fixed rate), not both")
        if rate_hz is not None and not (math.isfinite(rate_hz) and rate_hz > 0):
            raise ValueError(f"rate_hz must be a positive number, got {rate_hz}")
        self.recording = recording
        self.device = _device(device)
        self.specs = parse_windows(windows, tolerance_s=tolerance_s)
        where = recording.path
        self.timeline = Timeline(where, _select(recording, episodes), self.specs,
                                 reference=reference, rate_hz=rate_hz)
        self.rank, self.world_size = _ranks(rank, world_size)
        if max_device_bytes is None and self.device.type == "cuda":
            max_device_bytes = torch.cuda.mem_get_info(self.device)[0] // 2
        self.max_device_bytes = max_device_bytes
        self.groups = _groups(where, self.timeline, max_device_bytes)
        self.out_dtype = out_dtype
        starts = self.timeline.sample_starts
        group_of_sample = None
        if len(self.groups) > 1:
            bounds = [starts[e1] for _, e1 in self.groups]
            group_of_sample = torch.from_numpy(
                np.searchsorted(bounds, np.arange(starts[-1]), side="right"))
        self.group_of_sample = group_of_sample
        self.order = EpochOrder(
            int(starts[-1]), group_of_sample=group_of_sample,
            weights=_weights(where, self.timeline, episode_weights), shuffle=shuffle, seed=seed,
            rank=self.rank, world_size=self.world_size, batch_size=batch_size,
            drop_last=drop_last)
        decode_workers = _check_workers(decode_workers, decode_device, prefetch)
        frames = make_decoder(decoder, decode_device, self.device, decode_threads)
        self.images = ImagePlan(self.timeline, self.timeline.max_gap_ns,
                                pin=self.device.type == "cuda", decoder=frames,
                                threads=decode_threads) if self.timeline.images else None
        if int(prefetch) < 0:
            raise ValueError(f"prefetch must be >= 0, got {prefetch}")
        self.prefetch, self.decode_threads = int(prefetch), decode_threads
        self._workers = self._decode_workers(decode_workers, multiprocessing_context, seed)
        self._resident = None
        self._group = -1
        self._epoch, self._batch = 0, 0
        self._load_group(0)
        self._log(where)

    def _decode_workers(self, workers, context, seed):
        if workers == 0 or self.images is None:
            return None
        workers = DecodeWorkers(self.images, workers, self.prefetch,
                                self.device.type == "cuda", context, seed)
        weakref.finalize(self, workers.close)  # no worker outlives the loader
        return workers

    def close(self):
        """Stops the decode worker processes (decode_workers > 0) and the decode threads,
        and waits for them; a later iteration starts new ones. Deleting the loader does the
        same."""
        if self._workers is not None:
            self._workers.close()
        if self.images is not None:
            self.images.close()

    # ---- device memory ------------------------------------------------------------------

    def _load_group(self, g):
        if g == self._group:
            return self._resident
        if self._resident is not None and self.device.type == "cuda":
            torch.cuda.synchronize(self.device)  # no stream still reads the group freed next
        self._resident = None  # frees the previous group first
        e0, e1 = self.groups[g]
        self._resident = Resident(self.timeline, self.specs, e0, e1, self.device, self.out_dtype)
        self._group = g
        if len(self.groups) > 1:
            log.debug("WindowLoader: paged in episode group %d of %d (episodes %d..%d)", g + 1,
                      len(self.groups), self.timeline.episode_index[e0],
                      self.timeline.episode_index[e1 - 1])
        return self._resident

    def _log(self, where):
        total = int(self.timeline.episode_bytes().sum())
        budget = "no limit" if self.max_device_bytes is None else \
            f"max_device_bytes {self.max_device_bytes / 1e6:.1f} MB"
        log.info("WindowLoader %s: %d episodes, %d samples, %d low-dim streams, %d image keys: "
                 "%.1f MB on %s (%s)", where, len(self.timeline.episodes), self.num_samples,
                 len(self.timeline.streams), len(self.timeline.images), total / 1e6,
                 self.device, budget)
        if len(self.groups) > 1:
            log.info("WindowLoader %s: paged in %d groups of episodes: %s", where,
                     len(self.groups), ", ".join(
                         f"{self.timeline.episode_index[a]}..{self.timeline.episode_index[b - 1]}"
                         for a, b in self.groups))

    # ---- sampling -----------------------------------------------------------------------

    @property
    def num_samples(self):
        """Samples of the whole recording (all ranks), one epoch."""
        return self.order.num_samples

    def __len__(self):
        """Batches per epoch on this rank."""
        return len(self.order)

    def set_epoch(self, epoch):
        """The next iteration runs epoch `epoch` from its first batch."""
        self._epoch, self._batch = int(epoch), 0

    def sample_indices(self, epoch):
        """int64 [per rank] (CPU): this rank's samples of `epoch`, in order."""
        return self.order.indices(epoch)

    def state_dict(self):
        """Where the next iteration starts: {"epoch", "batch"} plus the settings
        that must match on resume."""
        state = {"epoch": self._epoch, "batch": self._batch}
        state.update({k: getattr(self.order, k) for k in _STATE_KEYS})
        return state

    def load_state_dict(self, state):
        """Resumes at state["epoch"], state["batch"]: the next iteration gives
        the batches the saved loader had still to give. ValueError when the
        samples, batch size, world size, seed, shuffle or drop_last differ."""
        differ = [f"{k} {state.get(k)!r} (now {getattr(self.order, k)!r})" for k in _STATE_KEYS
                  if state.get(k) != getattr(self.order, k)]
        if differ:
            raise ValueError("WindowLoader.load_state_dict: the state was saved with "
                             + ", ".join(differ))
        self._epoch, self._batch = int(state["epoch"]), int(state["batch"])

    # ---- batches ------------------------------------------------------------------------

    def gather(self, indices):
        """The low-dimensional windows of samples `indices` (int64 [B], global
        sample indices, on the device): the batch dict without image keys.
        When the recording is resident (not paged) this is device work only
        (no host synchronisation): a step can be captured in a CUDA graph with
        a static `indices` tensor."""
        if len(self.groups) == 1:
            return self._resident.gather(indices)
        return self._paged(indices.cpu())

    def frames(self, indices):
        """The image windows of samples `indices` (int64 [B], global sample
        indices): {key: uint8 [B, W, C, H, W], f"{key}_is_pad": [B, W] bool} on
        the device, decoded now (iteration decodes them ahead in threads).
        An empty dict when no key is an image stream."""
        if self.images is None:
            return {}
        return to_device(self.images.load(torch.as_tensor(indices).cpu().numpy()), self.device)

    def _paged(self, idx):
        """Batch of host indices idx across episode groups, group by group."""
        groups = self.group_of_sample[idx]
        cuts = (torch.nonzero(groups[1:] != groups[:-1]).reshape(-1) + 1).tolist()
        parts = []
        for a, b in zip([0] + cuts, cuts + [idx.numel()]):
            resident = self._load_group(int(groups[a]))
            parts.append(resident.gather(idx[a:b].to(self.device)))
        if len(parts) == 1:
            return parts[0]
        return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}

    def __iter__(self):
        """Batches of the current epoch from where the last iteration stopped
        (a full pass is one epoch; then the epoch advances). With prefetch >
        0 the next batch is computed while the caller works on this one: on
        CUDA its windows are enqueued on a side stream from a background
        thread as soon as this batch is handed out, on the CPU computed in a
        background thread; image keys are decoded `prefetch` batches ahead
        (decode_workers: `prefetch` per worker process). A batch computed
        ahead is not counted as consumed (state_dict)."""
        epoch, start = self._epoch, self._batch
        order = self.order.indices(epoch)
        count = len(self.order)
        dev = order.to(self.device) if len(self.groups) == 1 else None

        def windows(i):
            if dev is not None:
                return self._resident.gather(self.order.batch(dev, i))
            return self._paged(self.order.batch(order, i))

        def images(i):
            return self.images.load(self.order.batch(order, i).numpy())

        side = ahead = frames = None
        if self.prefetch > 0:
            if self._workers is not None:  # forked at the first start: before any thread here
                split = self.order.batch
                frames = self._workers.start(split(order, i).numpy() for i in range(start, count))
            elif self.images is not None:
                frames = Prefetch(images, start, self.prefetch, self.decode_threads)
            if self.device.type == "cuda":
                side = SideStream(self.device)
                side.start()
                ahead = Prefetch(lambda i: side.run(windows, i), start, 1, 1)
            else:
                ahead = Prefetch(windows, start, 1, 1)
        try:
            for i in range(start, count):
                if ahead is None:
                    batch = windows(i)
                elif side is None:
                    batch = ahead.get(i, count)
                else:
                    batch = side.hand_out(ahead.get(i, count))
                if self.images is not None:
                    host = frames.get(i, count) if frames is not None else images(i)
                    batch.update(to_device(host, self.device))
                self._batch = i + 1
                yield batch
            self._epoch, self._batch = epoch + 1, 0
        finally:
            for p in (ahead, frames):
                if p is not None:
                    p.close()
            if side is not None:
                side.close()
