/* Device code shared by the CUDA forward and backward of align / resample:
 * the per-stream descriptor passed by value to the kernels, the search
 * of a target's bracket, and the asynchronous data checks. Semantics come
 * from src/common/interp.h (the same per-target math as the CPU backend).
 *
 * The first lanes of each warp resolve one target (b, t) each
 * (rc_decide_target); the warp then moves the channels of those targets
 * together (align_cuda.cu). */
#ifndef ROBOCACHE_CUDA_ALIGN_KERNELS_CUH
#define ROBOCACHE_CUDA_ALIGN_KERNELS_CUH

#include "common/interp.h"
#include "cuda/context_cuda.cuh"

/* Streams handled by one kernel launch (descriptors travel as kernel
 * parameters: no host-to-device copy, so calls can be captured in graphs).
 * More streams are launched in chunks of this many. */
#define RC_CUDA_MAX_STREAMS 16
#define RC_CUDA_BLOCK 128

/* One stream of a launch. Strides in elements. */
struct rc_stream_desc {
  const void *values;     /* [B,S,D] (forward) */
  const void *times;      /* [B,S] */
  const int64_t *lengths; /* [B] or NULL (= S) */
  int64_t vs_b, vs_s, vs_d;
  int64_t ts_b, ts_s;
  int64_t ls;
  int64_t S, D, col;
  robocache_interp_options opt;
  int32_t dtype;       /* values dtype */
  int32_t vec;         /* channels per access (1: scalar, strided) */
  int32_t log_group;   /* log2 of the lanes that share one target's slots */
  int32_t log_rounds;  /* log2 of the slot rounds per lane and target */
  int32_t log_targets; /* log2 of the targets of one warp (>= 5 - log_group) */
  int32_t block_begin; /* first block of this stream in the grid */
  int32_t simple;      /* rc_is_simple(&opt) and S <= INT32_MAX: rc_decide_found
                          applies (int64 times), with 32-bit search indices */
  int32_t group;       /* wide path: threads per target */
  int32_t rounds;      /* wide path: slots per thread */
};

/* What every kernel of a launch shares: the targets and the check record. */
struct rc_target_desc {
  const void *times; /* target_times [B,T] */
  int64_t ts_b, ts_s;
  const int64_t *lengths; /* target_lengths [B] or NULL (= T) */
  int64_t ls;
  int64_t B, T;
  int32_t time_dtype;
  int32_t K_total;              /* streams of the whole call */
  rc_cuda_check_record *record; /* NULL: unchecked (see docs/cuda.md) */
};

/* Times of one row, compared with a target: int64 ns exactly, float seconds
 * in double (as rc_search_i64 / rc_search_f64). */
template <int TIME_DTYPE> struct rc_row_times;

template <> struct rc_row_times<ROBOCACHE_DTYPE_I64> {
  typedef int64_t time_t;
  const int64_t *t;
  int64_t st, off;
  __device__ __forceinline__ rc_row_times(const rc_stream_desc &s, int64_t b)
      : t((const int64_t *)s.times + b * s.ts_b), st(s.ts_s), off(s.opt.time_offset_ns) {}
  __device__ __forceinline__ int64_t at(int64_t i) const { return t[i * st] + off; }
  __device__ __forceinline__ rc_bracket bracket(const robocache_interp_options *o, int64_t n,
                                                int64_t x, int64_t i0) const {
    return rc_bracket_at_i64(o, t, st, n, x, i0);
  }
  /* a target time / sample i that the data checks accept (rc_time_in_range) */
  static __device__ __forceinline__ bool usable(int64_t x) { return rc_time_in_range(x, 0); }
  __device__ __forceinline__ bool usable_at(int64_t i) const {
    return rc_time_in_range(t[i * st], off);
  }
};

