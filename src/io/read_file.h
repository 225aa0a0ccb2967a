/* Reading a whole file into memory (any content). */
#ifndef ROBOCACHE_IO_READ_FILE_H
#define ROBOCACHE_IO_READ_FILE_H

#include "io_error.h"

#include <stddef.h>

/* Reads path into a malloc'd *buf of *len bytes followed by a NUL byte (so
 * text can be parsed in place). Errors: IO_ERROR "cannot open 'path': reason"
 * or "path: read error", OUT_OF_MEMORY. */
robocache_status rc_io_read_file(const char *path, char **buf, size_t *len, rc_io_err *err);

#endif
