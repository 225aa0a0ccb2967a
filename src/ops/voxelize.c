/* robocache_voxelize / robocache_voxelize_hard / robocache_voxel_downsample:
 * validate arguments, build an rc_voxel_problem, pick the backend. */
#include "ops/voxel_problem.h"

#include <math.h>
#include <string.h>

#define RC_VOXEL_MAX_GRID 4611686018427387904.0 /* 2^62 voxels */

static const char *axis_name(int a) { return a == 0 ? "x" : a == 1 ? "y" : "z"; }

robocache_status robocache_voxel_grid_size(robocache_ctx *ctx, const float voxel_size[3],
                                           const float point_cloud_range[6], int64_t grid_xyz[3]) {
  if (!voxel_size || !point_cloud_range || !grid_xyz)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "voxel_size, point_cloud_range and grid must not be NULL");
  double total = 1.0;
  for (int a = 0; a < 3; a++) {
    float size = voxel_size[a], lo = point_cloud_range[a], hi = point_cloud_range[a + 3];
    if (!(isfinite(size) && size > 0.0f))
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "voxel_size[%d] (%s) must be > 0 and finite, got %g", a, axis_name(a),
                      (double)size);
    if (!(isfinite(lo) && isfinite(hi) && lo < hi))
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "point_cloud_range on %s: need finite min < max, got [%g, %g]", axis_name(a),
                      (double)lo, (double)hi);
    float g = roundf((hi - lo) / size);
    total *= (double)g;
    if (!(g >= 1.0f) || total > RC_VOXEL_MAX_GRID)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "grid on %s is round((%g - %g) / %g) = %g: must be >= 1 and the whole "
                      "grid at most 2^62 voxels",
                      axis_name(a), (double)hi, (double)lo, (double)size, (double)g);
    grid_xyz[a] = (int64_t)g;
  }
  return ROBOCACHE_OK;
}

static int is_contiguous(const rc_view *v) {
  int64_t s = 1;
  for (int i = v->ndim - 1; i >= 0; i--) {
    if (v->shape[i] != 1 && v->strides[i] != s) return 0;
    s *= v->shape[i];
  }
  return 1;
}

/* Checks t: ndim, shape (entries < 0: any size), dtype (one of two, dtype_b may be -1), same
 * device as points, C-contiguous. */
static robocache_status check_output(robocache_ctx *ctx, const rc_voxel_problem *p,
                                     const robocache_tensor *t, const char *what, int ndim,
                                     const int64_t *shape, int32_t dtype_a, int32_t dtype_b,
                                     rc_view *v) {
  RC_TRY(rc_view_from(ctx, t, what, v));
  RC_TRY(rc_check_ndim(ctx, v, what, ndim));
  for (int i = 0; i < ndim; i++)
    if (shape[i] >= 0) RC_TRY(rc_check_dim(ctx, v, what, i, shape[i], "expected"));
  if (v->dtype != dtype_a && v->dtype != dtype_b) {
    if (dtype_b < 0)
      return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE, "%s: dtype must be %s, got %s", what,
                      robocache_dtype_name((robocache_dtype)dtype_a),
                      robocache_dtype_name((robocache_dtype)v->dtype));
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE, "%s: dtype must be %s or %s, got %s", what,
                    robocache_dtype_name((robocache_dtype)dtype_a),
                    robocache_dtype_name((robocache_dtype)dtype_b),
                    robocache_dtype_name((robocache_dtype)v->dtype));
  }
  if (v->device_type != p->points.device_type || v->device_id != p->points.device_id)
    return rc_error(ctx, ROBOCACHE_DEVICE_MISMATCH,
                    "%s is on device (%d, %d) but points on (%d, %d)", what, (int)v->device_type,
                    (int)v->device_id, (int)p->points.device_type, (int)p->points.device_id);
  if (!is_contiguous(v))
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: must be C-contiguous", what);
  return ROBOCACHE_OK;
}

