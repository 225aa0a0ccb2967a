/* robocache._C.resample / align / resample_backward: DLPack arguments in,
 * the C library called with the GIL released, outputs returned as the
 * caller's out= objects or as robocache Buffers. robocache/_api.py holds the
 * documented functions. Arguments not given take the library's defaults. */
#include "binding.h"

#include <stdio.h>
#include <string.h>

/* Adds the unit axes that the user's shape of an output dropped, giving
 * [B,T,D]. */
static void lib_view(rcpy_tensor *t, int batched, int last) {
  if (!last) rcpy_unsqueeze(t, t->t.ndim);
  if (!batched) rcpy_unsqueeze(t, 0);
}

static rcpy_interp_args interp_args(PyObject *const *a) {
  return (rcpy_interp_args){A(method),    A(extrapolate), A(fill_value), A(max_gap),
                            A(tolerance), A(time_offset), A(quat_order)};
}

static int truth(PyObject *x, int dflt) { return x ? PyObject_IsTrue(x) : dflt; }

RCPY_SIG(resample, 3, 3, KW(values), KW(times), KW(target_times), KW(lengths), KW(target_lengths),
         KW(method), KW(extrapolate), KW(fill_value), KW(max_gap), KW(tolerance), KW(time_offset),
         KW(quat_order), KW(out), KW(valid), KW(out_dtype), KW(return_valid), KW(stream),
         KW(check));

static PyObject *py_resample(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &resample_sig, args, nargs, kwnames, a) < 0) return NULL;
  PyObject *stream = rcpy_or_none(A(stream)), *out_obj = NULL, *valid_obj = NULL, *result = NULL;
  rcpy_tensor v = {0}, t = {0}, tt = {0}, len = {0}, tlen = {0}, o = {0}, val = {0};
  rcpy_stream_shape sh;
  rcpy_dims tt_dims, out_dims, valid_dims;
  robocache_interp_options opt;
  const rcpy_interp_args ia = interp_args(a);
  if (rcpy_import(st, A(values), "values", stream, 0, &v) < 0 ||
      rcpy_import(st, A(times), "times", stream, 0, &t) < 0 ||
      rcpy_import(st, A(target_times), "target_times", stream, 0, &tt) < 0)
    goto done;
  tt_dims = rcpy_dims_of(&tt);
  const rcpy_dims v_dims = rcpy_dims_of(&v), t_dims = rcpy_dims_of(&t);
  if (rcpy_targets_shape(&tt_dims, &sh.batched) < 0 ||
      rcpy_stream_shape_of(&v_dims, &t_dims, sh.batched, "", &sh) < 0 ||
      rcpy_resample_out(&tt_dims, &sh, &out_dims, &valid_dims) < 0 ||
      rcpy_optional_lengths(st, A(lengths), "lengths", sh.batched, stream, &len) < 0 ||
      rcpy_optional_lengths(st, A(target_lengths), "target_lengths", sh.batched, stream, &tlen) <
          0 ||
      rcpy_interp_options(&ia, t.t.dtype, "", &opt) < 0)
    goto done;
  int32_t out_dtype = v.t.dtype;
  if (A(out_dtype) && rcpy_float_dtype(A(out_dtype), "out_dtype", &out_dtype) < 0) goto done;
  const int on_cuda = tt.t.device_type == ROBOCACHE_DEVICE_CUDA;
  if (rcpy_output(st, rcpy_or_none(A(out)), "out", out_dtype, &out_dims, on_cuda, stream, &o,
                  &out_obj) < 0)
    goto done;
  const int want_valid = A(valid) && A(valid) != Py_None ? 1 : truth(A(return_valid), 0);
  if (want_valid < 0) goto done;
  if (want_valid && rcpy_output(st, rcpy_or_none(A(valid)), "valid", RCPY_DTYPE_BOOL, &valid_dims,
                                on_cuda, stream, &val, &valid_obj) < 0)
    goto done;
  const rcpy_tensor *inputs[] = {&v, &t, &tt, &len, &tlen, &o};
  static const char *const names[] = {"values",  "times",          "target_times",
                                      "lengths", "target_lengths", "out"};
  if (rcpy_check_overlap(&o, "out", inputs, names, 5) < 0 ||
      rcpy_check_overlap(&val, "valid", inputs, names, 6) < 0)
    goto done;
  rcpy_stream_view(&v, &t, &sh);
  lib_view(&o, sh.batched, sh.channels);
  if (want_valid && !sh.batched) rcpy_unsqueeze(&val, 0);
  if (!sh.batched) rcpy_unsqueeze(&tt, 0);
  if (rcpy_cuda_stream(st, stream, A(check), &tt) < 0) goto done;
  robocache_status s;
  Py_BEGIN_ALLOW_THREADS;
  s = robocache_resample(NULL, &v.t, &t.t, rcpy_opt(&len), &tt.t, rcpy_opt(&tlen), &opt, &o.t,
                         want_valid ? &val.t : NULL);
  Py_END_ALLOW_THREADS;
  if (s != ROBOCACHE_OK)
    rcpy_raise_status(st, s, "resample");
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

