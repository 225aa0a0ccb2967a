/* CUDA voxel-grid downsampling (DESIGN §1.3 "downsample"): the sort /
 * segment / rank pipeline of voxel_cuda.cuh (with per-cloud PCL grids when
 * there is no point_cloud_range); the output row of a voxel is its rank in
 * order of first appearance over the whole batch (clouds are consecutive),
 * and one thread per voxel writes the mean of each column: f64 sum in input
 * order from 0.0, divided by the count, rounded to f32 once, as the CPU
 * backend computes it (bitwise equal). One stream synchronisation at the end
 * (stats, CAPACITY_EXCEEDED, offsets / grid checks). */
#include "cuda/voxel_cuda.cuh"

namespace {

/* One thread per segment: the mean point of the voxel, when its row fits. */
__global__ void mean_kernel(rc_voxel_pipeline pl, rc_voxel_src src,
                            const rc_voxel_counters *counters, float *out, int64_t cap, int64_t C) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  const int nseg = counters->num_segments;
  if (s >= nseg) return;
  int begin, end;
  rc_voxel_segment(pl, s, nseg, rc_voxel_n_valid(src, counters), &begin, &end);
  const int64_t row = pl.rank[pl.idx_out[begin]];
  if (row >= cap) return;
  for (int64_t c = 0; c < C; c++) {
    double acc = 0.0;
    for (int j = begin; j < end; j++) acc += (double)rc_vpt(src, pl.idx_out[j], c);
    out[row * C + c] = rc_voxel_f32(acc / (double)(end - begin));
  }
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
