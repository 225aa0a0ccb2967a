"""One rank of a data-parallel training run fed by robocache.torch.WindowLoader,
launched by tests/python/test_window_loader_dist.py in two processes on the CPU:

    torchrun --standalone --nproc-per-node 2 dist_window_loader_script.py OUT [options]
    accelerate launch --multi_gpu --num_processes 2 dist_window_loader_script.py OUT \\
        --accelerate [options]

The loader takes its rank and world size from torch.distributed (no rank=,
world_size= arguments); a small model wrapped in DistributedDataParallel (by
hand, or by Accelerator.prepare) takes one SGD step per batch. Each rank writes
OUT/rank<r>.pt: its sample indices per epoch, the model's parameters as
constructed, after the wrapper's broadcast and after the last step, and what
the launcher set up.

The dataset, windows and model are module constants, so that the test can
recompute each rank's shard and replay the training in one process.
"""

import argparse
import datetime
import pathlib

import torch

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "robot" / "lerobot" / \
    "so101_record_test_v30_novideo"
EPISODES = [0, 1, 2]  # 373 + 374 + 372 = 1119 samples: an odd count, uneven over 2 ranks
WINDOWS = {"observation.state": [-1 / 30, 0.0], "action": [k / 30 for k in range(10)]}
BATCH_SIZE = 64
SEED = 5
EPOCHS = [0, 1]
LR = 0.05
SCALE = 0.01  # joint positions in degrees and percent: inputs and targets of order 1
TIMEOUT = datetime.timedelta(seconds=60)  # a collective that waits longer fails the rank


def make_loader(**kw):
    import robocache.torch as rt

    return rt.WindowLoader(str(DATA), WINDOWS, batch_size=BATCH_SIZE, device="cpu",
                           shuffle=True, seed=SEED, episodes=EPISODES, **kw)


def make_model():
    """A one-hidden-layer policy: the state window [B, 2, 6] to the action chunk [B, 10, 6]."""
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 32), torch.nn.Tanh(),
                               torch.nn.Linear(32, 60), torch.nn.Unflatten(1, (10, 6)))


def loss_of(model, batch):
    """Mean squared error of the predicted action chunk over the non-padded actions."""
    pred = model(batch["observation.state"] * SCALE)
    keep = (~batch["action_is_pad"]).unsqueeze(-1).to(pred.dtype)
    return ((pred - batch["action"] * SCALE) ** 2 * keep).sum() / (keep.sum() * 6)


def parameters(model):
    return [p.detach().clone() for p in model.parameters()]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out", type=pathlib.Path)
    p.add_argument("--accelerate", action="store_true",
                   help="set up through accelerate.Accelerator(cpu=True) and its prepare")
    p.add_argument("--drop-last", action="store_true")
    p.add_argument("--seed-by-rank", action="store_true",
                   help="torch.manual_seed(rank) first: the ranks' global RNGs differ")
    args = p.parse_args()
    torch.set_num_threads(1)
    accelerator = None
    if args.accelerate:
        from accelerate import Accelerator, InitProcessGroupKwargs

        # initialises torch.distributed (gloo on the CPU)
        accelerator = Accelerator(cpu=True,
                                  kwargs_handlers=[InitProcessGroupKwargs(timeout=TIMEOUT)])
    else:
        torch.distributed.init_process_group("gloo", timeout=TIMEOUT)
    rank = torch.distributed.get_rank()
    if args.seed_by_rank:
        torch.manual_seed(rank)
    loader = make_loader(drop_last=args.drop_last)
    model = make_model()
    constructed = parameters(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    if accelerator is not None:
        model, optimizer, prepared = accelerator.prepare(model, optimizer, loader)
        launcher = {"distributed_type": str(accelerator.distributed_type),
                    "num_processes": accelerator.num_processes,
                    "process_index": accelerator.process_index,
                    "prepare_returned_the_loader": prepared is loader}
    else:
        model = torch.nn.parallel.DistributedDataParallel(model)  # broadcasts rank 0's weights
        launcher = {}
    initial = parameters(model)
    epochs = {}
    for epoch in EPOCHS:
        loader.set_epoch(epoch)
        seen = []
        for batch in loader:
            optimizer.zero_grad()
            loss = loss_of(model, batch)
            if accelerator is not None:
                accelerator.backward(loss)
            else:
                loss.backward()  # DDP averages the gradients of all ranks
            optimizer.step()
            seen.append(batch["sample_index"])
        epochs[epoch] = torch.cat(seen)
    torch.save({"rank": loader.rank, "world_size": loader.world_size,
                "dist_rank": rank, "dist_world_size": torch.distributed.get_world_size(),
                "backend": torch.distributed.get_backend(), "batches": len(loader),
                "epochs": epochs, "constructed": constructed, "initial": initial,
                "final": parameters(model), "launcher": launcher},
               args.out / f"rank{rank}.pt")
    torch.distributed.barrier()
    if accelerator is not None:
        accelerator.end_training()
    else:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
