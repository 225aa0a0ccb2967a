/* Reference backend vs optimised backend on many random problems: random
 * monotone times (int64 ns, float64 s, float32 s), random lengths and
 * target_lengths, random methods, policies, max_gap, tolerance, time_offset,
 * and every combination of values / out dtypes. Integers (status, valid) and
 * error messages must match exactly; values within
 *   |cpu - ref| <= 4 u_out |ref| + 128 u_c scale (+ 1024 u_c for slerp)
 * where u_out is the unit roundoff of out, u_c that of the arithmetic
 * (float32, float64 when values or out are float64) and scale = max |values|
 * (targets stay within two edge intervals of the samples, so |w| <= 3). */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const robocache_dtype time_dtypes[3] = {ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64,
                                               ROBOCACHE_DTYPE_F32};
static const robocache_dtype float_dtypes[4] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F64,
                                                ROBOCACHE_DTYPE_F16, ROBOCACHE_DTYPE_BF16};

static double unit_roundoff(int32_t dt) {
  switch (dt) {
  case ROBOCACHE_DTYPE_F64: return 0x1p-53;
  case ROBOCACHE_DTYPE_F16: return 0x1p-11;
  case ROBOCACHE_DTYPE_BF16: return 0x1p-8;
  default: return 0x1p-24;
  }
}

/* Time of element i of a times tensor in ns (float seconds scaled). */
static double ns_at(const rct_tensor *t, int64_t i) {
  return t->t.dtype == ROBOCACHE_DTYPE_I64 ? (double)rct_get_i64(t, i) : rct_get(t, i) * 1e9;
}

static void set_ns(rct_tensor *t, int64_t i, double ns) {
  if (t->t.dtype == ROBOCACHE_DTYPE_I64)
    rct_set_i64(t, i, (int64_t)llround(ns));
  else
    rct_set(t, i, ns * 1e-9);
}

static rct_resample_args random_problem(rct_rng *r, robocache_dtype td, robocache_dtype vdt,
                                        robocache_dtype odt) {
  rct_resample_args a = {0};
  robocache_interp_options *o = &a.opt;
  robocache_interp_options_init(o);
  o->method = (int32_t)rct_rng_int(r, ROBOCACHE_LINEAR, ROBOCACHE_SLERP);
  o->extrapolate =
      (int32_t)rct_rng_int(r, 0, 9) == 0
          ? ROBOCACHE_EXTRAP_ERROR
          : (int32_t)rct_rng_int(r, ROBOCACHE_EXTRAP_CLAMP, ROBOCACHE_EXTRAP_EXTRAPOLATE);
  if (rct_rng_int(r, 0, 1)) o->fill_value = rct_rng_uniform(r, -3, 3);
  const int ns = td == ROBOCACHE_DTYPE_I64;
  const int64_t step_lo = ns ? 1 : 100000, step_hi = ns ? 1000 : 50000000; /* ns */
  if (rct_rng_int(r, 0, 2) == 0) o->max_gap_ns = rct_rng_int(r, step_lo, step_hi);
  if (o->method != ROBOCACHE_LINEAR && o->method != ROBOCACHE_SLERP && rct_rng_int(r, 0, 2) == 0)
    o->tolerance_ns = rct_rng_int(r, step_lo / 2 + 1, step_hi);
  if (rct_rng_int(r, 0, 2) == 0) o->time_offset_ns = rct_rng_int(r, -step_hi, step_hi);
  o->quat_order = (int32_t)rct_rng_int(r, 0, 1);
  const int64_t B = rct_rng_int(r, 1, 4), S = rct_rng_int(r, 1, 30), T = rct_rng_int(r, 0, 40);
  const int64_t D = o->method == ROBOCACHE_SLERP ? 4 * rct_rng_int(r, 1, 2) : rct_rng_int(r, 1, 9);
  a.times = rct_make2(td, B, S);
  a.values = rct_make3(vdt, B, S, D);
  a.target_times = rct_make2(td, B, T);
  a.out = rct_make3(odt, B, T, D);
  if (rct_rng_int(r, 0, 3)) a.valid = rct_make2(ROBOCACHE_DTYPE_U8, B, T);
  int64_t start = ns && rct_rng_int(r, 0, 1) ? 1600000000000000000ll : rct_rng_int(r, 0, 1000000);
  rct_fill_times(a.times, r, start, step_lo, step_hi);
  rct_fill_uniform(a.values, r, -10, 10);
  rct_random_lengths(&a, r);
  const double off = (double)o->time_offset_ns;
  for (int64_t b = 0; b < B; b++) {
    int64_t n = a.lengths ? rct_get_i64(a.lengths, b) : S;
    double t0 = ns_at(a.times, b * S), tl = ns_at(a.times, b * S + n - 1);
    double e0 = n > 1 ? ns_at(a.times, b * S + 1) - t0 : 100;
    double el = n > 1 ? tl - ns_at(a.times, b * S + n - 2) : 100;
    for (int64_t t = 0; t < T; t++) {
      if (rct_rng_int(r, 0, 2) == 0) /* on a sample */
        set_ns(a.target_times, b * T + t, ns_at(a.times, b * S + rct_rng_int(r, 0, n - 1)) + off);
      else
        set_ns(a.target_times, b * T + t, rct_rng_uniform(r, t0 - 2 * e0, tl + 2 * el) + off);
    }
  }
  return a;
}

