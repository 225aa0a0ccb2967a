/* Voxel index math shared by every voxelize backend (host + device,
 * header-only). Follows the mmcv / spconv kernels: the index of a coordinate
 * is floor((p - min) / size) computed in f32, in range when in [0, grid).
 * PCL VoxelGrid indices (no range) are floor(p * inv_leaf) - floor(min *
 * inv_leaf), in f32, as pcl::VoxelGrid::applyFilter computes them. */
#ifndef ROBOCACHE_COMMON_VOXEL_H
#define ROBOCACHE_COMMON_VOXEL_H

#include <math.h>
#include <stdint.h>

#include "common/dtype.h"

/* Classification of one point. */
#define RC_VOXEL_IN 0        /* in range: key is valid */
#define RC_VOXEL_RANGE 1     /* finite, outside point_cloud_range */
#define RC_VOXEL_NONFINITE 2 /* x, y or z NaN or infinite */

/* How the points of one cloud map to voxels. */
typedef struct rc_voxel_keyer {
  int pcl;           /* 0: point_cloud_range grid; 1: PCL VoxelGrid grid */
  float lo[3];       /* range min (pcl: floor(min * inv_leaf) as f32) */
  float size[3];     /* voxel_size (pcl: unused) */
  float inv_leaf[3]; /* pcl: 1 / voxel_size in f32 */
  int64_t grid[3];   /* x, y, z extents of the key space */
} rc_voxel_keyer;

/* Index on one axis of the point_cloud_range grid, floor((p - lo) / size)
 * in f32; 0 when out of range. With v = (p - lo) / size, floor(v) >= 0
 * exactly when v >= 0 (NaN fails), and for v >= 0 floor(v) is the
 * truncation (int64_t)v: no floorf call needed. The index is compared with
 * the grid as an integer (a grid above 2^24 voxels is not a float). */
RC_HD int rc_voxel_axis(float p, float lo, float size, int64_t grid, int64_t *idx) {
  const float v = (p - lo) / size;
  if (!(v >= 0.0f && v < 9.2e18f)) return 0;
  *idx = (int64_t)v;
  return *idx < grid;
}

/* floorf(x) for finite x (the sign of a zero result may differ), inline:
 * floats of magnitude >= 2^23 are integers already. */
RC_HD float rc_floorf(float x) {
  if (!(x > -8388608.0f && x < 8388608.0f)) return x;
  float t = (float)(int32_t)x;
  return t > x ? t - 1.0f : t;
}

/* Most voxels of a PCL grid (indices are int64 after the shift). */
#define RC_VOXEL_MAX_KEYS 4611686018427387904.0 /* 2^62 */

/* Completes the PCL keyer *k of a cloud whose finite points span lo[a] ..
 * hi[a] on axis a (lo[a] > hi[a]: no finite point, any grid will do): the
 * grid from floor(lo * inv_leaf) to floor(hi * inv_leaf), its extent
 * counted exactly in int64 (the floors are integers, in float, that may be
 * far apart). Returns -1, or the first axis at which the grid passes
 * RC_VOXEL_MAX_KEYS voxels (*k then only partly set). */
RC_HD int rc_voxel_pcl_keyer(rc_voxel_keyer *k, const float lo[3], const float hi[3]) {
  double total = 1.0;
  for (int a = 0; a < 3; a++) {
    if (lo[a] > hi[a]) {
      k->lo[a] = 0.0f;
      k->grid[a] = 1;
      continue;
    }
    const float minb = rc_floorf(lo[a] * k->inv_leaf[a]), maxb = rc_floorf(hi[a] * k->inv_leaf[a]);
    if (!(fabs((double)minb) < RC_VOXEL_MAX_KEYS && fabs((double)maxb) < RC_VOXEL_MAX_KEYS))
      return a;
    const int64_t extent = (int64_t)maxb - (int64_t)minb + 1;
    total *= (double)extent;
    if (total > RC_VOXEL_MAX_KEYS) return a;
    k->lo[a] = minb;
    k->grid[a] = extent;
  }
  return -1;
}

/* Classifies point (x, y, z) and, when RC_VOXEL_IN, writes its voxel
 * coordinates (ix, iy, iz) and linear key (iz * Y + iy) * X + ix. */
RC_HD int rc_voxel_locate(const rc_voxel_keyer *k, float x, float y, float z, int64_t ijk[3],
                          int64_t *key) {
  if (!(isfinite(x) && isfinite(y) && isfinite(z))) return RC_VOXEL_NONFINITE;
  const float p[3] = {x, y, z};
  for (int a = 0; a < 3; a++) {
    if (k->pcl) { /* exact in int64: the floats are integers */
      ijk[a] = (int64_t)rc_floorf(p[a] * k->inv_leaf[a]) - (int64_t)k->lo[a];
    } else if (!rc_voxel_axis(p[a], k->lo[a], k->size[a], k->grid[a], &ijk[a])) {
      return RC_VOXEL_RANGE;
    }
  }
  *key = (ijk[2] * k->grid[1] + ijk[1]) * k->grid[0] + ijk[0];
  return RC_VOXEL_IN;
}

/* The voxel coordinates (x, y, z) of a linear key. */
RC_HD void rc_voxel_unkey(const rc_voxel_keyer *k, int64_t key, int64_t ijk[3]) {
  ijk[0] = key % k->grid[0];
  key /= k->grid[0];
  ijk[1] = key % k->grid[1];
  ijk[2] = key / k->grid[1];
}

/* A f64 sum or mean rounded to its f32 output, every NaN as the quiet NaN
 * 0x7fc00000: x86 keeps the payload of a NaN operand, NVIDIA GPUs return
 * 0x7fffffff, and the backends' outputs must be bitwise equal. */
RC_HD float rc_voxel_f32(double x) {
  const float f = (float)x;
  return (rc_f32_bits(f) & 0x7fffffffu) > 0x7f800000u ? rc_bits_f32(0x7fc00000u) : f;
}

/* Dense MAX is the maximum in a total order of the floats: -inf < ... <
 * -0.0 < +0.0 < ... < +inf < NaN, so a voxel holding a NaN has the maximum
 * NaN and +0.0 beats -0.0. It does not depend on the order of the points,
 * so every backend (GPU atomics included) gives the same bits.
 * rc_voxel_max_key maps a float to a 32-bit key with that order (every NaN
 * to 0xffffffff); no float maps to 0, the key of "no point yet".
 * rc_voxel_max_value maps a key back: 0 -> 0.0f (an empty voxel), the NaN key
 * -> the quiet NaN 0x7fc00000. */
RC_HD uint32_t rc_voxel_max_key(float x) {
  const uint32_t u = rc_f32_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

RC_HD float rc_voxel_max_value(uint32_t k) {
  if (k == 0) return 0.0f;
  if (k == 0xffffffffu) return rc_bits_f32(0x7fc00000u);
  return rc_bits_f32((k & 0x80000000u) ? k & 0x7fffffffu : ~k);
}

#endif
