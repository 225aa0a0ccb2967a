/* CUDA hard voxelization (mmcv deterministic semantics, DESIGN §1.3), without
 * a sort:
 *   1. insert: each in-range point's voxel (cloud, key) goes into the voxel
 *      table (voxel_table_cuda.cuh) under the key b * G + key, 1.5 slots per
 *      point, all of them open to every point;
 *   2-4. the table's voxels numbered in order of their first point
 *      (rc_table_number), cloud b's voxel v being rank(first point) -
 *      rank(offsets[b]), and their point lists;
 *   5. (packed layout, B > 1) one block: row0[b] = the kept voxels of
 *      clouds 0 .. b-1;
 *   6. write (voxels zeroed first): each voxel's first P points in input
 *      order into its row, b * M + v (row0[b] + v when packed; 16-byte
 *      copies for 4 contiguous columns), or counted as dropped when v >= M;
 *      each padding row gets coords -1 and num_points 0.
 * The kernels of steps 1, 2, 3 (scatter), 5 and 6 are programmatic dependent
 * launches on sm_90 and later, after rc_voxel_zero (voxels and scratch); the
 * CUB launches are ordinary.
 * Which slot a voxel gets depends on the scheduling, nothing written does:
 * bitwise identical to the CPU backend. One stream synchronisation at the end
 * (stats, offsets check) in checked mode. */
#include "cuda/voxel_table_cuda.cuh"

#include <cub/block/block_scan.cuh>

