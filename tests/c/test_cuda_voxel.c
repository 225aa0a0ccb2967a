/* CUDA backend of voxelize / voxelize_hard / voxel_downsample against the
 * optimised CPU backend (itself tested against src/ref) on the same inputs:
 * real scans from data/pointclouds (KITTI HDL-64, KITTI object frame,
 * nuScenes, cuPCL's sample, PCL's bunny) and random
 * clouds with NaN / inf / out-of-range points and NaN / +-0 / +-inf
 * features, strided points, batches with empty clouds, small max_voxels /
 * max_points_per_voxel, voxels of every size class of the GPU's grouping
 * (one thread, one block, cub-sorted; all points in one voxel; more giant
 * voxels than one cub call sorts), too small downsample capacity, bad
 * offsets; batches of hard voxels in both layouts (padded and packed);
 * every op also unchecked (robocache_ctx_set_sync_checks 0).
 *
 * Bound: none. Every output, status and stats counter must be bitwise equal
 * to the CPU backend's: integers by construction, sums / means because the
 * GPU adds each voxel's points in input order with the same f64 arithmetic,
 * maxima being order-independent (docs/voxelize.md, "CUDA"). Two GPU runs
 * are compared too. Exit 77 without a usable GPU. */
#include "support_voxel.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU(call) assert_int_equal((int)(call), (int)cudaSuccess)

static const rcv_run CPU = {0, 0};

/* ---- device copies ----------------------------------------------------------- */

/* A device copy of a host tensor (same shape and strides) that remembers its
 * host twin, so results can be copied back into it. */
typedef struct dev {
  robocache_tensor t;
  rct_tensor *host;
} dev;

static dev *to_dev(rct_tensor *h) {
  if (!h) return NULL;
  dev *d = calloc(1, sizeof *d);
  assert_non_null(d);
  d->t = h->t;
  d->t.device_type = ROBOCACHE_DEVICE_CUDA;
  d->t.device_id = 0;
  d->host = h;
  CU(cudaMalloc(&d->t.data, h->nbytes > 0 ? h->nbytes : 1));
  CU(cudaMemcpy(d->t.data, h->t.data, h->nbytes, cudaMemcpyHostToDevice));
  return d;
}

/* Copies the device data back into the host twin and frees the copy. */
static void back_and_free(dev *d) {
  if (!d) return;
  CU(cudaMemcpy(d->host->t.data, d->t.data, d->host->nbytes, cudaMemcpyDeviceToHost));
  CU(cudaFree(d->t.data));
  free(d);
}

static robocache_tensor *dv(dev *d) { return d ? &d->t : NULL; }

/* checked: the context's sync checks (stats, one synchronisation per call). */
static robocache_ctx *new_ctx(int checked) {
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_sync_checks(ctx, checked), ROBOCACHE_OK);
  return ctx;
}

/* Records the call's status and waits for its work (unchecked calls return
 * before it is done). */
static void gpu_finish(rcv_result *r, robocache_ctx *ctx, robocache_status s) {
  CU(cudaDeviceSynchronize());
  rcv_finish(r, ctx, s);
}

/* Bytes after a dense output that must keep their 0xFF (gpu_dense_at). */
#define GUARD 64

/* The GPU twin of rcv_dense with out `shift` bytes past the start of its
 * allocation: the output and GUARD bytes on each side start as 0xFF on the
 * device, so an element never written is caught, and so is a write outside
 * the output. */
static rcv_result gpu_dense_at(rct_tensor *points, rct_tensor *offsets, rcv_grid g, int32_t mode,
                               robocache_dtype dtype, int checked, size_t shift) {
  rcv_result r = {0};
  robocache_ctx *ctx = new_ctx(checked);
  r.out = rcv_dense_out(points, offsets, g, mode, dtype);
  dev *p = to_dev(points), *o = to_dev(offsets);
  const size_t n = r.out->nbytes, total = shift + n + GUARD;
  unsigned char *base = NULL, *host = malloc(total);
  assert_non_null(host);
  CU(cudaMalloc((void **)&base, total));
  CU(cudaMemset(base, 0xFF, total));
  robocache_tensor out = r.out->t;
  out.device_type = ROBOCACHE_DEVICE_CUDA;
  out.device_id = 0;
  out.data = base + shift;
  robocache_status s =
      robocache_voxelize(ctx, dv(p), dv(o), g.voxel_size, g.range, mode, &out, &r.stats);
  gpu_finish(&r, ctx, s);
  CU(cudaMemcpy(host, base, total, cudaMemcpyDeviceToHost));
  memcpy(r.out->t.data, host + shift, n);
  for (size_t i = 0; i < shift; i++) assert_int_equal(host[i], 0xFF);
  for (size_t i = 0; i < GUARD; i++) assert_int_equal(host[shift + n + i], 0xFF);
  free(host);
  CU(cudaFree(base));
  back_and_free(p), back_and_free(o);
  return r;
}

static rcv_result gpu_dense(rct_tensor *points, rct_tensor *offsets, rcv_grid g, int32_t mode,
                            robocache_dtype dtype, int checked) {
  return gpu_dense_at(points, offsets, g, mode, dtype, checked, 0);
}

