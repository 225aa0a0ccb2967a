/* align with K = 3 streams (different S, D, dtypes, methods and options)
 * equals 3 separate resample calls writing slices of out and valid, on both
 * backends, for float32 / bfloat16 out and a transposed valid layout; the
 * EXTRAP_ERROR target reported is the first in (row, target, stream) order. */
#include "support.h"

#include <stdio.h>
#include <string.h>

enum { B = 3, T = 40, K = 3 };

typedef struct stream_data {
  rct_tensor *values, *times, *lengths;
  robocache_interp_options opt;
  const char *name;
} stream_data;

static const int64_t Ss[K] = {50, 20, 10}, Ds[K] = {6, 4, 1};
static const robocache_dtype vdts[K] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F64,
                                        ROBOCACHE_DTYPE_F16};

/* Stream s resampled alone onto the targets (reference backend when ref,
 * else the default one) into a fresh out [B,T,D] of odt and valid [B,T]. */
static rct_resample_args resample_alone(const stream_data *s, rct_tensor *targets, rct_tensor *tlen,
                                        robocache_dtype odt, int64_t D, int ref) {
  rct_resample_args a = {.values = s->values,
                         .times = s->times,
                         .lengths = s->lengths,
                         .target_times = targets,
                         .target_lengths = tlen,
                         .opt = s->opt};
  a.out = rct_make3(odt, B, T, D);
  a.valid = rct_make2(ROBOCACHE_DTYPE_U8, B, T);
  assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
  return a;
}

static void make_streams(stream_data *s, rct_tensor **targets, rct_tensor **tlen) {
  rct_rng r = rct_rng_seed(31);
  static const char *names[K] = {"imu", "pose", "gripper"};
  for (int k = 0; k < K; k++) {
    s[k].name = names[k];
    s[k].times = rct_make2(ROBOCACHE_DTYPE_I64, B, Ss[k]);
    s[k].values = rct_make3(vdts[k], B, Ss[k], Ds[k]);
    s[k].lengths = NULL;
    rct_fill_times(s[k].times, &r, rct_rng_int(&r, 0, 3000), 500, 5000 * (k + 1));
    rct_fill_uniform(s[k].values, &r, -2, 2);
    robocache_interp_options_init(&s[k].opt);
  }
  s[0].lengths = rct_make1(ROBOCACHE_DTYPE_I64, B);
  for (int b = 0; b < B; b++) rct_set_i64(s[0].lengths, b, Ss[0] - 7 * b);
  s[1].opt.method = ROBOCACHE_SLERP;
  s[1].opt.extrapolate = ROBOCACHE_EXTRAP_EXTRAPOLATE;
  s[1].opt.time_offset_ns = 1500;
  s[1].opt.quat_order = ROBOCACHE_QUAT_WXYZ;
  s[2].opt.method = ROBOCACHE_PREVIOUS;
  s[2].opt.extrapolate = ROBOCACHE_EXTRAP_FILL;
  s[2].opt.max_gap_ns = 9000;
  *targets = rct_make2(ROBOCACHE_DTYPE_I64, B, T);
  for (int64_t i = 0; i < B * T; i++) rct_set_i64(*targets, i, rct_rng_int(&r, -1000, 120000));
  *tlen = rct_make1(ROBOCACHE_DTYPE_I64, B);
  for (int b = 0; b < B; b++) rct_set_i64(*tlen, b, T - 5 * b);
}

static robocache_status run_align(int ref, const stream_data *s, const rct_tensor *targets,
                                  const rct_tensor *tlen, rct_tensor *out, rct_tensor *valid,
                                  char *msg, size_t msg_len) {
  robocache_stream st[K];
  for (int k = 0; k < K; k++) {
    st[k].name = s[k].name;
    st[k].values = &s[k].values->t;
    st[k].times = &s[k].times->t;
    st[k].lengths = s[k].lengths ? &s[k].lengths->t : NULL;
    st[k].options = s[k].opt;
  }
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  robocache_ctx_set_force_reference(ctx, ref);
  robocache_status status =
      robocache_align(ctx, st, K, &targets->t, &tlen->t, &out->t, valid ? &valid->t : NULL);
  snprintf(msg, msg_len, "%s", robocache_ctx_error_message(ctx));
  robocache_ctx_free(ctx);
  return status;
}

static void free_streams(stream_data *s) {
  for (int k = 0; k < K; k++) rct_free(s[k].values), rct_free(s[k].times), rct_free(s[k].lengths);
}

static void align_case(int ref, robocache_dtype odt) {
  stream_data s[K];
  rct_tensor *targets, *tlen;
  make_streams(s, &targets, &tlen);
  const int64_t Dout = Ds[0] + Ds[1] + Ds[2];
  rct_tensor *out = rct_make3(odt, B, T, Dout);
  /* valid [B,T,K] stored stream-major: strides (T, 1, B*T) */
  rct_tensor *valid =
      rct_make_strided(ROBOCACHE_DTYPE_U8, 3, (int64_t[]){B, T, K}, (int64_t[]){T, 1, B * T});
  char msg[512];
  assert_int_equal(run_align(ref, s, targets, tlen, out, valid, msg, sizeof msg), ROBOCACHE_OK);
  int64_t col = 0;
  int any_valid = 0, any_invalid = 0;
  for (int k = 0; k < K; k++) {
    rct_resample_args a = resample_alone(&s[k], targets, tlen, odt, Ds[k], ref);
    for (int64_t i = 0; i < B * T; i++) {
      assert_int_equal(rct_get(valid, i * K + k), rct_get(a.valid, i));
      any_valid |= rct_get(a.valid, i) == 1, any_invalid |= rct_get(a.valid, i) == 0;
      for (int64_t d = 0; d < Ds[k]; d++)
        if (rct_get_bits(out, i * Dout + col + d) != rct_get_bits(a.out, i * Ds[k] + d))
          fail_msg("ref=%d %s stream %d: target %lld channel %lld differs", ref,
                   robocache_dtype_name(odt), k, (long long)i, (long long)d);
    }
    col += Ds[k];
    rct_free(a.out), rct_free(a.valid);
  }
  assert_true(any_valid && any_invalid);
  rct_free(out), rct_free(valid), rct_free(targets), rct_free(tlen);
  free_streams(s);
}

