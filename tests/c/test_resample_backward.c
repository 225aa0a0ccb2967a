/* resample_backward is the transpose of the forward: the adjoint identity
 * <g, resample(v)> == <resample_backward(g), v> on random problems, the
 * dense weight matrix W (forward of the identity) equals the transpose of the
 * backward of the identity, reference vs optimised on random inputs, and the
 * optimised backward is bitwise identical for any thread count. */
#include "support.h"

#include <math.h>

/* Random problem; values / grads of dtype dt; out-of-range fill value 0 so
 * that the forward is linear in the values; |w| <= 3. */
static rct_resample_args random_problem(rct_rng *r, robocache_dtype dt, int method, int policy) {
  const int64_t B = rct_rng_int(r, 1, 4), S = rct_rng_int(r, 1, 25), T = rct_rng_int(r, 1, 40),
                D = rct_rng_int(r, 1, 6);
  rct_resample_args a = rct_resample_args_make(ROBOCACHE_DTYPE_I64, dt, B, S, T, D, 0);
  a.opt.method = method;
  a.opt.extrapolate = policy;
  a.opt.fill_value = 0;
  if (rct_rng_int(r, 0, 1)) a.opt.max_gap_ns = rct_rng_int(r, 10, 100);
  if (method != ROBOCACHE_LINEAR && rct_rng_int(r, 0, 1))
    a.opt.tolerance_ns = rct_rng_int(r, 5, 50);
  rct_fill_times(a.times, r, 0, 1, 100);
  rct_fill_uniform(a.values, r, -1, 1);
  rct_random_lengths(&a, r);
  /* targets within two edge intervals of the samples: |w| <= 3 */
  for (int64_t b = 0; b < B; b++) {
    int64_t n = a.lengths ? rct_get_i64(a.lengths, b) : S;
    int64_t t0 = rct_get_i64(a.times, b * S), tl = rct_get_i64(a.times, b * S + n - 1);
    int64_t e0 = n > 1 ? rct_get_i64(a.times, b * S + 1) - t0 : 50;
    int64_t el = n > 1 ? tl - rct_get_i64(a.times, b * S + n - 2) : 50;
    for (int64_t t = 0; t < T; t++)
      rct_set_i64(a.target_times, b * T + t, rct_rng_int(r, t0 - 2 * e0, tl + 2 * el));
  }
  return a;
}

static double dot(const rct_tensor *x, const rct_tensor *y) {
  double s = 0;
  for (int64_t i = 0; i < rct_numel(x); i++) s += rct_get(x, i) * rct_get(y, i);
  return s;
}

static void test_adjoint_identity(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(42);
  for (int rep = 0; rep < 60; rep++)
    for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_NEXT; m++)
      for (int p = ROBOCACHE_EXTRAP_CLAMP; p <= ROBOCACHE_EXTRAP_EXTRAPOLATE; p++)
        for (int ref = 0; ref < 2; ref++) {
          rct_resample_args a = random_problem(&r, ROBOCACHE_DTYPE_F64, m, p);
          assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
          rct_tensor *y = a.out, *v = a.values;
          rct_tensor *g = rct_make(ROBOCACHE_DTYPE_F64, 3, y->shape);
          rct_tensor *gv = rct_make(ROBOCACHE_DTYPE_F64, 3, v->shape);
          rct_fill_uniform(g, &r, -1, 1);
          rct_fill_uniform(gv, &r, 5, 6); /* must be overwritten */
          a.out = g, a.values = gv;
          assert_int_equal(rct_resample_backward(&a, ref, NULL, 0), ROBOCACHE_OK);
          double lhs = dot(g, y), rhs = dot(gv, v);
          if (!(fabs(lhs - rhs) <= 1e-12 * (1 + fabs(lhs))))
            fail_msg("rep %d method %d policy %d ref %d: <g, Wv> = %.17g, <W^T g, v> = %.17g", rep,
                     m, p, ref, lhs, rhs);
          a.out = y, a.values = v;
          rct_free(g), rct_free(gv);
          rct_resample_args_free(&a);
        }
}

/* W[t][s] from the forward of the identity (D = S channels), and from the
 * backward of the identity (D = T channels): the same numbers. */
