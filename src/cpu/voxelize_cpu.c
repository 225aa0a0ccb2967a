/* Optimised CPU voxelization. Per cloud:
 *   1. classify every point and compute its 64-bit voxel key (voxel_keys_cpu);
 *   2. one pass in input order: look the key up in an open-addressing hash
 *      table that numbers voxels in order of first appearance (it starts
 *      small, to stay in cache for coarse grids, and grows when half full),
 *      and reduce the point into its voxel right away: count, f64 sums,
 *      maximum, or (hard) a copy into the voxel's next free slot;
 *   3. write the per-voxel results.
 * Clouds of a batch run in parallel (OpenMP; each thread has its own hash
 * table and per-voxel arrays, voxel_scratch_cpu); inside one large cloud,
 * steps 1 and 3 are parallel. Each voxel sees its points in
 * input order, so sums are the same f64 sums in the same order as src/ref:
 * results are bitwise identical to it and independent of the thread count. */
#include "cpu/voxel_keys_cpu.h"
#include "cpu/voxel_scratch_cpu.h"

#include <stdlib.h>
#include <string.h>

#define RC_RUN_WIDTH 8 /* widest sums kept in registers along a run */

/* The batch: keys of all N points and the outcome of each cloud. */
typedef struct batch {
  int64_t *key;     /* [N] voxel key, or RC_KEY_RANGE / RC_KEY_NONFINITE */
  int64_t width;    /* accumulators per voxel */
  int64_t nmax;     /* points of the largest cloud */
  int sums, maxima; /* which accumulators the clouds need */
  int threads;
  int64_t *nvox;                /* [B] */
  robocache_voxel_stats *stats; /* [B] */
  float **means;                /* [B] downsample: each cloud's output rows */
} batch;

/* One cloud: its rows, its keys and the scratch it uses. */
typedef struct cloud {
  int64_t b, begin, n;
  rc_voxel_keyer keyer;
  int64_t *key;
  rc_voxel_scratch *sc;
  robocache_voxel_stats *stats;
  int threads;
} cloud;

static void batch_free(batch *w) {
  free(w->key);
  free(w->nvox);
  free(w->stats);
  free(w->means);
}

/* `width` accumulators per voxel, sums and/or maxima. */
static robocache_status batch_alloc(robocache_ctx *ctx, const rc_voxel_problem *p, int64_t width,
                                    int sums, int maxima, batch *w) {
  memset(w, 0, sizeof *w);
  w->width = width;
  w->sums = sums;
  w->maxima = maxima;
  w->nmax = 1;
  for (int64_t b = 0; b < p->B; b++) {
    int64_t begin, end;
    rc_voxel_cloud_rows(p, b, &begin, &end);
    if (end - begin > w->nmax) w->nmax = end - begin;
  }
  w->key = malloc((size_t)(p->N > 0 ? p->N : 1) * sizeof *w->key);
  w->nvox = calloc((size_t)p->B, sizeof *w->nvox);
  w->stats = calloc((size_t)p->B, sizeof *w->stats);
  w->means = calloc((size_t)p->B, sizeof *w->means);
  w->threads = rc_ctx_threads(ctx);
  if (!w->key || !w->nvox || !w->stats || !w->means) {
    batch_free(w);
    return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cpu): out of memory");
  }
  return ROBOCACHE_OK;
}

/* Adds the run of points starting at row i that fall in voxel v (rows with
 * negative keys in between are skipped) to count[v] and, when acc is set,
 * to acc[v]; returns the row after the run. The running sums stay in
 * registers (width known at compile time when inlined with a constant), and
 * are added in input order, as one f64 sum per column. */
static inline int64_t add_run(const rc_voxel_problem *p, cloud *c, int64_t i, int64_t v, int fresh,
                              int64_t col0, const int64_t width) {
  const int64_t key = c->key[i];
  double run[RC_RUN_WIDTH];
  double *a = c->sc->acc ? c->sc->acc + v * width : NULL;
  for (int64_t k = 0; k < width; k++) run[k] = fresh || !a ? 0.0 : a[k];
  int64_t cnt = 0, j = i;
  for (; j < c->n; j++) {
    const int64_t k = c->key[j];
    if (k < 0) continue;
    if (k != key) break;
    cnt++;
    if (a)
      for (int64_t col = 0; col < width; col++)
        run[col] += (double)rc_voxel_coord(p, c->begin + j, col0 + col);
  }
  if (a)
    for (int64_t k = 0; k < width; k++) a[k] = run[k];
  c->sc->count[v] += cnt;
  return j;
}

