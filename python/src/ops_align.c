/* robocache._C.resample / align / resample_backward: DLPack arguments in,
 * the C library called with the GIL released, outputs returned as the
 * caller's out= objects or as robocache Buffers. Positional arguments only:
 * robocache/_api.py holds the documented keyword signatures. */
#include "binding.h"

#include <stdio.h>
#include <string.h>

/* Shape of an output as the caller sees it: [B,]T[,D]. Returns ndim. */
static int user_shape(int64_t *shape, int batched, int64_t B, int64_t T, int last, int64_t D) {
  int n = 0;
  if (batched) shape[n++] = B;
  shape[n++] = T;
  if (last) shape[n++] = D;
  return n;
}

/* Adds the unit axes that user_shape dropped, giving [B,T,D]. */
static void lib_view(rcpy_tensor *t, int batched, int last) {
  if (!last) rcpy_unsqueeze(t, t->t.ndim);
  if (!batched) rcpy_unsqueeze(t, 0);
}

/* target_times: [T] (unbatched) or [B,T]; returns batched (0/1) or -1. */
static int import_targets(PyObject *obj, PyObject *stream, rcpy_tensor *tt) {
  if (rcpy_import(obj, "target_times", stream, 0, tt) < 0) return -1;
  int nd = tt->t.ndim;
  if (nd != 1 && nd != 2) {
    PyErr_Format(PyExc_ValueError, "target_times: expected [T] or [B,T], got %d dimensions", nd);
    return -1;
  }
  if (nd == 1) rcpy_unsqueeze(tt, 0);
  return nd == 2;
}

static const robocache_tensor *opt_t(const rcpy_tensor *t) { return t->t.shape ? &t->t : NULL; }

/* resample(values, times, target_times, lengths, target_lengths, method,
 *          extrapolate, fill_value, max_gap, tolerance, time_offset,
 *          quat_order, out, valid, out_dtype, return_valid, stream[, check])
 * -> (out, valid or None); check (default True): the CUDA data checks
 * (robocache_ctx_set_sync_checks) */
static PyObject *py_resample(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 17 && n != 18) return PyErr_Format(PyExc_TypeError, "_C.resample takes 17-18 arguments");
  PyObject *stream = a[16], *out_obj = NULL, *valid_obj = NULL, *result = NULL;
  rcpy_tensor v = {0}, t = {0}, tt = {0}, len = {0}, tlen = {0}, o = {0}, val = {0};
  int batched, channels;
  robocache_interp_options opt;
  if (rcpy_import(a[0], "values", stream, 0, &v) < 0 ||
      rcpy_import(a[1], "times", stream, 0, &t) < 0 ||
      (batched = import_targets(a[2], stream, &tt)) < 0 ||
      rcpy_stream_view(&v, &t, batched, "", &channels) < 0 ||
      rcpy_optional_lengths(a[3], "lengths", batched, stream, &len) < 0 ||
      rcpy_optional_lengths(a[4], "target_lengths", batched, stream, &tlen) < 0 ||
      rcpy_interp_options(a + 5, t.t.dtype, "", &opt) < 0)
    goto done;
  int32_t out_dtype = v.t.dtype;
  if (rcpy_float_dtype(a[14], "out_dtype", &out_dtype) < 0) goto done;
  int64_t shape[3];
  int nd = user_shape(shape, batched, tt.shape[0], tt.shape[1], channels, v.shape[2]);
  int on_cuda = tt.t.device_type == ROBOCACHE_DEVICE_CUDA;
  if (rcpy_output(a[12], "out", out_dtype, nd, shape, on_cuda, stream, &o, &out_obj) < 0) goto done;
  lib_view(&o, batched, channels);
  int want_valid = a[13] != Py_None ? 1 : PyObject_IsTrue(a[15]);
  if (want_valid < 0) goto done;
  if (want_valid) {
    nd = user_shape(shape, batched, tt.shape[0], tt.shape[1], 0, 0);
    if (rcpy_output(a[13], "valid", RCPY_DTYPE_BOOL, nd, shape, on_cuda, stream, &val, &valid_obj) <
        0)
      goto done;
    if (!batched) rcpy_unsqueeze(&val, 0);
  }
  if (rcpy_cuda_stream(stream, RCPY_CHECK_ARG(a, n, 17), &tt) < 0) goto done;
  robocache_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = robocache_resample(NULL, &v.t, &t.t, opt_t(&len), &tt.t, opt_t(&tlen), &opt, &o.t,
                          want_valid ? &val.t : NULL);
  Py_END_ALLOW_THREADS;
  if (st != ROBOCACHE_OK)
    rcpy_raise_status(st, "resample");
  else
    result = PyTuple_Pack(2, out_obj, valid_obj ? valid_obj : Py_None);
