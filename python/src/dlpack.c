/* DLPack import: any object with __dlpack__ (PyTorch, NumPy >= 1.22, CuPy,
 * JAX) or a DLPack capsule -> rcpy_tensor. Versioned capsules are requested
 * first (max_version=(1, 0)), legacy ones accepted. A consumed capsule is
 * renamed "used_dltensor(_versioned)" and its deleter is called exactly once,
 * by rcpy_release. */
#include "binding.h"

#include <string.h>

int rcpy_dlpack_init(rcpy_state *st) {
  st->dlpack = PyUnicode_InternFromString("__dlpack__");
  st->kw_ver = Py_BuildValue("(s)", "max_version");
  st->kw_str_ver = Py_BuildValue("(ss)", "stream", "max_version");
  st->kw_str = Py_BuildValue("(s)", "stream");
  st->version = Py_BuildValue("(ii)", RCDL_MAJOR, RCDL_MINOR);
  return (st->dlpack && st->kw_ver && st->kw_str_ver && st->kw_str && st->version) ? 0 : -1;
}

/* Calls obj.__dlpack__(stream=..., max_version=(1, 0)); on TypeError (a
 * producer older than DLPack 1.0) again without max_version. */
static PyObject *call_dlpack(const rcpy_state *st, PyObject *obj, const char *what,
                             PyObject *stream) {
  int has_stream = stream != Py_None;
  PyObject *args[3] = {obj, has_stream ? stream : st->version, st->version};
  PyObject *cap =
      PyObject_VectorcallMethod(st->dlpack, args, 1, has_stream ? st->kw_str_ver : st->kw_ver);
  if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    cap = PyObject_VectorcallMethod(st->dlpack, args, 1, has_stream ? st->kw_str : NULL);
  }
  if (!cap && PyErr_ExceptionMatches(PyExc_AttributeError)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "%s: expected a tensor or array supporting DLPack (__dlpack__), got %.200s", what,
                 Py_TYPE(obj)->tp_name);
  } else if (!cap && PyErr_ExceptionMatches(PyExc_BufferError)) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_Format(PyExc_BufferError, "%s: __dlpack__ failed: %S", what, value ? value : Py_None);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
  }
  return cap;
}

/* robocache dtype of a DLPack dtype, or -1. bool (8 bit) reads as uint8. */
static int32_t dtype_from_dl(rcdl_dtype d) {
  if (d.lanes != 1) return -1;
  switch (d.code) {
  case RCDL_FLOAT:
    return d.bits == 32   ? ROBOCACHE_DTYPE_F32
           : d.bits == 64 ? ROBOCACHE_DTYPE_F64
           : d.bits == 16 ? ROBOCACHE_DTYPE_F16
                          : -1;
  case RCDL_BFLOAT: return d.bits == 16 ? ROBOCACHE_DTYPE_BF16 : -1;
  case RCDL_INT:
    return d.bits == 64 ? ROBOCACHE_DTYPE_I64 : d.bits == 32 ? ROBOCACHE_DTYPE_I32 : -1;
  case RCDL_UINT: return d.bits == 8 ? ROBOCACHE_DTYPE_U8 : -1;
  case RCDL_BOOL: return d.bits == 8 ? ROBOCACHE_DTYPE_U8 : -1;
  default: return -1;
  }
}

