/* CUDA side of robocache_ctx: capability query, device selection, the device
 * workspace (growth and release) and CUDA error messages. */
#include "cuda/context_cuda.cuh"

#include <string.h>

extern "C" int robocache_has_cuda(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); /* no driver / no device: not an error here */
    return 0;
  }
  return n > 0;
}

robocache_status rc_cuda_error(robocache_ctx *ctx, cudaError_t e, const char *what) {
  (void)cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
  return rc_error(ctx, ROBOCACHE_CUDA_ERROR, "%s: %s (%s)", what, cudaGetErrorString(e),
                  cudaGetErrorName(e));
}

robocache_status rc_cuda_check(robocache_ctx *ctx, cudaError_t e, const char *what) {
  return e == cudaSuccess ? ROBOCACHE_OK : rc_cuda_error(ctx, e, what);
}

robocache_status rc_cuda_pdl(robocache_ctx *ctx, int device, bool *pdl) {
  int major = 0;
  RC_CUDA_TRY(ctx, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  *pdl = major >= 9;
  return ROBOCACHE_OK;
}

robocache_status rc_cuda_device_enter(robocache_ctx *ctx, int device, rc_cuda_device_guard *g) {
  g->changed = 0;
  cudaError_t e = cudaGetDevice(&g->previous);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();
    return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DEVICE,
                    "tensors are on CUDA device %d but no CUDA device is usable here: %s", device,
                    cudaGetErrorString(e));
  }
  if (e != cudaSuccess) return rc_cuda_error(ctx, e, "cudaGetDevice");
  if (g->previous != device) {
    RC_CUDA_TRY(ctx, cudaSetDevice(device));
    g->changed = 1;
  }
  return ROBOCACHE_OK;
}

void rc_cuda_device_restore(const rc_cuda_device_guard *g) {
  if (g->changed) (void)cudaSetDevice(g->previous);
}

robocache_status rc_cuda_capturing(robocache_ctx *ctx, cudaStream_t stream, int *capturing) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  cudaError_t e = cudaStreamIsCapturing(stream, &st);
  if (e == cudaErrorStreamCaptureImplicit) {
    /* the legacy stream queried while another stream captures: treat as
     * capturing (no synchronisation allowed). */
    (void)cudaGetLastError();
    *capturing = 1;
    return ROBOCACHE_OK;
  }
  if (e != cudaSuccess) return rc_cuda_error(ctx, e, "cudaStreamIsCapturing");
  *capturing = st != cudaStreamCaptureStatusNone;
  return ROBOCACHE_OK;
}

robocache_status rc_cuda_sync_checks(robocache_ctx *ctx, cudaStream_t stream, int *on) {
  *on = 0;
  if (rc_ctx(ctx)->no_sync_checks) return ROBOCACHE_OK;
  int capturing = 0;
  robocache_status s = rc_cuda_capturing(ctx, stream, &capturing);
  *on = s == ROBOCACHE_OK && !capturing;
  return s;
}

/* cudaFree waits for all work of the device, so nothing uses the workspace
 * (or its event) afterwards. */
static void free_workspace(robocache_ctx *c) {
  (void)cudaFree(c->workspace);
  if (c->workspace_event) (void)cudaEventDestroy((cudaEvent_t)c->workspace_event);
}

static void release_workspace(robocache_ctx *c) {
  if (!c->workspace) return;
  int previous = 0;
  if (cudaGetDevice(&previous) == cudaSuccess && previous != c->workspace_device &&
      cudaSetDevice(c->workspace_device) == cudaSuccess) {
    free_workspace(c);
    (void)cudaSetDevice(previous);
  } else {
    free_workspace(c);
  }
  (void)cudaGetLastError();
  c->workspace = NULL;
  c->workspace_size = 0;
  c->workspace_event = NULL;
  c->workspace_stream = NULL;
}

extern "C" void rc_cuda_ctx_release(robocache_ctx *ctx) {
  /* no CUDA call for a context that holds nothing (a thread that never used
   * the GPU exits) */
  if (!ctx || (!ctx->workspace && !ctx->readback)) return;
  release_workspace(ctx);
  if (ctx->readback) (void)cudaFreeHost(ctx->readback);
  (void)cudaGetLastError();
  ctx->readback = NULL;
}

cudaError_t rc_cuda_read_back(robocache_ctx *ctx, void *dst, const void *src, size_t bytes,
                              cudaStream_t stream) {
  robocache_ctx *c = rc_ctx(ctx);
  if (!c->readback && !c->readback_failed &&
      cudaMallocHost(&c->readback, RC_CUDA_READBACK_BYTES) != cudaSuccess) {
    (void)cudaGetLastError(); /* not fatal: pageable copies from now on, no retry per call */
    c->readback = NULL;
    c->readback_failed = 1;
  }
  void *to = c->readback ? c->readback : dst;
  cudaError_t e = cudaMemcpyAsync(to, src, bytes, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess && to != dst) memcpy(dst, to, bytes);
  return e;
}

