/* State of one `robocache align` run, shared by its steps (cmd_align.c,
 * align_target.c, align_report.c). */
#ifndef ROBOCACHE_CLI_ALIGN_JOB_H
#define ROBOCACHE_CLI_ALIGN_JOB_H

#include "reader.h"
#include "robocache.h"
#include "source_spec.h"

/* Most targets a --rate grid may have (a larger grid is a mistaken rate). */
#define RC_CLI_MAX_TARGETS 100000000

typedef struct align_job {
  /* from the command line */
  rc_cli_source *src; /* [K] --stream */
  int32_t K;
  rc_cli_source target_file; /* --target-file, when target_file.read.path */
  const char *target_stream; /* --target */
  double rate_hz;            /* --rate, 0 when not given */
  int32_t span;              /* --span: ROBOCACHE_SPAN_OVERLAP or _UNION */
  const char *output;        /* -o, or NULL */
  int quiet, threads;
  char *command_line;
  /* computed */
  rc_io_table *tab;          /* [K] data of each stream */
  robocache_stream *streams; /* [K] */
  robocache_tensor *tensors; /* [2K]: values, times of each stream */
  int64_t (*shapes)[3];      /* [2K] */
  int64_t *target;           /* [T] target times, ns */
  int64_t T, total_cols;
  char target_desc[512];
  float *out;     /* [T, total_cols] */
  uint8_t *valid; /* [T, K] */
} align_job;

/* Builds job->target / job->T / job->target_desc from --rate, --target or
 * --target-file and checks that it overlaps every stream. Returns an exit
 * code (messages printed). */
int rc_align_make_target(robocache_ctx *ctx, align_job *job);

/* Prints the summary of a finished run on stderr. */
void rc_align_report(const align_job *job);

#endif
