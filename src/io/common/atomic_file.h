/* Writing a file all at once: the data go to a temporary file
 * "<path>.tmp-XXXXXX" next to path, which is renamed over path only when
 * everything was written; on failure path is untouched. */
#ifndef ROBOCACHE_IO_ATOMIC_FILE_H
#define ROBOCACHE_IO_ATOMIC_FILE_H

#include "io_error.h"

/* Creates the temporary file of path, empty, with the permissions umask
 * allows; returns its malloc'd name, or NULL on failure (err set: IO_ERROR
 * "cannot write 'path': reason", OUT_OF_MEMORY). */
char *rc_io_temp_create(const char *path, rc_io_err *err);

/* When ok: renames tmp over path (IO_ERROR "cannot write 'path': rename
 * from 'tmp' failed: reason"); otherwise, and on failure, removes tmp. Frees
 * tmp. Returns ROBOCACHE_OK or the error. */
robocache_status rc_io_temp_commit(char *tmp, const char *path, int ok, rc_io_err *err);

#endif
