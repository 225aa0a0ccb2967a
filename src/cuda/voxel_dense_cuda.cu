/* CUDA dense voxelization (DESIGN §1.3 "dense"), out [B,F,Z,Y,X].
 *
 * COUNT / OCCUPANCY: one pass over the points with integer atomics straight
 * into out (order-independent, so exact): i32 counts with atomicAdd; f32
 * outputs count in their 32-bit words as integers, then one in-place pass
 * turns the integers into floats; u8 occupancy stores 1 (idempotent) and, in
 * checked mode, a pass over the grid counts the non-empty voxels.
 * MAX: one pass of atomicMax on the order-preserving keys of
 * rc_voxel_max_key (order-independent), then one in-place pass turns keys
 * into floats.
 * SUM / MEAN: the points of each cell grouped without a sort
 * (voxel_groups_cuda.cuh; the cell counts live in plane 0 of out until the
 * results overwrite them); a cell's only point is written at once by the
 * scatter, the points of the other cells are summed in input order; the CPU
 * backend's arithmetic (f64 sum from 0.0, mean = sum / count, one rounding
 * to f32), so the result is bitwise that of the CPU backend.
 * In unchecked mode (no stats) nothing is counted beyond what the output
 * needs. */
#include "cuda/voxel_groups_cuda.cuh"

namespace {

/* One thread per point: adds 1 to the point's cell (count32 != NULL: 32-bit
 * integer counters; else u8 stores 1); with counters (checked mode) also
 * counts the dropped points and the cells that were 0. */
__global__ void count_kernel(rc_voxel_src s, int64_t G, unsigned int *count32, uint8_t *occ8,
                             rc_voxel_counters *counters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0, fresh = 0;
  const int64_t cell = i < s.N ? rc_voxel_cell(s, i, G, &nonfinite, &range) : -1;
  if (cell >= 0 && !count32)
    occ8[cell] = 1;
  else if (cell >= 0 && counters)
    fresh = atomicAdd(&count32[cell], 1u) == 0u;
  else if (cell >= 0)
    atomicAdd(&count32[cell], 1u); /* no return value: a reduction, no round trip */
  if (!counters) return;
  rc_voxel_count_dropped(s, counters, nonfinite, range);
  rc_voxel_block_add(&counters->nonempty, fresh);
}

/* f32 out: the integer counts in place to float counts or occupancy. */
__global__ void count_to_f32_kernel(float *out, int64_t n, int occupancy) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const unsigned int c = __float_as_uint(out[i]);
    out[i] = occupancy ? (c ? 1.0f : 0.0f) : (float)c;
  }
}

/* u8 occupancy (checked mode): counts the non-empty cells. */
__global__ void occupied_kernel(const uint8_t *occ, int64_t n, rc_voxel_counters *counters) {
  unsigned int k = 0;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    k += occ[i] != 0;
  rc_voxel_block_add(&counters->nonempty, k);
}

/* One thread per point: atomicMax of the keys of its F features into its
 * cell (out zeroed: key 0 is below every float's); with counters also the
 * dropped points and the cells it found empty. */
__global__ void max_kernel(rc_voxel_src s, unsigned int *out, int64_t G, int64_t F, int64_t col0,
                           rc_voxel_counters *counters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0, fresh = 0;
  const int64_t cell = i < s.N ? rc_voxel_cell(s, i, F * G, &nonfinite, &range) : -1;
  if (cell >= 0) {
    const unsigned int k0 = rc_voxel_max_key(rc_vpt(s, i, col0));
    if (counters)
      fresh = atomicMax(out + cell, k0) == 0u;
    else
      atomicMax(out + cell, k0);
    for (int64_t f = 1; f < F; f++)
      atomicMax(out + cell + f * G, rc_voxel_max_key(rc_vpt(s, i, col0 + f)));
  }
  if (!counters) return;
  rc_voxel_count_dropped(s, counters, nonfinite, range);
  rc_voxel_block_add(&counters->nonempty, fresh);
}

/* The keys of MAX in place to floats (key 0, an empty cell, is 0.0f already). */
__global__ void max_to_f32_kernel(unsigned int *out, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const unsigned int k = out[i];
    if (k) out[i] = __float_as_uint(rc_voxel_max_value(k));
  }
}

/* SUM / MEAN step 1: each point's cell (its plane-0 index in out) and its
 * provisional rank there. */