/* As add_run for one point of any width, and maxima into max. */
static int64_t add_point(const rc_voxel_problem *p, cloud *c, int64_t i, int64_t v, int fresh,
                         int64_t col0) {
  const int64_t width = c->sc->width;
  c->sc->count[v]++;
  if (c->sc->acc) {
    double *a = c->sc->acc + v * width;
    for (int64_t k = 0; k < width; k++)
      a[k] = (fresh ? 0.0 : a[k]) + (double)rc_voxel_coord(p, c->begin + i, col0 + k);
  }
  if (c->sc->max) {
    float *m = c->sc->max + v * width;
    for (int64_t k = 0; k < width; k++) {
      float x = rc_voxel_coord(p, c->begin + i, col0 + k);
      m[k] = fresh || x > m[k] ? x : m[k];
    }
  }
  return i + 1;
}

/* Step 1 for cloud b and an empty hash table. Errors go to ctx (private to
 * the calling thread). */
static robocache_status start_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, batch *w,
                                    rc_voxel_scratch *sc, int64_t b, cloud *c) {
  int64_t end;
  memset(c, 0, sizeof *c);
  c->b = b;
  rc_voxel_cloud_rows(p, b, &c->begin, &end);
  c->n = end - c->begin;
  c->key = w->key + c->begin;
  c->sc = sc;
  c->stats = &w->stats[b];
  c->threads = w->threads;
  robocache_status s = rc_voxel_cloud_keyer(ctx, p, c->begin, end, &c->keyer);
  if (s != ROBOCACHE_OK) return s;
  int64_t nonfinite = 0, range = 0;
  rc_voxel_keys_cpu(p, &c->keyer, c->begin, c->n, c->threads, c->key, &nonfinite, &range);
  c->stats->points_in = c->n;
  c->stats->points_dropped_nonfinite = nonfinite;
  c->stats->points_dropped_range = range;
  c->stats->points_in_range = c->n - nonfinite - range;
  rc_voxel_scratch_reset(sc);
  return ROBOCACHE_OK;
}

/* Step 2 of a cloud: counts and, as requested, sums of columns
 * col0..col0+width-1 or their maxima. */
static void reduce_cloud(const rc_voxel_problem *p, cloud *c, int64_t col0) {
  const int64_t width = c->sc->width;
  for (int64_t i = 0; i < c->n;) {
    if (c->key[i] < 0) {
      i++;
      continue;
    }
    int fresh = 0;
    int64_t v = rc_voxel_scratch_find(c->sc, c->key[i], &fresh);
    if (c->sc->max || width > RC_RUN_WIDTH)
      i = add_point(p, c, i, v, fresh, col0);
    else if (width == 3) /* constant widths: sums in registers */
      i = add_run(p, c, i, v, fresh, col0, 3);
    else if (width == 4)
      i = add_run(p, c, i, v, fresh, col0, 4);
    else
      i = add_run(p, c, i, v, fresh, col0, width);
  }
  c->stats->voxels_nonempty = c->sc->nvox;
}

typedef robocache_status (*cloud_fn)(robocache_ctx *ctx, const rc_voxel_problem *p, const batch *w,
                                     cloud *c);

/* Runs fn on every cloud after step 1, clouds in parallel when the batch is
 * large; sums the per-cloud stats into p->stats. The first failing cloud's
 * error is reported through ctx. */
