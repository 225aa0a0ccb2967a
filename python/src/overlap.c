/* Outputs that share memory with inputs: the library reads its inputs while
 * it writes its outputs, so out= over an input would give a different
 * result without error. Byte ranges from the data pointer, shape and strides
 * (conservative: interleaved views of one array count as overlapping). */
#include "binding.h"

#include <stdint.h>

/* [lo, hi) bytes that t's elements span; 0 when it has none. A span whose
 * arithmetic overflows is taken as the whole address space. */
static int byte_span(const rcpy_tensor *t, uintptr_t *lo, uintptr_t *hi) {
  if (!t->t.shape || !t->t.data) return 0;
  const int64_t item = (int64_t)robocache_dtype_size((robocache_dtype)t->t.dtype);
  int64_t first = 0, last = item, reach;
  int overflow = 0;
  for (int i = 0; i < t->t.ndim; i++) {
    if (t->shape[i] == 0) return 0;
    overflow |= __builtin_mul_overflow(t->shape[i] - 1, t->strides[i], &reach);
    overflow |= __builtin_mul_overflow(reach, item, &reach);
    overflow |= __builtin_add_overflow(reach < 0 ? first : last, reach, reach < 0 ? &first : &last);
  }
  const uintptr_t base = (uintptr_t)t->t.data;
  *lo = overflow ? 0 : base + (uintptr_t)first;
  *hi = overflow ? UINTPTR_MAX : base + (uintptr_t)last;
  return 1;
}

int rcpy_check_overlap(const rcpy_tensor *o, const char *o_name, const rcpy_tensor *const *inputs,
                       const char *const *names, int n) {
  uintptr_t olo, ohi, lo, hi;
  if (!byte_span(o, &olo, &ohi)) return 0;
  for (int i = 0; i < n; i++) {
    const rcpy_tensor *x = inputs[i];
    if (x->t.device_type != o->t.device_type || x->t.device_id != o->t.device_id ||
        !byte_span(x, &lo, &hi) || lo >= ohi || olo >= hi)
      continue;
    PyErr_Format(PyExc_ValueError,
                 "%s: shares memory with %s; an output must not overlap the inputs or the "
                 "other outputs (the library reads them while it writes): pass a separate array",
                 o_name, names[i]);
    return -1;
  }
  return 0;
}
