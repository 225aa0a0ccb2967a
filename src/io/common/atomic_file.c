/* Temporary file next to the destination, renamed over it when complete. */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *rc_io_temp_create(const char *path, rc_io_err *err) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 12);
  if (!tmp) {
    rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "cannot write '%s': out of memory", path);
    return NULL;
  }
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp-XXXXXX", 12);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': %s", path, strerror(errno));
    free(tmp);
    return NULL;
  }
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  close(fd);
  return tmp;
}

robocache_status rc_io_temp_commit(char *tmp, const char *path, int ok, rc_io_err *err) {
  robocache_status s = ROBOCACHE_OK;
  if (ok && rename(tmp, path) != 0)
    s = rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': rename from '%s' failed: %s", path,
                   tmp, strerror(errno));
  if (!ok || s != ROBOCACHE_OK) unlink(tmp);
  free(tmp);
  return s;
}
