/* enqueue.c: kernel arguments, launches, fills, copies, reads and writes.
 * Every command of a call goes through here: the first waits for the
 * caller's events (clprim_context_wait_for), the last one's event is kept
 * (clprim_context_last_event), and on a profiling queue the first one's too
 * (clprim_context_last_time). */
#include "core.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void clprim__release_waits(clprim_context *ctx) {
  for (cl_uint k = 0; k < ctx->wait_count; ++k) clReleaseEvent(ctx->waits[k]);
  free(ctx->waits);
  ctx->waits = NULL;
  ctx->wait_count = 0;
}

static clprim_status wait_for_held(clprim_context *ctx, cl_uint count, const cl_event *events) {
  if (count && !events) return clprim__invalid(ctx, "events is NULL, count is %u", count);
  for (cl_uint k = 0; k < count; ++k)
    if (!events[k]) return clprim__invalid(ctx, "events[%u] is NULL", k);
  if (!count) return CLPRIM_SUCCESS;
  cl_event *waits = realloc(ctx->waits, (ctx->wait_count + count) * sizeof *waits);
  if (!waits) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  ctx->waits = waits;
  for (cl_uint k = 0; k < count; ++k) {
    clRetainEvent(events[k]);
    waits[ctx->wait_count++] = events[k];
  }
  return CLPRIM_SUCCESS;
}

static clprim_status last_event_held(clprim_context *ctx, cl_event *event) {
  if (!event) return clprim__invalid(ctx, "event is required");
  cl_event last = ctx->last_event ? ctx->last_event : ctx->first_event;
  *event = last;
  if (!last)
    return clprim__fail(ctx, CLPRIM_ERROR_UNSUPPORTED_OPERATION,
                        "the last call enqueued nothing (no event to give)");
  clRetainEvent(last);
  return CLPRIM_SUCCESS;
}

/* The wait list of the next command: the caller's events, once. */
#define WAITS(ctx) (ctx)->wait_count, (ctx)->wait_count ? (ctx)->waits : NULL

/* With $CLPRIM_TRACE set (and a profiling queue), prints each command's
 * device time to stderr as it finishes: a measured breakdown of a call. */
static void trace(const clprim_context *ctx, cl_event event, cl_kernel kernel, const char *what) {
  if (!ctx->trace || !event || clWaitForEvents(1, &event) != CL_SUCCESS) return;
  char name[64] = "";
  if (kernel) clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
  cl_ulong start = 0, end = 0;
  clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
  clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
  fprintf(stderr, "clprim trace: %-28s %9.4f ms\n", kernel ? name : what,
          end > start ? (double)(end - start) * 1e-6 : 0.0);
}

/* Takes ownership of an enqueued command's event: the first of a call is
 * kept on profiling queues, the last always; a successful command has
 * consumed the caller's wait list. */
static void keep_event(clprim_context *ctx, cl_int err, cl_event event, cl_kernel kernel,
                       const char *what) {
  if (err != CL_SUCCESS || !event) return;
  clprim__release_waits(ctx);
  trace(ctx, event, kernel, what);
  if (ctx->profiling && !ctx->first_event) {
    ctx->first_event = event;
    return;
  }
  if (ctx->last_event) clReleaseEvent(ctx->last_event);
  ctx->last_event = event;
}

static clprim_status last_time_held(clprim_context *ctx, double *ms) {
  if (!ms) return clprim__invalid(ctx, "ms is required");
  if (!ctx->profiling)
    return clprim__fail(ctx, CLPRIM_ERROR_UNSUPPORTED_OPERATION,
                        "the queue was not created with CL_QUEUE_PROFILING_ENABLE");
  if (!ctx->first_event)
    return clprim__fail(ctx, CLPRIM_ERROR_UNSUPPORTED_OPERATION, "the last call enqueued nothing");
  cl_event last = ctx->last_event ? ctx->last_event : ctx->first_event;
  cl_int err = clWaitForEvents(1, &last);
  cl_ulong start = 0, end = 0;
  if (err == CL_SUCCESS)
    err = clGetEventProfilingInfo(ctx->first_event, CL_PROFILING_COMMAND_START, sizeof start,
                                  &start, NULL);
  if (err == CL_SUCCESS)
    err = clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
  if (err != CL_SUCCESS) return clprim__cl_fail(ctx, err, "clGetEventProfilingInfo");
  *ms = end > start ? (double)(end - start) * 1e-6 : 0.0;
  return CLPRIM_SUCCESS;
}

