/* The arithmetic of resample at the extremes (docs/design.md, "Numerics"):
 * linear targets are torch.lerp's a + w (b - a) (w < 0.5) or b - (b - a)
 * (1 - w) in float32 (float64 when values or out are float64) with w rounded
 * first, and (1 - w) a + w b where that is not finite; the backward sums in
 * float64 and rounds once. The CPU and
 * reference backends give the same bits, which are those of the rule
 * evaluated here in the test (float16 values with float32 out, weights
 * rounding to 1 next to +-3e38, infinities, bfloat16 overflow, cancelling
 * gradients, subnormal time steps); slerp's choice of arc at dot ~ 0. Also:
 * D = 0 channels with NULL data. */
#include "support.h"

#include <math.h>
#include <string.h>

/* The rule in float32, each operation rounded (volatile: no contraction). */
static float rule_f32(float a, float b, double w64) {
  volatile float w = (float)w64, d = b - a, c = 1.0f - w, p = w < 0.5f ? w * d : d * c;
  volatile float r = w < 0.5f ? a + p : b - p;
  if (isfinite(r)) return r;
  if (w == 0.0f) return a;
  if (w == 1.0f) return b;
  volatile float x = c * a, y = w * b, s = x + y;
  return s;
}

/* One row of two samples at 0 and 1e9 ns with values a, b; targets at
 * x[j] ns (weight x / 1e9 exactly as a double). */
static rct_resample_args two_samples(robocache_dtype vd, robocache_dtype od, double a, double b,
                                     const int64_t *x, int64_t T) {
  rct_resample_args r = rct_resample_args_make(ROBOCACHE_DTYPE_I64, vd, 1, 2, T, 1, 1);
  rct_free(r.out);
  r.out = rct_make3(od, 1, T, 1);
  rct_set_i64(r.times, 1, 1000000000);
  rct_set(r.values, 0, a);
  rct_set(r.values, 1, b);
  for (int64_t j = 0; j < T; j++) rct_set_i64(r.target_times, j, x[j]);
  r.opt.extrapolate = ROBOCACHE_EXTRAP_EXTRAPOLATE;
  return r;
}

/* Both backends give, for every target, the bits of the rule rounded to
 * out's dtype. */
static void expect_rule(rct_resample_args *r, const char *what) {
  const int64_t T = r->target_times->shape[1];
  const float a = (float)rct_get(r->values, 0), b = (float)rct_get(r->values, 1);
  rct_tensor *want = rct_make3((robocache_dtype)r->out->t.dtype, 1, T, 1);
  for (int64_t j = 0; j < T; j++)
    rct_set(want, j, rule_f32(a, b, (double)rct_get_i64(r->target_times, j) / 1e9));
  for (int ref = 0; ref < 2; ref++) {
    char msg[512];
    if (rct_resample(r, ref, msg, sizeof msg) != ROBOCACHE_OK) fail_msg("%s: %s", what, msg);
    for (int64_t j = 0; j < T; j++) {
      const double got = rct_get(r->out, j), exp = rct_get(want, j);
      if (rct_get_bits(r->out, j) != rct_get_bits(want, j) && !(isnan(got) && isnan(exp)))
        fail_msg("%s, %s, target %lld: %.9g, the rule gives %.9g", what, ref ? "reference" : "cpu",
                 (long long)j, got, exp);
    }
  }
  rct_free(want);
}

/* Named extremes, with the value the rule gives worked out by hand (to a few
 * float32 ulps: the bits are those of expect_rule). */
