/* Reference voxelization: the slow, obvious oracle. For each cloud the
 * in-range points are sorted by (voxel key, input index) with qsort; each run
 * of one key is a voxel whose points are in input order. Sums are f64 in
 * input order. */
#include "ops/voxel_problem.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
  int64_t key, idx;
} entry;

/* One cloud's voxels: e sorted by (key, idx); voxel v is e[seg[v]..seg[v+1]);
 * order[r] is the voxel whose first point is the r-th first point. */
typedef struct groups {
  entry *e;
  int64_t *seg, *order;
  int64_t n, nvox;
  rc_voxel_keyer keyer;
} groups;

static int cmp_entry(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static void free_groups(groups *g) {
  free(g->e);
  free(g->seg);
  free(g->order);
}

static robocache_status group_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t b,
                                    groups *g) {
  int64_t begin, end;
  rc_voxel_cloud_rows(p, b, &begin, &end);
  memset(g, 0, sizeof *g);
  robocache_status s = rc_voxel_cloud_keyer(ctx, p, begin, end, &g->keyer);
  if (s != ROBOCACHE_OK) return s;
  size_t n = (size_t)(end - begin);
  g->e = malloc((n ? n : 1) * sizeof *g->e);
  g->seg = malloc((n + 1) * sizeof *g->seg);
  g->order = malloc((n ? n : 1) * sizeof *g->order);
  entry *first = malloc((n ? n : 1) * sizeof *first);
  if (!g->e || !g->seg || !g->order || !first) {
    free(first);
    free_groups(g);
    return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (reference): out of memory");
  }
  p->stats->points_in += end - begin;
  for (int64_t i = begin; i < end; i++) {
    int64_t key = 0;
    int cls = rc_voxel_point_key(p, &g->keyer, i, &key);
    if (cls == RC_VOXEL_NONFINITE)
      p->stats->points_dropped_nonfinite++;
    else if (cls == RC_VOXEL_RANGE)
      p->stats->points_dropped_range++;
    else
      g->e[g->n++] = (entry){key, i};
  }
  p->stats->points_in_range += g->n;
  qsort(g->e, (size_t)g->n, sizeof *g->e, cmp_entry);
  for (int64_t i = 0; i < g->n; i++) {
    if (i == 0 || g->e[i].key != g->e[i - 1].key) {
      first[g->nvox] = (entry){g->e[i].idx, g->nvox}; /* (first index, voxel) */
      g->seg[g->nvox++] = i;
    }
  }
  g->seg[g->nvox] = g->n;
  p->stats->voxels_nonempty += g->nvox;
  qsort(first, (size_t)g->nvox, sizeof *first, cmp_entry);
  for (int64_t r = 0; r < g->nvox; r++) g->order[r] = first[r].idx;
  free(first);
  return ROBOCACHE_OK;
}

static void store(const rc_view *out, int64_t i, double x) {
  switch (out->dtype) {
  case ROBOCACHE_DTYPE_I32: ((int32_t *)out->data)[i] = (int32_t)x; break;
  case ROBOCACHE_DTYPE_U8: ((uint8_t *)out->data)[i] = (uint8_t)x; break;
  default: ((float *)out->data)[i] = rc_voxel_f32(x); break;
  }
}

robocache_status rc_voxelize_dense_ref(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2];
  memset(p->out.data, 0, (size_t)rc_view_numel(&p->out) * robocache_dtype_size(p->out.dtype));
  for (int64_t b = 0; b < p->B; b++) {
    groups g;
    robocache_status s = group_cloud(ctx, p, b, &g);
    if (s != ROBOCACHE_OK) return s;
    for (int64_t v = 0; v < g.nvox; v++) {
      const entry *e = g.e + g.seg[v];
      int64_t cnt = g.seg[v + 1] - g.seg[v], base = b * p->F * G + e[0].key;
      if (p->mode == ROBOCACHE_VOXEL_COUNT) {
        store(&p->out, base, (double)cnt);
        continue;
      }
      if (p->mode == ROBOCACHE_VOXEL_OCCUPANCY) {
        store(&p->out, base, 1.0);
        continue;
      }
      for (int64_t f = 0; f < p->F; f++) {
        double acc = 0.0;
        uint32_t mx = 0; /* rc_voxel_max_key order */
        for (int64_t j = 0; j < cnt; j++) {
          float x = rc_voxel_coord(p, e[j].idx, p->feat_col + f);
          uint32_t k = rc_voxel_max_key(x);
          acc += (double)x;
          if (k > mx) mx = k;
        }
        double r = p->mode == ROBOCACHE_VOXEL_SUM    ? acc
                   : p->mode == ROBOCACHE_VOXEL_MEAN ? acc / (double)cnt
                                                     : (double)rc_voxel_max_value(mx);
        store(&p->out, base + f * G, r);
      }
    }
    free_groups(&g);
  }
  return ROBOCACHE_OK;
}

