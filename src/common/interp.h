/* Per-target interpolation math shared by the optimised CPU backend (src/cpu)
 * and the CUDA backend (src/cuda). Header-only, host + device (RC_HD), free
 * of OpenMP and CUDA specifics. The reference backend (src/ref) deliberately
 * does NOT use this file: it is the independent oracle.
 *
 * For one target time x of row b and one stream, a backend:
 *   1. finds the bracket of x in the row's valid samples t[0..n-1]
 *      (rc_bracket_i64 for int64 ns times, rc_bracket_f64 for float seconds;
 *      or rc_search_*_from with a hint, e.g. the previous sorted target's
 *      sample, then rc_bracket_at_*),
 *   2. turns it into an rc_target with rc_target_decide (what the target gets
 *      under method / extrapolate / max_gap / tolerance, and whether it is
 *      valid),
 *   3. writes the channels: RC_TGT_SAMPLE copies sample i0, RC_TGT_INTERP
 *      applies rc_lerp_* (linear) or rc_slerp_* (slerp) between samples i0
 *      and i1 with weight w of i1, RC_TGT_FILL writes fill_value, RC_TGT_ZERO
 *      (padded targets, decided by the backend) writes 0, RC_TGT_ERROR
 *      reports an EXTRAP_ERROR target (rc_align_target_error).
 *
 * Semantics (DESIGN §1.1):
 *   - in range iff t[0] <= x <= t[n-1] (times already shifted by
 *     time_offset), widened by tolerance for nearest / previous / next: a
 *     target outside within tolerance of t[0] or t[n-1] takes that sample
 *     and is valid; i0 = largest i with t[i] <= x; x == t[i0] -> sample i0;
 *     else i1 = i0 + 1, w = (x - t[i0]) / (t[i1] - t[i0]) (int64 differences
 *     exact, then converted to double).
 *   - nearest: the earlier sample when x is exactly halfway (as LeRobot's
 *     argmin over the frames, which takes the first of equal distances).
 *   - out of range: valid 0; clamp -> edge sample; fill; extrapolate ->
 *     linear/slerp from the edge pair (w < 0 or > 1; n == 1 as clamp),
 *     nearest/previous/next as clamp; error.
 *   - max_gap (checked first): x strictly inside an interval longer than
 *     max_gap is invalid; clamp -> the nearer edge (earlier on a tie), fill,
 *     extrapolate -> the method's value, error.
 *   - tolerance (nearest/previous/next): |x - t[used]| > tolerance is
 *     invalid; clamp/extrapolate -> the method's value, fill, error.
 *   - EXTRAP_ERROR: the reported target is the first offending one in the
 *     row-major order of valid [B,T,K] (row b, then target t, then stream k).
 *   - int64 ns times (source times after time_offset_ns, target times) and
 *     time_offset_ns lie strictly within +-RC_TIME_LIMIT_NS (checked before
 *     any backend runs): every difference of two times then fits in int64.
 */
#ifndef ROBOCACHE_COMMON_INTERP_H
#define ROBOCACHE_COMMON_INTERP_H

#include <math.h>
#include <stdint.h>

#include "common/dtype.h"
#include "common/lerp.h" /* rc_lerp_f32 / rc_lerp_f64 */

/* 2^62 ns, about 146 years: the bound on int64 ns times and offsets
 * (rc_time_in_range). */
#define RC_TIME_LIMIT_NS ((int64_t)1 << 62)

/* 1 when int64 ns time t and t + off (|off| < RC_TIME_LIMIT_NS) both lie
 * strictly within +-RC_TIME_LIMIT_NS (no overflow). */
RC_HD int rc_time_in_range(int64_t t, int64_t off) {
  return t > -RC_TIME_LIMIT_NS && t < RC_TIME_LIMIT_NS && t + off > -RC_TIME_LIMIT_NS &&
         t + off < RC_TIME_LIMIT_NS;
}

/* What a target gets (rc_target.mode). */
enum {
  RC_TGT_ZERO = 0,   /* padded target: 0 in every channel, valid 0 */
  RC_TGT_SAMPLE = 1, /* sample i0 copied (bit-exact) */
  RC_TGT_INTERP = 2, /* linear or slerp between i0 and i1, weight w of i1 */
  RC_TGT_FILL = 3,   /* fill_value in every channel */
  RC_TGT_ERROR = 4   /* EXTRAP_ERROR; rc_target.err says why */
};

