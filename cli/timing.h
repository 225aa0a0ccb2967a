/* Timing statistics of one timestamp series (int64 ns), for `robocache info`
 * and the summary of `robocache align`. */
#ifndef ROBOCACHE_CLI_TIMING_H
#define ROBOCACHE_CLI_TIMING_H

#include <stddef.h>
#include <stdint.h>

#define RC_CLI_TOP_GAPS 3

typedef struct rc_cli_gap {
  int64_t row;   /* 0-based row before the gap: the gap is t[row] -> t[row + 1] */
  int64_t dt_ns; /* t[row + 1] - t[row] */
} rc_cli_gap;

typedef struct rc_cli_timing {
  int64_t rows;
  int64_t first_ns, last_ns; /* t[0], t[rows - 1] */
  /* dt = t[i+1] - t[i] over rows - 1 steps (all 0 when rows < 2; a step
   * beyond the int64 range is INT64_MAX or INT64_MIN): */
  double median_dt_ns; /* as numpy.median (mean of the middle two) */
  double jitter_ns;    /* population standard deviation (numpy.std) */
  int64_t min_dt_ns, max_dt_ns;
  rc_cli_gap gaps[RC_CLI_TOP_GAPS]; /* largest dt first; ties: earlier row first */
  int n_gaps;
  int64_t non_increasing;       /* steps with dt <= 0 */
  int64_t first_non_increasing; /* row of the first such step (the row after it
                                   is not later), -1 when none */
} rc_cli_timing;

/* Fills *out from t[0..n). Returns -1 when out of memory, else 0. */
int rc_cli_timing_compute(const int64_t *t, int64_t n, rc_cli_timing *out);

/* Writes ns as decimal seconds with 9 decimals ("1403715273.262142976"). */
void rc_cli_format_ns(int64_t ns, char *buf, size_t len);

#endif
