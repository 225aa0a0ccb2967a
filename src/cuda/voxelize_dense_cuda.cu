/* CUDA dense voxelization (DESIGN §1.3 "dense"), out [B,F,Z,Y,X]: SUM and
 * MEAN here; COUNT, OCCUPANCY and MAX in voxelize_dense_count_max_cuda.cu.
 * SUM / MEAN: the points of each cell grouped without a sort
 * (voxel_groups_cuda.cuh; the cell counts live in plane 0 of out until the
 * results overwrite them); a cell's only point is written at once by the
 * scatter, the points of the other cells are summed in input order; the CPU
 * backend's arithmetic (f64 sum from 0.0, mean = sum / count, one rounding
 * to f32), so the result is bitwise that of the CPU backend. Every kernel is
 * a programmatic dependent launch of the one before it on sm_90 and later
 * (rc_voxel_zero first; CUB's sort of the giant segments is an ordinary
 * launch).
 * In unchecked mode (no stats) nothing is counted beyond what the output
 * needs. */
#include "cuda/voxel_groups_cuda.cuh"

namespace {

/* SUM / MEAN step 1: each point's cell (its plane-0 index in out, found
 * before the wait for the zeroing: the point's loads in flight meanwhile)
 * and its provisional rank there. */
__global__ void hist_kernel(rc_voxel_src s, rc_groups g, int64_t G, int64_t F, int checked) {
  rc_pdl_let_dependents_launch();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0;
  const int64_t cell = i < s.N ? rc_voxel_cell(s, i, F * G, &nonfinite, &range) : -1;
  rc_pdl_wait();
  if (i < s.N) {
    if (cell >= 0) g.rank[i] = atomicAdd(&g.count[cell], 1u);
    g.bucket_of[i] = cell;
  }
  if (checked) rc_voxel_count_dropped(s, g.counters, nonfinite, range);
}

struct sum_args {
  float *out;
  int64_t G, F, col0;
  int mean;
};

/* Cells per thread of the cells kernel (16 measured as fast as 4 or 8 on an
 * H200: SUM 500K, KITTI). */
#define CELL_ITEMS 16
#define CELL_TILE (RC_VOXEL_THREADS * CELL_ITEMS)

/* Plane-0 words of cells with a segment (their start | ALLOCATED); a cell
 * with one point keeps its count, 1. */
#define ALLOCATED 0x80000000u

/* SUM / MEAN step 2 over the cells of cloud blockIdx.x / tiles: cells of
 * two or more points get a segment; in checked mode the non-empty cells are
 * counted. No stores before the last load: the loads of a thread's cells are
 * issued together. */
__global__ void cells_kernel(rc_groups g, int64_t G, int64_t F, unsigned int tiles, int checked) {
  rc_pdl_enter();
  const int64_t b = blockIdx.x / tiles;
  const int64_t c0 = (int64_t)(blockIdx.x % tiles) * CELL_TILE + threadIdx.x;
  long long bucket[CELL_ITEMS];
  unsigned int n[CELL_ITEMS], singles = 0, grouped = 0;
#pragma unroll
  for (int k = 0; k < CELL_ITEMS; k++) {
    const int64_t cell = c0 + k * RC_VOXEL_THREADS;
    bucket[k] = b * F * G + cell;
    n[k] = cell < G ? g.count[bucket[k]] : 0u;
  }
#pragma unroll
  for (int k = 0; k < CELL_ITEMS; k++) {
    singles += n[k] == 1;
    if (n[k] == 1) n[k] = 0; /* written by the scatter */
    grouped |= n[k];
  }
  if (checked) rc_voxel_block_add(&g.counters->nonempty, singles);
  if (__syncthreads_or(grouped)) rc_groups_alloc(g, bucket, n, ALLOCATED);
}

/* SUM / MEAN step 3: a point of a grouped cell goes to its list; the only
 * point of a cell is its sum (0.0 + x, as the CPU backend adds) and mean.
 * The point's rank and first feature are loaded with its cell, before the
 * cell's word is known (one round trip less). */
__global__ void place_kernel(rc_groups g, rc_voxel_src s, sum_args a) {
  rc_pdl_enter();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.N) return;
  const long long cell = g.bucket_of[i];
  const unsigned int rank = g.rank[i];
  const float x0 = rc_vpt(s, i, a.col0);
  if (cell < 0) return;
  const unsigned int v = g.count[cell];
  if (v & ALLOCATED) {
    g.list[(v & ~ALLOCATED) + rank] = i;
    return;
  }
  for (int64_t f = 0; f < a.F; f++) {
    double acc = 0.0;
    acc += (double)(f == 0 ? x0 : rc_vpt(s, i, a.col0 + f));
    a.out[cell + f * a.G] = rc_voxel_f32(a.mean ? acc / 1.0 : acc);
  }
}

