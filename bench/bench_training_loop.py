"""A training loop fed by robocache.torch.WindowLoader against one fed by
LeRobotDataset + torch.utils.data.DataLoader, same machine, same run.

    python3 bench/bench_training_loop.py [--device cpu|cuda] [--repeat 50] [--out bench/results]
    torchrun --nproc-per-node 8 bench/bench_training_loop.py --device cuda   # one shard per rank

Datasets (--policy): lowdim, the real LeRobot v3.0 fixture
data/robot/lerobot/so101_record_test_v30_novideo (SO-101 arm, 6-D state and action, 30 Hz);
image, data/robot/lerobot/lingzu_open50_v30_subset (bimanual arms, 34-D state and actions,
640 x 480 video, 30 Hz); episodes repeated --repeat times into one LeRobot v3.0 folder
(bench/training_data.py, written once under --work; the printout says how big).
Windows: the state at [-1/30, 0] s, an action chunk of --chunk frames (k / 30 s), the image
frame at 0 s. Policy (--preset issue | act): ACT-style, a pre-norm transformer over 2 state
tokens (+ 12 image tokens from strided convolutions) and --chunk learned action queries (act:
an encoder over the observation tokens and a decoder of the queries), L1 loss on the
non-padded actions, AdamW; bf16 autocast on CUDA, float32 on the CPU; under torchrun wrapped
in DistributedDataParallel (--ddp-tuned: gradient_as_bucket_view, static_graph, fused AdamW),
each rank fed its own shard; rank 0 gathers every rank's data wait (scripts/gpu-multi.sh
computes the scaling efficiency from a 1-rank and an N-rank run).
Per step: data_s = waiting for the next batch (baseline: + .to(device)), updt_s =
forward + backward + optimizer step (both end waiting for the caller's CUDA stream);
samples/s = batch x steps / the steps' total time and the data share = total data_s / total
time, so that a loader's occasional long stalls count (the median step's figures are
recorded beside them); GPU utilisation sampled through NVML (pynvml)
when present. Also: the loaders alone (no model: samples/s of wall time, and samples per
CPU second of the process and its DataLoader workers, the measure that holds on a shared
host) and WindowLoader.gather
alone (windows/s, a window = one sample's state window and action chunk), with the
alternative layout of per-episode padded rows [E, S_max, D] and scattered targets.
The baseline runs in the LeRobot oracle environment (.venv-lerobot,
scripts/install-lerobot-oracle.sh, or --lerobot-python) as a subprocess of this script.
Writes <out>/training_loop_[image_][<tag>_]<device>.json (rank 0) and prints a table.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import torch
from torch import nn

import training_data
from bench_common import commit, cpu_model, slug, write_json
from training_graph import graphed_step

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FPS = 30


# ---- the dataset --------------------------------------------------------------------------

class Variant:
    """What a policy reads: the fixture, its state / action keys and dims, the
    image key (None: low-dim policy)."""

    def __init__(self, source, state, action, dim, image=None):
        self.source, self.state, self.action, self.dim, self.image = \
            source, state, action, dim, image


VARIANTS = {
    "lowdim": Variant(training_data.LOWDIM, "observation.state", "action", 6),
    "image": Variant(training_data.IMAGE, "state", "actions", 34, image="image"),
}


def windows(variant, chunk):
    w = {variant.state: [-1 / FPS, 0.0], variant.action: [k / FPS for k in range(chunk)]}
    if variant.image:
        w[variant.image] = [0.0]
    return w


# ---- the policy and the loop ----------------------------------------------------------------

class Frames(nn.Module):
    """Image tokens: strided convolutions over uint8 frames [B, C, H, W] (a one-frame
    window, as both loaders return it)
    (scaled to 0..1), pooled to a 3 x 4 grid of d_model tokens."""

    def __init__(self, d_model):
        super().__init__()
        chans = [3, 32, 64, 128, d_model]
        layers = []
        for i, (a, b) in enumerate(zip(chans[:-1], chans[1:])):
            layers += [nn.Conv2d(a, b, 5 if i == 0 else 3, stride=4 if i == 0 else 2,
                                 padding=2 if i == 0 else 1), nn.ReLU()]
        self.net = nn.Sequential(*layers, nn.AdaptiveAvgPool2d((3, 4)))
        self.tokens = 12

    def forward(self, frames):
        x = self.net(frames.float() / 255 if frames.dtype == torch.uint8 else frames)
        return x.flatten(2).transpose(1, 2)


class Policy(nn.Module):
    """ACT-style: state tokens (and image tokens) and learned action queries
    through a transformer; the queries' outputs are the action chunk. With
    dec_layers 0 one encoder runs over all tokens; else an encoder over the
    observation tokens and a decoder of the queries attending to it (ACT)."""

    def __init__(self, dim, n_obs, chunk, d_model, layers, dec_layers=0, ff=None,
                 image=False):
        super().__init__()
        self.n_obs = n_obs
        self.obs = nn.Linear(dim, d_model)
        self.frames = Frames(d_model) if image else None
        n_tokens = n_obs + (self.frames.tokens if image else 0)
        self.queries = nn.Parameter(torch.randn(chunk, d_model) * 0.02)
        heads, ff = max(1, d_model // 64), ff or 4 * d_model
        self.dec_layers = dec_layers
        if dec_layers:
            self.pos = nn.Parameter(torch.zeros(n_tokens, d_model))
            self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(
                d_model, heads, ff, dropout=0.0, batch_first=True, norm_first=True), layers,
                enable_nested_tensor=False)
            self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(
                d_model, heads, ff, dropout=0.0, batch_first=True, norm_first=True), dec_layers)
        else:
            self.pos = nn.Parameter(torch.zeros(n_tokens + chunk, d_model))
            self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(
                d_model, heads, ff, dropout=0.0, batch_first=True, norm_first=True), layers,
                enable_nested_tensor=False)
        self.head = nn.Linear(d_model, dim)

    def forward(self, state, frames=None):
        tokens = [self.obs(state)]
        if self.frames is not None:
            tokens.append(self.frames(frames))
        q = self.queries.expand(state.shape[0], -1, -1)
        if self.dec_layers:
            memory = self.encoder(torch.cat(tokens, dim=1) + self.pos)
            return self.head(self.decoder(q, memory))
        x = torch.cat(tokens + [q], dim=1) + self.pos
        return self.head(self.encoder(x)[:, -q.shape[1]:])


class GpuUtil:
    """Mean GPU utilisation (NVML) while running, sampled every 50 ms; None
    without pynvml or a GPU."""

    def __init__(self, device):
        self.samples, self.handle, self._stop = [], None, threading.Event()
        if device.type != "cuda":
            return
        try:
            import pynvml
            pynvml.nvmlInit()
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(device.index or 0)
            self.nvml = pynvml
        except Exception:  # no pynvml, no NVML library: not measured
            self.handle = None

    def __enter__(self):
        if self.handle is not None:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()
        return self

    def _run(self):
        while not self._stop.wait(0.05):
            self.samples.append(self.nvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)

    def __exit__(self, *exc):
        self._stop.set()
        if self.handle is not None:
            self.thread.join()

    @property
    def mean(self):
        return statistics.fmean(self.samples) if self.samples else None


def stats(xs):
    q = statistics.quantiles(xs, n=10) if len(xs) > 1 else [xs[0]] * 9
    return {"median": statistics.median(xs), "p10": q[0], "p90": q[-1]}


def sync(device):
    """Waits for the caller's current stream (what a loop's loss.item() waits
    for); work the loader enqueued ahead on its own stream is not waited for."""
    if device.type == "cuda":
        torch.cuda.current_stream(device).synchronize()


def model_for(args, device):
    """The policy (under torchrun wrapped in DistributedDataParallel, with the
    --ddp-tuned options) and its AdamW (fused on CUDA with --ddp-tuned)."""
    v = VARIANTS[args.policy]
    torch.manual_seed(0)
    model = Policy(v.dim, 2, args.chunk, args.d_model, args.layers, args.dec_layers,
                   args.ff, image=v.image is not None).to(device)
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        tuned = dict(gradient_as_bucket_view=True, static_graph=True) if args.ddp_tuned else {}
        if args.bucket_cap_mb:
            tuned["bucket_cap_mb"] = args.bucket_cap_mb
        model = nn.parallel.DistributedDataParallel(model, **tuned)  # gradients all-reduced
    opts = {"fused": True} if args.ddp_tuned and device.type == "cuda" else {}
    if args.cuda_graph:
        opts["capturable"] = True
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4, **opts)


def loss_of(v, model, batch):
    """L1 loss of the predicted action chunk on the non-padded actions."""
    pred = model(batch[v.state], batch.get(v.image))
    err = (pred.float() - batch[v.action]).abs().mean(-1)
    return (err * ~batch[f"{v.action}_is_pad"]).mean()


def train(batches, device, args, to_device, loader=None):
    """Runs warm-up + timed steps (with --cuda-graph and a WindowLoader `loader`:
    replays of one captured step, training_graph.py); per-step data_s / updt_s
    statistics."""
    v = VARIANTS[args.policy]
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else \
        torch.autocast("cpu", enabled=False)
    if args.cuda_graph and loader is not None:
        fetch, update = graphed_step(loader, lambda: model_for(args, device), device, args,
                                     lambda m, b: loss_of(v, m, b))
    else:
        model, opt = model_for(args, device)
        it = iter(batches)

        def fetch(step):
            return to_device(next(it))

        def update(batch):
            with autocast:
                loss = loss_of(v, model, batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    data_s, updt_s = [], []
    with GpuUtil(device) as util:
        for step in range(args.warmup + args.steps):
            if step == args.warmup:
                util.samples.clear()
            t0 = time.perf_counter()
            batch = fetch(step)
            sync(device)
            t1 = time.perf_counter()
            update(batch)
            sync(device)
            if step >= args.warmup:
                data_s.append(t1 - t0)
                updt_s.append(time.perf_counter() - t1)
    step_s = [d + u for d, u in zip(data_s, updt_s)]
    return {"data_s": stats(data_s), "updt_s": stats(updt_s),
            "samples_per_s": args.batch_size * len(step_s) / sum(step_s),
            "data_fraction": sum(data_s) / sum(step_s),
            "samples_per_s_median_step": args.batch_size / statistics.median(step_s),
            "data_fraction_median_step": statistics.median(data_s) / statistics.median(step_s),
            "gpu_util_percent": util.mean, "steps": args.steps, "warmup": args.warmup}


def _children(pid):
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids = []
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                kids += [int(k) for k in f.read().split()]
        except OSError:
            pass
    return kids + [g for k in kids for g in _children(k)]


def cpu_seconds():
    """CPU time (user + system) of this process and its live child processes
    (DataLoader workers), in seconds: what the loading costs on a shared host
    whatever the other load."""
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK")
    for pid in _children(os.getpid()):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def loader_alone(batches, device, args, to_device):
    """samples/s of the loader without a model (its batches on the device), and
    samples per CPU second of the process and its workers."""
    it = iter(batches)
    for _ in range(args.warmup):
        to_device(next(it))
    sync(device)
    steps = args.alone_steps
    c0, t0 = cpu_seconds(), time.perf_counter()
    for _ in range(steps):
        to_device(next(it))
    sync(device)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    return {"samples_per_s": steps * args.batch_size / wall,
            "samples_per_cpu_s": steps * args.batch_size / cpu, "batches": steps,
            "wall_s": wall, "cpu_s": cpu}


def forever(loader):
    while True:
        yield from loader


# ---- LeRobotDataset + DataLoader (runs in the oracle environment) ---------------------------

def run_lerobot(args, device):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    import lerobot

    v = VARIANTS[args.policy]
    ds = LeRobotDataset("local/bench", root=args.dataset,
                        delta_timestamps=windows(v, args.chunk))
    workers = args.workers

    def make():
        return torch.utils.data.DataLoader(
            ds, batch_size=args.batch_size, shuffle=True, num_workers=workers, drop_last=True,
            pin_memory=device.type == "cuda", persistent_workers=workers > 0,
            prefetch_factor=2 if workers > 0 else None)

    def to_device(b):
        return {k: b[k].to(device, non_blocking=True)
                for k in (v.state, v.action, f"{v.action}_is_pad", v.image) if k}

    result = {"loader": f"LeRobotDataset + DataLoader(num_workers={workers})",
              "lerobot_version": lerobot.__version__, "torch_version": torch.__version__,
              "python": platform.python_version(), "frames": len(ds)}
    result["train"] = train(forever(make()), device, args, to_device)
    result["alone"] = loader_alone(forever(make()), device, args, to_device)
    return result


# ---- WindowLoader -----------------------------------------------------------------------

def window_loader(args, device, rank, world, **kw):
    import robocache.datasets as rd
    import robocache.torch as rt

    return rt.WindowLoader(rd.open(args.dataset), windows(VARIANTS[args.policy], args.chunk),
                           batch_size=kw.pop("batch_size", args.batch_size), device=device,
                           shuffle=True, seed=0, drop_last=True, rank=rank, world_size=world,
                           prefetch=args.prefetch, decode_threads=args.decode_threads,
                           decode_workers=args.decode_workers, decoder=args.decoder,
                           decode_device=args.decode_device, **kw)


def run_robocache(args, device, rank, world):
    import robocache

    loader = window_loader(args, device, rank, world)
    name = "robocache.torch.WindowLoader"
    if VARIANTS[args.policy].image:
        name += f"(decode_workers={args.decode_workers})" if args.decode_device == "cpu" else \
            f"({args.decoder} on {args.decode_device})"
    result = {"loader": name, "frames": loader.num_samples,
              "robocache_version": robocache.__version__, "torch_version": torch.__version__,
              "python": platform.python_version(), "rank": rank, "world_size": world}
    result["train"] = train(forever(loader), device, args, lambda b: b, loader)
    result["alone"] = loader_alone(forever(loader), device, args, lambda b: b)
    loader.close()  # its decode workers
    result["gather"] = [gather_alone(args, device, rank, world, b)
                        for b in args.gather_batches]
    return result


def time_gather(fn, batches, device, repeat):
    for idx in batches[:3]:
        fn(idx)
    sync(device)
    times = []
    for r in range(repeat):
        idx = batches[r % len(batches)]
        t0 = time.perf_counter()
        fn(idx)
        sync(device)
        times.append(time.perf_counter() - t0)
    return stats(times)


def padded_rows(loader):
    """The alternative layout: every stream as [E, S_max, D] rows with lengths,
    a batch's targets scattered to its episodes' rows [E, T_max]; returns
    gather(idx) -> {key: [B, W, D]} (values only)."""
    import robocache

    tl, dev = loader.timeline, loader.device
    streams = []
    for d in tl.streams:
        lengths = np.diff(d.starts)
        E, S = lengths.size, int(lengths.max())
        v = np.zeros((E, S, d.values.shape[1]), d.values.dtype)
        t = np.zeros((E, S), np.int64)
        for e in range(E):
            a, b = d.starts[e], d.starts[e + 1]
            v[e, :b - a], t[e, :b - a] = d.values[a:b], d.times[a:b]
            t[e, b - a:] = t[e, b - a - 1]
        streams.append(robocache.Stream(
            torch.from_numpy(v).to(dev), torch.from_numpy(t).to(dev), method=d.spec.method,
            tolerance=d.spec.tolerance_ns, lengths=torch.from_numpy(lengths).to(dev)))
    resident = loader._resident
    sample_time = resident.sample_time
    episode = torch.from_numpy(tl.sample_episode).to(dev)
    offsets, E = resident.offsets, len(tl.episodes)
    U = offsets.numel()

    def gather(idx):
        B = idx.numel()
        ep = episode[idx]
        order = torch.argsort(ep)
        counts = torch.bincount(ep, minlength=E)
        first = torch.cumsum(counts, 0) - counts
        slot = torch.empty_like(order)
        slot[order] = torch.arange(B, device=dev) - first[ep[order]]
        t_max = int(counts.max()) * U  # a host synchronisation on CUDA
        targets = torch.zeros((E, t_max), dtype=torch.int64, device=dev)
        col = slot[:, None] * U + torch.arange(U, device=dev)
        targets[ep[:, None], col] = sample_time[idx][:, None] + offsets
        out, _ = robocache.align(streams, targets, target_lengths=counts * U,
                                 check=dev.type != "cuda")
        win = out[ep[:, None], col]
        return {k.key: win[:, :, k.c0:k.c1].index_select(1, k.cols) for k in resident.keys}

    return gather


def gather_alone(args, device, rank, world, batch):
    loader = window_loader(args, device, rank, world, batch_size=batch)
    order = loader.sample_indices(0).to(device)
    batches = [order[i * batch:(i + 1) * batch] for i in range(len(loader))]
    timeline = time_gather(loader.gather, batches, device, args.gather_repeat)
    row = {"batch": batch, "timeline": timeline,
           "windows_per_s": batch / timeline["median"],
           "targets_per_launch": batch * loader._resident.offsets.numel()}
    padded = time_gather(padded_rows(loader), batches, device, args.gather_repeat)
    row["padded_rows"] = padded
    row["padded_rows_windows_per_s"] = batch / padded["median"]
    return row


# ---- driver -------------------------------------------------------------------------------

def oracle_python(args):
    if args.lerobot_python:
        return args.lerobot_python
    path = os.path.join(ROOT, ".venv-lerobot", "bin", "python")
    return path if os.path.exists(path) else None


def print_table(result):
    rows = []
    for side in ("robocache", "lerobot"):
        r = result.get(side)
        if not r:
            continue
        t = r["train"]
        util = "-" if t["gpu_util_percent"] is None else f"{t['gpu_util_percent']:.0f}%"
        rows.append((r["loader"], t["data_s"]["median"] * 1e3, t["updt_s"]["median"] * 1e3,
                     t["data_fraction"] * 100, t["samples_per_s"], util,
                     r["alone"]["samples_per_s"], r["alone"]["samples_per_cpu_s"]))
    print(f"device {result['device']}, policy {result['policy']} ({result['preset']}: d_model "
          f"{result['d_model']}, {result['layers']} + {result['dec_layers']} layers), "
          f"{result['frames']} frames in {result['episodes']} episodes, batch "
          f"{result['batch_size']}, chunk {result['chunk']}, world size {result['world_size']}")
    print(f"dataset: {result['dataset']}")
    print(f"WindowLoader: {result['decoder']} on {result['decode_device']}, prefetch "
          f"{result['prefetch']}, decode_workers "
          f"{result['decode_workers']}, decode_threads {result['decode_threads']} per decoding "
          f"process ({result['cores']} cores allowed)")
    print(f"{'loader':<48} {'data ms':>9} {'updt ms':>9} {'data %':>7} {'samples/s':>10} "
          f"{'GPU':>5} {'alone/s':>10} {'alone/cpu-s':>11}")
    for row in rows:
        print(f"{row[0]:<48} {row[1]:9.2f} {row[2]:9.2f} {row[3]:7.1f} {row[4]:10.1f} "
              f"{row[5]:>5} {row[6]:10.1f} {row[7]:11.1f}")
    for g in result["robocache"]["gather"]:
        extra = f", padded rows {g['padded_rows_windows_per_s']:,.0f}" if "padded_rows" in g \
            else ""
        print(f"gather B={g['batch']}: {g['windows_per_s']:,.0f} windows/s "
              f"({g['timeline']['median'] * 1e3:.3f} ms){extra}")
    for k, v in result.get("ratios", {}).items():
        print(f"{k}: {v:.1f}")
    if len(result["per_rank"]) > 1:
        for r in result["per_rank"]:
            print(f"rank {r['rank']}: data {r['data_s_median'] * 1e3:.2f} ms "
                  f"({r['data_fraction'] * 100:.1f} %), update {r['updt_s_median'] * 1e3:.2f} ms, "
                  f"{r['samples_per_s']:.0f} samples/s")


PRESETS = {  # --preset: the small policy, and LeRobot's ACTConfig defaults
    "issue": {"d_model": 256, "layers": 4, "dec_layers": 0, "ff": None, "chunk": 50},
    "act": {"d_model": 512, "layers": 4, "dec_layers": 1, "ff": 3200, "chunk": 100},
}


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--policy", choices=sorted(VARIANTS), default="lowdim",
                   help="lowdim: SO-101 state + action chunk; image: lingzu video frames + "
                        "state + action chunk")
    p.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="model size: issue (d_model 256, 4 encoder layers, chunk 50) or act "
                        "(d_model 512, 4 encoder + 1 decoder layers, ff 3200, chunk 100)")
    p.add_argument("--repeat", type=int, default=50, help="copies of the fixture's episodes")
    p.add_argument("--batch-size", type=int, default=None, help="default 256 CUDA, 64 CPU")
    p.add_argument("--chunk", type=int, default=None, help="default 50")
    p.add_argument("--d-model", type=int, default=None, help="default 256 CUDA, 128 CPU")
    p.add_argument("--layers", type=int, default=None, help="encoder layers, default 4")
    p.add_argument("--dec-layers", type=int, default=None,
                   help="decoder layers (0: encoder only, the default)")
    p.add_argument("--ff", type=int, default=None, help="feed-forward width (4 d_model)")
    p.add_argument("--steps", type=int, default=None, help="default 200 CUDA, 30 CPU")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--alone-steps", type=int, default=None,
                   help="batches of the loaders alone (default 500 CUDA, 60 CPU)")
    p.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                   help="DataLoader workers of the baseline (default: the cores allowed)")
    p.add_argument("--prefetch", type=int, default=2, help="WindowLoader prefetch")
    p.add_argument("--decoder", choices=("pyav", "torchcodec"), default="pyav",
                   help="WindowLoader decoder")
    p.add_argument("--decode-device", choices=("cpu", "cuda"), default="cpu",
                   help="WindowLoader decode_device (cuda: NVDEC, --decoder torchcodec)")
    p.add_argument("--decode-workers", type=int, default=None,
                   help="WindowLoader decode worker processes per rank (image policy; default "
                        "min(8, cores allowed / ranks - 2), at least 0)")
    p.add_argument("--decode-threads", type=int, default=None,
                   help="WindowLoader decode threads per process that decodes (default: the "
                        "cores allowed / ranks, divided by the decode workers)")
    p.add_argument("--ddp-tuned", action="store_true",
                   help="DDP gradient_as_bucket_view + static_graph, fused AdamW on CUDA")
    p.add_argument("--cuda-graph", action="store_true",
                   help="WindowLoader side: the whole step in one CUDA graph (training_graph.py)")
    p.add_argument("--bucket-cap-mb", type=int, default=None, help="DDP bucket_cap_mb")
    p.add_argument("--gather-batches", type=int, nargs="*", default=None)
    p.add_argument("--gather-repeat", type=int, default=50)
    p.add_argument("--tag", default=None, help="added to the result file's name")
    p.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "robocache-bench"))
    p.add_argument("--dataset", default=None, help=argparse.SUPPRESS)
    p.add_argument("--side", choices=("all", "lerobot"), default="all", help=argparse.SUPPRESS)
    p.add_argument("--lerobot-python", default=None)
    p.add_argument("--skip-lerobot", action="store_true")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = p.parse_args(argv)
    cuda = args.device.startswith("cuda")
    preset = dict(PRESETS[args.preset or "issue"])
    if args.preset is None and not cuda:
        preset["d_model"] = 128
    for k, v in preset.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    args.batch_size = args.batch_size or (256 if cuda else 64)
    args.steps = args.steps or (200 if cuda else 30)
    args.alone_steps = args.alone_steps or (500 if cuda else 60)
    args.gather_batches = args.gather_batches or ([256, 1024, 4096, 16384] if cuda
                                                  else [64, 256, 1024])
    return args


def per_rank(result, world):
    """Every rank's training numbers (rank 0 gathers them): no rank may wait on data."""
    mine = {"rank": result["rank"], "data_s_median": result["train"]["data_s"]["median"],
            "updt_s_median": result["train"]["updt_s"]["median"],
            "data_fraction": result["train"]["data_fraction"],
            "samples_per_s": result["train"]["samples_per_s"],
            "gpu_util_percent": result["train"]["gpu_util_percent"]}
    if world == 1:
        return [mine]
    rows = [None] * world
    torch.distributed.all_gather_object(rows, mine)
    return rows


