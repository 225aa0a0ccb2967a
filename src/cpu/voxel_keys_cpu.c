/* Voxel keys in blocks of points: x, y, z are gathered into small arrays and
 * each axis goes through a branch-free loop the compiler vectorises (f32
 * division or multiply, floor by int32 truncation, range test, int32 index),
 * computing exactly what rc_voxel_locate computes. Used when every index of
 * the keyer fits in int32 (any realistic grid); otherwise points go one by
 * one through rc_voxel_point_key. */
#include "cpu/voxel_keys_cpu.h"

#define BLOCK 256
#define PCL_LIMIT 536870912.0f /* 2^29: PCL floors inside +-2^29 take the fast path */

/* Range grid axis: v = (x - lo) / size in range when 0 <= v < grid; index
 * (int32)v (= floor(v) for v >= 0). ok[j] &= in range. */
static void axis_range(const float *restrict x, int32_t *restrict ix, uint8_t *restrict ok, int m,
                       float lo, float size, float grid) {
  for (int j = 0; j < m; j++) {
    float v = (x[j] - lo) / size;
    int in = v >= 0.0f && v < grid;
    ok[j] &= (uint8_t)in;
    ix[j] = (int32_t)(in ? v : 0.0f);
  }
}

/* PCL axis: floor(x * inv) - lo, floor by truncation (|u| < 2^30 after the
 * clamp; finite points of a keyer on the fast path are well inside). */
static void axis_pcl(const float *restrict x, int32_t *restrict ix, const uint8_t *restrict fin,
                     int m, float inv, float lo) {
  for (int j = 0; j < m; j++) {
    float u = fin[j] ? x[j] * inv : 0.0f;
    u = u < -1073741824.0f ? -1073741824.0f : (u > 1073741824.0f ? 1073741824.0f : u);
    float t = (float)(int32_t)u;
    t = t > u ? t - 1.0f : t;
    ix[j] = (int32_t)(fin[j] ? t - lo : 0.0f);
  }
}

static int fast_path(const rc_voxel_keyer *k) {
  for (int a = 0; a < 3; a++) {
    if (k->grid[a] >= (int64_t)1 << 30) return 0;
    if (k->pcl && !(k->lo[a] > -PCL_LIMIT && k->lo[a] + (float)k->grid[a] < PCL_LIMIT)) return 0;
  }
  return 1;
}

static void block_keys(const rc_voxel_problem *p, const rc_voxel_keyer *k, int64_t row, int m,
                       int64_t *key, int64_t *nonfinite, int64_t *range) {
  float xyz[3][BLOCK];
  int32_t idx[3][BLOCK];
  uint8_t fin[BLOCK], ok[BLOCK];
  const float *src = (const float *)p->points.data + row * p->points.strides[0];
  const int64_t s0 = p->points.strides[0], s1 = p->points.strides[1];
  for (int j = 0; j < m; j++, src += s0) {
    xyz[0][j] = src[0];
    xyz[1][j] = src[s1];
    xyz[2][j] = src[2 * s1];
  }
  for (int j = 0; j < m; j++) {
    float x = xyz[0][j], y = xyz[1][j], z = xyz[2][j];
    fin[j] = (uint8_t)((x - x == 0.0f) & (y - y == 0.0f) & (z - z == 0.0f));
    ok[j] = fin[j];
  }
  for (int a = 0; a < 3; a++) {
    if (k->pcl)
      axis_pcl(xyz[a], idx[a], fin, m, k->inv_leaf[a], k->lo[a]);
    else
      axis_range(xyz[a], idx[a], ok, m, k->lo[a], k->size[a], (float)k->grid[a]);
  }
  const int64_t X = k->grid[0], Y = k->grid[1];
  for (int j = 0; j < m; j++) {
    *nonfinite += !fin[j];
    *range += fin[j] && !ok[j];
    key[j] = !fin[j]  ? RC_KEY_NONFINITE
             : !ok[j] ? RC_KEY_RANGE
                      : ((int64_t)idx[2][j] * Y + idx[1][j]) * X + idx[0][j];
  }
}

void rc_voxel_keys_cpu(const rc_voxel_problem *p, const rc_voxel_keyer *k, int64_t begin, int64_t n,
                       int threads, int64_t *key, int64_t *nonfinite, int64_t *range) {
  int64_t nf = 0, nr = 0;
  const int fast = fast_path(k);
  const int64_t blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for num_threads(threads) if (n >= 16384) schedule(static) reduction(+ : nf, nr)
  for (int64_t blk = 0; blk < blocks; blk++) {
    const int64_t i0 = blk * BLOCK, m = n - i0 < BLOCK ? n - i0 : BLOCK;
    if (fast) {
      block_keys(p, k, begin + i0, (int)m, key + i0, &nf, &nr);
      continue;
    }
    for (int64_t i = i0; i < i0 + m; i++) {
      int64_t kk = 0;
      int cls = rc_voxel_point_key(p, k, begin + i, &kk);
      nf += cls == RC_VOXEL_NONFINITE;
      nr += cls == RC_VOXEL_RANGE;
      key[i] = cls == RC_VOXEL_IN ? kk : cls == RC_VOXEL_RANGE ? RC_KEY_RANGE : RC_KEY_NONFINITE;
    }
  }
  *nonfinite += nf;
  *range += nr;
}
