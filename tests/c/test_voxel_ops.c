/* robocache_voxelize / voxelize_hard / voxel_downsample on synthetic clouds:
 * closed-form cases worked out by hand, reference == optimised bitwise on
 * random clouds (NaN, inf, out-of-range and boundary points, empty clouds),
 * batched == per-cloud, thread-count independence, presets, errors. */
#include "support_voxel.h"

#include "ops/voxel_problem.h" /* RC_VOXEL_PAR_MIN */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const rcv_run REF = {1, 0}, CPU = {0, 0}, CPU1 = {0, 1}, CPU2 = {0, 2};

/* out[b, f, z, y, x] of a dense result */
static double cell(const rcv_result *r, int64_t b, int64_t f, int64_t z, int64_t y, int64_t x) {
  const int64_t *s = r->out->shape;
  return rct_get(r->out, (((b * s[1] + f) * s[2] + z) * s[3] + y) * s[4] + x);
}

static void test_grid_size_and_presets(void **state) {
  (void)state;
  /* grid x, y, z of each preset as listed in DESIGN.md §1.3 */
  static const struct {
    const char *name;
    int64_t grid[3];
    int32_t P, train, test;
  } want[] = {{"second-kitti", {1408, 1600, 40}, 5, 16000, 40000},
              {"pointpillars-kitti", {432, 496, 1}, 32, 16000, 40000},
              {"centerpoint-nus", {1024, 1024, 40}, 10, 90000, 120000}};
  for (int i = 0; i < 3; i++) {
    const robocache_voxel_preset *p = robocache_voxel_preset_find(want[i].name);
    assert_non_null(p);
    assert_ptr_equal(p, robocache_voxel_preset_at(i));
    int64_t grid[3];
    assert_int_equal(robocache_voxel_grid_size(NULL, p->voxel_size, p->point_cloud_range, grid),
                     ROBOCACHE_OK);
    for (int a = 0; a < 3; a++) assert_int_equal(grid[a], want[i].grid[a]);
    assert_int_equal(p->max_points_per_voxel, want[i].P);
    assert_int_equal(p->max_voxels_train, want[i].train);
    assert_int_equal(p->max_voxels_test, want[i].test);
  }
  assert_null(robocache_voxel_preset_at(3));
  assert_null(robocache_voxel_preset_at(-1));
  assert_null(robocache_voxel_preset_find("second"));
  int64_t grid[3];
  const float vs[3] = {0.1f, 0.0f, 0.1f}, range[6] = {0, 0, 0, 1, 1, 1};
  assert_int_equal(robocache_voxel_grid_size(NULL, vs, range, grid), ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "voxel_size[1] (y)");
  const float vs2[3] = {0.1f, 0.1f, 0.1f}, bad[6] = {0, 0, 1, 1, 1, 1};
  assert_int_equal(robocache_voxel_grid_size(NULL, vs2, bad, grid), ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "point_cloud_range on z");
}

/* 8 points, grid 4 x 3 x 2 of 1 m voxels; see the comments for each point. */
static const float DENSE_PTS[8][4] = {
    {1.5f, 2.5f, 0.5f, 1.0f},      /* voxel x1 y2 z0 */
    {1.2f, 2.9f, 0.1f, 2.0f},      /* x1 y2 z0 */
    {3.9f, 0.0f, 1.999f, -5.0f},   /* x3 y0 z1 */
    {1.0f, 2.0f, 0.0f, 4.0f},      /* x1 y2 z0 (on the lower faces) */
    {-0.001f, 1.0f, 1.0f, 9.0f},   /* x < xmin: out of range */
    {4.0f, 1.0f, 1.0f, 9.0f},      /* x == xmax: index 4 == grid: out of range */
    {NAN, 1.0f, 1.0f, 9.0f},       /* non-finite */
    {1.0f, 1.0f, INFINITY, 9.0f}}; /* non-finite */
static const float DENSE_RANGE[6] = {0, 0, 0, 4, 3, 2};

