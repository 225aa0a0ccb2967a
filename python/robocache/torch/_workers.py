"""Image keys decoded in worker processes: WindowLoader(decode_workers=N).

Decoding in threads of the training process shares its interpreter lock with the
training step; here torch.utils.data.DataLoader runs the decoding in N worker
processes instead. Its dataset is map-style: an item is one batch's chosen
frames, (episode int64 [B], {key: frame rows int64 [B, W]}), chosen in the parent
by ImagePlan.choose (robocache.align: a forked process must not start OpenMP
threads once the parent has, GNU libgomp then hangs), and dataset[item] is that
batch's frames decoded by ImagePlan.decode in the worker, on up to decode_threads
threads, into shared memory. The sampler yields the items of the epoch from the
loader's current batch on; batch_size=None (nothing collated); pin_memory on CUDA
(DataLoader's pinning thread, so the loader's copy to the device is
asynchronous); prefetch_factor = the loader's prefetch (batches in flight per
worker); persistent_workers, so the workers are forked once, at the first
iteration, not at every epoch.

Workers inherit the plan by fork (it holds the recording's readers, which do not
pickle); each opens its own containers or decoders (ImagePlan.for_worker). A
ValueError of a worker's decode (DatasetError: a damaged video, naming file and
frames) is returned to the parent and raised there unchanged, after the workers
are shut down; a worker that dies or fails otherwise is reported by DataLoader
(its error, with the worker's traceback). Batches decoded ahead of an iteration
that stops early are dropped when the next one starts (DataLoader waits for them).
"""

import collections
import multiprocessing

import torch


class Failed:
    """A worker's decode raised `error` (a ValueError: pickled with its message)."""

    def __init__(self, error):
        self.error = error


class Decode(torch.utils.data.Dataset):
    """Map-style: dataset[(episode, frames)] -> {key: uint8 [B, W, H, W, C]} decoded
    in the worker by its own copy of the plan (made at its first item), or Failed."""

    def __init__(self, plan):
        self.plan = plan
        self.mine = None

    def __getitem__(self, chosen):
        if self.mine is None:
            self.mine = self.plan.for_worker()
        try:
            return self.mine.decode(*chosen)
        except ValueError as e:
            return Failed(e)


class Feed:
    """The sampler: iter() gives the items of the current epoch (set before each
    iteration of the DataLoader)."""

    def __init__(self):
        self.items = iter(())

    def __iter__(self):
        return self.items


def _chosen(plan, pads, batches):
    """The DataLoader's items for `batches` (int64 sample-index arrays); each batch's
    `_is_pad` is kept in `pads`, in order, for get()."""
    for idx in batches:
        episode, frames, pad = plan.choose(idx)
        pads.append(pad)
        yield episode, frames


class DecodeWorkers:
    """`workers` processes decoding the image keys of `plan` (ImagePlan), up to
    `prefetch` batches ahead each; `pin`: batches handed out in pinned memory;
    `context`: the multiprocessing start method or context (fork only); `seed`: the
    DataLoader's own generator (the global RNG is never drawn from)."""

    def __init__(self, plan, workers, prefetch, pin, context, seed):
        if context is None or isinstance(context, str):
            context = multiprocessing.get_context(context or "fork")
        if context.get_start_method() != "fork":
            raise ValueError("decode_workers: the workers inherit the loader's readers by fork; "
                             f"multiprocessing_context {context.get_start_method()!r} would "
                             "pickle them (use 'fork' or None)")
        self.plan, self.workers, self.prefetch, self.pin = plan, workers, prefetch, pin
        self.context, self.seed = context, seed
        self.pads = collections.deque()
        self.feed = Feed()
        self.loader = self.it = None

    def start(self, batches):
        """The epoch's batches (int64 sample-index arrays, in order): a handle whose
        get() gives each batch's {key: uint8 [B, W, H, W, C], f"{key}_is_pad"} on the
        host. Starts the workers at the first call (or after close())."""
        if self.loader is None:
            self.loader = torch.utils.data.DataLoader(
                Decode(self.plan), batch_size=None, sampler=self.feed,
                num_workers=self.workers, pin_memory=self.pin, prefetch_factor=self.prefetch,
                persistent_workers=True, multiprocessing_context=self.context,
                generator=torch.Generator().manual_seed(self.seed))
        self.pads.clear()
        self.feed.items = _chosen(self.plan, self.pads, batches)
        self.it = iter(self.loader)  # persistent workers: the same iterator, reset
        return Epoch(self)

    def next(self):
        try:
            images = next(self.it)
        except BaseException:
            self.close()
            raise
        if isinstance(images, Failed):
            self.close()
            raise images.error
        batch = self.pads.popleft()
        batch.update(images)
        return batch

    def close(self):
        """Shuts the workers down (and waits for them); a later start() forks new ones."""
        it, self.it, self.loader = self.it, None, None
        self.pads.clear()
        if it is not None:
            it._shutdown_workers()  # what the iterator's __del__ does, now


class Epoch:
    """One iteration's batches, as _prefetch.Prefetch: get(i, count) waits for batch
    i (they come in order); close() drops the `_is_pad` of batches decoded ahead."""

    def __init__(self, workers):
        self.workers = workers

    def get(self, i, count):
        return self.workers.next()

    def close(self):
        self.workers.pads.clear()
