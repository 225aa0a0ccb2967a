/* robocache info — what is in a recording or a robocache HDF5 file. */
#define _GNU_SOURCE
#include "commands.h"
#include "reader.h"
#include "timing.h"
#include "util.h"
#include "voxel_cli.h"
#ifdef ROBOCACHE_HAVE_HDF5
#include "hdf5_io.h"
#include "voxel_io.h"
#endif

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char rc_info_help[] =
    "Usage: robocache info [--format F] [--time-column C] [--time-unit U] FILE...\n"
    "\n"
    "For each FILE (a euroc, tum, timestamps or csv recording, format auto-detected,\n"
    "or an HDF5 file written by 'robocache align'), prints on stdout: streams,\n"
    "rows, time span, median rate, jitter (standard deviation of the time steps),\n"
    "the 3 largest gaps with their rows and times, and non-increasing steps.\n"
    "A point cloud (.bin, .pcd, .ply) gets its format, points, column ranges and\n"
    "the in-range points and non-empty voxels of each voxelize preset.\n"
    "An HDF5 file written by 'robocache voxelize' gets its mode, sources,\n"
    "voxel_size, point_cloud_range, arrays (shape, dtype) and point/voxel counts.\n"
    "Rows are counted from 0 over the data rows; 'line' is the line in the file.\n"
    "\n"
    "  -f, --format F          euroc|tum|timestamps|csv (default auto-detected)\n"
    "  -c, --time-column C     time column by name or 0-based index\n"
    "  -u, --time-unit U       ns|us|ms|s|auto\n"
    "  -h, --help              this help\n"
    "\n"
    "Exit codes: 0 ok, 1 data error in some file, 2 usage error, 3 I/O error.\n";

/* Prints the timing block of one time series; lines may be NULL. */
static void print_timing(const int64_t *t, const int64_t *lines, int64_t n) {
  rc_cli_timing tm;
  char a[32], b[32];
  if (rc_cli_timing_compute(t, n, &tm) < 0) return;
  rc_cli_format_ns(tm.first_ns, a, sizeof a);
  rc_cli_format_ns(tm.last_ns, b, sizeof b);
  printf("  time span    %s .. %s s (%.6f s)\n", a, b,
         ((double)tm.last_ns - (double)tm.first_ns) * 1e-9);
  if (n < 2) return;
  printf("  rate         %.3f Hz median (dt %.6f ms); jitter %.6f ms (std of dt); "
         "dt min %.6f ms, max %.6f ms\n",
         tm.median_dt_ns > 0 ? 1e9 / tm.median_dt_ns : 0.0, tm.median_dt_ns * 1e-6,
         tm.jitter_ns * 1e-6, (double)tm.min_dt_ns * 1e-6, (double)tm.max_dt_ns * 1e-6);
  for (int i = 0; i < tm.n_gaps; i++) {
    const rc_cli_gap *g = &tm.gaps[i];
    rc_cli_format_ns(t[g->row], a, sizeof a);
    printf("  gap %d        %.6f ms after row %lld (t = %s s", i + 1, (double)g->dt_ns * 1e-6,
           (long long)g->row, a);
    if (lines) printf(", line %lld", (long long)lines[g->row]);
    printf(")\n");
  }
  printf("  non-increasing steps  %lld", (long long)tm.non_increasing);
  if (tm.non_increasing) {
    int64_t r = tm.first_non_increasing;
    printf(" (first after row %lld", (long long)r);
    if (lines) printf(", line %lld", (long long)lines[r + 1]);
    printf(")");
  }
  printf("\n");
}

static int info_text(const char *path, rc_io_read_spec spec) {
  rc_io_table tab;
  rc_io_err err = {0};
  spec.path = path;
  spec.nonfinite = RC_IO_NONFINITE_DROP; /* counted and shown */
  robocache_status s = rc_io_read(&spec, &tab, &err);
  if (s != ROBOCACHE_OK) {
    rc_cli_error("info", "%s", err.msg);
  } else {
    printf("%s: format %s, 1 stream, %lld rows, %d value columns", path,
           rc_io_format_name(tab.format), (long long)tab.rows, (int)tab.cols);
    if (tab.dropped_nonfinite)
      printf(" (%lld rows with NaN or infinite values left out)", (long long)tab.dropped_nonfinite);
    char e[1024];
    printf("\n  time column  '%s' (%s)\n", rc_cli_escape(tab.time_name, e, sizeof e),
           rc_io_time_unit_name(tab.time_unit));
    if (tab.cols > 0) {
      printf("  columns     ");
      for (int32_t j = 0; j < tab.cols; j++)
        printf(" '%s'", rc_cli_escape(tab.names[j], e, sizeof e));
      printf("\n");
    }
    print_timing(tab.times_ns, tab.lines, tab.rows);
  }
  rc_io_table_free(&tab);
  return rc_cli_exit_code(s);
}

