/* robocache align — several recordings onto one time grid, written to HDF5. */
#define _GNU_SOURCE
#include "align_job.h"
#include "atomic_file.h"
#include "commands.h"
#include "util.h"
#ifdef ROBOCACHE_HAVE_HDF5
#include "hdf5_io.h"
#endif

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char rc_align_help[] =
    "Usage: robocache align --stream NAME=FILE[,KEY=VALUE...] [--stream ...]\n"
    "                       (--rate HZ [--span overlap|union] | --target NAME |\n"
    "                        --target-file FILE[,KEY=VALUE...]) [-o OUT.h5] [--quiet]\n"
    "\n"
    "Resamples every stream onto one time grid and writes an HDF5 file\n"
    "(/data/demo_0/obs/NAME float32 [T,D], timestamps int64 ns [T], valid uint8 [T,K]).\n"
    "\n"
    "  -s, --stream NAME=FILE[,KEY=VALUE...]  an input stream (repeat for each)\n"
    "  -r, --rate HZ           uniform grid at HZ over the streams' overlap\n"
    "      --span overlap|union  time span of the --rate grid (default overlap)\n"
    "  -t, --target NAME       the times of stream NAME (after its offset)\n"
    "  -T, --target-file FILE[,format=F,time-column=C,time-unit=U]\n"
    "                          the times of a file (e.g. a camera timestamp list)\n"
    "  -o, --output FILE       HDF5 output (without it, only the summary)\n"
    "  -j, --threads N         CPU threads (default: all cores)\n"
    "  -q, --quiet             no summary on stderr\n"
    "  -h, --help              this help\n"
    "\n"
    "Stream keys:\n"
    "  format=euroc|tum|timestamps|csv|auto  input format (default auto-detected)\n"
    "  columns=A:B:C           value columns by name or 0-based index (default all)\n"
    "  time-column=C           time column (default column 0)\n"
    "  time-unit=ns|us|ms|s|auto  unit of the time column (csv/timestamps)\n"
    "  nonfinite=error|drop    NaN/inf values: an error (default) or drop the row\n"
    "  method=linear|nearest|previous|next|slerp  (default linear)\n"
    "  extrapolate=clamp|fill|extrapolate|error    outside the stream (default clamp)\n"
    "  fill=VALUE              value written by extrapolate=fill (default nan)\n"
    "  max-gap=DURATION        targets inside a longer gap are invalid (e.g. 20ms)\n"
    "  tolerance=DURATION      nearest/previous/next: max distance to the sample\n"
    "  offset=DURATION         added to the stream's times (e.g. -5.2ms)\n"
    "  quat-order=xyzw|wxyz    quaternion layout for slerp (default xyzw)\n"
    "\n"
    "Example:\n"
    "  robocache align --stream imu=imu0.csv,format=euroc,max-gap=20ms \\\n"
    "    --stream position=gt.txt,format=tum,columns=tx:ty:tz \\\n"
    "    --stream orientation=gt.txt,format=tum,columns=qx:qy:qz:qw,method=slerp \\\n"
    "    --rate 50 -o aligned.h5\n"
    "\n"
    "Exit codes: 0 ok, 1 data or runtime error, 2 usage error, 3 I/O error.\n";

static int add_stream(align_job *job, const char *arg) {
  rc_cli_source *grown = realloc(job->src, (size_t)(job->K + 1) * sizeof *grown);
  if (!grown) return rc_cli_exit_code(ROBOCACHE_OUT_OF_MEMORY);
  job->src = grown;
  char msg[512];
  if (rc_cli_parse_source(arg, 1, &job->src[job->K++], msg, sizeof msg) < 0)
    return rc_cli_usage_error("align", "--stream %s", msg);
  for (int32_t k = 0; k + 1 < job->K; k++)
    if (strcmp(job->src[k].name, job->src[job->K - 1].name) == 0)
      return rc_cli_usage_error("align", "--stream: name '%s' used twice", job->src[k].name);
  return RC_EXIT_OK;
}

