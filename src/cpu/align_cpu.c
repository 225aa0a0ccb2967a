/* Optimised CPU forward of align / resample: OpenMP over (row, target)
 * pairs, binary search and option logic from common/interp.h, then one tight
 * loop over the channels of each stream. A fast path handles float32 values
 * and out with contiguous channels; one writer per (values, out) dtype pair
 * handles every other dtype and stride (float16 out through F16C where the
 * CPU has it, cpu/f16c.h). Arithmetic in float32 (float64 when values or out are
 * float64); a target on a sample copies it bit-exactly. Problems too small to
 * gain from threads run on the calling thread (cpu_serial). */
#include <math.h>
#include <string.h>

#include "cpu/align_cpu_target.h"
#include "cpu/f16c.h"
#include "ops/align_error.h"

/* o[d] = rc_lerp_f32(a[d], b[d], w) for d < D, in two loops that vectorise:
 * the main formula, then a test for non-finite results (x - x is 0 only for
 * finite x), which the few such channels redo. */
static void lerp_run_f32(const float *restrict a, const float *restrict b, float w,
                         float *restrict o, int64_t D) {
  for (int64_t d = 0; d < D; d++) o[d] = rc_lerp_main_f32(a[d], b[d], w);
  int finite = 1;
  for (int64_t d = 0; d < D; d++) finite &= o[d] - o[d] == 0.0f;
  if (!finite)
    for (int64_t d = 0; d < D; d++)
      if (!isfinite(o[d])) o[d] = rc_lerp_edge_f32(a[d], b[d], w);
}

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
      lerp_run_f32(a, b, w, o, D);
    break;
  case RC_TGT_FILL:
    for (int64_t d = 0; d < D; d++) o[d] = fill;
    break;
  default: memset(o, 0, (size_t)D * sizeof *o); break;
  }
}

/* Typed element loads (as float, or double for float64) and stores (x
 * rounded to nearest even), so that the per-dtype writers below have no
 * per-element dtype switch. */
static inline float ld_f32(const void *p, int64_t i) { return ((const float *)p)[i]; }
static inline double ld_f64(const void *p, int64_t i) { return ((const double *)p)[i]; }
static inline float ld_f16(const void *p, int64_t i) {
  return rc_f16_to_f32(((const uint16_t *)p)[i]);
}
static inline float ld_bf16(const void *p, int64_t i) {
  return rc_bf16_to_f32(((const uint16_t *)p)[i]);
}
static inline void st_f32(void *p, int64_t i, double x) { ((float *)p)[i] = (float)x; }
static inline void st_f64(void *p, int64_t i, double x) { ((double *)p)[i] = x; }
static inline void st_f16(void *p, int64_t i, double x) {
  ((uint16_t *)p)[i] = rc_f32_to_f16((float)x);
}
static inline void st_bf16(void *p, int64_t i, double x) {
  ((uint16_t *)p)[i] = rc_f32_to_bf16((float)x);
}
#ifdef RC_F16C
RC_F16C_TARGET static inline void st_f16c(void *p, int64_t i, double x) {
  ((uint16_t *)p)[i] = rc_f32_to_f16_f16c((float)x);
}
#endif

/* Writer NAME of the D channels of one target for one (values, out) dtype
 * pair, any strides, arithmetic in T (float, or double when either is
 * float64), compiled with the attributes ATTR.
 * vb: the values' element offset of row b; ob: the out element offset of the
 * target's first channel of this stream. */
typedef void (*write_fn)(const rc_stream_view *s, const rc_view *out, int64_t vb, int64_t ob,
                         const rc_target *tg);

