/* Shared part of the CUDA voxelize backends (dense, hard, downsample):
 * the sort / segment pipeline every mode builds on, and the call's begin and
 * end (device, workspace, counters read back once). See docs/voxelize.md,
 * "CUDA".
 *
 * Pipeline (all on the context's stream, scratch from the context's
 * workspace, no host allocation):
 *   1. prep: offsets copied (clamped to 0..N) and checked; counters zeroed;
 *      (PCL grid) per-cloud minimum / maximum of the finite points and the
 *      per-cloud keyer, exactly as rc_voxel_cloud_keyer computes it;
 *   2. keys: each point's cloud, class and voxel key (rc_voxel_locate, the
 *      code every backend runs); dropped points get the sentinel key, which
 *      sorts last;
 *   3. a stable radix sort of (key, point index) (cub::DeviceRadixSort), so
 *      the points of each voxel are contiguous and in input order;
 *   4. segments: a sorted position starts a segment when its key or cloud
 *      differs from the previous one (the clouds of equal keys follow each
 *      other, the sort being stable); their starts are compacted
 *      (cub::DeviceSelect::Flagged);
 *   5. (hard, downsample) voxel numbers in order of first appearance: the
 *      first point of each segment is flagged in input order and an
 *      exclusive scan (cub::DeviceScan) numbers them; cloud b's voxels are
 *      rank[i] - rank[offsets[b]].
 * Reductions then walk each segment in input order with the arithmetic of
 * src/cpu (f64 sums from 0.0, one rounding to f32), so results are bitwise
 * those of the CPU backend. */
#ifndef ROBOCACHE_CUDA_VOXEL_CUDA_CUH
#define ROBOCACHE_CUDA_VOXEL_CUDA_CUH

#include "cuda/cuda_ctx.h"

/* voxel_problem.h is C11: its inline helpers may use `restrict`, which C++
 * spells __restrict__. */
extern "C" {
#define restrict __restrict__
#include "ops/voxel_problem.h"
#undef restrict
}

#define RC_VOXEL_THREADS 256

/* Device counters of one call, read back at its end. */
struct rc_voxel_counters {
  unsigned long long nonfinite, range;     /* dropped points */
  unsigned long long dropped_max_points;   /* hard */
  unsigned long long dropped_voxels;       /* hard: voxels past max_voxels */
  unsigned long long dropped_voxel_points; /* hard: their points */
  unsigned long long nonempty;             /* dense COUNT / OCCUPANCY fast path */
  int num_segments;                        /* written by DeviceSelect */
  unsigned int bad_offsets;                /* offsets failed a check */
  unsigned int pcl_too_big;                /* 1 + first cloud whose PCL grid > 2^62, or 0 */
  unsigned int pad;
};

/* Where the points are and how they map to voxels. */
struct rc_voxel_src {
  const float *pts;
  int64_t s0, s1; /* strides of points, in elements */
  int N, B;
  const int64_t *off;           /* [B+1] clamped copy of the offsets (workspace) */
  rc_voxel_keyer keyer;         /* range grid */
  const rc_voxel_keyer *keyers; /* [B] per-cloud PCL keyers, or NULL */
};

__device__ __forceinline__ float rc_vpt(const rc_voxel_src &s, int64_t i, int64_t c) {
  return s.pts[i * s.s0 + c * s.s1];
}

/* The cloud of point i: the b with off[b] <= i < off[b+1] (0..B-1 whatever
 * the offsets hold). */
__device__ __forceinline__ int rc_voxel_cloud_of(const rc_voxel_src &s, int64_t i) {
  int lo = 0, hi = s.B; /* answer in [lo, hi) */
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (s.off[mid] <= i)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Scratch of one call, carved from the workspace. */
struct rc_voxel_pipeline {
  rc_voxel_src src;
  rc_voxel_counters *counters;
  int64_t *off;           /* [B+1] */
  int *cloud;             /* [N] cloud of each point */
  void *keys, *keys_out;  /* [N] uint32 or uint64 (key_bytes) */
  int *idx, *idx_out;     /* [N] point indices; idx_out sorted by key */
  unsigned char *flags;   /* [N] segment heads */
  int *seg_start;         /* [N] start of each segment (sorted positions) */
  int *first, *rank;      /* [N+1] first-point flags and their exclusive scan */
  rc_voxel_keyer *keyers; /* [B] (PCL) */
  unsigned int *extent;   /* [B*6] (PCL) ordered-int min x,y,z, max x,y,z */
  void *temp;             /* CUB temporary storage */
  size_t temp_bytes;
  int key_bytes; /* 4 or 8 */
  int key_bits;  /* bits the sort looks at */
  uint64_t sentinel;
  int ranks; /* 1: step 5 too */
};

/* One call. */
struct rc_voxel_call {
  rc_cuda_device_guard guard;
  cudaStream_t stream;
  int checked; /* rc_cuda_sync_checks: 0 while the stream is captured into a
                  CUDA graph or when the context's sync checks are off */
  rc_voxel_pipeline pl;
};

/* How far rc_voxel_cuda_begin takes the pipeline. */
#define RC_VOXEL_PREP 0     /* step 1 only */
#define RC_VOXEL_SEGMENTS 1 /* steps 1-4 */
#define RC_VOXEL_RANKS 2    /* steps 1-5 */

/* Selects the device, takes the pipeline's scratch from the workspace and
 * launches the steps up to `level`.
 * INVALID_ARGUMENT when N > 2^31-2. On error the device is restored. */
robocache_status rc_voxel_cuda_begin(robocache_ctx *ctx, const rc_voxel_problem *p, int level,
                                     rc_voxel_call *c);

/* Ends a call whose launches returned `status`: in checked mode copies the
 * counters back (one stream synchronisation), fills p->stats
 * (voxels_nonempty from the segments unless nonempty_counter) and reports
 * bad offsets / a too fine PCL grid as INVALID_ARGUMENT; unchecked, marks
 * the workspace as in use on the stream (rc_cuda_workspace_async) and sets
 * the stats to points_in = N and -1 (unknown) for the other counters.
 * Restores the device. */
robocache_status rc_voxel_cuda_end(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c,
                                   robocache_status status, int nonempty_counter);

/* Launch configuration for n threads of RC_VOXEL_THREADS. */
static inline unsigned int rc_voxel_blocks(int64_t n) {
  int64_t b = (n + RC_VOXEL_THREADS - 1) / RC_VOXEL_THREADS;
  return (unsigned int)(b > 0 ? b : 1);
}

/* ROBOCACHE_CUDA_ERROR naming `kernel` when the last launch failed. */
robocache_status rc_voxel_launched(robocache_ctx *ctx, const char *kernel);

/* Segment s of the sorted points: positions [*begin, *end) of idx_out. */
__device__ __forceinline__ void rc_voxel_segment(const rc_voxel_pipeline &pl, int s, int nseg,
                                                 int n_valid, int *begin, int *end) {
  *begin = pl.seg_start[s];
  *end = s + 1 < nseg ? pl.seg_start[s + 1] : n_valid;
}

/* Sorted key at position j. */
__device__ __forceinline__ int64_t rc_voxel_sorted_key(const rc_voxel_pipeline &pl, int j) {
  return pl.key_bytes == 4 ? (int64_t)((const uint32_t *)pl.keys_out)[j]
                           : (int64_t)((const unsigned long long *)pl.keys_out)[j];
}

/* Points in range (sorted positions before the sentinel keys). */
__device__ __forceinline__ int rc_voxel_n_valid(const rc_voxel_pipeline &pl) {
  return pl.src.N - (int)(pl.counters->nonfinite + pl.counters->range);
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

#endif
