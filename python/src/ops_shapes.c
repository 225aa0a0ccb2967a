/* robocache._C.resample_shapes / align_shapes / voxelize_shape /
 * voxelize_hard_shapes / voxel_downsample_shapes: the output shapes of the
 * ops (shapes.c) for input shapes, with the ops' errors for shapes they
 * refuse. For the Python layer's own allocations (CUDA outputs) and the fake
 * implementations of the torch ops, which have shapes but no data. */
#include "binding.h"

/* A shape (a sequence of non-negative ints) or None / not given (ndim -1). */
static int dims_arg(PyObject *obj, const char *what, rcpy_dims *d) {
  d->ndim = -1;
  if (!obj || obj == Py_None) return 0;
  PyObject *seq = PySequence_Fast(obj, "");
  if (!seq) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: expected a shape (a sequence of ints), got %.100s", what,
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int rc = 0;
  if (n > ROBOCACHE_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "%s: %zd dimensions, robocache accepts at most %d", what, n,
                 ROBOCACHE_MAX_DIMS);
    rc = -1;
  }
  for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
    long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (x == -1 && PyErr_Occurred()) {
      rc = -1;
    } else if (x < 0) {
      PyErr_Format(PyExc_ValueError, "%s: negative size %lld on axis %zd", what, x, i);
      rc = -1;
    }
    d->v[i] = x;
  }
  d->ndim = (int)n;
  Py_DECREF(seq);
  return rc;
}

