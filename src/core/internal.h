/* Internal core helpers shared by ops and backends: context, errors, tensor
 * views. Not part of the public API. */
#ifndef ROBOCACHE_CORE_INTERNAL_H
#define ROBOCACHE_CORE_INTERNAL_H

#include "robocache.h"

#include <stdbool.h>
#include <stdint.h>

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

/* Number of elements of a view (INT64_MAX when the product of its shape
 * does not fit in int64; rc_view_from accepts such a shape only with
 * strides that keep the elements within RC_MAX_BYTES). */
int64_t rc_view_numel(const rc_view *v);

/* The largest number of bytes one buffer can hold (PTRDIFF_MAX). Every size
 * the library computes (outputs, work arrays) is checked against it. */
#define RC_MAX_BYTES ((int64_t)PTRDIFF_MAX)

/* a * b for a, b >= 0, or -1 when the product passes RC_MAX_BYTES (or a or
 * b is negative). */
int64_t rc_mul_size(int64_t a, int64_t b);
/* Bytes of a C-contiguous tensor of `shape` (ndim dims, non-negative) with
 * esize-byte elements: 0 when a dimension is 0, -1 when it passes
 * RC_MAX_BYTES. */
int64_t rc_shape_bytes(int ndim, const int64_t *shape, size_t esize);
/* OUT_OF_MEMORY, naming `what`, the shape and its number of elements,
 * unless rc_shape_bytes(ndim, shape, esize) >= 0 (an output the library
 * would have to fill). */
robocache_status rc_check_output_size(robocache_ctx *ctx, const char *what, int ndim,
                                      const int64_t *shape, size_t esize);

/* Validates t (non-NULL, ndim in range, known dtype and device, non-negative
 * shape, data non-NULL when non-empty, elements within RC_MAX_BYTES of the
 * first: sum of (shape - 1) * |stride| over the axes, times the element
 * size) and fills *v. `what` names the argument in messages. */
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
