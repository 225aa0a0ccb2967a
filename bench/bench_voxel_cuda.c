/* GPU timing harness of the CUDA voxelize backend (driven by
 * bench/bench_gpu_voxel.py, which adds the PyTorch baselines):
 *
 *   bench_voxel_cuda CASE POINTS.f32 N C B [ARGS...]
 *     dense MODE DTYPE VX VY VZ XMIN YMIN ZMIN XMAX YMAX ZMAX
 *     hard P M VX VY VZ XMIN YMIN ZMIN XMAX YMAX ZMAX
 *     hard-packed P M ...            (the same, robocache_voxelize_hard_packed)
 *     downsample VX VY VZ            (PCL VoxelGrid grid: no range)
 *
 * POINTS.f32 holds N*C little-endian float32 (the B clouds one after another);
 * POINTS.f32.off, when present, their offsets (B+1 int64), else the clouds
 * have equal sizes N/B. Inputs and outputs are rotated over R copies that span
 * more than 3x a 50 MB L2. Each robocache call (which ends with its one
 * stream synchronisation, for the stats) is timed with CUDA events after 20
 * warm-up calls (median / p10 / p90 in microseconds over 200 calls); then
 * R calls are captured into a CUDA graph on a stream of the context (robocache
 * runs unchecked there: no read-back, no synchronisation) and each of 30
 * replays is timed, per call = replay / R (graph_median_us ...); then, still
 * unchecked, batches of BURST calls are issued back to back (no
 * synchronisation between them, launch overheads overlapping the GPU's work)
 * and each of BURSTS batches is timed, per call = batch / BURST
 * (b2b_median_us ...), also on the host's clock from the first call to the
 * return of the last (b2b_host_median_us: what issuing a call costs the
 * host; back to back is bound by it when it is the larger). For a dense
 * case, a cudaMemsetAsync of the output grid alone is timed the same two
 * ways (grid_memset_graph_us, grid_memset_b2b_us, grid_memset_host_us:
 * writing the grid once, and issuing one call, which every dense call
 * costs at least). Prints one JSON object, with the stats of the last eager
 * call. */
#include "bench_cuda_check.h"
#include "robocache.h"

#include <string.h>
#include <time.h>

#define WARMUP 20
#define CALLS 200
#define REPLAYS 30
#define BURST 50
#define BURSTS 20
#define ROTATE_BYTES (150u << 20)

typedef struct tens {
  robocache_tensor t;
  int64_t shape[ROBOCACHE_MAX_DIMS];
} tens;

/* Fills *x (shape copied into it; the tensor points at x->shape). */
static void make(tens *x, void *data, robocache_dtype dtype, int ndim, const int64_t *shape) {
  memset(x, 0, sizeof *x);
  memcpy(x->shape, shape, (size_t)ndim * sizeof *shape);
  x->t.data = data;
  x->t.device_type = ROBOCACHE_DEVICE_CUDA;
  x->t.dtype = dtype;
  x->t.ndim = ndim;
  x->t.shape = x->shape;
}

