"""check= of resample / align / voxelize / voxelize_hard / voxel_downsample
(robocache_ctx_set_sync_checks, docs/python.md "check=False").

CPU (always run): check=False is accepted and changes nothing — the CPU
backend always checks, so bad data still raises the same error and good data
gives the same outputs and stats (NumPy and PyTorch, the custom ops included).
CUDA (skipped without a device and a CUDA build): with check=False bad rows
come out NaN with valid False instead of raising, good rows equal the CPU
results, voxel stats hold only points_in (-1 elsewhere); with check=True the
same inputs raise the CPU path's message."""

import math

import numpy as np
import pytest

import robocache

torch = pytest.importorskip("torch")

requires_gpu = pytest.mark.skipif(
    not (torch.cuda.is_available() and robocache.has_cuda()),
    reason="needs a CUDA device and robocache built with CUDA")

B, S, T, D = 3, 30, 20, 4
RANGE = (0, 0, 0, 10, 10, 10)


def _problem(xp=np):
    """int64 ns times at ~100 Hz, targets inside every row, lengths [B] = S."""
    rng = np.random.default_rng(4)
    times = 1_000_000_000 + np.cumsum(rng.integers(9_000_000, 11_000_000, (B, S)), axis=1)
    targets = np.stack([rng.integers(times[b, 0], times[b, -1], T) for b in range(B)])
    values = rng.uniform(-1, 1, (B, S, D)).astype(np.float32)
    lengths = np.full(B, S, dtype=np.int64)
    if xp is np:
        return values, times, targets, lengths
    return tuple(torch.from_numpy(x) for x in (values, times, targets, lengths))


def _bad_times(times):
    """Row 1 not increasing at index 5."""
    times = times.copy() if isinstance(times, np.ndarray) else times.clone()
    times[1, 5] = times[1, 4]
    return times


def _message(fn):
    with pytest.raises(ValueError) as e:
        fn()
    return str(e.value)


def _cloud(n=2000, seed=9):
    rng = np.random.default_rng(seed)
    pts = rng.uniform(-1, 11, (n, 4)).astype(np.float32)
    pts[::50, 0] = np.nan
    return pts


# ---- CPU: accepted, no effect -------------------------------------------------------

@pytest.mark.parametrize("xp", ["numpy", "torch"])
def test_cpu_resample_ignores_check(xp):
    values, times, targets, lengths = _problem(np if xp == "numpy" else torch)
    kw = dict(lengths=lengths, return_valid=True, extrapolate="fill")
    on = robocache.resample(values, times, targets, **kw)
    off = robocache.resample(values, times, targets, check=False, **kw)
    for a, b in zip(on, off):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    bad = _bad_times(times)
    msgs = [_message(lambda: robocache.resample(values, bad, targets, check=c, **kw))
            for c in (True, False)]
    assert msgs[0] == msgs[1] and "row 1, index 5" in msgs[0]


def test_cpu_align_ignores_check():
    values, times, targets, _ = _problem()
    late = targets.copy()
    late[2, 3] = times[2, -1] + 1  # out of range
    streams = [robocache.Stream(values, times, name="imu", extrapolate="error")]
    out, valid = robocache.align(streams, targets, check=False)
    ref, ref_valid = robocache.align(streams, targets)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(valid, ref_valid)
    msgs = [_message(lambda: robocache.align(streams, late, check=c)) for c in (True, False)]
    assert msgs[0] == msgs[1] and "target out of range: row 2, index 3" in msgs[0]


def test_cpu_torch_custom_ops_take_check():
    """The registered ops (autograd path) accept check and give the same
    outputs and gradients; bad data raises through them too."""
    values, times, targets, lengths = _problem(torch)
    grads = []
    for check in (True, False):
        v = values.double().requires_grad_(True)
        out = robocache.resample(v, times, targets, lengths=lengths, check=check)
        out.sum().backward()
        grads.append((out.detach(), v.grad))
    torch.testing.assert_close(grads[0], grads[1], rtol=0, atol=0)
    args = (values, times, targets, lengths, None, "linear", "clamp", math.nan, None, None, 0,
            "xyzw", None, None, False)
    torch.library.opcheck(torch.ops.robocache.resample.default, args)
    v = values.double().requires_grad_(True)
    with pytest.raises(ValueError, match="row 1, index 5"):
        robocache.resample(v, _bad_times(times), targets, check=False)


