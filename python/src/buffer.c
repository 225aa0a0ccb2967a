/* DLPack export: robocache._C.Buffer, a C-contiguous CPU buffer that
 * robocache allocates for an output and hands to the caller's framework
 * (numpy.from_dlpack, torch.from_dlpack, ...). It can be exported once;
 * afterwards the consumer owns the memory and frees it through the deleter,
 * which needs no GIL. */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

typedef struct rcpy_block {
  rcdl_managed_versioned mv; /* exported when the consumer asks for >= 1.0 */
  rcdl_managed ml;           /* exported otherwise */
  int64_t shape[ROBOCACHE_MAX_DIMS];
  int64_t strides[ROBOCACHE_MAX_DIMS];
  void *data;
} rcpy_block;

typedef struct rcpy_buffer {
  PyObject_HEAD rcpy_block *block; /* NULL once exported */
} rcpy_buffer;

static void block_free(rcpy_block *b) {
  free(b->data);
  free(b);
}
static void delete_versioned(rcdl_managed_versioned *m) { block_free(m->manager_ctx); }
static void delete_legacy(rcdl_managed *m) { block_free(m->manager_ctx); }

/* Capsule destructors: free the block only when nobody consumed it. */
static void capsule_versioned_free(PyObject *cap) {
  const char *name = PyCapsule_GetName(cap);
  if (name && strcmp(name, "dltensor_versioned") == 0) {
    rcdl_managed_versioned *m = PyCapsule_GetPointer(cap, name);
    if (m) m->deleter(m);
  }
  PyErr_Clear();
}
static void capsule_legacy_free(PyObject *cap) {
  const char *name = PyCapsule_GetName(cap);
  if (name && strcmp(name, "dltensor") == 0) {
    rcdl_managed *m = PyCapsule_GetPointer(cap, name);
    if (m) m->deleter(m);
  }
  PyErr_Clear();
}

static rcdl_dtype dl_dtype(int32_t dtype) {
  rcdl_dtype d = {RCDL_FLOAT, 32, 1};
  switch (dtype) {
  case ROBOCACHE_DTYPE_F64: d.bits = 64; break;
  case ROBOCACHE_DTYPE_F16: d.bits = 16; break;
  case ROBOCACHE_DTYPE_BF16: d.code = RCDL_BFLOAT, d.bits = 16; break;
  case ROBOCACHE_DTYPE_I64: d.code = RCDL_INT, d.bits = 64; break;
  case ROBOCACHE_DTYPE_I32: d.code = RCDL_INT, d.bits = 32; break;
  case ROBOCACHE_DTYPE_U8: d.code = RCDL_UINT, d.bits = 8; break;
  case RCPY_DTYPE_BOOL: d.code = RCDL_BOOL, d.bits = 8; break;
  default: break;
  }
  return d;
}

PyObject *rcpy_buffer_new(const rcpy_state *st, const char *what, int32_t dtype, int ndim,
                          const int64_t *shape, rcpy_tensor *view) {
  int32_t lib_dtype = dtype == RCPY_DTYPE_BOOL ? ROBOCACHE_DTYPE_U8 : dtype;
  size_t item = robocache_dtype_size((robocache_dtype)lib_dtype), bytes = item;
  int fits = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || (shape[i] && bytes > (SIZE_MAX - 63) / (size_t)shape[i]))
      fits = 0;
    else
      bytes *= (size_t)shape[i];
  }
  void *data = NULL;
  if (fits) {
    bytes = (bytes + 63) / 64 * 64;
    data = aligned_alloc(64, bytes ? bytes : 64);
  }
  if (!data) {
    rcpy_dims d = {ndim, {0}};
    for (int i = 0; i < ndim; i++) d.v[i] = shape[i];
    char dims[200];
    rcpy_format_shape(dims, sizeof dims, &d);
    const char *name = dtype == RCPY_DTYPE_BOOL ? "bool" : robocache_dtype_name(lib_dtype);
    if (fits)
      PyErr_Format(PyExc_MemoryError, "%s: out of memory allocating %zu bytes for %s %s", what,
                   bytes, dims, name);
    else
      PyErr_Format(PyExc_MemoryError,
                   "%s: %s %s is more bytes than the address space holds (%zu-byte elements)", what,
                   dims, name, item);
    return NULL;
  }
  return rcpy_buffer_adopt(st, data, dtype, ndim, shape, view);
}

