/* CUDA forward of align / resample (DESIGN §1.1-1.2, §4): ONE kernel launch
 * for all K streams (up to RC_CUDA_MAX_STREAMS per launch; more are launched
 * in chunks), on the context's stream, no host allocation and no
 * synchronisation except the read-back of the check record in checked mode
 * (docs/cuda.md). One-stream launches with the default options and int64 ns
 * times may take the wide path (small launches, one kernel), the split
 * path (many targets: a kernel that resolves the targets into the
 * workspace, then one that moves the channels) or, on sm_90 and later, the
 * row path (many targets on rows that fit shared memory: one block per
 * row); see their sections below.
 *
 * Warp path (everything else): the blocks of stream k are [block_begin_k,
 * block_begin_{k+1}); in each warp the first 2^log_targets lanes (1..32,
 * chosen so that the grid fills the device) resolve one target (b, t) each
 * (search and decision of src/common/interp.h, rc_decide_target) into shared
 * memory; then the warp moves the channels of those targets together: slots
 * of `vec` channels (one 16-, 8- or 4-byte access when the strides and
 * alignment allow), RC_UNROLL slots per lane loaded before the first store,
 * stores coalesced along each target's channels. Arithmetic in f32 (f64 when
 * values or out are f64). */
#include <atomic>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/align_host.h"

namespace {

struct f16s {
  uint16_t u;
};
struct bf16s {
  uint16_t u;
};

template <class E, int N> struct alignas(sizeof(E) * N) rc_vec { E e[N]; };

template <class In, class Out> struct rc_compute { typedef float type; };
template <class Out> struct rc_compute<double, Out> { typedef double type; };
template <class In> struct rc_compute<In, double> { typedef double type; };
template <> struct rc_compute<double, double> { typedef double type; };

template <class C> __device__ __forceinline__ C to_c(float v) { return (C)v; }
template <class C> __device__ __forceinline__ C to_c(double v) { return (C)v; }
template <class C> __device__ __forceinline__ C to_c(f16s v) {
  return (C)__half2float(__ushort_as_half(v.u));
}
template <class C> __device__ __forceinline__ C to_c(bf16s v) { return (C)rc_bf16_to_f32(v.u); }

/* Rounded as rc_store_f64 (src/common/dtype.h) rounds: to nearest even, f64
 * through f32 (the hardware conversions; only NaN payloads may differ). */
template <class C> __device__ __forceinline__ void from_c(C x, float &o) { o = (float)x; }
template <class C> __device__ __forceinline__ void from_c(C x, double &o) { o = (double)x; }
template <class C> __device__ __forceinline__ void from_c(C x, f16s &o) {
  o.u = __half_as_ushort(__float2half_rn((float)x));
}
template <class C> __device__ __forceinline__ void from_c(C x, bf16s &o) {
  o.u = __bfloat16_as_ushort(__float2bfloat16_rn((float)x));
}

__device__ __forceinline__ float lerp_c(float a, float b, float w) { return rc_lerp_f32(a, b, w); }
__device__ __forceinline__ double lerp_c(double a, double b, double w) {
  return rc_lerp_f64(a, b, w);
}
__device__ __forceinline__ void slerp_c(const float *a, const float *b, float w, float *o) {
  rc_slerp_f32(a, b, w, o);
}
__device__ __forceinline__ void slerp_c(const double *a, const double *b, double w, double *o) {
  rc_slerp_f64(a, b, w, o);
}

/* Stores one slot of out with the streaming hint (st.global.cs, evict
 * first). Measured on an H200, same run: bf16 B64·D32 8.39 -> 7.20 µs, f32
 * B64·D32 12.28 -> 11.81, no shape slower (docs/performance-notes.md); that the output lines then
 * leave L2 room for the sample rows and times that other targets read is a guess, not profiled. */
template <class V> __device__ __forceinline__ void rc_st(V *p, const V &v) {
  if constexpr (sizeof(V) == 16)
    __stcs((uint4 *)p, *(const uint4 *)&v);
  else if constexpr (sizeof(V) == 8)
    __stcs((uint2 *)p, *(const uint2 *)&v);
  else if constexpr (sizeof(V) == 4)
    __stcs((unsigned *)p, *(const unsigned *)&v);
  else
    *p = v;
}

/* How the channels of one target are written (rc_item.mode). */
enum { CH_NONE = 0, CH_CONST = 1, CH_COPY = 2, CH_LERP = 3, CH_SLERP = 4 };

/* The N channels of one slot of a LERP (a + w (c - a)), COPY (a) or CONST
 * (w) target, computed in C; the mode is tested once per slot, not per
 * channel (docs/performance-notes.md). */
template <class C, class In, class Out, int N>
__device__ __forceinline__ void rc_slot(int mode, const rc_vec<In, N> &a, const rc_vec<In, N> &c,
                                        C w, rc_vec<Out, N> &y) {
  if (mode == CH_LERP) {
#pragma unroll
    for (int i = 0; i < N; i++) from_c(lerp_c(to_c<C>(a.e[i]), to_c<C>(c.e[i]), w), y.e[i]);
  } else if (mode == CH_COPY) {
#pragma unroll
    for (int i = 0; i < N; i++) from_c(to_c<C>(a.e[i]), y.e[i]);
  } else {
#pragma unroll
    for (int i = 0; i < N; i++) from_c(w, y.e[i]);
  }
}

/* One resolved target, handed from the thread that found it to the lanes
 * that move its channels (through shared memory). Offsets in elements. */
struct rc_item {
  int64_t v0, v1; /* row of sample i0 / i1 in values */
  int64_t out;    /* first channel of the stream in out */
  double w;       /* LERP / SLERP: weight of i1; CONST: the value */
  int32_t mode, pad;
};

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

/* Channels per access: the widest of 16, 8, 4 bytes (of the wider dtype)
 * that the host allowed for this stream, or 1. */
template <class In, class Out> constexpr int rc_vec_max() {
  return 16 / (sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out));
}