template <int TIME_DTYPE> struct rc_row_times_float {
  typedef double time_t;
  const void *t;
  int64_t st;
  double off;
  __device__ __forceinline__ rc_row_times_float(const rc_stream_desc &s, int64_t b)
      : t((const char *)s.times + b * s.ts_b * (TIME_DTYPE == ROBOCACHE_DTYPE_F64 ? 8 : 4)),
        st(s.ts_s), off((double)s.opt.time_offset_ns * 1e-9) {}
  __device__ __forceinline__ double at(int64_t i) const {
    return rc_time_f64(TIME_DTYPE, t, st, i, off);
  }
  __device__ __forceinline__ rc_bracket bracket(const robocache_interp_options *o, int64_t n,
                                                double x, int64_t i0) const {
    return rc_bracket_at_f64(o, TIME_DTYPE, t, st, n, x, i0);
  }
  static __device__ __forceinline__ bool usable(double x) { return isfinite(x); }
  __device__ __forceinline__ bool usable_at(int64_t i) const { return usable(at(i)); }
};
template <> struct rc_row_times<ROBOCACHE_DTYPE_F64> : rc_row_times_float<ROBOCACHE_DTYPE_F64> {
  using rc_row_times_float<ROBOCACHE_DTYPE_F64>::rc_row_times_float;
};
template <> struct rc_row_times<ROBOCACHE_DTYPE_F32> : rc_row_times_float<ROBOCACHE_DTYPE_F32> {
  using rc_row_times_float<ROBOCACHE_DTYPE_F32>::rc_row_times_float;
};

/* Target time (b, t) in the unit of TIME_DTYPE. */
template <int TIME_DTYPE>
__device__ __forceinline__ typename rc_row_times<TIME_DTYPE>::time_t
rc_target_time(const rc_target_desc &a, int64_t b, int64_t t) {
  int64_t i = b * a.ts_b + t * a.ts_s;
  if (TIME_DTYPE == ROBOCACHE_DTYPE_I64) return ((const int64_t *)a.times)[i];
  return (typename rc_row_times<TIME_DTYPE>::time_t)rc_load_time_f64(TIME_DTYPE, a.times, i);
}

/* What rc_search found: lo = largest i in [0,n) with time(i) <= x, or -1,
 * and the times it loaded at lo (when lo >= 0) and at lo + 1 (when lo + 1 <
 * n), so that a caller needs no second read of them. */
template <class T> struct rc_found {
  int64_t lo;
  T t_lo, t_hi;
};

/* Samples loaded together by one probe round of rc_search (they usually
 * share a sector), and the most probe rounds before bisection. */
#define RC_PROBES 4
#define RC_PROBE_ROUNDS 3

/* b - a as a float, for a <= b (int64: exact in unsigned arithmetic, then
 * rounded; the result only places probes). */
__device__ __forceinline__ float rc_span(int64_t a, int64_t b) {
  return (float)((uint64_t)b - (uint64_t)a);
}
__device__ __forceinline__ float rc_span(double a, double b) { return (float)(b - a); }

/* First index of a probe window for the estimate `pos` of the target's lo:
 * the window [g, g + RC_PROBES) starts one before it, moved inside the
 * bracket (lo, hi) where the bracket is wide enough, and inside [1, n). A
 * NaN estimate counts as lo. */
template <class I> __device__ __forceinline__ I rc_probe_start(float pos, I lo, I hi, I n) {
  I g = !(pos >= (float)(lo + 2))              ? lo + 1
        : !(pos < (float)(hi - RC_PROBES + 2)) ? hi - RC_PROBES + 1
                                               : (I)pos - 1;
  return g < 1 ? 1 : g > n - RC_PROBES ? n - RC_PROBES : g;
}

/* rc_found of x (lo as rc_search_i64 / rc_search_f64), found by one thread:
 * the two edges (first = time(0), last = time(n-1), loaded by the caller
 * together with x), then up to RC_PROBE_ROUNDS rounds of RC_PROBES samples
 * loaded together, then bisection of what is left. The first round probes
 * around the index that the row's mean rate predicts (sensor streams are
 * close to uniform, but their timestamps drift from it by a few samples
 * over thousands); when the target lies beyond the window, the next round
 * probes where the window's own rate predicts it, which also copes with a
 * drop-out elsewhere in the row (a bench-like row of 2,000 samples at 100 Hz
 * with +-10 % jitter per step: at most 3 rounds of dependent loads in all,
 * where a bisection after one missed window took 13). The invariant
 * time(lo) <= x < time(hi) (virtual ends -1, n) holds whatever the data, so
 * indices stay in [-1, n); the estimates only choose which samples to load. */
