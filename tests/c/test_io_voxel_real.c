/* Voxelization of the real clouds in data/pointclouds. Expected counts are
 * the numpy results listed in data/README.md (in-range points, non-empty
 * voxels, most points in one voxel; PCL VoxelGrid voxel counts, among them
 * cuPCL's published 3,440 for its sample at a 1 m leaf). Also: reference ==
 * optimised bitwise on real data, and a batch of two scans == each alone. */
#include "support_voxel.h"

#include <string.h>

static const rcv_run REF = {1, 0}, CPU = {0, 0};

static rcv_grid preset_grid(const char *name) {
  const robocache_voxel_preset *p = robocache_voxel_preset_find(name);
  assert_non_null(p);
  rcv_grid g = {{p->voxel_size[0], p->voxel_size[1], p->voxel_size[2]}, p->point_cloud_range};
  return g;
}

/* CenterPoint pillars: 0.2 x 0.2 x 8 m over the centerpoint-nus range */
static const float PILLAR_RANGE[6] = {-51.2f, -51.2f, -5.0f, 51.2f, 51.2f, 3.0f};

static void test_pcl_downsample_counts(void **state) {
  (void)state;
  static const struct {
    const char *file;
    float leaf;
    int64_t voxels;
  } want[] = {{"cupcl_sample.pcd", 1.0f, 3440},
              {"bunny.pcd", 0.01f, 294},
              {"table_scene_mug_stereo_textured.pcd", 0.01f, 9389}};
#ifdef ROBOCACHE_HAVE_LZF
  const int files = 3;
#else
  const int files = 2; /* the last one is binary_compressed */
#endif
  for (int k = 0; k < files; k++) {
    rct_tensor *pts = rcv_load(want[k].file);
    rcv_grid g = {{want[k].leaf, want[k].leaf, want[k].leaf}, NULL};
    rcv_result a = rcv_downsample(pts, NULL, g, pts->shape[0], REF);
    rcv_result b = rcv_downsample(pts, NULL, g, pts->shape[0], CPU);
    assert_int_equal(a.status, ROBOCACHE_OK);
    assert_int_equal(rct_get_i64(a.out_offsets, 1), want[k].voxels);
    assert_int_equal(a.stats.voxels_nonempty, want[k].voxels);
    rcv_assert_same(&a, &b, want[k].file);
    rcv_free(&a);
    rcv_free(&b);
    rct_free(pts);
  }
}

static void test_preset_counts(void **state) {
  (void)state;
  static const struct {
    const char *file, *preset;
    int64_t in_range, voxels;
  } want[] = {
      {"kitti_raw_hdl64_0000000000.bin", "second-kitti", 61202, 40836},
      {"kitti_raw_hdl64_0000000000.bin", "pointpillars-kitti", 61197, 10120},
      {"kitti_raw_hdl64_0000000000.bin", "centerpoint-nus", 122072, 42597},
      {"kitti_000008_reduced.bin", "second-kitti", 16897, 13092},
      {"kitti_000008_reduced.bin", "pointpillars-kitti", 16897, 3945},
      {"nuscenes_lidar_top_1532402927647951.pcd.bin", "second-kitti", 12078, 8410},
      {"nuscenes_lidar_top_1532402927647951.pcd.bin", "centerpoint-nus", 32264, 15307},
  };
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    rct_tensor *pts = rcv_load(want[k].file);
    const robocache_voxel_preset *p = robocache_voxel_preset_find(want[k].preset);
    rcv_grid g = preset_grid(want[k].preset);
    int32_t M = p->max_voxels_test;
    rcv_result a = rcv_hard(pts, NULL, g, p->max_points_per_voxel, M, REF);
    rcv_result b = rcv_hard(pts, NULL, g, p->max_points_per_voxel, M, CPU);
    assert_int_equal(a.status, ROBOCACHE_OK);
    assert_int_equal(a.stats.points_in_range, want[k].in_range);
    assert_int_equal(a.stats.voxels_nonempty, want[k].voxels);
    int64_t kept = want[k].voxels < M ? want[k].voxels : M;
    assert_int_equal(rct_get(a.num_voxels, 0), kept);
    assert_int_equal(a.stats.voxels_dropped_max_voxels, want[k].voxels - kept);
    rcv_assert_same(&a, &b, want[k].file);
    rcv_free(&a);
    rcv_free(&b);
    rct_free(pts);
  }
}

/* Dense counts: total = in-range points, maximum = the README's most points
 * in one voxel. */
