/* Reading a whole file, or its first bytes, into memory (any content). */
#ifndef ROBOCACHE_IO_READ_FILE_H
#define ROBOCACHE_IO_READ_FILE_H

#include "io_error.h"

#include <stddef.h>

/* Reads path into a malloc'd *buf of *len bytes followed by a NUL byte (so
 * text can be parsed in place). Errors: IO_ERROR "cannot open 'path': reason"
 * or "path: read error", OUT_OF_MEMORY. */
robocache_status rc_io_read_file(const char *path, char **buf, size_t *len, rc_io_err *err);

/* As rc_io_read_file for at most the first `max` bytes of path; *whole = 1
 * when that is the whole file. */
robocache_status rc_io_read_head(const char *path, size_t max, char **buf, size_t *len, int *whole,
                                 rc_io_err *err);

#endif
