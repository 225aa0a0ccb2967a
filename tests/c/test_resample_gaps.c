/* max_gap on the real 110 ms drop-out of the TUM fr1/xyz ground truth,
 * tolerance for nearest / previous / next, and time_offset. Both backends. */
#include "support.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tiny TUM trajectory parser: "timestamp tx ty tz qx qy qz qw" with
 * the timestamp in seconds (decimal), parsed exactly into ns. */
typedef struct tum {
  int64_t n;
  int64_t *t_ns;
  double (*row)[7];
} tum;

static int64_t decimal_seconds_to_ns(const char *s, char **end) {
  int64_t sec = strtoll(s, end, 10), frac = 0, scale = 1000000000;
  if (**end == '.') {
    const char *p = *end + 1;
    for (; isdigit((unsigned char)*p); p++)
      if (scale > 1) frac = frac * 10 + (*p - '0'), scale /= 10;
    *end = (char *)p;
  }
  return sec * 1000000000 + frac * scale;
}

static tum read_tum(const char *relative) {
  char *text = rct_read_data_file(relative, NULL);
  tum d = {0};
  d.t_ns = malloc(4000 * sizeof *d.t_ns);
  d.row = malloc(4000 * sizeof *d.row);
  for (char *line = strtok(text, "\n"); line && d.n < 4000; line = strtok(NULL, "\n")) {
    if (line[0] == '#') continue;
    char *p;
    d.t_ns[d.n] = decimal_seconds_to_ns(line, &p);
    for (int c = 0; c < 7; c++) d.row[d.n][c] = strtod(p, &p);
    d.n++;
  }
  free(text);
  return d;
}

static void free_tum(tum *d) {
  free(d->t_ns);
  free(d->row);
}

/* Stream of channels [c0, c0 + D) of the TUM file; targets every 10 ms. */
static rct_resample_args tum_problem(const tum *d, int c0, int64_t D, int64_t *T) {
  *T = (d->t_ns[d->n - 1] - d->t_ns[0]) / 10000000 + 1;
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64, 1, d->n, *T, D, 1);
  for (int64_t s = 0; s < d->n; s++) {
    rct_set_i64(a.times, s, d->t_ns[s]);
    for (int64_t c = 0; c < D; c++) rct_set(a.values, s * D + c, d->row[s][c0 + c]);
  }
  for (int64_t t = 0; t < *T; t++) rct_set_i64(a.target_times, t, d->t_ns[0] + t * 10000000);
  return a;
}

static void max_gap_case(const tum *d, int method, int c0, int64_t D) {
  int64_t gap = -1; /* the one interval longer than 50 ms */
  for (int64_t s = 0; s + 1 < d->n; s++)
    if (d->t_ns[s + 1] - d->t_ns[s] > 50000000) {
      assert_int_equal(gap, -1);
      gap = s;
    }
  assert_int_equal(gap, 1017); /* the documented 110 ms drop after data row 1017 */
  int64_t T;
  rct_resample_args base = tum_problem(d, c0, D, &T);
  base.opt.method = method;
  for (int ref = 0; ref < 2; ref++)
    for (int policy = ROBOCACHE_EXTRAP_CLAMP; policy <= ROBOCACHE_EXTRAP_ERROR; policy++) {
      rct_resample_args a = tum_problem(d, c0, D, &T);
      a.opt.method = method;
      a.opt.max_gap_ns = 50000000;
      a.opt.extrapolate = policy;
      a.opt.fill_value = -1;
      /* the same backend without max_gap */
      assert_int_equal(rct_resample(&base, ref, NULL, 0), ROBOCACHE_OK);
      char msg[512];
      robocache_status st = rct_resample(&a, ref, msg, sizeof msg);
      int64_t in_gap = 0, first = -1;
      for (int64_t t = 0; t < T; t++) {
        int64_t x = rct_get_i64(a.target_times, t);
        int inside = x > d->t_ns[gap] && x < d->t_ns[gap + 1];
        if (inside && first < 0) first = t;
        in_gap += inside;
        if (policy == ROBOCACHE_EXTRAP_ERROR) continue;
        assert_int_equal(rct_get(a.valid, t), !inside);
        int64_t near = x - d->t_ns[gap] <= d->t_ns[gap + 1] - x ? gap : gap + 1;
        for (int64_t c = 0; c < D; c++) {
          double got = rct_get(a.out, t * D + c), expect = rct_get(base.out, t * D + c);
          if (inside && policy == ROBOCACHE_EXTRAP_CLAMP) expect = d->row[near][c0 + c];
          if (inside && policy == ROBOCACHE_EXTRAP_FILL) expect = -1;
          if (got != expect)
            fail_msg("ref=%d policy %d target %lld channel %lld: %.17g != %.17g", ref, policy,
                     (long long)t, (long long)c, got, expect);
        }
      }
      assert_true(in_gap >= 10); /* 110 ms at 100 Hz */
      if (policy == ROBOCACHE_EXTRAP_ERROR) {
        char expect[256];
        snprintf(expect, sizeof expect,
                 "stream 0 (values): target inside a gap longer than max_gap (50000000 ns): "
                 "row 0, index %lld (time %lld ns)",
                 (long long)first, (long long)rct_get_i64(a.target_times, first));
        assert_int_equal(st, ROBOCACHE_INVALID_ARGUMENT);
        assert_string_equal(msg, expect);
      } else {
        assert_int_equal(st, ROBOCACHE_OK);
      }
      rct_resample_args_free(&a);
    }
  rct_resample_args_free(&base);
}

