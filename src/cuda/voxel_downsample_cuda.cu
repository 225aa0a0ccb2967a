/* CUDA voxel-grid downsampling (DESIGN §1.3 "downsample"), without a sort:
 *   1. the zeroing kernel (counters and scratch); for a PCL grid (no
 *      point_cloud_range) each cloud's minimum and maximum of the finite
 *      points (atomicMax on order-preserving integer encodings), then the
 *      cloud's keyer, exactly as rc_voxel_cloud_keyer computes it;
 *   2. insert: each point's voxel key (rc_voxel_locate with its cloud's
 *      keyer) goes into the voxel table (voxel_table_cuda.cuh), cloud b into
 *      slots of its own (1.5 per point of the cloud, and one), so that keys
 *      of different clouds never meet and a PCL key may use all 62 bits;
 *   3. rc_table_number: the voxels numbered in order of first appearance
 *      over the whole batch (clouds are consecutive), and their points;
 *   4. mean: voxel v's row v of out gets the mean of each column, an f64 sum
 *      in input order from 0.0 divided by the count and rounded to f32 once,
 *      as the CPU backend computes it (bitwise equal); voxels of at most
 *      RC_GROUP_SMALL points one thread each, bigger ones one block each
 *      (rc_voxel_chain_sums); out_offsets[b] = voxels before cloud b.
 * Every kernel is a programmatic dependent launch of the one before it on
 * sm_90 and later (CUB's are ordinary launches). One stream synchronisation
 * at the end in checked mode (stats, CAPACITY_EXCEEDED, offsets / grid
 * checks). */
#include "cuda/voxel_table_cuda.cuh"

#include <string.h>

namespace {

/* Float <-> unsigned int with the order of the floats; every finite float
 * maps above 0, so zeroed extents take atomicMax of the encodings (of the
 * maxima) and of their complements (of the minima). */
__device__ __forceinline__ unsigned int ordered_of(float f) {
  unsigned int u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}
__host__ __device__ __forceinline__ float float_of(unsigned int u) {
  u = (u & 0x80000000u) ? u & 0x7fffffffu : ~u;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* PCL grid, cloud b's extent: ext[b*6 + a] = ~ordered(min), ext[b*6 + 3 + a]
 * = ordered(max) of axis a (both 0: no finite point). */
struct extent {
  unsigned int *ext;
};

/* Block (cloud b, chunk y) strides over the cloud's rows. */
__global__ void extent_kernel(rc_voxel_src s, extent x) {
  rc_pdl_let_dependents_launch();
  const int b = blockIdx.x;
  unsigned int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int64_t i = rc_voxel_off(s, b) + blockIdx.y * blockDim.x + threadIdx.x;
       i < rc_voxel_off(s, b + 1); i += (int64_t)gridDim.y * blockDim.x) {
    const float p[3] = {rc_vpt(s, i, 0), rc_vpt(s, i, 1), rc_vpt(s, i, 2)};
    if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))) continue;
    for (int a = 0; a < 3; a++) {
      const unsigned int u = ordered_of(p[a]);
      lo[a] = ~u > lo[a] ? ~u : lo[a];
      hi[a] = u > hi[a] ? u : hi[a];
    }
  }
  for (int a = 0; a < 3; a++)
    for (int o = 16; o > 0; o /= 2) {
      lo[a] = max(lo[a], __shfl_down_sync(0xffffffffu, lo[a], o));
      hi[a] = max(hi[a], __shfl_down_sync(0xffffffffu, hi[a], o));
    }
  rc_pdl_wait(); /* the extents zeroed */
  if ((threadIdx.x & 31) == 0 && hi[0])
    for (int a = 0; a < 3; a++) {
      atomicMax(&x.ext[b * 6 + a], lo[a]);
      atomicMax(&x.ext[b * 6 + 3 + a], hi[a]);
    }
}

/* Blocks per cloud of the extent kernel: about 1024 points each. */
static unsigned int extent_chunks(int64_t N, int64_t B) {
  const int64_t y = N / (B > 0 ? B : 1) / (4 * RC_VOXEL_THREADS) + 1;
  return (unsigned int)(y < 1024 ? y : 1024);
}

/* The finite points of the cloud of ext (its 6 words) span lo[a] .. hi[a]
 * (lo > hi: none). */
__host__ __device__ void cloud_span(const unsigned int *ext, float lo[3], float hi[3]) {
  for (int a = 0; a < 3; a++) {
    const bool none = ext[3 + a] == 0;
    lo[a] = none ? INFINITY : float_of(~ext[a]);
    hi[a] = none ? -INFINITY : float_of(ext[3 + a]);
  }
}

