/* The target grid of `robocache align`: uniform rate, a stream's times, or
 * the times of a file. */
#include "align_job.h"
#include "commands.h"
#include "timing.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int uniform_grid(robocache_ctx *ctx, align_job *job) {
  int64_t start, end;
  robocache_status s = robocache_streams_span(ctx, job->streams, job->K, job->span, &start, &end);
  if (s != ROBOCACHE_OK) {
    rc_cli_error("align", "%s", robocache_ctx_error_message(ctx));
    return rc_cli_exit_code(s);
  }
  const char *span = job->span == ROBOCACHE_SPAN_UNION ? "union" : "overlap";
  const double span_s = ((double)end - (double)start) * 1e-9, step_ns = 1e9 / job->rate_hz;
  if (step_ns < 1 || step_ns > (double)INT64_MAX) { /* checked in double: no overflow */
    rc_cli_error("align",
                 "--rate %g Hz: a step of %g ns is outside 1 ns .. the int64 ns range (rates "
                 "from 1.1e-10 to 1e9 Hz)",
                 job->rate_hz, step_ns);
    return RC_EXIT_USAGE;
  }
  const double targets = floor(span_s * job->rate_hz) + 1;
  if (targets > RC_CLI_MAX_TARGETS) {
    rc_cli_error("align",
                 "--rate %g Hz over the %s of the streams (%.3f s) would take %.0f targets; "
                 "at most %d are allowed (lower --rate, or give --target-file)",
                 job->rate_hz, span, span_s, targets, RC_CLI_MAX_TARGETS);
    return RC_EXIT_DATA;
  }
  job->T = robocache_uniform_grid_count(start, end, job->rate_hz);
  if (job->T < 1 || job->T > RC_CLI_MAX_TARGETS) {
    rc_cli_error("align", "--rate %g Hz gives %lld targets over the %s of the streams",
                 job->rate_hz, (long long)job->T, span);
    return RC_EXIT_DATA;
  }
  job->target = malloc((size_t)job->T * sizeof *job->target);
  if (!job->target) return rc_cli_exit_code(ROBOCACHE_OUT_OF_MEMORY);
  s = robocache_uniform_grid(ctx, start, end, job->rate_hz, job->target, job->T);
  if (s != ROBOCACHE_OK) {
    rc_cli_error("align", "%s", robocache_ctx_error_message(ctx));
    return rc_cli_exit_code(s);
  }
  snprintf(job->target_desc, sizeof job->target_desc, "uniform %g Hz over the %s of the streams",
           job->rate_hz, span);
  return RC_EXIT_OK;
}

/* Copies the times of table tab shifted by offset_ns. */
static int copy_times(align_job *job, const rc_io_table *tab, int64_t offset_ns) {
  job->T = tab->rows;
  job->target = malloc((size_t)job->T * sizeof *job->target);
  if (!job->target) return rc_cli_exit_code(ROBOCACHE_OUT_OF_MEMORY);
  for (int64_t i = 0; i < job->T; i++) job->target[i] = tab->times_ns[i] + offset_ns;
  return RC_EXIT_OK;
}

static int stream_times(align_job *job) {
  for (int32_t k = 0; k < job->K; k++)
    if (strcmp(job->src[k].name, job->target_stream) == 0) {
      snprintf(job->target_desc, sizeof job->target_desc, "times of stream '%s' (%s)",
               job->target_stream, job->src[k].read.path);
      return copy_times(job, &job->tab[k], job->src[k].options.time_offset_ns);
    }
  return rc_cli_usage_error("align", "--target '%s' names no --stream", job->target_stream);
}

static int file_times(align_job *job) {
  rc_io_table tab;
  rc_io_err err = {0};
  robocache_status s = rc_io_read(&job->target_file.read, &tab, &err);
  int code = rc_cli_exit_code(s);
  if (s != ROBOCACHE_OK)
    rc_cli_error("align", "target file: %s", err.msg);
  else
    code = copy_times(job, &tab, 0);
  snprintf(job->target_desc, sizeof job->target_desc, "times of file %s (%s)",
           job->target_file.read.path, rc_io_format_name(tab.format));
  rc_io_table_free(&tab);
  return code;
}

/* Every stream must share some time with the target grid. */
static int check_overlap(const align_job *job) {
  int64_t lo = job->target[0], hi = job->target[0];
  for (int64_t i = 1; i < job->T; i++) {
    if (job->target[i] < lo) lo = job->target[i];
    if (job->target[i] > hi) hi = job->target[i];
  }
  for (int32_t k = 0; k < job->K; k++) {
    const rc_io_table *t = &job->tab[k];
    int64_t off = job->src[k].options.time_offset_ns;
    int64_t first = t->times_ns[0] + off, last = t->times_ns[t->rows - 1] + off;
    if (hi < first || lo > last) {
      char a[32], b[32], c[32], d[32];
      rc_cli_format_ns(lo, a, sizeof a);
      rc_cli_format_ns(hi, b, sizeof b);
      rc_cli_format_ns(first, c, sizeof c);
      rc_cli_format_ns(last, d, sizeof d);
      rc_cli_error("align",
                   "the target grid (%s .. %s s) does not overlap stream '%s' (%s .. %s s): "
                   "every target would be invalid",
                   a, b, job->src[k].name, c, d);
      return RC_EXIT_DATA;
    }
  }
  return RC_EXIT_OK;
}

int rc_align_make_target(robocache_ctx *ctx, align_job *job) {
  int code = job->rate_hz > 0     ? uniform_grid(ctx, job)
             : job->target_stream ? stream_times(job)
                                  : file_times(job);
  if (code == RC_EXIT_OK) code = check_overlap(job);
  return code;
}
