/* The setup and end of every CUDA voxelize call (voxel_cuda.cuh). */
#include "cuda/voxel_cuda.cuh"

namespace {

/* The INVALID_ARGUMENT message of the CPU path for offsets that failed the
 * device check (read back to the host). */
robocache_status offsets_message(robocache_ctx *ctx, const rc_voxel_problem *p) {
  const int64_t n = p->B + 1, st = p->offsets.strides[0];
  int64_t *h = (int64_t *)malloc((size_t)n * sizeof *h);
  if (!h) return rc_error(ctx, ROBOCACHE_OUT_OF_MEMORY, "voxelize (cuda): out of memory");
  cudaError_t e = cudaMemcpy2D(h, sizeof *h, p->offsets.data, (size_t)st * sizeof *h, sizeof *h,
                               (size_t)n, cudaMemcpyDeviceToHost);
  robocache_status s = e != cudaSuccess ? rc_cuda_error(ctx, e, "reading offsets back")
                                        : rc_voxel_check_offsets_host(ctx, h, 1, p->B, p->N);
  if (s == ROBOCACHE_OK)
    s = rc_error(ctx, ROBOCACHE_INTERNAL,
                 "voxelize (cuda): the device found bad offsets that "
                 "pass the host check");
  free(h);
  return s;
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

static_assert(sizeof(rc_voxel_counters) <= RC_CUDA_READBACK_BYTES, "read back in one piece");

robocache_status rc_voxel_cuda_end(robocache_ctx *ctx, const rc_voxel_problem *p, rc_voxel_call *c,
                                   robocache_status status) {
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
    rc_voxel_counters &h = c->read;
    cudaError_t e = rc_cuda_read_back(ctx, &h, c->counters, sizeof h, c->stream);
    if (e != cudaSuccess) {
      status = rc_cuda_error(ctx, e, "reading the voxelize counters back");
    } else {
      st->points_in = p->N;
      st->points_dropped_nonfinite = (int64_t)h.nonfinite;
      st->points_dropped_range = (int64_t)h.range;
      st->points_in_range = p->N - (int64_t)(h.nonfinite + h.range);
      st->voxels_nonempty = (int64_t)h.nonempty;
      st->points_dropped_max_points = (int64_t)h.dropped_max_points;
      st->voxels_dropped_max_voxels = (int64_t)h.dropped_voxels;
      st->points_dropped_max_voxels = (int64_t)h.dropped_voxel_points;
      if (h.bad_offsets) status = offsets_message(ctx, p);
    }
  }
  rc_cuda_device_restore(&c->guard);
  return status;
}
