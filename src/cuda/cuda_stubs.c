/* The CUDA backend in builds without CUDA (CMake compiles this file instead
 * of the .cu files of src/cuda): the operations' entry points report
 * UNSUPPORTED_DEVICE, so that CUDA tensors give a clear error instead of
 * reaching a CPU backend; robocache_has_cuda() is 0 and a context holds
 * nothing to release. */
#include "ops/align_problem.h"
#include "ops/voxel_problem.h"

int robocache_has_cuda(void) { return 0; }

void rc_cuda_ctx_release(robocache_ctx *ctx) { (void)ctx; }

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
