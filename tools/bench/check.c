/* The checks' input and helpers (check.h). */
#include "check.h"

#include <stdlib.h>
#include <string.h>

int check_cmp_u32(const void *a, const void *b) {
  const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

int check_cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

void *check_host(struct bench_check *c, size_t bytes) {
  for (int i = 0; i < CHECK_MAX_HELD; ++i)
    if (!c->held_host[i]) {
      if (!(c->held_host[i] = malloc(bytes ? bytes : 1))) break;
      return c->held_host[i];
    }
  check_ok(c, CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  return NULL;
}

cl_mem check_buffer(struct bench_check *c, size_t bytes, const void *host) {
  cl_int err = CL_OUT_OF_RESOURCES; /* no slot left */
  for (int i = 0; i < CHECK_MAX_HELD; ++i)
    if (!c->held[i]) {
      c->held[i] = clCreateBuffer(clprim_context_cl_context(c->ctx),
                                  CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                                  (void *)host, &err);
      if (err == CL_SUCCESS) return c->held[i];
      c->held[i] = NULL;
      break;
    }
  check_ok(c, err);
  return NULL;
}

int check_ok(struct bench_check *c, int status) {
  if (status != CLPRIM_SUCCESS && c->status == CLPRIM_SUCCESS) c->status = (clprim_status)status;
  return status == CLPRIM_SUCCESS;
}

int check_read(struct bench_check *c, cl_mem mem, size_t bytes, void *host) {
  return check_ok(c, clEnqueueReadBuffer(clprim_context_queue(c->ctx), mem, CL_TRUE, 0, bytes, host,
                                         0, NULL, NULL));
}

uint32_t *check_keys(struct bench_check *c, uint32_t modulus, int sorted) {
  uint32_t *keys = check_host(c, c->n * 4);
  if (!keys) return NULL;
  for (size_t i = 0; i < c->n; ++i)
    keys[i] = modulus ? c->host[i] % modulus : c->host[i];
  if (sorted) qsort(keys, c->n, 4, check_cmp_u32);
  return keys;
}

int bench_check_op(clprim_context *ctx, const struct bench_op *op, size_t n, uint64_t seed,
                   clprim_status *status) {
  struct bench_check c;
  memset(&c, 0, sizeof c);
  c.ctx = ctx, c.n = n;
  uint32_t *host = check_host(&c, n * 4);
  if (host) {
    /* A 64-bit LCG, its top 31 bits. */
    for (size_t i = 0; i < n; ++i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      host[i] = (uint32_t)(seed >> 33);
    }
    c.host = host;
  }
  int ok = host && (c.in = check_buffer(&c, n * 4, host)) != NULL && op->check(&c);
  clFinish(clprim_context_queue(ctx)); /* nothing in flight uses what is freed */
  for (int i = 0; i < CHECK_MAX_HELD; ++i) {
    if (c.held[i]) clReleaseMemObject(c.held[i]);
    free(c.held_host[i]);
  }
  *status = c.status;
  return ok;
}
