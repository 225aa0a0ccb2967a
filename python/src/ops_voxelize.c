/* robocache._C.voxel_grid_size / voxel_presets / voxelize / voxelize_hard /
 * voxel_downsample: DLPack point clouds in, the C library called with the
 * GIL released, outputs returned as the caller's objects or as robocache
 * Buffers, each call with its robocache_voxel_stats as a tuple of 8 ints.
 * Positional arguments only: robocache/_voxel_api.py holds the documented
 * keyword signatures, the output dtypes and the compaction of the results. */
#include "binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest number of elements of one output (keeps byte sizes in range). */
#define RCPY_VOXEL_MAX_ELEMS ((int64_t)1 << 60)

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
    double x;
    snprintf(item, sizeof item, "%s[%d]", what, i);
    rc = rcpy_double(PySequence_Fast_GET_ITEM(seq, i), item, &x);
    out[i] = (float)x;
  }
  Py_DECREF(seq);
  return rc;
}

/* max_points_per_voxel / max_voxels: an int in 1..INT32_MAX. */
static int count_arg(PyObject *v, const char *what, int32_t *out) {
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

/* Output dtype from its name: a robocache dtype name or "bool". */
static int dtype_arg(PyObject *name_obj, int32_t *out) {
  const char *name = PyUnicode_Check(name_obj) ? PyUnicode_AsUTF8(name_obj) : NULL;
  if (name && strcmp(name, "bool") == 0) {
    *out = RCPY_DTYPE_BOOL;
    return 0;
  }
  for (int32_t d = ROBOCACHE_DTYPE_F32; name && d <= ROBOCACHE_DTYPE_U8; d++)
    if (strcmp(name, robocache_dtype_name((robocache_dtype)d)) == 0) {
      *out = d;
      return 0;
    }
  PyErr_Clear();
  PyErr_Format(PyExc_TypeError, "out_dtype: unsupported dtype %R", name_obj);
  return -1;
}

/* points [N,C] and offsets [B+1] (or None); *B, *N, *C as far as the shapes
 * tell (the library checks them and reports what is wrong). */
static int import_cloud(PyObject *points, PyObject *offsets, PyObject *stream, rcpy_tensor *p,
                        rcpy_tensor *o, int64_t *B, int64_t *N, int64_t *C) {
  if (rcpy_import(points, "points", stream, 0, p) < 0) return -1;
  if (offsets != Py_None && rcpy_import(offsets, "offsets", stream, 0, o) < 0) return -1;
  *N = p->t.ndim >= 1 ? p->shape[0] : 0;
  *C = p->t.ndim == 2 ? p->shape[1] : 3;
  *B = o->t.ndim == 1 && o->shape[0] >= 2 ? o->shape[0] - 1 : 1;
  return 0;
}

/* ValueError unless the output fits in RCPY_VOXEL_MAX_ELEMS elements. */
static int check_size(const char *what, int ndim, const int64_t *shape) {
  int64_t total = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] != 0 && total > RCPY_VOXEL_MAX_ELEMS / shape[i]) {
      PyErr_Format(PyExc_ValueError,
                   "%s: more than 2^60 elements; use a coarser voxel_size, a "
                   "smaller point_cloud_range or fewer max_voxels / max_points_per_voxel",
                   what);
      return -1;
    }
    total *= shape[i];
  }
  return 0;
}

static int output(PyObject *obj, const char *what, int32_t dtype, int ndim, const int64_t *shape,
                  const rcpy_tensor *points, PyObject *stream, rcpy_tensor *t, PyObject **result) {
  if (check_size(what, ndim, shape) < 0) return -1;
  return rcpy_output(obj, what, dtype, ndim, shape, points->t.device_type == ROBOCACHE_DEVICE_CUDA,
                     stream, t, result);
}

