/* robocache_align / robocache_resample / robocache_resample_backward:
 * validate arguments, build an rc_align_problem, pick the backend. */
#include "common/interp.h"
#include "ops/align_problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void robocache_interp_options_init(robocache_interp_options *o) {
  if (!o) return;
  o->method = ROBOCACHE_LINEAR;
  o->extrapolate = ROBOCACHE_EXTRAP_CLAMP;
  o->fill_value = NAN;
  o->max_gap_ns = 0;
  o->tolerance_ns = 0;
  o->time_offset_ns = 0;
  o->quat_order = ROBOCACHE_QUAT_XYZW;
}

static robocache_status check_options(robocache_ctx *ctx, const char *who,
                                      const robocache_interp_options *o, int64_t D) {
  if (o->method < ROBOCACHE_LINEAR || o->method > ROBOCACHE_SLERP)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: unknown method %d", who, (int)o->method);
  if (o->extrapolate < ROBOCACHE_EXTRAP_CLAMP || o->extrapolate > ROBOCACHE_EXTRAP_ERROR)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: unknown extrapolate policy %d", who,
                    (int)o->extrapolate);
  if (o->quat_order != ROBOCACHE_QUAT_XYZW && o->quat_order != ROBOCACHE_QUAT_WXYZ)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: unknown quat_order %d", who,
                    (int)o->quat_order);
  if (o->method == ROBOCACHE_SLERP && D % 4 != 0)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "%s: method slerp needs channels in groups of 4 (quaternions), got D = %lld",
                    who, (long long)D);
  if (!rc_time_in_range(o->time_offset_ns, 0))
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "%s: time_offset_ns = %lld is outside +-2^62 ns (about 146 years)", who,
                    (long long)o->time_offset_ns);
  if (o->tolerance_ns > 0 && (o->method == ROBOCACHE_LINEAR || o->method == ROBOCACHE_SLERP))
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "%s: tolerance applies to methods nearest, previous and next, not %s", who,
                    rc_method_name(o->method));
  return ROBOCACHE_OK;
}

static robocache_status check_lengths(robocache_ctx *ctx, const robocache_tensor *t,
                                      const char *what, int64_t B, rc_view *v, int *has) {
  *has = 0;
  if (!t) return ROBOCACHE_OK;
  RC_TRY(rc_view_from(ctx, t, what, v));
  RC_TRY(rc_check_ndim(ctx, v, what, 1));
  RC_TRY(rc_check_dim(ctx, v, what, 0, B, "B"));
  if (v->dtype != ROBOCACHE_DTYPE_I64)
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE, "%s: dtype must be int64, got %s", what,
                    robocache_dtype_name((robocache_dtype)v->dtype));
  *has = 1;
  return ROBOCACHE_OK;
}

static robocache_status check_same_device(robocache_ctx *ctx, const rc_view *a, const rc_view *b,
                                          const char *what) {
  if (a->device_type != b->device_type || a->device_id != b->device_id)
    return rc_error(ctx, ROBOCACHE_DEVICE_MISMATCH,
                    "%s is on device (%d, %d) but target_times on (%d, %d)", what,
                    (int)b->device_type, (int)b->device_id, (int)a->device_type, (int)a->device_id);
  return ROBOCACHE_OK;
}

/* Validates one stream against target_times and fills s; messages name the
 * stream as `who` ("stream 2 (imu)"), or not at all when who is NULL. */