RCPY_SIG(resample_backward, 3, 4, KW(grad_out), KW(times), KW(target_times), KW(grad_values),
         KW(lengths), KW(target_lengths), KW(method), KW(extrapolate), KW(fill_value), KW(max_gap),
         KW(tolerance), KW(time_offset), KW(quat_order), KW(stream), KW(check));

static PyObject *py_resample_backward(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &resample_backward_sig, args, nargs, kwnames, a) < 0) return NULL;
  PyObject *stream = rcpy_or_none(A(stream)), *result = NULL;
  rcpy_tensor go = {0}, t = {0}, tt = {0}, len = {0}, tlen = {0}, gv = {0};
  rcpy_stream_shape sh;
  rcpy_dims out_dims, valid_dims;
  robocache_interp_options opt;
  const rcpy_interp_args ia = interp_args(a);
  if (rcpy_import(st, A(grad_values), "grad_values", stream, 1, &gv) < 0 ||
      rcpy_import(st, A(times), "times", stream, 0, &t) < 0 ||
      rcpy_import(st, A(target_times), "target_times", stream, 0, &tt) < 0 ||
      rcpy_import(st, A(grad_out), "grad_out", stream, 0, &go) < 0)
    goto done;
  const rcpy_dims gv_dims = rcpy_dims_of(&gv), t_dims = rcpy_dims_of(&t),
                  tt_dims = rcpy_dims_of(&tt);
  if (rcpy_targets_shape(&tt_dims, &sh.batched) < 0 ||
      rcpy_stream_shape_of(&gv_dims, &t_dims, sh.batched, "", &sh) < 0 ||
      rcpy_resample_out(&tt_dims, &sh, &out_dims, &valid_dims) < 0 ||
      rcpy_check_shape(&go, "grad_out", &out_dims) < 0 ||
      rcpy_optional_lengths(st, A(lengths), "lengths", sh.batched, stream, &len) < 0 ||
      rcpy_optional_lengths(st, A(target_lengths), "target_lengths", sh.batched, stream, &tlen) <
          0 ||
      rcpy_interp_options(&ia, t.t.dtype, "", &opt) < 0)
    goto done;
  const rcpy_tensor *inputs[] = {&go, &t, &tt, &len, &tlen};
  static const char *const names[] = {"grad_out", "times", "target_times", "lengths",
                                      "target_lengths"};
  if (rcpy_check_overlap(&gv, "grad_values", inputs, names, 5) < 0) goto done;
  rcpy_stream_view(&gv, &t, &sh);
  lib_view(&go, sh.batched, sh.channels);
  if (!sh.batched) rcpy_unsqueeze(&tt, 0);
  if (rcpy_cuda_stream(st, stream, A(check), &tt) < 0) goto done;
  robocache_status s;
  Py_BEGIN_ALLOW_THREADS;
  s = robocache_resample_backward(NULL, &go.t, &t.t, rcpy_opt(&len), &tt.t, rcpy_opt(&tlen), &opt,
                                  &gv.t);
  Py_END_ALLOW_THREADS;
  if (s != ROBOCACHE_OK) {
    rcpy_raise_status(st, s, "resample_backward");
  } else {
    result = A(grad_values);
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

/* The per-stream lists of align: values and times (K each) and the optional
 * ones (None, or K entries; a None entry takes the default). */
typedef struct align_lists {
  PyObject *values, *times, *lengths, *names, *opts[7];
} align_lists;

/* Each given list as a tuple of K items (new references in *l). */
static int align_tuples(PyObject *const *a, align_lists *l, Py_ssize_t *K) {
  PyObject *given[11] = {A(values),     A(times),        A(lengths),     A(names),
                         A(methods),    A(extrapolates), A(fill_values), A(max_gaps),
                         A(tolerances), A(time_offsets), A(quat_orders)};
  static const char *const what[11] = {"values",     "times",        "lengths",     "names",
                                       "methods",    "extrapolates", "fill_values", "max_gaps",
                                       "tolerances", "time_offsets", "quat_orders"};
  PyObject **slot[11] = {&l->values,  &l->times,   &l->lengths, &l->names,
                         &l->opts[0], &l->opts[1], &l->opts[2], &l->opts[3],
                         &l->opts[4], &l->opts[5], &l->opts[6]};
  for (int i = 0; i < 11; i++) {
    if (!given[i] || given[i] == Py_None) continue;
    char msg[96];
    snprintf(msg, sizeof msg, "%s: expected a list with one entry per stream", what[i]);
    PyObject *seq = PySequence_Tuple(given[i]);
    if (!seq) {
      if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, msg);
      }
      return -1;
    }
    *slot[i] = seq;
    if (i == 0) *K = PyTuple_GET_SIZE(seq);
    if (PyTuple_GET_SIZE(seq) != *K) {
      PyErr_Format(PyExc_ValueError, "%s: %zd entries for %zd streams (values)", what[i],
                   PyTuple_GET_SIZE(seq), *K);
      return -1;
    }
  }
  return 0;
}

