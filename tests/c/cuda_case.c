/* GPU resample cases for the CUDA tests (cuda_case.h). */
#include "cuda_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- device copies ---------------------------------------------------------- */

dev_tensor *to_dev(const rct_tensor *h) {
  if (!h) return NULL;
  dev_tensor *d = calloc(1, sizeof *d);
  assert_non_null(d);
  d->t = h->t;
  memcpy(d->shape, h->shape, sizeof d->shape);
  memcpy(d->strides, h->strides, sizeof d->strides);
  d->t.shape = d->shape;
  d->t.strides = d->strides;
  d->t.device_type = ROBOCACHE_DEVICE_CUDA;
  d->t.device_id = 0;
  d->nbytes = h->nbytes;
  CU(cudaMalloc(&d->t.data, d->nbytes > 0 ? d->nbytes : 1));
  CU(cudaMemcpy(d->t.data, h->t.data, d->nbytes, cudaMemcpyHostToDevice));
  return d;
}

void poison(dev_tensor *d) {
  if (d) CU(cudaMemset(d->t.data, 0xFF, d->nbytes));
}

void from_dev(rct_tensor *h, const dev_tensor *d) {
  if (d) CU(cudaMemcpy(h->t.data, d->t.data, d->nbytes, cudaMemcpyDeviceToHost));
}

void dev_free(dev_tensor *d) {
  if (!d) return;
  CU(cudaFree(d->t.data));
  free(d);
}

const robocache_tensor *dv(const dev_tensor *d) { return d ? &d->t : NULL; }

static dev_args to_dev_args(const rct_resample_args *a) {
  dev_args d = {to_dev(a->values),       to_dev(a->times),          to_dev(a->lengths),
                to_dev(a->target_times), to_dev(a->target_lengths), to_dev(a->out),
                to_dev(a->valid)};
  poison(d.out);
  poison(d.valid);
  return d;
}

static void dev_args_free(dev_args *d) {
  dev_free(d->values), dev_free(d->times), dev_free(d->lengths), dev_free(d->target_times);
  dev_free(d->target_lengths), dev_free(d->out), dev_free(d->valid);
}

robocache_status gpu_resample(robocache_ctx *ctx, const dev_args *d,
                              const robocache_interp_options *o) {
  return robocache_resample(ctx, dv(d->values), dv(d->times), dv(d->lengths), dv(d->target_times),
                            dv(d->target_lengths), o, (robocache_tensor *)dv(d->out),
                            (robocache_tensor *)dv(d->valid));
}

static void free_args(rct_resample_args *a) {
  rct_free(a->values), rct_free(a->times), rct_free(a->lengths), rct_free(a->target_times);
  rct_free(a->target_lengths), rct_free(a->out), rct_free(a->valid);
}

/* ---- random problems ----------------------------------------------------------- */

static double time_at(const rct_tensor *t, int64_t i) {
  return t->t.dtype == ROBOCACHE_DTYPE_I64 ? (double)rct_get_i64(t, i) : rct_get(t, i);
}

/* Target t of row b: on a sample (on_sample[b*T+t] = 1), inside, or up to two
 * edge intervals outside the n valid samples. */
static void random_target(rct_resample_args *a, const spec *c, rct_rng *rng, int64_t b, int64_t t,
                          int64_t n, unsigned char *on_sample) {
  int64_t S = c->S, T = c->T, row = b * S;
  double off = c->tdt == ROBOCACHE_DTYPE_I64 ? (double)c->offset_ns : c->offset_ns * 1e-9;
  int kind = (int)rct_rng_int(rng, 0, 9);
  double first = time_at(a->times, row), last = time_at(a->times, row + n - 1);
  double d0 = n > 1 ? time_at(a->times, row + 1) - first : 1e7;
  double d1 = n > 1 ? last - time_at(a->times, row + n - 2) : 1e7;
  if (c->tdt != ROBOCACHE_DTYPE_I64 && n == 1) d0 = d1 = 0.01;
  if (kind <= 2 && (c->tdt != ROBOCACHE_DTYPE_F32 || c->offset_ns == 0)) {
    int64_t i = rct_rng_int(rng, 0, n - 1);
    if (c->tdt == ROBOCACHE_DTYPE_I64)
      rct_set_i64(a->target_times, b * T + t, rct_get_i64(a->times, row + i) + c->offset_ns);
    else
      rct_set(a->target_times, b * T + t, rct_get(a->times, row + i) + off);
    on_sample[b * T + t] = 1;
    return;
  }
  double x = kind == 3   ? first - rct_rng_uniform(rng, 0.01, 2.0) * d0
             : kind == 4 ? last + rct_rng_uniform(rng, 0.01, 2.0) * d1
                         : rct_rng_uniform(rng, first, last);
  if (c->tdt == ROBOCACHE_DTYPE_I64)
    rct_set_i64(a->target_times, b * T + t, (int64_t)llround(x) + c->offset_ns);
  else
    rct_set(a->target_times, b * T + t, x + off);
}

