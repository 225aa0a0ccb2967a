/* Header-only helpers of the fuzz_ops_* targets: a reader that turns the
 * fuzzer's bytes into small numbers, floats and choices (zeros once the
 * bytes run out), CPU tensors of up to 3 dimensions in a fuzzer-chosen
 * layout (contiguous, padded, column-major, or a broadcast axis for
 * inputs), each in its own exactly sized allocation (so that AddressSanitizer
 * sees any access past it), and the comparison of a CPU-backend result with
 * the reference backend's (robocache_ctx_set_force_reference). A mismatch
 * aborts with a message, which libFuzzer reports as a crash. */
#ifndef ROBOCACHE_FUZZ_OPS_H
#define ROBOCACHE_FUZZ_OPS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype.h"
#include "robocache.h"

/* ---- bytes ------------------------------------------------------------------ */

typedef struct fz_in {
  const uint8_t *d;
  size_t n, i;
} fz_in;

static inline uint64_t fz_bits(fz_in *f, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; k++) v |= (uint64_t)(f->i < f->n ? f->d[f->i++] : 0) << (8 * k);
  return v;
}

static inline uint8_t fz_u8(fz_in *f) { return (uint8_t)fz_bits(f, 1); }

/* An integer in [lo, hi] (hi - lo < 2^16); lo when hi < lo. */
static inline int64_t fz_int(fz_in *f, int64_t lo, int64_t hi) {
  if (hi < lo) return lo;
  const uint64_t span = (uint64_t)(hi - lo) + 1;
  return lo + (int64_t)(fz_bits(f, span > 256 ? 2 : 1) % span);
}

/* One of n choices (0 once the bytes run out). */
static inline int fz_pick(fz_in *f, int n) { return (int)fz_int(f, 0, n - 1); }

/* True once in n (never once the bytes run out: short inputs stay on the
 * common paths). */
static inline int fz_rare(fz_in *f, int n) { return fz_pick(f, n) == n - 1; }

/* A double that is often special: 0, +-1, tiny, huge, subnormal, +-inf,
 * NaN, the extremes of float32 / float16, or raw bits of a float or double. */
static inline double fz_double(fz_in *f) {
  static const double special[] = {0.0,       -0.0,    1.0,  -1.0,  0.5,      1e-45,
                                   -1e-40,    1e-310,  3e38, -3e38, 3.4e38,   -3.4028235e38,
                                   65504.0,   -65520., 6e-8, 1e300, -1.7e308, INFINITY,
                                   -INFINITY, NAN,     1e-7, 2.5,   1e9,      -123.456};
  const int kind = fz_pick(f, 4);
  if (kind == 0) return special[fz_pick(f, (int)(sizeof special / sizeof *special))];
  if (kind == 1) return rc_bits_f32((uint32_t)fz_bits(f, 4));
  if (kind == 2) {
    const uint64_t u = fz_bits(f, 8);
    double d;
    memcpy(&d, &u, 8);
    return d;
  }
  return (double)(int16_t)fz_bits(f, 2) / 64.0;
}

/* ---- tensors ---------------------------------------------------------------- */

typedef struct fz_tensor {
  robocache_tensor t;
  int64_t shape[3], strides[3];
  char *base; /* allocation (NULL when empty and no data) */
} fz_tensor;

static inline size_t fz_esize(int32_t dtype) {
  return robocache_dtype_size((robocache_dtype)dtype);
}

/* A tensor of ndim <= 3 dims. layout 0: C-contiguous (strides NULL);
 * 1: C order with every stride doubled (holes); 2: column-major; 3 (inputs
 * only): C order with axis `ndim - 1 - (layout bits)` broadcast (stride 0).
 * An empty tensor has NULL data half the time. The data is zero. */
static inline void fz_make(fz_tensor *x, fz_in *f, int32_t dtype, int ndim, const int64_t *shape,
                           int input) {
  memset(x, 0, sizeof *x);
  int64_t numel = 1;
  for (int i = 0; i < ndim; i++) {
    x->shape[i] = shape[i];
    numel *= shape[i];
  }
  const int layout = fz_pick(f, input ? 4 : 3), bcast = ndim > 0 ? fz_pick(f, ndim) : 0;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) { /* C order */
    x->strides[i] = layout == 1 ? 2 * s : s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  if (layout == 2) {
    s = 1;
    for (int i = 0; i < ndim; i++) {
      x->strides[i] = s;
      s *= shape[i] > 0 ? shape[i] : 1;
    }
  }
  if (layout == 3) x->strides[bcast] = 0;
  int64_t last = 0;
  for (int i = 0; i < ndim; i++) last += (shape[i] - 1) * x->strides[i];
  /* layout 0 passes NULL strides; x->strides still describe it for fz_at */
  x->t = (robocache_tensor){NULL,     ROBOCACHE_DEVICE_CPU,           0, dtype, ndim,
                            x->shape, layout == 0 ? NULL : x->strides};
  if (numel > 0 || fz_pick(f, 2)) {
    const size_t bytes = numel > 0 ? (size_t)(last + 1) * fz_esize(dtype) : 1;
    x->base = calloc(1, bytes);
    if (!x->base) abort();
    x->t.data = x->base;
  }
}

static inline void fz_free(fz_tensor *x) {
  free(x->base);
  x->base = NULL;
}

/* Address of element (i, j, k) (unused indices 0). */
static inline void *fz_at(const fz_tensor *x, int64_t i, int64_t j, int64_t k) {
  return x->base + (i * x->strides[0] + j * x->strides[1] + k * x->strides[2]) *
                       (int64_t)fz_esize(x->t.dtype);
}