static robocache_status for_each_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, batch *w,
                                       cloud_fn fn) {
  robocache_status first = ROBOCACHE_OK;
  int64_t first_b = p->B;
  char msg[RC_ERROR_LEN] = "";
  const int outer = p->B > 1 && p->N >= RC_VOXEL_PAR_MIN ? w->threads : 1;
#pragma omp parallel num_threads(outer)
  {
    rc_voxel_scratch sc;
    const int have_scratch =
        rc_voxel_scratch_alloc(&sc, w->nmax, w->width, w->sums, w->maxima) == 0;
    robocache_ctx local = {.num_threads = rc_ctx(ctx)->num_threads};
#pragma omp for schedule(dynamic, 1)
    for (int64_t b = 0; b < p->B; b++) {
      cloud c = {0};
      robocache_status s =
          have_scratch ? start_cloud(&local, p, w, &sc, b, &c)
                       : rc_error(&local, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cpu): out of memory");
      if (s == ROBOCACHE_OK) s = fn(&local, p, w, &c);
      w->nvox[b] = s == ROBOCACHE_OK ? sc.nvox : 0;
      if (s != ROBOCACHE_OK) {
#pragma omp critical(rc_voxel_cpu_error)
        if (b < first_b) {
          first_b = b;
          first = s;
          memcpy(msg, local.error, sizeof msg);
        }
      }
    }
    if (have_scratch) rc_voxel_scratch_free(&sc);
  }
  if (first != ROBOCACHE_OK) return rc_error(ctx, first, "%s", msg);
  for (int64_t b = 0; b < p->B; b++) {
    const robocache_voxel_stats *s = &w->stats[b];
    p->stats->points_in += s->points_in;
    p->stats->points_in_range += s->points_in_range;
    p->stats->points_dropped_range += s->points_dropped_range;
    p->stats->points_dropped_nonfinite += s->points_dropped_nonfinite;
    p->stats->voxels_nonempty += s->voxels_nonempty;
    p->stats->points_dropped_max_points += s->points_dropped_max_points;
    p->stats->voxels_dropped_max_voxels += s->voxels_dropped_max_voxels;
    p->stats->points_dropped_max_voxels += s->points_dropped_max_voxels;
  }
  return ROBOCACHE_OK;
}

static robocache_status dense_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, const batch *w,
                                    cloud *c) {
  (void)ctx, (void)w;
  reduce_cloud(p, c, p->feat_col);
  const int64_t G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2], F = p->F;
  const int64_t nvox = c->sc->nvox, base = c->b * F * G;
  const int32_t dtype = p->out.dtype, mode = p->mode;
#pragma omp parallel for num_threads(c->threads) if (nvox >= RC_VOXEL_PAR_MIN) schedule(static)
  for (int64_t v = 0; v < nvox; v++) {
    const int64_t cell = base + c->sc->vkey[v], cnt = c->sc->count[v];
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
      double r = mode == ROBOCACHE_VOXEL_MAX    ? (double)c->sc->max[v * F + f]
                 : mode == ROBOCACHE_VOXEL_MEAN ? c->sc->acc[v * F + f] / (double)cnt
                                                : c->sc->acc[v * F + f];
      out[f * G] = (float)r;
    }
  }
  return ROBOCACHE_OK;
}

robocache_status rc_voxelize_dense_cpu(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int feats = p->mode >= ROBOCACHE_VOXEL_SUM;
  batch w;
  robocache_status s = batch_alloc(
      ctx, p, feats ? p->F : 0, p->mode == ROBOCACHE_VOXEL_SUM || p->mode == ROBOCACHE_VOXEL_MEAN,
      p->mode == ROBOCACHE_VOXEL_MAX, &w);
  if (s != ROBOCACHE_OK) return s;
  memset(p->out.data, 0, (size_t)rc_view_numel(&p->out) * robocache_dtype_size(p->out.dtype));
  s = for_each_cloud(ctx, p, &w, dense_cloud);
  batch_free(&w);
  return s;
}

