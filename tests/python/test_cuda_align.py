"""robocache on CUDA tensors (PyTorch): results equal to the CPU backend on
the same inputs, the current / a given non-default stream, torch.compile
(fullgraph=True), CUDA-graph capture and replay, gradcheck, and errors that
name row and index. Skipped without a CUDA device or a CUDA build."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
robocache = pytest.importorskip("robocache")

pytestmark = pytest.mark.skipif(
    not (torch.cuda.is_available() and robocache.has_cuda()),
    reason="needs a CUDA device and robocache built with CUDA")

# f32 arithmetic on both backends; the GPU fuses multiply-adds (docs/cuda.md)
ATOL = {torch.float32: 2e-6, torch.float64: 1e-12, torch.bfloat16: 2e-6,
        torch.float16: 2e-6}
RTOL = {torch.float32: 2.0**-23, torch.float64: 0.0, torch.bfloat16: 2.0**-7,
        torch.float16: 2.0**-10}


def random_problem(B, S, T, D, dtype, seed, time_dtype=torch.int64):
    g = torch.Generator().manual_seed(seed)
    steps = torch.randint(1_000_000, 20_000_000, (B, S), generator=g)
    steps[:, 0] = 1_000_000_000
    times = torch.cumsum(steps, 1)
    lo, hi = times[:, :1].double(), times[:, -1:].double()
    frac = torch.rand(B, T, generator=g, dtype=torch.float64) * 1.2 - 0.1
    targets = (lo + frac * (hi - lo)).round().to(torch.int64)
    targets[:, ::7] = times[:, : (T + 6) // 7]  # some targets exactly on samples
    if time_dtype != torch.int64:
        times, targets = times.to(time_dtype) * 1e-9, targets.to(time_dtype) * 1e-9
    values = (torch.rand(B, S, D, generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    return values, times, targets


def assert_same(gpu, cpu, dtype):
    gpu = gpu.cpu()
    if dtype == torch.bool or not gpu.is_floating_point():
        assert torch.equal(gpu, cpu)
        return
    torch.testing.assert_close(gpu.double(), cpu.double(), atol=ATOL[dtype], rtol=RTOL[dtype],
                               equal_nan=True)


METHODS = ["linear", "nearest", "previous", "next", "slerp"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("extrapolate", ["clamp", "fill", "extrapolate"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_resample_matches_cpu(method, extrapolate, dtype):
    seed = 10 * METHODS.index(method) + len(extrapolate)
    values, times, targets = random_problem(4, 60, 45, 8, dtype, seed=seed)
    if method == "slerp":
        values = (values.double() / values.double().view(4, 60, 2, 4).norm(dim=-1)
                  .repeat_interleave(4, -1)).to(dtype)
    kw = dict(method=method, extrapolate=extrapolate, return_valid=True)
    out_cpu, valid_cpu = robocache.resample(values, times, targets, **kw)
    out, valid = robocache.resample(values.cuda(), times.cuda(), targets.cuda(), **kw)
    assert out.is_cuda and valid.is_cuda and out.dtype == dtype
    assert_same(valid, valid_cpu, torch.bool)
    atol = 2e-5 if method == "slerp" and dtype != torch.float64 else ATOL[dtype]
    torch.testing.assert_close(out.cpu().double(), out_cpu.double(), atol=atol,
                               rtol=RTOL[dtype], equal_nan=True)


def tensors_of(problem_seed, device):
    """vision, proprio, imu (values, times) and the target times."""
    v1, t1, tt = random_problem(3, 30, 40, 16, torch.float32, problem_seed)
    v2, t2, _ = random_problem(3, 90, 40, 7, torch.bfloat16, problem_seed + 1)
    q, t3, _ = random_problem(3, 50, 40, 4, torch.float32, problem_seed + 2)
    q = q / q.norm(dim=-1, keepdim=True)
    return [x.to(device) for x in (v1, t1, v2, t2, q, t3, tt)]


def make_streams(v1, t1, v2, t2, q, t3):
    return [robocache.Stream(v1, t1, name="vision"),
            robocache.Stream(v2, t2, name="proprio", method="nearest", extrapolate="fill"),
            robocache.Stream(q, t3, name="imu", method="slerp")]


def streams_of(problem_seed, device):
    *tensors, tt = tensors_of(problem_seed, device)
    return make_streams(*tensors), tt


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16])
def test_align_on_non_default_stream(out_dtype):
    cpu_streams, tt = streams_of(10, "cpu")
    out_cpu, valid_cpu = robocache.align(cpu_streams, tt, out_dtype=out_dtype)
    gpu_streams, _ = streams_of(10, "cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out, valid = robocache.align(gpu_streams, tt.cuda(), out_dtype=out_dtype)
    side.synchronize()
    assert_same(valid, valid_cpu, torch.bool)
    torch.testing.assert_close(out.cpu().double(), out_cpu.double(), atol=2e-5,
                               rtol=RTOL[out_dtype], equal_nan=True)
    # explicit stream= argument
    out2, _ = robocache.align(gpu_streams, tt.cuda(), out_dtype=out_dtype, stream=side)
    side.synchronize()
    torch.testing.assert_close(out2, out, atol=0, rtol=0, equal_nan=True)


def test_compile_fullgraph():
    tensors = tensors_of(20, "cuda")

    def fused(v1, t1, v2, t2, q, t3, targets):
        out, valid = robocache.align(make_streams(v1, t1, v2, t2, q, t3), targets)
        return out * 2 + 1, valid

    eager = fused(*tensors)
    compiled = torch.compile(fused, fullgraph=True)(*tensors)
    assert torch.equal(compiled[1], eager[1])
    torch.testing.assert_close(compiled[0], eager[0], equal_nan=True)


def test_cuda_graph_capture_and_replay():
    gpu_streams, tt = streams_of(30, "cuda")
    tt = tt.cuda()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        robocache.align(gpu_streams, tt)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, valid = robocache.align(gpu_streams, tt)
    # new data in the captured input buffers, then replay
    fresh, _ = streams_of(31, "cuda")
    for s, f in zip(gpu_streams, fresh):
        s.values.copy_(f.values)
        s.times.copy_(f.times)
    graph.replay()
    torch.cuda.synchronize()
    expect, expect_valid = robocache.align(gpu_streams, tt)
    assert torch.equal(valid, expect_valid)
    assert torch.equal(out.nan_to_num(123.0), expect.nan_to_num(123.0))


@pytest.mark.parametrize("method", ["linear", "nearest", "previous", "next"])
def test_gradcheck(method):
    values, times, targets = random_problem(2, 12, 9, 3, torch.float64, seed=5)
    values = values.cuda().requires_grad_()
    times, targets = times.cuda(), targets.cuda()

    def f(v):
        return robocache.resample(v, times, targets, method=method, extrapolate="extrapolate")

    assert torch.autograd.gradcheck(f, (values,))


def test_error_names_row_and_index():
    values, times, targets = random_problem(3, 20, 10, 4, torch.float32, seed=6)
    times[1, 5] = times[1, 4]
    with pytest.raises(ValueError, match=r"times not increasing: row 1, index 5"):
        robocache.resample(values.cuda(), times.cuda(), targets.cuda())
    values, times, targets = random_problem(3, 20, 10, 4, torch.float32, seed=7)
    with pytest.raises(ValueError, match=r"target out of range: row 0, index 0"):
        robocache.resample(values.cuda(), times.cuda(), targets.cuda() * 0,
                           extrapolate="error")


def ragged(rows, dtype):
    """Rows of different lengths as one zero-padded [B, S, ...] tensor and lengths [B]."""
    S = max(len(r) for r in rows)
    out = torch.zeros((len(rows), S) + tuple(rows[0].shape[1:]), dtype=dtype)
    for b, r in enumerate(rows):
        out[b, :len(r)] = torch.as_tensor(r).to(dtype)
    return out, torch.tensor([len(r) for r in rows], dtype=torch.int64)


def euroc_halves(euroc_imu, euroc_gt, euroc_cam, dtype):
    """The EuRoC flight cut in two rows of different lengths (split 60 s in):
    IMU (200 Hz), ground-truth position and quaternion (200 Hz, its own start
    and end) and the cam0 frame times (20 Hz) as ragged targets."""
    t_imu, imu = euroc_imu
    t_gt, pos, q = euroc_gt
    t_gt = np.round(t_gt * 1e9).astype(np.int64)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    cut = t_imu[0] + 60 * 10**9

    def halves(t, *cols):
        first = t < cut
        return [ragged([t[first], t[~first]], torch.int64)] + \
            [ragged([c[first], c[~first]], dtype) for c in cols]

    (ti, ni), (vi, _) = halves(t_imu, imu)
    (tg, ng), (vp, _), (vq, _) = halves(t_gt, pos, q)
    (tc, nc), = halves(euroc_cam)
    streams = [
        robocache.Stream(vi, ti, lengths=ni, name="imu", max_gap=20 * 10**6),
        robocache.Stream(vp, tg, lengths=ng, name="pos", extrapolate="fill", fill_value=0.0),
        robocache.Stream(vq, tg, lengths=ng, name="quat", method="slerp"),
        robocache.Stream(vi[..., 0], ti, lengths=ni, name="gyro_x", method="previous",
                         max_gap=10**7)]
    return streams, tc, nc


def cuda_streams(streams):
    """The same streams (every option) with their tensors on the GPU."""
    options = robocache._api._OPTION_NAMES
    return [robocache.Stream(s.values.cuda(), s.times.cuda(), name=s.name,
                             lengths=None if s.lengths is None else s.lengths.cuda(),
                             **{k: getattr(s, k) for k in options}) for s in streams]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_real_recordings_match_cpu(euroc_imu, euroc_gt, euroc_cam, dtype):
    """Real multi-rate data (EuRoC V1_01_easy, data/sensors), two ragged rows:
    the GPU equals the CPU backend, checked and unchecked alike."""
    streams, tc, nc = euroc_halves(euroc_imu, euroc_gt, euroc_cam, dtype)
    out_cpu, valid_cpu = robocache.align(streams, tc, target_lengths=nc, out_dtype=dtype)
    gpu = cuda_streams(streams)
    out, valid = robocache.align(gpu, tc.cuda(), target_lengths=nc.cuda(), out_dtype=dtype)
    assert out.shape == (2, tc.shape[1], 6 + 3 + 4 + 1) and valid.shape == (2, tc.shape[1], 4)
    assert 0 < int(valid.sum()) < valid.numel()  # real edges and padding: both kinds
    assert_same(valid, valid_cpu, torch.bool)
    torch.testing.assert_close(out.cpu(), out_cpu, atol=2e-5 if dtype == torch.float32 else 1e-12,
                               rtol=RTOL[dtype], equal_nan=True)
    fast, fast_valid = robocache.align(gpu, tc.cuda(), target_lengths=nc.cuda(), out_dtype=dtype,
                                       check=False)
    assert torch.equal(fast_valid, valid)
    assert torch.equal(fast.nan_to_num(123.0), out.nan_to_num(123.0))


def test_real_float_seconds_with_drops_match_cpu(tum_gt, tum_rgb_times):
    """TUM fr1/xyz: float-second times, a 110 ms drop in the ground truth (max_gap
    50 ms) and jittered RGB frame times as targets."""
    t, pos, q = tum_gt
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    streams = [robocache.Stream(torch.from_numpy(pos), torch.from_numpy(t), name="pos",
                                max_gap=0.05, extrapolate="fill"),
               robocache.Stream(torch.from_numpy(q), torch.from_numpy(t), name="quat",
                                method="slerp", extrapolate="fill")]
    targets = torch.from_numpy(tum_rgb_times)
    out_cpu, valid_cpu = robocache.align(streams, targets, out_dtype=torch.float64)
    out, valid = robocache.align(cuda_streams(streams), targets.cuda(), out_dtype=torch.float64)
    assert not bool(valid.all())  # the drop and the ends leave targets invalid
    assert_same(valid, valid_cpu, torch.bool)
    torch.testing.assert_close(out.cpu(), out_cpu, atol=1e-12, rtol=0.0, equal_nan=True)
