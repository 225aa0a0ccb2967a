/* robocache._C.read_point_cloud: the point-cloud readers of src/io
 * (pointcloud.h: KITTI / nuScenes .bin, PCD ascii / binary /
 * binary_compressed, PLY ascii / binary little-endian). */
#include "binding.h"
#include "pointcloud.h"

/* The reader's error as a Python exception: OSError (the file cannot be opened
 * or read), else ValueError (bad format, columns). */
static PyObject *raise_io(const rc_io_err *err) {
  PyErr_SetString(err->status == ROBOCACHE_IO_ERROR ? PyExc_OSError : PyExc_ValueError, err->msg);
  return NULL;
}

/* read_point_cloud(path, bin_columns)
 * -> (points Buffer [n, cols] float32, names tuple, format, points_in_file,
 *     dropped_nonfinite, width, height) */
static PyObject *py_read_point_cloud(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 2) return PyErr_Format(PyExc_TypeError, "_C.read_point_cloud takes 2 arguments");
  PyObject *path_bytes = NULL, *buf = NULL, *names = NULL, *result = NULL;
  if (!PyUnicode_FSConverter(a[0], &path_bytes)) return NULL;
  const long cols = PyLong_AsLong(a[1]);
  if (cols == -1 && PyErr_Occurred()) goto done;
  if (cols < 0 || cols > RC_PC_MAX_COLS) {
    PyErr_Format(PyExc_ValueError,
                 "bin_columns: expected 3..%d (or 0: from the file name), got %ld", RC_PC_MAX_COLS,
                 cols);
    goto done;
  }
  rc_pointcloud pc;
  rc_io_err err = {0};
  robocache_status s;
  Py_BEGIN_ALLOW_THREADS;
  s = rc_pointcloud_read(PyBytes_AS_STRING(path_bytes), RC_PC_FORMAT_AUTO, (int32_t)cols, &pc,
                         &err);
  Py_END_ALLOW_THREADS;
  if (s != ROBOCACHE_OK) {
    raise_io(&err);
    rc_pointcloud_free(&pc);
    goto done;
  }
  const int64_t shape[2] = {pc.n, pc.cols};
  rcpy_tensor view;
  buf = rcpy_buffer_adopt(pc.points, ROBOCACHE_DTYPE_F32, 2, shape, &view);
  pc.points = NULL; /* the Buffer's (or freed) */
  names = PyTuple_New(pc.cols);
  if (buf && names) {
    for (int c = 0; c < pc.cols; c++) {
      PyObject *name = PyUnicode_FromString(pc.names[c]);
      if (!name) goto freed;
      PyTuple_SET_ITEM(names, c, name);
    }
    result =
        Py_BuildValue("(OOsLLLL)", buf, names, pc.format, (long long)pc.points_in_file,
                      (long long)pc.dropped_nonfinite, (long long)pc.width, (long long)pc.height);
  }
freed:
  rc_pointcloud_free(&pc);
done:
  Py_XDECREF(path_bytes);
  Py_XDECREF(buf);
  Py_XDECREF(names);
  return result;
}

PyMethodDef rcpy_pointcloud_methods[] = {
    {"read_point_cloud", (PyCFunction)(void (*)(void))py_read_point_cloud, METH_FASTCALL,
     "Low-level point-cloud reader; use robocache.read_point_cloud."},
    {NULL, NULL, 0, NULL}};