/* Element (i, j, k) of a float tensor as double; int64 as double. */
static inline double fz_get(const fz_tensor *x, int64_t i, int64_t j, int64_t k) {
  const void *p = fz_at(x, i, j, k);
  if (x->t.dtype == ROBOCACHE_DTYPE_I64) return (double)*(const int64_t *)p;
  if (x->t.dtype == ROBOCACHE_DTYPE_U8) return *(const uint8_t *)p;
  if (x->t.dtype == ROBOCACHE_DTYPE_I32) return *(const int32_t *)p;
  return rc_load_f64(x->t.dtype, p, 0);
}

/* Stores v into element (i, j, k) of a float tensor (rounded as the library
 * rounds). */
static inline void fz_set(fz_tensor *x, int64_t i, int64_t j, int64_t k, double v) {
  rc_store_f64(x->t.dtype, fz_at(x, i, j, k), 0, v);
}

/* Stores v into element (i, j, k) of an int64 tensor. */
static inline void fz_set_i64(fz_tensor *x, int64_t i, int64_t j, int64_t k, int64_t v) {
  memcpy(fz_at(x, i, j, k), &v, 8);
}

static inline int64_t fz_get_i64(const fz_tensor *x, int64_t i, int64_t j, int64_t k) {
  int64_t v;
  memcpy(&v, fz_at(x, i, j, k), 8);
  return v;
}

/* a + b, saturated to the int64 range. */
static inline int64_t fz_add_sat(int64_t a, int64_t b) {
  if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
  if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
  return a + b;
}

/* The same layout and shape as x, with a copy of its bytes (outputs of the
 * second backend start from the same contents). */
static inline void fz_clone(fz_tensor *y, const fz_tensor *x) {
  *y = *x;
  y->t.shape = y->shape;
  y->t.strides = x->t.strides ? y->strides : NULL;
  if (x->base) {
    int64_t last = 0, numel = 1;
    for (int i = 0; i < x->t.ndim; i++) {
      last += (x->shape[i] - 1) * x->strides[i];
      numel *= x->shape[i];
    }
    const size_t bytes = numel > 0 ? (size_t)(last + 1) * fz_esize(x->t.dtype) : 1;
    y->base = malloc(bytes);
    if (!y->base) abort();
    memcpy(y->base, x->base, bytes);
    y->t.data = y->base;
  }
}

/* Fills every element of x with a byte pattern (outputs: what a backend
 * leaves unwritten shows). */
static inline void fz_poison(fz_tensor *x) {
  int64_t last = 0, numel = 1;
  for (int i = 0; i < x->t.ndim; i++) {
    last += (x->shape[i] - 1) * x->strides[i];
    numel *= x->shape[i];
  }
  if (x->base && numel > 0) memset(x->base, 0x5b, (size_t)(last + 1) * fz_esize(x->t.dtype));
}

/* ---- backends ---------------------------------------------------------------- */

/* A context for the CPU backend (ref 0) or the reference (ref 1). */
static inline robocache_ctx *fz_ctx(int ref) {
  robocache_ctx *ctx = NULL;
  if (robocache_ctx_create(&ctx) != ROBOCACHE_OK) abort();
  robocache_ctx_set_force_reference(ctx, ref);
  return ctx;
}

#define FZ_FAIL(...)                                                                               \
  do {                                                                                             \
    fprintf(stderr, "fuzz_ops: " __VA_ARGS__);                                                     \
    fputc('\n', stderr);                                                                           \
    abort();                                                                                       \
  } while (0)

/* Both backends gave the same status and message. With FZ_STATUS set in
 * the environment, each call's status and message go to stderr (to see
 * which paths a corpus reaches). */
static inline void fz_same_status(const char *what, robocache_status a, robocache_ctx *ca,
                                  robocache_status b, robocache_ctx *cb) {
  if (getenv("FZ_STATUS"))
    fprintf(stderr, "status %s %s: %s\n", what, robocache_status_name(a),
            robocache_ctx_error_message(ca));
  if (a != b)
    FZ_FAIL("%s: cpu %s (\"%s\") but reference %s (\"%s\")", what, robocache_status_name(a),
            robocache_ctx_error_message(ca), robocache_status_name(b),
            robocache_ctx_error_message(cb));
  if (strcmp(robocache_ctx_error_message(ca), robocache_ctx_error_message(cb)) != 0)
    FZ_FAIL("%s: %s with messages \"%s\" (cpu) and \"%s\" (reference)", what,
            robocache_status_name(a), robocache_ctx_error_message(ca),
            robocache_ctx_error_message(cb));
}

/* Bits of element (i, j, k) (zero-extended). */
static inline uint64_t fz_raw(const fz_tensor *x, int64_t i, int64_t j, int64_t k) {
  uint64_t u = 0;
  memcpy(&u, fz_at(x, i, j, k), fz_esize(x->t.dtype));
  return u;
}

/* Equal bits, or both NaN (payloads are not part of the contract). */
static inline int fz_same_value(const fz_tensor *a, const fz_tensor *b, int64_t i, int64_t j,
                                int64_t k) {
  if (fz_raw(a, i, j, k) == fz_raw(b, i, j, k)) return 1;
  const double x = fz_get(a, i, j, k), y = fz_get(b, i, j, k);
  return isnan(x) && isnan(y);
}

#endif
