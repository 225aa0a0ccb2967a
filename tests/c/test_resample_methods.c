/* resample methods against closed forms: linear data is reproduced, slerp
 * about one axis gives the exact intermediate angle (and nlerp the normalised
 * chord), previous / nearest / next on step functions, targets on samples
 * return them bit-exactly. Every check runs on both backends. */
#include "support.h"

#include <math.h>
#include <stdlib.h>

static const robocache_dtype float_dtypes[] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F64,
                                               ROBOCACHE_DTYPE_F16, ROBOCACHE_DTYPE_BF16};

static void linear_case(int ref, robocache_dtype time_dtype, robocache_dtype vdt, double atol) {
  const int64_t B = 3, S = 40, D = 5, T = 64;
  rct_rng rng = rct_rng_seed(11 + (uint64_t)time_dtype);
  int64_t start = time_dtype == ROBOCACHE_DTYPE_I64 ? 1600000000000000000ll : 1000000000;
  rct_resample_args a = rct_resample_args_make(time_dtype, vdt, B, S, T, D, 1);
  rct_fill_times(a.times, &rng, start, 100000, 10000000);
  double slope[5], icpt[5];
  for (int d = 0; d < D; d++) slope[d] = rct_rng_uniform(&rng, -5, 5);
  for (int d = 0; d < D; d++) icpt[d] = rct_rng_uniform(&rng, -5, 5);
  /* value(x) = icpt + slope * (seconds since the row's first sample) */
  double *expect = calloc((size_t)(B * T * D), sizeof *expect);
  for (int64_t b = 0; b < B; b++) {
    double t0 = rct_get(a.times, b * S), tl = rct_get(a.times, b * S + S - 1);
    double scale = time_dtype == ROBOCACHE_DTYPE_I64 ? 1e-9 : 1.0;
    for (int64_t s = 0; s < S; s++) {
      double since = time_dtype == ROBOCACHE_DTYPE_I64
                         ? (double)(rct_get_i64(a.times, b * S + s) - rct_get_i64(a.times, b * S))
                         : rct_get(a.times, b * S + s) - t0;
      for (int d = 0; d < D; d++)
        rct_set(a.values, (b * S + s) * D + d, icpt[d] + slope[d] * since * scale);
    }
    for (int64_t t = 0; t < T; t++) {
      double since;
      if (time_dtype == ROBOCACHE_DTYPE_I64) {
        int64_t x =
            rct_rng_int(&rng, rct_get_i64(a.times, b * S), rct_get_i64(a.times, b * S + S - 1));
        rct_set_i64(a.target_times, b * T + t, x);
        since = (double)(x - rct_get_i64(a.times, b * S));
      } else {
        rct_set(a.target_times, b * T + t, rct_rng_uniform(&rng, t0, tl));
        since = rct_get(a.target_times, b * T + t) - t0;
      }
      for (int d = 0; d < D; d++) expect[(b * T + t) * D + d] = icpt[d] + slope[d] * since * scale;
    }
  }
  assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
  for (int64_t i = 0; i < B * T * D; i++)
    if (!(fabs(rct_get(a.out, i) - expect[i]) <= atol))
      fail_msg("ref=%d time %s values %s: element %lld = %.17g, expected %.17g", ref,
               robocache_dtype_name(time_dtype), robocache_dtype_name(vdt), (long long)i,
               rct_get(a.out, i), expect[i]);
  for (int64_t i = 0; i < B * T; i++) assert_int_equal(rct_get(a.valid, i), 1);
  free(expect);
  rct_free(a.times), rct_free(a.values), rct_free(a.target_times), rct_free(a.out),
      rct_free(a.valid);
}

static void test_linear_reproduces_linear_data(void **state) {
  (void)state;
  for (int ref = 0; ref < 2; ref++) {
    linear_case(ref, ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64, 1e-12);
    linear_case(ref, ROBOCACHE_DTYPE_F64, ROBOCACHE_DTYPE_F64, 1e-12);
    linear_case(ref, ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F32, 1e-5);
    linear_case(ref, ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F32, 1e-5);
  }
}

/* Quaternion of a rotation by angle about the unit axis, xyzw (or wxyz). */
static void axis_angle(const double *axis, double angle, int wxyz, double *q) {
  double s = sin(angle / 2), c = cos(angle / 2);
  for (int i = 0; i < 3; i++) q[i + wxyz] = axis[i] * s;
  q[wxyz ? 0 : 3] = c;
}