/* Why a target is an error under EXTRAP_ERROR (rc_target.err). */
enum {
  RC_TERR_NONE = 0,
  RC_TERR_RANGE = 1,    /* outside t[0]..t[n-1] */
  RC_TERR_GAP = 2,      /* inside an interval longer than max_gap */
  RC_TERR_TOLERANCE = 3 /* farther than tolerance from its sample */
};

/* Where x lies relative to the samples (rc_bracket.pos). */
enum {
  RC_POS_BELOW = 0,  /* x < t[0] */
  RC_POS_ON = 1,     /* x == t[i0] */
  RC_POS_INSIDE = 2, /* t[i0] < x < t[i0 + 1] */
  RC_POS_ABOVE = 3   /* x > t[n-1] */
};

/* The facts about one target that the options need, computed exactly for
 * int64 ns times and in double for float-second times. */
typedef struct rc_bracket {
  int64_t n;            /* number of valid samples of the row */
  int64_t i0;           /* largest i with t[i] <= x; -1 when BELOW */
  int32_t pos;          /* RC_POS_* */
  int32_t first_nearer; /* INSIDE: x - t[i0] <= t[i0+1] - x */
  int32_t over_gap;     /* INSIDE: max_gap_ns > 0 and t[i0+1] - t[i0] > max_gap */
  int32_t far0, far1;   /* INSIDE: tolerance_ns > 0 and x - t[i0] (resp.
                           t[i0+1] - x) > tolerance */
  int32_t near_edge;    /* BELOW / ABOVE: tolerance_ns > 0 and x within
                           tolerance of t[0] (resp. t[n-1]) */
  double w;             /* INSIDE: (x - t[i0]) / (t[i0+1] - t[i0]); BELOW /
                           ABOVE with n >= 2: the same formula on the edge
                           pair (0,1) / (n-2,n-1); else 0 */
} rc_bracket;

/* What one target of one stream gets. */
typedef struct rc_target {
  int64_t i0, i1;   /* samples used (i1 == i0 unless mode is INTERP) */
  double w;         /* INTERP: weight of i1 (may be < 0 or > 1 when
                       extrapolating) */
  int32_t mode;     /* RC_TGT_* */
  int32_t in_range; /* t[0] <= x <= t[n-1] */
  int32_t valid;    /* in range and passes max_gap / tolerance */
  int32_t err;      /* RC_TERR_* when mode is RC_TGT_ERROR */
} rc_target;

/* Largest i in [0,n) with t[i*st] + off <= x, or -1 when x < t[0] + off.
 * t: a row of int64 ns times with element stride st, strictly increasing.
 * hint (or -1): a guess of the answer, e.g. the previous target's when the
 * targets are sorted; the search gallops forward from it (O(log distance)).
 * The answer does not depend on the hint. */
