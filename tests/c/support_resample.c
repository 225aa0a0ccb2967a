/* Test helpers: resample calls on either backend, random increasing times. */
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
