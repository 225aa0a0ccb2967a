/* Reading a batch of point-cloud files, running one voxelization and writing
 * its result, for `robocache voxelize`. */
#define _POSIX_C_SOURCE 200809L
#include "voxel_cli.h"

#include "commands.h"
#include "util.h"
#include "voxel_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int rc_cli_batch_read(int n, char *const *paths, int32_t bin_columns, rc_cli_batch *b) {
  memset(b, 0, sizeof *b);
  b->B = n;
  b->paths = paths;
  b->offsets = calloc((size_t)n + 1, sizeof *b->offsets);
  if (!b->offsets) {
    rc_cli_error("voxelize", "out of memory");
    return RC_EXIT_DATA;
  }
  for (int i = 0; i < n; i++) {
    rc_pointcloud pc;
    rc_io_err err = {0};
    robocache_status s = rc_pointcloud_read(paths[i], RC_PC_FORMAT_AUTO, bin_columns, &pc, &err);
    if (s == ROBOCACHE_OK && i > 0 && pc.cols != b->C) {
      rc_cli_error("voxelize", "%s has %d columns but %s has %d: a batch needs equal columns",
                   paths[i], (int)pc.cols, paths[0], (int)b->C);
      rc_pointcloud_free(&pc);
      rc_cli_batch_free(b);
      return RC_EXIT_DATA;
    }
    float *grown = s == ROBOCACHE_OK
                       ? realloc(b->points, (size_t)(b->N + pc.n) * (size_t)pc.cols * sizeof(float))
                       : NULL;
    if (s == ROBOCACHE_OK && !grown && b->N + pc.n > 0) {
      s = ROBOCACHE_OUT_OF_MEMORY;
      snprintf(err.msg, sizeof err.msg, "%s: out of memory", paths[i]);
    }
    if (s != ROBOCACHE_OK) {
      rc_cli_error("voxelize", "%s", err.msg);
      rc_pointcloud_free(&pc);
      rc_cli_batch_free(b);
      return rc_cli_exit_code(s);
    }
    b->points = grown;
    if (i == 0) {
      b->C = pc.cols;
      memcpy(b->names, pc.names, sizeof b->names);
    }
    memcpy(b->points + b->N * b->C, pc.points, (size_t)(pc.n * pc.cols) * sizeof(float));
    b->N += pc.n;
    b->offsets[i + 1] = b->N;
    b->dropped_nonfinite += pc.dropped_nonfinite;
    printf("%s: %s, %lld points", paths[i], pc.format, (long long)pc.n);
    if (pc.dropped_nonfinite)
      printf(" (%lld non-finite dropped by the reader)", (long long)pc.dropped_nonfinite);
    printf(", columns");
    for (int c = 0; c < pc.cols; c++) printf(" %s", pc.names[c]);
    printf("\n");
    rc_pointcloud_free(&pc);
  }
  return RC_EXIT_OK;
}

void rc_cli_batch_free(rc_cli_batch *b) {
  free(b->points);
  free(b->offsets);
  memset(b, 0, sizeof *b);
}

static robocache_tensor tensor(void *data, int32_t dtype, int32_t ndim, const int64_t *shape) {
  robocache_tensor t = {data, ROBOCACHE_DEVICE_CPU, 0, dtype, ndim, shape, NULL};
  return t;
}

/* calloc of dims[0] * ... * dims[n-1] elements of esize bytes (at least one);
 * NULL when that product overflows or the memory is not there. */
static void *alloc_or_null(int n, const int64_t *dims, size_t esize) {
  uint64_t count = 1;
  for (int i = 0; i < n; i++)
    if (dims[i] < 0 || __builtin_mul_overflow(count, (uint64_t)dims[i], &count)) return NULL;
  if (count > SIZE_MAX / esize) return NULL;
  return calloc(count > 0 ? (size_t)count : 1, esize);
}

/* Output tensors of one call. */
typedef struct outputs {
  robocache_tensor t[4];
  int64_t shape[4][5];
} outputs;

static void set_output(outputs *o, int i, void *data, int32_t dtype, int32_t ndim,
                       const int64_t *shape) {
  memcpy(o->shape[i], shape, (size_t)ndim * sizeof(int64_t));
  o->t[i] = tensor(data, dtype, ndim, o->shape[i]);
}

