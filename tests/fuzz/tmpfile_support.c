/* Temporary input files of the fuzz targets. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "tmpfile_support.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RCF_MAX_FILES 8

static char rcf_dir[512];
static char rcf_paths[RCF_MAX_FILES][600];
static int rcf_count;

void rcf_fail(const char *what, const char *file, int line) {
  fprintf(stderr, "%s:%d: property failed: %s\n", file, line, what);
  abort();
}

static void remove_all(void) {
  for (int i = 0; i < rcf_count; i++) unlink(rcf_paths[i]);
  if (rcf_dir[0]) rmdir(rcf_dir);
}

static const char *path_for(const char *suffix) {
  for (int i = 0; i < rcf_count; i++) {
    size_t n = strlen(rcf_paths[i]), m = strlen(suffix);
    if (n >= m && strcmp(rcf_paths[i] + n - m, suffix) == 0) return rcf_paths[i];
  }
  if (!rcf_dir[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(rcf_dir, sizeof rcf_dir, "%s/robocache-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(rcf_dir)) rcf_fail("mkdtemp of the temporary directory", __FILE__, __LINE__);
    atexit(remove_all);
  }
  if (rcf_count == RCF_MAX_FILES) rcf_fail("too many suffixes", __FILE__, __LINE__);
  snprintf(rcf_paths[rcf_count], sizeof rcf_paths[0], "%s/input%s", rcf_dir, suffix);
  return rcf_paths[rcf_count++];
}

const char *rcf_write_temp(const uint8_t *data, size_t size, const char *suffix) {
  const char *path = path_for(suffix);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) rcf_fail("open of the temporary input file", __FILE__, __LINE__);
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) rcf_fail("write of the temporary input file", __FILE__, __LINE__);
    done += (size_t)w;
  }
  close(fd);
  return path;
}
