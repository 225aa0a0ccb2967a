/* robocache._C: module registration. Each ops_*.c file exports a method
 * table; list new ones in k_tables. */
#include "binding.h"

static PyObject *py_version(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyUnicode_FromString(robocache_version_string());
}

static PyObject *py_has_cuda(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return PyBool_FromLong(robocache_has_cuda());
}

PyMethodDef rcpy_core_methods[] = {
    {"version", py_version, METH_NOARGS, "robocache_version_string() of the linked library."},
    {"has_cuda", py_has_cuda, METH_NOARGS,
     "True when the library has its CUDA backend and a CUDA device is usable."},
    {NULL, NULL, 0, NULL}};

static PyMethodDef *const k_tables[] = {rcpy_core_methods,  rcpy_align_methods,
                                        rcpy_grid_methods,  rcpy_voxelize_methods,
                                        rcpy_bench_methods, rcpy_pointcloud_methods};

static struct PyModuleDef k_module = {
    PyModuleDef_HEAD_INIT, .m_name = "robocache._C",
    .m_doc = "robocache C extension: DLPack in, C library, DLPack out.", .m_size = -1};

PyMODINIT_FUNC PyInit__C(void) {
  if (rcpy_dlpack_init() < 0 || PyType_Ready(&rcpy_buffer_type) < 0) return NULL;
  PyObject *m = PyModule_Create(&k_module);
  if (!m) return NULL;
  for (size_t i = 0; i < sizeof k_tables / sizeof k_tables[0]; i++)
    if (PyModule_AddFunctions(m, k_tables[i]) < 0) goto fail;
  rcpy_error = PyErr_NewExceptionWithDoc(
      "robocache.RobocacheError",
      "A CUDA or internal error of the robocache library (the message is the library's).",
      PyExc_RuntimeError, NULL);
  if (!rcpy_error || PyModule_AddObjectRef(m, "RobocacheError", rcpy_error) < 0) goto fail;
  if (PyModule_AddObjectRef(m, "Buffer", (PyObject *)&rcpy_buffer_type) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
