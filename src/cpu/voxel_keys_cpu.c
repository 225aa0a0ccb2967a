/* Voxel keys in blocks of points: x, y, z are gathered into small arrays and
 * each axis goes through a branch-free loop the compiler vectorises (f32
 * division or multiply, floor by int32 truncation, range test, int32 index),
 * computing exactly what rc_voxel_locate computes. Used when every index of
 * the keyer fits in int32 (any realistic grid); otherwise points go one by
 * one through rc_voxel_point_key. */
#include "cpu/voxel_keys_cpu.h"

#include "cpu/cpu_clones.h"

#define PCL_LIMIT 536870912.0f /* 2^29: PCL floors inside +-2^29 take the fast path */
#define FIXED_BITS 20          /* voxels per axis of the fixed PCL grid: 2^20 */
#define FIXED_N ((int64_t)1 << FIXED_BITS)

void rc_voxel_pcl_fixed_keyer(const rc_voxel_problem *p, rc_voxel_keyer *k) {
  *k = p->keyer;
  for (int a = 0; a < 3; a++) {
    k->lo[a] = -(float)(FIXED_N / 2);
    k->grid[a] = FIXED_N;
  }
}

/* Range grid axis: v = (x - lo) / size in range when 0 <= v < grid; index
 * (int32)v (= floor(v) for v >= 0). ok[j] &= in range. */
static void axis_range(const float *restrict x, int32_t *restrict ix, int32_t *restrict ok, int m,
                       float lo, float size, float grid) {
  for (int j = 0; j < m; j++) {
    float v = (x[j] - lo) / size;
    int32_t in = v >= 0.0f && v < grid;
    ok[j] &= in;
    ix[j] = (int32_t)(in ? v : 0.0f);
  }
}

/* PCL axis: floor(x * inv) - lo, ok[j] &= in [0, grid) (index 0 if not).
 * x is overwritten with x * inv (-2^30, out of any fast-path grid, when NaN,
 * infinite or beyond +-2^30); the floor is int32 truncation minus 1 below
 * negative non-integers. Two loops, because GCC vectorises each but not the
 * two fused. */
static void axis_pcl(float *restrict x, int32_t *restrict ix, int32_t *restrict ok, int m,
                     float inv, int32_t lo, int32_t grid) {
  for (int j = 0; j < m; j++) {
    float u = x[j] * inv;
    x[j] = u >= -1073741824.0f && u < 1073741824.0f ? u : -1073741824.0f;
  }
  for (int j = 0; j < m; j++) {
    int32_t t = (int32_t)x[j];
    int32_t i = t - ((float)t > x[j]) - lo;
    int32_t in = i >= 0 && i < grid;
    ok[j] &= in;
    ix[j] = in ? i : 0;
  }
}

/* Whether the keyer's indices fit the int32 loops: range grids under 2^30
 * voxels per axis (axis_range compares v with the grid as a float: exact,
 * the grid being round((max - min) / size) in f32), PCL grids inside
 * +-2^29. */
static int fast_path(const rc_voxel_keyer *k) {
  for (int a = 0; a < 3; a++) {
    if (k->grid[a] >= (int64_t)1 << 30) return 0;
    if (k->pcl && !(k->lo[a] > -PCL_LIMIT && (double)k->lo[a] + (double)k->grid[a] < PCL_LIMIT))
      return 0;
  }
  return 1;
}

