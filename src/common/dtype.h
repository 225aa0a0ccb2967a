/* Element loads and stores for every robocache dtype, shared by the CPU and
 * CUDA backends (host + device, header-only). Half and bfloat16 conversions
 * round to nearest even, as IEEE 754 and PyTorch do. */
#ifndef ROBOCACHE_COMMON_DTYPE_H
#define ROBOCACHE_COMMON_DTYPE_H

#include <stdint.h>
#include <string.h>

#include "robocache.h"

#if defined(__CUDACC__)
#define RC_HD __host__ __device__ __forceinline__
#else
#define RC_HD static inline
#endif

RC_HD uint32_t rc_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

RC_HD float rc_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

RC_HD float rc_bf16_to_f32(uint16_t h) { return rc_bits_f32((uint32_t)h << 16); }

RC_HD uint16_t rc_f32_to_bf16(float f) {
  uint32_t u = rc_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

RC_HD float rc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    /* zero or subnormal: man * 2^-24 */
    float v = (float)man * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  if (exp == 31) return rc_bits_f32(sign | 0x7f800000u | (man << 13));
  return rc_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

RC_HD uint16_t rc_f32_to_f16(float f) {
  uint32_t u = rc_f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow -> inf */
  if (a < 0x38800000u) {                                   /* subnormal or zero */
    if (a < 0x33000000u) return sign;                      /* < 2^-25 rounds to 0 */
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14..24 */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  /* normal: rebias the exponent 127 -> 15 and round the 13 dropped bits to
   * nearest even without a branch (+ 0xfff + the lowest kept bit carries
   * exactly when they are above half, or half with the kept part odd) */
  return (uint16_t)(sign | ((a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13));
}

/* Element i of a float tensor (f32/f64/f16/bf16) as double. */
RC_HD double rc_load_f64(int32_t dtype, const void *p, int64_t i) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F32: return ((const float *)p)[i];
  case ROBOCACHE_DTYPE_F64: return ((const double *)p)[i];
  case ROBOCACHE_DTYPE_F16: return rc_f16_to_f32(((const uint16_t *)p)[i]);
  case ROBOCACHE_DTYPE_BF16: return rc_bf16_to_f32(((const uint16_t *)p)[i]);
  default: return 0.0;
  }
}

/* Element i of a float tensor as float (f64 rounded). */
RC_HD float rc_load_f32(int32_t dtype, const void *p, int64_t i) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F32: return ((const float *)p)[i];
  case ROBOCACHE_DTYPE_F64: return (float)((const double *)p)[i];
  case ROBOCACHE_DTYPE_F16: return rc_f16_to_f32(((const uint16_t *)p)[i]);
  case ROBOCACHE_DTYPE_BF16: return rc_bf16_to_f32(((const uint16_t *)p)[i]);
  default: return 0.0f;
  }
}

/* Stores x into element i of a float tensor, rounding to nearest even. */
RC_HD void rc_store_f64(int32_t dtype, void *p, int64_t i, double x) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_F32: ((float *)p)[i] = (float)x; break;
  case ROBOCACHE_DTYPE_F64: ((double *)p)[i] = x; break;
  case ROBOCACHE_DTYPE_F16: ((uint16_t *)p)[i] = rc_f32_to_f16((float)x); break;
  case ROBOCACHE_DTYPE_BF16: ((uint16_t *)p)[i] = rc_f32_to_bf16((float)x); break;
  default: break;
  }
}

/* Time element i: int64 ns as int64; float seconds as double. */
RC_HD int64_t rc_load_i64(const void *p, int64_t i) { return ((const int64_t *)p)[i]; }

RC_HD double rc_load_time_f64(int32_t dtype, const void *p, int64_t i) {
  switch (dtype) {
  case ROBOCACHE_DTYPE_I64: return (double)((const int64_t *)p)[i];
  case ROBOCACHE_DTYPE_F64: return ((const double *)p)[i];
  case ROBOCACHE_DTYPE_F32: return ((const float *)p)[i];
  default: return 0.0;
  }
}

#endif
