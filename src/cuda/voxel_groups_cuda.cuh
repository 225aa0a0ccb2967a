/* The points of each bucket in input order, without a device-wide sort: the
 * grouping behind dense SUM / MEAN (a bucket is a cell of the output grid)
 * and hard voxelization (a slot of a hash table of the voxels). See
 * docs/voxelize.md, "CUDA".
 *
 *   1. (the op's kernel, one thread per point) the point's bucket, and its
 *      provisional rank there: the old value of an atomicAdd on the bucket's
 *      count (an order that depends on the scheduling);
 *   2. rc_groups_alloc (the op's kernel, one thread per ITEMS buckets, at
 *      most 16): each non-empty bucket gets the segment [start, start + n)
 *      of `list` (a block-wide scan and one atomicAdd per block), its count
 *      becomes its start (or'ed with the op's flag), and its descriptor goes
 *      to the small list (n <=
 *      RC_GROUP_SMALL) or the big list, a big one of more than
 *      RC_GROUP_BLOCK points also to the giant list;
 *   3. rc_groups_scatter: list[start + rank] = point index;
 *   4. rc_groups_sort_giants: cub::DeviceSegmentedSort sorts each giant
 *      segment into `sorted`;
 *   5. (the op's kernel) each segment in input order: a small one by one
 *      thread, sorted in registers (rc_group_small); a big one by one block,
 *      sorted in shared memory (a bitonic network; downsampling: a block
 *      radix sort beyond RC_GROUP_BITONIC points) or read from `sorted`
 *      (rc_group_block_sorted, rc_group_block_radix_sorted).
 * Which points a bucket holds does not depend on the scheduling, and every
 * segment is sorted by point index before use: results are deterministic.
 * Every step costs O(points + buckets) (a block sort of at most
 * RC_GROUP_BLOCK indices per big bucket; the cub sort beyond). */
#ifndef ROBOCACHE_CUDA_VOXEL_GROUPS_CUDA_CUH
#define ROBOCACHE_CUDA_VOXEL_GROUPS_CUDA_CUH

#include "cuda/voxel_cuda.cuh"

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include <limits.h>

#define RC_GROUP_SMALL 16   /* at most this many points: one thread */
#define RC_GROUP_BLOCK 4096 /* at most this many: one block, shared memory */

/* A non-empty bucket: its points are list[start .. start + n). 16-byte
 * aligned: one vector store or load. */
struct __align__(16) rc_group_seg {
  long long bucket;
  unsigned int start, n;
};

struct rc_groups {
  unsigned int *count;          /* [buckets] the op's counts, then starts */
  long long *bucket_of;         /* [N] bucket of each point, -1 when dropped */
  unsigned int *rank;           /* [N] provisional rank in its bucket */
  int *list;                    /* [N] point indices, bucket after bucket */
  int *sorted;                  /* [N] giant segments sorted (NULL when gmax = 0) */
  rc_group_seg *seg;            /* [N] small segments from the front, big from the back */
  int *giant_begin, *giant_end; /* [gmax] giant segments (zeroed: empty) */
  int N, gmax;                  /* gmax = N / (RC_GROUP_BLOCK + 1) */
  rc_voxel_counters *counters;  /* cursor, n_small, n_big, n_giant, nonempty */
};

/* ---- host ------------------------------------------------------------------------ */

/* Scratch of the grouping of N points: the part that must be zero when the
 * op's first kernel runs, then the rest (two calls of rc_carver). */
void rc_groups_carve_zeroed(rc_groups *g, rc_carver *k, int N);
void rc_groups_carve(rc_groups *g, rc_carver *k, int N);
/* CUB temporary storage of rc_groups_sort_giants for N points (0 when
 * gmax = 0). */
robocache_status rc_groups_temp_bytes(robocache_ctx *ctx, int N, size_t *bytes);
/* Step 3: list[start + rank] = point (starts stored without a flag); a
 * programmatic dependent launch when `pdl`. */
robocache_status rc_groups_scatter(robocache_ctx *ctx, cudaStream_t stream, bool pdl,
                                   const rc_groups *g);
/* Step 4 (no launch when gmax = 0). */
robocache_status rc_groups_sort_giants(robocache_ctx *ctx, cudaStream_t stream, const rc_groups *g,
                                       void *temp, size_t temp_bytes);

/* ---- device ---------------------------------------------------------------------- */

/* Step 2 for the buckets bucket[k] holding n[k] points (0: skipped); the
 * bucket's count becomes start | flag. Every thread of the block calls it
 * once. ITEMS <= 16. */
