/* robocache voxelize — point-cloud files to dense grids, hard voxels or a
 * downsampled cloud (DESIGN §1.3), written as HDF5 or .npy. */
#define _GNU_SOURCE
#include "atomic_file.h"
#include "commands.h"
#include "pointcloud.h"
#include "util.h"
#include "voxel_cli.h"
#include "voxel_io.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char rc_voxelize_help[] =
    "Usage: robocache voxelize [OPTIONS] FILE...\n"
    "\n"
    "Voxelizes point clouds (KITTI .bin, nuScenes .pcd.bin, PCD ascii/binary/\n"
    "binary_compressed, PLY ascii/binary_little_endian). Several FILEs form one\n"
    "batch (same number of columns). Prints in-range points, non-empty voxels and\n"
    "what each cap dropped; writes the result with -o.\n"
    "\n"
    "  -p, --preset NAME       second-kitti | pointpillars-kitti | centerpoint-nus:\n"
    "                          voxel_size, point_cloud_range, max_points, max_voxels\n"
    "  -s, --voxel-size X,Y,Z  voxel size in metres (overrides the preset)\n"
    "  -r, --range X0,Y0,Z0,X1,Y1,Z1  point_cloud_range in metres (overrides)\n"
    "  -P, --max-points N      max_points_per_voxel (hard)\n"
    "  -M, --max-voxels N      max_voxels per cloud (hard; preset: the test value)\n"
    "      --train             take the preset's training max_voxels\n"
    "  -m, --mode MODE         count|occupancy|sum|mean|max (dense [B,F,Z,Y,X]),\n"
    "                          hard (mmcv hard voxelization, default),\n"
    "                          downsample (mean per voxel; without a range: PCL\n"
    "                          VoxelGrid grid starting at each cloud's minimum)\n"
    "  -o, --output PATH       .h5/.hdf5 (any mode) or .npy (dense grid, or the\n"
    "                          downsampled points)\n"
    "  -c, --columns N         float32 columns of .bin files (default: 5 for\n"
    "                          *.pcd.bin, else 4)\n"
    "  -t, --threads N         CPU threads (default: all cores)\n"
    "      --repeat N          call the operation N times and print the median,\n"
    "                          p10 and p90 time of one call (benchmarks)\n"
    "      --reference         use the slow reference backend\n"
    "  -h, --help              this help\n"
    "\n"
    "Exit codes: 0 ok, 1 data error, 2 usage error, 3 I/O error.\n";

static const char *const rc_mode_names[] = {"count", "occupancy", "sum",       "mean",
                                            "max",   "hard",      "downsample"};

typedef struct vox_args {
  const robocache_voxel_preset *preset;
  float voxel_size[3], range[6];
  int have_size, have_range, train, mode, reference, threads, repeat;
  long max_points, max_voxels;
  int32_t columns;
  const char *output;
} vox_args;

/* Parses n comma-separated floats; 0 on success. */
static int parse_floats(const char *s, int n, float *out) {
  for (int i = 0; i < n; i++) {
    char *end;
    out[i] = strtof(s, &end);
    if (end == s || *end != (i + 1 < n ? ',' : '\0')) return -1;
    s = end + 1;
  }
  return 0;
}

static int parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

