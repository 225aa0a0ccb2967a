/* CUDA hard voxelization (mmcv deterministic semantics, DESIGN §1.3): the
 * sort / segment / rank pipeline of voxel_cuda.cuh numbers each cloud's
 * voxels in order of their first point; then one kernel: thread t copies the
 * first P points (input order) of voxel t into its row and writes output row
 * t when it is padding. Bitwise identical to the CPU backend. One stream synchronisation at the end
 * (stats, offsets check). */
#include "cuda/voxel_cuda.cuh"

namespace {

struct hard_out {
  float *voxels;
  int32_t *coords, *num_points, *num_voxels;
  int64_t P, M, C;
};

/* Thread t: segment (voxel) t, when there is one: its row (coords,
 * num_points, its first P points in input order; voxels were zeroed before);
 * and output row t, when it is a padding row: coords -1, num_points 0; row
 * b*M writes num_voxels[b]. */
__global__ void hard_kernel(rc_voxel_pipeline pl, hard_out o) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int nseg = pl.counters->num_segments;
  unsigned int dropped_points = 0, dropped_voxels = 0, dropped_voxel_points = 0;
  if (t < nseg) {
    int begin, end;
    rc_voxel_segment(pl, (int)t, nseg, rc_voxel_n_valid(pl), &begin, &end);
    const int i0 = pl.idx_out[begin], b = pl.cloud[i0];
    const int64_t v = pl.rank[i0] - pl.rank[pl.off[b]], len = end - begin;
    if (v >= o.M) {
      dropped_voxels = 1;
      dropped_voxel_points = (unsigned int)len;
    } else if (v >= 0) { /* v < 0 only with offsets that failed the check */
      const int64_t row = b * o.M + v, n = len < o.P ? len : o.P;
      dropped_points = (unsigned int)(len - n);
      int64_t ijk[3];
      rc_voxel_unkey(&pl.src.keyer, rc_voxel_sorted_key(pl, begin), ijk);
      int32_t *cd = o.coords + row * 4;
      cd[0] = b;
      cd[1] = (int32_t)ijk[2];
      cd[2] = (int32_t)ijk[1];
      cd[3] = (int32_t)ijk[0];
      o.num_points[row] = (int32_t)n;
      float *dst = o.voxels + row * o.P * o.C;
      for (int64_t j = 0; j < n; j++) {
        const int64_t i = pl.idx_out[begin + j];
        for (int64_t c = 0; c < o.C; c++) dst[j * o.C + c] = rc_vpt(pl.src, i, c);
      }
    }
  }
  if (t < pl.src.B * o.M) {
    const int64_t b = t / o.M, v = t % o.M;
    const int64_t total = pl.rank[pl.off[b + 1]] - pl.rank[pl.off[b]];
    const int64_t kept = total < 0 ? 0 : total < o.M ? total : o.M;
    if (v == 0) o.num_voxels[b] = (int32_t)kept;
    if (v >= kept) {
      o.num_points[t] = 0;
      for (int a = 0; a < 4; a++) o.coords[t * 4 + a] = -1;
    }
  }
  rc_voxel_block_add(&pl.counters->dropped_max_points, dropped_points);
  rc_voxel_block_add(&pl.counters->dropped_voxels, dropped_voxels);
  rc_voxel_block_add(&pl.counters->dropped_voxel_points, dropped_voxel_points);
}

} // namespace

robocache_status rc_voxelize_hard_cuda(robocache_ctx *ctx, const rc_voxel_problem *p) {
  rc_voxel_call c;
  robocache_status s = rc_voxel_cuda_begin(ctx, p, RC_VOXEL_RANKS, &c);
  if (s != ROBOCACHE_OK) return s;
  hard_out o = {(float *)p->voxels.data,
                (int32_t *)p->coords.data,
                (int32_t *)p->num_points.data,
                (int32_t *)p->num_voxels.data,
                p->max_points,
                p->max_voxels,
                p->C};
  /* one coalesced pass of zeros is faster than zeroing the free slots in the kernel */
  cudaError_t e =
      cudaMemsetAsync(o.voxels, 0, (size_t)rc_view_numel(&p->voxels) * sizeof(float), c.stream);
  if (e != cudaSuccess)
    return rc_voxel_cuda_end(ctx, p, &c, rc_cuda_error(ctx, e, "cudaMemsetAsync (voxels)"), 0);
  const int64_t rows = p->B * p->max_voxels, threads = rows > p->N ? rows : p->N;
  hard_kernel<<<rc_voxel_blocks(threads), RC_VOXEL_THREADS, 0, c.stream>>>(c.pl, o);
  s = rc_voxel_launched(ctx, "voxelize_hard kernel");
  return rc_voxel_cuda_end(ctx, p, &c, s, 0);
}
