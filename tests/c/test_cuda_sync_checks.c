/* robocache_ctx_set_sync_checks on the CUDA backend (docs/cuda.md, "Data
 * checks"): with the checks off a call is asynchronous and bad data is not an
 * error — a row whose length is out of range and an EXTRAP_ERROR target come
 * out NaN with valid 0 while the other rows equal the reference backend's;
 * voxel stats hold only points_in (-1 elsewhere), bad offsets and a too small
 * downsample capacity give OK with outputs in bounds; unchecked calls on two
 * streams through one context (shared workspace) equal the CPU backend's.
 * With the checks on (the default, also for the thread's default context) the
 * same inputs give the CPU path's status and message. A thread's default
 * context gives its device workspace back when the thread exits. Exit 77
 * without a usable GPU. */
#include "support_voxel.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CU(call) assert_int_equal((int)(call), (int)cudaSuccess)

/* ---- device twins of host tensors -------------------------------------------- */

/* A device tensor with the shape and strides of h (pointing into h), holding
 * a copy of h's data; NULL for NULL. */
static robocache_tensor *dcopy(const rct_tensor *h) {
  if (!h) return NULL;
  robocache_tensor *d = malloc(sizeof *d);
  assert_non_null(d);
  *d = h->t;
  d->device_type = ROBOCACHE_DEVICE_CUDA;
  d->device_id = 0;
  CU(cudaMalloc(&d->data, h->nbytes > 0 ? h->nbytes : 1));
  CU(cudaMemcpy(d->data, h->t.data, h->nbytes, cudaMemcpyHostToDevice));
  return d;
}

/* Every byte of the device tensor set to `byte`. */
static void dfill(robocache_tensor *d, const rct_tensor *h, int byte) {
  CU(cudaMemset(d->data, byte, h->nbytes));
}

/* Copies d back into h (after synchronising the device). */
static void dback(rct_tensor *h, const robocache_tensor *d) {
  CU(cudaDeviceSynchronize());
  CU(cudaMemcpy(h->t.data, d->data, h->nbytes, cudaMemcpyDeviceToHost));
}

static void dfree(robocache_tensor *d) {
  if (!d) return;
  CU(cudaFree(d->data));
  free(d);
}

static robocache_ctx *ctx_with_checks(int on) {
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_sync_checks(ctx, on), ROBOCACHE_OK);
  return ctx;
}

/* ---- resample ------------------------------------------------------------------ */

enum { B = 4, S = 24, T = 18, D = 5 };

/* A linear resample problem, int64 ns times at ~100 Hz, f32 values, lengths
 * [B] = S, every target inside its row. */
static rct_resample_args make_problem(uint64_t seed) {
  rct_rng rng = rct_rng_seed(seed);
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F32, B, S, T, D, 1);
  rct_fill_times(a.times, &rng, 1000000000, 9000000, 11000000);
  rct_fill_uniform(a.values, &rng, -1, 1);
  a.lengths = rct_make1(ROBOCACHE_DTYPE_I64, B);
  for (int64_t b = 0; b < B; b++) {
    rct_set_i64(a.lengths, b, S);
    int64_t first = rct_get_i64(a.times, b * S), last = rct_get_i64(a.times, b * S + S - 1);
    for (int64_t t = 0; t < T; t++)
      rct_set_i64(a.target_times, b * T + t, rct_rng_int(&rng, first, last));
  }
  return a;
}

/* The device tensors of a resample call. */
typedef struct dcall {
  robocache_tensor *values, *times, *lengths, *target_times, *out, *valid;
} dcall;

static dcall dcall_make(const rct_resample_args *a) {
  dcall d = {dcopy(a->values),       dcopy(a->times), dcopy(a->lengths),
             dcopy(a->target_times), dcopy(a->out),   dcopy(a->valid)};
  return d;
}

static void dcall_free(dcall *d) {
  dfree(d->values), dfree(d->times), dfree(d->lengths), dfree(d->target_times);
  dfree(d->out), dfree(d->valid);
}

/* Runs the GPU resample of a (device copies d) with out zeroed (so that the
 * NaN of a bad row must be written) and valid 255 first; the outputs come
 * back into gout / gvalid. */
static robocache_status gpu_resample(robocache_ctx *ctx, const rct_resample_args *a, dcall *d,
                                     rct_tensor *gout, rct_tensor *gvalid) {
  CU(cudaMemcpy(d->lengths->data, a->lengths->t.data, a->lengths->nbytes, cudaMemcpyHostToDevice));
  CU(cudaMemcpy(d->target_times->data, a->target_times->t.data, a->target_times->nbytes,
                cudaMemcpyHostToDevice));
  dfill(d->out, a->out, 0);
  dfill(d->valid, a->valid, 0xFF);
  robocache_status s = robocache_resample(ctx, d->values, d->times, d->lengths, d->target_times,
                                          NULL, &a->opt, d->out, d->valid);
  dback(gout, d->out);
  dback(gvalid, d->valid);
  return s;
}

