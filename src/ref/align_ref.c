/* Reference (oracle) forward of align / resample: one target at a time, from
 * the stencil of src/ref/ref_stencil.c. Slow and obviously correct; the
 * optimised backends are tested against it. Two samples are mixed with the
 * shared arithmetic of common/lerp.h (in float32, float64 when values or out
 * are float64, as every backend does); slerp is computed in double. */
#include <math.h>

#include "common/dtype.h"
#include "common/lerp.h"
#include "ops/align_error.h"
#include "ref/ref_stencil.h"

/* Slerp of two quaternions (double), per DESIGN §1.1: shortest arc, nlerp
 * when nearly parallel, renormalised. The component order does not matter. */
static void ref_slerp(const double *a, const double *q, double w, double *out) {
  double b[4], dot = 0;
  for (int i = 0; i < 4; i++) dot += a[i] * q[i];
  for (int i = 0; i < 4; i++) b[i] = dot < 0 ? -q[i] : q[i];
  dot = fabs(dot);
  double ca = 1 - w, cb = w;
  if (dot <= 0.9995) {
    double theta = acos(dot);
    ca = sin((1 - w) * theta) / sin(theta);
    cb = sin(w * theta) / sin(theta);
  }
  double norm = 0;
  for (int i = 0; i < 4; i++) {
    out[i] = ca * a[i] + cb * b[i];
    norm += out[i] * out[i];
  }
  norm = sqrt(norm);
  for (int i = 0; i < 4; i++) out[i] = norm > 0 ? out[i] / norm : out[i];
}

/* Channel d of sample i of row b of stream s, as double. */
static double sample(const rc_stream_view *s, int64_t b, int64_t i, int64_t d) {
  const rc_view *v = &s->values;
  return rc_load_f64(v->dtype, v->data, b * v->strides[0] + i * v->strides[1] + d * v->strides[2]);
}

/* Writes the D channels of stream s for target (b, t) from stencil st. */
static void write_target(const rc_align_problem *p, const rc_stream_view *s, int64_t b, int64_t t,
                         const ref_stencil *st) {
  const rc_view *o = &p->out;
  int64_t base = b * o->strides[0] + t * o->strides[1];
  int slerp = s->opt.method == ROBOCACHE_SLERP && st->kind == REF_MIX && st->nw == 2;
  int wide = s->values.dtype == ROBOCACHE_DTYPE_F64 || o->dtype == ROBOCACHE_DTYPE_F64;
  for (int64_t d = 0; d < s->D; d += slerp ? 4 : 1) {
    double x[4] = {0, 0, 0, 0};
    if (st->kind == REF_FILL) x[0] = s->opt.fill_value;
    if (st->kind == REF_MIX && st->nw == 1) x[0] = sample(s, b, st->idx[0], d);
    if (st->kind == REF_MIX && st->nw == 2 && !slerp) {
      const double a = sample(s, b, st->idx[0], d), c = sample(s, b, st->idx[1], d);
      x[0] = wide ? rc_lerp_f64(a, c, st->wt[1])
                  : (double)rc_lerp_f32((float)a, (float)c, (float)st->wt[1]);
    }
    if (slerp) {
      double q0[4], q1[4];
      for (int c = 0; c < 4; c++) {
        q0[c] = sample(s, b, st->idx[0], d + c);
        q1[c] = sample(s, b, st->idx[1], d + c);
      }
      /* the weight rounded to the compute precision, as for linear */
      ref_slerp(q0, q1, wide ? st->wt[1] : (double)(float)st->wt[1], x);
    }
    for (int c = 0; c < (slerp ? 4 : 1); c++)
      rc_store_f64(o->dtype, o->data, base + (s->col + d + c) * o->strides[2], x[c]);
  }
}

robocache_status rc_align_ref(robocache_ctx *ctx, const rc_align_problem *p) {
  for (int64_t b = 0; b < p->B; b++)
    for (int64_t t = 0; t < p->T; t++)
      for (int k = 0; k < p->K; k++) {
        ref_stencil st = ref_stencil_of(p, k, b, t);
        if (st.kind == REF_ERROR) return rc_align_target_error(ctx, p, k, b, t, st.err);
        write_target(p, &p->streams[k], b, t, &st);
        if (p->has_valid) {
          const rc_view *v = &p->valid;
          ((uint8_t *)v->data)[b * v->strides[0] + t * v->strides[1] + k * v->strides[2]] =
              (uint8_t)st.valid;
        }
      }
  return ROBOCACHE_OK;
}
