/* CUDA forward of align / resample (DESIGN §1.1-1.2, §4): ONE kernel launch
 * for all K streams (up to RC_CUDA_MAX_STREAMS per launch; more are launched
 * in chunks), on the context's stream, no host allocation and no
 * synchronisation except the read-back of the check record in checked mode
 * (docs/cuda.md).
 *
 * Grid: the blocks of stream k are [block_begin_k, block_begin_{k+1}); a
 * block of 256 threads holds 256 / G groups of G lanes, one group per target
 * (b, t). The group finds the bracket once (rc_group_search), decides the
 * target with src/common/interp.h, then each lane writes channel slots
 * lane, lane + G, ...: a slot is `vec` channels moved with one 16-byte (or
 * narrower) access when the strides and alignment allow, two slots per lane
 * loaded before the first store. Arithmetic in f32 (f64 when values or out
 * are f64). */
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
template <class C> __device__ __forceinline__ C to_c(f16s v) { return (C)rc_f16_to_f32(v.u); }
template <class C> __device__ __forceinline__ C to_c(bf16s v) { return (C)rc_bf16_to_f32(v.u); }

/* Rounded as rc_store_f64 (src/common/dtype.h) rounds. */
template <class C> __device__ __forceinline__ void from_c(C x, float &o) { o = (float)x; }
template <class C> __device__ __forceinline__ void from_c(C x, double &o) { o = (double)x; }
template <class C> __device__ __forceinline__ void from_c(C x, f16s &o) {
  o.u = rc_f32_to_f16((float)x);
}
template <class C> __device__ __forceinline__ void from_c(C x, bf16s &o) {
  o.u = rc_f32_to_bf16((float)x);
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

/* Channels per 16-byte access for a values / out dtype pair. */
template <class In, class Out> constexpr int rc_vec_width() {
  return 16 / (sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out));
}

/* How the channels of a target are written. */
enum { CH_CONST = 0, CH_COPY = 1, CH_LERP = 2 };

/* Channel slots of one target: N channels per access (N > 1: contiguous and
 * aligned, checked on the host), two slots per lane in flight. */