static robocache_status check_stream(robocache_ctx *ctx, rc_align_problem *p,
                                     const robocache_stream *in, rc_stream_view *s,
                                     const char *who) {
  s->name = in->name ? in->name : "";
  char what[320] = "";
  if (who) snprintf(what, sizeof what, "%s values", who);
  RC_TRY(rc_view_from(ctx, in->values, what, &s->values));
  RC_TRY(rc_check_ndim(ctx, &s->values, what, 3));
  RC_TRY(rc_check_dim(ctx, &s->values, what, 0, p->B, "B"));
  if (!rc_dtype_is_float(s->values.dtype))
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE,
                    "%s: dtype must be float32, float64, float16 or bfloat16, got %s", what,
                    robocache_dtype_name((robocache_dtype)s->values.dtype));
  RC_TRY(check_same_device(ctx, &p->target_times, &s->values, what));
  s->S = s->values.shape[1];
  s->D = s->values.shape[2];
  if (s->S == 0)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "%s: stream is empty (S = 0 samples)", what);
  if (who) snprintf(what, sizeof what, "%s times", who);
  RC_TRY(rc_view_from(ctx, in->times, what, &s->times));
  RC_TRY(rc_check_ndim(ctx, &s->times, what, 2));
  RC_TRY(rc_check_dim(ctx, &s->times, what, 0, p->B, "B"));
  RC_TRY(rc_check_dim(ctx, &s->times, what, 1, s->S, "S of values"));
  if (s->times.dtype != p->time_dtype)
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE,
                    "%s: dtype %s differs from target_times dtype %s", what,
                    robocache_dtype_name((robocache_dtype)s->times.dtype),
                    robocache_dtype_name((robocache_dtype)p->time_dtype));
  RC_TRY(check_same_device(ctx, &p->target_times, &s->times, what));
  if (who) snprintf(what, sizeof what, "%s lengths", who);
  RC_TRY(check_lengths(ctx, in->lengths, what, p->B, &s->lengths, &s->has_lengths));
  if (s->has_lengths) RC_TRY(check_same_device(ctx, &p->target_times, &s->lengths, what));
  s->opt = in->options;
  RC_TRY(check_options(ctx, who ? who : "", &s->opt, s->D));
  return ROBOCACHE_OK;
}

/* check_stream for stream k: first without names (no string formatting on
 * the path of a valid call: it was about half the cost of a tiny resample),
 * then, when a check fails, again with them for the message (the checks
 * only read their arguments, so the same one fails). */
static robocache_status build_stream(robocache_ctx *ctx, rc_align_problem *p, int k,
                                     const robocache_stream *in, rc_stream_view *s) {
  if (check_stream(ctx, p, in, s, NULL) == ROBOCACHE_OK) return ROBOCACHE_OK;
  char who[256];
  if (in->name)
    snprintf(who, sizeof who, "stream %d (%s)", k, in->name);
  else
    snprintf(who, sizeof who, "stream %d", k);
  return check_stream(ctx, p, in, s, who);
}

/* Validates target_times, target_lengths and the streams; fills p (except
 * out/valid). streams_out must hold num_streams entries. */
static robocache_status build_problem(robocache_ctx *ctx, const robocache_stream *streams,
                                      int32_t num_streams, const robocache_tensor *target_times,
                                      const robocache_tensor *target_lengths, rc_align_problem *p,
                                      rc_stream_view *streams_out) {
  if (num_streams < 1 || !streams)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "align: need at least one stream, got %d",
                    (int)num_streams);
  RC_TRY(rc_view_from(ctx, target_times, "target_times", &p->target_times));
  RC_TRY(rc_check_ndim(ctx, &p->target_times, "target_times", 2));
  p->B = p->target_times.shape[0];
  p->T = p->target_times.shape[1];
  p->time_dtype = p->target_times.dtype;
  if (!rc_dtype_is_time(p->time_dtype))
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE,
                    "target_times: dtype must be int64 (ns), float64 or float32 (s), got %s",
                    robocache_dtype_name((robocache_dtype)p->time_dtype));
  RC_TRY(check_lengths(ctx, target_lengths, "target_lengths", p->B, &p->target_lengths,
                       &p->has_target_lengths));
  if (p->has_target_lengths)
    RC_TRY(check_same_device(ctx, &p->target_times, &p->target_lengths, "target_lengths"));
  p->K = num_streams;
  p->streams = streams_out;
  p->Dout = 0;
  for (int k = 0; k < num_streams; k++) {
    RC_TRY(build_stream(ctx, p, k, &streams[k], &streams_out[k]));
    streams_out[k].col = p->Dout;
    if (streams_out[k].D > RC_MAX_BYTES - p->Dout)
      return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY,
                      "align: the channels of streams 0..%d add up to more than %.4g", k,
                      (double)RC_MAX_BYTES);
    p->Dout += streams_out[k].D;
  }
  return ROBOCACHE_OK;
}

/* OUT_OF_MEMORY unless out [B,T,Dout] (the output the call fills, elements
 * of out_esize bytes) and the B x T x K decisions fit in RC_MAX_BYTES. */
