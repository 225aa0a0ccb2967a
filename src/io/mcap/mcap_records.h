/* Message records of an MCAP chunk, found without decoding them one by one in
 * Python: the record scan behind robocache.datasets' rosbag2 MCAP reader.
 *
 * Anchor: the MCAP format specification, https://mcap.dev/spec. A chunk's
 * `records` field, once decompressed, is a run of records, each
 *
 *   opcode  uint8
 *   length  uint64 little endian   (bytes of the content that follows)
 *   content [length]
 *
 * and a Message record (opcode 0x05) has the content
 *
 *   channel_id    uint16
 *   sequence      uint32
 *   log_time      uint64   ns
 *   publish_time  uint64   ns
 *   data          the rest of the record (the serialized message)
 *
 * Other records a chunk may hold (Schema 0x03, Channel 0x04) are skipped. */
#ifndef ROBOCACHE_MCAP_RECORDS_H
#define ROBOCACHE_MCAP_RECORDS_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a record's opcode and length, and of a Message record's fields
 * before its data. */
#define RC_MCAP_RECORD_HEADER 9
#define RC_MCAP_MESSAGE_HEADER 22
#define RC_MCAP_OP_MESSAGE 0x05

/* Columns of one row of rc_mcap_scan_messages' table. */
enum { RC_MCAP_CHANNEL, RC_MCAP_LOG_TIME, RC_MCAP_DATA_OFFSET, RC_MCAP_DATA_LENGTH, RC_MCAP_COLS };

/* Where and why a scan stopped: the record's index in the buffer (0-based,
 * all records counted), its byte offset, and a static message. */
typedef struct rc_mcap_error {
  int64_t record;
  uint64_t offset;
  const char *what;
} rc_mcap_error;

/* Scans the records of buf[0, len). Returns the number of Message records,
 * or -1 with *err set when a record header runs past the end, a record's
 * length runs past the end, a Message record is shorter than its 22-byte
 * header, or a log_time does not fit int64. When table is not NULL it gets,
 * for message i (in buffer order), table[RC_MCAP_COLS * i + column]: channel
 * id, log_time (ns), data offset in buf and data length in bytes; it must hold
 * RC_MCAP_COLS * capacity int64 and a buffer with more than `capacity`
 * messages is an error (scan with table NULL first to count). */
int64_t rc_mcap_scan_messages(const uint8_t *buf, size_t len, int64_t *table, int64_t capacity,
                              rc_mcap_error *err);

/* dst[i * row_len, (i + 1) * row_len) = src[offsets[i], offsets[i] + row_len)
 * for i in [0, n). Returns -1 (copying nothing) and the first bad i in *bad
 * when an offset is negative or its row runs past src_len, else 0. */
int rc_gather_rows(const uint8_t *src, size_t src_len, const int64_t *offsets, int64_t n,
                   size_t row_len, uint8_t *dst, int64_t *bad);

#endif
