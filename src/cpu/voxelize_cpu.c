/* Optimised CPU voxelization. Per cloud:
 *   1. classify every point and compute its 64-bit voxel key (OpenMP);
 *   2. one pass in input order: look the key up in an open-addressing hash
 *      table that numbers voxels in order of first appearance (it starts
 *      small, to stay in cache for coarse grids, and grows when half full),
 *      and reduce the point into its voxel right away: count, f64 sums,
 *      maximum, or (hard) a copy into the voxel's next free slot;
 *   3. write the per-voxel results (OpenMP over voxels).
 * Each voxel sees its points in input order, so sums are the same f64 sums
 * in the same order as src/ref: results are bitwise identical to it and
 * independent of the thread count. */
#include "cpu/voxel_keys_cpu.h"

#include <stdlib.h>
#include <string.h>

#define RC_RUN_WIDTH 8 /* widest sums kept in registers along a run */

typedef struct slot {
  int64_t key; /* -1 = empty */
  int64_t vox; /* voxel number */
} slot;

typedef struct work {
  int64_t *key;   /* [n] voxel key, or RC_KEY_RANGE / RC_KEY_NONFINITE */
  int64_t *vkey;  /* [nvox] key of each voxel */
  int64_t *count; /* [nvox] points per voxel */
  double *acc;    /* [nvox * width] sums (dense SUM/MEAN, downsample) */
  float *max;     /* [nvox * width] maxima (dense MAX) */
  slot *table;
  int64_t tsize; /* power of two */
  int64_t begin, n, n_in, nvox, width;
  rc_voxel_keyer keyer;
  int threads;
} work;

static void work_free(work *w) {
  free(w->key);
  free(w->vkey);
  free(w->count);
  free(w->acc);
  free(w->max);
  free(w->table);
}

/* Workspace for the largest cloud of p; `width` accumulators per voxel of
 * kind acc (sums) or max. */
static robocache_status work_alloc(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t width,
                                   int sums, int maxima, work *w) {
  memset(w, 0, sizeof *w);
  int64_t nmax = 1;
  for (int64_t b = 0; b < p->B; b++) {
    int64_t begin, end;
    rc_voxel_cloud_rows(p, b, &begin, &end);
    if (end - begin > nmax) nmax = end - begin;
  }
  size_t n = (size_t)nmax, wn = n * (size_t)(width > 0 ? width : 1);
  w->width = width;
  w->key = malloc(n * sizeof *w->key);
  w->vkey = malloc(n * sizeof *w->vkey);
  w->count = malloc(n * sizeof *w->count);
  w->acc = sums ? malloc(wn * sizeof *w->acc) : NULL;
  w->max = maxima ? malloc(wn * sizeof *w->max) : NULL;
  w->tsize = 1024;
  w->table = malloc((size_t)w->tsize * sizeof *w->table);
  w->threads = rc_voxel_threads(ctx);
  if (!w->key || !w->vkey || !w->count || (sums && !w->acc) || (maxima && !w->max) || !w->table) {
    work_free(w);
    return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cpu): out of memory");
  }
  return ROBOCACHE_OK;
}

/* Step 1: keys and point counters of the current cloud. */
static void classify(const rc_voxel_problem *p, work *w) {
  int64_t nonfinite = 0, range = 0;
  rc_voxel_keys_cpu(p, &w->keyer, w->begin, w->n, w->threads, w->key, &nonfinite, &range);
  p->stats->points_in += w->n;
  p->stats->points_dropped_nonfinite += nonfinite;
  p->stats->points_dropped_range += range;
  p->stats->points_in_range += w->n - nonfinite - range;
  w->n_in = w->n - nonfinite - range;
}

static inline int64_t slot_of(int64_t key, int64_t mask) {
  return (int64_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 24) & mask;
}

static void table_clear(work *w) {
  for (int64_t i = 0; i < w->tsize; i++) w->table[i].key = -1;
  w->nvox = 0;
}

/* Grows the table 4x (few re-insertions while it is small, then at most a
 * quarter full) and re-inserts the voxels (keys are distinct). */