static PyObject *dims_tuple(const rcpy_dims *d) {
  PyObject *t = PyTuple_New(d->ndim);
  for (int i = 0; t && i < d->ndim; i++) {
    PyObject *x = PyLong_FromLongLong(d->v[i]);
    if (!x) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

/* A tuple of n shapes. */
static PyObject *shapes_tuple(const rcpy_dims *d, int n) {
  PyObject *t = PyTuple_New(n);
  for (int i = 0; t && i < n; i++) {
    PyObject *x = dims_tuple(&d[i]);
    if (!x) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

RCPY_SIG(resample_shapes, 3, 3, KW(values), KW(times), KW(target_times));

static PyObject *py_resample_shapes(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  PyObject *a[RCPY_KW_COUNT];
  rcpy_dims v, t, tt, out[2];
  rcpy_stream_shape sh;
  if (rcpy_parse(rcpy_state_of(self), &resample_shapes_sig, args, nargs, kwnames, a) < 0 ||
      dims_arg(A(values), "values", &v) < 0 || dims_arg(A(times), "times", &t) < 0 ||
      dims_arg(A(target_times), "target_times", &tt) < 0 ||
      rcpy_targets_shape(&tt, &sh.batched) < 0 ||
      rcpy_stream_shape_of(&v, &t, sh.batched, "", &sh) < 0 ||
      rcpy_resample_out(&tt, &sh, &out[0], &out[1]) < 0)
    return NULL;
  return shapes_tuple(out, 2);
}

RCPY_SIG(align_shapes, 3, 3, KW(values), KW(times), KW(target_times), KW(names));

static PyObject *py_align_shapes(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(rcpy_state_of(self), &align_shapes_sig, args, nargs, kwnames, a) < 0) return NULL;
  rcpy_dims tt, out[2];
  int batched;
  if (dims_arg(A(target_times), "target_times", &tt) < 0 || rcpy_targets_shape(&tt, &batched) < 0)
    return NULL;
  PyObject *values = PySequence_Tuple(A(values)), *times = PySequence_Tuple(A(times));
  PyObject *names = A(names) && A(names) != Py_None ? PySequence_Tuple(A(names)) : NULL;
  PyObject *result = NULL;
  if (!values || !times || (A(names) && A(names) != Py_None && !names)) goto done;
  const Py_ssize_t K = PyTuple_GET_SIZE(values);
  if (PyTuple_GET_SIZE(times) != K || (names && PyTuple_GET_SIZE(names) != K)) {
    PyErr_Format(PyExc_ValueError, "times, names: one entry per stream (%zd values)", K);
    goto done;
  }
  int64_t D = 0;
  for (Py_ssize_t k = 0; k < K; k++) {
    char who[160], what[200];
    rcpy_dims v, t;
    rcpy_stream_shape sh;
    if (rcpy_stream_who(who, sizeof who, k, names ? PyTuple_GET_ITEM(names, k) : NULL) < 0)
      goto done;
    PyOS_snprintf(what, sizeof what, "%svalues", who);
    if (dims_arg(PyTuple_GET_ITEM(values, k), what, &v) < 0) goto done;
    PyOS_snprintf(what, sizeof what, "%stimes", who);
    if (dims_arg(PyTuple_GET_ITEM(times, k), what, &t) < 0 ||
        rcpy_stream_shape_of(&v, &t, batched, who, &sh) < 0)
      goto done;
    D += sh.D;
  }
  if (rcpy_align_out(&tt, D, K, &out[0], &out[1]) == 0) result = shapes_tuple(out, 2);
done:
  Py_XDECREF(values);
  Py_XDECREF(times);
  Py_XDECREF(names);
  return result;
}

/* The cloud shape of points [N,C] with offsets [B+1] (or None). */
static int cloud_arg(PyObject *const *a, rcpy_cloud_shape *c) {
  rcpy_dims p, o;
  if (dims_arg(A(points), "points", &p) < 0 || dims_arg(A(offsets), "offsets", &o) < 0) return -1;
  *c = rcpy_cloud_shape_of(&p, &o);
  return 0;
}

RCPY_SIG(voxelize_shape, 3, 3, KW(points), KW(voxel_size), KW(point_cloud_range), KW(mode),
         KW(offsets));

static PyObject *py_voxelize_shape(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  rcpy_cloud_shape c;
  rcpy_dims out;
  float size[3], range[6];
  int64_t grid[3];
  int32_t mode = ROBOCACHE_VOXEL_COUNT;
  if (rcpy_parse(st, &voxelize_shape_sig, args, nargs, kwnames, a) < 0 ||
      rcpy_voxel_size(A(voxel_size), size) < 0 ||
      rcpy_point_cloud_range(A(point_cloud_range), range) < 0 ||
      (A(mode) && rcpy_voxel_mode(A(mode), "mode", &mode) < 0) || cloud_arg(a, &c) < 0)
    return NULL;
  robocache_status s = robocache_voxel_grid_size(NULL, size, range, grid);
  if (s != ROBOCACHE_OK) return rcpy_raise_status(st, s, "voxelize");
  return rcpy_voxelize_out(&c, grid, mode, &out) < 0 ? NULL : dims_tuple(&out);
}

RCPY_SIG(voxelize_hard_shapes, 3, 3, KW(points), KW(max_points_per_voxel), KW(max_voxels),
         KW(offsets));

static PyObject *py_voxelize_hard_shapes(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames) {
  PyObject *a[RCPY_KW_COUNT];
  rcpy_cloud_shape c;
  rcpy_dims out[4];
  int32_t P, M;
  if (rcpy_parse(rcpy_state_of(self), &voxelize_hard_shapes_sig, args, nargs, kwnames, a) < 0 ||
      rcpy_count(A(max_points_per_voxel), "max_points_per_voxel", &P) < 0 ||
      rcpy_count(A(max_voxels), "max_voxels", &M) < 0 || cloud_arg(a, &c) < 0 ||
      rcpy_hard_out(&c, P, M, out) < 0)
    return NULL;
  return shapes_tuple(out, 4);
}

RCPY_SIG(voxel_downsample_shapes, 1, 1, KW(points), KW(offsets));

static PyObject *py_voxel_downsample_shapes(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames) {
  PyObject *a[RCPY_KW_COUNT];
  rcpy_cloud_shape c;
  rcpy_dims out[2];
  if (rcpy_parse(rcpy_state_of(self), &voxel_downsample_shapes_sig, args, nargs, kwnames, a) < 0 ||
      cloud_arg(a, &c) < 0 || rcpy_downsample_out(&c, out) < 0)
    return NULL;
  return shapes_tuple(out, 2);
}

PyMethodDef rcpy_shape_methods[] = {
    {"resample_shapes", RCPY_FASTCALL(py_resample_shapes),
     "resample_shapes($module, values, times, target_times)\n--\n\n"
     "(out shape, valid shape) of resample for inputs of these shapes."},
    {"align_shapes", RCPY_FASTCALL(py_align_shapes),
     "align_shapes($module, values, times, target_times, *, names=None)\n--\n\n"
     "(out shape, valid shape) of align; values, times: one shape per stream, names (for "
     "messages) None or one per stream."},
    {"voxelize_shape", RCPY_FASTCALL(py_voxelize_shape),
     "voxelize_shape($module, points, voxel_size, point_cloud_range, *, mode='count', "
     "offsets=None)\n--\n\n"
     "Shape [B,F,Z,Y,X] of dense voxelize's out for points and offsets of these shapes."},
    {"voxelize_hard_shapes", RCPY_FASTCALL(py_voxelize_hard_shapes),
     "voxelize_hard_shapes($module, points, max_points_per_voxel, max_voxels, *, "
     "offsets=None)\n--\n\n"
     "Shapes of voxelize_hard's (voxels, coords, num_points, num_voxels) before compaction."},
    {"voxel_downsample_shapes", RCPY_FASTCALL(py_voxel_downsample_shapes),
     "voxel_downsample_shapes($module, points, *, offsets=None)\n--\n\n"
     "Shapes of voxel_downsample's (out, out_offsets): the capacity N rows."},
    {NULL, NULL, 0, NULL}};
