/* Readers of src/io (EuRoC CSV, TUM, timestamp lists, generic CSV) on the
 * real files of data/sensors and on small malformed files written here. The
 * expected values are parsed in the test from the file text (strtoll/strtod,
 * integer arithmetic), not by the readers. */
#include "support.h"
#include "support_tmpdir.h"

#include "reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy of the n-th (0-based) line of text that is neither empty nor a '#'
 * comment (static buffer). */
static const char *data_line(const char *text, int64_t n) {
  static char line[4096];
  const char *p = text;
  for (;;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > 0 && p[0] != '#' && n-- == 0) {
      assert_true(len < sizeof line);
      memcpy(line, p, len);
      line[len] = '\0';
      return line;
    }
    assert_non_null(end);
    p = end + 1;
  }
}

/* "SSS.FFF" decimal seconds to ns with integer arithmetic (test oracle). */
static int64_t seconds_to_ns(const char *s) {
  char *dot;
  int64_t ns = strtoll(s, &dot, 10) * 1000000000LL;
  if (*dot == '.') {
    int64_t scale = 100000000LL;
    for (const char *p = dot + 1; *p >= '0' && *p <= '9'; p++, scale /= 10)
      ns += (*p - '0') * scale;
  }
  return ns;
}

static rc_io_read_spec spec_of(const char *path, int format) {
  rc_io_read_spec s = {
      .path = path, .format = format, .time_unit = RC_IO_UNIT_AUTO, .require_increasing = 1};
  return s;
}

static void read_ok(const rc_io_read_spec *spec, rc_io_table *t) {
  rc_io_err err = {0};
  robocache_status s = rc_io_read(spec, t, &err);
  if (s != ROBOCACHE_OK) fail_msg("reading %s failed: %s", spec->path, err.msg);
}

static void test_euroc_imu(void **state) {
  (void)state;
  char *text = rct_read_data_file("sensors/euroc_V1_01_easy_imu0.csv", NULL);
  rc_io_read_spec spec =
      spec_of(rct_data_path("sensors/euroc_V1_01_easy_imu0.csv"), RC_IO_FORMAT_EUROC);
  rc_io_table t;
  read_ok(&spec, &t);
  assert_int_equal(t.rows, 29120);
  assert_int_equal(t.cols, 6);
  assert_string_equal(t.time_name, "timestamp [ns]");
  assert_string_equal(t.names[0], "w_RS_S_x [rad s^-1]");
  assert_string_equal(t.names[5], "a_RS_S_z [m s^-2]");
  int64_t rows[] = {0, 1, 14560, 29119};
  for (size_t i = 0; i < 4; i++) {
    char *p = (char *)data_line(text, rows[i]);
    assert_int_equal(t.times_ns[rows[i]], strtoll(p, &p, 10));
    for (int j = 0; j < 6; j++) {
      assert_int_equal(*p, ',');
      double v = strtod(p + 1, &p);
      assert_true(t.values[rows[i] * 6 + j] == v);
    }
  }
  assert_int_equal(t.lines[0], 2);
  rc_io_table_free(&t);
  free(text);
}

static void test_euroc_columns_by_short_name_and_index(void **state) {
  (void)state;
  rc_io_read_spec spec =
      spec_of(rct_data_path("sensors/euroc_V1_01_easy_imu0.csv"), RC_IO_FORMAT_EUROC);
  spec.columns = "a_RS_S_z:w_RS_S_x [rad s^-1]:2";
  rc_io_table t, all;
  read_ok(&spec, &t);
  spec.columns = NULL;
  read_ok(&spec, &all);
  assert_int_equal(t.cols, 3);
  assert_string_equal(t.names[0], "a_RS_S_z [m s^-2]");
  assert_string_equal(t.names[2], "w_RS_S_y [rad s^-1]");
  for (int64_t r = 0; r < t.rows; r += 977) {
    assert_true(t.values[r * 3 + 0] == all.values[r * 6 + 5]);
    assert_true(t.values[r * 3 + 1] == all.values[r * 6 + 0]);
    assert_true(t.values[r * 3 + 2] == all.values[r * 6 + 1]);
  }
  rc_io_table_free(&t);
  rc_io_table_free(&all);
}

