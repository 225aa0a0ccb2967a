"""Voxelization of CUDA tensors (PyTorch): every output bitwise equal to the
CPU backend on the same inputs (DESIGN §1.3: integer atomics, order-independent
maxima and f64 sums in input order, so exact), NaN / +-0 / +-inf features
included, unchecked (check=False) too, all points in one voxel; outputs on the
input's device, a non-default stream, gradients of sum / mean,
torch.compile(fullgraph=True). Skipped without a CUDA device or a CUDA
build."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
robocache = pytest.importorskip("robocache")

from voxel_oracle import KITTI, KITTI1, NUS, PRESETS, load_bin, special_cloud  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (torch.cuda.is_available() and robocache.has_cuda()),
    reason="needs a CUDA device and robocache built with CUDA")


def _batch():
    a, b = load_bin(KITTI, 4), load_bin(KITTI1, 4)
    c = special_cloud(5, 50000, 4)
    pts = torch.from_numpy(np.concatenate([a, b, c]))
    offsets = torch.tensor([0, len(a), len(a) + len(b), len(a) + len(b) + len(c)])
    return pts, offsets


def _same(gpu, cpu):
    gpu = gpu if isinstance(gpu, (tuple, list)) else (gpu,)
    cpu = cpu if isinstance(cpu, (tuple, list)) else (cpu,)
    for g, c in zip(gpu, cpu):
        if isinstance(g, dict):
            assert g == c
        else:
            assert g.device.type == "cuda"
            g = g.cpu()
            if g.dtype == torch.float32:  # bit for bit: NaN, -0.0
                g, c = g.view(torch.int32), c.view(torch.int32)
            assert torch.equal(g, c)


@pytest.mark.parametrize("mode,dtype", [("count", None), ("count", "float32"),
                                        ("occupancy", None), ("occupancy", "float32"),
                                        ("sum", None), ("mean", None), ("max", None)])
def test_dense_equals_cpu(mode, dtype):
    pts, offsets = _batch()
    size, rng = PRESETS["pointpillars-kitti"][:2]
    kw = dict(mode=mode, out_dtype=dtype, offsets=offsets, return_stats=True)
    _same(robocache.voxelize(pts.cuda(), size, rng, **{**kw, "offsets": offsets.cuda()}),
          robocache.voxelize(pts, size, rng, **kw))


@pytest.mark.parametrize("mode", ["count", "occupancy", "sum", "mean", "max"])
def test_dense_unchecked_equals_cpu(mode):
    pts, offsets = _batch()
    size, rng = PRESETS["pointpillars-kitti"][:2]
    out = robocache.voxelize(pts.cuda(), size, rng, mode=mode, offsets=offsets.cuda(),
                             check=False)
    _same(out, robocache.voxelize(pts, size, rng, mode=mode, offsets=offsets))


def test_one_voxel_equals_cpu():
    """All points in one voxel (the GPU's cub-sorted path), checked and not."""
    g = np.random.default_rng(3)
    pts = np.concatenate([g.uniform(0.01, 0.15, (30000, 3)), g.uniform(-1, 1, (30000, 2))], 1)
    pts = torch.from_numpy(pts.astype(np.float32))
    size, rng = PRESETS["pointpillars-kitti"][:2]
    for check in (True, False):
        for mode in ("sum", "mean", "max"):
            _same(robocache.voxelize(pts.cuda(), size, rng, mode=mode, check=check),
                  robocache.voxelize(pts, size, rng, mode=mode))
        _same(robocache.voxelize_hard(pts.cuda(), size, rng, 20, 10, check=check),
              robocache.voxelize_hard(pts, size, rng, 20, 10))


@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_hard_equals_cpu(preset, padded):
    pts, offsets = _batch()
    settings = robocache.voxel_preset(preset)
    _same(robocache.voxelize_hard(pts.cuda(), **settings, offsets=offsets.cuda(),
                                  padded=padded, return_stats=True),
          robocache.voxelize_hard(pts, **settings, offsets=offsets, padded=padded,
                                  return_stats=True))


@pytest.mark.parametrize("check", [True, False])
def test_row_count_paths_equal_cpu(check):
    """The Python layer takes the number of voxels from the checked stats
    (check=True) or reads it back (check=False), for one cloud and a batch."""
    pts = torch.from_numpy(load_bin(KITTI, 4))
    batch, offsets = _batch()
    size, rng, P, _ = PRESETS["second-kitti"]
    for M in (40000, 5000):  # 5000: max_voxels drops voxels of the KITTI scans
        _same(robocache.voxelize_hard(pts.cuda(), size, rng, P, M, check=check),
              robocache.voxelize_hard(pts, size, rng, P, M))
        _same(robocache.voxelize_hard(batch.cuda(), size, rng, P, M, offsets=offsets.cuda(),
                                      check=check),
              robocache.voxelize_hard(batch, size, rng, P, M, offsets=offsets))
    for leaf in (0.1, 1.0):
        _same(robocache.voxel_downsample(pts.cuda(), leaf, check=check),
              robocache.voxel_downsample(pts, leaf))


@pytest.mark.parametrize("with_range", [False, True])
def test_downsample_equals_cpu(with_range):
    pts, offsets = _batch()
    rng = PRESETS["centerpoint-nus"][1] if with_range else None
    _same(robocache.voxel_downsample(pts.cuda(), 0.2, point_cloud_range=rng,
                                     offsets=offsets.cuda()),
          robocache.voxel_downsample(pts, 0.2, point_cloud_range=rng, offsets=offsets))


def test_non_default_stream():
    pts = torch.from_numpy(load_bin(NUS, 5))
    size, rng = PRESETS["centerpoint-nus"][:2]
    want = robocache.voxelize(pts, size, rng, mode="mean")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        got = robocache.voxelize(pts.cuda(non_blocking=True), size, rng, mode="mean")
    s.synchronize()
    assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_gradient_equals_cpu(mode):
    pts, offsets = _batch()
    size, rng = PRESETS["pointpillars-kitti"][:2]
    grads = []
    for device in ("cpu", "cuda"):
        p = pts.to(device).requires_grad_()
        out = robocache.voxelize(p, size, rng, mode=mode, offsets=offsets.to(device))
        w = torch.randn(out.shape, generator=torch.Generator().manual_seed(1)).to(device)
        (grad,) = torch.autograd.grad((out * w).sum(), p)
        grads.append(grad.cpu())
    assert torch.equal(grads[0], grads[1])


def test_compile_fullgraph():
    torch._dynamo.reset()
    pts, offsets = _batch()
    pts, offsets = pts.cuda(), offsets.cuda()
    size, rng = PRESETS["pointpillars-kitti"][:2]

    def f(p):
        return robocache.voxelize(p, size, rng, mode="mean", offsets=offsets).sum(dim=1)

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    # bit for bit: the features hold NaN
    assert torch.equal(compiled(pts).view(torch.int32), f(pts).view(torch.int32))