/* The exponent of the lowest set bit of x (x finite and not zero): x is a
 * multiple of 2^lsb. */
__device__ __forceinline__ int f32_lsb(float x) {
  const unsigned int u = __float_as_uint(x) & 0x7fffffffu, e = u >> 23;
  const unsigned int m = e ? (u & 0x7fffffu) | 0x800000u : u;
  return (e ? (int)e - 150 : -149) + __ffs((int)m) - 1;
}

/* The F sums of a big segment, one block: the f64 sum of its values in any
 * order when that sum is exact, else NAN_SEQUENTIAL. A sum of finite f32
 * values that are all multiples of 2^L, with sum |x| < 2^(L+52) (a margin of
 * one bit over the f64 bound 2^(L+53) for the rounding of the sum of |x|
 * itself), has every partial sum, in whatever order, an exact f64: the
 * parallel sum is then bitwise the input-order chain's (from 0.0, so an
 * all-zero sum is +0.0 in both). Every thread gets the block's answer. */
__device__ bool block_exact_sum(double sum, double abs_sum, int lsb, int finite, double *total) {
  constexpr int W = RC_VOXEL_THREADS / 32;
  __shared__ double ws[W], wa[W];
  __shared__ int wl[W], wf[W];
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, o);
    abs_sum += __shfl_xor_sync(0xffffffffu, abs_sum, o);
    lsb = min(lsb, __shfl_xor_sync(0xffffffffu, lsb, o));
    finite &= __shfl_xor_sync(0xffffffffu, finite, o);
  }
  if ((threadIdx.x & 31) == 0)
    ws[threadIdx.x / 32] = sum, wa[threadIdx.x / 32] = abs_sum, wl[threadIdx.x / 32] = lsb,
                     wf[threadIdx.x / 32] = finite;
  __syncthreads();
  sum = 0.0, abs_sum = 0.0, lsb = INT_MAX, finite = 1;
#pragma unroll
  for (int w = 0; w < W; w++)
    sum += ws[w], abs_sum += wa[w], lsb = min(lsb, wl[w]), finite &= wf[w];
  __syncthreads();    /* every read before the next call's writes */
  *total = sum + 0.0; /* -0.0 + 0.0 = +0.0, as the chain from 0.0 */
  return finite && (lsb == INT_MAX || abs_sum < ldexp(1.0, lsb + 52));
}

#define SUM_LOADS 8

/* SUM / MEAN step 5: each grouped cell's F sums of its points in input
 * order (small cells one per thread, big ones one per block: in parallel
 * when the sum is exact (block_exact_sum), else one chain in input order). */
__global__ void sum_kernel(rc_groups g, rc_voxel_src s, sum_args a) {
  __shared__ int sidx[RC_GROUP_BLOCK];
  __shared__ float sval[2 * RC_CHAIN_STAGE];
  rc_pdl_enter();
  const unsigned int n_small = g.counters->n_small, n_big = g.counters->n_big;
  const unsigned int stride = gridDim.x * blockDim.x;
  for (unsigned int k = blockIdx.x * blockDim.x + threadIdx.x; k < n_small; k += stride) {
    const rc_group_seg e = g.seg[k];
    rc_group_small(g, e, [&](const auto &idx) {
      for (int64_t f = 0; f < a.F; f++) {
        const double acc = rc_group_small_sum(s, idx, e.n, a.col0 + f);
        a.out[e.bucket + f * a.G] = rc_voxel_f32(a.mean ? acc / (double)e.n : acc);
      }
    });
  }
  for (unsigned int k = blockIdx.x; k < n_big; k += gridDim.x) {
    const rc_group_seg e = g.seg[g.N - 1 - k];
    /* any order will do for an exact sum */
    const int *any = (e.n > RC_GROUP_BLOCK ? g.sorted : g.list) + e.start;
    const int *idx = NULL; /* input order, sorted on the first inexact sum */
    for (int64_t f = 0; f < a.F; f++) {
      double sum = 0.0, abs_sum = 0.0;
      int lsb = INT_MAX, finite = 1;
      const auto probe = [&](float x) {
        finite &= isfinite(x);
        if (x != 0.0f && isfinite(x)) lsb = min(lsb, f32_lsb(x));
        sum += (double)x;
        abs_sum += fabs((double)x);
      };
      /* SUM_LOADS values in flight per thread: a giant bucket's pass is not
       * one round trip per value */
      unsigned int j = threadIdx.x;
      for (; j + (SUM_LOADS - 1) * blockDim.x < e.n; j += SUM_LOADS * blockDim.x) {
        float x[SUM_LOADS];
#pragma unroll
        for (int u = 0; u < SUM_LOADS; u++) x[u] = rc_vpt(s, any[j + u * blockDim.x], a.col0 + f);
#pragma unroll
        for (int u = 0; u < SUM_LOADS; u++) probe(x[u]);
      }
      for (; j < e.n; j += blockDim.x) probe(rc_vpt(s, any[j], a.col0 + f));
      double acc;
      if (!block_exact_sum(sum, abs_sum, lsb, finite, &acc)) {
        if (!idx) idx = rc_group_block_sorted(g, e, sidx);
        acc = rc_voxel_chain_sums(s, idx, (int)e.n, a.col0 + f, 1, sval); /* thread 0's */
      }
      if (threadIdx.x == 0)
        a.out[e.bucket + f * a.G] = rc_voxel_f32(a.mean ? acc / (double)e.n : acc);
    }
  }
}

