/* CUDA backend of resample / align / resample_backward against the
 * reference backend (src/ref) run on CPU copies of the same random inputs:
 * every method x extrapolate x values dtype x time dtype, ragged rows,
 * targets exactly on samples (bit-exact), max_gap, tolerance, time_offset,
 * strided inputs, align with K = 3, 4 and 20 streams in one call (mixed and
 * default options), data errors and EXTRAP_ERROR (same messages as the CPU
 * path), the row path, and the backward (CUDA-graph capture:
 * test_cuda_capture.c; the cases: cuda_case.c).
 *
 * Float bound (docs/cuda.md): with values in [-1, 1] and targets at most two
 * edge intervals outside a row (|w| <= 3),
 *   f32 arithmetic: |gpu - ref| <= 2e-6 + rtol(out) * |ref|, slerp 2e-5,
 *   f64 arithmetic: |gpu - ref| <= 1e-12 + rtol(out) * |ref|,
 * with rtol(out) = 2^-7 for bf16, 2^-10 for f16, 2^-23 for f32 out (one
 * rounding of the output may fall on the other side), 0 for f64 out.
 * valid and targets on samples: bit-exact. Exit 77 without a usable GPU. */
#include "cuda_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const robocache_dtype value_dtypes[] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F64,
                                               ROBOCACHE_DTYPE_F16, ROBOCACHE_DTYPE_BF16};
static const robocache_dtype time_dtypes[] = {ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64,
                                              ROBOCACHE_DTYPE_F32};

/* Every method x extrapolate (not error) x values dtype x time dtype, with
 * options and channel counts varied across the combinations. */
static void test_resample_parity(void **state) {
  (void)state;
  static const int64_t channels[] = {1, 7, 8, 16, 33, 64};
  int n = 0;
  for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_SLERP; m++)
    for (int e = ROBOCACHE_EXTRAP_CLAMP; e <= ROBOCACHE_EXTRAP_EXTRAPOLATE; e++)
      for (int v = 0; v < 4; v++)
        for (int t = 0; t < 3; t++, n++) {
          spec c = {.method = m, .extrapolate = e, .vdt = value_dtypes[v], .tdt = time_dtypes[t]};
          c.odt = n % 2 ? c.vdt : ROBOCACHE_DTYPE_F32;
          c.B = 5, c.S = 24, c.T = 40;
          c.D = m == ROBOCACHE_SLERP ? 4 * (1 + n % 3) : channels[n % 6];
          c.offset_ns = n % 3 == 1 ? 3000000 : n % 3 == 2 ? -2500000 : 0;
          c.max_gap_ns = n % 4 == 1 ? 12000000 : 0;
          c.tolerance_ns =
              (m == ROBOCACHE_NEAREST || m == ROBOCACHE_PREVIOUS || m == ROBOCACHE_NEXT) &&
                      n % 5 < 2
                  ? 4000000
                  : 0;
          check_case(&c, 1000 + (uint64_t)n);
        }
}

/* Long rows whose rate jumps (the uniform-rate guess misses), wide rows
 * (several channel slots per lane), and a row length that is not a multiple
 * of the vector width. */
static void test_resample_search_and_width(void **state) {
  (void)state;
  spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
  c.B = 4, c.S = 3000, c.T = 300, c.D = 260, c.steps = STEPS_BURSTY;
  for (int t = 0; t < 3; t++) {
    c.tdt = time_dtypes[t];
    c.vdt = c.odt = ROBOCACHE_DTYPE_F32;
    check_case(&c, 77 + (uint64_t)t);
    c.vdt = c.odt = ROBOCACHE_DTYPE_BF16;
    check_case(&c, 88 + (uint64_t)t);
  }
  c.steps = STEPS_RANDOM, c.D = 300, c.tdt = ROBOCACHE_DTYPE_I64, c.method = ROBOCACHE_NEAREST;
  c.vdt = ROBOCACHE_DTYPE_F16, c.odt = ROBOCACHE_DTYPE_F32;
  check_case(&c, 99);
  /* steady 100 Hz rows of 4,096 samples, random targets: the wide path (int64 ns,
   * bf16 D = 32) and the warp path (f64 and f32 seconds) */
  c.method = ROBOCACHE_LINEAR, c.steps = STEPS_STEADY, c.B = 16, c.S = 4096, c.T = 1024, c.D = 32;
  c.vdt = c.odt = ROBOCACHE_DTYPE_BF16;
  for (int t = 0; t < 3; t++) {
    c.tdt = time_dtypes[t];
    check_case(&c, 111 + (uint64_t)t);
  }
}

