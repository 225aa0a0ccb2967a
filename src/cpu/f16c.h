/* float32 -> float16 through the F16C instruction vcvtps2ph, for GCC and
 * Clang on x86-64 (RC_F16C defined). A function marked RC_F16C_TARGET may
 * only run where rc_cpu_has_f16c(). vcvtps2ph rounds to nearest even exactly
 * as rc_f32_to_f16 (infinities, subnormals and overflow included, also with
 * FTZ/DAZ set); NaN becomes the same quiet NaN (sign | 0x7e00), where
 * vcvtps2ph would keep the payload. */
#ifndef ROBOCACHE_CPU_F16C_H
#define ROBOCACHE_CPU_F16C_H

#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>

#define RC_F16C 1
#define RC_F16C_TARGET __attribute__((target("f16c")))

RC_F16C_TARGET static inline uint16_t rc_f32_to_f16_f16c(float f) {
  const uint16_t h = (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
  return f != f ? (uint16_t)((h & 0x8000u) | 0x7e00u) : h;
}

static inline int rc_cpu_has_f16c(void) {
#if defined(__clang__) && __clang_major__ < 15 /* no "f16c" in its __builtin_cpu_supports */
  unsigned a, b, c, d; /* F16C (CPUID.1:ECX) with the OS's AVX state ("avx") */
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
#else
  return __builtin_cpu_supports("f16c");
#endif
}
#endif

#endif
