/* CUDA dense voxelization, COUNT / OCCUPANCY / MAX (DESIGN §1.3 "dense"):
 * integer atomics straight into out, order-independent, so exact.
 *
 * Two or three kernels, each a programmatic dependent launch of the kernel
 * before it on the stream (sm_90 and later: its blocks start while the
 * previous kernel runs and wait for it with griddepcontrol.wait, which hides
 * the launch and the gap between the kernels):
 *   1. rc_voxel_zero: out (and, in checked mode, the counters) zeroed after
 *      the stream's earlier work, so that kernel 2 may read the points
 *      before its own wait;
 *   2. one thread per point: its cell found (the point's loads in flight)
 *      before the wait, then the atomics: i32 counts with one atomicAdd
 *      per run of a warp's consecutive points in one cell (run_length), f32
 *      outputs count in their 32-bit words as integers, u8 occupancy stores
 *      1, MAX takes atomicMax of the order-preserving keys of
 *      rc_voxel_max_key;
 *   3. where the words are not the output yet, one in-place pass (integers
 *      to f32 counts or occupancy, keys to floats; u8 occupancy in checked
 *      mode counts the non-empty cells there).
 * docs/voxelize.md has the times, and the designs measured and not kept. */
#include "cuda/voxel_cuda.cuh"

namespace {

enum atomic_op { OP_COUNT32, OP_OCC8, OP_MAX };
enum atomic_post { POST_NONE, POST_COUNT_F32, POST_OCC_F32, POST_MAX_F32, POST_OCCUPIED };

struct atomic_args {
  rc_voxel_src src;
  void *out;
  size_t bytes;                /* of out */
  int64_t G, F;                /* cells of one plane, planes (features) of one cloud */
  int64_t col0;                /* MAX: first feature column */
  int post;                    /* atomic_post */
  rc_voxel_counters *counters; /* checked mode (zeroed by kernel 1), else NULL */
};

/* Called by every lane of the warp: the number of consecutive lanes from
 * this one on whose points fall in `cell`, when this lane starts such a run
 * (the previous lane's cell differs), else 0. Points of a scan come in scan
 * order, so neighbours often share a cell (a KITTI scan into 128^3 cells:
 * 120,533 points in 30,087 runs of a warp's lanes); one atomicAdd per run
 * instead of per point. */
__device__ __forceinline__ unsigned int run_length(int64_t cell) {
  const unsigned int lane = threadIdx.x & 31;
  const int64_t before = __shfl_up_sync(0xffffffffu, (long long)cell, 1);
  const unsigned int starts = __ballot_sync(0xffffffffu, lane == 0 || before != cell);
  if (!(starts >> lane & 1u)) return 0;
  const unsigned int later = starts & ~(0xffffffffu >> (31 - lane)); /* starts above this lane */
  return (later ? __ffs(later) - 1 : 32) - lane;
}

/* What point i (in cell `cell`, -1 when dropped) adds (COUNT: the n points
 * of its run, none when n is 0); returns 1 when its cell was empty (counted
 * in checked mode). */
template <int OP>
__device__ __forceinline__ unsigned int apply(const atomic_args &a, int64_t i, int64_t cell,
                                              unsigned int n) {
  if (cell < 0 || n == 0) return 0;
  if (OP == OP_OCC8) {
    ((uint8_t *)a.out)[cell] = 1;
    return 0;
  }
  unsigned int *w = (unsigned int *)a.out + cell;
  if (OP == OP_COUNT32) {
    if (a.counters) return atomicAdd(w, n) == 0u;
    atomicAdd(w, n); /* no return value: a reduction, no round trip */
    return 0;
  }
  unsigned int fresh = 0;
  const unsigned int k0 = rc_voxel_max_key(rc_vpt(a.src, i, a.col0));
  if (a.counters)
    fresh = atomicMax(w, k0) == 0u;
  else
    atomicMax(w, k0);
  for (int64_t f = 1; f < a.F; f++)
    atomicMax(w + f * a.G, rc_voxel_max_key(rc_vpt(a.src, i, a.col0 + f)));
  return fresh;
}

/* Kernel 2, one thread per point: its cell (the point's loads in flight
 * while out is zeroed), the wait for kernel 1, its atomics; with counters
 * also the dropped points and the cells it found empty. */
template <int OP> __global__ void atomic_kernel(atomic_args a) {
  rc_pdl_let_dependents_launch();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0;
  const int64_t cell =
      i < a.src.N ? rc_voxel_cell(a.src, i, OP == OP_MAX ? a.F * a.G : a.G, &nonfinite, &range)
                  : -1;
  const unsigned int n = OP == OP_COUNT32 ? run_length(cell) : 1;
  rc_pdl_wait();
  const unsigned int fresh = apply<OP>(a, i, cell, n);
  if (!a.counters) return;
  rc_voxel_count_dropped(a.src, a.counters, nonfinite, range);
  rc_voxel_block_add(&a.counters->nonempty, fresh);
}

/* Kernel 3: the in-place pass over the cells after kernel 2. */
__global__ void post_kernel(atomic_args a) {
  rc_pdl_enter();
  const int64_t n = (int64_t)(a.bytes / (a.post == POST_OCCUPIED ? 1 : 4));
  unsigned int *w = (unsigned int *)a.out;
  unsigned int occupied = 0;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    if (a.post == POST_OCCUPIED) {
      occupied += ((const uint8_t *)a.out)[i] != 0;
    } else if (a.post == POST_MAX_F32) {
      const unsigned int k = w[i];
      if (k) w[i] = __float_as_uint(rc_voxel_max_value(k)); /* key 0 (empty) is 0.0f */
    } else {
      const unsigned int c = w[i];
      ((float *)w)[i] = a.post == POST_OCC_F32 ? (c ? 1.0f : 0.0f) : (float)c;
    }
  }
  if (a.post == POST_OCCUPIED) rc_voxel_block_add(&a.counters->nonempty, occupied);
}