static int info_hdf5(const char *path) {
#ifdef ROBOCACHE_HAVE_HDF5
  char *layout;
  rc_io_err err = {0};
  robocache_status s = rc_io_read_hdf5_layout(path, &layout, &err);
  if (s != ROBOCACHE_OK) {
    rc_cli_error("info", "%s", err.msg);
    return rc_cli_exit_code(s);
  }
  const int voxels = layout && strcmp(layout, RC_IO_VOXEL_LAYOUT) == 0;
  free(layout);
  if (voxels) return rc_cli_voxel_file_info(path);
  rc_io_h5_summary sum;
  s = rc_io_read_hdf5_summary(path, &sum, &err);
  if (s != ROBOCACHE_OK) {
    rc_cli_error("info", "%s", err.msg);
  } else {
    char v[256];
    printf("%s: format hdf5 (robocache %s align output), %d streams, %lld rows\n", path,
           sum.version ? rc_cli_escape(sum.version, v, sizeof v) : "?", (int)sum.K,
           (long long)sum.T);
    char t[1024];
    printf("  target       %s\n", sum.target ? rc_cli_escape(sum.target, t, sizeof t) : "?");
    char e[1024];
    for (int32_t k = 0; k < sum.K; k++)
      printf("  stream %-12s obs [%lld, %lld] float32, valid %lld / %lld\n",
             rc_cli_escape(sum.names[k], e, sizeof e), (long long)sum.T, (long long)sum.cols[k],
             (long long)sum.valid_count[k], (long long)sum.T);
    print_timing(sum.timestamps_ns, NULL, sum.T);
  }
  rc_io_h5_summary_free(&sum);
  return rc_cli_exit_code(s);
#else
  rc_cli_error("info", "%s: an HDF5 file, but this robocache was built without HDF5", path);
  return RC_EXIT_IO;
#endif
}

static int info_file(const char *path, const rc_io_read_spec *spec) {
  int format = spec->format;
  if (format == RC_IO_FORMAT_AUTO && rc_pointcloud_is_file(path))
    return rc_cli_pointcloud_info(path);
  if (format == RC_IO_FORMAT_AUTO && rc_io_is_hdf5(path)) format = RC_IO_FORMAT_HDF5;
  if (format == RC_IO_FORMAT_HDF5) return info_hdf5(path);
  rc_io_read_spec one = *spec; /* text formats are detected from the file read once */
  one.format = format;
  return info_text(path, one);
}

int rc_cmd_info(int argc, char **argv) {
  static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                       {"time-column", required_argument, NULL, 'c'},
                                       {"time-unit", required_argument, NULL, 'u'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  rc_io_read_spec spec = {.time_unit = RC_IO_UNIT_AUTO};
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":f:c:u:h", opts, NULL)) != -1) {
    switch (c) {
    case 'f':
      spec.format = rc_io_format_from_name(optarg);
      if (spec.format < 0)
        return rc_cli_usage_error("info", "--format '%s': expected euroc|tum|timestamps|csv|hdf5",
                                  optarg);
      break;
    case 'c': spec.time_column = optarg; break;
    case 'u':
      spec.time_unit = rc_io_time_unit_from_name(optarg);
      if (spec.time_unit < -1)
        return rc_cli_usage_error("info", "--time-unit '%s': expected ns|us|ms|s|auto", optarg);
      break;
    case 'h': fputs(rc_info_help, stdout); return RC_EXIT_OK;
    case ':': return rc_cli_usage_error("info", "option '%s' needs a value", argv[optind - 1]);
    default: return rc_cli_usage_error("info", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) return rc_cli_usage_error("info", "give at least one FILE");
  int worst = RC_EXIT_OK;
  for (int i = optind; i < argc; i++) {
    int code = info_file(argv[i], &spec);
    if (code > worst) worst = code;
  }
  return worst;
}