/* The wide path (one stream, linear + clamp, int64 ns, rows of >= 4
 * full-width slots): every values x out dtype, with 4, 5, 16 and 64 slots
 * (2, 1, 4, 4 slots per thread), a time offset on every second case. */
static void test_resample_wide_rows(void **state) {
  (void)state;
  static const int64_t slots[] = {4, 5, 16, 64};
  int n = 0;
  for (int v = 0; v < 4; v++)
    for (int o = 0; o < 4; o++, n++) {
      spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
      c.vdt = value_dtypes[v], c.odt = value_dtypes[o], c.tdt = ROBOCACHE_DTYPE_I64;
      size_t es = robocache_dtype_size(c.vdt) > robocache_dtype_size(c.odt)
                      ? robocache_dtype_size(c.vdt)
                      : robocache_dtype_size(c.odt);
      c.B = 5, c.S = 24, c.T = 40, c.D = (int64_t)(16 / es) * slots[n % 4];
      c.offset_ns = n % 2 ? 3000000 : 0;
      check_case(&c, 500 + (uint64_t)n);
    }
}

/* The wide path on long rows: 2, 4, 8, 16, 32 and 3 threads per target,
 * rows of 2,000 samples (ragged: also rows of 1 and 2): steady steps and
 * sorted targets, bursty steps and random targets, random steps and sorted
 * targets. */
static void test_resample_wide_long_rows(void **state) {
  (void)state;
  static const struct {
    robocache_dtype dt;
    int64_t D; /* 2, 4, 8, 16, 32, 3 threads per target */
  } cases[] = {{ROBOCACHE_DTYPE_BF16, 32}, {ROBOCACHE_DTYPE_F32, 32},  {ROBOCACHE_DTYPE_F32, 128},
               {ROBOCACHE_DTYPE_F32, 256}, {ROBOCACHE_DTYPE_F32, 512}, {ROBOCACHE_DTYPE_F32, 24}};
  for (int n = 0; n < 18; n++) { /* each group: steady sorted, bursty random, random sorted */
    spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
    c.vdt = c.odt = cases[n % 6].dt, c.tdt = ROBOCACHE_DTYPE_I64;
    c.B = 8, c.S = 2000, c.T = 300, c.D = cases[n % 6].D;
    c.sorted = n / 6 != 1;
    c.steps = n / 6 == 0 ? STEPS_STEADY : n / 6 == 1 ? STEPS_BURSTY : STEPS_RANDOM;
    check_case(&c, 900 + (uint64_t)n);
  }
}

/* Case c (seed) with row 5 one sample longer than S: the call must fail
 * with INVALID_ARGUMENT naming the lengths (the data check). */
static void assert_bad_length_reported(const spec *c, uint64_t seed) {
  rct_rng rng = rct_rng_seed(seed);
  gpu_case g = case_new(c, &rng);
  rct_set_i64(g.a.lengths, 5, c->S + 1);
  case_upload(&g);
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(gpu_resample(ctx, &g.d, &g.a.opt), ROBOCACHE_INVALID_ARGUMENT);
  assert_non_null(strstr(robocache_ctx_error_message(ctx), "lengths"));
  robocache_ctx_free(ctx);
  case_free(&g);
}

