/* call.c: what every public call does at its start and its end, and the
 * caller's buffer ranges it works on.
 *
 * A call begins (clprim__call_begin: the context is taken atomically, so a
 * call from a second thread gets CLPRIM_ERROR_CONTEXT_BUSY instead of
 * racing on the context's queue, scratch and cache, or with
 * clprim_options.wait_when_busy waits its turn), turns each
 * clprim_buffer into a cl_mem that holds the range from its byte 0
 * (clprim__range), and ends (clprim__call_end): outputs that went through a
 * copy are copied back if the call succeeded, the call's sub-buffers are
 * released (OpenCL keeps them alive until the commands that use them have
 * run) and the context is given back. A segmented call's begin and end
 * offsets are two such ranges of uint32 or uint64 (clprim__segment_offsets).
 *
 * A range at offset 0 is the caller's buffer itself. Any other range is a
 * sub-buffer when its origin is aligned as the device requires
 * (CL_DEVICE_MEM_BASE_ADDR_ALIGN), else a copy in the context's scratch:
 * kernels never take offsets, so every family gets offsets for free.
 *
 * A failed call leaves a text that says why (clprim_context_last_error):
 * clprim__fail is the one place it is written, by the checks here and in
 * context.c (ranges, buffers, types, flags) and by each family's own. */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The context this thread is in a call on: clprim_context_prebuild's dry
 * runs are public calls made inside it. */
static _Thread_local clprim_context *held;

clprim_status clprim__hold(clprim_context *ctx, const char *name) {
  if (!ctx) return CLPRIM_ERROR_INVALID_ARGUMENT;
  if (held == ctx) {
    ctx->nested = 1;
    return CLPRIM_SUCCESS;
  }
  /* A call refused here touches nothing: the text stays the one of the
   * call that holds the context. */
  if (ctx->wait_when_busy) {
    /* A ticket, then the turn: first come, first served. */
    pthread_mutex_lock(&ctx->turn_lock);
    const unsigned long ticket = ctx->next_ticket++;
    while (ctx->serving != ticket) pthread_cond_wait(&ctx->turn, &ctx->turn_lock);
    pthread_mutex_unlock(&ctx->turn_lock);
    atomic_store(&ctx->busy, 1);
  } else {
    int idle = 0;
    if (!atomic_compare_exchange_strong(&ctx->busy, &idle, 1)) return CLPRIM_ERROR_CONTEXT_BUSY;
  }
  held = ctx;
  ctx->nested = 0;
  ctx->call_name = name;
  ctx->last_error[0] = 0;
  return CLPRIM_SUCCESS;
}

/* Why this thread's last context creation failed ("" after one that
 * succeeded): creation has no context to keep a text in until it succeeds. */
static _Thread_local char create_error[CLPRIM__ERROR_TEXT];

const char *clprim_context_last_error(const clprim_context *ctx) {
  return ctx ? ctx->last_error : create_error;
}

void clprim__create_begin(void) {
  create_error[0] = 0;
}

clprim_status clprim__create_fail(clprim_status status, const char *format, ...) {
  if (create_error[0] || status == CLPRIM_SUCCESS) return status;
  va_list ap;
  va_start(ap, format);
  vsnprintf(create_error, sizeof create_error, format, ap);
  va_end(ap);
  const char *trace = getenv("CLPRIM_TRACE");
  if (trace && *trace && strcmp(trace, "0") != 0)
    fprintf(stderr, "clprim: %s (%s)\n", create_error, clprim_status_name(status));
  return status;
}

clprim_status clprim__vfail(clprim_context *ctx, clprim_status status, const char *format,
                            va_list ap) {
  if (!ctx || ctx->last_error[0] || status == CLPRIM_SUCCESS || status == CLPRIM__COLLECTED)
    return status;
  const size_t size = sizeof ctx->last_error;
  int at = ctx->call_name ? snprintf(ctx->last_error, size, "%s: ", ctx->call_name) : 0;
  if (at < 0 || (size_t)at >= size) at = 0;
  vsnprintf(ctx->last_error + at, size - (size_t)at, format, ap);
  if (ctx->trace) fprintf(stderr, "clprim: %s (%s)\n", ctx->last_error, clprim_status_name(status));
  return status;
}