static rcv_result gpu_hard_as(rct_tensor *points, rct_tensor *offsets, rcv_grid g, int32_t P,
                              int32_t M, int checked, int packed) {
  rcv_result r = {0};
  robocache_ctx *ctx = new_ctx(checked);
  rcv_hard_out(points, offsets, P, M, &r);
  dev *p = to_dev(points), *o = to_dev(offsets), *v = to_dev(r.voxels), *c = to_dev(r.coords),
      *np = to_dev(r.num_points), *nv = to_dev(r.num_voxels);
  CU(cudaMemset(v->t.data, 0xFF, r.voxels->nbytes));
  CU(cudaMemset(c->t.data, 0x7F, r.coords->nbytes));
  CU(cudaMemset(np->t.data, 0x7F, r.num_points->nbytes));
  CU(cudaMemset(nv->t.data, 0x7F, r.num_voxels->nbytes));
  robocache_status s = (packed ? robocache_voxelize_hard_packed : robocache_voxelize_hard)(
      ctx, dv(p), dv(o), g.voxel_size, g.range, P, M, dv(v), dv(c), dv(np), dv(nv), &r.stats);
  gpu_finish(&r, ctx, s);
  back_and_free(p), back_and_free(o), back_and_free(v), back_and_free(c);
  back_and_free(np), back_and_free(nv);
  return r;
}

static rcv_result gpu_hard(rct_tensor *points, rct_tensor *offsets, rcv_grid g, int32_t P,
                           int32_t M, int checked) {
  return gpu_hard_as(points, offsets, g, P, M, checked, 0);
}

/* out starts as zeros (as rcv_downsample's): rows past the voxels are not
 * written by either backend. */
static rcv_result gpu_downsample(rct_tensor *points, rct_tensor *offsets, rcv_grid g,
                                 int64_t capacity, int checked) {
  rcv_result r = {0};
  robocache_ctx *ctx = new_ctx(checked);
  r.out = rct_make2(ROBOCACHE_DTYPE_F32, capacity, points->shape[1]);
  r.out_offsets = rct_make1(ROBOCACHE_DTYPE_I64, rcv_clouds(offsets) + 1);
  dev *p = to_dev(points), *o = to_dev(offsets), *out = to_dev(r.out), *oo = to_dev(r.out_offsets);
  CU(cudaMemset(oo->t.data, 0x7F, r.out_offsets->nbytes));
  robocache_status s = robocache_voxel_downsample(ctx, dv(p), dv(o), g.voxel_size, g.range, dv(out),
                                                  dv(oo), &r.stats);
  gpu_finish(&r, ctx, s);
  back_and_free(p), back_and_free(o), back_and_free(out), back_and_free(oo);
  return r;
}

/* ---- comparisons ----------------------------------------------------------------- */

/* An unchecked GPU result u equals the CPU's c: outputs bitwise, status OK,
 * stats unknown (points_in alone). */
static void assert_unchecked_same(const rcv_result *c, rcv_result *u, const char *what) {
  assert_int_equal(u->status, ROBOCACHE_OK);
  const robocache_voxel_stats *st = &u->stats;
  assert_int_equal(st->points_in, c->stats.points_in);
  const int64_t unknown[7] = {st->points_in_range,           st->points_dropped_range,
                              st->points_dropped_nonfinite,  st->voxels_nonempty,
                              st->points_dropped_max_points, st->voxels_dropped_max_voxels,
                              st->points_dropped_max_voxels};
  for (int k = 0; k < 7; k++) assert_int_equal(unknown[k], -1);
  u->stats = c->stats;
  rcv_assert_same(c, u, what);
}

/* c: the CPU run; a, b: two checked CUDA runs; u: an unchecked one. All
 * succeed with the same outputs and CUDA repeats itself (u: stats unknown).
 * Frees the four. */
static void assert_runs_agree(rcv_result *c, rcv_result *a, rcv_result *b, rcv_result u,
                              const char *label) {
  assert_int_equal(c->status, ROBOCACHE_OK);
  rcv_assert_same(c, a, label);
  rcv_assert_same(a, b, label);
  assert_unchecked_same(c, &u, label);
  rcv_free(a), rcv_free(b), rcv_free(c), rcv_free(&u);
}

/* Hard voxels (packed or padded layout): GPU == CPU and GPU == GPU again,
 * also unchecked. */
static void check_hard(rct_tensor *pts, rct_tensor *off, rcv_grid g, int32_t P, int32_t M,
                       const char *what, int packed) {
  char label[256];
  snprintf(label, sizeof label, "%s: hard%s P=%d M=%d", what, packed ? " packed" : "", (int)P,
           (int)M);
  rcv_result c = (packed ? rcv_hard_packed : rcv_hard)(pts, off, g, P, M, CPU);
  rcv_result a = gpu_hard_as(pts, off, g, P, M, 1, packed);
  rcv_result b = gpu_hard_as(pts, off, g, P, M, 1, packed);
  assert_runs_agree(&c, &a, &b, gpu_hard_as(pts, off, g, P, M, 0, packed), label);
}

