/* Point-cloud readers (src/io/pointcloud/pointcloud.h) on the real files in
 * data/pointclouds (point counts and extents as computed with numpy in
 * data/README.md), on PCD / PLY files written here byte by byte, and on
 * broken files: truncated data, wrong headers, unsupported field types. */
#include "support.h"
#include "support_tmpdir.h"

#include "pointcloud.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rct_tmpdir dir;

static int setup(void **state) {
  (void)state;
  rct_tmpdir_create(&dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  rct_tmpdir_remove(&dir);
  return 0;
}

static const char *write_bytes(const char *name, const void *data, size_t len) {
  static char path[640];
  snprintf(path, sizeof path, "%s", rct_tmpdir_path(&dir, name));
  FILE *f = fopen(path, "wb");
  if (!f) fail_msg("cannot create %s", path);
  assert_int_equal(fwrite(data, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  return path;
}

static rc_pointcloud read_ok(const char *path) {
  rc_pointcloud pc;
  rc_io_err err = {0};
  robocache_status s = rc_pointcloud_read(path, RC_PC_FORMAT_AUTO, 0, &pc, &err);
  if (s != ROBOCACHE_OK) fail_msg("%s: %s", path, err.msg);
  return pc;
}

/* Reads path and fails unless the status is `status` and the message names
 * the file and contains `needle`. */
static void read_fails(const char *path, robocache_status status, const char *needle) {
  rc_pointcloud pc;
  rc_io_err err = {0};
  robocache_status s = rc_pointcloud_read(path, RC_PC_FORMAT_AUTO, 0, &pc, &err);
  rc_pointcloud_free(&pc);
  if (s != status)
    fail_msg("%s: expected %s, got %s (%s)", path, robocache_status_name(status),
             robocache_status_name(s), err.msg);
  if (!strstr(err.msg, path) || !strstr(err.msg, needle))
    fail_msg("message \"%s\" lacks the path or \"%s\"", err.msg, needle);
}

static void column_range(const rc_pointcloud *pc, int c, double *lo, double *hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (int64_t i = 0; i < pc->n; i++) {
    double v = pc->points[i * pc->cols + c];
    *lo = v < *lo ? v : *lo;
    *hi = v > *hi ? v : *hi;
  }
}

static void test_real_files(void **state) {
  (void)state;
  static const struct {
    const char *file;
    int64_t n, dropped;
    int cols;
    const char *format;
    double xlo, xhi; /* bbox x, rounded to 4 decimals in data/README.md */
  } want[] = {
      {"bunny.pcd", 397, 0, 3, "pcd ascii", -0.0939, 0.0596},
      {"cupcl_sample.pcd", 119978, 0, 3, "pcd ascii", -93.954, 95.9076},
      {"cturtle.pcd", 167198, 0, 4, "pcd binary_compressed", -1.4197, 1.4197},
      {"table_scene_mug_stereo_textured.pcd", 209280, 97920, 6, "pcd binary_compressed", -0.4564,
       0.7152},
      {"kitti_raw_hdl64_0000000000.bin", 122626, 0, 4, "bin", -73.921, 76.394},
      {"kitti_000008_reduced.bin", 17238, 0, 4, "bin", 2.889, 76.835},
      {"nuscenes_lidar_top_1532402927647951.pcd.bin", 34688, 0, 5, "bin", -57.9958, 96.8527},
  };
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    char rel[256];
    snprintf(rel, sizeof rel, "pointclouds/%s", want[k].file);
#ifndef ROBOCACHE_HAVE_LZF
    if (strstr(want[k].format, "compressed")) {
      read_fails(rct_data_path(rel), ROBOCACHE_INVALID_ARGUMENT, "needs liblzf");
      continue;
    }
#endif
    rc_pointcloud pc = read_ok(rct_data_path(rel));
    assert_int_equal(pc.n, want[k].n);
    assert_int_equal(pc.dropped_nonfinite, want[k].dropped);
    assert_int_equal(pc.points_in_file, want[k].n + want[k].dropped);
    assert_int_equal(pc.cols, want[k].cols);
    assert_string_equal(pc.format, want[k].format);
    assert_string_equal(pc.names[0], "x");
    assert_string_equal(pc.names[2], "z");
    double lo, hi;
    column_range(&pc, 0, &lo, &hi);
    if (fabs(lo - want[k].xlo) > 6e-5 || fabs(hi - want[k].xhi) > 6e-5)
      fail_msg("%s: x range [%g, %g], expected [%g, %g]", want[k].file, lo, hi, want[k].xlo,
               want[k].xhi);
    rc_pointcloud_free(&pc);
  }
}

static void test_pcd_details(void **state) {
  (void)state;
  /* bunny: the first data line is "0.0054216 0.11349 0.040749" */
  rc_pointcloud pc = read_ok(rct_data_path("pointclouds/bunny.pcd"));
  assert_true(pc.points[0] == 0.0054216f && pc.points[1] == 0.11349f && pc.points[2] == 0.040749f);
  rc_pointcloud_free(&pc);
#ifndef ROBOCACHE_HAVE_LZF
  return; /* the other two files are binary_compressed (test_real_files checks the error) */
#endif
  /* table scene: organized 640 x 480, rgba decoded to r g b in 0..255 */
  pc = read_ok(rct_data_path("pointclouds/table_scene_mug_stereo_textured.pcd"));
  assert_int_equal(pc.width, 640);
  assert_int_equal(pc.height, 480);
  assert_string_equal(pc.names[3], "r");
  assert_string_equal(pc.names[5], "b");
  double lo, hi;
  for (int c = 3; c < 6; c++) {
    column_range(&pc, c, &lo, &hi);
    assert_true(lo >= 0 && hi <= 255 && hi > lo);
  }
  column_range(&pc, 2, &lo, &hi); /* bbox z [0.69, 2.5927] */
  assert_true(fabs(lo - 0.69) < 6e-5 && fabs(hi - 2.5927) < 6e-5);
  rc_pointcloud_free(&pc);
  /* cturtle intensity spans 0.027 .. 0.996 (data/README.md) */
  pc = read_ok(rct_data_path("pointclouds/cturtle.pcd"));
  assert_string_equal(pc.names[3], "intensity");
  column_range(&pc, 3, &lo, &hi);
  assert_true(fabs(lo - 0.027) < 1e-3 && fabs(hi - 0.996) < 1e-3);
  rc_pointcloud_free(&pc);
}

/* A binary PCD with typed fields, written byte by byte: x y z (F4), label
 * (U1), t (F8), n (I2 x 2), rgb (U4). */
static void test_pcd_binary_typed_fields(void **state) {
  (void)state;
  const char *header = "# .PCD v0.7\nVERSION 0.7\nFIELDS x y z label t n rgb\n"
                       "SIZE 4 4 4 1 8 2 4\nTYPE F F F U F I U\nCOUNT 1 1 1 1 1 2 1\n"
                       "WIDTH 3\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS 3\nDATA binary\n";
  unsigned char buf[1024];
  size_t len = strlen(header);
  memcpy(buf, header, len);
  const float xyz[3][3] = {{1.5f, -2.25f, 3.0f}, {NAN, 0, 0}, {-7.0f, 8.0f, 0.125f}};
  for (int i = 0; i < 3; i++) {
    memcpy(buf + len, xyz[i], 12);
    len += 12;
    buf[len++] = (unsigned char)(200 + i);
    double t = 1e9 + i;
    memcpy(buf + len, &t, 8);
    len += 8;
    int16_t n[2] = {(int16_t)(-300 - i), (int16_t)(i * 7)};
    memcpy(buf + len, n, 4);
    len += 4;
    uint32_t rgb = 0x00102030u + (uint32_t)i;
    memcpy(buf + len, &rgb, 4);
    len += 4;
  }
  rc_pointcloud pc = read_ok(write_bytes("typed.pcd", buf, len));
  assert_int_equal(pc.n, 2);
  assert_int_equal(pc.dropped_nonfinite, 1);
  assert_int_equal(pc.cols, 10);
  static const char *const names[10] = {"x", "y", "z", "label", "t", "n_0", "n_1", "r", "g", "b"};
  for (int c = 0; c < 10; c++) assert_string_equal(pc.names[c], names[c]);
  const float want[2][10] = {{1.5f, -2.25f, 3.0f, 200, 1e9f, -300, 0, 16, 32, 48},
                             {-7.0f, 8.0f, 0.125f, 202, 1e9f + 2, -302, 14, 16, 32, 50}};
  for (int i = 0; i < 2; i++)
    for (int c = 0; c < 10; c++) assert_true(pc.points[i * 10 + c] == want[i][c]);
  rc_pointcloud_free(&pc);
  /* the same body cut short */
  read_fails(write_bytes("typed_cut.pcd", buf, len - 5), ROBOCACHE_INVALID_ARGUMENT, "truncated");
}

/* The same three points as ascii PLY, binary little-endian PLY and ascii PCD. */
static void test_ply_and_ascii_formats(void **state) {
  (void)state;
  const float pts[3][4] = {{0.5f, 1.25f, -2.0f, 7}, {3.0f, -4.5f, 6.0f, 255}, {1, 2, 3, 0}};
  char text[2048];
  int n = snprintf(text, sizeof text,
                   "ply\nformat ascii 1.0\ncomment made by a test\nelement vertex 3\n"
                   "property float x\nproperty float y\nproperty float z\n"
                   "property uchar intensity\nelement face 0\n"
                   "property list uchar int vertex_indices\nend_header\n");
  for (int i = 0; i < 3; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%g %g %g %d\n", (double)pts[i][0],
                  (double)pts[i][1], (double)pts[i][2], (int)pts[i][3]);
  rc_pointcloud a = read_ok(rct_tmpdir_write(&dir, "a.ply", text));
  assert_string_equal(a.format, "ply ascii");
  unsigned char bin[1024];
  const char *hdr = "ply\nformat binary_little_endian 1.0\nelement vertex 3\n"
                    "property float x\nproperty float y\nproperty float z\n"
                    "property uchar intensity\nend_header\n";
  size_t len = strlen(hdr);
  memcpy(bin, hdr, len);
  for (int i = 0; i < 3; i++) {
    memcpy(bin + len, pts[i], 12);
    len += 12;
    bin[len++] = (unsigned char)pts[i][3];
  }
  rc_pointcloud b = read_ok(write_bytes("b.ply", bin, len));
  assert_string_equal(b.format, "ply binary_little_endian");
  n = snprintf(text, sizeof text,
               "VERSION .7\nFIELDS x y z intensity\nSIZE 4 4 4 4\nTYPE F F F F\n"
               "WIDTH 4\nHEIGHT 1\nPOINTS 4\nDATA ascii\n");
  for (int i = 0; i < 3; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "%g %g %g %g\n", (double)pts[i][0],
                  (double)pts[i][1], (double)pts[i][2], (double)pts[i][3]);
  snprintf(text + n, sizeof text - (size_t)n, "nan nan nan 1\n");
  rc_pointcloud c = read_ok(rct_tmpdir_write(&dir, "c.pcd", text));
  assert_int_equal(c.dropped_nonfinite, 1);
  const rc_pointcloud *all[3] = {&a, &b, &c};
  for (int k = 0; k < 3; k++) {
    assert_int_equal(all[k]->n, 3);
    assert_int_equal(all[k]->cols, 4);
    assert_string_equal(all[k]->names[3], "intensity");
    for (int i = 0; i < 12; i++) assert_true(all[k]->points[i] == (&pts[0][0])[i]);
  }
  rc_pointcloud_free(&a);
  rc_pointcloud_free(&b);
  rc_pointcloud_free(&c);
  /* binary PLY cut short */
  read_fails(write_bytes("b_cut.ply", bin, len - 3), ROBOCACHE_INVALID_ARGUMENT, "truncated");
}

static void test_bad_files(void **state) {
  (void)state;
  const float row[4] = {1, 2, 3, 4};
  unsigned char bin[64];
  memcpy(bin, row, 16);
  memcpy(bin + 16, row, 16);
  read_fails(write_bytes("cut.bin", bin, 16 + 7), ROBOCACHE_INVALID_ARGUMENT,
             "not a multiple of 16");
  read_fails(write_bytes("cut.pcd.bin", bin, 32), ROBOCACHE_INVALID_ARGUMENT,
             "not a multiple of 20");
  read_fails(rct_tmpdir_path(&dir, "missing.pcd"), ROBOCACHE_IO_ERROR, "cannot open");
  static const struct {
    const char *name, *text, *needle;
  } pcd[] = {
      {"half.pcd",
       "FIELDS x y z\nSIZE 4 4 2\nTYPE F F F\nWIDTH 1\nHEIGHT 1\nPOINTS 1\nDATA ascii\n1 2 3\n",
       "field 'z': unsupported type F size 2"},
      {"type.pcd",
       "FIELDS x y z w\nSIZE 4 4 4 4\nTYPE F F F Q\nWIDTH 1\nHEIGHT 1\nPOINTS 1\nDATA ascii\n"
       "1 2 3 4\n",
       "field 'w': unsupported type Q size 4"},
      {"sizes.pcd", "FIELDS x y z\nSIZE 4 4\nTYPE F F F\nWIDTH 1\nPOINTS 1\nDATA ascii\n1 2 3\n",
       "FIELDS has 3 entries but SIZE 2"},
      {"keyword.pcd", "HELLO world\nFIELDS x y z\n", "unknown PCD header keyword 'HELLO'"},
      {"nodata.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\n", "no DATA line"},
      {"noz.pcd", "FIELDS x y w\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\nPOINTS 1\nDATA ascii\n1 2 3\n",
       "no scalar field 'z'"},
      {"short.pcd",
       "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 3\nPOINTS 3\nDATA ascii\n1 2 3\n4 5 6\n",
       "POINTS says 3 but the data has 2 points at most"},
      {"word.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\nPOINTS 1\nDATA ascii\n1 two 3\n",
       "point 0: field 'y'"},
      {"extra.pcd",
       "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\nPOINTS 1\nDATA ascii\n1 2 3 4\n",
       "more values than the 3 fields"},
      {"points.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 2\nPOINTS 3\nDATA ascii\n",
       "WIDTH 2 x HEIGHT 0 != POINTS 3"},
      {"data.pcd", "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nWIDTH 1\nPOINTS 1\nDATA zip\n",
       "unknown DATA type 'zip'"},
      {"bigend.ply",
       "ply\nformat binary_big_endian 1.0\nelement vertex 1\nproperty float x\nend_header\n",
       "unsupported PLY format 'binary_big_endian'"},
      {"list.ply",
       "ply\nformat ascii 1.0\nelement vertex 1\nproperty list uchar float x\nend_header\n",
       "list property in the vertex element"},
      {"noply.ply", "PLY\nformat ascii 1.0\n", "not a PLY file"},
      {"ptype.ply",
       "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
       "property quad z\nend_header\n1 2 3\n",
       "property 'z': unsupported type 'quad'"},
  };
  for (size_t k = 0; k < sizeof pcd / sizeof pcd[0]; k++)
    read_fails(rct_tmpdir_write(&dir, pcd[k].name, pcd[k].text), ROBOCACHE_INVALID_ARGUMENT,
               pcd[k].needle);
#ifdef ROBOCACHE_HAVE_LZF
  /* binary_compressed cut inside the LZF block */
  size_t len;
  char *turtle = rct_read_data_file("pointclouds/cturtle.pcd", &len);
  read_fails(write_bytes("cturtle_cut.pcd", turtle, len / 2), ROBOCACHE_INVALID_ARGUMENT,
             "truncated: compressed block");
  free(turtle);
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_real_files),
      cmocka_unit_test(test_pcd_details),
      cmocka_unit_test(test_pcd_binary_typed_fields),
      cmocka_unit_test(test_ply_and_ascii_formats),
      cmocka_unit_test(test_bad_files),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