/* Target (b, t) of the GPU output: NaN in every channel and valid 0 when
 * `bad`, else equal to the reference's (valid exactly, values within the f32
 * bound of docs/cuda.md). */
static void assert_target(const rct_tensor *gout, const rct_tensor *gvalid,
                          const rct_resample_args *ref, int64_t b, int64_t t, int bad) {
  int64_t i = b * T + t;
  if (bad) {
    if (rct_get(gvalid, i) != 0)
      fail_msg("row %lld target %lld: valid should be 0", (long long)b, (long long)t);
  } else if (rct_get(gvalid, i) != rct_get(ref->valid, i)) {
    fail_msg("row %lld target %lld: valid %g, reference %g", (long long)b, (long long)t,
             rct_get(gvalid, i), rct_get(ref->valid, i));
  }
  for (int64_t e = 0; e < D; e++) {
    double g = rct_get(gout, i * D + e), r = rct_get(ref->out, i * D + e);
    if (bad ? !isnan(g) : !(fabs(g - r) <= 2e-6 + 0x1p-23 * fabs(r)))
      fail_msg("row %lld target %lld channel %lld: %g (reference %g, bad %d)", (long long)b,
               (long long)t, (long long)e, g, r, bad);
  }
}

/* A row whose length is 0: NaN / valid 0 with the checks off, the CPU path's
 * INVALID_ARGUMENT with them on (explicitly, by default and through the
 * thread's default context). */
static void test_bad_length(void **state) {
  (void)state;
  rct_resample_args a = make_problem(1);
  assert_int_equal(rct_resample(&a, 1, NULL, 0), ROBOCACHE_OK); /* reference of the good data */
  rct_tensor *gout = rct_make3(ROBOCACHE_DTYPE_F32, B, T, D);
  rct_tensor *gvalid = rct_make2(ROBOCACHE_DTYPE_U8, B, T);
  dcall d = dcall_make(&a);
  rct_resample_args bad = make_problem(1);
  rct_set_i64(bad.lengths, 1, 0);
  char cpu_msg[512];
  assert_int_equal(rct_resample(&bad, 0, cpu_msg, sizeof cpu_msg), ROBOCACHE_INVALID_ARGUMENT);

  robocache_ctx *off = ctx_with_checks(0);
  assert_int_equal(gpu_resample(off, &bad, &d, gout, gvalid), ROBOCACHE_OK);
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) assert_target(gout, gvalid, &a, b, t, b == 1);
  /* good data, checks off: everything equals the reference */
  assert_int_equal(gpu_resample(off, &a, &d, gout, gvalid), ROBOCACHE_OK);
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) assert_target(gout, gvalid, &a, b, t, 0);

  robocache_ctx *on = ctx_with_checks(1), *dflt = NULL;
  assert_int_equal(robocache_ctx_create(&dflt), ROBOCACHE_OK);
  robocache_ctx *checked[3] = {on, dflt, NULL};
  for (int k = 0; k < 3; k++) {
    assert_int_equal(gpu_resample(checked[k], &bad, &d, gout, gvalid), ROBOCACHE_INVALID_ARGUMENT);
    assert_string_equal(robocache_ctx_error_message(checked[k]), cpu_msg);
  }
  /* switching off and on again on one context */
  assert_int_equal(robocache_ctx_set_sync_checks(on, 0), ROBOCACHE_OK);
  assert_int_equal(gpu_resample(on, &bad, &d, gout, gvalid), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_sync_checks(on, 1), ROBOCACHE_OK);
  assert_int_equal(gpu_resample(on, &bad, &d, gout, gvalid), ROBOCACHE_INVALID_ARGUMENT);

  robocache_ctx_free(off), robocache_ctx_free(on), robocache_ctx_free(dflt);
  dcall_free(&d);
  rct_free(gout), rct_free(gvalid);
  rct_resample_args_free(&a), rct_resample_args_free(&bad);
}

/* extrapolate = error with one target before its row: that target NaN /
 * valid 0 (checks off), the CPU path's message (checks on). */