template <class I, class Row>
__device__ __forceinline__ rc_found<typename Row::time_t>
rc_search(const Row &row, I n, typename Row::time_t x, typename Row::time_t first,
          typename Row::time_t last) {
  typedef typename Row::time_t time_t;
  I lo = -1, hi = n;
  time_t t_lo = first, t_hi = last;
  if (n > RC_PROBES) {
    if (!(first <= x)) return {-1, first, first};
    if (last <= x) return {n - 1, last, last};
    lo = 0;
    hi = n - 1;
    float pos = __fdividef(rc_span(first, x), rc_span(first, last)) * (float)(n - 1);
#pragma unroll 1
    for (int round = 0; round < RC_PROBE_ROUNDS; round++) {
      const I g = rc_probe_start(pos, lo, hi, n);
      time_t probe[RC_PROBES];
#pragma unroll
      for (int k = 0; k < RC_PROBES; k++) probe[k] = row.at(g + k);
#pragma unroll
      for (int k = 0; k < RC_PROBES; k++) {
        /* selects, no branches: a probe inside (lo, hi) moves one end */
        const I i = g + k;
        const bool inside = i > lo && i < hi, below = probe[k] <= x;
        const bool up = inside && below, down = inside && !below;
        lo = up ? i : lo;
        t_lo = up ? probe[k] : t_lo;
        hi = down ? i : hi;
        t_hi = down ? probe[k] : t_hi;
      }
      if (hi - lo <= 1) break;
      /* samples per unit of time in the window (NaN, inf or 0 for bad data:
       * the next window then starts at the bracket's edge) */
      const float rate =
          __fdividef((float)(RC_PROBES - 1), rc_span(probe[0], probe[RC_PROBES - 1]));
      const I last_probe = g + RC_PROBES - 1;
      if (lo >= last_probe)
        pos = (float)last_probe + rc_span(probe[RC_PROBES - 1], x) * rate;
      else if (hi <= g)
        pos = (float)g - rc_span(x, probe[0]) * rate;
      else
        break; /* inside the window, unresolved: only for non-increasing data */
    }
  }
  while (hi - lo > 1) {
    I mid = lo + ((hi - lo) >> 1);
    time_t t_mid = row.at(mid);
    if (t_mid <= x)
      lo = mid, t_lo = t_mid;
    else
      hi = mid, t_hi = t_mid;
  }
  return {lo, t_lo, t_hi};
}

/* The default options (linear, clamp, no max_gap or tolerance; any time
 * offset), for which the forward has kernels of their own. */
static inline bool rc_is_simple(const robocache_interp_options *o) {
  return o->method == ROBOCACHE_LINEAR && o->extrapolate == ROBOCACHE_EXTRAP_CLAMP &&
         o->max_gap_ns <= 0 && o->tolerance_ns <= 0;
}

/* Valid samples of row b (lengths[b], or S); 0 when lengths[b] is outside
 * 1..S (bad data: the target is then marked invalid, nothing is read). */
__device__ __forceinline__ int64_t rc_row_length(const rc_stream_desc &s, int64_t b) {
  if (!s.lengths) return s.S;
  int64_t n = s.lengths[b * s.ls];
  return n >= 1 && n <= s.S ? n : 0;
}

/* Valid targets of row b, clamped to 0..T. */
__device__ __forceinline__ int64_t rc_target_count(const rc_target_desc &a, int64_t b) {
  if (!a.lengths) return a.T;
  int64_t n = a.lengths[b * a.ls];
  return n < 0 ? 0 : n > a.T ? a.T : n;
}

/* Extra mode for a target of a row whose data is unusable (length out of
 * range, non-finite or out-of-range target time, decreasing extrapolation pair) or an
 * EXTRAP_ERROR target: NaN in every channel, valid 0. */
#define RC_TGT_POISON 5

/* The decision for the default options (rc_is_simple: linear, clamp) for
 * int64 target time x in a row of n >= 1 samples, from what rc_search found
 * there, with no further reads of the row: the same result as
 * rc_target_decide (interp.h: BELOW / ABOVE clamp to the edge sample with
 * valid 0, ON takes the sample, INSIDE interpolates). */
__device__ __forceinline__ rc_target rc_decide_found(int64_t n, int64_t x,
                                                     const rc_found<int64_t> &f) {
  if (f.lo < 0) return rc_target_sample(0, 0, 0);
  if (f.t_lo == x) return rc_target_sample(f.lo, 1, 1);
  if (f.lo == n - 1) return rc_target_sample(n - 1, 0, 0);
  return rc_target_interp(f.lo, (double)(x - f.t_lo) / (double)(f.t_hi - f.t_lo), 1, 1);
}

/* The decision for the default options and int64 ns times (rc_is_simple)
 * of target t, at time x, of a row of n samples (0: bad length) with nt
 * valid targets; search() gives the rc_found of x (rc_search, or where the
 * row's times are in shared memory, rc_shared_search). */
template <class Search>
__device__ __forceinline__ rc_target rc_decide_simple(int64_t n, int64_t nt, int64_t t, int64_t x,
                                                      Search search) {
  if (t >= nt) return rc_target_padded();
  if (n == 0) return rc_target_none(RC_TGT_POISON, 0, RC_TERR_NONE);
  return rc_decide_found(n, x, search());
}