clprim_status clprim__set_args(cl_kernel kernel, unsigned count, ...) {
  va_list ap;
  va_start(ap, count);
  cl_int err = CL_SUCCESS;
  for (unsigned i = 0; i < count && err == CL_SUCCESS; ++i) {
    size_t size = va_arg(ap, size_t);
    const void *value = va_arg(ap, const void *);
    err = clSetKernelArg(kernel, i, size, value);
  }
  va_end(ap);
  return (clprim_status)err;
}

clprim_status clprim__set_extra_args(cl_kernel kernel, const struct clprim_extra_args *extra) {
  cl_int err = CL_SUCCESS;
  for (unsigned k = 0; extra && k < extra->count && err == CL_SUCCESS; ++k)
    err = clSetKernelArg(kernel, extra->first + k, extra->size[k], extra->value[k]);
  return (clprim_status)err;
}

clprim_status clprim__enqueue(clprim_context *ctx, cl_kernel kernel, size_t groups,
                              size_t group_size) {
  size_t global = groups * group_size;
  cl_event event = NULL;
  cl_int err = clEnqueueNDRangeKernel(ctx->queue, kernel, 1, NULL, &global, &group_size,
                                      WAITS(ctx), &event);
  keep_event(ctx, err, event, kernel, NULL);
  return err == CL_SUCCESS ? CLPRIM_SUCCESS : clprim__cl_fail(ctx, err, "clEnqueueNDRangeKernel");
}

clprim_status clprim__enqueue_native(clprim_context *ctx, void(CL_CALLBACK *fn)(void *),
                                     const void *args, size_t args_size, cl_mem mem,
                                     const void *mem_at) {
  cl_event event = NULL;
  cl_int err = clEnqueueNativeKernel(ctx->queue, fn, (void *)args, args_size, 1, &mem, &mem_at,
                                     WAITS(ctx), &event);
  keep_event(ctx, err, event, NULL, "(native scan)");
  return err == CL_SUCCESS ? CLPRIM_SUCCESS : clprim__cl_fail(ctx, err, "clEnqueueNativeKernel");
}

clprim_status clprim__fill(clprim_context *ctx, cl_mem buf, const void *pattern,
                           size_t pattern_size, size_t offset, size_t bytes) {
  if (ctx->oclgrind && pattern_size && bytes % pattern_size == 0) {
    /* Oclgrind takes a filled buffer's bytes for uninitialised in later
     * atomics (histogram and sort counters); written bytes it does not. */
    unsigned char *host = malloc(bytes ? bytes : 1);
    if (!host) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    for (size_t at = 0; at < bytes; at += pattern_size) memcpy(host + at, pattern, pattern_size);
    const clprim_status st = clprim__write(ctx, buf, offset, bytes, host, 1);
    free(host);
    return st;
  }
  cl_event event = NULL;
  cl_int err = clEnqueueFillBuffer(ctx->queue, buf, pattern, pattern_size, offset, bytes,
                                   WAITS(ctx), &event);
  keep_event(ctx, err, event, NULL, "(fill)");
  return err == CL_SUCCESS ? CLPRIM_SUCCESS : clprim__cl_fail(ctx, err, "clEnqueueFillBuffer");
}

clprim_status clprim__copy(clprim_context *ctx, cl_mem src, cl_mem dst, size_t src_offset,
                           size_t dst_offset, size_t bytes) {
  cl_event event = NULL;
  cl_int err = clEnqueueCopyBuffer(ctx->queue, src, dst, src_offset, dst_offset, bytes,
                                   WAITS(ctx), &event);
  keep_event(ctx, err, event, NULL, "(copy)");
  return err == CL_SUCCESS ? CLPRIM_SUCCESS : clprim__cl_fail(ctx, err, "clEnqueueCopyBuffer");
}

