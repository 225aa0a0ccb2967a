/* The MCAP chunk record scan and row gather (src/io/mcap/mcap_records.h) on
 * records built byte by byte here after the MCAP spec (https://mcap.dev/spec):
 * opcode uint8, length uint64 LE, content; a Message's content is
 * channel_id uint16, sequence uint32, log_time uint64, publish_time uint64,
 * data. */
#include "support.h"

#include "mcap_records.h"

#include <string.h>

typedef struct {
  uint8_t b[512];
  size_t n;
} buf_t;

static void put_le(buf_t *buf, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) buf->b[buf->n++] = (uint8_t)(v >> (8 * i));
}

static void put_record(buf_t *buf, uint8_t op, const uint8_t *content, uint64_t len) {
  buf->b[buf->n++] = op;
  put_le(buf, len, 8);
  memcpy(buf->b + buf->n, content, (size_t)len);
  buf->n += (size_t)len;
}

/* A Message record; returns the offset of its data. */
static size_t put_message(buf_t *buf, uint16_t channel, uint64_t log_time, const char *data) {
  const size_t len = strlen(data);
  buf->b[buf->n++] = RC_MCAP_OP_MESSAGE;
  put_le(buf, RC_MCAP_MESSAGE_HEADER + len, 8);
  put_le(buf, channel, 2);
  put_le(buf, 7, 4);            /* sequence */
  put_le(buf, log_time, 8);     /* log_time */
  put_le(buf, log_time + 1, 8); /* publish_time */
  memcpy(buf->b + buf->n, data, len);
  buf->n += len;
  return buf->n - len;
}

static void test_messages_found_others_skipped(void **state) {
  (void)state;
  buf_t buf = {.n = 0};
  const uint8_t schema[5] = {1, 0, 'a', 'b', 'c'};
  put_record(&buf, 0x03, schema, sizeof schema);
  const size_t d0 = put_message(&buf, 4, 1700000000123456789ULL, "hello");
  put_record(&buf, 0x04, schema, 0); /* an empty record */
  const size_t d1 = put_message(&buf, 0xffff, (uint64_t)INT64_MAX, "");
  rc_mcap_error err = {0};
  assert_int_equal(rc_mcap_scan_messages(buf.b, buf.n, NULL, 0, &err), 2);
  int64_t table[2 * RC_MCAP_COLS];
  assert_int_equal(rc_mcap_scan_messages(buf.b, buf.n, table, 2, &err), 2);
  const int64_t want[2 * RC_MCAP_COLS] = {
      4, 1700000000123456789LL, (int64_t)d0, 5, 0xffff, INT64_MAX, (int64_t)d1, 0};
  for (int i = 0; i < 2 * RC_MCAP_COLS; i++) assert_int_equal(table[i], want[i]);
  assert_memory_equal(buf.b + table[RC_MCAP_DATA_OFFSET], "hello", 5);
  assert_int_equal(rc_mcap_scan_messages(buf.b, 0, NULL, 0, &err), 0);
}

static void expect_error(const buf_t *buf, int64_t record, uint64_t offset, const char *what) {
  rc_mcap_error err = {0};
  assert_int_equal(rc_mcap_scan_messages(buf->b, buf->n, NULL, 0, &err), -1);
  assert_int_equal(err.record, record);
  assert_int_equal(err.offset, offset);
  assert_non_null(strstr(err.what, what));
}

static void test_damaged_records(void **state) {
  (void)state;
  buf_t buf = {.n = 0};
  put_message(&buf, 1, 10, "ab");
  const size_t second = buf.n;
  buf.b[buf.n++] = RC_MCAP_OP_MESSAGE;
  put_le(&buf, 5, 4); /* header cut after 4 of its 8 length bytes */
  expect_error(&buf, 1, second, "record header");

  buf.n = second;
  buf.b[buf.n++] = 0x04;
  put_le(&buf, UINT64_MAX, 8); /* a length that wraps any size_t sum */
  expect_error(&buf, 1, second, "record length past the end");

  buf.n = second;
  const uint8_t short_msg[21] = {0};
  put_record(&buf, RC_MCAP_OP_MESSAGE, short_msg, sizeof short_msg);
  expect_error(&buf, 1, second, "shorter than its 22-byte header");

  buf.n = second;
  put_message(&buf, 1, (uint64_t)INT64_MAX + 1, "x");
  expect_error(&buf, 1, second, "int64");

  /* every prefix of a good buffer that cuts a record is an error, none reads
   * past the prefix (the sanitizer builds check the reads) */
  buf.n = second;
  put_message(&buf, 2, 11, "cdef");
  for (size_t cut = 1; cut < buf.n; cut++) {
    rc_mcap_error err = {0};
    const int64_t n = rc_mcap_scan_messages(buf.b, cut, NULL, 0, &err);
    assert_int_equal(n, cut == second ? 1 : -1);
  }
}

static void test_capacity_is_checked(void **state) {
  (void)state;
  buf_t buf = {.n = 0};
  put_message(&buf, 1, 1, "a");
  put_message(&buf, 1, 2, "b");
  int64_t table[RC_MCAP_COLS];
  rc_mcap_error err = {0};
  assert_int_equal(rc_mcap_scan_messages(buf.b, buf.n, table, 1, &err), -1);
  assert_int_equal(err.record, 1);
}

static void test_gather_rows(void **state) {
  (void)state;
  const uint8_t src[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  uint8_t dst[6] = {0};
  int64_t bad = -1;
  const int64_t offsets[2] = {7, 2};
  assert_int_equal(rc_gather_rows(src, sizeof src, offsets, 2, 3, dst, &bad), 0);
  const uint8_t want[6] = {7, 8, 9, 2, 3, 4};
  assert_memory_equal(dst, want, 6);
  const int64_t past[2] = {0, 8};
  memset(dst, 0xee, sizeof dst);
  assert_int_equal(rc_gather_rows(src, sizeof src, past, 2, 3, dst, &bad), -1);
  assert_int_equal(bad, 1);
  assert_int_equal(dst[0], 0xee); /* nothing copied */
  const int64_t negative[1] = {-1};
  assert_int_equal(rc_gather_rows(src, sizeof src, negative, 1, 3, dst, &bad), -1);
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_messages_found_others_skipped),
      cmocka_unit_test(test_damaged_records),
      cmocka_unit_test(test_capacity_is_checked),
      cmocka_unit_test(test_gather_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
