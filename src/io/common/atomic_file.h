/* Writing a file all at once: the data go to a temporary file
 * "<path>.tmp-XXXXXX" next to path, which is renamed over path only when
 * everything was written; on failure path is untouched and the temporary
 * file removed. Only a regular file (or nothing) at path is ever replaced. */
#ifndef ROBOCACHE_IO_ATOMIC_FILE_H
#define ROBOCACHE_IO_ATOMIC_FILE_H

#include "io_error.h"

#include <stddef.h>

/* One piece of a file's contents. */
typedef struct rc_io_bytes {
  const void *data;
  size_t len;
} rc_io_bytes;

/* Checks an output path before anything is computed or written: IO_ERROR
 * "cannot write 'path': it exists and is a symbolic link (robocache replaces
 * only regular files)" (or a directory, a character device, ...), "cannot
 * write 'path': it is the input 'in'" when path is the same file as one of
 * inputs[0..n) (same st_dev and st_ino: hard links and other spellings
 * included). A path that does not exist yet is fine. */
robocache_status rc_io_check_output(const char *path, const char *const *inputs, int n,
                                    rc_io_err *err);

/* Writes parts[0..n) one after another to path through its temporary file
 * (rc_io_check_output(path) first). Errors: IO_ERROR "cannot write 'path':
 * reason" (a full disk: "No space left on device"), OUT_OF_MEMORY. */
robocache_status rc_io_write_atomic(const char *path, const rc_io_bytes *parts, int n,
                                    rc_io_err *err);

/* For programs: on SIGINT or SIGTERM, removes the temporary file of a write in
 * progress (unlink, async-signal-safe), then dies of the signal as it would
 * have. Signals that are ignored or already handled are left alone. SIGKILL
 * cannot be caught: after it a "<path>.tmp-XXXXXX" file may remain. */
void rc_io_remove_temp_on_signals(void);

/* The steps of rc_io_write_atomic, for writers that fill the file
 * themselves. rc_io_temp_create makes the empty temporary file of path (with
 * the permissions umask allows) and returns its malloc'd name, or NULL (err
 * set); from then until rc_io_temp_commit it is the file the signal handlers
 * remove. rc_io_temp_commit renames tmp over path when ok (IO_ERROR "cannot
 * write 'path': rename from 'tmp' failed: reason"), otherwise, and on
 * failure, removes tmp; frees tmp. */
char *rc_io_temp_create(const char *path, rc_io_err *err);
robocache_status rc_io_temp_commit(char *tmp, const char *path, int ok, rc_io_err *err);

#endif
