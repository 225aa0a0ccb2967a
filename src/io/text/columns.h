/* Selecting columns by name or index (internal to the readers). */
#ifndef ROBOCACHE_IO_COLUMNS_H
#define ROBOCACHE_IO_COLUMNS_H

#include "io_error.h"

/* The column names of a file: names[n], or n == 0 when the format has none
 * (columns are then selected by index only). */
typedef struct rc_io_names {
  const char *const *v;
  int n;
} rc_io_names;

/* Index of the column that token names: digits are a 0-based index, else a
 * name matched exactly or without its trailing " [unit]". Errors name path:
 * "unknown column 'x'; available columns: 'a', 'b'" or "column index 9 out of
 * range (0..6)". */
robocache_status rc_io_find_column(const char *path, const char *token, rc_io_names names,
                                   int *index, rc_io_err *err);

/* Indices of the ':'-separated list (NULL: every column but time_index, in
 * file order). *idx is malloc'd. */
robocache_status rc_io_select_columns(const char *path, const char *list, rc_io_names names,
                                      int time_index, int **idx, int *n, rc_io_err *err);

#endif
