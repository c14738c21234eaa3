/* scratch.c: device buffers the families keep between calls, by name.
 *
 * clprim__scratch_per_call: on Oclgrind such a name gets a buffer of its
 * own in every public call (the same one within the call), and the call's
 * buffer is kept with the context: Oclgrind reports bytes of a buffer that
 * kernels of another program wrote in an earlier call as uninitialised,
 * even after this call's kernels write them (seen with hist_local's and
 * sort_histogram's atomic adds). Only where that happens: a new buffer
 * may land at the address of one the caller released, which Oclgrind
 * reports the same way (select's masks did, when every name was renewed
 * per call). Both reports fit what clprim__write (enqueue.c) now works
 * around, Oclgrind's record of initialised bytes sized by the last host
 * write; whether per-call buffers are still needed is untested. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* Host zeros, kept until the context is freed (a write that does not wait
 * reads them later); a larger block keeps the smaller ones before it. */
struct clprim_zeros {
  struct clprim_zeros *next;
  size_t size;
  unsigned char bytes[];
};

/* Oclgrind may hold a released buffer's record of initialised bytes for a
 * new buffer's handle (see clprim__write in enqueue.c): written once from
 * the host, the new buffer gets a record of its own size. The write does
 * not wait: Oclgrind runs commands in the thread that waits for them, and
 * its checker crashes in any thread but the first. */
static clprim_status oclgrind_zero(clprim_context *ctx, cl_mem m, size_t bytes) {
  if (!ctx->zeros || ctx->zeros->size < bytes) {
    struct clprim_zeros *z = calloc(1, sizeof *z + bytes);
    if (!z) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    z->next = ctx->zeros, z->size = bytes;
    ctx->zeros = z;
  }
  return clprim__write(ctx, m, 0, bytes, ctx->zeros->bytes, 0);
}

/* The entry of that name, or NULL. */
static struct clprim_scratch_entry *find(clprim_context *ctx, const char *name) {
  struct clprim_scratch_entry *e = ctx->scratch;
  while (e && strcmp(e->name, name) != 0) e = e->next;
  return e;
}

/* A new empty entry of that name (NULL: out of host memory). */
static struct clprim_scratch_entry *add(clprim_context *ctx, const char *name) {
  struct clprim_scratch_entry *e = calloc(1, sizeof *e);
  if (e) e->name = malloc(strlen(name) + 1);
  if (!e || !e->name) {
    free(e);
    return NULL;
  }
  strcpy(e->name, name);
  e->next = ctx->scratch;
  ctx->scratch = e;
  return e;
}

static clprim_status scratch(clprim_context *ctx, const char *name, size_t bytes, int per_call,
                             cl_mem *buf) {
  if (bytes == 0) bytes = 1;
  struct clprim_scratch_entry *e = find(ctx, name);
  const int stale = e && per_call && ctx->oclgrind && e->call != ctx->calls;
  if (e && e->size >= bytes && !stale) {
    *buf = e->buf;
    return CLPRIM_SUCCESS;
  }
  if (!e && (e = add(ctx, name)) == NULL) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  /* Room to retire the outgrown buffer first, so that a failure leaves
   * everything as it was. */
  if (e->buf && ctx->retired_count == ctx->retired_room) {
    size_t room = ctx->retired_room ? 2 * ctx->retired_room : 16;
    cl_mem *r = realloc(ctx->retired, room * sizeof *r);
    if (!r) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    ctx->retired = r, ctx->retired_room = room;
  }
  /* Grow at least twofold, so that rising sizes reallocate rarely (a
   * stale buffer that is large enough is made again at its size). */
  size_t want = bytes;
  if (e->size >= bytes) want = e->size;
  else if (e->size && e->size * 2 > want) want = e->size * 2;
  if (want > ctx->info.max_alloc_size) want = bytes;
  cl_int err;
  cl_mem m = clCreateBuffer(ctx->cl_ctx, CL_MEM_READ_WRITE, want, NULL, &err);
  if (err != CL_SUCCESS) return (clprim_status)err;
  if (ctx->oclgrind) {
    const clprim_status st = oclgrind_zero(ctx, m, want);
    if (st != CLPRIM_SUCCESS) {
      clReleaseMemObject(m);
      return st;
    }
  }
  /* The outgrown buffer is kept until the context is freed (with twofold
   * growth all of them together are smaller than the new one): a handle an
   * earlier step of the call took stays valid, and Oclgrind reports a
   * recycled buffer's bytes as uninitialised even after kernels write them,
   * which would hide real reports in the Oclgrind tests. */
  if (e->buf) ctx->retired[ctx->retired_count++] = e->buf;
  e->buf = m;
  e->size = want;
  e->call = ctx->calls;
  *buf = m;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__scratch(clprim_context *ctx, const char *name, size_t bytes, cl_mem *buf) {
  return scratch(ctx, name, bytes, 0, buf);
}

clprim_status clprim__scratch_per_call(clprim_context *ctx, const char *name, size_t bytes,
                                       cl_mem *buf) {
  return scratch(ctx, name, bytes, 1, buf);
}

/* Unmaps a pinned entry's buffer and releases it. */
static void release_host(clprim_context *ctx, struct clprim_scratch_entry *e) {
  if (e->host) clEnqueueUnmapMemObject(ctx->queue, e->buf, e->host, 0, NULL, NULL);
  if (e->buf) clReleaseMemObject(e->buf);
  e->host = NULL, e->buf = NULL, e->size = 0;
}

clprim_status clprim__scratch_host(clprim_context *ctx, const char *name, size_t bytes,
                                   void **host) {
  if (bytes == 0) bytes = 8;
  struct clprim_scratch_entry *e = find(ctx, name);
  if (e && e->host && e->size >= bytes) {
    *host = e->host;
    return CLPRIM_SUCCESS;
  }
  if (!e && (e = add(ctx, name)) == NULL) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  release_host(ctx, e);
  /* An eighth more than asked: sizes that differ by a little between calls
   * (a sort's pieces) make no new buffer each time. */
  const size_t want = bytes + bytes / 8;
  cl_int err;
  e->buf = clCreateBuffer(ctx->cl_ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, want, NULL, &err);
  if (err != CL_SUCCESS) {
    e->buf = NULL;
    return (clprim_status)err;
  }
  e->host = clEnqueueMapBuffer(ctx->queue, e->buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, want,
                               0, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    e->host = NULL;
    release_host(ctx, e);
    return (clprim_status)err;
  }
  e->size = want;
  *host = e->host;
  return CLPRIM_SUCCESS;
}

void clprim__release_scratch(clprim_context *ctx) {
  while (ctx->scratch) {
    struct clprim_scratch_entry *next = ctx->scratch->next;
    if (ctx->scratch->host) release_host(ctx, ctx->scratch);
    if (ctx->scratch->buf) clReleaseMemObject(ctx->scratch->buf);
    free(ctx->scratch->name);
    free(ctx->scratch);
    ctx->scratch = next;
  }
  for (size_t r = 0; r < ctx->retired_count; ++r) clReleaseMemObject(ctx->retired[r]);
  free(ctx->retired);
  ctx->retired = NULL;
  ctx->retired_count = ctx->retired_room = 0;
  while (ctx->zeros) {
    struct clprim_zeros *next = ctx->zeros->next;
    free(ctx->zeros);
    ctx->zeros = next;
  }
}
