/* Exact decimal -> int64 ns parsing (src/io/text/decimal.c): timestamps in decimal
 * seconds must land on the exact nanosecond, which strtod cannot promise. */
#include "support.h"

#include "decimal.h"

#include <stdio.h>

static int64_t parse(const char *s, int unit) {
  int64_t v = -12345;
  rc_io_dec_result r = rc_io_parse_decimal(s, unit, &v);
  if (r != RC_IO_DEC_OK) fail_msg("'%s' did not parse (result %d)", s, (int)r);
  return v;
}

static void test_real_timestamps_exact(void **state) {
  (void)state;
  /* first EuRoC ground-truth row and first TUM fr1_xyz row: integer seconds
   * times 1e9 plus the fraction scaled to ns, computed here in integers */
  assert_int_equal(parse("1403715274.30214", RC_IO_UNIT_S),
                   1403715274LL * 1000000000LL + 30214LL * 10000LL);
  assert_int_equal(parse("1305031098.6659", RC_IO_UNIT_S),
                   1305031098LL * 1000000000LL + 6659LL * 100000LL);
  assert_int_equal(parse("1305031102.175304", RC_IO_UNIT_S),
                   1305031102LL * 1000000000LL + 175304LL * 1000LL);
  assert_int_equal(parse("1403715273262142976", RC_IO_UNIT_NS), 1403715273262142976LL);
}

static void test_random_decimals_match_integer_arithmetic(void **state) {
  (void)state;
  rct_rng rng = rct_rng_seed(20240601);
  static const int64_t pow10[10] = {1,      10,      100,      1000,      10000,
                                    100000, 1000000, 10000000, 100000000, 1000000000};
  for (int i = 0; i < 20000; i++) {
    int64_t sec = rct_rng_int(&rng, 0, 9000000000LL);
    int digits = (int)rct_rng_int(&rng, 1, 9);
    int64_t frac = rct_rng_int(&rng, 0, pow10[digits] - 1);
    int neg = (int)rct_rng_int(&rng, 0, 1);
    char s[64];
    snprintf(s, sizeof s, "%s%lld.%0*lld", neg ? "-" : "", (long long)sec, digits, (long long)frac);
    int64_t expect = sec * 1000000000LL + frac * pow10[9 - digits];
    assert_int_equal(parse(s, RC_IO_UNIT_S), neg ? -expect : expect);
  }
}

static void test_units_and_exponents(void **state) {
  (void)state;
  assert_int_equal(parse("20", RC_IO_UNIT_MS), 20000000);
  assert_int_equal(parse("1.5", RC_IO_UNIT_US), 1500);
  assert_int_equal(parse("1.5e-3", RC_IO_UNIT_S), 1500000);
  assert_int_equal(parse("2E+2", RC_IO_UNIT_NS), 200);
  assert_int_equal(parse("+7", RC_IO_UNIT_NS), 7);
  assert_int_equal(parse("-0", RC_IO_UNIT_NS), 0);
  assert_int_equal(parse("000.000", RC_IO_UNIT_S), 0);
  assert_int_equal(parse(".5", RC_IO_UNIT_S), 500000000);
  assert_int_equal(parse("5.", RC_IO_UNIT_S), 5000000000LL);
}

static void test_sub_ns_digits_round_half_away_from_zero(void **state) {
  (void)state;
  assert_int_equal(parse("0.0000000015", RC_IO_UNIT_S), 2);
  assert_int_equal(parse("-0.0000000015", RC_IO_UNIT_S), -2);
  assert_int_equal(parse("0.00000000149999999999999999999999999999999999", RC_IO_UNIT_S), 1);
  assert_int_equal(parse("0.0000000004", RC_IO_UNIT_S), 0);
  assert_int_equal(parse("1.2345", RC_IO_UNIT_NS), 1);
  assert_int_equal(parse("2.5", RC_IO_UNIT_NS), 3);
}

static void test_int64_limits(void **state) {
  (void)state;
  int64_t v;
  assert_int_equal(parse("9223372036854775807", RC_IO_UNIT_NS), INT64_MAX);
  assert_int_equal(parse("-9223372036854775808", RC_IO_UNIT_NS), INT64_MIN);
  assert_int_equal(rc_io_parse_decimal("9223372036854775808", RC_IO_UNIT_NS, &v), RC_IO_DEC_RANGE);
  assert_int_equal(rc_io_parse_decimal("9223372036854775807.5", RC_IO_UNIT_NS, &v),
                   RC_IO_DEC_RANGE);
  assert_int_equal(rc_io_parse_decimal("1e10", RC_IO_UNIT_S, &v), RC_IO_DEC_RANGE);
  assert_int_equal(rc_io_parse_decimal("1e99999999", RC_IO_UNIT_S, &v), RC_IO_DEC_RANGE);
  assert_int_equal(parse("1e-99999999", RC_IO_UNIT_S), 0);
}

static void test_syntax_errors(void **state) {
  (void)state;
  static const char *const bad[] = {"",   ".",  "nan",  "NaN", "inf", "1.2.3", "1e",  "+",
                                    " 1", "1 ", "0x10", "1,5", "--1", "e5",    "1e+", "abc"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t v = 0;
    if (rc_io_parse_decimal(bad[i], RC_IO_UNIT_S, &v) != RC_IO_DEC_SYNTAX)
      fail_msg("'%s' should be a syntax error", bad[i]);
  }
}

static void test_durations(void **state) {
  (void)state;
  int64_t v;
  assert_int_equal(rc_io_parse_duration("20ms", &v), RC_IO_DEC_OK);
  assert_int_equal(v, 20000000);
  assert_int_equal(rc_io_parse_duration("-5.5us", &v), RC_IO_DEC_OK);
  assert_int_equal(v, -5500);
  assert_int_equal(rc_io_parse_duration("0.25s", &v), RC_IO_DEC_OK);
  assert_int_equal(v, 250000000);
  assert_int_equal(rc_io_parse_duration("7ns", &v), RC_IO_DEC_OK);
  assert_int_equal(v, 7);
  assert_int_equal(rc_io_parse_duration("0", &v), RC_IO_DEC_OK);
  assert_int_equal(v, 0);
  assert_int_equal(rc_io_parse_duration("20", &v), RC_IO_DEC_NO_UNIT);
  assert_int_equal(rc_io_parse_duration("ms", &v), RC_IO_DEC_SYNTAX);
  assert_int_equal(rc_io_parse_duration("20 ms", &v), RC_IO_DEC_SYNTAX);
  assert_int_equal(rc_io_parse_duration("20min", &v), RC_IO_DEC_SYNTAX);
}

static void test_unit_names(void **state) {
  (void)state;
  assert_int_equal(rc_io_time_unit_from_name("ms"), RC_IO_UNIT_MS);
  assert_int_equal(rc_io_time_unit_from_name("auto"), RC_IO_UNIT_AUTO);
  assert_int_equal(rc_io_time_unit_from_name("min"), -2);
  assert_string_equal(rc_io_time_unit_name(RC_IO_UNIT_US), "us");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_real_timestamps_exact),
      cmocka_unit_test(test_random_decimals_match_integer_arithmetic),
      cmocka_unit_test(test_units_and_exponents),
      cmocka_unit_test(test_sub_ns_digits_round_half_away_from_zero),
      cmocka_unit_test(test_int64_limits),
      cmocka_unit_test(test_syntax_errors),
      cmocka_unit_test(test_durations),
      cmocka_unit_test(test_unit_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
