/* Host side of a CUDA align / resample call: descriptors, checked mode and
 * error reporting. See docs/cuda.md, "Data checks". */
#include "cuda/align_host_cuda.cuh"

#include <stdlib.h>

extern "C" {
#include "ops/align_error.h"
}

rc_stream_desc rc_cuda_stream_desc(const rc_align_problem *p, int k) {
  const rc_stream_view *s = &p->streams[k];
  rc_stream_desc d = {};
  d.values = s->values.data;
  d.times = s->times.data;
  d.lengths = s->has_lengths ? (const int64_t *)s->lengths.data : NULL;
  d.vs_b = s->values.strides[0];
  d.vs_s = s->values.strides[1];
  d.vs_d = s->values.strides[2];
  d.ts_b = s->times.strides[0];
  d.ts_s = s->times.strides[1];
  d.ls = s->has_lengths ? s->lengths.strides[0] : 0;
  d.S = s->S;
  d.D = s->D;
  d.col = s->col;
  d.opt = s->opt;
  d.simple = rc_is_simple(&s->opt) && s->S <= INT32_MAX; /* 32-bit search indices */
  d.dtype = s->values.dtype;
  return d;
}

rc_target_desc rc_cuda_target_desc(const rc_align_problem *p, const rc_cuda_call *c) {
  rc_target_desc a = {};
  a.times = p->target_times.data;
  a.ts_b = p->target_times.strides[0];
  a.ts_s = p->target_times.strides[1];
  a.lengths = p->has_target_lengths ? (const int64_t *)p->target_lengths.data : NULL;
  a.ls = p->has_target_lengths ? p->target_lengths.strides[0] : 0;
  a.B = p->B;
  a.T = p->T;
  a.time_dtype = p->time_dtype;
  a.K_total = p->K;
  a.record = c->record;
  return a;
}

robocache_status rc_cuda_call_enter(robocache_ctx *ctx, const rc_align_problem *p,
                                    rc_cuda_call *c) {
  c->stream = rc_cuda_stream(ctx);
  c->record = NULL;
  c->scratch = NULL;
  c->checked = 0;
  robocache_status s = rc_cuda_device_enter(ctx, p->target_times.device_id, &c->guard);
  if (s != ROBOCACHE_OK) return s;
  s = rc_cuda_sync_checks(ctx, c->stream, &c->checked);
  if (s != ROBOCACHE_OK) rc_cuda_device_restore(&c->guard);
  return s;
}

robocache_status rc_cuda_call_workspace(robocache_ctx *ctx, const rc_align_problem *p,
                                        size_t scratch_bytes, rc_cuda_call *c) {
  robocache_status s = ROBOCACHE_OK;
  if (c->checked || scratch_bytes > 0)
    s = rc_cuda_workspace(ctx, p->target_times.device_id, scratch_bytes,
                          c->checked ? &c->record : NULL, &c->scratch);
  if (s != ROBOCACHE_OK) rc_cuda_device_restore(&c->guard);
  return s;
}

robocache_status rc_cuda_call_begin(robocache_ctx *ctx, const rc_align_problem *p,
                                    size_t scratch_bytes, rc_cuda_call *c) {
  robocache_status s = rc_cuda_call_enter(ctx, p, c);
  return s == ROBOCACHE_OK ? rc_cuda_call_workspace(ctx, p, scratch_bytes, c) : s;
}

/* A host copy of the elements a view can address (any strides); *hv is v
 * re-pointed at the copy, *buf what to free. */
static robocache_status host_copy(robocache_ctx *ctx, const rc_view *v, rc_view *hv, void **buf) {
  *hv = *v;
  *buf = NULL;
  if (rc_view_numel(v) == 0) return ROBOCACHE_OK;
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < v->ndim; i++) {
    int64_t reach = (v->shape[i] - 1) * v->strides[i];
    if (reach < 0)
      lo += reach;
    else
      hi += reach;
  }
  size_t es = robocache_dtype_size((robocache_dtype)v->dtype);
  size_t bytes = (size_t)(hi - lo + 1) * es;
  *buf = malloc(bytes);
  if (!*buf) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "CUDA error report: out of memory");
  RC_CUDA_TRY(ctx, cudaMemcpy(*buf, v->data + lo * (int64_t)es, bytes, cudaMemcpyDeviceToHost));
  hv->data = (char *)*buf - lo * (int64_t)es;
  hv->device_type = ROBOCACHE_DEVICE_CPU;
  return ROBOCACHE_OK;
}

