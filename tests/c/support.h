/* Shared helpers of the C tests (cmocka): owned tensors with any dtype and
 * strides, a seeded PRNG, element access as double / int64, buffer
 * comparisons (absolute/relative tolerance, bitwise) and small data
 * files from ROBOCACHE_DATA_DIR. Include after nothing else: it pulls in the
 * headers cmocka needs. */
#ifndef ROBOCACHE_TESTS_SUPPORT_H
#define ROBOCACHE_TESTS_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "robocache.h"

/* ---- tensors ------------------------------------------------------------- */

/* A CPU tensor owning its data. `t` is what the API receives; its shape and
 * strides point into this struct. */
typedef struct rct_tensor {
  robocache_tensor t;
  int64_t shape[ROBOCACHE_MAX_DIMS];
  int64_t strides[ROBOCACHE_MAX_DIMS]; /* in elements */
  size_t nbytes;                       /* bytes allocated at t.data */
} rct_tensor;

/* Zero-filled C-contiguous CPU tensor of dtype with ndim dims. Never NULL
 * (fails the test on out-of-memory). */
rct_tensor *rct_make(robocache_dtype dtype, int ndim, const int64_t *shape);
/* As rct_make with explicit, non-negative element strides (may leave holes:
 * the allocation covers the largest offset). */
rct_tensor *rct_make_strided(robocache_dtype dtype, int ndim, const int64_t *shape,
                             const int64_t *strides);
/* Shorthands for 1, 2 and 3 dimensions. */
rct_tensor *rct_make1(robocache_dtype dtype, int64_t n0);
rct_tensor *rct_make2(robocache_dtype dtype, int64_t n0, int64_t n1);
rct_tensor *rct_make3(robocache_dtype dtype, int64_t n0, int64_t n1, int64_t n2);
/* Frees; accepts NULL. */
void rct_free(rct_tensor *t);

/* Number of elements. */
int64_t rct_numel(const rct_tensor *t);
/* Element offset (in elements, strides applied) of the element with
 * row-major logical index i. */
int64_t rct_offset(const rct_tensor *t, int64_t i);
/* Element with row-major logical index i as double (any dtype). */
double rct_get(const rct_tensor *t, int64_t i);
/* Stores v (rounded to nearest even for f32/f16/bf16, truncated for ints). */
void rct_set(rct_tensor *t, int64_t i, double v);
/* Exact int64 access (dtype must be I64). */
int64_t rct_get_i64(const rct_tensor *t, int64_t i);
void rct_set_i64(rct_tensor *t, int64_t i, int64_t v);
/* The raw bits of element i (1, 2, 4 or 8 bytes, zero-extended). */
uint64_t rct_get_bits(const rct_tensor *t, int64_t i);
/* Copies every element of src into dst (same shape, any dtypes, through
 * double; int64 -> int64 exactly). */
void rct_copy(rct_tensor *dst, const rct_tensor *src);

/* ---- random numbers --------------------------------------------------------- */

/* splitmix64: small, seeded, identical on every platform. */
typedef struct rct_rng {
  uint64_t state;
} rct_rng;

rct_rng rct_rng_seed(uint64_t seed);
uint64_t rct_rng_u64(rct_rng *r);
/* Uniform double in [lo, hi). */
double rct_rng_uniform(rct_rng *r, double lo, double hi);
/* Uniform integer in [lo, hi] (inclusive). */
int64_t rct_rng_int(rct_rng *r, int64_t lo, int64_t hi);
/* Fills every element with a uniform value in [lo, hi) (stored in the
 * tensor's dtype). */
void rct_fill_uniform(rct_tensor *t, rct_rng *r, double lo, double hi);

/* ---- comparisons ------------------------------------------------------------ */

/* Fails the test (naming `what` and the first bad index with both values)
 * unless every element satisfies |a - b| <= atol + rtol * |b| (NaN matches
 * NaN). Same shapes required; dtypes may differ. */
void rct_assert_close(const rct_tensor *a, const rct_tensor *b, double atol, double rtol,
                      const char *what);
/* Fails unless every element of a and b has the same bits (same dtype). */
void rct_assert_bits_equal(const rct_tensor *a, const rct_tensor *b, const char *what);
/* Fails unless the error message of ctx contains `needle`. */
void rct_assert_message_has(const robocache_ctx *ctx, const char *needle);

/* ---- CUDA tests -------------------------------------------------------------- */

/* Exits with 77 (ctest's "skipped") when robocache has no usable CUDA device. */
void rct_require_cuda(void);

/* ---- data files ------------------------------------------------------------- */

/* Path of a file under the data directory: $ROBOCACHE_DATA_DIR when set,
 * else the repository's data/ (compile-time ROBOCACHE_DATA_DIR). Static
 * buffer, valid until the next call. */
const char *rct_data_path(const char *relative);
/* Reads a whole data file into a NUL-terminated malloc'd buffer (caller
 * frees); fails the test when it cannot be read. *len may be NULL. */
char *rct_read_data_file(const char *relative, size_t *len);

/* ---- resample / align calls -------------------------------------------------- */

/* The tensors of one resample (or resample_backward) call; NULL where the API
 * accepts NULL. For backward, `out` is grad_out and `values` grad_values. */
typedef struct rct_resample_args {
  rct_tensor *values, *times, *lengths, *target_times, *target_lengths, *out, *valid;
  robocache_interp_options opt;
} rct_resample_args;

/* Default options (robocache_interp_options_init) and zero-filled tensors:
 * times [B,S] and target_times [B,T] of time_dtype, values [B,S,D] and out
 * [B,T,D] of value_dtype, valid [B,T] uint8 when with_valid (else NULL);
 * lengths and target_lengths NULL. */
rct_resample_args rct_resample_args_make(robocache_dtype time_dtype, robocache_dtype value_dtype,
                                         int64_t B, int64_t S, int64_t T, int64_t D,
                                         int with_valid);
/* Frees every tensor of a (NULL ones included). */
void rct_resample_args_free(rct_resample_args *a);
/* For a->times [B,S] and a->target_times [B,T], draws in this order: with
 * probability 1/2 lengths [B] int64 uniform in 1..S (else NULL), then with
 * probability 1/2 target_lengths [B] int64 uniform in 0..T (else NULL). */
void rct_random_lengths(rct_resample_args *a, rct_rng *r);

/* Runs robocache_resample through a fresh context; the reference backend
 * when ref != 0, else the default (optimised) one. Copies the context's
 * error message into msg when msg is non-NULL. */
robocache_status rct_resample(const rct_resample_args *a, int ref, char *msg, size_t msg_len);
/* As rct_resample for robocache_resample_backward. */
robocache_status rct_resample_backward(const rct_resample_args *a, int ref, char *msg,
                                       size_t msg_len);
/* Fills each row of a [B,S] times tensor with strictly increasing times:
 * start_ns plus steps drawn uniformly in [min_step_ns, max_step_ns]
 * (int64: ns; float dtypes: seconds, kept strictly increasing after
 * rounding). */
void rct_fill_times(rct_tensor *times, rct_rng *r, int64_t start_ns, int64_t min_step_ns,
                    int64_t max_step_ns);

#endif
