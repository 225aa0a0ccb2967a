/* Host side shared by the CUDA forward and backward of align / resample:
 * descriptors from a validated problem, and the begin / end of a call
 * (device selection, checked mode, reading back and reporting errors). */
#ifndef ROBOCACHE_CUDA_ALIGN_HOST_CUDA_CUH
#define ROBOCACHE_CUDA_ALIGN_HOST_CUDA_CUH

#include "cuda/align_kernels.cuh"

extern "C" {
#include "ops/align_problem.h"
}

/* One call of the CUDA backend. */
struct rc_cuda_call {
  rc_cuda_device_guard guard;
  cudaStream_t stream;
  rc_cuda_check_record *record; /* NULL: unchecked (rc_cuda_sync_checks) */
  void *scratch;                /* scratch_bytes of device workspace, or NULL */
  int checked;                  /* rc_cuda_sync_checks */
};

/* rc_cuda_call_enter, then rc_cuda_call_workspace. */
robocache_status rc_cuda_call_begin(robocache_ctx *ctx, const rc_align_problem *p,
                                    size_t scratch_bytes, rc_cuda_call *c);

/* Selects the tensors' device and decides checked / unchecked mode
 * (rc_cuda_sync_checks: unchecked while the stream is being captured into a
 * CUDA graph or when the context's sync checks are off). On error nothing
 * needs undoing. */
robocache_status rc_cuda_call_enter(robocache_ctx *ctx, const rc_align_problem *p, rc_cuda_call *c);

/* After rc_cuda_call_enter: gets the workspace (the check record in checked
 * mode, and scratch_bytes of scratch). On error the device is restored and
 * nothing else needs undoing. */
robocache_status rc_cuda_call_workspace(robocache_ctx *ctx, const rc_align_problem *p,
                                        size_t scratch_bytes, rc_cuda_call *c);

/* Ends a call whose launches returned `status`: in checked mode, and when
 * status is OK, waits for the stream and turns a recorded data or
 * EXTRAP_ERROR failure into the same INVALID_ARGUMENT message as the CPU
 * path; in unchecked mode with scratch, marks the workspace as in use on the
 * stream (rc_cuda_workspace_async). Restores the device. */
robocache_status rc_cuda_call_end(robocache_ctx *ctx, const rc_align_problem *p, rc_cuda_call *c,
                                  robocache_status status);

/* Stream k of p as a descriptor (block_begin, vec and group left 0). */
rc_stream_desc rc_cuda_stream_desc(const rc_align_problem *p, int k);

/* Target side of p, with the call's check record. */
rc_target_desc rc_cuda_target_desc(const rc_align_problem *p, const rc_cuda_call *c);

#endif
