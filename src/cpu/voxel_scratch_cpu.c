/* Per-thread hash table and per-voxel arrays of the CPU voxelize backend. */
#include "cpu/voxel_scratch_cpu.h"

#include <stdlib.h>
#include <string.h>

#define TABLE_START 1024

int rc_voxel_scratch_alloc(rc_voxel_scratch *s, int64_t nmax, int64_t width, int sums, int maxima) {
  memset(s, 0, sizeof *s);
  if (nmax >= (int64_t)UINT32_MAX) return -1;
  s->width = width > 0 ? width : 1;
  s->tmax = TABLE_START;
  while (s->tmax < 2 * nmax + 2) s->tmax *= 4;
  const size_t n = (size_t)nmax, wn = n * (size_t)s->width;
  const size_t head = 2 * n * sizeof(int64_t) + (sums ? wn * sizeof(double) : 0);
  const size_t tail = (maxima ? wn * sizeof(uint32_t) : 0) + (size_t)s->tmax * sizeof(uint32_t);
  char *m = malloc(head + tail);
  if (!m) return -1;
  s->vkey = (int64_t *)m; /* 8-byte parts first, then the 4-byte ones */
  s->count = s->vkey + n;
  s->acc = sums ? (double *)(s->count + n) : NULL;
  s->max = maxima ? (uint32_t *)(m + head) : NULL;
  s->s = (uint32_t *)(m + head + (maxima ? wn * sizeof(uint32_t) : 0));
  return 0;
}

void rc_voxel_scratch_free(rc_voxel_scratch *s) {
  free(s->vkey);
  s->vkey = NULL;
}

static void clear_table(rc_voxel_scratch *s, int64_t size) {
  s->size = size;
  s->shift = 64;
  for (int64_t n = size; n > 1; n >>= 1) s->shift--;
  memset(s->s, 0, (size_t)size * sizeof *s->s);
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
    while (s->s[h] != 0) h = (h + 1) & mask;
    s->s[h] = (uint32_t)(v + 1);
  }
}