static void *dev_alloc(size_t bytes) {
  void *p = NULL;
  CHECK(cudaMalloc(&p, bytes ? bytes : 1));
  CHECK(cudaMemset(p, 0, bytes ? bytes : 1));
  return p;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static float pct(const float *sorted, int n, double q) { return sorted[(int)(q * (n - 1) + 0.5)]; }

/* One voxelize call on rotation set r. */
typedef enum kind { DENSE, HARD, DOWNSAMPLE } kind;

typedef struct job {
  kind kind;
  int packed; /* hard: robocache_voxelize_hard_packed */
  int32_t mode, P, M;
  robocache_dtype dtype;
  float size[3], range[6];
  int64_t N, C, B, grid[3];
  void **pts, **out, **coords, **npts, **nvox;
  void *offsets;
} job;

static robocache_status call(robocache_ctx *ctx, const job *j, int r,
                             robocache_voxel_stats *stats) {
  const int64_t ps[2] = {j->N, j->C}, os[1] = {j->B + 1};
  tens pts, off;
  make(&pts, j->pts[r], ROBOCACHE_DTYPE_F32, 2, ps);
  make(&off, j->offsets, ROBOCACHE_DTYPE_I64, 1, os);
  if (j->kind == DOWNSAMPLE) {
    const int64_t s[2] = {j->N, j->C}, bs[1] = {j->B + 1};
    tens out, out_off;
    make(&out, j->out[r], ROBOCACHE_DTYPE_F32, 2, s);
    make(&out_off, j->coords[r], ROBOCACHE_DTYPE_I64, 1, bs);
    return robocache_voxel_downsample(ctx, &pts.t, &off.t, j->size, NULL, &out.t, &out_off.t,
                                      stats);
  }
  if (j->kind == DENSE) {
    const int64_t F = j->mode <= ROBOCACHE_VOXEL_OCCUPANCY ? 1 : (j->C == 3 ? 3 : j->C - 3);
    const int64_t s[5] = {j->B, F, j->grid[2], j->grid[1], j->grid[0]};
    tens out;
    make(&out, j->out[r], j->dtype, 5, s);
    return robocache_voxelize(ctx, &pts.t, &off.t, j->size, j->range, j->mode, &out.t, stats);
  }
  const int64_t BM = j->B * j->M, vs[3] = {BM, j->P, j->C}, cs[2] = {BM, 4}, ns[1] = {BM},
                bs[1] = {j->B};
  tens v, c, np, nv;
  make(&v, j->out[r], ROBOCACHE_DTYPE_F32, 3, vs);
  make(&c, j->coords[r], ROBOCACHE_DTYPE_I32, 2, cs);
  make(&np, j->npts[r], ROBOCACHE_DTYPE_I32, 1, ns);
  make(&nv, j->nvox[r], ROBOCACHE_DTYPE_I32, 1, bs);
  return (j->packed ? robocache_voxelize_hard_packed : robocache_voxelize_hard)(
      ctx, &pts.t, &off.t, j->size, j->range, j->P, j->M, &v.t, &c.t, &np.t, &nv.t, stats);
}

/* One call of what is timed, on rotation set r (0 when it was issued). */
typedef int (*issue_fn)(const void *arg, int r);

typedef struct robocache_calls {
  robocache_ctx *ctx;
  const job *j;
} robocache_calls;

static int issue_robocache(const void *arg, int r) {
  const robocache_calls *a = arg;
  if (call(a->ctx, a->j, r, NULL) == ROBOCACHE_OK) return 0;
  fprintf(stderr, "robocache: %s\n", robocache_ctx_error_message(a->ctx));
  return 1;
}

typedef struct memset_calls {
  void **out;
  size_t bytes;
  cudaStream_t st;
} memset_calls;

static int issue_memset(const void *arg, int r) {
  const memset_calls *a = arg;
  return cudaMemsetAsync(a->out[r], 0, a->bytes, a->st) != cudaSuccess;
}

/* R calls of f (one per rotation set) captured into a CUDA graph on st; each
 * of REPLAYS replays (after 3) timed, t[i] = replay / R in ms, sorted. */
static void time_graph(cudaStream_t st, int R, issue_fn f, const void *arg, float *t) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int r = 0; r < R; r++)
    if (f(arg, r)) exit(1);
  CHECK(cudaStreamEndCapture(st, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int it = 0; it < 3 + REPLAYS; it++) {
    CHECK(cudaEventRecord(e0, st));
    CHECK(cudaGraphLaunch(exec, st));
    CHECK(cudaEventRecord(e1, st));
    CHECK(cudaEventSynchronize(e1));
    if (it >= 3) CHECK(cudaEventElapsedTime(&t[it - 3], e0, e1));
    if (it >= 3) t[it - 3] /= (float)R;
  }
  qsort(t, REPLAYS, sizeof *t, cmp_float);
  cudaGraphExecDestroy(exec), cudaGraphDestroy(graph);
  cudaEventDestroy(e0), cudaEventDestroy(e1);
}

/* BURSTS batches (after 2) of BURST calls of f issued back to back on st,
 * rotating over R sets; per call in ms: bt[i] on the GPU's clock (events),
 * ht[i] on the host's (first issue to last return); both sorted. */
