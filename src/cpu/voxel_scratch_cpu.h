/* Per-thread working memory of the CPU voxelize backend: an open-addressing
 * hash table that numbers voxels in order of first appearance, and the
 * per-voxel arrays, for one cloud at a time. A slot holds only the voxel
 * number (+ 1; 4 bytes), the key is read from vkey: a table 4x smaller than
 * (key, number) pairs stays in L2 for fine grids (80k voxels: 1 MiB). */
#ifndef ROBOCACHE_CPU_VOXEL_SCRATCH_CPU_H
#define ROBOCACHE_CPU_VOXEL_SCRATCH_CPU_H

#include <stdint.h>

/* One allocation for clouds of up to nmax points (pages are touched only as
 * they are used). The table in use is a prefix of `size` slots: it starts
 * small, to stay in cache for coarse grids, and grows 4x when half full. */
typedef struct rc_voxel_scratch {
  uint32_t *s;    /* [tmax] voxel number + 1, 0 = empty */
  int64_t size;   /* slots in use, a power of two <= tmax */
  int shift;      /* 64 - log2(size) */
  int64_t tmax;   /* slots allocated */
  int64_t nvox;   /* voxels numbered so far */
  int64_t *vkey;  /* [nmax] key of each voxel */
  int64_t *count; /* [nmax] points per voxel */
  double *acc;    /* [nmax * width] sums, or NULL */
  uint32_t *max;  /* [nmax * width] maxima (rc_voxel_max_key), or NULL */
  int64_t width;
} rc_voxel_scratch;

/* width accumulators per voxel, f64 sums when sums, maxima when maxima.
 * A single block, which malloc keeps for the next call instead of returning
 * it to the system. -1 when out of memory or nmax >= 2^32 - 1 (voxel
 * numbers are 32-bit). */
int rc_voxel_scratch_alloc(rc_voxel_scratch *s, int64_t nmax, int64_t width, int sums, int maxima);
void rc_voxel_scratch_free(rc_voxel_scratch *s);
/* An empty table (nvox = 0). */
void rc_voxel_scratch_reset(rc_voxel_scratch *s);
/* Grows the table 4x and re-inserts the voxels. */
void rc_voxel_scratch_grow(rc_voxel_scratch *s);

/* Fibonacci hashing: the top bits of key * 2^64 / golden ratio, which
 * depend on every bit of the key (keys of PCL grids pack z in bits 40..59). */
static inline int64_t rc_voxel_slot_of(int64_t key, int shift) {
  return (int64_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> shift);
}

/* The voxel number of key (>= 0), numbering a new voxel (count 0) when the
 * key is new; *fresh = 1 then. At most nmax distinct keys per reset. */
static inline int64_t rc_voxel_scratch_find(rc_voxel_scratch *s, int64_t key, int *fresh) {
  int64_t mask = s->size - 1, h = rc_voxel_slot_of(key, s->shift);
  for (uint32_t t; (t = s->s[h]) != 0; h = (h + 1) & mask) {
    if (s->vkey[t - 1] == key) {
      *fresh = 0;
      return t - 1;
    }
  }
  int64_t v = s->nvox++;
  s->vkey[v] = key;
  s->count[v] = 0;
  s->s[h] = (uint32_t)(v + 1);
  *fresh = 1;
  if (2 * s->nvox > s->size) rc_voxel_scratch_grow(s);
  return v;
}

#endif