template <int OP>
robocache_status run(robocache_ctx *ctx, const atomic_args &a, cudaStream_t stream, bool pdl) {
  const unsigned int T = RC_VOXEL_THREADS;
  cudaError_t e = rc_voxel_zero(a.out, a.bytes, a.counters,
                                a.counters ? sizeof(rc_voxel_counters) : 0, stream, pdl);
  if (e == cudaSuccess)
    e = rc_cuda_launch(atomic_kernel<OP>, rc_voxel_blocks(a.src.N), T, stream, pdl, a);
  if (e == cudaSuccess && a.post != POST_NONE)
    e = rc_cuda_launch(post_kernel, rc_voxel_pass_blocks((int64_t)a.bytes / 4), T, stream, pdl, a);
  return rc_cuda_check(ctx, e, "voxelize count/occupancy/max kernels");
}

} // namespace

robocache_status rc_voxelize_dense_count_max_cuda(robocache_ctx *ctx, const rc_voxel_problem *p,
                                                  rc_voxel_call *c) {
  atomic_args a = {};
  a.src = c->src;
  a.out = p->out.data;
  a.bytes = (size_t)rc_view_numel(&p->out) * robocache_dtype_size((robocache_dtype)p->out.dtype);
  a.G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2];
  a.F = p->F;
  a.col0 = p->feat_col;
  if (c->checked) {
    void *scratch = NULL;
    robocache_status s =
        rc_cuda_workspace(ctx, p->points.device_id, sizeof(rc_voxel_counters), NULL, &scratch);
    if (s != ROBOCACHE_OK) return s;
    c->counters = (rc_voxel_counters *)scratch;
  }
  a.counters = c->counters;
  const int f32 = p->out.dtype == ROBOCACHE_DTYPE_F32;
  if (p->mode == ROBOCACHE_VOXEL_MAX) {
    a.post = POST_MAX_F32;
    return run<OP_MAX>(ctx, a, c->stream, c->pdl);
  }
  if (p->out.dtype == ROBOCACHE_DTYPE_U8) {
    a.post = c->checked ? POST_OCCUPIED : POST_NONE;
    return run<OP_OCC8>(ctx, a, c->stream, c->pdl);
  }
  a.post = !f32 ? POST_NONE : p->mode == ROBOCACHE_VOXEL_OCCUPANCY ? POST_OCC_F32 : POST_COUNT_F32;
  return run<OP_COUNT32>(ctx, a, c->stream, c->pdl);
}