static void time_b2b(cudaStream_t st, int R, issue_fn f, const void *arg, float *bt, float *ht) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  for (int it = 0; it < 2 + BURSTS; it++) {
    CHECK(cudaEventRecord(e0, st));
    struct timespec h0, h1;
    clock_gettime(CLOCK_MONOTONIC, &h0);
    for (int k = 0; k < BURST; k++)
      if (f(arg, k % R)) exit(1);
    clock_gettime(CLOCK_MONOTONIC, &h1);
    CHECK(cudaEventRecord(e1, st));
    CHECK(cudaEventSynchronize(e1));
    if (it >= 2) CHECK(cudaEventElapsedTime(&bt[it - 2], e0, e1));
    if (it >= 2) bt[it - 2] /= (float)BURST;
    if (it >= 2)
      ht[it - 2] =
          (float)((h1.tv_sec - h0.tv_sec) * 1e3 + (h1.tv_nsec - h0.tv_nsec) * 1e-6) / BURST;
  }
  qsort(bt, BURSTS, sizeof *bt, cmp_float);
  qsort(ht, BURSTS, sizeof *ht, cmp_float);
  cudaEventDestroy(e0), cudaEventDestroy(e1);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: see the header of bench/bench_voxel_cuda.c\n");
    return 2;
  }
  job j;
  memset(&j, 0, sizeof j);
  j.packed = strcmp(argv[1], "hard-packed") == 0;
  j.kind = strcmp(argv[1], "hard") == 0 || j.packed ? HARD
           : strcmp(argv[1], "downsample") == 0     ? DOWNSAMPLE
                                                    : DENSE;
  j.N = atoll(argv[3]);
  j.C = atoll(argv[4]);
  j.B = atoll(argv[5]);
  const int args = j.kind == DOWNSAMPLE ? 3 : 2 + 9;
  if (argc != 6 + args) {
    fprintf(stderr, "expected %d arguments\n", 6 + args - 1);
    return 2;
  }
  if (j.kind == HARD) {
    j.P = atoi(argv[6]);
    j.M = atoi(argv[7]);
  } else if (j.kind == DENSE) {
    j.mode = atoi(argv[6]);
    j.dtype = (robocache_dtype)atoi(argv[7]);
  }
  const int a0 = j.kind == DOWNSAMPLE ? 6 : 8;
  for (int a = 0; a < 3; a++) j.size[a] = (float)atof(argv[a0 + a]);
  for (int a = 0; a < 6 && j.kind != DOWNSAMPLE; a++) j.range[a] = (float)atof(argv[a0 + 3 + a]);
  robocache_ctx *ctx = NULL;
  if (robocache_ctx_create(&ctx) != ROBOCACHE_OK ||
      (j.kind != DOWNSAMPLE &&
       robocache_voxel_grid_size(ctx, j.size, j.range, j.grid) != ROBOCACHE_OK)) {
    fprintf(stderr, "bad grid\n");
    return 2;
  }

  size_t pbytes = (size_t)(j.N * j.C) * sizeof(float), obytes, cbytes = 0;
  if (j.kind == HARD) {
    obytes = (size_t)(j.B * j.M * j.P * j.C) * sizeof(float);
    cbytes = (size_t)(j.B * j.M) * 4 * sizeof(int32_t);
  } else if (j.kind == DOWNSAMPLE) { /* out [N,C], out_offsets (in coords) [B+1] */
    obytes = pbytes;
    cbytes = (size_t)(j.B + 1) * sizeof(int64_t);
  } else {
    int64_t F = j.mode <= ROBOCACHE_VOXEL_OCCUPANCY ? 1 : (j.C == 3 ? 3 : j.C - 3);
    obytes = (size_t)(j.B * F * j.grid[0] * j.grid[1] * j.grid[2]) * robocache_dtype_size(j.dtype);
  }
  int R = (int)(ROTATE_BYTES / (pbytes + obytes + cbytes) + 1);
  R = R > 16 ? 16 : R;

  float *host = malloc(pbytes ? pbytes : 1);
  FILE *f = fopen(argv[2], "rb");
  if (!host || !f || fread(host, 1, pbytes, f) != pbytes) {
    fprintf(stderr, "cannot read %s\n", argv[2]);
    return 2;
  }
  fclose(f);
  /* offsets from POINTS.f32.off (B+1 int64) when present, else equal clouds */
  int64_t *off = malloc((size_t)(j.B + 1) * sizeof *off);
  char path[4096];
  snprintf(path, sizeof path, "%s.off", argv[2]);
  f = fopen(path, "rb");
  if (!f || fread(off, sizeof *off, (size_t)(j.B + 1), f) != (size_t)(j.B + 1)) {
    for (int64_t b = 0; b <= j.B; b++) off[b] = j.N / j.B * b;
    off[j.B] = j.N;
  }
  if (f) fclose(f);
  j.offsets = dev_alloc((size_t)(j.B + 1) * sizeof *off);
  CHECK(cudaMemcpy(j.offsets, off, (size_t)(j.B + 1) * sizeof *off, cudaMemcpyHostToDevice));
  j.pts = calloc((size_t)R, sizeof(void *));
  j.out = calloc((size_t)R, sizeof(void *));
  j.coords = calloc((size_t)R, sizeof(void *));
  j.npts = calloc((size_t)R, sizeof(void *));
  j.nvox = calloc((size_t)R, sizeof(void *));
  for (int r = 0; r < R; r++) {
    j.pts[r] = dev_alloc(pbytes);
    CHECK(cudaMemcpy(j.pts[r], host, pbytes, cudaMemcpyHostToDevice));
    j.out[r] = dev_alloc(obytes);
    if (j.kind != DENSE) j.coords[r] = dev_alloc(cbytes);
    if (j.kind == HARD) {
      j.npts[r] = dev_alloc((size_t)(j.B * j.M) * sizeof(int32_t));
      j.nvox[r] = dev_alloc((size_t)j.B * sizeof(int32_t));
    }
  }

  robocache_voxel_stats stats;
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  float times[CALLS];
  for (int it = 0; it < WARMUP + CALLS; it++) {
    int r = it % R;
    CHECK(cudaEventRecord(e0, 0));
    robocache_status s = call(ctx, &j, r, &stats);
    CHECK(cudaEventRecord(e1, 0));
    if (s != ROBOCACHE_OK) {
      fprintf(stderr, "robocache: %s: %s\n", robocache_status_name(s),
              robocache_ctx_error_message(ctx));
      return 1;
    }
    CHECK(cudaEventSynchronize(e1));
    if (it >= WARMUP) CHECK(cudaEventElapsedTime(&times[it - WARMUP], e0, e1));
  }
  qsort(times, CALLS, sizeof *times, cmp_float);

  /* graph mode: R calls (one per rotation set) captured on a stream of the
   * context; robocache runs unchecked there (no read-back, no sync). */
  cudaStream_t st;
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  robocache_ctx_set_cuda_stream(ctx, st);
  if (call(ctx, &j, 0, &stats) != ROBOCACHE_OK) return 1;
  const robocache_calls rc = {ctx, &j};
  float gtimes[REPLAYS];
  time_graph(st, R, issue_robocache, &rc, gtimes);

  /* back to back: unchecked calls on st, BURST at a time */
  robocache_ctx_set_sync_checks(ctx, 0);
  float btimes[BURSTS], htimes[BURSTS];
  time_b2b(st, R, issue_robocache, &rc, btimes, htimes);

  if (j.kind == DENSE) { /* the output grid written once, by one call */
    const memset_calls mc = {j.out, obytes, st};
    float mg[REPLAYS], mb[BURSTS], mh[BURSTS];
    time_graph(st, R, issue_memset, &mc, mg);
    time_b2b(st, R, issue_memset, &mc, mb, mh);
    printf("{\"grid_memset_graph_us\": %.3f, \"grid_memset_b2b_us\": %.3f, "
           "\"grid_memset_host_us\": %.3f, ",
           1e3 * pct(mg, REPLAYS, 0.5), 1e3 * pct(mb, BURSTS, 0.5), 1e3 * pct(mh, BURSTS, 0.5));
  } else {
    printf("{");
  }
  printf("\"graph_median_us\": %.3f, \"graph_p10_us\": %.3f, \"graph_p90_us\": %.3f, "
         "\"graph_replays\": %d, ",
         1e3 * pct(gtimes, REPLAYS, 0.5), 1e3 * pct(gtimes, REPLAYS, 0.1),
         1e3 * pct(gtimes, REPLAYS, 0.9), REPLAYS);
  printf("\"b2b_median_us\": %.3f, \"b2b_p10_us\": %.3f, \"b2b_p90_us\": %.3f, "
         "\"b2b_calls\": %d, \"b2b_host_median_us\": %.3f, ",
         1e3 * pct(btimes, BURSTS, 0.5), 1e3 * pct(btimes, BURSTS, 0.1),
         1e3 * pct(btimes, BURSTS, 0.9), BURST * BURSTS, 1e3 * pct(htimes, BURSTS, 0.5));
  printf("\"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f, \"calls\": %d, "
         "\"rotation_sets\": %d, \"points_in_range\": %lld, \"voxels_nonempty\": %lld, "
         "\"voxels_dropped_max_voxels\": %lld, \"points_dropped_max_points\": %lld}\n",
         1e3 * pct(times, CALLS, 0.5), 1e3 * pct(times, CALLS, 0.1), 1e3 * pct(times, CALLS, 0.9),
         CALLS, R, (long long)stats.points_in_range, (long long)stats.voxels_nonempty,
         (long long)stats.voxels_dropped_max_voxels, (long long)stats.points_dropped_max_points);
  for (int r = 0; r < R; r++) {
    cudaFree(j.pts[r]), cudaFree(j.out[r]);
    if (j.kind != DENSE) cudaFree(j.coords[r]);
    if (j.kind == HARD) cudaFree(j.npts[r]), cudaFree(j.nvox[r]);
  }
  cudaStreamDestroy(st);
  cudaFree(j.offsets);
  free(j.pts), free(j.out), free(j.coords), free(j.npts), free(j.nvox), free(host), free(off);
  robocache_ctx_free(ctx);
  return 0;
}
