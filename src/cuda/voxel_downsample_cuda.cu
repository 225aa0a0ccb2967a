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
 * bigger ones one block each (mean_big_kernel), whose threads stage their
 * points' columns in shared memory, DS_STAGE floats at a time, for the
 * input-order sums. */
#define DS_SMALL 32
#define DS_STAGE 2048

/* The row of segment s's mean, its points [begin, end) (sorted positions):
 * -1 when the row does not fit out. */
__device__ __forceinline__ int64_t ds_segment(const rc_voxel_pipeline &pl, const rc_voxel_src &src,
                                              const rc_voxel_counters *counters, int s, int nseg,
                                              int64_t cap, int *begin, int *end) {
  rc_voxel_segment(pl, s, nseg, rc_voxel_n_valid(src, counters), begin, end);
  const int64_t row = pl.rank[pl.idx_out[*begin]];
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
  const int64_t row = ds_segment(pl, src, counters, s, nseg, cap, &begin, &end);
  if (row < 0 || end - begin > DS_SMALL) return;
  for (int64_t c = 0; c < C; c++) {
    double acc = 0.0;
    for (int j = begin; j < end; j++) acc += (double)rc_vpt(src, pl.idx_out[j], c);
    out[row * C + c] = rc_voxel_f32(acc / (double)(end - begin));
  }
}

/* Columns [c0, c0 + nc) of the mean of the n points at idx (sorted
 * positions, input order) into out_row, by the whole block: lane c of warp
 * 0 adds column c0 + c in input order (one chain, f64 from 0.0, as the CPU
 * backend) from chunk i of the points in buf[i % 2] while the other warps
 * stage chunk i + 1 in the other half (DS_STAGE floats each). */
__device__ void ds_mean_columns(const rc_voxel_src &src, const int *idx, int n, int64_t c0, int nc,
                                float *out_row, float *buf) {
  const int per = DS_STAGE / nc, chunks = (n + per - 1) / per;
  const auto stage = [&](int i, int t0, int nt) {
    float *b = buf + (i & 1) * DS_STAGE;
    const int p0 = i * per, m = (n - p0 < per ? n - p0 : per) * nc;
    for (int k = t0; k < m; k += nt) {
      const int j = k / nc;
      b[k] = rc_vpt(src, idx[p0 + j], c0 + (k - j * nc));
    }
  };
  stage(0, threadIdx.x, blockDim.x);
  __syncthreads();
  double acc = 0.0;
  for (int i = 0; i < chunks; i++) {
    if (threadIdx.x >= 32) {
      if (i + 1 < chunks) stage(i + 1, threadIdx.x - 32, blockDim.x - 32);
    } else if ((int)threadIdx.x < nc) {
      const float *b = buf + (i & 1) * DS_STAGE;
      const int m = n - i * per < per ? n - i * per : per;
      for (int j = 0; j < m; j++) acc += (double)b[j * nc + threadIdx.x];
    }
    __syncthreads();
  }
  if ((int)threadIdx.x < nc) out_row[c0 + threadIdx.x] = rc_voxel_f32(acc / (double)n);
}

/* One block per segment of more than DS_SMALL points: block b checks
 * segments b, b + G, b + 2 G, ... (G blocks; RC_VOXEL_THREADS at a time, one
 * per thread), so that big voxels next to each other in key order go to
 * different blocks, and takes the big ones it found in turn. */
__global__ void mean_big_kernel(rc_voxel_pipeline pl, rc_voxel_src src,
                                const rc_voxel_counters *counters, float *out, int64_t cap,
                                int64_t C) {
  __shared__ float buf[2 * DS_STAGE];
  __shared__ int found[RC_VOXEL_THREADS], n_found;
  const int nseg = counters->num_segments;
  const int64_t G = gridDim.x;
  for (int64_t k0 = 0; blockIdx.x + G * k0 < nseg; k0 += RC_VOXEL_THREADS) {
    if (threadIdx.x == 0) n_found = 0;
    __syncthreads();
    const int64_t s = blockIdx.x + G * (k0 + threadIdx.x);
    if (s < nseg) {
      int begin, end;
      rc_voxel_segment(pl, (int)s, nseg, rc_voxel_n_valid(src, counters), &begin, &end);
      if (end - begin > DS_SMALL) found[atomicAdd(&n_found, 1)] = (int)s;
    }
    __syncthreads();
    for (int f = 0; f < n_found; f++) {
      int begin, end;
      const int64_t row = ds_segment(pl, src, counters, found[f], nseg, cap, &begin, &end);
      for (int64_t c0 = 0; row >= 0 && c0 < C; c0 += 32)
        ds_mean_columns(src, pl.idx_out + begin, end - begin, c0, (int)(C - c0 < 32 ? C - c0 : 32),
                        out + row * C, buf);
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
