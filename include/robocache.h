/*
 * robocache.h — the one public C header of robocache (C11, same for CPU and
 * CUDA builds).
 *
 * robocache turns raw multi-rate robot recordings into training-ready tensors:
 *   - resample: one stream with per-row timestamps onto target times,
 *   - align:    several streams onto one time grid in a single pass,
 *   - voxelize: point clouds to dense grids, hard voxels, downsampled clouds.
 *
 * Conventions
 *   - Every fallible call returns robocache_status; details of the last error
 *     are in robocache_ctx_error_message(ctx). The library never aborts and
 *     never prints.
 *   - Tensors are described by robocache_tensor, which mirrors DLPack's
 *     DLTensor. The device of the input tensors selects the backend.
 *   - Times: int64 tensors are nanoseconds, float tensors are seconds. Time
 *     options (offsets, gaps, tolerances) are always given in int64 ns.
 *     int64 times (also after time_offset_ns) and time_offset_ns must lie
 *     strictly within +-2^62 ns (about +-146 years around the epoch), so that
 *     no difference of two times overflows: else INVALID_ARGUMENT naming the
 *     row and index (the GPU's unchecked mode does not check).
 *   - Shapes: B batch rows, S source samples, T targets, D channels,
 *     K streams, N points, C point columns.
 *   - Sizes: a tensor whose shape and strides reach more than PTRDIFF_MAX
 *     bytes past its first element is INVALID_ARGUMENT; an output a call
 *     would fill (or a float64 work array it needs) of more than PTRDIFF_MAX
 *     bytes is OUT_OF_MEMORY, the shape and element count in the message.
 *     Nothing is written then.
 */
#ifndef ROBOCACHE_H
#define ROBOCACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROBOCACHE_VERSION_MAJOR 0
#define ROBOCACHE_VERSION_MINOR 1
#define ROBOCACHE_VERSION_PATCH 0

#if defined(_WIN32)
#define ROBOCACHE_API
#else
#define ROBOCACHE_API __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------
 * Status codes. Pinned and append-only: values never change meaning.
 * ------------------------------------------------------------------------- */
typedef enum robocache_status {
  ROBOCACHE_OK = 0,
  ROBOCACHE_INVALID_ARGUMENT = 1,   /* bad shape, value, option or data */
  ROBOCACHE_UNSUPPORTED_DTYPE = 2,  /* dtype not accepted for that tensor */
  ROBOCACHE_UNSUPPORTED_DEVICE = 3, /* e.g. CUDA tensor, CPU-only build */
  ROBOCACHE_DEVICE_MISMATCH = 4,    /* tensors of one call on different devices */
  ROBOCACHE_OUT_OF_MEMORY = 5,
  ROBOCACHE_CAPACITY_EXCEEDED = 6, /* an output buffer is too small */
  ROBOCACHE_CUDA_ERROR = 7,
  ROBOCACHE_IO_ERROR = 8,
  ROBOCACHE_INTERNAL = 9
} robocache_status;

/* Static name of a status ("OK", "INVALID_ARGUMENT", ...); "UNKNOWN" for
 * values outside the enum. Never NULL. */
ROBOCACHE_API const char *robocache_status_name(robocache_status s);

/* Runtime version "MAJOR.MINOR.PATCH". */
ROBOCACHE_API const char *robocache_version_string(void);

/* 1 when this build contains the CUDA backend and a CUDA device is usable,
 * else 0. */
ROBOCACHE_API int robocache_has_cuda(void);

/* ---------------------------------------------------------------------------
 * Context: threads, CUDA stream, workspace and the last error message.
 * One context per thread. NULL ctx in any call means a default context private
 * to the calling thread; what it holds (CUDA workspace, page-locked read-back
 * buffer) is released when that thread exits (not the process's main thread,
 * whose resources go with the process).
 * ------------------------------------------------------------------------- */
typedef struct robocache_ctx robocache_ctx;

/* Creates a context. Returns ROBOCACHE_OUT_OF_MEMORY or ROBOCACHE_OK. */
ROBOCACHE_API robocache_status robocache_ctx_create(robocache_ctx **ctx);
/* Frees a context; accepts NULL. */
ROBOCACHE_API void robocache_ctx_free(robocache_ctx *ctx);
/* Detail of the last error raised through this context ("" when none).
 * Valid until the next call on ctx. ctx may be NULL (thread default). */
