/* Test helper: real point clouds as tensors (needs robocache_io). */
#include "support_voxel.h"

#include "pointcloud.h"

#include <stdio.h>

rct_tensor *rcv_load(const char *file) {
  char rel[256];
  snprintf(rel, sizeof rel, "pointclouds/%s", file);
  rc_pointcloud pc;
  rc_io_err err = {0};
  if (rc_pointcloud_read(rct_data_path(rel), RC_PC_FORMAT_AUTO, 0, &pc, &err) != ROBOCACHE_OK)
    fail_msg("%s", err.msg);
  rct_tensor *t = rcv_points(pc.points, pc.n, pc.cols);
  rc_pointcloud_free(&pc);
  return t;
}
