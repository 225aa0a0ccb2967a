/* Shared pieces of `robocache voxelize` and the point-cloud part of
 * `robocache info`: reading a batch of point-cloud files, running one
 * voxelization, writing its result. Errors are printed on stderr; functions
 * return an exit code (commands.h). */
#ifndef ROBOCACHE_CLI_VOXEL_CLI_H
#define ROBOCACHE_CLI_VOXEL_CLI_H

#include "pointcloud.h"
#include "robocache.h"

/* The points of several files, concatenated (one cloud per file). */
typedef struct rc_cli_batch {
  int64_t B, N;
  int32_t C;
  float *points;                              /* [N, C] */
  int64_t *offsets;                           /* [B+1] */
  char *const *paths;                         /* [B], not owned */
  char names[RC_PC_MAX_COLS][RC_PC_NAME_LEN]; /* column names of the first file */
  int64_t dropped_nonfinite;                  /* dropped by the readers */
} rc_cli_batch;

/* Reads paths[0..n) (bin_columns as rc_pointcloud_read). Files must have the
 * same number of columns. Prints each file's line. On error *b is freed. */
int rc_cli_batch_read(int n, char *const *paths, int32_t bin_columns, rc_cli_batch *b);
void rc_cli_batch_free(rc_cli_batch *b);

/* Mode numbers: robocache_voxel_mode for dense, then these two. */
#define RC_CLI_MODE_HARD 5
#define RC_CLI_MODE_DOWNSAMPLE 6

typedef struct rc_cli_voxel_job {
  /* input */
  robocache_ctx *ctx;
  const rc_cli_batch *batch;
  int mode;
  const float *voxel_size; /* [3] */
  const float *range;      /* [6] or NULL (downsample only) */
  int32_t max_points, max_voxels;
  int32_t repeat; /* > 0: call the operation this many times and time it */
  /* results (stats include the points the readers dropped as non-finite) */
  robocache_voxel_stats stats;
  void *grid; /* dense [B,F,Z,Y,X]: i32 count, u8 occupancy, else f32 */
  int32_t grid_dtype;
  int64_t grid_shape[5];
  float *voxels; /* hard, compacted: [V,P,C] */
  int32_t *coords, *num_points, *num_voxels;
  int64_t V;
  float *points_out;    /* downsample: [V,C] */
  int64_t *offsets_out; /* [B+1] */
  double time_ms[3];    /* repeat > 0: median, p10, p90 of the call times */
  /* output */
  const char *output, *command_line, *mode_name, *preset;
} rc_cli_voxel_job;

int rc_cli_voxel_run(rc_cli_voxel_job *job);
/* Writes job->output: .npy (dense grid or downsampled points) or HDF5. */
int rc_cli_voxel_write(const rc_cli_voxel_job *job);
void rc_cli_voxel_job_free(rc_cli_voxel_job *job);

/* `robocache info` of a point-cloud file: format, points, columns and their
 * ranges, and in-range points / non-empty voxels for each preset. */
int rc_cli_pointcloud_info(const char *path);

/* `robocache info` of a robocache-voxels/1 HDF5 file (HDF5 builds): mode,
 * preset, sources, columns, voxel_size, point_cloud_range, each array's shape
 * and dtype, and the robocache_voxel_stats counters. */
int rc_cli_voxel_file_info(const char *path);

#endif
