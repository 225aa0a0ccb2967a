/* libFuzzer target: robocache_voxel_downsample with a point_cloud_range or
 * without (PCL VoxelGrid grids from each cloud's minimum: tiny leaves, wide
 * clouds, grids past 2^62 voxels), capacities from 0 to N + 2, on
 * fuzzer-chosen clouds (fuzz_ops_voxel.h), on the CPU backend and on the
 * reference backend: the same status and message, the same stats (also on
 * CAPACITY_EXCEEDED), out and out_offsets bit for bit. */
#include "fuzz_ops_voxel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in f = {data, size, 0};
  fz_cloud c;
  fz_make_cloud(&f, &c);
  const int use_range = fz_pick(&f, 2);
  const int64_t capacity = fz_int(&f, 0, c.N + 2);
  const int64_t oshape[2] = {capacity, c.C}, fshape[1] = {c.B + 1};
  fz_tensor out[2], off[2];
  robocache_voxel_stats stats[2];
  robocache_ctx *ctx[2];
  robocache_status status[2];
  fz_make(&out[0], &f, ROBOCACHE_DTYPE_F32, 2, oshape, 0);
  fz_make(&off[0], &f, ROBOCACHE_DTYPE_I64, 1, fshape, 0);
  fz_poison(&out[0]);
  fz_poison(&off[0]);
  fz_clone(&out[1], &out[0]);
  fz_clone(&off[1], &off[0]);
  for (int ref = 0; ref < 2; ref++) {
    ctx[ref] = fz_ctx(ref);
    status[ref] = robocache_voxel_downsample(ctx[ref], &c.points.t, fz_offsets(&c), c.voxel_size,
                                             use_range ? c.range : NULL, &out[ref].t, &off[ref].t,
                                             &stats[ref]);
  }
  fz_same_status("voxel_downsample", status[0], ctx[0], status[1], ctx[1]);
  if (status[0] == ROBOCACHE_OK || status[0] == ROBOCACHE_CAPACITY_EXCEEDED) {
    fz_same_stats("voxel_downsample", &stats[0], &stats[1]);
    fz_same_bits("voxel_downsample out_offsets", &off[0], &off[1]);
    /* the rows written: all of them, or (capacity exceeded) those that fit */
    fz_same_bits("voxel_downsample out", &out[0], &out[1]);
  }
  for (int ref = 0; ref < 2; ref++) {
    fz_free(&out[ref]);
    fz_free(&off[ref]);
    robocache_ctx_free(ctx[ref]);
  }
  fz_free_cloud(&c);
  return 0;
}
