/* Host-side helpers of the CPU voxelize backends: cloud rows and per-cloud
 * keyers (PCL VoxelGrid origin). */
#include "ops/voxel_problem.h"

#include <math.h>

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
  float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  const float *row = (const float *)p->points.data + begin * p->points.strides[0];
  const int64_t s0 = p->points.strides[0], s1 = p->points.strides[1];
  for (int64_t i = begin; i < end; i++, row += s0) {
    const float q[3] = {row[0], row[s1], row[2 * s1]};
    if (!(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2]))) continue;
    for (int a = 0; a < 3; a++) {
      lo[a] = q[a] < lo[a] ? q[a] : lo[a];
      hi[a] = q[a] > hi[a] ? q[a] : hi[a];
    }
  }
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
