/* Header-only helpers of fuzz_ops_resample and fuzz_ops_align: fuzzer-chosen
 * streams (values of any float dtype, times of one time dtype: increasing
 * from a start with steps of many scales, or now and then a raw value that
 * may be NaN, infinite, repeated or out of range; lengths; every option,
 * invalid ones included), target times around the samples (on them, one ns
 * or ulp off, halfway, at and past max_gap / tolerance, outside the row) and
 * the comparison of the CPU backend's out with the reference's: bitwise for
 * linear / nearest / previous / next (both mix two samples with
 * common/lerp.h), within the slerp bound of docs/design.md for slerp. */
#ifndef ROBOCACHE_FUZZ_OPS_INTERP_H
#define ROBOCACHE_FUZZ_OPS_INTERP_H

#include "fuzz_ops.h"

enum { FZ_MAX_B = 3, FZ_MAX_S = 6, FZ_MAX_T = 8, FZ_MAX_D = 5 };

static const int32_t fz_float_dtypes[4] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F64,
                                           ROBOCACHE_DTYPE_F16, ROBOCACHE_DTYPE_BF16};
static const int32_t fz_time_dtypes[3] = {ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F64,
                                          ROBOCACHE_DTYPE_F32};

typedef struct fz_stream {
  fz_tensor values, times, lengths;
  int has_lengths;
  int64_t S, D;
  robocache_interp_options opt;
  double step; /* typical step of the times (ns for int64, else s) */
  int unit;    /* slerp: every group of 4 channels is a unit quaternion (to
                  rounding) after the layout (a broadcast axis may break them) */
} fz_stream;

/* A time option in ns: 0, tiny, about a step, or raw. */
static inline int64_t fz_time_option(fz_in *f, double step_ns) {
  const double s = step_ns < 1 ? 1 : step_ns > 4e18 ? 4e18 : step_ns;
  switch (fz_pick(f, 7)) {
  case 0: return 0;
  case 1: return 1;
  case 2: return (int64_t)(s / 2);
  case 3: return (int64_t)s;
  case 4: return (int64_t)(s * 1.5);
  case 5: return (int64_t)fz_bits(f, 8);
  default: return fz_int(f, -3, 3) * (int64_t)((uint64_t)1 << fz_int(f, 0, 61));
  }
}

/* Options of every kind (an unknown method, policy or quat_order now and
 * then), the time options on the scale of step_ns. */
static inline robocache_interp_options fz_options(fz_in *f, double step_ns) {
  robocache_interp_options o;
  robocache_interp_options_init(&o);
  o.method = fz_rare(f, 16) ? 7 : fz_pick(f, 5);
  o.extrapolate = fz_rare(f, 16) ? -1 : fz_pick(f, 4);
  o.quat_order = fz_rare(f, 16) ? 5 : fz_pick(f, 2);
  o.fill_value = fz_pick(f, 2) ? fz_double(f) : NAN;
  o.max_gap_ns = fz_pick(f, 2) ? fz_time_option(f, step_ns) : 0;
  o.tolerance_ns = fz_pick(f, 2) ? fz_time_option(f, step_ns) : 0;
  o.time_offset_ns = fz_pick(f, 2) ? fz_time_option(f, step_ns) : 0;
  return o;
}

/* The step of a stream's times: ns for int64, else seconds. */
static inline double fz_step(fz_in *f, int32_t time_dtype) {
  static const double steps_ns[] = {1, 2, 3, 1000, 1e6, 33333333, 1e9, 1e12, 3e17};
  static const double steps_s[] = {1e-9, 1.2e-7, 1.0 / 30, 0.25, 1, 1e3, 1e-300, 5e-324, 1e-40};
  return time_dtype == ROBOCACHE_DTYPE_I64 ? steps_ns[fz_pick(f, 9)] : steps_s[fz_pick(f, 9)];
}

/* Fills the times [B,S] of s: per row a start and steps of s->step, now and
 * then a raw value. */
static inline void fz_fill_times(fz_in *f, fz_stream *s, int32_t time_dtype, int64_t B) {
  const int i64 = time_dtype == ROBOCACHE_DTYPE_I64;
  for (int64_t b = 0; b < B; b++) {
    static const double starts_s[] = {0, -3.5, 1.7e9, 1e-300, 3.3e38, -1e-45};
    const int64_t starts_ns[] = {0,
                                 -123456789,
                                 1700000000000000000,
                                 ((int64_t)1 << 62) - 1000,
                                 -((int64_t)1 << 62) + 3,
                                 (int64_t)fz_bits(f, 8) >> 2};
    int64_t tn = starts_ns[fz_pick(f, 6)];
    double ts = starts_s[fz_pick(f, 6)];
    for (int64_t i = 0; i < s->S; i++) {
      const int raw = fz_rare(f, 12);
      const double k = (double)fz_int(f, 1, 3); /* 1, 2 or 3 steps */
      if (i64) {
        if (i > 0) tn = fz_add_sat(tn, (int64_t)(k * s->step));
        fz_set_i64(&s->times, b, i, 0, raw ? (int64_t)fz_bits(f, 8) : tn);
      } else {
        if (i > 0) ts += k * s->step;
        fz_set(&s->times, b, i, 0, raw ? fz_double(f) : ts);
      }
    }
  }
}

