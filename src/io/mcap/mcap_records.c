/* The MCAP chunk record scan and the row gather (mcap_records.h). */
#include "mcap_records.h"

#include <string.h>

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static int64_t fail(rc_mcap_error *err, int64_t record, size_t offset, const char *what) {
  err->record = record;
  err->offset = (uint64_t)offset;
  err->what = what;
  return -1;
}

int64_t rc_mcap_scan_messages(const uint8_t *buf, size_t len, int64_t *table, int64_t capacity,
                              rc_mcap_error *err) {
  int64_t messages = 0;
  size_t pos = 0;
  for (int64_t record = 0; pos < len; record++) {
    if (len - pos < RC_MCAP_RECORD_HEADER)
      return fail(err, record, pos, "record header (opcode and length) past the end");
    const uint8_t op = buf[pos];
    const uint64_t size = le64(buf + pos + 1);
    const size_t content = pos + RC_MCAP_RECORD_HEADER;
    if (size > len - content) return fail(err, record, pos, "record length past the end");
    if (op == RC_MCAP_OP_MESSAGE) {
      if (size < RC_MCAP_MESSAGE_HEADER)
        return fail(err, record, pos, "message record shorter than its 22-byte header");
      const uint64_t log_time = le64(buf + content + 6);
      if (log_time > (uint64_t)INT64_MAX)
        return fail(err, record, pos, "message log_time above the int64 ns range");
      if (table) {
        if (messages >= capacity) return fail(err, record, pos, "more messages than counted");
        int64_t *row = table + RC_MCAP_COLS * messages;
        row[RC_MCAP_CHANNEL] = (int64_t)buf[content] | (int64_t)buf[content + 1] << 8;
        row[RC_MCAP_LOG_TIME] = (int64_t)log_time;
        row[RC_MCAP_DATA_OFFSET] = (int64_t)(content + RC_MCAP_MESSAGE_HEADER);
        row[RC_MCAP_DATA_LENGTH] = (int64_t)(size - RC_MCAP_MESSAGE_HEADER);
      }
      messages++;
    }
    pos = content + (size_t)size;
  }
  return messages;
}

int rc_gather_rows(const uint8_t *src, size_t src_len, const int64_t *offsets, int64_t n,
                   size_t row_len, uint8_t *dst, int64_t *bad) {
  for (int64_t i = 0; i < n; i++) {
    if (offsets[i] < 0 || (uint64_t)offsets[i] > src_len ||
        row_len > src_len - (size_t)offsets[i]) {
      *bad = i;
      return -1;
    }
  }
  for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * row_len, src + offsets[i], row_len);
  return 0;
}