static void compare_backends(rct_resample_args *a, const char *what) {
  rct_tensor *out_ref = rct_make(a->out->t.dtype, 3, a->out->shape);
  rct_tensor *valid_ref = a->valid ? rct_make(ROBOCACHE_DTYPE_U8, 2, a->valid->shape) : NULL;
  rct_resample_args b = *a;
  b.out = out_ref;
  b.valid = valid_ref;
  char msg_cpu[512], msg_ref[512];
  robocache_status s_cpu = rct_resample(a, 0, msg_cpu, sizeof msg_cpu);
  robocache_status s_ref = rct_resample(&b, 1, msg_ref, sizeof msg_ref);
  if (s_cpu != s_ref || strcmp(msg_cpu, msg_ref) != 0)
    fail_msg("%s: status/message differ: cpu %s \"%s\", ref %s \"%s\"", what,
             robocache_status_name(s_cpu), msg_cpu, robocache_status_name(s_ref), msg_ref);
  if (s_cpu == ROBOCACHE_OK) {
    int wide = a->values->t.dtype == ROBOCACHE_DTYPE_F64 || a->out->t.dtype == ROBOCACHE_DTYPE_F64;
    double uc = wide ? 0x1p-53 : 0x1p-24, scale = 0;
    for (int64_t i = 0; i < rct_numel(a->values); i++)
      if (!isnan(rct_get(a->values, i))) scale = fmax(scale, fabs(rct_get(a->values, i)));
    if (a->opt.extrapolate == ROBOCACHE_EXTRAP_FILL && isfinite(a->opt.fill_value))
      scale = fmax(scale, fabs(a->opt.fill_value));
    double atol = 128 * uc * scale + (a->opt.method == ROBOCACHE_SLERP ? 1024 * uc : 0) + 0x1p-24;
    rct_assert_close(a->out, out_ref, atol, 4 * unit_roundoff(a->out->t.dtype), what);
    if (a->valid) rct_assert_bits_equal(a->valid, valid_ref, what);
  }
  rct_free(out_ref);
  rct_free(valid_ref);
}

/* Every (times, values, out) dtype combination, several problems each. */
static void test_every_dtype_combination(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(2024);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 4; k++)
        for (int rep = 0; rep < 6; rep++) {
          rct_resample_args a =
              random_problem(&r, time_dtypes[i], float_dtypes[j], float_dtypes[k]);
          char what[128];
          snprintf(what, sizeof what, "times %s values %s out %s rep %d",
                   robocache_dtype_name(time_dtypes[i]), robocache_dtype_name(float_dtypes[j]),
                   robocache_dtype_name(float_dtypes[k]), rep);
          compare_backends(&a, what);
          rct_resample_args_free(&a);
        }
}

/* Fully random problems (dtypes too). */
static void test_random_problems(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(7);
  for (int rep = 0; rep < 400; rep++) {
    rct_resample_args a =
        random_problem(&r, time_dtypes[rct_rng_int(&r, 0, 2)], float_dtypes[rct_rng_int(&r, 0, 3)],
                       float_dtypes[rct_rng_int(&r, 0, 3)]);
    char what[64];
    snprintf(what, sizeof what, "random problem %d", rep);
    compare_backends(&a, what);
    rct_resample_args_free(&a);
  }
}

/* A problem large enough for the parallel path (many chunks of targets):
 * the optimised backend gives the same bits with 1, 2, 3 and the default
 * number of threads, matches the reference, and with EXTRAP_ERROR reports
 * the first offending target whichever thread meets it first. */
static void test_parallel_path(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(99);
  const int64_t B = 6, S = 300, T = 700, D = 24;
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F32, B, S, T, D, 1);
  rct_fill_times(a.times, &r, 0, 1, 1000);
  rct_fill_uniform(a.values, &r, -1, 1);
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) /* sorted, a few past the end */
      rct_set_i64(a.target_times, b * T + t,
                  rct_get_i64(a.times, b * S + S - 1) * (t + 1) / (T - 10));
  rct_tensor *outs[4] = {a.out};
  for (int n = 0; n < 4; n++) {
    if (n > 0) outs[n] = rct_make3(ROBOCACHE_DTYPE_F32, B, T, D);
    robocache_ctx *ctx = NULL;
    assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
    assert_int_equal(robocache_ctx_set_num_threads(ctx, n), ROBOCACHE_OK);
    assert_int_equal(robocache_resample(ctx, &a.values->t, &a.times->t, NULL, &a.target_times->t,
                                        NULL, &a.opt, &outs[n]->t, &a.valid->t),
                     ROBOCACHE_OK);
    robocache_ctx_free(ctx);
    if (n > 0) rct_assert_bits_equal(outs[n], outs[0], "threads vs default");
  }
  compare_backends(&a, "parallel path");
  a.opt.extrapolate = ROBOCACHE_EXTRAP_ERROR;
  char msg[512];
  assert_int_equal(rct_resample(&a, 0, msg, sizeof msg), ROBOCACHE_INVALID_ARGUMENT);
  assert_non_null(strstr(msg, "target out of range: row 0, index 690"));
  compare_backends(&a, "parallel path, error");
  for (int n = 1; n < 4; n++) rct_free(outs[n]);
  rct_resample_args_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_dtype_combination),
      cmocka_unit_test(test_random_problems),
      cmocka_unit_test(test_parallel_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