template <int ITEMS>
__device__ __forceinline__ void rc_groups_alloc(const rc_groups &g,
                                                const long long (&bucket)[ITEMS],
                                                const unsigned int (&n)[ITEMS], unsigned int flag) {
  static_assert(ITEMS <= 16, "a tile holds at most 4096 buckets");
  /* one scan of (points | small segments << 32 | big segments << 45): a tile
   * holds at most 4096 < 2^13 segments of each kind */
  typedef cub::BlockScan<unsigned long long, RC_VOXEL_THREADS> scan;
  __shared__ typename scan::TempStorage ts;
  __shared__ unsigned int base[3];
  unsigned long long v[ITEMS], pre[ITEMS], total;
#pragma unroll
  for (int k = 0; k < ITEMS; k++)
    v[k] = n[k] == 0
               ? 0ull
               : (unsigned long long)n[k] | (n[k] <= RC_GROUP_SMALL ? 1ull << 32 : 1ull << 45);
  scan(ts).ExclusiveSum(v, pre, total);
  if (threadIdx.x == 0) {
    const unsigned int pts = (unsigned int)total, ns = (unsigned int)(total >> 32) & 0x1fffu,
                       nb = (unsigned int)(total >> 45) & 0x1fffu;
    base[0] = pts ? atomicAdd(&g.counters->cursor, pts) : 0;
    base[1] = ns ? atomicAdd(&g.counters->n_small, ns) : 0;
    base[2] = nb ? atomicAdd(&g.counters->n_big, nb) : 0;
    if (ns + nb) atomicAdd(&g.counters->nonempty, (unsigned long long)(ns + nb));
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    if (n[k] == 0) continue;
    const unsigned int start = base[0] + (unsigned int)pre[k];
    const rc_group_seg e = {bucket[k], start, n[k]};
    g.count[bucket[k]] = start | flag;
    if (n[k] <= RC_GROUP_SMALL) {
      g.seg[base[1] + ((unsigned int)(pre[k] >> 32) & 0x1fffu)] = e;
      continue;
    }
    g.seg[g.N - 1 - (base[2] + ((unsigned int)(pre[k] >> 45) & 0x1fffu))] = e;
    if (n[k] > RC_GROUP_BLOCK) {
      const unsigned int i = atomicAdd(&g.counters->n_giant, 1u);
      if (i < (unsigned int)g.gmax) {
        g.giant_begin[i] = (int)start;
        g.giant_end[i] = (int)(start + n[k]);
      }
    }
  }
}

/* Sorts e ascending (a bitonic network; indices known at compile time, so
 * e stays in registers). W is a power of two. */
template <int W> __device__ __forceinline__ void rc_sort_regs(int (&e)[W]) {
#pragma unroll
  for (int k = 2; k <= W; k <<= 1)
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1)
#pragma unroll
      for (int i = 0; i < W; i++) {
        const int l = i ^ j;
        if (l > i) {
          const int a = e[i], b = e[l];
          const bool swap = (i & k) == 0 ? a > b : a < b;
          e[i] = swap ? b : a;
          e[l] = swap ? a : b;
        }
      }
}

template <int W>
__device__ __forceinline__ void rc_group_small_sorted(const rc_groups &g, const rc_group_seg &e,
                                                      int (&idx)[W]) {
#pragma unroll
  for (int k = 0; k < W; k++) idx[k] = k < (int)e.n ? g.list[e.start + k] : INT_MAX;
  rc_sort_regs(idx);
}

/* Blocks for step 5 with `threads` threads (one per small segment, ...) and
 * up to 2048 blocks for the big segments (at most N / (RC_GROUP_SMALL + 1)). */
static inline unsigned int rc_group_blocks(int N, int64_t threads) {
  const int64_t b = rc_voxel_blocks(threads), big = N / (RC_GROUP_SMALL + 1) + 1;
  const int64_t want = b > big ? b : big < 2048 ? big : 2048;
  return (unsigned int)(want < 8192 ? want : 8192);
}

/* Calls fn(idx) with the point indices of the small segment e in input order
 * in idx[0 .. e.n) of an int[W] (W a power of two, e.n <= W <= 16). */
