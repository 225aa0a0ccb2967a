/* Test helpers: resample arguments, resample calls on either backend, random
 * increasing times and lengths. */
#include "support.h"

#include <math.h>
#include <stdio.h>

static const robocache_tensor *view(const rct_tensor *t) { return t ? &t->t : NULL; }

static robocache_tensor *view_mut(rct_tensor *t) { return t ? &t->t : NULL; }

static robocache_status finish(robocache_ctx *ctx, robocache_status s, char *msg, size_t msg_len) {
  if (msg && msg_len) snprintf(msg, msg_len, "%s", robocache_ctx_error_message(ctx));
  robocache_ctx_free(ctx);
  return s;
}

rct_resample_args rct_resample_args_make(robocache_dtype time_dtype, robocache_dtype value_dtype,
                                         int64_t B, int64_t S, int64_t T, int64_t D,
                                         int with_valid) {
  rct_resample_args a = {0};
  robocache_interp_options_init(&a.opt);
  a.times = rct_make2(time_dtype, B, S);
  a.values = rct_make3(value_dtype, B, S, D);
  a.target_times = rct_make2(time_dtype, B, T);
  a.out = rct_make3(value_dtype, B, T, D);
  if (with_valid) a.valid = rct_make2(ROBOCACHE_DTYPE_U8, B, T);
  return a;
}

void rct_resample_args_free(rct_resample_args *a) {
  rct_free(a->times), rct_free(a->values), rct_free(a->target_times), rct_free(a->out),
      rct_free(a->valid), rct_free(a->lengths), rct_free(a->target_lengths);
}

void rct_random_lengths(rct_resample_args *a, rct_rng *r) {
  const int64_t B = a->times->shape[0], S = a->times->shape[1], T = a->target_times->shape[1];
  if (rct_rng_int(r, 0, 1)) {
    a->lengths = rct_make1(ROBOCACHE_DTYPE_I64, B);
    for (int64_t b = 0; b < B; b++) rct_set_i64(a->lengths, b, rct_rng_int(r, 1, S));
  }
  if (rct_rng_int(r, 0, 1)) {
    a->target_lengths = rct_make1(ROBOCACHE_DTYPE_I64, B);
    for (int64_t b = 0; b < B; b++) rct_set_i64(a->target_lengths, b, rct_rng_int(r, 0, T));
  }
}

robocache_status rct_resample(const rct_resample_args *a, int ref, char *msg, size_t msg_len) {
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_force_reference(ctx, ref), ROBOCACHE_OK);
  robocache_status s = robocache_resample(ctx, view(a->values), view(a->times), view(a->lengths),
                                          view(a->target_times), view(a->target_lengths), &a->opt,
                                          view_mut(a->out), view_mut(a->valid));
  return finish(ctx, s, msg, msg_len);
}

robocache_status rct_resample_backward(const rct_resample_args *a, int ref, char *msg,
                                       size_t msg_len) {
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_force_reference(ctx, ref), ROBOCACHE_OK);
  robocache_status s = robocache_resample_backward(
      ctx, view(a->out), view(a->times), view(a->lengths), view(a->target_times),
      view(a->target_lengths), &a->opt, view_mut(a->values));
  return finish(ctx, s, msg, msg_len);
}

void rct_fill_times(rct_tensor *times, rct_rng *r, int64_t start_ns, int64_t min_step_ns,
                    int64_t max_step_ns) {
  assert_int_equal(times->t.ndim, 2);
  const int64_t B = times->shape[0], S = times->shape[1];
  for (int64_t b = 0; b < B; b++) {
    int64_t ns = start_ns;
    double prev = -INFINITY;
    for (int64_t i = 0; i < S; i++) {
      if (i > 0) ns += rct_rng_int(r, min_step_ns, max_step_ns);
      if (times->t.dtype == ROBOCACHE_DTYPE_I64) {
        rct_set_i64(times, b * S + i, ns);
        continue;
      }
      rct_set(times, b * S + i, (double)ns * 1e-9);
      while (!(rct_get(times, b * S + i) > prev)) /* rounding collapsed two times */
        rct_set(times, b * S + i,
                rct_get(times, b * S + i) + 1e-9 + fabs(rct_get(times, b * S + i)) * 1e-7);
      prev = rct_get(times, b * S + i);
    }
  }
}