static void align_lists_free(align_lists *l) {
  Py_XDECREF(l->values);
  Py_XDECREF(l->times);
  Py_XDECREF(l->lengths);
  Py_XDECREF(l->names);
  for (int i = 0; i < 7; i++) Py_XDECREF(l->opts[i]);
}

/* Entry k of a list, or NULL (the default) when the list or the entry is
 * None. */
static PyObject *entry(PyObject *tuple, Py_ssize_t k) {
  PyObject *x = tuple ? PyTuple_GET_ITEM(tuple, k) : NULL;
  return x == Py_None ? NULL : x;
}

/* Per-stream state of an align call. */
typedef struct align_stream {
  rcpy_tensor values, times, lengths;
  char who[160];
  char what[3][200]; /* "<who>values", "<who>times", "<who>lengths" */
} align_stream;

/* Imports stream k. */
static int import_stream(const rcpy_state *st, const align_lists *l, Py_ssize_t k, int batched,
                         PyObject *stream, align_stream *as, robocache_stream *cs, int64_t *D) {
  PyObject *name = entry(l->names, k);
  if (rcpy_stream_who(as->who, sizeof as->who, k, name) < 0) return -1;
  static const char *const fields[3] = {"values", "times", "lengths"};
  for (int i = 0; i < 3; i++) snprintf(as->what[i], sizeof as->what[i], "%s%s", as->who, fields[i]);
  if (rcpy_import(st, PyTuple_GET_ITEM(l->values, k), as->what[0], stream, 0, &as->values) < 0 ||
      rcpy_import(st, PyTuple_GET_ITEM(l->times, k), as->what[1], stream, 0, &as->times) < 0)
    return -1;
  rcpy_stream_shape sh;
  const rcpy_dims v_dims = rcpy_dims_of(&as->values), t_dims = rcpy_dims_of(&as->times);
  if (rcpy_stream_shape_of(&v_dims, &t_dims, batched, as->who, &sh) < 0) return -1;
  rcpy_stream_view(&as->values, &as->times, &sh);
  if (rcpy_optional_lengths(st, entry(l->lengths, k), as->what[2], batched, stream, &as->lengths) <
      0)
    return -1;
  cs->name = name ? PyUnicode_AsUTF8(name) : NULL;
  cs->values = &as->values.t;
  cs->times = &as->times.t;
  cs->lengths = rcpy_opt(&as->lengths);
  const rcpy_interp_args ia = {entry(l->opts[0], k), entry(l->opts[1], k), entry(l->opts[2], k),
                               entry(l->opts[3], k), entry(l->opts[4], k), entry(l->opts[5], k),
                               entry(l->opts[6], k)};
  if (rcpy_interp_options(&ia, as->times.t.dtype, as->who, &cs->options) < 0) return -1;
  *D += sh.D;
  return 0;
}