static void test_max_gap_on_tum_dropout(void **state) {
  (void)state;
  tum d = read_tum("sensors/tum_fr1_xyz_groundtruth.txt");
  assert_int_equal(d.n, 3000);
  max_gap_case(&d, ROBOCACHE_LINEAR, 0, 3);
  max_gap_case(&d, ROBOCACHE_SLERP, 3, 4);
  max_gap_case(&d, ROBOCACHE_PREVIOUS, 0, 7);
  free_tum(&d);
}

/* Samples at 0, 10, 20 (ns, or s * 1e-9 for float times), values 0, 1, 2,
 * tolerance 3 ns. */
static void tolerance_case(int ref, robocache_dtype time_dtype, int method, int policy) {
  static const double x[6] = {2, 4, 5, 12, 16, 18};
  /* expected sample and whether it is within tolerance, per method */
  static const int pick[3][6] = {{0, 0, 0, 1, 2, 2}, {0, 0, 0, 1, 1, 1}, {1, 1, 1, 2, 2, 2}};
  static const int ok[3][6] = {{1, 0, 0, 1, 0, 1}, {1, 0, 0, 1, 0, 0}, {0, 0, 0, 0, 0, 1}};
  const int m = method - ROBOCACHE_NEAREST;
  const double unit = time_dtype == ROBOCACHE_DTYPE_I64 ? 1 : 1e-9;
  rct_resample_args a = rct_resample_args_make(time_dtype, ROBOCACHE_DTYPE_F32, 1, 3, 6, 1, 1);
  a.opt.method = method;
  a.opt.extrapolate = policy;
  a.opt.tolerance_ns = 3;
  a.opt.fill_value = 99;
  for (int s = 0; s < 3; s++) rct_set(a.times, s, 10 * s * unit), rct_set(a.values, s, s);
  for (int t = 0; t < 6; t++) rct_set(a.target_times, t, x[t] * unit);
  char msg[512];
  robocache_status st = rct_resample(&a, ref, msg, sizeof msg);
  if (policy == ROBOCACHE_EXTRAP_ERROR) {
    int first = 0;
    while (ok[m][first]) first++;
    char index[64];
    snprintf(index, sizeof index, "row 0, index %d", first);
    assert_int_equal(st, ROBOCACHE_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "target farther than tolerance (3 ns) from its sample"));
    assert_non_null(strstr(msg, index));
  } else {
    assert_int_equal(st, ROBOCACHE_OK);
    for (int t = 0; t < 6; t++) {
      assert_int_equal(rct_get(a.valid, t), ok[m][t]);
      double expect = !ok[m][t] && policy == ROBOCACHE_EXTRAP_FILL ? 99 : pick[m][t];
      assert_float_equal(rct_get(a.out, t), expect, 0);
    }
  }
  rct_resample_args_free(&a);
}

