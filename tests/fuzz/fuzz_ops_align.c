/* libFuzzer target: robocache_align of 1 to 3 fuzzer-chosen streams (each
 * its own values dtype, S, D, layout, lengths and options; one time dtype)
 * onto one target grid, on the CPU backend and on the reference backend:
 * the same status and message (an EXTRAP_ERROR names the first offending
 * target in row-major [B,T,K] order, whichever stream it is in), the same
 * valid [B,T,K], and each stream's columns of out bitwise (slerp within its
 * bound). */
#include "fuzz_ops_interp.h"

enum { FZ_MAX_K = 3 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in f = {data, size, 0};
  const int32_t time_dtype = fz_time_dtypes[fz_pick(&f, 3)];
  const int64_t B = fz_int(&f, 0, FZ_MAX_B), T = fz_int(&f, 0, FZ_MAX_T);
  const int K = (int)fz_int(&f, 1, FZ_MAX_K), has_valid = !fz_rare(&f, 4);
  static const char *names[FZ_MAX_K] = {"imu", NULL, "cam"};
  fz_stream s[FZ_MAX_K];
  robocache_stream st[FZ_MAX_K];
  int64_t cols = 0;
  for (int k = 0; k < K; k++) {
    fz_make_stream(&f, &s[k], time_dtype, B);
    st[k] = (robocache_stream){names[k], &s[k].values.t, &s[k].times.t,
                               s[k].has_lengths ? &s[k].lengths.t : NULL, s[k].opt};
    cols += s[k].D;
  }
  const int64_t tshape[2] = {B, T}, lshape[1] = {B}, oshape[3] = {B, T, cols},
                vshape[3] = {B, T, K};
  fz_tensor tt, tl, out[2], valid[2];
  fz_make(&tt, &f, time_dtype, 2, tshape, 1);
  fz_fill_targets(&f, &tt, &s[fz_pick(&f, K)], B, T);
  const int has_tl = fz_pick(&f, 2);
  fz_make(&tl, &f, ROBOCACHE_DTYPE_I64, 1, lshape, 1);
  for (int64_t b = 0; b < B; b++)
    fz_set_i64(&tl, b, 0, 0, fz_rare(&f, 16) ? fz_int(&f, -2, 10) : fz_int(&f, 0, T));
  fz_make(&out[0], &f, fz_float_dtypes[fz_pick(&f, 4)], 3, oshape, 0);
  fz_make(&valid[0], &f, ROBOCACHE_DTYPE_U8, 3, vshape, 0);
  fz_poison(&out[0]);
  fz_poison(&valid[0]);
  fz_clone(&out[1], &out[0]);
  fz_clone(&valid[1], &valid[0]);

  robocache_ctx *ctx[2];
  robocache_status status[2];
  for (int ref = 0; ref < 2; ref++) {
    ctx[ref] = fz_ctx(ref);
    status[ref] = robocache_align(ctx[ref], st, K, &tt.t, has_tl ? &tl.t : NULL, &out[ref].t,
                                  has_valid ? &valid[ref].t : NULL);
  }
  fz_same_status("align", status[0], ctx[0], status[1], ctx[1]);
  if (status[0] == ROBOCACHE_OK) {
    for (int k = 0, col = 0; k < K; col += (int)s[k].D, k++)
      fz_compare_stream_out("align", &s[k], col, &tt, &out[0], &out[1], B, T);
    if (has_valid) fz_compare_valid("align", &valid[0], &valid[1]);
  }
  for (int ref = 0; ref < 2; ref++) {
    robocache_ctx_free(ctx[ref]);
    fz_free(&out[ref]);
    fz_free(&valid[ref]);
  }
  for (int k = 0; k < K; k++) fz_free_stream(&s[k]);
  fz_free(&tt);
  fz_free(&tl);
  return 0;
}
