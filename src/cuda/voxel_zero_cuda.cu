/* The first kernel of the dense voxelize calls (COUNT / OCCUPANCY / MAX and
 * SUM / MEAN) and of hard voxelization: zeroes the output and the call's
 * counters (or scratch), as a programmatic dependent launch of the stream's
 * earlier work on sm_90 and later. */
#include "cuda/voxel_cuda.cuh"

namespace {

/* Zeroes bytes [0, n) of p: 16-byte stores from its first 16-byte boundary,
 * single bytes before and after it; thread `first` of `stride`. */
__device__ __forceinline__ void zero_bytes(char *p, size_t n, int64_t first, int64_t stride) {
  const size_t to16 = (16 - ((uintptr_t)p & 15)) & 15, head = to16 < n ? to16 : n;
  const size_t body = (n - head) / 16, tail_at = head + body * 16;
  uint4 *v = (uint4 *)(p + head);
  for (int64_t i = first; i < (int64_t)body; i += stride) v[i] = make_uint4(0, 0, 0, 0);
  if (first < (int64_t)head) p[first] = 0;
  if (first < (int64_t)(n - tail_at)) p[tail_at + first] = 0;
}

/* Waits for the stream's earlier work (rc_pdl_enter): a kernel launched as
 * its dependent may read what that work wrote before its own wait. */
__global__ void zero_kernel(char *a, size_t na, char *b, size_t nb) {
  rc_pdl_enter();
  const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  zero_bytes(a, na, first, stride);
  zero_bytes(b, nb, first, stride);
}

} // namespace

cudaError_t rc_voxel_zero(void *a, size_t na, void *b, size_t nb, cudaStream_t stream, bool pdl) {
  const int64_t words = (int64_t)((na > nb ? na : nb) / 16);
  return rc_cuda_launch(zero_kernel, rc_voxel_pass_blocks(words), RC_VOXEL_THREADS, stream, pdl,
                        (char *)a, na, (char *)b, nb);
}