static void test_extrap_error(void **state) {
  (void)state;
  rct_resample_args a = make_problem(2), bad = make_problem(2);
  a.opt.extrapolate = bad.opt.extrapolate = ROBOCACHE_EXTRAP_ERROR;
  assert_int_equal(rct_resample(&a, 1, NULL, 0), ROBOCACHE_OK);
  rct_set_i64(bad.target_times, 2 * T + 4, rct_get_i64(bad.times, 2 * S) - 5);
  char cpu_msg[512];
  assert_int_equal(rct_resample(&bad, 0, cpu_msg, sizeof cpu_msg), ROBOCACHE_INVALID_ARGUMENT);
  rct_tensor *gout = rct_make3(ROBOCACHE_DTYPE_F32, B, T, D);
  rct_tensor *gvalid = rct_make2(ROBOCACHE_DTYPE_U8, B, T);
  dcall d = dcall_make(&a);

  robocache_ctx *off = ctx_with_checks(0), *on = ctx_with_checks(1);
  assert_int_equal(gpu_resample(off, &bad, &d, gout, gvalid), ROBOCACHE_OK);
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) assert_target(gout, gvalid, &a, b, t, b == 2 && t == 4);
  assert_int_equal(gpu_resample(on, &bad, &d, gout, gvalid), ROBOCACHE_INVALID_ARGUMENT);
  assert_string_equal(robocache_ctx_error_message(on), cpu_msg);

  robocache_ctx_free(off), robocache_ctx_free(on);
  dcall_free(&d);
  rct_free(gout), rct_free(gvalid);
  rct_resample_args_free(&a), rct_resample_args_free(&bad);
}

/* ---- voxelization ---------------------------------------------------------------- */

static const float k_range[6] = {0, 0, 0, 10, 10, 10};
static const rcv_run CPU = {0, 0};

enum { NPTS = 3000, P = 4, M = 200 };

/* Hard voxelization outputs on the device, for host tensors of r. */
typedef struct dhard {
  robocache_tensor *voxels, *coords, *num_points, *num_voxels;
} dhard;

static void hard_alloc(rcv_result *r, dhard *d, int64_t nb, int64_t C) {
  r->voxels = rct_make3(ROBOCACHE_DTYPE_F32, nb * M, P, C);
  r->coords = rct_make2(ROBOCACHE_DTYPE_I32, nb * M, 4);
  r->num_points = rct_make1(ROBOCACHE_DTYPE_I32, nb * M);
  r->num_voxels = rct_make1(ROBOCACHE_DTYPE_I32, nb);
  d->voxels = dcopy(r->voxels), d->coords = dcopy(r->coords);
  d->num_points = dcopy(r->num_points), d->num_voxels = dcopy(r->num_voxels);
}

static void hard_back(rcv_result *r, dhard *d) {
  dback(r->voxels, d->voxels), dback(r->coords, d->coords);
  dback(r->num_points, d->num_points), dback(r->num_voxels, d->num_voxels);
  dfree(d->voxels), dfree(d->coords), dfree(d->num_points), dfree(d->num_voxels);
}

static void assert_unknown_stats(const robocache_voxel_stats *st, int64_t n) {
  assert_int_equal(st->points_in, n);
  const int64_t rest[7] = {st->points_in_range,           st->points_dropped_range,
                           st->points_dropped_nonfinite,  st->voxels_nonempty,
                           st->points_dropped_max_points, st->voxels_dropped_max_voxels,
                           st->points_dropped_max_voxels};
  for (int i = 0; i < 7; i++) assert_int_equal(rest[i], -1);
}

/* Unchecked hard voxelizations of two batches, issued alternately on two
 * streams through one context (they share its workspace), equal the CPU
 * backend's; checked, the stats equal too. */
