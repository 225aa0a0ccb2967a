/* CUDA backward of resample with respect to the values:
 * grad_values[b,s,:] = sum over targets t of weight(t, s) * grad_out[b,t,:],
 * with the forward's weights (src/common/interp.h). Deterministic, no float
 * atomics: two launches on the context's stream,
 *   1. plans: per target, the samples it reads and their weights (the same
 *      search and decision as the forward, one thread per target), into the
 *      workspace;
 *   2. gather: one warp per sample s adds, in target order, the weights of
 *      the targets that read s times grad_out (f64 accumulation), the
 *      plans of row b streamed through shared memory.
 * The gather reads every plan of row b once per block of 8 samples, so it
 * costs O(S * T / 8) plan reads per row: fine for training-step sizes, not
 * tuned for very long rows. */
#include "cuda/align_host_cuda.cuh"

namespace {

/* What target t of row b contributes: weight w0 to sample i0 and, when
 * pair, weight w1 to sample i0 + 1; i0 < 0: nothing. */
struct rc_plan {
  int64_t i0;
  int32_t pair, pad;
  double w0, w1;
};

template <int TIME_DTYPE>
__global__ void __launch_bounds__(RC_CUDA_BLOCK)
    rc_plan_kernel(const __grid_constant__ rc_target_desc a,
                   const __grid_constant__ rc_stream_desc s, rc_plan *plans, int64_t check_total) {
  int64_t target = (int64_t)blockIdx.x * RC_CUDA_BLOCK + threadIdx.x;
  if (target < a.B * a.T) {
    rc_target r = rc_decide_target<TIME_DTYPE>(a, s, 0, target / a.T, target % a.T);
    rc_plan pl = {-1, 0, 0, 0.0, 0.0};
    if (r.mode == RC_TGT_SAMPLE) {
      pl.i0 = r.i0;
      pl.w0 = 1.0;
    } else if (r.mode == RC_TGT_INTERP) {
      pl.i0 = r.i0;
      pl.pair = 1;
      pl.w0 = 1.0 - r.w;
      pl.w1 = r.w;
    }
    plans[target] = pl;
  }
  if (check_total) rc_check_data<TIME_DTYPE>(a, &s, 1, true, check_total);
}

#define RC_GATHER_SAMPLES (RC_CUDA_BLOCK / 32)
#define RC_GATHER_CHANNELS 4 /* per lane and pass */

template <class G>
__global__ void __launch_bounds__(RC_CUDA_BLOCK)
    rc_gather_kernel(const rc_plan *plans, const G *grad_out, int64_t go_b, int64_t go_t,
                     int64_t go_d, G *grad_values, int64_t gv_b, int64_t gv_s, int64_t gv_d,
                     int64_t T, int64_t S, int64_t D) {
  __shared__ rc_plan tile[RC_CUDA_BLOCK];
  int64_t sblocks = (S + RC_GATHER_SAMPLES - 1) / RC_GATHER_SAMPLES;
  int64_t b = blockIdx.x / sblocks;
  int64_t s = (blockIdx.x % sblocks) * RC_GATHER_SAMPLES + threadIdx.x / 32;
  int lane = threadIdx.x & 31;
  const rc_plan *row = plans + b * T;
  const G *go = grad_out + b * go_b;
  for (int64_t d0 = 0; d0 < D; d0 += 32 * RC_GATHER_CHANNELS) {
    double acc[RC_GATHER_CHANNELS] = {};
    for (int64_t t0 = 0; t0 < T; t0 += RC_CUDA_BLOCK) {
      __syncthreads();
      if (t0 + threadIdx.x < T) tile[threadIdx.x] = row[t0 + threadIdx.x];
      __syncthreads();
      int nt = T - t0 < RC_CUDA_BLOCK ? (int)(T - t0) : RC_CUDA_BLOCK;
      for (int j = 0; j < nt; j++) {
        const rc_plan &pl = tile[j];
        bool first = pl.i0 == s, second = pl.pair && pl.i0 + 1 == s;
        if (s >= S || !(first || second)) continue;
        double wgt = first ? pl.w0 : pl.w1;
#pragma unroll
        for (int e = 0; e < RC_GATHER_CHANNELS; e++) {
          int64_t d = d0 + lane + 32 * e;
          if (d < D) acc[e] += wgt * (double)go[(t0 + j) * go_t + d * go_d];
        }
      }
    }
    if (s < S)
#pragma unroll
      for (int e = 0; e < RC_GATHER_CHANNELS; e++) {
        int64_t d = d0 + lane + 32 * e;
        if (d < D) grad_values[b * gv_b + s * gv_s + d * gv_d] = (G)acc[e];
      }
  }
}

template <int TIME_DTYPE>
robocache_status rc_launch_plans(robocache_ctx *ctx, const rc_target_desc &a,
                                 const rc_stream_desc &s, rc_plan *plans, int64_t check_total,
                                 int grid, cudaStream_t stream) {
  return rc_cuda_check(ctx,
                       rc_cuda_launch(rc_plan_kernel<TIME_DTYPE>, (unsigned int)grid, RC_CUDA_BLOCK,
                                      stream, false, a, s, plans, check_total),
                       "resample_backward plan kernel launch");
}

template <class G>
robocache_status rc_launch_gather(robocache_ctx *ctx, const rc_align_problem *p,
                                  const rc_plan *plans, cudaStream_t stream) {
  const rc_stream_view *s = &p->streams[0];
  int64_t blocks = p->B * ((s->S + RC_GATHER_SAMPLES - 1) / RC_GATHER_SAMPLES);
  if (blocks == 0) return ROBOCACHE_OK;
  if (blocks > INT32_MAX)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "resample_backward: B x S is too large for one CUDA launch");
  const rc_view *go = &p->out, *gv = &s->values;
  cudaError_t e = rc_cuda_launch(rc_gather_kernel<G>, (unsigned int)blocks, RC_CUDA_BLOCK, stream,
                                 false, plans, (const G *)go->data, go->strides[0], go->strides[1],
                                 go->strides[2], (G *)gv->data, gv->strides[0], gv->strides[1],
                                 gv->strides[2], p->T, s->S, s->D);
  return rc_cuda_check(ctx, e, "resample_backward gather kernel launch");
}