clprim_status clprim__fail(clprim_context *ctx, clprim_status status, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  clprim__vfail(ctx, status, format, ap);
  va_end(ap);
  return status;
}

clprim_status clprim__invalid(clprim_context *ctx, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  clprim__vfail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, format, ap);
  va_end(ap);
  return CLPRIM_ERROR_INVALID_ARGUMENT;
}

clprim_status clprim__cl_fail(clprim_context *ctx, cl_int err, const char *what) {
  return clprim__fail(ctx, (clprim_status)err, "%s returned %d (%s)", what, (int)err,
                      clprim_status_name(err));
}

/* The public flags by bit, for a refused flag's text. */
static const char *flag_name(unsigned bit) {
  static const struct {
    unsigned bit;
    const char *name;
  } flags[] = {{CLPRIM_REDUCE_ABS, "CLPRIM_REDUCE_ABS"},
               {CLPRIM_REDUCE_NAN_LARGEST, "CLPRIM_REDUCE_NAN_LARGEST"},
               {CLPRIM_TOPK_SORTED, "CLPRIM_TOPK_SORTED"},
               {CLPRIM_INDICES_64, "CLPRIM_INDICES_64"},
               {CLPRIM_SUMS_KEEP_SUBNORMALS, "CLPRIM_SUMS_KEEP_SUBNORMALS"},
               {CLPRIM_PARTITION_REVERSED, "CLPRIM_PARTITION_REVERSED"},
               {CLPRIM_NTH_REJECT_NAN, "CLPRIM_NTH_REJECT_NAN"},
               {CLPRIM_TOPK_SMALLEST, "CLPRIM_TOPK_SMALLEST"},
               {CLPRIM_SORT_DESCENDING, "CLPRIM_SORT_DESCENDING"},
               {CLPRIM_PIPE_VALUES_WANTED, "CLPRIM_PIPE_VALUES_WANTED"},
               {CLPRIM_PIPE_INDICES_WANTED, "CLPRIM_PIPE_INDICES_WANTED"},
               {CLPRIM_CHECK_INDICES, "CLPRIM_CHECK_INDICES"}};
  for (size_t f = 0; f < sizeof flags / sizeof flags[0]; ++f)
    if (flags[f].bit == bit) return flags[f].name;
  return "no clprim flag";
}

clprim_status clprim__check_flags(clprim_context *ctx, unsigned flags, unsigned allowed) {
  const unsigned refused = flags & ~allowed;
  if (!refused) return CLPRIM_SUCCESS;
  const unsigned bit = refused & (~refused + 1u); /* the lowest */
  return clprim__invalid(ctx, "flag 0x%x (%s) is not one this call takes", bit, flag_name(bit));
}

clprim_status clprim__unhold(clprim_context *ctx, clprim_status status) {
  if (ctx->nested) {
    ctx->nested = 0;
    return status;
  }
  /* The text says why the call failed, or is "" after a success (a failure
   * the call recovered from leaves none). */
  if (status == CLPRIM_SUCCESS)
    ctx->last_error[0] = 0;
  else
    clprim__fail(ctx, status, "failed with %d (%s)", (int)status, clprim_status_name(status));
  held = NULL;
  atomic_store(&ctx->busy, 0);
  if (ctx->wait_when_busy) {
    pthread_mutex_lock(&ctx->turn_lock);
    ++ctx->serving;
    pthread_cond_broadcast(&ctx->turn);
    pthread_mutex_unlock(&ctx->turn_lock);
  }
  return status;
}

void clprim__forget_events(clprim_context *ctx) {
  if (ctx->first_event) clReleaseEvent(ctx->first_event);
  if (ctx->last_event) clReleaseEvent(ctx->last_event);
  ctx->first_event = ctx->last_event = NULL;
}

