/* Host-side helpers of the CPU voxelize backends: cloud rows and per-cloud
 * keyers (PCL VoxelGrid origin). */
#include "ops/voxel_problem.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int rc_voxel_threads(robocache_ctx *ctx) {
  int t = rc_ctx(ctx)->num_threads;
#ifdef _OPENMP
  if (t <= 0) t = omp_get_max_threads();
#endif
  return t > 0 ? t : 1;
}

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

#define RC_VOXEL_MAX_KEYS 4611686018427387904.0 /* 2^62 */

robocache_status rc_voxel_cloud_keyer(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t begin,
                                      int64_t end, rc_voxel_keyer *k) {
  *k = p->keyer;
  if (!k->pcl) return ROBOCACHE_OK;
  float lo0 = INFINITY, lo1 = INFINITY, lo2 = INFINITY;
  float hi0 = -INFINITY, hi1 = -INFINITY, hi2 = -INFINITY;
  const float *pts = (const float *)p->points.data;
  const int64_t s0 = p->points.strides[0], s1 = p->points.strides[1];
  const int threads = rc_voxel_threads(ctx);
#pragma omp parallel for if (end - begin >= RC_VOXEL_PAR_MIN) num_threads(threads)                 \
    schedule(static) reduction(min                                                                 \
                               : lo0, lo1, lo2) reduction(max                                      \
                                                          : hi0, hi1, hi2)
  for (int64_t i = begin; i < end; i++) {
    const float x = pts[i * s0], y = pts[i * s0 + s1], z = pts[i * s0 + 2 * s1];
    if (!(isfinite(x) && isfinite(y) && isfinite(z))) continue;
    lo0 = x < lo0 ? x : lo0;
    lo1 = y < lo1 ? y : lo1;
    lo2 = z < lo2 ? z : lo2;
    hi0 = x > hi0 ? x : hi0;
    hi1 = y > hi1 ? y : hi1;
    hi2 = z > hi2 ? z : hi2;
  }
  const float lo[3] = {lo0, lo1, lo2}, hi[3] = {hi0, hi1, hi2};
  double total = 1.0;
  for (int a = 0; a < 3; a++) {
    if (lo[a] > hi[a]) { /* no finite point: any grid will do */
      k->lo[a] = 0.0f;
      k->grid[a] = 1;
      continue;
    }
    float minb = rc_floorf(lo[a] * k->inv_leaf[a]), maxb = rc_floorf(hi[a] * k->inv_leaf[a]);
    double extent = (double)(maxb - minb) + 1.0;
    total *= extent;
    if (fabs((double)minb) >= RC_VOXEL_MAX_KEYS || fabs((double)maxb) >= RC_VOXEL_MAX_KEYS ||
        total > RC_VOXEL_MAX_KEYS)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "voxel_downsample: leaf size %g on axis %d is too small for the cloud's "
                      "extent [%g, %g] (more than 2^62 voxels)",
                      (double)p->voxel_size[a], a, (double)lo[a], (double)hi[a]);
    k->lo[a] = minb;
    k->grid[a] = (int64_t)extent;
  }
  return ROBOCACHE_OK;
}