/* Launches of more than 65,536 targets, linear + clamp, int64 ns: the warp
 * path (f32 D = 8: two full-width slots; f64 D = 3) and the split path (bf16
 * D = 12 in half-width slots, f16 -> f32 D = 64, scalar f32 -> bf16 D = 7,
 * bf16 D = 256 in full-width slots), with random targets on short rows, then
 * sorted targets (a time grid) on rows of 2,000-40,000 samples, also rows
 * whose rate jumps (the uniform-rate guess misses) and steady 100 Hz rows (it
 * misses by a few samples); then a bad length, which the data check must
 * report. */
static void test_resample_many_targets(void **state) {
  (void)state;
  static const struct {
    robocache_dtype vdt, odt;
    int64_t D;
  } cases[] = {{ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F32, 8},
               {ROBOCACHE_DTYPE_BF16, ROBOCACHE_DTYPE_BF16, 12},
               {ROBOCACHE_DTYPE_F16, ROBOCACHE_DTYPE_F32, 64},
               {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_BF16, 7},
               {ROBOCACHE_DTYPE_BF16, ROBOCACHE_DTYPE_BF16, 256}};
  for (int n = 0; n < 18; n++) {
    spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
    c.vdt = cases[n % 5].vdt, c.odt = cases[n % 5].odt, c.tdt = ROBOCACHE_DTYPE_I64;
    c.B = 70, c.S = n < 5 ? 50 : n == 8 ? 40000 : 2000 + 4000 * (n % 2), c.T = 1000;
    c.D = cases[n % 5].D;
    c.offset_ns = n % 2 ? -2500000 : 0;
    c.sorted = n >= 5;
    c.steps = n >= 15 ? STEPS_STEADY : n >= 10 ? STEPS_BURSTY : STEPS_RANDOM;
    check_case(&c, 700 + (uint64_t)n);
  }
  spec f = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
  f.vdt = f.odt = ROBOCACHE_DTYPE_F64, f.tdt = ROBOCACHE_DTYPE_I64;
  f.B = 70, f.S = 2000, f.T = 1000, f.D = 3, f.steps = STEPS_STEADY, f.offset_ns = 2500000;
  check_case(&f, 720);
  spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
  c.vdt = c.odt = ROBOCACHE_DTYPE_F32, c.tdt = ROBOCACHE_DTYPE_I64;
  c.B = 70, c.S = 50, c.T = 1000, c.D = 8;
  assert_bad_length_reported(&c, 9);
}

/* Case c with values and out at every second element of a buffer twice as
 * large (strides 2, 2D, 2SD): scalar channel slots with strides. */
static void check_strided(const spec *c, uint64_t seed) {
  const int64_t B = c->B, S = c->S, T = c->T, D = c->D;
  rct_rng rng = rct_rng_seed(seed);
  gpu_case g = case_new(c, &rng);
  int64_t vshape[3] = {B, S, D}, vstr[3] = {S * D * 2, D * 2, 2};
  int64_t oshape[3] = {B, T, D}, ostr[3] = {T * D * 2, D * 2, 2};
  rct_tensor *sv = rct_make_strided(c->vdt, 3, vshape, vstr);
  rct_tensor *so = rct_make_strided(c->odt, 3, oshape, ostr);
  rct_copy(sv, g.a.values);
  rct_tensor *cv = g.a.values, *co = g.a.out;
  g.a.values = sv, g.a.out = so;
  case_upload(&g);
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(gpu_resample(ctx, &g.d, &g.a.opt), ROBOCACHE_OK);
  from_dev(so, g.d.out);
  rct_tensor *gvalid = rct_make2(ROBOCACHE_DTYPE_U8, B, T);
  from_dev(gvalid, g.d.valid);
  g.a.values = cv, g.a.out = co;
  assert_int_equal(rct_resample(&g.a, 1, NULL, 0), ROBOCACHE_OK);
  rct_assert_close(so, g.a.out, atol_of(c), rtol_of(c->odt), "strided out");
  rct_assert_bits_equal(gvalid, g.a.valid, "strided valid");
  robocache_ctx_free(ctx);
  rct_free(sv), rct_free(so), rct_free(gvalid);
  case_free(&g);
}

