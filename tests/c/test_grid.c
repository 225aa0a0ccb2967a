/* Target-grid helpers: robocache_uniform_grid(_count) against a brute-force
 * enumeration of t_i = start + llround(i * 1e9 / rate) <= end, and
 * robocache_streams_span (overlap / union, lengths, time offsets, errors). */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Brute force: the grid points up to end (at most cap). */
static int64_t brute_grid(int64_t start, int64_t end, double rate, int64_t *out, int64_t cap) {
  int64_t n = 0;
  for (int64_t i = 0;; i++) {
    int64_t t = start + llround((double)i * (1e9 / rate));
    if (t > end) break;
    if (n < cap) out[n] = t;
    n++;
  }
  return n;
}

static void test_uniform_grid_matches_enumeration(void **state) {
  (void)state;
  static const double rates[] = {1, 3, 7, 10, 29.97, 30, 100, 200, 333.3, 1000, 0.5};
  rct_rng r = rct_rng_seed(12);
  int64_t *expect = malloc(200001 * sizeof *expect), *got = malloc(200001 * sizeof *got);
  for (int rep = 0; rep < 200; rep++) {
    double rate = rates[rep % 11];
    int64_t start = rep % 2 ? 1600000000000000000ll + rct_rng_int(&r, 0, 1000000000)
                            : rct_rng_int(&r, -5000000000ll, 5000000000ll);
    int64_t end = start + rct_rng_int(&r, -1000, 60000000000ll);
    if (rep % 7 == 0) /* end exactly on a grid point */
      end = start + llround((double)rct_rng_int(&r, 0, 50) * (1e9 / rate));
    int64_t n = brute_grid(start, end, rate, expect, 200001);
    assert_true(n <= 200001);
    assert_int_equal(robocache_uniform_grid_count(start, end, rate), n);
    assert_int_equal(robocache_uniform_grid(NULL, start, end, rate, got, n), ROBOCACHE_OK);
    for (int64_t i = 0; i < n; i++) assert_int_equal(got[i], expect[i]);
    if (n > 0) {
      assert_int_equal(robocache_uniform_grid(NULL, start, end, rate, got, n - 1),
                       ROBOCACHE_CAPACITY_EXCEEDED);
      rct_assert_message_has(NULL, "capacity");
    }
  }
  free(expect);
  free(got);
}

static void test_uniform_grid_closed_forms_and_errors(void **state) {
  (void)state;
  int64_t g[8];
  assert_int_equal(robocache_uniform_grid_count(0, 1000000000, 10), 11);
  assert_int_equal(robocache_uniform_grid_count(0, 1000000000, 3), 4);
  assert_int_equal(robocache_uniform_grid(NULL, 0, 1000000000, 3, g, 8), ROBOCACHE_OK);
  assert_int_equal(g[1], 333333333);
  assert_int_equal(g[2], 666666667);
  assert_int_equal(g[3], 1000000000);
  assert_int_equal(robocache_uniform_grid_count(5, 5, 10), 1);
  assert_int_equal(robocache_uniform_grid_count(5, 4, 10), 0);
  /* a period longer than the span (or than int64 ns): only the start */
  assert_int_equal(robocache_uniform_grid_count(5, 1000, 1e-10), 1);
  assert_int_equal(robocache_uniform_grid_count(-5, 1000000000000ll, 1e-300), 1);
  assert_int_equal(robocache_uniform_grid(NULL, 7, 9, 1e-10, g, 1), ROBOCACHE_OK);
  assert_int_equal(g[0], 7);
  assert_int_equal(robocache_uniform_grid(NULL, 5, 4, 10, NULL, 0), ROBOCACHE_OK);
  const double bad[] = {0, -10, NAN, INFINITY};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(robocache_uniform_grid_count(0, 100, bad[i]), 0);
    assert_int_equal(robocache_uniform_grid(NULL, 0, 100, bad[i], g, 8),
                     ROBOCACHE_INVALID_ARGUMENT);
    rct_assert_message_has(NULL, "rate_hz");
  }
  assert_int_equal(robocache_uniform_grid(NULL, 0, 100, 1e9, NULL, 1000),
                   ROBOCACHE_INVALID_ARGUMENT);
}

/* Absurd rates: a subnormal rate (infinite period) is the start alone,
 * exactly; 14.7 MHz over a span of about 2^62 ns, and 1e300 Hz, are counted
 * (point n - 1 on or before the end, point n after it, by the formula) and
 * refused with CAPACITY_EXCEEDED stating the count; spans past +-2^62 ns
 * are INVALID_ARGUMENT. */