static int table_grow(work *w) {
  slot *t = malloc((size_t)w->tsize * 4 * sizeof *t);
  if (!t) return -1;
  free(w->table);
  w->table = t;
  w->tsize *= 4;
  const int64_t mask = w->tsize - 1;
  for (int64_t i = 0; i < w->tsize; i++) t[i].key = -1;
  for (int64_t v = 0; v < w->nvox; v++) {
    int64_t h = slot_of(w->vkey[v], mask);
    while (t[h].key != -1) h = (h + 1) & mask;
    t[h] = (slot){w->vkey[v], v};
  }
  return 0;
}

/* The voxel number of key, numbering a new voxel (count 0) when the key is
 * new; *fresh = 1 then. -1 when out of memory. */
static inline int64_t voxel_of(work *w, int64_t key, int *fresh) {
  int64_t mask = w->tsize - 1, h = slot_of(key, mask);
  for (;;) {
    int64_t k = w->table[h].key;
    if (k == key) {
      *fresh = 0;
      return w->table[h].vox;
    }
    if (k == -1) break;
    h = (h + 1) & mask;
  }
  int64_t v = w->nvox++;
  w->vkey[v] = key;
  w->count[v] = 0;
  w->table[h] = (slot){key, v};
  *fresh = 1;
  if (2 * w->nvox > w->tsize && table_grow(w) < 0) return -1;
  return v;
}

/* Adds the run of points starting at row i that fall in voxel v (rows with
 * negative keys in between are skipped) to count[v] and, when acc is set,
 * to acc[v]; returns the row after the run. The running sums stay in
 * registers (width known at compile time when inlined with a constant), and
 * are added in input order, as one f64 sum per column. */
static inline int64_t add_run(const rc_voxel_problem *p, work *w, int64_t i, int64_t v, int fresh,
                              int64_t col0, const int64_t width) {
  const int64_t key = w->key[i];
  double run[RC_RUN_WIDTH];
  double *a = w->acc ? w->acc + v * width : NULL;
  for (int64_t c = 0; c < width; c++) run[c] = fresh || !a ? 0.0 : a[c];
  int64_t cnt = 0, j = i;
  for (; j < w->n; j++) {
    const int64_t k = w->key[j];
    if (k < 0) continue;
    if (k != key) break;
    cnt++;
    if (a)
      for (int64_t c = 0; c < width; c++)
        run[c] += (double)rc_voxel_coord(p, w->begin + j, col0 + c);
  }
  if (a)
    for (int64_t c = 0; c < width; c++) a[c] = run[c];
  w->count[v] += cnt;
  return j;
}

/* As add_run for any width, straight into acc, and maxima into max. */
static int64_t add_point(const rc_voxel_problem *p, work *w, int64_t i, int64_t v, int fresh,
                         int64_t col0) {
  const int64_t width = w->width;
  w->count[v]++;
  if (w->acc) {
    double *a = w->acc + v * width;
    for (int64_t c = 0; c < width; c++)
      a[c] = (fresh ? 0.0 : a[c]) + (double)rc_voxel_coord(p, w->begin + i, col0 + c);
  }
  if (w->max) {
    float *m = w->max + v * width;
    for (int64_t c = 0; c < width; c++) {
      float x = rc_voxel_coord(p, w->begin + i, col0 + c);
      m[c] = fresh || x > m[c] ? x : m[c];
    }
  }
  return i + 1;
}

/* Step 1 for cloud b, and an empty hash table. */
static robocache_status start_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t b,
                                    work *w) {
  int64_t end;
  rc_voxel_cloud_rows(p, b, &w->begin, &end);
  w->n = end - w->begin;
  robocache_status s = rc_voxel_cloud_keyer(ctx, p, w->begin, end, &w->keyer);
  if (s != ROBOCACHE_OK) return s;
  classify(p, w);
  table_clear(w);
  return ROBOCACHE_OK;
}

/* Steps 1 and 2 for cloud b: counts and, as requested by w, sums of columns
 * col0..col0+width-1 or their maxima. */
