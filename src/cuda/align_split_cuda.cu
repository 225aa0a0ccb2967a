/* Split path of the CUDA forward of align / resample: one stream, default
 * options, more than
 * RC_WIDE_MAX_TARGETS targets (docs/cuda.md, "Split path"). One thread per
 * target resolves it into the call's scratch (rc_split_item, 8 bytes); a
 * second kernel moves the channels, one slot per thread, reading the item
 * instead of searching. Two kernels that each do one job keep more warps
 * resident than one that does both. */
#include "cuda/align_cuda.cuh"

namespace {

__global__ void __launch_bounds__(RC_WIDE_BLOCK)
    rc_split_decide_kernel(const __grid_constant__ rc_align_args args, rc_split_item *items) {
  const rc_stream_desc &s = args.s[0];
  const uint32_t target = blockIdx.x * RC_WIDE_BLOCK + threadIdx.x, T = (uint32_t)args.a.T;
  rc_pdl_enter();
  if (target < (uint64_t)args.a.B * T) {
    const uint32_t b = rc_div(target, args.by_T), t = target - b * T;
    const rc_target r = rc_decide_target<ROBOCACHE_DTYPE_I64, true>(args.a, s, args.k_base, b, t);
    items[target] = rc_split_item_of(args, s, b, t, r);
  }
  if (args.check_total)
    rc_check_data<ROBOCACHE_DTYPE_I64>(args.a, args.s, 1, args.k_base == 0, args.check_total);
}

/* Thread (target, slot): CONST writes w, COPY sample i0, LERP a + w (c - a)
 * of samples i0 and i0 + 1. Launched as a programmatic dependent of the
 * decide kernel on sm_90 and later (rc_launch_split_move): it may start
 * while that one finishes, and waits for it (griddepcontrol.wait) before
 * reading items. */
template <class In, class Out, int N>
__global__ void __launch_bounds__(RC_WIDE_BLOCK)
    rc_split_move_kernel(const __grid_constant__ rc_align_args args, const rc_split_item *items) {
  const rc_stream_desc &s = args.s[0];
  const uint32_t id = blockIdx.x * RC_WIDE_BLOCK + threadIdx.x, G = (uint32_t)s.group;
  const uint32_t target = rc_div(id, args.by_group), sub = id - target * G, T = (uint32_t)args.a.T;
  if (target >= (uint64_t)args.a.B * T) return;
  const uint32_t b = rc_div(target, args.by_T), t = target - b * T;
  rc_pdl_enter();
  const rc_split_item it = items[target];
  const int mode = it.i0 < 0 ? CH_CONST : it.w == 0.0f ? CH_COPY : CH_LERP;
  const int64_t i0 = it.i0 < 0 ? 0 : it.i0, i1 = i0 + (mode == CH_LERP);
  const In *vals = (const In *)s.values + b * s.vs_b + (int64_t)sub * N * s.vs_d;
  const rc_vec<In, N> a = *(const rc_vec<In, N> *)(vals + i0 * s.vs_s);
  const rc_vec<In, N> c = *(const rc_vec<In, N> *)(vals + i1 * s.vs_s);
  rc_vec<Out, N> y;
  rc_slot(mode, a, c, it.w, y);
  rc_st((rc_vec<Out, N> *)((Out *)args.out + b * args.os_b + t * args.os_t +
                           (int64_t)sub * N * args.os_d),
        y);
}

/* The move kernel, as a programmatic dependent launch when `pdl` (sm_90+). */
template <class In, class Out>
cudaError_t rc_launch_split_move(const rc_align_args &args, const rc_split_item *items, int grid,
                                 cudaStream_t stream, bool pdl) {
  cudaError_t e = cudaSuccess;
  rc_with_vec<In, Out>(args.s[0].vec, [&](auto n) {
    e = rc_cuda_launch(rc_split_move_kernel<In, Out, n()>, grid, RC_WIDE_BLOCK, stream, pdl, args,
                       items);
  });
  return e;
}

} // namespace

/* The two kernels of the split path; decide_grid covers the targets (and the
 * data checks), move_grid the (target, slot) threads. With `pdl` (sm_90 and
 * later) both are programmatic dependent launches (docs/cuda.md, "Chained
 * calls"); the decide kernel lets the move kernel launch as soon as it has
 * waited for the stream's earlier work: the move kernel's blocks are
 * scheduled while the targets are resolved, which hides its launch. */
robocache_status rc_launch_split(robocache_ctx *ctx, const rc_align_args &args, void *scratch,
                                 int decide_grid, int move_grid, cudaStream_t stream, bool pdl,
                                 int32_t in_dtype, int32_t out_dtype) {
  rc_split_item *items = (rc_split_item *)scratch;
  cudaError_t e =
      rc_cuda_launch(rc_split_decide_kernel, decide_grid, RC_WIDE_BLOCK, stream, pdl, args, items);
  robocache_status s = rc_cuda_check(ctx, e, "align kernel launch (split path, targets)");
  if (s != ROBOCACHE_OK || move_grid == 0) return s;
  rc_with_dtype(in_dtype, [&](auto in) {
    rc_with_dtype(out_dtype, [&](auto out) {
      /* rc_path_plan keeps f64 off this path */
      if constexpr (sizeof(decltype(in)) < 8 && sizeof(decltype(out)) < 8)
        e = rc_launch_split_move<decltype(in), decltype(out)>(args, items, move_grid, stream, pdl);
    });
  });
  return rc_cuda_check(ctx, e, "align kernel launch (split path, channels)");
}
