/* Row path of the CUDA forward of align / resample: one stream, default
 * options, int64 ns times, more than
 * RC_WIDE_MAX_TARGETS targets, sm_90 and later, rows that are read nearly
 * whole (2 T >= S) and whose times, target times and values (contiguous
 * samples) fit RC_ROW_SMEM bytes of shared memory (docs/cuda.md, "Row
 * path"). One block per row, RC_ROW_BLOCKS_PER_SM resident per
 * multiprocessor: the three are copied to shared memory by bulk
 * asynchronous copies (cp.async.bulk, issued by one thread, all in flight
 * together: one round trip per row, no registers held for them); once the
 * times and target times have landed, one thread per target resolves it
 * there, its item (as the split path's) overwriting its target time, while
 * the values still land; then the block moves the channels from shared
 * memory, slot by slot. While one block of a multiprocessor works, the
 * copies of the others are in flight. 512 threads rather than 256, and the
 * search started before the values land: H100 bf16 B1024 S2000 T1000 D12
 * 42.1 -> 40.3 us (docs/cuda.md). */
#include "cuda/align_cuda.cuh"

#include <atomic>

namespace {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define RC_ROW_BLOCKS_PER_SM 1 /* not launched there; 3 x 512 threads exceed sm_75's 1,024 */
#else
#define RC_ROW_BLOCKS_PER_SM 3
#endif
/* 3 x (75 KB + the 1 KB the driver keeps per block) fit the 228 KB of an
 * sm_90 multiprocessor */
#define RC_ROW_SMEM (75 * 1024)

/* Shared memory for `bytes` of global memory staged by rc_stage_span_of:
 * 16-byte aligned, with room to keep the data's offset within 16 bytes. */
__host__ __device__ constexpr int64_t rc_row_region(int64_t bytes) {
  return (bytes + 31) & ~(int64_t)15;
}

/* Where the row path keeps a row: times [S] at 0, target times [T] at
 * `targets`, values [S, D] (row_bytes per sample) at `values`; `bytes` in
 * all. */
struct rc_row_layout {
  int64_t targets, values, bytes;
};

__host__ __device__ inline rc_row_layout rc_row_layout_of(int64_t S, int64_t T, int64_t row_bytes) {
  rc_row_layout l;
  l.targets = rc_row_region(S * 8);
  l.values = l.targets + rc_row_region(T * 8);
  l.bytes = l.values + rc_row_region(S * row_bytes);
  return l;
}

/* rc_found of target time x (lo as rc_search) in a row of n >= 1 int64 ns
 * times in shared memory, time(i) = t[i] + off: a bisection of a fixed
 * ceil(log2 n) steps, the same for every thread of the row (no divergence;
 * in shared memory one step costs less than rc_search's probe rounds, which
 * save round trips to global memory). Indices stay in [-1, n) whatever the
 * data. */
__device__ __forceinline__ rc_found<int64_t> rc_shared_search(const int64_t *t, int32_t n,
                                                              int64_t off, int64_t x) {
  const int64_t *base = t;
  for (int32_t len = n; len > 1;) {
    const int32_t half = len >> 1;
    base = base[half] + off <= x ? base + half : base;
    len -= half;
  }
  const int32_t lo = (int32_t)(base - t) - (base[0] + off <= x ? 0 : 1);
  return {lo, lo >= 0 ? t[lo] + off : 0, lo + 1 < n ? t[lo + 1] + off : 0};
}

/* n bytes at src staged into a region of shared memory: they start at `dst`
 * (src's offset within 16 bytes from the region's start), the 16-byte
 * aligned middle [head, head + mid) by one bulk copy, the elements before
 * and after it by the block's threads. */
struct rc_stage_span {
  const char *src;
  char *dst;
  uint32_t n, head, mid;
};

__device__ __forceinline__ rc_stage_span rc_stage_span_of(char *region, const void *src,
                                                          int64_t n) {
  const uintptr_t a = (uintptr_t)src, lo = (a + 15) & ~(uintptr_t)15,
                  hi = (a + (uintptr_t)n) & ~(uintptr_t)15;
  rc_stage_span r = {(const char *)src, region + (a & 15), (uint32_t)n, (uint32_t)n, 0};
  if (lo < hi) r.head = (uint32_t)(lo - a), r.mid = (uint32_t)(hi - lo);
  return r;
}

/* Row b's times, target times and values in shared memory at `base`. */
struct rc_row_stage {
  rc_stage_span times, targets, values;
};

template <class In>
__device__ __forceinline__ rc_row_stage rc_row_stage_of(const rc_align_args &args, char *base,
                                                        int64_t b) {
  const rc_stream_desc &s = args.s[0];
  const int64_t T = args.a.T, es = (int64_t)sizeof(In);
  const rc_row_layout l = rc_row_layout_of(s.S, T, s.D * es);
  return {
      rc_stage_span_of(base, (const int64_t *)s.times + b * s.ts_b, s.S * 8),
      rc_stage_span_of(base + l.targets, (const int64_t *)args.a.times + b * args.a.ts_b, T * 8),
      rc_stage_span_of(base + l.values, (const In *)s.values + b * s.vs_b, s.S * s.D * es)};
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t rc_smem_addr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
#endif

/* Thread 0: the mbarriers bar[0] (the times and target times) and bar[1]
 * (the values), one arrival each expecting the bytes of its spans' middles
 * (the fence makes them visible to the copies), then the bulk copies. */
__device__ __forceinline__ void rc_stage_issue(uint64_t *bar, const rc_row_stage &st) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t b0 = rc_smem_addr(bar), b1 = rc_smem_addr(bar + 1);
  const rc_stage_span *spans[3] = {&st.times, &st.targets, &st.values};
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b0));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b1));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b0),
               "r"(st.times.mid + st.targets.mid)
               : "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b1),
               "r"(st.values.mid)
               : "memory");
  for (const rc_stage_span *r : spans)
    if (r->mid)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                   "%2, [%3];" ::"r"(rc_smem_addr(r->dst + r->head)),
                   "l"(r->src + r->head), "r"(r->mid), "r"(r == &st.values ? b1 : b0)
                   : "memory");
