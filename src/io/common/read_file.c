/* Reading an input once: regular files whole, other files up to a bound. */
#define _POSIX_C_SOURCE 200809L
#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rc_io_file_kind(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

robocache_status rc_io_require_regular(const char *path, rc_io_err *err) {
  struct stat st;
  if (stat(path, &st) != 0)
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode)) return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: is a directory", path);
  if (!S_ISREG(st.st_mode))
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: not a regular file (%s)", path,
                      rc_io_file_kind((unsigned)st.st_mode));
  return ROBOCACHE_OK;
}

/* Waits for data on a pipe whose writer has not written yet (a FIFO opened
 * with O_NONBLOCK); returns the errno of a failed read otherwise. */
static int retry(int fd) {
  if (errno == EAGAIN) {
    poll(&(struct pollfd){fd, POLLIN, 0}, 1, -1);
    return 0;
  }
  return errno == EINTR ? 0 : errno;
}

/* A FIFO opened without blocking reads as end-of-file at once while no
 * process has it open for writing: waits up to RC_IO_FIFO_WAIT_MS for a
 * writer (poll reports POLLHUP only once a writer has come and gone, POLLIN
 * once it wrote). 0, or ETIMEDOUT. */
static int wait_for_writer(int fd) {
  return poll(&(struct pollfd){fd, POLLIN, 0}, 1, RC_IO_FIFO_WAIT_MS) == 0 ? ETIMEDOUT : 0;
}

/* Reads fd to its end into a malloc'd buffer of at most `limit` bytes (+ a
 * NUL); *over is set when there was more. Returns 0, or an errno value. */
static int read_all(int fd, int fifo, size_t hint, size_t limit, char **buf, size_t *len,
                    int *over) {
  size_t cap = hint < limit ? hint : limit, n = 0;
  char *b = malloc(cap + 1);
  int e = b ? 0 : ENOMEM, waited = !fifo;
  *over = 0;
  while (!e) {
    if (n == cap && cap == limit) { /* one byte more tells whether the input is longer */
      char probe;
      ssize_t r = read(fd, &probe, 1);
      if (r >= 0) {
        *over = r > 0;
        break;
      }
      e = retry(fd);
      continue;
    }
    if (n == cap) {
      size_t next = cap <= limit / 2 ? 2 * cap : limit;
      char *bigger = realloc(b, next + 1);
      if (!bigger) {
        e = ENOMEM;
        break;
      }
      b = bigger;
      cap = next;
    }
    ssize_t r = read(fd, b + n, cap - n);
    if (r == 0 && n == 0 && !waited) {
      waited = 1;
      e = wait_for_writer(fd);
      continue;
    }
    if (r == 0) break;
    if (r > 0)
      n += (size_t)r;
    else
      e = retry(fd);
  }
  if (e) {
    free(b);
    return e;
  }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 0;
}

robocache_status rc_io_read_file(const char *path, char **buf, size_t *len, rc_io_err *err) {
  *buf = NULL;
  *len = 0;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot open '%s': %s", path, strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: is a directory", path);
  }
  const int regular = S_ISREG(st.st_mode);
  const size_t limit = regular ? SIZE_MAX - 1 : RC_IO_STREAM_MAX;
  size_t hint = regular && st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX - 2
                    ? (size_t)st.st_size + 1 /* + 1: reaching the end needs no realloc */
                    : (size_t)1 << 16;
  int over = 0, e = read_all(fd, S_ISFIFO(st.st_mode), hint, limit, buf, len, &over);
  close(fd);
  if (e == ETIMEDOUT)
    return rc_io_fail(err, ROBOCACHE_IO_ERROR,
                      "%s: a FIFO that no process writes to (waited %d s for a writer)", path,
                      RC_IO_FIFO_WAIT_MS / 1000);
  if (e == ENOMEM) return rc_io_fail(err, ROBOCACHE_OUT_OF_MEMORY, "%s: out of memory", path);
  if (e) return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: read error: %s", path, strerror(e));
  if (over) {
    free(*buf);
    *buf = NULL;
    *len = 0;
    return rc_io_fail(err, ROBOCACHE_IO_ERROR,
                      "%s: not a regular file (%s) and longer than %zu MiB: save it to a "
                      "file first",
                      path, rc_io_file_kind((unsigned)st.st_mode), RC_IO_STREAM_MAX >> 20);
  }
  return ROBOCACHE_OK;
}
