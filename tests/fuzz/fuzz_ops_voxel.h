/* Header-only helpers of the fuzz_ops_voxel* targets: fuzzer-chosen point
 * clouds (points [N,C] f32 in any layout, N <= 48, C usually 3..6; B clouds
 * by offsets, now and then offsets that fail the check), voxel sizes and
 * ranges (small grids, tiny and huge voxels, invalid ones), coordinates on
 * voxel faces, just outside the range, NaN, infinite or huge; and the
 * comparison of the CPU backend with the reference: the same status and
 * message, the same stats, outputs bit for bit (DESIGN §1.3: voxelization is
 * bitwise identical across backends). */
#ifndef ROBOCACHE_FUZZ_OPS_VOXEL_H
#define ROBOCACHE_FUZZ_OPS_VOXEL_H

#include "fuzz_ops.h"

enum { FZ_MAX_N = 48, FZ_MAX_CLOUDS = 4 };

typedef struct fz_cloud {
  fz_tensor points, offsets;
  int has_offsets;
  int64_t N, C, B;
  float voxel_size[3], range[6];
} fz_cloud;

/* A voxel size: usual values, tiny (down to subnormal), huge, or invalid. */
static inline float fz_voxel_size(fz_in *f) {
  static const float sizes[] = {1.0f,  0.5f,  0.25f,  0.16f,  0.1f,  0.05f, 4.0f,
                                1e-3f, 1e-7f, 3e-39f, 1e-39f, 1e30f, 0.0f,  -1.0f};
  return fz_rare(f, 8) ? (float)fz_double(f) : sizes[fz_pick(f, 14)];
}

/* Voxel sizes and a range of 1..6 voxels per axis from a fuzzer-chosen
 * minimum (now and then a raw, possibly invalid, range). */
static inline void fz_grid(fz_in *f, fz_cloud *c) {
  static const float mins[] = {0.0f, -40.0f, -51.2f, -3.0f, 1e7f, -0.5f};
  for (int a = 0; a < 3; a++) {
    c->voxel_size[a] = fz_voxel_size(f);
    const float size = isfinite(c->voxel_size[a]) && c->voxel_size[a] > 0 && c->voxel_size[a] < 1e6f
                           ? c->voxel_size[a]
                           : 1.0f;
    c->range[a] = fz_rare(f, 8) ? (float)fz_double(f) : mins[fz_pick(f, 6)];
    c->range[a + 3] = fz_rare(f, 8) ? (float)fz_double(f)
                                    : c->range[a] + size * (float)fz_int(f, 1, 6) +
                                          (fz_pick(f, 4) ? 0.0f : size * 0.5f);
  }
}

/* A coordinate on axis a: inside the range, on a voxel face, at the range's
 * ends, just outside, NaN, infinite, or raw. */
static inline float fz_coord(fz_in *f, const fz_cloud *c, int a) {
  const float lo = c->range[a], hi = c->range[a + 3], size = c->voxel_size[a];
  switch (fz_pick(f, 10)) {
  case 0: return lo + size * (float)fz_int(f, 0, 7);
  case 1: return hi;
  case 2: return nextafterf(lo, -INFINITY);
  case 3: return nextafterf(hi, -INFINITY);
  case 4: return fz_pick(f, 2) ? NAN : fz_pick(f, 2) ? INFINITY : -INFINITY;
  case 5: return (float)fz_double(f);
  default: return lo + (hi - lo) * (float)fz_u8(f) / 255.0f;
  }
}

/* Points, offsets and grid. */
static inline void fz_make_cloud(fz_in *f, fz_cloud *c) {
  memset(c, 0, sizeof *c);
  fz_grid(f, c);
  c->N = fz_int(f, 0, FZ_MAX_N);
  c->C = fz_rare(f, 16) ? fz_int(f, 0, 2) : fz_int(f, 3, 6);
  const int64_t pshape[2] = {c->N, c->C};
  fz_make(&c->points, f, ROBOCACHE_DTYPE_F32, 2, pshape, 1);
  for (int64_t i = 0; i < c->N; i++)
    for (int64_t k = 0; k < c->C; k++)
      fz_set(&c->points, i, k, 0,
             k < 3           ? fz_coord(f, c, (int)k)
             : fz_pick(f, 2) ? fz_double(f)
                             : (double)fz_u8(f));
  c->has_offsets = fz_pick(f, 4) != 0;
  c->B = c->has_offsets ? fz_int(f, 1, FZ_MAX_CLOUDS) : 1;
  if (c->has_offsets) {
    const int64_t oshape[1] = {c->B + 1};
    fz_make(&c->offsets, f, ROBOCACHE_DTYPE_I64, 1, oshape, 1);
    int64_t at = 0;
    for (int64_t b = 1; b < c->B; b++) {
      at += fz_int(f, 0, c->N - at);
      fz_set_i64(&c->offsets, b, 0, 0, at);
    }
    fz_set_i64(&c->offsets, 0, 0, 0, 0);
    fz_set_i64(&c->offsets, c->B, 0, 0, c->N);
    if (fz_rare(f, 16)) /* a bad entry */
      fz_set_i64(&c->offsets, fz_int(f, 0, c->B), 0, 0, fz_int(f, -2, c->N + 2));
  }
}

static inline void fz_free_cloud(fz_cloud *c) {
  fz_free(&c->points);
  fz_free(&c->offsets);
}

static inline const robocache_tensor *fz_offsets(const fz_cloud *c) {
  return c->has_offsets ? &c->offsets.t : NULL;
}

/* Every stats field equal. */
static inline void fz_same_stats(const char *what, const robocache_voxel_stats *a,
                                 const robocache_voxel_stats *b) {
  const int64_t x[8] = {a->points_in,
                        a->points_in_range,
                        a->points_dropped_range,
                        a->points_dropped_nonfinite,
                        a->voxels_nonempty,
                        a->points_dropped_max_points,
                        a->voxels_dropped_max_voxels,
                        a->points_dropped_max_voxels};
  const int64_t y[8] = {b->points_in,
                        b->points_in_range,
                        b->points_dropped_range,
                        b->points_dropped_nonfinite,
                        b->voxels_nonempty,
                        b->points_dropped_max_points,
                        b->voxels_dropped_max_voxels,
                        b->points_dropped_max_voxels};
  for (int i = 0; i < 8; i++)
    if (x[i] != y[i])
      FZ_FAIL("%s: stats field %d: cpu %lld reference %lld", what, i, (long long)x[i],
              (long long)y[i]);
}

/* Every element of two tensors of one layout has the same bits. */
static inline void fz_same_bits(const char *what, const fz_tensor *a, const fz_tensor *b) {
  const int64_t n0 = a->t.ndim > 0 ? a->shape[0] : 1, n1 = a->t.ndim > 1 ? a->shape[1] : 1,
                n2 = a->t.ndim > 2 ? a->shape[2] : 1;
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t k = 0; k < n2; k++)
        if (fz_raw(a, i, j, k) != fz_raw(b, i, j, k))
          FZ_FAIL("%s: element (%lld, %lld, %lld): cpu bits %llx reference bits %llx", what,
                  (long long)i, (long long)j, (long long)k, (unsigned long long)fz_raw(a, i, j, k),
                  (unsigned long long)fz_raw(b, i, j, k));
}

#endif