static void test_extremes(void **state) {
  (void)state;
  /* weights 0.5, 1 - 1e-9 (rounds to 1 in float32), 0.25, 2 (extrapolated) */
  const int64_t x[4] = {500000000, 999999999, 250000000, 2000000000};
  struct {
    double a, b, want[4];
  } cases[] = {
      /* b - a overflows: the two-term form, b itself at w == 1 */
      {-3e38, 3e38, {0.0, 3e38, -1.5e38, INFINITY}},
      {3e38f, -3e38f, {0.0, -3e38f, 1.5e38f, -INFINITY}},
      /* infinities: the infinity, NaN for opposite ones */
      {INFINITY, INFINITY, {INFINITY, INFINITY, INFINITY, NAN}},
      {INFINITY, 1.0, {INFINITY, 1.0, INFINITY, -INFINITY}},
      {-INFINITY, INFINITY, {NAN, INFINITY, NAN, INFINITY}},
      {1.0, NAN, {NAN, NAN, NAN, NAN}},
  };
  const robocache_dtype pairs[3][2] = {{ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F32},
                                       {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_BF16},
                                       {ROBOCACHE_DTYPE_BF16, ROBOCACHE_DTYPE_F32}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int p = 0; p < 3; p++) {
      /* bfloat16 holds +-3e38 only approximately: the rule is checked with
       * the stored values; the hand-worked values for float32 pairs */
      rct_resample_args r = two_samples(pairs[p][0], pairs[p][1], cases[c].a, cases[c].b, x, 4);
      expect_rule(&r, "extreme");
      if (p == 0)
        for (int j = 0; j < 4; j++) {
          const double got = rct_get(r.out, j), want = (double)(float)cases[c].want[j];
          if (!(got == want || (isnan(got) && isnan(want)) ||
                (isfinite(want) && fabs(got - want) <= 0x1p-22 * fabs(want))))
            fail_msg("case %zu target %d: %.9g, expected %.9g", c, j, got, want);
        }
      rct_resample_args_free(&r);
    }
}

/* float16 / bfloat16 values near their largest and smallest magnitudes into
 * float32, float16 and bfloat16 out (bfloat16 overflow to inf included), with
 * weights near 0, 1 and beyond: both backends follow the rule bit for bit. */
static void test_random_extremes(void **state) {
  (void)state;
  static const double special[] = {65504,   -65504,   6e-8,  -6e-8,  1,       -1,  0,    -0.0,
                                   3.38e38, -3.38e38, 1e-40, 3.4e38, -3.4e38, 0.1, 1e30, 3e38};
  const robocache_dtype dt[3] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F16, ROBOCACHE_DTYPE_BF16};
  rct_rng r = rct_rng_seed(7);
  enum { T = 32 };
  int64_t x[T];
  for (int rep = 0; rep < 300; rep++) {
    const double a = special[rct_rng_int(&r, 0, 15)], b = special[rct_rng_int(&r, 0, 15)];
    for (int j = 0; j < T; j++) {
      const int64_t near[6] = {1, 999999999, 999999990, 3, 2000000000, -1000000001};
      x[j] = j % 2 ? near[rct_rng_int(&r, 0, 5)] : rct_rng_int(&r, -2000000000, 3000000000);
    }
    rct_resample_args args =
        two_samples(dt[rct_rng_int(&r, 0, 2)], dt[rct_rng_int(&r, 0, 2)], a, b, x, T);
    expect_rule(&args, "random");
    rct_resample_args_free(&args);
  }
}

/* Slerp between two unit quaternions almost 90 degrees apart: their dot
 * product is +7.5e-9 summed in float32 but -5.1e-9 in float64; every backend
 * decides the arc (q1 or -q1) on the float64 sum, so the CPU's float32 slerp
 * stays within the slerp bound of the reference's float64 one instead of
 * taking the other arc. */
static void test_slerp_near_orthogonal(void **state) {
  (void)state;
  const float q0[4] = {0.5f, 0.5f, 0.5f, 0.5f},
              q1[4] = {-0.0122092022f, 0.604355514f, -0.77528435f, 0.183138028f};
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F32, 1, 2, 3, 4, 0);
  rct_set_i64(a.times, 1, 1000);
  for (int c = 0; c < 4; c++) {
    rct_set(a.values, c, q0[c]);
    rct_set(a.values, 4 + c, q1[c]);
  }
  const int64_t x[3] = {250, 500, 999};
  for (int j = 0; j < 3; j++) rct_set_i64(a.target_times, j, x[j]);
  a.opt.method = ROBOCACHE_SLERP;
  rct_tensor *ref = rct_make3(ROBOCACHE_DTYPE_F32, 1, 3, 4);
  assert_int_equal(rct_resample(&a, 1, NULL, 0), ROBOCACHE_OK);
  rct_copy(ref, a.out);
  assert_int_equal(rct_resample(&a, 0, NULL, 0), ROBOCACHE_OK);
  rct_assert_close(a.out, ref, 2e-6 * 2, 0x1p-23, "slerp near 90 degrees");
  /* near w = 1 the result is the reference's choice, -q1 (dot < 0) */
  for (int c = 0; c < 4; c++) assert_float_equal(rct_get(a.out, 8 + c), -q1[c], 2e-3);
  rct_free(ref);
  rct_resample_args_free(&a);
}

