/* voxel_downsample without a range (PCL VoxelGrid grid) on the optimised CPU
 * backend against the reference backend, bitwise, on the paths the CPU
 * backend takes: the fixed-origin grid (voxel indices in [-2^19, 2^19)),
 * the cloud's own grid when a point falls outside it (at the first block, in
 * a later block, in one cloud of a batch), keys computed ahead for a large
 * cloud on 2 threads, and the "more than 2^62 voxels" error. */
#include "support_voxel.h"

#include "ops/voxel_problem.h" /* RC_VOXEL_PAR_MIN */

#include <string.h>

static const rcv_run REF = {1, 0}, CPU1 = {0, 1}, CPU2 = {0, 2};

/* Adds d to x of rows [from, to) of a [n, C] cloud. */
static void shift_rows(rct_tensor *pts, int64_t from, int64_t to, float d) {
  float *x = (float *)pts->t.data;
  for (int64_t i = from; i < to; i++) x[i * pts->shape[1]] += d;
}

/* REF, CPU on 1 thread and CPU on 2 threads give the same status, stats and
 * outputs; the points are all in range (no range in a PCL grid). */
static void check_pcl(const rct_tensor *pts, const rct_tensor *off, float leaf, const char *what) {
  rcv_grid g = {{leaf, leaf, leaf}, NULL};
  const int64_t cap = pts->shape[0];
  rcv_result ref = rcv_downsample(pts, off, g, cap, REF);
  rcv_result one = rcv_downsample(pts, off, g, cap, CPU1);
  rcv_result two = rcv_downsample(pts, off, g, cap, CPU2);
  assert_int_equal(ref.status, ROBOCACHE_OK);
  assert_int_equal(ref.stats.points_dropped_range, 0);
  assert_true(ref.stats.voxels_nonempty > 0);
  rcv_assert_same(&ref, &one, what);
  rcv_assert_same(&ref, &two, what);
  rcv_free(&ref);
  rcv_free(&one);
  rcv_free(&two);
}

static void test_fixed_grid_and_fallback(void **state) {
  (void)state;
  rct_tensor *pts = rcv_random_points(21, 3000, 4);
  check_pcl(pts, NULL, 0.3f, "fixed grid"); /* indices within +-40 */
  /* leaf 1e-5 m: indices up to 1.1e6 > 2^19 from the first block on */
  check_pcl(pts, NULL, 1e-5f, "own grid from the first block");
  /* rows 1000.. moved 1e6 m away: the fixed grid holds the first 3 blocks */
  shift_rows(pts, 1000, 3000, 1e6f);
  check_pcl(pts, NULL, 0.7f, "own grid from a later block");
  /* a batch: cloud 0 near the origin, cloud 1 empty, cloud 2 far away */
  const int64_t off[4] = {0, 1000, 1000, 3000};
  rct_tensor *offsets = rcv_offsets(off, 3);
  check_pcl(pts, offsets, 0.7f, "batch, one cloud on its own grid");
  rct_free(offsets);
  rct_free(pts);
}

/* Above RC_VOXEL_PAR_MIN points, one cloud on 2 threads computes its keys
 * ahead, in parallel, on the fixed grid and then (far rows) on its own. */
static void test_large_cloud(void **state) {
  (void)state;
  const int64_t N = RC_VOXEL_PAR_MIN + 1000;
  rct_tensor *pts = rcv_random_points(22, N, 3);
  check_pcl(pts, NULL, 0.25f, "large cloud, fixed grid");
  shift_rows(pts, N - 10, N, -3e6f);
  check_pcl(pts, NULL, 0.25f, "large cloud, own grid");
  rct_free(pts);
}

static void test_too_many_voxels(void **state) {
  (void)state;
  rct_tensor *pts = rcv_random_points(23, 600, 3);
  rcv_grid g = {{1e-12f, 1e-12f, 1e-12f}, NULL}; /* about 1.2e13 voxels per axis */
  rcv_result ref = rcv_downsample(pts, NULL, g, 600, REF);
  rcv_result cpu = rcv_downsample(pts, NULL, g, 600, CPU1);
  assert_int_equal(ref.status, ROBOCACHE_INVALID_ARGUMENT);
  assert_non_null(strstr(ref.message, "2^62"));
  assert_int_equal(cpu.status, ROBOCACHE_INVALID_ARGUMENT);
  assert_string_equal(ref.message, cpu.message);
  rcv_free(&ref);
  rcv_free(&cpu);
  rct_free(pts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixed_grid_and_fallback),
      cmocka_unit_test(test_large_cloud),
      cmocka_unit_test(test_too_many_voxels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
