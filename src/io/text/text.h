/* Text files line by line, and splitting a line into fields. */
#ifndef ROBOCACHE_IO_TEXT_H
#define ROBOCACHE_IO_TEXT_H

#include "io_error.h"

#include <stddef.h>
#include <stdint.h>

/* A whole text file in memory, walked line by line. */
typedef struct rc_io_text {
  char *buf;       /* file contents, NUL-terminated; lines are cut in place */
  size_t size;     /* bytes of the file */
  size_t pos;      /* start of the next line */
  int64_t line_no; /* 1-based number of the line last returned */
  const char *path;
} rc_io_text;

/* Loads path (read_file.h: read once, bounded when not a regular file) and
 * skips a UTF-8 byte order mark at its start. Errors: those of
 * rc_io_read_file. */
robocache_status rc_io_text_load(const char *path, rc_io_text *t, rc_io_err *err);
/* INVALID_ARGUMENT "path: contains NUL bytes (not a text file)". */
robocache_status rc_io_text_check(const rc_io_text *t, rc_io_err *err);
void rc_io_text_free(rc_io_text *t);

/* The next line without its "\n" / "\r\n", or NULL at the end of the file.
 * t->line_no is its number. */
char *rc_io_text_next_line(rc_io_text *t);

/* 1 when the line is empty or only spaces and tabs. */
int rc_io_line_is_blank(const char *line);
/* 1 when the first non-blank character is '#'. */
int rc_io_line_is_comment(const char *line);

/* The fields of one line, pointing into the line (which is modified). */
typedef struct rc_io_fields {
  char **v;
  int n, cap;
} rc_io_fields;

/* Splits line in place.
 * delim ',': CSV (RFC 4180 on one line): fields separated by commas, spaces
 *   and tabs around a field trimmed, a field may be "double-quoted" with ""
 *   for a literal quote. An unterminated quote -> INVALID_ARGUMENT
 *   "path:line: unterminated quoted field".
 * delim ' ': fields separated by runs of spaces and tabs (TUM, timestamps).
 * Errors name t's path and line. */
robocache_status rc_io_split(const rc_io_text *t, char *line, char delim, rc_io_fields *f,
                             rc_io_err *err);
void rc_io_fields_free(rc_io_fields *f);

#endif
