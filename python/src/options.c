/* Options of resample / align / Stream and of the voxel functions: strings
 * to enums, time options to int64 ns, voxel sizes and ranges to float32,
 * with errors naming the argument. */
#include "binding.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct name_code {
  const char *name;
  int32_t code;
} name_code;

static const name_code k_methods[] = {
    {"linear", ROBOCACHE_LINEAR}, {"nearest", ROBOCACHE_NEAREST}, {"previous", ROBOCACHE_PREVIOUS},
    {"next", ROBOCACHE_NEXT},     {"slerp", ROBOCACHE_SLERP},     {NULL, 0}};
static const name_code k_extrapolate[] = {{"clamp", ROBOCACHE_EXTRAP_CLAMP},
                                          {"fill", ROBOCACHE_EXTRAP_FILL},
                                          {"extrapolate", ROBOCACHE_EXTRAP_EXTRAPOLATE},
                                          {"error", ROBOCACHE_EXTRAP_ERROR},
                                          {NULL, 0}};
static const name_code k_quat_orders[] = {
    {"xyzw", ROBOCACHE_QUAT_XYZW}, {"wxyz", ROBOCACHE_QUAT_WXYZ}, {NULL, 0}};
static const name_code k_float_dtypes[] = {{"float32", ROBOCACHE_DTYPE_F32},
                                           {"float64", ROBOCACHE_DTYPE_F64},
                                           {"float16", ROBOCACHE_DTYPE_F16},
                                           {"bfloat16", ROBOCACHE_DTYPE_BF16},
                                           {NULL, 0}};
static const name_code k_voxel_modes[] = {
    {"count", ROBOCACHE_VOXEL_COUNT}, {"occupancy", ROBOCACHE_VOXEL_OCCUPANCY},
    {"sum", ROBOCACHE_VOXEL_SUM},     {"mean", ROBOCACHE_VOXEL_MEAN},
    {"max", ROBOCACHE_VOXEL_MAX},     {NULL, 0}};

/* Looks s up in table; -1 with `err` (ValueError/TypeError) listing the
 * accepted names. */
static int lookup(PyObject *s, const char *what, const name_code *table, PyObject *err,
                  const char *prefix, int32_t *out) {
  const char *name = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
  if (name) {
    size_t n = strlen(prefix);
    if (n && strncmp(name, prefix, n) == 0) name += n;
    for (const name_code *e = table; e->name; e++)
      if (strcmp(name, e->name) == 0) {
        *out = e->code;
        return 0;
      }
  }
  PyErr_Clear();
  char accepted[160] = "";
  for (const name_code *e = table; e->name; e++) {
    strncat(accepted, e->name, sizeof accepted - strlen(accepted) - 1);
    if (e[1].name) strncat(accepted, ", ", sizeof accepted - strlen(accepted) - 1);
  }
  PyErr_Format(err, "%s: expected one of %s, got %R", what, accepted, s);
  return -1;
}

int rcpy_method(PyObject *s, const char *what, int32_t *out) {
  return lookup(s, what, k_methods, PyExc_ValueError, "", out);
}
int rcpy_extrapolate(PyObject *s, const char *what, int32_t *out) {
  return lookup(s, what, k_extrapolate, PyExc_ValueError, "", out);
}
int rcpy_quat_order(PyObject *s, const char *what, int32_t *out) {
  return lookup(s, what, k_quat_orders, PyExc_ValueError, "", out);
}
int rcpy_voxel_mode(PyObject *s, const char *what, int32_t *out) {
  return lookup(s, what, k_voxel_modes, PyExc_ValueError, "", out);
}
int rcpy_float_dtype(PyObject *s, const char *what, int32_t *out) {
  if (s == Py_None) return 0;
  return lookup(s, what, k_float_dtypes, PyExc_TypeError, "torch.", out);
}

int rcpy_double(PyObject *v, const char *what, double *out) {
  if (PyBool_Check(v) || !(PyFloat_Check(v) || PyLong_Check(v) || PyNumber_Check(v))) {
    PyErr_Format(PyExc_TypeError, "%s: expected a real number, got %.100s", what,
                 Py_TYPE(v)->tp_name);
    return -1;
  }
  double x = PyFloat_AsDouble(v);
  if (x == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: expected a real number, got %.100s", what,
                 Py_TYPE(v)->tp_name);
    return -1;
  }
  *out = x;
  return 0;
}