namespace {

struct hard_out {
  float *voxels;
  int32_t *coords, *num_points, *num_voxels;
  int64_t P, M, C;
  int64_t G;           /* cells of the grid */
  const int64_t *row0; /* packed: [B+1] first row of each cloud (row0[B] = V); else NULL */
  int vec4;            /* C == 4, points rows contiguous and 16-byte aligned, voxels aligned */
  int coords4;         /* coords 16-byte aligned */
};

/* Step 1, one thread per point: its cell found before the wait for the
 * zeroing kernel (the point's loads in flight meanwhile). */
__global__ void insert_kernel(rc_voxel_src s, rc_groups g, rc_voxel_table t, int64_t G,
                              int checked) {
  rc_pdl_let_dependents_launch();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0;
  const int64_t cell = i < s.N ? rc_voxel_cell(s, i, G, &nonfinite, &range) : -1; /* b*G+key */
  rc_pdl_wait();
  if (i < s.N) {
    long long bucket = -1;
    if (cell >= 0) { /* the table has more slots than points: never full */
      const unsigned int slot = rc_table_insert(t, (unsigned long long)cell, 0, t.cap);
      rc_table_add_point(t, g, slot, i);
      bucket = slot;
    }
    g.bucket_of[i] = bucket;
  }
  if (checked) rc_voxel_count_dropped(s, g.counters, nonfinite, range);
}

/* Voxels kept of cloud b: its first points, at most M. */
__device__ int64_t kept_of(const rc_voxel_src &s, const rc_first_bits &first, int64_t M,
                           int64_t b) {
  const int64_t total = (int64_t)rc_first_rank(first, rc_voxel_off(s, b + 1)) -
                        rc_first_rank(first, rc_voxel_off(s, b));
  return total < 0 ? 0 : total < M ? total : M;
}

/* Step 5, one block: row0[b] = kept voxels of clouds 0 .. b-1, b = 0 .. B. */
__global__ void pack_kernel(rc_voxel_src s, rc_first_bits first, int64_t M, int64_t *row0) {
  using block_scan = cub::BlockScan<int64_t, RC_VOXEL_THREADS>;
  __shared__ typename block_scan::TempStorage tmp;
  rc_pdl_enter();
  int64_t carry = 0;
  for (int64_t b0 = 0; b0 < s.B; b0 += RC_VOXEL_THREADS) {
    const int64_t b = b0 + threadIdx.x;
    int64_t before, chunk;
    block_scan(tmp).ExclusiveSum(b < s.B ? kept_of(s, first, M, b) : 0, before, chunk);
    if (b < s.B) row0[b] = carry + before;
    carry += chunk;
    __syncthreads(); /* tmp reused */
  }
  if (threadIdx.x == 0) row0[s.B] = carry;
}

/* Where the voxel of segment e goes: its cloud *b, voxel coordinates ijk
 * and output row (-1: dropped past M; -2: none, offsets that failed the
 * checks). */
__device__ int64_t voxel_row(const rc_voxel_table &t, const rc_voxel_src &s,
                             const rc_first_bits &first, const hard_out &o, const rc_group_seg &e,
                             int *b, int64_t ijk[3]) {
  const unsigned int slot = (unsigned int)e.bucket;
  const unsigned long long k = t.key[slot] - 1, G = (unsigned long long)o.G;
  *b = (int)(k / G);
  rc_voxel_unkey(&s.keyer, (int64_t)(k % G), ijk);
  const int64_t v = (int64_t)rc_first_rank(first, rc_table_first(t, slot)) -
                    rc_first_rank(first, rc_voxel_off(s, *b));
  return v >= o.M ? -1 : v < 0 ? -2 : (o.row0 ? o.row0[*b] : *b * o.M) + v;
}

/* coords[row] = (b, z, y, x) and num_points[row]. */
__device__ void write_head(const hard_out &o, int64_t row, int b, const int64_t ijk[3],
                           int64_t np) {
  const int4 v = make_int4(b, (int)ijk[2], (int)ijk[1], (int)ijk[0]);
  int32_t *cd = o.coords + row * 4;
  if (o.coords4) {
    *(int4 *)cd = v;
  } else {
    cd[0] = v.x, cd[1] = v.y, cd[2] = v.z, cd[3] = v.w;
  }
  o.num_points[row] = (int32_t)np;
}

/* The C columns of point i to dst. */
__device__ __forceinline__ void copy_point(const rc_voxel_src &s, const hard_out &o, float *dst,
                                           int64_t i) {
  if (o.vec4) {
    *(float4 *)dst = *(const float4 *)(s.pts + i * s.s0);
    return;
  }
  for (int64_t c = 0; c < o.C; c++) dst[c] = rc_vpt(s, i, c);
}

/* Step 6: small voxels one per thread, padding rows one per thread, big
 * voxels one per block; in checked mode the dropped voxels and points are
 * counted. */
__global__ void write_kernel(rc_groups g, rc_voxel_src s, rc_voxel_table t, rc_first_bits first,
                             hard_out o, int checked) {
  __shared__ int sidx[RC_GROUP_BLOCK];
  rc_pdl_enter();
  unsigned int dropped_points = 0, dropped_voxels = 0, dropped_voxel_points = 0;
  const unsigned int n_small = g.counters->n_small, n_big = g.counters->n_big;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t k = tid; k < n_small; k += stride) {
    const rc_group_seg e = g.seg[k];
    int b;
    int64_t ijk[3];
    const int64_t row = voxel_row(t, s, first, o, e, &b, ijk);
    if (row < 0) {
      dropped_voxels += row == -1;
      dropped_voxel_points += row == -1 ? e.n : 0;
      continue;
    }
    const int64_t np = e.n < o.P ? e.n : o.P;
    dropped_points += (unsigned int)(e.n - np);
    write_head(o, row, b, ijk, np);
    float *dst = o.voxels + row * o.P * o.C;
    rc_group_small(g, e, [&](const auto &idx) {
      constexpr int W = sizeof(idx) / sizeof(int);
#pragma unroll
      for (int j = 0; j < W; j++)
        if (j < np) copy_point(s, o, dst + j * o.C, idx[j]);
    });
  }
  for (int64_t r = tid; r < s.B * o.M; r += stride) {
    const int64_t b = r / o.M, v = r % o.M;
    const int64_t kept = o.row0 ? o.row0[b + 1] - o.row0[b] : kept_of(s, first, o.M, b);
    if (v == 0) o.num_voxels[b] = (int32_t)kept;
    if (o.row0 ? r < o.row0[s.B] : v < kept) continue;
    const int64_t none[3] = {-1, -1, -1};
    write_head(o, r, -1, none, 0);
  }
  for (unsigned int k = blockIdx.x; k < n_big; k += gridDim.x) {
    const rc_group_seg e = g.seg[g.N - 1 - k];
    int b;
    int64_t ijk[3];
    const int64_t row = voxel_row(t, s, first, o, e, &b, ijk); /* the same in every thread */
    if (row < 0) {
      if (threadIdx.x == 0 && row == -1) dropped_voxels++, dropped_voxel_points += e.n;
      continue;
    }
    const int *idx = rc_group_block_sorted(g, e, sidx);
    const int64_t np = e.n < o.P ? e.n : o.P;
    if (threadIdx.x == 0) {
      write_head(o, row, b, ijk, np);
      dropped_points += (unsigned int)(e.n - np);
    }
    float *dst = o.voxels + row * o.P * o.C;
    for (int64_t j = threadIdx.x; j < np; j += blockDim.x) copy_point(s, o, dst + j * o.C, idx[j]);
    __syncthreads();
  }
  if (!checked) return;
  rc_voxel_block_add(&g.counters->dropped_max_points, dropped_points);
  rc_voxel_block_add(&g.counters->dropped_voxels, dropped_voxels);
  rc_voxel_block_add(&g.counters->dropped_voxel_points, dropped_voxel_points);
}