/* Allocates the outputs of j->mode into j and describes them in o. */
static robocache_status prepare(rc_cli_voxel_job *j, outputs *o) {
  const rc_cli_batch *b = j->batch;
  const int64_t B = b->B, C = b->C, M = j->max_voxels, P = j->max_points;
  if (j->mode == RC_CLI_MODE_HARD) {
    j->voxels = alloc_or_null(4, (const int64_t[]){B, M, P, C}, sizeof(float));
    j->coords = alloc_or_null(3, (const int64_t[]){B, M, 4}, sizeof(int32_t));
    j->num_points = alloc_or_null(2, (const int64_t[]){B, M}, sizeof(int32_t));
    j->num_voxels = alloc_or_null(1, &B, sizeof(int32_t));
    if (!j->voxels || !j->coords || !j->num_points || !j->num_voxels)
      return ROBOCACHE_OUT_OF_MEMORY;
    set_output(o, 0, j->voxels, ROBOCACHE_DTYPE_F32, 3, (const int64_t[]){B * M, P, C});
    set_output(o, 1, j->coords, ROBOCACHE_DTYPE_I32, 2, (const int64_t[]){B * M, 4});
    set_output(o, 2, j->num_points, ROBOCACHE_DTYPE_I32, 1, (const int64_t[]){B * M});
    set_output(o, 3, j->num_voxels, ROBOCACHE_DTYPE_I32, 1, (const int64_t[]){B});
    return ROBOCACHE_OK;
  }
  if (j->mode == RC_CLI_MODE_DOWNSAMPLE) {
    j->points_out = alloc_or_null(2, (const int64_t[]){b->N, C}, sizeof(float));
    j->offsets_out = alloc_or_null(1, (const int64_t[]){B + 1}, sizeof(int64_t));
    if (!j->points_out || !j->offsets_out) return ROBOCACHE_OUT_OF_MEMORY;
    set_output(o, 0, j->points_out, ROBOCACHE_DTYPE_F32, 2, (const int64_t[]){b->N, C});
    set_output(o, 1, j->offsets_out, ROBOCACHE_DTYPE_I64, 1, (const int64_t[]){B + 1});
    return ROBOCACHE_OK;
  }
  int64_t g[3];
  robocache_status s = robocache_voxel_grid_size(j->ctx, j->voxel_size, j->range, g);
  if (s != ROBOCACHE_OK) return s;
  int64_t F = j->mode <= ROBOCACHE_VOXEL_OCCUPANCY ? 1 : (C == 3 ? 3 : C - 3);
  const int64_t shape[5] = {B, F, g[2], g[1], g[0]};
  memcpy(j->grid_shape, shape, sizeof shape);
  j->grid_dtype = j->mode == ROBOCACHE_VOXEL_COUNT       ? ROBOCACHE_DTYPE_I32
                  : j->mode == ROBOCACHE_VOXEL_OCCUPANCY ? ROBOCACHE_DTYPE_U8
                                                         : ROBOCACHE_DTYPE_F32;
  j->grid = alloc_or_null(5, shape, robocache_dtype_size((robocache_dtype)j->grid_dtype));
  if (!j->grid) return ROBOCACHE_OUT_OF_MEMORY;
  set_output(o, 0, j->grid, j->grid_dtype, 5, shape);
  return ROBOCACHE_OK;
}

static robocache_status invoke(rc_cli_voxel_job *j, const robocache_tensor *pts,
                               const robocache_tensor *off, outputs *o) {
  if (j->mode == RC_CLI_MODE_HARD)
    return robocache_voxelize_hard_packed(j->ctx, pts, off, j->voxel_size, j->range, j->max_points,
                                          j->max_voxels, &o->t[0], &o->t[1], &o->t[2], &o->t[3],
                                          &j->stats);
  if (j->mode == RC_CLI_MODE_DOWNSAMPLE)
    return robocache_voxel_downsample(j->ctx, pts, off, j->voxel_size, j->range, &o->t[0], &o->t[1],
                                      &j->stats);
  return robocache_voxelize(j->ctx, pts, off, j->voxel_size, j->range, j->mode, &o->t[0],
                            &j->stats);
}

/* The number of output rows: downsample's output points, hard voxels kept
 * (the packed rows). */