RCPY_SIG(align, 3, 3, KW(values), KW(times), KW(target_times), KW(lengths), KW(names), KW(methods),
         KW(extrapolates), KW(fill_values), KW(max_gaps), KW(tolerances), KW(time_offsets),
         KW(quat_orders), KW(target_lengths), KW(out), KW(valid), KW(out_dtype), KW(return_valid),
         KW(stream), KW(check));

static PyObject *py_align(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &align_sig, args, nargs, kwnames, a) < 0) return NULL;
  PyObject *stream = rcpy_or_none(A(stream)), *out_obj = NULL, *valid_obj = NULL, *result = NULL;
  align_lists l = {0};
  Py_ssize_t K = 0;
  align_stream *as = NULL;
  robocache_stream *cs = NULL;
  rcpy_tensor tt = {0}, tlen = {0}, o = {0}, val = {0};
  const rcpy_tensor **inputs = NULL;
  const char **input_names = NULL;
  if (align_tuples(a, &l, &K) < 0) goto done;
  if (K < 1 || K > 4096) {
    PyErr_Format(PyExc_ValueError, "values: expected 1..4096 streams, got %zd", K);
    goto done;
  }
  as = PyMem_Calloc((size_t)K, sizeof *as);
  cs = PyMem_Calloc((size_t)K, sizeof *cs);
  inputs = PyMem_Calloc(3 * (size_t)K + 3, sizeof *inputs);
  input_names = PyMem_Calloc(3 * (size_t)K + 3, sizeof *input_names);
  if (!as || !cs || !inputs || !input_names) {
    PyErr_NoMemory();
    goto done;
  }
  int batched;
  if (rcpy_import(st, A(target_times), "target_times", stream, 0, &tt) < 0) goto done;
  rcpy_dims tt_dims = rcpy_dims_of(&tt), out_dims, valid_dims;
  if (rcpy_targets_shape(&tt_dims, &batched) < 0 ||
      rcpy_optional_lengths(st, A(target_lengths), "target_lengths", batched, stream, &tlen) < 0)
    goto done;
  int64_t D = 0;
  for (Py_ssize_t k = 0; k < K; k++)
    if (import_stream(st, &l, k, batched, stream, &as[k], &cs[k], &D) < 0) goto done;
  if (rcpy_align_out(&tt_dims, D, K, &out_dims, &valid_dims) < 0) goto done;
  int32_t out_dtype = ROBOCACHE_DTYPE_F32;
  if (A(out_dtype) && rcpy_float_dtype(A(out_dtype), "out_dtype", &out_dtype) < 0) goto done;
  const int on_cuda = tt.t.device_type == ROBOCACHE_DEVICE_CUDA;
  if (rcpy_output(st, rcpy_or_none(A(out)), "out", out_dtype, &out_dims, on_cuda, stream, &o,
                  &out_obj) < 0)
    goto done;
  const int want_valid = A(valid) && A(valid) != Py_None ? 1 : truth(A(return_valid), 1);
  if (want_valid < 0) goto done;
  if (want_valid && rcpy_output(st, rcpy_or_none(A(valid)), "valid", RCPY_DTYPE_BOOL, &valid_dims,
                                on_cuda, stream, &val, &valid_obj) < 0)
    goto done;
  /* the outputs against target_times, target_lengths, every stream's
   * tensors, and valid against out */
  int n = 0;
  inputs[n] = &tt, input_names[n++] = "target_times";
  inputs[n] = &tlen, input_names[n++] = "target_lengths";
  for (Py_ssize_t k = 0; k < K; k++) {
    inputs[n] = &as[k].values, input_names[n++] = as[k].what[0];
    inputs[n] = &as[k].times, input_names[n++] = as[k].what[1];
    inputs[n] = &as[k].lengths, input_names[n++] = as[k].what[2];
  }
  inputs[n] = &o, input_names[n++] = "out";
  if (rcpy_check_overlap(&o, "out", inputs, input_names, n - 1) < 0 ||
      rcpy_check_overlap(&val, "valid", inputs, input_names, n) < 0)
    goto done;
  lib_view(&o, batched, 1);
  if (want_valid) lib_view(&val, batched, 1);
  if (!batched) rcpy_unsqueeze(&tt, 0);
  if (rcpy_cuda_stream(st, stream, A(check), &tt) < 0) goto done;
  robocache_status s;
  Py_BEGIN_ALLOW_THREADS;
  s = robocache_align(NULL, cs, (int32_t)K, &tt.t, rcpy_opt(&tlen), &o.t,
                      want_valid ? &val.t : NULL);
  Py_END_ALLOW_THREADS;
  if (s != ROBOCACHE_OK)
    rcpy_raise_status(st, s, "align");
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
  PyMem_Free(inputs);
  PyMem_Free(input_names);
  align_lists_free(&l);
  Py_XDECREF(out_obj);
  Py_XDECREF(valid_obj);
  return result;
}