clprim_status clprim__call_begin(clprim_context *ctx, const char *name) {
  CLPRIM_CHECK(clprim__hold(ctx, name));
  clprim__forget_events(ctx);
  ctx->range_count = 0;
  ++ctx->calls;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__call_end(clprim_context *ctx, clprim_status status) {
  for (unsigned r = 0; r < ctx->range_count; ++r) {
    struct clprim_range *g = &ctx->ranges[r];
    if (status == CLPRIM_SUCCESS && g->copy_back) {
      clprim_status st = clprim__copy(ctx, g->mem, g->caller, 0, g->at, g->bytes);
      if (st != CLPRIM_SUCCESS) status = st;
    }
  }
  for (unsigned r = 0; r < ctx->range_count; ++r)
    if (ctx->ranges[r].sub) clReleaseMemObject(ctx->ranges[r].mem);
  ctx->range_count = 0;
  /* A failed call has no completion event to give (a temporary copy may
   * have been enqueued before a later check failed). */
  if (status != CLPRIM_SUCCESS) clprim__forget_events(ctx);
  return clprim__unhold(ctx, status);
}

/* The buffer that mem is a sub-buffer of (or mem) and mem's origin in it. */
static clprim_status root_of(cl_mem mem, cl_mem *root, size_t *origin) {
  cl_mem parent = NULL;
  cl_int err = clGetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL);
  if (err != CL_SUCCESS) return (clprim_status)err;
  *root = parent ? parent : mem;
  *origin = 0;
  if (parent) err = clGetMemObjectInfo(mem, CL_MEM_OFFSET, sizeof *origin, origin, NULL);
  return (clprim_status)err;
}

/* Makes g's cl_mem a sub-buffer of its root over its range, and updates
 * where the family keeps it. */
