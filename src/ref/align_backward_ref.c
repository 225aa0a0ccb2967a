/* Reference (oracle) backward of resample: grad_values = W^T grad_out, with
 * W the stencil weights of src/ref/ref_stencil.c, accumulated in double in
 * target order. */
#include <stdlib.h>

#include "common/dtype.h"
#include "ops/align_error.h"
#include "ref/ref_stencil.h"

robocache_status rc_align_backward_ref(robocache_ctx *ctx, const rc_align_problem *p) {
  const rc_stream_view *s = &p->streams[0];
  const rc_view *g = &p->out, *gv = &s->values;
  double *acc = calloc((size_t)(s->S * s->D > 0 ? s->S * s->D : 1), sizeof *acc);
  if (!acc) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "resample_backward: out of memory");
  robocache_status status = ROBOCACHE_OK;
  for (int64_t b = 0; b < p->B && status == ROBOCACHE_OK; b++) {
    for (int64_t i = 0; i < s->S * s->D; i++) acc[i] = 0;
    for (int64_t t = 0; t < p->T; t++) {
      ref_stencil st = ref_stencil_of(p, 0, b, t);
      if (st.kind == REF_ERROR) {
        status = rc_align_target_error(ctx, p, 0, b, t, st.err);
        break;
      }
      if (st.kind != REF_MIX) continue;
      for (int j = 0; j < st.nw; j++)
        for (int64_t d = 0; d < s->D; d++)
          acc[st.idx[j] * s->D + d] +=
              st.wt[j] * rc_load_f64(g->dtype, g->data,
                                     b * g->strides[0] + t * g->strides[1] + d * g->strides[2]);
    }
    for (int64_t i = 0; i < s->S; i++)
      for (int64_t d = 0; d < s->D; d++)
        rc_store_f64(gv->dtype, gv->data,
                     b * gv->strides[0] + i * gv->strides[1] + d * gv->strides[2],
                     acc[i * s->D + d]);
  }
  free(acc);
  return status;
}
