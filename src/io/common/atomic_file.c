/* Temporary file next to the destination, renamed over it when complete;
 * removed on failure and on SIGINT / SIGTERM. */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file of the write in progress, for the signal handler. */
static char rc_pending[PATH_MAX];
static volatile sig_atomic_t rc_pending_set;

static void on_signal(int sig) {
  if (rc_pending_set) unlink(rc_pending);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  raise(sig); /* delivered when the handler returns: the process dies of it */
}

void rc_io_remove_temp_on_signals(void) {
  static const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++) {
    struct sigaction old, sa;
    if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
}

/* Blocks (or unblocks) SIGINT and SIGTERM around the bookkeeping of
 * rc_pending, so the handler never sees a half-written name. */
static void block_signals(int block, sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(block ? SIG_BLOCK : SIG_SETMASK, block ? &set : old, block ? old : NULL);
}

robocache_status rc_io_check_output(const char *path, const char *const *inputs, int n,
                                    rc_io_err *err) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT) return ROBOCACHE_OK;
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': %s", path, strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    return rc_io_fail(err, ROBOCACHE_IO_ERROR,
                      "cannot write '%s': it exists and is %s (robocache replaces only regular "
                      "files)",
                      path, rc_io_file_kind((unsigned)st.st_mode));
  for (int i = 0; i < n; i++) {
    struct stat in;
    if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
      return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': it is the input '%s'", path,
                        inputs[i]);
  }
  return ROBOCACHE_OK;
}

char *rc_io_temp_create(const char *path, rc_io_err *err) {
  if (rc_io_check_output(path, NULL, 0, err) != ROBOCACHE_OK) return NULL;
  size_t n = strlen(path);
  char *tmp = malloc(n + 12);
  if (!tmp) {
    rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "cannot write '%s': out of memory", path);
    return NULL;
  }
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp-XXXXXX", 12);
  sigset_t mask;
  block_signals(1, &mask);
  int fd = mkstemp(tmp);
  int e = errno;
  if (fd >= 0 && n + 12 <= sizeof rc_pending) {
    memcpy(rc_pending, tmp, n + 12);
    rc_pending_set = 1;
  }
  block_signals(0, &mask);
  if (fd < 0) {
    rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': %s", path, strerror(e));
    free(tmp);
    return NULL;
  }
  mode_t um = umask(0);
  umask(um);
  fchmod(fd, 0666 & ~um);
  close(fd);
  return tmp;
}

robocache_status rc_io_temp_commit(char *tmp, const char *path, int ok, rc_io_err *err) {
  robocache_status s = ROBOCACHE_OK;
  if (ok && rename(tmp, path) != 0)
    s = rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': rename from '%s' failed: %s", path,
                   tmp, strerror(errno));
  if (!ok || s != ROBOCACHE_OK) unlink(tmp);
  rc_pending_set = 0;
  free(tmp);
  return s;
}

/* Writes every part to fd; 0 or an errno value. */
static int write_parts(int fd, const rc_io_bytes *parts, int n) {
  for (int i = 0; i < n; i++) {
    const char *p = parts[i].data;
    size_t left = parts[i].len;
    while (left > 0) {
      ssize_t w = write(fd, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return w < 0 ? errno : EIO;
      p += w;
      left -= (size_t)w;
    }
  }
  return 0;
}

robocache_status rc_io_write_atomic(const char *path, const rc_io_bytes *parts, int n,
                                    rc_io_err *err) {
  char *tmp = rc_io_temp_create(path, err);
  if (!tmp) return err ? err->status : ROBOCACHE_IO_ERROR;
  int fd = open(tmp, O_WRONLY | O_CLOEXEC);
  int e = fd < 0 ? errno : write_parts(fd, parts, n);
  if (fd >= 0 && close(fd) != 0 && !e) e = errno;
  if (e) {
    rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': %s", path, strerror(e));
    rc_io_temp_commit(tmp, path, 0, NULL);
    return ROBOCACHE_IO_ERROR;
  }
  return rc_io_temp_commit(tmp, path, 1, err);
}
