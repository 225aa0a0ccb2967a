/* The voxels of a call in a hash table, numbered in order of their first
 * point, each with its points in input order, without a sort: the grouping
 * of hard voxelization and downsampling (docs/voxelize.md, "CUDA").
 *
 *   1. (the op's kernel, one thread per point) the point's voxel key goes
 *      into an open-addressing table (rc_table_insert: atomicCAS on key + 1,
 *      linear probing within the slots the op gives it); rc_table_add_point
 *      counts the point in its slot (its provisional rank there,
 *      voxel_groups_cuda.cuh) and keeps the slot's first point (atomicMax of
 *      2^31 - 1 - index);
 *   2. rc_table_number: each non-empty slot gets its segment of the point
 *      list (rc_groups_alloc) and sets the bit of its first point; the
 *      prefix sums of those bits (cub::DeviceScan over the words' popcounts)
 *      number the voxels in order of their first point (rc_first_rank); the
 *      scatter of the point lists and the sort of the giant segments
 *      (voxel_groups_cuda.cuh steps 3 and 4).
 * Which slot a voxel gets depends on the scheduling; its number, its count
 * and its points do not. */
#ifndef ROBOCACHE_CUDA_VOXEL_TABLE_CUDA_CUH
#define ROBOCACHE_CUDA_VOXEL_TABLE_CUDA_CUH

#include "cuda/voxel_groups_cuda.cuh"

/* First points of the voxels: bit i of bits is set when point i is the first
 * of its voxel; prefix[w] is the number of bits set in words 0 .. w-1. */
struct rc_first_bits {
  unsigned int *bits;   /* [words] zeroed, then set */
  unsigned int *prefix; /* [words] */
  int words;            /* N / 32 + 1 */
};

/* The voxels: key[s] = the op's key + 1 (0: empty slot). */
struct rc_voxel_table {
  unsigned long long *key;
  unsigned int *count; /* points, then the segment's start (rc_groups_alloc) */
  unsigned int *first; /* 2^31 - 1 - (first point) */
  unsigned int cap;
};

/* ---- host ------------------------------------------------------------------------ */

/* A call's table, first-point bits, groups and CUB temporary storage. */
struct rc_table_call {
  rc_voxel_table t;
  rc_first_bits first;
  rc_groups g; /* count = t.count, counters = the call's */
  void *temp;
  size_t temp_bytes;
  size_t zeroed; /* bytes from the scratch's start that must be zero when the op's first
                    kernel runs (rc_voxel_zero) */
};

/* Takes c's scratch from the workspace: c->counters, a table of `cap` slots
 * (64 at least) over the call's N points, and the op's own pieces:
 * `zeroed_extra` bytes in the zeroed part (*zeroed_at) and `extra` bytes
 * after it (*extra_at); a piece of 0 bytes is NULL. */
robocache_status rc_table_scratch(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c,
                                  int64_t cap, size_t zeroed_extra, void **zeroed_at, size_t extra,
                                  void **extra_at, rc_table_call *tc);
/* Step 2 after the op's insert kernel on c's stream (its kernels
 * programmatic dependent launches when c->pdl; CUB's are ordinary ones). */
robocache_status rc_table_number(robocache_ctx *ctx, const rc_voxel_call *c,
                                 const rc_table_call *tc);

/* ---- device ---------------------------------------------------------------------- */

/* Number of first points before point i (0 <= i <= N). */
__device__ __forceinline__ unsigned int rc_first_rank(const rc_first_bits &f, int64_t i) {
  const unsigned int w = f.bits[i >> 5];
  return f.prefix[i >> 5] + __popc(w & ((1u << (i & 31)) - 1u));
}

/* The slot of key k (inserted when new) among the n slots from base (n <=
 * cap - base), or UINT_MAX when they are full of other keys: an op that
 * gives each point n > (distinct keys that can reach them) never sees it. A
 * plain read that sees a stale 0 falls back on atomicCAS; a slot's key never
 * changes once set. */
__device__ __forceinline__ unsigned int
rc_table_insert(const rc_voxel_table &t, unsigned long long k, unsigned int base, unsigned int n) {
  const unsigned long long key = k + 1;
  unsigned int s = (unsigned int)__umul64hi(key * 0x9E3779B97F4A7C15ull, n);
  for (unsigned int probe = 0; probe < n; probe++) {
    unsigned long long cur = t.key[base + s];
    if (cur == 0) cur = atomicCAS(&t.key[base + s], 0ull, key);
    if (cur == 0 || cur == key) return base + s;
    s = s + 1 == n ? 0 : s + 1;
  }
  return UINT_MAX;
}

/* Point i joins the voxel of `slot`. */
__device__ __forceinline__ void rc_table_add_point(const rc_voxel_table &t, const rc_groups &g,
                                                   unsigned int slot, int i) {
  g.rank[i] = atomicAdd(&t.count[slot], 1u);
  atomicMax(&t.first[slot], 0x7fffffffu - (unsigned int)i);
}

/* The first point of the voxel in `slot`. */
__device__ __forceinline__ int64_t rc_table_first(const rc_voxel_table &t, unsigned int slot) {
  return 0x7fffffff - (int64_t)t.first[slot];
}

#endif