/* Calls f(std::integral_constant<int, n>()) for the channels per slot n that
 * `vec` names among those the kernels are built for: rc_vec_max (N), N / 2,
 * N / 4, else 1. */
template <class In, class Out, class F>
__host__ __device__ __forceinline__ void rc_with_vec(int vec, F &&f) {
  constexpr int N = rc_vec_max<In, Out>();
  if (vec == N)
    f(std::integral_constant<int, N>());
  else if (N >= 4 && vec == N / 2)
    f(std::integral_constant<int, (N >= 4 ? N / 2 : 1)>());
  else if (N >= 8 && vec == N / 4)
    f(std::integral_constant<int, (N >= 8 ? N / 4 : 1)>());
  else
    f(std::integral_constant<int, 1>());
}

/* Calls f with a value of the element type of values / out dtype `dtype`
 * (f32, f64, f16, else bf16), for host-side kernel selection. */
template <class F> void rc_with_dtype(int32_t dtype, F &&f) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F32: f(float()); break;
  case ROBOCACHE_DTYPE_F64: f(double()); break;
  case ROBOCACHE_DTYPE_F16: f(f16s()); break;
  default: f(bf16s()); break;
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

/* n / d for n < 2^31 and 1 <= d < 2^31 by a multiply and a shift, with m =
 * ceil(2^k / d), k = 31 + ceil(log2 d) (the round-up method of Granlund and
 * Montgomery: m d = 2^k + e with e < d, so n m / 2^k exceeds n / d by less
 * than 1 / d, which never reaches the next integer). The wide and split
 * paths divide thread indices by the threads per target and by T with it. */
struct rc_fastdiv {
  uint64_t m;
  uint32_t k;
};

rc_fastdiv rc_fastdiv_of(uint32_t d) {
  uint32_t l = 0;
  while (((uint64_t)1 << l) < d) l++;
  const uint32_t k = 31 + l;
  return {(((uint64_t)1 << k) + d - 1) / d, k};
}

__device__ __forceinline__ uint32_t rc_div(uint32_t n, rc_fastdiv f) {
  return (uint32_t)((n * f.m) >> f.k);
}