static PyObject *stats_tuple(const robocache_voxel_stats *s) {
  return Py_BuildValue("(LLLLLLLL)", (long long)s->points_in, (long long)s->points_in_range,
                       (long long)s->points_dropped_range, (long long)s->points_dropped_nonfinite,
                       (long long)s->voxels_nonempty, (long long)s->points_dropped_max_points,
                       (long long)s->voxels_dropped_max_voxels,
                       (long long)s->points_dropped_max_voxels);
}

static const robocache_tensor *opt_t(const rcpy_tensor *t) { return t->t.shape ? &t->t : NULL; }

/* voxel_grid_size(voxel_size, point_cloud_range) -> (X, Y, Z) */
static PyObject *py_grid_size(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 2) return PyErr_Format(PyExc_TypeError, "_C.voxel_grid_size takes 2 arguments");
  float size[3], range[6];
  int64_t grid[3];
  if (float_args(a[0], "voxel_size", "(vx, vy, vz)", 3, size) < 0 ||
      float_args(a[1], "point_cloud_range", "(xmin, ymin, zmin, xmax, ymax, zmax)", 6, range) < 0)
    return NULL;
  robocache_status st = robocache_voxel_grid_size(NULL, size, range, grid);
  if (st != ROBOCACHE_OK) return rcpy_raise_status(st, "voxel grid");
  return Py_BuildValue("(LLL)", (long long)grid[0], (long long)grid[1], (long long)grid[2]);
}

/* The shortest decimal that rounds to the float32 x (0.05f -> 0.05). */
static PyObject *short_float(float x) {
  char buf[32];
  for (int digits = 6; digits <= 9; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, (double)x);
    if (strtof(buf, NULL) == x) break;
  }
  return PyFloat_FromDouble(strtod(buf, NULL));
}

static PyObject *float_tuple(const float *x, int n) {
  PyObject *t = PyTuple_New(n);
  for (int i = 0; t && i < n; i++) {
    PyObject *f = short_float(x[i]);
    if (!f) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, f);
  }
  return t;
}

/* voxel_presets() -> ((name, voxel_size, point_cloud_range,
 * max_points_per_voxel, max_voxels_train, max_voxels_test), ...) */
static PyObject *py_presets(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  PyObject *list = PyList_New(0);
  for (int32_t i = 0; list; i++) {
    const robocache_voxel_preset *p = robocache_voxel_preset_at(i);
    if (!p) break;
    PyObject *item = Py_BuildValue("(sNNiii)", p->name, float_tuple(p->voxel_size, 3),
                                   float_tuple(p->point_cloud_range, 6), p->max_points_per_voxel,
                                   p->max_voxels_train, p->max_voxels_test);
    if (!item || PyList_Append(list, item) < 0) Py_CLEAR(list);
    Py_XDECREF(item);
  }
  PyObject *result = list ? PyList_AsTuple(list) : NULL;
  Py_XDECREF(list);
  return result;
}

/* voxelize(points, offsets, voxel_size, point_cloud_range, mode, out,
 *          out_dtype, stream[, check]) -> (out [B,F,Z,Y,X], stats);
 * check (default True): the CUDA checks (robocache_ctx_set_sync_checks) */