#define DEFINE_WRITE_ATTR(ATTR, NAME, T, LD, ST)                                                   \
  ATTR static void NAME(const rc_stream_view *s, const rc_view *out, int64_t vb, int64_t ob,       \
                        const rc_target *tg) {                                                     \
    const void *vd = s->values.data;                                                               \
    void *od = out->data;                                                                          \
    const int64_t vc = s->values.strides[2], oc = out->strides[2], D = s->D;                       \
    const int64_t a = vb + tg->i0 * s->values.strides[1], b = vb + tg->i1 * s->values.strides[1];  \
    const T w = (T)tg->w, fill = (T)s->opt.fill_value;                                             \
    if (tg->mode == RC_TGT_SAMPLE) {                                                               \
      for (int64_t d = 0; d < D; d++) ST(od, ob + d * oc, LD(vd, a + d * vc));                     \
    } else if (tg->mode == RC_TGT_INTERP && s->opt.method == ROBOCACHE_SLERP) {                    \
      for (int64_t d = 0; d < D; d += 4) {                                                         \
        T q0[4], q1[4], r[4];                                                                      \
        for (int c = 0; c < 4; c++)                                                                \
          q0[c] = LD(vd, a + (d + c) * vc), q1[c] = LD(vd, b + (d + c) * vc);                      \
        RC_SLERP_##T(q0, q1, w, r);                                                                \
        for (int c = 0; c < 4; c++) ST(od, ob + (d + c) * oc, r[c]);                               \
      }                                                                                            \
    } else if (tg->mode == RC_TGT_INTERP) {                                                        \
      for (int64_t d = 0; d < D; d++)                                                              \
        ST(od, ob + d * oc, RC_LERP_##T((T)LD(vd, a + d * vc), (T)LD(vd, b + d * vc), w));         \
    } else {                                                                                       \
      for (int64_t d = 0; d < D; d++) ST(od, ob + d * oc, tg->mode == RC_TGT_FILL ? fill : 0);     \
    }                                                                                              \
  }

#define DEFINE_WRITE(NAME, T, LD, ST) DEFINE_WRITE_ATTR(, NAME, T, LD, ST)
#define RC_LERP_float rc_lerp_f32
#define RC_LERP_double rc_lerp_f64
#define RC_SLERP_float rc_slerp_f32
#define RC_SLERP_double rc_slerp_f64

DEFINE_WRITE(write_f32_f32, float, ld_f32, st_f32)
DEFINE_WRITE(write_f32_f64, double, ld_f32, st_f64)
DEFINE_WRITE(write_f32_f16, float, ld_f32, st_f16)
DEFINE_WRITE(write_f32_bf16, float, ld_f32, st_bf16)
DEFINE_WRITE(write_f64_f32, double, ld_f64, st_f32)
DEFINE_WRITE(write_f64_f64, double, ld_f64, st_f64)
DEFINE_WRITE(write_f64_f16, double, ld_f64, st_f16)
DEFINE_WRITE(write_f64_bf16, double, ld_f64, st_bf16)
DEFINE_WRITE(write_f16_f32, float, ld_f16, st_f32)
DEFINE_WRITE(write_f16_f64, double, ld_f16, st_f64)
DEFINE_WRITE(write_f16_f16, float, ld_f16, st_f16)
DEFINE_WRITE(write_f16_bf16, float, ld_f16, st_bf16)
DEFINE_WRITE(write_bf16_f32, float, ld_bf16, st_f32)
DEFINE_WRITE(write_bf16_f64, double, ld_bf16, st_f64)
DEFINE_WRITE(write_bf16_f16, float, ld_bf16, st_f16)
DEFINE_WRITE(write_bf16_bf16, float, ld_bf16, st_bf16)

/* writers[values dtype][out dtype], dtypes F32 = 0, F64, F16, BF16. */
static const write_fn writers[4][4] = {
    {write_f32_f32, write_f32_f64, write_f32_f16, write_f32_bf16},
    {write_f64_f32, write_f64_f64, write_f64_f16, write_f64_bf16},
    {write_f16_f32, write_f16_f64, write_f16_f16, write_f16_bf16},
    {write_bf16_f32, write_bf16_f64, write_bf16_f16, write_bf16_bf16}};

#ifdef RC_F16C
DEFINE_WRITE_ATTR(RC_F16C_TARGET, write_f32_f16c, float, ld_f32, st_f16c)
DEFINE_WRITE_ATTR(RC_F16C_TARGET, write_f64_f16c, double, ld_f64, st_f16c)
DEFINE_WRITE_ATTR(RC_F16C_TARGET, write_f16_f16c, float, ld_f16, st_f16c)
DEFINE_WRITE_ATTR(RC_F16C_TARGET, write_bf16_f16c, float, ld_bf16, st_f16c)

/* The float16-out writers of CPUs with F16C, by values dtype: the same bits
 * as writers[v][F16] at ~1.5x their speed. */
static const write_fn f16c_writers[4] = {write_f32_f16c, write_f64_f16c, write_f16_f16c,
                                         write_bf16_f16c};
#endif

/* The writer of values dtype v and out dtype o for this CPU. */
static write_fn writer(int32_t v, int32_t o) {
#ifdef RC_F16C
  if (o == ROBOCACHE_DTYPE_F16 && rc_cpu_has_f16c()) return f16c_writers[v];
#endif
  return writers[v][o];
}

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
  const write_fn write = writer(v->dtype, out->dtype);
  int64_t hint = -1, err = -1;
  for (int64_t t = t0; t < t1; t++) {
    rc_target tg = t >= count ? rc_target_padded() : cpu_target(p, s, b, t, &hint);
    if (tg.mode == RC_TGT_ERROR && err < 0) err = t;
    const int64_t ob = b * out->strides[0] + t * out->strides[1] + s->col * out->strides[2];
    /* with D == 0, values and out may have NULL data: no pointer arithmetic on them */
    if (fast && s->D > 0)
      write_fast_f32(s, (const float *)v->data + vb, v->strides[1], &tg, (float *)out->data + ob);
    else if (s->D > 0)
      write(s, out, vb, ob, &tg);
    if (p->has_valid)
      ((uint8_t *)m->data)[b * m->strides[0] + t * m->strides[1] + k * m->strides[2]] =
          (uint8_t)tg.valid;
  }
  return err;
}