ROBOCACHE_API const char *robocache_ctx_error_message(const robocache_ctx *ctx);
/* Most CPU threads a context may be given. */
#define ROBOCACHE_MAX_THREADS 1024

/* Number of CPU threads (OpenMP) the CPU backend uses; 0 = all cores
 * (default; the OpenMP default team size, at most ROBOCACHE_MAX_THREADS).
 * Outside 0..ROBOCACHE_MAX_THREADS -> INVALID_ARGUMENT naming the bound (the
 * setting is then unchanged). */
ROBOCACHE_API robocache_status robocache_ctx_set_num_threads(robocache_ctx *ctx, int num_threads);
/* CUDA stream (a cudaStream_t passed as void*) on which kernels launch;
 * NULL = the legacy default stream. Ignored by the CPU backend. */
ROBOCACHE_API robocache_status robocache_ctx_set_cuda_stream(robocache_ctx *ctx, void *stream);
/* 1: force the slow reference backend (CPU tensors only), 0: default. */
ROBOCACHE_API robocache_status robocache_ctx_set_force_reference(robocache_ctx *ctx, int on);
/* Data checks of CUDA calls (CUDA backend only; docs/cuda.md, "Data checks").
 * on != 0 (default): each resample / align / voxelize call on CUDA tensors
 * verifies the data on the device and synchronises the context's stream once
 * to report errors (same status and message as the CPU backend) and to fill
 * the voxel stats.
 * on == 0: no synchronisation, calls are fully asynchronous (as inside a CUDA
 * graph capture, where this mode is automatic). Nothing is read or written out
 * of bounds, but bad data is not reported:
 *   - resample / align (and backward): instead of INVALID_ARGUMENT, every
 *     target of a row whose length is outside 1..S, a non-finite target time,
 *     a target whose extrapolation pair is not increasing, and every
 *     EXTRAP_ERROR target give NaN in all channels and valid = 0 (and no
 *     gradient); target_lengths are clamped to 0..T. A target inside a
 *     locally increasing bracket of an otherwise non-monotone (or partly NaN)
 *     row is still interpolated from that bracket: the full-row scan is what
 *     the check adds.
 *   - voxelize / voxelize_hard / voxel_downsample: stats hold only points_in
 *     (the other counters are -1: unknown); offsets that fail the check
 *     (offsets[0] != 0, decreasing, offsets[B] != N) are clamped to 0..N and
 *     the outputs are unspecified (within their shapes) instead of
 *     INVALID_ARGUMENT; voxel_downsample writes only the rows that fit in out
 *     (out_offsets clamped to its capacity; capacity N always suffices)
 *     instead of CAPACITY_EXCEEDED, and a PCL grid of more than 2^62 voxels
 *     gives unspecified rows for that cloud instead of INVALID_ARGUMENT.
 * Calls through one context share its device workspace: a call on another
 * stream first waits (on the device, no host synchronisation) for the
 * unchecked calls still using it.
 * Use 0 in training loops once the dataset has been validated with checks on.
 * The CPU backend always checks (the setting does not change CPU results). */
ROBOCACHE_API robocache_status robocache_ctx_set_sync_checks(robocache_ctx *ctx, int on);

/* ---------------------------------------------------------------------------
 * Tensors (mirror DLPack's DLTensor).
 * ------------------------------------------------------------------------- */
typedef enum robocache_device_type {
  ROBOCACHE_DEVICE_CPU = 1, /* = kDLCPU */
  ROBOCACHE_DEVICE_CUDA = 2 /* = kDLCUDA */
} robocache_device_type;

typedef enum robocache_dtype {
  ROBOCACHE_DTYPE_F32 = 0,
  ROBOCACHE_DTYPE_F64 = 1,
  ROBOCACHE_DTYPE_F16 = 2,  /* IEEE binary16 */
  ROBOCACHE_DTYPE_BF16 = 3, /* bfloat16 */
  ROBOCACHE_DTYPE_I64 = 4,
  ROBOCACHE_DTYPE_I32 = 5,
  ROBOCACHE_DTYPE_U8 = 6
} robocache_dtype;

