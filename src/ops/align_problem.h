/* The validated form of a resample / align / resample_backward call, handed
 * from src/ops to a backend (src/ref, src/cpu, src/cuda). */
#ifndef ROBOCACHE_OPS_ALIGN_PROBLEM_H
#define ROBOCACHE_OPS_ALIGN_PROBLEM_H

#include "core/internal.h"

typedef struct rc_stream_view {
  const char *name; /* never NULL ("stream 0" when the caller gave none) */
  rc_view values;   /* [B,S,D] float; for backward: grad_values (written) */
  rc_view times;    /* [B,S] time dtype */
  rc_view lengths;  /* [B] i64 when has_lengths */
  int has_lengths;
  robocache_interp_options opt; /* validated */
  int64_t S, D;
  int64_t col; /* first channel of this stream in out */
} rc_stream_view;

typedef struct rc_align_problem {
  int64_t B, T, Dout;
  int32_t K;
  int32_t time_dtype;      /* dtype of every times tensor and target_times */
  rc_stream_view *streams; /* [K] */
  rc_view target_times;    /* [B,T] */
  rc_view target_lengths;  /* [B] i64 when has_target_lengths */
  int has_target_lengths;
  rc_view out;   /* [B,T,Dout]; for backward: grad_out (read) */
  rc_view valid; /* [B,T,K] u8 when has_valid (resample: [B,T,1]) */
  int has_valid;
} rc_align_problem;

/* Data checks for CPU tensors, done before any backend runs: lengths in
 * 1..S, target_lengths in 0..T, times strictly increasing and not NaN within
 * each valid prefix, target times not NaN. Errors name stream, row, index. */
robocache_status rc_align_check_data(robocache_ctx *ctx, const rc_align_problem *p);

/* Backends. Each writes every element of out (and valid when present) for
 * all B x T targets, or returns an error (EXTRAP_ERROR: INVALID_ARGUMENT
 * "stream %d (%s): target out of range: row %lld, index %lld"). */
robocache_status rc_align_ref(robocache_ctx *ctx, const rc_align_problem *p);
robocache_status rc_align_cpu(robocache_ctx *ctx, const rc_align_problem *p);
robocache_status rc_align_cuda(robocache_ctx *ctx, const rc_align_problem *p);

/* Backward (K == 1): reads p->out as grad_out, overwrites
 * p->streams[0].values as grad_values. */
robocache_status rc_align_backward_ref(robocache_ctx *ctx, const rc_align_problem *p);
robocache_status rc_align_backward_cpu(robocache_ctx *ctx, const rc_align_problem *p);
robocache_status rc_align_backward_cuda(robocache_ctx *ctx, const rc_align_problem *p);

typedef robocache_status (*rc_align_fn)(robocache_ctx *ctx, const rc_align_problem *p);

/* The backends of one operation (src/ops/align.c picks one per call): the
 * reference (src/ref), the optimised CPU one (src/cpu) and the CUDA one
 * (src/cuda; src/cuda/cuda_stubs.c in builds without CUDA). */
typedef struct rc_align_backends {
  rc_align_fn ref, cpu, cuda;
} rc_align_backends;

#endif
