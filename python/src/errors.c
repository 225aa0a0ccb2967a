/* robocache_status -> Python exception, carrying the library's message:
 * INVALID_ARGUMENT, DEVICE_MISMATCH, UNSUPPORTED_DEVICE, CAPACITY_EXCEEDED ->
 * ValueError; UNSUPPORTED_DTYPE -> TypeError; OUT_OF_MEMORY -> MemoryError;
 * CUDA_ERROR, IO_ERROR, INTERNAL -> robocache.RobocacheError. */
#include "binding.h"

#include <string.h>

/* 1 when msg already starts with "who:" or "who (" (the library names its
 * operation in some messages: "voxel_downsample: leaf size ..."). */
static int names_op(const char *msg, const char *who) {
  size_t n = strlen(who);
  return strncmp(msg, who, n) == 0 && (msg[n] == ':' || (msg[n] == ' ' && msg[n + 1] == '('));
}

PyObject *rcpy_raise_status(const rcpy_state *st, robocache_status s, const char *who) {
  PyObject *type;
  switch (s) {
  case ROBOCACHE_INVALID_ARGUMENT:
  case ROBOCACHE_UNSUPPORTED_DEVICE:
  case ROBOCACHE_DEVICE_MISMATCH:
  case ROBOCACHE_CAPACITY_EXCEEDED: type = PyExc_ValueError; break;
  case ROBOCACHE_UNSUPPORTED_DTYPE: type = PyExc_TypeError; break;
  case ROBOCACHE_OUT_OF_MEMORY: type = PyExc_MemoryError; break;
  default: type = st->error; break;
  }
  const char *msg = robocache_ctx_error_message(NULL);
  if (!msg || !*msg) msg = "failed";
  PyObject *text = rcpy_text(msg);
  if (!text) return NULL;
  if (names_op(msg, who))
    PyErr_Format(type, "%U (%s)", text, robocache_status_name(s));
  else
    PyErr_Format(type, "%s: %U (%s)", who, text, robocache_status_name(s));
  Py_DECREF(text);
  return NULL;
}

PyObject *rcpy_text(const char *s) {
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "backslashreplace");
}

PyObject *rcpy_raise_io(robocache_status s, const char *msg) {
  PyObject *text = rcpy_text(msg);
  if (!text) return NULL;
  PyErr_SetObject(s == ROBOCACHE_IO_ERROR        ? PyExc_OSError
                  : s == ROBOCACHE_OUT_OF_MEMORY ? PyExc_MemoryError
                                                 : PyExc_ValueError,
                  text);
  Py_DECREF(text);
  return NULL;
}
