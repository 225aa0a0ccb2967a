/* `robocache info` for point-cloud files (.bin, .pcd, .ply). */
#include "voxel_cli.h"

#include "commands.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* In-range points and non-empty voxels of pc under preset p (through a
 * downsample, which reports both). */
static void print_preset(robocache_ctx *ctx, const rc_pointcloud *pc,
                         const robocache_voxel_preset *p) {
  const int64_t ps[2] = {pc->n, pc->cols}, fs[1] = {2};
  float *out = malloc((size_t)(pc->n > 0 ? pc->n : 1) * (size_t)pc->cols * sizeof(float));
  int64_t offsets[2];
  robocache_tensor tp = {pc->points, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 2, ps, NULL};
  robocache_tensor to = {out, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 2, ps, NULL};
  robocache_tensor tf = {offsets, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 1, fs, NULL};
  robocache_voxel_stats st;
  robocache_status s = out ? robocache_voxel_downsample(ctx, &tp, NULL, p->voxel_size,
                                                        p->point_cloud_range, &to, &tf, &st)
                           : ROBOCACHE_OUT_OF_MEMORY;
  if (s == ROBOCACHE_OK) {
    printf("  %-19s %lld points in range, %lld non-empty voxels", p->name,
           (long long)st.points_in_range, (long long)st.voxels_nonempty);
    if (st.voxels_nonempty > p->max_voxels_test)
      printf(" (more than max_voxels %d)", (int)p->max_voxels_test);
    printf("\n");
  } else {
    printf("  %-19s %s\n", p->name, robocache_status_name(s));
  }
  free(out);
}

int rc_cli_pointcloud_info(const char *path) {
  rc_pointcloud pc;
  rc_io_err err = {0};
  robocache_status s = rc_pointcloud_read(path, RC_PC_FORMAT_AUTO, 0, &pc, &err);
  if (s != ROBOCACHE_OK) {
    rc_cli_error("info", "%s", err.msg);
    rc_pointcloud_free(&pc);
    return rc_cli_exit_code(s);
  }
  printf("%s: point cloud, format %s, %lld points", path, pc.format, (long long)pc.n);
  if (pc.dropped_nonfinite)
    printf(" (%lld in the file, %lld non-finite dropped)", (long long)pc.points_in_file,
           (long long)pc.dropped_nonfinite);
  if (pc.height > 1) printf(", organized %lld x %lld", (long long)pc.width, (long long)pc.height);
  printf(", %d columns\n", (int)pc.cols);
  for (int c = 0; c < pc.cols; c++) {
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < pc.n; i++) {
      double v = pc.points[i * pc.cols + c];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    printf("  %-19s %.6g .. %.6g\n", pc.names[c], lo, hi);
  }
  robocache_ctx *ctx = NULL;
  if (robocache_ctx_create(&ctx) == ROBOCACHE_OK) {
    for (int32_t i = 0; robocache_voxel_preset_at(i); i++)
      print_preset(ctx, &pc, robocache_voxel_preset_at(i));
    robocache_ctx_free(ctx);
  }
  rc_pointcloud_free(&pc);
  return RC_EXIT_OK;
}
