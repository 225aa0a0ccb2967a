/* Reference backend: the weights one target gives the samples of one stream,
 * written independently of src/common/interp.h (linear scan, double) so that
 * the reference is a real oracle for the optimised backends. */
#ifndef ROBOCACHE_REF_STENCIL_H
#define ROBOCACHE_REF_STENCIL_H

#include "ops/align_problem.h"

enum {
  REF_ZERO = 0, /* padded target: 0 */
  REF_FILL = 1, /* fill_value */
  REF_MIX = 2,  /* sum of wt[j] * sample idx[j], j < nw (slerp: nw == 2,
                   weight wt[1] of idx[1] along the great circle) */
  REF_ERROR = 3 /* EXTRAP_ERROR; err is an RC_TERR_* code */
};

typedef struct ref_stencil {
  int kind;
  int nw;
  int64_t idx[2];
  double wt[2];
  int valid;
  int err;
} ref_stencil;

/* Stencil of target t of row b for stream k of p (padded targets included).
 * Time differences are exact int64 for ns times (converted to double, exact
 * below 2^53 ns), double for float-second times. */
ref_stencil ref_stencil_of(const rc_align_problem *p, int k, int64_t b, int64_t t);

#endif
