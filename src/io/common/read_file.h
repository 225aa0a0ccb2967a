/* Reading an input file into memory (any content).
 *
 * Inputs are opened once, without blocking: a named FIFO that no process
 * opens for writing within RC_IO_FIFO_WAIT_MS is an error instead of a wait
 * without end (a writer that has it open is waited for, as cat does). A
 * directory is an
 * error ("path: is a directory"). A regular file is read whole; anything else
 * (a pipe, a FIFO, a character device such as /dev/stdin or /dev/zero) is read
 * once, up to RC_IO_STREAM_MAX bytes: longer is an error, so /dev/zero cannot
 * exhaust memory. Nothing here opens a file twice, so a pipe is never
 * consumed by one read and then waited on by a second. */
#ifndef ROBOCACHE_IO_READ_FILE_H
#define ROBOCACHE_IO_READ_FILE_H

#include "io_error.h"

#include <stddef.h>

#define RC_IO_STREAM_MAX ((size_t)256 << 20) /* bytes of a non-regular input */
#define RC_IO_FIFO_WAIT_MS 5000              /* for the writer of a FIFO */

/* Reads path into a malloc'd *buf of *len bytes followed by a NUL byte (so
 * text can be parsed in place). Errors: IO_ERROR "cannot open 'path': reason",
 * "path: is a directory", "path: read error: reason", "path: not a regular
 * file (a character device) and longer than 256 MiB ...", "path: a FIFO that
 * no process writes to ..."; OUT_OF_MEMORY. */
robocache_status rc_io_read_file(const char *path, char **buf, size_t *len, rc_io_err *err);

/* OK when path is a regular file (follows symbolic links); else IO_ERROR
 * "cannot open 'path': reason", "path: is a directory" or "path: not a
 * regular file (a FIFO)". For readers that hand the path to another library
 * (HDF5), which would block on a FIFO. */
robocache_status rc_io_require_regular(const char *path, rc_io_err *err);

/* "a FIFO", "a character device", ... for the st_mode of a file that is
 * not regular. */
const char *rc_io_file_kind(unsigned mode);

#endif