struct rc_align_args {
  rc_target_desc a;
  rc_stream_desc s[RC_CUDA_MAX_STREAMS];
  int32_t K;      /* streams in this launch */
  int32_t k_base; /* index in the call of s[0] */
  void *out;
  int64_t os_b, os_t, os_d;
  uint8_t *valid;
  int64_t va_b, va_t, va_k;
  int64_t check_total;       /* elements of the data checks; 0: none */
  rc_fastdiv by_T, by_group; /* wide, split and row paths: / T, / s[0].group */
};

/* The item of target r of stream s at (b, t). */
__device__ __forceinline__ rc_item rc_item_of(const rc_align_args &args, const rc_stream_desc &s,
                                              int64_t b, int64_t t, const rc_target &r) {
  rc_item e;
  e.v0 = b * s.vs_b + r.i0 * s.vs_s;
  e.v1 = b * s.vs_b + r.i1 * s.vs_s;
  e.out = b * args.os_b + t * args.os_t + s.col * args.os_d;
  e.w = r.w;
  e.pad = 0;
  switch (r.mode) {
  case RC_TGT_INTERP: e.mode = s.opt.method == ROBOCACHE_SLERP ? CH_SLERP : CH_LERP; break;
  case RC_TGT_SAMPLE: e.mode = CH_COPY; break;
  default:
    e.mode = CH_CONST;
    e.w = r.mode == RC_TGT_FILL ? s.opt.fill_value : r.mode == RC_TGT_POISON ? (double)NAN : 0.0;
  }
  return e;
}

/* valid[b, t, stream k of the call] = valid, when the call asked for the
 * mask. */
__device__ __forceinline__ void rc_store_valid(const rc_align_args &args, int64_t b, int64_t t,
                                               int k, int valid) {
  if (args.valid) args.valid[b * args.va_b + t * args.va_t + k * args.va_k] = (uint8_t)valid;
}

/* ONE: a launch of one stream with the default options (rc_is_simple) and
 * int64 ns times: its descriptor is read at fixed offsets instead of through
 * a runtime index into the launch's array, and the decision's code for the
 * other options is left out (H200: 2-3 % on the launches with many
 * targets). 8 blocks per multiprocessor (64 registers, a few bytes
 * spilled), so that align B256's 1,000 blocks fit in one wave (measured in
 * docs/performance-notes.md). */
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

/* ---- Wide path: one stream, default options, rows of >= RC_WIDE_MIN_SLOTS
 * full-width slots (docs/cuda.md, "Wide path"). A group of s.group threads
 * shares one target; each thread resolves it itself (the group reads the same
 * addresses: one access per distinct address) and moves s.rounds slots, sub,
 * sub + group, ..., all loads issued before the first store. Against the warp
 * path above it keeps more loads in flight per multiprocessor on wide rows,
 * and pays a search per thread instead of per target, so it is used only for
 * rows of several slots and launches of at most RC_WIDE_MAX_TARGETS targets
 * (measured: beyond that the repeated searches cost more than the loads in
 * flight gain, also on rows of 16 threads per target: H200, B256 S4096
 * T1024 D256 bf16 174.6 µs against 117.2 on the split path). */
#define RC_WIDE_BLOCK 256
#define RC_WIDE_MIN_SLOTS 4
#define RC_WIDE_MAX_TARGETS 65536

/* At most this many slots of N channels per thread (8-wide 16-bit slots: 2,
 * which keeps them within 64 registers). */
constexpr int rc_wide_max_rounds(int N) { return N >= 8 ? 2 : 4; }

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

/* ---- Split path: one stream, default options, more than
 * RC_WIDE_MAX_TARGETS targets (docs/cuda.md, "Split path"). One thread per
 * target resolves it into the call's scratch (rc_split_item, 8 bytes); a
 * second kernel moves the channels, one slot per thread, reading the item
 * instead of searching. Two kernels that each do one job keep more warps
 * resident than one that does both. */
struct alignas(8) rc_split_item { /* aligned: one 8-byte store and load */
  int32_t i0;                     /* sample of the row; -1: CONST */
  float w;                        /* CONST: the value; else the weight of i0 + 1 (0: COPY) */
};

