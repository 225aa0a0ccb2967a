/* Test helpers for the voxelize calls: run robocache_voxelize /
 * voxelize_hard / voxel_downsample on owned tensors with a fresh context
 * (reference or optimised backend, a thread count) and keep the outputs. */
#ifndef ROBOCACHE_TESTS_SUPPORT_VOXEL_H
#define ROBOCACHE_TESTS_SUPPORT_VOXEL_H

#include "support.h"

/* Grid of a call: voxel_size and point_cloud_range (range may be NULL for
 * a PCL-style downsample). */
typedef struct rcv_grid {
  float voxel_size[3];
  const float *range; /* [6] or NULL */
} rcv_grid;

typedef struct rcv_run {
  int ref;     /* 1: force the reference backend */
  int threads; /* robocache_ctx_set_num_threads; 0 = all */
} rcv_run;

typedef struct rcv_result {
  robocache_status status;
  char message[512];
  robocache_voxel_stats stats;
  rct_tensor *out;         /* dense [B,F,Z,Y,X]; downsample [capacity,C] */
  rct_tensor *out_offsets; /* downsample [B+1] */
  rct_tensor *voxels, *coords, *num_points, *num_voxels; /* hard */
} rcv_result;

/* points [n, c] f32 from a row-major array (copied). */
rct_tensor *rcv_points(const float *data, int64_t n, int64_t c);
/* Random points [n, C] f32 (seeded): x, y, z uniform in [-1, 11) with about
 * 10% of the points on an integer coordinate (a voxel face), 1% with a NaN
 * and 1% with a -inf coordinate; features uniform in [-3, 3), 1% each NaN,
 * -0.0, +0.0, +inf and -inf. */
rct_tensor *rcv_random_points(uint64_t seed, int64_t n, int64_t C);
/* Points [14, 4] whose features hold NaN, +-0.0 and +-inf, in voxels x = 0..7
 * of the 9 x 1 x 1 grid of voxel size 1 over rcv_special_range (voxel 8
 * empty); rcv_special_max[x] and rcv_special_sum[x] are the bits of the MAX
 * and SUM of voxel x (docs/voxelize.md: MAX in the total order -inf < ... <
 * -0.0 < +0.0 < ... < +inf < NaN, every NaN output 0x7fc00000). */
rct_tensor *rcv_special_points(void);
extern const float rcv_special_range[6];
extern const uint32_t rcv_special_max[9], rcv_special_sum[9];
/* offsets [B+1] i64 from an array. */
rct_tensor *rcv_offsets(const int64_t *off, int64_t B);

/* points [n, c] f32 of data/pointclouds/<file> read with rc_pointcloud_read
 * (support_voxel_io.c: tests using it must link robocache_io). */
rct_tensor *rcv_load(const char *file);
/* B of an offsets tensor (1 when NULL). */
int64_t rcv_clouds(const rct_tensor *offsets);
/* Records status s and ctx's message in *r, then frees ctx. */
void rcv_finish(rcv_result *r, robocache_ctx *ctx, robocache_status s);

/* Every (mode, output dtype) pair robocache_voxelize accepts. */
typedef struct rcv_dense_case {
  int32_t mode;
  robocache_dtype dtype;
} rcv_dense_case;
extern const rcv_dense_case rcv_dense_cases[];
extern const size_t rcv_num_dense_cases;

/* A fresh (uninitialised) out [B,F,Z,Y,X] of dtype for mode, grid g and points. */
rct_tensor *rcv_dense_out(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g,
                          int32_t mode, robocache_dtype dtype);

/* The host outputs of a hard voxelization of `points` (B clouds by
 * `offsets`) with P, M, into r (voxels [B*M,P,C], coords [B*M,4],
 * num_points [B*M], num_voxels [B]). */
void rcv_hard_out(const rct_tensor *points, const rct_tensor *offsets, int32_t P, int32_t M,
                  rcv_result *r);
/* Dense voxelization into a fresh out [B,F,Z,Y,X] of dtype. */
rcv_result rcv_dense(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g, int32_t mode,
                     robocache_dtype dtype, rcv_run run);
/* Hard voxelization with P, M. */
rcv_result rcv_hard(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g, int32_t P,
                    int32_t M, rcv_run run);
/* The same with robocache_voxelize_hard_packed. */
rcv_result rcv_hard_packed(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g,
                           int32_t P, int32_t M, rcv_run run);
/* Downsample into out [capacity, C]. */
rcv_result rcv_downsample(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g,
                          int64_t capacity, rcv_run run);
void rcv_free(rcv_result *r);

/* Fails unless rows first .. first+n-1 of a batch's hard voxels equal rows
 * 0 .. n-1 of cloud b's own result, whose coords[:, 0] is b (-1 on padding
 * rows). */
void rcv_assert_cloud_rows(const rcv_result *batch, int64_t first, const rcv_result *one, int64_t n,
                           int64_t b);
/* Fails unless both results have the same status, stats and bitwise equal
 * outputs. */
void rcv_assert_same(const rcv_result *a, const rcv_result *b, const char *what);

#endif
