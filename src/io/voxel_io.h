/* Writers of voxelization results (`robocache voxelize`): NumPy .npy for one
 * array, HDF5 (when built with libhdf5) for a whole result. Both write
 * through a temporary file (atomic_file.h): on failure path is untouched.
 *
 * HDF5 layout "robocache-voxels/1" (docs/voxelize.md), readable with h5py:
 *   /  attrs robocache_version, command_line, created (UTC ISO 8601),
 *         layout, mode, preset ("" when none), sources (input files, batch
 *         order), columns (point column names), and the robocache_voxel_stats
 *         counters as int64 attrs (points_in, points_in_range, ...)
 *   /voxel_size [3] f32, /point_cloud_range [6] f32 (absent for a PCL-style
 *   downsample), then the arrays of the mode:
 *   dense:      /grid [B,F,Z,Y,X]
 *   hard:       /voxels [V,P,C] f32, /coords [V,4] i32 (batch, z, y, x),
 *               /num_points [V] i32, /num_voxels [B] i32 (V = sum num_voxels)
 *   downsample: /points [V,C] f32, /offsets [B+1] i64 */
#ifndef ROBOCACHE_IO_VOXEL_IO_H
#define ROBOCACHE_IO_VOXEL_IO_H

#include "io_error.h"

#include <stdint.h>

/* A C-contiguous host array of dtype f32, i32, i64 or u8. */
typedef struct rc_io_array {
  const char *name;
  int32_t dtype; /* robocache_dtype */
  int32_t ndim;  /* 1..5 */
  int64_t shape[5];
  const void *data;
} rc_io_array;

/* Writes a as a .npy (format 1.0, little-endian, C order).
 * Errors: IO_ERROR "cannot write 'path': ...", INVALID_ARGUMENT for an
 * unsupported dtype or ndim. */
robocache_status rc_io_write_npy(const char *path, const rc_io_array *a, rc_io_err *err);

typedef struct rc_io_voxel_output {
  const char *path;
  const char *command_line;
  const char *mode;               /* count, occupancy, sum, mean, max, hard, downsample */
  const char *preset;             /* NULL or "" when none */
  const float *voxel_size;        /* [3] */
  const float *point_cloud_range; /* [6] or NULL */
  int32_t num_sources;
  const char *const *sources; /* [num_sources] */
  int32_t num_columns;
  const char *const *columns; /* [num_columns] */
  const robocache_voxel_stats *stats;
  int32_t num_arrays;
  const rc_io_array *arrays; /* written as /<name> */
} rc_io_voxel_output;

/* Writes o->path in the layout above. IO_ERROR when the file cannot be
 * written (message names the file and the part), or when robocache_io was
 * built without HDF5. */
robocache_status rc_io_write_voxels_hdf5(const rc_io_voxel_output *o, rc_io_err *err);

#define RC_IO_VOXEL_LAYOUT "robocache-voxels/1"

/* One dataset of a voxel file: name, shape and element type as NumPy names
 * it ("float32", "int32", "int64", "uint8"). */
typedef struct rc_io_h5_dataset {
  const char *name; /* static string */
  char dtype[16];
  int32_t ndim;
  int64_t shape[5];
} rc_io_h5_dataset;

/* What `robocache info` shows of a file in the layout above. */
typedef struct rc_io_voxel_summary {
  char *version, *mode, *preset; /* root attributes (preset "" when none) */
  char **sources, **columns;     /* root attributes */
  int64_t num_sources, num_columns;
  float voxel_size[3];
  float point_cloud_range[6]; /* when has_range */
  int has_range;
  robocache_voxel_stats stats;
  int32_t num_datasets;
  rc_io_h5_dataset datasets[7]; /* the arrays of the mode present in the file */
} rc_io_voxel_summary;

/* Reads the summary of a file written by rc_io_write_voxels_hdf5 (HDF5
 * builds only). IO_ERROR "path: not a robocache voxelize output: what is
 * missing" when the file cannot be opened or is not in the layout above. */
robocache_status rc_io_read_voxel_summary(const char *path, rc_io_voxel_summary *s, rc_io_err *err);
void rc_io_voxel_summary_free(rc_io_voxel_summary *s);

#endif