static robocache_status check_sizes(robocache_ctx *ctx, const rc_align_problem *p,
                                    const robocache_tensor *out, const char *what) {
  const size_t esize = out ? robocache_dtype_size((robocache_dtype)out->dtype) : 0;
  const int64_t shape[3] = {p->B, p->T, p->Dout}, decisions[3] = {p->B, p->T, p->K};
  RC_TRY(rc_check_output_size(ctx, what, 3, shape, esize ? esize : 1));
  return rc_check_output_size(ctx, "valid [B,T,K]", 3, decisions, 1);
}

static robocache_status check_out(robocache_ctx *ctx, rc_align_problem *p, robocache_tensor *out,
                                  const char *what) {
  RC_TRY(rc_view_from(ctx, out, what, &p->out));
  RC_TRY(rc_check_ndim(ctx, &p->out, what, 3));
  RC_TRY(rc_check_dim(ctx, &p->out, what, 0, p->B, "B"));
  RC_TRY(rc_check_dim(ctx, &p->out, what, 1, p->T, "T"));
  RC_TRY(rc_check_dim(ctx, &p->out, what, 2, p->Dout, "the total channels"));
  if (!rc_dtype_is_float(p->out.dtype))
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE,
                    "%s: dtype must be float32, float64, float16 or bfloat16, got %s", what,
                    robocache_dtype_name((robocache_dtype)p->out.dtype));
  return check_same_device(ctx, &p->target_times, &p->out, what);
}

/* valid: [B,T,K], or [B,T] when resample_shape (K == 1). */
static robocache_status check_valid(robocache_ctx *ctx, rc_align_problem *p,
                                    robocache_tensor *valid, int resample_shape) {
  p->has_valid = 0;
  if (!valid) return ROBOCACHE_OK;
  RC_TRY(rc_view_from(ctx, valid, "valid", &p->valid));
  RC_TRY(rc_check_ndim(ctx, &p->valid, "valid", resample_shape ? 2 : 3));
  RC_TRY(rc_check_dim(ctx, &p->valid, "valid", 0, p->B, "B"));
  RC_TRY(rc_check_dim(ctx, &p->valid, "valid", 1, p->T, "T"));
  if (resample_shape) {
    p->valid.ndim = 3;
    p->valid.shape[2] = 1;
    p->valid.strides[2] = 1;
  } else {
    RC_TRY(rc_check_dim(ctx, &p->valid, "valid", 2, p->K, "K (number of streams)"));
  }
  if (p->valid.dtype != ROBOCACHE_DTYPE_U8)
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE, "valid: dtype must be uint8, got %s",
                    robocache_dtype_name((robocache_dtype)p->valid.dtype));
  RC_TRY(check_same_device(ctx, &p->target_times, &p->valid, "valid"));
  p->has_valid = 1;
  return ROBOCACHE_OK;
}

static const rc_align_backends align_backends = {rc_align_ref, rc_align_cpu, rc_align_cuda};
static const rc_align_backends backward_backends = {rc_align_backward_ref, rc_align_backward_cpu,
                                                    rc_align_backward_cuda};

/* CUDA tensors go to the CUDA backend; CPU tensors are checked
 * (rc_align_check_data), then go to the reference or the optimised
 * backend. */
static robocache_status dispatch(robocache_ctx *ctx, const rc_align_problem *p,
                                 const rc_align_backends *b) {
  if (p->target_times.device_type != ROBOCACHE_DEVICE_CPU) return b->cuda(ctx, p);
  RC_TRY(rc_align_check_data(ctx, p));
  return rc_ctx(ctx)->force_reference ? b->ref(ctx, p) : b->cpu(ctx, p);
}

#define RC_ALIGN_STACK_STREAMS 16

