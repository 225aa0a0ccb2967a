"""A training loop fed by robocache.torch.WindowLoader against one fed by
LeRobotDataset + torch.utils.data.DataLoader, same machine, same run.

    python3 bench/bench_training_loop.py [--device cpu|cuda] [--repeat 50] [--out bench/results]
    torchrun --nproc-per-node 8 bench/bench_training_loop.py --device cuda   # one shard per rank

Dataset: the real LeRobot v3.0 fixture data/robot/lerobot/so101_record_test_v30_novideo
(SO-101 arm, 4 episodes, 6-D state and action, 30 Hz) with its episodes repeated --repeat
times into one LeRobot v3.0 folder (written once under --work; the printout says how big).
Windows: observation.state at [-1/30, 0] s, action chunk of --chunk frames (k / 30 s).
Policy: ACT-style, a --layers-layer pre-norm transformer encoder (d_model --d-model) over
2 state tokens and --chunk learned action queries, L1 loss on the non-padded actions,
AdamW; bf16 autocast on CUDA, float32 on the CPU; under torchrun wrapped in
DistributedDataParallel, each rank fed its own shard.
Per step: data_s = waiting for the next batch (baseline: + .to(device)), updt_s =
forward + backward + optimizer step (both end with a device synchronisation on CUDA), so
samples/s = batch / (data_s + updt_s); GPU utilisation sampled through NVML (pynvml)
when present. Also: the loaders alone (no model: samples/s of wall time, and samples per
CPU second of the process and its DataLoader workers, the measure that holds on a shared
host) and WindowLoader.gather
alone (windows/s, a window = one sample's state window and action chunk), with the
alternative layout of per-episode padded rows [E, S_max, D] and scattered targets.
The baseline runs in the LeRobot oracle environment (.venv-lerobot,
scripts/install-lerobot-oracle.sh, or --lerobot-python) as a subprocess of this script.
Writes <out>/training_loop_<device>.json (rank 0) and prints a table.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import torch
from torch import nn

from bench_common import cpu_model, slug, write_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "data", "robot", "lerobot", "so101_record_test_v30_novideo")
FPS = 30


# ---- the dataset --------------------------------------------------------------------------

def build_dataset(dst, repeat):
    """The fixture's episodes repeated `repeat` times as one LeRobot v3.0 folder
    without video features (the fixture has no videos)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamp = os.path.join(dst, "meta", "info.json")
    if os.path.exists(stamp):
        return json.load(open(stamp))
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(os.path.join(dst, "data", "chunk-000"))
    os.makedirs(os.path.join(dst, "meta", "episodes", "chunk-000"))
    data = pq.read_table(os.path.join(SOURCE, "data", "chunk-000", "file-000.parquet"))
    eps = pq.read_table(os.path.join(SOURCE, "meta", "episodes", "chunk-000",
                                     "file-000.parquet"))
    info = json.load(open(os.path.join(SOURCE, "meta", "info.json")))
    frames, episodes = data.num_rows, eps.num_rows

    def shifted(table, shifts):
        cols = {}
        for name in table.schema.names:
            col = table[name]
            if name in shifts:
                col = pa.compute.add(col, pa.scalar(shifts[name], col.type))
            cols[name] = col
        return pa.table(cols, schema=table.schema)

    pq.write_table(pa.concat_tables(
        [shifted(data, {"episode_index": r * episodes, "index": r * frames})
         for r in range(repeat)]), os.path.join(dst, "data", "chunk-000", "file-000.parquet"))
    pq.write_table(pa.concat_tables(
        [shifted(eps, {"episode_index": r * episodes, "dataset_from_index": r * frames,
                       "dataset_to_index": r * frames}) for r in range(repeat)]),
        os.path.join(dst, "meta", "episodes", "chunk-000", "file-000.parquet"))
    for name in ("tasks.parquet", "stats.json"):
        shutil.copy(os.path.join(SOURCE, "meta", name), os.path.join(dst, "meta", name))
    info["features"] = {k: f for k, f in info["features"].items() if f.get("dtype") != "video"}
    info.update(total_episodes=episodes * repeat, total_frames=frames * repeat,
                splits={"train": f"0:{episodes * repeat}"})
    with open(stamp + ".tmp", "w") as f:
        json.dump(info, f, indent=2)
    os.replace(stamp + ".tmp", stamp)
    return info


