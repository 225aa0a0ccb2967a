/* Reading a batch of point-cloud files, running one voxelization and writing
 * its result, for `robocache voxelize`. */
#include "voxel_cli.h"

#include "commands.h"
#include "util.h"
#include "voxel_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void *alloc_or_null(int64_t count, size_t esize) {
  return calloc((size_t)(count > 0 ? count : 1), esize);
}

static robocache_status run_dense(rc_cli_voxel_job *j, const robocache_tensor *pts,
                                  const robocache_tensor *off) {
  const rc_cli_batch *b = j->batch;
  int64_t g[3];
  robocache_status s = robocache_voxel_grid_size(j->ctx, j->voxel_size, j->range, g);
  if (s != ROBOCACHE_OK) return s;
  int64_t F = j->mode <= ROBOCACHE_VOXEL_OCCUPANCY ? 1 : (b->C == 3 ? 3 : b->C - 3);
  int64_t shape[5] = {b->B, F, g[2], g[1], g[0]};
  memcpy(j->grid_shape, shape, sizeof shape);
  j->grid_dtype = j->mode == ROBOCACHE_VOXEL_COUNT       ? ROBOCACHE_DTYPE_I32
                  : j->mode == ROBOCACHE_VOXEL_OCCUPANCY ? ROBOCACHE_DTYPE_U8
                                                         : ROBOCACHE_DTYPE_F32;
  j->grid = alloc_or_null(b->B * F * g[0] * g[1] * g[2],
                          robocache_dtype_size((robocache_dtype)j->grid_dtype));
  if (!j->grid) return ROBOCACHE_OUT_OF_MEMORY;
  robocache_tensor out = tensor(j->grid, j->grid_dtype, 5, j->grid_shape);
  return robocache_voxelize(j->ctx, pts, off, j->voxel_size, j->range, j->mode, &out, &j->stats);
}

/* Runs hard voxelization, then moves each cloud's voxels together. */
static robocache_status run_hard(rc_cli_voxel_job *j, const robocache_tensor *pts,
                                 const robocache_tensor *off) {
  const int64_t B = j->batch->B, M = j->max_voxels, P = j->max_points, C = j->batch->C;
  const int64_t vs[3] = {B * M, P, C}, cs[2] = {B * M, 4}, ns[1] = {B * M}, bs[1] = {B};
  j->voxels = alloc_or_null(B * M * P * C, sizeof(float));
  j->coords = alloc_or_null(B * M * 4, sizeof(int32_t));
  j->num_points = alloc_or_null(B * M, sizeof(int32_t));
  j->num_voxels = alloc_or_null(B, sizeof(int32_t));
  if (!j->voxels || !j->coords || !j->num_points || !j->num_voxels) return ROBOCACHE_OUT_OF_MEMORY;
  robocache_tensor tv = tensor(j->voxels, ROBOCACHE_DTYPE_F32, 3, vs),
                   tc = tensor(j->coords, ROBOCACHE_DTYPE_I32, 2, cs),
                   tn = tensor(j->num_points, ROBOCACHE_DTYPE_I32, 1, ns),
                   tb = tensor(j->num_voxels, ROBOCACHE_DTYPE_I32, 1, bs);
  robocache_status s =
      robocache_voxelize_hard(j->ctx, pts, off, j->voxel_size, j->range, (int32_t)P, (int32_t)M,
                              &tv, &tc, &tn, &tb, &j->stats);
  if (s != ROBOCACHE_OK) return s;
  j->V = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t nv = j->num_voxels[b], from = b * M;
    memmove(j->voxels + j->V * P * C, j->voxels + from * P * C,
            (size_t)(nv * P * C) * sizeof(float));
    memmove(j->coords + j->V * 4, j->coords + from * 4, (size_t)(nv * 4) * sizeof(int32_t));
    memmove(j->num_points + j->V, j->num_points + from, (size_t)nv * sizeof(int32_t));
    j->V += nv;
  }
  return ROBOCACHE_OK;
}

static robocache_status run_downsample(rc_cli_voxel_job *j, const robocache_tensor *pts,
                                       const robocache_tensor *off) {
  const rc_cli_batch *b = j->batch;
  const int64_t os[2] = {b->N, b->C}, fs[1] = {b->B + 1};
  j->points_out = alloc_or_null(b->N * b->C, sizeof(float));
  j->offsets_out = alloc_or_null(b->B + 1, sizeof(int64_t));
  if (!j->points_out || !j->offsets_out) return ROBOCACHE_OUT_OF_MEMORY;
  robocache_tensor to = tensor(j->points_out, ROBOCACHE_DTYPE_F32, 2, os),
                   tf = tensor(j->offsets_out, ROBOCACHE_DTYPE_I64, 1, fs);
  robocache_status s =
      robocache_voxel_downsample(j->ctx, pts, off, j->voxel_size, j->range, &to, &tf, &j->stats);
  j->V = j->offsets_out[b->B];
  return s;
}

int rc_cli_voxel_run(rc_cli_voxel_job *j) {
  const rc_cli_batch *b = j->batch;
  const int64_t ps[2] = {b->N, b->C}, fs[1] = {b->B + 1};
  robocache_tensor pts = tensor(b->points, ROBOCACHE_DTYPE_F32, 2, ps),
                   off = tensor(b->offsets, ROBOCACHE_DTYPE_I64, 1, fs);
  robocache_status s = j->mode == RC_CLI_MODE_HARD         ? run_hard(j, &pts, &off)
                       : j->mode == RC_CLI_MODE_DOWNSAMPLE ? run_downsample(j, &pts, &off)
                                                           : run_dense(j, &pts, &off);
  if (s == ROBOCACHE_OUT_OF_MEMORY && !robocache_ctx_error_message(j->ctx)[0]) {
    rc_cli_error("voxelize", "out of memory for the outputs");
    return RC_EXIT_DATA;
  }
  if (s != ROBOCACHE_OK) {
    rc_cli_error("voxelize", "%s: %s", robocache_status_name(s),
                 robocache_ctx_error_message(j->ctx));
    return rc_cli_exit_code(s);
  }
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