static void test_tum_groundtruth_exact_times(void **state) {
  (void)state;
  const char *rel = "sensors/euroc_V1_01_easy_groundtruth_200hz.txt";
  char *text = rct_read_data_file(rel, NULL);
  rc_io_read_spec spec = spec_of(rct_data_path(rel), RC_IO_FORMAT_TUM);
  spec.columns = "qx:qy:qz:qw";
  rc_io_table t;
  read_ok(&spec, &t);
  assert_int_equal(t.rows, 28712);
  assert_int_equal(t.cols, 4);
  assert_int_equal(t.time_unit, RC_IO_UNIT_S);
  assert_int_equal(t.times_ns[0], 1403715274LL * 1000000000LL + 302140000LL);
  int64_t rows[] = {0, 5000, 28711};
  for (size_t i = 0; i < 3; i++) {
    char line[4096];
    strcpy(line, data_line(text, rows[i]));
    assert_int_equal(t.times_ns[rows[i]], seconds_to_ns(line));
    char *p = strchr(line, ' ');
    for (int j = 0; j < 3; j++) strtod(p, &p); /* tx ty tz */
    for (int j = 0; j < 4; j++) assert_true(t.values[rows[i] * 4 + j] == strtod(p, &p));
  }
  rc_io_table_free(&t);
  free(text);
}

static void test_tum_fr1_comments_and_lines(void **state) {
  (void)state;
  rc_io_read_spec spec =
      spec_of(rct_data_path("sensors/tum_fr1_xyz_groundtruth.txt"), RC_IO_FORMAT_AUTO);
  rc_io_table t;
  read_ok(&spec, &t);
  assert_int_equal(t.format, RC_IO_FORMAT_TUM);
  assert_int_equal(t.rows, 3000);
  assert_int_equal(t.cols, 7);
  assert_int_equal(t.lines[0], 4); /* after 3 comment lines */
  assert_int_equal(t.times_ns[0], 1305031098LL * 1000000000LL + 665900000LL);
  assert_string_equal(t.names[6], "qw");
  rc_io_table_free(&t);
}

static void test_timestamp_lists(void **state) {
  (void)state;
  rc_io_read_spec spec =
      spec_of(rct_data_path("sensors/euroc_V1_01_easy_cam0_timestamps.txt"), RC_IO_FORMAT_AUTO);
  rc_io_table t;
  read_ok(&spec, &t);
  assert_int_equal(t.format, RC_IO_FORMAT_TIMESTAMPS);
  assert_int_equal(t.time_unit, RC_IO_UNIT_NS);
  assert_int_equal(t.rows, 2912);
  assert_int_equal(t.cols, 0);
  assert_int_equal(t.times_ns[0], 1403715273262142976LL);
  assert_int_equal(t.times_ns[2911], 1403715418812143104LL);
  rc_io_table_free(&t);

  /* associations: column 2 is the depth time, in decimal seconds */
  spec = spec_of(rct_data_path("sensors/tum_fr1_xyz_rgb_depth_associations.txt"),
                 RC_IO_FORMAT_TIMESTAMPS);
  spec.time_column = "2";
  read_ok(&spec, &t);
  assert_int_equal(t.time_unit, RC_IO_UNIT_S);
  assert_int_equal(t.rows, 792);
  assert_int_equal(t.times_ns[0], 1305031102LL * 1000000000LL + 160407000LL);
  rc_io_table_free(&t);
}

static void test_detect_real_files(void **state) {
  (void)state;
  static const struct {
    const char *rel;
    int format;
  } cases[] = {{"sensors/euroc_V1_01_easy_imu0.csv", RC_IO_FORMAT_EUROC},
               {"sensors/euroc_V1_01_easy_groundtruth_200hz.txt", RC_IO_FORMAT_TUM},
               {"sensors/euroc_V1_01_easy_cam0_timestamps.txt", RC_IO_FORMAT_TIMESTAMPS},
               {"sensors/tum_fr1_xyz_groundtruth.txt", RC_IO_FORMAT_TUM},
               {"sensors/tum_fr1_xyz_rgb_depth_associations.txt", RC_IO_FORMAT_TIMESTAMPS}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int f = -1;
    rc_io_err err = {0};
    assert_int_equal(rc_io_detect_format(rct_data_path(cases[i].rel), &f, &err), ROBOCACHE_OK);
    if (f != cases[i].format) fail_msg("%s detected as %s", cases[i].rel, rc_io_format_name(f));
  }
}

/* Detection reads the first 64 KiB of a file; past that only when they hold
 * no data line: 70,000 comment bytes before TUM rows, and a comment line
 * longer than 64 KiB (the limit cuts it) before timestamps, are still
 * detected and read. */
