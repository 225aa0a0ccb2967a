/* HDF5 writer of src/io: a written file reads back (summary reader), and a
 * failed write never leaves a file that looks complete — neither a new file
 * nor a temporary one, and an existing file at the path stays as it was. */
#include "support.h"
#include "support_tmpdir.h"

#ifdef ROBOCACHE_HAVE_HDF5
#include "hdf5_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T = 5, K = 2, D0 = 2, D1 = 3 };

typedef struct fixture {
  int64_t times[T];
  float obs[T * (D0 + D1)];
  uint8_t valid[T * K];
  robocache_interp_options opt;
  const char *cols0[D0], *cols1[D1];
  rc_io_h5_stream streams[K];
  rc_io_h5_output out;
} fixture;

static void make_fixture(fixture *f, const char *path) {
  memset(f, 0, sizeof *f);
  robocache_interp_options_init(&f->opt);
  for (int t = 0; t < T; t++) {
    f->times[t] = 1000000000LL * t + 7;
    for (int c = 0; c < D0 + D1; c++) f->obs[t * (D0 + D1) + c] = (float)(10 * t + c);
    f->valid[t * K + 0] = 1;
    f->valid[t * K + 1] = t >= 2; /* 3 valid */
  }
  f->cols0[0] = "a", f->cols0[1] = "b";
  f->cols1[0] = "x", f->cols1[1] = "y", f->cols1[2] = "z";
  f->streams[0] = (rc_io_h5_stream){"first", D0, &f->opt, "in0.csv", "euroc", f->cols0, "t"};
  f->streams[1] = (rc_io_h5_stream){"second", D1, &f->opt, "in1.txt", "tum", f->cols1, "t"};
  f->out = (rc_io_h5_output){
      path,    "robocache align test", "test grid", T, f->times, K, f->streams, D0 + D1, f->obs,
      f->valid};
}

static void test_write_and_read_back(void **state) {
  (void)state;
  rct_tmpdir d;
  rct_tmpdir_create(&d);
  char path[700];
  snprintf(path, sizeof path, "%s", rct_tmpdir_path(&d, "out.h5"));
  fixture f;
  make_fixture(&f, path);
  rc_io_err err = {0};
  robocache_status s = rc_io_write_hdf5(&f.out, &err);
  if (s != ROBOCACHE_OK) fail_msg("write failed: %s", err.msg);
  assert_int_equal(rct_tmpdir_count(&d), 1); /* no temporary file left */
  rc_io_h5_summary sum;
  s = rc_io_read_hdf5_summary(path, &sum, &err);
  if (s != ROBOCACHE_OK) fail_msg("read failed: %s", err.msg);
  assert_int_equal(sum.T, T);
  assert_int_equal(sum.K, K);
  assert_string_equal(sum.names[0], "first");
  assert_string_equal(sum.names[1], "second");
  assert_int_equal(sum.cols[0], D0);
  assert_int_equal(sum.cols[1], D1);
  assert_int_equal(sum.valid_count[0], T);
  assert_int_equal(sum.valid_count[1], 3);
  assert_memory_equal(sum.timestamps_ns, f.times, sizeof f.times);
  assert_string_equal(sum.version, robocache_version_string());
  assert_string_equal(sum.target, "test grid");
  rc_io_h5_summary_free(&sum);
  rct_tmpdir_remove(&d);
}

static void test_unwritable_path_leaves_no_file(void **state) {
  (void)state;
  rct_tmpdir d;
  rct_tmpdir_create(&d);
  char path[700];
  snprintf(path, sizeof path, "%s/no/such/dir/out.h5", d.path);
  fixture f;
  make_fixture(&f, path);
  rc_io_err err = {0};
  assert_int_equal(rc_io_write_hdf5(&f.out, &err), ROBOCACHE_IO_ERROR);
  assert_non_null(strstr(err.msg, "cannot write"));
  assert_non_null(strstr(err.msg, path));
  assert_int_equal(rct_tmpdir_count(&d), 0);
  rct_tmpdir_remove(&d);
}

static void test_failure_midway_keeps_old_file_and_removes_temp(void **state) {
  (void)state;
  rct_tmpdir d;
  rct_tmpdir_create(&d);
  const char *old = "an older file\n";
  char path[700];
  snprintf(path, sizeof path, "%s", rct_tmpdir_write(&d, "out.h5", old));
  fixture f;
  make_fixture(&f, path);
  f.streams[1].name = "first"; /* a second dataset of the same name: HDF5 refuses */
  rc_io_err err = {0};
  assert_int_equal(rc_io_write_hdf5(&f.out, &err), ROBOCACHE_IO_ERROR);
  assert_non_null(strstr(err.msg, "HDF5 error while writing first"));
  assert_int_equal(rct_tmpdir_count(&d), 1); /* the temporary file is gone */
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  char buf[64] = {0};
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  fclose(fp);
  assert_int_equal(n, strlen(old));
  assert_string_equal(buf, old);
  rct_tmpdir_remove(&d);
}

static void test_summary_rejects_foreign_files(void **state) {
  (void)state;
  rct_tmpdir d;
  rct_tmpdir_create(&d);
  rc_io_h5_summary sum;
  rc_io_err err = {0};
  const char *path = rct_tmpdir_write(&d, "text.h5", "not hdf5\n");
  assert_int_equal(rc_io_read_hdf5_summary(path, &sum, &err), ROBOCACHE_IO_ERROR);
  assert_non_null(strstr(err.msg, "not a robocache align output"));
  rc_io_h5_summary_free(&sum);
  rct_tmpdir_remove(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_write_and_read_back),
      cmocka_unit_test(test_unwritable_path_leaves_no_file),
      cmocka_unit_test(test_failure_midway_keeps_old_file_and_removes_temp),
      cmocka_unit_test(test_summary_rejects_foreign_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void) { return 77; /* built without HDF5: skipped */ }
#endif