/* Sorts the int64 target times of each row, with their on_sample flags. */
static void sort_targets(rct_resample_args *a, const spec *c, unsigned char *on_sample) {
  for (int64_t b = 0; b < c->B; b++)
    for (int64_t t = 1; t < c->T; t++) { /* insertion sort: rows are short */
      int64_t x = rct_get_i64(a->target_times, b * c->T + t), u = t;
      unsigned char f = on_sample[b * c->T + t];
      for (; u > 0 && rct_get_i64(a->target_times, b * c->T + u - 1) > x; u--) {
        rct_set_i64(a->target_times, b * c->T + u, rct_get_i64(a->target_times, b * c->T + u - 1));
        on_sample[b * c->T + u] = on_sample[b * c->T + u - 1];
      }
      rct_set_i64(a->target_times, b * c->T + u, x);
      on_sample[b * c->T + u] = f;
    }
}

/* Random ragged problem: lengths in 1..S (rows 0 and 1 get 1 and 2 samples),
 * target_lengths in 0..T, values in [-1, 1] (unit quaternions for slerp). */
static rct_resample_args make_case(const spec *c, rct_rng *rng, unsigned char *on_sample) {
  rct_resample_args a = {0};
  robocache_interp_options_init(&a.opt);
  a.opt.method = c->method;
  a.opt.extrapolate = c->extrapolate;
  a.opt.time_offset_ns = c->offset_ns;
  a.opt.max_gap_ns = c->max_gap_ns;
  a.opt.tolerance_ns = c->tolerance_ns;
  a.opt.fill_value = c->extrapolate == ROBOCACHE_EXTRAP_FILL ? -7.5 : NAN;
  a.values = rct_make3(c->vdt, c->B, c->S, c->D);
  a.times = rct_make2(c->tdt, c->B, c->S);
  a.lengths = rct_make1(ROBOCACHE_DTYPE_I64, c->B);
  a.target_times = rct_make2(c->tdt, c->B, c->T);
  a.target_lengths = rct_make1(ROBOCACHE_DTYPE_I64, c->B);
  a.out = rct_make3(c->odt, c->B, c->T, c->D);
  a.valid = rct_make2(ROBOCACHE_DTYPE_U8, c->B, c->T);
  int64_t start = c->tdt == ROBOCACHE_DTYPE_I64 ? 1600000000000000000ll : 1000000000ll;
  if (c->steps == STEPS_BURSTY) {
    rct_fill_times(a.times, rng, start, 1000, 1000);
    for (int64_t b = 0; b < c->B; b++) { /* every 50th step 20 ms instead of 1 us */
      for (int64_t i = 1; i < c->S; i++) {
        int64_t extra = (i / 50) * 19999000ll;
        if (c->tdt == ROBOCACHE_DTYPE_I64)
          rct_set_i64(a.times, b * c->S + i, rct_get_i64(a.times, b * c->S + i) + extra);
        else
          rct_set(a.times, b * c->S + i, rct_get(a.times, b * c->S + i) + extra * 1e-9);
      }
    }
  } else if (c->steps == STEPS_STEADY) {
    rct_fill_times(a.times, rng, start, 9000000, 11000000);
  } else {
    rct_fill_times(a.times, rng, start, 1000000, 20000000);
  }
  rct_fill_uniform(a.values, rng, -1, 1);
  if (c->method == ROBOCACHE_SLERP)
    for (int64_t q = 0; q < c->B * c->S * c->D / 4; q++) {
      double n2 = 0;
      for (int e = 0; e < 4; e++) n2 += pow(rct_get(a.values, q * 4 + e), 2);
      for (int e = 0; e < 4; e++)
        rct_set(a.values, q * 4 + e, rct_get(a.values, q * 4 + e) / sqrt(n2));
    }
  for (int64_t b = 0; b < c->B; b++) {
    int64_t n = b == 0 ? 1 : b == 1 ? 2 : rct_rng_int(rng, 1, c->S);
    rct_set_i64(a.lengths, b, n);
    rct_set_i64(a.target_lengths, b, b == 2 ? c->T : rct_rng_int(rng, 0, c->T));
    for (int64_t t = 0; t < c->T; t++) random_target(&a, c, rng, b, t, n, on_sample);
  }
  if (c->sorted) sort_targets(&a, c, on_sample);
  return a;
}

