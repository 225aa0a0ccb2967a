/* The sort / segment pipeline of the CUDA downsample (voxel_cuda.cuh) and the
 * setup / end of every CUDA voxelize call. */
#include "cuda/voxel_cuda.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <string.h>

namespace {

/* Float <-> unsigned int with the order of the floats (for atomicMin/Max). */
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

/* Step 1, one block: the counters' initial state (zero), then the offsets'
 * checks. */
__global__ void prep_kernel(rc_voxel_src s, rc_voxel_counters *counters) {
  if (threadIdx.x == 0) *counters = rc_voxel_counters{};
  __syncthreads();
  rc_voxel_check_offsets(s, counters);
}

/* PCL grid: per-cloud minimum and maximum of the finite points; block
 * (cloud b, chunk y) strides over the cloud's rows. */
__global__ void extent_init_kernel(unsigned int *extent, int B) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < B * 6) extent[i] = i % 6 < 3 ? 0xffffffffu : 0u;
}

__global__ void extent_kernel(rc_voxel_src s, unsigned int *extent) {
  const int b = blockIdx.x;
  unsigned int lo[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, hi[3] = {0, 0, 0};
  for (int64_t i = rc_voxel_off(s, b) + blockIdx.y * blockDim.x + threadIdx.x;
       i < rc_voxel_off(s, b + 1); i += (int64_t)gridDim.y * blockDim.x) {
    float p[3] = {rc_vpt(s, i, 0), rc_vpt(s, i, 1), rc_vpt(s, i, 2)};
    if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))) continue;
    for (int a = 0; a < 3; a++) {
      unsigned int u = ordered_of(p[a]);
      lo[a] = u < lo[a] ? u : lo[a];
      hi[a] = u > hi[a] ? u : hi[a];
    }
  }
  for (int a = 0; a < 3; a++) {
    for (int o = 16; o > 0; o /= 2) {
      unsigned int l = __shfl_down_sync(0xffffffffu, lo[a], o);
      unsigned int h = __shfl_down_sync(0xffffffffu, hi[a], o);
      lo[a] = l < lo[a] ? l : lo[a];
      hi[a] = h > hi[a] ? h : hi[a];
    }
    if ((threadIdx.x & 31) == 0) {
      atomicMin(&extent[b * 6 + a], lo[a]);
      atomicMax(&extent[b * 6 + 3 + a], hi[a]);
    }
  }
}

/* The per-cloud PCL keyer, as rc_voxel_cloud_keyer (src/ops/voxel_host.c). */
__global__ void keyer_kernel(rc_voxel_keyer base, const unsigned int *extent, int B,
                             rc_voxel_keyer *keyers, rc_voxel_counters *counters) {
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= B) return;
  rc_voxel_keyer k = base;
  double total = 1.0;
  const double limit = 4611686018427387904.0; /* 2^62 */
  for (int a = 0; a < 3; a++) {
    float lo = float_of(extent[b * 6 + a]), hi = float_of(extent[b * 6 + 3 + a]);
    if (extent[b * 6 + a] > extent[b * 6 + 3 + a]) { /* no finite point */
      k.lo[a] = 0.0f;
      k.grid[a] = 1;
      continue;
    }
    float minb = rc_floorf(lo * k.inv_leaf[a]), maxb = rc_floorf(hi * k.inv_leaf[a]);
    double extent_a = (double)(maxb - minb) + 1.0;
    total *= extent_a;
    if (fabs((double)minb) >= limit || fabs((double)maxb) >= limit || total > limit) {
      atomicMax(&counters->pcl_too_big, ~(unsigned int)b); /* the first such cloud */
      k.grid[a] = 1;
      continue;
    }
    k.lo[a] = minb;
    k.grid[a] = (int64_t)extent_a;
  }
  keyers[b] = k;
}

/* Step 2: cloud, class and key of every point. */
template <class K>
__global__ void keys_kernel(rc_voxel_src s, K sentinel, int *cloud, K *keys, int *idx,
                            rc_voxel_counters *counters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int nonfinite = 0, range = 0;
  if (i < s.N) {
    const int b = rc_voxel_cloud_of(s, i);
    /* a copy in registers: a pointer to the parameter would copy it to local memory */
    const rc_voxel_keyer k = s.keyers ? s.keyers[b] : s.keyer;
    int64_t ijk[3], key = 0;
    int cls = rc_voxel_locate(&k, rc_vpt(s, i, 0), rc_vpt(s, i, 1), rc_vpt(s, i, 2), ijk, &key);
    nonfinite = cls == RC_VOXEL_NONFINITE;
    range = cls == RC_VOXEL_RANGE;
    cloud[i] = b;
    idx[i] = i;
    keys[i] = cls == RC_VOXEL_IN ? (K)key : sentinel;
  }
  rc_voxel_block_add(&counters->nonfinite, nonfinite);
  rc_voxel_block_add(&counters->range, range);
}

