/* robocache._C.time_direct_resample: the cost of the bare C call, for
 * bench/bench_binding_overhead.py. Imports the tensors once, then times
 * `samples` runs of `calls` back-to-back robocache_resample calls each with
 * CLOCK_MONOTONIC, in C. */
#include "binding.h"

#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* time_direct_resample(values [B,S,D], times [B,S], target_times [B,T],
 *                      samples, calls) -> list of `samples` mean ns per call */
static PyObject *py_time_direct_resample(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 5) return PyErr_Format(PyExc_TypeError, "_C.time_direct_resample takes 5 arguments");
  Py_ssize_t repeats = PyLong_AsSsize_t(a[3]), calls = PyLong_AsSsize_t(a[4]);
  if (repeats < 1 || calls < 1)
    return PyErr_Occurred() ? NULL
                            : PyErr_Format(PyExc_ValueError, "samples and calls must be >= 1");
  rcpy_tensor v = {0}, t = {0}, tt = {0}, o = {0};
  PyObject *buf = NULL, *result = NULL;
  int64_t *samples = malloc((size_t)repeats * sizeof *samples);
  if (!samples) return PyErr_NoMemory();
  if (rcpy_import(a[0], "values", Py_None, 0, &v) < 0 ||
      rcpy_import(a[1], "times", Py_None, 0, &t) < 0 ||
      rcpy_import(a[2], "target_times", Py_None, 0, &tt) < 0)
    goto done;
  if (v.t.ndim != 3 || tt.t.ndim != 2) {
    PyErr_SetString(PyExc_ValueError, "time_direct_resample: batched inputs only");
    goto done;
  }
  int64_t shape[3] = {tt.shape[0], tt.shape[1], v.shape[2]};
  if (!(buf = rcpy_buffer_new(v.t.dtype, 3, shape, &o))) goto done;
  robocache_status st = ROBOCACHE_OK;
  for (Py_ssize_t i = 0; i < repeats && st == ROBOCACHE_OK; i++) {
    int64_t t0 = now_ns();
    for (Py_ssize_t c = 0; c < calls && st == ROBOCACHE_OK; c++)
      st = robocache_resample(NULL, &v.t, &t.t, NULL, &tt.t, NULL, NULL, &o.t, NULL);
    samples[i] = (now_ns() - t0) / calls;
  }
  if (st != ROBOCACHE_OK) {
    rcpy_raise_status(st, "time_direct_resample");
    goto done;
  }
  result = PyList_New(repeats);
  for (Py_ssize_t i = 0; result && i < repeats; i++) {
    PyObject *x = PyLong_FromLongLong(samples[i]);
    if (!x)
      Py_CLEAR(result);
    else
      PyList_SET_ITEM(result, i, x);
  }
done:
  rcpy_release(&v);
  rcpy_release(&t);
  rcpy_release(&tt);
  Py_XDECREF(buf);
  free(samples);
  return result;
}

PyMethodDef rcpy_bench_methods[] = {
    {"time_direct_resample", (PyCFunction)(void (*)(void))py_time_direct_resample, METH_FASTCALL,
     "Per-call ns of robocache_resample called directly from C (benchmark)."},
    {NULL, NULL, 0, NULL}};
