/* Resample a 3-channel stream sampled at 0, 10, 20, 30 ms onto 5 ms steps. */
#include <robocache.h>
#include <stdio.h>

int main(void) {
  float v[4][3] = {{0, 0, 0}, {1, 2, 3}, {2, 4, 6}, {3, 6, 9}};
  int64_t t[4] = {0, 10000000, 20000000, 30000000}; /* ns */
  int64_t q[7] = {0, 5000000, 10000000, 15000000, 25000000, 30000000, 35000000};
  float out[7][3];
  uint8_t valid[7];
  int64_t vs[3] = {1, 4, 3}, ts[2] = {1, 4}, qs[2] = {1, 7}, os[3] = {1, 7, 3};
  robocache_tensor values = {v, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 3, vs, NULL};
  robocache_tensor times = {t, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 2, ts, NULL};
  robocache_tensor target = {q, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 2, qs, NULL};
  robocache_tensor o = {out, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 3, os, NULL};
  robocache_tensor m = {valid, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_U8, 2, qs, NULL};
  robocache_interp_options opt;
  robocache_interp_options_init(&opt); /* linear, clamp */
  robocache_ctx *ctx;
  robocache_ctx_create(&ctx);
  robocache_status s = robocache_resample(ctx, &values, &times, NULL, &target, NULL, &opt, &o, &m);
  if (s != ROBOCACHE_OK) {
    fprintf(stderr, "%s: %s\n", robocache_status_name(s), robocache_ctx_error_message(ctx));
    return 1;
  }
  for (int i = 0; i < 7; i++)
    printf("t=%2lld ms  %.2f %.2f %.2f  valid=%d\n", (long long)(q[i] / 1000000), out[i][0],
           out[i][1], out[i][2], valid[i]);
  robocache_ctx_free(ctx);
  return 0;
}