RC_HD int64_t rc_search_i64_from(const int64_t *t, int64_t st, int64_t n, int64_t off, int64_t x,
                                 int64_t hint) {
  int64_t lo = -1, hi = n; /* t[lo] <= x < t[hi], with virtual ends */
  if (hint >= 0 && hint < n) {
    if (t[hint * st] + off <= x) {
      int64_t step = 1;
      for (lo = hint; lo + step < n && t[(lo + step) * st] + off <= x; step *= 2) lo += step;
      hi = lo + step < n ? lo + step : n;
    } else {
      hi = hint;
    }
  }
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (t[mid * st] + off <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* rc_search_i64_from without a hint. */
RC_HD int64_t rc_search_i64(const int64_t *t, int64_t st, int64_t n, int64_t off, int64_t x) {
  return rc_search_i64_from(t, st, n, off, x, -1);
}

/* Time i of a float-second row (f64 or f32, element stride st) shifted by
 * off_s, in double. */
RC_HD double rc_time_f64(int32_t dtype, const void *t, int64_t st, int64_t i, double off_s) {
  return rc_load_time_f64(dtype, t, i * st) + off_s;
}

/* As rc_search_i64_from for float-second times of dtype f64 or f32;
 * comparisons in double after adding off_s (seconds). */
RC_HD int64_t rc_search_f64_from(int32_t dtype, const void *t, int64_t st, int64_t n, double off_s,
                                 double x, int64_t hint) {
  int64_t lo = -1, hi = n;
  if (hint >= 0 && hint < n) {
    if (rc_time_f64(dtype, t, st, hint, off_s) <= x) {
      int64_t step = 1;
      for (lo = hint; lo + step < n && rc_time_f64(dtype, t, st, lo + step, off_s) <= x; step *= 2)
        lo += step;
      hi = lo + step < n ? lo + step : n;
    } else {
      hi = hint;
    }
  }
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (rc_time_f64(dtype, t, st, mid, off_s) <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* rc_search_f64_from without a hint. */
RC_HD int64_t rc_search_f64(int32_t dtype, const void *t, int64_t st, int64_t n, double off_s,
                            double x) {
  return rc_search_f64_from(dtype, t, st, n, off_s, x, -1);
}

/* Bracket of target x (int64 ns) in the n >= 1 valid samples of an int64 ns
 * row (stride st), with o's time_offset_ns, max_gap_ns and tolerance_ns,
 * given i0 as rc_search_i64 returns it. */
RC_HD rc_bracket rc_bracket_at_i64(const robocache_interp_options *o, const int64_t *t, int64_t st,
                                   int64_t n, int64_t x, int64_t i0) {
  rc_bracket r;
  int64_t off = o->time_offset_ns;
  r.n = n;
  r.i0 = i0;
  r.first_nearer = r.over_gap = r.far0 = r.far1 = r.near_edge = 0;
  r.w = 0.0;
  int64_t a = r.i0; /* first sample of the pair giving w */
  if (r.i0 < 0) {
    r.pos = RC_POS_BELOW;
    a = 0;
    r.near_edge = o->tolerance_ns > 0 && t[0] + off - x <= o->tolerance_ns;
  } else if (t[r.i0 * st] + off == x) {
    r.pos = RC_POS_ON;
    return r;
  } else if (r.i0 == n - 1) {
    r.pos = RC_POS_ABOVE;
    a = n - 2;
    r.near_edge = o->tolerance_ns > 0 && x - (t[r.i0 * st] + off) <= o->tolerance_ns;
  } else {
    r.pos = RC_POS_INSIDE;
  }
  if (n < 2) return r;
  int64_t t0 = t[a * st] + off, t1 = t[(a + 1) * st] + off;
  r.w = (double)(x - t0) / (double)(t1 - t0);
  if (r.pos == RC_POS_INSIDE) {
    r.first_nearer = x - t0 <= t1 - x;
    r.over_gap = o->max_gap_ns > 0 && t1 - t0 > o->max_gap_ns;
    r.far0 = o->tolerance_ns > 0 && x - t0 > o->tolerance_ns;
    r.far1 = o->tolerance_ns > 0 && t1 - x > o->tolerance_ns;
  }
  return r;
}

/* As rc_bracket_at_i64 with i0 found by rc_search_i64. (rc_bracket_at_i64
 * serves callers that found i0 themselves, e.g. a search shared by several
 * GPU threads.) */
RC_HD rc_bracket rc_bracket_i64(const robocache_interp_options *o, const int64_t *t, int64_t st,
                                int64_t n, int64_t x) {
  return rc_bracket_at_i64(o, t, st, n, x, rc_search_i64(t, st, n, o->time_offset_ns, x));
}

/* As rc_bracket_at_i64 for float-second times (dtype f64 or f32), given i0
 * as rc_search_f64 returns it: the offset and the max_gap / tolerance
 * options are converted with * 1e-9 and every comparison and difference is
 * in double. */
RC_HD rc_bracket rc_bracket_at_f64(const robocache_interp_options *o, int32_t dtype, const void *t,
                                   int64_t st, int64_t n, double x, int64_t i0) {
  rc_bracket r;
  double off = (double)o->time_offset_ns * 1e-9;
  r.n = n;
  r.i0 = i0;
  r.first_nearer = r.over_gap = r.far0 = r.far1 = r.near_edge = 0;
  r.w = 0.0;
  int64_t a = r.i0;
  const double tol = (double)o->tolerance_ns * 1e-9;
  if (r.i0 < 0) {
    r.pos = RC_POS_BELOW;
    a = 0;
    r.near_edge = o->tolerance_ns > 0 && rc_time_f64(dtype, t, st, 0, off) - x <= tol;
  } else if (rc_time_f64(dtype, t, st, r.i0, off) == x) {
    r.pos = RC_POS_ON;
    return r;
  } else if (r.i0 == n - 1) {
    r.pos = RC_POS_ABOVE;
    a = n - 2;
    r.near_edge = o->tolerance_ns > 0 && x - rc_time_f64(dtype, t, st, r.i0, off) <= tol;
  } else {
    r.pos = RC_POS_INSIDE;
  }
  if (n < 2) return r;
  double t0 = rc_time_f64(dtype, t, st, a, off), t1 = rc_time_f64(dtype, t, st, a + 1, off);
  r.w = (x - t0) / (t1 - t0);
  if (r.pos == RC_POS_INSIDE) {
    r.first_nearer = x - t0 <= t1 - x;
    r.over_gap = o->max_gap_ns > 0 && t1 - t0 > (double)o->max_gap_ns * 1e-9;
    r.far0 = o->tolerance_ns > 0 && x - t0 > tol;
    r.far1 = o->tolerance_ns > 0 && t1 - x > tol;
  }
  return r;
}

/* As rc_bracket_at_f64 with i0 found by rc_search_f64. */
RC_HD rc_bracket rc_bracket_f64(const robocache_interp_options *o, int32_t dtype, const void *t,
                                int64_t st, int64_t n, double x) {
  return rc_bracket_at_f64(o, dtype, t, st, n, x,
                           rc_search_f64(dtype, t, st, n, (double)o->time_offset_ns * 1e-9, x));
}

/* A target that takes sample i. */
RC_HD rc_target rc_target_sample(int64_t i, int32_t in_range, int32_t valid) {
  rc_target r;
  r.i0 = r.i1 = i;
  r.w = 0.0;
  r.mode = RC_TGT_SAMPLE;
  r.in_range = in_range;
  r.valid = valid;
  r.err = RC_TERR_NONE;
  return r;
}

/* A target that takes no sample: mode FILL, ZERO or ERROR (with err). */
RC_HD rc_target rc_target_none(int32_t mode, int32_t in_range, int32_t err) {
  rc_target r = rc_target_sample(0, in_range, 0);
  r.mode = mode;
  r.err = err;
  return r;
}

/* A target interpolated between i0 and i0 + 1 with weight w of i0 + 1. */
RC_HD rc_target rc_target_interp(int64_t i0, double w, int32_t in_range, int32_t valid) {
  rc_target r = rc_target_sample(i0, in_range, valid);
  r.i1 = i0 + 1;
  r.w = w;
  r.mode = RC_TGT_INTERP;
  return r;
}

/* Padded target (index >= target_lengths[b]). */
RC_HD rc_target rc_target_padded(void) { return rc_target_none(RC_TGT_ZERO, 0, RC_TERR_NONE); }

/* An invalid target under policy `extrapolate` whose fallback value (clamp /
 * extrapolate) is `fallback`. */
RC_HD rc_target rc_target_invalid(int32_t extrapolate, int32_t in_range, int32_t err,
                                  rc_target fallback) {
  if (extrapolate == ROBOCACHE_EXTRAP_FILL) return rc_target_none(RC_TGT_FILL, in_range, 0);
  if (extrapolate == ROBOCACHE_EXTRAP_ERROR) return rc_target_none(RC_TGT_ERROR, in_range, err);
  fallback.in_range = in_range;
  fallback.valid = 0;
  return fallback;
}

/* What a target with bracket br gets under options o (see the file
 * comment). */
RC_HD rc_target rc_target_decide(const robocache_interp_options *o, rc_bracket br) {
  int32_t m = o->method, ex = o->extrapolate;
  int interpolating = m == ROBOCACHE_LINEAR || m == ROBOCACHE_SLERP;
  if (br.pos == RC_POS_ON) return rc_target_sample(br.i0, 1, 1);
  if (br.pos != RC_POS_INSIDE) {
    int64_t edge = br.pos == RC_POS_BELOW ? 0 : br.n - 1;
    if (br.near_edge && !interpolating) return rc_target_sample(edge, 1, 1);
    rc_target fb = rc_target_sample(edge, 0, 0);
    if (ex == ROBOCACHE_EXTRAP_EXTRAPOLATE && interpolating && br.n >= 2)
      fb = rc_target_interp(br.pos == RC_POS_BELOW ? 0 : br.n - 2, br.w, 0, 0);
    return rc_target_invalid(ex, 0, RC_TERR_RANGE, fb);
  }
  int64_t i0 = br.i0, i1 = br.i0 + 1;
  int64_t used = m == ROBOCACHE_PREVIOUS ? i0
                 : m == ROBOCACHE_NEXT   ? i1
                 : br.first_nearer       ? i0
                                         : i1;
  rc_target value = interpolating ? rc_target_interp(i0, br.w, 1, 1) : rc_target_sample(used, 1, 1);
  if (br.over_gap) {
    if (ex == ROBOCACHE_EXTRAP_CLAMP) value = rc_target_sample(br.first_nearer ? i0 : i1, 1, 0);
    return rc_target_invalid(ex, 1, RC_TERR_GAP, value);
  }
  if (!interpolating && (used == i0 ? br.far0 : br.far1))
    return rc_target_invalid(ex, 1, RC_TERR_TOLERANCE, value);
  return value;
}

/* Threshold on |dot(q0, q1)| above which slerp falls back to nlerp. */
#define RC_SLERP_NLERP_DOT 0.9995

/* Slerp of one quaternion group: out = slerp(q0, q1, w), shortest arc (q1
 * negated when dot < 0), nlerp when |dot| > RC_SLERP_NLERP_DOT, always
 * renormalised. w outside [0,1] extrapolates along the same great circle.
 * The 4 components may be in xyzw or wxyz order: every operation here is the
 * same on each component, so the order does not matter. out may alias q0/q1.
 * The dot product, and with it the choice of arc and of slerp or nlerp, is
 * computed in double in the order q0[0] q1[0] + ... + q0[3] q1[3], exactly as
 * the reference backend computes it: two quaternions almost 90 degrees apart
 * (dot near 0) get the same arc in every backend. The angle is acos of that
 * double dot (acosf of the dot rounded to float would be off by up to 2e-6
 * rad near the nlerp threshold, an error that extrapolation multiplies by
 * |w|). The rest is in float (rc_slerp_f32) or double (rc_slerp_f64). */
#define RC_DEFINE_SLERP(NAME, T, SIN, SQRT)                                                        \
  RC_HD void NAME(const T *q0, const T *q1, T w, T *out) {                                         \
    double dd = 0.0;                                                                               \
    for (int i = 0; i < 4; i++) dd += (double)q0[i] * (double)q1[i];                               \
    const T sign = dd < 0.0 ? (T)-1 : (T)1;                                                        \
    dd = dd < 0.0 ? -dd : dd;                                                                      \
    T c0 = (T)1 - w, c1 = w;                                                                       \
    if (dd <= RC_SLERP_NLERP_DOT) {                                                                \
      T theta = (T)acos(dd), inv = (T)1 / SIN(theta);                                              \
      c0 = SIN(((T)1 - w) * theta) * inv;                                                          \
      c1 = SIN(w * theta) * inv;                                                                   \
    }                                                                                              \
    c1 *= sign;                                                                                    \
    T r[4], nn = (T)0;                                                                             \
    for (int i = 0; i < 4; i++) {                                                                  \
      r[i] = c0 * q0[i] + c1 * q1[i];                                                              \
      nn += r[i] * r[i];                                                                           \
    }                                                                                              \
    T inv_norm = nn > (T)0 ? (T)1 / SQRT(nn) : (T)1;                                               \
    for (int i = 0; i < 4; i++) out[i] = r[i] * inv_norm;                                          \
  }

RC_DEFINE_SLERP(rc_slerp_f32, float, sinf, sqrtf)
RC_DEFINE_SLERP(rc_slerp_f64, double, sin, sqrt)
#undef RC_DEFINE_SLERP

#endif