static void test_detect_past_the_first_bytes(void **state) {
  (void)state;
  rct_tmpdir d;
  rct_tmpdir_create(&d);
  const size_t pad = 70000;
  char *text = malloc(pad + 64);
  assert_non_null(text);
  for (size_t i = 0; i < pad; i += 10) memcpy(text + i, "# comment\n", 10);
  strcpy(text + pad, "1.0 1 2 3 0 0 0 1\n2.5 1 2 3 0 0 0 1\n");
  const char *cases[2] = {"comments.txt", "long_comment.txt"};
  for (int k = 0; k < 2; k++) {
    if (k == 1) { /* one comment line of 70,000 characters, then timestamps */
      memset(text, 'x', pad);
      text[0] = '#';
      strcpy(text + pad, "\n1000\n2000\n");
    }
    const char *path = rct_tmpdir_write(&d, cases[k], text);
    int f = -1;
    rc_io_err err = {0};
    assert_int_equal(rc_io_detect_format(path, &f, &err), ROBOCACHE_OK);
    assert_int_equal(f, k == 0 ? RC_IO_FORMAT_TUM : RC_IO_FORMAT_TIMESTAMPS);
    rc_io_read_spec spec = spec_of(path, RC_IO_FORMAT_AUTO);
    rc_io_table t;
    robocache_status st = rc_io_read(&spec, &t, &err);
    if (st != ROBOCACHE_OK) fail_msg("%s: %s", cases[k], err.msg);
    assert_int_equal(t.rows, 2);
    assert_int_equal(t.times_ns[1] - t.times_ns[0], k == 0 ? 1500000000LL : 1000LL);
    rc_io_table_free(&t);
  }
  free(text);
  rct_tmpdir_remove(&d);
}

/* Reads text (written to name) and expects status with every needle in the
 * message; the path of the file is substituted for "@" in needles. */
