/* Error messages of the I/O module. */
#include "io_error.h"

#include <stdarg.h>
#include <stdio.h>

robocache_status rc_io_fail(rc_io_err *err, robocache_status status, const char *fmt, ...) {
  if (!err) return status;
  err->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return status;
}
