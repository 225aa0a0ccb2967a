/* CUDA dense voxelization (DESIGN §1.3 "dense"), out [B,F,Z,Y,X].
 *
 * COUNT / OCCUPANCY: one pass over the points with integer atomics straight
 * into out (order-independent, so exact): i32 counts with atomicAdd; f32
 * outputs count in their 32-bit words as integers, then one in-place pass
 * turns the integers into floats; u8 occupancy stores 1 (idempotent) and a
 * pass over the grid counts the non-empty voxels.
 * SUM / MEAN / MAX: the sort / segment pipeline (voxel_cuda.cuh); one thread
 * per voxel reduces its points in input order with the CPU backend's
 * arithmetic (f64 sum from 0.0, mean = sum / count, max keeps the first value
 * unless a later one is strictly greater; one rounding to f32), so the result
 * is bitwise that of the CPU backend. */
#include "cuda/voxel_cuda.cuh"

namespace {

/* One thread per point: adds 1 to the point's cell (count32 != NULL: 32-bit
 * integer counters, counting the cells that were 0; else u8 stores 1). */
__global__ void count_kernel(rc_voxel_src s, int64_t G, unsigned int *count32, uint8_t *occ8,
                             rc_voxel_counters *counters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0, fresh = 0;
  if (i < s.N) {
    const int b = rc_voxel_cloud_of(s, i);
    int64_t ijk[3], key = 0;
    int cls =
        rc_voxel_locate(&s.keyer, rc_vpt(s, i, 0), rc_vpt(s, i, 1), rc_vpt(s, i, 2), ijk, &key);
    nonfinite = cls == RC_VOXEL_NONFINITE;
    range = cls == RC_VOXEL_RANGE;
    if (cls == RC_VOXEL_IN) {
      const int64_t cell = b * G + key;
      if (count32)
        fresh = atomicAdd(&count32[cell], 1u) == 0u;
      else
        occ8[cell] = 1;
    }
  }
  rc_voxel_block_add(&counters->nonfinite, nonfinite);
  rc_voxel_block_add(&counters->range, range);
  rc_voxel_block_add(&counters->nonempty, fresh);
}

/* f32 out: the integer counts in place to float counts or occupancy. */
__global__ void count_to_f32_kernel(float *out, int64_t n, int occupancy) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const unsigned int c = __float_as_uint(out[i]);
    out[i] = occupancy ? (c ? 1.0f : 0.0f) : (float)c;
  }
}

/* u8 occupancy: counts the non-empty cells. */
__global__ void occupied_kernel(const uint8_t *occ, int64_t n, rc_voxel_counters *counters) {
  unsigned int k = 0;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    k += occ[i] != 0;
  rc_voxel_block_add(&counters->nonempty, k);
}

/* One thread per segment (voxel of one cloud): SUM, MEAN or MAX of the F
 * feature columns. */
__global__ void reduce_kernel(rc_voxel_pipeline pl, float *out, int64_t G, int64_t F, int64_t col0,
                              int mode) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  const int nseg = pl.counters->num_segments;
  if (s >= nseg) return;
  int begin, end;
  rc_voxel_segment(pl, s, nseg, rc_voxel_n_valid(pl), &begin, &end);
  const int b = pl.cloud[pl.idx_out[begin]];
  float *cell = out + b * F * G + rc_voxel_sorted_key(pl, begin);
  for (int64_t f = 0; f < F; f++) {
    if (mode == ROBOCACHE_VOXEL_MAX) {
      float m = rc_vpt(pl.src, pl.idx_out[begin], col0 + f);
      for (int j = begin + 1; j < end; j++) {
        const float x = rc_vpt(pl.src, pl.idx_out[j], col0 + f);
        m = x > m ? x : m;
      }
      cell[f * G] = m;
      continue;
    }
    double acc = 0.0;
    for (int j = begin; j < end; j++) acc += (double)rc_vpt(pl.src, pl.idx_out[j], col0 + f);
    cell[f * G] = (float)(mode == ROBOCACHE_VOXEL_MEAN ? acc / (double)(end - begin) : acc);
  }
}

unsigned int grid_stride_blocks(int64_t n) {
  unsigned int b = rc_voxel_blocks(n);
  return b < 4096 ? b : 4096;
}

} // namespace

robocache_status rc_voxelize_dense_cuda(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int feats = p->mode >= ROBOCACHE_VOXEL_SUM;
  const int64_t G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2];
  const int64_t cells = rc_view_numel(&p->out);
  rc_voxel_call c;
  robocache_status s = rc_voxel_cuda_begin(ctx, p, feats ? RC_VOXEL_SEGMENTS : RC_VOXEL_PREP, &c);
  if (s != ROBOCACHE_OK) return s;
  cudaError_t e = cudaMemsetAsync(
      p->out.data, 0, (size_t)cells * robocache_dtype_size((robocache_dtype)p->out.dtype),
      c.stream);
  if (e != cudaSuccess) s = rc_cuda_error(ctx, e, "cudaMemsetAsync (out)");
  if (s == ROBOCACHE_OK && feats) {
    reduce_kernel<<<rc_voxel_blocks(p->N), RC_VOXEL_THREADS, 0, c.stream>>>(
        c.pl, (float *)p->out.data, G, p->F, p->feat_col, p->mode);
    s = rc_voxel_launched(ctx, "voxelize reduce kernel");
  } else if (s == ROBOCACHE_OK) {
    const int u8 = p->out.dtype == ROBOCACHE_DTYPE_U8;
    count_kernel<<<rc_voxel_blocks(p->N), RC_VOXEL_THREADS, 0, c.stream>>>(
        c.pl.src, G, u8 ? NULL : (unsigned int *)p->out.data, u8 ? (uint8_t *)p->out.data : NULL,
        c.pl.counters);
    s = rc_voxel_launched(ctx, "voxelize count kernel");
    if (s == ROBOCACHE_OK && u8) {
      occupied_kernel<<<grid_stride_blocks(cells), RC_VOXEL_THREADS, 0, c.stream>>>(
          (const uint8_t *)p->out.data, cells, c.pl.counters);
      s = rc_voxel_launched(ctx, "voxelize occupancy kernel");
    } else if (s == ROBOCACHE_OK && p->out.dtype == ROBOCACHE_DTYPE_F32) {
      count_to_f32_kernel<<<grid_stride_blocks(cells), RC_VOXEL_THREADS, 0, c.stream>>>(
          (float *)p->out.data, cells, p->mode == ROBOCACHE_VOXEL_OCCUPANCY);
      s = rc_voxel_launched(ctx, "voxelize count conversion kernel");
    }
  }
  return rc_voxel_cuda_end(ctx, p, &c, s, !feats);
}
