/* Properties of point-cloud reader results. */
#include "pointcloud_checks.h"

#include "tmpfile_support.h"

#include <math.h>
#include <string.h>

static void check(const rc_pointcloud *pc) {
  RCF_CHECK(pc->cols >= 3 && pc->cols <= RC_PC_MAX_COLS);
  RCF_CHECK(!strcmp(pc->names[0], "x") && !strcmp(pc->names[1], "y") && !strcmp(pc->names[2], "z"));
  for (int c = 0; c < pc->cols; c++) RCF_CHECK(pc->names[c][0] != '\0');
  RCF_CHECK(pc->n >= 0 && pc->n + pc->dropped_nonfinite == pc->points_in_file);
  int64_t wh;
  RCF_CHECK(!__builtin_mul_overflow(pc->width, pc->height, &wh) && wh == pc->points_in_file);
  for (int64_t i = 0; i < pc->n; i++)
    for (int a = 0; a < 3; a++) RCF_CHECK(isfinite(pc->points[i * pc->cols + a]));
}

int64_t rcf_read_pointcloud(const char *path, int32_t bin_columns) {
  rc_pointcloud pc;
  rc_io_err err = {0};
  robocache_status s = rc_pointcloud_read(path, RC_PC_FORMAT_AUTO, bin_columns, &pc, &err);
  int64_t in_file = -1;
  if (s == ROBOCACHE_OK) {
    check(&pc);
    in_file = pc.points_in_file;
  } else {
    RCF_CHECK(err.status == s && err.msg[0] != '\0');
  }
  rc_pointcloud_free(&pc);
  return in_file;
}