/* GPU == CPU and GPU == GPU again, for every op and dense mode / dtype,
 * also unchecked. */
static void check_all(rct_tensor *pts, rct_tensor *off, rcv_grid g, int32_t P, int32_t M,
                      const char *what) {
  char label[256];
  int64_t grid[3] = {0, 0, 0};
  if (g.range)
    assert_int_equal(robocache_voxel_grid_size(NULL, g.voxel_size, g.range, grid), ROBOCACHE_OK);
  /* dense grids of up to 2^22 cells per feature and cloud (the presets' fine grids are skipped) */
  if (g.range && grid[0] * grid[1] * grid[2] * rcv_clouds(off) <= ((int64_t)1 << 22)) {
    for (size_t k = 0; k < rcv_num_dense_cases; k++) {
      snprintf(label, sizeof label, "%s: dense mode %d dtype %d", what,
               (int)rcv_dense_cases[k].mode, (int)rcv_dense_cases[k].dtype);
      const int32_t mode = rcv_dense_cases[k].mode;
      const robocache_dtype dtype = rcv_dense_cases[k].dtype;
      rcv_result c = rcv_dense(pts, off, g, mode, dtype, CPU);
      rcv_result a = gpu_dense(pts, off, g, mode, dtype, 1);
      rcv_result b = gpu_dense(pts, off, g, mode, dtype, 1);
      assert_runs_agree(&c, &a, &b, gpu_dense(pts, off, g, mode, dtype, 0), label);
    }
  }
  if (g.range) check_hard(pts, off, g, P, M, what, 0);
  if (g.range && off) check_hard(pts, off, g, P, M, what, 1);
  snprintf(label, sizeof label, "%s: downsample", what);
  const int64_t n = pts->shape[0];
  rcv_result c = rcv_downsample(pts, off, g, n, CPU);
  rcv_result a = gpu_downsample(pts, off, g, n, 1);
  rcv_result b = gpu_downsample(pts, off, g, n, 1);
  assert_runs_agree(&c, &a, &b, gpu_downsample(pts, off, g, n, 0), label);
}

/* ---- inputs -------------------------------------------------------------------- */

/* Clouds one after another (same column count) and their offsets. */
static rct_tensor *concat(rct_tensor **parts, int n, rct_tensor **offsets) {
  int64_t off[16] = {0}, C = parts[0]->shape[1];
  for (int k = 0; k < n; k++) off[k + 1] = off[k] + parts[k]->shape[0];
  rct_tensor *t = rct_make2(ROBOCACHE_DTYPE_F32, off[n], C);
  for (int k = 0; k < n; k++)
    memcpy((float *)t->t.data + off[k] * C, parts[k]->t.data, parts[k]->nbytes);
  *offsets = rcv_offsets(off, n);
  return t;
}

static rcv_grid preset_grid(const char *name) {
  const robocache_voxel_preset *p = robocache_voxel_preset_find(name);
  assert_non_null(p);
  rcv_grid g = {{p->voxel_size[0], p->voxel_size[1], p->voxel_size[2]}, p->point_cloud_range};
  return g;
}

/* A feature value: uniform in [-100, 100), 1% each NaN, -0.0, +0.0, +inf,
 * -inf. */
static double feature(rct_rng *r) {
  static const double special[5] = {NAN, -0.0, 0.0, INFINITY, -INFINITY};
  int64_t u = rct_rng_int(r, 0, 99);
  return u < 5 ? special[u] : rct_rng_uniform(r, -100.0, 100.0);
}

/* n random points in a 12 x 12 x 6 m box around the range [-5, 5]^2 x
 * [-2, 2] (some out of range), C columns, a few NaN / inf coordinates and
 * special features, every tenth point a duplicate of an earlier one (crowded
 * voxels); stored with row stride C + 2 (not contiguous). */
static rct_tensor *random_cloud(rct_rng *r, int64_t n, int64_t C) {
  const int64_t shape[2] = {n, C}, strides[2] = {C + 2, 1};
  rct_tensor *t = rct_make_strided(ROBOCACHE_DTYPE_F32, 2, shape, strides);
  for (int64_t i = 0; i < n; i++) {
    int64_t src = i >= 10 && i % 10 == 0 ? rct_rng_int(r, 0, i - 1) : -1;
    for (int64_t c = 0; c < C; c++) {
      double v = src >= 0 ? rct_get(t, src * C + c)
                 : c < 2  ? rct_rng_uniform(r, -6.0, 6.0)
                 : c == 2 ? rct_rng_uniform(r, -3.0, 3.0)
                          : feature(r);
      rct_set(t, i * C + c, v);
    }
    int64_t u = rct_rng_int(r, 0, 99);
    if (u == 0) rct_set(t, i * C + rct_rng_int(r, 0, 2), NAN);
    if (u == 1)
      rct_set(t, i * C + rct_rng_int(r, 0, 2), rct_rng_int(r, 0, 1) ? INFINITY : -INFINITY);
  }
  return t;
}

