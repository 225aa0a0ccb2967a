/* Reference stencils: which samples a target uses, with which weights.
 * Straightforward on purpose: a linear scan over the samples. */
#include "ref/ref_stencil.h"

#include "common/dtype.h"

/* RC_TERR_* codes (common/interp.h), repeated here to keep the reference
 * independent of the optimised code. */
enum { REF_ERR_RANGE = 1, REF_ERR_GAP = 2, REF_ERR_TOLERANCE = 3 };

typedef struct ref_row {
  const rc_align_problem *p;
  const rc_stream_view *s;
  int64_t b, t;
} ref_row;

/* Time of sample i (i >= 0, time_offset added) or of the target (i < 0). */
static int64_t time_ns(const ref_row *r, int64_t i) {
  if (i < 0) {
    const rc_view *tt = &r->p->target_times;
    return rc_load_i64(tt->data, r->b * tt->strides[0] + r->t * tt->strides[1]);
  }
  const rc_view *ts = &r->s->times;
  return rc_load_i64(ts->data, r->b * ts->strides[0] + i * ts->strides[1]) +
         r->s->opt.time_offset_ns;
}

static double time_s(const ref_row *r, int64_t i) {
  if (i < 0) {
    const rc_view *tt = &r->p->target_times;
    return rc_load_time_f64(r->p->time_dtype, tt->data,
                            r->b * tt->strides[0] + r->t * tt->strides[1]);
  }
  const rc_view *ts = &r->s->times;
  return rc_load_time_f64(r->p->time_dtype, ts->data, r->b * ts->strides[0] + i * ts->strides[1]) +
         (double)r->s->opt.time_offset_ns * 1e-9;
}

/* time(i) - time(j) in the row's unit (ns or s). */
static double minus(const ref_row *r, int64_t i, int64_t j) {
  if (r->p->time_dtype == ROBOCACHE_DTYPE_I64) return (double)(time_ns(r, i) - time_ns(r, j));
  return time_s(r, i) - time_s(r, j);
}

/* A time option (ns) in the row's unit. */
static double option_time(const ref_row *r, int64_t ns) {
  return r->p->time_dtype == ROBOCACHE_DTYPE_I64 ? (double)ns : (double)ns * 1e-9;
}

static ref_stencil one(int64_t i, int valid) {
  ref_stencil st = {.kind = REF_MIX, .nw = 1, .idx = {i, i}, .wt = {1.0, 0.0}, .valid = valid};
  return st;
}

static ref_stencil pair(int64_t i, double w, int valid) {
  ref_stencil st = {
      .kind = REF_MIX, .nw = 2, .idx = {i, i + 1}, .wt = {1.0 - w, w}, .valid = valid};
  return st;
}

/* The stencil of an invalid target: fill / error, else `keep`. */
static ref_stencil invalid(int policy, int err, ref_stencil keep) {
  ref_stencil st = {.kind = REF_FILL};
  if (policy == ROBOCACHE_EXTRAP_FILL) return st;
  if (policy == ROBOCACHE_EXTRAP_ERROR) {
    st.kind = REF_ERROR;
    st.err = err;
    return st;
  }
  keep.valid = 0;
  return keep;
}

ref_stencil ref_stencil_of(const rc_align_problem *p, int k, int64_t b, int64_t t) {
  ref_row r = {p, &p->streams[k], b, t};
  const robocache_interp_options *o = &r.s->opt;
  if (p->has_target_lengths &&
      t >= rc_load_i64(p->target_lengths.data, b * p->target_lengths.strides[0])) {
    ref_stencil zero = {.kind = REF_ZERO};
    return zero;
  }
  int64_t n =
      r.s->has_lengths ? rc_load_i64(r.s->lengths.data, b * r.s->lengths.strides[0]) : r.s->S;
  int interpolates = o->method == ROBOCACHE_LINEAR || o->method == ROBOCACHE_SLERP;

  int64_t i0 = -1; /* last sample at or before the target */
  for (int64_t i = 0; i < n; i++)
    if (minus(&r, i, -1) <= 0) i0 = i;

  if (i0 >= 0 && minus(&r, i0, -1) == 0) return one(i0, 1);
  if (i0 < 0 || i0 == n - 1) { /* out of range */
    int64_t edge = i0 < 0 ? 0 : n - 1;
    ref_stencil keep = one(edge, 0);
    if (o->extrapolate == ROBOCACHE_EXTRAP_EXTRAPOLATE && interpolates && n > 1) {
      int64_t a = i0 < 0 ? 0 : n - 2;
      keep = pair(a, minus(&r, -1, a) / minus(&r, a + 1, a), 0);
    }
    return invalid(o->extrapolate, REF_ERR_RANGE, keep);
  }

  double before = minus(&r, -1, i0), after = minus(&r, i0 + 1, -1);
  double span = minus(&r, i0 + 1, i0);
  int64_t nearer = before <= after ? i0 : i0 + 1;
  ref_stencil value;
  double dist;
  switch (o->method) {
  case ROBOCACHE_PREVIOUS: value = one(i0, 1), dist = before; break;
  case ROBOCACHE_NEXT: value = one(i0 + 1, 1), dist = after; break;
  case ROBOCACHE_NEAREST: value = one(nearer, 1), dist = nearer == i0 ? before : after; break;
  default: value = pair(i0, before / span, 1), dist = 0; break;
  }
  if (o->max_gap_ns > 0 && span > option_time(&r, o->max_gap_ns)) {
    if (o->extrapolate == ROBOCACHE_EXTRAP_CLAMP) value = one(nearer, 0);
    return invalid(o->extrapolate, REF_ERR_GAP, value);
  }
  if (!interpolates && o->tolerance_ns > 0 && dist > option_time(&r, o->tolerance_ns))
    return invalid(o->extrapolate, REF_ERR_TOLERANCE, value);
  return value;
}
