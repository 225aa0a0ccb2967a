"""robocache.torch.WindowLoader in real data-parallel runs: two CPU processes
(gloo) launched by torchrun and by `accelerate launch`, each running
tests/python/dist_window_loader_script.py on the LeRobot so101 fixture
(data/robot/lerobot, 3 episodes, 1119 samples: an odd count). Each rank's
loader takes rank and world size from torch.distributed and feeds a model
wrapped in DistributedDataParallel (by hand, or by Accelerator.prepare).

Checked against torch.utils.data.DistributedSampler (the sharding the loader
documents it follows) and against a replay in this process: ranks draw
disjoint shards of one permutation per epoch that together cover the epoch
once (drop_last: less the last N mod 2 samples and each rank's partial batch;
else one sample wraps around), equal to WindowLoader(rank=, world_size=)
built here; the models end equal on both ranks and equal to one model trained
on the mean loss of both ranks' batches (the gradients were averaged over the
ranks' real batches); ranks whose global RNGs differ draw the same shards."""

import importlib.util
import os
import signal
import subprocess
import sys

import pytest

from conftest import requires_torch, torch

import dist_window_loader_script as job

pytestmark = requires_torch
SCRIPT = job.__file__
WORLD = 2
LAUNCH_TIMEOUT_S = 240


def _launch(cmd, tmp_path):
    """Runs a launcher command; on a hang its process tree is stopped and the test fails."""
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HOME=str(tmp_path / "hf"))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=LAUNCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)  # the launcher stops its workers
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        pytest.fail(f"{' '.join(cmd)} did not finish in {LAUNCH_TIMEOUT_S} s:\n{out[-4000:]}")
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{out[-4000:]}"
    return [torch.load(tmp_path / f"rank{r}.pt") for r in range(WORLD)]


def _torchrun(tmp_path, *options):
    return _launch([sys.executable, "-m", "torch.distributed.run", "--standalone",
                    "--nproc-per-node", str(WORLD), SCRIPT, str(tmp_path), *options], tmp_path)


def _sampler_shard(num_samples, rank, epoch, drop_last):
    sampler = torch.utils.data.DistributedSampler(
        range(num_samples), num_replicas=WORLD, rank=rank, shuffle=True, seed=job.SEED,
        drop_last=drop_last)
    sampler.set_epoch(epoch)
    return list(sampler)


def _replay(ranks, reference):
    """The parameters of one model trained, from rank 0's initial parameters, on
    the mean loss of the ranks' batches, step by step (DDP's averaged gradient)."""
    model = job.make_model()
    with torch.no_grad():
        for p, q in zip(model.parameters(), ranks[0]["initial"]):
            p.copy_(q)
    optimizer = torch.optim.SGD(model.parameters(), lr=job.LR)
    for epoch in job.EPOCHS:
        shards = [r["epochs"][epoch] for r in ranks]
        for i in range(ranks[0]["batches"]):
            optimizer.zero_grad()
            losses = [job.loss_of(model, reference.gather(s[i * job.BATCH_SIZE:
                                                            (i + 1) * job.BATCH_SIZE]))
                      for s in shards]
            (sum(losses) / WORLD).backward()
            optimizer.step()
    return [p.detach() for p in model.parameters()]


def _check(ranks, drop_last):
    """Every property of a finished two-rank run (module docstring)."""
    reference = job.make_loader(rank=0, world_size=1)
    n = reference.num_samples
    assert n % WORLD == 1  # the fixture's count is uneven over the ranks
    per_rank = n // WORLD if drop_last else -(-n // WORLD)
    batches = per_rank // job.BATCH_SIZE if drop_last else -(-per_rank // job.BATCH_SIZE)
    for r, got in enumerate(ranks):
        assert (got["dist_rank"], got["dist_world_size"], got["backend"]) == (r, WORLD, "gloo")
        assert (got["rank"], got["world_size"]) == (r, WORLD)  # from torch.distributed
        assert got["batches"] == batches
    for epoch in job.EPOCHS:
        shards = [got["epochs"][epoch].tolist() for got in ranks]
        for r, shard in enumerate(shards):
            simulated = job.make_loader(rank=r, world_size=WORLD, drop_last=drop_last)
            want = _sampler_shard(n, r, epoch, drop_last)
            assert simulated.sample_indices(epoch).tolist() == want, (epoch, r)
            # iteration gives the shard, less its last partial batch with drop_last
            assert shard == want[:batches * job.BATCH_SIZE], (epoch, r)
        together = shards[0] + shards[1]
        if drop_last:
            assert len(set(together)) == len(together) == WORLD * batches * job.BATCH_SIZE
        else:  # the whole epoch; the wrap repeats the permutation's first sample
            assert sorted(set(together)) == list(range(n)) and len(together) == n + 1
    assert not torch.equal(ranks[0]["epochs"][0], ranks[0]["epochs"][1])  # set_epoch
    for a, b in zip(ranks[0]["initial"], ranks[1]["initial"]):
        assert torch.equal(a, b)  # rank 0's weights broadcast by the wrapper
    for a, b, start in zip(ranks[0]["final"], ranks[1]["final"], ranks[0]["initial"]):
        assert torch.equal(a, b)  # the same averaged gradient on both ranks
        assert not torch.equal(a, start)
    for got, want in zip(ranks[0]["final"], _replay(ranks, reference)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_torchrun_ddp_ranks_draw_disjoint_shards(tmp_path):
    _check(_torchrun(tmp_path), drop_last=False)


def test_torchrun_ranks_with_different_global_rngs_draw_the_same_order(tmp_path):
    ranks = _torchrun(tmp_path, "--seed-by-rank", "--drop-last")
    # the ranks' global RNGs did differ: their models were initialised differently
    assert not all(torch.equal(a, b) for a, b in zip(ranks[0]["constructed"],
                                                    ranks[1]["constructed"]))
    _check(ranks, drop_last=True)


@pytest.mark.skipif(importlib.util.find_spec("accelerate") is None,
                    reason="accelerate is not installed (requirements-test.txt)")
def test_accelerate_launch_ranks_draw_disjoint_shards(tmp_path):
    ranks = _launch([sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
                     "--num_processes", str(WORLD), "--num_machines", "1",
                     "--main_process_port", "0", "--mixed_precision", "no",
                     "--dynamo_backend", "no", SCRIPT, str(tmp_path), "--accelerate",
                     "--drop-last"], tmp_path)
    for r, got in enumerate(ranks):
        assert got["launcher"] == {"distributed_type": "DistributedType.MULTI_CPU",
                                   "num_processes": WORLD, "process_index": r,
                                   "prepare_returned_the_loader": True}
    _check(ranks, drop_last=True)
