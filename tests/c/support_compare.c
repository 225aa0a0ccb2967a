/* Test helpers: comparisons of tensors and of error messages. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void rct_assert_close(const rct_tensor *a, const rct_tensor *b, double atol, double rtol,
                      const char *what) {
  assert_int_equal(a->t.ndim, b->t.ndim);
  for (int d = 0; d < a->t.ndim; d++) assert_int_equal(a->shape[d], b->shape[d]);
  for (int64_t i = 0; i < rct_numel(a); i++) {
    double x = rct_get(a, i), y = rct_get(b, i);
    if (isnan(x) && isnan(y)) continue;
    if (x == y) continue; /* also equal infinities */
    if (!(fabs(x - y) <= atol + rtol * fabs(y)))
      fail_msg("%s: element %lld differs: %.17g vs %.17g (|diff| %.3g > atol %.3g + rtol %.3g)",
               what, (long long)i, x, y, fabs(x - y), atol, rtol);
  }
}

void rct_assert_bits_equal(const rct_tensor *a, const rct_tensor *b, const char *what) {
  assert_int_equal(a->t.dtype, b->t.dtype);
  assert_int_equal(rct_numel(a), rct_numel(b));
  for (int64_t i = 0; i < rct_numel(a); i++)
    if (rct_get_bits(a, i) != rct_get_bits(b, i))
      fail_msg("%s: element %lld differs bitwise: %.17g vs %.17g", what, (long long)i,
               rct_get(a, i), rct_get(b, i));
}

void rct_assert_message_has(const robocache_ctx *ctx, const char *needle) {
  const char *msg = robocache_ctx_error_message(ctx);
  if (!strstr(msg, needle)) fail_msg("error message \"%s\" lacks \"%s\"", msg, needle);
}
