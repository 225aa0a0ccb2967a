/* Warp path of the CUDA forward of align / resample (align_cuda.cu: every
 * launch that the wide, split and row paths do not take, among them every
 * launch of several streams): the blocks of stream k are [block_begin_k,
 * block_begin_{k+1}); in each warp the first 2^log_targets lanes (1..32,
 * chosen so that the grid fills the device) resolve one target (b, t) each
 * (search and decision of src/common/interp.h, rc_decide_target) into shared
 * memory; then the warp moves the channels of those targets together: slots
 * of `vec` channels (one 16-, 8- or 4-byte access when the strides and
 * alignment allow), RC_UNROLL slots per lane loaded before the first store,
 * stores coalesced along each target's channels. Arithmetic in f32 (f64 when
 * values or out are f64). */
#include "cuda/align_cuda.cuh"

namespace {

#define RC_UNROLL 4 /* items (target, slot) per lane in flight, 4-wide slots */

/* The warp's targets (2^log_targets), slot by slot: lane l takes slots
 * l % G, l % G + G, ... of targets l / G, l / G + 32 / G, ... (G =
 * 2^log_group, a power of two >= the stream's slots, at most 32); a slot is N
 * channels moved with one access (N > 1: contiguous and aligned, checked on
 * the host). RC_UNROLL items are loaded before the first is stored. */
template <class In, class Out, int N>
__device__ __forceinline__ void rc_move(const rc_stream_desc &s, const rc_item *items, Out *out,
                                        int64_t os_d) {
  typedef typename rc_compute<In, Out>::type C;
  const In *vals = (const In *)s.values;
  int lane = threadIdx.x & 31, lg = s.log_group, lr = s.log_rounds;
  int sub = lane & ((1 << lg) - 1), jbase = lane >> lg, per_round = 32 >> lg;
  int64_t slots = s.D / N, vs_d = s.vs_d;
  int total = 1 << (s.log_targets - (5 - lg) + lr);
  /* 8-wide (16-bit) slots: half as many in flight keeps the registers (and
   * so the occupancy) of the other paths */
  constexpr int U = N >= 8 ? RC_UNROLL / 2 : RC_UNROLL;
  for (int m0 = 0; m0 < total; m0 += U) {
    rc_vec<In, N> a[U] = {}, c[U] = {};
    int64_t at[U];
    int mode[U];
    C w[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      int m = m0 + u, j = (m >> lr) * per_round + jbase;
      int64_t slot = sub + ((int64_t)(m & ((1 << lr) - 1)) << lg);
      const rc_item &e = items[j < 32 ? j : 0];
      mode[u] = m < total && slot < slots ? e.mode : CH_NONE;
      w[u] = (C)e.w;
      at[u] = e.out + slot * N * os_d;
      if (mode[u] >= CH_COPY) {
        const In *p0 = vals + e.v0 + slot * N * vs_d, *p1 = vals + e.v1 + slot * N * vs_d;
        if (N > 1) {
          a[u] = *(const rc_vec<In, N> *)p0;
          if (mode[u] == CH_LERP) c[u] = *(const rc_vec<In, N> *)p1;
        } else {
          a[u].e[0] = *p0;
          if (mode[u] == CH_LERP) c[u].e[0] = *p1;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (mode[u] == CH_NONE) continue;
      rc_vec<Out, N> o;
      rc_slot(mode[u], a[u], c[u], w[u], o);
      if (N > 1)
        rc_st((rc_vec<Out, N> *)(out + at[u]), o);
      else
        out[at[u]] = o.e[0];
    }
  }
}

/* As rc_move for a slerp stream: a slot is one quaternion (4 channels, any
 * strides). */
template <class In, class Out>
__device__ __forceinline__ void rc_move_quaternions(const rc_stream_desc &s, const rc_item *items,
                                                    Out *out, int64_t os_d) {
  typedef typename rc_compute<In, Out>::type C;
  const In *vals = (const In *)s.values;
  int lane = threadIdx.x & 31, lg = s.log_group, lr = s.log_rounds;
  int sub = lane & ((1 << lg) - 1), jbase = lane >> lg, per_round = 32 >> lg;
  int64_t quats = s.D / 4, vs_d = s.vs_d;
  for (int m = 0; m < 1 << (s.log_targets - (5 - lg) + lr); m++) {
    const rc_item &e = items[(m >> lr) * per_round + jbase];
    int64_t q = sub + ((int64_t)(m & ((1 << lr) - 1)) << lg);
    if (q >= quats || e.mode == CH_NONE) continue;
    C a[4], b[4], r[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
      a[i] = e.mode >= CH_COPY ? to_c<C>(vals[e.v0 + (4 * q + i) * vs_d]) : (C)e.w;
      b[i] = e.mode == CH_SLERP ? to_c<C>(vals[e.v1 + (4 * q + i) * vs_d]) : a[i];
    }
    if (e.mode == CH_SLERP)
      slerp_c(a, b, (C)e.w, r);
    else
      for (int i = 0; i < 4; i++) r[i] = a[i];
#pragma unroll
    for (int i = 0; i < 4; i++) from_c(r[i], out[e.out + (4 * q + i) * os_d]);
  }
}

template <class In, class Out>
__device__ __forceinline__ void rc_move_stream(const rc_stream_desc &s, const rc_item *items,
                                               Out *out, int64_t os_d) {
  if (s.opt.method == ROBOCACHE_SLERP)
    rc_move_quaternions<In, Out>(s, items, out, os_d);
  else
    rc_with_vec<In, Out>(s.vec, [&](auto n) { rc_move<In, Out, n()>(s, items, out, os_d); });
}

/* ONE: a launch of one stream with the default options (rc_is_simple) and
 * int64 ns times: its descriptor is read at fixed offsets instead of through
 * a runtime index into the launch's array, and the decision's code for the
 * other options is left out (H200: 2-3 % on the launches with many
 * targets). 8 blocks per multiprocessor (64 registers, a few bytes
 * spilled), so that align B256's 1,000 blocks fit in one wave (measured:
 * docs/cuda.md). */
template <int TIME_DTYPE, class Out, bool ONE>
__global__ void __launch_bounds__(RC_CUDA_BLOCK, 8)
    rc_align_kernel(const __grid_constant__ rc_align_args args) {
  __shared__ rc_item items[RC_CUDA_BLOCK];
  rc_pdl_enter();
  int k = 0;
  while (!ONE && k + 1 < args.K && (int)blockIdx.x >= args.s[k + 1].block_begin) k++;
  const rc_stream_desc &s = ONE ? args.s[0] : args.s[k];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64_t first = ((int64_t)blockIdx.x - s.block_begin) * (RC_CUDA_BLOCK / 32) + warp;
  int64_t target = (first << s.log_targets) + lane;
  rc_item e = {};
  if (lane < 1 << s.log_targets && target < args.a.B * args.a.T) {
    int64_t b = target / args.a.T, t = target - b * args.a.T;
    rc_target r = rc_decide_target<TIME_DTYPE, ONE>(args.a, s, args.k_base + k, b, t);
    e = rc_item_of(args, s, b, t, r);
    rc_store_valid(args, b, t, args.k_base + k, r.valid);
  }
  items[threadIdx.x] = e;
  __syncwarp();
  const rc_item *warp_items = items + warp * 32;
  Out *out = (Out *)args.out;
  switch (s.dtype) {
  case ROBOCACHE_DTYPE_F32: rc_move_stream<float, Out>(s, warp_items, out, args.os_d); break;
  case ROBOCACHE_DTYPE_F64: rc_move_stream<double, Out>(s, warp_items, out, args.os_d); break;
  case ROBOCACHE_DTYPE_F16: rc_move_stream<f16s, Out>(s, warp_items, out, args.os_d); break;
  default: rc_move_stream<bf16s, Out>(s, warp_items, out, args.os_d); break;
  }
  if (args.check_total)
    rc_check_data<TIME_DTYPE>(args.a, args.s, args.K, args.k_base == 0, args.check_total);
}

template <int TIME_DTYPE, bool ONE>
robocache_status rc_launch_time(robocache_ctx *ctx, const rc_align_args &args, int grid,
                                cudaStream_t stream, bool pdl, int32_t out_dtype) {
  cudaError_t e = cudaSuccess;
  rc_with_dtype(out_dtype, [&](auto out) {
    e = rc_cuda_launch(rc_align_kernel<TIME_DTYPE, decltype(out), ONE>, grid, RC_CUDA_BLOCK, stream,
                       pdl, args);
  });
  return rc_cuda_check(ctx, e, "align kernel launch");
}
} // namespace

/* The warp path's kernel for the call's times (time_dtype) and out dtype;
 * `one`: a launch of one stream with the default options and int64 ns times
 * (rc_align_kernel's ONE). */
robocache_status rc_launch_warp(robocache_ctx *ctx, const rc_align_args &args, int grid,
                                cudaStream_t stream, bool pdl, int32_t time_dtype, bool one,
                                int32_t out_dtype) {
  switch (time_dtype) {
  case ROBOCACHE_DTYPE_I64:
    if (one)
      return rc_launch_time<ROBOCACHE_DTYPE_I64, true>(ctx, args, grid, stream, pdl, out_dtype);
    return rc_launch_time<ROBOCACHE_DTYPE_I64, false>(ctx, args, grid, stream, pdl, out_dtype);
  case ROBOCACHE_DTYPE_F64:
    return rc_launch_time<ROBOCACHE_DTYPE_F64, false>(ctx, args, grid, stream, pdl, out_dtype);
  default:
    return rc_launch_time<ROBOCACHE_DTYPE_F32, false>(ctx, args, grid, stream, pdl, out_dtype);
  }
}
