/* libFuzzer target: the MCAP chunk record scan and row gather (src/io/mcap
 * mcap_records.h); the input is a chunk's decompressed records. Properties:
 * the counting scan and the filling scan agree; every message's data lies
 * inside the input, after the previous one's, and starts 22 bytes into its
 * record; gathering the messages of the first one's length copies exactly
 * their bytes; an error names a record starting inside the input. */
#include "mcap_records.h"
#include "tmpfile_support.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rc_mcap_error err = {0};
  const int64_t n = rc_mcap_scan_messages(data, size, NULL, 0, &err);
  if (n < 0) {
    RCF_CHECK(err.what && err.record >= 0 && err.offset < size);
    return 0;
  }
  RCF_CHECK((uint64_t)n <= size / (RC_MCAP_RECORD_HEADER + RC_MCAP_MESSAGE_HEADER));
  int64_t *table = malloc(sizeof(int64_t) * RC_MCAP_COLS * (size_t)(n ? n : 1));
  int64_t *offsets = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  RCF_CHECK(table && offsets);
  RCF_CHECK(rc_mcap_scan_messages(data, size, table, n, &err) == n);
  int64_t end = 0, rows = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t *row = table + RC_MCAP_COLS * i;
    const int64_t at = row[RC_MCAP_DATA_OFFSET], len = row[RC_MCAP_DATA_LENGTH];
    RCF_CHECK(at >= end + RC_MCAP_RECORD_HEADER + RC_MCAP_MESSAGE_HEADER && len >= 0);
    RCF_CHECK((uint64_t)at + (uint64_t)len <= size);
    RCF_CHECK(data[at - RC_MCAP_RECORD_HEADER - RC_MCAP_MESSAGE_HEADER] == RC_MCAP_OP_MESSAGE);
    RCF_CHECK(row[RC_MCAP_CHANNEL] >= 0 && row[RC_MCAP_CHANNEL] <= 0xffff &&
              row[RC_MCAP_LOG_TIME] >= 0);
    end = at + len;
    if (len == table[RC_MCAP_DATA_LENGTH]) offsets[rows++] = at;
  }
  if (rows) {
    const size_t row_len = (size_t)table[RC_MCAP_DATA_LENGTH];
    uint8_t *block = malloc(row_len * (size_t)rows + 1);
    int64_t bad = -1;
    RCF_CHECK(block && rc_gather_rows(data, size, offsets, rows, row_len, block, &bad) == 0);
    for (int64_t i = 0; i < rows; i++)
      RCF_CHECK(memcmp(block + (size_t)i * row_len, data + offsets[i], row_len) == 0);
    RCF_CHECK(rc_gather_rows(data, size, offsets, rows, size + 1, block, &bad) == -1 && bad == 0);
    free(block);
  }
  free(table);
  free(offsets);
  return 0;
}