__global__ void hist_kernel(rc_voxel_src s, rc_groups g, int64_t G, int64_t F, int checked) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0;
  if (i < s.N) {
    const int64_t cell = rc_voxel_cell(s, i, F * G, &nonfinite, &range);
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

/* Plane-0 words of cells with a segment (their start | ALLOCATED); a cell
 * with one point keeps its count, 1. */
#define ALLOCATED 0x80000000u

/* SUM / MEAN step 2 over the cells of cloud blockIdx.x / tiles: cells of
 * two or more points get a segment; an empty cell gets 0 in planes 1 .. F-1
 * (plane 0 holds its count, 0); in checked mode the non-empty cells are
 * counted. */
__global__ void cells_kernel(rc_groups g, float *out, int64_t G, int64_t F, unsigned int tiles,
                             int checked) {
  const int64_t b = blockIdx.x / tiles;
  const int64_t c0 = (int64_t)(blockIdx.x % tiles) * RC_GROUP_TILE + threadIdx.x;
  long long bucket[RC_GROUP_ITEMS];
  unsigned int n[RC_GROUP_ITEMS], singles = 0, grouped = 0;
#pragma unroll
  for (int k = 0; k < RC_GROUP_ITEMS; k++) {
    const int64_t cell = c0 + k * RC_VOXEL_THREADS;
    bucket[k] = b * F * G + cell;
    n[k] = cell < G ? g.count[bucket[k]] : 0u;
    if (cell < G && n[k] == 0)
      for (int64_t f = 1; f < F; f++) out[bucket[k] + f * G] = 0.0f;
    singles += n[k] == 1;
    if (n[k] == 1) n[k] = 0; /* written by the scatter */
    grouped |= n[k];
  }
  if (checked) rc_voxel_block_add(&g.counters->nonempty, singles);
  if (__syncthreads_or(grouped)) rc_groups_alloc(g, bucket, n, ALLOCATED);
}

/* SUM / MEAN step 3: a point of a grouped cell goes to its list; the only
 * point of a cell is its sum (0.0 + x, as the CPU backend adds) and mean. */
__global__ void place_kernel(rc_groups g, rc_voxel_src s, sum_args a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.N) return;
  const long long cell = g.bucket_of[i];
  if (cell < 0) return;
  const unsigned int v = g.count[cell];
  if (v & ALLOCATED) {
    g.list[(v & ~ALLOCATED) + g.rank[i]] = i;
    return;
  }
  for (int64_t f = 0; f < a.F; f++) {
    double acc = 0.0;
    acc += (double)rc_vpt(s, i, a.col0 + f);
    a.out[cell + f * a.G] = rc_voxel_f32(a.mean ? acc / 1.0 : acc);
  }
}

/* SUM / MEAN step 5: each grouped cell's F sums of its points in input
 * order (small cells one per thread, big ones one per block). */
__global__ void sum_kernel(rc_groups g, rc_voxel_src s, sum_args a) {
  __shared__ int sidx[RC_GROUP_BLOCK];
  __shared__ float sval[RC_GROUP_BLOCK];
  const unsigned int n_small = g.counters->n_small, n_big = g.counters->n_big;
  const unsigned int stride = gridDim.x * blockDim.x;
  for (unsigned int k = blockIdx.x * blockDim.x + threadIdx.x; k < n_small; k += stride) {
    const rc_group_seg e = g.seg[k];
    rc_group_small(g, e, [&](const auto &idx) {
      constexpr int W = sizeof(idx) / sizeof(int);
      for (int64_t f = 0; f < a.F; f++) {
        double acc = 0.0;
#pragma unroll
        for (int j = 0; j < W; j++)
          if (j < (int)e.n) acc += (double)rc_vpt(s, idx[j], a.col0 + f);
        a.out[e.bucket + f * a.G] = rc_voxel_f32(a.mean ? acc / (double)e.n : acc);
      }
    });
  }
  for (unsigned int k = blockIdx.x; k < n_big; k += gridDim.x) {
    const rc_group_seg e = g.seg[g.N - 1 - k];
    const int *idx = rc_group_block_sorted(g, e, sidx);
    for (int64_t f = 0; f < a.F; f++) {
      double acc = 0.0; /* thread 0's: the sum is sequential */
      for (unsigned int c0 = 0; c0 < e.n; c0 += RC_GROUP_BLOCK) {
        const unsigned int m = e.n - c0 < RC_GROUP_BLOCK ? e.n - c0 : RC_GROUP_BLOCK;
        for (unsigned int j = threadIdx.x; j < m; j += blockDim.x)
          sval[j] = rc_vpt(s, idx[c0 + j], a.col0 + f);
        __syncthreads();
        if (threadIdx.x == 0)
          for (unsigned int j = 0; j < m; j++) acc += (double)sval[j];
        __syncthreads();
      }
      if (threadIdx.x == 0)
        a.out[e.bucket + f * a.G] = rc_voxel_f32(a.mean ? acc / (double)e.n : acc);
    }
  }
}

unsigned int grid_stride_blocks(int64_t n) {
  unsigned int b = rc_voxel_blocks(n);
  return b < 4096 ? b : 4096;
}

