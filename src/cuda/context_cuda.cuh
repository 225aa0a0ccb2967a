/* Helpers shared by the CUDA sources (the .cu files of src/cuda, C++ as compiled by
 * nvcc): CUDA error -> robocache_status, device selection, the context's
 * device workspace and the asynchronous data-check record.
 *
 * Workspace layout (rc_ctx(ctx)->workspace, on device workspace_device):
 *   [0, RC_CUDA_HEADER)  rc_cuda_check_record, kept at its "no error" state
 *                        between calls (see docs/cuda.md, "Data checks")
 *   [RC_CUDA_HEADER, workspace_size)  scratch for one call
 */
#ifndef ROBOCACHE_CUDA_CONTEXT_CUDA_CUH
#define ROBOCACHE_CUDA_CONTEXT_CUDA_CUH

#include <cuda_runtime.h>

extern "C" {
#include "core/internal.h"
}

/* Written by kernels when a data check fails; reset to the "no error" state
 * (target_key = ~0, data_bad = 0) when the workspace is created and after an
 * error was read back. */
struct rc_cuda_check_record {
  unsigned long long target_key; /* min over EXTRAP_ERROR targets of
                                    ((b * T + t) * K + k) * 4 + err */
  unsigned int data_bad;         /* 1: lengths or times failed a check */
  unsigned int pad;
};

#define RC_CUDA_HEADER 256

/* ROBOCACHE_CUDA_ERROR "what: <cudaGetErrorString> (<cudaGetErrorName>)";
 * also clears the runtime's last error. */
robocache_status rc_cuda_error(robocache_ctx *ctx, cudaError_t e, const char *what);

/* ROBOCACHE_OK when e is cudaSuccess, else rc_cuda_error(ctx, e, what). */
robocache_status rc_cuda_check(robocache_ctx *ctx, cudaError_t e, const char *what);

/* Returns from the calling function with ROBOCACHE_CUDA_ERROR when `call`
 * fails. */
#define RC_CUDA_TRY(ctx, call)                                                                     \
  do {                                                                                             \
    cudaError_t rc_e_ = (call);                                                                    \
    if (rc_e_ != cudaSuccess) return rc_cuda_error((ctx), rc_e_, #call);                           \
  } while (0)

/* Makes `device` current for the duration of a call; restore with
 * rc_cuda_device_restore. */
struct rc_cuda_device_guard {
  int previous;
  int changed;
};
robocache_status rc_cuda_device_enter(robocache_ctx *ctx, int device, rc_cuda_device_guard *g);
void rc_cuda_device_restore(const rc_cuda_device_guard *g);

/* The context's stream. */
static inline cudaStream_t rc_cuda_stream(robocache_ctx *ctx) {
  return (cudaStream_t)rc_ctx(ctx)->cuda_stream;
}

/* 1 when work on `stream` is being captured into a CUDA graph (then no
 * synchronisation, allocation or read-back may happen). */
robocache_status rc_cuda_capturing(robocache_ctx *ctx, cudaStream_t stream, int *capturing);

/* *on = 1 when a call on `stream` runs its data checks and synchronises the
 * stream once at its end (checked mode); 0 while the stream is being captured
 * or when the context's sync checks are off (robocache_ctx_set_sync_checks). */
robocache_status rc_cuda_sync_checks(robocache_ctx *ctx, cudaStream_t stream, int *on);

/* Ensures the workspace of ctx lives on `device` and has at least
 * `scratch_bytes` of scratch after the header. Growing it allocates (never
 * while capturing: then CUDA_ERROR asking for a call outside the capture
 * first). When an unchecked call left work using it on another stream
 * (rc_cuda_workspace_async), the context's stream waits for that work first
 * (not while capturing). *record and *scratch (either may be NULL) receive the header's
 * check record and the scratch area. */
robocache_status rc_cuda_workspace(robocache_ctx *ctx, int device, size_t scratch_bytes,
                                   rc_cuda_check_record **record, void **scratch);

/* *ok = 1 when rc_cuda_workspace(ctx, device, scratch_bytes, ...) can succeed
 * now: the workspace is large enough, or it may grow (the context's stream
 * is not being captured). */
robocache_status rc_cuda_workspace_can_hold(robocache_ctx *ctx, int device, size_t scratch_bytes,
                                            int *ok);

/* Call after launching work on `stream` that uses the workspace scratch and
 * is not waited for (unchecked mode): records the context's workspace event
 * on `stream` so that the next call on another stream waits for that work
 * before reusing the scratch (rc_cuda_workspace). Does nothing while
 * `stream` is being captured. */
robocache_status rc_cuda_workspace_async(robocache_ctx *ctx, cudaStream_t stream);

/* Programmatic dependent launch (sm_90 and later). A kernel calls
 * rc_pdl_let_dependents_launch() to let the next kernel on its stream start
 * early, and that kernel calls rc_pdl_wait() before it reads what the first
 * one wrote; both are no-ops before sm_90 and in a kernel launched without
 * the attribute. */
__device__ __forceinline__ void rc_pdl_let_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}
__device__ __forceinline__ void rc_pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* The start of a kernel launched as a programmatic dependent of what ran
 * before it on the stream (another call's kernels, the caller's): it waits
 * for that work before its first access to global memory, then lets the next
 * kernel launch (which waits likewise). Waiting first also means that a
 * dependent of this kernel, once launched, may read what this kernel's
 * predecessors wrote. */
__device__ __forceinline__ void rc_pdl_enter() {
  rc_pdl_wait();
  rc_pdl_let_dependents_launch();
}

/* *pdl = true when `device` runs programmatic dependent launches (sm_90 and
 * later). */
robocache_status rc_cuda_pdl(robocache_ctx *ctx, int device, bool *pdl);

/* kernel<<<blocks, threads, smem, stream>>>(args...), as a programmatic
 * dependent launch of the previous kernel on the stream when `pdl`: every
 * kernel of the library is launched here (rc_cuda_launch: no dynamic shared
 * memory); its error is returned (for rc_cuda_check). */
template <class... Params, class... Args>
cudaError_t rc_cuda_launch_smem(void (*kernel)(Params...), dim3 blocks, unsigned int threads,
                                size_t smem, cudaStream_t stream, bool pdl, const Args &...args) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = blocks;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

template <class... Params, class... Args>
cudaError_t rc_cuda_launch(void (*kernel)(Params...), dim3 blocks, unsigned int threads,
                           cudaStream_t stream, bool pdl, const Args &...args) {
  return rc_cuda_launch_smem(kernel, blocks, threads, 0, stream, pdl, args...);
}

/* Largest read-back of a call (check record, voxelize counters). */
#define RC_CUDA_READBACK_BYTES 256

/* Copies `bytes` (<= RC_CUDA_READBACK_BYTES) of device memory at src to the
 * host at dst once the work queued on `stream` is done, and synchronises the
 * stream: through the context's page-locked buffer (allocated by the first
 * read-back; a copy to pageable memory costs a few microseconds more), or
 * straight into dst when it cannot be allocated. */
cudaError_t rc_cuda_read_back(robocache_ctx *ctx, void *dst, const void *src, size_t bytes,
                              cudaStream_t stream);

/* Puts the check record of the workspace back to its "no error" state
 * (synchronous; used after an error was read). */
robocache_status rc_cuda_record_reset(robocache_ctx *ctx, rc_cuda_check_record *record);

#endif