/* Strided values and out: the warp path (extrapolate), and the split path
 * (linear + clamp, more than 65,536 targets, rows of 3 scalar slots). */
static void test_resample_strided(void **state) {
  (void)state;
  spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_EXTRAPOLATE};
  c.vdt = c.odt = ROBOCACHE_DTYPE_F32, c.tdt = ROBOCACHE_DTYPE_I64;
  c.B = 3, c.S = 50, c.T = 70, c.D = 8;
  check_strided(&c, 5);
  c.extrapolate = ROBOCACHE_EXTRAP_CLAMP, c.steps = STEPS_STEADY, c.sorted = 1;
  c.B = 70, c.S = 2000, c.T = 1000, c.D = 3;
  check_strided(&c, 6);
}

/* The split path's items live in the context's workspace scratch, which the
 * next call reuses: three unchecked calls on one context with no
 * synchronisation in between (cases 1, 2, then 1 again, different data of
 * the same shapes), each output against the reference; then a checked call
 * whose data check fails (a bad length, the CPU path's message) and a good
 * call after it. */
static void test_split_back_to_back(void **state) {
  (void)state;
  spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
  c.vdt = c.odt = ROBOCACHE_DTYPE_BF16, c.tdt = ROBOCACHE_DTYPE_I64;
  c.B = 70, c.S = 2000, c.T = 1000, c.D = 12, c.sorted = 1, c.steps = STEPS_STEADY;
  rct_rng rng = rct_rng_seed(11);
  gpu_case g[2] = {case_new(&c, &rng), case_new(&c, &rng)};
  for (int i = 0; i < 2; i++) {
    assert_int_equal(rct_resample(&g[i].a, 1, NULL, 0), ROBOCACHE_OK);
    case_upload(&g[i]);
  }
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_sync_checks(ctx, 0), ROBOCACHE_OK);
  for (int k = 0; k < 3; k++)
    assert_int_equal(gpu_resample(ctx, &g[k % 2].d, &g[k % 2].a.opt), ROBOCACHE_OK);
  CU(cudaDeviceSynchronize());
  assert_gpu_matches(&g[0], &c, "back to back, case 1");
  assert_gpu_matches(&g[1], &c, "back to back, case 2");
  assert_int_equal(robocache_ctx_set_sync_checks(ctx, 1), ROBOCACHE_OK);
  int64_t *lengths = (int64_t *)g[0].d.lengths->t.data, bad = c.S + 1, good = 0;
  CU(cudaMemcpy(&good, lengths + 5, sizeof good, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(lengths + 5, &bad, sizeof bad, cudaMemcpyHostToDevice));
  assert_int_equal(gpu_resample(ctx, &g[0].d, &g[0].a.opt), ROBOCACHE_INVALID_ARGUMENT);
  assert_non_null(strstr(robocache_ctx_error_message(ctx), "lengths"));
  CU(cudaMemcpy(lengths + 5, &good, sizeof good, cudaMemcpyHostToDevice));
  poison(g[0].d.out), poison(g[0].d.valid);
  assert_int_equal(gpu_resample(ctx, &g[0].d, &g[0].a.opt), ROBOCACHE_OK);
  assert_gpu_matches(&g[0], &c, "after a failed check");
  robocache_ctx_free(ctx);
  case_free(&g[0]), case_free(&g[1]);
}

/* ---- errors ---------------------------------------------------------------------- */

typedef void (*corrupt_fn)(rct_resample_args *a);

