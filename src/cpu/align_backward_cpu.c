/* Optimised CPU backward of resample: grad_values = W^T grad_out, with W the
 * forward's weights (common/interp.h). Rows are independent scatters, one
 * row per OpenMP iteration, each accumulated in target order: deterministic,
 * no atomics. Arithmetic in the dtype of the gradients (float32 or float64). */
#include "cpu/align_cpu_target.h"
#include "ops/align_error.h"

/* Backward of row b in arithmetic T; returns the first EXTRAP_ERROR target
 * of the row, or -1. */
#define DEFINE_BACKWARD_ROW(NAME, T)                                                               \
  static int64_t NAME(const rc_align_problem *p, int64_t b) {                                      \
    const rc_stream_view *s = &p->streams[0];                                                      \
    const rc_view *gv = &s->values, *g = &p->out;                                                  \
    T *dst = (T *)gv->data + b * gv->strides[0];                                                   \
    const T *src = (const T *)g->data + b * g->strides[0];                                         \
    const int64_t ds = gv->strides[1], dc = gv->strides[2], gs = g->strides[1],                    \
                  gc = g->strides[2], D = s->D;                                                    \
    for (int64_t i = 0; i < s->S; i++)                                                             \
      for (int64_t d = 0; d < D; d++) dst[i * ds + d * dc] = 0;                                    \
    const int64_t n = cpu_target_count(p, b);                                                      \
    int64_t hint = -1;                                                                             \
    for (int64_t t = 0; t < n; t++) {                                                              \
      rc_target tg = cpu_target(p, s, b, t, &hint);                                                \
      if (tg.mode == RC_TGT_ERROR) return t;                                                       \
      if (tg.mode != RC_TGT_SAMPLE && tg.mode != RC_TGT_INTERP) continue;                          \
      const T *gt = src + t * gs;                                                                  \
      const T w1 = tg.mode == RC_TGT_INTERP ? (T)tg.w : (T)0, w0 = (T)1 - w1;                      \
      T *d0 = dst + tg.i0 * ds, *d1 = dst + tg.i1 * ds;                                            \
      if (dc == 1 && gc == 1) {                                                                    \
        for (int64_t d = 0; d < D; d++) d0[d] += w0 * gt[d];                                       \
        if (tg.mode == RC_TGT_INTERP)                                                              \
          for (int64_t d = 0; d < D; d++) d1[d] += w1 * gt[d];                                     \
      } else {                                                                                     \
        for (int64_t d = 0; d < D; d++) d0[d * dc] += w0 * gt[d * gc];                             \
        if (tg.mode == RC_TGT_INTERP)                                                              \
          for (int64_t d = 0; d < D; d++) d1[d * dc] += w1 * gt[d * gc];                           \
      }                                                                                            \
    }                                                                                              \
    return -1;                                                                                     \
  }

DEFINE_BACKWARD_ROW(backward_row_f32, float)
DEFINE_BACKWARD_ROW(backward_row_f64, double)

/* Backward of rows [from, to); returns the first EXTRAP_ERROR as b * T + t,
 * or INT64_MAX. */
static int64_t backward_rows(const rc_align_problem *p, int64_t from, int64_t to) {
  const int wide = p->out.dtype == ROBOCACHE_DTYPE_F64;
  for (int64_t b = from; b < to; b++) {
    const int64_t t = wide ? backward_row_f64(p, b) : backward_row_f32(p, b);
    if (t >= 0) return b * p->T + t;
  }
  return INT64_MAX;
}

robocache_status rc_align_backward_cpu(robocache_ctx *ctx, const rc_align_problem *p) {
  const int threads = rc_ctx_threads(ctx);
  int64_t first_err; /* b * T + t */
  if (cpu_serial(p, threads, p->B)) {
    first_err = backward_rows(p, 0, p->B);
  } else {
    first_err = INT64_MAX;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(min : first_err)
    for (int64_t b = 0; b < p->B; b++) {
      const int64_t i = backward_rows(p, b, b + 1);
      if (i < first_err) first_err = i;
    }
  }
  if (first_err == INT64_MAX) return ROBOCACHE_OK;
  const int64_t b = first_err / p->T, t = first_err % p->T;
  int64_t hint = -1;
  return rc_align_target_error(ctx, p, 0, b, t, cpu_target(p, &p->streams[0], b, t, &hint).err);
}
