/* Test helper: a temporary directory with small files. */
#define _POSIX_C_SOURCE 200809L
#include "support_tmpdir.h"
#include "support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rct_tmpdir_create(rct_tmpdir *d) {
  const char *base = getenv("TMPDIR");
  snprintf(d->path, sizeof d->path, "%s/robocache-test-XXXXXX", base && *base ? base : "/tmp");
  d->n = 0;
  if (!mkdtemp(d->path)) fail_msg("mkdtemp(%s) failed", d->path);
}

const char *rct_tmpdir_path(const rct_tmpdir *d, const char *name) {
  static char path[640];
  snprintf(path, sizeof path, "%s/%s", d->path, name);
  return path;
}

const char *rct_tmpdir_write(rct_tmpdir *d, const char *name, const char *text) {
  assert_true(d->n < RCT_TMPDIR_MAX_FILES);
  char *path = d->files[d->n++];
  snprintf(path, sizeof d->files[0], "%s", rct_tmpdir_path(d, name));
  FILE *f = fopen(path, "wb");
  if (!f) fail_msg("cannot create %s", path);
  size_t len = strlen(text);
  assert_int_equal(fwrite(text, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  return path;
}

int rct_tmpdir_count(const rct_tmpdir *d) {
  DIR *dir = opendir(d->path);
  if (!dir) fail_msg("cannot list %s", d->path);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(dir);
  return n;
}

void rct_tmpdir_remove(rct_tmpdir *d) {
  DIR *dir = opendir(d->path);
  if (dir) {
    struct dirent *e;
    while ((e = readdir(dir)))
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
        unlink(rct_tmpdir_path(d, e->d_name));
    closedir(dir);
  }
  rmdir(d->path);
}

int rct_tmpdir_setup(void **state) {
  rct_tmpdir *d = malloc(sizeof *d);
  if (!d) return -1;
  rct_tmpdir_create(d);
  *state = d;
  return 0;
}

int rct_tmpdir_teardown(void **state) {
  rct_tmpdir_remove(*state);
  free(*state);
  return 0;
}
