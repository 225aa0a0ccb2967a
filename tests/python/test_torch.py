"""PyTorch integration: custom ops (opcheck), autograd (gradcheck in float64),
torch.compile(fullgraph=True), out= ops, CUDA (skipped without a GPU)."""

import numpy as np
import pytest

from conftest import increasing_times, oracle, requires_cuda, requires_torch, torch

import robocache

pytestmark = requires_torch


def _problem(B=2, S=9, T=7, D=3, seed=0, dtype=None):
    rng = np.random.default_rng(seed)
    t = torch.from_numpy(increasing_times(rng, B, S, max_step=100))
    x = torch.from_numpy(rng.integers(-50, int(t.max()) + 50, size=(B, T)))
    v = torch.randn(B, S, D, dtype=dtype or torch.float64,
                    generator=torch.Generator().manual_seed(seed))
    return v, t, x


@pytest.mark.parametrize("method", ["linear", "nearest", "previous", "next"])
@pytest.mark.parametrize("extrapolate", ["clamp", "fill", "extrapolate"])
def test_gradcheck_resample(method, extrapolate):
    v, t, x = _problem()
    v.requires_grad_(True)
    lengths, target_lengths = torch.tensor([9, 4]), torch.tensor([7, 5])

    def f(values):
        return robocache.resample(values, t, x, lengths=lengths, target_lengths=target_lengths,
                                  method=method, extrapolate=extrapolate, fill_value=0.5,
                                  max_gap=60)

    assert torch.autograd.gradcheck(f, (v,))


def test_gradcheck_resample_unbatched_float_seconds():
    v, t, x = _problem(B=1)
    v = v[0, :, 0].clone().requires_grad_(True)  # [S], no channel axis
    ts, xs = t[0].double() / 1e9, x[0].double() / 1e9
    assert torch.autograd.gradcheck(
        lambda values: robocache.resample(values, ts, xs, extrapolate="extrapolate"), (v,))


def test_gradcheck_align_with_lengths():
    v, t, x = _problem()
    v2 = torch.randn(2, 9, dtype=torch.float64, requires_grad=True)
    v.requires_grad_(True)
    lengths = torch.tensor([9, 6])

    def f(a, b):
        streams = [robocache.Stream(a, t, name="a", extrapolate="extrapolate", lengths=lengths),
                   robocache.Stream(b, t, name="b", method="previous")]
        return robocache.align(streams, x, out_dtype=torch.float64)[0]

    assert torch.autograd.gradcheck(f, (v, v2))


def test_gradient_values_match_closed_form():
    """d out / d values for linear: (1 - w) on the left sample, w on the right."""
    v = torch.zeros(1, 3, 1, dtype=torch.float64, requires_grad=True)
    t = torch.tensor([[0, 10, 20]])
    x = torch.tensor([[2, 15]])
    robocache.resample(v, t, x).sum().backward()
    np.testing.assert_allclose(v.grad[0, :, 0].numpy(), [0.8, 0.2 + 0.5, 0.5])


def test_float32_output_of_float64_values_backpropagates():
    v, t, x = _problem()
    v.requires_grad_(True)
    out = robocache.resample(v, t, x, out_dtype=torch.float32)
    assert out.dtype == torch.float32
    out.sum().backward()
    assert v.grad.dtype == torch.float64 and v.grad.shape == v.shape


def test_slerp_gradient_is_an_error():
    v, t, x = _problem(D=4)
    v.requires_grad_(True)
    out = robocache.resample(v, t, x, method="slerp")
    with pytest.raises(ValueError, match="slerp has no gradient"):
        out.sum().backward()


def test_opcheck_resample_and_align():
    v, t, x = _problem(dtype=torch.float32)
    args = (v, t, x, None, None, "linear", "clamp", float("nan"), None, None, 0, "xyzw", None,
            None)
    torch.library.opcheck(torch.ops.robocache.resample.default, args)
    align_args = ([v, v[..., 0]], [t, t], [None, None], x, None, ["a", None], ["linear", "next"],
                  ["clamp", "fill"], [0.0, 1.0], [None, None], [None, 5], [0, 0],
                  ["xyzw", "xyzw"], None, None)
    torch.library.opcheck(torch.ops.robocache.align.default, align_args)


def _fused(v, t, x):
    out, valid = robocache.resample(v, t, x, return_valid=True, max_gap=80)
    both = robocache.align([robocache.Stream(v, t, name="a"),
                            robocache.Stream(v[..., 0], t, method="previous", time_offset=3)],
                           x, out_dtype=v.dtype)[0]
    return (out * 2).sum() + both.sum(), valid


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compile_fullgraph(backend):
    torch._dynamo.reset()
    v, t, x = _problem()
    v.requires_grad_(True)
    compiled = torch.compile(_fused, fullgraph=True, backend=backend)
    loss, valid = compiled(v, t, x)
    loss.backward()
    grad = v.grad.clone()
    v.grad = None
    ref_loss, ref_valid = _fused(v, t, x)
    ref_loss.backward()
    torch.testing.assert_close(loss, ref_loss)
    torch.testing.assert_close(grad, v.grad)
    assert torch.equal(valid, ref_valid)