static void check_dense_stats(const rcv_result *r) {
  assert_int_equal(r->status, ROBOCACHE_OK);
  assert_int_equal(r->stats.points_in, 8);
  assert_int_equal(r->stats.points_in_range, 4);
  assert_int_equal(r->stats.points_dropped_range, 2);
  assert_int_equal(r->stats.points_dropped_nonfinite, 2);
  assert_int_equal(r->stats.voxels_nonempty, 2);
}

static void test_dense_closed_form(void **state) {
  (void)state;
  rct_tensor *pts = rcv_points(&DENSE_PTS[0][0], 8, 4);
  rcv_grid g = {{1, 1, 1}, DENSE_RANGE};
  const rcv_run runs[2] = {REF, CPU};
  for (int k = 0; k < 2; k++) {
    rcv_result cnt = rcv_dense(pts, NULL, g, ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_I32, runs[k]);
    check_dense_stats(&cnt);
    double total = 0;
    for (int64_t i = 0; i < rct_numel(cnt.out); i++) total += rct_get(cnt.out, i);
    assert_true(total == 4.0);
    assert_true(cell(&cnt, 0, 0, 0, 2, 1) == 3.0);
    assert_true(cell(&cnt, 0, 0, 1, 0, 3) == 1.0);
    rcv_result occ =
        rcv_dense(pts, NULL, g, ROBOCACHE_VOXEL_OCCUPANCY, ROBOCACHE_DTYPE_U8, runs[k]);
    check_dense_stats(&occ);
    assert_true(cell(&occ, 0, 0, 0, 2, 1) == 1.0 && cell(&occ, 0, 0, 1, 0, 3) == 1.0);
    assert_true(cell(&occ, 0, 0, 0, 0, 0) == 0.0);
    const struct {
      int32_t mode;
      double a, b; /* feature of voxel (1,2,0) and of voxel (3,0,1) */
    } want[3] = {{ROBOCACHE_VOXEL_SUM, 7.0, -5.0},
                 {ROBOCACHE_VOXEL_MEAN, (double)(float)(7.0 / 3.0), -5.0},
                 {ROBOCACHE_VOXEL_MAX, 4.0, -5.0}};
    for (int m = 0; m < 3; m++) {
      rcv_result r = rcv_dense(pts, NULL, g, want[m].mode, ROBOCACHE_DTYPE_F32, runs[k]);
      check_dense_stats(&r);
      assert_true(cell(&r, 0, 0, 0, 2, 1) == want[m].a);
      assert_true(cell(&r, 0, 0, 1, 0, 3) == want[m].b);
      assert_true(cell(&r, 0, 0, 1, 2, 1) == 0.0);
      rcv_free(&r);
    }
    rcv_free(&cnt);
    rcv_free(&occ);
  }
  /* C == 3: the features are x, y, z */
  const float xyz[2][3] = {{0.25f, 0.5f, 0.75f}, {0.75f, 0.5f, 0.25f}};
  rct_tensor *p3 = rcv_points(&xyz[0][0], 2, 3);
  rcv_result mean = rcv_dense(p3, NULL, g, ROBOCACHE_VOXEL_MEAN, ROBOCACHE_DTYPE_F32, CPU);
  assert_int_equal(mean.status, ROBOCACHE_OK);
  assert_int_equal(mean.out->shape[1], 3);
  assert_true(cell(&mean, 0, 0, 0, 0, 0) == 0.5 && cell(&mean, 0, 1, 0, 0, 0) == 0.5 &&
              cell(&mean, 0, 2, 0, 0, 0) == 0.5);
  rcv_free(&mean);
  rct_free(p3);
  rct_free(pts);
}

/* MAX in the total order of the floats and NaN sums, as documented
 * (rcv_special_points), on both backends. */
