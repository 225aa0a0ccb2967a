/* robocache._C.uniform_grid: a uniform target grid per row over the overlap
 * (or union) of K streams, from int64 ns CPU times. */
#include "binding.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Fills row b of grid [B,T] with the count points from start at rate_hz,
 * then repeats the last point (padding keeps rows increasing-or-equal). */
static robocache_status fill_row(int64_t *row, int64_t T, int64_t start, int64_t end,
                                 double rate_hz, int64_t count) {
  robocache_status st = robocache_uniform_grid(NULL, start, end, rate_hz, row, T);
  /* padding repeats the last target (start for a row without targets) */
  for (int64_t i = count; st == ROBOCACHE_OK && i < T; i++)
    row[i] = count > 0 ? row[count - 1] : start;
  return st;
}

/* The optional per-stream list `obj` (None or K entries) as a tuple, or
 * NULL; -1 with an exception. */
static int optional_list(PyObject *obj, const char *what, Py_ssize_t K, PyObject **out) {
  *out = NULL;
  if (!obj || obj == Py_None) return 0;
  if (!(*out = PySequence_Tuple(obj))) return -1;
  if (PyTuple_GET_SIZE(*out) != K) {
    PyErr_Format(PyExc_ValueError, "%s: %zd entries for %zd streams (times)", what,
                 PyTuple_GET_SIZE(*out), K);
    return -1;
  }
  return 0;
}

RCPY_SIG(uniform_grid, 2, 2, KW(times), KW(rate_hz), KW(span), KW(lengths), KW(time_offsets));

