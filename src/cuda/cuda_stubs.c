/* The CUDA backend's entry points in builds without CUDA (src/cuda defines
 * them otherwise): each reports UNSUPPORTED_DEVICE, so that CUDA tensors give
 * a clear error instead of reaching a CPU backend. */
#include "ops/align_problem.h"
#include "ops/voxel_problem.h"

#ifndef ROBOCACHE_HAVE_CUDA
static robocache_status no_cuda(robocache_ctx *ctx) {
  return rc_error(ctx, ROBOCACHE_UNSUPPORTED_DEVICE,
                  "tensors are on a CUDA device but this robocache was built without CUDA");
}

#define RC_NO_CUDA(fn, problem)                                                                    \
  robocache_status fn(robocache_ctx *ctx, const problem *p) {                                      \
    (void)p;                                                                                       \
    return no_cuda(ctx);                                                                           \
  }

RC_NO_CUDA(rc_align_cuda, rc_align_problem)
RC_NO_CUDA(rc_align_backward_cuda, rc_align_problem)
RC_NO_CUDA(rc_voxelize_dense_cuda, rc_voxel_problem)
RC_NO_CUDA(rc_voxelize_hard_cuda, rc_voxel_problem)
RC_NO_CUDA(rc_voxel_downsample_cuda, rc_voxel_problem)
#endif
