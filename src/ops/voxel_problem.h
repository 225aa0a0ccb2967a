/* The validated form of a voxelize / voxelize_hard / voxel_downsample call,
 * handed from src/ops/voxelize.c to a backend (src/ref, src/cpu, src/cuda).
 *
 * Every tensor is on one device (that of points). For CPU tensors the offsets
 * have been checked (offsets[0] == 0, non-decreasing, offsets[B] == N) before
 * the backend runs; a CUDA backend receives device offsets unchecked. */
#ifndef ROBOCACHE_OPS_VOXEL_PROBLEM_H
#define ROBOCACHE_OPS_VOXEL_PROBLEM_H

#include "common/voxel.h"
#include "core/internal.h"

typedef enum rc_voxel_op {
  RC_VOXEL_OP_DENSE = 0,     /* robocache_voxelize */
  RC_VOXEL_OP_HARD = 1,      /* robocache_voxelize_hard */
  RC_VOXEL_OP_DOWNSAMPLE = 2 /* robocache_voxel_downsample */
} rc_voxel_op;

typedef struct rc_voxel_problem {
  rc_voxel_op op;
  int64_t N, C, B;
  rc_view points;  /* [N,C] f32, any strides */
  rc_view offsets; /* [B+1] i64 when has_offsets; else one cloud 0..N */
  int has_offsets;
  /* Grid: keyer.pcl == 0 -> voxel_size / point_cloud_range (keyer complete,
   * grid = X, Y, Z); keyer.pcl == 1 (downsample without range) -> per-cloud
   * PCL grid, built by the backend from each cloud's minimum (keyer.inv_leaf
   * set here). */
  rc_voxel_keyer keyer;
  float voxel_size[3];
  /* dense: out [B,F,Z,Y,X] contiguous, i32/f32 (COUNT), u8/f32 (OCCUPANCY),
   * f32 (SUM/MEAN/MAX); features are point columns feat_col..feat_col+F-1 */
  int32_t mode;
  int64_t F, feat_col;
  rc_view out;
  /* hard: voxels [B*M,P,C] f32, coords [B*M,4] i32, num_points [B*M] i32,
   * num_voxels [B] i32, all contiguous; packed: cloud b's voxels from row
   * num_voxels[0] + .. + num_voxels[b-1] (else from b*M) */
  int64_t max_points, max_voxels; /* P, M */
  int packed;
  rc_view voxels, coords, num_points, num_voxels;
  /* downsample: out_points [capacity,C] f32 contiguous, out_offsets [B+1] i64 */
  rc_view out_points, out_offsets;
  robocache_voxel_stats *stats; /* host memory, never NULL (ops supplies one) */
} rc_voxel_problem;

/* Backends. Each writes every element of its outputs (zeros for empty voxels
 * and padding, coords -1 for padding rows) and fills *p->stats. The CPU
 * backends write hard voxels in the padded layout (src/ops packs them); the
 * CUDA backend writes the layout p->packed asks for. */
robocache_status rc_voxelize_dense_ref(robocache_ctx *ctx, const rc_voxel_problem *p);
robocache_status rc_voxelize_dense_cpu(robocache_ctx *ctx, const rc_voxel_problem *p);
robocache_status rc_voxelize_dense_cuda(robocache_ctx *ctx, const rc_voxel_problem *p);
robocache_status rc_voxelize_hard_ref(robocache_ctx *ctx, const rc_voxel_problem *p);
robocache_status rc_voxelize_hard_cpu(robocache_ctx *ctx, const rc_voxel_problem *p);
robocache_status rc_voxelize_hard_cuda(robocache_ctx *ctx, const rc_voxel_problem *p);
/* CAPACITY_EXCEEDED when the non-empty voxels of all clouds do not fit in
 * out_points (stats still complete). */
robocache_status rc_voxel_downsample_ref(robocache_ctx *ctx, const rc_voxel_problem *p);
robocache_status rc_voxel_downsample_cpu(robocache_ctx *ctx, const rc_voxel_problem *p);
robocache_status rc_voxel_downsample_cuda(robocache_ctx *ctx, const rc_voxel_problem *p);

typedef robocache_status (*rc_voxel_fn)(robocache_ctx *ctx, const rc_voxel_problem *p);

