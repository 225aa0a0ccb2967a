/* Status names and per-context error messages. */
#include "core/internal.h"

#include <stdarg.h>
#include <stdio.h>

const char *robocache_status_name(robocache_status s) {
  switch (s) {
  case ROBOCACHE_OK: return "OK";
  case ROBOCACHE_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
  case ROBOCACHE_UNSUPPORTED_DTYPE: return "UNSUPPORTED_DTYPE";
  case ROBOCACHE_UNSUPPORTED_DEVICE: return "UNSUPPORTED_DEVICE";
  case ROBOCACHE_DEVICE_MISMATCH: return "DEVICE_MISMATCH";
  case ROBOCACHE_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
  case ROBOCACHE_CAPACITY_EXCEEDED: return "CAPACITY_EXCEEDED";
  case ROBOCACHE_CUDA_ERROR: return "CUDA_ERROR";
  case ROBOCACHE_IO_ERROR: return "IO_ERROR";
  case ROBOCACHE_INTERNAL: return "INTERNAL";
  }
  return "UNKNOWN";
}

robocache_status rc_error(robocache_ctx *ctx, robocache_status status, const char *fmt, ...) {
  robocache_ctx *c = rc_ctx(ctx);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->error, sizeof c->error, fmt, ap);
  va_end(ap);
  return status;
}

void rc_clear_error(robocache_ctx *ctx) { rc_ctx(ctx)->error[0] = '\0'; }

const char *robocache_ctx_error_message(const robocache_ctx *ctx) {
  return rc_ctx((robocache_ctx *)ctx)->error;
}

const char *rc_method_name(int32_t method) {
  switch (method) {
  case ROBOCACHE_LINEAR: return "linear";
  case ROBOCACHE_NEAREST: return "nearest";
  case ROBOCACHE_PREVIOUS: return "previous";
  case ROBOCACHE_NEXT: return "next";
  case ROBOCACHE_SLERP: return "slerp";
  }
  return "unknown";
}
