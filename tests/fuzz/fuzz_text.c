/* libFuzzer target: the readers of timestamped text recordings (EuRoC CSV,
 * TUM, timestamp lists, generic CSV; src/io reader.h), through rc_io_read on
 * a file. Byte 0 picks format, time unit, order check and non-finite policy,
 * byte 1 the value and time columns; the rest is the file.
 * Properties of a successful read: at least one row, a decided format and
 * unit, increasing line numbers, strictly increasing times when checked,
 * finite values only. A failure has a message. */
#include "reader.h"
#include "tmpfile_support.h"

#include <math.h>
#include <string.h>

static const char *const rcf_columns[] = {NULL, "0", "1", "2:1", "x", "x [m]:y"};
static const char *const rcf_time_columns[] = {NULL, "0", "1", "t"};
static const int rcf_units[5] = {RC_IO_UNIT_AUTO, RC_IO_UNIT_NS, RC_IO_UNIT_US, RC_IO_UNIT_MS,
                                 RC_IO_UNIT_S};

static void check_table(const rc_io_read_spec *spec, const rc_io_table *t) {
  RCF_CHECK(t->rows >= 1 && t->cols >= 0);
  RCF_CHECK(t->format >= RC_IO_FORMAT_EUROC && t->format <= RC_IO_FORMAT_CSV);
  RCF_CHECK(t->time_unit != RC_IO_UNIT_AUTO && t->time_name != NULL);
  for (int32_t j = 0; j < t->cols; j++) RCF_CHECK(t->names[j] != NULL);
  for (int64_t i = 0; i < t->rows; i++) {
    RCF_CHECK(t->lines[i] >= 1 && (i == 0 || t->lines[i] > t->lines[i - 1]));
    if (spec->require_increasing && i > 0) RCF_CHECK(t->times_ns[i] > t->times_ns[i - 1]);
    for (int32_t j = 0; j < t->cols; j++) RCF_CHECK(isfinite(t->values[i * t->cols + j]));
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const unsigned o = data[0], c = data[1];
  rc_io_read_spec spec = {.path = rcf_write_temp(data + 2, size - 2, ".txt"),
                          .format = (int)(o % 5),
                          .columns = rcf_columns[c % 6],
                          .time_column = rcf_time_columns[(c / 6) % 4],
                          .time_unit = rcf_units[(o / 5) % 5],
                          .require_increasing = (int)((o / 25) % 2),
                          .nonfinite = (int)((o / 50) % 2)};
  rc_io_table t;
  rc_io_err err = {0};
  robocache_status s = rc_io_read(&spec, &t, &err);
  if (s == ROBOCACHE_OK)
    check_table(&spec, &t);
  else
    RCF_CHECK(err.status == s && err.msg[0] != '\0');
  rc_io_table_free(&t);
  return 0;
}
