/* The robocache_voxel_stats counters of a "robocache-voxels/1" file (root
 * int64 attributes named as the struct's fields), shared by its writer
 * (voxel_hdf5.c) and its reader (voxel_summary_hdf5.c). */
#ifndef ROBOCACHE_IO_VOXEL_STATS_HDF5_H
#define ROBOCACHE_IO_VOXEL_STATS_HDF5_H

#include "robocache.h"

#include <stddef.h>

#define RC_IO_VOXEL_NSTATS 8

/* Attribute name and offsetof(robocache_voxel_stats, field) of each counter. */
typedef struct rc_io_voxel_stat {
  const char *name;
  size_t offset;
} rc_io_voxel_stat;

extern const rc_io_voxel_stat rc_io_voxel_stats[RC_IO_VOXEL_NSTATS];

/* The counter i of s. */
static inline int64_t *rc_io_voxel_stat_at(robocache_voxel_stats *s, int i) {
  return (int64_t *)((char *)s + rc_io_voxel_stats[i].offset);
}

#endif
