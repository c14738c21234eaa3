/* prebuild.c: clprim_context_prebuild, every program of the context's path
 * built ahead of the first calls.
 *
 * The programs a call needs are whatever its family's plan asks
 * clprim__kernels for, so prebuilding does not list them again: each family's
 * prebuild hook (its descriptor, src/registry.c) makes dry runs of its public
 * calls (every type the device has, sizes that reach each plan) while
 * clprim__kernels only collects the requests and stops the call before
 * anything is enqueued (CLPRIM__COLLECTED). Then it builds everything
 * collected in one clprim__kernels call: several programs at once, one host
 * thread each (clprim_options.build_threads), and into the disk cache.
 * Programs that depend on a call's own arguments (a user's expression) are
 * built by that call. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

static clprim_status prebuild(clprim_context *ctx, unsigned types);

clprim_status clprim_context_prebuild(clprim_context *ctx) {
  return clprim__prebuild(ctx, ~0u, NULL, NULL);
}

clprim_status clprim_context_prebuild_progress(clprim_context *ctx, clprim_progress_fn progress,
                                               void *user) {
  return clprim__prebuild(ctx, ~0u, progress, user);
}

/* The dry runs are public calls inside this one (core/call.c lets the
 * thread that holds the context make them). */
static clprim_status prebuild(clprim_context *ctx, unsigned types) {
  if (ctx->collect) return CLPRIM_ERROR_INVALID_ARGUMENT; /* not re-entrant */
  struct clprim_dry d;
  memset(&d, 0, sizeof d);
  /* Large enough for every multi-tile plan; on GPUs for the binned
   * histogram too (2^22 elements, 2^20 bins), which CPUs never run. */
  const int gpu = (ctx->info.device_type & CL_DEVICE_TYPE_GPU) != 0;
  d.n = gpu ? (size_t)1 << 22 : (size_t)1 << 18;
  d.max_bins = gpu ? (size_t)1 << 20 : (size_t)1 << 17;
  cl_int err = CL_SUCCESS;
  cl_mem *bufs[4] = {&d.in, &d.in2, &d.out, &d.out2};
  for (int b = 0; b < 4 && err == CL_SUCCESS; ++b)
    *bufs[b] = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, d.n * 8, NULL, &err);
  struct clprim_collect c = {NULL, 0, 0};
  clprim_status st = (clprim_status)err;
  if (st == CLPRIM_SUCCESS) {
    ctx->collect = &c;
    for (clprim_type t = 0; t < CLPRIM_TYPE_COUNT; ++t)
      for (unsigned f = 0; f < ctx->family_count; ++f)
        if ((types >> t & 1u) && clprim__type_supported(ctx, t) && ctx->families[f]->prebuild)
          ctx->families[f]->prebuild(ctx, &d, t);
    ctx->collect = NULL;
    ctx->prebuilding = 1;
    st = clprim__kernels(ctx, c.requests, (unsigned)c.count);
    ctx->prebuilding = 0;
  }
  for (size_t r = 0; r < c.count; ++r) {
    struct clprim_kernel_request *q = &c.requests[r];
    free((char *)q->file), free((char *)q->prefix), free((char *)q->options);
    free((char *)q->name), free((char *)q->together);
  }
  free(c.requests);
  for (int b = 0; b < 4; ++b)
    if (*bufs[b]) clReleaseMemObject(*bufs[b]);
  return st;
}

clprim_status clprim__prebuild(clprim_context *ctx, unsigned types, clprim_progress_fn progress,
                               void *user) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "context_prebuild"));
  ctx->progress = progress, ctx->progress_user = user;
  const clprim_status st = prebuild(ctx, types);
  ctx->progress = NULL, ctx->progress_user = NULL;
  return clprim__call_end(ctx, st);
}
