/* Internal core helpers shared by ops and backends: context, errors, tensor
 * views. Not part of the public API. */
#ifndef ROBOCACHE_CORE_INTERNAL_H
#define ROBOCACHE_CORE_INTERNAL_H

#include "robocache.h"

#include <stdbool.h>

#define RC_ERROR_LEN 512

struct robocache_ctx {
  int num_threads;     /* 0 = all cores */
  void *cuda_stream;   /* cudaStream_t */
  int force_reference; /* 1: use src/ref */
  int no_sync_checks;  /* 1: CUDA calls skip the synchronising data checks
                          (robocache_ctx_set_sync_checks(ctx, 0)); 0 (default) */
  void *workspace;     /* device workspace (CUDA backend) */
  size_t workspace_size;
  int workspace_device;
  void *workspace_event;  /* cudaEvent_t recorded after each call that used the
                             workspace without synchronising */
  void *workspace_stream; /* the stream of that call */
  void *readback;         /* page-locked host buffer of the CUDA read-backs
                             (rc_cuda_read_back), or NULL */
  int readback_failed;    /* 1: allocating it failed; pageable copies */
  char error[RC_ERROR_LEN];
};

/* The context to use: ctx itself, or the calling thread's default. */
robocache_ctx *rc_ctx(robocache_ctx *ctx);

/* OpenMP threads a CPU backend uses: the context's num_threads, 0 = the
 * OpenMP default (omp_get_max_threads); 1 in builds without OpenMP. */
int rc_ctx_threads(robocache_ctx *ctx);

/* Frees what ctx holds on the GPU (workspace, its event, the read-back
 * buffer); src/cuda/context_cuda.cu, nothing in builds without CUDA. */
void rc_cuda_ctx_release(robocache_ctx *ctx);

/* Returns the status of expr from the calling function unless it is
 * ROBOCACHE_OK. */
#define RC_TRY(expr)                                                                               \
  do {                                                                                             \
    robocache_status rc_s_ = (expr);                                                               \
    if (rc_s_ != ROBOCACHE_OK) return rc_s_;                                                       \
  } while (0)

/* Records a formatted error message in ctx and returns status. */
robocache_status rc_error(robocache_ctx *ctx, robocache_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Clears the error message of ctx. */
void rc_clear_error(robocache_ctx *ctx);

/* A tensor with strides always filled (in elements). */
typedef struct rc_view {
  char *data;
  int32_t device_type, device_id, dtype, ndim;
  int64_t shape[ROBOCACHE_MAX_DIMS];
  int64_t strides[ROBOCACHE_MAX_DIMS];
} rc_view;

/* Number of elements of a view. */
int64_t rc_view_numel(const rc_view *v);

/* Validates t (non-NULL, ndim in range, known dtype and device, non-negative
 * shape, data non-NULL when non-empty) and fills *v. `what` names the argument
 * in messages. */
robocache_status rc_view_from(robocache_ctx *ctx, const robocache_tensor *t, const char *what,
                              rc_view *v);

/* INVALID_ARGUMENT unless v->ndim == ndim. */
robocache_status rc_check_ndim(robocache_ctx *ctx, const rc_view *v, const char *what, int ndim);
/* INVALID_ARGUMENT unless v->shape[axis] == size; `axis_name` e.g. "B". */
robocache_status rc_check_dim(robocache_ctx *ctx, const rc_view *v, const char *what, int axis,
                              int64_t size, const char *axis_name);
/* 1 when dtype is one of f32, f64, f16, bf16. */
bool rc_dtype_is_float(int32_t dtype);
/* 1 when dtype is a time dtype: i64 ns, f64 s, f32 s. */
bool rc_dtype_is_time(int32_t dtype);

/* Name of an option value for messages. */
const char *rc_method_name(int32_t method);

#endif