static void test_dense_special_values(void **state) {
  (void)state;
  rct_tensor *pts = rcv_special_points();
  rcv_grid g = {{1, 1, 1}, rcv_special_range};
  const rcv_run runs[2] = {REF, CPU};
  for (int k = 0; k < 2; k++) {
    rcv_result mx = rcv_dense(pts, NULL, g, ROBOCACHE_VOXEL_MAX, ROBOCACHE_DTYPE_F32, runs[k]);
    rcv_result sum = rcv_dense(pts, NULL, g, ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32, runs[k]);
    assert_int_equal(mx.status, ROBOCACHE_OK);
    assert_int_equal(sum.status, ROBOCACHE_OK);
    for (int x = 0; x < 9; x++) {
      assert_int_equal(rct_get_bits(mx.out, x), rcv_special_max[x]);
      assert_int_equal(rct_get_bits(sum.out, x), rcv_special_sum[x]);
    }
    rcv_free(&mx);
    rcv_free(&sum);
  }
  rct_free(pts);
}

/* Voxels A (x0), B (x1), C (x2), D (x0 y1 z2) with points in the order
 * A B A C A B D; the feature column is the point's index. */
static rct_tensor *hard_points(void) {
  const float cx[7] = {0.5f, 1.5f, 0.5f, 2.5f, 0.5f, 1.5f, 0.5f};
  float pts[7][4];
  for (int i = 0; i < 7; i++) {
    pts[i][0] = cx[i] + 0.01f * (float)i;
    pts[i][1] = i == 6 ? 1.5f : 0.5f;
    pts[i][2] = i == 6 ? 2.5f : 0.5f;
    pts[i][3] = (float)i;
  }
  return rcv_points(&pts[0][0], 7, 4);
}

static void check_row(const rcv_result *r, int64_t row, const int32_t coord[4], int np,
                      const int *idx) {
  for (int a = 0; a < 4; a++) assert_int_equal(rct_get(r->coords, row * 4 + a), coord[a]);
  assert_int_equal(rct_get(r->num_points, row), np);
  int64_t P = r->voxels->shape[1], C = r->voxels->shape[2];
  for (int j = 0; j < P; j++)
    for (int c = 0; c < C; c++) {
      double v = rct_get(r->voxels, (row * P + j) * C + c);
      if (j < np && c == 3)
        assert_true(v == (double)idx[j]);
      else if (j >= np)
        assert_true(v == 0.0);
    }
}

static void test_hard_closed_form(void **state) {
  (void)state;
  rct_tensor *pts = hard_points();
  const float range[6] = {0, 0, 0, 4, 4, 4};
  rcv_grid g = {{1, 1, 1}, range};
  const rcv_run runs[2] = {REF, CPU};
  for (int k = 0; k < 2; k++) {
    rcv_result r = rcv_hard(pts, NULL, g, 2, 2, runs[k]);
    assert_int_equal(r.status, ROBOCACHE_OK);
    assert_int_equal(rct_get(r.num_voxels, 0), 2);
    check_row(&r, 0, (const int32_t[]){0, 0, 0, 0}, 2, (const int[]){0, 2});
    check_row(&r, 1, (const int32_t[]){0, 0, 0, 1}, 2, (const int[]){1, 5});
    assert_int_equal(r.stats.voxels_nonempty, 4);
    assert_int_equal(r.stats.points_dropped_max_points, 1); /* A's third point */
    assert_int_equal(r.stats.voxels_dropped_max_voxels, 2); /* C and D */
    assert_int_equal(r.stats.points_dropped_max_voxels, 2);
    rcv_free(&r);
    r = rcv_hard(pts, NULL, g, 4, 5, runs[k]);
    assert_int_equal(r.status, ROBOCACHE_OK);
    assert_int_equal(rct_get(r.num_voxels, 0), 4);
    check_row(&r, 0, (const int32_t[]){0, 0, 0, 0}, 3, (const int[]){0, 2, 4});
    check_row(&r, 2, (const int32_t[]){0, 0, 0, 2}, 1, (const int[]){3});
    check_row(&r, 3, (const int32_t[]){0, 2, 1, 0}, 1, (const int[]){6});
    check_row(&r, 4, (const int32_t[]){-1, -1, -1, -1}, 0, NULL); /* padding */
    assert_int_equal(r.stats.points_dropped_max_points + r.stats.voxels_dropped_max_voxels, 0);
    rcv_free(&r);
  }
  rct_free(pts);
}

