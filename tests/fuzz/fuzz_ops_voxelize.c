/* libFuzzer target: robocache_voxelize (dense; every mode and output dtype,
 * wrong dtypes and modes now and then) on fuzzer-chosen clouds and grids
 * (fuzz_ops_voxel.h), on the CPU backend and on the reference backend: the
 * same status and message, the same stats, out [B,F,Z,Y,X] bit for bit.
 * Grids whose out would pass 2^16 elements are not allocated: the call is
 * made only when the output cannot exist at all (more than 2^63 bytes),
 * with a one-element buffer, and must then fail on both. */
#include "fuzz_ops_voxel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in f = {data, size, 0};
  fz_cloud c;
  fz_make_cloud(&f, &c);
  const int32_t mode = fz_rare(&f, 16) ? 9 : fz_pick(&f, 5);
  static const int32_t dtypes[5][2] = {{ROBOCACHE_DTYPE_I32, ROBOCACHE_DTYPE_F32},
                                       {ROBOCACHE_DTYPE_U8, ROBOCACHE_DTYPE_F32},
                                       {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F32},
                                       {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F32},
                                       {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F32}};
  const int32_t dtype = fz_rare(&f, 16) ? ROBOCACHE_DTYPE_F64
                        : mode < 5      ? dtypes[mode][fz_pick(&f, 2)]
                                        : ROBOCACHE_DTYPE_F32;
  int64_t g[3] = {1, 1, 1};
  robocache_ctx *probe = fz_ctx(0);
  const int grid_ok = robocache_voxel_grid_size(probe, c.voxel_size, c.range, g) == ROBOCACHE_OK;
  robocache_ctx_free(probe);
  const int64_t F = mode <= ROBOCACHE_VOXEL_OCCUPANCY ? 1 : c.C == 3 ? 3 : c.C - 3;
  const int64_t shape[5] = {c.B, F > 0 ? F : 1, g[2], g[1], g[0]};
  /* elements of out in double: only its magnitude matters here */
  const double cells =
      (double)shape[0] * (double)shape[1] * (double)g[0] * (double)g[1] * (double)g[2];
  const size_t esize = fz_esize(dtype);
  const int small = cells <= 65536, impossible = cells * (double)esize > 9.3e18;
  if (grid_ok && !small && !impossible) {
    fz_free_cloud(&c);
    return 0;
  }
  const size_t bytes = small && cells > 0 ? (size_t)cells * esize : esize;
  char *buf[2];
  robocache_tensor out[2];
  robocache_voxel_stats stats[2];
  robocache_ctx *ctx[2];
  robocache_status status[2];
  for (int ref = 0; ref < 2; ref++) {
    buf[ref] = malloc(bytes);
    if (!buf[ref]) abort();
    memset(buf[ref], 0x5b, bytes);
    out[ref] = (robocache_tensor){buf[ref], ROBOCACHE_DEVICE_CPU, 0, dtype, 5, shape, NULL};
    ctx[ref] = fz_ctx(ref);
    status[ref] = robocache_voxelize(ctx[ref], &c.points.t, fz_offsets(&c), c.voxel_size, c.range,
                                     mode, &out[ref], &stats[ref]);
  }
  fz_same_status("voxelize", status[0], ctx[0], status[1], ctx[1]);
  if (impossible && grid_ok && status[0] == ROBOCACHE_OK)
    FZ_FAIL("voxelize: out of %.4g elements accepted", cells);
  if (status[0] == ROBOCACHE_OK) {
    fz_same_stats("voxelize", &stats[0], &stats[1]);
    if (memcmp(buf[0], buf[1], bytes) != 0) {
      size_t i = 0;
      while (buf[0][i] == buf[1][i]) i++;
      FZ_FAIL("voxelize (mode %d, %s): out differs at byte %zu of %zu", (int)mode,
              robocache_dtype_name(dtype), i, bytes);
    }
  }
  for (int ref = 0; ref < 2; ref++) {
    free(buf[ref]);
    robocache_ctx_free(ctx[ref]);
  }
  fz_free_cloud(&c);
  return 0;
}
