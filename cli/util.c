/* Error printing, exit codes and the command line for HDF5 attributes. */
#include "util.h"

#include "commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vprint(const char *cmd, const char *fmt, va_list ap) {
  fprintf(stderr, "robocache %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void rc_cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(cmd, fmt, ap);
  va_end(ap);
}

int rc_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(cmd, fmt, ap);
  va_end(ap);
  fprintf(stderr, "Try 'robocache %s --help'.\n", cmd);
  return RC_EXIT_USAGE;
}

int rc_cli_exit_code(robocache_status s) {
  if (s == ROBOCACHE_OK) return RC_EXIT_OK;
  return s == ROBOCACHE_IO_ERROR ? RC_EXIT_IO : RC_EXIT_DATA;
}

char *rc_cli_command_line(int argc, char **argv) {
  size_t len = strlen("robocache") + 1;
  for (int i = 0; i < argc; i++) len += 4 * strlen(argv[i]) + 3;
  char *s = malloc(len), *w = s;
  if (!s) return NULL;
  w += sprintf(w, "robocache");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int quote = *a == '\0' || strpbrk(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") != NULL;
    *w++ = ' ';
    if (quote) *w++ = '\'';
    for (; *a; a++) {
      if (quote && *a == '\'')
        w += sprintf(w, "'\\''");
      else
        *w++ = *a;
    }
    if (quote) *w++ = '\'';
  }
  *w = '\0';
  return s;
}
