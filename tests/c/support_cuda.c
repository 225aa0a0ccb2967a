/* The guard of the CUDA tests (test_cuda_*.c). */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>

void rct_require_cuda(void) {
  if (robocache_has_cuda()) return;
  fprintf(stderr, "no usable CUDA device: skipped\n");
  exit(77);
}