PyMethodDef rcpy_align_methods[] = {
    {"resample", RCPY_FASTCALL(py_resample),
     "resample($module, values, times, target_times, *, lengths=None, target_lengths=None, "
     "method='linear', extrapolate='clamp', fill_value=math.nan, max_gap=None, tolerance=None, "
     "time_offset=0, quat_order='xyzw', out=None, valid=None, out_dtype=None, "
     "return_valid=False, stream=None, check=True)\n--\n\n"
     "robocache.resample without the framework handling: (out, valid or None), out a "
     "Buffer unless out= is given."},
    {"resample_backward", RCPY_FASTCALL(py_resample_backward),
     "resample_backward($module, grad_out, times, target_times, *, grad_values, lengths=None, "
     "target_lengths=None, method='linear', extrapolate='clamp', fill_value=math.nan, "
     "max_gap=None, "
     "tolerance=None, time_offset=0, quat_order='xyzw', stream=None, check=True)\n--\n\n"
     "Gradient of resample with respect to values: fills and returns grad_values."},
    {"align", RCPY_FASTCALL(py_align),
     "align($module, values, times, target_times, *, lengths=None, names=None, methods=None, "
     "extrapolates=None, fill_values=None, max_gaps=None, tolerances=None, time_offsets=None, "
     "quat_orders=None, target_lengths=None, out=None, valid=None, out_dtype=None, "
     "return_valid=True, stream=None, check=True)\n--\n\n"
     "robocache.align without the framework handling. values, times: one entry per stream; "
     "the other per-stream lists are None (defaults) or one entry per stream (None: the "
     "default). Returns (out, valid or None)."},
    {NULL, NULL, 0, NULL}};