#define ROBOCACHE_MAX_DIMS 8

typedef struct robocache_tensor {
  void *data;             /* first element (any byte offset already applied) */
  int32_t device_type;    /* robocache_device_type */
  int32_t device_id;      /* CUDA ordinal; 0 for CPU */
  int32_t dtype;          /* robocache_dtype */
  int32_t ndim;           /* 0..ROBOCACHE_MAX_DIMS */
  const int64_t *shape;   /* [ndim] */
  const int64_t *strides; /* [ndim] in elements; NULL = C-contiguous */
} robocache_tensor;

/* Size in bytes of one element of dtype; 0 for an unknown dtype. */
ROBOCACHE_API size_t robocache_dtype_size(robocache_dtype dtype);
/* Static name ("float32", "bfloat16", "int64", ...) or "unknown". */
ROBOCACHE_API const char *robocache_dtype_name(robocache_dtype dtype);

/* ---------------------------------------------------------------------------
 * Interpolation options (DESIGN §1.1).
 * ------------------------------------------------------------------------- */
typedef enum robocache_method {
  ROBOCACHE_LINEAR = 0,   /* v0 + w (v1 - v0) per channel (numpy.interp) */
  ROBOCACHE_NEAREST = 1,  /* nearest sample; ties go to the earlier one */
  ROBOCACHE_PREVIOUS = 2, /* zero-order hold: last sample at or before */
  ROBOCACHE_NEXT = 3,     /* first sample at or after */
  ROBOCACHE_SLERP = 4     /* each 4 channels a unit quaternion (D % 4 == 0):
                             shortest arc, renormalised, nlerp when nearly
                             parallel (as scipy.spatial.transform.Slerp) */
} robocache_method;

typedef enum robocache_extrapolate {
  ROBOCACHE_EXTRAP_CLAMP = 0,       /* hold the edge sample's value */
  ROBOCACHE_EXTRAP_FILL = 1,        /* write fill_value (default NaN) */
  ROBOCACHE_EXTRAP_EXTRAPOLATE = 2, /* linear/slerp: continue from the edge
                                       pair; previous/next/nearest: as clamp */
  ROBOCACHE_EXTRAP_ERROR = 3        /* INVALID_ARGUMENT naming row and target */
} robocache_extrapolate;

typedef enum robocache_quat_order {
  ROBOCACHE_QUAT_XYZW = 0, /* scipy / ROS order (default) */
  ROBOCACHE_QUAT_WXYZ = 1  /* Eigen / EuRoC order */
} robocache_quat_order;

typedef struct robocache_interp_options {
  int32_t method;         /* robocache_method, default LINEAR */
  int32_t extrapolate;    /* robocache_extrapolate, default CLAMP */
  double fill_value;      /* value written by EXTRAP_FILL, default NaN */
  int64_t max_gap_ns;     /* > 0: targets strictly inside a source interval
                             longer than this are invalid (drop-out); the value
                             then follows `extrapolate` (CLAMP -> nearest edge
                             of the gap, EXTRAPOLATE -> interpolated across).
                             <= 0: no limit (default). */
  int64_t tolerance_ns;   /* > 0, methods NEAREST/PREVIOUS/NEXT only: a target
                             farther than this from the sample whose value it
                             takes is invalid (value follows `extrapolate`).
                             <= 0: no limit (default). Set with LINEAR or
                             SLERP -> INVALID_ARGUMENT. */
  int64_t time_offset_ns; /* added to the source times first (Kalibr:
                             t_imu = t_cam + offset). Default 0. Within
                             +-2^62 ns, as the shifted times. */
  int32_t quat_order;     /* robocache_quat_order, SLERP only */
} robocache_interp_options;

/* Fills *opts with the defaults above. */
ROBOCACHE_API void robocache_interp_options_init(robocache_interp_options *opts);