static void test_downsample_pcl_closed_form(void **state) {
  (void)state;
  /* leaf 0.5: floor(2x) = -1, -1, 1, -1 and floor(2y) = floor(2z) = 0 */
  const float pts[5][3] = {{-0.3f, 0.1f, 0.2f},
                           {-0.1f, 0.4f, 0.3f},
                           {0.7f, 0.1f, 0.2f},
                           {NAN, 0.0f, 0.0f},
                           {-0.26f, 0.2f, 0.1f}};
  rct_tensor *p = rcv_points(&pts[0][0], 5, 3);
  rcv_grid g = {{0.5f, 0.5f, 0.5f}, NULL};
  const rcv_run runs[2] = {REF, CPU};
  for (int k = 0; k < 2; k++) {
    rcv_result r = rcv_downsample(p, NULL, g, 5, runs[k]);
    assert_int_equal(r.status, ROBOCACHE_OK);
    assert_int_equal(rct_get_i64(r.out_offsets, 1), 2);
    assert_int_equal(r.stats.points_dropped_nonfinite, 1);
    const int members[3] = {0, 1, 4};
    for (int c = 0; c < 3; c++) {
      double acc = 0;
      for (int j = 0; j < 3; j++) acc += (double)pts[members[j]][c];
      assert_true(rct_get(r.out, c) == (double)(float)(acc / 3.0));
      assert_true(rct_get(r.out, 3 + c) == (double)pts[2][c]);
    }
    rcv_free(&r);
  }
  rct_free(p);
}

/* Random clouds (rcv_random_points, coordinates in [-1, 11)) are partly out
 * of this range; the random batch has 3 clouds, the second one empty. */
static const float RAND_RANGE[6] = {0, 0, 0, 10, 8, 6};
static const int64_t RAND_OFF[4] = {0, 2000, 2000, 5000};

static void test_ref_equals_cpu_random(void **state) {
  (void)state;
  rcv_grid g = {{1.0f, 0.5f, 0.75f}, RAND_RANGE};
  rct_tensor *off = rcv_offsets(RAND_OFF, 3);
  for (int64_t C = 3; C <= 5; C++) {
    rct_tensor *pts = rcv_random_points(100 + (uint64_t)C, 5000, C);
    for (size_t m = 0; m < rcv_num_dense_cases; m++) {
      rcv_result a = rcv_dense(pts, off, g, rcv_dense_cases[m].mode, rcv_dense_cases[m].dtype, REF);
      rcv_result b = rcv_dense(pts, off, g, rcv_dense_cases[m].mode, rcv_dense_cases[m].dtype, CPU);
      assert_int_equal(a.status, ROBOCACHE_OK);
      assert_true(a.stats.points_dropped_nonfinite > 0 && a.stats.points_dropped_range > 0);
      rcv_assert_same(&a, &b, "dense ref vs cpu");
      rcv_free(&a);
      rcv_free(&b);
    }
    const int32_t PM[3][2] = {{3, 50}, {1, 1000}, {100, 2000}};
    for (int k = 0; k < 3; k++) {
      rcv_result a = rcv_hard(pts, off, g, PM[k][0], PM[k][1], REF);
      rcv_result b = rcv_hard(pts, off, g, PM[k][0], PM[k][1], CPU);
      assert_int_equal(a.status, ROBOCACHE_OK);
      rcv_assert_same(&a, &b, "hard ref vs cpu");
      rcv_free(&a);
      rcv_free(&b);
    }
    rcv_grid pcl = {{0.7f, 0.7f, 0.7f}, NULL};
    rcv_grid ranged = g;
    for (int k = 0; k < 2; k++) {
      rcv_result a = rcv_downsample(pts, off, k ? pcl : ranged, 5000, REF);
      rcv_result b = rcv_downsample(pts, off, k ? pcl : ranged, 5000, CPU);
      assert_int_equal(a.status, ROBOCACHE_OK);
      rcv_assert_same(&a, &b, "downsample ref vs cpu");
      rcv_free(&a);
      rcv_free(&b);
    }
    rct_free(pts);
  }
  rct_free(off);
}

