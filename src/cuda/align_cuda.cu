/* CUDA forward of align / resample (DESIGN §1.1-1.2, §4): ONE kernel launch
 * for all K streams (up to RC_CUDA_MAX_STREAMS per launch; more are launched
 * in chunks), on the context's stream, no host allocation and no
 * synchronisation except the read-back of the check record in checked mode
 * (docs/cuda.md). One-stream launches with the default options and int64 ns
 * times may take the wide path (small launches, one kernel), the split
 * path (many targets: a kernel that resolves the targets into the
 * workspace, then one that moves the channels) or, on sm_90 and later, the
 * row path (many targets on rows that fit shared memory: one block per
 * row): align_wide_cuda.cu, align_split_cuda.cu, align_row_cuda.cu; every
 * other launch takes the warp path (align_warp_cuda.cu). This file plans
 * each launch (its path, channels per access, targets per warp, blocks)
 * and launches it. */
#include "cuda/align_cuda.cuh"

namespace {

/* The rc_fastdiv (align_cuda.cuh) of d. */
rc_fastdiv rc_fastdiv_of(uint32_t d) {
  uint32_t l = 0;
  while (((uint64_t)1 << l) < d) l++;
  const uint32_t k = 31 + l;
  return {(((uint64_t)1 << k) + d - 1) / d, k};
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
  return rc_launch_warp(ctx, args, (int)blocks, c->stream, g.pdl, p->time_dtype,
                        K == 1 && args.s[0].simple, p->out.dtype);
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
