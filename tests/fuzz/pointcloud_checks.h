/* The properties every point-cloud reader result must have (fuzz_bin,
 * fuzz_pcd, fuzz_ply). */
#ifndef ROBOCACHE_FUZZ_POINTCLOUD_CHECKS_H
#define ROBOCACHE_FUZZ_POINTCLOUD_CHECKS_H

#include "pointcloud.h"

/* Reads path with rc_pointcloud_read(path, AUTO, bin_columns) and aborts
 * unless: on success, 3..64 named columns with x, y, z first and finite, kept
 * + dropped = points in the file = WIDTH x HEIGHT; on failure, a message.
 * Returns the points in the file (-1 on failure). */
int64_t rcf_read_pointcloud(const char *path, int32_t bin_columns);

#endif