def main():
    args = parse()
    cuda = args.device.startswith("cuda")
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", 0))
    cores = len(os.sched_getaffinity(0)) // world
    if args.decode_workers is None:
        args.decode_workers = max(0, min(8, cores - 2)) \
            if VARIANTS[args.policy].image and args.decode_device == "cpu" else 0
    if args.decode_threads is None:
        args.decode_threads = max(1, cores // max(1, args.decode_workers))
    device = torch.device(f"cuda:{local}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    if args.side == "lerobot":
        print(json.dumps(run_lerobot(args, device)))
        return
    variant = VARIANTS[args.policy]
    args.dataset = args.dataset or os.path.join(
        args.work, f"{os.path.basename(variant.source)}_x{args.repeat}")
    if rank == 0:
        info = training_data.build(variant.source, args.dataset, args.repeat)
    if world > 1:
        if args.cuda_graph:  # NCCL collectives inside a captured graph
            os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0")
        torch.distributed.init_process_group("nccl" if cuda else "gloo")
        torch.distributed.barrier()
        info = json.load(open(os.path.join(args.dataset, "meta", "info.json")))
    result = {"benchmark": "training_loop", "device": torch.cuda.get_device_name(device)
              if cuda else cpu_model(), "cores": len(os.sched_getaffinity(0)),
              "command": "python3 " + " ".join(sys.argv), "commit": commit(),
              "policy": args.policy, "preset": args.preset or "issue",
              "dataset": f"{variant.source}: its episodes repeated {args.repeat}x into one "
                         "LeRobot v3.0 folder (bench/training_data.py; copies share the "
                         "video files)",
              "episodes": info["total_episodes"], "frames": info["total_frames"],
              "batch_size": args.batch_size, "chunk": args.chunk, "d_model": args.d_model,
              "layers": args.layers, "dec_layers": args.dec_layers, "ff": args.ff,
              "ddp_tuned": args.ddp_tuned, "bucket_cap_mb": args.bucket_cap_mb,
              "cuda_graph": args.cuda_graph,
              "prefetch": args.prefetch, "decode_threads": args.decode_threads,
              "decode_workers": args.decode_workers, "decoder": args.decoder,
              "decode_device": args.decode_device,
              "world_size": world, "load_average_before": list(os.getloadavg())}
    result["robocache"] = run_robocache(args, device, rank, world)
    result["per_rank"] = per_rank(result["robocache"], world)
    py = oracle_python(args)
    if rank == 0 and py and not args.skip_lerobot:
        cmd = [py, os.path.abspath(__file__), "--side", "lerobot", "--dataset", args.dataset]
        for k in ("device", "policy", "batch_size", "chunk", "d_model", "layers", "dec_layers",
                  "ff", "steps", "warmup", "alone_steps", "workers"):
            if getattr(args, k) is not None:
                cmd += [f"--{k.replace('_', '-')}", str(getattr(args, k))]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        if done.returncode:
            sys.exit(f"the LeRobot side failed (exit {done.returncode}): {' '.join(cmd)}")
        result["lerobot"] = json.loads(done.stdout.strip().splitlines()[-1])
        lr, rc = result["lerobot"], result["robocache"]
        result["ratios"] = {
            "training samples/s, WindowLoader / LeRobot":
                rc["train"]["samples_per_s"] / lr["train"]["samples_per_s"],
            "loader alone samples/s, WindowLoader / LeRobot":
                rc["alone"]["samples_per_s"] / lr["alone"]["samples_per_s"],
            "loader alone samples per CPU second, WindowLoader / LeRobot":
                rc["alone"]["samples_per_cpu_s"] / lr["alone"]["samples_per_cpu_s"]}
    result["load_average_after"] = list(os.getloadavg())
    if rank == 0:
        print_table(result)
        name = slug(result["device"]) if cuda else slug(cpu_model())
        parts = ["training_loop"] + ([args.policy] if args.policy != "lowdim" else []) + \
            ([args.tag] if args.tag else []) + [name]
        write_json(os.path.join(args.out, "_".join(parts) + ".json"), result)
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