/* Step 4: segment heads of the sorted keys, and (step 5) first[i] = 1 when
 * point i starts its segment, else 0 (idx is a permutation of 0..N-1, so
 * every first[i] is written), and first[N] = 0. */
template <class K>
__global__ void heads_kernel(const K *keys, const int *idx, const int *cloud, int N, K sentinel,
                             unsigned char *flags, int *first) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= N) return;
  const K k = keys[j];
  const int head =
      k != sentinel && (j == 0 || k != keys[j - 1] || cloud[idx[j]] != cloud[idx[j - 1]]);
  flags[j] = (unsigned char)head;
  first[idx[j]] = head;
  if (j == 0) first[N] = 0;
}

/* CUB temporary storage for n items (the largest of the three steps). */
template <class K> robocache_status temp_size(robocache_ctx *ctx, int n, size_t *bytes) {
  size_t a = 0, b = 0, c = 0;
  RC_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(NULL, a, (K *)NULL, (K *)NULL, (int *)NULL,
                                                   (int *)NULL, n));
  RC_CUDA_TRY(ctx, cub::DeviceSelect::Flagged(NULL, b, thrust::counting_iterator<int>(0),
                                              (unsigned char *)NULL, (int *)NULL, (int *)NULL, n));
  RC_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(NULL, c, (int *)NULL, (int *)NULL, n + 1));
  *bytes = a > b ? a : b;
  *bytes = c > *bytes ? c : *bytes;
  return ROBOCACHE_OK;
}

/* Steps 2-5 with keys of type K. */
template <class K> robocache_status run_pipeline(robocache_ctx *ctx, rc_voxel_call *c) {
  rc_voxel_pipeline &pl = c->pl;
  const int N = c->src.N;
  const K sentinel = (K)pl.sentinel;
  cudaError_t e =
      rc_cuda_launch(keys_kernel<K>, rc_voxel_blocks(N), RC_VOXEL_THREADS, c->stream, false, c->src,
                     sentinel, pl.cloud, (K *)pl.keys, pl.idx, c->counters);
  if (e != cudaSuccess) return rc_cuda_error(ctx, e, "voxelize keys kernel");
  if (N == 0) { /* no segments (counters are zero); rank[0] = 0 */
    RC_CUDA_TRY(ctx, cudaMemsetAsync(pl.rank, 0, sizeof(int), c->stream));
    return ROBOCACHE_OK;
  }
  size_t bytes = pl.temp_bytes;
  RC_CUDA_TRY(ctx,
              cub::DeviceRadixSort::SortPairs(pl.temp, bytes, (K *)pl.keys, (K *)pl.keys_out,
                                              pl.idx, pl.idx_out, N, 0, pl.key_bits, c->stream));
  e = rc_cuda_launch(heads_kernel<K>, rc_voxel_blocks(N), RC_VOXEL_THREADS, c->stream, false,
                     (const K *)pl.keys_out, pl.idx_out, pl.cloud, N, sentinel, pl.flags, pl.first);
  if (e != cudaSuccess) return rc_cuda_error(ctx, e, "voxelize segment heads kernel");
  bytes = pl.temp_bytes;
  RC_CUDA_TRY(ctx, cub::DeviceSelect::Flagged(pl.temp, bytes, thrust::counting_iterator<int>(0),
                                              pl.flags, pl.seg_start, &c->counters->num_segments, N,
                                              c->stream));
  bytes = pl.temp_bytes;
  RC_CUDA_TRY(ctx,
              cub::DeviceScan::ExclusiveSum(pl.temp, bytes, pl.first, pl.rank, N + 1, c->stream));
  return ROBOCACHE_OK;
}

/* Number of bits of x (0 for 0). */
int bit_length(uint64_t x) {
  int n = 0;
  while (x) n++, x >>= 1;
  return n;
}

/* Workspace layout of the call (rc_voxel_scratch). */
void carve(rc_voxel_call *c, rc_carver &k) {
  rc_voxel_pipeline &pl = c->pl;
  const size_t N = (size_t)c->src.N, B = (size_t)c->src.B;
  c->counters = (rc_voxel_counters *)k.take(sizeof(rc_voxel_counters));
  if (c->src.keyer.pcl) {
    pl.keyers = (rc_voxel_keyer *)k.take(B * sizeof(rc_voxel_keyer));
    pl.extent = (unsigned int *)k.take(B * 6 * sizeof(unsigned int));
  }
  pl.cloud = (int *)k.take(N * sizeof(int));
  pl.keys = k.take(N * (size_t)pl.key_bytes);
  pl.keys_out = k.take(N * (size_t)pl.key_bytes);
  pl.idx = (int *)k.take(N * sizeof(int));
  pl.idx_out = (int *)k.take(N * sizeof(int));
  pl.flags = (unsigned char *)k.take(N);
  pl.seg_start = (int *)k.take(N * sizeof(int));
  pl.first = (int *)k.take((N + 1) * sizeof(int));
  pl.rank = (int *)k.take((N + 1) * sizeof(int));
  pl.temp = k.take(pl.temp_bytes);
}