static int parse_args(int argc, char **argv, vox_args *a) {
  enum { OPT_TRAIN = 256, OPT_REFERENCE, OPT_REPEAT };
  static const struct option opts[] = {{"preset", required_argument, NULL, 'p'},
                                       {"voxel-size", required_argument, NULL, 's'},
                                       {"range", required_argument, NULL, 'r'},
                                       {"max-points", required_argument, NULL, 'P'},
                                       {"max-voxels", required_argument, NULL, 'M'},
                                       {"train", no_argument, NULL, OPT_TRAIN},
                                       {"mode", required_argument, NULL, 'm'},
                                       {"output", required_argument, NULL, 'o'},
                                       {"columns", required_argument, NULL, 'c'},
                                       {"threads", required_argument, NULL, 't'},
                                       {"reference", no_argument, NULL, OPT_REFERENCE},
                                       {"repeat", required_argument, NULL, OPT_REPEAT},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *cmd = "voxelize";
  long v;
  int c;
  a->mode = RC_CLI_MODE_HARD;
  a->max_points = a->max_voxels = -1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":p:s:r:P:M:m:o:c:t:h", opts, NULL)) != -1) {
    switch (c) {
    case 'p':
      a->preset = robocache_voxel_preset_find(optarg);
      if (!a->preset)
        return rc_cli_usage_error(
            cmd, "--preset '%s': expected second-kitti|pointpillars-kitti|centerpoint-nus", optarg);
      break;
    case 's':
      if (parse_floats(optarg, 3, a->voxel_size))
        return rc_cli_usage_error(cmd, "--voxel-size '%s': expected X,Y,Z", optarg);
      a->have_size = 1;
      break;
    case 'r':
      if (parse_floats(optarg, 6, a->range))
        return rc_cli_usage_error(cmd, "--range '%s': expected X0,Y0,Z0,X1,Y1,Z1", optarg);
      a->have_range = 1;
      break;
    case 'P':
    case 'M':
      if (parse_long(optarg, 1, INT32_MAX, &v))
        return rc_cli_usage_error(cmd, "--max-%s '%s': expected a positive integer",
                                  c == 'P' ? "points" : "voxels", optarg);
      *(c == 'P' ? &a->max_points : &a->max_voxels) = v;
      break;
    case OPT_TRAIN: a->train = 1; break;
    case OPT_REFERENCE: a->reference = 1; break;
    case 'm':
      a->mode = -1;
      for (int i = 0; i < 7; i++)
        if (strcmp(optarg, rc_mode_names[i]) == 0) a->mode = i;
      if (a->mode < 0)
        return rc_cli_usage_error(
            cmd, "--mode '%s': expected count|occupancy|sum|mean|max|hard|downsample", optarg);
      break;
    case 'o': a->output = optarg; break;
    case 'c':
      if (parse_long(optarg, 3, RC_PC_MAX_COLS, &v))
        return rc_cli_usage_error(cmd, "--columns '%s': expected 3..%d", optarg, RC_PC_MAX_COLS);
      a->columns = (int32_t)v;
      break;
    case 't':
      if (parse_long(optarg, 0, RC_CLI_MAX_THREADS, &v))
        return rc_cli_usage_error(cmd, "--threads '%s': expected 0..%d", optarg,
                                  RC_CLI_MAX_THREADS);
      a->threads = (int)v;
      break;
    case OPT_REPEAT:
      if (parse_long(optarg, 1, 100000, &v))
        return rc_cli_usage_error(cmd, "--repeat '%s': expected 1..100000", optarg);
      a->repeat = (int)v;
      break;
    case 'h': fputs(rc_voxelize_help, stdout); return -1;
    case ':': return rc_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
    default: return rc_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) return rc_cli_usage_error(cmd, "give at least one FILE");
  if (a->preset) {
    if (!a->have_size) memcpy(a->voxel_size, a->preset->voxel_size, sizeof a->voxel_size);
    if (!a->have_range) memcpy(a->range, a->preset->point_cloud_range, sizeof a->range);
    if (a->max_points < 0) a->max_points = a->preset->max_points_per_voxel;
    if (a->max_voxels < 0)
      a->max_voxels = a->train ? a->preset->max_voxels_train : a->preset->max_voxels_test;
    a->have_size = a->have_range = 1;
  }
  if (!a->have_size) return rc_cli_usage_error(cmd, "give --preset or --voxel-size");
  if (!a->have_range && a->mode != RC_CLI_MODE_DOWNSAMPLE)
    return rc_cli_usage_error(cmd, "mode %s needs --preset or --range", rc_mode_names[a->mode]);
  if (a->mode == RC_CLI_MODE_HARD && (a->max_points < 0 || a->max_voxels < 0))
    return rc_cli_usage_error(cmd, "mode hard needs --max-points and --max-voxels (or --preset)");
  if (a->output) {
    const char *dot = strrchr(a->output, '.');
    int npy = dot && strcmp(dot, ".npy") == 0;
    int h5 = dot && (strcmp(dot, ".h5") == 0 || strcmp(dot, ".hdf5") == 0);
    if (!npy && !h5)
      return rc_cli_usage_error(cmd, "--output '%s': name it .h5, .hdf5 or .npy", a->output);
    if (npy && a->mode == RC_CLI_MODE_HARD)
      return rc_cli_usage_error(cmd, "mode hard has four arrays: write .h5, not .npy");
  }
  return 0;
}

