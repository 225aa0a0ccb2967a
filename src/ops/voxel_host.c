/* Host-side helpers of the CPU voxelize backends: cloud rows, per-cloud
 * keyers (PCL VoxelGrid origin) and the packed layout of hard voxels. */
#include "ops/voxel_problem.h"

#include <math.h>
#include <string.h>

void rc_voxel_cloud_rows(const rc_voxel_problem *p, int64_t b, int64_t *begin, int64_t *end) {
  if (!p->has_offsets) {
    *begin = 0;
    *end = p->N;
    return;
  }
  const int64_t *off = (const int64_t *)p->offsets.data;
  int64_t s = p->offsets.strides[0];
  *begin = off[b * s];
  *end = off[(b + 1) * s];
}

#define BLOCK 256

/* Folds the finite points of rows [row, row + m), m <= BLOCK, into lo / hi:
 * gathered into arrays, then one branch-free loop that vectorises. */
static void block_bounds(const rc_voxel_problem *p, int64_t row, int m, float lo[3], float hi[3]) {
  float x[BLOCK], y[BLOCK], z[BLOCK];
  rc_voxel_gather_xyz(p, row, m, x, y, z);
  float l0 = lo[0], l1 = lo[1], l2 = lo[2], h0 = hi[0], h1 = hi[1], h2 = hi[2];
#pragma omp simd reduction(min : l0, l1, l2) reduction(max : h0, h1, h2)
  for (int j = 0; j < m; j++) {
    const int fin = (x[j] - x[j] == 0.0f) & (y[j] - y[j] == 0.0f) & (z[j] - z[j] == 0.0f);
    const float a = fin ? x[j] : INFINITY, b = fin ? y[j] : INFINITY, c = fin ? z[j] : INFINITY;
    l0 = a < l0 ? a : l0;
    l1 = b < l1 ? b : l1;
    l2 = c < l2 ? c : l2;
    const float d = fin ? x[j] : -INFINITY, e = fin ? y[j] : -INFINITY, f = fin ? z[j] : -INFINITY;
    h0 = d > h0 ? d : h0;
    h1 = e > h1 ? e : h1;
    h2 = f > h2 ? f : h2;
  }
  lo[0] = l0, lo[1] = l1, lo[2] = l2, hi[0] = h0, hi[1] = h1, hi[2] = h2;
}

robocache_status rc_voxel_cloud_keyer(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t begin,
                                      int64_t end, rc_voxel_keyer *k) {
  *k = p->keyer;
  if (!k->pcl) return ROBOCACHE_OK;
  float lo0 = INFINITY, lo1 = INFINITY, lo2 = INFINITY;
  float hi0 = -INFINITY, hi1 = -INFINITY, hi2 = -INFINITY;
  const int64_t blocks = (end - begin + BLOCK - 1) / BLOCK;
#pragma omp parallel for if (end - begin >= RC_VOXEL_PAR_MIN) num_threads(rc_ctx_threads(ctx))     \
    schedule(static) reduction(min                                                                 \
                               : lo0, lo1, lo2) reduction(max                                      \
                                                          : hi0, hi1, hi2)
  for (int64_t blk = 0; blk < blocks; blk++) {
    const int64_t row = begin + blk * BLOCK, m = end - row < BLOCK ? end - row : BLOCK;
    float l[3] = {lo0, lo1, lo2}, h[3] = {hi0, hi1, hi2};
    block_bounds(p, row, (int)m, l, h);
    lo0 = l[0], lo1 = l[1], lo2 = l[2], hi0 = h[0], hi1 = h[1], hi2 = h[2];
  }
  const float lo[3] = {lo0, lo1, lo2}, hi[3] = {hi0, hi1, hi2};
  const int a = rc_voxel_pcl_keyer(k, lo, hi);
  return a < 0 ? ROBOCACHE_OK : rc_voxel_pcl_too_big(ctx, p, a, lo[a], hi[a]);
}

robocache_status rc_voxel_pcl_too_big(robocache_ctx *ctx, const rc_voxel_problem *p, int axis,
                                      float lo, float hi) {
  return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                  "voxel_downsample: leaf size %g on axis %d is too small for the cloud's "
                  "extent [%g, %g] (more than 2^62 voxels)",
                  (double)p->voxel_size[axis], axis, (double)lo, (double)hi);
}

/* Rows [lo, hi) of the hard outputs become padding. */
static void pad_rows(const rc_voxel_problem *p, int64_t lo, int64_t hi) {
  const int64_t PC = p->max_points * p->C;
  memset((float *)p->voxels.data + lo * PC, 0, (size_t)((hi - lo) * PC) * sizeof(float));
  memset((int32_t *)p->num_points.data + lo, 0, (size_t)(hi - lo) * sizeof(int32_t));
  int32_t *coords = (int32_t *)p->coords.data;
  for (int64_t r = lo * 4; r < hi * 4; r++) coords[r] = -1;
}

void rc_voxel_hard_pack(const rc_voxel_problem *p) {
  const int64_t M = p->max_voxels, PC = p->max_points * p->C;
  float *voxels = (float *)p->voxels.data;
  int32_t *coords = (int32_t *)p->coords.data, *num_points = (int32_t *)p->num_points.data;
  const int32_t *num_voxels = (const int32_t *)p->num_voxels.data;
  int64_t row = 0; /* <= b * M: each cloud moves down (or stays) */
  for (int64_t b = 0; b < p->B; b++) {
    const int64_t kept = num_voxels[b];
    memmove(voxels + row * PC, voxels + b * M * PC, (size_t)(kept * PC) * sizeof(float));
    memmove(coords + row * 4, coords + b * M * 4, (size_t)(kept * 4) * sizeof(int32_t));
    memmove(num_points + row, num_points + b * M, (size_t)kept * sizeof(int32_t));
    row += kept;
  }
  /* the moves wrote only rows < V; rows >= V are still the backend's, padding
   * except where they held a cloud's kept voxels */
  for (int64_t b = 0; b < p->B; b++) {
    const int64_t lo = b * M > row ? b * M : row, hi = b * M + num_voxels[b];
    if (lo < hi) pad_rows(p, lo, hi);
  }
}
