/* HDF5 output of `robocache align` and the summary `robocache info` reads back.
 * Available when robocache_io was built with libhdf5 (ROBOCACHE_HAVE_HDF5).
 *
 * Layout (docs/hdf5-layout.md; robomimic-style, readable with plain h5py):
 *   /                        attrs robocache_version, command_line, created (UTC,
 *                            ISO 8601), hdf5_version, layout = "robocache-align/1"
 *   /data                    attr total = T
 *   /data/demo_0             attrs num_samples = T, target (how the grid was made)
 *   /data/demo_0/timestamps  int64 [T], ns (attr units = "ns")
 *   /data/demo_0/obs/<name>  float32 [T,D] per stream; attrs method, extrapolate,
 *                            fill_value, max_gap_ns, tolerance_ns, time_offset_ns,
 *                            quat_order, source_file, source_format, columns,
 *                            time_column, valid_column
 *   /data/demo_0/valid       uint8 [T,K]; attr streams = the K stream names in
 *                            column order (valid[:, k] belongs to streams[k]) */
#ifndef ROBOCACHE_IO_HDF5_IO_H
#define ROBOCACHE_IO_HDF5_IO_H

#include "io_error.h"

#include <stdint.h>

typedef struct rc_io_h5_stream {
  const char *name;                        /* dataset name under obs/ (no '/') */
  int32_t cols;                            /* D */
  const robocache_interp_options *options; /* as used for this stream */
  const char *source_file;
  const char *source_format;
  const char *const *columns; /* [cols] source column names */
  const char *time_column;
} rc_io_h5_stream;

typedef struct rc_io_h5_output {
  const char *path;
  const char *command_line;
  const char *target; /* e.g. "uniform 50 Hz over the overlap" */
  int64_t T;
  const int64_t *timestamps_ns; /* [T] */
  int32_t K;
  const rc_io_h5_stream *streams; /* [K] */
  int64_t total_cols;             /* sum of cols */
  const float *obs;               /* [T, total_cols], streams side by side */
  const uint8_t *valid;           /* [T, K] */
} rc_io_h5_output;

/* Writes o->path through a temporary file in the same directory that is
 * renamed over o->path only when everything was written; on any failure the
 * temporary file is removed and o->path is untouched. Errors: IO_ERROR
 * ("cannot write 'path': ..."), OUT_OF_MEMORY. */
robocache_status rc_io_write_hdf5(const rc_io_h5_output *o, rc_io_err *err);

/* The root attribute "layout" of an HDF5 file ("robocache-align/1",
 * "robocache-voxels/1") in a malloc'd *layout, NULL when the file has none.
 * IO_ERROR (message as rc_io_read_hdf5_summary's) when the file cannot be
 * opened or read. */
robocache_status rc_io_read_hdf5_layout(const char *path, char **layout, rc_io_err *err);

/* What `robocache info` shows of a robocache HDF5 file. */
typedef struct rc_io_h5_summary {
  int64_t T;
  int64_t *timestamps_ns; /* [T] */
  int32_t K;
  char **names;         /* [K] stream names (valid column order) */
  int64_t *cols;        /* [K] D of each obs dataset */
  int64_t *valid_count; /* [K] targets with valid = 1 */
  char *version;        /* robocache_version attribute */
  char *target;         /* target attribute of demo_0 */
} rc_io_h5_summary;

/* Reads the summary of a file written by rc_io_write_hdf5. IO_ERROR when the
 * file cannot be opened or is not in the layout above. */
robocache_status rc_io_read_hdf5_summary(const char *path, rc_io_h5_summary *s, rc_io_err *err);
void rc_io_h5_summary_free(rc_io_h5_summary *s);

#endif
