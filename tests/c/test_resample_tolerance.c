/* Methods nearest / previous / next with a tolerance at the ends of a row:
 * a target outside the first..last sample but within tolerance of the edge
 * sample takes it and is valid (DESIGN §1.1), on both backends. Oracles:
 * LeRobot's frame choice (the argmin of |t_query - t_frame| over the
 * episode's frames, the first of two equal distances, valid when that
 * distance is within tolerance) and its `_is_pad` for action chunks
 * (frame index + k past the last frame), on float32 timestamps
 * frame_index / fps as LeRobot stores them. */
#include "support.h"

#include <math.h>
#include <string.h>

enum { FRAMES = 50, CHUNK = 8 };
#define FPS 30.0
#define TOL_NS 100000 /* LeRobot's default tolerance_s, 1e-4 s */

/* Runs a on both backends; each must succeed. */
static void run_both(rct_resample_args *a, rct_tensor *out[2], rct_tensor *valid[2]) {
  for (int ref = 0; ref < 2; ref++) {
    char msg[512];
    robocache_status s = rct_resample(a, ref, msg, sizeof msg);
    if (s != ROBOCACHE_OK) fail_msg("%s: %s", ref ? "reference" : "cpu", msg);
    rct_copy(out[ref], a->out);
    rct_copy(valid[ref], a->valid);
  }
}

/* One episode of float32 timestamps i / fps; the targets of every action
 * chunk t[idx] + k / fps (k < CHUNK) computed as float32, so that a chunk
 * ending on the last frame lands up to an ulp (~1e-7 s) past it: valid
 * exactly where LeRobot does not pad (idx + k < FRAMES), value the frame
 * idx + k. */
static void test_action_chunks_at_episode_end(void **state) {
  (void)state;
  const int64_t T = FRAMES * CHUNK;
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F32, 1, FRAMES, T, 1, 1);
  for (int i = 0; i < FRAMES; i++) {
    rct_set(a.times, i, (double)(float)(i / FPS));
    rct_set(a.values, i, i);
  }
  int past_last = 0; /* chunk targets after the last timestamp that LeRobot keeps */
  for (int idx = 0; idx < FRAMES; idx++)
    for (int k = 0; k < CHUNK; k++) {
      const float x = (float)rct_get(a.times, idx) + (float)(k / FPS);
      rct_set(a.target_times, idx * CHUNK + k, x);
      past_last += idx + k == FRAMES - 1 && (double)x > rct_get(a.times, FRAMES - 1);
    }
  assert_true(past_last > 0);
  rct_tensor *out[2] = {rct_make3(ROBOCACHE_DTYPE_F32, 1, T, 1),
                        rct_make3(ROBOCACHE_DTYPE_F32, 1, T, 1)};
  rct_tensor *valid[2] = {rct_make2(ROBOCACHE_DTYPE_U8, 1, T), rct_make2(ROBOCACHE_DTYPE_U8, 1, T)};
  for (int ex = 0; ex < 2; ex++) {
    a.opt.method = ROBOCACHE_NEAREST;
    a.opt.tolerance_ns = TOL_NS;
    a.opt.extrapolate = ex ? ROBOCACHE_EXTRAP_FILL : ROBOCACHE_EXTRAP_CLAMP;
    run_both(&a, out, valid);
    for (int ref = 0; ref < 2; ref++)
      for (int idx = 0; idx < FRAMES; idx++)
        for (int k = 0; k < CHUNK; k++) {
          const int64_t t = idx * CHUNK + k;
          const int pad = idx + k >= FRAMES;
          if (rct_get(valid[ref], t) != !pad)
            fail_msg("%s: frame %d + %d: valid %g, LeRobot's _is_pad %d", ref ? "reference" : "cpu",
                     idx, k, rct_get(valid[ref], t), pad);
          if (!pad) assert_float_equal(rct_get(out[ref], t), idx + k, 0);
        }
  }
  for (int i = 0; i < 2; i++) {
    rct_free(out[i]);
    rct_free(valid[i]);
  }
  rct_resample_args_free(&a);
}

/* Index of the frame LeRobot takes for x: the first argmin of |x - t[i]|
 * (times in double). */
static int64_t argmin_frame(const rct_tensor *times, int64_t row, int64_t S, double x) {
  int64_t best = 0;
  for (int64_t i = 1; i < S; i++)
    if (fabs(x - rct_get(times, row * S + i)) < fabs(x - rct_get(times, row * S + best))) best = i;
  return best;
}

/* Random rows of float64 / float32 seconds, targets on frames, halfway
 * between two frames (exact ties), within and beyond tolerance of a frame,
 * and outside the row on both sides: nearest with tolerance takes LeRobot's
 * frame (clamp: also where invalid) and is valid exactly when that frame is
 * within tolerance. */