static void finish(rc_cli_voxel_job *j) {
  const int64_t B = j->batch->B;
  if (j->mode == RC_CLI_MODE_DOWNSAMPLE) j->V = j->offsets_out[B];
  if (j->mode != RC_CLI_MODE_HARD) return;
  j->V = 0;
  for (int64_t b = 0; b < B; b++) j->V += j->num_voxels[b];
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Calls the operation max(1, repeat) times; with repeat > 0, the median,
 * p10 and p90 of the call times go to j->time_ms. */
static robocache_status invoke_timed(rc_cli_voxel_job *j, const robocache_tensor *pts,
                                     const robocache_tensor *off, outputs *o) {
  const int32_t n = j->repeat > 0 ? j->repeat : 1;
  double *ms = malloc((size_t)n * sizeof *ms);
  if (!ms) return ROBOCACHE_OUT_OF_MEMORY;
  robocache_status s = ROBOCACHE_OK;
  for (int32_t r = 0; r < n && s == ROBOCACHE_OK; r++) {
    double t0 = now_ms();
    s = invoke(j, pts, off, o);
    ms[r] = now_ms() - t0;
  }
  if (s == ROBOCACHE_OK && j->repeat > 0) {
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    j->time_ms[0] = ms[n / 2];
    j->time_ms[1] = ms[n / 10];
    j->time_ms[2] = ms[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
  }
  free(ms);
  return s;
}

int rc_cli_voxel_run(rc_cli_voxel_job *j) {
  const rc_cli_batch *b = j->batch;
  const int64_t ps[2] = {b->N, b->C}, fs[1] = {b->B + 1};
  robocache_tensor pts = tensor(b->points, ROBOCACHE_DTYPE_F32, 2, ps),
                   off = tensor(b->offsets, ROBOCACHE_DTYPE_I64, 1, fs);
  outputs o;
  robocache_status s = prepare(j, &o);
  if (s == ROBOCACHE_OUT_OF_MEMORY && !robocache_ctx_error_message(j->ctx)[0]) {
    rc_cli_error("voxelize", "out of memory for the outputs");
    return RC_EXIT_DATA;
  }
  if (s == ROBOCACHE_OK) s = invoke_timed(j, &pts, &off, &o);
  if (s != ROBOCACHE_OK) {
    const char *msg = robocache_ctx_error_message(j->ctx);
    rc_cli_error("voxelize", "%s", msg[0] ? msg : robocache_status_name(s));
    return rc_cli_exit_code(s);
  }
  finish(j);
  j->stats.points_in += b->dropped_nonfinite;
  j->stats.points_dropped_nonfinite += b->dropped_nonfinite;
  return RC_EXIT_OK;
}

int rc_cli_voxel_write(const rc_cli_voxel_job *j) {
  const rc_cli_batch *b = j->batch;
  const int64_t P = j->max_points, C = b->C;
  rc_io_array arrays[4];
  int32_t n = 0;
  if (j->mode == RC_CLI_MODE_HARD) {
    arrays[n++] = (rc_io_array){"voxels", ROBOCACHE_DTYPE_F32, 3, {j->V, P, C}, j->voxels};
    arrays[n++] = (rc_io_array){"coords", ROBOCACHE_DTYPE_I32, 2, {j->V, 4}, j->coords};
    arrays[n++] = (rc_io_array){"num_points", ROBOCACHE_DTYPE_I32, 1, {j->V}, j->num_points};
    arrays[n++] = (rc_io_array){"num_voxels", ROBOCACHE_DTYPE_I32, 1, {b->B}, j->num_voxels};
  } else if (j->mode == RC_CLI_MODE_DOWNSAMPLE) {
    arrays[n++] = (rc_io_array){"points", ROBOCACHE_DTYPE_F32, 2, {j->V, C}, j->points_out};
    arrays[n++] = (rc_io_array){"offsets", ROBOCACHE_DTYPE_I64, 1, {b->B + 1}, j->offsets_out};
  } else {
    arrays[n] = (rc_io_array){"grid", j->grid_dtype, 5, {0}, j->grid};
    memcpy(arrays[n++].shape, j->grid_shape, sizeof j->grid_shape);
  }
  rc_io_err err = {0};
  robocache_status s;
  const char *dot = strrchr(j->output, '.');
  if (dot && strcmp(dot, ".npy") == 0) {
    s = rc_io_write_npy(j->output, &arrays[0], &err);
  } else {
    const char *columns[RC_PC_MAX_COLS];
    for (int c = 0; c < C; c++) columns[c] = b->names[c];
    rc_io_voxel_output o = {.path = j->output,
                            .command_line = j->command_line,
                            .mode = j->mode_name,
                            .preset = j->preset,
                            .voxel_size = j->voxel_size,
                            .point_cloud_range = j->range,
                            .num_sources = (int32_t)b->B,
                            .sources = (const char *const *)b->paths,
                            .num_columns = (int32_t)C,
                            .columns = columns,
                            .stats = &j->stats,
                            .num_arrays = n,
                            .arrays = arrays};
    s = rc_io_write_voxels_hdf5(&o, &err);
  }
  if (s != ROBOCACHE_OK) rc_cli_error("voxelize", "%s", err.msg);
  return rc_cli_exit_code(s);
}

void rc_cli_voxel_job_free(rc_cli_voxel_job *j) {
  free(j->grid);
  free(j->voxels);
  free(j->coords);
  free(j->num_points);
  free(j->num_voxels);
  free(j->points_out);
  free(j->offsets_out);
  j->grid = j->voxels = j->points_out = NULL;
  j->coords = j->num_points = j->num_voxels = NULL;
  j->offsets_out = NULL;
}