/* ---------------------------------------------------------------------------
 * resample — one stream, per-row timestamps (DESIGN §1.1).
 *
 * values         [B,S,D]  f32 | f64 | f16 | bf16
 * times          [B,S]    i64 ns | f64 s | f32 s, strictly increasing within
 *                         each row's valid prefix, no NaN
 * lengths        [B] i64 or NULL: valid prefix of each row (1..S)
 * target_times   [B,T]    same dtype as times; need not be sorted
 * target_lengths [B] i64 or NULL: valid prefix of each target row (0..T);
 *                         padded targets get out = 0 and valid = 0
 * options        NULL = defaults
 * out            [B,T,D]  f32 | f64 | f16 | bf16 (usually the dtype of
 *                         values, or f32); written, never read
 * valid          [B,T] u8 or NULL: 1 where the target lies within the first..
 *                         last valid sample time of its row and passes
 *                         max_gap / tolerance, else 0 (LeRobot `_is_pad`
 *                         inverted)
 *
 * Arithmetic in f32 (f64 when values or out are f64); time differences exact
 * in i64 for ns times, in f64 for float times. A target exactly on a sample
 * returns that sample bit-exactly.
 *
 * Errors: INVALID_ARGUMENT (shapes, lengths out of range, empty rows,
 * non-increasing or NaN times with row and index, targets out of range with
 * EXTRAP_ERROR, bad options), UNSUPPORTED_DTYPE, DEVICE_MISMATCH,
 * UNSUPPORTED_DEVICE, CUDA_ERROR. On error the contents of out/valid are
 * unspecified.
 * ------------------------------------------------------------------------- */
ROBOCACHE_API robocache_status robocache_resample(
    robocache_ctx *ctx, const robocache_tensor *values, const robocache_tensor *times,
    const robocache_tensor *lengths, const robocache_tensor *target_times,
    const robocache_tensor *target_lengths, const robocache_interp_options *options,
    robocache_tensor *out, robocache_tensor *valid);

/* ---------------------------------------------------------------------------
 * align — K streams onto one time grid (DESIGN §1.2).
 *
 * Each stream k: values [B,S_k,D_k] (f32|f64|f16|bf16), times [B,S_k] and
 * optional lengths [B] as in resample, with its own options. All times and
 * target_times share one time dtype.
 *
 * target_times   [B,T], target_lengths [B] i64 or NULL
 * out            [B,T,sum D_k] f32 | f64 | f16 | bf16: streams concatenated in
 *                order on the last axis
 * valid          [B,T,K] u8 or NULL
 *
 * Equivalent to K resample calls writing into slices of out; the CUDA backend
 * runs them in one kernel launch. Errors as resample; messages name the
 * stream ("stream 2 (imu): times not increasing: row 0, index 17").
 * ------------------------------------------------------------------------- */
typedef struct robocache_stream {
  const char *name;                /* for messages; may be NULL */
  const robocache_tensor *values;  /* [B,S,D] */
  const robocache_tensor *times;   /* [B,S] */
  const robocache_tensor *lengths; /* [B] i64 or NULL */
  robocache_interp_options options;
} robocache_stream;

ROBOCACHE_API robocache_status robocache_align(robocache_ctx *ctx, const robocache_stream *streams,
                                               int32_t num_streams,
                                               const robocache_tensor *target_times,
                                               const robocache_tensor *target_lengths,
                                               robocache_tensor *out, robocache_tensor *valid);

/* ---------------------------------------------------------------------------
 * Backward of resample / align with respect to the values (autograd).
 *
 * grad_out    [B,T,D] (resample) f32|f64 — gradient of the output
 * grad_values [B,S,D] same dtype as grad_out, overwritten with the transpose
 *             of the interpolation applied to grad_out (scatter of weights).
 * Other arguments as in resample. Supported for LINEAR, NEAREST, PREVIOUS,
 * NEXT (the output is linear in the values); SLERP -> INVALID_ARGUMENT.
 * Targets with EXTRAP_FILL outside the range, and padded targets, contribute
 * nothing. Deterministic (no float atomics).
 * ------------------------------------------------------------------------- */
ROBOCACHE_API robocache_status robocache_resample_backward(
    robocache_ctx *ctx, const robocache_tensor *grad_out, const robocache_tensor *times,
    const robocache_tensor *lengths, const robocache_tensor *target_times,
    const robocache_tensor *target_lengths, const robocache_interp_options *options,
    robocache_tensor *grad_values);

