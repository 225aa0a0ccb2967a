/* Point-cloud readers: KITTI-style .bin (headerless little-endian float32
 * rows), PCD (PCL Point Cloud Data: DATA ascii, binary, binary_compressed)
 * and PLY (ascii, binary_little_endian; the vertex element). Every reader
 * yields the same table: float32 points [n, cols], x, y, z first, then the
 * other fields in file order.
 *
 * Columns: a field with COUNT k > 1 gives k columns "name_0".."name_{k-1}";
 * PCL packed colour fields "rgb" / "rgba" give three columns r, g, b (0-255);
 * PCL padding fields "_" are skipped. Integer and float64 fields are
 * converted to float32.
 *
 * Points whose x, y or z is NaN or infinite (the invalid pixels of organized
 * PCD clouds) are dropped and counted in dropped_nonfinite.
 *
 * Errors (message "path: what is wrong"): IO_ERROR when the file cannot be
 * opened or read; INVALID_ARGUMENT for a .bin size that is not a multiple of
 * 4 * columns, a malformed or truncated header or body, missing x/y/z fields,
 * unsupported field types (PCD TYPE/SIZE other than F4, F8, I1/2/4/8,
 * U1/2/4/8; PLY list properties in the vertex element), PLY big-endian data,
 * and binary_compressed PCD in a build without liblzf. */
#ifndef ROBOCACHE_IO_POINTCLOUD_H
#define ROBOCACHE_IO_POINTCLOUD_H

#include "io_error.h"

#include <stdint.h>

#define RC_PC_MAX_COLS 64
#define RC_PC_NAME_LEN 32

typedef enum rc_pc_format {
  RC_PC_FORMAT_AUTO = 0, /* from the file name: .pcd, .ply, .bin; any other
                            name is a .bin only with a column count */
  RC_PC_FORMAT_BIN = 1,  /* KITTI / nuScenes float32 rows */
  RC_PC_FORMAT_PCD = 2,
  RC_PC_FORMAT_PLY = 3
} rc_pc_format;

typedef struct rc_pointcloud {
  float *points; /* [n, cols] row-major; finite x, y, z */
  int64_t n;
  int32_t cols;
  char names[RC_PC_MAX_COLS][RC_PC_NAME_LEN]; /* column names */
  int64_t points_in_file;                     /* n + dropped_nonfinite */
  int64_t dropped_nonfinite;                  /* x, y or z NaN or infinite */
  int64_t width, height;                      /* PCD WIDTH/HEIGHT; else points_in_file, 1 */
  char format[32]; /* "bin", "pcd ascii", "pcd binary", "pcd binary_compressed",
                      "ply ascii", "ply binary_little_endian" */
} rc_pointcloud;

/* Reads path into *pc (zeroed first; free with rc_pointcloud_free, also after
 * an error). format: rc_pc_format. bin_columns: columns of a .bin file; 0 =
 * from the name: 5 for "*.pcd.bin" (nuScenes x y z intensity ring), else 4
 * (KITTI x y z intensity). With AUTO, a name without a known extension is
 * read as .bin only when bin_columns > 0, else INVALID_ARGUMENT. A .bin size
 * that is not a multiple of 4 * columns is an error listing the column counts
 * that would fit. Header counts (PCD POINTS / WIDTH x HEIGHT, PLY element
 * vertex) are checked against the bytes of the file before anything is
 * allocated for them. The file is read once (read_file.h). Columns of .bin
 * files are named x y z intensity ring, then c5, c6, ... */
robocache_status rc_pointcloud_read(const char *path, int format, int32_t bin_columns,
                                    rc_pointcloud *pc, rc_io_err *err);
void rc_pointcloud_free(rc_pointcloud *pc);

/* The format of path from its name; AUTO when the name has none of the
 * extensions. */
rc_pc_format rc_pointcloud_detect(const char *path);

/* 1 when path names a point-cloud file (.bin, .pcd, .ply). */
int rc_pointcloud_is_file(const char *path);

#endif
