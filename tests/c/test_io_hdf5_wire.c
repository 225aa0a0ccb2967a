/* The byte stream the HDF5 readers' child process sends back (src/io/hdf5
 * h5_wire_hdf5.h): a packed summary unpacks to the same values, and every
 * truncation of it, or a length larger than the bytes that follow, is
 * reported (bad) without reading past the stream or allocating for the
 * claimed length. */
#include "support.h"

#ifdef ROBOCACHE_HAVE_HDF5
#include "h5_wire_hdf5.h"

#include <stdlib.h>
#include <string.h>

static void pack(rc_h5_wire *w) {
  static const int64_t times[3] = {1, 2, 3};
  char *names[2] = {"imu", "odom"};
  rc_h5_put_array(w, times, 3, sizeof *times);
  rc_h5_put_strs(w, names, 2);
  rc_h5_put_str(w, NULL);
  rc_h5_put_str(w, "");
}

/* Unpacks what pack wrote; returns bad. */
static int unpack(rc_h5_wire *w, int check) {
  int64_t n = -1;
  int64_t *times = rc_h5_get_array(w, sizeof *times, &n);
  int64_t k = -1;
  char **names = rc_h5_get_strs(w, &k);
  char *none = rc_h5_get_str(w), *empty = rc_h5_get_str(w);
  if (check) {
    assert_int_equal(w->bad, 0);
    assert_int_equal(n, 3);
    assert_int_equal(times[2], 3);
    assert_int_equal(k, 2);
    assert_string_equal(names[0], "imu");
    assert_string_equal(names[1], "odom");
    assert_null(none);
    assert_string_equal(empty, "");
    assert_int_equal(w->at, w->size);
  }
  for (int64_t i = 0; names && i < k; i++) free(names[i]);
  free(names);
  free(times);
  free(none);
  free(empty);
  return w->bad;
}

static void test_round_trip(void **state) {
  (void)state;
  rc_h5_wire w = {0};
  pack(&w);
  assert_int_equal(w.bad, 0);
  unpack(&w, 1);
  free(w.data);
}

static void test_every_truncation_is_bad(void **state) {
  (void)state;
  rc_h5_wire full = {0};
  pack(&full);
  for (size_t size = 0; size < full.size; size++) {
    uint8_t *copy = malloc(size + 1); /* exactly size bytes readable (ASan) */
    memcpy(copy, full.data, size);
    rc_h5_wire w = {copy, size, size, 0, 0};
    assert_int_equal(unpack(&w, 0), 1);
    free(copy);
  }
  free(full.data);
}

static void test_lengths_beyond_the_stream_are_bad(void **state) {
  (void)state;
  const int64_t lengths[3] = {INT64_MAX, (int64_t)1 << 40, 9};
  for (int i = 0; i < 3; i++) {
    rc_h5_wire w = {0};
    rc_h5_put(&w, &lengths[i], sizeof lengths[i]);
    rc_h5_put(&w, "12345678", 8); /* fewer bytes than claimed */
    int64_t n = -1;
    w.at = 0;
    assert_null(rc_h5_get_array(&w, 8, &n));
    assert_int_equal(n, 0);
    assert_int_equal(w.bad, 1);
    w.at = 0, w.bad = 0;
    assert_null(rc_h5_get_str(&w));
    assert_int_equal(w.bad, 1);
    w.at = 0, w.bad = 0;
    assert_null(rc_h5_get_strs(&w, &n));
    assert_int_equal(n, 0);
    assert_int_equal(w.bad, 1);
    free(w.data);
  }
  rc_h5_wire w = {0};
  const int64_t negative = -5;
  rc_h5_put(&w, &negative, sizeof negative);
  int64_t n = -1;
  assert_null(rc_h5_get_array(&w, 4, &n));
  assert_int_equal(w.bad, 1);
  free(w.data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_every_truncation_is_bad),
      cmocka_unit_test(test_lengths_beyond_the_stream_are_bad),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void) { return 77; /* built without HDF5: skipped */ }
#endif
