/* Test helpers for the voxelize calls (support_voxel.h). */
#include "support_voxel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

rct_tensor *rcv_points(const float *data, int64_t n, int64_t c) {
  rct_tensor *t = rct_make2(ROBOCACHE_DTYPE_F32, n, c);
  if (n * c > 0) memcpy(t->t.data, data, (size_t)(n * c) * sizeof(float));
  return t;
}

rct_tensor *rcv_random_points(uint64_t seed, int64_t n, int64_t C) {
  rct_rng rng = rct_rng_seed(seed);
  rct_tensor *t = rct_make2(ROBOCACHE_DTYPE_F32, n, C);
  float *d = t->t.data;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t c = 0; c < C; c++)
      d[i * C + c] = (float)(c < 3 ? rct_rng_uniform(&rng, -1, 11) : rct_rng_uniform(&rng, -3, 3));
    int64_t roll = rct_rng_int(&rng, 0, 99);
    if (roll < 10) d[i * C + rct_rng_int(&rng, 0, 2)] = (float)rct_rng_int(&rng, -1, 11);
    if (roll == 10) d[i * C + rct_rng_int(&rng, 0, 2)] = NAN;
    if (roll == 11) d[i * C + rct_rng_int(&rng, 0, 2)] = -INFINITY;
    if (roll >= 12 && roll < 17 && C > 3) { /* a feature NaN, -0.0, +0.0, +inf or -inf */
      static const float special[5] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY};
      d[i * C + rct_rng_int(&rng, 3, C - 1)] = special[roll - 12];
    }
  }
  return t;
}

const float rcv_special_range[6] = {0, 0, 0, 9, 1, 1};
const uint32_t rcv_special_max[9] = {0x7fc00000u, 0x00000000u, 0x00000000u,
                                     0x80000000u, 0xc0400000u, 0x7fc00000u,
                                     0xff800000u, 0x7f800000u, 0x00000000u};
/* f64 sums from 0.0: 0.0 + -0.0 = +0.0; inf + -inf = NaN */
const uint32_t rcv_special_sum[9] = {0x7fc00000u, 0x00000000u, 0x00000000u,
                                     0x00000000u, 0xff800000u, 0x7fc00000u,
                                     0xff800000u, 0x7fc00000u, 0x00000000u};

rct_tensor *rcv_special_points(void) {
  uint32_t neg_nan = 0xffc00001u; /* a NaN with the sign set and a payload */
  float nn;
  memcpy(&nn, &neg_nan, sizeof nn);
  const struct {
    int x;
    float f;
  } p[14] = {{0, 1.0f},  {1, -0.0f},     {2, 0.0f},     {0, NAN},       {1, 0.0f},
             {2, -0.0f}, {0, 2.0f},      {3, -0.0f},    {4, -INFINITY}, {4, -3.0f},
             {5, nn},    {6, -INFINITY}, {7, INFINITY}, {7, -INFINITY}};
  float d[14][4];
  for (int i = 0; i < 14; i++) {
    d[i][0] = (float)p[i].x + 0.5f;
    d[i][1] = d[i][2] = 0.5f;
    d[i][3] = p[i].f;
  }
  return rcv_points(&d[0][0], 14, 4);
}

rct_tensor *rcv_offsets(const int64_t *off, int64_t B) {
  rct_tensor *t = rct_make1(ROBOCACHE_DTYPE_I64, B + 1);
  memcpy(t->t.data, off, (size_t)(B + 1) * sizeof(int64_t));
  return t;
}

static robocache_ctx *make_ctx(rcv_run run) {
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  robocache_ctx_set_force_reference(ctx, run.ref);
  robocache_ctx_set_num_threads(ctx, run.threads);
  return ctx;
}

void rcv_finish(rcv_result *r, robocache_ctx *ctx, robocache_status s) {
  r->status = s;
  snprintf(r->message, sizeof r->message, "%s", robocache_ctx_error_message(ctx));
  robocache_ctx_free(ctx);
}

int64_t rcv_clouds(const rct_tensor *offsets) { return offsets ? offsets->shape[0] - 1 : 1; }

const rcv_dense_case rcv_dense_cases[] = {{ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_I32},
                                          {ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_F32},
                                          {ROBOCACHE_VOXEL_OCCUPANCY, ROBOCACHE_DTYPE_U8},
                                          {ROBOCACHE_VOXEL_OCCUPANCY, ROBOCACHE_DTYPE_F32},
                                          {ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32},
                                          {ROBOCACHE_VOXEL_MEAN, ROBOCACHE_DTYPE_F32},
                                          {ROBOCACHE_VOXEL_MAX, ROBOCACHE_DTYPE_F32}};
const size_t rcv_num_dense_cases = sizeof rcv_dense_cases / sizeof rcv_dense_cases[0];

rct_tensor *rcv_dense_out(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g,
                          int32_t mode, robocache_dtype dtype) {
  int64_t grid[3];
  assert_int_equal(robocache_voxel_grid_size(NULL, g.voxel_size, g.range, grid), ROBOCACHE_OK);
  int64_t C = points->shape[1];
  int64_t F = mode <= ROBOCACHE_VOXEL_OCCUPANCY ? 1 : (C == 3 ? 3 : C - 3);
  int64_t shape[5] = {rcv_clouds(offsets), F, grid[2], grid[1], grid[0]};
  return rct_make(dtype, 5, shape);
}

