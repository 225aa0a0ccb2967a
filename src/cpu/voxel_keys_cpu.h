/* Voxel keys of many points at once for the CPU voxelize backend. */
#ifndef ROBOCACHE_CPU_VOXEL_KEYS_CPU_H
#define ROBOCACHE_CPU_VOXEL_KEYS_CPU_H

#include "ops/voxel_problem.h"

#define RC_KEY_RANGE (-1)     /* finite point outside point_cloud_range */
#define RC_KEY_NONFINITE (-2) /* x, y or z NaN or infinite */

/* key[i] = the key of row begin + i (as rc_voxel_point_key), or
 * RC_KEY_RANGE / RC_KEY_NONFINITE, for i < n, on `threads` OpenMP threads;
 * adds the dropped points to *nonfinite and *range. */
void rc_voxel_keys_cpu(const rc_voxel_problem *p, const rc_voxel_keyer *k, int64_t begin, int64_t n,
                       int threads, int64_t *key, int64_t *nonfinite, int64_t *range);

#endif
