/* The EXTRAP_ERROR message of an align / resample target, shared by every
 * backend so that they report the same text. */
#ifndef ROBOCACHE_OPS_ALIGN_ERROR_H
#define ROBOCACHE_OPS_ALIGN_ERROR_H

#include "ops/align_problem.h"

/* Records INVALID_ARGUMENT for target t of row b of stream k, err one of
 * RC_TERR_RANGE / RC_TERR_GAP / RC_TERR_TOLERANCE (common/interp.h):
 * "stream K (name): target out of range: row B, index T (time X)" (X in ns
 * for int64 times, in s for float times), "... target inside a gap longer
 * than max_gap (G ns): ..." or "... target farther than tolerance (G ns) from
 * its sample: ...". Returns INVALID_ARGUMENT. */
robocache_status rc_align_target_error(robocache_ctx *ctx, const rc_align_problem *p, int k,
                                       int64_t b, int64_t t, int err);

#endif