/* Samples every P ns at angles with steps in [lo, hi] rad about two axes
 * (channel groups 0 and 1; group 1's odd samples negated, the same
 * rotation), targets at random times. Expected: slerp = rotation by the
 * linearly interpolated angle; nlerp = the normalised chord. */
static void slerp_case(int ref, robocache_dtype vdt, int wxyz, double lo, double hi, int nlerp,
                       double atol) {
  const int64_t S = 24, D = 8, T = 50, P = 1000000;
  static const double axes[2][3] = {{0, 0, 1}, {1.0 / 3, 2.0 / 3, 2.0 / 3}};
  rct_rng rng = rct_rng_seed(5);
  rct_resample_args a = rct_resample_args_make(ROBOCACHE_DTYPE_I64, vdt, 1, S, T, D, 0);
  a.opt.method = ROBOCACHE_SLERP;
  a.opt.quat_order = wxyz ? ROBOCACHE_QUAT_WXYZ : ROBOCACHE_QUAT_XYZW;
  double angle[24];
  for (int64_t s = 0; s < S; s++) {
    angle[s] = s == 0 ? -1.0 : angle[s - 1] + rct_rng_uniform(&rng, lo, hi);
    rct_set_i64(a.times, s, 7 * P + s * P);
    for (int g = 0; g < 2; g++) {
      double q[4];
      axis_angle(axes[g], angle[s], wxyz, q);
      for (int c = 0; c < 4; c++)
        rct_set(a.values, s * D + 4 * g + c, (g && s % 2 ? -1 : 1) * q[c]);
    }
  }
  int64_t idx[50];
  double w[50];
  for (int64_t t = 0; t < T; t++) {
    int64_t x = rct_rng_int(&rng, 7 * P, 7 * P + (S - 1) * P - 1);
    rct_set_i64(a.target_times, t, x);
    idx[t] = (x - 7 * P) / P;
    w[t] = (double)((x - 7 * P) % P) / (double)P;
  }
  assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
  for (int64_t t = 0; t < T; t++)
    for (int g = 0; g < 2; g++) {
      double q[4], dot = 0;
      if (nlerp) { /* the normalised chord between the (sign-aligned) samples */
        double q0[4], q1[4], norm = 0;
        axis_angle(axes[g], angle[idx[t]], wxyz, q0);
        axis_angle(axes[g], angle[idx[t] + 1], wxyz, q1);
        for (int c = 0; c < 4; c++) norm += pow(q[c] = (1 - w[t]) * q0[c] + w[t] * q1[c], 2);
        for (int c = 0; c < 4; c++) q[c] /= sqrt(norm);
      } else {
        axis_angle(axes[g], angle[idx[t]] + w[t] * (angle[idx[t] + 1] - angle[idx[t]]), wxyz, q);
      }
      for (int c = 0; c < 4; c++) dot += q[c] * rct_get(a.out, t * D + 4 * g + c);
      double sign = dot < 0 ? -1 : 1; /* q and -q are the same rotation */
      for (int c = 0; c < 4; c++)
        if (!(fabs(sign * q[c] - rct_get(a.out, t * D + 4 * g + c)) <= atol))
          fail_msg("ref=%d %s wxyz=%d nlerp=%d: target %lld group %d component %d: %.12g, "
                   "expected %.12g",
                   ref, robocache_dtype_name(vdt), wxyz, nlerp, (long long)t, g, c,
                   rct_get(a.out, t * D + 4 * g + c), sign * q[c]);
    }
  rct_free(a.times), rct_free(a.values), rct_free(a.target_times), rct_free(a.out);
}

static void test_slerp_about_one_axis(void **state) {
  (void)state;
  for (int ref = 0; ref < 2; ref++)
    for (int wxyz = 0; wxyz < 2; wxyz++) {
      slerp_case(ref, ROBOCACHE_DTYPE_F64, wxyz, 0.1, 2.5, 0, 1e-12);
      slerp_case(ref, ROBOCACHE_DTYPE_F32, wxyz, 0.1, 2.5, 0, 2e-6);
      slerp_case(ref, ROBOCACHE_DTYPE_F64, wxyz, 0.001, 0.05, 1, 1e-12);
      slerp_case(ref, ROBOCACHE_DTYPE_F32, wxyz, 0.001, 0.05, 1, 2e-6);
    }
}

/* Step function: samples every 1000 ns (int64) or 0.25 s (float64), value
 * s * 1.5 - 7 and -s. previous = floor, next = ceil, nearest = round with
 * ties to the earlier sample. */
