/* robocache_ctx: creation, settings and the per-thread default context. */
#include "core/internal.h"

#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void rc_cuda_ctx_release(robocache_ctx *ctx); /* src/cuda, or the stub below */

static _Thread_local robocache_ctx rc_default_ctx;

robocache_ctx *rc_ctx(robocache_ctx *ctx) { return ctx ? ctx : &rc_default_ctx; }

int rc_ctx_threads(robocache_ctx *ctx) {
#ifdef _OPENMP
  const int t = rc_ctx(ctx)->num_threads;
  return t > 0 ? t : omp_get_max_threads();
#else
  (void)ctx;
  return 1;
#endif
}

robocache_status robocache_ctx_create(robocache_ctx **ctx) {
  if (!ctx) return rc_error(NULL, ROBOCACHE_INVALID_ARGUMENT, "ctx_create: ctx is NULL");
  *ctx = calloc(1, sizeof **ctx);
  if (!*ctx) return rc_error(NULL, ROBOCACHE_OUT_OF_MEMORY, "ctx_create: out of memory");
  return ROBOCACHE_OK;
}

void robocache_ctx_free(robocache_ctx *ctx) {
  if (!ctx) return;
  rc_cuda_ctx_release(ctx);
  free(ctx);
}

robocache_status robocache_ctx_set_num_threads(robocache_ctx *ctx, int num_threads) {
  if (num_threads < 0)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "num_threads must be >= 0, got %d",
                    num_threads);
  rc_ctx(ctx)->num_threads = num_threads;
  return ROBOCACHE_OK;
}

robocache_status robocache_ctx_set_cuda_stream(robocache_ctx *ctx, void *stream) {
  rc_ctx(ctx)->cuda_stream = stream;
  return ROBOCACHE_OK;
}

robocache_status robocache_ctx_set_force_reference(robocache_ctx *ctx, int on) {
  rc_ctx(ctx)->force_reference = on != 0;
  return ROBOCACHE_OK;
}

robocache_status robocache_ctx_set_sync_checks(robocache_ctx *ctx, int on) {
  rc_ctx(ctx)->no_sync_checks = on == 0;
  return ROBOCACHE_OK;
}

#ifndef ROBOCACHE_HAVE_CUDA
void rc_cuda_ctx_release(robocache_ctx *ctx) { (void)ctx; }
int robocache_has_cuda(void) { return 0; }
#endif