robocache_status rc_voxel_check_offsets_host(robocache_ctx *ctx, const int64_t *off, int64_t s,
                                             int64_t B, int64_t N) {
  if (off[0] != 0)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "offsets[0] must be 0, got %lld",
                    (long long)off[0]);
  for (int64_t b = 0; b < B; b++)
    if (off[(b + 1) * s] < off[b * s])
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "offsets decrease: offsets[%lld] = %lld > offsets[%lld] = %lld", (long long)b,
                      (long long)off[b * s], (long long)(b + 1), (long long)off[(b + 1) * s]);
  if (off[B * s] != N)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "offsets[B] = %lld must equal the number of points N = %lld",
                    (long long)off[B * s], (long long)N);
  return ROBOCACHE_OK;
}

/* points, offsets, voxel_size and (unless range is NULL) the range grid. */
static robocache_status build_problem(robocache_ctx *ctx, rc_voxel_op op,
                                      const robocache_tensor *points,
                                      const robocache_tensor *offsets, const float voxel_size[3],
                                      const float range[6], rc_voxel_problem *p) {
  memset(p, 0, sizeof *p);
  p->op = op;
  RC_TRY(rc_view_from(ctx, points, "points", &p->points));
  RC_TRY(rc_check_ndim(ctx, &p->points, "points", 2));
  if (p->points.dtype != ROBOCACHE_DTYPE_F32)
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE, "points: dtype must be float32, got %s",
                    robocache_dtype_name((robocache_dtype)p->points.dtype));
  p->N = p->points.shape[0];
  p->C = p->points.shape[1];
  if (p->C < 3)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "points: need at least 3 columns (x, y, z), got C = %lld", (long long)p->C);
  if (p->points.device_type == ROBOCACHE_DEVICE_CPU && p->N > INT32_MAX)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "points: at most 2^31-1 points per call, got N = %lld", (long long)p->N);
  p->B = 1;
  if (offsets) {
    RC_TRY(rc_view_from(ctx, offsets, "offsets", &p->offsets));
    RC_TRY(rc_check_ndim(ctx, &p->offsets, "offsets", 1));
    if (p->offsets.dtype != ROBOCACHE_DTYPE_I64)
      return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE, "offsets: dtype must be int64, got %s",
                      robocache_dtype_name((robocache_dtype)p->offsets.dtype));
    if (p->offsets.shape[0] < 2)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "offsets: need B+1 >= 2 entries, got %lld",
                      (long long)p->offsets.shape[0]);
    if (p->offsets.device_type != p->points.device_type ||
        p->offsets.device_id != p->points.device_id)
      return rc_error(ctx, ROBOCACHE_DEVICE_MISMATCH,
                      "offsets are on device (%d, %d) but points on (%d, %d)",
                      (int)p->offsets.device_type, (int)p->offsets.device_id,
                      (int)p->points.device_type, (int)p->points.device_id);
    p->B = p->offsets.shape[0] - 1;
    p->has_offsets = 1;
    if (p->points.device_type == ROBOCACHE_DEVICE_CPU)
      RC_TRY(rc_voxel_check_offsets_host(ctx, (const int64_t *)p->offsets.data,
                                         p->offsets.strides[0], p->B, p->N));
  }
  /* the per-voxel f64 sums of up to every column of every point (a strided
   * or broadcast points tensor may describe more values than memory holds) */
  const int64_t sums[2] = {p->N, p->C};
  RC_TRY(rc_check_output_size(ctx, "points [N,C] (f64 sums per column)", 2, sums, sizeof(double)));
  if (!voxel_size) return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "voxel_size must not be NULL");
  memcpy(p->voxel_size, voxel_size, sizeof p->voxel_size);
  if (range) {
    RC_TRY(robocache_voxel_grid_size(ctx, voxel_size, range, p->keyer.grid));
    for (int a = 0; a < 3; a++) {
      p->keyer.lo[a] = range[a];
      p->keyer.size[a] = voxel_size[a];
    }
    return ROBOCACHE_OK;
  }
  p->keyer.pcl = 1;
  for (int a = 0; a < 3; a++) {
    if (!(isfinite(voxel_size[a]) && voxel_size[a] > 0.0f))
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "voxel_size[%d] (%s) must be > 0 and finite, got %g", a, axis_name(a),
                      (double)voxel_size[a]);
    p->keyer.inv_leaf[a] = 1.0f / voxel_size[a];
    if (!isfinite(p->keyer.inv_leaf[a]))
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "voxel_size[%d] (%s) = %g is too small for a PCL grid (no "
                      "point_cloud_range): 1 / voxel_size is not a finite float32",
                      a, axis_name(a), (double)voxel_size[a]);
    p->keyer.size[a] = voxel_size[a];
  }
  return ROBOCACHE_OK;
}