static void test_hard_two_streams(void **state) {
  (void)state;
  rcv_grid g = {{0.5f, 0.5f, 0.5f}, k_range};
  const int64_t off[3] = {0, 1200, NPTS};
  rct_tensor *offsets = rcv_offsets(off, 2), *pts[2];
  robocache_tensor *dpts[2], *doff = dcopy(offsets);
  rcv_result cpu[2], gpu[2][2];
  dhard dh[2][2];
  cudaStream_t streams[2];
  for (int k = 0; k < 2; k++) {
    pts[k] = rcv_random_points(40 + (uint64_t)k, NPTS, 4);
    dpts[k] = dcopy(pts[k]);
    cpu[k] = rcv_hard(pts[k], offsets, g, P, M, CPU);
    assert_int_equal(cpu[k].status, ROBOCACHE_OK);
    CU(cudaStreamCreateWithFlags(&streams[k], cudaStreamNonBlocking));
  }
  memset(gpu, 0, sizeof gpu);
  for (int round = 0; round < 2; round++)
    for (int k = 0; k < 2; k++) hard_alloc(&gpu[round][k], &dh[round][k], 2, 4);
  /* the four calls back to back, nothing synchronising between them */
  robocache_ctx *ctx = ctx_with_checks(0);
  for (int round = 0; round < 2; round++)
    for (int k = 0; k < 2; k++) {
      rcv_result *r = &gpu[round][k];
      assert_int_equal(robocache_ctx_set_cuda_stream(ctx, streams[(k + round) % 2]), ROBOCACHE_OK);
      r->status = robocache_voxelize_hard(
          ctx, dpts[k], doff, g.voxel_size, g.range, P, M, dh[round][k].voxels, dh[round][k].coords,
          dh[round][k].num_points, dh[round][k].num_voxels, &r->stats);
      if (r->status != ROBOCACHE_OK) fail_msg("%s", robocache_ctx_error_message(ctx));
    }
  for (int round = 0; round < 2; round++)
    for (int k = 0; k < 2; k++) {
      rcv_result *r = &gpu[round][k];
      hard_back(r, &dh[round][k]);
      assert_unknown_stats(&r->stats, NPTS);
      r->stats = cpu[k].stats;
      rcv_assert_same(r, &cpu[k], "unchecked hard voxelization");
      rcv_free(r);
    }
  /* checks on again: stats complete */
  assert_int_equal(robocache_ctx_set_sync_checks(ctx, 1), ROBOCACHE_OK);
  rcv_result r = {0};
  dhard d;
  hard_alloc(&r, &d, 2, 4);
  r.status = robocache_voxelize_hard(ctx, dpts[1], doff, g.voxel_size, g.range, P, M, d.voxels,
                                     d.coords, d.num_points, d.num_voxels, &r.stats);
  hard_back(&r, &d);
  rcv_assert_same(&r, &cpu[1], "checked hard voxelization");
  rcv_free(&r);
  robocache_ctx_free(ctx);
  for (int k = 0; k < 2; k++) {
    CU(cudaStreamDestroy(streams[k]));
    rcv_free(&cpu[k]), rct_free(pts[k]), dfree(dpts[k]);
  }
  rct_free(offsets), dfree(doff);
}

/* Offsets that decrease: INVALID_ARGUMENT with the CPU message (checks on),
 * OK and outputs in bounds (checks off; compute-sanitizer memcheck in
 * scripts/gpu-check.sh). */
static void test_bad_offsets(void **state) {
  (void)state;
  rcv_grid g = {{0.5f, 0.5f, 0.5f}, k_range};
  const int64_t off[4] = {0, 2000, 900, NPTS};
  rct_tensor *offsets = rcv_offsets(off, 3), *pts = rcv_random_points(50, NPTS, 4);
  rcv_result cpu = rcv_hard(pts, offsets, g, P, M, CPU);
  assert_int_equal(cpu.status, ROBOCACHE_INVALID_ARGUMENT);
  robocache_tensor *dpts = dcopy(pts), *doff = dcopy(offsets);
  for (int on = 0; on < 2; on++) {
    robocache_ctx *ctx = ctx_with_checks(on);
    rcv_result r = {0};
    dhard d;
    hard_alloc(&r, &d, 3, 4);
    robocache_status s =
        robocache_voxelize_hard(ctx, dpts, doff, g.voxel_size, g.range, P, M, d.voxels, d.coords,
                                d.num_points, d.num_voxels, &r.stats);
    hard_back(&r, &d);
    if (on) {
      assert_int_equal(s, ROBOCACHE_INVALID_ARGUMENT);
      assert_string_equal(robocache_ctx_error_message(ctx), cpu.message);
    } else {
      assert_int_equal(s, ROBOCACHE_OK);
      assert_unknown_stats(&r.stats, NPTS);
      for (int64_t b = 0; b < 3; b++) {
        int32_t nv = ((const int32_t *)r.num_voxels->t.data)[b];
        if (nv < 0 || nv > M) fail_msg("num_voxels[%lld] = %d", (long long)b, nv);
      }
    }
    rcv_free(&r);
    robocache_ctx_free(ctx);
  }
  rcv_free(&cpu), rct_free(offsets), rct_free(pts), dfree(dpts), dfree(doff);
}

/* Downsample into too small an out: CAPACITY_EXCEEDED (checks on); checks
 * off: OK, out_offsets clamped to the capacity and the rows that fit equal
 * the CPU backend's first rows (computed with room for all). */
