/* Optimised CPU backend: the rc_target of one (row, target, stream), shared
 * by the forward (align_cpu.c) and the backward (align_backward_cpu.c). */
#ifndef ROBOCACHE_CPU_ALIGN_CPU_TARGET_H
#define ROBOCACHE_CPU_ALIGN_CPU_TARGET_H

#include <stdint.h>

#include "common/interp.h"
#include "ops/align_problem.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Number of valid targets of row b. */
static inline int64_t cpu_target_count(const rc_align_problem *p, int64_t b) {
  if (!p->has_target_lengths) return p->T;
  return rc_load_i64(p->target_lengths.data, b * p->target_lengths.strides[0]);
}

/* What target t of row b gets from stream s; t must be < cpu_target_count. */
static inline rc_target cpu_target(const rc_align_problem *p, const rc_stream_view *s, int64_t b,
                                   int64_t t) {
  int64_t n = s->has_lengths ? rc_load_i64(s->lengths.data, b * s->lengths.strides[0]) : s->S;
  const rc_view *ts = &s->times, *tt = &p->target_times;
  const char *row = ts->data + b * ts->strides[0] * (int64_t)robocache_dtype_size(p->time_dtype);
  int64_t at = b * tt->strides[0] + t * tt->strides[1];
  rc_bracket br;
  if (p->time_dtype == ROBOCACHE_DTYPE_I64)
    br =
        rc_bracket_i64(&s->opt, (const int64_t *)row, ts->strides[1], n, rc_load_i64(tt->data, at));
  else
    br = rc_bracket_f64(&s->opt, p->time_dtype, row, ts->strides[1], n,
                        rc_load_time_f64(p->time_dtype, tt->data, at));
  return rc_target_decide(&s->opt, br);
}

/* OpenMP thread count for a context setting (0 = the OpenMP default). */
static inline int cpu_threads(int num_threads) {
#ifdef _OPENMP
  return num_threads > 0 ? num_threads : omp_get_max_threads();
#else
  (void)num_threads;
  return 1;
#endif
}

#endif