static robocache_status reduce_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t b,
                                     int64_t col0, work *w) {
  robocache_status s = start_cloud(ctx, p, b, w);
  if (s != ROBOCACHE_OK) return s;
  const int64_t width = w->width;
  for (int64_t i = 0; i < w->n;) {
    if (w->key[i] < 0) {
      i++;
      continue;
    }
    int fresh = 0;
    int64_t v = voxel_of(w, w->key[i], &fresh);
    if (v < 0) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cpu): out of memory");
    if (w->max || width > RC_RUN_WIDTH)
      i = add_point(p, w, i, v, fresh, col0);
    else if (width == 3) /* constant widths: sums in registers */
      i = add_run(p, w, i, v, fresh, col0, 3);
    else if (width == 4)
      i = add_run(p, w, i, v, fresh, col0, 4);
    else
      i = add_run(p, w, i, v, fresh, col0, width);
  }
  p->stats->voxels_nonempty += w->nvox;
  return ROBOCACHE_OK;
}

static void dense_write(const rc_voxel_problem *p, const work *w, int64_t b) {
  const int64_t G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2], F = p->F;
  const int64_t nvox = w->nvox, base = b * F * G;
  const int32_t dtype = p->out.dtype, mode = p->mode;
#pragma omp parallel for num_threads(w->threads) if (nvox >= RC_VOXEL_PAR_MIN) schedule(static)
  for (int64_t v = 0; v < nvox; v++) {
    const int64_t cell = base + w->vkey[v], cnt = w->count[v];
    if (mode == ROBOCACHE_VOXEL_COUNT || mode == ROBOCACHE_VOXEL_OCCUPANCY) {
      int64_t x = mode == ROBOCACHE_VOXEL_COUNT ? cnt : 1;
      if (dtype == ROBOCACHE_DTYPE_I32)
        ((int32_t *)p->out.data)[cell] = (int32_t)x;
      else if (dtype == ROBOCACHE_DTYPE_U8)
        ((uint8_t *)p->out.data)[cell] = (uint8_t)x;
      else
        ((float *)p->out.data)[cell] = (float)x;
      continue;
    }
    float *out = (float *)p->out.data + cell;
    for (int64_t f = 0; f < F; f++) {
      double r = mode == ROBOCACHE_VOXEL_MAX    ? (double)w->max[v * F + f]
                 : mode == ROBOCACHE_VOXEL_MEAN ? w->acc[v * F + f] / (double)cnt
                                                : w->acc[v * F + f];
      out[f * G] = (float)r;
    }
  }
}

robocache_status rc_voxelize_dense_cpu(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int feats = p->mode >= ROBOCACHE_VOXEL_SUM;
  work w;
  robocache_status s = work_alloc(ctx, p, feats ? p->F : 0,
                                  p->mode == ROBOCACHE_VOXEL_SUM || p->mode == ROBOCACHE_VOXEL_MEAN,
                                  p->mode == ROBOCACHE_VOXEL_MAX, &w);
  if (s != ROBOCACHE_OK) return s;
  memset(p->out.data, 0, (size_t)rc_view_numel(&p->out) * robocache_dtype_size(p->out.dtype));
  for (int64_t b = 0; b < p->B && s == ROBOCACHE_OK; b++) {
    s = reduce_cloud(ctx, p, b, p->feat_col, &w);
    if (s == ROBOCACHE_OK) dense_write(p, &w, b);
  }
  work_free(&w);
  return s;
}

