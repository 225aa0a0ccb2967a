"""--cuda-graph of bench_training_loop.py: the WindowLoader side's whole training step,
the batch's window gather (WindowLoader.gather on a static index tensor), forward,
backward (under DistributedDataParallel its gradient all-reduce) and the AdamW step
(capturable), captured in one CUDA graph and replayed once per step.

A small policy at batch 256 is launch-bound: the GPU waits for the host to enqueue a
few hundred kernels a step, and under DDP for the slowest rank's host. A replay enqueues
the step in one call. Per step the host copies the batch's sample indices (a slice of
the epoch's order, already on the device) into the static index tensor and replays;
data_s is that copy, the gather's own time is inside updt_s (WindowLoader.gather alone
is timed separately). The model (and its DistributedDataParallel wrapper), 11 eager
warm-up steps (DDP builds its buckets in the first ones) and the capture all run on one
side stream, as whole-network capture with DDP asks for (DDP keeps references to
gradient-accumulation nodes made on the stream it was built on).
"""

import torch

WARMUP_EAGER = 11


def graphed_step(loader, build, device, args, loss_of):
    """Builds (model, optimizer) = build() and captures one step; returns (fetch,
    update) for the training loop: fetch(s) copies step s's sample indices into the
    static index tensor, update(_) replays the graph. Needs a CUDA device, an unpaged
    loader (one episode group) and drop_last (a fixed batch size)."""
    if len(loader.groups) != 1:
        raise SystemExit("--cuda-graph needs the low-dim streams resident in one group")
    B, count = args.batch_size, len(loader)
    orders = {}

    def indices(i):
        epoch, k = divmod(i, count)
        if epoch not in orders:
            orders.clear()
            orders[epoch] = loader.sample_indices(epoch).to(device)
        return orders[epoch][k * B:(k + 1) * B]

    static = indices(0).clone()
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        model, opt = build()

    def step():
        batch = loader.gather(static)
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            loss = loss_of(model, batch)
        loss.backward()
        opt.step()

    with torch.cuda.stream(side):
        for i in range(WARMUP_EAGER):
            static.copy_(indices(i))
            opt.zero_grad(set_to_none=True)
            step()
        opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        step()
    torch.cuda.current_stream(device).wait_stream(side)

    def fetch(s):
        static.copy_(indices(WARMUP_EAGER + s))

    return fetch, lambda _: graph.replay()