PyObject *rcpy_buffer_adopt(const rcpy_state *st, void *data, int32_t dtype, int ndim,
                            const int64_t *shape, rcpy_tensor *view) {
  int32_t lib_dtype = dtype == RCPY_DTYPE_BOOL ? ROBOCACHE_DTYPE_U8 : dtype;
  rcpy_block *b = calloc(1, sizeof *b);
  rcpy_buffer *self = b ? PyObject_New(rcpy_buffer, st->buffer_type) : NULL;
  if (!self) {
    free(b);
    free(data);
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
  }
  b->data = data;
  int64_t stride = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    b->shape[i] = shape[i];
    b->strides[i] = stride;
    stride *= shape[i];
  }
  rcdl_tensor dl = {.data = data,
                    .device = {RCDL_CPU, 0},
                    .ndim = ndim,
                    .dtype = dl_dtype(dtype),
                    .shape = b->shape,
                    .strides = b->strides,
                    .byte_offset = 0};
  b->mv = (rcdl_managed_versioned){.version = {RCDL_MAJOR, RCDL_MINOR},
                                   .manager_ctx = b,
                                   .deleter = delete_versioned,
                                   .flags = 0,
                                   .dl_tensor = dl};
  b->ml = (rcdl_managed){.dl_tensor = dl, .manager_ctx = b, .deleter = delete_legacy};
  self->block = b;
  memset(view, 0, sizeof *view);
  memcpy(view->shape, b->shape, sizeof b->shape);
  memcpy(view->strides, b->strides, sizeof b->strides);
  view->t = (robocache_tensor){.data = data,
                               .device_type = ROBOCACHE_DEVICE_CPU,
                               .device_id = 0,
                               .dtype = lib_dtype,
                               .ndim = ndim,
                               .shape = view->shape,
                               .strides = view->strides};
  return (PyObject *)self;
}

static void buffer_dealloc(rcpy_buffer *self) {
  PyTypeObject *type = Py_TYPE(self);
  if (self->block) block_free(self->block);
  type->tp_free((PyObject *)self);
  Py_DECREF(type);
}

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) */
static PyObject *buffer_dlpack(rcpy_buffer *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kw, &stream, &max_version,
                                   &dl_device, &copy))
    return NULL;
  if (!self->block) {
    PyErr_SetString(PyExc_BufferError,
                    "robocache Buffer was already exported: it can be consumed once");
    return NULL;
  }
  if (stream != Py_None) {
    PyErr_SetString(PyExc_BufferError, "robocache Buffer is on the CPU: stream must be None");
    return NULL;
  }
  if (dl_device != Py_None) {
    int type = -1, id = -1;
    if (!PyArg_ParseTuple(dl_device, "ii", &type, &id)) return NULL;
    if (type != RCDL_CPU) {
      PyErr_Format(PyExc_BufferError,
                   "robocache Buffer is on the CPU; cannot export to device type %d", type);
      return NULL;
    }
  }
  int versioned = 0;
  if (max_version != Py_None) {
    unsigned major = 0, minor = 0;
    if (!PyArg_ParseTuple(max_version, "II", &major, &minor)) return NULL;
    versioned = major >= RCDL_MAJOR;
  }
  rcpy_block *b = self->block;
  PyObject *cap = versioned ? PyCapsule_New(&b->mv, "dltensor_versioned", capsule_versioned_free)
                            : PyCapsule_New(&b->ml, "dltensor", capsule_legacy_free);
  if (cap) self->block = NULL;
  return cap;
}

static PyObject *buffer_dlpack_device(rcpy_buffer *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(ii)", RCDL_CPU, 0);
}

static PyMethodDef buffer_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))buffer_dlpack, METH_VARARGS | METH_KEYWORDS,
     "Exports the buffer once as a DLPack capsule (versioned when max_version >= (1, 0))."},
    {"__dlpack_device__", (PyCFunction)buffer_dlpack_device, METH_NOARGS,
     "(1, 0): the buffer lives in CPU memory."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot buffer_slots[] = {
    {Py_tp_dealloc, (void *)buffer_dealloc},
    {Py_tp_methods, buffer_methods},
    {Py_tp_doc,
     (void *)"A CPU output buffer allocated by robocache, consumed once through DLPack."},
    {0, NULL}};

static PyType_Spec buffer_spec = {
    .name = "robocache._C.Buffer",
    .basicsize = sizeof(rcpy_buffer),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = buffer_slots,
};

int rcpy_buffer_init(PyObject *module, rcpy_state *st) {
  st->buffer_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &buffer_spec, NULL);
  if (!st->buffer_type) return -1;
  return PyModule_AddType(module, st->buffer_type);
}
