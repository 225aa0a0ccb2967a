/* robocache._C.read_table / detect_format: the text readers of src/io
 * (reader.h: EuRoC, TUM, generic CSV, timestamp lists; exact decimal times
 * to int64 ns; errors "path:line: what"). */
#include "binding.h"
#include "reader.h"

#include <stdlib.h>

/* A name argument (format, time_unit): a str, or NULL for "auto". */
static int name_arg(PyObject *obj, const char *what, const char **out) {
  *out = "auto";
  if (!obj) return 0;
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a str, got %.100s", what, Py_TYPE(obj)->tp_name);
    return -1;
  }
  *out = PyUnicode_AsUTF8(obj);
  return *out ? 0 : -1;
}

/* A column: a name (str) or a 0-based index (int) as the reader's token.
 * The reader separates names by ':', so a name may not contain one. */
static PyObject *column_token(PyObject *obj, const char *what) {
  if (PyLong_Check(obj) && !PyBool_Check(obj)) {
    long long i = PyLong_AsLongLong(obj);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0) return PyErr_Format(PyExc_ValueError, "%s: column index %lld < 0", what, i);
    return PyUnicode_FromFormat("%lld", i);
  }
  if (!PyUnicode_Check(obj))
    return PyErr_Format(PyExc_TypeError,
                        "%s: expected a column name (str) or index (int), got "
                        "%.100s",
                        what, Py_TYPE(obj)->tp_name);
  if (PyUnicode_FindChar(obj, ':', 0, PyUnicode_GET_LENGTH(obj), 1) >= 0 ||
      PyUnicode_GET_LENGTH(obj) == 0)
    return PyErr_Format(PyExc_ValueError,
                        "%s: %R cannot be selected by name (empty or contains ':'); give its "
                        "index",
                        what, obj);
  Py_INCREF(obj);
  return obj;
}

/* columns: None, or a sequence of names / indices -> "a:b:c" (new ref) or
 * NULL with *none = 1. */
static PyObject *columns_arg(PyObject *obj, int *none) {
  *none = !obj || obj == Py_None;
  if (*none) return NULL;
  if (PyUnicode_Check(obj))
    return PyErr_Format(PyExc_TypeError,
                        "columns: expected a list of column names or indices, got a str (use "
                        "[%R])",
                        obj);
  PyObject *seq = PySequence_Tuple(obj), *tokens = NULL, *sep = NULL, *joined = NULL;
  if (!seq) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  if (n == 0) {
    PyErr_SetString(PyExc_ValueError, "columns: empty; give None for every column");
    goto done;
  }
  if (!(tokens = PyList_New(n))) goto done;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *t = column_token(PyTuple_GET_ITEM(seq, i), "columns");
    if (!t) goto done;
    PyList_SET_ITEM(tokens, i, t);
  }
  if ((sep = PyUnicode_FromString(":"))) joined = PyUnicode_Join(sep, tokens);
done:
  Py_DECREF(seq);
  Py_XDECREF(tokens);
  Py_XDECREF(sep);
  return joined;
}

