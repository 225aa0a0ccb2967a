/* robocache._C.read_point_cloud: the point-cloud readers of src/io
 * (pointcloud.h: KITTI / nuScenes .bin, PCD ascii / binary /
 * binary_compressed, PLY ascii / binary little-endian). */
#include "binding.h"
#include "pointcloud.h"

RCPY_SIG(read_point_cloud, 1, 1, KW(path), KW(bin_columns));

/* -> (points Buffer [n, cols] float32, names tuple, format, points_in_file,
 *     dropped_nonfinite, width, height) */
static PyObject *py_read_point_cloud(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  const rcpy_state *st = rcpy_state_of(self);
  PyObject *a[RCPY_KW_COUNT];
  if (rcpy_parse(st, &read_point_cloud_sig, args, nargs, kwnames, a) < 0) return NULL;
  PyObject *path_bytes = NULL, *buf = NULL, *names = NULL, *result = NULL;
  if (!PyUnicode_FSConverter(A(path), &path_bytes)) return NULL;
  const long cols = A(bin_columns) ? PyLong_AsLong(A(bin_columns)) : 0;
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
    rcpy_raise_io(err.status, err.msg);
    rc_pointcloud_free(&pc);
    goto done;
  }
  const int64_t shape[2] = {pc.n, pc.cols};
  rcpy_tensor view;
  buf = rcpy_buffer_adopt(st, pc.points, ROBOCACHE_DTYPE_F32, 2, shape, &view);
  pc.points = NULL; /* the Buffer's (or freed) */
  names = PyTuple_New(pc.cols);
  if (buf && names) {
    for (int c = 0; c < pc.cols; c++) {
      PyObject *name = rcpy_text(pc.names[c]);
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
    {"read_point_cloud", RCPY_FASTCALL(py_read_point_cloud),
     "read_point_cloud($module, path, *, bin_columns=0)\n--\n\n"
     "(points Buffer [n, cols] float32, names, format, points_in_file, dropped_nonfinite, width, "
     "height); bin_columns 0: from the file name. Use robocache.read_point_cloud."},
    {NULL, NULL, 0, NULL}};
