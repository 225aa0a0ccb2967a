/* robocache._C.voxel_grid_size / voxel_presets / voxelize / voxelize_hard /
 * voxel_downsample: DLPack point clouds in, the C library called with the
 * GIL released, outputs returned as the caller's objects or as robocache
 * Buffers, each call with its robocache_voxel_stats as a tuple of 8 ints.
 * robocache/_voxel_api.py holds the documented functions, the output dtypes
 * and the compaction of the results. */
#include "binding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* points [N,C] and offsets [B+1] (or None) imported, and their shape. */
static int import_cloud(const rcpy_state *st, PyObject *points, PyObject *offsets, PyObject *stream,
                        rcpy_tensor *p, rcpy_tensor *o, rcpy_cloud_shape *c) {
  if (rcpy_import(st, points, "points", stream, 0, p) < 0) return -1;
  if (offsets && offsets != Py_None && rcpy_import(st, offsets, "offsets", stream, 0, o) < 0)
    return -1;
  const rcpy_dims pd = rcpy_dims_of(p), od = rcpy_dims_of(o);
  *c = rcpy_cloud_shape_of(&pd, &od);
  return 0;
}

static int output(const rcpy_state *st, PyObject *obj, const char *what, int32_t dtype,
                  const rcpy_dims *d, const rcpy_tensor *points, PyObject *stream, rcpy_tensor *t,
                  PyObject **result) {
  return rcpy_output(st, rcpy_or_none(obj), what, dtype, d,
                     points->t.device_type == ROBOCACHE_DEVICE_CUDA, stream, t, result);
}

static PyObject *stats_tuple(const robocache_voxel_stats *s) {
  return Py_BuildValue("(LLLLLLLL)", (long long)s->points_in, (long long)s->points_in_range,
                       (long long)s->points_dropped_range, (long long)s->points_dropped_nonfinite,
                       (long long)s->voxels_nonempty, (long long)s->points_dropped_max_points,
                       (long long)s->voxels_dropped_max_voxels,
                       (long long)s->points_dropped_max_voxels);
}

RCPY_SIG(voxel_grid_size, 2, 2, KW(voxel_size), KW(point_cloud_range));

static PyObject *py_grid_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  float size[3], range[6];
  int64_t grid[3];
  if (rcpy_parse(st, &voxel_grid_size_sig, args, nargs, kwnames, a) < 0 ||
      rcpy_voxel_size(A(voxel_size), size) < 0 ||
      rcpy_point_cloud_range(A(point_cloud_range), range) < 0)
    return NULL;
  robocache_status s = robocache_voxel_grid_size(NULL, size, range, grid);
  if (s != ROBOCACHE_OK) return rcpy_raise_status(st, s, "voxel grid");
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

RCPY_SIG(voxelize, 3, 4, KW(points), KW(voxel_size), KW(point_cloud_range), KW(out_dtype), KW(mode),
         KW(offsets), KW(out), KW(stream), KW(check));

static PyObject *py_voxelize(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &voxelize_sig, args, nargs, kwnames, a) < 0) return NULL;
  PyObject *stream = rcpy_or_none(A(stream)), *out_obj = NULL, *result = NULL;
  rcpy_tensor p = {0}, off = {0}, o = {0};
  rcpy_cloud_shape c;
  rcpy_dims out_dims;
  float size[3], range[6];
  int64_t grid[3];
  int32_t mode = ROBOCACHE_VOXEL_COUNT, dtype;
  if (rcpy_voxel_size(A(voxel_size), size) < 0 ||
      rcpy_point_cloud_range(A(point_cloud_range), range) < 0 ||
      (A(mode) && rcpy_voxel_mode(A(mode), "mode", &mode) < 0) ||
      dtype_arg(A(out_dtype), &dtype) < 0)
    return NULL;
  robocache_status s = robocache_voxel_grid_size(NULL, size, range, grid);
  if (s != ROBOCACHE_OK) return rcpy_raise_status(st, s, "voxelize");
  if (import_cloud(st, A(points), A(offsets), stream, &p, &off, &c) < 0 ||
      rcpy_voxelize_out(&c, grid, mode, &out_dims) < 0 ||
      output(st, A(out), "out", dtype, &out_dims, &p, stream, &o, &out_obj) < 0 ||
      rcpy_cuda_stream(st, stream, A(check), &p) < 0)
    goto done;
  robocache_voxel_stats stats;
  Py_BEGIN_ALLOW_THREADS;
  s = robocache_voxelize(NULL, &p.t, rcpy_opt(&off), size, range, mode, &o.t, &stats);
  Py_END_ALLOW_THREADS;
  if (s != ROBOCACHE_OK)
    rcpy_raise_status(st, s, "voxelize");
  else
    result = Py_BuildValue("(ON)", out_obj, stats_tuple(&stats));
done:
  rcpy_release(&p);
  rcpy_release(&off);
  rcpy_release(&o);
  Py_XDECREF(out_obj);
  return result;
}

RCPY_SIG(voxelize_hard, 5, 5, KW(points), KW(voxel_size), KW(point_cloud_range),
         KW(max_points_per_voxel), KW(max_voxels), KW(offsets), KW(packed), KW(voxels), KW(coords),
         KW(num_points), KW(num_voxels), KW(stream), KW(check));

