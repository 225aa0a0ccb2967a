/* Bad and unusual inputs of the text readers (reader.h, read_file.h): a
 * UTF-8 byte order mark, time-unit auto decided by the whole column, a
 * fraction of a nanosecond, non-finite values (error or dropped rows), a
 * FIFO with a late writer and without one, a character device that never ends, a
 * directory. Expected times are written out in the test as integer ns. */
#define _POSIX_C_SOURCE 200809L
#include "support.h"
#include "support_tmpdir.h"

#include "read_file.h"
#include "reader.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static rc_io_read_spec spec_of(const char *path, int format) {
  rc_io_read_spec s = {
      .path = path, .format = format, .time_unit = RC_IO_UNIT_AUTO, .require_increasing = 1};
  return s;
}

/* Reads spec, which must fail with status and a message holding every needle
 * (a leading "@" stands for the path). */
static void read_fails(const rc_io_read_spec *spec, robocache_status status,
                       const char *const *needles) {
  rc_io_table t;
  rc_io_err err = {0};
  robocache_status s = rc_io_read(spec, &t, &err);
  if (s != status) fail_msg("status %d, expected %d: %s", (int)s, (int)status, err.msg);
  for (; *needles; needles++) {
    char want[1024];
    if (**needles == '@')
      snprintf(want, sizeof want, "%s%s", spec->path, *needles + 1);
    else
      snprintf(want, sizeof want, "%s", *needles);
    if (!strstr(err.msg, want)) fail_msg("message \"%s\" lacks \"%s\"", err.msg, want);
  }
  rc_io_table_free(&t);
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_byte_order_mark_is_skipped(void **state) {
  rct_tmpdir *dir = *state;
  rc_io_read_spec spec =
      spec_of(rct_tmpdir_write(dir, "bom.csv", "\xEF\xBB\xBFt,x\n5,1\n7,2\n"), RC_IO_FORMAT_AUTO);
  rc_io_table t;
  rc_io_err err = {0};
  assert_int_equal(rc_io_read(&spec, &t, &err), ROBOCACHE_OK);
  assert_int_equal(t.format, RC_IO_FORMAT_CSV);
  assert_string_equal(t.time_name, "t"); /* not "\xEF\xBB\xBFt" */
  assert_int_equal(t.rows, 2);
  assert_int_equal(t.times_ns[1], 7);
  rc_io_table_free(&t);
}

/* The LeRobot SO-101 case: the first time is the integer 0, the next ones
 * are decimal seconds. The unit comes from the whole column. */
static void test_auto_unit_looks_at_the_whole_column(void **state) {
  rct_tmpdir *dir = *state;
  rc_io_read_spec spec =
      spec_of(rct_tmpdir_write(dir, "so101.csv", "timestamp,j0\n0,1\n0.0333,2\n0.0667,3\n1,4\n"),
              RC_IO_FORMAT_CSV);
  rc_io_table t;
  rc_io_err err = {0};
  assert_int_equal(rc_io_read(&spec, &t, &err), ROBOCACHE_OK);
  assert_int_equal(t.time_unit, RC_IO_UNIT_S);
  const int64_t want[4] = {0, 33300000, 66700000, 1000000000};
  for (int i = 0; i < 4; i++) assert_int_equal(t.times_ns[i], want[i]);
  rc_io_table_free(&t);
  /* integers only: nanoseconds, also past the range of seconds */
  spec.path = rct_tmpdir_write(dir, "ns.csv", "t,x\n0,1\n9223372036854775807,2\n");
  assert_int_equal(rc_io_read(&spec, &t, &err), ROBOCACHE_OK);
  assert_int_equal(t.time_unit, RC_IO_UNIT_NS);
  assert_int_equal(t.times_ns[1], INT64_MAX);
  rc_io_table_free(&t);
  /* a decimal later on makes the whole column seconds: the big integer is then out of range */
  spec.path = rct_tmpdir_write(dir, "mixed.csv", "t,x\n9223372036854775807,1\n9.3e18,2\n");
  read_fails(&spec, ROBOCACHE_INVALID_ARGUMENT,
             NEEDLES("@:2:", "'9223372036854775807'", "outside the int64 nanosecond range"));
}

static void test_fraction_of_a_nanosecond_names_the_fix(void **state) {
  rct_tmpdir *dir = *state;
  rc_io_read_spec spec =
      spec_of(rct_tmpdir_write(dir, "frac.csv", "#timestamp [ns],x\n1,1\n2,2\n2.5,3\n"),
              RC_IO_FORMAT_EUROC);
  read_fails(&spec, ROBOCACHE_INVALID_ARGUMENT,
             NEEDLES("@:4:", "'2.5'", "not a whole number of nanoseconds", "time-unit=s"));
  spec.time_unit = RC_IO_UNIT_US; /* 2.5 us is 2500 ns: fine */
  rc_io_table t;
  rc_io_err err = {0};
  assert_int_equal(rc_io_read(&spec, &t, &err), ROBOCACHE_OK);
  assert_int_equal(t.times_ns[2], 2500);
  rc_io_table_free(&t);
}

static void test_nonfinite_values(void **state) {
  rct_tmpdir *dir = *state;
  const char *text = "t,x,y\n1,1,2\n2,inf,2\n3,3,NaN\n4,4,1e999\n5,5,-1e999\n6,6,6\n";
  rc_io_read_spec spec = spec_of(rct_tmpdir_write(dir, "nf.csv", text), RC_IO_FORMAT_CSV);
  read_fails(&spec, ROBOCACHE_INVALID_ARGUMENT,
             NEEDLES("@:3:", "'inf'", "column 'x'", "not finite", "nonfinite=drop"));
  spec.columns = "x"; /* a NaN in an unselected column is no concern... */
  read_fails(&spec, ROBOCACHE_INVALID_ARGUMENT, NEEDLES("@:3:", "'inf'"));
  spec.columns = "y"; /* ...and one in a selected column is */
  read_fails(&spec, ROBOCACHE_INVALID_ARGUMENT, NEEDLES("@:4:", "'NaN'", "column 'y'"));
  spec.columns = NULL;
  spec.nonfinite = RC_IO_NONFINITE_DROP;
  rc_io_table t;
  rc_io_err err = {0};
  assert_int_equal(rc_io_read(&spec, &t, &err), ROBOCACHE_OK);
  assert_int_equal(t.rows, 2);
  assert_int_equal(t.dropped_nonfinite, 4);
  assert_int_equal(t.times_ns[0], 1);
  assert_int_equal(t.times_ns[1], 6);
  assert_int_equal(t.lines[1], 7);
  assert_true(t.values[2] == 6.0 && t.values[3] == 6.0);
  rc_io_table_free(&t);
  spec.path = rct_tmpdir_write(dir, "allnan.csv", "t,x\n1,nan\n2,nan\n");
  read_fails(&spec, ROBOCACHE_INVALID_ARGUMENT, NEEDLES("@", "all 2 had non-finite values"));
}

/* A FIFO that no process opens for writing: an error after a bounded wait. */
static void test_fifo_without_writer_does_not_block(void **state) {
  rct_tmpdir *dir = *state;
  char path[700];
  snprintf(path, sizeof path, "%s", rct_tmpdir_path(dir, "fifo"));
  assert_int_equal(mkfifo(path, 0600), 0);
  rc_io_read_spec spec = spec_of(path, RC_IO_FORMAT_AUTO);
  read_fails(&spec, ROBOCACHE_IO_ERROR, NEEDLES("@: a FIFO that no process writes to"));
}

/* A FIFO with a writer: read once, format detection included (a second open
 * would wait for a writer that is gone). */
static void test_fifo_is_read_once(void **state) {
  rct_tmpdir *dir = *state;
  char path[700];
  snprintf(path, sizeof path, "%s", rct_tmpdir_path(dir, "fifo2"));
  assert_int_equal(mkfifo(path, 0600), 0);
  const char *text = "#timestamp [ns],a,b\n10,1,2\n20,3,4\n30,5,6\n";
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) { /* opens the FIFO after the reader (a second), then writes */
    nanosleep(&(struct timespec){1, 0}, NULL);
    FILE *f = fopen(path, "w");
    _exit(f && fputs(text, f) >= 0 && fclose(f) == 0 ? 0 : 1);
  }
  rc_io_read_spec spec = spec_of(path, RC_IO_FORMAT_AUTO);
  rc_io_table t;
  rc_io_err err = {0};
  robocache_status s = rc_io_read(&spec, &t, &err);
  if (s != ROBOCACHE_OK) fail_msg("%s", err.msg);
  assert_int_equal(t.format, RC_IO_FORMAT_EUROC);
  assert_int_equal(t.rows, 3);
  assert_int_equal(t.times_ns[2], 30);
  rc_io_table_free(&t);
  int status;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_endless_device_is_bounded(void **state) {
  (void)state;
  if (access("/dev/zero", R_OK) != 0) skip();
  rc_io_read_spec spec = spec_of("/dev/zero", RC_IO_FORMAT_CSV);
  read_fails(&spec, ROBOCACHE_IO_ERROR,
             NEEDLES("/dev/zero: not a regular file (a character device)", "longer than 256 MiB"));
}

static void test_directory(void **state) {
  rct_tmpdir *dir = *state;
  rc_io_read_spec spec = spec_of(dir->path, RC_IO_FORMAT_AUTO);
  read_fails(&spec, ROBOCACHE_IO_ERROR, NEEDLES("@: is a directory"));
  spec.format = RC_IO_FORMAT_TUM;
  read_fails(&spec, ROBOCACHE_IO_ERROR, NEEDLES("@: is a directory"));
  rc_io_err err = {0};
  assert_int_equal(rc_io_require_regular(dir->path, &err), ROBOCACHE_IO_ERROR);
  assert_non_null(strstr(err.msg, "is a directory"));
}

int main(void) {
  alarm(120); /* a reader that blocks fails the tests instead of hanging them */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_byte_order_mark_is_skipped, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_auto_unit_looks_at_the_whole_column, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_fraction_of_a_nanosecond_names_the_fix, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_nonfinite_values, rct_tmpdir_setup, rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_fifo_without_writer_does_not_block, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_fifo_is_read_once, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_endless_device_is_bounded, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_directory, rct_tmpdir_setup, rct_tmpdir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