/* The device flagged bad lengths / times: copy what the checks read to the
 * host and let the CPU check (src/ops/align_check.c) name the first error. */
static robocache_status report_data_error(robocache_ctx *ctx, const rc_align_problem *p) {
  int nbuf = 2 + 2 * p->K;
  void **bufs = (void **)calloc((size_t)nbuf, sizeof *bufs);
  rc_stream_view *hs = (rc_stream_view *)calloc((size_t)p->K, sizeof *hs);
  robocache_status s = ROBOCACHE_OK;
  if (!bufs || !hs) s = rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "CUDA error report: out of memory");
  rc_align_problem hp = *p;
  hp.streams = hs;
  if (s == ROBOCACHE_OK) s = host_copy(ctx, &p->target_times, &hp.target_times, &bufs[0]);
  if (s == ROBOCACHE_OK && p->has_target_lengths)
    s = host_copy(ctx, &p->target_lengths, &hp.target_lengths, &bufs[1]);
  for (int k = 0; k < p->K && s == ROBOCACHE_OK; k++) {
    hs[k] = p->streams[k];
    s = host_copy(ctx, &p->streams[k].times, &hs[k].times, &bufs[2 + 2 * k]);
    if (s == ROBOCACHE_OK && p->streams[k].has_lengths)
      s = host_copy(ctx, &p->streams[k].lengths, &hs[k].lengths, &bufs[3 + 2 * k]);
  }
  if (s == ROBOCACHE_OK) {
    s = rc_align_check_data(ctx, &hp);
    if (s == ROBOCACHE_OK)
      s = rc_error(ctx, ROBOCACHE_INTERNAL,
                   "CUDA data check flagged an error that the host check does not find");
  }
  for (int i = 0; bufs && i < nbuf; i++) free(bufs[i]);
  free(bufs);
  free(hs);
  return s;
}

/* The first EXTRAP_ERROR target (key as in rc_cuda_check_record), with the
 * message of every backend (src/ops/align_error.c). */
static robocache_status report_target_error(robocache_ctx *ctx, const rc_align_problem *p,
                                            unsigned long long key) {
  int err = (int)(key % 4);
  key /= 4;
  int k = (int)(key % (unsigned long long)p->K);
  key /= (unsigned long long)p->K;
  int64_t t = (int64_t)(key % (unsigned long long)p->T), b = (int64_t)(key / p->T);
  const rc_view *tt = &p->target_times;
  size_t es = robocache_dtype_size((robocache_dtype)tt->dtype);
  double when[1]; /* 8 bytes: room for any time dtype */
  RC_CUDA_TRY(ctx, cudaMemcpy(when, tt->data + (b * tt->strides[0] + t * tt->strides[1]) * es, es,
                              cudaMemcpyDeviceToHost));
  rc_align_problem hp = *p;
  hp.target_times.data = (char *)when;
  hp.target_times.strides[0] = hp.target_times.strides[1] = 0;
  return rc_align_target_error(ctx, &hp, k, b, t, err);
}

static_assert(sizeof(rc_cuda_check_record) <= RC_CUDA_READBACK_BYTES, "read back in one piece");

robocache_status rc_cuda_call_end(robocache_ctx *ctx, const rc_align_problem *p, rc_cuda_call *c,
                                  robocache_status status) {
  if (status == ROBOCACHE_OK && c->record) {
    rc_cuda_check_record r;
    cudaError_t e = rc_cuda_read_back(ctx, &r, c->record, sizeof r, c->stream);
    if (e != cudaSuccess) {
      status = rc_cuda_error(ctx, e, "reading the CUDA check record");
    } else if (r.data_bad || r.target_key != ~0ull) {
      status = r.data_bad ? report_data_error(ctx, p) : report_target_error(ctx, p, r.target_key);
      robocache_status reset = rc_cuda_record_reset(ctx, c->record);
      if (reset != ROBOCACHE_OK) status = reset;
    }
  } else if (status == ROBOCACHE_OK && c->scratch) {
    status = rc_cuda_workspace_async(ctx, c->stream);
  }
  rc_cuda_device_restore(&c->guard);
  return status;
}