static void test_dense_pillar_counts(void **state) {
  (void)state;
  static const struct {
    const char *file;
    int pillars; /* 0: pointpillars-kitti, 1: CenterPoint pillars */
    int64_t in_range, voxels, max;
  } want[] = {{"kitti_raw_hdl64_0000000000.bin", 0, 61197, 10120, 492},
              {"kitti_raw_hdl64_0000000000.bin", 1, 122072, 12685, 675},
              {"nuscenes_lidar_top_1532402927647951.pcd.bin", 1, 32264, 7896, 2232},
              {"kitti_000008_reduced.bin", 1, 16825, 3035, 115}};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    rct_tensor *pts = rcv_load(want[k].file);
    rcv_grid g = want[k].pillars ? (rcv_grid){{0.2f, 0.2f, 8.0f}, PILLAR_RANGE}
                                 : preset_grid("pointpillars-kitti");
    rcv_result r = rcv_dense(pts, NULL, g, ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_I32, CPU);
    assert_int_equal(r.status, ROBOCACHE_OK);
    int64_t total = 0, max = 0, nonzero = 0;
    for (int64_t i = 0; i < rct_numel(r.out); i++) {
      int64_t c = (int64_t)rct_get(r.out, i);
      total += c;
      nonzero += c > 0;
      max = c > max ? c : max;
    }
    assert_int_equal(total, want[k].in_range);
    assert_int_equal(nonzero, want[k].voxels);
    assert_int_equal(max, want[k].max);
    assert_int_equal(r.stats.voxels_nonempty, want[k].voxels);
    for (int32_t mode = ROBOCACHE_VOXEL_SUM; mode <= ROBOCACHE_VOXEL_MAX; mode++) {
      rcv_result a = rcv_dense(pts, NULL, g, mode, ROBOCACHE_DTYPE_F32, REF);
      rcv_result b = rcv_dense(pts, NULL, g, mode, ROBOCACHE_DTYPE_F32, CPU);
      rcv_assert_same(&a, &b, want[k].file);
      rcv_free(&a);
      rcv_free(&b);
    }
    rcv_free(&r);
    rct_free(pts);
  }
}

/* Two consecutive KITTI scans as one batch == each scan alone. */
static void test_batch_of_two_scans(void **state) {
  (void)state;
  rct_tensor *s0 = rcv_load("kitti_raw_hdl64_0000000000.bin");
  rct_tensor *s1 = rcv_load("kitti_raw_hdl64_0000000001.bin");
  int64_t n0 = s0->shape[0], n1 = s1->shape[0];
  rct_tensor *both = rct_make2(ROBOCACHE_DTYPE_F32, n0 + n1, 4);
  memcpy(both->t.data, s0->t.data, (size_t)n0 * 16);
  memcpy((float *)both->t.data + n0 * 4, s1->t.data, (size_t)n1 * 16);
  const int64_t off[3] = {0, n0, n0 + n1};
  rct_tensor *offsets = rcv_offsets(off, 2);
  rcv_grid g = preset_grid("second-kitti");
  const int32_t P = 5, M = 16000;
  rcv_result batch = rcv_hard(both, offsets, g, P, M, CPU);
  assert_int_equal(batch.status, ROBOCACHE_OK);
  const rct_tensor *one[2] = {s0, s1};
  for (int b = 0; b < 2; b++) {
    rcv_result r = rcv_hard(one[b], NULL, g, P, M, CPU);
    assert_int_equal(rct_get(batch.num_voxels, b), rct_get(r.num_voxels, 0));
    for (int64_t i = 0; i < M * P * 4; i++)
      assert_true(rct_get_bits(batch.voxels, b * M * P * 4 + i) == rct_get_bits(r.voxels, i));
    for (int64_t i = 0; i < M; i++) {
      assert_true(rct_get(batch.coords, (b * M + i) * 4) == (double)b);
      for (int a = 1; a < 4; a++)
        assert_true(rct_get(batch.coords, (b * M + i) * 4 + a) == rct_get(r.coords, i * 4 + a));
    }
    rcv_free(&r);
  }
  rcv_free(&batch);
  rct_free(offsets);
  rct_free(both);
  rct_free(s0);
  rct_free(s1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pcl_downsample_counts),
      cmocka_unit_test(test_preset_counts),
      cmocka_unit_test(test_dense_pillar_counts),
      cmocka_unit_test(test_batch_of_two_scans),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