/* The backward sums in float64 and rounds once: 1e8 + 1 - 1e8 is 1 (float32
 * sums would give 0), and a weight of 1/3 from subnormal time steps (float64
 * seconds 0, 1.5e-323; target 5e-324) gives (1 - w) g and w g rounded from
 * float64. */
static void test_backward_sums(void **state) {
  (void)state;
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F32, 1, 2, 3, 1, 0);
  rct_set_i64(a.times, 1, 10);
  const double g[3] = {1e8, 1, -1e8};
  for (int j = 0; j < 3; j++) rct_set(a.out, j, g[j]); /* grad_out; targets at t = 0 */
  for (int ref = 0; ref < 2; ref++) {
    assert_int_equal(rct_resample_backward(&a, ref, NULL, 0), ROBOCACHE_OK);
    assert_float_equal(rct_get(a.values, 0), 1.0, 0);
    assert_float_equal(rct_get(a.values, 1), 0.0, 0);
  }
  rct_resample_args_free(&a);

  a = rct_resample_args_make(ROBOCACHE_DTYPE_F64, ROBOCACHE_DTYPE_F32, 1, 2, 1, 1, 0);
  rct_set(a.times, 0, 0.0);
  rct_set(a.times, 1, 1.5e-323);
  rct_set(a.target_times, 0, 5e-324);
  rct_set(a.out, 0, 3.0);
  const double w = 5e-324 / 1.5e-323;
  for (int ref = 0; ref < 2; ref++) {
    assert_int_equal(rct_resample_backward(&a, ref, NULL, 0), ROBOCACHE_OK);
    assert_float_equal(rct_get(a.values, 0), (double)(float)((1.0 - w) * 3.0), 0);
    assert_float_equal(rct_get(a.values, 1), (double)(float)(w * 3.0), 0);
  }
  rct_resample_args_free(&a);
}

/* D = 0 channels: values, out, grad_out and grad_values with NULL data (the
 * API allows it for empty tensors); valid is still computed. */
static void test_zero_channels_null_data(void **state) {
  (void)state;
  int64_t times[6] = {0, 10, 20, 0, 10, 20}, targets[4] = {-5, 5, 15, 25};
  const int64_t vshape[3] = {2, 3, 0}, oshape[3] = {2, 2, 0}, tshape[2] = {2, 3},
                xshape[2] = {2, 2}, bshape[2] = {2, 2};
  uint8_t valid[4];
  robocache_tensor values = {NULL, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 3, vshape, NULL};
  robocache_tensor out = {NULL, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 3, oshape, NULL};
  robocache_tensor t = {times, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 2, tshape, NULL};
  robocache_tensor x = {targets, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 2, xshape, NULL};
  robocache_tensor v = {valid, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_U8, 2, bshape, NULL};
  for (int ref = 0; ref < 2; ref++) {
    robocache_ctx *ctx = NULL;
    assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
    robocache_ctx_set_force_reference(ctx, ref);
    for (int m = ROBOCACHE_LINEAR; m <= ROBOCACHE_NEXT; m++) {
      robocache_interp_options o;
      robocache_interp_options_init(&o);
      o.method = m;
      memset(valid, 7, sizeof valid);
      assert_int_equal(robocache_resample(ctx, &values, &t, NULL, &x, NULL, &o, &out, &v),
                       ROBOCACHE_OK);
      const uint8_t want[4] = {0, 1, 1, 0}; /* -5 and 25 outside 0..20 */
      assert_memory_equal(valid, want, 4);
      assert_int_equal(robocache_resample_backward(ctx, &out, &t, NULL, &x, NULL, &o, &values),
                       ROBOCACHE_OK);
    }
    robocache_ctx_free(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_extremes),
      cmocka_unit_test(test_random_extremes),
      cmocka_unit_test(test_slerp_near_orthogonal),
      cmocka_unit_test(test_backward_sums),
      cmocka_unit_test(test_zero_channels_null_data),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