/* ---------------------------------------------------------------------------
 * Target-grid helpers (CPU, int64 ns times).
 * ------------------------------------------------------------------------- */
typedef enum robocache_span {
  ROBOCACHE_SPAN_OVERLAP = 0, /* latest first sample .. earliest last sample */
  ROBOCACHE_SPAN_UNION = 1    /* earliest first sample .. latest last sample */
} robocache_span;

/* Per-row time span of K streams (times i64 ns on the CPU; lengths and
 * time_offset_ns applied). start_ns, end_ns: arrays of B.
 * INVALID_ARGUMENT when a row has no overlap (message names the row). */
ROBOCACHE_API robocache_status robocache_streams_span(robocache_ctx *ctx,
                                                      const robocache_stream *streams,
                                                      int32_t num_streams, int32_t span,
                                                      int64_t *start_ns, int64_t *end_ns);

/* Number of points of the uniform grid t_i = start_ns + llround(i * 1e9 /
 * rate_hz), i = 0.., t_i <= end_ns (t_0 = start_ns, also when the period
 * 1e9 / rate_hz is longer than the span or infinite). 0 when end_ns <
 * start_ns, start_ns or end_ns is outside +-2^62 ns, or rate_hz is not a
 * positive finite number; INT64_MAX when the grid has more points than
 * that (rate_hz far above 1e9 Hz over a long span). */
ROBOCACHE_API int64_t robocache_uniform_grid_count(int64_t start_ns, int64_t end_ns,
                                                   double rate_hz);
/* Writes the grid above into out[0..count) (count from
 * robocache_uniform_grid_count). Errors: INVALID_ARGUMENT (rate_hz not a
 * positive finite number, start_ns / end_ns outside +-2^62 ns, out NULL),
 * CAPACITY_EXCEEDED when capacity < count (the message gives the count). */
ROBOCACHE_API robocache_status robocache_uniform_grid(robocache_ctx *ctx, int64_t start_ns,
                                                      int64_t end_ns, double rate_hz, int64_t *out,
                                                      int64_t capacity);

/* ---------------------------------------------------------------------------
 * Voxelization (DESIGN §1.3); guide in docs/voxelize.md.
 * ------------------------------------------------------------------------- */
/*
 * Common conventions of the voxelization calls (DESIGN §1.3; names as in
 * mmdet3d / OpenPCDet):
 *
 * points            [N,C] f32 (any strides), C >= 3: x, y, z (metres), then
 *                   feature columns (intensity, ring, ...). CPU or CUDA.
 * offsets           [B+1] i64 or NULL: a batch is the points of B clouds
 *                   concatenated; cloud b is rows offsets[b]..offsets[b+1]-1.
 *                   offsets[0] == 0, non-decreasing, offsets[B] == N. NULL
 *                   means one cloud (B = 1). On the device of points.
 * voxel_size        float[3] (vx, vy, vz) in metres, host memory, each > 0
 *                   and finite.
 * point_cloud_range float[6] (xmin, ymin, zmin, xmax, ymax, zmax) in metres,
 *                   host memory, min < max.
 * grid              per axis round((max - min) / size), computed in f32;
 *                   robocache_voxel_grid_size gives it.
 * voxel index       floor((p - min) / size) per axis, computed in f32 (as the
 *                   mmcv / spconv kernels); a point is in range when its index
 *                   lies in [0, grid) on every axis. Points whose x, y or z is
 *                   NaN or +-inf are dropped and counted (feature columns are
 *                   not checked); finite points out of range are dropped and
 *                   counted.
 * stats             robocache_voxel_stats * (host) or NULL; totals over the
 *                   whole batch, filled on success (and on CAPACITY_EXCEEDED).
 *
 * Sums and means are accumulated in f64, per voxel, in input order, and
 * rounded to f32 once, so every backend gives bitwise the same result run to
 * run (numpy.bincount with weights computes exactly this).
 *
 * Errors of every call: INVALID_ARGUMENT (shapes, bad offsets, voxel_size or
 * range, grid too large), UNSUPPORTED_DTYPE, DEVICE_MISMATCH (tensors on
 * different devices), UNSUPPORTED_DEVICE (CUDA tensors, CPU-only build),
 * OUT_OF_MEMORY, CUDA_ERROR. On error the outputs are unspecified.
 */