/* Target (b, t) of stream s decided as r, on the split and row paths: its
 * valid flag stored (when the call asked for the mask) and its item
 * returned (mode CH_* and value w of its rc_item). The default options
 * interpolate only between samples i0 and i0 + 1 with a weight that is not 0
 * as a float (int64 ns times: at least 2^-64), so the weight tells LERP
 * from COPY. */
__device__ __forceinline__ rc_split_item rc_split_item_of(const rc_align_args &args,
                                                          const rc_stream_desc &s, int64_t b,
                                                          int64_t t, const rc_target &r) {
  rc_store_valid(args, b, t, args.k_base, r.valid);
  const rc_item e = rc_item_of(args, s, b, t, r);
  rc_split_item it;
  it.i0 = e.mode == CH_CONST ? -1 : (int32_t)r.i0;
  it.w = e.mode == CH_COPY ? 0.0f : (float)e.w;
  return it;
}

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

/* ---- Row path: one stream, default options, int64 ns times, more than
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
 * 42.1 -> 40.3 us (docs/performance-notes.md). */
#define RC_ROW_BLOCK 512
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

/* Bytes of shared memory of the row path for stream sv of p. */
int64_t rc_row_smem(const rc_align_problem *p, const rc_stream_view *sv) {
  const int64_t es = (int64_t)robocache_dtype_size((robocache_dtype)sv->values.dtype);
  return rc_row_layout_of(sv->S, p->T, sv->D * es).bytes;
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

/* Channels in 16 bytes of the wider of stream sv's values and out dtypes
 * (the host-side rc_vec_max). */
int rc_widest(const rc_stream_view *sv, const rc_view *out) {
  size_t a = robocache_dtype_size((robocache_dtype)sv->values.dtype);
  size_t b = robocache_dtype_size((robocache_dtype)out->dtype);
  return (int)(16 / (a > b ? a : b));
}

/* Slots per thread for `slots` slots of `vec` channels per target: 4 on wide
 * rows, else 2 when they divide the row, else 1. Tuned on an H200
 * (docs/cuda.md). */
int rc_rounds(int64_t slots, int vec) {
  if (slots >= 16 && slots % 4 == 0 && rc_wide_max_rounds(vec) >= 4) return 4;
  return slots % 2 == 0 ? 2 : 1;
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

/* Which path the one-stream launch of stream sv of p (descriptor d, vec set)
 * takes, and then d's group and rounds: RC_PATH_WIDE for at most
 * RC_WIDE_MAX_TARGETS targets with full-width slots, RC_PATH_ROW for more
 * targets where the rows fit it (rc_row_fits) on sm_90 and later (`sm90`),
 * else RC_PATH_SPLIT (any vec; full-width slots only on rows of at least
 * RC_WIDE_MIN_SLOTS); the row and split paths move one slot per thread and
 * are not for f64 (the item's float cannot hold its weight); all three only
 * with the default options, int64 ns times and S <= INT32_MAX (d->simple:
 * 32-bit indices, the item's sample). */
enum { RC_PATH_WARP = 0, RC_PATH_WIDE = 1, RC_PATH_SPLIT = 2, RC_PATH_ROW = 3 };
int rc_path_plan(const rc_align_problem *p, const rc_stream_view *sv, rc_stream_desc *d,
                 bool sm90) {
  const int widest = rc_widest(sv, &p->out);
  const bool f64 = widest == 2;
  int64_t slots = sv->D / d->vec, targets = p->B * p->T;
  if (p->time_dtype != ROBOCACHE_DTYPE_I64 || !d->simple || slots < 1) return RC_PATH_WARP;
  int path = targets <= RC_WIDE_MAX_TARGETS ? RC_PATH_WIDE : RC_PATH_SPLIT;
  if (path == RC_PATH_SPLIT && sm90 && !f64 && slots <= RC_ROW_BLOCK && rc_row_fits(p, sv))
    path = RC_PATH_ROW;
  if (path == RC_PATH_WIDE && (d->vec != widest || slots < RC_WIDE_MIN_SLOTS)) return RC_PATH_WARP;
  if (path == RC_PATH_SPLIT && (f64 || (d->vec == widest && slots < RC_WIDE_MIN_SLOTS)))
    return RC_PATH_WARP;
  int rounds = path == RC_PATH_WIDE ? rc_rounds(slots, d->vec) : 1;
  /* thread indices (< targets * group rounded up to a block) below 2^31: rc_div */
  if (targets * (slots / rounds) > INT32_MAX - RC_WIDE_BLOCK) return RC_PATH_WARP;
  d->rounds = rounds;
  d->group = (int32_t)(slots / rounds);
  return path;
}

/* 1 when pointer p (element size es) and the element strides allow N-wide
 * aligned accesses along the last axis (axes of size 1 ignored). */
bool rc_vec_ok(const rc_view *v, int64_t first, int64_t D, int N) {
  size_t es = robocache_dtype_size((robocache_dtype)v->dtype);
  if (N <= 1 || D % N != 0 || v->strides[v->ndim - 1] != 1) return false;
  for (int i = 0; i < v->ndim - 1; i++)
    if (v->shape[i] > 1 && v->strides[i] % N != 0) return false;
  return (((uintptr_t)v->data + (uintptr_t)first * es) % (es * N)) == 0;
}

/* Channels per access for stream sv into out: 16 bytes of the wider dtype,
 * else 8 or 4 bytes, when D, the strides and the addresses allow; else 1. */
int rc_vec_for(const rc_stream_view *sv, const rc_view *out) {
  const int widest = rc_widest(sv, out);
  for (int N = widest; N >= 2 && N >= widest / 4; N /= 2)
    if (rc_vec_ok(&sv->values, 0, sv->D, N) && rc_vec_ok(out, sv->col, sv->D, N)) return N;
  return 1;
}

int rc_log2_ceil(int64_t x) {
  int l = 0;
  while (((int64_t)1 << l) < x) l++;
  return l;
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

/* log2 of the targets per warp: as many as keep `warps` warps busy (more
 * targets per warp amortise the search), up to 32 and up to RC_MAX_ROUNDS
 * unrolled rounds of channel slots per lane; never fewer than fill a warp's
 * lanes in the channel phase. A launch asks for RC_WARPS_PER_SM warps per
 * multiprocessor, shared among its streams in proportion to their slots
 * per target (a stream of short rows gets more targets per warp). Tuned on
 * an H100 and an H200 (docs/cuda.md). */
#define RC_WARPS_PER_SM 16
#define RC_LOG_MAX_ROUNDS 3
int rc_log_targets(int64_t targets, int64_t warps, const rc_stream_desc *d) {
  int log_unroll = d->vec >= 8 ? 1 : 2; /* rc_move's U */
  int cap = RC_LOG_MAX_ROUNDS + log_unroll + 5 - d->log_group - d->log_rounds;
  int l = 5 - d->log_group;
  while (l < 5 && l < cap && targets >> (l + 1) >= warps) l++;
  return l;
}

/* Stream k of p as a descriptor with its channels per access set. */
rc_stream_desc rc_stream_plan(const rc_align_problem *p, int k) {
  rc_stream_desc d = rc_cuda_stream_desc(p, k);
  const rc_stream_view *sv = &p->streams[k];
  d.vec = sv->opt.method == ROBOCACHE_SLERP ? 1 : rc_vec_for(sv, &p->out);
  return d;
}

/* The descriptors d[0..K) of the launch of streams [k0, k0 + K) of p and its
 * path: rc_path_plan for a call of one stream; the warp path, ONE launch for
 * all the streams (DESIGN §1.2), for several. */
int rc_chunk_plan(const rc_align_problem *p, int k0, int K, rc_stream_desc *d, bool sm90) {
  for (int j = 0; j < K; j++) d[j] = rc_stream_plan(p, k0 + j);
  return p->K == 1 ? rc_path_plan(p, &p->streams[0], &d[0], sm90) : RC_PATH_WARP;
}

/* Slots per target of stream sv (descriptor d) on the warp path. */
int64_t rc_warp_slots(const rc_stream_view *sv, const rc_stream_desc *d) {
  return sv->opt.method == ROBOCACHE_SLERP ? sv->D / 4 : sv->D / d->vec;
}

/* Blocks of the warp path for stream sv of p (descriptor d), whose
 * log_group, log_rounds and log_targets it sets; `warps`: the stream's share
 * of the warps the launch asks for (rc_log_targets). */
int64_t rc_warp_blocks(const rc_align_problem *p, const rc_stream_view *sv, rc_stream_desc *d,
                       int64_t warps) {
  int64_t slots = rc_warp_slots(sv, d);
  d->log_group = rc_log2_ceil(slots < 32 ? slots : 32);
  d->log_rounds = rc_log2_ceil((slots + 31) / 32);
  d->log_targets = rc_log_targets(p->B * p->T, warps, d);
  int64_t per_block = (int64_t)(RC_CUDA_BLOCK / 32) << d->log_targets;
  return (p->B * p->T + per_block - 1) / per_block;
}

/* What the launches need to know of the device: its multiprocessors, and
 * whether it has programmatic dependent launch (sm_90 and later). */
struct rc_gpu {
  int sms;
  bool pdl;
};

robocache_status rc_gpu_of(robocache_ctx *ctx, int device, rc_gpu *g) {
  RC_CUDA_TRY(ctx, cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, device));
  return rc_cuda_pdl(ctx, device, &g->pdl);
}

/* One launch for streams [k0, k0 + K) of p on device g, with the
 * descriptors d[0..K) and the path rc_chunk_plan gave. */
robocache_status rc_launch_chunk(robocache_ctx *ctx, const rc_align_problem *p,
                                 const rc_cuda_call *c, int k0, int K, const rc_gpu &g,
                                 const rc_stream_desc *d, int path) {
  rc_align_args args = {};
  args.a = rc_cuda_target_desc(p, c);
  args.K = K;
  args.k_base = k0;
  args.out = p->out.data;
  args.os_b = p->out.strides[0];
  args.os_t = p->out.strides[1];
  args.os_d = p->out.strides[2];
  if (p->has_valid) {
    args.valid = (uint8_t *)p->valid.data;
    args.va_b = p->valid.strides[0];
    args.va_t = p->valid.strides[1];
    args.va_k = p->valid.strides[2];
  }
  for (int j = 0; j < K; j++) args.s[j] = d[j];
  /* the split path needs the call's scratch (rc_align_cuda asks for it) */
  const bool wide = path == RC_PATH_WIDE, split = path == RC_PATH_SPLIT && c->scratch,
             row = path == RC_PATH_ROW;
  const int64_t BT = p->B * p->T;
  int64_t blocks = 0, check = k0 == 0 ? BT : 0, all_slots = 0;
  for (int j = 0; j < K; j++) all_slots += rc_warp_slots(&p->streams[k0 + j], &args.s[j]);
  for (int j = 0; j < K; j++) {
    const rc_stream_view *sv = &p->streams[k0 + j];
    rc_stream_desc *sd = &args.s[j];
    const int64_t warps =
        (int64_t)g.sms * RC_WARPS_PER_SM * rc_warp_slots(sv, sd) / (all_slots > 0 ? all_slots : 1);
    sd->block_begin = (int32_t)blocks;
    blocks += row             ? p->B
              : wide || split ? (BT * sd->group + RC_WIDE_BLOCK - 1) / RC_WIDE_BLOCK
                              : rc_warp_blocks(p, sv, sd, warps > 0 ? warps : 1);
    if (blocks > INT32_MAX / 2)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "align: B x T = %lld targets is too many for one CUDA launch", (long long)BT);
    check += p->B * sv->S;
  }
  const int64_t move_blocks = blocks;
  if (split) blocks = (BT + RC_WIDE_BLOCK - 1) / RC_WIDE_BLOCK;
  if ((wide || split || row) && BT > 0) {
    args.by_T = rc_fastdiv_of((uint32_t)p->T);
    args.by_group = rc_fastdiv_of((uint32_t)args.s[0].group);
  }
  if (c->record) {
    args.check_total = check;
    int64_t check_blocks = (check + RC_CUDA_BLOCK - 1) / RC_CUDA_BLOCK;
    if (blocks < check_blocks && !row) blocks = check_blocks < 65536 ? check_blocks : 65536;
  }
  if (blocks == 0) return ROBOCACHE_OK;
  if (row)
    return rc_launch_row(ctx, args, (int)blocks, (size_t)rc_row_smem(p, &p->streams[k0]), c->stream,
                         g.pdl, p->streams[k0].values.dtype, p->out.dtype);
  if (wide)
    return rc_launch_wide(ctx, args, (int)blocks, c->stream, g.pdl, p->streams[k0].values.dtype,
                          p->out.dtype);
  if (split)
    return rc_launch_split(ctx, args, c->scratch, (int)blocks, (int)move_blocks, c->stream, g.pdl,
                           p->streams[k0].values.dtype, p->out.dtype);
  switch (p->time_dtype) {
  case ROBOCACHE_DTYPE_I64:
    if (K == 1 && args.s[0].simple)
      return rc_launch_time<ROBOCACHE_DTYPE_I64, true>(ctx, args, (int)blocks, c->stream, g.pdl,
                                                       p->out.dtype);
    return rc_launch_time<ROBOCACHE_DTYPE_I64, false>(ctx, args, (int)blocks, c->stream, g.pdl,
                                                      p->out.dtype);
  case ROBOCACHE_DTYPE_F64:
    return rc_launch_time<ROBOCACHE_DTYPE_F64, false>(ctx, args, (int)blocks, c->stream, g.pdl,
                                                      p->out.dtype);
  default:
    return rc_launch_time<ROBOCACHE_DTYPE_F32, false>(ctx, args, (int)blocks, c->stream, g.pdl,
                                                      p->out.dtype);
  }
}

} // namespace