/* SUM, MEAN: steps 1-5 of voxel_groups_cuda.cuh, the cells' counts in plane 0
 * of out (zeroed first). */
robocache_status dense_sum(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c) {
  const int64_t G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2], F = p->F, B = p->B;
  const int64_t tiles = (G + CELL_TILE - 1) / CELL_TILE;
  if (tiles * B > INT32_MAX)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "voxelize (cuda): %lld clouds of %lld cells are too many for one call",
                    (long long)B, (long long)G);
  rc_groups g = {};
  size_t temp_bytes = 0;
  robocache_status s = rc_groups_temp_bytes(ctx, c->src.N, &temp_bytes);
  if (s != ROBOCACHE_OK) return s;
  void *temp = NULL;
  size_t zeroed = 0;
  s = rc_voxel_scratch(ctx, p->points.device_id, [&](rc_carver &k) {
    c->counters = (rc_voxel_counters *)k.take(sizeof(rc_voxel_counters));
    rc_groups_carve_zeroed(&g, &k, c->src.N);
    zeroed = k.at;
    rc_groups_carve(&g, &k, c->src.N);
    temp = k.take(temp_bytes);
  });
  if (s != ROBOCACHE_OK) return s;
  g.count = (unsigned int *)p->out.data;
  g.counters = c->counters;
  const sum_args a = {(float *)p->out.data, G, F, p->feat_col, p->mode == ROBOCACHE_VOXEL_MEAN};
  const unsigned int T = RC_VOXEL_THREADS;
  /* all F planes: the cells' counts in plane 0, zeros of the empty cells */
  cudaError_t e = rc_voxel_zero(a.out, (size_t)(B * F * G) * sizeof(float), c->counters, zeroed,
                                c->stream, c->pdl);
  if (B == 0 || e != cudaSuccess) return rc_cuda_check(ctx, e, "voxelize zeroing kernel");
  e = rc_cuda_launch(hist_kernel, rc_voxel_blocks(g.N), T, c->stream, c->pdl, c->src, g, G, F,
                     c->checked);
  if (e == cudaSuccess)
    e = rc_cuda_launch(cells_kernel, (unsigned int)(tiles * B), T, c->stream, c->pdl, g, G, F,
                       (unsigned int)tiles, c->checked);
  if (e == cudaSuccess)
    e = rc_cuda_launch(place_kernel, rc_voxel_blocks(g.N), T, c->stream, c->pdl, g, c->src, a);
  s = rc_cuda_check(ctx, e, "voxelize sum/mean kernels");
  if (s == ROBOCACHE_OK) s = rc_groups_sort_giants(ctx, c->stream, &g, temp, temp_bytes);
  if (s != ROBOCACHE_OK) return s;
  e = rc_cuda_launch(sum_kernel, rc_group_blocks(g.N, g.N), T, c->stream, c->pdl, g, c->src, a);
  return rc_cuda_check(ctx, e, "voxelize sum kernel");
}

} // namespace

robocache_status rc_voxelize_dense_cuda(robocache_ctx *ctx, const rc_voxel_problem *p) {
  rc_voxel_call c;
  robocache_status s = rc_voxel_cuda_enter(ctx, p, &c);
  if (s != ROBOCACHE_OK) return s;
  s = p->mode == ROBOCACHE_VOXEL_SUM || p->mode == ROBOCACHE_VOXEL_MEAN
          ? dense_sum(ctx, p, &c)
          : rc_voxelize_dense_count_max_cuda(ctx, p, &c);
  return rc_voxel_cuda_end(ctx, p, &c, s);
}
