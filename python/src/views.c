/* Shapes between the Python API and the C library: unbatched ([S,D] / [S])
 * and channel-less ([B,S]) arguments become the library's [B,S,D] views, and
 * outputs are taken from the caller (out=) or allocated. */
#include "binding.h"

#include <stdio.h>
#include <string.h>

static void format_shape(char *buf, size_t n, int ndim, const int64_t *shape) {
  size_t used = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < ndim && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)shape[i]);
  if (used < n) snprintf(buf + used, n - used, ndim == 1 ? ",)" : ")");
}

int rcpy_stream_view(rcpy_tensor *values, rcpy_tensor *times, int batched, const char *who,
                     int *channels) {
  int tdim = batched ? 2 : 1;
  if (times->t.ndim != tdim) {
    PyErr_Format(PyExc_ValueError, "%stimes: expected %s, got %d dimensions", who,
                 batched ? "[B,S] (batched, as target_times [B,T])"
                         : "[S] (unbatched, as target_times [T])",
                 (int)times->t.ndim);
    return -1;
  }
  int vdim = values->t.ndim;
  if (vdim != tdim && vdim != tdim + 1) {
    PyErr_Format(PyExc_ValueError, "%svalues: expected %s for times of %d dimension(s), got %d",
                 who, batched ? "[B,S,D] or [B,S]" : "[S,D] or [S]", tdim, vdim);
    return -1;
  }
  *channels = vdim == tdim + 1;
  if (!*channels) rcpy_unsqueeze(values, vdim);
  if (!batched) {
    rcpy_unsqueeze(values, 0);
    rcpy_unsqueeze(times, 0);
  }
  return 0;
}

int rcpy_check_shape(const rcpy_tensor *t, const char *what, int ndim, const int64_t *shape) {
  int same = t->t.ndim == ndim;
  for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
  if (same) return 0;
  char want[160], got[160];
  format_shape(want, sizeof want, ndim, shape);
  format_shape(got, sizeof got, t->t.ndim, t->shape);
  PyErr_Format(PyExc_ValueError, "%s: expected shape %s, got %s", what, want, got);
  return -1;
}

int rcpy_output(PyObject *obj, const char *what, int32_t dtype, int ndim, const int64_t *shape,
                int on_cuda, PyObject *stream, rcpy_tensor *t, PyObject **result) {
  *result = NULL;
  if (obj == Py_None) {
    if (on_cuda) {
      PyErr_Format(PyExc_ValueError,
                   "%s: inputs are on a CUDA device: pass %s= allocated on that device "
                   "(robocache's Python functions do this with the input's framework)",
                   what, what);
      return -1;
    }
    *result = rcpy_buffer_new(dtype, ndim, shape, t);
    return *result ? 0 : -1;
  }
  if (rcpy_import(obj, what, stream, 1, t) < 0) return -1;
  if (rcpy_check_shape(t, what, ndim, shape) < 0) {
    rcpy_release(t);
    return -1;
  }
  Py_INCREF(obj);
  *result = obj;
  return 0;
}

int rcpy_optional_lengths(PyObject *obj, const char *what, int batched, PyObject *stream,
                          rcpy_tensor *t) {
  if (obj == Py_None) return 0;
  if (!batched) {
    PyErr_Format(PyExc_ValueError,
                 "%s: only for batched inputs ([B,S] times); unbatched rows are complete", what);
    return -1;
  }
  return rcpy_import(obj, what, stream, 0, t);
}

int rcpy_cuda_stream(PyObject *stream, PyObject *check, const rcpy_tensor *ref) {
  if (ref->t.device_type != ROBOCACHE_DEVICE_CUDA) return 0;
  int on = PyObject_IsTrue(check);
  if (on < 0) return -1;
  void *s = NULL;
  if (stream != Py_None) {
    s = PyLong_AsVoidPtr(stream);
    if (!s && PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "stream: expected an int (cudaStream_t) or None, got %.100s",
                   Py_TYPE(stream)->tp_name);
      return -1;
    }
  }
  robocache_status st = robocache_ctx_set_cuda_stream(NULL, s);
  if (st == ROBOCACHE_OK) st = robocache_ctx_set_sync_checks(NULL, on);
  if (st != ROBOCACHE_OK) {
    rcpy_raise_status(st, "stream");
    return -1;
  }
  return 0;
}
