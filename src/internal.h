/*
 * internal.h: what clprim's primitive families share. Not installed.
 *
 * A public call goes: argument checks (clprim__check_*) -> clprim__call_begin
 * -> cached kernel (clprim__kernel) -> arguments (clprim__set_args) ->
 * enqueue (clprim__enqueue). Nothing else sits in between.
 */
#ifndef CLPRIM_INTERNAL_H
#define CLPRIM_INTERNAL_H

#include "clprim/clprim.h"

#include <stdio.h>

/* Device buffers that a family keeps between calls, grown on demand. Each
 * family owns its slots, so a family can call another (select calls scan)
 * without the callee overwriting the caller's temporaries. */
enum clprim_scratch_slot {
  CLPRIM_SCRATCH_SCAN_LEVEL0 = 0, /* scan: tile sums, one slot per recursion level */
  CLPRIM_SCRATCH_SCAN_LEVELS = 6,
  CLPRIM_SCRATCH_SCAN_LOOKBACK = 6, /* scan: single-pass tile status + counter */
  CLPRIM_SCRATCH_SELECT0 = 8,       /* select / partition: slots 8..11 */
  CLPRIM_SCRATCH_REDUCE0 = 12,      /* reductions: slots 12..15 */
  CLPRIM_SCRATCH_NTH0 = 16,         /* selection: slots 16..23 */
  /* histograms and reduce-by-key (histogram.c, reduce_by_key.c): 24..27 */
  CLPRIM_SCRATCH_HIST0 = 24,
  CLPRIM_SCRATCH_HIST_PART0 = 28, /* histogram.c's binned path: 28..30 */
  CLPRIM_SCRATCH_SLOTS = 31
};

struct clprim_kernel_entry {
  char name[64];
  cl_kernel kernel;
};

/* One built program: its cache key (file name + build options) and kernels. */
struct clprim_program_entry {
  char *key;
  cl_program program;
  struct clprim_kernel_entry kernels[16];
  unsigned kernel_count;
  struct clprim_program_entry *next;
};

struct clprim_context {
  cl_platform_id platform;
  cl_device_id device;
  cl_context cl_ctx;
  cl_command_queue queue;
  int profiling; /* queue has CL_QUEUE_PROFILING_ENABLE */

  clprim_device_info info; /* probed facts, info.path = chosen path */
  /* Build options that select each path in clprim_device.h (a -cl-std=...
   * is added where the probe found it needed). */
  char path_options[CLPRIM_PATH_COUNT][160];

  char *cache_dir; /* NULL: no disk cache */
  char *build_log;
  struct clprim_program_entry *programs;

  cl_mem scratch[CLPRIM_SCRATCH_SLOTS];
  size_t scratch_size[CLPRIM_SCRATCH_SLOTS];
  cl_mem retired[64]; /* outgrown scratch buffers, released with the context */
  unsigned retired_count;

  /* Profiling events of the last public call (when profiling). */
  cl_event first_event, last_event;
  int trace; /* $CLPRIM_TRACE: print each command's device time (enqueue.c) */

  /* Scan tuning overrides, 0 (or -1) for the built-in choice: from
   * $CLPRIM_SCAN_WG, $CLPRIM_SCAN_ITEMS and $CLPRIM_SCAN_SINGLE_PASS (for
   * experiments), and set by tests to reach multi-level recursion at small n. */
  unsigned tune_scan_wg, tune_scan_items;
  int tune_scan_single_pass;
  /* Select's single pass (nv_ptx): $CLPRIM_SELECT_ITEMS (a multiple of 4, at
   * most 32) and $CLPRIM_SELECT_SINGLE_PASS=0 for the three-phase algorithm. */
  unsigned tune_select_items;
  int tune_select_single_pass;
  /* histogram.c: whether the nv_ptx fast kernels (match.any, red.f64) built:
   * 0 not tried, 1 yes, -1 no (the portable kernels are used). */
  int hist_nv_fast;
};

/* ---- context.c */
/* The OpenCL C type name of a clprim_type ("int", "uint", ..., "double"). */
const char *clprim__cl_type(clprim_type type);
/* CLPRIM_SUCCESS for a valid type the device supports, else
 * CLPRIM_ERROR_INVALID_ARGUMENT (bad value) or CLPRIM_ERROR_UNSUPPORTED_TYPE. */
clprim_status clprim__check_type(const clprim_context *ctx, clprim_type type);
/* Checks a caller's buffer: non-NULL, of ctx's cl_context, holding at least
 * `bytes` bytes. CLPRIM_ERROR_INVALID_ARGUMENT, CL_INVALID_CONTEXT,
 * CLPRIM_ERROR_BUFFER_TOO_SMALL or CLPRIM_SUCCESS. */