static const float BOX[6] = {-5.0f, -5.0f, -2.0f, 5.0f, 5.0f, 2.0f};
static const float CUBE[6] = {-40.0f, -40.0f, -3.0f, 40.0f, 40.0f, 1.0f};

/* ---- tests ------------------------------------------------------------------------ */

static void test_kitti_presets(void **state) {
  (void)state;
  static const char *const files[] = {"kitti_raw_hdl64_0000000000.bin", "kitti_000008_reduced.bin",
                                      "nuscenes_lidar_top_1532402927647951.pcd.bin"};
  static const char *const presets[] = {"second-kitti", "pointpillars-kitti", "centerpoint-nus"};
  for (int f = 0; f < 3; f++) {
    rct_tensor *pts = rcv_load(files[f]);
    for (int k = 0; k < 3; k++) {
      const robocache_voxel_preset *p = robocache_voxel_preset_find(presets[k]);
      char what[256];
      snprintf(what, sizeof what, "%s / %s", files[f], presets[k]);
      /* test capacity, then train capacity (drops voxels on the full scan) */
      check_all(pts, NULL, preset_grid(presets[k]), p->max_points_per_voxel, p->max_voxels_test,
                what);
      rcv_result c = rcv_hard(pts, NULL, preset_grid(presets[k]), p->max_points_per_voxel,
                              p->max_voxels_train, CPU);
      rcv_result a = gpu_hard(pts, NULL, preset_grid(presets[k]), p->max_points_per_voxel,
                              p->max_voxels_train, 1);
      rcv_assert_same(&c, &a, what);
      rcv_free(&a), rcv_free(&c);
    }
    /* the benchmark's grid: 128^3 over 80 x 80 x 4 m */
    rcv_grid cube = {{0.625f, 0.625f, 0.03125f}, CUBE};
    check_all(pts, NULL, cube, 8, 30000, files[f]);
    rct_free(pts);
  }
}

/* Eight scans (the two raw KITTI frames, repeated, and the object frame) as
 * one batch: GPU batch == CPU batch, and each GPU cloud == the GPU run of
 * that cloud alone. */
static void test_batch_of_scans(void **state) {
  (void)state;
  rct_tensor *s0 = rcv_load("kitti_raw_hdl64_0000000000.bin");
  rct_tensor *s1 = rcv_load("kitti_raw_hdl64_0000000001.bin");
  rct_tensor *s2 = rcv_load("kitti_000008_reduced.bin");
  rct_tensor *parts[8] = {s0, s1, s2, s1, s0, s2, s0, s1}, *offsets = NULL;
  rct_tensor *all = concat(parts, 8, &offsets);
  rcv_grid g = preset_grid("second-kitti");
  const int32_t P = 5, M = 16000;
  check_all(all, offsets, g, P, M, "batch of 8 scans");
  rcv_result batch = gpu_hard(all, offsets, g, P, M, 1);
  assert_int_equal(batch.status, ROBOCACHE_OK);
  for (int b = 0; b < 8; b++) {
    rcv_result r = gpu_hard(parts[b], NULL, g, P, M, 1);
    assert_int_equal(rct_get(batch.num_voxels, b), rct_get(r.num_voxels, 0));
    rcv_assert_cloud_rows(&batch, b * M, &r, M, b);
    rcv_free(&r);
  }
  rcv_free(&batch);
  rct_free(offsets), rct_free(all), rct_free(s0), rct_free(s1), rct_free(s2);
}

/* PCL VoxelGrid downsampling (no range) of real clouds, one and batched. */
static void test_pcl_downsample(void **state) {
  (void)state;
  rct_tensor *a = rcv_load("cupcl_sample.pcd"), *b = rcv_load("bunny.pcd");
  rcv_grid g = {{1.0f, 1.0f, 1.0f}, NULL};
  check_all(a, NULL, g, 0, 0, "cupcl_sample 1 m");
  rcv_grid fine = {{0.01f, 0.01f, 0.01f}, NULL};
  check_all(b, NULL, fine, 0, 0, "bunny 1 cm");
  rct_tensor *parts[3] = {b, a, b}, *offsets = NULL;
  rct_tensor *all = concat(parts, 3, &offsets);
  check_all(all, offsets, (rcv_grid){{0.05f, 0.05f, 0.05f}, NULL}, 0, 0, "pcl batch");
  rct_free(offsets), rct_free(all), rct_free(a), rct_free(b);
}

/* Random strided clouds with dropped points, crowded voxels, small P and M,
 * batches with empty clouds. */
