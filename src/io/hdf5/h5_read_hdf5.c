/* Reading an HDF5 file in a child process (h5_file_hdf5.h rc_h5_read_file):
 * libhdf5 never reads an untrusted file in the calling process. */
#define _GNU_SOURCE /* pipe2 */
#include "h5_attrs_hdf5.h"
#include "h5_file_hdf5.h"
#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RC_H5_READ_MS 10000                /* time a read may take */
#define RC_H5_MAX_RESULT ((size_t)1 << 30) /* bytes a read may send back */

/* Opens path read-only, calls read and closes the file with whatever read
 * left open; returns read's problem. libhdf5's free lists are turned off
 * first (they keep freed blocks for reuse, and a damaged file can leave a
 * bad one there). */
static const char *open_and_read(const char *path, rc_h5_read_fn read, void *arg) {
  H5set_free_list_limits(0, 0, 0, 0, 0, 0);
  rc_h5_quiet quiet = rc_h5_quiet_begin();
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS); /* closing the file closes whatever is left open */
  hid_t file = fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0
                   ? -1
                   : H5Fopen(path, H5F_ACC_RDONLY, fapl);
  const char *problem = file < 0 ? "not an HDF5 file, or unreadable" : read(file, arg);
  if (file >= 0) H5Fclose(file);
  if (fapl >= 0) H5Pclose(fapl);
  rc_h5_quiet_end(quiet);
  return problem;
}

/* The child: reads, then writes 'P' and the problem, or 'K' and the packed
 * result, to fd and exits (3 when it ran out of memory) without atexit
 * handlers: libhdf5's clean-up of a damaged file is not run. */
static void child(int fd, const char *path, const rc_h5_reader *r, void *arg) {
  /* a crash in libhdf5 ends the child; no handler reports it as the parent's */
  static const int crashes[5] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (int i = 0; i < 5; i++) signal(crashes[i], SIG_DFL);
  const char *problem = open_and_read(path, r->read, arg);
  rc_h5_wire out = {0};
  const char tag = problem ? 'P' : 'K';
  rc_h5_put(&out, &tag, 1);
  if (problem)
    rc_h5_put(&out, problem, strlen(problem));
  else
    r->pack(arg, &out);
  if (out.bad) _exit(3);
  for (size_t done = 0; done < out.size;) {
    ssize_t w = write(fd, out.data + done, out.size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(3);
    done += (size_t)w;
  }
  _exit(0);
}

static long elapsed_ms(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long)(now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Reads the child's stream from fd into in until it closes it, then waits
 * for the child; what went wrong, or NULL when it exited 0. */
static const char *receive(int fd, pid_t pid, rc_h5_wire *in) {
  const char *problem = NULL;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  uint8_t chunk[65536];
  for (;;) {
    long left = RC_H5_READ_MS - elapsed_ms(&start);
    struct pollfd p = {fd, POLLIN, 0};
    int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) problem = "libhdf5 did not finish reading it (a damaged file?)";
    if (ready < 0) problem = "cannot read what the reading process sent";
    ssize_t n = problem ? 0 : read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) problem = "cannot read what the reading process sent";
    if (n > 0) rc_h5_put(in, chunk, (size_t)n);
    if (in->bad || in->size > RC_H5_MAX_RESULT)
      problem = "what the reading process sent is over 1 GiB, or out of memory";
    if (problem || n == 0) break;
  }
  if (problem) kill(pid, SIGKILL);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return problem ? problem : "cannot wait for the reading process";
  if (problem) return problem;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return "the reading process ran out of memory";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "libhdf5 crashed reading it (a damaged file)";
  return NULL;
}

/* Runs the read in a child; NULL with arg filled, else the problem (text
 * copied into text when it came from the child). */
static const char *read_in_child(const char *path, const rc_h5_reader *r, void *arg, char *text,
                                 size_t text_size) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) return "cannot start a process to read it";
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child(fds[1], path, r, arg);
  }
  close(fds[1]);
  rc_h5_wire in = {0};
  const char *problem = pid < 0 ? "cannot start a process to read it" : receive(fds[0], pid, &in);
  close(fds[0]);
  if (!problem && (in.size == 0 || (in.data[0] != 'P' && in.data[0] != 'K')))
    problem = "the reading process sent no result";
  if (!problem && in.data[0] == 'P') {
    size_t n = in.size - 1 < text_size - 1 ? in.size - 1 : text_size - 1;
    memcpy(text, in.data + 1, n);
    text[n] = '\0';
    problem = text;
  } else if (!problem) {
    in.at = 1;
    r->unpack(&in, arg);
    if (in.bad) problem = "the reading process sent an incomplete result";
  }
  free(in.data);
  return problem;
}

robocache_status rc_h5_read_file(const char *path, const rc_h5_reader *r, void *arg,
                                 rc_io_err *err) {
  robocache_status s = rc_io_require_regular(path, err); /* libhdf5 would block on a FIFO */
  if (s != ROBOCACHE_OK) return s;
  char text[512];
  const char *problem = read_in_child(path, r, arg, text, sizeof text);
  if (problem)
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: not a robocache %s output: %s", path, r->kind,
                      problem);
  return ROBOCACHE_OK;
}
