/* Writing and reading a robocache HDF5 file: temporary file, quiet errors,
 * root attributes. */
#define _POSIX_C_SOURCE 200809L /* gmtime_r, nanosleep */
#include "h5_file_hdf5.h"

#include "atomic_file.h"
#include "h5_attrs_hdf5.h"
#include "read_file.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RC_H5_PROBE_MS 10000 /* time a summary read may take */

/* The whole file is built in memory (HDF5's core driver, no backing store)
 * and written by rc_io_write_atomic: a full disk fails in our write, never in
 * libhdf5's own flush, whose failure leaves the file open and crashes HDF5's
 * clean-up at exit. */
robocache_status rc_h5_write_file(const char *path, rc_h5_contents_fn contents, const void *arg,
                                  rc_io_err *err) {
  robocache_status s = rc_io_check_output(path, NULL, 0, err);
  if (s != ROBOCACHE_OK) return s;
  rc_h5_quiet quiet = rc_h5_quiet_begin(); /* the library never prints */
  const char *what = "the file";
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  hid_t file = fapl < 0 || H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) < 0
                   ? -1
                   : H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  herr_t r = file < 0 ? -1 : contents(file, arg, &what);
  ssize_t size = -1;
  void *image = NULL;
  if (r >= 0) {
    what = "the file image";
    size = H5Fflush(file, H5F_SCOPE_LOCAL) < 0 ? -1 : H5Fget_file_image(file, NULL, 0);
    image = size > 0 ? malloc((size_t)size) : NULL;
    if (!image || H5Fget_file_image(file, image, (size_t)size) != size) r = -1;
  }
  if (file >= 0 && H5Fclose(file) < 0) r = -1;
  if (fapl >= 0) H5Pclose(fapl);
  rc_h5_quiet_end(quiet);
  if (r < 0) {
    free(image);
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "cannot write '%s': HDF5 error while writing %s",
                      path, what);
  }
  s = rc_io_write_atomic(path, &(rc_io_bytes){image, (size_t)size}, 1, err);
  free(image);
  return s;
}

/* Opens path read-only, calls read and closes the file with whatever read
 * left open; returns read's problem. libhdf5's free lists are turned off
 * first: they keep freed blocks for reuse across files, and a damaged file
 * could leave a bad block there for a later read, or the library's exit, to
 * free (found by fuzz_hdf5); without them each block goes back to malloc
 * when libhdf5 frees it. */
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

/* libhdf5 (1.10) can crash or loop on a damaged file, e.g. in the heap of
 * its variable-length strings, which no check before H5Aread can rule out.
 * The read is therefore first done in a child process: a crash or a read
 * longer than RC_H5_PROBE_MS there is the file's problem, returned here;
 * NULL when the child finished (or could not be started). */
static const char *probe_in_child(const char *path, rc_h5_read_fn read, void *arg) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return NULL;
  if (pid == 0) {
    /* a crash in libhdf5 ends the child; no handler (a sanitizer's, a fuzzer's)
     * reports it as one of robocache's */
    static const int crashes[5] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (int i = 0; i < 5; i++) signal(crashes[i], SIG_DFL);
    open_and_read(path, read, arg);
    _exit(0); /* no atexit handlers: HDF5's clean-up is the parent's */
  }
  int status;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return NULL;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >
        RC_H5_PROBE_MS) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "libhdf5 did not finish reading it (a damaged file?)";
    }
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0
             ? NULL
             : "libhdf5 crashed reading it (a damaged file)";
}

robocache_status rc_h5_read_file(const char *path, const char *kind, rc_h5_read_fn read, void *arg,
                                 rc_io_err *err) {
  robocache_status s = rc_io_require_regular(path, err); /* libhdf5 would block on a FIFO */
  if (s != ROBOCACHE_OK) return s;
  const char *problem = probe_in_child(path, read, arg);
  if (!problem) problem = open_and_read(path, read, arg);
  if (problem)
    return rc_io_fail(err, ROBOCACHE_IO_ERROR, "%s: not a robocache %s output: %s", path, kind,
                      problem);
  return ROBOCACHE_OK;
}

herr_t rc_h5_root_attrs(hid_t file, const char *command_line, const char *layout) {
  char created[32] = "unknown";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
  herr_t r = 0;
  r |= rc_h5_attr_string(file, "robocache_version", robocache_version_string());
  r |= rc_h5_attr_string(file, "command_line", command_line ? command_line : "");
  r |= rc_h5_attr_string(file, "created", created);
  r |= rc_h5_attr_string(file, "layout", layout);
  return r < 0 ? -1 : 0;
}
