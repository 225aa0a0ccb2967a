/* libFuzzer target: robocache_voxelize_hard and robocache_voxelize_hard_packed
 * (max_points_per_voxel P <= 6, max_voxels M <= 12, now and then invalid) on
 * fuzzer-chosen clouds and grids (fuzz_ops_voxel.h), on the CPU backend and
 * on the reference backend: the same status and message, the same stats,
 * voxels / coords / num_points / num_voxels bit for bit. */
#include "fuzz_ops_voxel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in f = {data, size, 0};
  fz_cloud c;
  fz_make_cloud(&f, &c);
  const int packed = fz_pick(&f, 2);
  const int32_t P = (int32_t)(fz_rare(&f, 16) ? fz_int(&f, -1, 0) : fz_int(&f, 1, 6));
  const int32_t M = (int32_t)(fz_rare(&f, 16) ? fz_int(&f, -1, 0) : fz_int(&f, 1, 12));
  const int64_t BM = c.B * (M > 0 ? M : 1);
  const int64_t vshape[3] = {BM, P > 0 ? P : 1, c.C}, cshape[2] = {BM, 4}, nshape[1] = {BM},
                bshape[1] = {c.B};
  fz_tensor t[2][4];
  robocache_voxel_stats stats[2];
  robocache_ctx *ctx[2];
  robocache_status status[2];
  fz_make(&t[0][0], &f, ROBOCACHE_DTYPE_F32, 3, vshape, 0);
  fz_make(&t[0][1], &f, ROBOCACHE_DTYPE_I32, 2, cshape, 0);
  fz_make(&t[0][2], &f, ROBOCACHE_DTYPE_I32, 1, nshape, 0);
  fz_make(&t[0][3], &f, ROBOCACHE_DTYPE_I32, 1, bshape, 0);
  for (int i = 0; i < 4; i++) {
    fz_poison(&t[0][i]);
    fz_clone(&t[1][i], &t[0][i]);
  }
  for (int ref = 0; ref < 2; ref++) {
    ctx[ref] = fz_ctx(ref);
    status[ref] = (packed ? robocache_voxelize_hard_packed : robocache_voxelize_hard)(
        ctx[ref], &c.points.t, fz_offsets(&c), c.voxel_size, c.range, P, M, &t[ref][0].t,
        &t[ref][1].t, &t[ref][2].t, &t[ref][3].t, &stats[ref]);
  }
  fz_same_status("voxelize_hard", status[0], ctx[0], status[1], ctx[1]);
  if (status[0] == ROBOCACHE_OK) {
    fz_same_stats("voxelize_hard", &stats[0], &stats[1]);
    static const char *names[4] = {"voxelize_hard voxels", "voxelize_hard coords",
                                   "voxelize_hard num_points", "voxelize_hard num_voxels"};
    for (int i = 0; i < 4; i++) fz_same_bits(names[i], &t[0][i], &t[1][i]);
  }
  for (int ref = 0; ref < 2; ref++) {
    for (int i = 0; i < 4; i++) fz_free(&t[ref][i]);
    robocache_ctx_free(ctx[ref]);
  }
  fz_free_cloud(&c);
  return 0;
}
