/* Grids wider than 2^24 voxels on an axis, where float32 no longer holds
 * every voxel index: voxel_downsample without a range (PCL VoxelGrid
 * voxels floor(p * (1 / leaf))) keeps every finite point and agrees with a
 * NumPy-style oracle written here (group by the exact floor, means in
 * float64 in input order, clouds in order of first appearance), on both
 * backends; a leaf whose reciprocal is not a finite float32 is an
 * INVALID_ARGUMENT; a range grid of 2^25 + 4 voxels keeps the points of
 * index < grid. */
#include "support_voxel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const rcv_run RUNS[3] = {{1, 0}, {0, 0}, {0, 1}}; /* reference, cpu, cpu 1 thread */

/* Downsample oracle for one cloud: out [n,C] (rows used returned). */
static int64_t oracle(const rct_tensor *pts, const float leaf[3], float *out) {
  const int64_t n = pts->shape[0], C = pts->shape[1];
  int64_t(*key)[3] = malloc((size_t)n * sizeof *key), *first = malloc((size_t)n * sizeof *first);
  int64_t nvox = 0;
  for (int64_t i = 0; i < n; i++)
    for (int a = 0; a < 3; a++) {
      const float inv = 1.0f / leaf[a], u = (float)rct_get(pts, i * C + a) * inv;
      key[i][a] = (int64_t)floor((double)u);
    }
  for (int64_t i = 0; i < n; i++) {
    int64_t v = 0;
    while (v < nvox && memcmp(key[first[v]], key[i], sizeof key[i]) != 0) v++;
    if (v == nvox) first[nvox++] = i;
  }
  for (int64_t v = 0; v < nvox; v++)
    for (int64_t c = 0; c < C; c++) {
      double sum = 0;
      int64_t cnt = 0;
      for (int64_t i = 0; i < n; i++)
        if (memcmp(key[first[v]], key[i], sizeof key[i]) == 0)
          sum += rct_get(pts, i * C + c), cnt++;
      out[v * C + c] = (float)(sum / (double)cnt);
    }
  free(key);
  free(first);
  return nvox;
}

/* Clouds spanning +-3e7 leaves on x (floats there are 2 or 4 apart), some
 * points sharing voxels, leaves 1, 0.5 and 3. */
static void test_downsample_wide_pcl(void **state) {
  (void)state;
  enum { N = 64 };
  const float leaves[3][3] = {{1, 1, 1}, {0.5f, 1, 2}, {3, 0.25f, 1}};
  rct_rng r = rct_rng_seed(99);
  for (int rep = 0; rep < 30; rep++) {
    float data[N][4];
    for (int i = 0; i < N; i++) {
      data[i][0] = (float)rct_rng_uniform(&r, -3e7, 3e7);
      if (i % 4 == 3) data[i][0] = data[i - 1][0]; /* same voxel as the point before */
      if (i == 0) data[i][0] = -16777215.0f;       /* the extremes of the 2^25 leaves */
      if (i == 1) data[i][0] = 16777218.0f;
      data[i][1] = (float)rct_rng_uniform(&r, -2, 2);
      data[i][2] = (float)rct_rng_uniform(&r, 0, 1);
      data[i][3] = (float)i;
    }
    rct_tensor *pts = rcv_points(&data[0][0], N, 4);
    const float *leaf = leaves[rep % 3];
    float want[N * 4];
    const int64_t nvox = oracle(pts, leaf, want);
    rcv_grid g = {{leaf[0], leaf[1], leaf[2]}, NULL};
    for (int k = 0; k < 3; k++) {
      rcv_result res = rcv_downsample(pts, NULL, g, N, RUNS[k]);
      if (res.status != ROBOCACHE_OK) fail_msg("run %d: %s", k, res.message);
      assert_int_equal(res.stats.points_in_range, N);
      assert_int_equal(res.stats.points_dropped_range, 0);
      assert_int_equal(rct_get_i64(res.out_offsets, 1), nvox);
      for (int64_t i = 0; i < nvox * 4; i++)
        if (rct_get(res.out, i) != (double)want[i])
          fail_msg("run %d, leaf %g: row %lld column %lld: %.9g, oracle %.9g", k, (double)leaf[0],
                   (long long)(i / 4), (long long)(i % 4), rct_get(res.out, i), (double)want[i]);
      rcv_free(&res);
    }
    rct_free(pts);
  }
}

/* A leaf whose float32 reciprocal is infinite (below ~2.9e-39): a clear
 * error on both backends, even for a cloud of zeros (0 * inf is NaN). */
static void test_leaf_without_reciprocal(void **state) {
  (void)state;
  const float data[2][3] = {{0, 0, 0}, {1, 2, 3}};
  rcv_grid g = {{1e-39f, 1, 1}, NULL};
  for (int k = 0; k < 4; k++) {
    rct_tensor *pts = rcv_points(&data[0][0], k < 2 ? 2 : 1, 3); /* then zeros alone */
    rcv_result res = rcv_downsample(pts, NULL, g, 2, RUNS[k % 2]);
    rct_free(pts);
    assert_int_equal(res.status, ROBOCACHE_INVALID_ARGUMENT);
    if (!strstr(res.message, "voxel_size[0] (x)") || !strstr(res.message, "not a finite float32"))
      fail_msg("message \"%s\"", res.message);
    rcv_free(&res);
  }
}

/* A range grid of 2^25 + 4 voxels on x (voxel size 1): x = 2^25 has index
 * 2^25 (kept), x = 2^25 + 4 has index 2^25 + 4 = grid (dropped), on both
 * backends. */
static void test_hard_wide_range(void **state) {
  (void)state;
  const float data[3][3] = {{33554432.0f, 0.5f, 0.5f}, {33554436.0f, 0.5f, 0.5f}, {1, 0.5f, 0.5f}};
  static const float range[6] = {0, 0, 0, 33554436.0f, 1, 1};
  rct_tensor *pts = rcv_points(&data[0][0], 3, 3);
  rcv_grid g = {{1, 1, 1}, range};
  for (int k = 0; k < 2; k++) {
    rcv_result res = rcv_hard(pts, NULL, g, 1, 4, RUNS[k]);
    if (res.status != ROBOCACHE_OK) fail_msg("%s", res.message);
    assert_int_equal(res.stats.points_in_range, 2);
    assert_int_equal(res.stats.points_dropped_range, 1);
    assert_int_equal(rct_get(res.num_voxels, 0), 2);
    assert_int_equal(rct_get(res.coords, 3), 33554432); /* x of the first voxel */
    assert_int_equal(rct_get(res.coords, 7), 1);
    rcv_free(&res);
  }
  rct_free(pts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_downsample_wide_pcl),
      cmocka_unit_test(test_leaf_without_reciprocal),
      cmocka_unit_test(test_hard_wide_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
