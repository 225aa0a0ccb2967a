/* PCD and PLY readers behind rc_pointcloud_read (pointcloud.h). */
#ifndef ROBOCACHE_IO_PCD_H
#define ROBOCACHE_IO_PCD_H

#include "pointcloud.h"

/* PCD: DATA ascii, binary, binary_compressed (with liblzf). */
robocache_status rc_pcd_read(const char *path, rc_pointcloud *pc, rc_io_err *err);
/* PLY: format ascii or binary_little_endian, the vertex element. */
robocache_status rc_ply_read(const char *path, rc_pointcloud *pc, rc_io_err *err);

#endif