static void test_random_clouds(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(20261121);
  for (int round = 0; round < 6; round++) {
    int64_t C = 3 + round % 3, n = rct_rng_int(&r, 1, 40000);
    rct_tensor *pts = random_cloud(&r, n, C);
    float size = (float)rct_rng_uniform(&r, 0.05, 0.6);
    rcv_grid g = {{size, size * 1.5f, size * 2.0f}, BOX};
    int32_t P = (int32_t)rct_rng_int(&r, 1, 8), M = (int32_t)rct_rng_int(&r, 1, 3000);
    char what[128];
    snprintf(what, sizeof what, "random round %d (n %lld, C %lld)", round, (long long)n,
             (long long)C);
    check_all(pts, NULL, g, P, M, what);
    g.range = NULL;
    check_all(pts, NULL, g, P, M, what);
    /* the same points as a batch with empty clouds at the front, middle and end */
    int64_t off[6] = {0, 0, n / 3, n / 3, n, n};
    rct_tensor *offsets = rcv_offsets(off, 5);
    g.range = BOX;
    check_all(pts, offsets, g, P, M, what);
    g.range = NULL;
    check_all(pts, offsets, g, P, M, what);
    rct_free(offsets);
    rct_free(pts);
  }
}

/* Hard voxels of a batch of more clouds than the packed layout's scan block
 * (256), about a quarter of them empty, many filling M. */
static void test_many_clouds_hard(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(20261124);
  enum { B = 700 };
  int64_t off[B + 1] = {0};
  for (int b = 0; b < B; b++)
    off[b + 1] = off[b] + (rct_rng_int(&r, 0, 3) == 0 ? 0 : rct_rng_int(&r, 1, 60));
  rct_tensor *pts = random_cloud(&r, off[B], 4), *offsets = rcv_offsets(off, B);
  rcv_grid g = {{0.5f, 0.5f, 0.5f}, BOX};
  for (int packed = 0; packed < 2; packed++)
    check_hard(pts, offsets, g, 2, 20, "700 clouds", packed);
  rct_free(offsets), rct_free(pts);
}

/* MAX in the total order of the floats and NaN sums (rcv_special_points),
 * checked and unchecked. */
static void test_special_values(void **state) {
  (void)state;
  rct_tensor *pts = rcv_special_points();
  rcv_grid g = {{1, 1, 1}, rcv_special_range};
  for (int checked = 0; checked < 2; checked++) {
    rcv_result mx = gpu_dense(pts, NULL, g, ROBOCACHE_VOXEL_MAX, ROBOCACHE_DTYPE_F32, checked);
    rcv_result sum = gpu_dense(pts, NULL, g, ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32, checked);
    assert_int_equal(mx.status, ROBOCACHE_OK);
    assert_int_equal(sum.status, ROBOCACHE_OK);
    for (int x = 0; x < 9; x++) {
      assert_int_equal(rct_get_bits(mx.out, x), rcv_special_max[x]);
      assert_int_equal(rct_get_bits(sum.out, x), rcv_special_sum[x]);
    }
    rcv_free(&mx), rcv_free(&sum);
  }
  check_all(pts, NULL, (rcv_grid){{1, 1, 1}, rcv_special_range}, 2, 5, "special values");
  rct_free(pts);
}

/* Voxel v (distinct cells of the 0.5 m grid over BOX) gets sizes[v] points
 * with special features now and then, one after another, then a few NaN /
 * out-of-range points. */
static rct_tensor *sized_voxels_in_order(rct_rng *r, const int64_t *sizes, int nvox, int64_t C) {
  int64_t n = 0;
  for (int v = 0; v < nvox; v++) n += sizes[v];
  n += n / 100 + 2;
  rct_tensor *t = rct_make2(ROBOCACHE_DTYPE_F32, n, C);
  int64_t i = 0;
  for (int v = 0; v <= nvox; v++) {
    const int64_t cell = (int64_t)v * 7 % 3200, ix = cell % 20, iy = cell / 20 % 20,
                  iz = cell / 400;
    const int64_t m = v < nvox ? sizes[v] : n - i; /* the last "voxel": dropped points */
    for (int64_t k = 0; k < m; k++, i++) {
      rct_set(t, i * C, -5.0 + 0.5 * (double)ix + rct_rng_uniform(r, 0.05, 0.45));
      rct_set(t, i * C + 1, -5.0 + 0.5 * (double)iy + rct_rng_uniform(r, 0.05, 0.45));
      rct_set(t, i * C + 2, -2.0 + 0.5 * (double)iz + rct_rng_uniform(r, 0.05, 0.45));
      for (int64_t c = 3; c < C; c++) rct_set(t, i * C + c, feature(r));
      if (v == nvox) rct_set(t, i * C + k % 3, k % 2 ? NAN : 50.0);
    }
  }
  return t;
}

/* sized_voxels_in_order in random order (the GPU's provisional ranks
 * scrambled). */
static rct_tensor *sized_voxels(rct_rng *r, const int64_t *sizes, int nvox, int64_t C) {
  rct_tensor *t = sized_voxels_in_order(r, sizes, nvox, C);
  const int64_t n = t->shape[0];
  for (int64_t a = n - 1; a > 0; a--) { /* Fisher-Yates */
    const int64_t b = rct_rng_int(r, 0, a);
    for (int64_t c = 0; c < C; c++) {
      const double x = rct_get(t, a * C + c);
      rct_set(t, a * C + c, rct_get(t, b * C + c));
      rct_set(t, b * C + c, x);
    }
  }
  return t;
}

