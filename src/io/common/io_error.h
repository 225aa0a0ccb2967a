/* Error reporting of the I/O module: a status plus a message that names the
 * file, the line and what is wrong ("imu.csv:17: expected 7 fields, found 3").
 * The I/O module never prints; callers decide what to do with the message. */
#ifndef ROBOCACHE_IO_ERROR_H
#define ROBOCACHE_IO_ERROR_H

#include "robocache.h"

#define RC_IO_ERR_LEN 1024

typedef struct rc_io_err {
  robocache_status status; /* ROBOCACHE_OK when no error was recorded */
  char msg[RC_IO_ERR_LEN];
} rc_io_err;

/* Records status and a printf-formatted message in *err (may be NULL) and
 * returns status. The message is truncated to RC_IO_ERR_LEN - 1 bytes. */
robocache_status rc_io_fail(rc_io_err *err, robocache_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
