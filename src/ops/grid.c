/* Target-grid helpers: stream spans and uniform grids (int64 ns, CPU). */
#include "common/dtype.h"
#include "common/interp.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>

/* Whether grid point i exists: llround(i * period) <= span (span >= 0),
 * evaluated without overflow (llround's result is only taken below 2^63). */
static int point_exists(int64_t i, double period, int64_t span) {
  const double x = round((double)i * period); /* llround's rounding: half away from zero */
  return x < 9223372036854775808.0 && (int64_t)x <= span;
}

int64_t robocache_uniform_grid_count(int64_t start_ns, int64_t end_ns, double rate_hz) {
  if (!(rate_hz > 0) || !isfinite(rate_hz) || end_ns < start_ns || !rc_time_in_range(start_ns, 0) ||
      !rc_time_in_range(end_ns, 0))
    return 0;
  const int64_t span = end_ns - start_ns;  /* < 2^63: both within +-2^62 */
  const double period = 1e9 / rate_hz;     /* may be inf for a subnormal rate */
  if (!(period <= (double)span)) return 1; /* only start */
  const double estimate = floor((double)span / period) + 1;
  if (estimate >= 9.2e18) return INT64_MAX; /* more points than int64 counts */
  /* the estimate in double may be off by a few points: the exact rule */
  int64_t n = (int64_t)estimate;
  while (n > 1 && !point_exists(n - 1, period, span)) n--;
  while (n < INT64_MAX && point_exists(n, period, span)) n++;
  return n;
}

robocache_status robocache_uniform_grid(robocache_ctx *ctx, int64_t start_ns, int64_t end_ns,
                                        double rate_hz, int64_t *out, int64_t capacity) {
  rc_clear_error(ctx);
  if (!(rate_hz > 0) || !isfinite(rate_hz))
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "uniform_grid: rate_hz must be a positive finite number, got %g", rate_hz);
  if (!rc_time_in_range(start_ns, 0) || !rc_time_in_range(end_ns, 0))
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "uniform_grid: start_ns %lld and end_ns %lld must lie within +-2^62 ns",
                    (long long)start_ns, (long long)end_ns);
  const int64_t n = robocache_uniform_grid_count(start_ns, end_ns, rate_hz);
  if (n == INT64_MAX)
    return rc_error(ctx, ROBOCACHE_CAPACITY_EXCEEDED,
                    "uniform_grid: %g Hz over %lld ns takes more than %lld targets (capacity "
                    "%lld)",
                    rate_hz, (long long)(end_ns - start_ns), (long long)INT64_MAX,
                    (long long)capacity);
  if (n > capacity)
    return rc_error(ctx, ROBOCACHE_CAPACITY_EXCEEDED,
                    "uniform_grid: %g Hz over %lld ns takes %lld targets, more than the capacity "
                    "%lld",
                    rate_hz, (long long)(end_ns - start_ns), (long long)n, (long long)capacity);
  if (n > 0 && !out) return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "uniform_grid: out is NULL");
  const double period = 1e9 / rate_hz;
  if (n > 0) out[0] = start_ns; /* also for an infinite period */
  for (int64_t i = 1; i < n; i++) out[i] = start_ns + llround((double)i * period);
  return ROBOCACHE_OK;
}

robocache_status robocache_streams_span(robocache_ctx *ctx, const robocache_stream *streams,
                                        int32_t num_streams, int32_t span, int64_t *start_ns,
                                        int64_t *end_ns) {
  rc_clear_error(ctx);
  if (num_streams < 1 || !streams || !start_ns || !end_ns)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "streams_span: need streams, start_ns and end_ns (num_streams = %d)",
                    (int)num_streams);
  if (span != ROBOCACHE_SPAN_OVERLAP && span != ROBOCACHE_SPAN_UNION)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "streams_span: unknown span %d", (int)span);
  int64_t B = -1;
  for (int k = 0; k < num_streams; k++) {
    rc_view t, len = {0};
    char what[64];
    snprintf(what, sizeof what, "stream %d times", k);
    robocache_status s = rc_view_from(ctx, streams[k].times, what, &t);
    if (s != ROBOCACHE_OK) return s;
    if (t.ndim != 2 || t.dtype != ROBOCACHE_DTYPE_I64 || t.device_type != ROBOCACHE_DEVICE_CPU)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "streams_span: %s must be a [B,S] int64 (ns) CPU tensor", what);
    if (B < 0) B = t.shape[0];
    if (t.shape[0] != B)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "streams_span: %s has %lld rows, stream 0 has %lld", what,
                      (long long)t.shape[0], (long long)B);
    if (t.shape[1] == 0)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "streams_span: stream %d is empty", k);
    if (streams[k].lengths) {
      snprintf(what, sizeof what, "stream %d lengths", k);
      s = rc_view_from(ctx, streams[k].lengths, what, &len);
      if (s != ROBOCACHE_OK) return s;
      if (len.ndim != 1 || len.shape[0] != B || len.dtype != ROBOCACHE_DTYPE_I64)
        return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "streams_span: %s must be [B] int64",
                        what);
    }
    int64_t off = streams[k].options.time_offset_ns;
    for (int64_t b = 0; b < B; b++) {
      int64_t n = len.data ? rc_load_i64(len.data, b * len.strides[0]) : t.shape[1];
      if (n < 1 || n > t.shape[1])
        return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                        "streams_span: stream %d lengths[%lld] = %lld outside 1..S", k,
                        (long long)b, (long long)n);
      int64_t first = rc_load_i64(t.data, b * t.strides[0]);
      int64_t last = rc_load_i64(t.data, b * t.strides[0] + (n - 1) * t.strides[1]);
      if (!rc_time_in_range(off, 0) || !rc_time_in_range(first, off) ||
          !rc_time_in_range(last, off))
        return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                        "streams_span: stream %d: time out of range in row %lld (%lld .. %lld ns, "
                        "time_offset_ns %lld): int64 times must stay within +-2^62 ns",
                        k, (long long)b, (long long)first, (long long)last, (long long)off);
      first += off;
      last += off;
      if (k == 0 || (span == ROBOCACHE_SPAN_OVERLAP ? first > start_ns[b] : first < start_ns[b]))
        start_ns[b] = first;
      if (k == 0 || (span == ROBOCACHE_SPAN_OVERLAP ? last < end_ns[b] : last > end_ns[b]))
        end_ns[b] = last;
    }
  }
  for (int64_t b = 0; b < B; b++)
    if (end_ns[b] < start_ns[b])
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "streams_span: the streams do not overlap in time: row %lld "
                      "(latest start %lld ns > earliest end %lld ns)",
                      (long long)b, (long long)start_ns[b], (long long)end_ns[b]);
  return ROBOCACHE_OK;
}
