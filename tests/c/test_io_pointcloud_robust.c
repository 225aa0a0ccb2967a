/* Point-cloud headers that declare more data than the file holds (counts
 * near 2^62 whose byte size wraps around 2^64, WIDTH x HEIGHT overflowing
 * int64, an LZF block that cannot expand to its declared size), .bin sizes
 * that fit no column count, and file names without a known extension. Each
 * must be an INVALID_ARGUMENT naming the file, before any large allocation
 * (run under ASan by `make test`). */
#include "support.h"
#include "support_tmpdir.h"

#include "pointcloud.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes header followed by body[len] to name; returns the path. */
static const char *write_file(rct_tmpdir *dir, const char *name, const char *header,
                              const void *body, size_t len) {
  static char path[640];
  snprintf(path, sizeof path, "%s", rct_tmpdir_path(dir, name));
  FILE *f = fopen(path, "wb");
  if (!f) fail_msg("cannot create %s", path);
  assert_int_equal(fwrite(header, 1, strlen(header), f), strlen(header));
  if (len) assert_int_equal(fwrite(body, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  return path;
}

static void read_fails(const char *path, int32_t bin_columns, const char *needle) {
  rc_pointcloud pc;
  rc_io_err err = {0};
  robocache_status s = rc_pointcloud_read(path, RC_PC_FORMAT_AUTO, bin_columns, &pc, &err);
  rc_pointcloud_free(&pc);
  if (s != ROBOCACHE_INVALID_ARGUMENT)
    fail_msg("%s: expected INVALID_ARGUMENT, got %s (%s)", path, robocache_status_name(s), err.msg);
  if (!strstr(err.msg, path) || !strstr(err.msg, needle))
    fail_msg("message \"%s\" lacks the path or \"%s\"", err.msg, needle);
}

#define XYZ_F4 "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n"

/* 2^62 points of 12 bytes: 3 * 2^64 bytes, 0 modulo 2^64. */
static void test_huge_counts(void **state) {
  rct_tmpdir *dir = *state;
  static const float pts[6] = {1, 2, 3, 4, 5, 6};
  static const uint32_t words[2] = {0, 0}; /* uncompressed size 0: the wrapped product */
#define BIG "4611686018427387904"
  static const char wrapped[] =
      "truncated: " BIG " points of 12 bytes are more than any file holds";
  const struct {
    const char *name, *header;
    const void *body;
    size_t len;
    const char *needle;
  } cases[] = {
      {"big_binary.pcd",
       "VERSION 0.7\n" XYZ_F4 "WIDTH " BIG "\nHEIGHT 1\nPOINTS " BIG "\nDATA binary\n", pts,
       sizeof pts, wrapped},
      {"big_width_only.pcd", "VERSION 0.7\n" XYZ_F4 "WIDTH " BIG "\nHEIGHT 1\nDATA ascii\n",
       "1 2 3\n", 6, "POINTS says " BIG " but the data has 1 points at most"},
      {"big_compressed.pcd",
       "VERSION 0.7\n" XYZ_F4 "WIDTH " BIG "\nHEIGHT 1\nPOINTS " BIG "\nDATA binary_compressed\n",
       words, sizeof words, "does not match " BIG " points"},
      {"big_binary.ply",
       "ply\nformat binary_little_endian 1.0\nelement vertex " BIG
       "\nproperty float x\nproperty float y\nproperty float z\nend_header\n",
       pts, sizeof pts, wrapped},
      {"big_ascii.ply",
       "ply\nformat ascii 1.0\nelement vertex " BIG
       "\nproperty float x\nproperty float y\nproperty float z\nend_header\n",
       "1 2 3\n4 5 6\n", 12, "element vertex says " BIG " but the data has 2 points at most"},
  };
#undef BIG
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    read_fails(write_file(dir, cases[i].name, cases[i].header, cases[i].body, cases[i].len), 0,
               cases[i].needle);
}

/* WIDTH 3 x HEIGHT 6148914691236517206 wraps int64 to 2: no organized cloud
 * of 2 points. */
static void test_width_times_height_overflow(void **state) {
  rct_tmpdir *dir = *state;
  read_fails(write_file(dir, "organized.pcd",
                        "VERSION 0.7\n" XYZ_F4 "WIDTH 3\nHEIGHT 6148914691236517206\nPOINTS 2\n"
                        "DATA ascii\n",
                        "1 2 3\n4 5 6\n", 12),
             0, "WIDTH 3 x HEIGHT 6148914691236517206 overflows int64");
}

#ifdef ROBOCACHE_HAVE_LZF
/* 2^28 points declared (3 GiB uncompressed) in an 8-byte LZF block. */
static void test_lzf_block_too_small_for_its_size(void **state) {
  rct_tmpdir *dir = *state;
  const uint32_t body[4] = {8, 3u << 30, 0, 0};
  read_fails(write_file(dir, "lzf.pcd",
                        "VERSION 0.7\n" XYZ_F4 "WIDTH 268435456\nHEIGHT 1\nPOINTS 268435456\n"
                        "DATA binary_compressed\n",
                        body, sizeof body),
             0, "8 compressed bytes cannot hold 3221225472");
}
#endif

static void test_bin_size_lists_column_counts_that_fit(void **state) {
  rct_tmpdir *dir = *state;
  const size_t bytes = 1000; /* 250 floats: 250 = 2 * 5^3 */
  char *zeros = calloc(1, bytes);
  const char *path = write_file(dir, "odd.bin", "", zeros, bytes);
  free(zeros);
  char fit[256] = "";
  for (int c = 3, n = 0; c <= RC_PC_MAX_COLS; c++) /* the oracle: divisors of 250 */
    if (250 % c == 0) n += snprintf(fit + n, sizeof fit - (size_t)n, "%s%d", n ? ", " : "", c);
  assert_string_equal(fit, "5, 10, 25, 50");
  char needle[300];
  snprintf(needle, sizeof needle, "column counts 3..64 that fit: %s)", fit);
  read_fails(path, 0, "size 1000 bytes is not a multiple of 16 (4 float32 columns");
  read_fails(path, 0, needle);
  read_fails(path, 3, needle);
}

/* WIDTH x HEIGHT of a .bin is its rows, those with NaN x, y, z included (as
 * for PCD and PLY). */
static void test_bin_width_counts_dropped_rows(void **state) {
  rct_tmpdir *dir = *state;
  const float pts[8] = {1, 2, 3, 4, NAN, 6, 7, 8};
  rc_pointcloud pc;
  rc_io_err err = {0};
  const char *path = write_file(dir, "nan.bin", "", pts, sizeof pts);
  assert_int_equal(rc_pointcloud_read(path, RC_PC_FORMAT_AUTO, 0, &pc, &err), ROBOCACHE_OK);
  assert_int_equal(pc.n, 1);
  assert_int_equal(pc.points_in_file, 2);
  assert_int_equal(pc.width * pc.height, 2);
  rc_pointcloud_free(&pc);
}

static void test_unknown_extension_needs_a_column_count(void **state) {
  rct_tmpdir *dir = *state;
  const float pts[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const char *path = write_file(dir, "cloud.xyz", "", pts, sizeof pts);
  read_fails(path, 0, "unknown point-cloud file name (.bin, .pcd.bin, .pcd or .ply)");
  rc_pointcloud pc;
  rc_io_err err = {0};
  assert_int_equal(rc_pointcloud_read(path, RC_PC_FORMAT_AUTO, 4, &pc, &err), ROBOCACHE_OK);
  assert_int_equal(pc.n, 2);
  assert_true(pc.points[4] == 5.0f && pc.points[7] == 8.0f);
  rc_pointcloud_free(&pc);
}

/* ASCII packed colours: an integer rgb must be a whole number in
 * 0..4294967295; a float rgb is its float's bit pattern (PCL's packing), also
 * for values past 2^32, where a cast to uint32 would be undefined. */
static void test_ascii_rgb_values(void **state) {
  rct_tmpdir *dir = *state;
  read_fails(write_file(dir, "big_rgb.ply",
                        "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                        "property float y\nproperty float z\nproperty uint rgb\nend_header\n"
                        "1 2 3 4294967296\n",
                        NULL, 0),
             0, "vertex 0: property 'rgb': 4.29497e+09 is not a packed colour");
  read_fails(write_file(dir, "negative_rgb.pcd",
                        "VERSION 0.7\nFIELDS x y z rgb\nSIZE 4 4 4 4\nTYPE F F F U\n"
                        "COUNT 1 1 1 1\nWIDTH 1\nHEIGHT 1\nPOINTS 1\nDATA ascii\n1 2 3 -1\n",
                        NULL, 0),
             0, "point 0: field 'rgb': -1 is not a packed colour");
  const char *path = write_file(dir, "float_rgb.ply",
                                "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\n"
                                "property float y\nproperty float z\nproperty float rgb\n"
                                "end_header\n1 2 3 1e300\n4 5 6 2.3464059e-38\n",
                                NULL, 0);
  rc_pointcloud pc;
  rc_io_err err = {0};
  assert_int_equal(rc_pointcloud_read(path, RC_PC_FORMAT_AUTO, 0, &pc, &err), ROBOCACHE_OK);
  assert_int_equal(pc.n, 2);
  assert_int_equal(pc.cols, 6);
  /* 1e300 -> +inf, bits 0x7f800000; 2.3464059e-38: bits 0x00ff8040 */
  const float want[12] = {1, 2, 3, 128, 0, 0, 4, 5, 6, 255, 128, 64};
  for (int k = 0; k < 12; k++) assert_float_equal(pc.points[k], want[k], 0.0);
  rc_pointcloud_free(&pc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_huge_counts, rct_tmpdir_setup, rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_width_times_height_overflow, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
#ifdef ROBOCACHE_HAVE_LZF
      cmocka_unit_test_setup_teardown(test_lzf_block_too_small_for_its_size, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
#endif
      cmocka_unit_test_setup_teardown(test_bin_size_lists_column_counts_that_fit, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_bin_width_counts_dropped_rows, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_unknown_extension_needs_a_column_count, rct_tmpdir_setup,
                                      rct_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_ascii_rgb_values, rct_tmpdir_setup, rct_tmpdir_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
