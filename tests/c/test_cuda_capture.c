/* CUDA-graph capture of resample (unchecked mode) on a non-default stream,
 * replayed and compared with the reference backend (bounds as in
 * test_cuda_align.c): a cold capture of the row path (the process's first
 * call), a cold and a warm capture of the split path, and a row whose length
 * is out of range, which the replay marks invalid instead of reporting.
 * Which kernels a capture launched is read from its graph. Exit 77 without
 * a usable GPU. */
#include "cuda_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fresh context whose calls go to a new non-blocking *stream. */
static robocache_ctx *ctx_on_new_stream(cudaStream_t *stream) {
  CU(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_cuda_stream(ctx, *stream), ROBOCACHE_OK);
  return ctx;
}

/* What a captured call launched: its kernel nodes, and whether one of them
 * may use more than the default 48 KB of dynamic shared memory (only the row
 * path's kernels ask for more). */
typedef struct {
  int kernels, row;
} graph_info;

static graph_info graph_info_of(cudaGraph_t graph) {
  size_t n = 0;
  CU(cudaGraphGetNodes(graph, NULL, &n));
  cudaGraphNode_t *nodes = calloc(n, sizeof *nodes);
  assert_non_null(nodes);
  CU(cudaGraphGetNodes(graph, nodes, &n));
  graph_info info = {0, 0};
  for (size_t i = 0; i < n; i++) {
    enum cudaGraphNodeType type;
    CU(cudaGraphNodeGetType(nodes[i], &type));
    if (type != cudaGraphNodeTypeKernel) continue;
    struct cudaKernelNodeParams kp;
    struct cudaFuncAttributes fa;
    CU(cudaGraphKernelNodeGetParams(nodes[i], &kp));
    CU(cudaFuncGetAttributes(&fa, kp.func));
    info.kernels++;
    info.row |= fa.maxDynamicSharedSizeBytes > 48 * 1024;
  }
  free(nodes);
  return info;
}

/* Captures gpu_resample(ctx, d, o) on `stream` into a CUDA graph, replays it
 * once over poisoned outputs and copies out / valid back to *gout / *gvalid
 * (shapes of spec c); *info (unless NULL) = graph_info_of the graph. Fails
 * the test when the captured call fails. */
static void capture_and_replay(robocache_ctx *ctx, cudaStream_t stream, const dev_args *d,
                               const robocache_interp_options *o, const spec *c, rct_tensor **gout,
                               rct_tensor **gvalid, graph_info *info) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CU(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  robocache_status s = gpu_resample(ctx, d, o);
  CU(cudaStreamEndCapture(stream, &graph));
  if (s != ROBOCACHE_OK) fail_msg("captured resample: %s", robocache_ctx_error_message(ctx));
  if (info) *info = graph_info_of(graph);
  CU(cudaGraphInstantiate(&exec, graph, 0));
  poison(d->out), poison(d->valid);
  CU(cudaGraphLaunch(exec, stream));
  CU(cudaStreamSynchronize(stream));
  *gout = rct_make3(c->odt, c->B, c->T, c->D);
  *gvalid = rct_make2(ROBOCACHE_DTYPE_U8, c->B, c->T);
  from_dev(*gout, d->out), from_dev(*gvalid, d->valid);
  CU(cudaGraphExecDestroy(exec));
  CU(cudaGraphDestroy(graph));
}

/* Captures the resample of g (spec c) on `stream`, replays it and fails
 * unless out and valid match the reference outputs in g->a (filled by
 * rct_resample); *info as capture_and_replay. */
static void assert_capture_matches(robocache_ctx *ctx, cudaStream_t stream, const gpu_case *g,
                                   const spec *c, const char *what, graph_info *info) {
  rct_tensor *gout, *gvalid;
  capture_and_replay(ctx, stream, &g->d, &g->a.opt, c, &gout, &gvalid, info);
  char msg[64];
  snprintf(msg, sizeof msg, "%s valid", what);
  rct_assert_bits_equal(gvalid, g->a.valid, msg);
  rct_assert_close(gout, g->a.out, 2e-6, rtol_of(c->odt), what);
  rct_free(gout), rct_free(gvalid);
}

/* Case c (seed) with its reference outputs in g->a, uploaded, and a fresh
 * context whose calls go to a new non-blocking *stream (case_on_stream_free
 * undoes it). */
static robocache_ctx *case_on_stream(const spec *c, uint64_t seed, gpu_case *g,
                                     cudaStream_t *stream) {
  rct_rng rng = rct_rng_seed(seed);
  *g = case_new(c, &rng);
  assert_int_equal(rct_resample(&g->a, 1, NULL, 0), ROBOCACHE_OK);
  case_upload(g);
  return ctx_on_new_stream(stream);
}

