/* Optimised CPU voxelization. Per cloud, in blocks of RC_KEY_BLOCK rows:
 *   1. classify every point and compute its 64-bit voxel key (voxel_keys_cpu),
 *      into a small buffer that stays in L1 (or, for one large cloud and
 *      several threads, for the whole cloud ahead, in parallel);
 *   2. in input order: look the key up in an open-addressing hash table that
 *      numbers voxels in order of first appearance (it starts small, to stay
 *      in cache for coarse grids, and grows when half full), and reduce the
 *      point into its voxel right away: count, f64 sums, maximum, or (hard) a
 *      copy into the voxel's next free slot;
 *   3. write the per-voxel results.
 * PCL grids (downsample without a range) first use a fixed origin, which
 * needs no pass for the cloud's minimum, and start the cloud over with its
 * own grid if a point falls outside (rc_voxel_pcl_fixed_keyer).
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

/* The batch: the outcome of each cloud, and the keys of clouds whose keys
 * are computed ahead. */
typedef struct batch {
  int64_t *key;     /* [N] keys computed ahead (large clouds, one at a time, threads) or NULL */
  int64_t width;    /* accumulators per voxel */
  int64_t nmax;     /* points of the largest cloud */
  int sums, maxima; /* which accumulators the clouds need */
  int threads;      /* context threads */
  int outer;        /* threads over the clouds */
  int64_t *nvox;    /* [B] */
  robocache_voxel_stats *stats; /* [B] */
  float **means;                /* [B] downsample: each cloud's output rows */
} batch;

/* One cloud: its rows, its keyer, its keys and the scratch it uses. */
typedef struct cloud {
  int64_t b, begin, n;
  rc_voxel_keyer keyer;
  int fixed;    /* keyer is the fixed PCL grid (may not hold the cloud) */
  int64_t *key; /* [n] keys computed ahead, or NULL: block by block into kbuf */
  int64_t kbuf[RC_KEY_BLOCK];
  int64_t col0; /* first column reduced */
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
  w->threads = rc_ctx_threads(ctx);
  w->outer = p->B > 1 && p->N >= RC_VOXEL_PAR_MIN ? w->threads : 1;
  const int ahead = w->outer == 1 && w->threads > 1 && w->nmax >= RC_VOXEL_PAR_MIN;
  w->key = ahead ? malloc((size_t)p->N * sizeof *w->key) : NULL;
  w->nvox = calloc((size_t)p->B, sizeof *w->nvox);
  w->stats = calloc((size_t)p->B, sizeof *w->stats);
  w->means = calloc((size_t)p->B, sizeof *w->means);
  if ((ahead && !w->key) || !w->nvox || !w->stats || !w->means) {
    batch_free(w);
    return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cpu): out of memory");
  }
  return ROBOCACHE_OK;
}

/* Adds the run of rows i0 + j, i0 + j + 1, ... (j < m) that fall in voxel v
 * (rows with negative keys in between are skipped) to count[v] and, when acc
 * is set, to acc[v]; returns the j after the run. The running sums stay in
 * registers (width and column stride s1 known at compile time when inlined
 * with constants), and are added in input order, as one f64 sum per column. */
static inline int add_run(const rc_voxel_problem *p, const cloud *c, const int64_t *key, int64_t i0,
                          int j, int m, int64_t v, int fresh, const int64_t width,
                          const int64_t s1) {
  const int64_t s0 = p->points.strides[0], k0 = key[j];
  const float *rows = (const float *)p->points.data + (c->begin + i0) * s0 + c->col0 * s1;
  double run[RC_RUN_WIDTH];
  double *a = c->sc->acc ? c->sc->acc + v * width : NULL;
  for (int64_t k = 0; k < width; k++) run[k] = fresh || !a ? 0.0 : a[k];
  int64_t cnt = 0;
  for (; j < m; j++) {
    const int64_t k = key[j];
    if (k < 0) continue;
    if (k != k0) break;
    cnt++;
    if (a)
      for (int64_t col = 0; col < width; col++) run[col] += (double)rows[j * s0 + col * s1];
  }
  if (a)
    for (int64_t k = 0; k < width; k++) a[k] = run[k];
  c->sc->count[v] += cnt;
  return j;
}