/* COUNT, OCCUPANCY, MAX: out zeroed, one pass of atomics, one pass over out. */
robocache_status dense_atomic(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c) {
  const int64_t G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2];
  const int64_t cells = rc_view_numel(&p->out);
  if (c->checked) {
    void *scratch = NULL;
    robocache_status s =
        rc_cuda_workspace(ctx, p->points.device_id, sizeof(rc_voxel_counters), NULL, &scratch);
    if (s != ROBOCACHE_OK) return s;
    c->counters = (rc_voxel_counters *)scratch;
    RC_CUDA_TRY(ctx, cudaMemsetAsync(c->counters, 0, sizeof(rc_voxel_counters), c->stream));
  }
  RC_CUDA_TRY(ctx,
              cudaMemsetAsync(p->out.data, 0,
                              (size_t)cells * robocache_dtype_size((robocache_dtype)p->out.dtype),
                              c->stream));
  const unsigned int blocks = rc_voxel_blocks(p->N);
  if (p->mode == ROBOCACHE_VOXEL_MAX) {
    max_kernel<<<blocks, RC_VOXEL_THREADS, 0, c->stream>>>(c->src, (unsigned int *)p->out.data, G,
                                                           p->F, p->feat_col, c->counters);
    robocache_status s = rc_voxel_launched(ctx, "voxelize max kernel");
    if (s != ROBOCACHE_OK) return s;
    max_to_f32_kernel<<<grid_stride_blocks(cells), RC_VOXEL_THREADS, 0, c->stream>>>(
        (unsigned int *)p->out.data, cells);
    return rc_voxel_launched(ctx, "voxelize max conversion kernel");
  }
  const int u8 = p->out.dtype == ROBOCACHE_DTYPE_U8;
  count_kernel<<<blocks, RC_VOXEL_THREADS, 0, c->stream>>>(
      c->src, G, u8 ? NULL : (unsigned int *)p->out.data, u8 ? (uint8_t *)p->out.data : NULL,
      c->counters);
  robocache_status s = rc_voxel_launched(ctx, "voxelize count kernel");
  if (s == ROBOCACHE_OK && u8 && c->checked) {
    occupied_kernel<<<grid_stride_blocks(cells), RC_VOXEL_THREADS, 0, c->stream>>>(
        (const uint8_t *)p->out.data, cells, c->counters);
    s = rc_voxel_launched(ctx, "voxelize occupancy kernel");
  } else if (s == ROBOCACHE_OK && p->out.dtype == ROBOCACHE_DTYPE_F32) {
    count_to_f32_kernel<<<grid_stride_blocks(cells), RC_VOXEL_THREADS, 0, c->stream>>>(
        (float *)p->out.data, cells, p->mode == ROBOCACHE_VOXEL_OCCUPANCY);
    s = rc_voxel_launched(ctx, "voxelize count conversion kernel");
  }
  return s;
}

/* SUM, MEAN: steps 1-5 of voxel_groups_cuda.cuh, the cells' counts in plane 0
 * of out (zeroed first). */
robocache_status dense_sum(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c) {
  const int64_t G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2], F = p->F, B = p->B;
  const int64_t tiles = (G + RC_GROUP_TILE - 1) / RC_GROUP_TILE;
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
  RC_CUDA_TRY(ctx, cudaMemsetAsync(c->counters, 0, zeroed, c->stream));
  if (B == 0) return ROBOCACHE_OK;
  RC_CUDA_TRY(ctx, cudaMemset2DAsync(p->out.data, (size_t)(F * G) * sizeof(float), 0,
                                     (size_t)G * sizeof(float), (size_t)B, c->stream));
  hist_kernel<<<rc_voxel_blocks(g.N), RC_VOXEL_THREADS, 0, c->stream>>>(c->src, g, G, F,
                                                                        c->checked);
  s = rc_voxel_launched(ctx, "voxelize cell kernel");
  if (s != ROBOCACHE_OK) return s;
  cells_kernel<<<(unsigned int)(tiles * B), RC_VOXEL_THREADS, 0, c->stream>>>(
      g, (float *)p->out.data, G, F, (unsigned int)tiles, c->checked);
  s = rc_voxel_launched(ctx, "voxelize cells kernel");
  if (s != ROBOCACHE_OK) return s;
  const sum_args a = {(float *)p->out.data, G, F, p->feat_col, p->mode == ROBOCACHE_VOXEL_MEAN};
  place_kernel<<<rc_voxel_blocks(g.N), RC_VOXEL_THREADS, 0, c->stream>>>(g, c->src, a);
  s = rc_voxel_launched(ctx, "voxelize place kernel");
  if (s == ROBOCACHE_OK) s = rc_groups_sort_giants(ctx, c->stream, &g, temp, temp_bytes);
  if (s != ROBOCACHE_OK) return s;
  sum_kernel<<<rc_group_blocks(g.N, g.N), RC_VOXEL_THREADS, 0, c->stream>>>(g, c->src, a);
  return rc_voxel_launched(ctx, "voxelize sum kernel");
}

} // namespace

robocache_status rc_voxelize_dense_cuda(robocache_ctx *ctx, const rc_voxel_problem *p) {
  rc_voxel_call c;
  robocache_status s = rc_voxel_cuda_enter(ctx, p, &c);
  if (s != ROBOCACHE_OK) return s;
  s = p->mode == ROBOCACHE_VOXEL_SUM || p->mode == ROBOCACHE_VOXEL_MEAN ? dense_sum(ctx, p, &c)
                                                                        : dense_atomic(ctx, p, &c);
  return rc_voxel_cuda_end(ctx, p, &c, s, 1);
}