static void case_on_stream_free(robocache_ctx *ctx, cudaStream_t stream, gpu_case *g) {
  robocache_ctx_free(ctx);
  CU(cudaStreamDestroy(stream));
  case_free(g);
}

/* A case of the default options (linear, clamp, int64 ns), bf16 values and
 * out: the split and row paths' kind. */
static spec bf16_default_options(int64_t B, int64_t S, int64_t T, int64_t D) {
  spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_CLAMP};
  c.vdt = c.odt = ROBOCACHE_DTYPE_BF16, c.tdt = ROBOCACHE_DTYPE_I64;
  c.B = B, c.S = S, c.T = T, c.D = D;
  return c;
}

/* A launch for the split path (rows too long for the row path: 2 T < S)
 * captured into a CUDA graph: first by a fresh context (its workspace cannot
 * grow during the capture: the warp path runs instead, one kernel), then
 * after an eager call (the split path, its items in the workspace: the
 * decide and move kernels). */
static void test_graph_capture_many_targets(void **state) {
  (void)state;
  spec c = bf16_default_options(70, 2100, 1000, 32);
  gpu_case g;
  cudaStream_t stream;
  robocache_ctx *ctx = case_on_stream(&c, 10, &g, &stream);
  for (int warm = 0; warm < 2; warm++) {
    graph_info info;
    if (warm) assert_int_equal(gpu_resample(ctx, &g.d, &g.a.opt), ROBOCACHE_OK);
    assert_capture_matches(ctx, stream, &g, &c, warm ? "warm capture" : "cold capture", &info);
    assert_int_equal(info.kernels, 1 + warm);
    assert_int_equal(info.row, 0);
  }
  case_on_stream_free(ctx, stream, &g);
}

/* A cold capture (the process's first call: this test runs first) of a
 * launch for the row path (test_cuda_align.c, test_resample_row_path): on
 * sm_90 and later its graph must hold a row kernel, whose shared-memory
 * attribute the captured call sets itself. */
static void test_cold_capture_row_path(void **state) {
  (void)state;
  spec c = bf16_default_options(140, 701, 501, 12);
  gpu_case g;
  cudaStream_t stream;
  robocache_ctx *ctx = case_on_stream(&c, 1310, &g, &stream);
  graph_info info;
  int device = 0, major = 0;
  assert_capture_matches(ctx, stream, &g, &c, "cold capture", &info);
  CU(cudaGetDevice(&device));
  CU(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  assert_int_equal(info.row, major >= 9);
  case_on_stream_free(ctx, stream, &g);
}

/* Captured on a non-default stream, replayed: same results as the reference;
 * a row whose length is out of range is then marked invalid (NaN), not an
 * error, and nothing outside the tensors is read (compute-sanitizer). */
static void test_graph_capture(void **state) {
  (void)state;
  spec c = {.method = ROBOCACHE_LINEAR, .extrapolate = ROBOCACHE_EXTRAP_FILL};
  c.vdt = c.odt = ROBOCACHE_DTYPE_BF16, c.tdt = ROBOCACHE_DTYPE_I64;
  c.B = 6, c.S = 40, c.T = 30, c.D = 32;
  gpu_case g;
  cudaStream_t stream;
  robocache_ctx *ctx = case_on_stream(&c, 8, &g, &stream);
  assert_capture_matches(ctx, stream, &g, &c, "captured", NULL);
  rct_set_i64(g.a.lengths, 3, 0);
  CU(cudaMemcpy(g.d.lengths->t.data, g.a.lengths->t.data, g.d.lengths->nbytes,
                cudaMemcpyHostToDevice));
  rct_tensor *gout, *gvalid;
  capture_and_replay(ctx, stream, &g.d, &g.a.opt, &c, &gout, &gvalid, NULL);
  int64_t nt = rct_get_i64(g.a.target_lengths, 3);
  for (int64_t t = 0; t < c.T; t++) {
    assert_int_equal(rct_get(gvalid, 3 * c.T + t), 0);
    for (int64_t e = 0; e < c.D; e++) {
      double v = rct_get(gout, (3 * c.T + t) * c.D + e);
      if (t < nt ? !isnan(v) : v != 0)
        fail_msg("bad row, target %lld channel %lld: %g", (long long)t, (long long)e, v);
    }
  }
  rct_free(gout), rct_free(gvalid);
  case_on_stream_free(ctx, stream, &g);
}

int main(void) {
  rct_require_cuda();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cold_capture_row_path), /* first: its capture is a cold one */
      cmocka_unit_test(test_graph_capture),
      cmocka_unit_test(test_graph_capture_many_targets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