def test_compile_inductor():
    torch._dynamo.reset()
    v, t, x = _problem(dtype=torch.float32)
    compiled = torch.compile(_fused, fullgraph=True, backend="inductor")
    loss, valid = compiled(v, t, x)
    ref_loss, ref_valid = _fused(v, t, x)
    torch.testing.assert_close(loss, ref_loss)
    assert torch.equal(valid, ref_valid)


def test_eager_path_equals_the_registered_op():
    """Plain eager calls skip the dispatcher; the result is the op's."""
    v, t, x = _problem(dtype=torch.float32)
    out, valid = robocache.resample(v, t, x, return_valid=True, max_gap=70)
    op_out, op_valid = torch.ops.robocache.resample(v, t, x, None, None, "linear", "clamp",
                                                    float("nan"), 70, None, 0, "xyzw", None,
                                                    None)
    assert torch.equal(out, op_out) and torch.equal(valid, op_valid)


def test_fake_tensor_mode_goes_through_the_fake_implementation():
    from torch._subclasses.fake_tensor import FakeTensorMode

    v, t, x = _problem(dtype=torch.float32)
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fv, ft, fx = (mode.from_tensor(a) for a in (v, t, x))
        out, valid = robocache.resample(fv, ft, fx, return_valid=True)
        aligned = robocache.align([robocache.Stream(fv, ft), robocache.Stream(fv[..., 0], ft)],
                                  fx, return_valid=False)
    assert out.shape == (2, 7, 3) and valid.shape == (2, 7) and valid.dtype == torch.bool
    assert aligned.shape == (2, 7, 4) and aligned.dtype == torch.float32


def test_out_argument_with_autograd_is_refused():
    v, t, x = _problem()
    v.requires_grad_(True)
    with pytest.raises(ValueError, match="out: .*does not support autograd"):
        robocache.resample(v, t, x, out=torch.empty(2, 7, 3, dtype=torch.float64))
    with torch.no_grad():
        out = torch.empty(2, 7, 3, dtype=torch.float64)
        assert robocache.resample(v, t, x, out=out) is out
    np.testing.assert_allclose(out.numpy(), oracle(v.detach().numpy(), t.numpy(),
                                                   x.numpy())[0], rtol=1e-12)


def test_align_out_argument():
    v, t, x = _problem()
    out = torch.zeros(2, 7, 4)
    valid = torch.zeros(2, 7, 2, dtype=torch.uint8)
    streams = [robocache.Stream(v, t), robocache.Stream(v[..., 1], t, method="nearest")]
    got, got_valid = robocache.align(streams, x, out=out, valid=valid)
    assert got is out and got_valid is valid
    ref, ref_valid = robocache.align(streams, x)
    torch.testing.assert_close(out, ref)
    assert torch.equal(valid.bool(), ref_valid)


def test_uniform_grid_torch():
    v, t, x = _problem()
    grid, lengths = robocache.uniform_grid([robocache.Stream(v, t)], 1e8)  # every 10 ns
    for b in range(2):
        n = int(lengths[b])
        expect = np.arange(int(t[b, 0]), int(t[b, -1]) + 1, 10)
        np.testing.assert_array_equal(grid[b, :n].numpy(), expect)
        assert (grid[b, n:] == grid[b, n - 1]).all()


@requires_cuda
def test_cuda_matches_cpu_and_uses_current_stream():
    v, t, x = _problem(dtype=torch.float32)
    ref, ref_valid = robocache.resample(v, t, x, return_valid=True)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        out, valid = robocache.resample(v.cuda(), t.cuda(), x.cuda(), return_valid=True)
    side.synchronize()
    assert out.device.type == "cuda"
    torch.testing.assert_close(out.cpu(), ref)
    assert torch.equal(valid.cpu(), ref_valid)
    vg = v.double().cuda().requires_grad_(True)
    robocache.resample(vg, t.cuda(), x.cuda()).sum().backward()
    vc = v.double().requires_grad_(True)
    robocache.resample(vc, t, x).sum().backward()
    torch.testing.assert_close(vg.grad.cpu(), vc.grad)


IMPORT_ORDER = r"""
import sys
import numpy as np
import robocache, robocache.convert, robocache.datasets
assert "torch" not in sys.modules, "import robocache imported torch"
import torch
rng = np.random.default_rng(0)
t, x = np.cumsum(rng.integers(1, 50, 40)), np.arange(5, 600, 37)
v = rng.standard_normal((40, 3))
want = robocache.resample(v, t, x)
f = torch.compile(lambda v, t, x: robocache.resample(v, t, x) * 2, fullgraph=True,
                  backend="eager")
got = f(torch.from_numpy(v), torch.from_numpy(t), torch.from_numpy(x))
np.testing.assert_array_equal(got.numpy(), want * 2)
p = rng.random((500, 3)).astype(np.float32)
want = robocache.voxel_downsample(p, voxel_size=[0.1, 0.1, 0.1])
got = robocache.voxel_downsample(torch.from_numpy(p), voxel_size=[0.1, 0.1, 0.1])
np.testing.assert_array_equal(got.numpy(), want)
print("ok")
"""


def test_import_does_not_import_torch_and_ops_register_at_the_first_tensor():
    """import robocache leaves torch out (start-up of every worker process);
    torch imported afterwards, the ops register at the first tensor, inside a
    torch.compile(fullgraph=True) trace too, with NumPy's results."""
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", IMPORT_ORDER], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-3000:]
