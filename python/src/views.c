/* Shapes between the Python API and the C library: unbatched ([S,D] / [S])
 * and channel-less ([B,S]) arguments become the library's [B,S,D] views, and
 * outputs are taken from the caller (out=) or allocated. */
#include "binding.h"

#include <stdio.h>
#include <string.h>

void rcpy_stream_view(rcpy_tensor *values, rcpy_tensor *times, const rcpy_stream_shape *s) {
  if (!s->channels) rcpy_unsqueeze(values, values->t.ndim);
  if (!s->batched) {
    rcpy_unsqueeze(values, 0);
    rcpy_unsqueeze(times, 0);
  }
}

int rcpy_stream_who(char *buf, size_t n, Py_ssize_t k, PyObject *name) {
  if (!name || name == Py_None) {
    snprintf(buf, n, "stream %zd: ", k);
    return 0;
  }
  const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
  if (!s) {
    if (PyUnicode_Check(name)) return -1;
    PyErr_Format(PyExc_TypeError, "stream %zd: name must be a str or None, got %.100s", k,
                 Py_TYPE(name)->tp_name);
    return -1;
  }
  snprintf(buf, n, "stream %zd (%s): ", k, s);
  return 0;
}

int rcpy_check_shape(const rcpy_tensor *t, const char *what, const rcpy_dims *d) {
  int same = t->t.ndim == d->ndim;
  for (int i = 0; same && i < d->ndim; i++) same = t->shape[i] == d->v[i];
  if (same) return 0;
  char want[200], got[200];
  rcpy_dims have = rcpy_dims_of(t);
  rcpy_format_shape(want, sizeof want, d);
  rcpy_format_shape(got, sizeof got, &have);
  PyErr_Format(PyExc_ValueError, "%s: expected shape %s, got %s", what, want, got);
  return -1;
}

/* ValueError when an axis of more than one element has stride 0: its
 * elements would all be written to one place. A tensor without elements
 * has none to write. */
static int check_distinct(const rcpy_tensor *t, const char *what) {
  for (int i = 0; i < t->t.ndim; i++)
    if (t->shape[i] == 0) return 0;
  for (int i = 0; i < t->t.ndim; i++)
    if (t->shape[i] > 1 && t->strides[i] == 0) {
      PyErr_Format(PyExc_ValueError,
                   "%s: axis %d has stride 0 (a broadcast view); an output needs one memory "
                   "location per element",
                   what, i);
      return -1;
    }
  return 0;
}

int rcpy_output(const rcpy_state *st, PyObject *obj, const char *what, int32_t dtype,
                const rcpy_dims *d, int on_cuda, PyObject *stream, rcpy_tensor *t,
                PyObject **result) {
  *result = NULL;
  if (obj == Py_None) {
    if (on_cuda) {
      PyErr_Format(PyExc_ValueError,
                   "%s: inputs are on a CUDA device: pass %s= allocated on that device "
                   "(robocache's Python functions do this with the input's framework)",
                   what, what);
      return -1;
    }
    *result = rcpy_buffer_new(st, what, dtype, d->ndim, d->v, t);
    return *result ? 0 : -1;
  }
  if (rcpy_import(st, obj, what, stream, 1, t) < 0) return -1;
  if (rcpy_check_shape(t, what, d) < 0 || check_distinct(t, what) < 0) {
    rcpy_release(t);
    return -1;
  }
  Py_INCREF(obj);
  *result = obj;
  return 0;
}

int rcpy_optional_lengths(const rcpy_state *st, PyObject *obj, const char *what, int batched,
                          PyObject *stream, rcpy_tensor *t) {
  if (!obj || obj == Py_None) return 0;
  if (!batched) {
    PyErr_Format(PyExc_ValueError,
                 "%s: only for batched inputs ([B,S] times); unbatched rows are complete", what);
    return -1;
  }
  return rcpy_import(st, obj, what, stream, 0, t);
}

int rcpy_cuda_stream(const rcpy_state *st, PyObject *stream, PyObject *check,
                     const rcpy_tensor *ref) {
  if (ref->t.device_type != ROBOCACHE_DEVICE_CUDA) return 0;
  int on = check ? PyObject_IsTrue(check) : 1;
  if (on < 0) return -1;
  void *s = NULL;
  if (stream && stream != Py_None) {
    s = PyLong_AsVoidPtr(stream);
    if (!s && PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "stream: expected an int (cudaStream_t) or None, got %.100s",
                   Py_TYPE(stream)->tp_name);
      return -1;
    }
  }
  robocache_status s_ = robocache_ctx_set_cuda_stream(NULL, s);
  if (s_ == ROBOCACHE_OK) s_ = robocache_ctx_set_sync_checks(NULL, on);
  if (s_ != ROBOCACHE_OK) {
    rcpy_raise_status(st, s_, "stream");
    return -1;
  }
  return 0;
}
