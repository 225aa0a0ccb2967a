/* Tensor descriptors: dtype facts and validated strided views. */
#include "core/internal.h"

#include <string.h>

size_t robocache_dtype_size(robocache_dtype dtype) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F32: return 4;
  case ROBOCACHE_DTYPE_F64: return 8;
  case ROBOCACHE_DTYPE_F16: return 2;
  case ROBOCACHE_DTYPE_BF16: return 2;
  case ROBOCACHE_DTYPE_I64: return 8;
  case ROBOCACHE_DTYPE_I32: return 4;
  case ROBOCACHE_DTYPE_U8: return 1;
  }
  return 0;
}

const char *robocache_dtype_name(robocache_dtype dtype) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F32: return "float32";
  case ROBOCACHE_DTYPE_F64: return "float64";
  case ROBOCACHE_DTYPE_F16: return "float16";
  case ROBOCACHE_DTYPE_BF16: return "bfloat16";
  case ROBOCACHE_DTYPE_I64: return "int64";
  case ROBOCACHE_DTYPE_I32: return "int32";
  case ROBOCACHE_DTYPE_U8: return "uint8";
  }
  return "unknown";
}

bool rc_dtype_is_float(int32_t dtype) {
  return dtype == ROBOCACHE_DTYPE_F32 || dtype == ROBOCACHE_DTYPE_F64 ||
         dtype == ROBOCACHE_DTYPE_F16 || dtype == ROBOCACHE_DTYPE_BF16;
}

bool rc_dtype_is_time(int32_t dtype) {
  return dtype == ROBOCACHE_DTYPE_I64 || dtype == ROBOCACHE_DTYPE_F64 ||
         dtype == ROBOCACHE_DTYPE_F32;
}

int64_t rc_view_numel(const rc_view *v) {
  const int64_t n = rc_shape_bytes(v->ndim, v->shape, 1);
  return n < 0 ? INT64_MAX : n;
}

/* Bytes from the first element of v to the end of the farthest one (0 when
 * empty), or -1 past RC_MAX_BYTES. */
static int64_t view_extent(const rc_view *v) {
  if (rc_shape_bytes(v->ndim, v->shape, 1) == 0) return 0;
  int64_t last = 0; /* element offset of the farthest element */
  for (int i = 0; i < v->ndim && last >= 0; i++) {
    if (v->shape[i] == 1) continue;
    const int64_t s = v->strides[i],
                  span = s == INT64_MIN ? -1 : rc_mul_size(v->shape[i] - 1, s < 0 ? -s : s);
    last = span < 0 || last > RC_MAX_BYTES - span ? -1 : last + span;
  }
  return last < 0 || last == RC_MAX_BYTES
             ? -1
             : rc_mul_size(last + 1, (int64_t)robocache_dtype_size(v->dtype));
}

robocache_status rc_view_from(robocache_ctx *ctx, const robocache_tensor *t, const char *what,
                              rc_view *v) {
  if (!t) return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: tensor is NULL", what);
  if (t->ndim < 0 || t->ndim > ROBOCACHE_MAX_DIMS)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: ndim %d outside 0..%d", what,
                    (int)t->ndim, ROBOCACHE_MAX_DIMS);
  if (robocache_dtype_size((robocache_dtype)t->dtype) == 0)
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE, "%s: unknown dtype code %d", what,
                    (int)t->dtype);
  if (t->device_type != ROBOCACHE_DEVICE_CPU && t->device_type != ROBOCACHE_DEVICE_CUDA)
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DEVICE, "%s: unsupported device type %d", what,
                    (int)t->device_type);
  if (t->ndim > 0 && !t->shape)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: shape is NULL", what);
  memset(v, 0, sizeof *v);
  v->data = t->data;
  v->device_type = t->device_type;
  v->device_id = t->device_id;
  v->dtype = t->dtype;
  v->ndim = t->ndim;
  int64_t stride = 1; /* -1 once the C-contiguous strides pass RC_MAX_BYTES */
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] < 0)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: negative size %lld on axis %d", what,
                      (long long)t->shape[i], i);
    v->shape[i] = t->shape[i];
    v->strides[i] = t->strides ? t->strides[i] : stride;
    if (stride >= 0) stride = rc_mul_size(stride, t->shape[i] > 0 ? t->shape[i] : 1);
  }
  if (!v->data && rc_view_numel(v) > 0)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: data is NULL", what);
  if ((!t->strides && stride < 0 && rc_view_numel(v) > 0) || view_extent(v) < 0)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "%s: its elements span more than %.4g bytes (shape and strides of %d "
                    "dimensions): no buffer is that large",
                    what, (double)RC_MAX_BYTES, (int)v->ndim);
  return ROBOCACHE_OK;
}

robocache_status rc_check_ndim(robocache_ctx *ctx, const rc_view *v, const char *what, int ndim) {
  if (v->ndim != ndim)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: expected %d dimensions, got %d", what,
                    ndim, (int)v->ndim);
  return ROBOCACHE_OK;
}

robocache_status rc_check_dim(robocache_ctx *ctx, const rc_view *v, const char *what, int axis,
                              int64_t size, const char *axis_name) {
  if (v->shape[axis] != size)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "%s: size %lld on axis %d does not match %s = %lld", what,
                    (long long)v->shape[axis], axis, axis_name, (long long)size);
  return ROBOCACHE_OK;
}
