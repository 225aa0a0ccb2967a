/* CPU benchmark of robocache_resample (float32 values, int64 ns times,
 * linear, clamp), driven by bench/bench_resample_cpu.py.
 *
 * Generates B rows of S samples at ~200 Hz with jitter (times in ns from 0)
 * and T sorted target times spread over each row's span, from a seeded
 * splitmix64; times `repeats` calls after `warmup` calls and prints one JSON
 * object: {"median_s", "p10_s", "p90_s", "repeats", "threads", "version"}. With
 * --dump DIR it also writes values.f32, times.i64, targets.i64 and out.f32
 * (raw little-endian, C order) so that the driver runs the baselines on the
 * same data and checks the results agree.
 *
 * usage: bench_resample_cpu --batch B --samples S --targets T --channels D
 *        [--threads N] [--repeats R] [--warmup W] [--seed X] [--dump DIR] */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "robocache.h"

typedef struct config {
  int64_t B, S, T, D;
  int threads, repeats, warmup;
  uint64_t seed;
  const char *dump;
} config;

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) { return (double)(splitmix64(s) >> 11) * 0x1.0p-53; }

static int parse(int argc, char **argv, config *c) {
  static const struct option opts[] = {
      {"batch", required_argument, 0, 'b'},   {"samples", required_argument, 0, 's'},
      {"targets", required_argument, 0, 't'}, {"channels", required_argument, 0, 'd'},
      {"threads", required_argument, 0, 'n'}, {"repeats", required_argument, 0, 'r'},
      {"warmup", required_argument, 0, 'w'},  {"seed", required_argument, 0, 'x'},
      {"dump", required_argument, 0, 'o'},    {0, 0, 0, 0}};
  *c = (config){.B = 32, .S = 500, .T = 250, .D = 256, .repeats = 30, .warmup = 3, .seed = 1};
  for (int ch; (ch = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    switch (ch) {
    case 'b': c->B = atoll(optarg); break;
    case 's': c->S = atoll(optarg); break;
    case 't': c->T = atoll(optarg); break;
    case 'd': c->D = atoll(optarg); break;
    case 'n': c->threads = atoi(optarg); break;
    case 'r': c->repeats = atoi(optarg); break;
    case 'w': c->warmup = atoi(optarg); break;
    case 'x': c->seed = strtoull(optarg, NULL, 10); break;
    case 'o': c->dump = optarg; break;
    default: return -1;
    }
  }
  if (c->B < 1 || c->S < 2 || c->T < 1 || c->D < 1 || c->repeats < 1 || c->threads < 0) return -1;
  return 0;
}

static int dump(const char *dir, const char *name, const void *data, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = fwrite(data, 1, bytes, f);
  return fclose(f) == 0 && n == bytes ? 0 : -1;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Value of the sorted samples at quantile q (linear between ranks). */
static double quantile(const double *sorted, int n, double q) {
  double pos = q * (n - 1);
  int i = (int)pos;
  return i + 1 < n ? sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]) : sorted[n - 1];
}

int main(int argc, char **argv) {
  config c;
  if (parse(argc, argv, &c) != 0) {
    fprintf(stderr,
            "usage: %s --batch B --samples S --targets T --channels D [--threads N] "
            "[--repeats R] [--warmup W] [--seed X] [--dump DIR]\n",
            argv[0]);
    return 2;
  }
  const int64_t B = c.B, S = c.S, T = c.T, D = c.D;
  float *values = malloc((size_t)(B * S * D) * sizeof *values);
  float *out = malloc((size_t)(B * T * D) * sizeof *out);
  int64_t *times = malloc((size_t)(B * S) * sizeof *times);
  int64_t *targets = malloc((size_t)(B * T) * sizeof *targets);
  double *elapsed = malloc((size_t)c.repeats * sizeof *elapsed);
  if (!values || !out || !times || !targets || !elapsed) return 1;
  uint64_t rng = c.seed;
  for (int64_t i = 0; i < B * S * D; i++) values[i] = (float)(2 * uniform01(&rng) - 1);
  for (int64_t b = 0; b < B; b++) {
    int64_t t = (int64_t)(uniform01(&rng) * 1e6);
    for (int64_t s = 0; s < S; s++) { /* 200 Hz with +-20 % jitter */
      times[b * S + s] = t;
      t += 5000000 + (int64_t)((uniform01(&rng) - 0.5) * 2e6);
    }
    int64_t t0 = times[b * S], span = times[b * S + S - 1] - t0;
    for (int64_t i = 0; i < T; i++) targets[b * T + i] = t0 + span * i / T;
  }
  robocache_ctx *ctx = NULL;
  if (robocache_ctx_create(&ctx) != ROBOCACHE_OK ||
      robocache_ctx_set_num_threads(ctx, c.threads) != ROBOCACHE_OK)
    return 1;
  const int64_t vshape[3] = {B, S, D}, tshape[2] = {B, S}, ttshape[2] = {B, T},
                oshape[3] = {B, T, D};
  robocache_tensor tv = {values, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 3, vshape, NULL};
  robocache_tensor tt = {times, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 2, tshape, NULL};
  robocache_tensor ttg = {targets, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 2, ttshape, NULL};
  robocache_tensor to = {out, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 3, oshape, NULL};
  for (int i = -c.warmup; i < c.repeats; i++) {
    double t0 = now_s();
    robocache_status st = robocache_resample(ctx, &tv, &tt, NULL, &ttg, NULL, NULL, &to, NULL);
    double t1 = now_s();
    if (st != ROBOCACHE_OK) {
      fprintf(stderr, "resample failed: %s: %s\n", robocache_status_name(st),
              robocache_ctx_error_message(ctx));
      return 1;
    }
    if (i >= 0) elapsed[i] = t1 - t0;
  }
  qsort(elapsed, (size_t)c.repeats, sizeof *elapsed, cmp_double);
  if (c.dump && (dump(c.dump, "values.f32", values, (size_t)(B * S * D) * 4) ||
                 dump(c.dump, "times.i64", times, (size_t)(B * S) * 8) ||
                 dump(c.dump, "targets.i64", targets, (size_t)(B * T) * 8) ||
                 dump(c.dump, "out.f32", out, (size_t)(B * T * D) * 4))) {
    fprintf(stderr, "cannot write to %s\n", c.dump);
    return 1;
  }
  printf("{\"median_s\": %.9g, \"p10_s\": %.9g, \"p90_s\": %.9g, \"repeats\": %d, "
         "\"threads\": %d, \"version\": \"%s\"}\n",
         quantile(elapsed, c.repeats, 0.5), quantile(elapsed, c.repeats, 0.1),
         quantile(elapsed, c.repeats, 0.9), c.repeats, c.threads, robocache_version_string());
  robocache_ctx_free(ctx);
  free(values), free(out), free(times), free(targets), free(elapsed);
  return 0;
}
