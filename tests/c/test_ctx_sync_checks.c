/* robocache_ctx_set_sync_checks on CPU tensors: accepted (0 / 1, created and
 * thread-default contexts) and without effect — the CPU backend always
 * checks, so bad data still gives the same error and good data the same
 * outputs and stats as with the checks on. */
#include "support_voxel.h"

#include <stdio.h>
#include <string.h>

/* Resample of a through ctx into a's outputs; the message into msg. */
static robocache_status resample_with(robocache_ctx *ctx, rct_resample_args *a, char *msg) {
  robocache_status s =
      robocache_resample(ctx, &a->values->t, &a->times->t, &a->lengths->t, &a->target_times->t,
                         NULL, &a->opt, &a->out->t, &a->valid->t);
  snprintf(msg, 512, "%s", robocache_ctx_error_message(ctx));
  return s;
}

static rct_resample_args make_problem(void) {
  rct_rng rng = rct_rng_seed(3);
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F32, 3, 20, 15, 4, 1);
  rct_fill_times(a.times, &rng, 1000000000, 9000000, 11000000);
  rct_fill_uniform(a.values, &rng, -1, 1);
  a.lengths = rct_make1(ROBOCACHE_DTYPE_I64, 3);
  for (int64_t b = 0; b < 3; b++) rct_set_i64(a.lengths, b, 20 - b);
  for (int64_t i = 0; i < 3 * 15; i++)
    rct_set_i64(a.target_times, i, 990000000 + rct_rng_int(&rng, 0, 220000000));
  return a;
}

static void test_accepts_values(void **state) {
  (void)state;
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  for (int on = 0; on < 2; on++) {
    assert_int_equal(robocache_ctx_set_sync_checks(ctx, on), ROBOCACHE_OK);
    assert_int_equal(robocache_ctx_set_sync_checks(NULL, on), ROBOCACHE_OK);
  }
  robocache_ctx_free(ctx);
}

/* Same outputs with the checks on and off; bad data (a row of length 0,
 * then times not increasing) the same INVALID_ARGUMENT message. */
static void test_resample_unchanged(void **state) {
  (void)state;
  robocache_ctx *ctx[2] = {NULL, NULL};
  for (int on = 0; on < 2; on++) {
    assert_int_equal(robocache_ctx_create(&ctx[on]), ROBOCACHE_OK);
    assert_int_equal(robocache_ctx_set_sync_checks(ctx[on], on), ROBOCACHE_OK);
  }
  rct_resample_args a[2] = {make_problem(), make_problem()};
  char msg[2][512];
  for (int on = 0; on < 2; on++)
    assert_int_equal(resample_with(ctx[on], &a[on], msg[on]), ROBOCACHE_OK);
  rct_assert_bits_equal(a[0].out, a[1].out, "out, checks off vs on");
  rct_assert_bits_equal(a[0].valid, a[1].valid, "valid, checks off vs on");
  for (int bad = 0; bad < 2; bad++) {
    for (int on = 0; on < 2; on++) {
      if (bad == 0) rct_set_i64(a[on].lengths, 1, 0);
      if (bad == 1) {
        rct_set_i64(a[on].lengths, 1, 20);
        rct_set_i64(a[on].times, 2 * 20 + 7, rct_get_i64(a[on].times, 2 * 20 + 6));
      }
      assert_int_equal(resample_with(ctx[on], &a[on], msg[on]), ROBOCACHE_INVALID_ARGUMENT);
    }
    assert_string_equal(msg[0], msg[1]);
  }
  rct_assert_message_has(ctx[0], "row 2, index 7");
  for (int on = 0; on < 2; on++) robocache_ctx_free(ctx[on]), rct_resample_args_free(&a[on]);
}

/* Voxelization: bad offsets still INVALID_ARGUMENT, good ones complete stats. */
static void test_voxel_unchanged(void **state) {
  (void)state;
  static const float range[6] = {0, 0, 0, 10, 10, 10};
  rct_tensor *pts = rcv_random_points(7, 500, 4);
  const int64_t good[3] = {0, 200, 500}, bad[3] = {0, 300, 200};
  rct_tensor *offsets[2] = {rcv_offsets(good, 2), rcv_offsets(bad, 2)};
  robocache_ctx *ctx = NULL;
  for (int o = 0; o < 2; o++) {
    robocache_voxel_stats st[2];
    robocache_status s[2];
    rct_tensor *out[2];
    for (int on = 0; on < 2; on++) {
      assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
      assert_int_equal(robocache_ctx_set_sync_checks(ctx, on), ROBOCACHE_OK);
      const int64_t shape[5] = {2, 1, 10, 10, 10};
      out[on] = rct_make(ROBOCACHE_DTYPE_I32, 5, shape);
      s[on] = robocache_voxelize(ctx, &pts->t, &offsets[o]->t, (const float[3]){1, 1, 1}, range,
                                 ROBOCACHE_VOXEL_COUNT, &out[on]->t, &st[on]);
      robocache_ctx_free(ctx);
    }
    assert_int_equal(s[0], o ? ROBOCACHE_INVALID_ARGUMENT : ROBOCACHE_OK);
    assert_int_equal(s[1], s[0]);
    if (!o) {
      assert_memory_equal(&st[0], &st[1], sizeof st[0]);
      assert_true(st[0].points_in_range > 0 && st[0].points_dropped_nonfinite > 0);
      rct_assert_bits_equal(out[0], out[1], "voxelize count, checks off vs on");
    }
    rct_free(out[0]), rct_free(out[1]);
  }
  rct_free(offsets[0]), rct_free(offsets[1]), rct_free(pts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_accepts_values),
      cmocka_unit_test(test_resample_unchanged),
      cmocka_unit_test(test_voxel_unchanged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