/* mmcv hard voxelization of one cloud. */
static robocache_status hard_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, const batch *w,
                                   cloud *c) {
  (void)ctx, (void)w;
  const int64_t P = p->max_points, M = p->max_voxels, C = p->C, b = c->b;
  float *voxels = (float *)p->voxels.data + b * M * P * C;
  int32_t *coords = (int32_t *)p->coords.data + b * M * 4;
  int32_t *num_points = (int32_t *)p->num_points.data + b * M;
  int64_t dropped_points = 0, dropped_voxel_points = 0;
  memset(voxels, 0, (size_t)(M * P * C) * sizeof(float));
  for (int64_t i = 0; i < c->n; i++) {
    if (c->key[i] < 0) continue;
    int fresh;
    int64_t v = rc_voxel_scratch_find(c->sc, c->key[i], &fresh);
    int64_t j = c->sc->count[v]++;
    if (v >= M) {
      dropped_voxel_points++;
    } else if (j >= P) {
      dropped_points++;
    } else {
      float *dst = voxels + (v * P + j) * C;
      for (int64_t k = 0; k < C; k++) dst[k] = rc_voxel_coord(p, c->begin + i, k);
    }
  }
  const int64_t kept = c->sc->nvox < M ? c->sc->nvox : M;
  for (int64_t v = 0; v < M; v++) {
    if (v >= kept) {
      num_points[v] = 0;
      for (int a = 0; a < 4; a++) coords[v * 4 + a] = -1;
      continue;
    }
    int64_t ijk[3];
    rc_voxel_unkey(&c->keyer, c->sc->vkey[v], ijk);
    coords[v * 4 + 0] = (int32_t)b;
    coords[v * 4 + 1] = (int32_t)ijk[2];
    coords[v * 4 + 2] = (int32_t)ijk[1];
    coords[v * 4 + 3] = (int32_t)ijk[0];
    num_points[v] = (int32_t)(c->sc->count[v] < P ? c->sc->count[v] : P);
  }
  ((int32_t *)p->num_voxels.data)[b] = (int32_t)kept;
  c->stats->voxels_nonempty = c->sc->nvox;
  c->stats->points_dropped_max_points = dropped_points;
  c->stats->voxels_dropped_max_voxels = c->sc->nvox - kept;
  c->stats->points_dropped_max_voxels = dropped_voxel_points;
  return ROBOCACHE_OK;
}

robocache_status rc_voxelize_hard_cpu(robocache_ctx *ctx, const rc_voxel_problem *p) {
  batch w;
  robocache_status s = batch_alloc(ctx, p, 0, 0, 0, &w);
  if (s != ROBOCACHE_OK) return s;
  s = for_each_cloud(ctx, p, &w, hard_cloud);
  batch_free(&w);
  return s;
}

/* Reduces the cloud and keeps its means (its output rows) in w->means[b]. */
static robocache_status downsample_cloud(robocache_ctx *ctx, const rc_voxel_problem *p,
                                         const batch *w, cloud *c) {
  reduce_cloud(p, c, 0);
  const int64_t C = p->C, nvox = c->sc->nvox;
  float *m = malloc((size_t)(nvox > 0 ? nvox * C : 1) * sizeof *m);
  if (!m) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cpu): out of memory");
#pragma omp parallel for num_threads(c->threads) if (nvox >= RC_VOXEL_PAR_MIN) schedule(static)
  for (int64_t v = 0; v < nvox; v++)
    for (int64_t k = 0; k < C; k++)
      m[v * C + k] = (float)(c->sc->acc[v * C + k] / (double)c->sc->count[v]);
  w->means[c->b] = m;
  return ROBOCACHE_OK;
}

robocache_status rc_voxel_downsample_cpu(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t cap = p->out_points.shape[0], C = p->C;
  int64_t *out_off = (int64_t *)p->out_offsets.data, total = 0;
  batch w;
  robocache_status s = batch_alloc(ctx, p, C, 1, 0, &w);
  if (s != ROBOCACHE_OK) return s;
  s = for_each_cloud(ctx, p, &w, downsample_cloud);
  out_off[0] = 0;
  for (int64_t b = 0; b < p->B; b++) {
    int64_t row = total < cap ? total : cap;
    total += w.nvox[b];
    out_off[b + 1] = total < cap ? total : cap;
    if (s == ROBOCACHE_OK && out_off[b + 1] > row)
      memcpy((float *)p->out_points.data + row * C, w.means[b],
             (size_t)((out_off[b + 1] - row) * C) * sizeof(float));
    free(w.means[b]);
  }
  batch_free(&w);
  if (s == ROBOCACHE_OK && total > cap)
    return rc_error(ctx, ROBOCACHE_CAPACITY_EXCEEDED,
                    "voxel_downsample: %lld non-empty voxels do not fit in out (capacity %lld)",
                    (long long)total, (long long)cap);
  return s;
}
