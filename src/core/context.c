/* robocache_ctx: creation, settings and the per-thread default context. */
#include "core/internal.h"

#include <pthread.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static _Thread_local robocache_ctx rc_default_ctx;
static _Thread_local int rc_default_registered;

/* When a thread that used its default context exits, what the context holds
 * (the CUDA workspace, its event, the page-locked read-back buffer) is
 * released: a pthread key's destructor, which runs at thread exit before the
 * thread's storage goes (not for the process's main thread at exit). */
static pthread_key_t rc_default_key;
static pthread_once_t rc_default_once = PTHREAD_ONCE_INIT;
static int rc_default_key_ok;

static void rc_default_release(void *ctx) { rc_cuda_ctx_release(ctx); }

static void rc_default_key_create(void) {
  rc_default_key_ok = pthread_key_create(&rc_default_key, rc_default_release) == 0;
}

robocache_ctx *rc_ctx(robocache_ctx *ctx) {
  if (ctx) return ctx;
  if (!rc_default_registered) {
    rc_default_registered = 1;
    (void)pthread_once(&rc_default_once, rc_default_key_create);
    if (rc_default_key_ok) (void)pthread_setspecific(rc_default_key, &rc_default_ctx);
  }
  return &rc_default_ctx;
}

int rc_ctx_threads(robocache_ctx *ctx) {
#ifdef _OPENMP
  const int t = rc_ctx(ctx)->num_threads, all = omp_get_max_threads();
  return t > 0 ? t : all < ROBOCACHE_MAX_THREADS ? all : ROBOCACHE_MAX_THREADS;
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
  if (num_threads < 0 || num_threads > ROBOCACHE_MAX_THREADS)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "num_threads must be in 0..%d (0: all cores; ROBOCACHE_MAX_THREADS), got %d",
                    ROBOCACHE_MAX_THREADS, num_threads);
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
