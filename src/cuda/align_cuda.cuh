/* What the files of the CUDA forward of align / resample share: align_cuda.cu
 * plans a call and launches each chunk of streams on one of four paths,
 * align_warp_cuda.cu, align_wide_cuda.cu, align_split_cuda.cu and
 * align_row_cuda.cu. Here: the element types and their conversions to the
 * arithmetic type, slots of N channels and their stores, a resolved target
 * (rc_item; rc_split_item on the split and row paths), the arguments of
 * every launch (rc_align_args), the paths' sizes and their launchers. */
#ifndef ROBOCACHE_CUDA_ALIGN_CUDA_CUH
#define ROBOCACHE_CUDA_ALIGN_CUDA_CUH

#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/align_host_cuda.cuh"

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
 * B64·D32 12.28 -> 11.81, no shape slower (docs/cuda.md); that the output
 * lines then leave L2 room for the sample rows and times that other targets
 * read is a guess, not profiled. */
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
 * channel (measured: docs/cuda.md). */
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

/* n / d for n < 2^31 and 1 <= d < 2^31 by a multiply and a shift, with m =
 * ceil(2^k / d), k = 31 + ceil(log2 d) (the round-up method of Granlund and
 * Montgomery: m d = 2^k + e with e < d, so n m / 2^k exceeds n / d by less
 * than 1 / d, which never reaches the next integer). The wide and split
 * paths divide thread indices by the threads per target and by T with it. */
struct rc_fastdiv {
  uint64_t m;
  uint32_t k;
};

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

/* The wide path (align_wide_cuda.cu): RC_WIDE_BLOCK threads per block, rows
 * of at least RC_WIDE_MIN_SLOTS full-width slots, launches of at most
 * RC_WIDE_MAX_TARGETS targets; the split path's kernels (align_split_cuda.cu)
 * take RC_WIDE_BLOCK threads per block too. */
#define RC_WIDE_BLOCK 256
#define RC_WIDE_MIN_SLOTS 4
#define RC_WIDE_MAX_TARGETS 65536

/* At most this many slots of N channels per thread (8-wide 16-bit slots: 2,
 * which keeps them within 64 registers). */
constexpr int rc_wide_max_rounds(int N) { return N >= 8 ? 2 : 4; }

/* A target resolved by the split path's first kernel or by a row-path block. */
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

/* Threads of a row-path block (align_row_cuda.cu), at least the slots of
 * one target (rc_path_plan). */
#define RC_ROW_BLOCK 512

/* The paths' launchers and the row path's conditions, called by align_cuda.cu
 * (each is described where it is defined). */
robocache_status rc_launch_warp(robocache_ctx *ctx, const rc_align_args &args, int grid,
                                cudaStream_t stream, bool pdl, int32_t time_dtype, bool one,
                                int32_t out_dtype); /* align_warp_cuda.cu */
robocache_status rc_launch_wide(robocache_ctx *ctx, const rc_align_args &args, int grid,
                                cudaStream_t stream, bool pdl, int32_t in_dtype,
                                int32_t out_dtype); /* align_wide_cuda.cu */
robocache_status rc_launch_split(robocache_ctx *ctx, const rc_align_args &args, void *scratch,
                                 int decide_grid, int move_grid, cudaStream_t stream, bool pdl,
                                 int32_t in_dtype, int32_t out_dtype); /* align_split_cuda.cu */
/* align_row_cuda.cu */
int64_t rc_row_smem(const rc_align_problem *p, const rc_stream_view *sv);
bool rc_row_fits(const rc_align_problem *p, const rc_stream_view *sv);
robocache_status rc_row_prepare(robocache_ctx *ctx, int device, bool *ok);
robocache_status rc_launch_row(robocache_ctx *ctx, const rc_align_args &args, int grid, size_t smem,
                               cudaStream_t stream, bool pdl, int32_t in_dtype, int32_t out_dtype);

#endif
