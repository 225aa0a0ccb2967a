/* Whole-file and head-of-file reads. */
#include "read_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

robocache_status rc_io_read_head(const char *path, size_t max, char **buf, size_t *len, int *whole,
                                 rc_io_err *err) {
  *buf = NULL;
  *len = 0;
  *whole = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = max < (size_t)1 << 16 ? max : (size_t)1 << 16, n = 0;
  char *b = malloc(cap + 1);
  while (b) {
    n += fread(b + n, 1, cap - n, fp);
    if (n < cap || cap == max) break;
    size_t next = cap <= max / 2 ? 2 * cap : max;
    char *bigger = realloc(b, next + 1);
    if (!bigger) free(b);
    b = bigger;
    cap = next;
  }
  /* the whole file: fewer bytes than asked for, or nothing after them */
  int failed = ferror(fp), at_end = n < cap || (b && fgetc(fp) == EOF);
  fclose(fp);
  if (!b) return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", path);
  if (failed) {
    free(b);
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: read error", path);
  }
  b[n] = '\0';
  *buf = b;
  *len = n;
  *whole = at_end;
  return ROBOCACHE_OK;
}

robocache_status rc_io_read_file(const char *path, char **buf, size_t *len, rc_io_err *err) {
  int whole = 0;
  return rc_io_read_head(path, SIZE_MAX - 1, buf, len, &whole, err);
}