clprim_status clprim__read(clprim_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                           void *host) {
  cl_event event = NULL;
  cl_int err = clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, offset, bytes, host, WAITS(ctx),
                                   &event);
  keep_event(ctx, err, event, NULL, "(read)");
  return err == CL_SUCCESS ? CLPRIM_SUCCESS : clprim__cl_fail(ctx, err, "clEnqueueReadBuffer");
}

clprim_status clprim__deliver_count(clprim_context *ctx, cl_mem buf, size_t at, cl_mem count_out,
                                    uint64_t *count) {
  if (count_out) CLPRIM_CHECK(clprim__copy(ctx, buf, count_out, at, 0, 8));
  if (count) {
    cl_ulong c;
    CLPRIM_CHECK(clprim__read(ctx, buf, at, 8, &c));
    *count = c;
  }
  return CLPRIM_SUCCESS;
}

/* Oclgrind 21.10 sizes its record of which bytes of a buffer are
 * initialised by the last host write to it (offset and size ignored), and
 * keeps that record when the buffer is released, for the next buffer that
 * gets its handle: past that size, loads read as uninitialised and kernel
 * stores are not recorded. So on Oclgrind every host write covers the
 * whole buffer (a write of part of it: read, changed, written back). */
static clprim_status write_whole(clprim_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                                 const void *host, int blocking) {
  size_t size = 0;
  cl_int err = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
  if (err != CL_SUCCESS) return (clprim_status)err;
  if (offset == 0 && bytes == size) {
    cl_event event = NULL;
    err = clEnqueueWriteBuffer(ctx->queue, buf, blocking ? CL_TRUE : CL_FALSE, 0, size, host,
                               WAITS(ctx), &event);
    keep_event(ctx, err, event, NULL, "(write)");
    return (clprim_status)err;
  }
  unsigned char *whole = malloc(size ? size : 1);
  if (!whole) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  err = clEnqueueReadBuffer(ctx->queue, buf, CL_TRUE, 0, size, whole, WAITS(ctx), NULL);
  if (err == CL_SUCCESS) {
    if (bytes) memcpy(whole + offset, host, bytes);
    cl_event event = NULL;
    err = clEnqueueWriteBuffer(ctx->queue, buf, CL_TRUE, 0, size, whole, 0, NULL, &event);
    keep_event(ctx, err, event, NULL, "(write)");
  }
  free(whole);
  return (clprim_status)err;
}

clprim_status clprim__write(clprim_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                            const void *host, int blocking) {
  if (ctx->oclgrind) return write_whole(ctx, buf, offset, bytes, host, blocking);
  cl_event event = NULL;
  cl_int err = clEnqueueWriteBuffer(ctx->queue, buf, blocking ? CL_TRUE : CL_FALSE, offset, bytes,
                                    host, WAITS(ctx), &event);
  keep_event(ctx, err, event, NULL, "(write)");
  return (clprim_status)err;
}

clprim_status clprim_context_wait_for(clprim_context *ctx, cl_uint count, const cl_event *events) {
  CLPRIM_CHECK(clprim__hold(ctx, "context_wait_for"));
  clprim_status st = wait_for_held(ctx, count, events);
  return clprim__unhold(ctx, st);
}

clprim_status clprim_context_last_event(clprim_context *ctx, cl_event *event) {
  CLPRIM_CHECK(clprim__hold(ctx, "context_last_event"));
  clprim_status st = last_event_held(ctx, event);
  return clprim__unhold(ctx, st);
}

clprim_status clprim_context_last_time(clprim_context *ctx, double *ms) {
  CLPRIM_CHECK(clprim__hold(ctx, "context_last_time"));
  clprim_status st = last_time_held(ctx, ms);
  return clprim__unhold(ctx, st);
}