/* Steps 1-6 on the call's scratch. */
robocache_status hard(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c) {
  const int N = c->src.N;
  const int64_t G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2];
  if (p->B > 0 && (uint64_t)G > (UINT64_MAX - 1) / (uint64_t)p->B)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "voxelize_hard (cuda): %lld clouds of %lld cells: clouds x cells must be "
                    "below 2^64 - 1",
                    (long long)p->B, (long long)G);
  rc_table_call tc;
  void *none = NULL, *row0 = NULL;
  const int pack = p->packed && p->B > 1;
  robocache_status s =
      rc_table_scratch(ctx, p, c, (int64_t)N + N / 2, 0, &none,
                       pack ? (size_t)(p->B + 1) * sizeof(int64_t) : 0, &row0, &tc);
  if (s != ROBOCACHE_OK) return s;
  /* one coalesced pass of zeros is faster than zeroing the free slots in the kernel */
  cudaError_t e = rc_voxel_zero(p->voxels.data, (size_t)rc_view_numel(&p->voxels) * sizeof(float),
                                c->counters, tc.zeroed, c->stream, c->pdl);
  if (e == cudaSuccess)
    e = rc_cuda_launch(insert_kernel, rc_voxel_blocks(N), RC_VOXEL_THREADS, c->stream, c->pdl,
                       c->src, tc.g, tc.t, G, c->checked);
  s = rc_cuda_check(ctx, e, "voxelize_hard insert kernel");
  if (s == ROBOCACHE_OK) s = rc_table_number(ctx, c, &tc);
  if (s == ROBOCACHE_OK && pack)
    s = rc_cuda_check(ctx,
                      rc_cuda_launch(pack_kernel, 1, RC_VOXEL_THREADS, c->stream, c->pdl, c->src,
                                     tc.first, p->max_voxels, (int64_t *)row0),
                      "voxelize_hard pack kernel");
  if (s != ROBOCACHE_OK) return s;
  hard_out o = {(float *)p->voxels.data,
                (int32_t *)p->coords.data,
                (int32_t *)p->num_points.data,
                (int32_t *)p->num_voxels.data,
                p->max_points,
                p->max_voxels,
                p->C,
                G,
                (const int64_t *)row0,
                0,
                ((uintptr_t)p->coords.data & 15) == 0};
  o.vec4 = p->C == 4 && c->src.s1 == 1 && c->src.s0 % 4 == 0 && ((uintptr_t)c->src.pts & 15) == 0 &&
           ((uintptr_t)o.voxels & 15) == 0;
  const int64_t rows = p->B * p->max_voxels;
  e = rc_cuda_launch(write_kernel, rc_group_blocks(N, rows > N ? rows : N), RC_VOXEL_THREADS,
                     c->stream, c->pdl, tc.g, c->src, tc.t, tc.first, o, c->checked);
  return rc_cuda_check(ctx, e, "voxelize_hard write kernel");
}

} // namespace

robocache_status rc_voxelize_hard_cuda(robocache_ctx *ctx, const rc_voxel_problem *p) {
  rc_voxel_call c;
  robocache_status s = rc_voxel_cuda_enter(ctx, p, &c);
  if (s != ROBOCACHE_OK) return s;
  return rc_voxel_cuda_end(ctx, p, &c, hard(ctx, p, &c));
}
