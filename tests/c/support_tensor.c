/* Test helpers: owned CPU tensors, element access, seeded PRNG. */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "common/dtype.h"

rct_tensor *rct_make_strided(robocache_dtype dtype, int ndim, const int64_t *shape,
                             const int64_t *strides) {
  assert_true(ndim >= 0 && ndim <= ROBOCACHE_MAX_DIMS);
  rct_tensor *t = calloc(1, sizeof *t);
  assert_non_null(t);
  int64_t span = 1; /* 1 + largest element offset */
  int empty = 0;
  for (int i = 0; i < ndim; i++) {
    t->shape[i] = shape[i];
    t->strides[i] = strides[i];
    if (shape[i] == 0) empty = 1;
    if (shape[i] > 0) span += (shape[i] - 1) * strides[i];
  }
  size_t esize = robocache_dtype_size(dtype);
  assert_true(esize > 0);
  t->nbytes = empty ? esize : (size_t)span * esize;
  void *data = calloc(1, t->nbytes);
  assert_non_null(data);
  t->t.data = data;
  t->t.device_type = ROBOCACHE_DEVICE_CPU;
  t->t.device_id = 0;
  t->t.dtype = dtype;
  t->t.ndim = ndim;
  t->t.shape = t->shape;
  t->t.strides = t->strides;
  return t;
}

rct_tensor *rct_make(robocache_dtype dtype, int ndim, const int64_t *shape) {
  int64_t strides[ROBOCACHE_MAX_DIMS];
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return rct_make_strided(dtype, ndim, shape, strides);
}

rct_tensor *rct_make1(robocache_dtype dtype, int64_t n0) { return rct_make(dtype, 1, &n0); }

rct_tensor *rct_make2(robocache_dtype dtype, int64_t n0, int64_t n1) {
  int64_t shape[2] = {n0, n1};
  return rct_make(dtype, 2, shape);
}

rct_tensor *rct_make3(robocache_dtype dtype, int64_t n0, int64_t n1, int64_t n2) {
  int64_t shape[3] = {n0, n1, n2};
  return rct_make(dtype, 3, shape);
}

void rct_free(rct_tensor *t) {
  if (!t) return;
  free(t->t.data);
  free(t);
}

int64_t rct_numel(const rct_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->t.ndim; i++) n *= t->shape[i];
  return n;
}

int64_t rct_offset(const rct_tensor *t, int64_t i) {
  int64_t off = 0;
  for (int d = t->t.ndim - 1; d >= 0; d--) {
    off += (i % t->shape[d]) * t->strides[d];
    i /= t->shape[d];
  }
  return off;
}

double rct_get(const rct_tensor *t, int64_t i) {
  int64_t off = rct_offset(t, i);
  switch (t->t.dtype) {
  case ROBOCACHE_DTYPE_I64: return (double)((const int64_t *)t->t.data)[off];
  case ROBOCACHE_DTYPE_I32: return ((const int32_t *)t->t.data)[off];
  case ROBOCACHE_DTYPE_U8: return ((const uint8_t *)t->t.data)[off];
  default: return rc_load_f64(t->t.dtype, t->t.data, off);
  }
}

void rct_set(rct_tensor *t, int64_t i, double v) {
  int64_t off = rct_offset(t, i);
  switch (t->t.dtype) {
  case ROBOCACHE_DTYPE_I64: ((int64_t *)t->t.data)[off] = (int64_t)v; break;
  case ROBOCACHE_DTYPE_I32: ((int32_t *)t->t.data)[off] = (int32_t)v; break;
  case ROBOCACHE_DTYPE_U8: ((uint8_t *)t->t.data)[off] = (uint8_t)v; break;
  default: rc_store_f64(t->t.dtype, t->t.data, off, v); break;
  }
}

int64_t rct_get_i64(const rct_tensor *t, int64_t i) {
  assert_int_equal(t->t.dtype, ROBOCACHE_DTYPE_I64);
  return ((const int64_t *)t->t.data)[rct_offset(t, i)];
}

void rct_set_i64(rct_tensor *t, int64_t i, int64_t v) {
  assert_int_equal(t->t.dtype, ROBOCACHE_DTYPE_I64);
  ((int64_t *)t->t.data)[rct_offset(t, i)] = v;
}

uint64_t rct_get_bits(const rct_tensor *t, int64_t i) {
  size_t esize = robocache_dtype_size((robocache_dtype)t->t.dtype);
  uint64_t bits = 0;
  memcpy(&bits, (const char *)t->t.data + (size_t)rct_offset(t, i) * esize, esize);
  return bits;
}

void rct_copy(rct_tensor *dst, const rct_tensor *src) {
  assert_int_equal(rct_numel(dst), rct_numel(src));
  int exact = dst->t.dtype == ROBOCACHE_DTYPE_I64 && src->t.dtype == ROBOCACHE_DTYPE_I64;
  for (int64_t i = 0; i < rct_numel(src); i++) {
    if (exact)
      rct_set_i64(dst, i, rct_get_i64(src, i));
    else
      rct_set(dst, i, rct_get(src, i));
  }
}

rct_rng rct_rng_seed(uint64_t seed) {
  rct_rng r = {seed};
  return r;
}

uint64_t rct_rng_u64(rct_rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double rct_rng_uniform(rct_rng *r, double lo, double hi) {
  return lo + (hi - lo) * ((double)(rct_rng_u64(r) >> 11) * 0x1.0p-53);
}

int64_t rct_rng_int(rct_rng *r, int64_t lo, int64_t hi) {
  uint64_t range = (uint64_t)(hi - lo) + 1;
  return range == 0 ? (int64_t)rct_rng_u64(r) : lo + (int64_t)(rct_rng_u64(r) % range);
}

void rct_fill_uniform(rct_tensor *t, rct_rng *r, double lo, double hi) {
  for (int64_t i = 0; i < rct_numel(t); i++) rct_set(t, i, rct_rng_uniform(r, lo, hi));
}
