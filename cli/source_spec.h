/* The --stream and --target-file arguments of `robocache align`:
 *
 *   --stream NAME=FILE[,KEY=VALUE...]      --target-file FILE[,KEY=VALUE...]
 *
 * Keys (docs/cli.md): format, time-column, time-unit (both); columns, nonfinite,
 * method, extrapolate, fill, max-gap, tolerance, offset, quat-order (--stream
 * only). Columns are separated by ':'; durations carry a unit (20ms, 5us,
 * -1.5ms, 0.02s; a bare 0 is allowed). */
#ifndef ROBOCACHE_CLI_SOURCE_SPEC_H
#define ROBOCACHE_CLI_SOURCE_SPEC_H

#include "reader.h"
#include "robocache.h"

#include <stddef.h>

typedef struct rc_cli_source {
  char *buf;        /* owned copy of the argument; the strings below point into it */
  const char *name; /* stream name (NULL for --target-file) */
  rc_io_read_spec read;
  robocache_interp_options options;
} rc_cli_source;

/* Parses arg into *src (with_name: "NAME=FILE,..." of --stream). Returns 0,
 * or -1 with a message in msg (a usage error). */
int rc_cli_parse_source(const char *arg, int with_name, rc_cli_source *src, char *msg, size_t len);
void rc_cli_source_free(rc_cli_source *src);

/* Name of an option value for messages and summaries ("linear", "clamp"). */
const char *rc_cli_method_name(int method);

#endif