static void print_summary(const vox_args *a, const rc_cli_batch *batch,
                          const rc_cli_voxel_job *job) {
  const robocache_voxel_stats *st = &job->stats;
  printf("mode %s, voxel_size %g %g %g m", rc_mode_names[a->mode], (double)a->voxel_size[0],
         (double)a->voxel_size[1], (double)a->voxel_size[2]);
  if (a->have_range) {
    int64_t g[3];
    robocache_voxel_grid_size(NULL, a->voxel_size, a->range, g);
    printf(", point_cloud_range %g %g %g %g %g %g m, grid %lld x %lld x %lld (x, y, z)",
           (double)a->range[0], (double)a->range[1], (double)a->range[2], (double)a->range[3],
           (double)a->range[4], (double)a->range[5], (long long)g[0], (long long)g[1],
           (long long)g[2]);
  } else {
    printf(", PCL VoxelGrid grid from each cloud's minimum");
  }
  printf("\n");
  printf("  points                 %lld in %lld file(s)\n", (long long)st->points_in,
         (long long)batch->B);
  printf("  in-range points        %lld\n", (long long)st->points_in_range);
  printf("  non-empty voxels       %lld\n", (long long)st->voxels_nonempty);
  printf("  dropped, out of range  %lld points\n", (long long)st->points_dropped_range);
  printf("  dropped, non-finite    %lld points\n", (long long)st->points_dropped_nonfinite);
  if (a->repeat > 0)
    printf("  time per call          median %.3f ms, p10 %.3f ms, p90 %.3f ms (%d calls)\n",
           job->time_ms[0], job->time_ms[1], job->time_ms[2], a->repeat);
  if (a->mode != RC_CLI_MODE_HARD) return;
  printf("  dropped, max_voxels    %lld voxels, %lld points (max_voxels %ld per cloud)\n",
         (long long)st->voxels_dropped_max_voxels, (long long)st->points_dropped_max_voxels,
         a->max_voxels);
  printf("  dropped, max_points    %lld points (max_points_per_voxel %ld)\n",
         (long long)st->points_dropped_max_points, a->max_points);
  for (int64_t b = 0; b < batch->B; b++)
    printf("  voxels kept            %d  %s\n", (int)job->num_voxels[b], batch->paths[b]);
}

int rc_cmd_voxelize(int argc, char **argv) {
  vox_args a = {0};
  int code = parse_args(argc, argv, &a);
  if (code) return code < 0 ? RC_EXIT_OK : code;
  rc_io_err err = {0};
  if (a.output && rc_io_check_output(a.output, (const char *const *)argv + optind, argc - optind,
                                     &err) != ROBOCACHE_OK) {
    rc_cli_error("voxelize", "%s", err.msg);
    return RC_EXIT_IO;
  }
  rc_cli_batch batch;
  code = rc_cli_batch_read(argc - optind, argv + optind, a.columns, &batch);
  if (code) return code;
  robocache_ctx *ctx = NULL;
  if (robocache_ctx_create(&ctx) != ROBOCACHE_OK) {
    rc_cli_batch_free(&batch);
    rc_cli_error("voxelize", "out of memory");
    return RC_EXIT_DATA;
  }
  if (robocache_ctx_set_num_threads(ctx, a.threads) != ROBOCACHE_OK) {
    rc_cli_error("voxelize", "%s", robocache_ctx_error_message(ctx));
    robocache_ctx_free(ctx);
    rc_cli_batch_free(&batch);
    return RC_EXIT_USAGE;
  }
  robocache_ctx_set_force_reference(ctx, a.reference);
  rc_cli_voxel_job job = {.ctx = ctx,
                          .batch = &batch,
                          .mode = a.mode,
                          .voxel_size = a.voxel_size,
                          .range = a.have_range ? a.range : NULL,
                          .max_points = (int32_t)a.max_points,
                          .max_voxels = (int32_t)a.max_voxels,
                          .repeat = a.repeat};
  code = rc_cli_voxel_run(&job);
  if (code == RC_EXIT_OK) {
    print_summary(&a, &batch, &job);
    if (a.output) {
      char *cmdline = rc_cli_command_line(argc, argv);
      job.output = a.output;
      job.command_line = cmdline;
      job.mode_name = rc_mode_names[a.mode];
      job.preset = a.preset ? a.preset->name : NULL;
      code = rc_cli_voxel_write(&job);
      if (code == RC_EXIT_OK) printf("wrote %s\n", a.output);
      free(cmdline);
    }
  }
  rc_cli_voxel_job_free(&job);
  robocache_ctx_free(ctx);
  rc_cli_batch_free(&batch);
  return code;
}
