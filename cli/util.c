/* Error printing, exit codes and the command line for HDF5 attributes. */
#include "util.h"

#include "commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence of 2..4 bytes at s, else 0. */
static int utf8_length(const unsigned char *s) {
  const int n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
  if (n == 0 || s[0] >= 0xF5) return 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (n == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0))) return 0;
  if (n == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))) return 0;
  return n;
}

const char *rc_cli_escape(const char *text, char *out, size_t cap) {
  const unsigned char *s = (const unsigned char *)text;
  size_t n = 0;
  while (*s && n + 5 <= cap) { /* room for "\xNN" and the NUL */
    int k = *s >= 0x80 ? utf8_length(s) : (*s >= 0x20 && *s != 0x7F);
    if (k > 0) {
      memcpy(out + n, s, (size_t)k);
      n += (size_t)k;
      s += k;
    } else {
      n += (size_t)snprintf(out + n, cap - n, "\\x%02x", *s++);
    }
  }
  out[n] = '\0';
  return out;
}

static void vprint(const char *cmd, const char *fmt, va_list ap) {
  char msg[2048], escaped[4 * sizeof msg];
  vsnprintf(msg, sizeof msg, fmt, ap);
  fprintf(stderr, "robocache %s: %s\n", cmd, rc_cli_escape(msg, escaped, sizeof escaped));
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