static PyObject *py_voxelize(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 8 && n != 9) return PyErr_Format(PyExc_TypeError, "_C.voxelize takes 8-9 arguments");
  PyObject *stream = a[7], *out_obj = NULL, *result = NULL;
  rcpy_tensor p = {0}, off = {0}, o = {0};
  float size[3], range[6];
  int64_t grid[3], B, N, C;
  int32_t mode, dtype;
  if (float_args(a[2], "voxel_size", "(vx, vy, vz)", 3, size) < 0 ||
      float_args(a[3], "point_cloud_range", "(xmin, ymin, zmin, xmax, ymax, zmax)", 6, range) < 0 ||
      rcpy_voxel_mode(a[4], "mode", &mode) < 0 || dtype_arg(a[6], &dtype) < 0)
    return NULL;
  robocache_status st = robocache_voxel_grid_size(NULL, size, range, grid);
  if (st != ROBOCACHE_OK) return rcpy_raise_status(st, "voxelize");
  if (import_cloud(a[0], a[1], stream, &p, &off, &B, &N, &C) < 0) goto done;
  int64_t F = mode <= ROBOCACHE_VOXEL_OCCUPANCY ? 1 : C == 3 ? 3 : C - 3;
  const int64_t shape[5] = {B, F, grid[2], grid[1], grid[0]};
  if (output(a[5], "out", dtype, 5, shape, &p, stream, &o, &out_obj) < 0 ||
      rcpy_cuda_stream(stream, RCPY_CHECK_ARG(a, n, 8), &p) < 0)
    goto done;
  robocache_voxel_stats stats;
  Py_BEGIN_ALLOW_THREADS;
  st = robocache_voxelize(NULL, &p.t, opt_t(&off), size, range, mode, &o.t, &stats);
  Py_END_ALLOW_THREADS;
  if (st != ROBOCACHE_OK)
    rcpy_raise_status(st, "voxelize");
  else
    result = Py_BuildValue("(ON)", out_obj, stats_tuple(&stats));
done:
  rcpy_release(&p);
  rcpy_release(&off);
  rcpy_release(&o);
  Py_XDECREF(out_obj);
  return result;
}

/* voxelize_hard(points, offsets, voxel_size, point_cloud_range,
 *               max_points_per_voxel, max_voxels, packed, voxels, coords,
 *               num_points, num_voxels, stream[, check])
 * -> (voxels [B*M,P,C], coords [B*M,4], num_points [B*M], num_voxels [B], stats)
 * packed: robocache_voxelize_hard_packed's row layout (else the padded one). */
static PyObject *py_voxelize_hard(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 12 && n != 13)
    return PyErr_Format(PyExc_TypeError, "_C.voxelize_hard takes 12-13 arguments");
  PyObject *stream = a[11], *objs[4] = {NULL, NULL, NULL, NULL}, *result = NULL;
  rcpy_tensor p = {0}, off = {0}, t[4] = {0};
  float size[3], range[6];
  int64_t B, N, C;
  int32_t P, M;
  const int packed = PyObject_IsTrue(a[6]);
  if (packed < 0) return NULL;
  if (float_args(a[2], "voxel_size", "(vx, vy, vz)", 3, size) < 0 ||
      float_args(a[3], "point_cloud_range", "(xmin, ymin, zmin, xmax, ymax, zmax)", 6, range) < 0 ||
      count_arg(a[4], "max_points_per_voxel", &P) < 0 || count_arg(a[5], "max_voxels", &M) < 0 ||
      import_cloud(a[0], a[1], stream, &p, &off, &B, &N, &C) < 0)
    goto done;
  const int64_t shapes[4][3] = {{B * M, P, C}, {B * M, 4}, {B * M}, {B}};
  static const char *const names[4] = {"voxels", "coords", "num_points", "num_voxels"};
  static const int ndims[4] = {3, 2, 1, 1};
  static const int32_t dtypes[4] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_I32, ROBOCACHE_DTYPE_I32,
                                    ROBOCACHE_DTYPE_I32};
  for (int i = 0; i < 4; i++)
    if (output(a[7 + i], names[i], dtypes[i], ndims[i], shapes[i], &p, stream, &t[i], &objs[i]) < 0)
      goto done;
  if (rcpy_cuda_stream(stream, RCPY_CHECK_ARG(a, n, 12), &p) < 0) goto done;
  robocache_voxel_stats stats;
  robocache_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = (packed ? robocache_voxelize_hard_packed : robocache_voxelize_hard)(
      NULL, &p.t, opt_t(&off), size, range, P, M, &t[0].t, &t[1].t, &t[2].t, &t[3].t, &stats);
  Py_END_ALLOW_THREADS;
  if (st != ROBOCACHE_OK)
    rcpy_raise_status(st, "voxelize_hard");
  else
    result = Py_BuildValue("(OOOON)", objs[0], objs[1], objs[2], objs[3], stats_tuple(&stats));
