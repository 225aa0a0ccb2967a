/* Shared declarations of the robocache._C extension module (CPython API):
 * module state, keyword arguments, DLPack import/export, errors, option
 * parsing, output shapes. */
#ifndef ROBOCACHE_PY_BINDING_H
#define ROBOCACHE_PY_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dlpack.h"
#include "robocache.h"

/* ---- keyword arguments (args.c) --------------------------------------------
 * Every parameter name of every _C function, once. A function's arguments are
 * parsed into an array indexed by these ids: a[RCPY_KW_values]. */
/* clang-format off */
#define RCPY_KEYWORDS(X)                                                                           \
  X(values) X(times) X(target_times) X(lengths) X(target_lengths) X(method) X(extrapolate)         \
  X(fill_value) X(max_gap) X(tolerance) X(time_offset) X(quat_order) X(out) X(valid)              \
  X(out_dtype) X(return_valid) X(stream) X(check) X(grad_out) X(grad_values) X(names)             \
  X(methods) X(extrapolates) X(fill_values) X(max_gaps) X(tolerances) X(time_offsets)             \
  X(quat_orders) X(rate_hz) X(span) X(points) X(offsets) X(voxel_size) X(point_cloud_range)       \
  X(mode) X(max_points_per_voxel) X(max_voxels) X(packed) X(voxels) X(coords) X(num_points)      \
  X(num_voxels) X(out_offsets) X(path) X(bin_columns) X(format) X(columns) X(time_column)         \
  X(time_unit) X(records) X(src) X(row_len) X(dst)
/* clang-format on */

#define RCPY_KW_ENUM(name) RCPY_KW_##name,
typedef enum rcpy_kw { RCPY_KEYWORDS(RCPY_KW_ENUM) RCPY_KW_COUNT } rcpy_kw;
#undef RCPY_KW_ENUM

/* The parameters of one function: the first `positional` may be passed by
 * position, the first `required` must be passed; the rest are keyword-only. */
typedef struct rcpy_sig {
  const char *name;
  int positional, required, n;
  const uint8_t *params; /* rcpy_kw ids in signature order */
} rcpy_sig;

/* The argument `name` of a parsed call: a[RCPY_KW_name] (NULL: not given). */
#define A(name) a[RCPY_KW_##name]
/* A method table entry's function and flags for a parsed call. */
#define RCPY_FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

/* static const rcpy_sig <fn>_sig, e.g.
 * RCPY_SIG(resample, 3, 3, KW(values), KW(times), ...) */
#define KW(name) RCPY_KW_##name
#define RCPY_SIG(fn, npos, nreq, ...)                                                              \
  static const uint8_t fn##_params[] = {__VA_ARGS__};                                              \
  static const rcpy_sig fn##_sig = {#fn, npos, nreq, (int)sizeof fn##_params, fn##_params}

/* ---- module state (module.c) ----------------------------------------------- */
typedef struct rcpy_state {
  PyObject *error;             /* robocache.RobocacheError */
  PyTypeObject *buffer_type;   /* robocache._C.Buffer */
  PyObject *kw[RCPY_KW_COUNT]; /* interned parameter names */
  PyObject *dlpack;            /* "__dlpack__" */
  PyObject *kw_ver;            /* ("max_version",) */
  PyObject *kw_str_ver;        /* ("stream", "max_version") */
  PyObject *kw_str;            /* ("stream",) */
  PyObject *version;           /* (1, 0) */
} rcpy_state;

static inline rcpy_state *rcpy_state_of(PyObject *module) {
  return (rcpy_state *)PyModule_GetState(module);
}

/* Interns the names of RCPY_KEYWORDS into st->kw; -1 with an exception. */
int rcpy_args_init(rcpy_state *st);
/* Parses a METH_FASTCALL | METH_KEYWORDS call into a[] (indexed by rcpy_kw):
 * a[id] is the argument (borrowed) or NULL when not given. TypeError for too
 * many positional arguments, an unknown keyword, a repeated or a missing
 * required argument, naming the function and the argument. */
int rcpy_parse(const rcpy_state *st, const rcpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames, PyObject **a);
/* x, or Py_None when x is NULL (an argument not given). */
static inline PyObject *rcpy_or_none(PyObject *x) { return x ? x : Py_None; }

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
int rcpy_import(const rcpy_state *st, PyObject *obj, const char *what, PyObject *stream,
                int writable, rcpy_tensor *out);