/* As add_run for the one point in row i, of any width, and maxima into max. */
static void add_point(const rc_voxel_problem *p, const cloud *c, int64_t i, int64_t v, int fresh) {
  const int64_t width = c->sc->width;
  c->sc->count[v]++;
  if (c->sc->acc) {
    double *a = c->sc->acc + v * width;
    for (int64_t k = 0; k < width; k++)
      a[k] = (fresh ? 0.0 : a[k]) + (double)rc_voxel_coord(p, c->begin + i, c->col0 + k);
  }
  if (c->sc->max) {
    uint32_t *m = c->sc->max + v * width;
    for (int64_t k = 0; k < width; k++) {
      uint32_t x = rc_voxel_max_key(rc_voxel_coord(p, c->begin + i, c->col0 + k));
      m[k] = fresh || x > m[k] ? x : m[k];
    }
  }
}

/* Switches the cloud to its own PCL grid and starts it over: empty table,
 * stats of no point yet. */
static robocache_status use_cloud_grid(robocache_ctx *ctx, const rc_voxel_problem *p, cloud *c) {
  c->fixed = 0;
  rc_voxel_scratch_reset(c->sc);
  *c->stats = (robocache_voxel_stats){.points_in = c->n};
  return rc_voxel_cloud_keyer(ctx, p, c->begin, c->begin + c->n, &c->keyer);
}

/* Keys of the whole cloud on c->threads threads, into c->key. */
static robocache_status keys_ahead(robocache_ctx *ctx, const rc_voxel_problem *p, cloud *c) {
  int64_t nonfinite = 0, range = 0;
  rc_voxel_keys_cpu(p, &c->keyer, c->begin, c->n, c->threads, c->key, &nonfinite, &range);
  if (c->fixed && range > 0) {
    robocache_status s = use_cloud_grid(ctx, p, c);
    return s != ROBOCACHE_OK ? s : keys_ahead(ctx, p, c);
  }
  c->stats->points_dropped_nonfinite = nonfinite;
  c->stats->points_dropped_range = range;
  return ROBOCACHE_OK;
}

/* Step 1 for cloud b and an empty hash table: the keyer and, for a large
 * cloud when w->key is set, all keys. Errors go to ctx (private to the
 * calling thread). */
static robocache_status start_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, batch *w,
                                    rc_voxel_scratch *sc, int64_t b, cloud *c) {
  int64_t end;
  memset(c, 0, sizeof *c);
  c->b = b;
  rc_voxel_cloud_rows(p, b, &c->begin, &end);
  c->n = end - c->begin;
  c->key = w->key && c->n >= RC_VOXEL_PAR_MIN ? w->key + c->begin : NULL;
  c->sc = sc;
  c->stats = &w->stats[b];
  c->threads = w->threads;
  c->fixed = p->keyer.pcl;
  c->keyer = p->keyer;
  if (c->fixed) rc_voxel_pcl_fixed_keyer(p, &c->keyer);
  rc_voxel_scratch_reset(sc);
  *c->stats = (robocache_voxel_stats){.points_in = c->n};
  return c->key ? keys_ahead(ctx, p, c) : ROBOCACHE_OK;
}

typedef void (*block_fn)(const rc_voxel_problem *p, cloud *c, const int64_t *key, int64_t i0,
                         int m);

/* Runs fn on rows i0 .. i0 + m - 1 of the cloud for each block, in order,
 * with their keys (computed ahead, or now, counting the dropped points). A
 * point outside the fixed PCL grid starts the cloud over with its own grid
 * (fn's state is then the scratch and the stats alone: downsample). */
static robocache_status each_block(robocache_ctx *ctx, const rc_voxel_problem *p, cloud *c,
                                   block_fn fn) {
  for (int64_t i0 = 0; i0 < c->n;) {
    const int m = (int)(c->n - i0 < RC_KEY_BLOCK ? c->n - i0 : RC_KEY_BLOCK);
    const int64_t *key = c->key ? c->key + i0 : c->kbuf;
    if (!c->key) {
      int64_t nonfinite = 0, range = 0;
      rc_voxel_keys_block(p, &c->keyer, c->begin + i0, m, c->kbuf, &nonfinite, &range);
      if (c->fixed && range > 0) {
        robocache_status s = use_cloud_grid(ctx, p, c);
        if (s != ROBOCACHE_OK) return s;
        i0 = 0;
        continue;
      }
      c->stats->points_dropped_nonfinite += nonfinite;
      c->stats->points_dropped_range += range;
    }
    fn(p, c, key, i0, m);
    i0 += m;
  }
  c->stats->points_in_range =
      c->n - c->stats->points_dropped_nonfinite - c->stats->points_dropped_range;
  return ROBOCACHE_OK;
}

