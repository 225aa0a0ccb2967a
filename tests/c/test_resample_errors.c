/* Every bad input of resample / resample_backward / align: the status and
 * the content of the message (which argument, row, index). */
#include "support.h"

#include <math.h>
#include <string.h>

enum { B = 2, S = 4, T = 3, D = 4 };

static rct_resample_args base(robocache_dtype td) {
  rct_resample_args a = rct_resample_args_make(td, ROBOCACHE_DTYPE_F32, B, S, T, D, 1);
  for (int64_t i = 0; i < B * S; i++) rct_set(a.times, i, (double)(i % S));
  for (int64_t i = 0; i < B * T; i++) rct_set(a.target_times, i, (double)(i % T));
  return a;
}

/* Both backends must fail with `status` and a message containing each of
 * the NULL-terminated needles. */
static void expect_error(const rct_resample_args *a, robocache_status status, ...) {
  for (int ref = 0; ref < 2; ref++) {
    char msg[512];
    robocache_status s = rct_resample(a, ref, msg, sizeof msg);
    if (s != status)
      fail_msg("expected %s, got %s (\"%s\")", robocache_status_name(status),
               robocache_status_name(s), msg);
    va_list ap;
    va_start(ap, status);
    for (const char *needle; (needle = va_arg(ap, const char *));)
      if (!strstr(msg, needle)) fail_msg("message \"%s\" lacks \"%s\"", msg, needle);
    va_end(ap);
  }
}

static void test_base_problem_is_valid(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  for (int ref = 0; ref < 2; ref++) assert_int_equal(rct_resample(&a, ref, NULL, 0), 0);
  rct_resample_args_free(&a);
}

static void test_bad_times(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  rct_set_i64(a.times, 1 * S + 2, 1); /* row 1: 0 1 1 3 */
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "stream 0 (values)", "times not increasing",
               "row 1, index 2", NULL);
  rct_set_i64(a.times, 1 * S + 2, 0); /* decreasing */
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "times not increasing", "row 1, index 2", NULL);
  rct_resample_args_free(&a);
  a = base(ROBOCACHE_DTYPE_F64);
  rct_set(a.times, 0 * S + 3, NAN);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "time is NaN", "row 0, index 3", NULL);
  rct_set(a.times, 0 * S + 3, INFINITY);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "time is infinite", "row 0, index 3", NULL);
  rct_set(a.times, 0 * S + 3, 3);
  rct_set(a.target_times, 1 * T + 0, NAN);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "target_times", "NaN", "row 1, index 0", NULL);
  rct_resample_args_free(&a);
  a = base(ROBOCACHE_DTYPE_F32);
  rct_set(a.times, 1 * S + 1, 5);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "times not increasing", "row 1, index 2", NULL);
  rct_resample_args_free(&a);
}

/* int64 ns times and offsets must stay within +-2^62 ns (so that no
 * difference of two times overflows): times, times after time_offset_ns,
 * the offset itself, target times. */
static void test_time_range(void **state) {
  (void)state;
  const int64_t limit = (int64_t)1 << 62;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  rct_set_i64(a.times, 1 * S + 3, INT64_MAX);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "stream 0 (values)", "time out of range",
               "row 1, index 3", NULL);
  rct_set_i64(a.times, 1 * S + 3, limit - 1); /* the largest accepted */
  for (int ref = 0; ref < 2; ref++) assert_int_equal(rct_resample(&a, ref, NULL, 0), 0);
  a.opt.time_offset_ns = 1; /* limit - 1 + 1: out of range after the offset */
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "time out of range", "row 1, index 3",
               "time_offset_ns 1", NULL);
  rct_set_i64(a.times, 1 * S + 3, 3);
  a.opt.time_offset_ns = -limit;
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "time_offset_ns", "outside +-2^62", NULL);
  a.opt.time_offset_ns = 0;
  rct_set_i64(a.target_times, 1 * T + 2, INT64_MIN);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "target_times", "out of range", "row 1, index 2",
               NULL);
  rct_resample_args_free(&a);
}

