/* Sizes: products of shapes and byte counts, checked for overflow, so that
 * no size the library computes wraps around. */
#include "core/internal.h"

#include <stdio.h>

int64_t rc_mul_size(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (a != 0 && b > RC_MAX_BYTES / a) return -1;
  return a * b;
}

int64_t rc_shape_bytes(int ndim, const int64_t *shape, size_t esize) {
  int64_t n = (int64_t)esize;
  for (int i = 0; i < ndim; i++) n = rc_mul_size(n, shape[i]);
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0) return 0;
  return n;
}

robocache_status rc_check_output_size(robocache_ctx *ctx, const char *what, int ndim,
                                      const int64_t *shape, size_t esize) {
  if (rc_shape_bytes(ndim, shape, esize) >= 0) return ROBOCACHE_OK;
  char dims[200] = "";
  size_t len = 0;
  double elements = 1.0;
  for (int i = 0; i < ndim && len < sizeof dims; i++) {
    len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%lld", i ? ", " : "",
                            (long long)shape[i]);
    elements *= (double)shape[i];
  }
  return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY,
                  "%s: shape [%s] is %.4g elements of %zu bytes, more than the %.4g bytes a "
                  "buffer can hold",
                  what, dims, elements, esize, (double)RC_MAX_BYTES);
}
