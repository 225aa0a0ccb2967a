/* Data checks of an align problem on CPU tensors (before any backend runs). */
#include "common/dtype.h"
#include "common/interp.h"
#include "ops/align_problem.h"

#include <math.h>

static int64_t length_of(const rc_view *lengths, int64_t b) {
  return rc_load_i64(lengths->data, b * lengths->strides[0]);
}

/* Strictly increasing, non-NaN times in [0, n) of row b; int64 ns times
 * within +-RC_TIME_LIMIT_NS, also after the stream's time_offset_ns. */
static robocache_status check_times_row(robocache_ctx *ctx, const rc_align_problem *p, int k,
                                        const rc_stream_view *s, int64_t b, int64_t n) {
  const rc_view *t = &s->times;
  if (p->time_dtype == ROBOCACHE_DTYPE_I64) {
    int64_t prev = 0, off = s->opt.time_offset_ns;
    for (int64_t i = 0; i < n; i++) {
      int64_t x = rc_load_i64(t->data, b * t->strides[0] + i * t->strides[1]);
      if (!rc_time_in_range(x, off))
        return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                        "stream %d (%s): time out of range: row %lld, index %lld (%lld ns, "
                        "time_offset_ns %lld): int64 times must stay within +-2^62 ns",
                        k, s->name, (long long)b, (long long)i, (long long)x, (long long)off);
      if (i > 0 && x <= prev)
        return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                        "stream %d (%s): times not increasing: row %lld, index %lld "
                        "(%lld ns after %lld ns)",
                        k, s->name, (long long)b, (long long)i, (long long)x, (long long)prev);
      prev = x;
    }
    return ROBOCACHE_OK;
  }
  double prev = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = rc_load_time_f64(p->time_dtype, t->data, b * t->strides[0] + i * t->strides[1]);
    if (isnan(x))
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "stream %d (%s): time is NaN: row %lld, index %lld", k, s->name, (long long)b,
                      (long long)i);
    if (isinf(x))
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "stream %d (%s): time is infinite: row %lld, index %lld", k, s->name,
                      (long long)b, (long long)i);
    if (i > 0 && !(x > prev))
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "stream %d (%s): times not increasing: row %lld, index %lld "
                      "(%.9f s after %.9f s)",
                      k, s->name, (long long)b, (long long)i, x, prev);
    prev = x;
  }
  return ROBOCACHE_OK;
}

robocache_status rc_align_check_data(robocache_ctx *ctx, const rc_align_problem *p) {
  for (int64_t b = 0; b < p->B; b++) {
    int64_t nt = p->T;
    if (p->has_target_lengths) {
      nt = length_of(&p->target_lengths, b);
      if (nt < 0 || nt > p->T)
        return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                        "target_lengths[%lld] = %lld outside 0..T (T = %lld)", (long long)b,
                        (long long)nt, (long long)p->T);
    }
    const rc_view *t = &p->target_times;
    if (p->time_dtype == ROBOCACHE_DTYPE_I64) {
      for (int64_t i = 0; i < nt; i++) {
        int64_t x = rc_load_i64(t->data, b * t->strides[0] + i * t->strides[1]);
        if (!rc_time_in_range(x, 0))
          return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                          "target_times: out of range: row %lld, index %lld (%lld ns): int64 "
                          "times must stay within +-2^62 ns",
                          (long long)b, (long long)i, (long long)x);
      }
    } else {
      for (int64_t i = 0; i < nt; i++) {
        double x = rc_load_time_f64(p->time_dtype, t->data, b * t->strides[0] + i * t->strides[1]);
        if (!isfinite(x))
          return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                          "target_times: %s value: row %lld, index %lld",
                          isnan(x) ? "NaN" : "infinite", (long long)b, (long long)i);
      }
    }
    for (int k = 0; k < p->K; k++) {
      const rc_stream_view *s = &p->streams[k];
      int64_t n = s->S;
      if (s->has_lengths) {
        n = length_of(&s->lengths, b);
        if (n < 1 || n > s->S)
          return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                          "stream %d (%s): lengths[%lld] = %lld outside 1..S (S = %lld): "
                          "every row needs at least one sample",
                          k, s->name, (long long)b, (long long)n, (long long)s->S);
      }
      robocache_status st = check_times_row(ctx, p, k, s, b, n);
      if (st != ROBOCACHE_OK) return st;
    }
  }
  return ROBOCACHE_OK;
}