static cl_int sub_buffer(struct clprim_range *g) {
  cl_buffer_region region = {g->begin, g->bytes};
  cl_int err;
  cl_mem sub = clCreateSubBuffer(g->root, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  if (err != CL_SUCCESS) return err;
  g->mem = sub, g->sub = 1;
  for (int d = 0; d < 2; ++d)
    if (g->dest[d]) *g->dest[d] = sub;
  return CL_SUCCESS;
}

/* A range that uses its root buffer itself gets a sub-buffer: OpenCL
 * leaves a command undefined that uses a buffer and a sub-buffer of it
 * when either is written (only reads are defined). */
static clprim_status detach(struct clprim_range *g) {
  return g->mem == g->root ? (clprim_status)sub_buffer(g) : CLPRIM_SUCCESS;
}

clprim_status clprim__range(clprim_context *ctx, const char *name, clprim_buffer b,
                            size_t elem_size, size_t count, unsigned use, cl_mem *mem) {
  CLPRIM_CHECK(clprim__check_buffer(ctx, name, b.mem, elem_size, b.offset, count));
  const size_t bytes = count * elem_size, at = b.offset * elem_size; /* checked */
  *mem = b.mem;
  if (bytes == 0) return CLPRIM_SUCCESS; /* nothing is read or written there */
  cl_mem root;
  size_t origin;
  const clprim_status rooted = root_of(b.mem, &root, &origin);
  if (rooted != CLPRIM_SUCCESS) return clprim__cl_fail(ctx, rooted, "clGetMemObjectInfo");
  const size_t begin = origin + at, end = begin + bytes;

  /* Outputs share no byte with another range, except the same range where
   * the call allows it (a scan in place): then both get the same cl_mem.
   * Ranges of one root buffer where one is written get sub-buffers. */
  int shares_root = 0;
  for (unsigned r = 0; r < ctx->range_count; ++r) {
    struct clprim_range *g = &ctx->ranges[r];
    if (g->root != root) continue;
    const int writes = (use & CLPRIM__WRITE) || g->writes;
    if (writes) shares_root = 1;
    if (end <= g->begin || g->end <= begin || !writes) continue;
    if (!(use & CLPRIM__SAME_OK) || g->begin != begin || g->end != end)
      return clprim__invalid(ctx, "%s overlaps %s", name, g->name);
    g->writes = 1;
    if (g->staged && (use & CLPRIM__WRITE)) g->copy_back = 1;
    g->dest[1] = mem;
    *mem = g->mem;
    return CLPRIM_SUCCESS;
  }
  if (ctx->range_count == CLPRIM__MAX_RANGES)
    return clprim__invalid(ctx, "%s is more than the %d ranges a call takes", name,
                           CLPRIM__MAX_RANGES);
  const unsigned slot = ctx->range_count;
  struct clprim_range *g = &ctx->ranges[slot];
  memset(g, 0, sizeof *g);
  g->caller = b.mem, g->root = root, g->begin = begin, g->end = end, g->dest[0] = mem;
  g->at = at, g->bytes = bytes, g->writes = (use & CLPRIM__WRITE) != 0, g->mem = b.mem;
  g->name = name;
  ++ctx->range_count;
  if (ctx->collect) return CLPRIM_SUCCESS; /* a dry run: nothing is enqueued */

  if (at != 0 && (begin % ctx->base_align != 0 || sub_buffer(g) != CL_SUCCESS)) {
    /* Unaligned: a copy in the context's scratch (kept between calls),
     * which starts as the caller's bytes unless every byte is written. */
    char name[48];
    snprintf(name, sizeof name, "call: range %u", slot);
    CLPRIM_CHECK(clprim__scratch_per_call(ctx, name, bytes, &g->mem));
    g->staged = 1;
    g->copy_back = (use & CLPRIM__WRITE) != 0;
    if ((use & CLPRIM__ALL_WRITTEN) == 0)
      CLPRIM_CHECK(clprim__copy(ctx, b.mem, g->mem, at, 0, bytes));
  }
  if (shares_root) {
    for (unsigned r = 0; r < slot; ++r)
      if (ctx->ranges[r].root == root) CLPRIM_CHECK(detach(&ctx->ranges[r]));
    CLPRIM_CHECK(detach(g));
  }
  *mem = g->mem;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__segment_offsets(clprim_context *ctx, clprim_type offset_type, size_t segments,
                                      clprim_buffer begin_offsets, clprim_buffer end_offsets,
                                      cl_mem *begins, cl_mem *ends) {
  if (offset_type != CLPRIM_UINT32 && offset_type != CLPRIM_UINT64)
    return clprim__invalid(ctx, "offset_type (%d) is neither CLPRIM_UINT32 nor CLPRIM_UINT64",
                           (int)offset_type);
  const size_t bytes = clprim_type_size(offset_type);
  CLPRIM_CHECK(
      clprim__range(ctx, "begin_offsets", begin_offsets, bytes, segments, CLPRIM__READ, begins));
  return clprim__range(ctx, "end_offsets", end_offsets, bytes, segments, CLPRIM__READ, ends);
}

const char *clprim__offsets_option(clprim_type offset_type) {
  return offset_type == CLPRIM_UINT32 ? " -DCLPRIM_OFFSETS_32=1" : "";
}

clprim_status clprim__check_segments(clprim_context *ctx, cl_kernel check, cl_mem begins,
                                     cl_mem ends, size_t segments, size_t n) {
  cl_mem info;
  const cl_uint zero = 0;
  CLPRIM_CHECK(clprim__scratch(ctx, "core: segment check", 12, &info));
  CLPRIM_CHECK(clprim__fill(ctx, info, &zero, 4, 0, 12));
  const cl_ulong segs = segments, n64 = n;
  const cl_ulong none_long = ~(cl_ulong)0; /* no segment is listed as long */
  CLPRIM_CHECK(clprim__set_args(check, 8, sizeof begins, &begins, sizeof ends, &ends, sizeof segs,
                                &segs, sizeof n64, &n64, sizeof none_long, &none_long, sizeof info,
                                &info, sizeof info, &info, sizeof info, &info));
  CLPRIM_CHECK(clprim__enqueue(ctx, check, (segments + 63) / 64, 64));
  cl_uint bad;
  CLPRIM_CHECK(clprim__read(ctx, info, 0, 4, &bad));
  if (bad)
    return clprim__invalid(ctx,
                           "a segment of begin_offsets / end_offsets ends before it begins "
                           "or past n (%zu)",
                           n);
  return CLPRIM_SUCCESS;
}
