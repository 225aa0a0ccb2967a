/* Exact decimal parsing of timestamps and durations. */
#include "decimal.h"

#include <string.h>

#define RC_DEC_MAX_DIGITS 40 /* significant digits kept; int64 has 19 */
#define RC_DEC_MAX_EXP 10000

static int is_digit(char c) { return c >= '0' && c <= '9'; }

rc_io_dec_result rc_io_parse_decimal_exact(const char *s, int unit, int64_t *out, int *exact) {
  const char *p = s;
  int lost = 0; /* a non-zero digit past RC_DEC_MAX_DIGITS */
  int neg = 0;
  if (*p == '+' || *p == '-') neg = (*p++ == '-');
  unsigned char dig[RC_DEC_MAX_DIGITS];
  int nd = 0, any = 0;
  long exp10 = unit;
  for (; is_digit(*p); p++) {
    any = 1;
    if (nd == 0 && *p == '0') continue;
    if (nd == RC_DEC_MAX_DIGITS) return RC_IO_DEC_RANGE;
    dig[nd++] = (unsigned char)(*p - '0');
  }
  if (*p == '.') {
    for (p++; is_digit(*p); p++) {
      any = 1;
      if (nd == 0 && *p == '0') {
        exp10--;
      } else if (nd < RC_DEC_MAX_DIGITS) { /* later digits cannot change the rounding */
        dig[nd++] = (unsigned char)(*p - '0');
        exp10--;
      } else {
        lost |= *p != '0';
      }
    }
  }
  if (!any) return RC_IO_DEC_SYNTAX;
  if (*p == 'e' || *p == 'E') {
    p++;
    int eneg = 0;
    if (*p == '+' || *p == '-') eneg = (*p++ == '-');
    if (!is_digit(*p)) return RC_IO_DEC_SYNTAX;
    long e = 0;
    for (; is_digit(*p); p++)
      if (e < RC_DEC_MAX_EXP) e = e * 10 + (*p - '0');
    exp10 += eneg ? -e : e;
  }
  if (*p != '\0') return RC_IO_DEC_SYNTAX;
  *exact = 1;
  if (nd == 0) {
    *out = 0;
    return RC_IO_DEC_OK;
  }
  if (exp10 > 19) return RC_IO_DEC_RANGE;
  uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
  uint64_t acc = 0;
  long keep = exp10 >= 0 ? nd : nd + exp10; /* digits left of the ns point */
  for (long i = 0; i < keep; i++) {
    if (acc > (limit - dig[i]) / 10u) return RC_IO_DEC_RANGE;
    acc = acc * 10u + dig[i];
  }
  for (long j = 0; j < exp10; j++) {
    if (acc > limit / 10u) return RC_IO_DEC_RANGE;
    acc *= 10u;
  }
  *exact = !lost;
  for (long i = keep > 0 ? keep : 0; i < nd; i++) *exact &= dig[i] == 0;
  if (keep >= 0 && keep < nd && dig[keep] >= 5) { /* round half away from zero */
    if (acc == limit) return RC_IO_DEC_RANGE;
    acc++;
  }
  if (!neg)
    *out = (int64_t)acc;
  else
    *out = acc == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)acc;
  return RC_IO_DEC_OK;
}

rc_io_dec_result rc_io_parse_decimal(const char *s, int unit, int64_t *out) {
  int exact;
  return rc_io_parse_decimal_exact(s, unit, out, &exact);
}

static const struct {
  const char *name;
  int unit;
} rc_units[] = {{"ns", RC_IO_UNIT_NS},
                {"us", RC_IO_UNIT_US},
                {"ms", RC_IO_UNIT_MS},
                {"s", RC_IO_UNIT_S},
                {"auto", RC_IO_UNIT_AUTO}};

int rc_io_time_unit_from_name(const char *name) {
  for (size_t i = 0; i < sizeof rc_units / sizeof rc_units[0]; i++)
    if (strcmp(name, rc_units[i].name) == 0) return rc_units[i].unit;
  return -2;
}

const char *rc_io_time_unit_name(int unit) {
  for (size_t i = 0; i < sizeof rc_units / sizeof rc_units[0]; i++)
    if (rc_units[i].unit == unit) return rc_units[i].name;
  return "?";
}

rc_io_dec_result rc_io_parse_duration(const char *s, int64_t *out_ns) {
  size_t n = strlen(s);
  char num[64];
  for (size_t i = 0; i < 4; i++) { /* "ns", "us", "ms", then "s" */
    size_t ul = strlen(rc_units[i].name);
    if (n > ul && n - ul < sizeof num && strcmp(s + n - ul, rc_units[i].name) == 0) {
      memcpy(num, s, n - ul);
      num[n - ul] = '\0';
      return rc_io_parse_decimal(num, rc_units[i].unit, out_ns);
    }
  }
  rc_io_dec_result r = rc_io_parse_decimal(s, RC_IO_UNIT_NS, out_ns);
  if (r == RC_IO_DEC_OK && *out_ns != 0) return RC_IO_DEC_NO_UNIT;
  return r;
}
