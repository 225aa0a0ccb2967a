/* Test helpers: small data files of data/. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef ROBOCACHE_DATA_DIR
#define ROBOCACHE_DATA_DIR "data"
#endif

const char *rct_data_path(const char *relative) {
  static char path[4096];
  const char *dir = getenv("ROBOCACHE_DATA_DIR");
  snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : ROBOCACHE_DATA_DIR, relative);
  return path;
}

char *rct_read_data_file(const char *relative, size_t *len) {
  const char *path = rct_data_path(relative);
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open data file %s", path);
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = 2 * cap + 8192;
      char *grown = realloc(buf, cap);
      assert_non_null(grown);
      buf = grown;
    }
    size_t got = fread(buf + n, 1, 4096, f);
    n += got;
    if (got < 4096) break;
  }
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}