rcv_result rcv_dense(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g, int32_t mode,
                     robocache_dtype dtype, rcv_run run) {
  rcv_result r = {0};
  robocache_ctx *ctx = make_ctx(run);
  r.out = rcv_dense_out(points, offsets, g, mode, dtype);
  rcv_finish(&r, ctx,
             robocache_voxelize(ctx, &points->t, offsets ? &offsets->t : NULL, g.voxel_size,
                                g.range, mode, &r.out->t, &r.stats));
  return r;
}

void rcv_hard_out(const rct_tensor *points, const rct_tensor *offsets, int32_t P, int32_t M,
                  rcv_result *r) {
  int64_t B = rcv_clouds(offsets);
  r->voxels = rct_make3(ROBOCACHE_DTYPE_F32, B * M, P, points->shape[1]);
  r->coords = rct_make2(ROBOCACHE_DTYPE_I32, B * M, 4);
  r->num_points = rct_make1(ROBOCACHE_DTYPE_I32, B * M);
  r->num_voxels = rct_make1(ROBOCACHE_DTYPE_I32, B);
}

static rcv_result hard(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g, int32_t P,
                       int32_t M, rcv_run run, int packed) {
  rcv_result r = {0};
  robocache_ctx *ctx = make_ctx(run);
  rcv_hard_out(points, offsets, P, M, &r);
  rcv_finish(&r, ctx,
             (packed ? robocache_voxelize_hard_packed : robocache_voxelize_hard)(
                 ctx, &points->t, offsets ? &offsets->t : NULL, g.voxel_size, g.range, P, M,
                 &r.voxels->t, &r.coords->t, &r.num_points->t, &r.num_voxels->t, &r.stats));
  return r;
}

rcv_result rcv_hard(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g, int32_t P,
                    int32_t M, rcv_run run) {
  return hard(points, offsets, g, P, M, run, 0);
}

rcv_result rcv_hard_packed(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g,
                           int32_t P, int32_t M, rcv_run run) {
  return hard(points, offsets, g, P, M, run, 1);
}

rcv_result rcv_downsample(const rct_tensor *points, const rct_tensor *offsets, rcv_grid g,
                          int64_t capacity, rcv_run run) {
  rcv_result r = {0};
  robocache_ctx *ctx = make_ctx(run);
  r.out = rct_make2(ROBOCACHE_DTYPE_F32, capacity, points->shape[1]);
  r.out_offsets = rct_make1(ROBOCACHE_DTYPE_I64, rcv_clouds(offsets) + 1);
  rcv_finish(&r, ctx,
             robocache_voxel_downsample(ctx, &points->t, offsets ? &offsets->t : NULL, g.voxel_size,
                                        g.range, &r.out->t, &r.out_offsets->t, &r.stats));
  return r;
}

void rcv_assert_cloud_rows(const rcv_result *batch, int64_t first, const rcv_result *one, int64_t n,
                           int64_t b) {
  const int64_t rowP = batch->voxels->shape[1] * batch->voxels->shape[2];
  for (int64_t r = 0; r < n; r++) {
    int64_t row = first + r;
    assert_int_equal(rct_get(batch->num_points, row), rct_get(one->num_points, r));
    double b0 = rct_get(one->coords, r * 4) < 0 ? -1.0 : (double)b;
    assert_true(rct_get(batch->coords, row * 4) == b0);
    for (int a = 1; a < 4; a++)
      assert_true(rct_get(batch->coords, row * 4 + a) == rct_get(one->coords, r * 4 + a));
    for (int64_t j = 0; j < rowP; j++)
      assert_true(rct_get_bits(batch->voxels, row * rowP + j) ==
                  rct_get_bits(one->voxels, r * rowP + j));
  }
}

void rcv_free(rcv_result *r) {
  rct_free(r->out);
  rct_free(r->out_offsets);
  rct_free(r->voxels);
  rct_free(r->coords);
  rct_free(r->num_points);
  rct_free(r->num_voxels);
  memset(r, 0, sizeof *r);
}

static void same_tensor(const rct_tensor *a, const rct_tensor *b, const char *what,
                        const char *name) {
  if (!a && !b) return;
  assert_non_null(a);
  assert_non_null(b);
  char label[256];
  snprintf(label, sizeof label, "%s: %s", what, name);
  rct_assert_bits_equal(a, b, label);
}

void rcv_assert_same(const rcv_result *a, const rcv_result *b, const char *what) {
  if (a->status != b->status)
    fail_msg("%s: status %s vs %s (%s | %s)", what, robocache_status_name(a->status),
             robocache_status_name(b->status), a->message, b->message);
  if (memcmp(&a->stats, &b->stats, sizeof a->stats) != 0)
    fail_msg("%s: stats differ (in range %lld vs %lld, voxels %lld vs %lld)", what,
             (long long)a->stats.points_in_range, (long long)b->stats.points_in_range,
             (long long)a->stats.voxels_nonempty, (long long)b->stats.voxels_nonempty);
  same_tensor(a->out, b->out, what, "out");
  same_tensor(a->out_offsets, b->out_offsets, what, "out_offsets");
  same_tensor(a->voxels, b->voxels, what, "voxels");
  same_tensor(a->coords, b->coords, what, "coords");
  same_tensor(a->num_points, b->num_points, what, "num_points");
  same_tensor(a->num_voxels, b->num_voxels, what, "num_voxels");
}
