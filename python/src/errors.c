/* robocache_status -> Python exception, carrying the library's message:
 * INVALID_ARGUMENT, DEVICE_MISMATCH, UNSUPPORTED_DEVICE, CAPACITY_EXCEEDED ->
 * ValueError; UNSUPPORTED_DTYPE -> TypeError; OUT_OF_MEMORY -> MemoryError;
 * CUDA_ERROR, IO_ERROR, INTERNAL -> robocache.RobocacheError. */
#include "binding.h"

PyObject *rcpy_error;

PyObject *rcpy_raise_status(robocache_status s, const char *who) {
  PyObject *type;
  switch (s) {
  case ROBOCACHE_INVALID_ARGUMENT:
  case ROBOCACHE_UNSUPPORTED_DEVICE:
  case ROBOCACHE_DEVICE_MISMATCH:
  case ROBOCACHE_CAPACITY_EXCEEDED: type = PyExc_ValueError; break;
  case ROBOCACHE_UNSUPPORTED_DTYPE: type = PyExc_TypeError; break;
  case ROBOCACHE_OUT_OF_MEMORY: type = PyExc_MemoryError; break;
  default: type = rcpy_error; break;
  }
  const char *msg = robocache_ctx_error_message(NULL);
  PyErr_Format(type, "%s: %s (%s)", who, msg && *msg ? msg : "failed", robocache_status_name(s));
  return NULL;
}