/* What target (b, t) of stream s gets: rc_target_decide on the bracket
 * (one thread), with the local safety checks above; EXTRAP_ERROR targets are
 * recorded in a.record (min key = first in row-major [B,T,K] order).
 * Streams with the default options and int64 ns times take rc_decide_found
 * (SIMPLE: known at compile time, the rest of the code is left out). */
template <int TIME_DTYPE, bool SIMPLE = false>
__device__ __forceinline__ rc_target rc_decide_target(const rc_target_desc &a,
                                                      const rc_stream_desc &s, int k, int64_t b,
                                                      int64_t t) {
  static_assert(!SIMPLE || TIME_DTYPE == ROBOCACHE_DTYPE_I64, "SIMPLE: int64 ns times");
  /* every load that needs only (b, t) first, so that they are in flight
   * together (the row's edges are in bounds even for a bad length) */
  typedef rc_row_times<TIME_DTYPE> Row;
  int64_t nt = rc_target_count(a, b), n = rc_row_length(s, b);
  typename Row::time_t x = rc_target_time<TIME_DTYPE>(a, b, t);
  Row row(s, b);
  typename Row::time_t first = row.at(0), last = row.at(n > 0 ? n - 1 : 0);
  if constexpr (TIME_DTYPE == ROBOCACHE_DTYPE_I64)
    if (SIMPLE || s.simple)
      return rc_decide_simple(n, nt, t, x,
                              [&] { return rc_search(row, (int32_t)n, x, first, last); });
  if (t >= nt) return rc_target_padded();
  rc_target poison = rc_target_none(RC_TGT_POISON, 0, RC_TERR_NONE);
  if (n == 0) return poison;
  if (!Row::usable(x)) return poison;
  const robocache_interp_options &o = s.opt;
  rc_bracket br = row.bracket(&o, n, x, rc_search(row, n, x, first, last).lo);
  rc_target r = rc_target_decide(&o, br);
  /* inside, the search guarantees t[i0] < x < t[i0+1]; an extrapolation pair
   * must be increasing too */
  if (r.mode == RC_TGT_INTERP && br.pos != RC_POS_INSIDE && !(row.at(r.i0) < row.at(r.i1)))
    return poison;
  if (r.mode == RC_TGT_ERROR) {
    if (a.record)
      atomicMin(&a.record->target_key,
                (unsigned long long)(((b * a.T + t) * a.K_total + k) * 4 + r.err));
    return poison;
  }
  return r;
}

/* Data checks of DESIGN §1.1 on the device (the CPU path does them in
 * src/ops/align_check.c): lengths in 1..S, times strictly increasing and
 * finite (int64: within +-RC_TIME_LIMIT_NS, also after time_offset_ns) within
 * each valid prefix; with `targets`, also target_lengths in 0..T and finite
 * (in range) target times. Element e of the flat index space
 * [streams' B*S_k ..., B*T] is checked by one thread; a failure sets
 * record->data_bad (the host then finds the first error and its message). */
template <int TIME_DTYPE>
__device__ void rc_check_data(const rc_target_desc &a, const rc_stream_desc *streams, int K,
                              bool targets, int64_t total) {
  typedef rc_row_times<TIME_DTYPE> Row;
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    int64_t r = e;
    bool bad = false;
    int k = 0;
    while (k < K && r >= a.B * streams[k].S) r -= a.B * streams[k].S, k++;
    if (k < K) {
      const rc_stream_desc &s = streams[k];
      int64_t b = r / s.S, i = r % s.S;
      int64_t n = s.lengths ? s.lengths[b * s.ls] : s.S;
      if (n < 1 || n > s.S) {
        bad = i == 0;
      } else if (i < n) {
        Row row(s, b);
        typename Row::time_t ti = row.at(i);
        bad = !row.usable_at(i) || (i > 0 && row.usable_at(i - 1) && !(row.at(i - 1) < ti));
      }
    } else if (targets) {
      int64_t b = r / a.T, t = r % a.T;
      int64_t nt = a.lengths ? a.lengths[b * a.ls] : a.T;
      if (nt < 0 || nt > a.T)
        bad = t == 0;
      else if (t < nt)
        bad = !Row::usable(rc_target_time<TIME_DTYPE>(a, b, t));
    }
    if (bad) a.record->data_bad = 1u; /* every writer stores the same value */
  }
}

#endif