static void test_align_equals_separate_resamples(void **state) {
  (void)state;
  for (int ref = 0; ref < 2; ref++) {
    align_case(ref, ROBOCACHE_DTYPE_F32);
    align_case(ref, ROBOCACHE_DTYPE_BF16);
  }
}

static void test_align_error_order(void **state) {
  (void)state;
  stream_data s[K];
  rct_tensor *targets, *tlen;
  make_streams(s, &targets, &tlen);
  rct_tensor *out = rct_make3(ROBOCACHE_DTYPE_F32, B, T, Ds[0] + Ds[1] + Ds[2]);
  for (int k = 0; k < K; k++) s[k].opt.extrapolate = ROBOCACHE_EXTRAP_ERROR;
  s[1].opt.time_offset_ns = 0;
  s[2].opt.max_gap_ns = 0;
  /* every target in range of every stream, then two offending targets */
  int64_t lo = 0, hi = INT64_MAX;
  for (int k = 0; k < K; k++)
    for (int b = 0; b < B; b++) {
      int64_t n = s[k].lengths ? rct_get_i64(s[k].lengths, b) : Ss[k];
      lo = rct_get_i64(s[k].times, b * Ss[k]) > lo ? rct_get_i64(s[k].times, b * Ss[k]) : lo;
      int64_t last = rct_get_i64(s[k].times, b * Ss[k] + n - 1);
      hi = last < hi ? last : hi;
    }
  for (int64_t i = 0; i < B * T; i++) rct_set_i64(targets, i, lo + (hi - lo) * (i % T) / T);
  char msg[2][512];
  for (int ref = 0; ref < 2; ref++)
    assert_int_equal(run_align(ref, s, targets, tlen, out, NULL, msg[ref], 512), ROBOCACHE_OK);
  int64_t last2 = rct_get_i64(s[2].times, 1 * Ss[2] + Ss[2] - 1);
  rct_set_i64(targets, 1 * T + 9, last2 + 1); /* stream 2 only (sparsest) */
  rct_set_i64(targets, 1 * T + 4, -5000);     /* every stream: reported as stream 0 */
  for (int ref = 0; ref < 2; ref++) {
    assert_int_equal(run_align(ref, s, targets, tlen, out, NULL, msg[ref], 512),
                     ROBOCACHE_INVALID_ARGUMENT);
    assert_string_equal(msg[ref],
                        "stream 0 (imu): target out of range: row 1, index 4 (time -5000 ns)");
  }
  rct_set_i64(targets, 1 * T + 4, lo);
  for (int ref = 0; ref < 2; ref++) {
    assert_int_equal(run_align(ref, s, targets, tlen, out, NULL, msg[ref], 512),
                     ROBOCACHE_INVALID_ARGUMENT);
    assert_non_null(strstr(msg[ref], "stream 2 (gripper): target out of range: row 1, index 9"));
  }
  rct_free(out), rct_free(targets), rct_free(tlen);
  free_streams(s);
}

/* More streams than robocache_align keeps on the stack (16): the K = 3
 * streams repeated 20 times, each slice equal to its own resample. */
static void test_align_many_streams(void **state) {
  (void)state;
  enum { MANY = 20 };
  stream_data s[K];
  rct_tensor *targets, *tlen;
  make_streams(s, &targets, &tlen);
  robocache_stream st[MANY];
  int64_t Dout = 0;
  for (int j = 0; j < MANY; j++) {
    const stream_data *d = &s[j % K];
    st[j] = (robocache_stream){.name = d->name,
                               .values = &d->values->t,
                               .times = &d->times->t,
                               .lengths = d->lengths ? &d->lengths->t : NULL,
                               .options = d->opt};
    Dout += Ds[j % K];
  }
  rct_tensor *out = rct_make3(ROBOCACHE_DTYPE_F32, B, T, Dout);
  rct_tensor *valid = rct_make3(ROBOCACHE_DTYPE_U8, B, T, MANY);
  assert_int_equal(robocache_align(NULL, st, MANY, &targets->t, &tlen->t, &out->t, &valid->t),
                   ROBOCACHE_OK);
  int64_t col = 0;
  for (int j = 0; j < MANY; j++) {
    int k = j % K;
    rct_resample_args a = resample_alone(&s[k], targets, tlen, ROBOCACHE_DTYPE_F32, Ds[k], 0);
    for (int64_t i = 0; i < B * T; i++) {
      assert_int_equal(rct_get(valid, i * MANY + j), rct_get(a.valid, i));
      for (int64_t d = 0; d < Ds[k]; d++)
        assert_true(rct_get_bits(out, i * Dout + col + d) == rct_get_bits(a.out, i * Ds[k] + d));
    }
    col += Ds[k];
    rct_free(a.out), rct_free(a.valid);
  }
  rct_free(out), rct_free(valid), rct_free(targets), rct_free(tlen);
  free_streams(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_align_equals_separate_resamples),
      cmocka_unit_test(test_align_many_streams),
      cmocka_unit_test(test_align_error_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