/* Voxels of every size class of the GPU's grouping around its limits (16
 * points: one thread; 4096: one block; more: cub-sorted; downsampling: more
 * than 512 points sorted by a block radix sort, 32 columns at a time), all
 * points in one voxel, both as a batch (the same voxels in several clouds),
 * and points of 37 columns. */
static void test_big_voxels(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(4097);
  const rcv_grid g = {{0.5f, 0.5f, 0.5f}, BOX};
  const int64_t sizes[18] = {1,   2,    5,    16,   17,   33,   100, 255, 256,
                             257, 1000, 4095, 4096, 4097, 6000, 3,   512, 513};
  rct_tensor *mixed = sized_voxels(&r, sizes, 18, 4);
  check_all(mixed, NULL, g, 5, 30, "voxels of every size");
  check_all(mixed, NULL, g, 300, 8, "voxels of every size, P 300, M 8");
  const int64_t one[1] = {20000};
  rct_tensor *single = sized_voxels(&r, one, 1, 5);
  check_all(single, NULL, g, 7, 10, "all points in one voxel");
  rct_tensor *m5 = sized_voxels(&r, sizes, 18, 5), *none = rct_make2(ROBOCACHE_DTYPE_F32, 0, 5);
  rct_tensor *parts[5] = {m5, none, single, m5, single}, *offsets = NULL;
  rct_tensor *all = concat(parts, 5, &offsets);
  check_all(all, offsets, g, 5, 12, "batch of big voxels");
  rct_tensor *wide = sized_voxels(&r, sizes, 18, 37);
  check_all(wide, NULL, g, 5, 30, "voxels of every size, 37 columns");
  rct_free(offsets), rct_free(all), rct_free(m5), rct_free(none), rct_free(mixed);
  rct_free(single), rct_free(wide);
}

/* The cell of row i of a sized_voxels cloud on its 0.5 m grid over BOX, or
 * -1 (dropped points). */
static int64_t sized_cell(const rct_tensor *t, int64_t i, int64_t C) {
  int64_t ijk[3];
  for (int a = 0; a < 3; a++) {
    const double x = rct_get(t, i * C + a);
    if (!(x > BOX[a] && x < BOX[a + 3])) return -1;
    ijk[a] = (int64_t)floor((x - BOX[a]) / 0.5);
  }
  return ijk[0] + 20 * ijk[1] + 400 * ijk[2];
}

/* Big voxels (one block each, cub-sorted past 4096 points) with finite
 * features of two kinds: multiples of 2^-8 below 100, whose sums the GPU adds
 * in parallel (exact in f64, so any order gives the chain's bits), and small
 * integers with about 2 % of them replaced by 2^60, -2^60, 2^60, ... in input
 * order in each voxel (an even number of them): the input-order f64 chain
 * loses the integers added between a 2^60 and the next -2^60, a parallel sum
 * would keep some (other bits), so the GPU must fall back on the chain. Both
 * kinds in one cloud (F = 2, either column first), SUM and MEAN bitwise the
 * CPU's. */
static void test_parallel_and_chain_sums(void **state) {
  (void)state;
  enum { CELLS = 3200 };
  rct_rng r = rct_rng_seed(2060);
  const rcv_grid g = {{0.5f, 0.5f, 0.5f}, BOX};
  const int64_t sizes[8] = {17, 100, 1000, 4095, 4096, 4097, 6000, 3};
  for (int order = 0; order < 2; order++) {
    rct_tensor *pts = sized_voxels(&r, sizes, 8, 5);
    const int64_t n = pts->shape[0], chain = order ? 3 : 4, exact = order ? 4 : 3;
    int64_t last_big[CELLS], bigs[CELLS] = {0};
    for (int64_t i = 0; i < n; i++) {
      const int64_t cell = sized_cell(pts, i, 5);
      double x = (double)rct_rng_int(&r, 1, 8);
      if (cell >= 0 && rct_rng_int(&r, 0, 49) == 0) {
        x = bigs[cell] % 2 ? -0x1p60 : 0x1p60;
        bigs[cell]++, last_big[cell] = i;
      }
      rct_set(pts, i * 5 + chain, x);
      rct_set(pts, i * 5 + exact, (double)rct_rng_int(&r, -25600, 25600) / 256.0);
    }
    for (int64_t cell = 0; cell < CELLS; cell++)
      if (bigs[cell] % 2) rct_set(pts, last_big[cell] * 5 + chain, 1.0);
    for (int32_t mode = ROBOCACHE_VOXEL_SUM; mode <= ROBOCACHE_VOXEL_MEAN; mode++) {
      rcv_result c = rcv_dense(pts, NULL, g, mode, ROBOCACHE_DTYPE_F32, CPU);
      rcv_result a = gpu_dense(pts, NULL, g, mode, ROBOCACHE_DTYPE_F32, 1);
      rcv_assert_same(&c, &a, order ? "chain sums first" : "exact sums first");
      rcv_free(&a), rcv_free(&c);
    }
    rct_free(pts);
  }
}