/* The INVALID_ARGUMENT message of the CPU path for offsets that failed the
 * device check (read back to the host). */
robocache_status offsets_message(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t n = p->B + 1, st = p->offsets.strides[0];
  int64_t *h = (int64_t *)malloc((size_t)n * sizeof *h);
  if (!h) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cuda): out of memory");
  cudaError_t e = cudaMemcpy2D(h, sizeof *h, p->offsets.data, (size_t)st * sizeof *h, sizeof *h,
                               (size_t)n, cudaMemcpyDeviceToHost);
  robocache_status s;
  if (e != cudaSuccess) {
    s = rc_cuda_error(ctx, e, "reading offsets back");
  } else if (h[0] != 0) {
    s = rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "offsets[0] must be 0, got %lld",
                 (long long)h[0]);
  } else {
    s = ROBOCACHE_INTERNAL;
    for (int64_t b = 0; b < p->B && s == ROBOCACHE_INTERNAL; b++)
      if (h[b + 1] < h[b])
        s = rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                     "offsets decrease: offsets[%lld] = %lld > offsets[%lld] = %lld", (long long)b,
                     (long long)h[b], (long long)(b + 1), (long long)h[b + 1]);
    if (s == ROBOCACHE_INTERNAL)
      s = rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                   "offsets[B] = %lld must equal the number of points N = %lld", (long long)h[p->B],
                   (long long)p->N);
  }
  free(h);
  return s;
}

/* The message of rc_voxel_cloud_keyer for cloud b, from its extent. */
robocache_status pcl_message(robocache_ctx *ctx, const rc_voxel_problem *p, const rc_voxel_call *c,
                             unsigned int b) {
  unsigned int ext[6];
  RC_CUDA_TRY(ctx,
              cudaMemcpy(ext, c->pl.extent + (size_t)b * 6, sizeof ext, cudaMemcpyDeviceToHost));
  double total = 1.0;
  int axis = 2;
  for (int a = 0; a < 3; a++) {
    float minb = rc_floorf(float_of(ext[a]) * p->keyer.inv_leaf[a]);
    float maxb = rc_floorf(float_of(ext[3 + a]) * p->keyer.inv_leaf[a]);
    total *= (double)(maxb - minb) + 1.0;
    if (fabs((double)minb) >= 4611686018427387904.0 ||
        fabs((double)maxb) >= 4611686018427387904.0 || total > 4611686018427387904.0) {
      axis = a;
      break;
    }
  }
  return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                  "voxel_downsample: leaf size %g on axis %d is too small for the cloud's "
                  "extent [%g, %g] (more than 2^62 voxels)",
                  (double)p->voxel_size[axis], axis, (double)float_of(ext[axis]),
                  (double)float_of(ext[3 + axis]));
}

/* Launches steps 1-5. */
robocache_status launch(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c) {
  rc_voxel_pipeline &pl = c->pl;
  const int B = c->src.B;
  const char *what = "voxelize offsets kernel";
  cudaError_t e =
      rc_cuda_launch(prep_kernel, 1, RC_VOXEL_THREADS, c->stream, false, c->src, c->counters);
  if (e == cudaSuccess && p->keyer.pcl) {
    what = "voxel_downsample extent kernels";
    e = rc_cuda_launch(extent_init_kernel, rc_voxel_blocks(6 * (int64_t)B), RC_VOXEL_THREADS,
                       c->stream, false, pl.extent, B);
    if (e == cudaSuccess && B > 0)
      e = rc_cuda_launch(extent_kernel, dim3((unsigned int)B, 32), RC_VOXEL_THREADS, c->stream,
                         false, c->src, pl.extent);
    if (e == cudaSuccess)
      e = rc_cuda_launch(keyer_kernel, rc_voxel_blocks(B), RC_VOXEL_THREADS, c->stream, false,
                         p->keyer, pl.extent, B, pl.keyers, c->counters);
  }
  if (e != cudaSuccess) return rc_cuda_error(ctx, e, what);
  return pl.key_bytes == 4 ? run_pipeline<uint32_t>(ctx, c)
                           : run_pipeline<unsigned long long>(ctx, c);
}

} // namespace

