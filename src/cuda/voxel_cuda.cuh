/* Shared part of the CUDA voxelize backends (dense, hard, downsample): the
 * call's setup and end (device, stream, checked mode, counters read back
 * once), the point source, scratch carving and the input-order sums. See
 * docs/voxelize.md, "CUDA". Dense SUM / MEAN, hard voxelization and
 * downsampling group their points without a sort (voxel_groups_cuda.cuh,
 * voxel_table_cuda.cuh), all on the context's stream with scratch from the
 * context's workspace, no host allocation.
 * Offsets are read from the caller's tensor wherever needed, clamped to
 * 0..N (rc_voxel_off), so bad offsets never cause an out-of-bounds access;
 * checked mode also tests them (rc_voxel_check_offsets). */
#ifndef ROBOCACHE_CUDA_VOXEL_CUDA_CUH
#define ROBOCACHE_CUDA_VOXEL_CUDA_CUH

#include "cuda/context_cuda.cuh"

/* voxel_problem.h is C11: its inline helpers may use `restrict`, which C++
 * spells __restrict__. */
extern "C" {
#define restrict __restrict__
#include "ops/voxel_problem.h"
#undef restrict
}

#define RC_VOXEL_THREADS 256

/* Device counters of one call, read back at its end (checked mode). */
struct rc_voxel_counters {
  unsigned long long nonfinite, range;     /* dropped points */
  unsigned long long dropped_max_points;   /* hard */
  unsigned long long dropped_voxels;       /* hard: voxels past max_voxels */
  unsigned long long dropped_voxel_points; /* hard: their points */
  unsigned long long nonempty;             /* distinct voxels */
  unsigned int bad_offsets;                /* offsets failed a check */
  unsigned int pcl_too_big;                /* ~(first cloud whose PCL grid > 2^62), or 0 */
  /* groups (voxel_groups_cuda.cuh), in unchecked mode too */
  unsigned int cursor;         /* points placed in lists so far */
  unsigned int n_small, n_big; /* segments of each kind */
  unsigned int n_giant;        /* big segments sorted by cub */
};

/* Where the points are and how they map to voxels. */
struct rc_voxel_src {
  const float *pts;
  int64_t s0, s1; /* strides of points, in elements */
  int N, B;
  const int64_t *off; /* the caller's offsets [B+1] (stride off_stride), or NULL */
  int64_t off_stride;
  rc_voxel_keyer keyer;         /* range grid */
  const rc_voxel_keyer *keyers; /* [B] per-cloud PCL keyers, or NULL */
};

__device__ __forceinline__ float rc_vpt(const rc_voxel_src &s, int64_t i, int64_t c) {
  return s.pts[i * s.s0 + c * s.s1];
}

/* offsets[b] clamped to 0..N (0 and N without offsets, B = 1). */
__device__ __forceinline__ int64_t rc_voxel_off(const rc_voxel_src &s, int64_t b) {
  if (!s.off) return b == 0 ? 0 : s.N;
  const int64_t v = s.off[b * s.off_stride];
  return v < 0 ? 0 : v > s.N ? s.N : v;
}

/* The cloud of point i: the b with off[b] <= i < off[b+1] (0..B-1 whatever
 * the offsets hold). */
