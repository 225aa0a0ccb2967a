/* Calls chained on one stream with no synchronisation between them, each
 * reading what the previous one wrote and writing what it read (on sm_90 and
 * later each call's first kernel is a programmatic dependent launch of the
 * stream's previous kernel and must wait for it: docs/cuda.md, "Chained
 * calls"). Unchecked mode (no read-back, so no synchronisation inside a
 * call). The expected results are exact: every target lies on a sample, so
 * each call copies rows: row j of its output is row p(j) of its input, with
 * p(j) = (j + S/2 + 1) mod S except p(0) = p(1). The first rows of a call
 * come from rows that the last blocks of the call before wrote, and the set
 * of rows changes from call to call (one lost, one doubled), so a call that
 * read its input early would read other rows.
 *   - resample on the warp, wide and split paths: call k maps buffer A to
 *     buffer B (or B to A); the last output against the map applied n times
 *     on the host, bit for bit;
 *   - dense voxelize of the points that the resample before it wrote, every
 *     call into the same grid: COUNT (i32: two kernels; f32: three) and SUM /
 *     MEAN (five kernels; 128^3 cells of 2^20 points, so cells of one point
 *     and groups); the last grid equals the CPU backend's of the last
 *     points, bit for bit;
 *   - hard voxelization likewise (voxels past max_voxels dropped). */
#include "support.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#define CU(call) assert_int_equal((int)(call), (int)cudaSuccess)

/* A device tensor of h's dtype, shape and strides (kept by h), h's bytes
 * copied in when `copy`, else 0xFF bytes. */
static robocache_tensor dev_of(const rct_tensor *h, int copy) {
  robocache_tensor t = h->t;
  t.device_type = ROBOCACHE_DEVICE_CUDA;
  t.device_id = 0;
  CU(cudaMalloc(&t.data, h->nbytes));
  if (copy)
    CU(cudaMemcpy(t.data, h->t.data, h->nbytes, cudaMemcpyHostToDevice));
  else
    CU(cudaMemset(t.data, 0xFF, h->nbytes));
  return t;
}

/* The memory of a C-contiguous [B,S,C] tensor seen as points [B * S, C]. */
static robocache_tensor points_view(const robocache_tensor *v, int64_t shape[2],
                                    int64_t strides[2]) {
  robocache_tensor t = *v;
  shape[0] = v->shape[0] * v->shape[1], shape[1] = v->shape[2];
  strides[0] = shape[1], strides[1] = 1;
  t.ndim = 2, t.shape = shape, t.strides = strides;
  return t;
}

/* An unchecked context on a new non-blocking stream. */
static robocache_ctx *chain_ctx(cudaStream_t *stream) {
  CU(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_cuda_stream(ctx, *stream), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_sync_checks(ctx, 0), ROBOCACHE_OK);
  return ctx;
}

/* p(j) for rows of S >= 4. */
static int64_t row_of(int64_t j, int64_t S) { return ((j ? j : 1) + S / 2 + 1) % S; }

/* The resample tensors of a chain: values x0 [1,S,D] f32 in [0, 32), times
 * s * 1000 ns, target j at the time of sample p(j) (above). */
typedef struct chain {
  rct_tensor *x0, *times, *targets;
  robocache_tensor buf[2], times_d, targets_d;
  robocache_interp_options opt;
} chain;

static void chain_make(chain *c, int64_t S, int64_t D, uint64_t seed) {
  rct_rng rng = rct_rng_seed(seed);
  c->x0 = rct_make3(ROBOCACHE_DTYPE_F32, 1, S, D);
  rct_fill_uniform(c->x0, &rng, 0.0, 32.0);
  c->times = rct_make2(ROBOCACHE_DTYPE_I64, 1, S);
  c->targets = rct_make2(ROBOCACHE_DTYPE_I64, 1, S);
  for (int64_t j = 0; j < S; j++) {
    rct_set_i64(c->times, j, j * 1000);
    rct_set_i64(c->targets, j, row_of(j, S) * 1000);
  }
  c->buf[0] = dev_of(c->x0, 1);
  c->buf[1] = dev_of(c->x0, 0);
  c->times_d = dev_of(c->times, 1);
  c->targets_d = dev_of(c->targets, 1);
  robocache_interp_options_init(&c->opt);
}