static void non_increasing(rct_resample_args *a) {
  int64_t S = a->times->shape[1];
  rct_set_i64(a->lengths, 3, S);
  rct_set_i64(a->times, 3 * S + 5, rct_get_i64(a->times, 3 * S + 4));
}
static void length_zero(rct_resample_args *a) { rct_set_i64(a->lengths, 2, 0); }
static void length_too_long(rct_resample_args *a) {
  rct_set_i64(a->lengths, 4, a->times->shape[1] + 1);
}
static void target_length_too_long(rct_resample_args *a) {
  rct_set_i64(a->target_lengths, 1, a->target_times->shape[1] + 1);
}
static void nan_time(rct_resample_args *a) {
  int64_t S = a->times->shape[1];
  rct_set_i64(a->lengths, 2, S);
  rct_set(a->times, 2 * S + 3, NAN);
}
static void time_out_of_range(rct_resample_args *a) {
  int64_t S = a->times->shape[1];
  rct_set_i64(a->lengths, 2, S);
  rct_set_i64(a->times, 2 * S + 5, INT64_MAX);
}
static void target_out_of_range(rct_resample_args *a) {
  rct_set_i64(a->target_lengths, 3, a->target_times->shape[1]);
  rct_set_i64(a->target_times, 3 * a->target_times->shape[1] + 6, INT64_MIN);
}
static void nan_target(rct_resample_args *a) {
  rct_set_i64(a->target_lengths, 3, a->target_times->shape[1]);
  rct_set(a->target_times, 3 * a->target_times->shape[1] + 6, NAN);
}

/* The GPU returns the CPU path's status and message for bad data, then
 * works again on good data (the check record was reset). */
static void check_error_case(robocache_dtype tdt, int extrapolate, corrupt_fn corrupt,
                             uint64_t seed) {
  spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = extrapolate};
  c.vdt = c.odt = ROBOCACHE_DTYPE_F32, c.tdt = tdt;
  c.B = 6, c.S = 30, c.T = 20, c.D = 4;
  rct_rng rng = rct_rng_seed(seed);
  gpu_case g = case_new(&c, &rng);
  if (corrupt) corrupt(&g.a);
  char cpu_msg[512];
  robocache_status cpu = rct_resample(&g.a, 0, cpu_msg, sizeof cpu_msg);
  assert_int_equal(cpu, ROBOCACHE_INVALID_ARGUMENT);
  case_upload(&g);
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(gpu_resample(ctx, &g.d, &g.a.opt), ROBOCACHE_INVALID_ARGUMENT);
  assert_string_equal(robocache_ctx_error_message(ctx), cpu_msg);
  /* the same context on good data afterwards */
  robocache_interp_options ok = g.a.opt;
  ok.extrapolate = ROBOCACHE_EXTRAP_CLAMP;
  case_free(&g);
  g = case_new(&c, &rng);
  case_upload(&g);
  g.a.opt = ok;
  assert_int_equal(gpu_resample(ctx, &g.d, &ok), ROBOCACHE_OK);
  robocache_ctx_free(ctx);
  case_free(&g);
}

static void test_errors(void **state) {
  (void)state;
  for (int t = 0; t < 3; t++) {
    check_error_case(time_dtypes[t], ROBOCACHE_EXTRAP_ERROR, NULL, 300 + (uint64_t)t);
    check_error_case(time_dtypes[t], ROBOCACHE_EXTRAP_CLAMP, length_zero, 310 + (uint64_t)t);
    check_error_case(time_dtypes[t], ROBOCACHE_EXTRAP_CLAMP, length_too_long, 320 + (uint64_t)t);
    check_error_case(time_dtypes[t], ROBOCACHE_EXTRAP_CLAMP, target_length_too_long,
                     330 + (uint64_t)t);
  }
  check_error_case(ROBOCACHE_DTYPE_I64, ROBOCACHE_EXTRAP_CLAMP, non_increasing, 340);
  check_error_case(ROBOCACHE_DTYPE_F64, ROBOCACHE_EXTRAP_CLAMP, nan_time, 341);
  check_error_case(ROBOCACHE_DTYPE_F32, ROBOCACHE_EXTRAP_CLAMP, nan_time, 342);
  check_error_case(ROBOCACHE_DTYPE_F64, ROBOCACHE_EXTRAP_CLAMP, nan_target, 343);
  check_error_case(ROBOCACHE_DTYPE_I64, ROBOCACHE_EXTRAP_CLAMP, time_out_of_range, 344);
  check_error_case(ROBOCACHE_DTYPE_I64, ROBOCACHE_EXTRAP_CLAMP, target_out_of_range, 345);
}