done:
  rcpy_release(&v);
  rcpy_release(&t);
  rcpy_release(&tt);
  rcpy_release(&len);
  rcpy_release(&tlen);
  rcpy_release(&o);
  rcpy_release(&val);
  Py_XDECREF(out_obj);
  Py_XDECREF(valid_obj);
  return result;
}

/* resample_backward(grad_out, times, target_times, lengths, target_lengths,
 *                   method, extrapolate, fill_value, max_gap, tolerance,
 *                   time_offset, quat_order, grad_values, stream[, check])
 * -> grad_values (overwritten) */
static PyObject *py_resample_backward(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 14 && n != 15)
    return PyErr_Format(PyExc_TypeError, "_C.resample_backward takes 14-15 arguments");
  PyObject *stream = a[13], *result = NULL;
  rcpy_tensor go = {0}, t = {0}, tt = {0}, len = {0}, tlen = {0}, gv = {0};
  int batched, channels;
  robocache_interp_options opt;
  if (rcpy_import(a[12], "grad_values", stream, 1, &gv) < 0 ||
      rcpy_import(a[1], "times", stream, 0, &t) < 0 ||
      (batched = import_targets(a[2], stream, &tt)) < 0 ||
      rcpy_stream_view(&gv, &t, batched, "", &channels) < 0 ||
      rcpy_optional_lengths(a[3], "lengths", batched, stream, &len) < 0 ||
      rcpy_optional_lengths(a[4], "target_lengths", batched, stream, &tlen) < 0 ||
      rcpy_interp_options(a + 5, t.t.dtype, "", &opt) < 0 ||
      rcpy_import(a[0], "grad_out", stream, 0, &go) < 0)
    goto done;
  int64_t shape[3];
  int nd = user_shape(shape, batched, tt.shape[0], tt.shape[1], channels, gv.shape[2]);
  if (rcpy_check_shape(&go, "grad_out", nd, shape) < 0) goto done;
  lib_view(&go, batched, channels);
  if (rcpy_cuda_stream(stream, RCPY_CHECK_ARG(a, n, 14), &tt) < 0) goto done;
  robocache_status st;
  Py_BEGIN_ALLOW_THREADS;
  st =
      robocache_resample_backward(NULL, &go.t, &t.t, opt_t(&len), &tt.t, opt_t(&tlen), &opt, &gv.t);
  Py_END_ALLOW_THREADS;
  if (st != ROBOCACHE_OK) {
    rcpy_raise_status(st, "resample_backward");
  } else {
    result = a[12];
    Py_INCREF(result);
  }
done:
  rcpy_release(&go);
  rcpy_release(&t);
  rcpy_release(&tt);
  rcpy_release(&len);
  rcpy_release(&tlen);
  rcpy_release(&gv);
  return result;
}

/* Per-stream state of an align call. */
typedef struct align_stream {
  rcpy_tensor values, times, lengths;
  char who[160];
} align_stream;

/* Imports stream k from its tuple (values, times, lengths, name, method,
 * extrapolate, fill_value, max_gap, tolerance, time_offset, quat_order). */
static int import_stream(PyObject *item, int k, int batched, PyObject *stream, align_stream *as,
                         robocache_stream *cs, int64_t *D) {
  if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 11) {
    PyErr_Format(PyExc_TypeError, "streams[%d]: expected a robocache.Stream", k);
    return -1;
  }
  PyObject *const *f = &PyTuple_GET_ITEM(item, 0);
  const char *name = NULL;
  if (f[3] != Py_None && !(name = PyUnicode_AsUTF8(f[3]))) return -1;
  if (name)
    snprintf(as->who, sizeof as->who, "stream %d (%s): ", k, name);
  else
    snprintf(as->who, sizeof as->who, "stream %d: ", k);
  char what[200];
  int channels;
  snprintf(what, sizeof what, "%svalues", as->who);
  if (rcpy_import(f[0], what, stream, 0, &as->values) < 0) return -1;
  snprintf(what, sizeof what, "%stimes", as->who);
  if (rcpy_import(f[1], what, stream, 0, &as->times) < 0) return -1;
  if (rcpy_stream_view(&as->values, &as->times, batched, as->who, &channels) < 0) return -1;
  snprintf(what, sizeof what, "%slengths", as->who);
  if (rcpy_optional_lengths(f[2], what, batched, stream, &as->lengths) < 0) return -1;
  cs->name = name;
  cs->values = &as->values.t;
  cs->times = &as->times.t;
  cs->lengths = opt_t(&as->lengths);
  if (rcpy_interp_options(f + 4, as->times.t.dtype, as->who, &cs->options) < 0) return -1;
  *D += as->values.shape[2];
  return 0;
}

