/* Wide path of the CUDA forward of align / resample: one stream, default
 * options, rows of >= RC_WIDE_MIN_SLOTS
 * full-width slots (docs/cuda.md, "Wide path"). A group of s.group threads
 * shares one target; each thread resolves it itself (the group reads the same
 * addresses: one access per distinct address) and moves s.rounds slots, sub,
 * sub + group, ..., all loads issued before the first store. Against the warp
 * path (align_warp_cuda.cu) it keeps more loads in flight per multiprocessor on wide rows,
 * and pays a search per thread instead of per target, so it is used only for
 * rows of several slots and launches of at most RC_WIDE_MAX_TARGETS targets
 * (measured: beyond that the repeated searches cost more than the loads in
 * flight gain, also on rows of 16 threads per target: H200, B256 S4096
 * T1024 D256 bf16 174.6 µs against 117.2 on the split path). */
#include "cuda/align_cuda.cuh"

namespace {

template <class In, class Out>
__global__ void __launch_bounds__(RC_WIDE_BLOCK, 4)
    rc_wide_kernel(const __grid_constant__ rc_align_args args) {
  typedef typename rc_compute<In, Out>::type C;
  constexpr int N = rc_vec_max<In, Out>(), RMAX = rc_wide_max_rounds(N);
  rc_pdl_enter();
  const rc_stream_desc &s = args.s[0]; /* fixed offsets: the K = 1 launch */
  /* < 2^31 threads (checked on the host): 32-bit index math */
  const uint32_t id = blockIdx.x * RC_WIDE_BLOCK + threadIdx.x, G = (uint32_t)s.group;
  const uint32_t target = rc_div(id, args.by_group), sub = id - target * G, T = (uint32_t)args.a.T;
  if (target < (uint64_t)args.a.B * T) {
    const uint32_t b = rc_div(target, args.by_T), t = target - b * T;
    const rc_target r = rc_decide_target<ROBOCACHE_DTYPE_I64, true>(args.a, s, args.k_base, b, t);
    if (sub == 0) rc_store_valid(args, b, t, args.k_base, r.valid);
    const rc_item e = rc_item_of(args, s, b, t, r);
    const In *vals = (const In *)s.values;
    Out *out = (Out *)args.out;
    const C w = (C)e.w;
    rc_vec<In, N> a[RMAX] = {}, c[RMAX] = {};
#pragma unroll
    for (int j = 0; j < RMAX; j++) {
      const int64_t ch = (int64_t)(sub + j * G) * N;
      if (j >= s.rounds || e.mode < CH_COPY) continue;
      a[j] = *(const rc_vec<In, N> *)(vals + e.v0 + ch);
      if (e.mode == CH_LERP) c[j] = *(const rc_vec<In, N> *)(vals + e.v1 + ch);
    }
#pragma unroll
    for (int j = 0; j < RMAX; j++) {
      if (j >= s.rounds) break;
      rc_vec<Out, N> o;
      rc_slot(e.mode, a[j], c[j], w, o);
      rc_st((rc_vec<Out, N> *)(out + e.out + (int64_t)(sub + j * G) * N), o);
    }
  }
  if (args.check_total)
    rc_check_data<ROBOCACHE_DTYPE_I64>(args.a, args.s, 1, args.k_base == 0, args.check_total);
}

} // namespace

robocache_status rc_launch_wide(robocache_ctx *ctx, const rc_align_args &args, int grid,
                                cudaStream_t stream, bool pdl, int32_t in_dtype,
                                int32_t out_dtype) {
  cudaError_t e = cudaSuccess;
  rc_with_dtype(in_dtype, [&](auto in) {
    rc_with_dtype(out_dtype, [&](auto out) {
      e = rc_cuda_launch(rc_wide_kernel<decltype(in), decltype(out)>, grid, RC_WIDE_BLOCK, stream,
                         pdl, args);
    });
  });
  return rc_cuda_check(ctx, e, "align kernel launch (wide rows)");
}
