/* Median rate, jitter, gaps and non-increasing steps of a timestamp series. */
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Inserts step (row, dt) into the descending top list. */
static void keep_gap(rc_cli_timing *out, int64_t row, int64_t dt) {
  int i = out->n_gaps < RC_CLI_TOP_GAPS ? out->n_gaps++ : RC_CLI_TOP_GAPS;
  while (i > 0 && out->gaps[i - 1].dt_ns < dt) {
    if (i < RC_CLI_TOP_GAPS) out->gaps[i] = out->gaps[i - 1];
    i--;
  }
  if (i < RC_CLI_TOP_GAPS) out->gaps[i] = (rc_cli_gap){row, dt};
}

int rc_cli_timing_compute(const int64_t *t, int64_t n, rc_cli_timing *out) {
  memset(out, 0, sizeof *out);
  out->rows = n;
  out->first_non_increasing = -1;
  if (n < 1) return 0;
  out->first_ns = t[0];
  out->last_ns = t[n - 1];
  if (n < 2) return 0;
  int64_t m = n - 1;
  int64_t *dt = malloc((size_t)m * sizeof *dt);
  if (!dt) return -1;
  double sum = 0;
  for (int64_t i = 0; i < m; i++) {
    if (__builtin_sub_overflow(t[i + 1], t[i], &dt[i])) /* more than the int64 range */
      dt[i] = t[i + 1] > t[i] ? INT64_MAX : INT64_MIN;
    sum += (double)dt[i];
    if (dt[i] <= 0 && out->non_increasing++ == 0) out->first_non_increasing = i;
    keep_gap(out, i, dt[i]);
  }
  double mean = sum / (double)m, var = 0;
  for (int64_t i = 0; i < m; i++) var += ((double)dt[i] - mean) * ((double)dt[i] - mean);
  out->jitter_ns = sqrt(var / (double)m);
  qsort(dt, (size_t)m, sizeof *dt, cmp_i64);
  out->min_dt_ns = dt[0];
  out->max_dt_ns = dt[m - 1];
  out->median_dt_ns = m % 2 ? (double)dt[m / 2] : 0.5 * ((double)dt[m / 2 - 1] + (double)dt[m / 2]);
  free(dt);
  return 0;
}

void rc_cli_format_ns(int64_t ns, char *buf, size_t len) {
  const char *sign = ns < 0 ? "-" : "";
  uint64_t a = ns < 0 ? 0u - (uint64_t)ns : (uint64_t)ns;
  snprintf(buf, len, "%s%llu.%09llu", sign, (unsigned long long)(a / 1000000000u),
           (unsigned long long)(a % 1000000000u));
}