/* Above RC_VOXEL_PAR_MIN points the optimised backend uses threads: inside
 * one cloud (offsets NULL) and across the clouds of a batch. */
static void test_threads_do_not_change_results(void **state) {
  (void)state;
  rcv_grid g = {{0.5f, 0.5f, 0.5f}, RAND_RANGE};
  const int64_t N = RC_VOXEL_PAR_MIN + 1000, off[4] = {0, 100000, 100000, N};
  rct_tensor *pts = rcv_random_points(7, N, 4), *offsets = rcv_offsets(off, 3);
  const rct_tensor *batches[2] = {NULL, offsets};
  const rcv_run runs[3] = {REF, CPU1, CPU2};
  for (int k = 0; k < 2; k++) {
    rcv_result r[3][3];
    for (int m = 0; m < 3; m++) {
      r[0][m] = rcv_dense(pts, batches[k], g, ROBOCACHE_VOXEL_MEAN, ROBOCACHE_DTYPE_F32, runs[m]);
      r[1][m] = rcv_hard(pts, batches[k], g, 4, 3000, runs[m]);
      r[2][m] = rcv_downsample(pts, batches[k], g, N, runs[m]);
    }
    for (int op = 0; op < 3; op++) {
      assert_int_equal(r[op][0].status, ROBOCACHE_OK);
      rcv_assert_same(&r[op][0], &r[op][1], "reference vs 1 thread");
      rcv_assert_same(&r[op][0], &r[op][2], "reference vs 2 threads");
      for (int m = 0; m < 3; m++) rcv_free(&r[op][m]);
    }
  }
  rct_free(offsets);
  rct_free(pts);
}

/* Cloud b of a batch as its own tensor. */
static rct_tensor *cloud_of(const rct_tensor *pts, int64_t b) {
  int64_t C = pts->shape[1], n = RAND_OFF[b + 1] - RAND_OFF[b];
  return rcv_points((const float *)pts->t.data + RAND_OFF[b] * C, n, C);
}

/* Batch of RAND_OFF (clouds of 2000, 0 and 3000 points) against each cloud
 * alone, hard voxels with P = 3 and M. */