/* Call k of the chain: buffer k % 2 to buffer (k + 1) % 2. */
static void chain_step(robocache_ctx *ctx, chain *c, int k) {
  robocache_status s = robocache_resample(ctx, &c->buf[k % 2], &c->times_d, NULL, &c->targets_d,
                                          NULL, &c->opt, &c->buf[(k + 1) % 2], NULL);
  if (s != ROBOCACHE_OK) fail_msg("chained resample %d: %s", k, robocache_ctx_error_message(ctx));
}

/* The output of n calls: row j is row p(p(...p(j))) (n times) of x0. */
static rct_tensor *chain_expected(const chain *c, int n) {
  const int64_t S = c->x0->shape[1], D = c->x0->shape[2];
  rct_tensor *e = rct_make3(ROBOCACHE_DTYPE_F32, 1, S, D);
  for (int64_t j = 0; j < S; j++) {
    int64_t from = j;
    for (int k = 0; k < n; k++) from = row_of(from, S);
    memcpy((float *)e->t.data + j * D, (const float *)c->x0->t.data + from * D,
           (size_t)D * sizeof(float));
  }
  return e;
}

static void chain_free(chain *c) {
  CU(cudaFree(c->buf[0].data)), CU(cudaFree(c->buf[1].data));
  CU(cudaFree(c->times_d.data)), CU(cudaFree(c->targets_d.data));
  rct_free(c->x0), rct_free(c->times), rct_free(c->targets);
}

/* n chained resamples of [1,S,D]; the last output against chain_expected. */
static void check_resample_chain(int64_t S, int64_t D, int n, const char *what) {
  cudaStream_t stream;
  robocache_ctx *ctx = chain_ctx(&stream);
  chain c;
  chain_make(&c, S, D, (uint64_t)(S + D));
  for (int k = 0; k < n; k++) chain_step(ctx, &c, k);
  CU(cudaStreamSynchronize(stream));
  rct_tensor *got = rct_make3(ROBOCACHE_DTYPE_F32, 1, S, D), *want = chain_expected(&c, n);
  CU(cudaMemcpy(got->t.data, c.buf[n % 2].data, got->nbytes, cudaMemcpyDeviceToHost));
  rct_assert_bits_equal(got, want, what);
  rct_free(got), rct_free(want);
  chain_free(&c);
  robocache_ctx_free(ctx);
  CU(cudaStreamDestroy(stream));
}

static void test_resample_chains(void **state) {
  (void)state;
  check_resample_chain(65536, 3, 20, "warp path (D = 3)");
  check_resample_chain(65536, 64, 20, "wide path (D = 64)");
  check_resample_chain(1 << 20, 16, 20, "split path (2^20 targets)");
}

/* n rounds of (resample, voxelize `mode` of what it wrote into one grid of
 * dtype odt, cubic voxels of `voxel` m over [0, 32)^3); the last grid
 * against the CPU backend on the last points. */
static void check_voxel_chain(robocache_voxel_mode mode, robocache_dtype odt, float voxel, int n,
                              const char *what) {
  const float size[3] = {voxel, voxel, voxel}, range[6] = {0, 0, 0, 32, 32, 32};
  const int64_t S = 1 << 20, g = (int64_t)(32 / voxel); /* the warp path: 4 channels */
  cudaStream_t stream;
  robocache_ctx *ctx = chain_ctx(&stream);
  chain c;
  chain_make(&c, S, 4, 5);
  int64_t gshape[5] = {1, 1, g, g, g};
  rct_tensor *grid = rct_make(odt, 5, gshape), *want = rct_make(odt, 5, gshape);
  robocache_tensor grid_d = dev_of(grid, 0);
  int64_t pshape[2], pstrides[2];
  for (int k = 0; k < n; k++) {
    chain_step(ctx, &c, k);
    robocache_tensor pts = points_view(&c.buf[(k + 1) % 2], pshape, pstrides);
    robocache_status s = robocache_voxelize(ctx, &pts, NULL, size, range, mode, &grid_d, NULL);
    if (s != ROBOCACHE_OK) fail_msg("chained voxelize %d: %s", k, robocache_ctx_error_message(ctx));
  }
  CU(cudaStreamSynchronize(stream));
  CU(cudaMemcpy(grid->t.data, grid_d.data, grid->nbytes, cudaMemcpyDeviceToHost));
  rct_tensor *last = chain_expected(&c, n);
  const robocache_tensor hp = points_view(&last->t, pshape, pstrides);
  robocache_ctx *cpu = NULL;
  assert_int_equal(robocache_ctx_create(&cpu), ROBOCACHE_OK);
  assert_int_equal(robocache_voxelize(cpu, &hp, NULL, size, range, mode, &want->t, NULL),
                   ROBOCACHE_OK);
  rct_assert_bits_equal(grid, want, what);
  robocache_ctx_free(cpu);
  rct_free(grid), rct_free(want), rct_free(last);
  CU(cudaFree(grid_d.data));
  chain_free(&c);
  robocache_ctx_free(ctx);
  CU(cudaStreamDestroy(stream));
}

