/* Exact decimal -> integer nanoseconds, without binary floating point.
 *
 * "1403715274.30214" in seconds is 1403715274302140000 ns exactly; strtod
 * would first round it to the nearest double (1403715274.3021399974... s).
 * Timestamps are therefore parsed from their decimal digits. */
#ifndef ROBOCACHE_IO_DECIMAL_H
#define ROBOCACHE_IO_DECIMAL_H

#include <stdint.h>

/* Time units, valued as the power of ten of one unit in nanoseconds. */
typedef enum rc_io_time_unit {
  RC_IO_UNIT_AUTO = -1, /* decided by the reader (see reader.h) */
  RC_IO_UNIT_NS = 0,
  RC_IO_UNIT_US = 3,
  RC_IO_UNIT_MS = 6,
  RC_IO_UNIT_S = 9
} rc_io_time_unit;

typedef enum rc_io_dec_result {
  RC_IO_DEC_OK = 0,
  RC_IO_DEC_SYNTAX = 1, /* not a decimal number (empty, letters, "nan", "inf") */
  RC_IO_DEC_RANGE = 2,  /* the result does not fit in int64 */
  RC_IO_DEC_NO_UNIT = 3 /* a non-zero duration without a unit suffix */
} rc_io_dec_result;

/* Parses s = [+-]digits[.digits][(e|E)[+-]digits] (at least one digit, the
 * whole string, no spaces) and stores round(value * 10^unit) in *out, where
 * unit is an rc_io_time_unit (not AUTO). Digits finer than 1 ns are rounded
 * to the nearest ns, halves away from zero. */
rc_io_dec_result rc_io_parse_decimal(const char *s, int unit, int64_t *out);
/* As rc_io_parse_decimal; on success *exact = 1 when no non-zero digit finer
 * than 1 ns was rounded away ("12.5" in ns is not exact, "12.50" in us is). */
rc_io_dec_result rc_io_parse_decimal_exact(const char *s, int unit, int64_t *out, int *exact);

/* Parses a duration: a decimal number followed by a unit ns, us, ms or s
 * ("20ms", "-5.5us", "0.25s"); a bare "0" is allowed. Result in ns. */
rc_io_dec_result rc_io_parse_duration(const char *s, int64_t *out_ns);

/* "ns" / "us" / "ms" / "s" -> unit; "auto" -> RC_IO_UNIT_AUTO; else -2. */
int rc_io_time_unit_from_name(const char *name);
/* Name of a unit ("ns", ..., "auto"). */
const char *rc_io_time_unit_name(int unit);

#endif