robocache_status robocache_align(robocache_ctx *ctx, const robocache_stream *streams,
                                 int32_t num_streams, const robocache_tensor *target_times,
                                 const robocache_tensor *target_lengths, robocache_tensor *out,
                                 robocache_tensor *valid) {
  rc_clear_error(ctx);
  if (num_streams < 1 || num_streams > 4096 || !streams)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "align: num_streams must be in 1..4096 with streams non-NULL, got %d",
                    (int)num_streams);
  /* no host allocation for the usual few streams (calls stay cheap and capturable) */
  rc_stream_view few[RC_ALIGN_STACK_STREAMS] = {0};
  rc_stream_view *views =
      num_streams <= RC_ALIGN_STACK_STREAMS ? few : calloc((size_t)num_streams, sizeof *views);
  if (!views) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "align: out of memory");
  rc_align_problem p = {0};
  robocache_status s =
      build_problem(ctx, streams, num_streams, target_times, target_lengths, &p, views);
  if (s == ROBOCACHE_OK) s = check_sizes(ctx, &p, out, "out [B,T,sum D]");
  if (s == ROBOCACHE_OK) s = check_out(ctx, &p, out, "out");
  if (s == ROBOCACHE_OK) s = check_valid(ctx, &p, valid, 0);
  if (s == ROBOCACHE_OK) s = dispatch(ctx, &p, &align_backends);
  if (views != few) free(views);
  return s;
}

/* The problem of resample / resample_backward: one unnamed stream (options
 * NULL = the defaults), which messages after validation call `name`; view
 * receives the stream. */
static robocache_status build_single(robocache_ctx *ctx, const robocache_tensor *values,
                                     const robocache_tensor *times, const robocache_tensor *lengths,
                                     const robocache_tensor *target_times,
                                     const robocache_tensor *target_lengths,
                                     const robocache_interp_options *options, const char *name,
                                     rc_align_problem *p, rc_stream_view *view) {
  robocache_stream st = {.name = NULL, .values = values, .times = times, .lengths = lengths};
  if (options)
    st.options = *options;
  else
    robocache_interp_options_init(&st.options);
  RC_TRY(build_problem(ctx, &st, 1, target_times, target_lengths, p, view));
  view->name = name;
  return ROBOCACHE_OK;
}

robocache_status robocache_resample(robocache_ctx *ctx, const robocache_tensor *values,
                                    const robocache_tensor *times, const robocache_tensor *lengths,
                                    const robocache_tensor *target_times,
                                    const robocache_tensor *target_lengths,
                                    const robocache_interp_options *options, robocache_tensor *out,
                                    robocache_tensor *valid) {
  rc_clear_error(ctx);
  rc_stream_view view = {0};
  rc_align_problem p = {0};
  RC_TRY(build_single(ctx, values, times, lengths, target_times, target_lengths, options, "values",
                      &p, &view));
  RC_TRY(check_sizes(ctx, &p, out, "out [B,T,D]"));
  RC_TRY(check_out(ctx, &p, out, "out"));
  RC_TRY(check_valid(ctx, &p, valid, 1));
  return dispatch(ctx, &p, &align_backends);
}

robocache_status robocache_resample_backward(robocache_ctx *ctx, const robocache_tensor *grad_out,
                                             const robocache_tensor *times,
                                             const robocache_tensor *lengths,
                                             const robocache_tensor *target_times,
                                             const robocache_tensor *target_lengths,
                                             const robocache_interp_options *options,
                                             robocache_tensor *grad_values) {
  rc_clear_error(ctx);
  rc_stream_view view = {0};
  rc_align_problem p = {0};
  RC_TRY(build_single(ctx, grad_values, times, lengths, target_times, target_lengths, options,
                      "grad_values", &p, &view));
  if (view.opt.method == ROBOCACHE_SLERP)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "resample_backward: method slerp has no gradient with respect to values");
  const int64_t grad_shape[3] = {p.B, view.S, view.D};
  RC_TRY(rc_check_output_size(ctx, "grad_values [B,S,D] (summed in float64)", 3, grad_shape,
                              sizeof(double)));
  RC_TRY(check_sizes(ctx, &p, grad_out, "grad_out [B,T,D]"));
  RC_TRY(check_out(ctx, &p, (robocache_tensor *)grad_out, "grad_out"));
  if (p.out.dtype != view.values.dtype ||
      (p.out.dtype != ROBOCACHE_DTYPE_F32 && p.out.dtype != ROBOCACHE_DTYPE_F64))
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DTYPE,
                    "resample_backward: grad_out and grad_values must both be float32 or both "
                    "float64, got %s and %s",
                    robocache_dtype_name((robocache_dtype)p.out.dtype),
                    robocache_dtype_name((robocache_dtype)view.values.dtype));
  return dispatch(ctx, &p, &backward_backends);
}
