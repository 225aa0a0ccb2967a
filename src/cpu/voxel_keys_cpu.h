/* Voxel keys of many points at once for the CPU voxelize backend. */
#ifndef ROBOCACHE_CPU_VOXEL_KEYS_CPU_H
#define ROBOCACHE_CPU_VOXEL_KEYS_CPU_H

#include "ops/voxel_problem.h"

#define RC_KEY_RANGE (-1)     /* finite point outside point_cloud_range */
#define RC_KEY_NONFINITE (-2) /* x, y or z NaN or infinite */
#define RC_KEY_BLOCK 256      /* rows per call of rc_voxel_keys_block */

/* The PCL VoxelGrid keyer of p (p->keyer.pcl) with a fixed origin instead of
 * the cloud's minimum: 2^20 voxels per axis from voxel index -2^19, so the
 * key packs the voxel indices floor(p * inv_leaf) + 2^19 in 20 bits each.
 * The same voxels as the cloud's own PCL grid (rc_voxel_cloud_keyer), with
 * no pass over the cloud for its minimum, for clouds whose indices all lie
 * in [-2^19, 2^19): the keys of the other points are RC_KEY_RANGE. */
void rc_voxel_pcl_fixed_keyer(const rc_voxel_problem *p, rc_voxel_keyer *k);

/* key[i] = the key of row row + i (as rc_voxel_point_key), or RC_KEY_RANGE /
 * RC_KEY_NONFINITE, for i < m <= RC_KEY_BLOCK, on the calling thread; adds
 * the dropped points to *nonfinite and *range. */
void rc_voxel_keys_block(const rc_voxel_problem *p, const rc_voxel_keyer *k, int64_t row, int m,
                         int64_t *key, int64_t *nonfinite, int64_t *range);

/* As rc_voxel_keys_block for rows begin .. begin + n - 1, on `threads`
 * OpenMP threads when n >= RC_VOXEL_PAR_MIN. */
void rc_voxel_keys_cpu(const rc_voxel_problem *p, const rc_voxel_keyer *k, int64_t begin, int64_t n,
                       int threads, int64_t *key, int64_t *nonfinite, int64_t *range);

#endif
