/* Optimised CPU forward of align / resample: OpenMP over (row, target)
 * pairs, binary search and option logic from common/interp.h, then one tight
 * loop over the channels of each stream. A fast path handles float32 values
 * and out with contiguous channels; a generic path handles every other dtype
 * and stride. Arithmetic in float32 (float64 when values or out are float64);
 * a target on a sample copies it bit-exactly. */
#include <string.h>

#include "cpu/align_cpu_target.h"
#include "ops/align_error.h"

/* float32 values and out with contiguous channels. v: row b of the values,
 * vs: its sample stride; o: the D outputs of the target. */
static void write_fast_f32(const rc_stream_view *s, const float *v, int64_t vs, const rc_target *tg,
                           float *restrict o) {
  const int64_t D = s->D;
  const float *restrict a = v + tg->i0 * vs, *restrict b = v + tg->i1 * vs;
  const float w = (float)tg->w, fill = (float)s->opt.fill_value;
  switch (tg->mode) {
  case RC_TGT_SAMPLE: memcpy(o, a, (size_t)D * sizeof *o); break;
  case RC_TGT_INTERP:
    if (s->opt.method == ROBOCACHE_SLERP)
      for (int64_t d = 0; d < D; d += 4) rc_slerp_f32(a + d, b + d, w, o + d);
    else
      for (int64_t d = 0; d < D; d++) o[d] = rc_lerp_f32(a[d], b[d], w);
    break;
  case RC_TGT_FILL:
    for (int64_t d = 0; d < D; d++) o[d] = fill;
    break;
  default: memset(o, 0, (size_t)D * sizeof *o); break;
  }
}

/* Any dtypes and strides, arithmetic in T (float or double). v: the values'
 * element offset of row b; ob: the out element offset of the target's first
 * channel of this stream. */
#define DEFINE_WRITE_GENERIC(NAME, T, LOAD, LERP, SLERP)                                           \
  static void NAME(const rc_stream_view *s, const rc_view *out, int64_t vb, int64_t ob,            \
                   const rc_target *tg) {                                                          \
    const rc_view *v = &s->values;                                                                 \
    const int64_t vc = v->strides[2], oc = out->strides[2];                                        \
    const int64_t a = vb + tg->i0 * v->strides[1], b = vb + tg->i1 * v->strides[1];                \
    const T w = (T)tg->w;                                                                          \
    if (tg->mode == RC_TGT_INTERP && s->opt.method == ROBOCACHE_SLERP) {                           \
      for (int64_t d = 0; d < s->D; d += 4) {                                                      \
        T q0[4], q1[4], r[4];                                                                      \
        for (int c = 0; c < 4; c++) {                                                              \
          q0[c] = LOAD(v->dtype, v->data, a + (d + c) * vc);                                       \
          q1[c] = LOAD(v->dtype, v->data, b + (d + c) * vc);                                       \
        }                                                                                          \
        SLERP(q0, q1, w, r);                                                                       \
        for (int c = 0; c < 4; c++) rc_store_f64(out->dtype, out->data, ob + (d + c) * oc, r[c]);  \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    for (int64_t d = 0; d < s->D; d++) {                                                           \
      T x = 0;                                                                                     \
      if (tg->mode == RC_TGT_SAMPLE) x = LOAD(v->dtype, v->data, a + d * vc);                      \
      if (tg->mode == RC_TGT_INTERP)                                                               \
        x = LERP(LOAD(v->dtype, v->data, a + d * vc), LOAD(v->dtype, v->data, b + d * vc), w);     \
      if (tg->mode == RC_TGT_FILL) x = (T)s->opt.fill_value;                                       \
      rc_store_f64(out->dtype, out->data, ob + d * oc, x);                                         \
    }                                                                                              \
  }

DEFINE_WRITE_GENERIC(write_generic_f32, float, rc_load_f32, rc_lerp_f32, rc_slerp_f32)
DEFINE_WRITE_GENERIC(write_generic_f64, double, rc_load_f64, rc_lerp_f64, rc_slerp_f64)

/* Targets per OpenMP task: one chunk of one row, every stream. */
#define CPU_CHUNK 128

/* Writes targets [t0, t1) of row b for stream k (a bracket hint carried from
 * target to target); returns the first EXTRAP_ERROR target, or -1. */
static int64_t write_chunk(const rc_align_problem *p, int k, int64_t b, int64_t t0, int64_t t1) {
  const rc_view *out = &p->out, *m = &p->valid;
  const rc_stream_view *s = &p->streams[k];
  const rc_view *v = &s->values;
  const int64_t count = cpu_target_count(p, b), vb = b * v->strides[0];
  const int fast = v->dtype == ROBOCACHE_DTYPE_F32 && out->dtype == ROBOCACHE_DTYPE_F32 &&
                   v->strides[2] == 1 && out->strides[2] == 1;
  const int wide = v->dtype == ROBOCACHE_DTYPE_F64 || out->dtype == ROBOCACHE_DTYPE_F64;
  int64_t hint = -1, err = -1;
  for (int64_t t = t0; t < t1; t++) {
    rc_target tg = t >= count ? rc_target_padded() : cpu_target(p, s, b, t, &hint);
    if (tg.mode == RC_TGT_ERROR && err < 0) err = t;
    const int64_t ob = b * out->strides[0] + t * out->strides[1] + s->col * out->strides[2];
    if (fast)
      write_fast_f32(s, (const float *)v->data + vb, v->strides[1], &tg, (float *)out->data + ob);
    else if (wide)
      write_generic_f64(s, out, vb, ob, &tg);
    else
      write_generic_f32(s, out, vb, ob, &tg);
    if (p->has_valid)
      ((uint8_t *)m->data)[b * m->strides[0] + t * m->strides[1] + k * m->strides[2]] =
          (uint8_t)tg.valid;
  }
  return err;
}

robocache_status rc_align_cpu(robocache_ctx *ctx, const rc_align_problem *p) {
  const int64_t K = p->K, chunks = (p->T + CPU_CHUNK - 1) / CPU_CHUNK, tasks = p->B * chunks;
  int64_t first_err = INT64_MAX; /* flat index (b * T + t) * K + k */
  const int threads = cpu_threads(rc_ctx(ctx)->num_threads);
  (void)threads;
#pragma omp parallel for num_threads(threads) schedule(static)                                     \
    reduction(min                                                                                  \
              : first_err) if (tasks > 1 && p->B * p->T * (p->Dout + 8) > 65536)
  for (int64_t task = 0; task < tasks; task++) {
    const int64_t b = task / chunks, t0 = (task % chunks) * CPU_CHUNK;
    const int64_t t1 = t0 + CPU_CHUNK < p->T ? t0 + CPU_CHUNK : p->T;
    for (int k = 0; k < p->K; k++) {
      int64_t t = write_chunk(p, k, b, t0, t1);
      if (t >= 0 && (b * p->T + t) * K + k < first_err) first_err = (b * p->T + t) * K + k;
    }
  }
  if (first_err == INT64_MAX) return ROBOCACHE_OK;
  const int64_t i = first_err / K, b = i / p->T, t = i % p->T;
  const int k = (int)(first_err % K);
  int64_t hint = -1;
  return rc_align_target_error(ctx, p, k, b, t, cpu_target(p, &p->streams[k], b, t, &hint).err);
}
