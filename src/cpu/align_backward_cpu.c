/* Optimised CPU backward of resample: grad_values = W^T grad_out, with W the
 * forward's weights (common/interp.h). Rows are independent scatters, one
 * row per OpenMP iteration, each accumulated in float64 in target order and
 * rounded once to the dtype of the gradients (as the reference and the CUDA
 * backend do): deterministic, no atomics. */
#include <stdlib.h>

#include "cpu/align_cpu_target.h"
#include "ops/align_error.h"

/* Backward of row b with gradients of type T, summed in acc [S*D]; returns
 * the first EXTRAP_ERROR target of the row, or -1. */
#define DEFINE_BACKWARD_ROW(NAME, T)                                                               \
  static int64_t NAME(const rc_align_problem *p, int64_t b, double *restrict acc) {                \
    const rc_stream_view *s = &p->streams[0];                                                      \
    const rc_view *gv = &s->values, *g = &p->out;                                                  \
    T *dst = (T *)gv->data; /* NULL when D == 0: no pointer arithmetic on it */                    \
    const T *src = (const T *)g->data;                                                             \
    const int64_t db = b * gv->strides[0], ds = gv->strides[1], dc = gv->strides[2],               \
                  gb = b * g->strides[0], gs = g->strides[1], gc = g->strides[2], D = s->D;        \
    for (int64_t i = 0; i < s->S * D; i++) acc[i] = 0.0;                                           \
    const int64_t n = cpu_target_count(p, b);                                                      \
    int64_t hint = -1;                                                                             \
    for (int64_t t = 0; t < n; t++) {                                                              \
      rc_target tg = cpu_target(p, s, b, t, &hint);                                                \
      if (tg.mode == RC_TGT_ERROR) return t;                                                       \
      if (tg.mode != RC_TGT_SAMPLE && tg.mode != RC_TGT_INTERP) continue;                          \
      const int64_t gt = gb + t * gs;                                                              \
      const double w1 = tg.mode == RC_TGT_INTERP ? tg.w : 0.0, w0 = 1.0 - w1;                      \
      double *a0 = acc + tg.i0 * D, *a1 = acc + tg.i1 * D;                                         \
      for (int64_t d = 0; d < D; d++) a0[d] += w0 * (double)src[gt + d * gc];                      \
      if (tg.mode == RC_TGT_INTERP)                                                                \
        for (int64_t d = 0; d < D; d++) a1[d] += w1 * (double)src[gt + d * gc];                    \
    }                                                                                              \
    for (int64_t i = 0; i < s->S; i++)                                                             \
      for (int64_t d = 0; d < D; d++) dst[db + i * ds + d * dc] = (T)acc[i * D + d];               \
    return -1;                                                                                     \
  }

DEFINE_BACKWARD_ROW(backward_row_f32, float)
DEFINE_BACKWARD_ROW(backward_row_f64, double)

/* Backward of rows [from, to); returns the first EXTRAP_ERROR as b * T + t,
 * INT64_MAX when none, or -1 when out of memory. */
static int64_t backward_rows(const rc_align_problem *p, int64_t from, int64_t to) {
  const int64_t n = p->streams[0].S * p->streams[0].D;
  double *acc = malloc((size_t)(n > 0 ? n : 1) * sizeof *acc);
  if (!acc) return -1;
  const int wide = p->out.dtype == ROBOCACHE_DTYPE_F64;
  int64_t first_err = INT64_MAX;
  for (int64_t b = from; b < to && first_err == INT64_MAX; b++) {
    const int64_t t = wide ? backward_row_f64(p, b, acc) : backward_row_f32(p, b, acc);
    if (t >= 0) first_err = b * p->T + t;
  }
  free(acc);
  return first_err;
}

robocache_status rc_align_backward_cpu(robocache_ctx *ctx, const rc_align_problem *p) {
  const int threads = rc_ctx_threads(ctx);
  int64_t first_err; /* b * T + t, or -1: out of memory */
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
  if (first_err < 0)
    return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "resample_backward: out of memory");
  if (first_err == INT64_MAX) return ROBOCACHE_OK;
  const int64_t b = first_err / p->T, t = first_err % p->T;
  int64_t hint = -1;
  return rc_align_target_error(ctx, p, 0, b, t, cpu_target(p, &p->streams[0], b, t, &hint).err);
}