robocache_status rc_voxelize_hard_ref(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t P = p->max_points, M = p->max_voxels, C = p->C;
  float *voxels = (float *)p->voxels.data;
  int32_t *coords = (int32_t *)p->coords.data, *num_points = (int32_t *)p->num_points.data;
  memset(voxels, 0, (size_t)rc_view_numel(&p->voxels) * sizeof(float));
  for (int64_t r = 0; r < p->B * M; r++) {
    num_points[r] = 0;
    for (int a = 0; a < 4; a++) coords[r * 4 + a] = -1;
  }
  for (int64_t b = 0; b < p->B; b++) {
    groups g;
    robocache_status s = group_cloud(ctx, p, b, &g);
    if (s != ROBOCACHE_OK) return s;
    int64_t kept = g.nvox < M ? g.nvox : M;
    ((int32_t *)p->num_voxels.data)[b] = (int32_t)kept;
    for (int64_t r = 0; r < g.nvox; r++) {
      int64_t v = g.order[r], cnt = g.seg[v + 1] - g.seg[v];
      const entry *e = g.e + g.seg[v];
      if (r >= kept) {
        p->stats->voxels_dropped_max_voxels++;
        p->stats->points_dropped_max_voxels += cnt;
        continue;
      }
      int64_t row = b * M + r, ijk[3], np = cnt < P ? cnt : P;
      p->stats->points_dropped_max_points += cnt - np;
      rc_voxel_unkey(&g.keyer, e[0].key, ijk);
      coords[row * 4 + 0] = (int32_t)b;
      coords[row * 4 + 1] = (int32_t)ijk[2];
      coords[row * 4 + 2] = (int32_t)ijk[1];
      coords[row * 4 + 3] = (int32_t)ijk[0];
      num_points[row] = (int32_t)np;
      for (int64_t j = 0; j < np; j++)
        for (int64_t c = 0; c < C; c++)
          voxels[(row * P + j) * C + c] = rc_voxel_coord(p, e[j].idx, c);
    }
    free_groups(&g);
  }
  return ROBOCACHE_OK;
}

robocache_status rc_voxel_downsample_ref(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t C = p->C, cap = p->out_points.shape[0];
  float *out = (float *)p->out_points.data;
  int64_t *out_off = (int64_t *)p->out_offsets.data;
  int64_t total = 0;
  out_off[0] = 0;
  for (int64_t b = 0; b < p->B; b++) {
    groups g;
    robocache_status s = group_cloud(ctx, p, b, &g);
    if (s != ROBOCACHE_OK) return s;
    for (int64_t r = 0; r < g.nvox && total + r < cap; r++) {
      int64_t v = g.order[r], cnt = g.seg[v + 1] - g.seg[v];
      const entry *e = g.e + g.seg[v];
      for (int64_t c = 0; c < C; c++) {
        double acc = 0.0;
        for (int64_t j = 0; j < cnt; j++) acc += (double)rc_voxel_coord(p, e[j].idx, c);
        out[(total + r) * C + c] = rc_voxel_f32(acc / (double)cnt);
      }
    }
    total += g.nvox;
    out_off[b + 1] = total < cap ? total : cap;
    free_groups(&g);
  }
  if (total > cap)
    return rc_error(ctx, ROBOCACHE_CAPACITY_EXCEEDED,
                    "voxel_downsample: %lld non-empty voxels do not fit in out (capacity %lld)",
                    (long long)total, (long long)cap);
  return ROBOCACHE_OK;
}