/* The fast path for m <= RC_KEY_BLOCK rows. */
RC_CPU_CLONES static void block_fast(const rc_voxel_problem *p, const rc_voxel_keyer *k,
                                     int64_t row, int m, int64_t *restrict key, int64_t *nonfinite,
                                     int64_t *range) {
  float xyz[3][RC_KEY_BLOCK];
  int32_t idx[3][RC_KEY_BLOCK], fin[RC_KEY_BLOCK], ok[RC_KEY_BLOCK];
  rc_voxel_gather_xyz(p, row, m, xyz[0], xyz[1], xyz[2]);
  for (int j = 0; j < m; j++) {
    float x = xyz[0][j], y = xyz[1][j], z = xyz[2][j];
    fin[j] = (x - x == 0.0f) & (y - y == 0.0f) & (z - z == 0.0f);
    ok[j] = fin[j];
  }
  for (int a = 0; a < 3; a++) {
    if (k->pcl)
      axis_pcl(xyz[a], idx[a], ok, m, k->inv_leaf[a], (int32_t)k->lo[a], (int32_t)k->grid[a]);
    else
      axis_range(xyz[a], idx[a], ok, m, k->lo[a], k->size[a], (float)k->grid[a]);
  }
  int32_t nf = 0, nr = 0;
  for (int j = 0; j < m; j++) {
    nf += !fin[j];
    nr += fin[j] & !ok[j];
  }
  *nonfinite += nf;
  *range += nr;
  const int64_t X = k->grid[0], Y = k->grid[1];
  if (X == FIXED_N && Y == FIXED_N && k->grid[2] <= FIXED_N) {
    /* the fixed PCL grid: (iz * Y + iy) * X + ix = iz << 40 | iy << 20 | ix,
     * built from 32-bit halves, which vectorise (int64 products do not) */
    for (int j = 0; j < m; j++) {
      uint32_t lo = (uint32_t)idx[0][j] | (uint32_t)idx[1][j] << FIXED_BITS;
      uint32_t hi = (uint32_t)idx[1][j] >> (32 - FIXED_BITS) | (uint32_t)idx[2][j]
                                                                   << (2 * FIXED_BITS - 32);
      int64_t kk = (int64_t)((uint64_t)hi << 32 | lo);
      key[j] = ok[j] ? kk : fin[j] ? RC_KEY_RANGE : RC_KEY_NONFINITE;
    }
    return;
  }
  for (int j = 0; j < m; j++) {
    int64_t kk = ((int64_t)idx[2][j] * Y + idx[1][j]) * X + idx[0][j];
    key[j] = ok[j] ? kk : fin[j] ? RC_KEY_RANGE : RC_KEY_NONFINITE;
  }
}

void rc_voxel_keys_block(const rc_voxel_problem *p, const rc_voxel_keyer *k, int64_t row, int m,
                         int64_t *key, int64_t *nonfinite, int64_t *range) {
  if (fast_path(k)) {
    block_fast(p, k, row, m, key, nonfinite, range);
    return;
  }
  for (int i = 0; i < m; i++) {
    int64_t kk = 0;
    int cls = rc_voxel_point_key(p, k, row + i, &kk);
    *nonfinite += cls == RC_VOXEL_NONFINITE;
    *range += cls == RC_VOXEL_RANGE;
    key[i] = cls == RC_VOXEL_IN ? kk : cls == RC_VOXEL_RANGE ? RC_KEY_RANGE : RC_KEY_NONFINITE;
  }
}

void rc_voxel_keys_cpu(const rc_voxel_problem *p, const rc_voxel_keyer *k, int64_t begin, int64_t n,
                       int threads, int64_t *key, int64_t *nonfinite, int64_t *range) {
  int64_t nf = 0, nr = 0;
  const int64_t blocks = (n + RC_KEY_BLOCK - 1) / RC_KEY_BLOCK;
  (void)threads; /* read by the OpenMP pragma only */
#pragma omp parallel for num_threads(threads) if (n >= RC_VOXEL_PAR_MIN) schedule(static) reduction(+ : nf, nr)
  for (int64_t blk = 0; blk < blocks; blk++) {
    const int64_t i0 = blk * RC_KEY_BLOCK, m = n - i0 < RC_KEY_BLOCK ? n - i0 : RC_KEY_BLOCK;
    rc_voxel_keys_block(p, k, begin + i0, (int)m, key + i0, &nf, &nr);
  }
  *nonfinite += nf;
  *range += nr;
}
