/* Whole-file reads. */
#include "read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

robocache_status rc_io_read_file(const char *path, char **buf, size_t *len, rc_io_err *err) {
  *buf = NULL;
  *len = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *b = malloc(cap + 1);
  while (b) {
    n += fread(b + n, 1, cap - n, fp);
    if (n < cap) break;
    char *bigger = realloc(b, 2 * cap + 1);
    if (!bigger) free(b);
    b = bigger;
    cap *= 2;
  }
  int failed = ferror(fp);
  fclose(fp);
  if (!b) return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", path);
  if (failed) {
    free(b);
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: read error", path);
  }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return ROBOCACHE_OK;
}