robocache_status rc_backward(robocache_ctx *ctx, const rc_align_problem *p, const rc_cuda_call *c) {
  rc_plan *plans = (rc_plan *)c->scratch;
  rc_target_desc a = rc_cuda_target_desc(p, c);
  rc_stream_desc s = rc_cuda_stream_desc(p, 0);
  int64_t targets = p->B * p->T;
  int64_t check = c->record ? p->B * p->T + p->B * s.S : 0;
  int64_t blocks = (targets + RC_CUDA_BLOCK - 1) / RC_CUDA_BLOCK;
  int64_t check_blocks = (check + RC_CUDA_BLOCK - 1) / RC_CUDA_BLOCK;
  if (blocks < check_blocks) blocks = check_blocks < 65536 ? check_blocks : 65536;
  if (blocks > INT32_MAX)
    return rc_error(ctx, ROBOCACHE_INVALID_ARGUMENT,
                    "resample_backward: B x T is too large for one CUDA launch");
  robocache_status st = ROBOCACHE_OK;
  if (blocks > 0) switch (p->time_dtype) {
    case ROBOCACHE_DTYPE_I64:
      st = rc_launch_plans<ROBOCACHE_DTYPE_I64>(ctx, a, s, plans, check, (int)blocks, c->stream);
      break;
    case ROBOCACHE_DTYPE_F64:
      st = rc_launch_plans<ROBOCACHE_DTYPE_F64>(ctx, a, s, plans, check, (int)blocks, c->stream);
      break;
    default:
      st = rc_launch_plans<ROBOCACHE_DTYPE_F32>(ctx, a, s, plans, check, (int)blocks, c->stream);
      break;
    }
  if (st != ROBOCACHE_OK) return st;
  return p->out.dtype == ROBOCACHE_DTYPE_F64 ? rc_launch_gather<double>(ctx, p, plans, c->stream)
                                             : rc_launch_gather<float>(ctx, p, plans, c->stream);
}

} // namespace

extern "C" robocache_status rc_align_backward_cuda(robocache_ctx *ctx, const rc_align_problem *p) {
  rc_cuda_call c;
  size_t scratch = (size_t)(p->B * p->T) * sizeof(rc_plan);
  robocache_status s = rc_cuda_call_begin(ctx, p, scratch > 0 ? scratch : 1, &c);
  if (s != ROBOCACHE_OK) return s;
  return rc_cuda_call_end(ctx, p, &c, rc_backward(ctx, p, &c));
}