/* align(streams, target_times, target_lengths, out, valid, out_dtype,
 *       return_valid, stream[, check]) -> (out, valid or None) */
static PyObject *py_align(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 8 && n != 9) return PyErr_Format(PyExc_TypeError, "_C.align takes 8-9 arguments");
  PyObject *stream = a[7], *out_obj = NULL, *valid_obj = NULL, *result = NULL;
  PyObject *seq = PySequence_Tuple(a[0]);
  if (!seq) return NULL;
  Py_ssize_t K = PyTuple_GET_SIZE(seq);
  align_stream *as = PyMem_Calloc(K ? (size_t)K : 1, sizeof *as);
  robocache_stream *cs = PyMem_Calloc(K ? (size_t)K : 1, sizeof *cs);
  rcpy_tensor tt = {0}, tlen = {0}, o = {0}, val = {0};
  int batched = -1;
  if (!as || !cs) {
    PyErr_NoMemory();
    goto done;
  }
  if (K < 1 || K > 4096) {
    PyErr_Format(PyExc_ValueError, "streams: expected 1..4096 streams, got %zd", K);
    goto done;
  }
  if ((batched = import_targets(a[1], stream, &tt)) < 0 ||
      rcpy_optional_lengths(a[2], "target_lengths", batched, stream, &tlen) < 0)
    goto done;
  int64_t D = 0;
  for (Py_ssize_t k = 0; k < K; k++)
    if (import_stream(PyTuple_GET_ITEM(seq, k), (int)k, batched, stream, &as[k], &cs[k], &D) < 0)
      goto done;
  int32_t out_dtype = ROBOCACHE_DTYPE_F32;
  if (rcpy_float_dtype(a[5], "out_dtype", &out_dtype) < 0) goto done;
  int64_t shape[3];
  int nd = user_shape(shape, batched, tt.shape[0], tt.shape[1], 1, D);
  int on_cuda = tt.t.device_type == ROBOCACHE_DEVICE_CUDA;
  if (rcpy_output(a[3], "out", out_dtype, nd, shape, on_cuda, stream, &o, &out_obj) < 0) goto done;
  lib_view(&o, batched, 1);
  int want_valid = a[4] != Py_None ? 1 : PyObject_IsTrue(a[6]);
  if (want_valid < 0) goto done;
  if (want_valid) {
    nd = user_shape(shape, batched, tt.shape[0], tt.shape[1], 1, K);
    if (rcpy_output(a[4], "valid", RCPY_DTYPE_BOOL, nd, shape, on_cuda, stream, &val, &valid_obj) <
        0)
      goto done;
    lib_view(&val, batched, 1);
  }
  if (rcpy_cuda_stream(stream, RCPY_CHECK_ARG(a, n, 8), &tt) < 0) goto done;
  robocache_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = robocache_align(NULL, cs, (int32_t)K, &tt.t, opt_t(&tlen), &o.t, want_valid ? &val.t : NULL);
  Py_END_ALLOW_THREADS;
  if (st != ROBOCACHE_OK)
    rcpy_raise_status(st, "align");
  else
    result = PyTuple_Pack(2, out_obj, valid_obj ? valid_obj : Py_None);
done:
  for (Py_ssize_t k = 0; as && k < K; k++) {
    rcpy_release(&as[k].values);
    rcpy_release(&as[k].times);
    rcpy_release(&as[k].lengths);
  }
  rcpy_release(&tt);
  rcpy_release(&tlen);
  rcpy_release(&o);
  rcpy_release(&val);
  PyMem_Free(as);
  PyMem_Free(cs);
  Py_DECREF(seq);
  Py_XDECREF(out_obj);
  Py_XDECREF(valid_obj);
  return result;
}

PyMethodDef rcpy_align_methods[] = {
    {"resample", (PyCFunction)(void (*)(void))py_resample, METH_FASTCALL,
     "Low-level resample (positional arguments); use robocache.resample."},
    {"resample_backward", (PyCFunction)(void (*)(void))py_resample_backward, METH_FASTCALL,
     "Low-level gradient of resample with respect to values; fills grad_values."},
    {"align", (PyCFunction)(void (*)(void))py_align, METH_FASTCALL,
     "Low-level align (positional arguments); use robocache.align."},
    {NULL, NULL, 0, NULL}};