/* Host tensors for the four outputs of hard voxelization: voxels [M,P,4],
 * coords [M,4], num_points [M], num_voxels [1]. */
static void hard_outputs(int64_t M, int64_t P, rct_tensor *t[4]) {
  t[0] = rct_make3(ROBOCACHE_DTYPE_F32, M, P, 4);
  t[1] = rct_make2(ROBOCACHE_DTYPE_I32, M, 4);
  t[2] = rct_make1(ROBOCACHE_DTYPE_I32, M);
  t[3] = rct_make1(ROBOCACHE_DTYPE_I32, 1);
}

/* n rounds of (resample, hard voxelization of what it wrote, P = 3, M =
 * 2^18 of about 790,000 non-empty voxels of 0.25 m); the last outputs
 * against the CPU backend's on the last points. */
static void check_hard_chain(int n) {
  const float size[3] = {0.25f, 0.25f, 0.25f}, range[6] = {0, 0, 0, 32, 32, 32};
  const int64_t S = 1 << 20, P = 3, M = 1 << 18;
  cudaStream_t stream;
  robocache_ctx *ctx = chain_ctx(&stream);
  chain c;
  chain_make(&c, S, 4, 7);
  rct_tensor *h[4], *want[4];
  hard_outputs(M, P, h);
  hard_outputs(M, P, want);
  robocache_tensor d[4];
  for (int i = 0; i < 4; i++) d[i] = dev_of(h[i], 0);
  int64_t pshape[2], pstrides[2];
  for (int k = 0; k < n; k++) {
    chain_step(ctx, &c, k);
    robocache_tensor pts = points_view(&c.buf[(k + 1) % 2], pshape, pstrides);
    robocache_status s = robocache_voxelize_hard(ctx, &pts, NULL, size, range, (int32_t)P,
                                                 (int32_t)M, &d[0], &d[1], &d[2], &d[3], NULL);
    if (s != ROBOCACHE_OK)
      fail_msg("chained voxelize_hard %d: %s", k, robocache_ctx_error_message(ctx));
  }
  CU(cudaStreamSynchronize(stream));
  for (int i = 0; i < 4; i++)
    CU(cudaMemcpy(h[i]->t.data, d[i].data, h[i]->nbytes, cudaMemcpyDeviceToHost));
  rct_tensor *last = chain_expected(&c, n);
  const robocache_tensor hp = points_view(&last->t, pshape, pstrides);
  robocache_ctx *cpu = NULL;
  assert_int_equal(robocache_ctx_create(&cpu), ROBOCACHE_OK);
  assert_int_equal(robocache_voxelize_hard(cpu, &hp, NULL, size, range, (int32_t)P, (int32_t)M,
                                           &want[0]->t, &want[1]->t, &want[2]->t, &want[3]->t,
                                           NULL),
                   ROBOCACHE_OK);
  const char *what[4] = {"hard voxels", "hard coords", "hard num_points", "hard num_voxels"};
  for (int i = 0; i < 4; i++) {
    rct_assert_bits_equal(h[i], want[i], what[i]);
    rct_free(h[i]), rct_free(want[i]);
    CU(cudaFree(d[i].data));
  }
  robocache_ctx_free(cpu);
  rct_free(last);
  chain_free(&c);
  robocache_ctx_free(ctx);
  CU(cudaStreamDestroy(stream));
}

static void test_voxelize_after_resample(void **state) {
  (void)state;
  check_voxel_chain(ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_I32, 1.0f, 30, "count i32");
  check_voxel_chain(ROBOCACHE_VOXEL_COUNT, ROBOCACHE_DTYPE_F32, 1.0f, 30, "count f32");
  check_voxel_chain(ROBOCACHE_VOXEL_SUM, ROBOCACHE_DTYPE_F32, 0.25f, 30, "sum");
  check_voxel_chain(ROBOCACHE_VOXEL_MEAN, ROBOCACHE_DTYPE_F32, 0.25f, 30, "mean");
  check_hard_chain(30);
}

int main(void) {
  rct_require_cuda();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resample_chains),
      cmocka_unit_test(test_voxelize_after_resample),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
