"""robocache.torch.WindowLoader on a CUDA device: the same batches as the CPU
backend (the EuRoC episodes of test_window_loader.py; also paged, and with an
image key, also decoded in worker processes), batches computed ahead on a side stream equal those computed when
asked for, and one step captured in a CUDA graph replays to the eager result.
Skipped without a CUDA device."""

import pytest

from conftest import requires_cuda, torch
from test_window_loader import _loader, _recording, coded_frames

pytestmark = requires_cuda


@pytest.fixture
def rec(euroc_imu, euroc_gt, euroc_cam):
    return _recording(euroc_imu, euroc_gt, euroc_cam)


def _same_batches(cpu, gpu):
    count = 0
    for x, y in zip(cpu, gpu):
        count += 1
        for k in x:
            assert y[k].device.type == "cuda"
            if x[k].dtype.is_floating_point:
                torch.testing.assert_close(y[k].cpu(), x[k], rtol=1e-6, atol=1e-6)
            else:
                assert torch.equal(y[k].cpu(), x[k]), k
    assert count == len(cpu) > 0


def test_cuda_batches_equal_the_cpu_backend(rec):
    _same_batches(_loader(rec, seed=9), _loader(rec, seed=9, device="cuda"))


def test_cuda_paged_with_images_equals_the_cpu_backend(euroc_imu, euroc_gt, euroc_cam):
    rec = _recording(euroc_imu, euroc_gt, euroc_cam, frames=coded_frames)
    kw = dict(seed=5, windows={"cam": [-0.1, 0.0, 0.05], "imu": {"offsets": [0.0, 0.3],
                                                                 "method": "linear"}})
    budget = int(_loader(rec, **kw).timeline.episode_bytes().max()) + 1
    cpu = _loader(rec, max_device_bytes=budget, **kw)
    gpu = _loader(rec, device="cuda", max_device_bytes=budget, **kw)
    assert len(gpu.groups) > 1 and gpu.groups == cpu.groups
    _same_batches(cpu, gpu)


def test_cuda_decode_workers_equal_the_cpu_backend(euroc_imu, euroc_gt, euroc_cam):
    """Image keys decoded in worker processes forked from a CUDA process (no CUDA in
    them), pinned by DataLoader and copied asynchronously: the CPU backend's batches."""
    import multiprocessing

    rec = _recording(euroc_imu, euroc_gt, euroc_cam, frames=coded_frames)
    kw = dict(seed=5, windows={"cam": [-0.1, 0.0, 0.05], "imu": [0.0]})
    gpu = _loader(rec, device="cuda", decode_workers=2, **kw)
    _same_batches(_loader(rec, **kw), gpu)
    del gpu
    assert multiprocessing.active_children() == []


def test_cuda_graph_of_one_step_replays(rec):
    loader = _loader(rec, seed=4, device="cuda", batch_size=32, drop_last=True)
    order = loader.sample_indices(0).cuda()
    static = order[:32].clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        loader.gather(static)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = loader.gather(static)
    for i in range(1, len(loader)):
        static.copy_(order[i * 32:(i + 1) * 32])
        graph.replay()
        eager = loader.gather(order[i * 32:(i + 1) * 32])
        for k in eager:
            assert torch.equal(captured[k], eager[k]), k


def test_cuda_prefetch_on_a_side_stream_gives_the_same_batches(rec):
    """Batches computed ahead on the side stream equal those computed when
    asked for (prefetch=0), also when the caller consumes on a stream of its
    own and keeps every batch (a batch handed out is never overwritten), and
    across a resume in the middle of an epoch."""
    plain = [{k: v.clone() for k, v in b.items()}
             for b in _loader(rec, seed=6, device="cuda", prefetch=0)]
    mine = torch.cuda.Stream()
    ahead = _loader(rec, seed=6, device="cuda", prefetch=2)
    with torch.cuda.stream(mine):
        it = iter(ahead)
        kept = [next(it) for _ in range(3)]
        # work on the caller's stream that reads the batch while the next is computed
        sums = [b["imu"].double().nan_to_num().sum() for b in kept]
        state = ahead.state_dict()
        it.close()
    torch.cuda.synchronize()
    assert state["batch"] == 3
    resumed = _loader(rec, seed=6, device="cuda", prefetch=2)
    resumed.load_state_dict(state)
    got = kept + list(resumed)
    assert len(got) == len(plain)
    for x, y in zip(plain, got):
        for k in x:
            assert torch.equal(x[k], y[k]), k
    for b, s in zip(plain, sums):
        assert torch.equal(b["imu"].double().nan_to_num().sum(), s)
