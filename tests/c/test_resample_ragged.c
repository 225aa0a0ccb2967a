/* Ragged rows (lengths, target_lengths) and strided (non-contiguous)
 * tensors: padding is never read, padded targets are written as 0 / invalid,
 * and any strides give the same bits as contiguous tensors. Both backends,
 * every method. */
#include "support.h"

#include <math.h>

enum { B = 3, S = 8, T = 7, D = 4 };

/* Random problem; rows padded after lengths {3, 8, 1} with decreasing / NaN
 * times and NaN values; target_lengths {5, 0, 7}. */
static rct_resample_args ragged_problem(robocache_dtype time_dtype, int method) {
  static const int64_t len[B] = {3, 8, 1}, tlen[B] = {5, 0, 7};
  rct_rng rng = rct_rng_seed(17);
  rct_resample_args a = rct_resample_args_make(time_dtype, ROBOCACHE_DTYPE_F32, B, S, T, D, 1);
  a.opt.method = method;
  a.lengths = rct_make1(ROBOCACHE_DTYPE_I64, B);
  a.target_lengths = rct_make1(ROBOCACHE_DTYPE_I64, B);
  rct_fill_times(a.times, &rng, 0, 100, 1000);
  rct_fill_uniform(a.values, &rng, -1, 1);
  for (int b = 0; b < B; b++) {
    rct_set_i64(a.lengths, b, len[b]);
    rct_set_i64(a.target_lengths, b, tlen[b]);
    for (int s = (int)len[b]; s < S; s++) {
      rct_set(a.times, b * S + s, time_dtype == ROBOCACHE_DTYPE_I64 ? -5.0 * s : NAN);
      for (int d = 0; d < D; d++) rct_set(a.values, (b * S + s) * D + d, NAN);
    }
    double lo = rct_get(a.times, b * S), hi = rct_get(a.times, b * S + len[b] - 1);
    for (int t = 0; t < T; t++)
      rct_set(a.target_times, b * T + t,
              t == 0 ? lo : round(rct_rng_uniform(&rng, lo - 50, hi + 50)));
  }
  return a;
}

/* Row b of the ragged problem as a problem of its own (S = lengths[b],
 * T = target_lengths[b], no length tensors). */
static rct_resample_args row_problem(const rct_resample_args *a, int64_t b) {
  int64_t n = rct_get_i64(a->lengths, b), nt = rct_get_i64(a->target_lengths, b);
  rct_resample_args r = {0};
  r.opt = a->opt;
  r.times = rct_make2((robocache_dtype)a->times->t.dtype, 1, n);
  r.values = rct_make3(ROBOCACHE_DTYPE_F32, 1, n, D);
  r.target_times = rct_make2((robocache_dtype)a->times->t.dtype, 1, nt);
  r.out = rct_make3(ROBOCACHE_DTYPE_F32, 1, nt, D);
  r.valid = rct_make2(ROBOCACHE_DTYPE_U8, 1, nt);
  for (int64_t s = 0; s < n; s++) {
    rct_set(r.times, s, rct_get(a->times, b * S + s));
    for (int d = 0; d < D; d++)
      rct_set(r.values, s * D + d, rct_get(a->values, (b * S + s) * D + d));
  }
  for (int64_t t = 0; t < nt; t++) rct_set(r.target_times, t, rct_get(a->target_times, b * T + t));
  return r;
}

static void test_lengths_and_target_lengths(void **state) {
  (void)state;
  static const robocache_dtype tds[2] = {ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64};
  for (int i = 0; i < 2; i++)
    for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_SLERP; m++)
      for (int ref = 0; ref < 2; ref++) {
        rct_resample_args a = ragged_problem(tds[i], m);
        for (int64_t j = 0; j < B * T * D; j++) rct_set(a.out, j, 123);
        for (int64_t j = 0; j < B * T; j++) rct_set(a.valid, j, 7);
        assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
        for (int64_t b = 0; b < B; b++) {
          rct_resample_args r = row_problem(&a, b);
          int64_t nt = rct_get_i64(a.target_lengths, b);
          if (nt > 0) assert_int_equal(rct_resample(&r, ref, NULL, 0), ROBOCACHE_OK);
          for (int64_t t = 0; t < T; t++) {
            assert_int_equal(rct_get(a.valid, b * T + t), t < nt ? rct_get(r.valid, t) : 0);
            for (int d = 0; d < D; d++) {
              double got = rct_get(a.out, (b * T + t) * D + d);
              double expect = t < nt ? rct_get(r.out, t * D + d) : 0;
              assert_false(isnan(got));
              assert_memory_equal(&got, &expect, sizeof got);
            }
          }
          rct_resample_args_free(&r);
        }
        rct_resample_args_free(&a);
      }
}

/* A copy of t (same dtype and values) laid out with every stride multiplied
 * by `spread` (holes between elements), or transposed on the last two axes
 * when spread is 0. */
static rct_tensor *restrided(const rct_tensor *t, int64_t spread) {
  int nd = t->t.ndim;
  int64_t strides[3], s = spread ? spread : 1;
  if (spread) {
    for (int i = nd - 1; i >= 0; i--) strides[i] = s, s *= t->shape[i] + 1;
  } else { /* last axis slowest: [..., a, b] stored as [b, ..., a] */
    for (int i = nd - 2; i >= 0; i--) strides[i] = s, s *= t->shape[i];
    strides[nd - 1] = s;
  }
  rct_tensor *r = rct_make_strided((robocache_dtype)t->t.dtype, nd, t->shape, strides);
  rct_copy(r, t);
  return r;
}

static void test_strided_tensors_match_contiguous(void **state) {
  (void)state;
  for (int spread = 0; spread <= 3; spread += 3)
    for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_SLERP; m++)
      for (int ref = 0; ref < 2; ref++) {
        rct_resample_args a = ragged_problem(ROBOCACHE_DTYPE_I64, m);
        assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
        rct_resample_args s = {.opt = a.opt};
        s.times = restrided(a.times, spread);
        s.values = restrided(a.values, spread);
        s.target_times = restrided(a.target_times, spread);
        s.lengths = restrided(a.lengths, spread + 2);
        s.target_lengths = restrided(a.target_lengths, spread + 2);
        s.out = restrided(a.out, spread);
        s.valid = restrided(a.valid, spread);
        assert_int_equal(rct_resample(&s, ref, NULL, 0), ROBOCACHE_OK);
        rct_assert_bits_equal(s.out, a.out, "strided out");
        rct_assert_bits_equal(s.valid, a.valid, "strided valid");
        rct_resample_args_free(&s);
        rct_resample_args_free(&a);
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lengths_and_target_lengths),
      cmocka_unit_test(test_strided_tensors_match_contiguous),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