/* ---- align ------------------------------------------------------------------------- */

/* K streams of different rates, dtypes, methods and widths onto one grid, in
 * one call, out of dtype odt; compared with the reference align. With
 * `simple_vdt` (not 0) every stream has the default options (linear, clamp;
 * time offsets kept), values of that dtype and widths 64, 16, 24, then D0,
 * and enough targets for the split path (taken when every stream has the
 * same channels per access, else the warp path). */
static void check_align(int K, robocache_dtype odt, uint64_t seed, robocache_dtype simple_vdt,
                        int64_t D0) {
  const int64_t B = simple_vdt ? 100 : 4, T = 50; /* default options: >= 4096 targets */
  rct_rng rng = rct_rng_seed(seed);
  robocache_stream *st = calloc((size_t)K, sizeof *st);
  rct_tensor **vals = calloc((size_t)K, sizeof *vals), **tims = calloc((size_t)K, sizeof *tims);
  dev_tensor **dvals = calloc((size_t)K, sizeof *dvals), **dtims = calloc((size_t)K, sizeof *dtims);
  robocache_stream *dst = calloc((size_t)K, sizeof *dst);
  int64_t Dout = 0;
  for (int k = 0; k < K; k++) {
    static const int methods[] = {ROBOCACHE_LINEAR, ROBOCACHE_NEAREST, ROBOCACHE_SLERP,
                                  ROBOCACHE_PREVIOUS, ROBOCACHE_NEXT};
    static const int64_t simple_D[] = {64, 16, 24};
    int m = simple_vdt ? ROBOCACHE_LINEAR : methods[k % 5];
    int64_t D = simple_vdt             ? (k % 4 == 3 ? D0 : simple_D[k % 4])
                : m == ROBOCACHE_SLERP ? 4
                : k % 3 == 0           ? 16
                                       : 7;
    int64_t S = 30 + 40 * (k % 3);
    vals[k] = rct_make3(simple_vdt ? simple_vdt : value_dtypes[k % 4], B, S, D);
    tims[k] = rct_make2(ROBOCACHE_DTYPE_I64, B, S);
    rct_fill_times(tims[k], &rng, 1000000000ll + k * 7000000ll, 33000000 / (k % 3 + 1),
                   34000000 / (k % 3 + 1));
    rct_fill_uniform(vals[k], &rng, -1, 1);
    if (m == ROBOCACHE_SLERP)
      for (int64_t q = 0; q < B * S; q++) {
        double n2 = 0;
        for (int e = 0; e < 4; e++) n2 += pow(rct_get(vals[k], q * 4 + e), 2);
        for (int e = 0; e < 4; e++)
          rct_set(vals[k], q * 4 + e, rct_get(vals[k], q * 4 + e) / sqrt(n2));
      }
    robocache_interp_options_init(&st[k].options);
    st[k].options.method = m;
    st[k].options.extrapolate = simple_vdt ? ROBOCACHE_EXTRAP_CLAMP
                                : k % 2    ? ROBOCACHE_EXTRAP_FILL
                                           : ROBOCACHE_EXTRAP_EXTRAPOLATE;
    st[k].options.time_offset_ns = k % 4 == 1 ? 1500000 : 0;
    st[k].name = "stream";
    st[k].values = &vals[k]->t;
    st[k].times = &tims[k]->t;
    dvals[k] = to_dev(vals[k]);
    dtims[k] = to_dev(tims[k]);
    dst[k] = st[k];
    dst[k].values = dv(dvals[k]);
    dst[k].times = dv(dtims[k]);
    Dout += D;
  }
  rct_tensor *tt = rct_make2(ROBOCACHE_DTYPE_I64, B, T);
  for (int64_t i = 0; i < B * T; i++)
    rct_set_i64(tt, i, 1000000000ll + (i % T) * 20000000ll + (i / T) * 1000);
  rct_tensor *out = rct_make3(odt, B, T, Dout), *valid = rct_make3(ROBOCACHE_DTYPE_U8, B, T, K);
  rct_tensor *gout = rct_make3(odt, B, T, Dout), *gvalid = rct_make3(ROBOCACHE_DTYPE_U8, B, T, K);
  dev_tensor *dtt = to_dev(tt), *dout = to_dev(out), *dvalid = to_dev(valid);
  poison(dout), poison(dvalid);
  robocache_ctx *ctx = NULL, *ref = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_create(&ref), ROBOCACHE_OK);
  robocache_ctx_set_force_reference(ref, 1);
  robocache_status s = robocache_align(ctx, dst, K, dv(dtt), NULL, (robocache_tensor *)dv(dout),
                                       (robocache_tensor *)dv(dvalid));
  if (s != ROBOCACHE_OK) fail_msg("GPU align: %s", robocache_ctx_error_message(ctx));
  assert_int_equal(robocache_align(ref, st, K, &tt->t, NULL, &out->t, &valid->t), ROBOCACHE_OK);
  from_dev(gout, dout), from_dev(gvalid, dvalid);
  rct_assert_bits_equal(gvalid, valid, "align valid");
  rct_assert_close(gout, out, 2e-5, rtol_of(odt), "align out");
  robocache_ctx_free(ctx), robocache_ctx_free(ref);
  for (int k = 0; k < K; k++)
    rct_free(vals[k]), rct_free(tims[k]), dev_free(dvals[k]), dev_free(dtims[k]);
  rct_free(tt), rct_free(out), rct_free(valid), rct_free(gout), rct_free(gvalid);
  dev_free(dtt), dev_free(dout), dev_free(dvalid);
  free(st), free(dst), free(vals), free(tims), free(dvals), free(dtims);
}

