/* How each text format lays out its lines (internal to the readers). */
#ifndef ROBOCACHE_IO_DIALECT_H
#define ROBOCACHE_IO_DIALECT_H

#include "text.h"

typedef enum rc_io_header {
  RC_IO_HEADER_HASH = 0,  /* line 1 is "#name,name,..." (EuRoC) */
  RC_IO_HEADER_FIRST = 1, /* the first non-blank line names the columns */
  RC_IO_HEADER_NONE = 2   /* no header: fixed names or none */
} rc_io_header;

typedef struct rc_io_dialect {
  char delim;                     /* ',' (CSV) or ' ' (runs of blanks) */
  int header;                     /* rc_io_header */
  const char *const *fixed_names; /* column names when header is NONE, or NULL */
  int n_fixed;
  int time_unit;  /* default rc_io_time_unit */
  int has_values; /* 0: the format carries only times */
} rc_io_dialect;

/* The dialect of a text format (EUROC, TUM, TIMESTAMPS, CSV), else NULL. */
const rc_io_dialect *rc_io_dialect_of(int format);

/* 1 when s is a whole number as strtod reads it (no trailing text). */
int rc_io_is_number(const char *s, double *value);

/* Format of a loaded file (rc_io_detect_format's rules, from memory: the
 * file is never read again). */
robocache_status rc_io_detect_loaded(const rc_io_text *t, int *format, rc_io_err *err);

#endif