/* Step 2 for one block: counts and, as requested, sums of columns
 * col0..col0+width-1 or their maxima. */
static void reduce_block(const rc_voxel_problem *p, cloud *c, const int64_t *key, int64_t i0,
                         int m) {
  const int64_t width = c->sc->width, s1 = p->points.strides[1];
  for (int j = 0; j < m;) {
    if (key[j] < 0) {
      j++;
      continue;
    }
    int fresh = 0;
    int64_t v = rc_voxel_scratch_find(c->sc, key[j], &fresh);
    if (c->sc->max || width > RC_RUN_WIDTH)
      add_point(p, c, i0 + j++, v, fresh);
    else if (width == 3 && s1 == 1) /* constant widths and strides: sums in registers */
      j = add_run(p, c, key, i0, j, m, v, fresh, 3, 1);
    else if (width == 4 && s1 == 1)
      j = add_run(p, c, key, i0, j, m, v, fresh, 4, 1);
    else
      j = add_run(p, c, key, i0, j, m, v, fresh, width, s1);
  }
}

/* Steps 1 and 2 of a cloud, reducing columns col0.. */
static robocache_status reduce_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, cloud *c,
                                     int64_t col0) {
  c->col0 = col0;
  robocache_status s = each_block(ctx, p, c, reduce_block);
  c->stats->voxels_nonempty = c->sc->nvox;
  return s;
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
#pragma omp parallel num_threads(w->outer)
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
#pragma omp critical
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
  (void)w;
  robocache_status s = reduce_cloud(ctx, p, c, p->feat_col);
  if (s != ROBOCACHE_OK) return s;
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
      double r = mode == ROBOCACHE_VOXEL_MAX    ? (double)rc_voxel_max_value(c->sc->max[v * F + f])
                 : mode == ROBOCACHE_VOXEL_MEAN ? c->sc->acc[v * F + f] / (double)cnt
                                                : c->sc->acc[v * F + f];
      out[f * G] = rc_voxel_f32(r);
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

/* Step 2 of mmcv hard voxelization for one block. */
static void hard_block(const rc_voxel_problem *p, cloud *c, const int64_t *key, int64_t i0, int m) {
  const int64_t P = p->max_points, M = p->max_voxels, C = p->C;
  float *voxels = (float *)p->voxels.data + c->b * M * P * C;
  for (int j = 0; j < m; j++) {
    if (key[j] < 0) continue;
    int fresh;
    int64_t v = rc_voxel_scratch_find(c->sc, key[j], &fresh);
    int64_t slot = c->sc->count[v]++;
    if (v >= M) {
      c->stats->points_dropped_max_voxels++;
    } else if (slot >= P) {
      c->stats->points_dropped_max_points++;
    } else {
      float *dst = voxels + (v * P + slot) * C;
      for (int64_t k = 0; k < C; k++) dst[k] = rc_voxel_coord(p, c->begin + i0 + j, k);
    }
  }
}

/* mmcv hard voxelization of one cloud. */
static robocache_status hard_cloud(robocache_ctx *ctx, const rc_voxel_problem *p, const batch *w,
                                   cloud *c) {
  (void)w;
  const int64_t P = p->max_points, M = p->max_voxels, C = p->C, b = c->b;
  int32_t *coords = (int32_t *)p->coords.data + b * M * 4;
  int32_t *num_points = (int32_t *)p->num_points.data + b * M;
  memset((float *)p->voxels.data + b * M * P * C, 0, (size_t)(M * P * C) * sizeof(float));
  robocache_status s = each_block(ctx, p, c, hard_block);
  if (s != ROBOCACHE_OK) return s;
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
  c->stats->voxels_dropped_max_voxels = c->sc->nvox - kept;
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
  robocache_status s = reduce_cloud(ctx, p, c, 0);
  if (s != ROBOCACHE_OK) return s;
  const int64_t C = p->C, nvox = c->sc->nvox;
  float *m = malloc((size_t)(nvox > 0 ? nvox * C : 1) * sizeof *m);
  if (!m) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cpu): out of memory");
#pragma omp parallel for num_threads(c->threads) if (nvox >= RC_VOXEL_PAR_MIN) schedule(static)
  for (int64_t v = 0; v < nvox; v++)
    for (int64_t k = 0; k < C; k++)
      m[v * C + k] = rc_voxel_f32(c->sc->acc[v * C + k] / (double)c->sc->count[v]);
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