static const rc_cuda_check_record rc_record_clear = {~0ull, 0u, 0u};

robocache_status rc_cuda_record_reset(robocache_ctx *ctx, rc_cuda_check_record *record) {
  /* on the context's stream, completed before returning: not a hot path (workspace creation,
   * or after an error) */
  cudaStream_t stream = rc_cuda_stream(ctx);
  RC_CUDA_TRY(ctx, cudaMemcpyAsync(record, &rc_record_clear, sizeof rc_record_clear,
                                   cudaMemcpyHostToDevice, stream));
  RC_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
  return ROBOCACHE_OK;
}

/* Bytes of a workspace with scratch_bytes of scratch. */
static size_t workspace_need(size_t scratch_bytes) {
  return RC_CUDA_HEADER + ((scratch_bytes + 255) & ~(size_t)255);
}

/* 1 when the workspace of c lives on `device` and holds `need` bytes. */
static int workspace_fits(const robocache_ctx *c, int device, size_t need) {
  return c->workspace && c->workspace_device == device && c->workspace_size >= need;
}

robocache_status rc_cuda_workspace(robocache_ctx *ctx, int device, size_t scratch_bytes,
                                   rc_cuda_check_record **record, void **scratch) {
  robocache_ctx *c = rc_ctx(ctx);
  size_t need = workspace_need(scratch_bytes);
  if (!workspace_fits(c, device, need)) {
    int capturing = 0;
    robocache_status s = rc_cuda_capturing(ctx, rc_cuda_stream(ctx), &capturing);
    if (s != ROBOCACHE_OK) return s;
    if (capturing)
      return rc_error(ctx, ROBOCACHE_CUDA_ERROR,
                      "the CUDA workspace must grow to %zu bytes, which cannot happen while the "
                      "stream is captured into a CUDA graph: make the same call once before "
                      "capturing",
                      need);
    /* grow geometrically so that a sequence of growing calls allocates rarely */
    size_t size = c->workspace_device == device && c->workspace_size * 2 > need
                      ? c->workspace_size * 2
                      : need;
    release_workspace(c);
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY,
                      "CUDA workspace: cannot allocate %zu bytes on device %d", size, device);
    }
    if (e != cudaSuccess) return rc_cuda_error(ctx, e, "cudaMalloc (workspace)");
    c->workspace = p;
    c->workspace_size = size;
    c->workspace_device = device;
    s = rc_cuda_record_reset(ctx, (rc_cuda_check_record *)p);
    if (s != ROBOCACHE_OK) {
      release_workspace(c);
      return s;
    }
  }
  cudaStream_t stream = rc_cuda_stream(ctx);
  if (c->workspace_event && (cudaStream_t)c->workspace_stream != stream) {
    int capturing = 0;
    robocache_status s = rc_cuda_capturing(ctx, stream, &capturing);
    if (s != ROBOCACHE_OK) return s;
    if (!capturing)
      RC_CUDA_TRY(ctx, cudaStreamWaitEvent(stream, (cudaEvent_t)c->workspace_event, 0));
  }
  if (record) *record = (rc_cuda_check_record *)c->workspace;
  if (scratch) *scratch = (char *)c->workspace + RC_CUDA_HEADER;
  return ROBOCACHE_OK;
}

robocache_status rc_cuda_workspace_can_hold(robocache_ctx *ctx, int device, size_t scratch_bytes,
                                            int *ok) {
  *ok = 1;
  if (workspace_fits(rc_ctx(ctx), device, workspace_need(scratch_bytes))) return ROBOCACHE_OK;
  int capturing = 0;
  robocache_status s = rc_cuda_capturing(ctx, rc_cuda_stream(ctx), &capturing);
  *ok = !capturing;
  return s;
}

robocache_status rc_cuda_workspace_async(robocache_ctx *ctx, cudaStream_t stream) {
  robocache_ctx *c = rc_ctx(ctx);
  int capturing = 0;
  robocache_status s = rc_cuda_capturing(ctx, stream, &capturing);
  if (s != ROBOCACHE_OK || capturing) return s;
  if (!c->workspace_event) {
    cudaEvent_t ev = NULL;
    RC_CUDA_TRY(ctx, cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    c->workspace_event = ev;
  }
  RC_CUDA_TRY(ctx, cudaEventRecord((cudaEvent_t)c->workspace_event, stream));
  c->workspace_stream = stream;
  return ROBOCACHE_OK;
}
