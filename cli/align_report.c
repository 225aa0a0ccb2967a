/* The summary `robocache align` prints on stderr. */
#include "align_job.h"
#include "timing.h"

#include <stdio.h>

static double rate_hz(const rc_cli_timing *t) {
  return t->median_dt_ns > 0 ? 1e9 / t->median_dt_ns : 0.0;
}

/* "first .. last s (span s)" of a timing. */
static void span_text(const rc_cli_timing *t, char *buf, size_t len) {
  char a[32], b[32];
  rc_cli_format_ns(t->first_ns, a, sizeof a);
  rc_cli_format_ns(t->last_ns, b, sizeof b);
  snprintf(buf, len, "%s .. %s s (%.3f s)", a, b,
           ((double)t->last_ns - (double)t->first_ns) * 1e-9);
}

void rc_align_report(const align_job *job) {
  rc_cli_timing tt;
  char span[128];
  rc_cli_timing_compute(job->target, job->T, &tt);
  span_text(&tt, span, sizeof span);
  fprintf(stderr, "robocache align: %d stream%s -> %lld targets, %s\n", (int)job->K,
          job->K == 1 ? "" : "s", (long long)job->T, job->target_desc);
  fprintf(stderr, "  targets  %s, median rate %.3f Hz\n", span, rate_hz(&tt));
  fprintf(stderr, "  %-14s %8s %9s  %-58s %3s  %-8s %s\n", "stream", "rows", "rate Hz",
          "time span, s (after offset)", "D", "method", "invalid targets");
  for (int32_t k = 0; k < job->K; k++) {
    const rc_io_table *tab = &job->tab[k];
    rc_cli_timing st;
    rc_cli_timing_compute(tab->times_ns, tab->rows, &st);
    st.first_ns += job->src[k].options.time_offset_ns;
    st.last_ns += job->src[k].options.time_offset_ns;
    span_text(&st, span, sizeof span);
    int64_t invalid = 0;
    for (int64_t t = 0; t < job->T; t++) invalid += job->valid[t * job->K + k] == 0;
    fprintf(stderr, "  %-14s %8lld %9.3f  %-58s %3d  %-8s %lld / %lld\n", job->src[k].name,
            (long long)tab->rows, rate_hz(&st), span, (int)tab->cols,
            rc_cli_method_name(job->src[k].options.method), (long long)invalid, (long long)job->T);
  }
}