static void batched_equals_per_cloud(int32_t M) {
  rcv_grid g = {{1.0f, 0.5f, 0.75f}, RAND_RANGE};
  rct_tensor *off = rcv_offsets(RAND_OFF, 3), *pts = rcv_random_points(11, 5000, 4);
  const int32_t P = 3;
  rcv_result dense = rcv_dense(pts, off, g, ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32, CPU);
  rcv_result hard = rcv_hard(pts, off, g, P, M, CPU);
  rcv_result packed = rcv_hard_packed(pts, off, g, P, M, CPU);
  rcv_result down = rcv_downsample(pts, off, g, 5000, CPU);
  assert_memory_equal(&hard.stats, &packed.stats, sizeof hard.stats);
  int64_t G = rct_numel(dense.out) / 3, row = 0;
  for (int64_t b = 0; b < 3; b++) {
    rct_tensor *one = cloud_of(pts, b);
    rcv_result d1 = rcv_dense(one, NULL, g, ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32, CPU);
    for (int64_t i = 0; i < G; i++)
      assert_true(rct_get_bits(dense.out, b * G + i) == rct_get_bits(d1.out, i));
    rcv_result h1 = rcv_hard(one, NULL, g, P, M, CPU);
    const int64_t kept = (int64_t)rct_get(h1.num_voxels, 0);
    assert_int_equal(rct_get(hard.num_voxels, b), kept);
    assert_int_equal(rct_get(packed.num_voxels, b), kept);
    rcv_assert_cloud_rows(&hard, b * M, &h1, M, b);
    rcv_assert_cloud_rows(&packed, row, &h1, kept,
                          b); /* packed: the kept rows, cloud after cloud */
    row += kept;
    rcv_result s1 = rcv_downsample(one, NULL, g, 5000, CPU);
    int64_t lo = rct_get_i64(down.out_offsets, b), hi = rct_get_i64(down.out_offsets, b + 1);
    assert_int_equal(hi - lo, rct_get_i64(s1.out_offsets, 1));
    for (int64_t i = 0; i < (hi - lo) * 4; i++)
      assert_true(rct_get_bits(down.out, lo * 4 + i) == rct_get_bits(s1.out, i));
    rcv_free(&d1);
    rcv_free(&h1);
    rcv_free(&s1);
    rct_free(one);
  }
  /* M = 60: both non-empty clouds are full; M = 1000: neither */
  assert_true(M == 60 ? row == 2 * M : row > M && row < 2 * M);
  assert_int_equal(row, packed.stats.voxels_nonempty - packed.stats.voxels_dropped_max_voxels);
  for (int64_t r = row; r < 3 * M; r++) {
    assert_int_equal(rct_get(packed.num_points, r), 0);
    for (int a = 0; a < 4; a++) assert_true(rct_get(packed.coords, r * 4 + a) == -1.0);
    for (int64_t j = 0; j < P * 4; j++)
      assert_true(rct_get_bits(packed.voxels, r * P * 4 + j) == 0);
  }
  rcv_free(&dense);
  rcv_free(&hard);
  rcv_free(&packed);
  rcv_free(&down);
  rct_free(pts);
  rct_free(off);
}

static void test_batched_equals_per_cloud(void **state) {
  (void)state;
  batched_equals_per_cloud(60);
  batched_equals_per_cloud(1000);
}

static void test_strided_points(void **state) {
  (void)state;
  /* columns 1..4 of a [n, 6] array, as a strided [n, 4] view */
  rct_tensor *wide = rcv_random_points(5, 3000, 6), *pts = rct_make2(ROBOCACHE_DTYPE_F32, 3000, 4);
  for (int64_t i = 0; i < 3000; i++)
    for (int c = 0; c < 4; c++) rct_set(pts, i * 4 + c, rct_get(wide, i * 6 + c + 1));
  const int64_t shape[2] = {3000, 4}, strides[2] = {6, 1};
  rct_tensor view = *wide;
  view.t.data = (float *)wide->t.data + 1;
  memcpy(view.shape, shape, sizeof shape);
  memcpy(view.strides, strides, sizeof strides);
  view.t.shape = view.shape;
  view.t.strides = view.strides;
  rcv_grid g = {{0.5f, 0.5f, 0.5f}, RAND_RANGE};
  rcv_result a = rcv_hard(&view, NULL, g, 5, 2000, CPU), b = rcv_hard(pts, NULL, g, 5, 2000, CPU);
  rcv_assert_same(&a, &b, "strided vs contiguous points");
  rcv_free(&a);
  rcv_free(&b);
  rct_free(pts);
  rct_free(wide);
}

