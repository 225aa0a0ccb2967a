/* Sizes that do not fit in memory: every output size the library computes
 * (dense grids B*F*Z*Y*X, hard voxels B*M*P*C, the f64 sums of downsample,
 * align's B*T*sum D and B*T*K) and the extent of every tensor it is given
 * are checked for overflow before anything is written, on both backends:
 * OUT_OF_MEMORY (an output or work array) or INVALID_ARGUMENT (a tensor
 * whose shape and strides reach past 2^63 bytes), with the sizes in the
 * message. The tensors here describe such shapes over a few real elements:
 * a call that did not check would write far past them. */
#include "support.h"

#include <string.h>

/* A CPU tensor over data (not owned) with the given shape and strides. */
static robocache_tensor view(void *data, robocache_dtype dtype, int ndim, const int64_t *shape,
                             const int64_t *strides) {
  robocache_tensor t = {data, ROBOCACHE_DEVICE_CPU, 0, dtype, ndim, shape, strides};
  return t;
}

static robocache_ctx *context(int ref) {
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  assert_int_equal(robocache_ctx_set_force_reference(ctx, ref), ROBOCACHE_OK);
  return ctx;
}

static void expect(robocache_ctx *ctx, robocache_status got, robocache_status want,
                   const char *needle1, const char *needle2) {
  if (got != want)
    fail_msg("expected %s, got %s (\"%s\")", robocache_status_name(want),
             robocache_status_name(got), robocache_ctx_error_message(ctx));
  rct_assert_message_has(ctx, needle1);
  rct_assert_message_has(ctx, needle2);
}

/* 4 clouds of one in-range point each on a grid of 2^31 x 2^31 x 1 voxels
 * (2^62, the largest grid allowed): out [4,1,1,2^31,2^31] has 2^64
 * elements, which wraps to 0 in int64 arithmetic. */
static void test_dense_grid_times_clouds(void **state) {
  (void)state;
  float pts[4][3] = {
      {1.5f, 1.5f, 0.5f}, {2.5f, 1.5f, 0.5f}, {1.5f, 7.5f, 0.5f}, {3.5f, 1.5f, 0.5f}};
  int64_t off[5] = {0, 1, 2, 3, 4}, cell[2] = {0, 0};
  const int64_t ps[2] = {4, 3}, os[1] = {5}, g = (int64_t)1 << 31;
  const int64_t shape[5] = {4, 1, 1, g, g};
  const float vs[3] = {1, 1, 1}, range[6] = {0, 0, 0, (float)g, (float)g, 1};
  robocache_tensor points = view(pts, ROBOCACHE_DTYPE_F32, 2, ps, NULL),
                   offsets = view(off, ROBOCACHE_DTYPE_I64, 1, os, NULL);
  const robocache_dtype dtypes[3] = {ROBOCACHE_DTYPE_I32, ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_U8};
  const int32_t modes[3] = {ROBOCACHE_VOXEL_COUNT, ROBOCACHE_VOXEL_MEAN, ROBOCACHE_VOXEL_OCCUPANCY};
  for (int ref = 0; ref < 2; ref++)
    for (int m = 0; m < 3; m++) {
      robocache_ctx *ctx = context(ref);
      robocache_tensor out = view(cell, dtypes[m], 5, shape, NULL);
      robocache_status s =
          robocache_voxelize(ctx, &points, &offsets, vs, range, modes[m], &out, NULL);
      expect(ctx, s, ROBOCACHE_OUT_OF_MEMORY, "out [B,F,Z,Y,X]", "1, 2147483648, 2147483648]");
      robocache_ctx_free(ctx);
    }
}

/* Many feature columns: points [1, 3 + 2^30] broadcast from one float
 * (strides 0) on a 2^20 x 2^20 grid, 4 clouds: F * X * Y * B = 2^72. */