gpu_case case_new(const spec *c, rct_rng *rng) {
  gpu_case g = {0};
  g.on_sample = calloc((size_t)(c->B * c->T), 1);
  assert_non_null(g.on_sample);
  g.a = make_case(c, rng, g.on_sample);
  return g;
}

void case_upload(gpu_case *g) { g->d = to_dev_args(&g->a); }

void case_free(gpu_case *g) {
  dev_args_free(&g->d);
  free_args(&g->a);
  free(g->on_sample);
}

double rtol_of(robocache_dtype odt) {
  switch (odt) {
  case ROBOCACHE_DTYPE_BF16: return 0x1p-7;
  case ROBOCACHE_DTYPE_F16: return 0x1p-10;
  case ROBOCACHE_DTYPE_F32: return 0x1p-23;
  default: return 0;
  }
}

double atol_of(const spec *c) {
  if (c->vdt == ROBOCACHE_DTYPE_F64 || c->odt == ROBOCACHE_DTYPE_F64) return 1e-12;
  return c->method == ROBOCACHE_SLERP ? 2e-5 : 2e-6;
}

/* Fails unless targets on samples have the reference's bits. */
static void assert_on_sample_exact(const rct_tensor *gpu, const rct_tensor *ref, const spec *c,
                                   const unsigned char *on_sample) {
  for (int64_t bt = 0; bt < c->B * c->T; bt++) {
    if (!on_sample[bt]) continue;
    for (int64_t d = 0; d < c->D; d++)
      if (rct_get_bits(gpu, bt * c->D + d) != rct_get_bits(ref, bt * c->D + d))
        fail_msg("target on a sample not bit-exact: row %lld target %lld channel %lld",
                 (long long)(bt / c->T), (long long)(bt % c->T), (long long)d);
  }
}

void assert_gpu_matches(const gpu_case *g, const spec *c, const char *what) {
  rct_tensor *gout = rct_make3(c->odt, c->B, c->T, c->D);
  rct_tensor *gvalid = rct_make2(ROBOCACHE_DTYPE_U8, c->B, c->T);
  from_dev(gout, g->d.out);
  from_dev(gvalid, g->d.valid);
  rct_assert_bits_equal(gvalid, g->a.valid, what);
  rct_assert_close(gout, g->a.out, atol_of(c), rtol_of(c->odt), what);
  assert_on_sample_exact(gout, g->a.out, c, g->on_sample);
  rct_free(gout), rct_free(gvalid);
}

void check_case(const spec *c, uint64_t seed) {
  rct_rng rng = rct_rng_seed(seed);
  gpu_case g = case_new(c, &rng);
  case_upload(&g);
  robocache_ctx *ctx = NULL;
  assert_int_equal(robocache_ctx_create(&ctx), ROBOCACHE_OK);
  robocache_status s = gpu_resample(ctx, &g.d, &g.a.opt);
  if (s != ROBOCACHE_OK) fail_msg("GPU resample: %s", robocache_ctx_error_message(ctx));
  char msg[512];
  s = rct_resample(&g.a, 1, msg, sizeof msg);
  if (s != ROBOCACHE_OK) fail_msg("reference resample: %s", msg);
  char what[160];
  snprintf(what, sizeof what, "method %d extrapolate %d values %s out %s times %s", c->method,
           c->extrapolate, robocache_dtype_name(c->vdt), robocache_dtype_name(c->odt),
           robocache_dtype_name(c->tdt));
  assert_gpu_matches(&g, c, what);
  robocache_ctx_free(ctx);
  case_free(&g);
}
