/* RC_CPU_CLONES before a CPU-backend function that the compiler vectorises:
 * with GCC on x86-64 Linux it gets an AVX2 clone, picked at load time when
 * the CPU has AVX2 (the same IEEE operations on 8 float / 4 double lanes
 * instead of 4 / 2, so results are bitwise the same), next to the default
 * (SSE2) one. Elsewhere it expands to nothing. */
#ifndef ROBOCACHE_CPU_CPU_CLONES_H
#define ROBOCACHE_CPU_CPU_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define RC_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define RC_CPU_CLONES
#endif

#endif