static const rc_voxel_backends dense_backends = {rc_voxelize_dense_ref, rc_voxelize_dense_cpu,
                                                 rc_voxelize_dense_cuda};
static const rc_voxel_backends hard_backends = {rc_voxelize_hard_ref, rc_voxelize_hard_cpu,
                                                rc_voxelize_hard_cuda};
static const rc_voxel_backends downsample_backends = {
    rc_voxel_downsample_ref, rc_voxel_downsample_cpu, rc_voxel_downsample_cuda};

/* Zeroes *stats (or a local record when NULL); CUDA tensors go to the CUDA
 * backend, CPU tensors to the reference or the optimised backend. */
static robocache_status dispatch(robocache_ctx *ctx, rc_voxel_problem *p,
                                 robocache_voxel_stats *stats, const rc_voxel_backends *b) {
  robocache_voxel_stats local;
  p->stats = stats ? stats : &local;
  memset(p->stats, 0, sizeof *p->stats);
  if (p->points.device_type != ROBOCACHE_DEVICE_CPU) return b->cuda(ctx, p);
  return rc_ctx(ctx)->force_reference ? b->ref(ctx, p) : b->cpu(ctx, p);
}

robocache_status robocache_voxelize(robocache_ctx *ctx, const robocache_tensor *points,
                                    const robocache_tensor *offsets, const float voxel_size[3],
                                    const float point_cloud_range[6], int32_t mode,
                                    robocache_tensor *out, robocache_voxel_stats *stats) {
  rc_clear_error(ctx);
  rc_voxel_problem p;
  if (!point_cloud_range)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "point_cloud_range must not be NULL");
  RC_TRY(build_problem(ctx, RC_VOXEL_OP_DENSE, points, offsets, voxel_size, point_cloud_range, &p));
  if (mode < ROBOCACHE_VOXEL_COUNT || mode > ROBOCACHE_VOXEL_MAX)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "voxelize: unknown mode %d", (int)mode);
  p.mode = mode;
  int32_t dt_a = ROBOCACHE_DTYPE_F32, dt_b = -1;
  p.F = 1;
  if (mode == ROBOCACHE_VOXEL_COUNT) {
    dt_b = ROBOCACHE_DTYPE_I32;
  } else if (mode == ROBOCACHE_VOXEL_OCCUPANCY) {
    dt_b = ROBOCACHE_DTYPE_U8;
  } else {
    p.feat_col = p.C == 3 ? 0 : 3;
    p.F = p.C == 3 ? 3 : p.C - 3;
  }
  const int64_t shape[5] = {p.B, p.F, p.keyer.grid[2], p.keyer.grid[1], p.keyer.grid[0]};
  const size_t esize = out ? robocache_dtype_size((robocache_dtype)out->dtype) : 0;
  RC_TRY(rc_check_output_size(ctx, "voxelize: out [B,F,Z,Y,X]", 5, shape, esize ? esize : 1));
  RC_TRY(check_output(ctx, &p, out, "out [B,F,Z,Y,X]", 5, shape, dt_a, dt_b, &p.out));
  return dispatch(ctx, &p, stats, &dense_backends);
}