/* Fills out from a DLPack tensor; -1 with an exception set. */
static int fill_from_dl(const rcdl_tensor *dl, const char *what, rcpy_tensor *out) {
  if (dl->ndim < 0 || dl->ndim > ROBOCACHE_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "%s: %d dimensions, robocache accepts at most %d", what,
                 (int)dl->ndim, ROBOCACHE_MAX_DIMS);
    return -1;
  }
  int32_t dtype = dtype_from_dl(dl->dtype);
  if (dtype < 0) {
    PyErr_Format(PyExc_TypeError,
                 "%s: unsupported dtype (DLPack code %d, %d bits, %d lanes); robocache "
                 "takes float32/float64/float16/bfloat16 values, int64/float times, int64 "
                 "lengths",
                 what, (int)dl->dtype.code, (int)dl->dtype.bits, (int)dl->dtype.lanes);
    return -1;
  }
  int32_t dev = dl->device.device_type;
  if (dev == RCDL_CPU || dev == RCDL_CUDA_HOST) {
    out->t.device_type = ROBOCACHE_DEVICE_CPU;
    out->t.device_id = 0;
  } else if (dev == RCDL_CUDA || dev == RCDL_CUDA_MANAGED) {
    out->t.device_type = ROBOCACHE_DEVICE_CUDA;
    out->t.device_id = dl->device.device_id;
  } else {
    PyErr_Format(PyExc_ValueError,
                 "%s: unsupported device (DLPack device type %d); robocache runs on CPU and "
                 "CUDA",
                 what, (int)dev);
    return -1;
  }
  int64_t stride = 1;
  for (int i = dl->ndim - 1; i >= 0; i--) {
    out->shape[i] = dl->shape[i];
    out->strides[i] = dl->strides ? dl->strides[i] : stride;
    stride *= dl->shape[i];
  }
  out->t.data = dl->data ? (char *)dl->data + dl->byte_offset : NULL;
  out->t.dtype = dtype;
  out->t.ndim = dl->ndim;
  out->t.shape = out->shape;
  out->t.strides = out->strides;
  return 0;
}

/* Takes ownership of the managed tensor inside cap (renaming the capsule). */
static int consume_capsule(PyObject *cap, const char *what, rcpy_tensor *out) {
  const rcdl_tensor *dl;
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    rcdl_managed_versioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (PyCapsule_SetName(cap, "used_dltensor_versioned") < 0) return -1;
    out->managed = m;
    out->versioned = 1;
    if (m->version.major != RCDL_MAJOR) {
      PyErr_Format(PyExc_BufferError, "%s: DLPack version %u.%u is not supported (need 1.x)", what,
                   (unsigned)m->version.major, (unsigned)m->version.minor);
      rcpy_release(out);
      return -1;
    }
    out->read_only = (m->flags & RCDL_FLAG_READ_ONLY) != 0;
    dl = &m->dl_tensor;
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    rcdl_managed *m = PyCapsule_GetPointer(cap, "dltensor");
    if (PyCapsule_SetName(cap, "used_dltensor") < 0) return -1;
    out->managed = m;
    out->versioned = 0;
    dl = &m->dl_tensor;
  } else {
    const char *name = PyCapsule_CheckExact(cap) ? PyCapsule_GetName(cap) : NULL;
    PyErr_Clear();
    PyErr_Format(PyExc_BufferError,
                 "%s: expected a DLPack capsule named 'dltensor' or 'dltensor_versioned', got "
                 "%.100s (a capsule can be consumed only once)",
                 what, name ? name : Py_TYPE(cap)->tp_name);
    return -1;
  }
  if (fill_from_dl(dl, what, out) < 0) {
    rcpy_release(out);
    return -1;
  }
  return 0;
}

int rcpy_import(const rcpy_state *st, PyObject *obj, const char *what, PyObject *stream,
                int writable, rcpy_tensor *out) {
  memset(out, 0, sizeof *out);
  PyObject *cap;
  if (PyCapsule_CheckExact(obj)) {
    cap = obj;
    Py_INCREF(cap);
  } else {
    cap = call_dlpack(st, obj, what, stream);
    if (!cap) return -1;
  }
  int rc = consume_capsule(cap, what, out);
  Py_DECREF(cap);
  if (rc < 0) return -1;
  if (writable && out->read_only) {
    PyErr_Format(PyExc_BufferError, "%s: tensor is read-only; outputs must be writable", what);
    rcpy_release(out);
    return -1;
  }
  return 0;
}

void rcpy_release(rcpy_tensor *t) {
  void *m = t->managed;
  if (!m) return;
  t->managed = NULL;
  /* A deleter may run Python code (DECREF, callbacks): keep a pending
   * exception out of its way. */
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (t->versioned) {
    rcdl_managed_versioned *v = m;
    if (v->deleter) v->deleter(v);
  } else {
    rcdl_managed *l = m;
    if (l->deleter) l->deleter(l);
  }
  PyErr_Restore(type, value, tb);
}

void rcpy_unsqueeze(rcpy_tensor *t, int axis) {
  for (int i = t->t.ndim; i > axis; i--) {
    t->shape[i] = t->shape[i - 1];
    t->strides[i] = t->strides[i - 1];
  }
  t->shape[axis] = 1;
  t->strides[axis] = 0;
  t->t.ndim++;
}