static void test_empty_stream(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  rct_free(a.times), rct_free(a.values);
  a.times = rct_make2(ROBOCACHE_DTYPE_I64, B, 0);
  a.values = rct_make3(ROBOCACHE_DTYPE_F32, B, 0, D);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "stream is empty", NULL);
  rct_resample_args_free(&a);
}

/* Replaces *slot by a tensor of another shape / dtype and expects the error. */
static void swap_expect(rct_resample_args *a, rct_tensor **slot, rct_tensor *bad,
                        robocache_status status, const char *n1, const char *n2) {
  rct_tensor *keep = *slot;
  *slot = bad;
  expect_error(a, status, n1, n2, NULL);
  *slot = keep;
  rct_free(bad);
}

static void test_shape_mismatches(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  swap_expect(&a, &a.values, rct_make3(ROBOCACHE_DTYPE_F32, B + 1, S, D),
              ROBOCACHE_INVALID_ARGUMENT, "values", "does not match B = 2");
  swap_expect(&a, &a.values, rct_make2(ROBOCACHE_DTYPE_F32, B, S), ROBOCACHE_INVALID_ARGUMENT,
              "values", "expected 3 dimensions");
  swap_expect(&a, &a.times, rct_make2(ROBOCACHE_DTYPE_I64, B, S + 1), ROBOCACHE_INVALID_ARGUMENT,
              "times", "does not match S of values");
  swap_expect(&a, &a.out, rct_make3(ROBOCACHE_DTYPE_F32, B, T, D + 1), ROBOCACHE_INVALID_ARGUMENT,
              "out", "total channels");
  swap_expect(&a, &a.out, rct_make3(ROBOCACHE_DTYPE_F32, B, T + 1, D), ROBOCACHE_INVALID_ARGUMENT,
              "out", "does not match T = 3");
  swap_expect(&a, &a.valid, rct_make2(ROBOCACHE_DTYPE_U8, B, T + 2), ROBOCACHE_INVALID_ARGUMENT,
              "valid", "does not match T");
  swap_expect(&a, &a.lengths, rct_make1(ROBOCACHE_DTYPE_I64, B + 1), ROBOCACHE_INVALID_ARGUMENT,
              "lengths", "does not match B");
  swap_expect(&a, &a.target_lengths, rct_make1(ROBOCACHE_DTYPE_I64, 1), ROBOCACHE_INVALID_ARGUMENT,
              "target_lengths", "does not match B");
  swap_expect(&a, &a.values, rct_make(ROBOCACHE_DTYPE_F32, 3, (int64_t[]){B, 0, D}),
              ROBOCACHE_INVALID_ARGUMENT, "values", "empty");
  rct_tensor *bad = rct_make3(ROBOCACHE_DTYPE_F32, B, S, D);
  bad->shape[1] = -1;
  swap_expect(&a, &a.values, bad, ROBOCACHE_INVALID_ARGUMENT, "values", "negative size");
  rct_resample_args_free(&a);
}

static void test_dtype_mismatches(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  swap_expect(&a, &a.values, rct_make3(ROBOCACHE_DTYPE_I32, B, S, D), ROBOCACHE_UNSUPPORTED_DTYPE,
              "values", "int32");
  swap_expect(&a, &a.times, rct_make2(ROBOCACHE_DTYPE_F64, B, S), ROBOCACHE_UNSUPPORTED_DTYPE,
              "times", "differs from target_times dtype int64");
  swap_expect(&a, &a.target_times, rct_make2(ROBOCACHE_DTYPE_U8, B, T), ROBOCACHE_UNSUPPORTED_DTYPE,
              "target_times", "uint8");
  swap_expect(&a, &a.out, rct_make3(ROBOCACHE_DTYPE_I64, B, T, D), ROBOCACHE_UNSUPPORTED_DTYPE,
              "out", "int64");
  swap_expect(&a, &a.valid, rct_make2(ROBOCACHE_DTYPE_F32, B, T), ROBOCACHE_UNSUPPORTED_DTYPE,
              "valid", "uint8");
  swap_expect(&a, &a.lengths, rct_make1(ROBOCACHE_DTYPE_F32, B), ROBOCACHE_UNSUPPORTED_DTYPE,
              "lengths", "int64");
  rct_tensor *bad = rct_make3(ROBOCACHE_DTYPE_F32, B, S, D);
  bad->t.dtype = 42;
  swap_expect(&a, &a.values, bad, ROBOCACHE_UNSUPPORTED_DTYPE, "values", "unknown dtype code 42");
  rct_resample_args_free(&a);
}