done:
  rcpy_release(&p);
  rcpy_release(&off);
  for (int i = 0; i < 4; i++) {
    rcpy_release(&t[i]);
    Py_XDECREF(objs[i]);
  }
  return result;
}

/* voxel_downsample(points, offsets, voxel_size, point_cloud_range or None,
 *                  out, out_offsets, stream[, check])
 * -> (out [N,C] (rows past out_offsets[B] unused), out_offsets [B+1], stats) */
static PyObject *py_voxel_downsample(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 7 && n != 8)
    return PyErr_Format(PyExc_TypeError, "_C.voxel_downsample takes 7-8 arguments");
  PyObject *stream = a[6], *out_obj = NULL, *off_obj = NULL, *result = NULL;
  rcpy_tensor p = {0}, off = {0}, o = {0}, oo = {0};
  float size[3], range[6];
  int64_t B, N, C;
  int has_range = a[3] != Py_None;
  if (float_args(a[2], "voxel_size", "(vx, vy, vz)", 3, size) < 0 ||
      (has_range && float_args(a[3], "point_cloud_range", "(xmin, ymin, zmin, xmax, ymax, zmax)", 6,
                               range) < 0) ||
      import_cloud(a[0], a[1], stream, &p, &off, &B, &N, &C) < 0)
    goto done;
  const int64_t out_shape[2] = {N, C}, off_shape[1] = {B + 1};
  if (output(a[4], "out", ROBOCACHE_DTYPE_F32, 2, out_shape, &p, stream, &o, &out_obj) < 0 ||
      output(a[5], "out_offsets", ROBOCACHE_DTYPE_I64, 1, off_shape, &p, stream, &oo, &off_obj) <
          0 ||
      rcpy_cuda_stream(stream, RCPY_CHECK_ARG(a, n, 7), &p) < 0)
    goto done;
  robocache_voxel_stats stats;
  robocache_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = robocache_voxel_downsample(NULL, &p.t, opt_t(&off), size, has_range ? range : NULL, &o.t,
                                  &oo.t, &stats);
  Py_END_ALLOW_THREADS;
  if (st != ROBOCACHE_OK)
    rcpy_raise_status(st, "voxel_downsample");
  else
    result = Py_BuildValue("(OON)", out_obj, off_obj, stats_tuple(&stats));
done:
  rcpy_release(&p);
  rcpy_release(&off);
  rcpy_release(&o);
  rcpy_release(&oo);
  Py_XDECREF(out_obj);
  Py_XDECREF(off_obj);
  return result;
}

PyMethodDef rcpy_voxelize_methods[] = {
    {"voxel_grid_size", (PyCFunction)(void (*)(void))py_grid_size, METH_FASTCALL,
     "(X, Y, Z) = round((max - min) / voxel_size) in float32; ValueError when invalid."},
    {"voxel_presets", py_presets, METH_NOARGS,
     "The built-in presets: (name, voxel_size, point_cloud_range, max_points_per_voxel, "
     "max_voxels_train, max_voxels_test) tuples."},
    {"voxelize", (PyCFunction)(void (*)(void))py_voxelize, METH_FASTCALL,
     "Low-level dense voxelization (positional arguments); use robocache.voxelize."},
    {"voxelize_hard", (PyCFunction)(void (*)(void))py_voxelize_hard, METH_FASTCALL,
     "Low-level hard voxelization (positional arguments); use robocache.voxelize_hard."},
    {"voxel_downsample", (PyCFunction)(void (*)(void))py_voxel_downsample, METH_FASTCALL,
     "Low-level voxel-grid downsampling (positional arguments); use "
     "robocache.voxel_downsample."},
    {NULL, NULL, 0, NULL}};