static robocache_status
voxelize_hard(robocache_ctx *ctx, int packed, const robocache_tensor *points,
              const robocache_tensor *offsets, const float voxel_size[3],
              const float point_cloud_range[6], int32_t max_points_per_voxel, int32_t max_voxels,
              robocache_tensor *voxels, robocache_tensor *coords, robocache_tensor *num_points,
              robocache_tensor *num_voxels, robocache_voxel_stats *stats) {
  rc_clear_error(ctx);
  rc_voxel_problem p;
  if (!point_cloud_range)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "point_cloud_range must not be NULL");
  RC_TRY(build_problem(ctx, RC_VOXEL_OP_HARD, points, offsets, voxel_size, point_cloud_range, &p));
  if (max_points_per_voxel < 1 || max_voxels < 1)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "voxelize_hard: max_points_per_voxel (%d) and max_voxels (%d) must be >= 1",
                    (int)max_points_per_voxel, (int)max_voxels);
  p.max_points = max_points_per_voxel;
  p.max_voxels = max_voxels;
  p.packed = packed;
  const int64_t BM = rc_mul_size(p.B, p.max_voxels);
  const int64_t vshape[3] = {BM, p.max_points, p.C}, cshape[2] = {BM, 4}, nshape[1] = {BM},
                bshape[1] = {p.B}, bm[2] = {p.B, p.max_voxels};
  RC_TRY(rc_check_output_size(ctx, "voxelize_hard: B * max_voxels rows", 2, bm, 1));
  RC_TRY(rc_check_output_size(ctx, "voxelize_hard: voxels [B*M,P,C]", 3, vshape, sizeof(float)));
  RC_TRY(rc_check_output_size(ctx, "voxelize_hard: coords [B*M,4]", 2, cshape, sizeof(int32_t)));
  RC_TRY(check_output(ctx, &p, voxels, "voxels [B*M,P,C]", 3, vshape, ROBOCACHE_DTYPE_F32, -1,
                      &p.voxels));
  RC_TRY(check_output(ctx, &p, coords, "coords [B*M,4]", 2, cshape, ROBOCACHE_DTYPE_I32, -1,
                      &p.coords));
  RC_TRY(check_output(ctx, &p, num_points, "num_points [B*M]", 1, nshape, ROBOCACHE_DTYPE_I32, -1,
                      &p.num_points));
  RC_TRY(check_output(ctx, &p, num_voxels, "num_voxels [B]", 1, bshape, ROBOCACHE_DTYPE_I32, -1,
                      &p.num_voxels));
  robocache_status s = dispatch(ctx, &p, stats, &hard_backends);
  if (s == ROBOCACHE_OK && packed && p.B > 1 && p.points.device_type == ROBOCACHE_DEVICE_CPU)
    rc_voxel_hard_pack(&p);
  return s;
}

robocache_status robocache_voxelize_hard(robocache_ctx *ctx, const robocache_tensor *points,
                                         const robocache_tensor *offsets, const float voxel_size[3],
                                         const float point_cloud_range[6],
                                         int32_t max_points_per_voxel, int32_t max_voxels,
                                         robocache_tensor *voxels, robocache_tensor *coords,
                                         robocache_tensor *num_points, robocache_tensor *num_voxels,
                                         robocache_voxel_stats *stats) {
  return voxelize_hard(ctx, 0, points, offsets, voxel_size, point_cloud_range, max_points_per_voxel,
                       max_voxels, voxels, coords, num_points, num_voxels, stats);
}

robocache_status robocache_voxelize_hard_packed(
    robocache_ctx *ctx, const robocache_tensor *points, const robocache_tensor *offsets,
    const float voxel_size[3], const float point_cloud_range[6], int32_t max_points_per_voxel,
    int32_t max_voxels, robocache_tensor *voxels, robocache_tensor *coords,
    robocache_tensor *num_points, robocache_tensor *num_voxels, robocache_voxel_stats *stats) {
  return voxelize_hard(ctx, 1, points, offsets, voxel_size, point_cloud_range, max_points_per_voxel,
                       max_voxels, voxels, coords, num_points, num_voxels, stats);
}

robocache_status robocache_voxel_downsample(robocache_ctx *ctx, const robocache_tensor *points,
                                            const robocache_tensor *offsets,
                                            const float voxel_size[3],
                                            const float *point_cloud_range, robocache_tensor *out,
                                            robocache_tensor *out_offsets,
                                            robocache_voxel_stats *stats) {
  rc_clear_error(ctx);
  rc_voxel_problem p;
  RC_TRY(build_problem(ctx, RC_VOXEL_OP_DOWNSAMPLE, points, offsets, voxel_size, point_cloud_range,
                       &p));
  const int64_t oshape[2] = {-1, p.C}, fshape[1] = {p.B + 1};
  RC_TRY(check_output(ctx, &p, out, "out [capacity,C]", 2, oshape, ROBOCACHE_DTYPE_F32, -1,
                      &p.out_points));
  RC_TRY(check_output(ctx, &p, out_offsets, "out_offsets [B+1]", 1, fshape, ROBOCACHE_DTYPE_I64, -1,
                      &p.out_offsets));
  return dispatch(ctx, &p, stats, &downsample_backends);
}