template <class Fn>
__device__ __forceinline__ void rc_group_small(const rc_groups &g, const rc_group_seg &e,
                                               const Fn &fn) {
  if (e.n == 1) {
    int idx[1];
    rc_group_small_sorted(g, e, idx);
    fn(idx);
  } else if (e.n <= 4) {
    int idx[4];
    rc_group_small_sorted(g, e, idx);
    fn(idx);
  } else if (e.n <= 8) {
    int idx[8];
    rc_group_small_sorted(g, e, idx);
    fn(idx);
  } else {
    int idx[RC_GROUP_SMALL];
    rc_group_small_sorted(g, e, idx);
    fn(idx);
  }
}

/* The f64 sum from 0.0 of column c of the points idx[0 .. n) in that order
 * (the CPU backend's chain), for the indices of rc_group_small. */
template <int W>
__device__ __forceinline__ double rc_group_small_sum(const rc_voxel_src &s, const int (&idx)[W],
                                                     unsigned int n, int64_t c) {
  double acc = 0.0;
#pragma unroll
  for (int j = 0; j < W; j++)
    if (j < (int)n) acc += (double)rc_vpt(s, idx[j], c);
  return acc;
}

/* The point indices of the big segment e in input order: in sidx (shared,
 * RC_GROUP_BLOCK ints; a bitonic sort, log2(m) (log2(m) + 1) / 2 barriers
 * for m = e.n rounded up to a power of two) when e.n <= RC_GROUP_BLOCK, else
 * in g.sorted. Every thread of the block calls it with the same e; a barrier
 * must separate the block's last reads of sidx from the next call. */
__device__ __forceinline__ const int *rc_group_block_sorted(const rc_groups &g,
                                                            const rc_group_seg &e, int *sidx) {
  if (e.n > RC_GROUP_BLOCK) return g.sorted + e.start;
  unsigned int m = 1;
  while (m < e.n) m <<= 1;
  for (unsigned int k = threadIdx.x; k < m; k += blockDim.x)
    sidx[k] = k < e.n ? g.list[e.start + k] : INT_MAX;
  __syncthreads();
  for (unsigned int k = 2; k <= m; k <<= 1) {
    for (unsigned int j = k >> 1; j > 0; j >>= 1) {
      for (unsigned int i = threadIdx.x; i < m; i += blockDim.x) {
        const unsigned int l = i ^ j;
        if (l > i) {
          const int a = sidx[i], b = sidx[l];
          if ((i & k) == 0 ? a > b : a < b) {
            sidx[i] = b;
            sidx[l] = a;
          }
        }
      }
      __syncthreads();
    }
  }
  return sidx;
}

/* Shared memory of rc_group_block_radix_sorted: the sorted indices, or the
 * block radix sort's scratch while it runs. */
typedef cub::BlockRadixSort<int, RC_VOXEL_THREADS, RC_GROUP_BLOCK / RC_VOXEL_THREADS>
    rc_group_radix;
union rc_group_sort_smem {
  int idx[RC_GROUP_BLOCK];
  rc_group_radix::TempStorage radix;
};

/* Segments of more points than this go to the block radix sort. */
#define RC_GROUP_BITONIC 512

/* rc_group_block_sorted with a block radix sort (the bits of the point
 * indices: 5 passes for up to 2^20 points) of segments of more than
 * RC_GROUP_BITONIC points, whose bitonic network would take 55-78 barriers:
 * faster there, at the price of registers (RC_GROUP_BLOCK / RC_VOXEL_THREADS
 * keys per thread), so for kernels with big segments only. */
__device__ __forceinline__ const int *
rc_group_block_radix_sorted(const rc_groups &g, const rc_group_seg &e, rc_group_sort_smem &sm) {
  if (e.n <= RC_GROUP_BITONIC || e.n > RC_GROUP_BLOCK) return rc_group_block_sorted(g, e, sm.idx);
  constexpr int ITEMS = RC_GROUP_BLOCK / RC_VOXEL_THREADS;
  int bits = 1; /* indices < N < 2^bits; the padding, 2^bits - 1, above them */
  while (bits < 31 && (1 << bits) <= g.N) bits++;
  const int pad = (int)((1u << bits) - 1u);
  int key[ITEMS];
#pragma unroll
  for (int u = 0; u < ITEMS; u++) {
    const unsigned int k = threadIdx.x * ITEMS + u;
    key[u] = k < e.n ? g.list[e.start + k] : pad;
  }
  rc_group_radix(sm.radix).Sort(key, 0, bits);
  __syncthreads(); /* the scratch becomes idx */
#pragma unroll
  for (int u = 0; u < ITEMS; u++) sm.idx[threadIdx.x * ITEMS + u] = key[u];
  __syncthreads();
  return sm.idx;
}

#endif