static void test_uniform_grid_absurd_rates(void **state) {
  (void)state;
  int64_t g[4] = {-1, -1, -1, -1};
  const int64_t lim = (int64_t)1 << 62;
  assert_int_equal(robocache_uniform_grid_count(123, 456, 1e-310), 1);
  assert_int_equal(robocache_uniform_grid(NULL, 123, 456, 1e-310, g, 4), ROBOCACHE_OK);
  assert_int_equal(g[0], 123);
  assert_int_equal(g[1], -1);

  const int64_t start = -lim + 1, end = lim - 1, span = end - start;
  const double rate = 14.7e6, period = 1e9 / rate;
  const int64_t n = robocache_uniform_grid_count(start, end, rate);
  /* about span / period + 1 = 6.27e17 points */
  assert_true(fabs((double)n - ((double)span / period + 1)) < 1e3);
  assert_true(llround((double)(n - 1) * period) <= span);
  assert_true((double)n * period >= (double)span); /* point n past the end (or on it, rounding) */
  assert_int_equal(robocache_uniform_grid(NULL, start, end, rate, g, 4),
                   ROBOCACHE_CAPACITY_EXCEEDED);
  char want[64];
  snprintf(want, sizeof want, "takes %lld targets", (long long)n);
  rct_assert_message_has(NULL, want);

  assert_int_equal(robocache_uniform_grid_count(start, end, 1e300), INT64_MAX);
  assert_int_equal(robocache_uniform_grid(NULL, start, end, 1e300, g, 4),
                   ROBOCACHE_CAPACITY_EXCEEDED);
  rct_assert_message_has(NULL, "more than 9223372036854775807 targets");

  assert_int_equal(robocache_uniform_grid_count(-lim, 0, 1), 0);
  assert_int_equal(robocache_uniform_grid_count(INT64_MIN, INT64_MAX, 1), 0);
  assert_int_equal(robocache_uniform_grid(NULL, INT64_MIN, INT64_MAX, 1, g, 4),
                   ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "within +-2^62 ns");
}

/* Two streams of 3 rows: overlap / union with lengths and offsets, against
 * the closed form. */
static void test_streams_span(void **state) {
  (void)state;
  rct_tensor *t0 = rct_make2(ROBOCACHE_DTYPE_I64, 3, 5), *t1 = rct_make2(ROBOCACHE_DTYPE_I64, 3, 4);
  rct_tensor *len1 = rct_make1(ROBOCACHE_DTYPE_I64, 3);
  rct_rng r = rct_rng_seed(6);
  rct_fill_times(t0, &r, 1000, 10, 100);
  rct_fill_times(t1, &r, 1100, 10, 100);
  for (int b = 0; b < 3; b++) rct_set_i64(len1, b, 2 + b % 3);
  robocache_stream st[2] = {{.times = &t0->t}, {.times = &t1->t, .lengths = &len1->t}};
  robocache_interp_options_init(&st[0].options);
  robocache_interp_options_init(&st[1].options);
  st[1].options.time_offset_ns = -40;
  for (int span = 0; span < 2; span++) {
    int64_t start[3], end[3];
    assert_int_equal(robocache_streams_span(NULL, st, 2, span, start, end), ROBOCACHE_OK);
    for (int b = 0; b < 3; b++) {
      int64_t f0 = rct_get_i64(t0, b * 5), l0 = rct_get_i64(t0, b * 5 + 4);
      int64_t f1 = rct_get_i64(t1, b * 4) - 40,
              l1 = rct_get_i64(t1, b * 4 + rct_get_i64(len1, b) - 1) - 40;
      assert_int_equal(start[b],
                       span == ROBOCACHE_SPAN_OVERLAP ? (f0 > f1 ? f0 : f1) : (f0 < f1 ? f0 : f1));
      assert_int_equal(end[b],
                       span == ROBOCACHE_SPAN_OVERLAP ? (l0 < l1 ? l0 : l1) : (l0 > l1 ? l0 : l1));
    }
  }
  int64_t start[3], end[3];
  st[1].options.time_offset_ns = 100000; /* no overlap on any row: row 0 named */
  assert_int_equal(robocache_streams_span(NULL, st, 2, ROBOCACHE_SPAN_OVERLAP, start, end),
                   ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "do not overlap in time: row 0");
  assert_int_equal(robocache_streams_span(NULL, st, 2, ROBOCACHE_SPAN_UNION, start, end),
                   ROBOCACHE_OK);
  st[1].options.time_offset_ns = (int64_t)1 << 62; /* beyond +-2^62 ns */
  assert_int_equal(robocache_streams_span(NULL, st, 2, ROBOCACHE_SPAN_UNION, start, end),
                   ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "stream 1: time out of range in row 0");
  st[1].options.time_offset_ns = 100000;
  assert_int_equal(robocache_streams_span(NULL, st, 2, 7, start, end), ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "unknown span 7");
  assert_int_equal(robocache_streams_span(NULL, st, 0, 0, start, end), ROBOCACHE_INVALID_ARGUMENT);
  rct_set_i64(len1, 2, 5);
  assert_int_equal(robocache_streams_span(NULL, st, 2, 0, start, end), ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "stream 1 lengths[2] = 5 outside 1..S");
  rct_tensor *f = rct_make2(ROBOCACHE_DTYPE_F64, 3, 4);
  st[1].times = &f->t;
  assert_int_equal(robocache_streams_span(NULL, st, 2, 0, start, end), ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "int64");
  rct_tensor *rows = rct_make2(ROBOCACHE_DTYPE_I64, 2, 4);
  st[1].times = &rows->t;
  st[1].lengths = NULL;
  assert_int_equal(robocache_streams_span(NULL, st, 2, 0, start, end), ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "2 rows");
  rct_free(t0), rct_free(t1), rct_free(len1), rct_free(f), rct_free(rows);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_uniform_grid_matches_enumeration),
      cmocka_unit_test(test_uniform_grid_closed_forms_and_errors),
      cmocka_unit_test(test_uniform_grid_absurd_rates),
      cmocka_unit_test(test_streams_span),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