def windows(chunk):
    return {"observation.state": [-1 / FPS, 0.0], "action": [k / FPS for k in range(chunk)]}


# ---- the policy and the loop ----------------------------------------------------------------

class Policy(nn.Module):
    """ACT-style: state tokens and learned action queries through a transformer
    encoder; the queries' outputs are the action chunk."""

    def __init__(self, state_dim, action_dim, n_obs, chunk, d_model, layers):
        super().__init__()
        self.n_obs = n_obs
        self.obs = nn.Linear(state_dim, d_model)
        self.queries = nn.Parameter(torch.randn(chunk, d_model) * 0.02)
        self.pos = nn.Parameter(torch.zeros(n_obs + chunk, d_model))
        layer = nn.TransformerEncoderLayer(d_model, max(1, d_model // 64), 4 * d_model,
                                           dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, action_dim)

    def forward(self, state):
        q = self.queries.expand(state.shape[0], -1, -1)
        x = torch.cat([self.obs(state), q], dim=1) + self.pos
        return self.head(self.encoder(x)[:, self.n_obs:])


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
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train(batches, device, args, to_device):
    """Runs warm-up + timed steps; per-step data_s / updt_s statistics."""
    torch.manual_seed(0)
    model = Policy(6, 6, 2, args.chunk, args.d_model, args.layers).to(device)
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        model = nn.parallel.DistributedDataParallel(model)  # gradients all-reduced per step
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else \
        torch.autocast("cpu", enabled=False)
    data_s, updt_s = [], []
    it = iter(batches)
    with GpuUtil(device) as util:
        for step in range(args.warmup + args.steps):
            if step == args.warmup:
                util.samples.clear()
            t0 = time.perf_counter()
            batch = to_device(next(it))
            sync(device)
            t1 = time.perf_counter()
            with autocast:
                pred = model(batch["observation.state"])
                err = (pred.float() - batch["action"]).abs().mean(-1)
                loss = (err * ~batch["action_is_pad"]).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sync(device)
            t2 = time.perf_counter()
            if step >= args.warmup:
                data_s.append(t1 - t0)
                updt_s.append(t2 - t1)
    step_s = [d + u for d, u in zip(data_s, updt_s)]
    return {"data_s": stats(data_s), "updt_s": stats(updt_s),
            "samples_per_s": args.batch_size / statistics.median(step_s),
            "data_fraction": statistics.median(data_s) / statistics.median(step_s),
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

    ds = LeRobotDataset("local/bench", root=args.dataset, delta_timestamps=windows(args.chunk))
    workers = args.workers

    def make():
        return torch.utils.data.DataLoader(
            ds, batch_size=args.batch_size, shuffle=True, num_workers=workers, drop_last=True,
            pin_memory=device.type == "cuda", persistent_workers=workers > 0,
            prefetch_factor=2 if workers > 0 else None)

    def to_device(b):
        return {k: b[k].to(device, non_blocking=True)
                for k in ("observation.state", "action", "action_is_pad")}

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

    return rt.WindowLoader(rd.open(args.dataset), windows(args.chunk),
                           batch_size=kw.pop("batch_size", args.batch_size), device=device,
                           shuffle=True, seed=0, drop_last=True, rank=rank, world_size=world,
                           **kw)


def run_robocache(args, device, rank, world):
    import robocache

    loader = window_loader(args, device, rank, world)
    result = {"loader": "robocache.torch.WindowLoader", "frames": loader.num_samples,
              "robocache_version": robocache.__version__, "torch_version": torch.__version__,
              "python": platform.python_version(), "rank": rank, "world_size": world}
    result["train"] = train(forever(loader), device, args, lambda b: b)
    result["alone"] = loader_alone(forever(loader), device, args, lambda b: b)
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
    print(f"device {result['device']}, {result['frames']} frames in {result['episodes']} "
          f"episodes, batch {result['batch_size']}, chunk {result['chunk']}")
    print(f"{'loader':<45} {'data ms':>9} {'updt ms':>9} {'data %':>7} {'samples/s':>10} "
          f"{'GPU':>5} {'alone/s':>10} {'alone/cpu-s':>11}")
    for row in rows:
        print(f"{row[0]:<45} {row[1]:9.2f} {row[2]:9.2f} {row[3]:7.1f} {row[4]:10.1f} "
              f"{row[5]:>5} {row[6]:10.1f} {row[7]:11.1f}")
    for g in result["robocache"]["gather"]:
        extra = f", padded rows {g['padded_rows_windows_per_s']:,.0f}" if "padded_rows" in g \
            else ""
        print(f"gather B={g['batch']}: {g['windows_per_s']:,.0f} windows/s "
              f"({g['timeline']['median'] * 1e3:.3f} ms){extra}")
    for k, v in result.get("ratios", {}).items():
        print(f"{k}: {v:.1f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--repeat", type=int, default=50, help="copies of the fixture's episodes")
    p.add_argument("--batch-size", type=int, default=None, help="default 256 CUDA, 64 CPU")
    p.add_argument("--chunk", type=int, default=50)
    p.add_argument("--d-model", type=int, default=None, help="default 256 CUDA, 128 CPU")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--steps", type=int, default=None, help="default 200 CUDA, 30 CPU")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--alone-steps", type=int, default=None,
                   help="batches of the loaders alone (default 500 CUDA, 60 CPU)")
    p.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                   help="DataLoader workers of the baseline (default: the cores allowed)")
    p.add_argument("--gather-batches", type=int, nargs="*", default=None)
    p.add_argument("--gather-repeat", type=int, default=50)
    p.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "robocache-bench"))
    p.add_argument("--dataset", default=None, help=argparse.SUPPRESS)
    p.add_argument("--side", choices=("all", "lerobot"), default="all", help=argparse.SUPPRESS)
    p.add_argument("--lerobot-python", default=None)
    p.add_argument("--skip-lerobot", action="store_true")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = p.parse_args()
    cuda = args.device.startswith("cuda")
    args.batch_size = args.batch_size or (256 if cuda else 64)
    args.d_model = args.d_model or (256 if cuda else 128)
    args.steps = args.steps or (200 if cuda else 30)
    args.alone_steps = args.alone_steps or (500 if cuda else 60)
    args.gather_batches = args.gather_batches or ([256, 1024, 4096, 16384] if cuda
                                                  else [64, 256, 1024])
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device(f"cuda:{local}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    if args.side == "lerobot":
        print(json.dumps(run_lerobot(args, device)))
        return
    args.dataset = args.dataset or os.path.join(args.work, f"so101_x{args.repeat}")
    if rank == 0:
        info = build_dataset(args.dataset, args.repeat)
    if world > 1:
        torch.distributed.init_process_group("nccl" if cuda else "gloo")
        torch.distributed.barrier()
        info = json.load(open(os.path.join(args.dataset, "meta", "info.json")))
    result = {"benchmark": "training_loop", "device": torch.cuda.get_device_name(device)
              if cuda else cpu_model(), "cores": len(os.sched_getaffinity(0)),
              "command": "python3 " + " ".join(sys.argv), "commit": commit(),
              "dataset": f"{SOURCE} episodes repeated {args.repeat}x (LeRobot v3.0)",
              "episodes": info["total_episodes"], "frames": info["total_frames"],
              "batch_size": args.batch_size, "chunk": args.chunk, "d_model": args.d_model,
              "layers": args.layers, "world_size": world,
              "load_average_before": list(os.getloadavg())}
    result["robocache"] = run_robocache(args, device, rank, world)
    py = oracle_python(args)
    if rank == 0 and py and not args.skip_lerobot:
        cmd = [py, os.path.abspath(__file__), "--side", "lerobot", "--dataset", args.dataset]
        for k in ("device", "batch_size", "chunk", "d_model", "layers", "steps", "warmup",
                  "alone_steps", "workers"):
            cmd += [f"--{k.replace('_', '-')}", str(getattr(args, k))]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
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
        write_json(os.path.join(args.out, f"training_loop_{name}.json"), result)
    if world > 1:
        torch.distributed.destroy_process_group()


def commit():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


if __name__ == "__main__":
    main()
