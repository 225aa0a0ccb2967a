/* libFuzzer target: robocache_resample and robocache_resample_backward on
 * fuzzer-chosen small problems (B <= 3 rows, S <= 6 samples, T <= 8 targets,
 * D <= 5 channels; every value, time and output dtype; contiguous, padded,
 * column-major or broadcast layouts; NULL data for empty tensors; lengths;
 * every method, extrapolate policy and option, times possibly NaN or not
 * increasing), run on the CPU backend and on the reference backend: the same
 * status and message, the same valid, out bitwise (slerp within its bound),
 * grad_values bitwise. */
#include "fuzz_ops_interp.h"

/* One call of resample (grad == 0) or resample_backward on a backend. */
typedef struct call {
  fz_tensor out, valid; /* resample: out [B,T,D], valid [B,T]; backward: grad_values [B,S,D] */
  robocache_status status;
  robocache_ctx *ctx;
} call;

static void run(call *c, int ref, int grad, fz_stream *s, const fz_tensor *tt, const fz_tensor *tl,
                int has_tl, const fz_tensor *grad_out, int has_valid) {
  c->ctx = fz_ctx(ref);
  const robocache_tensor *lengths = s->has_lengths ? &s->lengths.t : NULL;
  const robocache_tensor *target_lengths = has_tl ? &tl->t : NULL;
  if (grad)
    c->status = robocache_resample_backward(c->ctx, &grad_out->t, &s->times.t, lengths, &tt->t,
                                            target_lengths, &s->opt, &c->out.t);
  else
    c->status =
        robocache_resample(c->ctx, &s->values.t, &s->times.t, lengths, &tt->t, target_lengths,
                           &s->opt, &c->out.t, has_valid ? &c->valid.t : NULL);
}

static void finish(call *c) {
  fz_free(&c->out);
  fz_free(&c->valid);
  robocache_ctx_free(c->ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in f = {data, size, 0};
  const int32_t time_dtype = fz_time_dtypes[fz_pick(&f, 3)];
  const int64_t B = fz_int(&f, 0, FZ_MAX_B), T = fz_int(&f, 0, FZ_MAX_T);
  const int grad = fz_rare(&f, 4), has_valid = !fz_rare(&f, 4);
  fz_stream s;
  fz_make_stream(&f, &s, time_dtype, B);
  if (grad && s.opt.method == ROBOCACHE_SLERP && fz_pick(&f, 4)) s.opt.method = ROBOCACHE_LINEAR;
  const int64_t tshape[2] = {B, T}, lshape[1] = {B};
  fz_tensor tt, tl;
  fz_make(&tt, &f, time_dtype, 2, tshape, 1);
  fz_fill_targets(&f, &tt, &s, B, T);
  const int has_tl = fz_pick(&f, 2);
  fz_make(&tl, &f, ROBOCACHE_DTYPE_I64, 1, lshape, 1);
  for (int64_t b = 0; b < B; b++)
    fz_set_i64(&tl, b, 0, 0, fz_rare(&f, 16) ? fz_int(&f, -2, 10) : fz_int(&f, 0, T));

  /* outputs of the first call, cloned (same bytes) for the second */
  call c[2];
  memset(c, 0, sizeof c);
  fz_tensor grad_out;
  memset(&grad_out, 0, sizeof grad_out);
  const int32_t out_dtype = grad ? (fz_pick(&f, 2) ? ROBOCACHE_DTYPE_F32 : ROBOCACHE_DTYPE_F64)
                                 : fz_float_dtypes[fz_pick(&f, 4)];
  if (grad) {
    const int64_t gshape[3] = {B, T, s.D}, vshape[3] = {B, s.S, s.D};
    fz_make(&grad_out, &f, fz_rare(&f, 16) ? ROBOCACHE_DTYPE_F16 : out_dtype, 3, gshape, 1);
    for (int64_t b = 0; b < B; b++)
      for (int64_t t = 0; t < T; t++)
        for (int64_t d = 0; d < s.D; d++) fz_set(&grad_out, b, t, d, fz_double(&f));
    fz_make(&c[0].out, &f, out_dtype, 3, vshape, 0);
  } else {
    const int64_t oshape[3] = {B, T, s.D}, vshape[2] = {B, T};
    fz_make(&c[0].out, &f, out_dtype, 3, oshape, 0);
    fz_make(&c[0].valid, &f, ROBOCACHE_DTYPE_U8, 2, vshape, 0);
  }
  fz_poison(&c[0].out);
  fz_poison(&c[0].valid);
  fz_clone(&c[1].out, &c[0].out);
  fz_clone(&c[1].valid, &c[0].valid);

  for (int ref = 0; ref < 2; ref++)
    run(&c[ref], ref, grad, &s, &tt, &tl, has_tl, &grad_out, has_valid);
  const char *what = grad ? "resample_backward" : "resample";
  fz_same_status(what, c[0].status, c[0].ctx, c[1].status, c[1].ctx);
  if (c[0].status == ROBOCACHE_OK && grad) {
    for (int64_t b = 0; b < B; b++)
      for (int64_t i = 0; i < s.S; i++)
        for (int64_t d = 0; d < s.D; d++)
          if (!fz_same_value(&c[0].out, &c[1].out, b, i, d))
            FZ_FAIL("%s: grad_values[%lld, %lld, %lld]: cpu %.17g reference %.17g", what,
                    (long long)b, (long long)i, (long long)d, fz_get(&c[0].out, b, i, d),
                    fz_get(&c[1].out, b, i, d));
  } else if (c[0].status == ROBOCACHE_OK) {
    fz_compare_stream_out(what, &s, 0, &tt, &c[0].out, &c[1].out, B, T);
    if (has_valid) fz_compare_valid(what, &c[0].valid, &c[1].valid);
  }
  for (int ref = 0; ref < 2; ref++) finish(&c[ref]);
  fz_free(&grad_out);
  fz_free(&tt);
  fz_free(&tl);
  fz_free_stream(&s);
  return 0;
}