static void test_align_three_streams(void **state) {
  (void)state;
  check_align(3, ROBOCACHE_DTYPE_F32, 21, 0, 0);
  check_align(3, ROBOCACHE_DTYPE_BF16, 22, 0, 0);
}

/* Default options: the split path for several streams (f32 and bf16 values,
 * f32 and bf16 out, rows of 1-16 slots), and the warp path when one stream's
 * width (7) needs scalar accesses. */
static void test_align_default_options(void **state) {
  (void)state;
  check_align(3, ROBOCACHE_DTYPE_F32, 24, ROBOCACHE_DTYPE_F32, 0);
  check_align(3, ROBOCACHE_DTYPE_BF16, 25, ROBOCACHE_DTYPE_F32, 0);
  check_align(4, ROBOCACHE_DTYPE_BF16, 26, ROBOCACHE_DTYPE_BF16, 8);
  check_align(4, ROBOCACHE_DTYPE_F32, 27, ROBOCACHE_DTYPE_F32, 7);
}

static void test_align_many_streams(void **state) {
  (void)state;
  check_align(20, ROBOCACHE_DTYPE_F32, 23, 0, 0); /* two launches of <= 16 streams */
  check_align(20, ROBOCACHE_DTYPE_F32, 28, ROBOCACHE_DTYPE_F32, 4); /* both split */
}

/* The row path (sm_90 and later; the split path before): one stream,
 * linear + clamp, int64 ns, more than 65,536 targets, rows of at most 2 T
 * samples whose times, target times and values fit 75 KB of shared memory.
 * Every values x out dtype but f64, with full-, half- and quarter-width
 * slots and scalar channels (D = 16, 12, 6, 7), odd S and T (rows start at
 * every 8- or 2-byte offset within 16 bytes: the staging's elements before
 * and after its bulk copy), ragged rows and targets, random and sorted
 * targets, steady, bursty and random steps, a time offset on every second
 * case; then a bad length, which the data check must report. */