/* 260 voxels of 4100 points: more giant voxels than one cub call sorts
 * (dense SUM and hard voxelization use the grouping; the other paths are
 * covered above). */
static void test_many_giant_voxels(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(260);
  int64_t sizes[260];
  for (int v = 0; v < 260; v++) sizes[v] = 4100;
  rct_tensor *pts = sized_voxels(&r, sizes, 260, 4);
  const rcv_grid g = {{0.5f, 0.5f, 0.5f}, BOX};
  rcv_result c = rcv_dense(pts, NULL, g, ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32, CPU);
  rcv_result a = gpu_dense(pts, NULL, g, ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32, 1);
  rcv_assert_same(&c, &a, "260 giant voxels: dense sum");
  rcv_free(&a), rcv_free(&c);
  c = rcv_hard(pts, NULL, g, 6, 200, CPU);
  a = gpu_hard(pts, NULL, g, 6, 200, 1);
  rcv_assert_same(&c, &a, "260 giant voxels: hard");
  rcv_free(&a), rcv_free(&c);
  rct_free(pts);
}

/* COUNT adds a warp's consecutive points of one cell with one atomic: voxels
 * of 1-100 points in input order (runs shorter than, as long as and longer
 * than a warp), broken by dropped points, and as a batch whose cloud
 * boundaries fall inside runs (the same cell of two clouds is two cells). */
static void test_count_runs(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(32);
  const rcv_grid g = {{0.5f, 0.5f, 0.5f}, BOX};
  const int64_t sizes[10] = {1, 31, 32, 33, 64, 5, 100, 2, 40, 70};
  rct_tensor *pts = sized_voxels_in_order(&r, sizes, 10, 4);
  const int64_t n = pts->shape[0];
  for (int64_t i = 7; i < n; i += 29) rct_set(pts, i * 4, NAN);
  const int64_t off[5] = {0, 45, 45, 200, n};
  rct_tensor *offsets = rcv_offsets(off, 4);
  for (int batched = 0; batched < 2; batched++) {
    for (int f32 = 0; f32 < 2; f32++) {
      const robocache_dtype dtype = f32 ? ROBOCACHE_DTYPE_F32 : ROBOCACHE_DTYPE_I32;
      rct_tensor *o = batched ? offsets : NULL;
      char label[64];
      snprintf(label, sizeof label, "runs of one cell, %s, dtype %d",
               batched ? "batched" : "one cloud", (int)dtype);
      rcv_result c = rcv_dense(pts, o, g, ROBOCACHE_VOXEL_COUNT, dtype, CPU);
      rcv_result a = gpu_dense(pts, o, g, ROBOCACHE_VOXEL_COUNT, dtype, 1);
      rcv_result b = gpu_dense(pts, o, g, ROBOCACHE_VOXEL_COUNT, dtype, 1);
      assert_runs_agree(&c, &a, &b, gpu_dense(pts, o, g, ROBOCACHE_VOXEL_COUNT, dtype, 0), label);
    }
  }
  rct_free(offsets), rct_free(pts);
}

/* COUNT / OCCUPANCY / MAX (out zeroed by a kernel of their own): outputs
 * that start off a 16-byte boundary (their first and last bytes zeroed one by
 * one), and a batch of 8 scans (980K points) into eight 128^3 grids (64 MB:
 * several rounds of the zeroing kernel's grid-stride loop), checked and
 * unchecked. */
static void test_atomic_modes_unaligned_and_batched(void **state) {
  (void)state;
  rct_tensor *s0 = rcv_load("kitti_raw_hdl64_0000000000.bin");
  rct_tensor *s1 = rcv_load("kitti_raw_hdl64_0000000001.bin");
  const rcv_grid cube = {{0.625f, 0.625f, 0.03125f}, CUBE};
  static const struct {
    int32_t mode;
    robocache_dtype dtype;
    size_t shift;
  } cases[] = {{ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_I32, 4},
               {ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_F32, 8},
               {ROBOCACHE_VOXEL_OCCUPANCY, ROBOCACHE_DTYPE_U8, 1},
               {ROBOCACHE_VOXEL_OCCUPANCY, ROBOCACHE_DTYPE_U8, 15},
               {ROBOCACHE_VOXEL_MAX, ROBOCACHE_DTYPE_F32, 12}};
  char label[128];
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    snprintf(label, sizeof label, "KITTI, mode %d dtype %d at +%zu", (int)cases[k].mode,
             (int)cases[k].dtype, cases[k].shift);
    rcv_result c = rcv_dense(s0, NULL, cube, cases[k].mode, cases[k].dtype, CPU);
    rcv_result a = gpu_dense_at(s0, NULL, cube, cases[k].mode, cases[k].dtype, 1, cases[k].shift);
    rcv_result b = gpu_dense_at(s0, NULL, cube, cases[k].mode, cases[k].dtype, 1, cases[k].shift);
    assert_runs_agree(
        &c, &a, &b, gpu_dense_at(s0, NULL, cube, cases[k].mode, cases[k].dtype, 0, cases[k].shift),
        label);
  }
  rct_tensor *parts[8] = {s0, s1, s1, s0, s0, s1, s0, s1}, *offsets = NULL;
  rct_tensor *all = concat(parts, 8, &offsets);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k += 2) {
    snprintf(label, sizeof label, "8 scans, mode %d dtype %d", (int)cases[k].mode,
             (int)cases[k].dtype);
    rcv_result c = rcv_dense(all, offsets, cube, cases[k].mode, cases[k].dtype, CPU);
    rcv_result a = gpu_dense(all, offsets, cube, cases[k].mode, cases[k].dtype, 1);
    rcv_result b = gpu_dense(all, offsets, cube, cases[k].mode, cases[k].dtype, 1);
    assert_runs_agree(&c, &a, &b, gpu_dense(all, offsets, cube, cases[k].mode, cases[k].dtype, 0),
                      label);
  }
  rct_free(offsets), rct_free(all), rct_free(s0), rct_free(s1);
}