#endif
}

/* Waits until the bulk copies completing on `bar` have landed. */
__device__ __forceinline__ void rc_stage_wait(uint64_t *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(rc_smem_addr(bar))
                 : "memory");
#else
  (void)bar;
  __trap(); /* the host launches the row path on sm_90 and later only */
#endif
}

/* The block's threads: the elements (ES bytes) of span r outside its
 * middle (none where the row starts and ends 16-byte aligned). */
template <int ES> __device__ __forceinline__ void rc_stage_edges(const rc_stage_span &r) {
  typedef typename std::conditional<
      ES == 8, uint64_t, typename std::conditional<ES == 4, uint32_t, uint16_t>::type>::type E;
  const uint32_t edge = r.n - r.mid; /* the head, then the tail after the middle */
  for (uint32_t i = threadIdx.x * ES; i < edge; i += RC_ROW_BLOCK * ES) {
    const uint32_t at = i < r.head ? i : i + r.mid;
    *(E *)(r.dst + at) = *(const E *)(r.src + at);
  }
}

template <class In, class Out, int N>
__global__ void __launch_bounds__(RC_ROW_BLOCK, RC_ROW_BLOCKS_PER_SM)
    rc_row_kernel(const __grid_constant__ rc_align_args args) {
  extern __shared__ __align__(16) char smem[];
  __shared__ uint64_t bar[2];
  const rc_stream_desc &s = args.s[0];
  const int64_t b = blockIdx.x, T = args.a.T;
  rc_pdl_enter();
  if (b < args.a.B) { /* the data checks may take more blocks */
    const rc_row_stage st = rc_row_stage_of<In>(args, smem, b);
    if (threadIdx.x == 0) rc_stage_issue(bar, st);
    const int64_t n = rc_row_length(s, b), nt = rc_target_count(args.a, b);
    rc_stage_edges<8>(st.times);
    rc_stage_edges<8>(st.targets);
    rc_stage_edges<sizeof(In)>(st.values);
    __syncthreads();
    rc_stage_wait(bar);
    const int64_t *times = (const int64_t *)st.times.dst, *x = (const int64_t *)st.targets.dst;
    rc_split_item *items = (rc_split_item *)st.targets.dst; /* item t replaces time t */
    for (int64_t t = threadIdx.x; t < T; t += RC_ROW_BLOCK) {
      const int64_t xt = t < nt ? x[t] : 0;
      const rc_target r = rc_decide_simple(n, nt, t, xt, [&] {
        return rc_shared_search(times, (int32_t)n, s.opt.time_offset_ns, xt);
      });
      items[t] = rc_split_item_of(args, s, b, t, r);
    }
    rc_stage_wait(bar + 1);
    __syncthreads();
    /* thread (t0, sub) moves slot sub of targets t0, t0 + per, ... (G slots
     * per target, at most RC_ROW_BLOCK: rc_path_plan) */
    const uint32_t G = (uint32_t)s.group, per = RC_ROW_BLOCK / G, t0 = threadIdx.x / G,
                   sub = threadIdx.x - t0 * G;
    const In *vals = (const In *)st.values.dst + sub * N;
    Out *out = (Out *)args.out + b * args.os_b + t0 * args.os_t + (int64_t)sub * N * args.os_d;
    const int32_t d = (int32_t)s.D; /* a row's values fit in shared memory */
    for (uint32_t t = t0; t < (uint32_t)T && t0 < per; t += per, out += per * args.os_t) {
      const rc_split_item it = items[t];
      const int mode = it.i0 < 0 ? CH_CONST : it.w == 0.0f ? CH_COPY : CH_LERP;
      rc_vec<In, N> a = {}, c = {};
      if (mode != CH_CONST) {
        const In *v = vals + it.i0 * d;
        a = *(const rc_vec<In, N> *)v;
        c = mode == CH_LERP ? *(const rc_vec<In, N> *)(v + d) : a;
      }
      rc_vec<Out, N> y;
      rc_slot(mode, a, c, it.w, y);
      rc_st((rc_vec<Out, N> *)out, y);
    }
  }
  if (args.check_total)
    rc_check_data<ROBOCACHE_DTYPE_I64>(args.a, args.s, 1, args.k_base == 0, args.check_total);
}

