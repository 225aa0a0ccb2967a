/* Output files (atomic_file.h): a temporary file removed on SIGINT and
 * SIGTERM (the signal still ends the process), a full disk (RLIMIT_FSIZE in a
 * child) leaving nothing behind, and outputs that must not be replaced: a
 * symbolic link, a device, a directory, one of the inputs. */
#define _POSIX_C_SOURCE 200809L
#include "support.h"
#include "support_tmpdir.h"

#include "atomic_file.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs fn(path) in a child process; returns its wait status. */
static int in_child(void (*fn)(const char *), const char *path) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    fn(path);
    _exit(0);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return status;
}

static int rc_signal;

/* A write interrupted between creating its temporary file and renaming it. */
static void interrupted_write(const char *path) {
  rc_io_remove_temp_on_signals();
  rc_io_err err = {0};
  char *tmp = rc_io_temp_create(path, &err);
  if (!tmp || access(tmp, F_OK) != 0) _exit(2); /* the temporary file exists */
  raise(rc_signal);
  _exit(3); /* not reached: the signal ends the process */
}

static void test_signal_removes_the_temporary_file(void **state) {
  rct_tmpdir *dir = *state;
  const int sigs[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++) {
    rc_signal = sigs[i];
    int status = in_child(interrupted_write, rct_tmpdir_path(dir, "out.h5"));
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sigs[i]);
    assert_int_equal(rct_tmpdir_count(dir), 0);
  }
}

/* An ignored signal stays ignored (a program run with nohup, or in the
 * background of a non-interactive shell). */
static void ignored_signal(const char *path) {
  signal(SIGINT, SIG_IGN);
  rc_io_remove_temp_on_signals();
  raise(SIGINT);
  rc_io_bytes part = {"ok\n", 3};
  _exit(rc_io_write_atomic(path, &part, 1, NULL) == ROBOCACHE_OK ? 0 : 1);
}

static void test_ignored_signal_stays_ignored(void **state) {
  rct_tmpdir *dir = *state;
  int status = in_child(ignored_signal, rct_tmpdir_path(dir, "out.txt"));
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(rct_tmpdir_count(dir), 1);
}

/* A disk that fills up: writes past 4 KiB fail with EFBIG. */
static void full_disk_write(const char *path) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = {4096, 4096};
  setrlimit(RLIMIT_FSIZE, &lim);
  static char data[1 << 16];
  rc_io_bytes part = {data, sizeof data};
  rc_io_err err = {0};
  robocache_status s = rc_io_write_atomic(path, &part, 1, &err);
  _exit(s == ROBOCACHE_IO_ERROR && strstr(err.msg, "cannot write") && strstr(err.msg, path) ? 0
                                                                                            : 1);
}

static void test_full_disk_leaves_nothing(void **state) {
  rct_tmpdir *dir = *state;
  int status = in_child(full_disk_write, rct_tmpdir_path(dir, "big.npy"));
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(rct_tmpdir_count(dir), 0);
}

static void check_refused(const char *path, const char *const *inputs, int n, const char *needle) {
  rc_io_err err = {0};
  assert_int_equal(rc_io_check_output(path, inputs, n, &err), ROBOCACHE_IO_ERROR);
  if (!strstr(err.msg, path) || !strstr(err.msg, needle))
    fail_msg("message \"%s\" lacks the path or \"%s\"", err.msg, needle);
}

static void test_outputs_that_are_not_replaced(void **state) {
  rct_tmpdir *dir = *state;
  char in[700], sym[700], hard[700];
  snprintf(in, sizeof in, "%s", rct_tmpdir_write(dir, "in.csv", "t,x\n1,2\n"));
  snprintf(sym, sizeof sym, "%s", rct_tmpdir_path(dir, "sym.h5"));
  snprintf(hard, sizeof hard, "%s", rct_tmpdir_path(dir, "hard.h5"));
  assert_int_equal(symlink(in, sym), 0);
  check_refused(sym, NULL, 0, "it exists and is a symbolic link");
  rc_io_bytes part = {"new\n", 4};
  rc_io_err err = {0};
  assert_int_equal(rc_io_write_atomic(sym, &part, 1, &err), ROBOCACHE_IO_ERROR);
  FILE *f = fopen(in, "rb");
  char buf[32] = {0};
  assert_non_null(f);
  assert_int_equal(fread(buf, 1, sizeof buf - 1, f), 8); /* the input is untouched */
  fclose(f);
  assert_string_equal(buf, "t,x\n1,2\n");
  check_refused("/dev/null", NULL, 0, "it exists and is a character device");
  check_refused(dir->path, NULL, 0, "it exists and is a directory");
  /* the same file under another name: a hard link */
  assert_int_equal(link(in, hard), 0);
  const char *inputs[2] = {"/nonexistent/input.csv", in};
  check_refused(hard, inputs, 2, "it is the input");
  check_refused(in, inputs, 2, "it is the input");
  assert_int_equal(rc_io_check_output(rct_tmpdir_path(dir, "new.h5"), inputs, 2, &err),
                   ROBOCACHE_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_signal_removes_the_temporary_file, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_ignored_signal_stays_ignored, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_full_disk_leaves_nothing, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_outputs_that_are_not_replaced, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
