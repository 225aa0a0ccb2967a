/* Reference backend: the weights one target gives the samples of one stream,
 * written independently of src/common/interp.h (linear scan, double) so that
 * the reference is a real oracle for the optimised backends. */
#ifndef ROBOCACHE_REF_STENCIL_H
#define ROBOCACHE_REF_STENCIL_H

#include "ops/align_problem.h"

enum {
  REF_ZERO = 0, /* padded target: 0 */
  REF_FILL = 1, /* fill_value */
  REF_MIX = 2,  /* nw == 1: sample idx[0] (wt[0] == 1); nw == 2: samples
                   idx[0], idx[1] mixed with weight wt[1] of idx[1]
                   (wt[0] = 1 - wt[1]): linearly, or along the great
                   circle for slerp */
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