static void test_resample_row_path(void **state) {
  (void)state;
  static const robocache_dtype dtypes[] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F16,
                                           ROBOCACHE_DTYPE_BF16};
  static const int64_t channels[] = {16, 12, 6, 7};
  spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
  c.tdt = ROBOCACHE_DTYPE_I64, c.B = 140, c.S = 701, c.T = 501;
  for (int n = 0; n < 9; n++) {
    c.vdt = dtypes[n / 3], c.odt = dtypes[n % 3], c.D = channels[n % 4];
    c.offset_ns = n % 2 ? -2500000 : 0;
    c.sorted = n % 2;
    c.steps = n % 3 == 0 ? STEPS_STEADY : n % 3 == 1 ? STEPS_BURSTY : STEPS_RANDOM;
    check_case(&c, 1300 + (uint64_t)n);
  }
  c.vdt = c.odt = ROBOCACHE_DTYPE_BF16, c.D = 12, c.offset_ns = 0;
  assert_bad_length_reported(&c, 1310);
}

/* ---- backward ---------------------------------------------------------------------- */

static void check_backward(const spec *c, uint64_t seed) {
  rct_rng rng = rct_rng_seed(seed);
  gpu_case g = case_new(c, &rng);
  /* backward: out is grad_out [B,T,D], values is grad_values [B,S,D] */
  rct_fill_uniform(g.a.out, &rng, -1, 1);
  case_upload(&g);
  CU(cudaMemcpy(g.d.out->t.data, g.a.out->t.data, g.d.out->nbytes, cudaMemcpyHostToDevice));
  poison(g.d.values);
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  robocache_status s = robocache_resample_backward(ctx, dv(g.d.out), dv(g.d.times), dv(g.d.lengths),
                                                   dv(g.d.target_times), dv(g.d.target_lengths),
                                                   &g.a.opt, (robocache_tensor *)dv(g.d.values));
  if (s != ROBOCACHE_OK) fail_msg("GPU backward: %s", robocache_ctx_error_message(ctx));
  rct_tensor *grad = rct_make3(c->vdt, c->B, c->S, c->D);
  from_dev(grad, g.d.values);
  assert_int_equal(rct_resample_backward(&g.a, 1, NULL, 0), ROBOCACHE_OK);
  rct_assert_close(grad, g.a.values, c->vdt == ROBOCACHE_DTYPE_F64 ? 1e-12 : 2e-6, rtol_of(c->vdt),
                   "grad_values");
  robocache_ctx_free(ctx);
  rct_free(grad);
  case_free(&g);
}

static void test_backward(void **state) {
  (void)state;
  int n = 0;
  for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_NEXT; m++)
    for (int e = ROBOCACHE_EXTRAP_CLAMP; e <= ROBOCACHE_EXTRAP_EXTRAPOLATE; e++)
      for (int t = 0; t < 3; t++, n++) {
        spec c = {.method = m, .extrapolate = e, .tdt = time_dtypes[t]};
        c.vdt = c.odt = n % 2 ? ROBOCACHE_DTYPE_F64 : ROBOCACHE_DTYPE_F32;
        c.B = 4, c.S = 40, c.T = n % 3 == 0 ? 300 : 60, c.D = n % 4 == 0 ? 150 : 5;
        c.max_gap_ns = n % 4 == 1 ? 12000000 : 0;
        check_backward(&c, 500 + (uint64_t)n);
      }
}

int main(void) {
  rct_require_cuda();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resample_parity),
      cmocka_unit_test(test_resample_search_and_width),
      cmocka_unit_test(test_resample_wide_rows),
      cmocka_unit_test(test_resample_wide_long_rows),
      cmocka_unit_test(test_resample_many_targets),
      cmocka_unit_test(test_resample_strided),
      cmocka_unit_test(test_split_back_to_back),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_align_three_streams),
      cmocka_unit_test(test_align_default_options),
      cmocka_unit_test(test_align_many_streams),
      cmocka_unit_test(test_resample_row_path),
      cmocka_unit_test(test_backward),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
