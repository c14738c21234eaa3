/* What a rows file's check (struct bench_op's check) gets, and its helpers:
 * a context and n random uint32 below 2^31, on the host and the device.
 * Memory and buffers a check takes from here are freed after it, so a
 * check returns 0 at its first failure without cleaning up. */
#ifndef CLPRIM_BENCH_CHECK_H
#define CLPRIM_BENCH_CHECK_H

#include "harness.h"

#include <stdint.h>

#define CHECK_MAX_HELD 12

struct bench_check {
  clprim_context *ctx;
  size_t n;
  const uint32_t *host; /* n random uint32 below 2^31 */
  cl_mem in;            /* host, on the device */
  clprim_status status; /* of the step that failed, else CLPRIM_SUCCESS */
  void *held_host[CHECK_MAX_HELD];
  cl_mem held[CHECK_MAX_HELD];
};

/* Runs op's check on ctx with n random uint32 from seed: 1 when right;
 * *status: of the step that failed, else CLPRIM_SUCCESS. */
int bench_check_op(clprim_context *ctx, const struct bench_op *op, size_t n, uint64_t seed,
                   clprim_status *status);

/* `bytes` of host memory; NULL (status set) when there is none. */
void *check_host(struct bench_check *c, size_t bytes);

/* A device buffer of `bytes`, a copy of host unless NULL; NULL (status set)
 * on failure. */
cl_mem check_buffer(struct bench_check *c, size_t bytes, const void *host);

/* Records a call's status: 1 when it succeeded. */
int check_ok(struct bench_check *c, int status);

/* Reads `bytes` of mem into host: 1 when done. */
int check_read(struct bench_check *c, cl_mem mem, size_t bytes, void *host);

/* The input modulo `modulus` (keys with many repeats; 0: the input
 * itself), sorted when asked; NULL (status set) without memory. */
uint32_t *check_keys(struct bench_check *c, uint32_t modulus, int sorted);

/* Ascending uint32 (uint64) order, for qsort. */
int check_cmp_u32(const void *a, const void *b);
int check_cmp_u64(const void *a, const void *b);

/* A key and its position as one uint64 whose ascending order is top-k's
 * sorted order: larger keys first, equal keys by position (the low 32
 * bits). */
static inline uint64_t check_best_first(uint32_t key, size_t position) {
  return (uint64_t)(UINT32_MAX - key) << 32 | (uint32_t)position;
}

#endif