int rcpy_time_ns(PyObject *v, int32_t time_dtype, const char *what, int64_t *ns) {
  *ns = 0;
  if (v == Py_None) return 0;
  if (PyBool_Check(v)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a number, got bool", what);
    return -1;
  }
  if (time_dtype == ROBOCACHE_DTYPE_I64 && !PyFloat_Check(v)) {
    PyObject *i = PyNumber_Index(v);
    if (!i) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "%s: times are int64 nanoseconds, so %s is an int in ns; got %.100s", what, what,
                   Py_TYPE(v)->tp_name);
      return -1;
    }
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (overflow) {
      PyErr_Format(PyExc_ValueError, "%s: %R ns does not fit in int64", what, v);
      return -1;
    }
    *ns = x;
    return 0;
  }
  double x;
  if (rcpy_double(v, what, &x) < 0) return -1;
  double scale = time_dtype == ROBOCACHE_DTYPE_I64 ? 1.0 : 1e9;
  const char *unit = time_dtype == ROBOCACHE_DTYPE_I64 ? "ns" : "s";
  if (!isfinite(x) || fabs(x * scale) >= 9.2e18) {
    PyErr_Format(PyExc_ValueError, "%s: %R %s is not a finite time that fits in int64 ns", what, v,
                 unit);
    return -1;
  }
  if (time_dtype == ROBOCACHE_DTYPE_I64 && x != floor(x)) {
    PyErr_Format(PyExc_ValueError,
                 "%s: times are int64 nanoseconds, so %s is in ns and must be a whole number; "
                 "got %R",
                 what, what, v);
    return -1;
  }
  *ns = llround(x * scale);
  return 0;
}

/* A positive time limit (max_gap, tolerance) or None. */
static int positive_time(PyObject *v, int32_t time_dtype, const char *name, int64_t *ns) {
  if (rcpy_time_ns(v, time_dtype, name, ns) < 0) return -1;
  if (v != Py_None && *ns <= 0) {
    PyErr_Format(PyExc_ValueError, "%s: must be > 0 (%s), or None for no limit; got %R (%lld ns)",
                 name, time_dtype == ROBOCACHE_DTYPE_I64 ? "ns" : "s", v, (long long)*ns);
    return -1;
  }
  return 0;
}

/* Prefixes the message of the exception being raised with `who` ("stream 1
 * (imu): "); -1. Messages are formatted only when a call fails. */
static int with_prefix(const char *who) {
  if (!*who) return -1;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyErr_Format(type, "%s%S", who, value);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return -1;
}

int rcpy_interp_options(const rcpy_interp_args *a, int32_t time_dtype, const char *who,
                        robocache_interp_options *o) {
  robocache_interp_options_init(o);
  if ((a->method && rcpy_method(a->method, "method", &o->method) < 0) ||
      (a->extrapolate && rcpy_extrapolate(a->extrapolate, "extrapolate", &o->extrapolate) < 0) ||
      (a->fill_value && rcpy_double(a->fill_value, "fill_value", &o->fill_value) < 0) ||
      (a->max_gap && positive_time(a->max_gap, time_dtype, "max_gap", &o->max_gap_ns) < 0) ||
      (a->tolerance &&
       positive_time(a->tolerance, time_dtype, "tolerance", &o->tolerance_ns) < 0) ||
      (a->time_offset &&
       rcpy_time_ns(a->time_offset, time_dtype, "time_offset", &o->time_offset_ns) < 0) ||
      (a->quat_order && rcpy_quat_order(a->quat_order, "quat_order", &o->quat_order) < 0))
    return with_prefix(who);
  return 0;
}

/* obj: a sequence of n real numbers -> out[n] (f32, as the C API takes them).
 * `labels` lists the components for messages ("(vx, vy, vz)"). */
static int float_args(PyObject *obj, const char *what, const char *labels, int n, float *out) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s: expected a sequence of %d numbers %s", what, n, labels);
  PyObject *seq = PySequence_Fast(obj, msg);
  if (!seq) return -1;
  int rc = 0;
  if (PySequence_Fast_GET_SIZE(seq) != n) {
    PyErr_Format(PyExc_ValueError, "%s: expected %d numbers %s, got %zd", what, n, labels,
                 PySequence_Fast_GET_SIZE(seq));
    rc = -1;
  }
  for (int i = 0; rc == 0 && i < n; i++) {
    char item[64];
    double x = 0;
    snprintf(item, sizeof item, "%s[%d]", what, i);
    rc = rcpy_double(PySequence_Fast_GET_ITEM(seq, i), item, &x);
    out[i] = (float)x;
  }
  Py_DECREF(seq);
  return rc;
}

int rcpy_voxel_size(PyObject *obj, float out[3]) {
  return float_args(obj, "voxel_size", "(vx, vy, vz)", 3, out);
}

int rcpy_point_cloud_range(PyObject *obj, float out[6]) {
  return float_args(obj, "point_cloud_range", "(xmin, ymin, zmin, xmax, ymax, zmax)", 6, out);
}

int rcpy_count(PyObject *v, const char *what, int32_t *out) {
  PyObject *i = PyBool_Check(v) ? NULL : PyNumber_Index(v);
  if (!i) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: expected an int, got %.100s", what, Py_TYPE(v)->tp_name);
    return -1;
  }
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
  Py_DECREF(i);
  if (overflow || x < 1 || x > INT32_MAX) {
    PyErr_Format(PyExc_ValueError, "%s: must be an int in 1..%d, got %R", what, INT32_MAX, v);
    return -1;
  }
  *out = (int32_t)x;
  return 0;
}