static PyObject *py_voxelize_hard(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &voxelize_hard_sig, args, nargs, kwnames, a) < 0) return NULL;
  PyObject *stream = rcpy_or_none(A(stream)), *objs[4] = {NULL, NULL, NULL, NULL}, *result = NULL;
  rcpy_tensor p = {0}, off = {0}, t[4] = {0};
  rcpy_cloud_shape c;
  rcpy_dims dims[4];
  float size[3], range[6];
  int32_t P, M;
  const int packed = A(packed) ? PyObject_IsTrue(A(packed)) : 1;
  if (packed < 0) return NULL;
  if (rcpy_voxel_size(A(voxel_size), size) < 0 ||
      rcpy_point_cloud_range(A(point_cloud_range), range) < 0 ||
      rcpy_count(A(max_points_per_voxel), "max_points_per_voxel", &P) < 0 ||
      rcpy_count(A(max_voxels), "max_voxels", &M) < 0 ||
      import_cloud(st, A(points), A(offsets), stream, &p, &off, &c) < 0 ||
      rcpy_hard_out(&c, P, M, dims) < 0)
    goto done;
  PyObject *given[4] = {A(voxels), A(coords), A(num_points), A(num_voxels)};
  static const int32_t dtypes[4] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_I32, ROBOCACHE_DTYPE_I32,
                                    ROBOCACHE_DTYPE_I32};
  for (int i = 0; i < 4; i++)
    if (output(st, given[i], rcpy_hard_names[i], dtypes[i], &dims[i], &p, stream, &t[i], &objs[i]) <
        0)
      goto done;
  if (rcpy_cuda_stream(st, stream, A(check), &p) < 0) goto done;
  robocache_voxel_stats stats;
  robocache_status s;
  Py_BEGIN_ALLOW_THREADS;
  s = (packed ? robocache_voxelize_hard_packed : robocache_voxelize_hard)(
      NULL, &p.t, rcpy_opt(&off), size, range, P, M, &t[0].t, &t[1].t, &t[2].t, &t[3].t, &stats);
  Py_END_ALLOW_THREADS;
  if (s != ROBOCACHE_OK)
    rcpy_raise_status(st, s, "voxelize_hard");
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

RCPY_SIG(voxel_downsample, 2, 2, KW(points), KW(voxel_size), KW(point_cloud_range), KW(offsets),
         KW(out), KW(out_offsets), KW(stream), KW(check));

static PyObject *py_voxel_downsample(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &voxel_downsample_sig, args, nargs, kwnames, a) < 0) return NULL;
  PyObject *stream = rcpy_or_none(A(stream)), *out_obj = NULL, *off_obj = NULL, *result = NULL;
  rcpy_tensor p = {0}, off = {0}, o = {0}, oo = {0};
  rcpy_cloud_shape c;
  rcpy_dims dims[2];
  float size[3], range[6];
  const int has_range = A(point_cloud_range) && A(point_cloud_range) != Py_None;
  if (rcpy_voxel_size(A(voxel_size), size) < 0 ||
      (has_range && rcpy_point_cloud_range(A(point_cloud_range), range) < 0) ||
      import_cloud(st, A(points), A(offsets), stream, &p, &off, &c) < 0 ||
      rcpy_downsample_out(&c, dims) < 0 ||
      output(st, A(out), "out", ROBOCACHE_DTYPE_F32, &dims[0], &p, stream, &o, &out_obj) < 0 ||
      output(st, A(out_offsets), "out_offsets", ROBOCACHE_DTYPE_I64, &dims[1], &p, stream, &oo,
             &off_obj) < 0 ||
      rcpy_cuda_stream(st, stream, A(check), &p) < 0)
    goto done;
  robocache_voxel_stats stats;
  robocache_status s;
  Py_BEGIN_ALLOW_THREADS;
  s = robocache_voxel_downsample(NULL, &p.t, rcpy_opt(&off), size, has_range ? range : NULL, &o.t,
                                 &oo.t, &stats);
  Py_END_ALLOW_THREADS;
  if (s != ROBOCACHE_OK)
    rcpy_raise_status(st, s, "voxel_downsample");
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
    {"voxel_grid_size", RCPY_FASTCALL(py_grid_size),
     "voxel_grid_size($module, voxel_size, point_cloud_range)\n--\n\n"
     "(X, Y, Z) = round((max - min) / voxel_size) in float32; ValueError when invalid."},
    {"voxel_presets", py_presets, METH_NOARGS,
     "voxel_presets($module, /)\n--\n\n"
     "The built-in presets: (name, voxel_size, point_cloud_range, max_points_per_voxel, "
     "max_voxels_train, max_voxels_test) tuples."},
    {"voxelize", RCPY_FASTCALL(py_voxelize),
     "voxelize($module, points, voxel_size, point_cloud_range, *, out_dtype, mode='count', "
     "offsets=None, out=None, stream=None, check=True)\n--\n\n"
     "Dense voxelization: (out [B,F,Z,Y,X] of out_dtype, stats: 8 ints). Use "
     "robocache.voxelize."},
    {"voxelize_hard", RCPY_FASTCALL(py_voxelize_hard),
     "voxelize_hard($module, points, voxel_size, point_cloud_range, max_points_per_voxel, "
     "max_voxels, *, offsets=None, packed=True, voxels=None, coords=None, num_points=None, "
     "num_voxels=None, stream=None, check=True)\n--\n\n"
     "Hard voxelization: (voxels [B*M,P,C], coords [B*M,4], num_points [B*M], num_voxels [B], "
     "stats); packed: robocache_voxelize_hard_packed's row layout, else the padded one. Use "
     "robocache.voxelize_hard."},
    {"voxel_downsample", RCPY_FASTCALL(py_voxel_downsample),
     "voxel_downsample($module, points, voxel_size, *, point_cloud_range=None, offsets=None, "
     "out=None, out_offsets=None, stream=None, check=True)\n--\n\n"
     "Voxel-grid downsampling: (out [N,C] (rows past out_offsets[B] unused), out_offsets "
     "[B+1], stats). Use robocache.voxel_downsample."},
    {NULL, NULL, 0, NULL}};