robocache_status rc_voxel_cuda_enter(robocache_ctx *ctx, const rc_voxel_problem *p,
                                     rc_voxel_call *c) {
  memset(c, 0, sizeof *c);
  if (p->N > INT32_MAX - 1)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "points: the CUDA backend takes at most 2^31-2 points per call, got N = %lld",
                    (long long)p->N);
  if (p->B > INT32_MAX - 1)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT, "offsets: too many clouds (%lld)",
                    (long long)p->B);
  c->stream = rc_cuda_stream(ctx);
  rc_voxel_src &src = c->src;
  src.pts = (const float *)p->points.data;
  src.s0 = p->points.strides[0];
  src.s1 = p->points.strides[1];
  src.N = (int)p->N;
  src.B = (int)p->B;
  src.off = p->has_offsets ? (const int64_t *)p->offsets.data : NULL;
  src.off_stride = p->has_offsets ? p->offsets.strides[0] : 0;
  src.keyer = p->keyer;
  robocache_status s = rc_cuda_device_enter(ctx, p->points.device_id, &c->guard);
  if (s != ROBOCACHE_OK) return s;
  s = rc_cuda_pdl(ctx, p->points.device_id, &c->pdl);
  if (s == ROBOCACHE_OK) s = rc_cuda_sync_checks(ctx, c->stream, &c->checked);
  if (s != ROBOCACHE_OK) rc_cuda_device_restore(&c->guard);
  return s;
}

robocache_status rc_voxel_cuda_begin(robocache_ctx *ctx, const rc_voxel_problem *p,
                                     rc_voxel_call *c) {
  robocache_status s = rc_voxel_cuda_enter(ctx, p, c);
  if (s != ROBOCACHE_OK) return s;
  rc_voxel_pipeline &pl = c->pl;
  if (p->keyer.pcl) {
    pl.key_bytes = 8;
    pl.sentinel = (uint64_t)1 << 62;
    pl.key_bits = 63;
  } else {
    uint64_t G = (uint64_t)(p->keyer.grid[0] * p->keyer.grid[1] * p->keyer.grid[2]);
    pl.sentinel = G;
    pl.key_bits = bit_length(G);
    pl.key_bytes = G < 0xffffffffull ? 4 : 8;
  }
  s = pl.key_bytes == 4 ? temp_size<uint32_t>(ctx, c->src.N, &pl.temp_bytes)
                        : temp_size<unsigned long long>(ctx, c->src.N, &pl.temp_bytes);
  if (s == ROBOCACHE_OK)
    s = rc_voxel_scratch(ctx, p->points.device_id, [&](rc_carver &k) { carve(c, k); });
  if (s == ROBOCACHE_OK) {
    c->src.keyers = p->keyer.pcl ? pl.keyers : NULL;
    s = launch(ctx, p, c);
  }
  if (s != ROBOCACHE_OK) rc_cuda_device_restore(&c->guard);
  return s;
}

static_assert(sizeof(rc_voxel_counters) <= RC_CUDA_READBACK_BYTES, "read back in one piece");

robocache_status rc_voxel_cuda_end(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c,
                                   robocache_status status, int nonempty_counter) {
  robocache_voxel_stats *st = p->stats;
  if (status == ROBOCACHE_OK && !c->checked) {
    /* the counters stay on the device: only points_in is known; a call that
     * took scratch from the workspace took its counters there (dense COUNT /
     * OCCUPANCY / MAX unchecked take none: no event to record) */
    if (c->counters) status = rc_cuda_workspace_async(ctx, c->stream);
    st->points_in = p->N;
    st->points_in_range = st->points_dropped_range = st->points_dropped_nonfinite = -1;
    st->voxels_nonempty = st->points_dropped_max_points = -1;
    st->voxels_dropped_max_voxels = st->points_dropped_max_voxels = -1;
  } else if (status == ROBOCACHE_OK) {
    rc_voxel_counters h;
    cudaError_t e = rc_cuda_read_back(ctx, &h, c->counters, sizeof h, c->stream);
    if (e != cudaSuccess) {
      status = rc_cuda_error(ctx, e, "reading the voxelize counters back");
    } else {
      st->points_in = p->N;
      st->points_dropped_nonfinite = (int64_t)h.nonfinite;
      st->points_dropped_range = (int64_t)h.range;
      st->points_in_range = p->N - (int64_t)(h.nonfinite + h.range);
      st->voxels_nonempty = nonempty_counter ? (int64_t)h.nonempty : (int64_t)h.num_segments;
      st->points_dropped_max_points = (int64_t)h.dropped_max_points;
      st->voxels_dropped_max_voxels = (int64_t)h.dropped_voxels;
      st->points_dropped_max_voxels = (int64_t)h.dropped_voxel_points;
      if (h.bad_offsets)
        status = offsets_message(ctx, p);
      else if (h.pcl_too_big != 0)
        status = pcl_message(ctx, p, c, ~h.pcl_too_big);
    }
  }
  rc_cuda_device_restore(&c->guard);
  return status;
}