__device__ __forceinline__ int rc_voxel_cloud_of(const rc_voxel_src &s, int64_t i) {
  int lo = 0, hi = s.B; /* answer in [lo, hi) */
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (rc_voxel_off(s, mid) <= i)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Point i on the range grid: b * cloud_stride + its voxel key, b its cloud,
 * or -1 when it is dropped (adding 1 to *nonfinite or *range). */
__device__ __forceinline__ int64_t rc_voxel_cell(const rc_voxel_src &s, int64_t i,
                                                 int64_t cloud_stride, unsigned int *nonfinite,
                                                 unsigned int *range) {
  const int b = rc_voxel_cloud_of(s, i);
  int64_t ijk[3], key = 0;
  const int cls =
      rc_voxel_locate(&s.keyer, rc_vpt(s, i, 0), rc_vpt(s, i, 1), rc_vpt(s, i, 2), ijk, &key);
  *nonfinite += cls == RC_VOXEL_NONFINITE;
  *range += cls == RC_VOXEL_RANGE;
  return cls == RC_VOXEL_IN ? b * cloud_stride + key : -1;
}

/* Called by the threads of one block: counters->bad_offsets = 1 unless
 * offsets[0] == 0, the offsets do not decrease and offsets[B] == N. */
__device__ __forceinline__ void rc_voxel_check_offsets(const rc_voxel_src &s,
                                                       rc_voxel_counters *counters) {
  if (!s.off) return;
  for (int64_t b = threadIdx.x; b <= s.B; b += blockDim.x) {
    const int64_t v = s.off[b * s.off_stride];
    if ((b == 0 && v != 0) || (b == s.B && v != s.N) ||
        (b > 0 && v < s.off[(b - 1) * s.off_stride]))
      counters->bad_offsets = 1;
  }
}

/* Sums x into a block-wide total added once to *dst (all threads of the
 * block must call it). The last barrier keeps every read of `total` before
 * the next call's reset. */
__device__ __forceinline__ void rc_voxel_block_add(unsigned long long *dst, unsigned int x) {
  __shared__ unsigned int total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  for (int o = 16; o > 0; o /= 2) x += __shfl_down_sync(0xffffffffu, x, o);
  if ((threadIdx.x & 31) == 0 && x) atomicAdd(&total, x);
  __syncthreads();
  if (threadIdx.x == 0 && total) atomicAdd(dst, (unsigned long long)total);
  __syncthreads();
}

/* Checked-mode bookkeeping of a kernel with one thread per point (all
 * threads of each block call it): block 0 checks the offsets, and the
 * dropped points of the block are counted. */
__device__ __forceinline__ void rc_voxel_count_dropped(const rc_voxel_src &s,
                                                       rc_voxel_counters *counters,
                                                       unsigned int nonfinite, unsigned int range) {
  if (blockIdx.x == 0) rc_voxel_check_offsets(s, counters);
  rc_voxel_block_add(&counters->nonfinite, nonfinite);
  rc_voxel_block_add(&counters->range, range);
}

/* Cuts a call's scratch into 256-byte aligned pieces; with base == NULL it
 * only counts the bytes (at). */
struct rc_carver {
  char *base;
  size_t at;
  void *take(size_t bytes) {
    void *p = base ? base + at : NULL;
    at += (bytes + 255) / 256 * 256 + (bytes == 0 ? 256 : 0);
    return p;
  }
};

/* Lays a call's scratch out with lay(k), k an rc_carver: once to count the
 * bytes, then, with that much scratch taken from the context's workspace on
 * `device`, again with k cutting it, so that the pieces lay keeps point into
 * the scratch (the first piece at its start). */
template <class F> robocache_status rc_voxel_scratch(robocache_ctx *ctx, int device, F &&lay) {
  rc_carver k = {NULL, 0};
  lay(k);
  void *scratch = NULL;
  robocache_status s = rc_cuda_workspace(ctx, device, k.at, NULL, &scratch);
  if (s != ROBOCACHE_OK) return s;
  k = {(char *)scratch, 0};
  lay(k);
  return ROBOCACHE_OK;
}

/* Launch configuration for n threads of RC_VOXEL_THREADS. */
static inline unsigned int rc_voxel_blocks(int64_t n) {
  int64_t b = (n + RC_VOXEL_THREADS - 1) / RC_VOXEL_THREADS;
  return (unsigned int)(b > 0 ? b : 1);
}

/* Blocks of a grid-stride pass over n items, 4 per thread at least. */
static inline unsigned int rc_voxel_pass_blocks(int64_t n) {
  const unsigned int b = rc_voxel_blocks((n + 3) / 4);
  return b < 4096 ? b : 4096;
}

/* Zeroes na bytes at a and nb bytes at b (either may be 0) in one kernel
 * on `stream`, a programmatic dependent launch of the stream's earlier work
 * when `pdl` that waits for that work before its stores, so that a kernel
 * launched as its own dependent may read the caller's inputs before waiting
 * (voxel_zero_cuda.cu). */
cudaError_t rc_voxel_zero(void *a, size_t na, void *b, size_t nb, cudaStream_t stream, bool pdl);

/* One call. */
struct rc_voxel_call {
  rc_cuda_device_guard guard;
  cudaStream_t stream;
  int checked; /* rc_cuda_sync_checks: 0 while the stream is captured into a
                  CUDA graph or when the context's sync checks are off */
  bool pdl;    /* the device runs programmatic dependent launches (rc_cuda_pdl) */
  rc_voxel_src src;
  rc_voxel_counters *counters; /* device; read back in checked mode */
  rc_voxel_counters read;      /* what was read back (checked mode) */
};

/* Sets the call up: stream, checked mode, pdl, point source, device made current.
 * INVALID_ARGUMENT when N > 2^31-2. On error the device is restored. */
robocache_status rc_voxel_cuda_enter(robocache_ctx *ctx, const rc_voxel_problem *p,
                                     rc_voxel_call *c);

/* Ends a call whose launches returned `status`: in checked mode copies the
 * counters back into c->read (one stream synchronisation), fills p->stats
 * and reports bad offsets as INVALID_ARGUMENT; unchecked, marks the workspace as in use on the
 * stream (rc_cuda_workspace_async) when the call took c->counters from it (every call that uses the
 * workspace does) and sets the stats to points_in = N and -1 (unknown) for the other counters.
 * Restores the device. */
robocache_status rc_voxel_cuda_end(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c,
                                   robocache_status status);

/* Dense COUNT, OCCUPANCY and MAX into p->out (voxelize_dense_count_max_cuda.cu): two or
 * three kernels on c->stream; in checked mode also zeroes and fills
 * c->counters (taken from the workspace). CUDA_ERROR when a launch fails. */
robocache_status rc_voxelize_dense_count_max_cuda(robocache_ctx *ctx, const rc_voxel_problem *p,
                                                  rc_voxel_call *c);

/* Floats of each half of rc_voxel_chain_sums' shared buffer. */
#define RC_CHAIN_STAGE 2048

/* The f64 sums, in input order from 0.0 (one chain each, as the CPU
 * backend adds), of columns [c0, c0 + nc) (1 <= nc <= 32) of the n points
 * idx[0 .. n) of s, by the whole block (more than 32 threads, every one
 * calls it): lane c of
 * warp 0 adds column c0 + c from chunk i of the points in buf[i % 2] while
 * the other warps stage chunk i + 1 in the other half, and returns the sum
 * (0.0 to the other threads). buf: 2 * RC_CHAIN_STAGE floats of shared
 * memory; the block's last reads of buf and idx are done on return. */
__device__ inline double rc_voxel_chain_sums(const rc_voxel_src &s, const int *idx, int n,
                                             int64_t c0, int nc, float *buf) {
  const int per = RC_CHAIN_STAGE / nc, chunks = (n + per - 1) / per;
  const auto stage = [&](int i, int t0, int nt) {
    float *b = buf + (i & 1) * RC_CHAIN_STAGE;
    const int p0 = i * per, m = (n - p0 < per ? n - p0 : per) * nc;
    for (int k = t0; k < m; k += nt) {
      const int j = k / nc;
      b[k] = rc_vpt(s, idx[p0 + j], c0 + (k - j * nc));
    }
  };
  stage(0, threadIdx.x, blockDim.x);
  __syncthreads();
  double acc = 0.0;
  for (int i = 0; i < chunks; i++) {
    if (threadIdx.x >= 32) {
      if (i + 1 < chunks) stage(i + 1, threadIdx.x - 32, blockDim.x - 32);
    } else if ((int)threadIdx.x < nc) {
      const float *b = buf + (i & 1) * RC_CHAIN_STAGE;
      const int m = n - i * per < per ? n - i * per : per;
      for (int j = 0; j < m; j++) acc += (double)b[j * nc + threadIdx.x];
    }
    __syncthreads();
  }
  return acc;
}

#endif