/* A str tuple of n C strings (bytes that are not UTF-8 escaped). */
static PyObject *names_tuple(char *const *names, int32_t n) {
  PyObject *t = PyTuple_New(n);
  for (int32_t i = 0; t && i < n; i++) {
    PyObject *x = rcpy_text(names[i]);
    if (!x) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

RCPY_SIG(read_table, 1, 1, KW(path), KW(format), KW(columns), KW(time_column), KW(time_unit));

/* -> (times Buffer int64 [rows] ns, values Buffer float64 [rows, cols],
 *     names, time column name, format, time unit) */
static PyObject *py_read_table(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &read_table_sig, args, nargs, kwnames, a) < 0) return NULL;
  PyObject *path = NULL, *columns = NULL, *time_column = NULL, *result = NULL;
  PyObject *times = NULL, *values = NULL, *names = NULL, *time_name = NULL;
  const char *format_name, *unit_name;
  int all_columns;
  rc_io_table table = {0};
  if (!PyUnicode_FSConverter(A(path), &path) || name_arg(A(format), "format", &format_name) < 0 ||
      name_arg(A(time_unit), "time_unit", &unit_name) < 0 ||
      (!(columns = columns_arg(A(columns), &all_columns)) && !all_columns) ||
      (A(time_column) && A(time_column) != Py_None &&
       !(time_column = column_token(A(time_column), "time_column"))))
    goto done;
  rc_io_read_spec spec = {.path = PyBytes_AS_STRING(path),
                          .format = rc_io_format_from_name(format_name),
                          .time_unit = rc_io_time_unit_from_name(unit_name)};
  if (spec.format < 0 || spec.format == RC_IO_FORMAT_HDF5) {
    PyErr_Format(PyExc_ValueError,
                 "format: expected one of auto, euroc, tum, csv, timestamps, got '%s'",
                 format_name);
    goto done;
  }
  if (spec.time_unit < RC_IO_UNIT_AUTO) {
    PyErr_Format(PyExc_ValueError, "time_unit: expected one of auto, ns, us, ms, s, got '%s'",
                 unit_name);
    goto done;
  }
  if ((columns && !(spec.columns = PyUnicode_AsUTF8(columns))) ||
      (time_column && !(spec.time_column = PyUnicode_AsUTF8(time_column))))
    goto done;
  rc_io_err err = {0};
  robocache_status s = ROBOCACHE_OK;
  Py_BEGIN_ALLOW_THREADS;
  if (spec.format == RC_IO_FORMAT_AUTO) s = rc_io_detect_format(spec.path, &spec.format, &err);
  if (s == ROBOCACHE_OK && spec.format == RC_IO_FORMAT_HDF5)
    s = rc_io_fail(&err, ROBOCACHE_INVALID_ARGUMENT,
                   "%s: an HDF5 file, not a text table (read it with h5py)", spec.path);
  if (s == ROBOCACHE_OK) s = rc_io_read(&spec, &table, &err);
  Py_END_ALLOW_THREADS;
  if (s != ROBOCACHE_OK) {
    rcpy_raise_io(err.status, err.msg);
    goto done;
  }
  const int64_t shape[2] = {table.rows, table.cols};
  if (!table.values) table.values = malloc(sizeof(double)); /* cols == 0 */
  rcpy_tensor view;
  times = rcpy_buffer_adopt(st, table.times_ns, ROBOCACHE_DTYPE_I64, 1, shape, &view);
  table.times_ns = NULL; /* the Buffer's (or freed) */
  if (times) {
    values = rcpy_buffer_adopt(st, table.values, ROBOCACHE_DTYPE_F64, 2, shape, &view);
    table.values = NULL;
  }
  if (times && values && (names = names_tuple(table.names, table.cols)) &&
      (time_name = rcpy_text(table.time_name)))
    result = Py_BuildValue("(OOOOss)", times, values, names, time_name,
                           rc_io_format_name(table.format), rc_io_time_unit_name(table.time_unit));
done:
  rc_io_table_free(&table);
  Py_XDECREF(path);
  Py_XDECREF(columns);
  Py_XDECREF(time_column);
  Py_XDECREF(times);
  Py_XDECREF(values);
  Py_XDECREF(names);
  Py_XDECREF(time_name);
  return result;
}

RCPY_SIG(detect_format, 1, 1, KW(path));

static PyObject *py_detect_format(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  PyObject *a[RCPY_KW_COUNT], *path = NULL;
  if (rcpy_parse(rcpy_state_of(self), &detect_format_sig, args, nargs, kwnames, a) < 0 ||
      !PyUnicode_FSConverter(A(path), &path))
    return NULL;
  rc_io_err err = {0};
  int format = RC_IO_FORMAT_AUTO;
  robocache_status s;
  Py_BEGIN_ALLOW_THREADS;
  s = rc_io_detect_format(PyBytes_AS_STRING(path), &format, &err);
  Py_END_ALLOW_THREADS;
  Py_DECREF(path);
  if (s != ROBOCACHE_OK) return rcpy_raise_io(err.status, err.msg);
  return PyUnicode_FromString(rc_io_format_name(format));
}

PyMethodDef rcpy_table_methods[] = {
    {"read_table", RCPY_FASTCALL(py_read_table),
     "read_table($module, path, *, format='auto', columns=None, time_column=None, "
     "time_unit='auto')\n--\n\n"
     "(times Buffer int64 [rows] ns, values Buffer float64 [rows, cols], names, time column "
     "name, format, time unit). Use robocache.read_table."},
    {"detect_format", RCPY_FASTCALL(py_detect_format),
     "detect_format($module, path)\n--\n\n"
     "'euroc', 'tum', 'timestamps', 'csv' or 'hdf5' from the file's first lines; ValueError "
     "when none matches, OSError when unreadable."},
    {NULL, NULL, 0, NULL}};
