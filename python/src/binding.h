/* Shared declarations of the robocache._C extension module (CPython API):
 * DLPack import/export, errors, option parsing. */
#ifndef ROBOCACHE_PY_BINDING_H
#define ROBOCACHE_PY_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dlpack.h"
#include "robocache.h"

/* ---- DLPack import (dlpack.c) ---------------------------------------------
 * A tensor taken from any object with __dlpack__ (or a DLPack capsule).
 * shape/strides are private copies (in elements) so that views can add or
 * drop unit axes; t points at them. */
typedef struct rcpy_tensor {
  robocache_tensor t;
  int64_t shape[ROBOCACHE_MAX_DIMS];
  int64_t strides[ROBOCACHE_MAX_DIMS];
  int read_only;
  void *managed; /* rcdl_managed(_versioned) to delete, or NULL */
  int versioned;
} rcpy_tensor;

/* Imports obj into *out (zeroed first). `what` names the argument in
 * messages. stream: None, or the consumer's CUDA stream handed to
 * __dlpack__(stream=...). writable: 1 for outputs (read-only -> BufferError).
 * Returns 0, or -1 with a Python exception set (nothing to release then). */
int rcpy_import(PyObject *obj, const char *what, PyObject *stream, int writable, rcpy_tensor *out);
/* Module-init setup of the interned names used by rcpy_import. */
int rcpy_dlpack_init(void);
/* Calls the producer's deleter (once; later calls do nothing). GIL held. */
void rcpy_release(rcpy_tensor *t);
/* Inserts a unit axis at `axis` (stride 0). */
void rcpy_unsqueeze(rcpy_tensor *t, int axis);

/* ---- DLPack export (dlpack.c) ---------------------------------------------
 * robocache._C.Buffer: a C-contiguous CPU buffer owned by robocache, exported
 * once through __dlpack__ (versioned or legacy capsule). */
extern PyTypeObject rcpy_buffer_type;
/* Buffer dtype for masks: exported as DLPack bool (8 bit), written by the
 * library as uint8 0/1. */
#define RCPY_DTYPE_BOOL 100
/* New Buffer of the given shape and dtype (robocache_dtype or RCPY_DTYPE_BOOL) (uninitialised,
 * 64-byte aligned); NULL with MemoryError set. *view receives a tensor describing it. */
PyObject *rcpy_buffer_new(int32_t dtype, int ndim, const int64_t *shape, rcpy_tensor *view);
/* rcpy_buffer_new over `data` (malloc'd, C-contiguous, of that shape and
 * dtype), which the Buffer then owns and frees; on failure (NULL, MemoryError
 * set) data is freed too. */
PyObject *rcpy_buffer_adopt(void *data, int32_t dtype, int ndim, const int64_t *shape,
                            rcpy_tensor *view);

/* ---- errors (errors.c) ---------------------------------------------------- */
extern PyObject *rcpy_error; /* robocache.RobocacheError */
/* Raises the Python exception for status with the context's message,
 * prefixed by `who` (e.g. "resample"); returns NULL. */
PyObject *rcpy_raise_status(robocache_status s, const char *who);

/* ---- options (options.c) -------------------------------------------------- */
/* robocache_method / extrapolate / quat_order from a str; -1 with ValueError
 * naming `what` and the accepted values. */
int rcpy_method(PyObject *s, const char *what, int32_t *out);
int rcpy_extrapolate(PyObject *s, const char *what, int32_t *out);
int rcpy_quat_order(PyObject *s, const char *what, int32_t *out);
/* robocache_voxel_mode from "count", "occupancy", "sum", "mean", "max". */
int rcpy_voxel_mode(PyObject *s, const char *what, int32_t *out);
/* Float dtype from a name ("float32", "torch.bfloat16", ...) or None (keep
 * *out); -1 with TypeError. */
int rcpy_float_dtype(PyObject *s, const char *what, int32_t *out);
/* A time option in the unit of the times (int64 -> ns, float -> s) to int64
 * ns; None -> 0. -1 with TypeError/ValueError naming `what`. */
int rcpy_time_ns(PyObject *v, int32_t time_dtype, const char *what, int64_t *ns);
/* fill_value: a real number (NaN allowed). */
int rcpy_double(PyObject *v, const char *what, double *out);
/* Interpolation options from Python objects (method .. quat_order), with time
 * options converted for time_dtype. `who` prefixes messages. */
int rcpy_interp_options(PyObject *const *args, int32_t time_dtype, const char *who,
                        robocache_interp_options *o);
#define RCPY_NUM_OPTION_ARGS                                                                       \
  7 /* method, extrapolate, fill_value, max_gap,                                                   \
       tolerance, time_offset, quat_order */

/* ---- views (views.c) -----------------------------------------------------
 * Checks the ranks of one stream (batched: times [B,S], values [B,S,D] or
 * [B,S]; unbatched: times [S], values [S,D] or [S]) and reshapes values to
 * [B,S,D] and times to [B,S]. *channels = 0 when values had no D axis.
 * `who` prefixes messages ("" or "stream 1 (imu): "). */
int rcpy_stream_view(rcpy_tensor *values, rcpy_tensor *times, int batched, const char *who,
                     int *channels);
/* ValueError naming `what` unless t has exactly shape[ndim]. */
int rcpy_check_shape(const rcpy_tensor *t, const char *what, int ndim, const int64_t *shape);
/* An output: obj (the caller's, must be writable with exactly shape[ndim]) or,
 * when obj is None, a new CPU Buffer of dtype (CUDA inputs: ValueError, the
 * Python layer allocates). *result: new reference to obj or the Buffer. */
int rcpy_output(PyObject *obj, const char *what, int32_t dtype, int ndim, const int64_t *shape,
                int on_cuda, PyObject *stream, rcpy_tensor *t, PyObject **result);
/* lengths / target_lengths: None, or imported (batched calls only). */
int rcpy_optional_lengths(PyObject *obj, const char *what, int batched, PyObject *stream,
                          rcpy_tensor *t);
/* When ref is a CUDA tensor, sets the thread's robocache CUDA stream from
 * `stream` (int or None) and its sync checks from the truth of `check`
 * (robocache_ctx_set_sync_checks). */
int rcpy_cuda_stream(PyObject *stream, PyObject *check, const rcpy_tensor *ref);
/* The optional trailing `check` argument of the op functions: a[n_fixed] when
 * given, else True. */
#define RCPY_CHECK_ARG(a, n, n_fixed) ((n) > (n_fixed) ? (a)[n_fixed] : Py_True)

/* ---- method tables of the op files (module.c adds each) ------------------- */
extern PyMethodDef rcpy_core_methods[];
extern PyMethodDef rcpy_align_methods[];
extern PyMethodDef rcpy_grid_methods[];
extern PyMethodDef rcpy_voxelize_methods[];
extern PyMethodDef rcpy_bench_methods[];
extern PyMethodDef rcpy_pointcloud_methods[];

#endif
