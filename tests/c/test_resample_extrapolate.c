/* Out-of-range targets under every extrapolate policy (clamp, fill,
 * extrapolate, error), for every method, on both backends; valid is 0 there
 * whatever the value. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { B = 2, S = 10, D = 2, T = 7 };

/* values = icpt[d] + slope[d] * (t - t[0]) in seconds, times int64 ns with
 * random steps; targets: 3000 ns and 1 ns before the first sample, on it, in
 * the middle, on the last, 1 ns and 5000 ns after it. */
static const double icpt[D] = {0.5, -2.0}, slope[D] = {3.0, -1.25};

static rct_resample_args linear_problem(void) {
  rct_rng rng = rct_rng_seed(21);
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64, B, S, T, D, 1);
  rct_fill_times(a.times, &rng, 2000000000, 1000, 90000);
  for (int b = 0; b < B; b++) {
    int64_t t0 = rct_get_i64(a.times, b * S), tl = rct_get_i64(a.times, b * S + S - 1);
    for (int s = 0; s < S; s++)
      for (int d = 0; d < D; d++)
        rct_set(a.values, (b * S + s) * D + d,
                icpt[d] + slope[d] * (double)(rct_get_i64(a.times, b * S + s) - t0) * 1e-9);
    const int64_t x[T] = {t0 - 3000, t0 - 1, t0, (t0 + tl) / 2, tl, tl + 1, tl + 5000};
    for (int t = 0; t < T; t++) rct_set_i64(a.target_times, b * T + t, x[t]);
  }
  return a;
}

static void check_policy(int ref, int method, int policy, double fill) {
  rct_resample_args a = linear_problem();
  a.opt.method = method;
  a.opt.extrapolate = policy;
  a.opt.fill_value = fill;
  assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
  for (int b = 0; b < B; b++) {
    int64_t t0 = rct_get_i64(a.times, b * S);
    for (int t = 0; t < T; t++) {
      int inside = t >= 2 && t <= 4, below = t < 2;
      assert_int_equal(rct_get(a.valid, b * T + t), inside);
      for (int d = 0; d < D; d++) {
        double got = rct_get(a.out, (b * T + t) * D + d);
        double line =
            icpt[d] + slope[d] * (double)(rct_get_i64(a.target_times, b * T + t) - t0) * 1e-9;
        double edge = rct_get(a.values, (b * S + (below ? 0 : S - 1)) * D + d);
        if (inside) {
          if (method == ROBOCACHE_LINEAR) assert_float_equal(got, line, 1e-12);
          continue;
        }
        if (policy == ROBOCACHE_EXTRAP_FILL) {
          if (isnan(fill))
            assert_true(isnan(got));
          else
            assert_float_equal(got, fill, 0);
        } else if (policy == ROBOCACHE_EXTRAP_EXTRAPOLATE && method == ROBOCACHE_LINEAR) {
          assert_float_equal(got, line, 1e-12);
        } else { /* clamp, or extrapolate of nearest/previous/next: the edge sample */
          assert_memory_equal(&got, &edge, sizeof got);
        }
      }
    }
  }
  rct_resample_args_free(&a);
}

static void test_policies_for_every_method(void **state) {
  (void)state;
  for (int ref = 0; ref < 2; ref++)
    for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_NEXT; m++) {
      check_policy(ref, m, ROBOCACHE_EXTRAP_CLAMP, 0);
      check_policy(ref, m, ROBOCACHE_EXTRAP_FILL, -7.25);
      check_policy(ref, m, ROBOCACHE_EXTRAP_FILL, NAN);
      check_policy(ref, m, ROBOCACHE_EXTRAP_EXTRAPOLATE, 0);
    }
}

/* The default policy is clamp. */
static void test_defaults_clamp(void **state) {
  (void)state;
  rct_resample_args a = linear_problem();
  for (int ref = 0; ref < 2; ref++) {
    assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
    for (int d = 0; d < D; d++) {
      assert_float_equal(rct_get(a.out, 0 * D + d), rct_get(a.values, d), 0);
      assert_float_equal(rct_get(a.out, (T - 1) * D + d), rct_get(a.values, (S - 1) * D + d), 0);
    }
  }
  rct_resample_args_free(&a);
}

/* One sample per row: every policy except fill/error behaves as clamp; the
 * target on the sample is valid. */