/* Module-init setup of the interned names used by rcpy_import. */
int rcpy_dlpack_init(rcpy_state *st);
/* Calls the producer's deleter (once; later calls do nothing). GIL held. */
void rcpy_release(rcpy_tensor *t);
/* Inserts a unit axis at `axis` (stride 0). */
void rcpy_unsqueeze(rcpy_tensor *t, int axis);
/* NULL for a tensor that was not given, else &t->t. */
static inline const robocache_tensor *rcpy_opt(const rcpy_tensor *t) {
  return t->t.shape ? &t->t : NULL;
}

/* ---- memory overlap (overlap.c) --------------------------------------------
 * ValueError "out: shares memory with values ..." when the bytes that output
 * `o` spans (from its data pointer, shape and strides) intersect those of
 * inputs[i] on the same device. Tensors not given or without elements are
 * skipped. */
int rcpy_check_overlap(const rcpy_tensor *o, const char *o_name, const rcpy_tensor *const *inputs,
                       const char *const *names, int n);

/* ---- DLPack export (buffer.c) ---------------------------------------------
 * robocache._C.Buffer: a C-contiguous CPU buffer owned by robocache, exported
 * once through __dlpack__ (versioned or legacy capsule). */
int rcpy_buffer_init(PyObject *module, rcpy_state *st);
/* Buffer dtype for masks: exported as DLPack bool (8 bit), written by the
 * library as uint8 0/1. */
#define RCPY_DTYPE_BOOL 100
/* New Buffer of the given shape and dtype (robocache_dtype or
 * RCPY_DTYPE_BOOL) (uninitialised, 64-byte aligned); NULL with MemoryError
 * naming `what`, the shape and the bytes. *view receives a tensor describing
 * it. */
PyObject *rcpy_buffer_new(const rcpy_state *st, const char *what, int32_t dtype, int ndim,
                          const int64_t *shape, rcpy_tensor *view);
/* A Buffer over `data` (malloc'd, C-contiguous, of that shape and dtype),
 * which the Buffer then owns and frees; on failure (NULL, MemoryError set)
 * data is freed too. */
PyObject *rcpy_buffer_adopt(const rcpy_state *st, void *data, int32_t dtype, int ndim,
                            const int64_t *shape, rcpy_tensor *view);

/* ---- errors (errors.c) ---------------------------------------------------- */
/* Raises the Python exception for status with the context's message,
 * prefixed by `who` (e.g. "resample") unless the message already starts with
 * it; returns NULL. */
PyObject *rcpy_raise_status(const rcpy_state *st, robocache_status s, const char *who);
/* The error of a src/io reader (status and message): OSError (cannot open
 * or read), MemoryError, else ValueError; returns NULL. */
PyObject *rcpy_raise_io(robocache_status s, const char *msg);
/* A str from C text that may hold any bytes (file headers, paths): UTF-8,
 * other bytes escaped as \xNN. */
PyObject *rcpy_text(const char *s);

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
/* The interpolation options of one stream, each a Python object or NULL (not
 * given: the library's default), time options converted for time_dtype.
 * `who` prefixes messages. */
typedef struct rcpy_interp_args {
  PyObject *method, *extrapolate, *fill_value, *max_gap, *tolerance, *time_offset, *quat_order;
} rcpy_interp_args;
int rcpy_interp_options(const rcpy_interp_args *args, int32_t time_dtype, const char *who,
                        robocache_interp_options *o);

/* ---- output shapes (shapes.c) ------------------------------------------------
 * The one place where output shapes are computed: the ops allocate and check
 * their outputs with these, and the _C.*_shapes queries return them to the
 * Python layer (CUDA outputs, the fake implementations of the torch ops). */
typedef struct rcpy_dims {
  int ndim;
  int64_t v[ROBOCACHE_MAX_DIMS];
} rcpy_dims;
/* The dims of an imported tensor; {0} (ndim -1) for one not given. */
rcpy_dims rcpy_dims_of(const rcpy_tensor *t);
/* One stream of resample / align: target_times [T] or [B,T] sets `batched`;
 * times [S] / [B,S]; values [S,D] / [S] / [B,S,D] / [B,S]. */
typedef struct rcpy_stream_shape {
  int batched;  /* target_times [B,T] */
  int channels; /* values carry a D axis */
  int64_t D;    /* D, or 1 without a channel axis */
} rcpy_stream_shape;
/* -1 with ValueError naming what is wrong; `who` prefixes the messages
 * ("" or "stream 1 (imu): "). */
int rcpy_targets_shape(const rcpy_dims *target_times, int *batched);
int rcpy_stream_shape_of(const rcpy_dims *values, const rcpy_dims *times, int batched,
                         const char *who, rcpy_stream_shape *s);