/* The per-cloud PCL keyer, as rc_voxel_cloud_keyer (src/ops/voxel_host.c). */
__global__ void keyer_kernel(rc_voxel_keyer base, extent x, int B, rc_voxel_keyer *keyers,
                             rc_voxel_counters *counters) {
  rc_pdl_enter();
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= B) return;
  rc_voxel_keyer k = base;
  float lo[3], hi[3];
  cloud_span(x.ext + (size_t)b * 6, lo, hi);
  if (rc_voxel_pcl_keyer(&k, lo, hi) >= 0) /* keys of k: any will do, the call fails */
    atomicMax(&counters->pcl_too_big, ~(unsigned int)b); /* the first such cloud */
  keyers[b] = k;
}

/* Step 2, one thread per point (the point loaded before the wait; on a
 * range grid also its voxel found). Cloud b's slots: from a + a / 2 + b, n +
 * n / 2 + 1 of them, for its n points from a (bad offsets may leave a point
 * without a slot: dropped, reported in checked mode). */
__global__ void insert_kernel(rc_voxel_src s, rc_groups g, rc_voxel_table t, int checked) {
  rc_pdl_let_dependents_launch();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool mine = i < s.N;
  const int b = mine ? rc_voxel_cloud_of(s, i) : 0;
  const float x = mine ? rc_vpt(s, i, 0) : 0.0f, y = mine ? rc_vpt(s, i, 1) : 0.0f,
              z = mine ? rc_vpt(s, i, 2) : 0.0f;
  int64_t ijk[3], key = 0;
  int cls = mine && !s.keyers ? rc_voxel_locate(&s.keyer, x, y, z, ijk, &key) : -1;
  rc_pdl_wait();
  if (mine && s.keyers) {
    const rc_voxel_keyer k = s.keyers[b]; /* in registers */
    cls = rc_voxel_locate(&k, x, y, z, ijk, &key);
  }
  if (mine) {
    long long bucket = -1;
    if (cls == RC_VOXEL_IN) {
      const int64_t a = rc_voxel_off(s, b), e = rc_voxel_off(s, b + 1), n = e > a ? e - a : 0;
      const unsigned int slot = rc_table_insert(
          t, (unsigned long long)key, (unsigned int)(a + a / 2 + b), (unsigned int)(n + n / 2 + 1));
      if (slot != UINT_MAX) {
        rc_table_add_point(t, g, slot, i);
        bucket = slot;
      }
    }
    g.bucket_of[i] = bucket;
  }
  if (checked)
    rc_voxel_count_dropped(s, g.counters, cls == RC_VOXEL_NONFINITE, cls == RC_VOXEL_RANGE);
}

struct mean_out {
  float *out;
  int64_t cap, C;
  int64_t *offsets; /* out_offsets [B+1] */
};

/* The row of the voxel in e: its number, or -1 past the capacity. */
__device__ __forceinline__ int64_t voxel_row(const rc_voxel_table &t, const rc_first_bits &f,
                                             const mean_out &o, const rc_group_seg &e) {
  const int64_t row = rc_first_rank(f, rc_table_first(t, (unsigned int)e.bucket));
  return row < o.cap ? row : -1;
}

/* Step 4, small voxels and out_offsets, one per thread. */
__global__ void mean_kernel(rc_groups g, rc_voxel_src s, rc_voxel_table t, rc_first_bits f,
                            mean_out o) {
  rc_pdl_enter();
  const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k <= s.B) {
    const int64_t r = rc_first_rank(f, rc_voxel_off(s, k));
    o.offsets[k] = r < o.cap ? r : o.cap;
  }
  if (k >= g.counters->n_small) return;
  const rc_group_seg e = g.seg[k];
  const int64_t row = voxel_row(t, f, o, e);
  if (row < 0) return;
  rc_group_small(g, e, [&](const auto &idx) {
    for (int64_t c = 0; c < o.C; c++)
      o.out[row * o.C + c] = rc_voxel_f32(rc_group_small_sum(s, idx, e.n, c) / (double)e.n);
  });
}

/* Step 4, big voxels one per block (32 columns at a time). */
__global__ void mean_big_kernel(rc_groups g, rc_voxel_src s, rc_voxel_table t, rc_first_bits f,
                                mean_out o) {
  __shared__ rc_group_sort_smem sort_smem;
  __shared__ float buf[2 * RC_CHAIN_STAGE];
  rc_pdl_enter();
  const unsigned int n_big = g.counters->n_big;
  for (unsigned int k = blockIdx.x; k < n_big; k += gridDim.x) {
    const rc_group_seg e = g.seg[g.N - 1 - k];
    const int64_t row = voxel_row(t, f, o, e); /* the same in every thread */
    if (row < 0) continue;
    const int *idx = rc_group_block_radix_sorted(g, e, sort_smem);
    for (int64_t c0 = 0; c0 < o.C; c0 += 32) { /* each call ends with idx read */
      const int nc = (int)(o.C - c0 < 32 ? o.C - c0 : 32);
      const double sum = rc_voxel_chain_sums(s, idx, (int)e.n, c0, nc, buf);
      if ((int)threadIdx.x < nc)
        o.out[row * o.C + c0 + threadIdx.x] = rc_voxel_f32(sum / (double)e.n);
    }
  }
}