static void test_errors(void **state) {
  (void)state;
  rct_tensor *pts = rcv_random_points(3, 100, 4);
  rcv_grid g = {{1, 1, 1}, RAND_RANGE};
  const int64_t bad_end[3] = {0, 50, 99}, bad_dec[3] = {0, 60, 50}, bad_start[3] = {1, 50, 100};
  const int64_t *bad[3] = {bad_end, bad_dec, bad_start};
  const char *msg[3] = {"offsets[B] = 99", "offsets decrease", "offsets[0] must be 0"};
  for (int k = 0; k < 3; k++) {
    rct_tensor *off = rcv_offsets(bad[k], 2);
    rcv_result r = rcv_hard(pts, off, g, 2, 10, CPU);
    assert_int_equal(r.status, ROBOCACHE_INVALID_ARGUMENT);
    assert_non_null(strstr(r.message, msg[k]));
    rcv_free(&r);
    rct_free(off);
  }
  rcv_result r = rcv_downsample(pts, NULL, g, 2, CPU);
  assert_int_equal(r.status, ROBOCACHE_CAPACITY_EXCEEDED);
  assert_true(r.stats.voxels_nonempty > 2);
  assert_non_null(strstr(r.message, "capacity 2"));
  rcv_free(&r);
  r = rcv_dense(pts, NULL, g, 7, ROBOCACHE_DTYPE_F32, CPU);
  assert_int_equal(r.status, ROBOCACHE_INVALID_ARGUMENT);
  rcv_free(&r);
  r = rcv_dense(pts, NULL, g, ROBOCACHE_VOXEL_OCCUPANCY, ROBOCACHE_DTYPE_I32, CPU);
  assert_int_equal(r.status, ROBOCACHE_UNSUPPORTED_DTYPE);
  assert_non_null(strstr(r.message, "float32 or uint8"));
  rcv_free(&r);
  r = rcv_hard(pts, NULL, g, 0, 10, CPU);
  assert_int_equal(r.status, ROBOCACHE_INVALID_ARGUMENT);
  rcv_free(&r);
  /* wrong out shape and too few columns */
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  rct_tensor *out = rct_make(ROBOCACHE_DTYPE_F32, 5, (const int64_t[]){1, 1, 6, 8, 11});
  assert_int_equal(robocache_voxelize(ctx, &pts->t, NULL, g.voxel_size, g.range,
                                      ROBOCACHE_VOXEL_SUM, &out->t, NULL),
                   ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(ctx, "out [B,F,Z,Y,X]");
  rct_tensor *two = rct_make2(ROBOCACHE_DTYPE_F32, 10, 2);
  assert_int_equal(robocache_voxelize(ctx, &two->t, NULL, g.voxel_size, g.range,
                                      ROBOCACHE_VOXEL_COUNT, &out->t, NULL),
                   ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(ctx, "at least 3 columns");
  /* CUDA tensors: a device mismatch with CPU outputs, else no CUDA backend */
  pts->t.device_type = ROBOCACHE_DEVICE_CUDA;
  assert_int_equal(robocache_voxelize(ctx, &pts->t, NULL, g.voxel_size, g.range,
                                      ROBOCACHE_VOXEL_COUNT, &out->t, NULL),
                   ROBOCACHE_INVALID_ARGUMENT); /* shape checked first */
  rct_tensor *cnt = rct_make(ROBOCACHE_DTYPE_I32, 5, (const int64_t[]){1, 1, 6, 8, 10});
  assert_int_equal(robocache_voxelize(ctx, &pts->t, NULL, g.voxel_size, g.range,
                                      ROBOCACHE_VOXEL_COUNT, &cnt->t, NULL),
                   ROBOCACHE_DEVICE_MISMATCH);
  if (!robocache_has_cuda()) { /* CPU-only build, or no usable GPU */
    cnt->t.device_type = ROBOCACHE_DEVICE_CUDA;
    robocache_status s = robocache_voxelize(ctx, &pts->t, NULL, g.voxel_size, g.range,
                                            ROBOCACHE_VOXEL_COUNT, &cnt->t, NULL);
    assert_true(s == ROBOCACHE_UNSUPPORTED_DEVICE || s == ROBOCACHE_CUDA_ERROR);
  }
  pts->t.device_type = ROBOCACHE_DEVICE_CPU;
  rct_free(cnt);
  rct_free(out);
  rct_free(two);
  robocache_ctx_free(ctx);
  rct_free(pts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_grid_size_and_presets),
      cmocka_unit_test(test_dense_closed_form),
      cmocka_unit_test(test_dense_special_values),
      cmocka_unit_test(test_hard_closed_form),
      cmocka_unit_test(test_downsample_pcl_closed_form),
      cmocka_unit_test(test_ref_equals_cpu_random),
      cmocka_unit_test(test_threads_do_not_change_results),
      cmocka_unit_test(test_batched_equals_per_cloud),
      cmocka_unit_test(test_strided_points),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