static void test_dense_weight_matrix(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(4);
  for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_NEXT; m++)
    for (int p = ROBOCACHE_EXTRAP_CLAMP; p <= ROBOCACHE_EXTRAP_EXTRAPOLATE; p++)
      for (int ref = 0; ref < 2; ref++) {
        const int64_t S = 12, T = 30;
        rct_resample_args a =
            rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64, 1, S, T, S, 0);
        a.opt.method = m, a.opt.extrapolate = p, a.opt.fill_value = 0, a.opt.max_gap_ns = 150;
        rct_fill_times(a.times, &r, 0, 20, 200);
        for (int64_t t = 0; t < T; t++)
          rct_set_i64(a.target_times, t, rct_rng_int(&r, -100, rct_get_i64(a.times, S - 1) + 100));
        for (int64_t s = 0; s < S; s++) rct_set(a.values, s * S + s, 1);
        assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
        rct_tensor *w = a.out, *eye_s = a.values;
        a.out = rct_make3(ROBOCACHE_DTYPE_F64, 1, T, T);
        a.values = rct_make3(ROBOCACHE_DTYPE_F64, 1, S, T);
        for (int64_t t = 0; t < T; t++) rct_set(a.out, t * T + t, 1);
        assert_int_equal(rct_resample_backward(&a, ref, NULL, 0), ROBOCACHE_OK);
        double total = 0;
        for (int64_t t = 0; t < T; t++)
          for (int64_t s = 0; s < S; s++) {
            total += fabs(rct_get(w, t * S + s));
            assert_float_equal(rct_get(a.values, s * T + t), rct_get(w, t * S + s), 1e-15);
          }
        assert_true(total > 1); /* not all targets filled */
        rct_free(w), rct_free(eye_s);
        rct_resample_args_free(&a);
      }
}

static void test_reference_vs_optimised(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(77);
  for (int rep = 0; rep < 200; rep++) {
    int m = (int)rct_rng_int(&r, ROBOCACHE_LINEAR, ROBOCACHE_NEXT);
    int p = (int)rct_rng_int(&r, ROBOCACHE_EXTRAP_CLAMP, ROBOCACHE_EXTRAP_EXTRAPOLATE);
    robocache_dtype dt = rct_rng_int(&r, 0, 1) ? ROBOCACHE_DTYPE_F32 : ROBOCACHE_DTYPE_F64;
    rct_resample_args a = random_problem(&r, dt, m, p);
    rct_fill_uniform(a.out, &r, -1, 1); /* grad_out */
    rct_tensor *gv_ref = rct_make(dt, 3, a.values->shape);
    assert_int_equal(rct_resample_backward(&a, 0, NULL, 0), ROBOCACHE_OK);
    rct_tensor *gv_cpu = a.values;
    a.values = gv_ref;
    assert_int_equal(rct_resample_backward(&a, 1, NULL, 0), ROBOCACHE_OK);
    /* |w| <= 3 per contribution, at most T contributions of |g| <= 1 */
    double u = dt == ROBOCACHE_DTYPE_F32 ? 0x1p-24 : 0x1p-53;
    rct_assert_close(gv_cpu, gv_ref, 16 * u * (double)a.out->shape[1] * 3, 0, "backward");
    a.values = gv_cpu;
    rct_free(gv_ref);
    rct_resample_args_free(&a);
  }
}

static void test_thread_count_does_not_change_bits(void **state) {
  (void)state;
  rct_rng r = rct_rng_seed(5);
  rct_resample_args a =
      random_problem(&r, ROBOCACHE_DTYPE_F32, ROBOCACHE_LINEAR, ROBOCACHE_EXTRAP_EXTRAPOLATE);
  rct_fill_uniform(a.out, &r, -1, 1);
  rct_tensor *gv[3];
  for (int n = 0; n < 3; n++) {
    gv[n] = rct_make(ROBOCACHE_DTYPE_F32, 3, a.values->shape);
    robocache_ctx *ctx = NULL;
    assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
    assert_int_equal(robocache_ctx_set_num_threads(ctx, n), ROBOCACHE_OK);
    assert_int_equal(robocache_resample_backward(
                         ctx, &a.out->t, &a.times->t, a.lengths ? &a.lengths->t : NULL,
                         &a.target_times->t, a.target_lengths ? &a.target_lengths->t : NULL, &a.opt,
                         &gv[n]->t),
                     ROBOCACHE_OK);
    robocache_ctx_free(ctx);
  }
  rct_assert_bits_equal(gv[1], gv[0], "1 thread vs default");
  rct_assert_bits_equal(gv[2], gv[0], "2 threads vs default");
  for (int n = 0; n < 3; n++) rct_free(gv[n]);
  rct_resample_args_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_adjoint_identity),
      cmocka_unit_test(test_dense_weight_matrix),
      cmocka_unit_test(test_reference_vs_optimised),
      cmocka_unit_test(test_thread_count_does_not_change_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
