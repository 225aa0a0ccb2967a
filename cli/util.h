/* Small helpers shared by the subcommands. */
#ifndef ROBOCACHE_CLI_UTIL_H
#define ROBOCACHE_CLI_UTIL_H

#include "robocache.h"

#include <stddef.h>

/* Largest --threads / -j value (0 = all cores). */
#define RC_CLI_MAX_THREADS ROBOCACHE_MAX_THREADS

/* Prints "robocache CMD: MESSAGE\n" on stderr, MESSAGE escaped as by
 * rc_cli_escape (file contents quoted in a message cannot reach the
 * terminal raw). */
void rc_cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints a usage error and the hint to run --help; returns RC_EXIT_USAGE. */
int rc_cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Copies text to out[cap] (cap >= 5, truncated when longer) with control
 * characters, DEL and bytes that are not valid UTF-8 written as \xNN (valid
 * UTF-8 is kept), and returns out. For anything read from a file that is
 * printed. */
const char *rc_cli_escape(const char *text, char *out, size_t cap);

/* RC_EXIT_IO for IO_ERROR, RC_EXIT_DATA for any other failure, else 0. */
int rc_cli_exit_code(robocache_status s);

/* "robocache ARGV..." with arguments holding blanks or quotes single-quoted
 * as a shell would need; malloc'd (NULL when out of memory). */
char *rc_cli_command_line(int argc, char **argv);

#endif
