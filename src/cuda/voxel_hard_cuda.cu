/* CUDA hard voxelization (mmcv deterministic semantics, DESIGN §1.3), without
 * a sort:
 *   1. insert: each in-range point's voxel (cloud, key) goes into an
 *      open-addressing hash table (atomicCAS on the 64-bit key b * G + key +
 *      1; linear probing; 1.5 slots per point); the slot counts its points
 *      (the point's provisional rank, voxel_groups_cuda.cuh) and keeps its
 *      first point (atomicMax of 2^31 - 1 - index);
 *   2. slots: each non-empty slot gets its segment of the point list
 *      (rc_groups_alloc) and sets the bit of its first point;
 *   3. the prefix sums of those bits (cub::DeviceScan over the words'
 *      popcounts): the voxels are numbered in order of their first point,
 *      cloud b's voxel v being rank(first point) - rank(offsets[b]); the
 *      scatter of the point lists;
 *   4. giant segments sorted (cub);
 *   5. write (voxels zeroed first): each voxel's first P points in input
 *      order into its row (16-byte copies for 4 contiguous columns), or
 *      counted as dropped when v >= M; each padding row gets coords -1 and
 *      num_points 0.
 * The kernels of steps 1, 2, 3 (scatter) and 5 are programmatic dependent
 * launches on sm_90 and later, after rc_voxel_zero (voxels and scratch); the
 * CUB launches are ordinary.
 * Which slot a voxel gets depends on the scheduling, nothing written does:
 * bitwise identical to the CPU backend. One stream synchronisation at the end
 * (stats, offsets check) in checked mode. */
#include "cuda/voxel_groups_cuda.cuh"

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