/* mmcv hard voxelization of cloud b (keys already in w->key). */
static robocache_status hard_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t b,
                                   work *w) {
  const int64_t P = p->max_points, M = p->max_voxels, C = p->C;
  float *voxels = (float *)p->voxels.data + b * M * P * C;
  int32_t *coords = (int32_t *)p->coords.data + b * M * 4;
  int32_t *num_points = (int32_t *)p->num_points.data + b * M;
  int64_t dropped_points = 0, dropped_voxel_points = 0;
  robocache_status s = start_cloud(ctx, p, b, w);
  if (s != ROBOCACHE_OK) return s;
  memset(voxels, 0, (size_t)(M * P * C) * sizeof(float));
  for (int64_t i = 0; i < w->n; i++) {
    if (w->key[i] < 0) continue;
    int fresh;
    int64_t v = voxel_of(w, w->key[i], &fresh);
    if (v < 0) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cpu): out of memory");
    int64_t j = w->count[v]++;
    if (v >= M) {
      dropped_voxel_points++;
    } else if (j >= P) {
      dropped_points++;
    } else {
      float *dst = voxels + (v * P + j) * C;
      for (int64_t c = 0; c < C; c++) dst[c] = rc_voxel_coord(p, w->begin + i, c);
    }
  }
  const int64_t kept = w->nvox < M ? w->nvox : M;
  for (int64_t v = 0; v < M; v++) {
    if (v >= kept) {
      num_points[v] = 0;
      for (int a = 0; a < 4; a++) coords[v * 4 + a] = -1;
      continue;
    }
    int64_t ijk[3];
    rc_voxel_unkey(&w->keyer, w->vkey[v], ijk);
    coords[v * 4 + 0] = (int32_t)b;
    coords[v * 4 + 1] = (int32_t)ijk[2];
    coords[v * 4 + 2] = (int32_t)ijk[1];
    coords[v * 4 + 3] = (int32_t)ijk[0];
    num_points[v] = (int32_t)(w->count[v] < P ? w->count[v] : P);
  }
  ((int32_t *)p->num_voxels.data)[b] = (int32_t)kept;
  p->stats->voxels_nonempty += w->nvox;
  p->stats->points_dropped_max_points += dropped_points;
  p->stats->voxels_dropped_max_voxels += w->nvox - kept;
  p->stats->points_dropped_max_voxels += dropped_voxel_points;
  return ROBOCACHE_OK;
}

robocache_status rc_voxelize_hard_cpu(robocache_ctx *ctx, const rc_voxel_problem *p) {
  work w;
  robocache_status s = work_alloc(ctx, p, 0, 0, 0, &w);
  for (int64_t b = 0; b < p->B && s == ROBOCACHE_OK; b++) s = hard_cloud(ctx, p, b, &w);
  if (w.key) work_free(&w);
  return s;
}

/* Means of the first `count` voxels of the cloud into out rows row0... */
static void downsample_write(const rc_voxel_problem *p, const work *w, int64_t row0,
                             int64_t count) {
  const int64_t C = p->C;
  float *out = (float *)p->out_points.data + row0 * C;
#pragma omp parallel for num_threads(w->threads) if (count >= RC_VOXEL_PAR_MIN) schedule(static)
  for (int64_t v = 0; v < count; v++)
    for (int64_t c = 0; c < C; c++)
      out[v * C + c] = (float)(w->acc[v * C + c] / (double)w->count[v]);
}

robocache_status rc_voxel_downsample_cpu(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t cap = p->out_points.shape[0];
  int64_t *out_off = (int64_t *)p->out_offsets.data, total = 0;
  work w;
  robocache_status s = work_alloc(ctx, p, p->C, 1, 0, &w);
  if (s != ROBOCACHE_OK) return s;
  out_off[0] = 0;
  for (int64_t b = 0; b < p->B && s == ROBOCACHE_OK; b++) {
    s = reduce_cloud(ctx, p, b, 0, &w);
    if (s != ROBOCACHE_OK) break;
    int64_t fit = total >= cap ? 0 : (cap - total < w.nvox ? cap - total : w.nvox);
    downsample_write(p, &w, total, fit);
    total += w.nvox;
    out_off[b + 1] = total < cap ? total : cap;
  }
  work_free(&w);
  if (s == ROBOCACHE_OK && total > cap)
    return rc_error(ctx, ROBOCACHE_CAPACITY_EXCEEDED,
                    "voxel_downsample: %lld non-empty voxels do not fit in out (capacity %lld)",
                    (long long)total, (long long)cap);
  return s;
}