/* Calls f(rc_row_kernel<In, Out, N>) for values / out dtypes in_dtype /
 * out_dtype (not f64) and N channels per slot (rc_vec_max, or a half or a
 * quarter of it, or 1); nothing for f64, which rc_path_plan keeps off the
 * row path. */
template <class F> void rc_with_row_kernel(int32_t in_dtype, int32_t out_dtype, int vec, F &&f) {
  rc_with_dtype(in_dtype, [&](auto in) {
    rc_with_dtype(out_dtype, [&](auto out) {
      typedef decltype(in) In;
      typedef decltype(out) Out;
      if constexpr (sizeof(In) < 8 && sizeof(Out) < 8)
        rc_with_vec<In, Out>(vec, [&](auto n) { f(rc_row_kernel<In, Out, n()>); });
    });
  });
}

/* Devices (bit d) whose row kernels may use RC_ROW_SMEM bytes of shared
 * memory (rc_row_prepare). */
std::atomic<uint64_t> rc_row_ready{0};

} // namespace

/* Bytes of shared memory of the row path for stream sv of p. */
int64_t rc_row_smem(const rc_align_problem *p, const rc_stream_view *sv) {
  const int64_t es = (int64_t)robocache_dtype_size((robocache_dtype)sv->values.dtype);
  return rc_row_layout_of(sv->S, p->T, sv->D * es).bytes;
}

/* *ok = true when the row kernels may use RC_ROW_SMEM bytes of shared memory
 * on `device` (the current device): the first call for a device sets the
 * kernels' attributes, with the thread in relaxed capture mode, so that a
 * call being captured into a CUDA graph (a cold capture), or one made while
 * another thread captures, may set them too. */
robocache_status rc_row_prepare(robocache_ctx *ctx, int device, bool *ok) {
  const uint64_t bit = device >= 0 && device < 64 ? (uint64_t)1 << device : 0;
  *ok = bit && (rc_row_ready.load() & bit);
  if (*ok || !bit) return ROBOCACHE_OK;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaError_t e = cudaThreadExchangeStreamCaptureMode(&mode);
  if (e != cudaSuccess) return rc_cuda_check(ctx, e, "entering relaxed capture mode");
  static const int32_t dtypes[] = {ROBOCACHE_DTYPE_F32, ROBOCACHE_DTYPE_F16, ROBOCACHE_DTYPE_BF16};
  for (int32_t in : dtypes)
    for (int32_t out : dtypes)
      for (int vec = 8; vec >= 1; vec /= 2)
        rc_with_row_kernel(in, out, vec, [&](auto kernel) {
          if (e == cudaSuccess)
            e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     RC_ROW_SMEM);
          if (e == cudaSuccess)
            e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     cudaSharedmemCarveoutMaxShared);
        });
  cudaError_t restored = cudaThreadExchangeStreamCaptureMode(&mode);
  robocache_status s = rc_cuda_check(ctx, e, "setting the shared memory of the row path's kernels");
  if (s == ROBOCACHE_OK) s = rc_cuda_check(ctx, restored, "restoring the thread's capture mode");
  if (s == ROBOCACHE_OK) {
    rc_row_ready.fetch_or(bit);
    *ok = true;
  }
  return s;
}

/* The row kernel with `smem` bytes of dynamic shared memory (rc_row_smem). */
robocache_status rc_launch_row(robocache_ctx *ctx, const rc_align_args &args, int grid, size_t smem,
                               cudaStream_t stream, bool pdl, int32_t in_dtype, int32_t out_dtype) {
  cudaError_t e = cudaSuccess;
  rc_with_row_kernel(in_dtype, out_dtype, args.s[0].vec, [&](auto kernel) {
    e = rc_cuda_launch_smem(kernel, grid, RC_ROW_BLOCK, smem, stream, pdl, args);
  });
  return rc_cuda_check(ctx, e, "align kernel launch (row path)");
}

/* The row path's conditions on the data of stream sv of p (rc_path_plan):
 * rows read nearly whole (2 T >= S), contiguous times, target times and
 * samples, and at most RC_ROW_SMEM bytes of shared memory per row. */
bool rc_row_fits(const rc_align_problem *p, const rc_stream_view *sv) {
  const bool contiguous =
      (sv->S == 1 || sv->times.strides[1] == 1) && (p->T == 1 || p->target_times.strides[1] == 1) &&
      (sv->D == 1 || sv->values.strides[2] == 1) && (sv->S == 1 || sv->values.strides[1] == sv->D);
  return 2 * p->T >= sv->S && contiguous && rc_row_smem(p, sv) <= RC_ROW_SMEM;
}