@pytest.mark.parametrize("xp", ["numpy", "torch"])
def test_cpu_voxel_ignores_check(xp):
    pts = _cloud()
    offsets = np.array([0, 700, len(pts)])
    bad = np.array([0, 900, 700, len(pts)])
    if xp == "torch":
        pts, offsets, bad = (torch.from_numpy(x) for x in (pts, offsets, bad))
    calls = [
        lambda off, c: robocache.voxelize(pts, 1.0, RANGE, offsets=off, return_stats=True,
                                          check=c),
        lambda off, c: robocache.voxelize_hard(pts, 0.5, RANGE, 5, 300, offsets=off,
                                               padded=True, return_stats=True, check=c),
        lambda off, c: robocache.voxel_downsample(pts, 1.0, point_cloud_range=RANGE, offsets=off,
                                                  return_stats=True, check=c),
    ]
    for call in calls:
        on, off = call(offsets, True), call(offsets, False)
        assert on[-1] == off[-1] and on[-1]["points_dropped_nonfinite"] == 40
        for a, b in zip(on[:-1], off[:-1]):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        msgs = [_message(lambda: call(bad, c)) for c in (True, False)]
        assert msgs[0] == msgs[1] and "offsets decrease" in msgs[0]


# ---- CUDA ---------------------------------------------------------------------------

@requires_gpu
@pytest.mark.parametrize("grad", [False, True])
def test_cuda_resample_bad_row(grad):
    """A row of length 0: NaN / valid False with check=False (eager call and
    the autograd op, whose backward gives that row no gradient); the CPU
    path's ValueError with check=True."""
    values, times, targets, lengths = _problem(torch)
    ref, ref_valid = robocache.resample(values, times, targets, lengths=lengths,
                                        return_valid=True)
    bad = lengths.clone()
    bad[1] = 0
    cpu_msg = _message(lambda: robocache.resample(values, times, targets, lengths=bad))
    v = values.cuda().requires_grad_(grad)
    g = dict(times=times.cuda(), target_times=targets.cuda(), lengths=bad.cuda())
    out, valid = robocache.resample(v, g["times"], g["target_times"], lengths=g["lengths"],
                                    return_valid=True, check=False)
    out_h, valid_h = out.detach().cpu(), valid.cpu()
    assert torch.isnan(out_h[1]).all() and not valid_h[1].any()
    keep = [0, 2]
    torch.testing.assert_close(out_h[keep], ref[keep], atol=2e-6, rtol=2.0**-23)
    assert torch.equal(valid_h[keep], ref_valid[keep])
    if grad:
        out[keep].sum().backward()
        assert (v.grad[1] == 0).all() and (v.grad[keep].abs().sum() > 0)
    msg = _message(lambda: robocache.resample(v, g["times"], g["target_times"],
                                              lengths=g["lengths"]))
    assert msg == cpu_msg


@requires_gpu
def test_cuda_align_extrap_error():
    values, times, targets, _ = _problem(torch)
    late = targets.clone()
    late[2, 3] = times[2, -1] + 1
    streams = [robocache.Stream(values, times, name="imu", extrapolate="error")]
    cpu_msg = _message(lambda: robocache.align(streams, late))
    ref, ref_valid = robocache.align(streams, targets)
    gpu = [robocache.Stream(values.cuda(), times.cuda(), name="imu", extrapolate="error")]
    out, valid = robocache.align(gpu, late.cuda(), check=False)
    out, valid = out.cpu(), valid.cpu()
    assert torch.isnan(out[2, 3]).all() and not valid[2, 3].any()
    mask = torch.ones(B, T, dtype=torch.bool)
    mask[2, 3] = False
    torch.testing.assert_close(out[mask], ref[mask], atol=2e-6, rtol=2.0**-23)
    assert torch.equal(valid[mask], ref_valid[mask])
    assert _message(lambda: robocache.align(gpu, late.cuda())) == cpu_msg


@requires_gpu
def test_cuda_voxel_check_false():
    """Outputs equal the CPU's; stats only points_in; bad offsets raise only
    with check=True."""
    pts = torch.from_numpy(_cloud())
    offsets = torch.tensor([0, 700, len(pts)])
    calls = [
        lambda p, o, c: robocache.voxelize(p, 1.0, RANGE, offsets=o, mode="mean",
                                           return_stats=True, check=c),
        lambda p, o, c: robocache.voxelize_hard(p, 0.5, RANGE, 5, 300, offsets=o, padded=True,
                                                return_stats=True, check=c),
        lambda p, o, c: robocache.voxel_downsample(p, 1.0, point_cloud_range=RANGE, offsets=o,
                                                   return_stats=True, check=c),
    ]
    for call in calls:
        cpu = call(pts, offsets, True)
        gpu = call(pts.cuda(), offsets.cuda(), False)
        assert gpu[-1] == {k: len(pts) if k == "points_in" else -1 for k in cpu[-1]}
        for a, b in zip(gpu[:-1], cpu[:-1]):
            assert a.device.type == "cuda" and torch.equal(a.cpu(), b)
        bad = torch.tensor([0, 900, 700, len(pts)]).cuda()
        cpu_msg = _message(lambda: call(pts, bad.cpu(), True))
        assert _message(lambda: call(pts.cuda(), bad, True)) == cpu_msg
        call(pts.cuda(), bad, False)  # no error; outputs unspecified but in bounds