/* Outputs of resample: out [B,]T[,D], valid [B,]T. */
int rcpy_resample_out(const rcpy_dims *target_times, const rcpy_stream_shape *s, rcpy_dims *out,
                      rcpy_dims *valid);
/* Outputs of align: out [B,]T,sum D; valid [B,]T,K. */
int rcpy_align_out(const rcpy_dims *target_times, int64_t sum_d, int64_t K, rcpy_dims *out,
                   rcpy_dims *valid);
/* A point cloud points [N,C] with offsets [B+1] (ndim -1: none): B, N, C as
 * far as the shapes tell (the library checks them). */
typedef struct rcpy_cloud_shape {
  int64_t B, N, C;
} rcpy_cloud_shape;
rcpy_cloud_shape rcpy_cloud_shape_of(const rcpy_dims *points, const rcpy_dims *offsets);
/* Dense voxelize: out [B,F,Z,Y,X]. */
int rcpy_voxelize_out(const rcpy_cloud_shape *c, const int64_t grid[3], int32_t mode,
                      rcpy_dims *out);
/* Hard voxelization: voxels [B*M,P,C], coords [B*M,4], num_points [B*M],
 * num_voxels [B]. */
extern const char *const rcpy_hard_names[4];
int rcpy_hard_out(const rcpy_cloud_shape *c, int32_t P, int32_t M, rcpy_dims out[4]);
/* Downsampling: out [N,C] (capacity), out_offsets [B+1]. */
int rcpy_downsample_out(const rcpy_cloud_shape *c, rcpy_dims out[2]);
/* The outputs above fail with ValueError naming the output and its shape
 * when it has more than 2^60 elements (its bytes would not fit in 64 bits). */
/* "(2, 3, 4)" into buf. */
void rcpy_format_shape(char *buf, size_t n, const rcpy_dims *d);

/* ---- voxel arguments (options.c) -------------------------------------------- */
/* obj: a sequence of n real numbers -> out[n] (f32, as the C API takes them). */
int rcpy_voxel_size(PyObject *obj, float out[3]);
int rcpy_point_cloud_range(PyObject *obj, float out[6]);
/* max_points_per_voxel / max_voxels: an int in 1..INT32_MAX. */
int rcpy_count(PyObject *v, const char *what, int32_t *out);

/* ---- views (views.c) -----------------------------------------------------
 * Reshapes one stream's imported tensors to the library's [B,S,D] values and
 * [B,S] times, as rcpy_stream_shape_of described them. */
void rcpy_stream_view(rcpy_tensor *values, rcpy_tensor *times, const rcpy_stream_shape *s);
/* Stream k's prefix of messages, "stream 1 (imu): " or "stream 1: ", into
 * buf; name: a str, None or NULL. -1 with TypeError for another name. */
int rcpy_stream_who(char *buf, size_t n, Py_ssize_t k, PyObject *name);
/* ValueError naming `what` unless t has exactly shape d. */
int rcpy_check_shape(const rcpy_tensor *t, const char *what, const rcpy_dims *d);
/* An output: obj (the caller's: writable, exactly shape d, no stride-0 axis
 * of more than one element) or, when obj is None, a new CPU Buffer of dtype
 * (CUDA inputs: ValueError, the Python layer allocates). *result: new
 * reference to obj or the Buffer. */
int rcpy_output(const rcpy_state *st, PyObject *obj, const char *what, int32_t dtype,
                const rcpy_dims *d, int on_cuda, PyObject *stream, rcpy_tensor *t,
                PyObject **result);
/* lengths / target_lengths: None, or imported (batched calls only). */
int rcpy_optional_lengths(const rcpy_state *st, PyObject *obj, const char *what, int batched,
                          PyObject *stream, rcpy_tensor *t);
/* When ref is a CUDA tensor, sets the thread's robocache CUDA stream from
 * `stream` (int or None) and its sync checks from the truth of `check` (NULL:
 * on) (robocache_ctx_set_sync_checks). */
int rcpy_cuda_stream(const rcpy_state *st, PyObject *stream, PyObject *check,
                     const rcpy_tensor *ref);

/* ---- method tables of the op files (module.c adds each) ------------------- */
extern PyMethodDef rcpy_align_methods[];
extern PyMethodDef rcpy_grid_methods[];
extern PyMethodDef rcpy_voxelize_methods[];
extern PyMethodDef rcpy_shape_methods[];
extern PyMethodDef rcpy_pointcloud_methods[];
extern PyMethodDef rcpy_table_methods[];
extern PyMethodDef rcpy_mcap_methods[];

#endif
