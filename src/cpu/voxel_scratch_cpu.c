/* Per-thread hash table and per-voxel arrays of the CPU voxelize backend. */
#include "cpu/voxel_scratch_cpu.h"

#include <stdlib.h>
#include <string.h>

#define TABLE_START 1024

int rc_voxel_scratch_alloc(rc_voxel_scratch *s, int64_t nmax, int64_t width, int sums, int maxima) {
  memset(s, 0, sizeof *s);
  s->width = width > 0 ? width : 1;
  s->tmax = TABLE_START;
  while (s->tmax < 2 * nmax + 2) s->tmax *= 4;
  const size_t n = (size_t)nmax, wn = n * (size_t)s->width;
  const size_t bytes = (size_t)s->tmax * sizeof(rc_voxel_slot) + 2 * n * sizeof(int64_t) +
                       (sums ? wn * sizeof(double) : 0) + (maxima ? wn * sizeof(float) : 0);
  char *m = malloc(bytes);
  if (!m) return -1;
  s->s = (rc_voxel_slot *)m; /* every part 8-byte aligned (floats last) */
  s->vkey = (int64_t *)(s->s + s->tmax);
  s->count = s->vkey + n;
  s->acc = sums ? (double *)(s->count + n) : NULL;
  s->max = maxima ? (float *)((char *)(s->count + n) + (sums ? wn * sizeof(double) : 0)) : NULL;
  return 0;
}

void rc_voxel_scratch_free(rc_voxel_scratch *s) {
  free(s->s);
  s->s = NULL;
}

static void clear_table(rc_voxel_scratch *s, int64_t size) {
  s->size = size;
  s->shift = 64;
  for (int64_t n = size; n > 1; n >>= 1) s->shift--;
  for (int64_t i = 0; i < size; i++) s->s[i].key = -1;
}

void rc_voxel_scratch_reset(rc_voxel_scratch *s) {
  clear_table(s, TABLE_START);
  s->nvox = 0;
}

/* The allocation always has room: nvox <= nmax and tmax >= 2 nmax + 2, and
 * the table grows only while 2 nvox > size. */
void rc_voxel_scratch_grow(rc_voxel_scratch *s) {
  clear_table(s, s->size * 4);
  const int64_t mask = s->size - 1;
  for (int64_t v = 0; v < s->nvox; v++) {
    int64_t h = rc_voxel_slot_of(s->vkey[v], s->shift);
    while (s->s[h].key != -1) h = (h + 1) & mask;
    s->s[h] = (rc_voxel_slot){s->vkey[v], v};
  }
}
