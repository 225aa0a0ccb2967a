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

/* Sign of (time(i) - time(j)) - (time(k) - time(l)): exact for ns times
 * (every difference of two times fits in int64), in double for seconds. */
static int compare(const ref_row *r, int64_t i, int64_t j, int64_t k, int64_t l) {
  if (r->p->time_dtype == ROBOCACHE_DTYPE_I64) {
    const int64_t a = time_ns(r, i) - time_ns(r, j), b = time_ns(r, k) - time_ns(r, l);
    return (a > b) - (a < b);
  }
  const double a = time_s(r, i) - time_s(r, j), b = time_s(r, k) - time_s(r, l);
  return (a > b) - (a < b);
}

/* time(i) - time(j) > an option of ns nanoseconds (in seconds: ns * 1e-9). */
static int exceeds(const ref_row *r, int64_t i, int64_t j, int64_t ns) {
  if (r->p->time_dtype == ROBOCACHE_DTYPE_I64) return time_ns(r, i) - time_ns(r, j) > ns;
  return time_s(r, i) - time_s(r, j) > (double)ns * 1e-9;
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
    /* within tolerance of the edge sample: inside for these methods */
    if (!interpolates && o->tolerance_ns > 0 &&
        !(i0 < 0 ? exceeds(&r, 0, -1, o->tolerance_ns) : exceeds(&r, -1, n - 1, o->tolerance_ns)))
      return one(edge, 1);
    ref_stencil keep = one(edge, 0);
    if (o->extrapolate == ROBOCACHE_EXTRAP_EXTRAPOLATE && interpolates && n > 1) {
      int64_t a = i0 < 0 ? 0 : n - 2;
      keep = pair(a, minus(&r, -1, a) / minus(&r, a + 1, a), 0);
    }
    return invalid(o->extrapolate, REF_ERR_RANGE, keep);
  }

  /* ties go to the earlier sample */
  int64_t nearer = compare(&r, -1, i0, i0 + 1, -1) <= 0 ? i0 : i0 + 1;
  ref_stencil value;
  switch (o->method) {
  case ROBOCACHE_PREVIOUS: value = one(i0, 1); break;
  case ROBOCACHE_NEXT: value = one(i0 + 1, 1); break;
  case ROBOCACHE_NEAREST: value = one(nearer, 1); break;
  default: value = pair(i0, minus(&r, -1, i0) / minus(&r, i0 + 1, i0), 1); break;
  }
  if (o->max_gap_ns > 0 && exceeds(&r, i0 + 1, i0, o->max_gap_ns)) {
    if (o->extrapolate == ROBOCACHE_EXTRAP_CLAMP) value = one(nearer, 0);
    return invalid(o->extrapolate, REF_ERR_GAP, value);
  }
  /* the distance from the target to the sample it takes */
  int64_t used = value.idx[0];
  if (!interpolates && o->tolerance_ns > 0 &&
      (used == i0 ? exceeds(&r, -1, i0, o->tolerance_ns)
                  : exceeds(&r, i0 + 1, -1, o->tolerance_ns)))
    return invalid(o->extrapolate, REF_ERR_TOLERANCE, value);
  return value;
}