/* Values of a stream: mostly special or raw doubles; for slerp, unit
 * quaternions (normalised in double before the rounding to the dtype), the
 * contract of method slerp. */
static inline void fz_fill_values(fz_in *f, fz_stream *s, int64_t B) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < s->S; i++)
      for (int64_t d = 0; d < s->D; d += s->opt.method == ROBOCACHE_SLERP ? 4 : 1) {
        if (s->opt.method != ROBOCACHE_SLERP || s->D % 4 != 0) {
          fz_set(&s->values, b, i, d, fz_double(f));
          continue;
        }
        double q[4], nn = 0;
        for (int c = 0; c < 4; c++) {
          q[c] = (double)(int8_t)fz_u8(f);
          nn += q[c] * q[c];
        }
        for (int c = 0; c < 4; c++)
          fz_set(&s->values, b, i, d + c, nn > 0 ? q[c] / sqrt(nn) : c == 3);
      }
}

/* Whether every quaternion of s is a unit one to within the rounding of
 * its dtype (the contract of slerp; the results of others are unspecified). */
static inline int fz_unit_quaternions(const fz_stream *s, int64_t B) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < s->S; i++)
      for (int64_t d = 0; d + 4 <= s->D; d += 4) {
        double nn = 0;
        for (int c = 0; c < 4; c++)
          nn += fz_get(&s->values, b, i, d + c) * fz_get(&s->values, b, i, d + c);
        if (!(fabs(nn - 1) < 0.02)) return 0;
      }
  return 1;
}

/* A stream of B rows: shapes, layouts, dtypes, options, lengths (now and
 * then outside 1..S), times and values. */
static inline void fz_make_stream(fz_in *f, fz_stream *s, int32_t time_dtype, int64_t B) {
  memset(s, 0, sizeof *s);
  s->S = fz_rare(f, 24) ? 0 : fz_int(f, 1, FZ_MAX_S);
  const int32_t vdtype = fz_float_dtypes[fz_pick(f, 4)];
  s->step = fz_step(f, time_dtype);
  s->opt = fz_options(f, time_dtype == ROBOCACHE_DTYPE_I64 ? s->step : s->step * 1e9);
  s->D = s->opt.method == ROBOCACHE_SLERP && !fz_rare(f, 8) ? 4 * fz_int(f, 0, 2)
                                                            : fz_int(f, 0, FZ_MAX_D);
  const int64_t vshape[3] = {B, s->S, s->D}, tshape[2] = {B, s->S}, lshape[1] = {B};
  fz_make(&s->values, f, vdtype, 3, vshape, 1);
  fz_make(&s->times, f, time_dtype, 2, tshape, 1);
  fz_fill_times(f, s, time_dtype, B);
  fz_fill_values(f, s, B);
  s->unit = fz_unit_quaternions(s, B);
  s->has_lengths = fz_pick(f, 2);
  if (s->has_lengths) {
    fz_make(&s->lengths, f, ROBOCACHE_DTYPE_I64, 1, lshape, 1);
    for (int64_t b = 0; b < B; b++)
      fz_set_i64(&s->lengths, b, 0, 0, fz_rare(f, 16) ? fz_int(f, -1, 7) : fz_int(f, 1, s->S));
  }
}

static inline void fz_free_stream(fz_stream *s) {
  fz_free(&s->values);
  fz_free(&s->times);
  fz_free(&s->lengths);
}

/* Row b's number of valid samples as the library reads it (for choosing
 * targets; clamped to 1..S). */
static inline int64_t fz_row_length(const fz_stream *s, int64_t b) {
  int64_t n = s->has_lengths ? fz_get_i64(&s->lengths, b, 0, 0) : s->S;
  return n < 1 ? 1 : n > s->S ? s->S : n;
}

/* Target times [B,T] around the samples of stream s (its times after
 * time_offset): on a sample, +-1 ns / ulp, +-max_gap, +-tolerance (and one
 * past), halfway to the next sample, outside the row, or raw. */
