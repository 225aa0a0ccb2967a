/* CUDA voxel-grid downsampling (DESIGN §1.3 "downsample"): the sort /
 * segment / rank pipeline of voxel_cuda.cuh (with per-cloud PCL grids when
 * there is no point_cloud_range); the output row of a voxel is its rank in
 * order of first appearance over the whole batch (clouds are consecutive),
 * and the mean of each column is written by one thread per voxel of at most
 * DS_SMALL points, by one block per bigger voxel: f64 sum in input order
 * from 0.0, divided by the count, rounded to f32 once, as the CPU backend
 * computes it (bitwise equal). One stream synchronisation at the end
 * (stats, CAPACITY_EXCEEDED, offsets / grid checks). */
#include "cuda/voxel_cuda.cuh"

namespace {

/* Voxels of at most DS_SMALL points take one thread each (mean_kernel),
 * bigger ones one block each (mean_big_kernel: rc_voxel_chain_sums). */
#define DS_SMALL 32

/* The row of the mean of the voxel whose points start at sorted position
 * begin: -1 when it does not fit out. */
__device__ __forceinline__ int64_t ds_row(const rc_voxel_pipeline &pl, int begin, int64_t cap) {
  const int64_t row = pl.rank[pl.idx_out[begin]];
  return row < cap ? row : -1;
}

/* One thread per segment of at most DS_SMALL points: the mean point of the
 * voxel, when its row fits. */
__global__ void mean_kernel(rc_voxel_pipeline pl, rc_voxel_src src,
                            const rc_voxel_counters *counters, float *out, int64_t cap, int64_t C) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  const int nseg = counters->num_segments;
  if (s >= nseg) return;
  int begin, end;
  rc_voxel_segment(pl, s, nseg, rc_voxel_n_valid(src, counters), &begin, &end);
  if (end - begin > DS_SMALL) return;
  const int64_t row = ds_row(pl, begin, cap);
  if (row < 0) return;
  for (int64_t c = 0; c < C; c++) {
    double acc = 0.0;
    for (int j = begin; j < end; j++) acc += (double)rc_vpt(src, pl.idx_out[j], c);
    out[row * C + c] = rc_voxel_f32(acc / (double)(end - begin));
  }
}

/* One block per segment of more than DS_SMALL points: block b checks
 * segments b, b + G, b + 2 G, ... (G blocks; RC_VOXEL_THREADS at a time, one
 * per thread), so that big voxels next to each other in key order go to
 * different blocks, and takes the big ones it found in turn. */
__global__ void mean_big_kernel(rc_voxel_pipeline pl, rc_voxel_src src,
                                const rc_voxel_counters *counters, float *out, int64_t cap,
                                int64_t C) {
  __shared__ float buf[2 * RC_CHAIN_STAGE];
  __shared__ int found[RC_VOXEL_THREADS], n_found;
  const int nseg = counters->num_segments, n_valid = rc_voxel_n_valid(src, counters);
  const int64_t G = gridDim.x;
  for (int64_t k0 = 0; blockIdx.x + G * k0 < nseg; k0 += RC_VOXEL_THREADS) {
    if (threadIdx.x == 0) n_found = 0;
    __syncthreads();
    const int64_t s = blockIdx.x + G * (k0 + threadIdx.x);
    if (s < nseg) {
      int begin, end;
      rc_voxel_segment(pl, (int)s, nseg, n_valid, &begin, &end);
      if (end - begin > DS_SMALL) found[atomicAdd(&n_found, 1)] = (int)s;
    }
    __syncthreads();
    for (int f = 0; f < n_found; f++) {
      int begin, end;
      rc_voxel_segment(pl, found[f], nseg, n_valid, &begin, &end);
      const int64_t row = ds_row(pl, begin, cap);
      for (int64_t c0 = 0; row >= 0 && c0 < C; c0 += 32) {
        const int nc = (int)(C - c0 < 32 ? C - c0 : 32);
        const double sum = rc_voxel_chain_sums(src, pl.idx_out + begin, end - begin, c0, nc, buf);
        if ((int)threadIdx.x < nc)
          out[row * C + c0 + threadIdx.x] = rc_voxel_f32(sum / (double)(end - begin));
      }
    }
    __syncthreads(); /* n_found read by all before the next round resets it */
  }
}

/* Blocks of mean_big_kernel: one per possible big voxel (N / (DS_SMALL + 1)),
 * at most 4096. */
static unsigned int ds_big_blocks(int64_t N) {
  const int64_t b = N / (DS_SMALL + 1) + 1;
  return (unsigned int)(b < 4096 ? b : 4096);
}

/* out_offsets[b] = rows before cloud b, clamped to the capacity. */
__global__ void out_offsets_kernel(rc_voxel_pipeline pl, rc_voxel_src src, int64_t *out_offsets,
                                   int64_t cap) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > src.B) return;
  const int64_t r = pl.rank[rc_voxel_off(src, b)];
  out_offsets[b] = r < cap ? r : cap;
}

} // namespace

robocache_status rc_voxel_downsample_cuda(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t cap = p->out_points.shape[0];
  rc_voxel_call c;
  robocache_status s = rc_voxel_cuda_begin(ctx, p, &c);
  if (s != ROBOCACHE_OK) return s;
  cudaError_t e =
      rc_cuda_launch(mean_kernel, rc_voxel_blocks(p->N), RC_VOXEL_THREADS, c.stream, false, c.pl,
                     c.src, c.counters, (float *)p->out_points.data, cap, p->C);
  if (e == cudaSuccess)
    e = rc_cuda_launch(mean_big_kernel, ds_big_blocks(p->N), RC_VOXEL_THREADS, c.stream, false,
                       c.pl, c.src, c.counters, (float *)p->out_points.data, cap, p->C);
  if (e == cudaSuccess)
    e = rc_cuda_launch(out_offsets_kernel, rc_voxel_blocks(p->B + 1), RC_VOXEL_THREADS, c.stream,
                       false, c.pl, c.src, (int64_t *)p->out_offsets.data, cap);
  s = rc_cuda_check(ctx, e, "voxel_downsample mean / out_offsets kernels");
  const int checked = c.checked;
  s = rc_voxel_cuda_end(ctx, p, &c, s, 0);
  if (s == ROBOCACHE_OK && checked && p->stats->voxels_nonempty > cap)
    return rc_error(ctx, ROBOCACHE_CAPACITY_EXCEEDED,
                    "voxel_downsample: %lld non-empty voxels do not fit in out (capacity %lld)",
                    (long long)p->stats->voxels_nonempty, (long long)cap);
  return s;
}
