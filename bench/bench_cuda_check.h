/* CHECK(call) for the CUDA benchmarks: on a CUDA runtime error, prints the
 * call and the error and exits with status 1 (a benchmark has nothing to
 * recover). C and CUDA C++. */
#ifndef ROBOCACHE_BENCH_CUDA_CHECK_H
#define ROBOCACHE_BENCH_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                                  \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#endif