template <class In, class Out, int N>
__device__ __forceinline__ void
rc_channels(const In *v0, const In *v1, int64_t vs_d, Out *out, int64_t os_d, int64_t D, int mode,
            typename rc_compute<In, Out>::type w, typename rc_compute<In, Out>::type konst,
            const rc_group &g) {
  typedef typename rc_compute<In, Out>::type C;
  int64_t slots = D / N;
  for (int64_t j0 = g.lane; j0 < slots; j0 += 2 * g.G) {
    rc_vec<In, N> a[2] = {}, c[2] = {};
#pragma unroll
    for (int u = 0; u < 2; u++) {
      int64_t j = j0 + (int64_t)u * g.G;
      if (j < slots && mode != CH_CONST) {
        if (N > 1) {
          a[u] = *(const rc_vec<In, N> *)(v0 + j * N);
          if (mode == CH_LERP) c[u] = *(const rc_vec<In, N> *)(v1 + j * N);
        } else {
          a[u].e[0] = v0[j * vs_d];
          if (mode == CH_LERP) c[u].e[0] = v1[j * vs_d];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < 2; u++) {
      int64_t j = j0 + (int64_t)u * g.G;
      if (j >= slots) continue;
      rc_vec<Out, N> o;
#pragma unroll
      for (int e = 0; e < N; e++) {
        C x = mode == CH_CONST  ? konst
              : mode == CH_COPY ? to_c<C>(a[u].e[e])
                                : lerp_c(to_c<C>(a[u].e[e]), to_c<C>(c[u].e[e]), w);
        from_c(x, o.e[e]);
      }
      if (N > 1)
        *(rc_vec<Out, N> *)(out + j * N) = o;
      else
        out[j * os_d] = o.e[0];
    }
  }
}

/* Slerp of each quaternion (4 channels) of one target between i0 and i1. */
template <class In, class Out>
__device__ __forceinline__ void
rc_slerp_channels(const In *v0, const In *v1, int64_t vs_d, Out *out, int64_t os_d, int64_t D,
                  typename rc_compute<In, Out>::type w, const rc_group &g) {
  typedef typename rc_compute<In, Out>::type C;
  for (int64_t q = g.lane; q < D / 4; q += g.G) {
    C a[4], b[4], r[4];
#pragma unroll
    for (int c = 0; c < 4; c++) {
      a[c] = to_c<C>(v0[(4 * q + c) * vs_d]);
      b[c] = to_c<C>(v1[(4 * q + c) * vs_d]);
    }
    slerp_c(a, b, w, r);
#pragma unroll
    for (int c = 0; c < 4; c++) from_c(r[c], out[(4 * q + c) * os_d]);
  }
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
  int64_t check_total; /* elements of the data checks; 0: none */
};

/* Writes the channels of target r of stream s (values dtype In). */
template <class In, class Out>
__device__ __forceinline__ void rc_write_target(const rc_stream_desc &s, int64_t b,
                                                const rc_target &r, Out *out, int64_t os_d,
                                                const rc_group &g) {
  typedef typename rc_compute<In, Out>::type C;
  const In *row = (const In *)s.values + b * s.vs_b;
  const In *v0 = row + r.i0 * s.vs_s, *v1 = row + r.i1 * s.vs_s;
  C w = (C)r.w;
  if (r.mode == RC_TGT_INTERP && s.opt.method == ROBOCACHE_SLERP) {
    rc_slerp_channels<In, Out>(v0, v1, s.vs_d, out, os_d, s.D, w, g);
    return;
  }
  int mode = r.mode == RC_TGT_INTERP ? CH_LERP : r.mode == RC_TGT_SAMPLE ? CH_COPY : CH_CONST;
  C konst = r.mode == RC_TGT_FILL ? (C)s.opt.fill_value : r.mode == RC_TGT_POISON ? (C)NAN : (C)0;
  constexpr int N = rc_vec_width<In, Out>();
  if (s.vec == N)
    rc_channels<In, Out, N>(v0, v1, s.vs_d, out, os_d, s.D, mode, w, konst, g);
  else
    rc_channels<In, Out, 1>(v0, v1, s.vs_d, out, os_d, s.D, mode, w, konst, g);
}

template <int TIME_DTYPE, class Out>
__global__ void __launch_bounds__(RC_CUDA_BLOCK)
    rc_align_kernel(const __grid_constant__ rc_align_args args) {
  int k = 0;
  while (k + 1 < args.K && (int)blockIdx.x >= args.s[k + 1].block_begin) k++;
  const rc_stream_desc &s = args.s[k];
  rc_group g(s.group);
  int64_t target =
      ((int64_t)blockIdx.x - s.block_begin) * (RC_CUDA_BLOCK / s.group) + threadIdx.x / s.group;
  if (target < args.a.B * args.a.T) {
    int64_t b = target / args.a.T, t = target % args.a.T;
    rc_target r = rc_group_target<TIME_DTYPE>(args.a, s, args.k_base + k, b, t, g);
    Out *out = (Out *)args.out + b * args.os_b + t * args.os_t + s.col * args.os_d;
    switch (s.dtype) {
    case ROBOCACHE_DTYPE_F32: rc_write_target<float, Out>(s, b, r, out, args.os_d, g); break;
    case ROBOCACHE_DTYPE_F64: rc_write_target<double, Out>(s, b, r, out, args.os_d, g); break;
    case ROBOCACHE_DTYPE_F16: rc_write_target<f16s, Out>(s, b, r, out, args.os_d, g); break;
    default: rc_write_target<bf16s, Out>(s, b, r, out, args.os_d, g); break;
    }
    if (args.valid && g.lane == 0)
      args.valid[b * args.va_b + t * args.va_t + (args.k_base + k) * args.va_k] = (uint8_t)r.valid;
  }
  if (args.check_total)
    rc_check_data<TIME_DTYPE>(args.a, args.s, args.K, args.k_base == 0, args.check_total);
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

int rc_vec_for(int32_t in_dtype, int32_t out_dtype) {
  size_t a = robocache_dtype_size((robocache_dtype)in_dtype);
  size_t b = robocache_dtype_size((robocache_dtype)out_dtype);
  return (int)(16 / (a > b ? a : b));
}

template <int TIME_DTYPE>
robocache_status rc_launch_time(robocache_ctx *ctx, const rc_align_args &args, int grid,
                                cudaStream_t stream, int32_t out_dtype) {
  switch (out_dtype) {
  case ROBOCACHE_DTYPE_F32:
    rc_align_kernel<TIME_DTYPE, float><<<grid, RC_CUDA_BLOCK, 0, stream>>>(args);
    break;
  case ROBOCACHE_DTYPE_F64:
    rc_align_kernel<TIME_DTYPE, double><<<grid, RC_CUDA_BLOCK, 0, stream>>>(args);
    break;
  case ROBOCACHE_DTYPE_F16:
    rc_align_kernel<TIME_DTYPE, f16s><<<grid, RC_CUDA_BLOCK, 0, stream>>>(args);
    break;
  default: rc_align_kernel<TIME_DTYPE, bf16s><<<grid, RC_CUDA_BLOCK, 0, stream>>>(args); break;
  }
  return rc_cuda_launched(ctx, "align kernel launch");
}

/* One launch for streams [k0, k0 + K) of p. */
robocache_status rc_launch_chunk(robocache_ctx *ctx, const rc_align_problem *p,
                                 const rc_cuda_call *c, int k0, int K) {
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
  int64_t blocks = 0, check = k0 == 0 ? p->B * p->T : 0;
  for (int j = 0; j < K; j++) {
    const rc_stream_view *sv = &p->streams[k0 + j];
    rc_stream_desc d = rc_cuda_stream_desc(p, k0 + j);
    int N = rc_vec_for(sv->values.dtype, p->out.dtype);
    bool vec = rc_vec_ok(&sv->values, 0, sv->D, N) && rc_vec_ok(&p->out, sv->col, sv->D, N);
    d.vec = vec ? N : 1;
    int64_t slots = sv->opt.method == ROBOCACHE_SLERP ? sv->D / 4 : sv->D / d.vec;
    d.group = rc_cuda_group_size(slots);
    d.block_begin = (int32_t)blocks;
    int64_t per_block = RC_CUDA_BLOCK / d.group;
    blocks += (p->B * p->T + per_block - 1) / per_block;
    if (blocks > INT32_MAX / 2)
      return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                      "align: B x T = %lld targets is too many for one CUDA launch",
                      (long long)(p->B * p->T));
    args.s[j] = d;
    check += p->B * sv->S;
  }
  if (c->record) {
    args.check_total = check;
    int64_t check_blocks = (check + RC_CUDA_BLOCK - 1) / RC_CUDA_BLOCK;
    if (blocks < check_blocks) blocks = check_blocks < 65536 ? check_blocks : 65536;
  }
  if (blocks == 0) return ROBOCACHE_OK;
  switch (p->time_dtype) {
  case ROBOCACHE_DTYPE_I64:
    return rc_launch_time<ROBOCACHE_DTYPE_I64>(ctx, args, (int)blocks, c->stream, p->out.dtype);
  case ROBOCACHE_DTYPE_F64:
    return rc_launch_time<ROBOCACHE_DTYPE_F64>(ctx, args, (int)blocks, c->stream, p->out.dtype);
  default:
    return rc_launch_time<ROBOCACHE_DTYPE_F32>(ctx, args, (int)blocks, c->stream, p->out.dtype);
  }
}

} // namespace

extern "C" robocache_status rc_align_cuda(robocache_ctx *ctx, const rc_align_problem *p) {
  rc_cuda_call c;
  robocache_status s = rc_cuda_call_begin(ctx, p, 0, &c);
  if (s != ROBOCACHE_OK) return s;
  for (int k0 = 0; k0 < p->K && s == ROBOCACHE_OK; k0 += RC_CUDA_MAX_STREAMS) {
    int K = p->K - k0 < RC_CUDA_MAX_STREAMS ? p->K - k0 : RC_CUDA_MAX_STREAMS;
    s = rc_launch_chunk(ctx, p, &c, k0, K);
  }
  return rc_cuda_call_end(ctx, p, &c, s);
}