static void test_nearest_is_lerobot_argmin(void **state) {
  (void)state;
  enum { B = 4, S = 9, T = 64 };
  const robocache_dtype tds[2] = {ROBOCACHE_DTYPE_F64, ROBOCACHE_DTYPE_F32};
  rct_rng r = rct_rng_seed(2024);
  for (int d = 0; d < 2; d++)
    for (int rep = 0; rep < 20; rep++) {
      rct_resample_args a = rct_resample_args_make(tds[d], ROBOCACHE_DTYPE_F64, B, S, T, 1, 1);
      const double tol = (double)TOL_NS * 1e-9;
      for (int64_t b = 0; b < B; b++) {
        double t = rct_rng_uniform(&r, -2, 2);
        for (int64_t i = 0; i < S; i++) {
          /* steps of 1/4 s (exact in float32: halfway targets are exact ties) or random */
          t += rep % 2 ? 0.25 : rct_rng_uniform(&r, 1e-3, 0.5);
          rct_set(a.times, b * S + i, t);
          rct_set(a.values, b * S + i, (double)(b * S + i));
        }
        for (int64_t j = 0; j < T; j++) {
          const int64_t i = rct_rng_int(&r, 0, S - 1), i1 = i + 1 < S ? i + 1 : i;
          const double ti = rct_get(a.times, b * S + i), t1 = rct_get(a.times, b * S + i1);
          const double offs[6] = {0, tol * 0.999, -tol * 0.999, tol * 1.5, -tol * 3, 0};
          double x = ti + offs[j % 6];
          if (j % 6 == 5) x = ti + (t1 - ti) / 2; /* halfway */
          if (j % 11 == 0) x = rct_get(a.times, b * S) - rct_rng_uniform(&r, 0, 2 * tol);
          if (j % 13 == 0) x = rct_get(a.times, b * S + S - 1) + rct_rng_uniform(&r, 0, 2 * tol);
          rct_set(a.target_times, b * T + j, x);
        }
      }
      a.opt.method = ROBOCACHE_NEAREST;
      a.opt.tolerance_ns = TOL_NS;
      a.opt.extrapolate = ROBOCACHE_EXTRAP_CLAMP;
      for (int ref = 0; ref < 2; ref++) {
        assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
        for (int64_t b = 0; b < B; b++)
          for (int64_t j = 0; j < T; j++) {
            const double x = rct_get(a.target_times, b * T + j);
            const int64_t f = argmin_frame(a.times, b, S, x);
            const int within = fabs(x - rct_get(a.times, b * S + f)) <= tol;
            if (rct_get(a.valid, b * T + j) != within)
              fail_msg("%s %s, row %lld target %lld (x = %.12g): valid %g, frame %lld at "
                       "distance %.3g, tolerance %g",
                       ref ? "reference" : "cpu", d ? "float32" : "float64", (long long)b,
                       (long long)j, x, rct_get(a.valid, b * T + j), (long long)f,
                       fabs(x - rct_get(a.times, b * S + f)), tol);
            assert_float_equal(rct_get(a.out, b * T + j), (double)(b * S + f), 0);
          }
      }
      rct_resample_args_free(&a);
    }
}

/* int64 ns: previous / next / nearest at both ends of the row, exactly at
 * the tolerance and one ns beyond; EXTRAP_ERROR only beyond. */
static void test_ends_within_tolerance_ns(void **state) {
  (void)state;
  const int64_t times[3] = {1000, 2000, 3000}, tol = 40;
  const int64_t xs[4] = {1000 - tol, 1000 - tol - 1, 3000 + tol, 3000 + tol + 1};
  const int ok[4] = {1, 0, 1, 0}, take[4] = {0, 0, 2, 2};
  const int32_t methods[3] = {ROBOCACHE_NEAREST, ROBOCACHE_PREVIOUS, ROBOCACHE_NEXT};
  rct_resample_args a =
      rct_resample_args_make(ROBOCACHE_DTYPE_I64, ROBOCACHE_DTYPE_F32, 1, 3, 4, 1, 1);
  for (int i = 0; i < 3; i++) {
    rct_set_i64(a.times, i, times[i]);
    rct_set(a.values, i, 10.0 * (i + 1));
  }
  for (int j = 0; j < 4; j++) rct_set_i64(a.target_times, j, xs[j]);
  a.opt.tolerance_ns = tol;
  for (int m = 0; m < 3; m++)
    for (int ref = 0; ref < 2; ref++) {
      a.opt.method = methods[m];
      a.opt.extrapolate = ROBOCACHE_EXTRAP_FILL;
      assert_int_equal(rct_resample(&a, ref, NULL, 0), ROBOCACHE_OK);
      for (int j = 0; j < 4; j++) {
        assert_int_equal((int)rct_get(a.valid, j), ok[j]);
        if (ok[j])
          assert_float_equal(rct_get(a.out, j), 10.0 * (take[j] + 1), 0);
        else
          assert_true(isnan(rct_get(a.out, j)));
      }
      a.opt.extrapolate = ROBOCACHE_EXTRAP_ERROR;
      char msg[512];
      assert_int_equal(rct_resample(&a, ref, msg, sizeof msg), ROBOCACHE_INVALID_ARGUMENT);
      if (!strstr(msg, "row 0, index 1")) fail_msg("message \"%s\"", msg);
    }
  rct_resample_args_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_action_chunks_at_episode_end),
      cmocka_unit_test(test_nearest_is_lerobot_argmin),
      cmocka_unit_test(test_ends_within_tolerance_ns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