clprim_status clprim__check_buffer(const clprim_context *ctx, cl_mem buf, size_t bytes);
/* n elements of elem_size bytes, with overflow checked; SIZE_MAX on overflow. */
size_t clprim__bytes(size_t n, size_t elem_size);

/* ---- probe.c */
/* Fills ctx->info's device facts and ctx->info.paths_available, and
 * ctx->path_options. */
clprim_status clprim__probe(clprim_context *ctx);

/* ---- program.c */
/* The embedded text of a file from cl/ or include/clprim/ ("scan.cl"). */
const char *clprim__source(const char *file_name);
/* The kernel `kernel_name` of cl/<file> built for the context's path with the
 * family's extra build options; built (or loaded from the disk cache) on first
 * use, then kept. On a build failure the log is kept in ctx->build_log. */
clprim_status clprim__kernel(clprim_context *ctx, const char *file, const char *options,
                             const char *kernel_name, cl_kernel *kernel);
/* The same for a path other than the context's own (tests, probing). */
clprim_status clprim__kernel_for_path(clprim_context *ctx, clprim_path path, const char *file,
                                      const char *options, const char *kernel_name,
                                      cl_kernel *kernel);
/* The same with source text (e.g. #defines) put before the file's text;
 * the prefix is part of the program cache key. */
clprim_status clprim__kernel_with_prefix(clprim_context *ctx, const char *file, const char *prefix,
                                         const char *options, const char *kernel_name,
                                         cl_kernel *kernel);
/* Builds source text (device header + source) with options, using the disk
 * cache when set. Used by clprim__kernel and by probing. */
clprim_status clprim__build(clprim_context *ctx, const char *source, const char *options,
                            cl_program *program);
void clprim__release_programs(clprim_context *ctx);
/* Disk cache of small text records (probe results): key -> text. */
int clprim__cache_get_text(const clprim_context *ctx, const char *key, char *text, size_t size);
void clprim__cache_put_text(const clprim_context *ctx, const char *key, const char *text);

/* ---- enqueue.c */
/* Starts a public call: forgets the last call's profiling events. */
void clprim__call_begin(clprim_context *ctx);
/* Sets kernel arguments: clprim__set_args(k, 3, sizeof(a), &a, sizeof(b), &b,
 * sizeof(c), &c). A NULL pointer with a nonzero size gives a __local buffer. */
clprim_status clprim__set_args(cl_kernel kernel, unsigned count, ...);
/* 1-D launch of `groups` work-groups of `group_size` work-items. */
clprim_status clprim__enqueue(clprim_context *ctx, cl_kernel kernel, size_t groups,
                              size_t group_size);
clprim_status clprim__fill(clprim_context *ctx, cl_mem buf, const void *pattern,
                           size_t pattern_size, size_t offset, size_t bytes);
clprim_status clprim__copy(clprim_context *ctx, cl_mem src, cl_mem dst, size_t src_offset,
                           size_t dst_offset, size_t bytes);
/* Blocking read of device memory into host memory. */
clprim_status clprim__read(clprim_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                           void *host);
/* A device buffer of at least `bytes` bytes in the given slot (see above). */
clprim_status clprim__scratch(clprim_context *ctx, unsigned slot, size_t bytes, cl_mem *buf);

/* ---- scan.c */
/* Prefix sum without argument checks or clprim__call_begin, for other
 * families: in and out hold n elements of type (in == out allowed). */
clprim_status clprim__scan(clprim_context *ctx, clprim_type type, cl_mem in, cl_mem out, size_t n,
                           int inclusive);
/* Elements per scan tile for type on this context (tests use it for sizes
 * around tile boundaries). */
size_t clprim__scan_tile(const clprim_context *ctx, clprim_type type);

/* ---- reduce.c */
/* Elements per work-group tile of the reductions for type on this context
 * (tests use it for sizes around tile boundaries). */
size_t clprim__reduce_tile(const clprim_context *ctx, clprim_type type);
/* ---- histogram.c */
/* The most bins that hist_local keeps in local memory, for counts (has_counts)
 * and / or sums of sum_size bytes (0: none); tests use it. */
size_t clprim__histogram_local_max(const clprim_context *ctx, int has_counts, size_t sum_size);
/* ---- select.c */
/* Elements per select tile on this context (tests: sizes around tiles). */
size_t clprim__select_tile(const clprim_context *ctx);
/* Elements per tile of select's single-pass kernel, 0 where it does not run. */
size_t clprim__select_single_pass_tile(const clprim_context *ctx, clprim_type type);

#define CLPRIM_CHECK(expr)                                                                         \
  do {                                                                                             \
    clprim_status clprim_check_status_ = (clprim_status)(expr);                                    \
    if (clprim_check_status_ != CLPRIM_SUCCESS) return clprim_check_status_;                       \
  } while (0)

#endif /* CLPRIM_INTERNAL_H */
