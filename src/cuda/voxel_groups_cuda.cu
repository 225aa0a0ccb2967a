/* Host side of the grouping of points by bucket (voxel_groups_cuda.cuh):
 * scratch layout, the scatter kernel and the sort of the giant segments. */
#include "cuda/voxel_groups_cuda.cuh"

#include <cub/device/device_segmented_sort.cuh>

/* cub::DeviceSegmentedSort sorts up to 300 segments with one block each and
 * no synchronisation; above that it partitions them and waits for the
 * partition on the host, which a CUDA graph cannot capture. */
#define RC_GROUP_SEGSORT_CHUNK 256

namespace {

/* One thread per point: list[start of its bucket + its rank] = the point. */
__global__ void scatter_kernel(rc_groups g) {
  rc_pdl_enter();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.N) return;
  const long long b = g.bucket_of[i];
  if (b >= 0) g.list[g.count[b] + g.rank[i]] = i;
}

} // namespace

void rc_groups_carve_zeroed(rc_groups *g, rc_carver *k, int N) {
  g->N = N;
  g->gmax = N / (RC_GROUP_BLOCK + 1);
  g->giant_begin = (int *)k->take((size_t)g->gmax * sizeof(int));
  g->giant_end = (int *)k->take((size_t)g->gmax * sizeof(int));
}

void rc_groups_carve(rc_groups *g, rc_carver *k, int N) {
  const size_t n = (size_t)N;
  g->bucket_of = (long long *)k->take(n * sizeof(long long));
  g->rank = (unsigned int *)k->take(n * sizeof(unsigned int));
  g->list = (int *)k->take(n * sizeof(int));
  g->sorted = g->gmax > 0 ? (int *)k->take(n * sizeof(int)) : NULL;
  g->seg = (rc_group_seg *)k->take(n * sizeof(rc_group_seg));
}

robocache_status rc_groups_temp_bytes(robocache_ctx *ctx, int N, size_t *bytes) {
  const int gmax = N / (RC_GROUP_BLOCK + 1);
  *bytes = 0;
  if (gmax == 0) return ROBOCACHE_OK;
  const int chunk = gmax < RC_GROUP_SEGSORT_CHUNK ? gmax : RC_GROUP_SEGSORT_CHUNK;
  RC_CUDA_TRY(ctx, cub::DeviceSegmentedSort::SortKeys(NULL, *bytes, (const int *)NULL, (int *)NULL,
                                                      (int64_t)N, (int64_t)chunk, (const int *)NULL,
                                                      (const int *)NULL));
  return ROBOCACHE_OK;
}

robocache_status rc_groups_scatter(robocache_ctx *ctx, cudaStream_t stream, bool pdl,
                                   const rc_groups *g) {
  const cudaError_t e =
      rc_cuda_launch(scatter_kernel, rc_voxel_blocks(g->N), RC_VOXEL_THREADS, stream, pdl, *g);
  return rc_cuda_check(ctx, e, "voxelize scatter kernel");
}

robocache_status rc_groups_sort_giants(robocache_ctx *ctx, cudaStream_t stream, const rc_groups *g,
                                       void *temp, size_t temp_bytes) {
  for (int s0 = 0; s0 < g->gmax; s0 += RC_GROUP_SEGSORT_CHUNK) {
    const int n = g->gmax - s0 < RC_GROUP_SEGSORT_CHUNK ? g->gmax - s0 : RC_GROUP_SEGSORT_CHUNK;
    size_t bytes = temp_bytes;
    RC_CUDA_TRY(ctx, cub::DeviceSegmentedSort::SortKeys(
                         temp, bytes, (const int *)g->list, g->sorted, (int64_t)g->N, (int64_t)n,
                         (const int *)g->giant_begin + s0, (const int *)g->giant_end + s0, stream));
  }
  return ROBOCACHE_OK;
}
