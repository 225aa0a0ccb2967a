"""Batches computed ahead of the training step.

Prefetch runs load(i) for the next batches in background threads while the
caller works on the current one. On CUDA the low-dimensional windows of batch
i + 1 are enqueued from that thread on a side stream (SideStream) as soon as
batch i is handed out: the caller's stream waits on an event recorded after
them (a device-side wait, no host synchronisation), and every tensor handed
out is marked with record_stream, so the caching allocator does not reuse its
memory while the caller's stream may still read it. Each batch is a fresh
allocation: a batch handed out is never overwritten.
"""

from concurrent.futures import ThreadPoolExecutor

import torch


class Prefetch:
    """Runs load(start), load(start + 1), ... in `threads` background threads,
    up to `depth` batches ahead of the one asked for."""

    def __init__(self, load, start, depth, threads):
        self.load = load  # i -> batch i
        self.depth = max(1, int(depth))
        self.pool = ThreadPoolExecutor(max_workers=max(1, int(threads)),
                                       thread_name_prefix="robocache-loader")
        self.futures = {}
        self.next = start

    def get(self, i, count):
        """Batch i (waits for it); keeps `depth` batches below `count` in flight."""
        while self.next < min(i + 1 + self.depth, count):
            self.futures[self.next] = self.pool.submit(self.load, self.next)
            self.next += 1
        return self.futures.pop(i).result()

    def close(self):
        for f in self.futures.values():
            f.cancel()
        self.pool.shutdown(wait=True)
        self.futures.clear()


class SideStream:
    """A CUDA stream of `device` on which batches are computed ahead.

    start()        the side stream waits for the caller's stream (the epoch's
                   order tensor is made there)
    run(fn, i)     in the background thread: (fn(i), event) with fn's work
                   enqueued on the side stream
    hand_out(b)    in the caller's thread: the caller's current stream waits
                   for b's event; b's tensors are recorded on that stream
    close()        the caller's stream waits for whatever is still enqueued
                   (a batch computed ahead and never handed out reads tensors
                   the caller may free next)
    """

    def __init__(self, device):
        self.device = device
        self.stream = torch.cuda.Stream(device)

    def start(self):
        self.stream.wait_stream(torch.cuda.current_stream(self.device))

    def run(self, fn, i):
        with torch.cuda.device(self.device), torch.cuda.stream(self.stream):
            batch = fn(i)
            done = torch.cuda.Event()
            done.record(self.stream)
        return batch, done

    def hand_out(self, computed):
        batch, done = computed
        current = torch.cuda.current_stream(self.device)
        current.wait_event(done)
        for t in batch.values():
            t.record_stream(current)
        return batch

    def close(self):
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