/* -> (target_times [B,T] or [T], target_lengths [B] or None) as Buffers. */
static PyObject *py_uniform_grid(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &uniform_grid_sig, args, nargs, kwnames, a) < 0) return NULL;
  double rate_hz;
  if (rcpy_double(A(rate_hz), "rate_hz", &rate_hz) < 0) return NULL;
  if (!(rate_hz > 0) || !isfinite(rate_hz))
    return PyErr_Format(PyExc_ValueError, "rate_hz: must be a positive finite number, got %R",
                        A(rate_hz));
  int32_t span = A(span) ? -1 : ROBOCACHE_SPAN_OVERLAP;
  const char *span_name = A(span) && PyUnicode_Check(A(span)) ? PyUnicode_AsUTF8(A(span)) : "";
  if (span_name && strcmp(span_name, "overlap") == 0) span = ROBOCACHE_SPAN_OVERLAP;
  if (span_name && strcmp(span_name, "union") == 0) span = ROBOCACHE_SPAN_UNION;
  if (span < 0) {
    PyErr_Clear();
    return PyErr_Format(PyExc_ValueError, "span: expected one of overlap, union, got %R", A(span));
  }
  PyObject *seq = PySequence_Tuple(A(times)), *lens = NULL, *offs = NULL;
  if (!seq) return NULL;
  Py_ssize_t K = PyTuple_GET_SIZE(seq);
  rcpy_tensor *ts = PyMem_Calloc(2 * (size_t)(K ? K : 1), sizeof *ts);
  robocache_stream *cs = PyMem_Calloc((size_t)(K ? K : 1), sizeof *cs);
  int64_t *bounds = NULL;
  PyObject *grid = NULL, *lengths = NULL, *result = NULL;
  int batched = -1;
  if (!ts || !cs) {
    PyErr_NoMemory();
    goto done;
  }
  if (K < 1) {
    PyErr_SetString(PyExc_ValueError, "streams: need at least one stream");
    goto done;
  }
  if (optional_list(A(lengths), "lengths", K, &lens) < 0 ||
      optional_list(A(time_offsets), "time_offsets", K, &offs) < 0)
    goto done;
  for (Py_ssize_t k = 0; k < K; k++) {
    char what[64];
    snprintf(what, sizeof what, "streams[%zd] times", k);
    rcpy_tensor *t = &ts[2 * k], *len = &ts[2 * k + 1];
    if (rcpy_import(st, PyTuple_GET_ITEM(seq, k), what, Py_None, 0, t) < 0) goto done;
    if (t->t.dtype != ROBOCACHE_DTYPE_I64 || t->t.device_type != ROBOCACHE_DEVICE_CPU) {
      PyErr_Format(t->t.dtype != ROBOCACHE_DTYPE_I64 ? PyExc_TypeError : PyExc_ValueError,
                   "%s: uniform_grid needs int64 (ns) times on the CPU", what);
      goto done;
    }
    if (batched < 0) batched = t->t.ndim == 2;
    if (t->t.ndim != (batched ? 2 : 1)) {
      PyErr_Format(PyExc_ValueError, "%s: expected %s like streams[0], got %d dimensions", what,
                   batched ? "[B,S]" : "[S]", (int)t->t.ndim);
      goto done;
    }
    if (!batched) rcpy_unsqueeze(t, 0);
    snprintf(what, sizeof what, "streams[%zd] lengths", k);
    if (rcpy_optional_lengths(st, lens ? PyTuple_GET_ITEM(lens, k) : NULL, what, batched, Py_None,
                              len) < 0)
      goto done;
    robocache_interp_options_init(&cs[k].options);
    snprintf(what, sizeof what, "streams[%zd] time_offset", k);
    if (offs && rcpy_time_ns(PyTuple_GET_ITEM(offs, k), ROBOCACHE_DTYPE_I64, what,
                             &cs[k].options.time_offset_ns) < 0)
      goto done;
    cs[k].times = &t->t;
    cs[k].lengths = rcpy_opt(len);
  }
  int64_t B = ts[0].shape[0];
  bounds = PyMem_Malloc(2 * (size_t)(B ? B : 1) * sizeof *bounds);
  if (!bounds) {
    PyErr_NoMemory();
    goto done;
  }
  robocache_status s = robocache_streams_span(NULL, cs, (int32_t)K, span, bounds, bounds + B);
  if (s != ROBOCACHE_OK) {
    rcpy_raise_status(st, s, "uniform_grid");
    goto done;
  }
  int64_t T = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t c = robocache_uniform_grid_count(bounds[b], bounds[B + b], rate_hz);
    if (c > T) T = c;
  }
  rcpy_tensor gv, lv;
  int64_t shape[2] = {B, T};
  grid = batched ? rcpy_buffer_new(st, "target_times", ROBOCACHE_DTYPE_I64, 2, shape, &gv)
                 : rcpy_buffer_new(st, "target_times", ROBOCACHE_DTYPE_I64, 1, shape + 1, &gv);
  lengths =
      batched ? rcpy_buffer_new(st, "target_lengths", ROBOCACHE_DTYPE_I64, 1, shape, &lv) : Py_None;
  if (!batched) Py_INCREF(Py_None);
  if (!grid || !lengths) goto done;
  for (int64_t b = 0; b < B && s == ROBOCACHE_OK; b++) {
    int64_t c = robocache_uniform_grid_count(bounds[b], bounds[B + b], rate_hz);
    if (batched) ((int64_t *)lv.t.data)[b] = c;
    s = fill_row((int64_t *)gv.t.data + b * T, T, bounds[b], bounds[B + b], rate_hz, c);
  }
  if (s != ROBOCACHE_OK)
    rcpy_raise_status(st, s, "uniform_grid");
  else
    result = PyTuple_Pack(2, grid, lengths);
done:
  for (Py_ssize_t i = 0; ts && i < 2 * K; i++) rcpy_release(&ts[i]);
  PyMem_Free(ts);
  PyMem_Free(cs);
  PyMem_Free(bounds);
  Py_XDECREF(grid);
  Py_XDECREF(lengths);
  Py_XDECREF(lens);
  Py_XDECREF(offs);
  Py_DECREF(seq);
  return result;
}

PyMethodDef rcpy_grid_methods[] = {
    {"uniform_grid", RCPY_FASTCALL(py_uniform_grid),
     "uniform_grid($module, times, rate_hz, *, span='overlap', lengths=None, "
     "time_offsets=None)\n--\n\n"
     "robocache.uniform_grid on int64 ns CPU times (one entry per stream; lengths and "
     "time_offsets None or one entry per stream): (target_times, target_lengths or None) as "
     "Buffers."},
    {NULL, NULL, 0, NULL}};