typedef enum robocache_voxel_mode {
  ROBOCACHE_VOXEL_COUNT = 0,     /* number of points per voxel (F = 1) */
  ROBOCACHE_VOXEL_OCCUPANCY = 1, /* 1 where a voxel holds a point, else 0 (F = 1) */
  ROBOCACHE_VOXEL_SUM = 2,       /* sum of the feature columns */
  ROBOCACHE_VOXEL_MEAN = 3,      /* mean of the feature columns */
  ROBOCACHE_VOXEL_MAX = 4        /* maximum of the feature columns */
} robocache_voxel_mode;

/* Counts of one voxelization call, summed over the batch. */
typedef struct robocache_voxel_stats {
  int64_t points_in;                 /* N */
  int64_t points_in_range;           /* finite and inside point_cloud_range */
  int64_t points_dropped_range;      /* finite but outside point_cloud_range */
  int64_t points_dropped_nonfinite;  /* x, y or z NaN or infinite */
  int64_t voxels_nonempty;           /* distinct voxels holding an in-range
                                        point (before max_voxels) */
  int64_t points_dropped_max_points; /* hard: points of kept voxels past
                                        max_points_per_voxel */
  int64_t voxels_dropped_max_voxels; /* hard: voxels past max_voxels */
  int64_t points_dropped_max_voxels; /* hard: in-range points of those voxels */
} robocache_voxel_stats;

/* Grid size (x, y, z) = round((max - min) / size) per axis in f32; checks
 * voxel_size and point_cloud_range. INVALID_ARGUMENT when a size is not > 0
 * and finite, min >= max, or a grid axis is < 1 or X*Y*Z > 2^62. */
ROBOCACHE_API robocache_status robocache_voxel_grid_size(robocache_ctx *ctx,
                                                         const float voxel_size[3],
                                                         const float point_cloud_range[6],
                                                         int64_t grid_xyz[3]);

/* Dense voxelization (DESIGN §1.3 "dense").
 *
 * out [B,F,Z,Y,X] (channels first, x fastest; Z,Y,X = grid; C-contiguous):
 *   COUNT      F = 1, i32 or f32
 *   OCCUPANCY  F = 1, u8 or f32
 *   SUM, MEAN, MAX  F = C - 3 (the feature columns, in order), f32; when
 *              C == 3, F = 3 and the features are x, y, z.
 * Empty voxels are 0 in every mode (MAX too: use OCCUPANCY to tell an empty
 * voxel from a maximum of 0). MAX is the maximum in the total order -inf <
 * ... < -0.0 < +0.0 < ... < +inf < NaN (a voxel holding a NaN gives NaN,
 * +0.0 beats -0.0), whatever the order of the points. A NaN output (MAX, or a
 * SUM / MEAN with NaN or opposite infinities) is the quiet NaN 0x7fc00000.
 * Anchors: numpy.bincount (COUNT, SUM, MEAN), numpy.maximum.at (MAX, NaN
 * propagating). stats->voxels_nonempty counts the non-empty voxels; the
 * max_points / max_voxels counters are 0. */
ROBOCACHE_API robocache_status robocache_voxelize(
    robocache_ctx *ctx, const robocache_tensor *points, const robocache_tensor *offsets,
    const float voxel_size[3], const float point_cloud_range[6], int32_t mode,
    robocache_tensor *out, robocache_voxel_stats *stats);

/* Hard voxelization, as mmcv hard voxelization in deterministic mode (the
 * input of PointPillars / SECOND / CenterPoint), per cloud:
 * voxels are numbered in the order of their first in-range point; each keeps
 * its first max_points_per_voxel points in input order (later ones dropped);
 * voxels numbered >= max_voxels are dropped with all their points. The result
 * is bitwise identical across runs and backends.
 *
 * max_points_per_voxel P >= 1, max_voxels M >= 1 (capacity per cloud).
 * voxels     [B*M,P,C] f32: rows b*M .. b*M+num_voxels[b]-1 hold cloud b's
 *            voxels; point slots past num_points are 0; padding rows are 0.
 * coords     [B*M,4] i32: (batch b, z, y, x) voxel index; padding rows -1.
 * num_points [B*M] i32: points stored in the voxel (1..P); padding rows 0.
 * num_voxels [B] i32: voxels kept per cloud (<= M).
 * All outputs C-contiguous, on the device of points. */
