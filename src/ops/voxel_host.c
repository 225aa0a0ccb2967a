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
  for (int64_t i = begin; i < end; i++) {
    float x = rc_voxel_coord(p, i, 0), y = rc_voxel_coord(p, i, 1), z = rc_voxel_coord(p, i, 2);
    if (!(isfinite(x) && isfinite(y) && isfinite(z))) continue;
    const float q[3] = {x, y, z};
    for (int a = 0; a < 3; a++) {
      if (q[a] < lo[a]) lo[a] = q[a];
      if (q[a] > hi[a]) hi[a] = q[a];
    }
  }
  double total = 1.0;
  for (int a = 0; a < 3; a++) {
    if (lo[a] > hi[a]) { /* no finite point: any grid will do */
      k->lo[a] = 0.0f;
      k->grid[a] = 1;
      continue;
    }
    float minb = floorf(lo[a] * k->inv_leaf[a]), maxb = floorf(hi[a] * k->inv_leaf[a]);
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