extern "C" robocache_status rc_align_cuda(robocache_ctx *ctx, const rc_align_problem *p) {
  /* launches of at most RC_CUDA_MAX_STREAMS streams, each planned once; the
   * split path (a call of one stream) takes its scratch when the workspace
   * can hold it now (it cannot grow while the stream is captured: the warp
   * path then runs instead) */
  rc_cuda_call c;
  robocache_status s = rc_cuda_call_enter(ctx, p, &c);
  if (s != ROBOCACHE_OK) return s;
  rc_gpu g = {};
  s = rc_gpu_of(ctx, p->target_times.device_id, &g);
  rc_stream_desc d[RC_CUDA_MAX_STREAMS];
  int K = p->K < RC_CUDA_MAX_STREAMS ? p->K : RC_CUDA_MAX_STREAMS;
  int path = s == ROBOCACHE_OK ? rc_chunk_plan(p, 0, K, d, g.pdl) : RC_PATH_WARP;
  if (path == RC_PATH_ROW) {
    bool ok = false;
    s = rc_row_prepare(ctx, p->target_times.device_id, &ok);
    if (!ok) path = rc_chunk_plan(p, 0, K, d, false);
  }
  size_t want = path == RC_PATH_SPLIT ? (size_t)(p->B * p->T) * sizeof(rc_split_item) : 0;
  size_t scratch = 0;
  if (want && s == ROBOCACHE_OK) {
    int ok = 0;
    s = rc_cuda_workspace_can_hold(ctx, p->target_times.device_id, want, &ok);
    if (ok) scratch = want;
  }
  if (s != ROBOCACHE_OK) return rc_cuda_call_end(ctx, p, &c, s);
  s = rc_cuda_call_workspace(ctx, p, scratch, &c);
  if (s != ROBOCACHE_OK) return s;
  for (int k0 = 0; k0 < p->K && s == ROBOCACHE_OK; k0 += RC_CUDA_MAX_STREAMS) {
    if (k0 > 0) {
      K = p->K - k0 < RC_CUDA_MAX_STREAMS ? p->K - k0 : RC_CUDA_MAX_STREAMS;
      path = rc_chunk_plan(p, k0, K, d, g.pdl);
    }
    s = rc_launch_chunk(ctx, p, &c, k0, K, g, d, path);
  }
  return rc_cuda_call_end(ctx, p, &c, s);
}