/* Blocks of mean_big_kernel: one per possible big voxel, at most 4096. */
static unsigned int big_blocks(int64_t N) {
  const int64_t b = N / (RC_GROUP_SMALL + 1) + 1;
  return (unsigned int)(b < 4096 ? b : 4096);
}

/* Steps 1-4 on the call's scratch; *x gets the extents (PCL grid). */
robocache_status downsample(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c,
                            extent *x) {
  const int N = c->src.N, B = c->src.B;
  const bool pcl = p->keyer.pcl;
  rc_table_call tc;
  void *ext = NULL, *keyers_at = NULL;
  robocache_status s = rc_table_scratch(
      ctx, p, c, (int64_t)N + N / 2 + B, pcl ? (size_t)B * 6 * sizeof(unsigned int) : 0, &ext,
      pcl ? (size_t)B * sizeof(rc_voxel_keyer) : 0, &keyers_at, &tc);
  if (s != ROBOCACHE_OK) return s;
  x->ext = (unsigned int *)ext;
  rc_voxel_keyer *keyers = (rc_voxel_keyer *)keyers_at;
  c->src.keyers = keyers;
  const unsigned int T = RC_VOXEL_THREADS;
  cudaError_t e = rc_voxel_zero(NULL, 0, c->counters, tc.zeroed, c->stream, c->pdl);
  if (e == cudaSuccess && pcl && B > 0)
    e = rc_cuda_launch(extent_kernel, dim3((unsigned int)B, extent_chunks(N, B)), T, c->stream,
                       c->pdl, c->src, *x);
  if (e == cudaSuccess && pcl)
    e = rc_cuda_launch(keyer_kernel, rc_voxel_blocks(B), T, c->stream, c->pdl, p->keyer, *x, B,
                       keyers, c->counters);
  if (e == cudaSuccess)
    e = rc_cuda_launch(insert_kernel, rc_voxel_blocks(N), T, c->stream, c->pdl, c->src, tc.g, tc.t,
                       c->checked);
  s = rc_cuda_check(ctx, e, "voxel_downsample extent / keyer / insert kernels");
  if (s == ROBOCACHE_OK) s = rc_table_number(ctx, c, &tc);
  if (s != ROBOCACHE_OK) return s;
  const mean_out o = {(float *)p->out_points.data, p->out_points.shape[0], p->C,
                      (int64_t *)p->out_offsets.data};
  e = rc_cuda_launch(mean_kernel, rc_voxel_blocks(N > B ? N : B + 1), T, c->stream, c->pdl, tc.g,
                     c->src, tc.t, tc.first, o);
  if (e == cudaSuccess)
    e = rc_cuda_launch(mean_big_kernel, big_blocks(N), T, c->stream, c->pdl, tc.g, c->src, tc.t,
                       tc.first, o);
  return rc_cuda_check(ctx, e, "voxel_downsample mean kernels");
}

/* The message of rc_voxel_cloud_keyer for cloud b, from its extent. */
robocache_status pcl_message(robocache_ctx *ctx, const rc_voxel_problem *p, extent x,
                             unsigned int b) {
  unsigned int ext[6];
  RC_CUDA_TRY(ctx, cudaMemcpy(ext, x.ext + (size_t)b * 6, sizeof ext, cudaMemcpyDeviceToHost));
  float lo[3], hi[3];
  cloud_span(ext, lo, hi);
  rc_voxel_keyer k = p->keyer;
  const int failed = rc_voxel_pcl_keyer(&k, lo, hi), a = failed < 0 ? 2 : failed;
  return rc_voxel_pcl_too_big(ctx, p, a, lo[a], hi[a]);
}

} // namespace

robocache_status rc_voxel_downsample_cuda(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t cap = p->out_points.shape[0];
  rc_voxel_call c;
  robocache_status s = rc_voxel_cuda_enter(ctx, p, &c);
  if (s != ROBOCACHE_OK) return s;
  extent x = {NULL};
  s = rc_voxel_cuda_end(ctx, p, &c, downsample(ctx, p, &c, &x));
  if (s != ROBOCACHE_OK || !c.checked) return s;
  if (c.read.pcl_too_big != 0) return pcl_message(ctx, p, x, ~c.read.pcl_too_big);
  if (p->stats->voxels_nonempty > cap)
    return rc_error(ctx, ROBOCACHE_CAPACITY_EXCEEDED,
                    "voxel_downsample: %lld non-empty voxels do not fit in out (capacity %lld)",
                    (long long)p->stats->voxels_nonempty, (long long)cap);
  return s;
}
