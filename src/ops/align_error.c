/* The EXTRAP_ERROR message of an align / resample target. */
#include "ops/align_error.h"

#include <stdio.h>

#include "common/interp.h"

robocache_status rc_align_target_error(robocache_ctx *ctx, const rc_align_problem *p, int k,
                                       int64_t b, int64_t t, int err) {
  const rc_stream_view *s = &p->streams[k];
  const rc_view *tt = &p->target_times;
  int64_t at = b * tt->strides[0] + t * tt->strides[1];
  char when[64];
  if (p->time_dtype == ROBOCACHE_DTYPE_I64)
    snprintf(when, sizeof when, "%lld ns", (long long)rc_load_i64(tt->data, at));
  else
    snprintf(when, sizeof when, "%.9f s", rc_load_time_f64(p->time_dtype, tt->data, at));
  char why[96];
  if (err == RC_TERR_GAP)
    snprintf(why, sizeof why, "target inside a gap longer than max_gap (%lld ns)",
             (long long)s->opt.max_gap_ns);
  else if (err == RC_TERR_TOLERANCE)
    snprintf(why, sizeof why, "target farther than tolerance (%lld ns) from its sample",
             (long long)s->opt.tolerance_ns);
  else
    snprintf(why, sizeof why, "target out of range");
  return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                  "stream %d (%s): %s: row %lld, index %lld (time %s)", k, s->name, why,
                  (long long)b, (long long)t, when);
}