static int parse_args(int argc, char **argv, align_job *job, int *help) {
  static const struct option opts[] = {{"stream", required_argument, NULL, 's'},
                                       {"rate", required_argument, NULL, 'r'},
                                       {"span", required_argument, NULL, 'S'},
                                       {"target", required_argument, NULL, 't'},
                                       {"target-file", required_argument, NULL, 'T'},
                                       {"output", required_argument, NULL, 'o'},
                                       {"threads", required_argument, NULL, 'j'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int c, code = RC_EXIT_OK, targets = 0, span_given = 0;
  char *end, msg[512];
  opterr = 0;
  while (code == RC_EXIT_OK && (c = getopt_long(argc, argv, ":s:r:t:T:o:j:qh", opts, NULL)) != -1) {
    switch (c) {
    case 's': code = add_stream(job, optarg); break;
    case 'r':
      job->rate_hz = strtod(optarg, &end);
      if (end == optarg || *end || !(job->rate_hz > 0) || !isfinite(job->rate_hz))
        code = rc_cli_usage_error("align", "--rate '%s': expected a positive number (Hz)", optarg);
      targets++;
      break;
    case 'S':
      span_given = 1;
      if (strcmp(optarg, "overlap") == 0)
        job->span = ROBOCACHE_SPAN_OVERLAP;
      else if (strcmp(optarg, "union") == 0)
        job->span = ROBOCACHE_SPAN_UNION;
      else
        code = rc_cli_usage_error("align", "--span '%s': expected overlap or union", optarg);
      break;
    case 't':
      job->target_stream = optarg;
      targets++;
      break;
    case 'T':
      rc_cli_source_free(&job->target_file); /* a repeated --target-file is refused below */
      if (rc_cli_parse_source(optarg, 0, &job->target_file, msg, sizeof msg) < 0)
        code = rc_cli_usage_error("align", "--target-file %s", msg);
      targets++;
      break;
    case 'o': job->output = optarg; break;
    case 'j': {
      long n = strtol(optarg, &end, 10);
      if (end == optarg || *end || n < 0 || n > RC_CLI_MAX_THREADS)
        code = rc_cli_usage_error("align", "--threads '%s': expected 0..%d", optarg,
                                  RC_CLI_MAX_THREADS);
      job->threads = (int)n;
      break;
    }
    case 'q': job->quiet = 1; break;
    case 'h': *help = 1; return RC_EXIT_OK;
    case ':':
      code = rc_cli_usage_error("align", "option '%s' needs a value", argv[optind - 1]);
      break;
    default: code = rc_cli_usage_error("align", "unknown option '%s'", argv[optind - 1]); break;
    }
  }
  if (code != RC_EXIT_OK) return code;
  if (optind < argc) return rc_cli_usage_error("align", "unexpected argument '%s'", argv[optind]);
  if (job->K == 0) return rc_cli_usage_error("align", "give at least one --stream");
  if (targets != 1)
    return rc_cli_usage_error("align", "give exactly one of --rate, --target, --target-file");
  if (span_given && job->rate_hz <= 0)
    return rc_cli_usage_error("align", "--span applies to --rate only");
  return RC_EXIT_OK;
}

/* Reads every stream and describes it as [1,S,D] float64 values and [1,S]
 * int64 ns times. */
static int load_streams(align_job *job) {
  job->tab = calloc((size_t)job->K, sizeof *job->tab);
  job->streams = calloc((size_t)job->K, sizeof *job->streams);
  job->tensors = calloc((size_t)job->K * 2, sizeof *job->tensors);
  job->shapes = calloc((size_t)job->K * 2, sizeof *job->shapes);
  if (!job->tab || !job->streams || !job->tensors || !job->shapes)
    return rc_cli_exit_code(ROBOCACHE_OUT_OF_MEMORY);
  for (int32_t k = 0; k < job->K; k++) {
    rc_io_err err = {0};
    rc_io_table *tab = &job->tab[k];
    robocache_status s = rc_io_read(&job->src[k].read, tab, &err);
    if (s != ROBOCACHE_OK) {
      rc_cli_error("align", "stream '%s': %s", job->src[k].name, err.msg);
      return rc_cli_exit_code(s);
    }
    if (tab->cols == 0) {
      rc_cli_error("align",
                   "stream '%s': %s has no value columns (format %s); use it with "
                   "--target-file",
                   job->src[k].name, job->src[k].read.path, rc_io_format_name(tab->format));
      return RC_EXIT_DATA;
    }
    int64_t shifted[2], off = job->src[k].options.time_offset_ns;
    if (__builtin_add_overflow(tab->times_ns[0], off, &shifted[0]) ||
        __builtin_add_overflow(tab->times_ns[tab->rows - 1], off, &shifted[1])) {
      rc_cli_error("align",
                   "stream '%s': offset %lld ns moves its times (%lld .. %lld ns) outside the "
                   "int64 nanosecond range",
                   job->src[k].name, (long long)off, (long long)tab->times_ns[0],
                   (long long)tab->times_ns[tab->rows - 1]);
      return RC_EXIT_DATA;
    }
    if (tab->dropped_nonfinite > 0 && !job->quiet)
      fprintf(stderr, "robocache align: stream '%s': %lld rows with non-finite values dropped\n",
              job->src[k].name, (long long)tab->dropped_nonfinite);
    int64_t *vs = job->shapes[2 * k], *ts = job->shapes[2 * k + 1];
    vs[0] = 1, vs[1] = tab->rows, vs[2] = tab->cols;
    ts[0] = 1, ts[1] = tab->rows;
    job->tensors[2 * k] =
        (robocache_tensor){tab->values, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F64, 3, vs, NULL};
    job->tensors[2 * k + 1] = (robocache_tensor){
        tab->times_ns, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 2, ts, NULL};
    job->streams[k] = (robocache_stream){job->src[k].name, &job->tensors[2 * k],
                                         &job->tensors[2 * k + 1], NULL, job->src[k].options};
    job->total_cols += tab->cols;
  }
  return RC_EXIT_OK;
}

static int run_align(robocache_ctx *ctx, align_job *job) {
  job->out = malloc((size_t)(job->T * job->total_cols) * sizeof *job->out);
  job->valid = malloc((size_t)(job->T * job->K));
  if (!job->out || !job->valid) return rc_cli_exit_code(ROBOCACHE_OUT_OF_MEMORY);
  int64_t tshape[2] = {1, job->T}, oshape[3] = {1, job->T, job->total_cols},
          vshape[3] = {1, job->T, job->K};
  robocache_tensor target = {job->target, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_I64, 2, tshape,
                             NULL};
  robocache_tensor out = {job->out, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_F32, 3, oshape, NULL};
  robocache_tensor valid = {job->valid, ROBOCACHE_DEVICE_CPU, 0, ROBOCACHE_DTYPE_U8, 3, vshape,
                            NULL};
  robocache_status s = robocache_ctx_set_num_threads(ctx, job->threads);
  if (s == ROBOCACHE_OK)
    s = robocache_align(ctx, job->streams, job->K, &target, NULL, &out, &valid);
  if (s != ROBOCACHE_OK) rc_cli_error("align", "%s", robocache_ctx_error_message(ctx));
  return rc_cli_exit_code(s);
}

static int write_output(const align_job *job) {
#ifdef ROBOCACHE_HAVE_HDF5
  rc_io_h5_stream *hs = calloc((size_t)job->K, sizeof *hs);
  if (!hs) return rc_cli_exit_code(ROBOCACHE_OUT_OF_MEMORY);
  for (int32_t k = 0; k < job->K; k++)
    hs[k] = (rc_io_h5_stream){job->src[k].name,
                              job->tab[k].cols,
                              &job->src[k].options,
                              job->src[k].read.path,
                              rc_io_format_name(job->tab[k].format),
                              (const char *const *)job->tab[k].names,
                              job->tab[k].time_name};
  rc_io_h5_output o = {
      job->output, job->command_line, job->target_desc, job->T,    job->target, job->K,
      hs,          job->total_cols,   job->out,         job->valid};
  rc_io_err err = {0};
  robocache_status s = rc_io_write_hdf5(&o, &err);
  free(hs);
  if (s != ROBOCACHE_OK)
    rc_cli_error("align", "%s", err.msg);
  else if (!job->quiet)
    fprintf(stderr, "robocache align: wrote %s\n", job->output);
  return rc_cli_exit_code(s);
#else
  rc_cli_error("align", "cannot write '%s': this robocache was built without HDF5", job->output);
  return RC_EXIT_IO;
#endif
}

static void free_job(align_job *job) {
  for (int32_t k = 0; k < job->K; k++) rc_cli_source_free(&job->src[k]);
  for (int32_t k = 0; job->tab && k < job->K; k++) rc_io_table_free(&job->tab[k]);
  rc_cli_source_free(&job->target_file);
  free(job->src);
  free(job->tab);
  free(job->streams);
  free(job->tensors);
  free(job->shapes);
  free(job->target);
  free(job->out);
  free(job->valid);
  free(job->command_line);
}

/* -o must not be an input, nor anything but a regular file. */
static int check_output(const align_job *job) {
  const char **inputs = calloc((size_t)job->K + 1, sizeof *inputs);
  if (!inputs) return rc_cli_exit_code(ROBOCACHE_OUT_OF_MEMORY);
  for (int32_t k = 0; k < job->K; k++) inputs[k] = job->src[k].read.path;
  inputs[job->K] = job->target_file.read.path;
  rc_io_err err = {0};
  robocache_status s = rc_io_check_output(job->output, inputs, job->K + 1, &err);
  free(inputs);
  if (s != ROBOCACHE_OK) rc_cli_error("align", "%s", err.msg);
  return rc_cli_exit_code(s);
}

static int run(align_job *job, robocache_ctx *ctx) {
  int code = job->output ? check_output(job) : RC_EXIT_OK;
  if (code == RC_EXIT_OK) code = load_streams(job);
  if (code == RC_EXIT_OK) code = rc_align_make_target(ctx, job);
  if (code == RC_EXIT_OK) code = run_align(ctx, job);
  if (code == RC_EXIT_OK && !job->quiet) rc_align_report(job);
  if (code == RC_EXIT_OK && job->output) code = write_output(job);
  return code;
}

int rc_cmd_align(int argc, char **argv) {
  align_job job = {0};
  int help = 0;
  int code = parse_args(argc, argv, &job, &help);
  if (code == RC_EXIT_OK && help) fputs(rc_align_help, stdout);
  if (code == RC_EXIT_OK && !help) {
    robocache_ctx *ctx = NULL;
    job.command_line = rc_cli_command_line(argc, argv);
    code = rc_cli_exit_code(robocache_ctx_create(&ctx));
    if (code == RC_EXIT_OK) code = run(&job, ctx);
    robocache_ctx_free(ctx);
  }
  free_job(&job);
  return code;
}