namespace {

/* First points of the voxels: bit i of bits is set when point i is the first
 * of its voxel; prefix[w] is the number of bits set in words 0 .. w-1. */
struct first_bits {
  unsigned int *bits;   /* [words] zeroed, then set */
  unsigned int *prefix; /* [words] */
  int words;            /* N / 32 + 1 */
};

/* Number of first points before point i (i <= N). */
__device__ __forceinline__ unsigned int first_rank(const first_bits &f, int64_t i) {
  const unsigned int w = f.bits[i >> 5];
  return f.prefix[i >> 5] + __popc(w & ((1u << (i & 31)) - 1u));
}

struct popcount {
  __host__ __device__ unsigned int operator()(unsigned int w) const {
#ifdef __CUDA_ARCH__
    return __popc(w);
#else
    return (unsigned int)__builtin_popcount(w);
#endif
  }
};

/* The voxels of the call: key[s] = b * G + key + 1 (0: empty slot). */
struct hash_table {
  unsigned long long *key;
  unsigned int *count; /* points, then the segment's start (rc_groups_alloc) */
  unsigned int *first; /* 2^31 - 1 - (first point) */
  unsigned int cap;
  int64_t G;
};

struct hard_out {
  float *voxels;
  int32_t *coords, *num_points, *num_voxels;
  int64_t P, M, C;
  int vec4;    /* C == 4, points rows contiguous and 16-byte aligned, voxels aligned */
  int coords4; /* coords 16-byte aligned */
};

/* The slot of key k (inserted when new). The table never fills up (more
 * slots than points), so the probe ends. A plain read that sees a stale 0
 * falls back on atomicCAS; a slot's key never changes once set. */
__device__ unsigned int insert(const hash_table &t, unsigned long long k) {
  unsigned int s = (unsigned int)__umul64hi(k * 0x9E3779B97F4A7C15ull, t.cap);
  for (;;) {
    unsigned long long cur = t.key[s];
    if (cur == 0) cur = atomicCAS(&t.key[s], 0ull, k);
    if (cur == 0 || cur == k) return s;
    s = s + 1 == t.cap ? 0 : s + 1;
  }
}

/* Step 1, one thread per point: its cell found before the wait for the
 * zeroing kernel (the point's loads in flight meanwhile). */
__global__ void insert_kernel(rc_voxel_src s, rc_groups g, hash_table t, int checked) {
  rc_pdl_let_dependents_launch();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0;
  const int64_t cell = i < s.N ? rc_voxel_cell(s, i, t.G, &nonfinite, &range) : -1; /* b*G+key */
  rc_pdl_wait();
  if (i < s.N) {
    long long bucket = -1;
    if (cell >= 0) {
      const unsigned int slot = insert(t, (unsigned long long)cell + 1);
      g.rank[i] = atomicAdd(&t.count[slot], 1u);
      atomicMax(&t.first[slot], 0x7fffffffu - (unsigned int)i);
      bucket = slot;
    }
    g.bucket_of[i] = bucket;
  }
  if (checked) rc_voxel_count_dropped(s, g.counters, nonfinite, range);
}

/* Slots per thread of the slots kernel: 4 against 16 measured on an H200,
 * KITTI scan 41.9 -> 35.7 us, 8 scans 160.6 -> 146.9 (in a CUDA graph). */
#define SLOT_ITEMS 4
#define SLOT_TILE (RC_VOXEL_THREADS * SLOT_ITEMS)

/* Step 2 over SLOT_TILE slots per block. */
__global__ void slots_kernel(rc_groups g, hash_table t, first_bits first) {
  rc_pdl_enter();
  const unsigned int u0 = blockIdx.x * SLOT_TILE + threadIdx.x;
  long long bucket[SLOT_ITEMS];
  unsigned int n[SLOT_ITEMS];
#pragma unroll
  for (int k = 0; k < SLOT_ITEMS; k++) {
    const unsigned int u = u0 + k * RC_VOXEL_THREADS;
    bucket[k] = u;
    n[k] = u < t.cap ? t.count[u] : 0u;
    if (n[k]) {
      const unsigned int f = 0x7fffffffu - t.first[u];
      atomicOr(&first.bits[f >> 5], 1u << (f & 31));
    }
  }
  rc_groups_alloc(g, bucket, n, 0);
}

/* Where the voxel of segment e goes: its cloud *b, voxel coordinates ijk
 * and output row (-1: dropped past M; -2: none, offsets that failed the
 * checks). */
__device__ int64_t voxel_row(const hash_table &t, const rc_voxel_src &s, const first_bits &first,
                             const hard_out &o, const rc_group_seg &e, int *b, int64_t ijk[3]) {
  const unsigned int slot = (unsigned int)e.bucket;
  const unsigned long long k = t.key[slot] - 1;
  *b = (int)(k / (unsigned long long)t.G);
  rc_voxel_unkey(&s.keyer, (int64_t)(k % (unsigned long long)t.G), ijk);
  const int64_t f = 0x7fffffff - (int64_t)t.first[slot];
  const int64_t v = (int64_t)first_rank(first, f) - first_rank(first, rc_voxel_off(s, *b));
  return v >= o.M ? -1 : v < 0 ? -2 : *b * o.M + v;
}

/* coords[row] = (b, z, y, x) and num_points[row]. */
__device__ void write_head(const hard_out &o, int64_t row, int b, const int64_t ijk[3],
                           int64_t np) {
  const int4 v = make_int4(b, (int)ijk[2], (int)ijk[1], (int)ijk[0]);
  int32_t *cd = o.coords + row * 4;
  if (o.coords4) {
    *(int4 *)cd = v;
  } else {
    cd[0] = v.x, cd[1] = v.y, cd[2] = v.z, cd[3] = v.w;
  }
  o.num_points[row] = (int32_t)np;
}

/* The C columns of point i to dst. */
__device__ __forceinline__ void copy_point(const rc_voxel_src &s, const hard_out &o, float *dst,
                                           int64_t i) {
  if (o.vec4) {
    *(float4 *)dst = *(const float4 *)(s.pts + i * s.s0);
    return;
  }
  for (int64_t c = 0; c < o.C; c++) dst[c] = rc_vpt(s, i, c);
}

/* Step 5: small voxels one per thread, padding rows one per thread, big
 * voxels one per block; in checked mode the dropped voxels and points are
 * counted. */
__global__ void write_kernel(rc_groups g, rc_voxel_src s, hash_table t, first_bits first,
                             hard_out o, int checked) {
  __shared__ int sidx[RC_GROUP_BLOCK];
  rc_pdl_enter();
  unsigned int dropped_points = 0, dropped_voxels = 0, dropped_voxel_points = 0;
  const unsigned int n_small = g.counters->n_small, n_big = g.counters->n_big;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (int64_t k = tid; k < n_small; k += stride) {
    const rc_group_seg e = g.seg[k];
    int b;
    int64_t ijk[3];
    const int64_t row = voxel_row(t, s, first, o, e, &b, ijk);
    if (row < 0) {
      dropped_voxels += row == -1;
      dropped_voxel_points += row == -1 ? e.n : 0;
      continue;
    }
    const int64_t np = e.n < o.P ? e.n : o.P;
    dropped_points += (unsigned int)(e.n - np);
    write_head(o, row, b, ijk, np);
    float *dst = o.voxels + row * o.P * o.C;
    rc_group_small(g, e, [&](const auto &idx) {
      constexpr int W = sizeof(idx) / sizeof(int);
#pragma unroll
      for (int j = 0; j < W; j++)
        if (j < np) copy_point(s, o, dst + j * o.C, idx[j]);
    });
  }
  for (int64_t r = tid; r < s.B * o.M; r += stride) {
    const int64_t b = r / o.M, v = r % o.M;
    const int64_t total =
        (int64_t)first_rank(first, rc_voxel_off(s, b + 1)) - first_rank(first, rc_voxel_off(s, b));
    const int64_t kept = total < 0 ? 0 : total < o.M ? total : o.M;
    if (v == 0) o.num_voxels[b] = (int32_t)kept;
    if (v < kept) continue;
    const int64_t none[3] = {-1, -1, -1};
    write_head(o, r, -1, none, 0);
  }
  for (unsigned int k = blockIdx.x; k < n_big; k += gridDim.x) {
    const rc_group_seg e = g.seg[g.N - 1 - k];
    int b;
    int64_t ijk[3];
    const int64_t row = voxel_row(t, s, first, o, e, &b, ijk); /* the same in every thread */
    if (row < 0) {
      if (threadIdx.x == 0 && row == -1) dropped_voxels++, dropped_voxel_points += e.n;
      continue;
    }
    const int *idx = rc_group_block_sorted(g, e, sidx);
    const int64_t np = e.n < o.P ? e.n : o.P;
    if (threadIdx.x == 0) {
      write_head(o, row, b, ijk, np);
      dropped_points += (unsigned int)(e.n - np);
    }
    float *dst = o.voxels + row * o.P * o.C;
    for (int64_t j = threadIdx.x; j < np; j += blockDim.x) copy_point(s, o, dst + j * o.C, idx[j]);
    __syncthreads();
  }
  if (!checked) return;
  rc_voxel_block_add(&g.counters->dropped_max_points, dropped_points);
  rc_voxel_block_add(&g.counters->dropped_voxels, dropped_voxels);
  rc_voxel_block_add(&g.counters->dropped_voxel_points, dropped_voxel_points);
}

/* Steps 1-5 on the call's scratch. */
robocache_status hard(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c) {
  const int N = c->src.N;
  hash_table t = {};
  t.G = p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2];
  if (p->B > 0 && (uint64_t)t.G > (UINT64_MAX - 1) / (uint64_t)p->B)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "voxelize_hard (cuda): %lld clouds of %lld cells: clouds x cells must be "
                    "below 2^64 - 1",
                    (long long)p->B, (long long)t.G);
  const int64_t cap = (int64_t)N + N / 2;
  t.cap = (unsigned int)(cap > 64 ? cap : 64);
  first_bits first = {NULL, NULL, N / 32 + 1};
  const auto popcounts = thrust::make_transform_iterator((const unsigned int *)NULL, popcount());
  size_t temp_bytes = 0, scan_bytes = 0;
  robocache_status s = rc_groups_temp_bytes(ctx, N, &temp_bytes);
  if (s != ROBOCACHE_OK) return s;
  RC_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, popcounts, (unsigned int *)NULL,
                                                 first.words));
  temp_bytes = temp_bytes > scan_bytes ? temp_bytes : scan_bytes; /* one after the other */
  rc_groups g = {};
  void *temp = NULL;
  size_t zeroed = 0;
  s = rc_voxel_scratch(ctx, p->points.device_id, [&](rc_carver &k) {
    c->counters = (rc_voxel_counters *)k.take(sizeof(rc_voxel_counters));
    t.key = (unsigned long long *)k.take((size_t)t.cap * sizeof(unsigned long long));
    t.count = (unsigned int *)k.take((size_t)t.cap * sizeof(unsigned int));
    t.first = (unsigned int *)k.take((size_t)t.cap * sizeof(unsigned int));
    first.bits = (unsigned int *)k.take((size_t)first.words * sizeof(unsigned int));
    rc_groups_carve_zeroed(&g, &k, N);
    zeroed = k.at;
    rc_groups_carve(&g, &k, N);
    first.prefix = (unsigned int *)k.take((size_t)first.words * sizeof(unsigned int));
    temp = k.take(temp_bytes);
  });
  if (s != ROBOCACHE_OK) return s;
  g.count = t.count;
  g.counters = c->counters;
  const unsigned int T = RC_VOXEL_THREADS;
  /* one coalesced pass of zeros is faster than zeroing the free slots in the kernel */
  cudaError_t e = rc_voxel_zero(p->voxels.data, (size_t)rc_view_numel(&p->voxels) * sizeof(float),
                                c->counters, zeroed, c->stream, c->pdl);
  if (e == cudaSuccess)
    e = rc_cuda_launch(insert_kernel, rc_voxel_blocks(N), T, c->stream, c->pdl, c->src, g, t,
                       c->checked);
  if (e == cudaSuccess)
    e = rc_cuda_launch(slots_kernel, (t.cap + SLOT_TILE - 1) / SLOT_TILE, T, c->stream, c->pdl, g,
                       t, first);
  s = rc_cuda_check(ctx, e, "voxelize_hard insert/slots kernels");
  if (s != ROBOCACHE_OK) return s;
  size_t bytes = temp_bytes;
  RC_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(
                       temp, bytes, thrust::make_transform_iterator(first.bits, popcount()),
                       first.prefix, first.words, c->stream));
  s = rc_groups_scatter(ctx, c->stream, c->pdl, &g);
  if (s == ROBOCACHE_OK) s = rc_groups_sort_giants(ctx, c->stream, &g, temp, temp_bytes);
  if (s != ROBOCACHE_OK) return s;
  hard_out o = {(float *)p->voxels.data,
                (int32_t *)p->coords.data,
                (int32_t *)p->num_points.data,
                (int32_t *)p->num_voxels.data,
                p->max_points,
                p->max_voxels,
                p->C,
                0,
                ((uintptr_t)p->coords.data & 15) == 0};
  o.vec4 = p->C == 4 && c->src.s1 == 1 && c->src.s0 % 4 == 0 && ((uintptr_t)c->src.pts & 15) == 0 &&
           ((uintptr_t)o.voxels & 15) == 0;
  const int64_t rows = p->B * p->max_voxels;
  e = rc_cuda_launch(write_kernel, rc_group_blocks(N, rows > N ? rows : N), T, c->stream, c->pdl, g,
                     c->src, t, first, o, c->checked);
  return rc_cuda_check(ctx, e, "voxelize_hard write kernel");
}

} // namespace

robocache_status rc_voxelize_hard_cuda(robocache_ctx *ctx, const rc_voxel_problem *p) {
  rc_voxel_call c;
  robocache_status s = rc_voxel_cuda_enter(ctx, p, &c);
  if (s != ROBOCACHE_OK) return s;
  return rc_voxel_cuda_end(ctx, p, &c, hard(ctx, p, &c), 1);
}