/* The backends of one operation (src/ops/voxelize.c picks one per call): the
 * reference (src/ref), the optimised CPU one (src/cpu) and the CUDA one
 * (src/cuda; src/cuda/cuda_stubs.c in builds without CUDA). */
typedef struct rc_voxel_backends {
  rc_voxel_fn ref, cpu, cuda;
} rc_voxel_backends;

/* INVALID_ARGUMENT naming the first failed check of host offsets off[0 ..
 * B] (stride s): off[0] == 0, non-decreasing, off[B] == N (src/ops/voxelize.c;
 * the CUDA backend calls it on offsets read back). */
robocache_status rc_voxel_check_offsets_host(robocache_ctx *ctx, const int64_t *off, int64_t s,
                                             int64_t B, int64_t N);

/* Host helpers for CPU backends (src/ops/voxel_host.c). */

/* Moves the kept voxels of a hard voxelization written in the padded layout
 * (host memory) to the packed one, the rows after them made padding. */
void rc_voxel_hard_pack(const rc_voxel_problem *p);

/* Loops over fewer items (points or voxels) than this run on one thread: an
 * OpenMP region costs a wake-up, and on a busy machine threads waiting at its
 * barrier spin and can cost a scheduler time slice (milliseconds), more than
 * a KITTI-size cloud takes on one core. */
#define RC_VOXEL_PAR_MIN 262144

/* Rows [*begin, *end) of cloud b. */
void rc_voxel_cloud_rows(const rc_voxel_problem *p, int64_t b, int64_t *begin, int64_t *end);

/* Column c of point i. */
static inline float rc_voxel_coord(const rc_voxel_problem *p, int64_t i, int64_t c) {
  return ((const float *)p->points.data)[i * p->points.strides[0] + c * p->points.strides[1]];
}

static inline void rc_voxel_gather_strided(const float *restrict src, int64_t s0, int64_t s1, int m,
                                           float *restrict x, float *restrict y,
                                           float *restrict z) {
  for (int j = 0; j < m; j++) {
    x[j] = src[j * s0];
    y[j] = src[j * s0 + s1];
    z[j] = src[j * s0 + 2 * s1];
  }
}

/* x, y, z of rows [row, row + m) into arrays. Rows of 3 or 4 contiguous
 * floats get loops with constant strides, which the compiler vectorises. */
static inline void rc_voxel_gather_xyz(const rc_voxel_problem *p, int64_t row, int m, float *x,
                                       float *y, float *z) {
  const int64_t s0 = p->points.strides[0], s1 = p->points.strides[1];
  const float *src = (const float *)p->points.data + row * s0;
  if (s1 == 1 && s0 == 3)
    rc_voxel_gather_strided(src, 3, 1, m, x, y, z);
  else if (s1 == 1 && s0 == 4)
    rc_voxel_gather_strided(src, 4, 1, m, x, y, z);
  else
    rc_voxel_gather_strided(src, s0, s1, m, x, y, z);
}

/* The keyer of rows [begin, end): p->keyer, or for a PCL grid the keyer whose
 * origin is floor(min * inv_leaf) of the cloud's finite points.
 * INVALID_ARGUMENT when the PCL grid would need more than 2^62 voxels. */
robocache_status rc_voxel_cloud_keyer(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t begin,
                                      int64_t end, rc_voxel_keyer *k);
/* The INVALID_ARGUMENT of a cloud whose finite points span lo .. hi on axis
 * `axis`, where rc_voxel_pcl_keyer passed 2^62 voxels. */
robocache_status rc_voxel_pcl_too_big(robocache_ctx *ctx, const rc_voxel_problem *p, int axis,
                                      float lo, float hi);

/* Classifies point i with keyer k (RC_VOXEL_IN / _RANGE / _NONFINITE), and
 * writes its key when in range. */
static inline int rc_voxel_point_key(const rc_voxel_problem *p, const rc_voxel_keyer *k, int64_t i,
                                     int64_t *key) {
  int64_t ijk[3];
  return rc_voxel_locate(k, rc_voxel_coord(p, i, 0), rc_voxel_coord(p, i, 1),
                         rc_voxel_coord(p, i, 2), ijk, key);
}

#endif