static void test_dense_many_features(void **state) {
  (void)state;
  float one = 0.5f;
  int64_t off[5] = {0, 1, 1, 1, 1}, cell = 0;
  const int64_t C = 3 + ((int64_t)1 << 30), ps[2] = {1, C}, zero[2] = {0, 0}, os[1] = {5};
  const int64_t g = (int64_t)1 << 20, shape[5] = {4, C - 3, 1, g, g};
  const float vs[3] = {1, 1, 1}, range[6] = {0, 0, 0, (float)g, (float)g, 1};
  robocache_tensor points = view(&one, ROBOCACHE_DTYPE_F32, 2, ps, zero),
                   offsets = view(off, ROBOCACHE_DTYPE_I64, 1, os, NULL),
                   out = view(&cell, ROBOCACHE_DTYPE_F32, 5, shape, NULL);
  for (int ref = 0; ref < 2; ref++) {
    robocache_ctx *ctx = context(ref);
    robocache_status s =
        robocache_voxelize(ctx, &points, &offsets, vs, range, ROBOCACHE_VOXEL_SUM, &out, NULL);
    expect(ctx, s, ROBOCACHE_OUT_OF_MEMORY, "out [B,F,Z,Y,X]", "[4, 1073741824, 1, 1048576");
    robocache_ctx_free(ctx);
  }
}

/* Hard voxels [B*M, P, C] with M = P = 2^31 - 1 on 2 clouds: 2^63 * 3 floats. */
static void test_hard_rows_times_points(void **state) {
  (void)state;
  float pts[2][3] = {{0.5f, 0.5f, 0.5f}, {1.5f, 0.5f, 0.5f}};
  int64_t off[3] = {0, 1, 2};
  int32_t small[8] = {0};
  const int32_t M = INT32_MAX, P = INT32_MAX;
  const int64_t BM = 2 * (int64_t)M, ps[2] = {2, 3}, os[1] = {3};
  const int64_t vshape[3] = {BM, P, 3}, cshape[2] = {BM, 4}, nshape[1] = {BM}, bshape[1] = {2};
  const float vs[3] = {1, 1, 1}, range[6] = {0, 0, 0, 4, 4, 4};
  robocache_tensor points = view(pts, ROBOCACHE_DTYPE_F32, 2, ps, NULL),
                   offsets = view(off, ROBOCACHE_DTYPE_I64, 1, os, NULL),
                   voxels = view(small, ROBOCACHE_DTYPE_F32, 3, vshape, NULL),
                   coords = view(small, ROBOCACHE_DTYPE_I32, 2, cshape, NULL),
                   num_points = view(small, ROBOCACHE_DTYPE_I32, 1, nshape, NULL),
                   num_voxels = view(small, ROBOCACHE_DTYPE_I32, 1, bshape, NULL);
  for (int ref = 0; ref < 2; ref++)
    for (int packed = 0; packed < 2; packed++) {
      robocache_ctx *ctx = context(ref);
      robocache_status s = (packed ? robocache_voxelize_hard_packed : robocache_voxelize_hard)(
          ctx, &points, &offsets, vs, range, P, M, &voxels, &coords, &num_points, &num_voxels,
          NULL);
      expect(ctx, s, ROBOCACHE_OUT_OF_MEMORY, "voxels [B*M,P,C]", "[4294967294, 2147483647, 3]");
      robocache_ctx_free(ctx);
    }
}

/* Downsample of points [1, 2^61] broadcast from one float: the f64 sums of
 * its columns would need 2^64 bytes. */
static void test_downsample_sums(void **state) {
  (void)state;
  float one = 0.5f, none = 0;
  int64_t out_off[2] = {0, 0};
  const int64_t C = (int64_t)1 << 61, ps[2] = {1, C}, zero[2] = {0, 0}, out_shape[2] = {0, C},
                oos[1] = {2};
  const float vs[3] = {1, 1, 1};
  robocache_tensor points = view(&one, ROBOCACHE_DTYPE_F32, 2, ps, zero),
                   out = view(&none, ROBOCACHE_DTYPE_F32, 2, out_shape, NULL),
                   out_offsets = view(out_off, ROBOCACHE_DTYPE_I64, 1, oos, NULL);
  for (int ref = 0; ref < 2; ref++) {
    robocache_ctx *ctx = context(ref);
    robocache_status s =
        robocache_voxel_downsample(ctx, &points, NULL, vs, NULL, &out, &out_offsets, NULL);
    expect(ctx, s, ROBOCACHE_OUT_OF_MEMORY, "points [N,C]", "[1, 2305843009213693952]");
    robocache_ctx_free(ctx);
  }
}