static void test_downsample_capacity(void **state) {
  (void)state;
  rcv_grid g = {{1.0f, 1.0f, 1.0f}, k_range};
  rct_tensor *pts = rcv_random_points(60, NPTS, 3);
  rcv_result full = rcv_downsample(pts, NULL, g, NPTS, CPU);
  assert_int_equal(full.status, ROBOCACHE_OK);
  const int64_t cap = full.stats.voxels_nonempty / 2;
  robocache_tensor *dpts = dcopy(pts);
  for (int on = 0; on < 2; on++) {
    robocache_ctx *ctx = ctx_with_checks(on);
    rct_tensor *out = rct_make2(ROBOCACHE_DTYPE_F32, cap, 3);
    rct_tensor *out_offsets = rct_make1(ROBOCACHE_DTYPE_I64, 2);
    robocache_tensor *dout = dcopy(out), *doo = dcopy(out_offsets);
    robocache_voxel_stats st;
    robocache_status s =
        robocache_voxel_downsample(ctx, dpts, NULL, g.voxel_size, g.range, dout, doo, &st);
    dback(out, dout), dback(out_offsets, doo);
    if (on) {
      assert_int_equal(s, ROBOCACHE_CAPACITY_EXCEEDED);
      assert_int_equal(st.voxels_nonempty, full.stats.voxels_nonempty);
    } else {
      assert_int_equal(s, ROBOCACHE_OK);
      assert_unknown_stats(&st, NPTS);
      assert_int_equal(rct_get_i64(out_offsets, 1), cap);
      assert_memory_equal(out->t.data, full.out->t.data, out->nbytes);
    }
    rct_free(out), rct_free(out_offsets), dfree(dout), dfree(doo);
    robocache_ctx_free(ctx);
  }
  rcv_free(&full), rct_free(pts), dfree(dpts);
}

/* ---- the thread's default context -------------------------------------------- */

/* A dense SUM through the calling thread's default context (ctx NULL). */
typedef struct thread_job {
  const rcv_grid *g;
  const robocache_tensor *pts;
  robocache_tensor *out;
  robocache_status status;
  size_t free_after_call; /* device memory free right after the call */
} thread_job;

static void *sum_on_default_ctx(void *arg) {
  thread_job *j = arg;
  robocache_voxel_stats st;
  j->status = robocache_voxelize(NULL, j->pts, NULL, j->g->voxel_size, j->g->range,
                                 ROBOCACHE_VOXEL_SUM, j->out, &st);
  size_t total = 0;
  if (cudaMemGetInfo(&j->free_after_call, &total) != cudaSuccess) j->free_after_call = SIZE_MAX;
  return NULL;
}

/* A thread that used its default context gives the context's device
 * workspace back when it exits: the device's free memory after joining it is
 * within 4 MB of what it was before, where the call (2M points, about 36
 * bytes of workspace each) took more than 32 MB. */
static void test_default_ctx_released_at_thread_exit(void **state) {
  (void)state;
  const int64_t n = 2000000;
  const rcv_grid g = {{0.5f, 0.5f, 0.5f}, k_range};
  rct_tensor *pts = rcv_random_points(70, n, 4);
  rct_tensor *out = rcv_dense_out(pts, NULL, g, ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32);
  robocache_tensor *dpts = dcopy(pts), *dout = dcopy(out);
  /* the same call through a context of its own first: kernels loaded */
  robocache_ctx *ctx = ctx_with_checks(1);
  robocache_voxel_stats st;
  assert_int_equal(
      robocache_voxelize(ctx, dpts, NULL, g.voxel_size, g.range, ROBOCACHE_VOXEL_SUM, dout, &st),
      ROBOCACHE_OK);
  robocache_ctx_free(ctx);
  size_t free0 = 0, free1 = 0, total = 0;
  CU(cudaDeviceSynchronize());
  CU(cudaMemGetInfo(&free0, &total));
  thread_job job = {&g, dpts, dout, ROBOCACHE_CUDA_ERROR, SIZE_MAX};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, sum_on_default_ctx, &job), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(job.status, ROBOCACHE_OK);
  CU(cudaMemGetInfo(&free1, &total));
  if (job.free_after_call > free0 - ((size_t)32 << 20))
    fail_msg("the call took less than 32 MB: %zu bytes free before, %zu after it", free0,
             job.free_after_call);
  if (free1 < free0 - ((size_t)4 << 20))
    fail_msg("workspace kept after the thread exited: %zu bytes free before, %zu after", free0,
             free1);
  rct_free(pts), rct_free(out), dfree(dpts), dfree(dout);
}

int main(void) {
  rct_require_cuda();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_length),
      cmocka_unit_test(test_extrap_error),
      cmocka_unit_test(test_hard_two_streams),
      cmocka_unit_test(test_bad_offsets),
      cmocka_unit_test(test_downsample_capacity),
      cmocka_unit_test(test_default_ctx_released_at_thread_exit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