static void step_case(int ref, robocache_dtype time_dtype, int method) {
  const int64_t S = 30, D = 2, T = 200;
  const int ns = time_dtype == ROBOCACHE_DTYPE_I64;
  rct_rng rng = rct_rng_seed(3);
  rct_resample_args a = rct_resample_args_make(time_dtype, ROBOCACHE_DTYPE_F32, 1, S, T, D, 0);
  a.opt.method = method;
  const int64_t base = 500000000000000000ll;
  for (int64_t s = 0; s < S; s++) {
    if (ns)
      rct_set_i64(a.times, s, base + 1000 * s);
    else
      rct_set(a.times, s, 0.25 * (double)s);
    rct_set(a.values, s * D, (double)s * 1.5 - 7);
    rct_set(a.values, s * D + 1, -(double)s);
  }
  int64_t expect[200];
  for (int64_t t = 0; t < T; t++) {
    /* position in units of 1/8 of the sampling period */
    int64_t k = t < 16 ? t * 4 : rct_rng_int(&rng, 0, 8 * (S - 1));
    if (ns)
      rct_set_i64(a.target_times, t, base + k * 125);
    else
      rct_set(a.target_times, t, 0.03125 * (double)k);
    int64_t fl = k / 8, r = k % 8;
    expect[t] = method == ROBOCACHE_PREVIOUS ? fl
                : method == ROBOCACHE_NEXT   ? fl + (r > 0)
                                             : fl + (r > 4);
  }
  assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
  for (int64_t t = 0; t < T; t++) {
    assert_float_equal(rct_get(a.out, t * D), (double)expect[t] * 1.5 - 7, 0);
    assert_float_equal(rct_get(a.out, t * D + 1), -(double)expect[t], 0);
  }
  rct_free(a.times), rct_free(a.values), rct_free(a.target_times), rct_free(a.out);
}

static void test_previous_nearest_next_on_steps(void **state) {
  (void)state;
  for (int ref = 0; ref < 2; ref++)
    for (int m = ROBOCACHE_NEAREST; m <= ROBOCACHE_NEXT; m++) {
      step_case(ref, ROBOCACHE_DTYPE_I64, m);
      step_case(ref, ROBOCACHE_DTYPE_F64, m);
      step_case(ref, ROBOCACHE_DTYPE_F32, m);
    }
}

/* Targets exactly on samples (shuffled, every sample, first and last
 * included) return the sample bit-exactly for every method and dtype. */
static void test_targets_on_samples_are_bit_exact(void **state) {
  (void)state;
  const int64_t B = 2, S = 17, D = 8, T = S;
  rct_rng rng = rct_rng_seed(99);
  for (int di = 0; di < 4; di++)
    for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_SLERP; m++)
      for (int ref = 0; ref < 2; ref++) {
        robocache_dtype vdt = float_dtypes[di];
        rct_resample_args a = rct_resample_args_make(ROBOCACHE_DTYPE_I64, vdt, B, S, T, D, 0);
        a.opt.method = m;
        a.opt.time_offset_ns = 123;
        rct_fill_times(a.times, &rng, 1000, 1, 100000);
        rct_fill_uniform(a.values, &rng, -3, 3);
        int64_t perm[17];
        for (int64_t b = 0; b < B; b++) {
          for (int64_t i = 0; i < S; i++) perm[i] = i;
          for (int64_t i = S - 1; i > 0; i--) {
            int64_t j = rct_rng_int(&rng, 0, i), tmp = perm[i];
            perm[i] = perm[j], perm[j] = tmp;
          }
          for (int64_t t = 0; t < T; t++)
            rct_set_i64(a.target_times, b * T + t, rct_get_i64(a.times, b * S + perm[t]) + 123);
          assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
          for (int64_t t = 0; t < T; t++)
            for (int64_t d = 0; d < D; d++)
              if (rct_get_bits(a.out, (b * T + t) * D + d) !=
                  rct_get_bits(a.values, (b * S + perm[t]) * D + d))
                fail_msg("%s %s ref=%d: row %lld target %lld channel %lld not bit-exact",
                         robocache_dtype_name(vdt), m == ROBOCACHE_SLERP ? "slerp" : "method", ref,
                         (long long)b, (long long)t, (long long)d);
        }
        rct_free(a.times), rct_free(a.values), rct_free(a.target_times), rct_free(a.out);
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_linear_reproduces_linear_data),
      cmocka_unit_test(test_slerp_about_one_axis),
      cmocka_unit_test(test_previous_nearest_next_on_steps),
      cmocka_unit_test(test_targets_on_samples_are_bit_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
