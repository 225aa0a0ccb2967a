"""PyTorch integration of voxelization: the custom ops (opcheck), autograd
for the features of dense sum / mean, torch.compile(fullgraph=True).

The library takes float32 points only, so torch.autograd.gradcheck cannot
run in float64. The gradient is checked two ways instead: exactly against
the autograd of a torch scatter (index_add_) reference whose point -> voxel
map comes from the NumPy oracle, and with gradcheck in float32 (finite
differences of the features, loose tolerances; points kept away from voxel
faces so that the steps do not move them across)."""

import warnings

import numpy as np
import pytest

from conftest import requires_torch, torch
from voxel_oracle import KITTI_OBJ, PRESETS, load_bin, random_cloud, voxel_keys

import robocache

pytestmark = requires_torch

SIZE, RANGE = (0.5, 0.25, 1.0), (0, 0, 0, 10, 8, 6)


def scatter_reference(points, offsets, size, rng, mode):
    """Dense sum / mean with torch index_add_ (differentiable) in float64, each
    point's voxel taken from the NumPy oracle."""
    pts = points.detach().numpy()
    bounds = [0, len(pts)] if offsets is None else offsets.tolist()
    _, _, grid, _ = voxel_keys(pts[:0], size, rng)
    G = int(np.prod(grid))
    feats = points[:, 3:] if points.shape[1] > 3 else points[:, :3]
    rows, cells = [], []
    for b in range(len(bounds) - 1):
        r, k, _, _ = voxel_keys(pts[bounds[b]:bounds[b + 1]], size, rng)
        rows.append(r + bounds[b])
        cells.append(k + b * G)
    rows, cells = torch.from_numpy(np.concatenate(rows)), torch.from_numpy(np.concatenate(cells))
    B, F = len(bounds) - 1, feats.shape[1]
    total = torch.zeros(B * G, F, dtype=torch.float64).index_add_(0, cells,
                                                                    feats[rows].double())
    if mode == "mean":
        count = torch.zeros(B * G, dtype=torch.float64).index_add_(
            0, cells, torch.ones(len(cells), dtype=torch.float64))
        total = total / count.clamp(min=1)[:, None]
    return total.reshape(B, grid[2], grid[1], grid[0], F).permute(0, 4, 1, 2, 3)


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("cols", [3, 5])
def test_gradient_equals_scatter_reference(mode, cols):
    a, b = random_cloud(1, 4000, cols), random_cloud(2, 3000, cols)
    points = torch.from_numpy(np.concatenate([a, b])).requires_grad_()
    offsets = torch.tensor([0, len(a), len(a), len(a) + len(b)])  # cloud 1 is empty
    out = robocache.voxelize(points, SIZE, RANGE, mode=mode, offsets=offsets)
    ref = scatter_reference(points, offsets, SIZE, RANGE, mode)
    torch.testing.assert_close(out, ref.float(), rtol=1e-6, atol=1e-6)
    weights = torch.randn(out.shape, generator=torch.Generator().manual_seed(3))
    (grad,) = torch.autograd.grad((out * weights).sum(), points)
    (ref_grad,) = torch.autograd.grad((ref * weights.double()).sum(), points)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-6, atol=0)
    assert grad.abs().sum() > 0
    if cols > 3:
        assert not grad[:, :3].any()  # the voxel assignment is piecewise constant


def test_gradient_on_real_cloud():
    pts = load_bin(KITTI_OBJ, 4)
    size, rng = PRESETS["pointpillars-kitti"][:2]
    points = torch.from_numpy(pts).requires_grad_()
    out = robocache.voxelize(points, size, rng, mode="mean")
    weights = torch.randn(out.shape, generator=torch.Generator().manual_seed(4))
    (grad,) = torch.autograd.grad((out * weights).sum(), points)
    ref = scatter_reference(points, None, size, rng, "mean")
    (ref_grad,) = torch.autograd.grad((ref * weights.double()).sum(), points)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-6, atol=0)


