/* Status names, versions, dtype facts, option defaults and contexts. */
#include "support.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void test_status_names(void **state) {
  (void)state;
  static const char *names[] = {"OK",
                                "INVALID_ARGUMENT",
                                "UNSUPPORTED_DTYPE",
                                "UNSUPPORTED_DEVICE",
                                "DEVICE_MISMATCH",
                                "OUT_OF_MEMORY",
                                "CAPACITY_EXCEEDED",
                                "CUDA_ERROR",
                                "IO_ERROR",
                                "INTERNAL"};
  for (int s = 0; s < 10; s++)
    assert_string_equal(robocache_status_name((robocache_status)s), names[s]);
  assert_string_equal(robocache_status_name((robocache_status)10), "UNKNOWN");
  assert_string_equal(robocache_status_name((robocache_status)-1), "UNKNOWN");
}

static void test_version_and_capabilities(void **state) {
  (void)state;
  char expect[64];
  snprintf(expect, sizeof expect, "%d.%d.%d", ROBOCACHE_VERSION_MAJOR, ROBOCACHE_VERSION_MINOR,
           ROBOCACHE_VERSION_PATCH);
  assert_string_equal(robocache_version_string(), expect);
  int cuda = robocache_has_cuda();
  assert_true(cuda == 0 || cuda == 1);
}

static void test_dtypes(void **state) {
  (void)state;
  static const char *names[] = {"float32", "float64", "float16", "bfloat16",
                                "int64",   "int32",   "uint8"};
  static const size_t sizes[] = {4, 8, 2, 2, 8, 4, 1};
  for (int d = 0; d < 7; d++) {
    assert_string_equal(robocache_dtype_name((robocache_dtype)d), names[d]);
    assert_int_equal(robocache_dtype_size((robocache_dtype)d), sizes[d]);
  }
  assert_string_equal(robocache_dtype_name((robocache_dtype)99), "unknown");
  assert_int_equal(robocache_dtype_size((robocache_dtype)99), 0);
}

static void test_option_defaults(void **state) {
  (void)state;
  robocache_interp_options o;
  memset(&o, 0x5a, sizeof o);
  robocache_interp_options_init(&o);
  assert_int_equal(o.method, ROBOCACHE_LINEAR);
  assert_int_equal(o.extrapolate, ROBOCACHE_EXTRAP_CLAMP);
  assert_true(isnan(o.fill_value));
  assert_int_equal(o.max_gap_ns, 0);
  assert_int_equal(o.tolerance_ns, 0);
  assert_int_equal(o.time_offset_ns, 0);
  assert_int_equal(o.quat_order, ROBOCACHE_QUAT_XYZW);
  robocache_interp_options_init(NULL); /* accepted */
}

static void test_contexts(void **state) {
  (void)state;
  assert_int_equal(robocache_ctx_create(NULL), ROBOCACHE_INVALID_ARGUMENT);
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_non_null(ctx);
  assert_string_equal(robocache_ctx_error_message(ctx), "");
  assert_int_equal(robocache_ctx_set_num_threads(ctx, -1), ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(ctx, "num_threads must be in 0..1024");
  rct_assert_message_has(ctx, "got -1");
  assert_int_equal(robocache_ctx_set_num_threads(ctx, 2), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_force_reference(ctx, 1), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_cuda_stream(ctx, NULL), ROBOCACHE_OK);
  /* a successful operation clears the previous error */
  int64_t g[4];
  assert_int_equal(robocache_uniform_grid(ctx, 0, 10, 1e9, g, 2), ROBOCACHE_CAPACITY_EXCEEDED);
  rct_assert_message_has(ctx, "capacity");
  assert_int_equal(robocache_uniform_grid(ctx, 0, 2, 1e9, g, 4), ROBOCACHE_OK);
  assert_string_equal(robocache_ctx_error_message(ctx), "");
  /* errors of separate contexts do not mix; NULL is the thread default */
  robocache_ctx *other = NULL;
  assert_int_equal(robocache_ctx_create(&other), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_num_threads(other, -3), ROBOCACHE_INVALID_ARGUMENT);
  assert_string_equal(robocache_ctx_error_message(ctx), "");
  assert_int_equal(robocache_ctx_set_num_threads(NULL, -4), ROBOCACHE_INVALID_ARGUMENT);
  rct_assert_message_has(NULL, "got -4");
  rct_assert_message_has(other, "got -3");
  robocache_ctx_free(other);
  robocache_ctx_free(ctx);
  robocache_ctx_free(NULL);
}

/* Thread counts past ROBOCACHE_MAX_THREADS are refused with the bound in
 * the message (OpenMP is never asked for such a team). */
static void test_thread_bound(void **state) {
  (void)state;
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_num_threads(ctx, ROBOCACHE_MAX_THREADS), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_num_threads(ctx, 1), ROBOCACHE_OK);
  const int bad[] = {ROBOCACHE_MAX_THREADS + 1, 1 << 20, INT_MAX, INT_MIN};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(robocache_ctx_set_num_threads(ctx, bad[i]), ROBOCACHE_INVALID_ARGUMENT);
    rct_assert_message_has(ctx, "0..1024");
  }
  robocache_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_names), cmocka_unit_test(test_version_and_capabilities),
      cmocka_unit_test(test_dtypes),       cmocka_unit_test(test_option_defaults),
      cmocka_unit_test(test_contexts),     cmocka_unit_test(test_thread_bound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
