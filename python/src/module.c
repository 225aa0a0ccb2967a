/* robocache._C: module definition with multi-phase initialisation (PEP 489)
 * and per-module state (rcpy_state: the exception type, the Buffer type,
 * interned names). Each ops_*.c file exports a method table; list new ones
 * in k_tables. */
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

static PyMethodDef k_core_methods[] = {
    {"version", py_version, METH_NOARGS,
     "version($module, /)\n--\n\nrobocache_version_string() of the linked library."},
    {"has_cuda", py_has_cuda, METH_NOARGS,
     "has_cuda($module, /)\n--\n\nTrue when the library has its CUDA backend and a CUDA device "
     "is usable."},
    {NULL, NULL, 0, NULL}};

static PyMethodDef *const k_tables[] = {
    k_core_methods,     rcpy_align_methods,      rcpy_grid_methods, rcpy_voxelize_methods,
    rcpy_shape_methods, rcpy_pointcloud_methods, rcpy_table_methods, rcpy_mcap_methods};

static int module_exec(PyObject *m) {
  rcpy_state *st = rcpy_state_of(m);
  for (size_t i = 0; i < sizeof k_tables / sizeof k_tables[0]; i++)
    if (PyModule_AddFunctions(m, k_tables[i]) < 0) return -1;
  if (rcpy_args_init(st) < 0 || rcpy_dlpack_init(st) < 0 || rcpy_buffer_init(m, st) < 0) return -1;
  st->error = PyErr_NewExceptionWithDoc(
      "robocache.RobocacheError",
      "A CUDA or internal error of the robocache library (the message is the library's).",
      PyExc_RuntimeError, NULL);
  if (!st->error || PyModule_AddObjectRef(m, "RobocacheError", st->error) < 0) return -1;
  return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
  rcpy_state *st = rcpy_state_of(m);
  if (!st) return 0;
  Py_VISIT(st->error);
  Py_VISIT(st->buffer_type);
  return 0;
}

static int module_clear(PyObject *m) {
  rcpy_state *st = rcpy_state_of(m);
  if (!st) return 0;
  Py_CLEAR(st->error);
  Py_CLEAR(st->buffer_type);
  Py_CLEAR(st->dlpack);
  Py_CLEAR(st->kw_ver);
  Py_CLEAR(st->kw_str_ver);
  Py_CLEAR(st->kw_str);
  Py_CLEAR(st->version);
  for (int i = 0; i < RCPY_KW_COUNT; i++) Py_CLEAR(st->kw[i]);
  return 0;
}

static void module_free(void *m) { module_clear((PyObject *)m); }

static PyModuleDef_Slot k_slots[] = {{Py_mod_exec, (void *)module_exec}, {0, NULL}};

static struct PyModuleDef k_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "robocache._C",
    .m_doc = "robocache C extension: DLPack in, C library, DLPack out. Every function takes "
             "keyword arguments (see each one's signature); robocache's Python functions are "
             "the documented API.",
    .m_size = sizeof(rcpy_state),
    .m_slots = k_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__C(void) { return PyModuleDef_Init(&k_module); }