def _centred_cloud(seed, n, cols):
    """Points at least 0.2 voxel from every face (some far outside the range)."""
    g = np.random.default_rng(seed)
    grid = np.array([20, 32, 6])
    ijk = g.integers(0, 4, (n, 3)) * [5, 8, 1]  # few distinct voxels, several points each
    xyz = (ijk + 0.5 + g.uniform(-0.3, 0.3, (n, 3))) * SIZE
    xyz[: n // 8] += grid * SIZE  # out of range
    feats = g.uniform(-2, 2, (n, cols - 3))
    return torch.from_numpy(np.concatenate([xyz, feats], axis=1).astype(np.float32))


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("cols", [3, 5])
def test_gradcheck_float32(mode, cols):
    points = _centred_cloud(cols, 48, cols)
    offsets = torch.tensor([0, 30, 48])
    first = 3 if cols > 3 else 0
    fixed, feats = points[:, :first], points[:, first:].clone().requires_grad_()

    def f(x):
        out = robocache.voxelize(torch.cat([fixed, x], dim=1), SIZE, RANGE, mode=mode,
                                 offsets=offsets)
        return out[:, :, :, ::8, ::5]  # every cell a point can occupy (and empty ones)

    with warnings.catch_warnings():  # "not a double precision floating point"
        warnings.simplefilter("ignore", UserWarning)
        assert torch.autograd.gradcheck(f, (feats,), eps=1e-2, atol=2e-3, rtol=1e-3)


def test_max_has_no_gradient():
    points = torch.from_numpy(random_cloud(9, 500, 4)).requires_grad_()
    out = robocache.voxelize(points, SIZE, RANGE, mode="max")
    with pytest.raises(ValueError, match="mode 'max' has no gradient"):
        out.sum().backward()
    assert not robocache.voxelize(points, SIZE, RANGE, mode="count").requires_grad


def test_opcheck():
    points = torch.from_numpy(random_cloud(10, 2000, 4))
    offsets = torch.tensor([0, 700, 2000])
    size, rng = list(SIZE), [float(x) for x in RANGE]
    ops = torch.ops.robocache
    for mode, dtype in (("mean", torch.float32), ("count", torch.int32)):
        torch.library.opcheck(ops.voxelize.default,
                              (points.clone().requires_grad_(mode == "mean"), offsets, size, rng,
                               mode, dtype, None))
    for packed in (False, True):
        torch.library.opcheck(ops.voxelize_hard.default,
                              (points, offsets, size, rng, 3, 500, packed, None))
    torch.library.opcheck(ops.voxel_downsample.default, (points, offsets, size, None, None))
    torch.library.opcheck(ops.voxel_downsample.default, (points, None, size, rng, None))


def _pipeline(points, offsets):
    grid = robocache.voxelize(points, SIZE, RANGE, mode="mean", offsets=offsets)
    count = robocache.voxelize(points, SIZE, RANGE, mode="count", offsets=offsets)
    voxels, coords, num_points, num_voxels = robocache.voxelize_hard(
        points, SIZE, RANGE, 4, 3000, offsets=offsets, padded=True)
    return (grid * 2).sum() + count.sum(), voxels, coords, num_voxels


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_compile_fullgraph(backend):
    torch._dynamo.reset()
    points = torch.from_numpy(random_cloud(12, 5000, 4)).requires_grad_()
    offsets = torch.tensor([0, 2000, 5000])
    compiled = torch.compile(_pipeline, fullgraph=True, backend=backend)
    loss, *hard = compiled(points, offsets)
    loss.backward()
    grad = points.grad.clone()
    points.grad = None
    ref_loss, *ref_hard = _pipeline(points, offsets)
    ref_loss.backward()
    torch.testing.assert_close(loss, ref_loss)  # inductor may sum in another order
    assert torch.equal(grad, points.grad)
    for got, want in zip(hard, ref_hard):
        assert torch.equal(got, want)