static void test_single_sample_rows(void **state) {
  (void)state;
  for (int ref = 0; ref < 2; ref++)
    for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_NEXT; m++) {
      rct_resample_args a =
          rct_resample_args_make(ROBOCACHE_DTYPE_F64, ROBOCACHE_DTYPE_F32, 1, 1, 3, 3, 1);
      a.opt.method = m;
      a.opt.extrapolate = ROBOCACHE_EXTRAP_EXTRAPOLATE;
      rct_set(a.times, 0, 4.5);
      for (int d = 0; d < 3; d++) rct_set(a.values, d, 1.0 + d);
      rct_set(a.target_times, 0, 1.0);
      rct_set(a.target_times, 1, 4.5);
      rct_set(a.target_times, 2, 9.0);
      assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
      for (int t = 0; t < 3; t++) {
        assert_int_equal(rct_get(a.valid, t), t == 1);
        for (int d = 0; d < 3; d++) assert_float_equal(rct_get(a.out, t * 3 + d), 1.0 + d, 0);
      }
      rct_resample_args_free(&a);
    }
}

/* Slerp extrapolation continues the rotation along the same great circle:
 * angles 0.3, 0.9, 1.4 rad every P ns, half a period before / after. */
static void test_slerp_extrapolates_the_angle(void **state) {
  (void)state;
  const double angle[3] = {0.3, 0.9, 1.4}, expect[2] = {0.0, 1.65};
  for (int ref = 0; ref < 2; ref++) {
    rct_resample_args a =
        rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64, 1, 3, 2, 4, 1);
    a.opt.method = ROBOCACHE_SLERP;
    a.opt.extrapolate = ROBOCACHE_EXTRAP_EXTRAPOLATE;
    for (int s = 0; s < 3; s++) {
      rct_set_i64(a.times, s, 1000 + 1000 * s);
      rct_set(a.values, s * 4 + 0, sin(angle[s] / 2)); /* about x, xyzw */
      rct_set(a.values, s * 4 + 3, cos(angle[s] / 2));
    }
    rct_set_i64(a.target_times, 0, 500);
    rct_set_i64(a.target_times, 1, 3500);
    assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
    for (int t = 0; t < 2; t++) {
      assert_int_equal(rct_get(a.valid, t), 0);
      assert_float_equal(rct_get(a.out, t * 4 + 0), sin(expect[t] / 2), 1e-12);
      assert_float_equal(rct_get(a.out, t * 4 + 1), 0, 1e-12);
      assert_float_equal(rct_get(a.out, t * 4 + 2), 0, 1e-12);
      assert_float_equal(rct_get(a.out, t * 4 + 3), cos(expect[t] / 2), 1e-12);
    }
    rct_resample_args_free(&a);
  }
}

/* EXTRAP_ERROR names the first offending target in row-major order, with the
 * same message on both backends; in-range problems pass. */
static void error_case(robocache_dtype time_dtype, const char *when) {
  const int64_t rows = 3, n = 4, nt = 6;
  rct_resample_args a = rct_resample_args_make(time_dtype, ROBOCACHE_DTYPE_F32, rows, n, nt, 1, 0);
  a.opt.extrapolate = ROBOCACHE_EXTRAP_ERROR;
  for (int64_t i = 0; i < rows * n; i++) rct_set(a.times, i, (double)(i % n));
  for (int64_t i = 0; i < rows * nt; i++) rct_set(a.target_times, i, 0.5 * (double)(i % nt));
  for (int ref = 0; ref < 2; ref++) assert_int_equal(rct_resample(&a, ref, NULL, 0), 0);
  rct_set(a.target_times, 1 * nt + 5, 7.0);  /* row 1, index 5: after */
  rct_set(a.target_times, 1 * nt + 2, -1.0); /* row 1, index 2: before (first) */
  rct_set(a.target_times, 2 * nt + 0, 9.0);  /* row 2, index 0 */
  char expect[256], got[2][512];
  snprintf(expect, sizeof expect,
           "stream 0 (values): target out of range: row 1, index 2 (time %s)", when);
  for (int ref = 0; ref < 2; ref++) {
    assert_int_equal(rct_resample(&a, ref, got[ref], sizeof got[ref]), ROBOCACHE_INVALID_ARGUMENT);
    assert_string_equal(got[ref], expect);
  }
  rct_resample_args_free(&a);
}

static void test_error_policy_names_first_target(void **state) {
  (void)state;
  error_case(ROBOCACHE_DTYPE_I64, "-1 ns");
  error_case(ROBOCACHE_DTYPE_F64, "-1.000000000 s");
  error_case(ROBOCACHE_DTYPE_F32, "-1.000000000 s");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_policies_for_every_method),
      cmocka_unit_test(test_defaults_clamp),
      cmocka_unit_test(test_single_sample_rows),
      cmocka_unit_test(test_slerp_extrapolates_the_angle),
      cmocka_unit_test(test_error_policy_names_first_target),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