static inline void fz_fill_targets(fz_in *f, fz_tensor *tt, const fz_stream *s, int64_t B,
                                   int64_t T) {
  const int i64 = tt->t.dtype == ROBOCACHE_DTYPE_I64;
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) {
      const int kind = fz_pick(f, 10);
      if (s->S == 0 || kind == 9) { /* raw */
        if (i64)
          fz_set_i64(tt, b, t, 0, (int64_t)fz_bits(f, 8) >> fz_int(f, 1, 8));
        else
          fz_set(tt, b, t, 0, fz_double(f));
        continue;
      }
      const int64_t n = fz_row_length(s, b), i = fz_int(f, 0, n - 1), j = i + 1 < n ? i + 1 : i;
      const int64_t opts[6] = {0,
                               1,
                               s->opt.max_gap_ns,
                               s->opt.tolerance_ns,
                               fz_add_sat(s->opt.tolerance_ns, 1),
                               (int64_t)fz_bits(f, 2)};
      const int64_t o6 = opts[kind % 6], off = fz_pick(f, 2) || o6 == INT64_MIN ? o6 : -o6;
      if (i64) {
        const int64_t ti = fz_add_sat(fz_get_i64(&s->times, b, i, 0), s->opt.time_offset_ns);
        const int64_t tj = fz_add_sat(fz_get_i64(&s->times, b, j, 0), s->opt.time_offset_ns);
        int64_t x = fz_add_sat(ti, off);
        if (kind == 6) x = ti / 2 + tj / 2 + (ti % 2 + tj % 2) / 2; /* halfway */
        if (kind == 7) x = fz_add_sat(ti, (int64_t)fz_bits(f, 4) * (fz_pick(f, 2) ? 1 : -1));
        if (kind == 8) x = fz_add_sat(i == 0 ? ti : tj, fz_int(f, -50, 50));
        fz_set_i64(tt, b, t, 0, x);
      } else {
        const double o = (double)s->opt.time_offset_ns * 1e-9;
        const double ti = fz_get(&s->times, b, i, 0) + o, tj = fz_get(&s->times, b, j, 0) + o;
        double x = ti + (double)off * 1e-9;
        if (kind == 1) x = nextafter(ti, fz_pick(f, 2) ? INFINITY : -INFINITY);
        if (kind == 6) x = ti + (tj - ti) / 2;
        if (kind == 7) x = ti + (double)(int32_t)fz_bits(f, 4) * s->step / 16;
        if (kind == 8) x = (i == 0 ? ti : tj) + (double)fz_int(f, -50, 50) * s->step / 8;
        fz_set(tt, b, t, 0, x);
      }
    }
}

/* The largest |weight| a linear or slerp target of row b at time x may get
 * from stream s: 1 inside, the edge pair's weight outside (extrapolate). */
static inline double fz_weight_bound(const fz_stream *s, const fz_tensor *tt, int64_t b,
                                     int64_t t) {
  const int64_t n = fz_row_length(s, b);
  if (n < 2) return 1;
  double w = 1;
  if (tt->t.dtype == ROBOCACHE_DTYPE_I64) { /* exact differences (the data check bounds them) */
    const int64_t x = fz_get_i64(tt, b, t, 0) - s->opt.time_offset_ns;
    const int64_t t0 = fz_get_i64(&s->times, b, 0, 0), t1 = fz_get_i64(&s->times, b, 1, 0);
    const int64_t u0 = fz_get_i64(&s->times, b, n - 2, 0), u1 = fz_get_i64(&s->times, b, n - 1, 0);
    if (x < t0) w = fabs((double)(x - t0) / (double)(t1 - t0)) + 1;
    if (x > u1) w = fabs((double)(x - u0) / (double)(u1 - u0));
  } else {
    const double o = (double)s->opt.time_offset_ns * 1e-9, x = fz_get(tt, b, t, 0);
    const double t0 = fz_get(&s->times, b, 0, 0) + o, t1 = fz_get(&s->times, b, 1, 0) + o;
    const double u0 = fz_get(&s->times, b, n - 2, 0) + o, u1 = fz_get(&s->times, b, n - 1, 0) + o;
    if (x < t0) w = fabs((x - t0) / (t1 - t0)) + 1;
    if (x > u1) w = fabs((x - u0) / (u1 - u0));
  }
  return w > 1 ? w : 1;
}

/* Half an ulp of the output dtype relative to a value, and the spacing of
 * its subnormals. */
static inline void fz_out_rounding(int32_t dtype, double *rel, double *abs_) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F16: *rel = 0x1p-11, *abs_ = 0x1p-24; break;
  case ROBOCACHE_DTYPE_BF16: *rel = 0x1p-8, *abs_ = 0x1p-133; break;
  case ROBOCACHE_DTYPE_F64: *rel = 0x1p-53, *abs_ = 0x1p-1074; break;
  default: *rel = 0x1p-24, *abs_ = 0x1p-149; break;
  }
}