/* Every stream of tasks [from, to) (task: targets [t0, t0 + CPU_CHUNK) of one
 * row); returns the flat index (b * T + t) * K + k of their first
 * EXTRAP_ERROR target, or INT64_MAX. */
static int64_t write_tasks(const rc_align_problem *p, int64_t chunks, int64_t from, int64_t to) {
  int64_t first_err = INT64_MAX;
  for (int64_t task = from; task < to; task++) {
    const int64_t b = task / chunks, t0 = (task % chunks) * CPU_CHUNK;
    const int64_t t1 = t0 + CPU_CHUNK < p->T ? t0 + CPU_CHUNK : p->T;
    for (int k = 0; k < p->K; k++) {
      const int64_t t = write_chunk(p, k, b, t0, t1), i = (b * p->T + t) * p->K + k;
      if (t >= 0 && i < first_err) first_err = i;
    }
  }
  return first_err;
}

robocache_status rc_align_cpu(robocache_ctx *ctx, const rc_align_problem *p) {
  const int64_t K = p->K, chunks = (p->T + CPU_CHUNK - 1) / CPU_CHUNK, tasks = p->B * chunks;
  const int threads = rc_ctx_threads(ctx);
  int64_t first_err; /* flat index (b * T + t) * K + k */
  if (cpu_serial(p, threads, tasks)) {
    first_err = write_tasks(p, chunks, 0, tasks);
  } else {
    first_err = INT64_MAX;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(min : first_err)
    for (int64_t task = 0; task < tasks; task++) {
      const int64_t i = write_tasks(p, chunks, task, task + 1);
      if (i < first_err) first_err = i;
    }
  }
  if (first_err == INT64_MAX) return ROBOCACHE_OK;
  const int64_t i = first_err / K, b = i / p->T, t = i % p->T;
  const int k = (int)(first_err % K);
  int64_t hint = -1;
  return rc_align_target_error(ctx, p, k, b, t, cpu_target(p, &p->streams[k], b, t, &hint).err);
}
