/* Random resample cases run on the GPU and on the reference backend, shared
 * by the CUDA tests of resample / align (test_cuda_align.c,
 * test_cuda_capture.c): device copies of host tensors, random ragged
 * problems (spec), and the comparison with the reference, whose float bound
 * test_cuda_align.c states. Built only with CUDA. */
#ifndef ROBOCACHE_TEST_CUDA_CASE_H
#define ROBOCACHE_TEST_CUDA_CASE_H

#include "support.h"

#include <cuda_runtime_api.h>

#define CU(call) assert_int_equal((int)(call), (int)cudaSuccess)

/* A device tensor and the shape and strides it points to. */
typedef struct dev_tensor {
  robocache_tensor t;
  int64_t shape[ROBOCACHE_MAX_DIMS], strides[ROBOCACHE_MAX_DIMS];
  size_t nbytes;
} dev_tensor;

/* The device tensors of one resample call. */
typedef struct dev_args {
  dev_tensor *values, *times, *lengths, *target_times, *target_lengths, *out, *valid;
} dev_args;

/* The shape, dtypes and options of a random case (make_case in cuda_case.c). */
typedef struct spec {
  int method, extrapolate;
  robocache_dtype vdt, odt, tdt;
  int64_t B, S, T, D;
  int64_t offset_ns, max_gap_ns, tolerance_ns;
  int sorted; /* int64 target times sorted in each row (as a time grid) */
  enum {
    STEPS_RANDOM, /* 1-20 ms */
    STEPS_BURSTY, /* 1 us or 20 ms: defeats the uniform-rate guess */
    STEPS_STEADY  /* 9-11 ms (100 Hz +-10 %, as the GPU benchmark): on long rows the
                     first probe window misses by a few samples, the next round finds them */
  } steps;
} spec;

/* One random case: its host arguments, which targets sit exactly on a
 * sample, and (after case_upload, once the test has edited a) the device
 * copies of the arguments. */
typedef struct gpu_case {
  rct_resample_args a;
  unsigned char *on_sample; /* [B*T] */
  dev_args d;               /* all NULL before case_upload */
} gpu_case;

/* A device copy of h with the same shape and strides; NULL for NULL. */
dev_tensor *to_dev(const rct_tensor *h);

/* All bytes 0xFF: NaN in every float dtype, 255 in valid, so that an element
 * the kernel does not write is caught. */
void poison(dev_tensor *d);

/* Copies d back into h (same shape); nothing for NULL. */
void from_dev(rct_tensor *h, const dev_tensor *d);

/* Frees d and its device memory; nothing for NULL. */
void dev_free(dev_tensor *d);

/* d's tensor descriptor; NULL for NULL. */
const robocache_tensor *dv(const dev_tensor *d);

/* robocache_resample on the device tensors d (out and valid written). */
robocache_status gpu_resample(robocache_ctx *ctx, const dev_args *d,
                              const robocache_interp_options *o);

/* A random case of spec c drawn from rng, not yet on the device. */
gpu_case case_new(const spec *c, rct_rng *rng);

/* Copies g's arguments to the device, out and valid poisoned. */
void case_upload(gpu_case *g);

/* Frees g's host and device tensors. */
void case_free(gpu_case *g);

/* Relative bound of an out dtype: one rounding (test_cuda_align.c). */
double rtol_of(robocache_dtype odt);

/* Absolute bound of case c's arithmetic (test_cuda_align.c). */
double atol_of(const spec *c);

/* Fails unless the device outputs of g (spec c) match the reference outputs
 * in g->a, which rct_resample has filled. */
void assert_gpu_matches(const gpu_case *g, const spec *c, const char *what);

/* Runs case c on the GPU (default stream) and on the reference; compares. */
void check_case(const spec *c, uint64_t seed);

#endif