static void expect_error(rct_tmpdir *d, const char *name, const char *text, int format,
                         const char *columns, robocache_status status, const char *const *needles) {
  const char *path = rct_tmpdir_write(d, name, text);
  rc_io_read_spec spec = spec_of(path, format);
  spec.columns = columns;
  rc_io_table t;
  rc_io_err err = {0};
  robocache_status s = rc_io_read(&spec, &t, &err);
  rc_io_table_free(&t);
  if (s != status) fail_msg("%s: status %d, expected %d (%s)", name, (int)s, (int)status, err.msg);
  for (; *needles; needles++) {
    char needle[1024];
    const char *at = strchr(*needles, '@');
    if (at)
      snprintf(needle, sizeof needle, "%.*s%s%s", (int)(at - *needles), *needles, path, at + 1);
    else
      snprintf(needle, sizeof needle, "%s", *needles);
    if (!strstr(err.msg, needle)) fail_msg("message '%s' lacks '%s'", err.msg, needle);
  }
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char euroc_head[] = "#timestamp [ns],x [m],y [m]\n";

static void test_malformed_inputs(void **state) {
  (void)state;
  rct_tmpdir d;
  rct_tmpdir_create(&d);
  char text[512];
  snprintf(text, sizeof text, "%s1000,1,2\n2000,3\n", euroc_head);
  expect_error(&d, "truncated.csv", text, RC_IO_FORMAT_EUROC, NULL, ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("@:3:", "expected 3 fields, found 2"));
  snprintf(text, sizeof text, "%s1000,1,2\n2000,3,abc\n", euroc_head);
  expect_error(&d, "badnum.csv", text, RC_IO_FORMAT_EUROC, NULL, ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("@:3:", "bad number 'abc'", "'y [m]'"));
  snprintf(text, sizeof text, "%s1000,1,2\nnan,3,4\n", euroc_head);
  expect_error(&d, "nantime.csv", text, RC_IO_FORMAT_EUROC, NULL, ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("@:3:", "bad timestamp 'nan'"));
  snprintf(text, sizeof text, "%s1000,1,2\n3000,3,4\n2000,5,6\n", euroc_head);
  expect_error(&d, "backwards.csv", text, RC_IO_FORMAT_EUROC, NULL, ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("@:4:", "before the previous row's", "line 3", "strictly increasing"));
  snprintf(text, sizeof text, "%s1000,1,2\n1000,3,4\n", euroc_head);
  expect_error(&d, "repeat.csv", text, RC_IO_FORMAT_EUROC, NULL, ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("@:3:", "equal to the previous row's"));
  expect_error(
      &d, "unknown.csv", "#timestamp [ns],x [m],y [m]\n1,2,3\n", RC_IO_FORMAT_EUROC, "x:z",
      ROBOCACHE_INVALID_ARGUMENT,
      NEEDLES("@", "unknown column 'z'", "available columns: 'timestamp [ns]', 'x [m]', 'y [m]'"));
  expect_error(&d, "index.csv", "#t,x\n1,2\n", RC_IO_FORMAT_EUROC, "5", ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("column index 5 out of range", "(0..1)"));
  expect_error(&d, "empty.csv", euroc_head, RC_IO_FORMAT_EUROC, NULL, ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("@: no data rows"));
  expect_error(&d, "noheader.csv", "1000,1,2\n", RC_IO_FORMAT_EUROC, NULL,
               ROBOCACHE_INVALID_ARGUMENT, NEEDLES("@:1:", "'#' header"));
  expect_error(&d, "tum.txt", "# c\n1.0 1 2 3 0 0 0 1\n2.0 1 2 3 0 0 0\n", RC_IO_FORMAT_TUM, NULL,
               ROBOCACHE_INVALID_ARGUMENT, NEEDLES("@:3:", "expected 8 fields, found 7"));
  expect_error(&d, "quote.csv", "t,x\n1,\"2\n", RC_IO_FORMAT_CSV, NULL, ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("@:2:", "unterminated quoted field"));
  expect_error(&d, "huge.txt", "99999999999.5\n", RC_IO_FORMAT_TIMESTAMPS, NULL,
               ROBOCACHE_INVALID_ARGUMENT, NEEDLES("@:1:", "outside the int64 nanosecond range"));
  expect_error(&d, "cols.txt", "1\n2\n", RC_IO_FORMAT_TIMESTAMPS, "1", ROBOCACHE_INVALID_ARGUMENT,
               NEEDLES("no value columns"));
  rc_io_read_spec spec = spec_of(rct_tmpdir_path(&d, "missing.csv"), RC_IO_FORMAT_EUROC);
  rc_io_table t;
  rc_io_err err = {0};
  assert_int_equal(rc_io_read(&spec, &t, &err), ROBOCACHE_IO_ERROR);
  assert_non_null(strstr(err.msg, "cannot open"));
  rc_io_table_free(&t);
  rct_tmpdir_remove(&d);
}

static void test_unordered_allowed_without_check(void **state) {
  (void)state;
  rct_tmpdir d;
  rct_tmpdir_create(&d);
  rc_io_read_spec spec =
      spec_of(rct_tmpdir_write(&d, "u.csv", "#timestamp [ns],x\n3000,1\n2000,2\n2000,3\n"),
              RC_IO_FORMAT_EUROC);
  spec.require_increasing = 0;
  rc_io_table t;
  read_ok(&spec, &t);
  assert_int_equal(t.rows, 3);
  assert_int_equal(t.times_ns[1], 2000);
  assert_true(t.values[2] == 3.0);
  rc_io_table_free(&t);
  rct_tmpdir_remove(&d);
}

static void test_generic_csv(void **state) {
  (void)state;
  rct_tmpdir d;
  rct_tmpdir_create(&d);
  /* quoted names with commas, CRLF, blanks around fields, a unit of ms */
  const char *path = rct_tmpdir_write(
      &d, "g.csv",
      "\r\n\"x, left\" , time_ms,\"say \"\"hi\"\"\"\r\n 1.5 , 10.25 , 7\r\n\r\n2.5,20.5,8\r\n");
  rc_io_read_spec spec = spec_of(path, RC_IO_FORMAT_CSV);
  spec.time_column = "time_ms";
  spec.time_unit = RC_IO_UNIT_MS;
  rc_io_table t;
  read_ok(&spec, &t);
  assert_int_equal(t.rows, 2);
  assert_int_equal(t.cols, 2);
  assert_string_equal(t.names[0], "x, left");
  assert_string_equal(t.names[1], "say \"hi\"");
  assert_int_equal(t.times_ns[0], 10250000);
  assert_int_equal(t.times_ns[1], 20500000);
  assert_true(t.values[0] == 1.5 && t.values[1] == 7.0 && t.values[2] == 2.5);
  assert_int_equal(t.lines[1], 5);
  rc_io_table_free(&t);
  /* time-unit auto: integers are ns */
  spec = spec_of(rct_tmpdir_write(&d, "n.csv", "t,v\n100,1\n200,2\n"), RC_IO_FORMAT_AUTO);
  read_ok(&spec, &t);
  assert_int_equal(t.format, RC_IO_FORMAT_CSV);
  assert_int_equal(t.time_unit, RC_IO_UNIT_NS);
  assert_int_equal(t.times_ns[1], 200);
  rc_io_table_free(&t);
  rct_tmpdir_remove(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_euroc_imu),
      cmocka_unit_test(test_euroc_columns_by_short_name_and_index),
      cmocka_unit_test(test_tum_groundtruth_exact_times),
      cmocka_unit_test(test_tum_fr1_comments_and_lines),
      cmocka_unit_test(test_timestamp_lists),
      cmocka_unit_test(test_detect_real_files),
      cmocka_unit_test(test_detect_past_the_first_bytes),
      cmocka_unit_test(test_malformed_inputs),
      cmocka_unit_test(test_unordered_allowed_without_check),
      cmocka_unit_test(test_generic_csv),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
