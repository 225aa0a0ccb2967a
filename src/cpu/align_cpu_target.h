/* Optimised CPU backend: the rc_target of one (row, target, stream) and the
 * serial-or-parallel choice, shared by the forward (align_cpu.c) and the
 * backward (align_backward_cpu.c). */
#ifndef ROBOCACHE_CPU_ALIGN_CPU_TARGET_H
#define ROBOCACHE_CPU_ALIGN_CPU_TARGET_H

#include <stdint.h>

#include "common/interp.h"
#include "ops/align_problem.h"

/* Whether the calling thread should do all the work itself, without an
 * OpenMP region: one thread, one task, or work (targets x (channels + 8)) up
 * to 8192. Entering a region costs ~0.5 us even with one thread; on 2 cores
 * two threads only start to win above ~8k (a few us of serial work). */
static inline int cpu_serial(const rc_align_problem *p, int threads, int64_t tasks) {
  return threads == 1 || tasks == 1 || p->B * p->T <= 8192 / (p->Dout + 8);
}

/* Number of valid targets of row b. */
static inline int64_t cpu_target_count(const rc_align_problem *p, int64_t b) {
  if (!p->has_target_lengths) return p->T;
  return rc_load_i64(p->target_lengths.data, b * p->target_lengths.strides[0]);
}

/* What target t of row b gets from stream s; t must be < cpu_target_count.
 * *hint: a guess of the bracket (the previous target's, -1 for none),
 * updated to this target's; it only changes the speed of the search. */
static inline rc_target cpu_target(const rc_align_problem *p, const rc_stream_view *s, int64_t b,
                                   int64_t t, int64_t *hint) {
  int64_t n = s->has_lengths ? rc_load_i64(s->lengths.data, b * s->lengths.strides[0]) : s->S;
  const rc_view *ts = &s->times, *tt = &p->target_times;
  const char *row = ts->data + b * ts->strides[0] * (int64_t)robocache_dtype_size(p->time_dtype);
  const int64_t st = ts->strides[1], at = b * tt->strides[0] + t * tt->strides[1];
  rc_bracket br;
  if (p->time_dtype == ROBOCACHE_DTYPE_I64) {
    const int64_t x = rc_load_i64(tt->data, at);
    *hint = rc_search_i64_from((const int64_t *)row, st, n, s->opt.time_offset_ns, x, *hint);
    br = rc_bracket_at_i64(&s->opt, (const int64_t *)row, st, n, x, *hint);
  } else {
    const double x = rc_load_time_f64(p->time_dtype, tt->data, at);
    *hint = rc_search_f64_from(p->time_dtype, row, st, n, (double)s->opt.time_offset_ns * 1e-9, x,
                               *hint);
    br = rc_bracket_at_f64(&s->opt, p->time_dtype, row, st, n, x, *hint);
  }
  return rc_target_decide(&s->opt, br);
}

#endif