/* With FZ_DUMP set in the environment: the stream and targets on stderr
 * (for reading a finding). */
static inline void fz_dump_stream(const fz_stream *s, const fz_tensor *tt, int64_t B, int64_t T) {
  if (!getenv("FZ_DUMP")) return;
  fprintf(stderr, "S %lld D %lld method %d extrap %d gap %lld tol %lld off %lld fill %g\n",
          (long long)s->S, (long long)s->D, (int)s->opt.method, (int)s->opt.extrapolate,
          (long long)s->opt.max_gap_ns, (long long)s->opt.tolerance_ns,
          (long long)s->opt.time_offset_ns, s->opt.fill_value);
  for (int64_t b = 0; b < B; b++) {
    fprintf(stderr, "row %lld (n %lld):\n", (long long)b, (long long)fz_row_length(s, b));
    for (int64_t i = 0; i < s->S; i++) {
      fprintf(stderr, "  t %.17g:", fz_get(&s->times, b, i, 0));
      for (int64_t d = 0; d < s->D; d++) fprintf(stderr, " %.9g", fz_get(&s->values, b, i, d));
      fprintf(stderr, "\n");
    }
    for (int64_t t = 0; t < T; t++) fprintf(stderr, "  x %.17g\n", fz_get(tt, b, t, 0));
  }
}

/* Compares the columns of stream s (from column col) of out_cpu with
 * out_ref over every target (b, t): bitwise (NaN == NaN) except slerp
 * targets, which may differ by the slerp bound. */
static inline void fz_compare_stream_out(const char *what, const fz_stream *s, int64_t col,
                                         const fz_tensor *tt, const fz_tensor *cpu,
                                         const fz_tensor *ref, int64_t B, int64_t T) {
  const int slerp = s->opt.method == ROBOCACHE_SLERP;
  const int wide = s->values.t.dtype == ROBOCACHE_DTYPE_F64 || cpu->t.dtype == ROBOCACHE_DTYPE_F64;
  double rel, tiny;
  fz_out_rounding(cpu->t.dtype, &rel, &tiny);
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++)
      for (int64_t d = 0; d < s->D; d++) {
        if (fz_same_value(cpu, ref, b, t, col + d)) continue;
        const double x = fz_get(cpu, b, t, col + d), y = fz_get(ref, b, t, col + d);
        if (slerp && !s->unit) continue; /* outside the contract: only the status and valid */
        const double w = slerp ? fz_weight_bound(s, tt, b, t) : 1;
        if (slerp && w > 0x1p24) continue; /* docs/design.md: unspecified there */
        if (slerp && !isnan(x) && !isnan(y)) {
          /* docs/design.md: slerp in float32 within 2e-6 (1 + |w|) of the
           * double result (1e-14 in float64), plus the output rounding */
          const double bound = (wide ? 1e-14 : 2e-6) * (1 + w) + 2 * rel * fabs(y) + tiny;
          if (fabs(x - y) <= bound) continue;
        }
        fz_dump_stream(s, tt, B, T);
        FZ_FAIL("%s: out[%lld, %lld, %lld]: cpu %.9g (bits %llx) reference %.9g (bits %llx); "
                "method %d, extrapolate %d, values %s, out %s, |w| <= %g",
                what, (long long)b, (long long)t, (long long)(col + d), x,
                (unsigned long long)fz_raw(cpu, b, t, col + d), y,
                (unsigned long long)fz_raw(ref, b, t, col + d), (int)s->opt.method,
                (int)s->opt.extrapolate, robocache_dtype_name(s->values.t.dtype),
                robocache_dtype_name(cpu->t.dtype), fz_weight_bound(s, tt, b, t));
      }
}

/* valid [B,T,K] (or [B,T] when ndim 2) bitwise. */
static inline void fz_compare_valid(const char *what, const fz_tensor *cpu, const fz_tensor *ref) {
  const int64_t K = cpu->t.ndim == 3 ? cpu->shape[2] : 1;
  for (int64_t b = 0; b < cpu->shape[0]; b++)
    for (int64_t t = 0; t < cpu->shape[1]; t++)
      for (int64_t k = 0; k < K; k++)
        if (fz_raw(cpu, b, t, k) != fz_raw(ref, b, t, k))
          FZ_FAIL("%s: valid[%lld, %lld, %lld]: cpu %d reference %d", what, (long long)b,
                  (long long)t, (long long)k, (int)fz_raw(cpu, b, t, k), (int)fz_raw(ref, b, t, k));
}

#endif