/* Empty input, too small downsample capacity, a too fine PCL grid, bad
 * offsets: same status, message and stats as the CPU backend. */
static void test_edge_cases_and_errors(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(7);
  rct_tensor *none = rct_make2(ROBOCACHE_DTYPE_F32, 0, 4);
  const int64_t zero[3] = {0, 0, 0};
  rct_tensor *zoff = rcv_offsets(zero, 2);
  rcv_grid g = {{0.5f, 0.5f, 0.5f}, BOX};
  check_all(none, NULL, g, 3, 10, "empty");
  check_all(none, zoff, g, 3, 10, "empty batch");

  rct_tensor *pts = random_cloud(&r, 5000, 4);
  rcv_result c = rcv_downsample(pts, NULL, g, 10, CPU);
  rcv_result a = gpu_downsample(pts, NULL, g, 10, 1);
  assert_int_equal(c.status, ROBOCACHE_CAPACITY_EXCEEDED);
  rcv_assert_same(&c, &a, "capacity exceeded");
  assert_string_equal(c.message, a.message);
  rcv_free(&a), rcv_free(&c);

  /* a PCL grid of more than 2^62 voxels in cloud 1 (cloud 0, one point, fits) */
  const int64_t two[3] = {0, 1, 5000};
  rct_tensor *off2 = rcv_offsets(two, 2);
  const rcv_grid tiny = {{1e-12f, 1e-12f, 1e-12f}, NULL};
  c = rcv_downsample(pts, off2, tiny, 5000, CPU);
  a = gpu_downsample(pts, off2, tiny, 5000, 1);
  assert_int_equal(c.status, ROBOCACHE_INVALID_ARGUMENT);
  assert_non_null(strstr(c.message, "2^62"));
  assert_int_equal(a.status, ROBOCACHE_INVALID_ARGUMENT);
  assert_string_equal(c.message, a.message);
  rcv_free(&a), rcv_free(&c), rct_free(off2);

  static const int64_t bad[3][4] = {{1, 10, 20, 5000}, {0, 30, 20, 5000}, {0, 10, 20, 4999}};
  for (int k = 0; k < 3; k++) {
    rct_tensor *off = rcv_offsets(bad[k], 3);
    rcv_result h = gpu_hard(pts, off, g, 3, 10, 1);
    rcv_result d = gpu_downsample(pts, off, g, 5000, 1);
    rcv_result e = gpu_dense(pts, off, g, ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_I32, 1);
    rcv_result want = rcv_hard(pts, off, g, 3, 10, CPU);
    assert_int_equal(want.status, ROBOCACHE_INVALID_ARGUMENT);
    const rcv_result *got[3] = {&h, &d, &e};
    for (int j = 0; j < 3; j++) {
      assert_int_equal(got[j]->status, ROBOCACHE_INVALID_ARGUMENT);
      assert_string_equal(got[j]->message, want.message);
    }
    rcv_free(&h), rcv_free(&d), rcv_free(&e), rcv_free(&want);
    /* unchecked: unspecified rows, within the outputs (compute-sanitizer) */
    h = gpu_hard_as(pts, off, g, 3, 10, 0, 1);
    assert_int_equal(h.status, ROBOCACHE_OK);
    rcv_free(&h);
    rct_free(off);
  }
  rct_free(pts), rct_free(none), rct_free(zoff);
}

/* An optional argument keeps the tests whose names match it (a cmocka
 * pattern, e.g. "test_big*"): a shorter run under compute-sanitizer. */
int main(int argc, char **argv) {
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  rct_require_cuda();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kitti_presets),
      cmocka_unit_test(test_batch_of_scans),
      cmocka_unit_test(test_pcl_downsample),
      cmocka_unit_test(test_random_clouds),
      cmocka_unit_test(test_many_clouds_hard),
      cmocka_unit_test(test_special_values),
      cmocka_unit_test(test_big_voxels),
      cmocka_unit_test(test_many_giant_voxels),
      cmocka_unit_test(test_parallel_and_chain_sums),
      cmocka_unit_test(test_atomic_modes_unaligned_and_batched),
      cmocka_unit_test(test_count_runs),
      cmocka_unit_test(test_edge_cases_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