static void test_device_mismatch(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  a.out->t.device_type = ROBOCACHE_DEVICE_CUDA;
  expect_error(&a, ROBOCACHE_DEVICE_MISMATCH, "out", NULL);
  a.out->t.device_type = ROBOCACHE_DEVICE_CPU;
  a.values->t.device_type = ROBOCACHE_DEVICE_CUDA;
  expect_error(&a, ROBOCACHE_DEVICE_MISMATCH, "values", NULL);
  a.values->t.device_type = ROBOCACHE_DEVICE_CPU;
  a.valid->t.device_id = 1;
  expect_error(&a, ROBOCACHE_DEVICE_MISMATCH, "valid", NULL);
  a.valid->t.device_id = 0;
  a.times->t.device_type = 7;
  expect_error(&a, ROBOCACHE_UNSUPPORTED_DEVICE, "times", NULL);
  a.times->t.device_type = ROBOCACHE_DEVICE_CPU;
  if (!robocache_has_cuda()) { /* all on "CUDA" in a CPU-only build */
    rct_tensor *all[5] = {a.times, a.values, a.target_times, a.out, a.valid};
    for (int i = 0; i < 5; i++) all[i]->t.device_type = ROBOCACHE_DEVICE_CUDA;
    expect_error(&a, ROBOCACHE_UNSUPPORTED_DEVICE, "CUDA", NULL);
    for (int i = 0; i < 5; i++) all[i]->t.device_type = ROBOCACHE_DEVICE_CPU;
  }
  rct_resample_args_free(&a);
}

static void test_bad_options(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  a.opt.method = 9;
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "unknown method 9", NULL);
  robocache_interp_options_init(&a.opt);
  a.opt.extrapolate = -1;
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "unknown extrapolate policy -1", NULL);
  robocache_interp_options_init(&a.opt);
  a.opt.quat_order = 2;
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "unknown quat_order 2", NULL);
  robocache_interp_options_init(&a.opt);
  a.opt.tolerance_ns = 5;
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "tolerance", "not linear", NULL);
  a.opt.method = ROBOCACHE_SLERP;
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "tolerance", "not slerp", NULL);
  robocache_interp_options_init(&a.opt);
  a.opt.method = ROBOCACHE_SLERP;
  swap_expect(&a, &a.values, rct_make3(ROBOCACHE_DTYPE_F32, B, S, 6), ROBOCACHE_INVALID_ARGUMENT,
              "groups of 4", "D = 6");
  rct_resample_args_free(&a);
}

static void test_lengths_out_of_range(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  a.target_lengths = rct_make1(ROBOCACHE_DTYPE_I64, B);
  rct_set_i64(a.target_lengths, 1, T + 1);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "target_lengths[1] = 4 outside 0..T", NULL);
  rct_set_i64(a.target_lengths, 1, -1);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "target_lengths[1] = -1", NULL);
  rct_set_i64(a.target_lengths, 1, 0);
  a.lengths = rct_make1(ROBOCACHE_DTYPE_I64, B);
  rct_set_i64(a.lengths, 0, 0);
  rct_set_i64(a.lengths, 1, S);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "lengths[0] = 0 outside 1..S", NULL);
  rct_set_i64(a.lengths, 0, S + 1);
  expect_error(&a, ROBOCACHE_INVALID_ARGUMENT, "lengths[0] = 5 outside 1..S", NULL);
  rct_resample_args_free(&a);
}