/* Resample of values [1, 2, 2^62] broadcast from one float into out [1, 1,
 * 2^62] f32 (2^64 bytes); align of two such streams (2^63 channels). */
static void test_align_channels(void **state) {
  (void)state;
  float v = 1, o = 0;
  int64_t times[2] = {0, 10}, target = 5;
  const int64_t D = (int64_t)1 << 62, vshape[3] = {1, 2, D}, vzero[3] = {0, 0, 0};
  const int64_t ts[2] = {1, 2}, tts[2] = {1, 1}, out_shape[3] = {1, 1, D};
  robocache_tensor values = view(&v, ROBOCACHE_DTYPE_F32, 3, vshape, vzero),
                   tt = view(times, ROBOCACHE_DTYPE_I64, 2, ts, NULL),
                   target_times = view(&target, ROBOCACHE_DTYPE_I64, 2, tts, NULL),
                   out = view(&o, ROBOCACHE_DTYPE_F32, 3, out_shape, NULL);
  for (int ref = 0; ref < 2; ref++) {
    robocache_ctx *ctx = context(ref);
    robocache_status s =
        robocache_resample(ctx, &values, &tt, NULL, &target_times, NULL, NULL, &out, NULL);
    expect(ctx, s, ROBOCACHE_OUT_OF_MEMORY, "out [B,T,D]", "[1, 1, 4611686018427387904]");
    robocache_stream st[2] = {{"a", &values, &tt, NULL, {0}}, {"b", &values, &tt, NULL, {0}}};
    robocache_interp_options_init(&st[0].options);
    robocache_interp_options_init(&st[1].options);
    s = robocache_align(ctx, st, 2, &target_times, NULL, &out, NULL);
    expect(ctx, s, ROBOCACHE_OUT_OF_MEMORY, "channels of streams 0..1", "add up to more than");
    robocache_ctx_free(ctx);
  }
}

/* A tensor whose shape and strides reach past 2^63 bytes is refused whatever
 * its role: target_times [2^31, 2^31] int64 (2^65 bytes), contiguous or
 * strided. */
static void test_tensor_extent(void **state) {
  (void)state;
  float v[4] = {0};
  int64_t times[2] = {0, 10}, target[2] = {5, 6};
  const int64_t n = (int64_t)1 << 31, big[2] = {n, n}, strides[2] = {n, 1},
                neg[2] = {-n, INT64_MIN};
  const int64_t vshape[3] = {n, 2, 1}, vzero[3] = {0, 0, 0}, ts[2] = {n, 2}, tzero[2] = {0, 1},
                out_shape[3] = {n, n, 1}, out_zero[3] = {0, 0, 0};
  robocache_tensor values = view(v, ROBOCACHE_DTYPE_F32, 3, vshape, vzero),
                   tt = view(times, ROBOCACHE_DTYPE_I64, 2, ts, tzero),
                   out = view(v, ROBOCACHE_DTYPE_F32, 3, out_shape, out_zero);
  const int64_t *stride_sets[3] = {NULL, strides, neg};
  for (int ref = 0; ref < 2; ref++)
    for (int k = 0; k < 3; k++) {
      robocache_ctx *ctx = context(ref);
      robocache_tensor target_times = view(target, ROBOCACHE_DTYPE_I64, 2, big, stride_sets[k]);
      robocache_status s =
          robocache_resample(ctx, &values, &tt, NULL, &target_times, NULL, NULL, &out, NULL);
      expect(ctx, s, ROBOCACHE_INVALID_ARGUMENT, "target_times", "no buffer is that large");
      robocache_ctx_free(ctx);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dense_grid_times_clouds), cmocka_unit_test(test_dense_many_features),
      cmocka_unit_test(test_hard_rows_times_points),  cmocka_unit_test(test_downsample_sums),
      cmocka_unit_test(test_align_channels),          cmocka_unit_test(test_tensor_extent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
