/* `robocache info` of an HDF5 file written by `robocache voxelize` (layout
 * robocache-voxels/1, voxel_io.h). */
#include "voxel_cli.h"

#include "util.h"
#include "voxel_io.h"

#include <stdio.h>

#ifdef ROBOCACHE_HAVE_HDF5
static void print_names(const char *label, char *const *names, int64_t n) {
  printf("  %-12s", label);
  char e[1024];
  for (int64_t i = 0; i < n; i++) printf(" '%s'", rc_cli_escape(names[i], e, sizeof e));
  printf("\n");
}

static void print_summary(const char *path, const rc_io_voxel_summary *s) {
  char ver[256], m[256], p[256];
  printf("%s: format hdf5 (robocache %s voxelize output), mode %s", path,
         s->version ? rc_cli_escape(s->version, ver, sizeof ver) : "?",
         rc_cli_escape(s->mode, m, sizeof m));
  if (s->preset[0]) printf(", preset %s", rc_cli_escape(s->preset, p, sizeof p));
  printf(", %lld cloud(s)\n", (long long)s->num_sources);
  print_names("sources", s->sources, s->num_sources);
  print_names("columns", s->columns, s->num_columns);
  const float *v = s->voxel_size, *r = s->point_cloud_range;
  printf("  voxel_size   %g %g %g m\n", (double)v[0], (double)v[1], (double)v[2]);
  if (s->has_range)
    printf("  point_cloud_range %g %g %g %g %g %g m\n", (double)r[0], (double)r[1], (double)r[2],
           (double)r[3], (double)r[4], (double)r[5]);
  else
    printf("  point_cloud_range none (PCL VoxelGrid grid from each cloud's minimum)\n");
  for (int32_t i = 0; i < s->num_datasets; i++) {
    const rc_io_h5_dataset *d = &s->datasets[i];
    printf("  /%-11s [", d->name);
    for (int32_t k = 0; k < d->ndim; k++) printf("%s%lld", k ? ", " : "", (long long)d->shape[k]);
    printf("] %s\n", d->dtype);
  }
  const robocache_voxel_stats *st = &s->stats;
  printf("  points       %lld, in range %lld, non-empty voxels %lld\n", (long long)st->points_in,
         (long long)st->points_in_range, (long long)st->voxels_nonempty);
  printf("  dropped      out of range %lld, non-finite %lld, max_points %lld points, "
         "max_voxels %lld voxels (%lld points)\n",
         (long long)st->points_dropped_range, (long long)st->points_dropped_nonfinite,
         (long long)st->points_dropped_max_points, (long long)st->voxels_dropped_max_voxels,
         (long long)st->points_dropped_max_voxels);
}

int rc_cli_voxel_file_info(const char *path) {
  rc_io_voxel_summary s;
  rc_io_err err = {0};
  robocache_status st = rc_io_read_voxel_summary(path, &s, &err);
  if (st == ROBOCACHE_OK)
    print_summary(path, &s);
  else
    rc_cli_error("info", "%s", err.msg);
  rc_io_voxel_summary_free(&s);
  return rc_cli_exit_code(st);
}
#endif