static void test_tolerance(void **state) {
  (void)state;
  static const robocache_dtype tds[3] = {ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64,
                                         ROBOCACHE_DTYPE_F32};
  for (int ref = 0; ref < 2; ref++)
    for (int i = 0; i < 3; i++)
      for (int m = ROBOCACHE_NEAREST; m <= ROBOCACHE_NEXT; m++)
        for (int p = ROBOCACHE_EXTRAP_CLAMP; p <= ROBOCACHE_EXTRAP_ERROR; p++)
          tolerance_case(ref, tds[i], m, p);
}

/* time_offset o equals adding o to the times (int64: bit-exact), and on
 * linear data v(t) = t the value at target x is x - o. */
static void test_time_offset(void **state) {
  (void)state;
  const int64_t S = 50, T = 80, off = -12345678;
  rct_rng rng = rct_rng_seed(8);
  for (int ref = 0; ref < 2; ref++)
    for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_NEXT; m++) {
      rct_resample_args a =
          rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64, 1, S, T, 1, 1);
      a.opt.method = m;
      a.opt.extrapolate = ROBOCACHE_EXTRAP_EXTRAPOLATE;
      rct_fill_times(a.times, &rng, 1000000000, 1000, 5000000);
      for (int64_t s = 0; s < S; s++) rct_set(a.values, s, (double)rct_get_i64(a.times, s) * 1e-9);
      int64_t t0 = rct_get_i64(a.times, 0), tl = rct_get_i64(a.times, S - 1);
      for (int64_t t = 0; t < T; t++)
        rct_set_i64(a.target_times, t, rct_rng_int(&rng, t0 - 2 * off, tl + 2 * off));
      rct_resample_args b = a;
      b.opt.time_offset_ns = 0;
      b.times = rct_make2(ROBOCACHE_DTYPE_I64, 1, S);
      b.out = rct_make3(ROBOCACHE_DTYPE_F64, 1, T, 1);
      b.valid = rct_make2(ROBOCACHE_DTYPE_U8, 1, T);
      for (int64_t s = 0; s < S; s++) rct_set_i64(b.times, s, rct_get_i64(a.times, s) + off);
      a.opt.time_offset_ns = off;
      assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
      assert_int_equal(rct_resample(&b, ref, NULL, 0), ROBOCACHE_OK);
      rct_assert_bits_equal(a.out, b.out, "offset vs shifted times");
      rct_assert_bits_equal(a.valid, b.valid, "valid: offset vs shifted times");
      if (m == ROBOCACHE_LINEAR)
        for (int64_t t = 0; t < T; t++)
          assert_float_equal(rct_get(a.out, t),
                             (double)(rct_get_i64(a.target_times, t) - off) * 1e-9, 1e-12);
      rct_free(b.times), rct_free(b.out), rct_free(b.valid);
      rct_resample_args_free(&a);
    }
}

/* max_gap and tolerance are strict: an interval exactly max_gap long and a
 * sample exactly tolerance away are fine; one ns less of either is not.
 * Samples at 0, 3, 23 ns; target 6 ns (3 ns after sample 1, interval 20). */
static void test_limits_are_strict(void **state) {
  (void)state;
  for (int ref = 0; ref < 2; ref++)
    for (int which = 0; which < 2; which++)
      for (int64_t less = 0; less < 2; less++) {
        rct_resample_args a =
            rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F32, 1, 3, 1, 1, 1);
        a.opt.method = ROBOCACHE_NEAREST;
        if (which == 0)
          a.opt.max_gap_ns = 20 - less;
        else
          a.opt.tolerance_ns = 3 - less;
        rct_set_i64(a.times, 1, 3), rct_set_i64(a.times, 2, 23);
        rct_set_i64(a.target_times, 0, 6);
        assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
        assert_int_equal(rct_get(a.valid, 0), !less);
        rct_resample_args_free(&a);
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_max_gap_on_tum_dropout),
      cmocka_unit_test(test_tolerance),
      cmocka_unit_test(test_time_offset),
      cmocka_unit_test(test_limits_are_strict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