ROBOCACHE_API robocache_status robocache_voxelize_hard(
    robocache_ctx *ctx, const robocache_tensor *points, const robocache_tensor *offsets,
    const float voxel_size[3], const float point_cloud_range[6], int32_t max_points_per_voxel,
    int32_t max_voxels, robocache_tensor *voxels, robocache_tensor *coords,
    robocache_tensor *num_points, robocache_tensor *num_voxels, robocache_voxel_stats *stats);

/* robocache_voxelize_hard with the kept voxels of all clouds packed in
 * batch order, the layout mmdet3d's data preprocessor builds by
 * concatenating per-sample results: rows 0 .. V-1 of voxels / coords /
 * num_points hold cloud 0's voxels, then cloud 1's, ... (V = the sum of
 * num_voxels = stats->voxels_nonempty - stats->voxels_dropped_max_voxels;
 * coords[:, 0] tells the clouds apart); rows V .. B*M-1 are padding (0,
 * coords -1, num_points 0). Same arguments, shapes ([B*M,...] capacity),
 * voxels, order and errors; with one cloud the two layouts are the same. */
ROBOCACHE_API robocache_status robocache_voxelize_hard_packed(
    robocache_ctx *ctx, const robocache_tensor *points, const robocache_tensor *offsets,
    const float voxel_size[3], const float point_cloud_range[6], int32_t max_points_per_voxel,
    int32_t max_voxels, robocache_tensor *voxels, robocache_tensor *coords,
    robocache_tensor *num_points, robocache_tensor *num_voxels, robocache_voxel_stats *stats);

/* Voxel-grid downsampling: one point per non-empty voxel, the mean of all C
 * columns of its points (f64 sum in input order / count, rounded to f32),
 * clouds one after another, voxels in order of first appearance (PCL
 * VoxelGrid outputs the same voxels sorted by voxel index, its means summed
 * in f32).
 *
 * point_cloud_range  float[6]: voxels and range check as above; or NULL:
 *            PCL VoxelGrid voxels: index
 *            floor(p * (1 / leaf)) per axis in f32, the grid starting at the
 *            cloud's minimum (finite points), no range check.
 * out        [capacity,C] f32 C-contiguous; capacity N always suffices.
 * out_offsets [B+1] i64: output cloud b is rows out_offsets[b] ..
 *            out_offsets[b+1]-1 (written).
 * CAPACITY_EXCEEDED when capacity < the number of non-empty voxels (then
 * stats->voxels_nonempty holds the number needed). INVALID_ARGUMENT also when
 * a cloud's extent / leaf needs more than 2^62 voxels, or (no range) when
 * 1 / voxel_size is not a finite float32 (a leaf below about 2.9e-39). PCL
 * voxel indices are exact integers whatever the extent (no point of the
 * cloud is dropped). */
ROBOCACHE_API robocache_status robocache_voxel_downsample(
    robocache_ctx *ctx, const robocache_tensor *points, const robocache_tensor *offsets,
    const float voxel_size[3], const float *point_cloud_range, robocache_tensor *out,
    robocache_tensor *out_offsets, robocache_voxel_stats *stats);

/* Standard configurations (values of the mmdet3d / OpenPCDet configs). */
typedef struct robocache_voxel_preset {
  const char *name;             /* "second-kitti", "pointpillars-kitti", ... */
  float voxel_size[3];          /* metres */
  float point_cloud_range[6];   /* metres */
  int32_t max_points_per_voxel; /* P */
  int32_t max_voxels_train;     /* M for training */
  int32_t max_voxels_test;      /* M for inference */
} robocache_voxel_preset;

/* Preset i (0-based) of the built-in table, or NULL past the end:
 * second-kitti, pointpillars-kitti, centerpoint-nus. */
ROBOCACHE_API const robocache_voxel_preset *robocache_voxel_preset_at(int32_t i);
/* The preset named `name`, or NULL when there is none. */
ROBOCACHE_API const robocache_voxel_preset *robocache_voxel_preset_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* ROBOCACHE_H */