static void test_null_arguments(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  swap_expect(&a, &a.values, NULL, ROBOCACHE_INVALID_ARGUMENT, "values", "NULL");
  swap_expect(&a, &a.target_times, NULL, ROBOCACHE_INVALID_ARGUMENT, "target_times", "NULL");
  swap_expect(&a, &a.out, NULL, ROBOCACHE_INVALID_ARGUMENT, "out", "NULL");
  rct_resample_args_free(&a);
}

static void test_backward_errors(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  char msg[512];
  a.opt.method = ROBOCACHE_SLERP;
  assert_int_equal(rct_resample_backward(&a, 0, msg, sizeof msg), ROBOCACHE_INVALID_ARGUMENT);
  assert_non_null(strstr(msg, "slerp"));
  robocache_interp_options_init(&a.opt);
  rct_tensor *keep = a.out;
  a.out = rct_make3(ROBOCACHE_DTYPE_F64, B, T, D);
  assert_int_equal(rct_resample_backward(&a, 0, msg, sizeof msg), ROBOCACHE_UNSUPPORTED_DTYPE);
  assert_non_null(strstr(msg, "float64"));
  rct_free(a.out);
  a.out = rct_make3(ROBOCACHE_DTYPE_F16, B, T, D);
  rct_tensor *keep_v = a.values;
  a.values = rct_make3(ROBOCACHE_DTYPE_F16, B, S, D);
  assert_int_equal(rct_resample_backward(&a, 0, msg, sizeof msg), ROBOCACHE_UNSUPPORTED_DTYPE);
  rct_free(a.out), rct_free(a.values);
  a.out = keep, a.values = keep_v;
  a.opt.extrapolate = ROBOCACHE_EXTRAP_ERROR;
  rct_set_i64(a.target_times, 1 * T + 1, 99);
  for (int ref = 0; ref < 2; ref++) {
    assert_int_equal(rct_resample_backward(&a, ref, msg, sizeof msg), ROBOCACHE_INVALID_ARGUMENT);
    assert_string_equal(msg, "stream 0 (grad_values): target out of range: row 1, index 1 "
                             "(time 99 ns)");
  }
  rct_resample_args_free(&a);
}

static void test_align_stream_count(void **state) {
  (void)state;
  rct_resample_args a = base(ROBOCACHE_DTYPE_I64);
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  robocache_stream st = {.name = "imu", .values = &a.values->t, .times = &a.times->t};
  robocache_interp_options_init(&st.options);
  assert_int_equal(robocache_align(ctx, &st, 0, &a.target_times->t, NULL, &a.out->t, NULL),
                   ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(ctx, "num_streams");
  assert_int_equal(robocache_align(ctx, NULL, 1, &a.target_times->t, NULL, &a.out->t, NULL),
                   ROBOCACHE_INVALID_ARGUMENT);
  rct_set_i64(a.times, 1 * S + 3, 0);
  assert_int_equal(robocache_align(ctx, &st, 1, &a.target_times->t, NULL, &a.out->t, NULL),
                   ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(ctx, "stream 0 (imu): times not increasing: row 1, index 3");
  robocache_ctx_free(ctx);
  rct_resample_args_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_base_problem_is_valid),
      cmocka_unit_test(test_bad_times),
      cmocka_unit_test(test_time_range),
      cmocka_unit_test(test_empty_stream),
      cmocka_unit_test(test_shape_mismatches),
      cmocka_unit_test(test_dtype_mismatches),
      cmocka_unit_test(test_device_mismatch),
      cmocka_unit_test(test_bad_options),
      cmocka_unit_test(test_lengths_out_of_range),
      cmocka_unit_test(test_null_arguments),
      cmocka_unit_test(test_backward_errors),
      cmocka_unit_test(test_align_stream_count),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
