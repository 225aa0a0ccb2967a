/* rc_pointcloud_read: format detection and the KITTI / nuScenes .bin
 * reader (headerless little-endian float32 rows). */
#include "pc_fields.h"
#include "pcd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  if (m > n) return 0;
  for (size_t i = 0; i < m; i++) {
    char a = s[n - m + i], b = suffix[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (a != b) return 0;
  }
  return 1;
}

rc_pc_format rc_pointcloud_detect(const char *path) {
  if (ends_with(path, ".pcd")) return RC_PC_FORMAT_PCD;
  if (ends_with(path, ".ply")) return RC_PC_FORMAT_PLY;
  if (ends_with(path, ".bin")) return RC_PC_FORMAT_BIN;
  return RC_PC_FORMAT_AUTO;
}

int rc_pointcloud_is_file(const char *path) {
  return ends_with(path, ".pcd") || ends_with(path, ".ply") || ends_with(path, ".bin");
}

static robocache_status read_bin(const char *path, int32_t cols, rc_pointcloud *pc,
                                 rc_io_err *err) {
  static const char *const names[] = {"x", "y", "z", "intensity", "ring"};
  if (cols == 0) cols = ends_with(path, ".pcd.bin") ? 5 : 4;
  if (cols < 3 || cols > RC_PC_MAX_COLS)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: a .bin point cloud needs 3..%d float32 columns, got %d", path,
                      RC_PC_MAX_COLS, (int)cols);
  unsigned char *buf;
  size_t len;
  robocache_status s = rc_pc_slurp(path, &buf, &len, err);
  if (s != ROBOCACHE_OK) return s;
  size_t row = (size_t)cols * sizeof(float);
  if (len % row != 0) {
    char fit[RC_IO_ERR_LEN / 2] = "none";
    for (int c = 3, n = 0; c <= RC_PC_MAX_COLS && len % 4 == 0; c++)
      if (len % ((size_t)c * 4) == 0)
        n += snprintf(fit + n, sizeof fit - (size_t)n, "%s%d", n ? ", " : "", c);
    free(buf);
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: size %zu bytes is not a multiple of %zu (%d float32 columns per "
                      "point): truncated, or another number of columns (column counts 3..%d "
                      "that fit: %s)",
                      path, len, row, (int)cols, RC_PC_MAX_COLS, fit);
  }
  pc->points = (float *)buf; /* the buffer is float-aligned (malloc) */
  pc->cols = cols;
  for (int c = 0; c < cols; c++) {
    if (c < 5)
      snprintf(pc->names[c], RC_PC_NAME_LEN, "%s", names[c]);
    else
      snprintf(pc->names[c], RC_PC_NAME_LEN, "c%d", c);
  }
  snprintf(pc->format, sizeof pc->format, "bin");
  rc_pc_drop_nonfinite(pc, (int64_t)(len / row));
  pc->width = pc->points_in_file;
  pc->height = 1;
  return ROBOCACHE_OK;
}

robocache_status rc_pointcloud_read(const char *path, int format, int32_t bin_columns,
                                    rc_pointcloud *pc, rc_io_err *err) {
  memset(pc, 0, sizeof *pc);
  if (!path) return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "point cloud path is NULL");
  if (format == RC_PC_FORMAT_AUTO) format = rc_pointcloud_detect(path);
  if (format == RC_PC_FORMAT_AUTO && bin_columns > 0) format = RC_PC_FORMAT_BIN;
  if (format == RC_PC_FORMAT_AUTO)
    return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT,
                      "%s: unknown point-cloud file name (.bin, .pcd.bin, .pcd or .ply); give "
                      "the number of float32 columns to read it as a headerless .bin",
                      path);
  switch (format) {
  case RC_PC_FORMAT_BIN: return read_bin(path, bin_columns, pc, err);
  case RC_PC_FORMAT_PCD: return rc_pcd_read(path, pc, err);
  case RC_PC_FORMAT_PLY: return rc_ply_read(path, pc, err);
  }
  return rc_io_fail(err, ROBOCACHE_INVALID_ARGUMENT, "%s: unknown point cloud format %d", path,
                    format);
}

void rc_pointcloud_free(rc_pointcloud *pc) {
  if (!pc) return;
  free(pc->points);
  pc->points = NULL;
  pc->n = 0;
}
