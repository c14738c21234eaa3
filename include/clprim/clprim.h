/*
 * clprim: portable OpenCL data-parallel primitives (scan, compaction,
 * selection, reductions) for every OpenCL device.
 *
 * Sections: version; status codes; element types and paths; context;
 * probed device facts; embedding the device-side header in your own kernels;
 * scan; reductions (argmax / argmin, min, max, sum) (the other primitive
 * families follow, one section each).
 *
 * Every primitive call has the same shape:
 *   clprim_<call>(ctx, n, type(s) and inputs, parameters, flags,
 *                 array outputs, host results, device result)
 * - n, the number of elements, always comes second; the batched calls take
 *   rows and row_length there (n is their product), and the searches the
 *   haystack's length (the needles' count comes with the needles).
 * - Buffers are clprim_buffer ranges: a cl_mem and an element offset
 *   (clprim_buf(mem), clprim_buf_at(mem, offset)); an output not wanted is
 *   clprim_buf(NULL).
 * - A scalar result (a count, a sum, a selected element) has a host pointer
 *   (given: the call waits and stores it) and a device buffer (given: the
 *   result is written there and the call only enqueues); give either or
 *   both.
 * - n = 0: a call with a defined empty result succeeds and writes nothing
 *   but that result (a count of 0, a sum of 0, zero histogram counts); a
 *   call with no answer (argmax or median of nothing) is an error.
 * Work is enqueued on the context's in-order queue. A call that fails
 * writes nothing to the caller's outputs (device ranges and host results):
 * everything that can fail (arguments, builds, scratch, kernel arguments)
 * comes before the one command that writes the outputs, and host results
 * are assigned last. Three exceptions, each reached only when OpenCL fails
 * after that command was enqueued, never by a bad argument or a failed
 * build:
 * - host results are read after the device outputs' command: if that read
 *   fails, the device outputs hold the result (the host results are left);
 * - the calls whose doc block says "writes in steps" write their outputs
 *   with more than one command: when a later step fails, what the earlier
 *   ones wrote stays;
 * - outputs at offsets that a sub-buffer cannot start at go through
 *   temporary copies, copied back one after another when the call succeeds:
 *   a copy back that fails leaves those before it written.
 * A failed call always returns the error; the context stays usable.
 *
 * A context serves one call at a time: a call made while another thread is
 * in a call on the same context returns CLPRIM_ERROR_CONTEXT_BUSY and does
 * nothing. Separate contexts are independent (there is no global state).
 */
#ifndef CLPRIM_H
#define CLPRIM_H

#include <stddef.h>
#include <stdint.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#if defined(CLPRIM_STATIC_DEFINE)
#define CLPRIM_API
#elif defined(_WIN32)
#ifdef CLPRIM_BUILDING
#define CLPRIM_API __declspec(dllexport)
#else
#define CLPRIM_API __declspec(dllimport)
#endif
#else
#define CLPRIM_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- version */

#define CLPRIM_VERSION_MAJOR 0
#define CLPRIM_VERSION_MINOR 3
#define CLPRIM_VERSION_PATCH 0
#define CLPRIM_VERSION_NUMBER                                                                      \
  (CLPRIM_VERSION_MAJOR * 10000 + CLPRIM_VERSION_MINOR * 100 + CLPRIM_VERSION_PATCH)

/* Version notes.
 * 0.3: every flag macro has a bit of its own, so that a flag of another
 *   family is refused (CLPRIM_ERROR_INVALID_ARGUMENT) instead of read as
 *   this call's flag of the same bit. CLPRIM_NTH_REJECT_NAN (was 1u),
 *   CLPRIM_TOPK_SMALLEST (was 2u), CLPRIM_SORT_DESCENDING (was 1u) and
 *   CLPRIM_PIPE_VALUES_WANTED / _INDICES_WANTED (were 1u, 2u) changed value:
 *   programs built against 0.2 headers must be rebuilt, and numbers written
 *   in place of the macros must become the macros. Also changed: a create
 *   call that fails leaves *ctx / *pipe as it was (0.2 set NULL);
 *   clprim_quantile_rank rounds a tie to the lower rank (0.2: up), so p50
 *   is the median; clprim_pipeline_read is not a primitive call (last_time
 *   and last_event stay the run's). New: clprim_context_last_error(),
 *   clprim_options.wait_when_busy and .build_threads,
 *   clprim_context_prebuild_progress(),
 *   clprim_sort_tile(), clprim_pipeline_read_result() and _read_count(),
 *   clprim_merge_keys() and clprim_merge_pairs(), clprim_merge_runs_keys()
 *   and clprim_merge_runs_pairs(), CLPRIM_EXACT (also on
 *   clprim_reduce_by_key_dense); user types and operators
 *   (clprim_operator_create(), clprim_reduce_op(), clprim_scan_inclusive_op()
 *   and _exclusive_op(), clprim_scan_inclusive_by_key_op() and
 *   _exclusive_by_key_op(), clprim_segmented_reduce_op(),
 *   clprim_reduce_by_key_op(), clprim_adjacent_difference_op()) and the
 *   status CLPRIM_ERROR_OPERATOR_LAYOUT; clprim_gather() and
 *   clprim_scatter() (elements of 1 to 64 bytes, uint32 or uint64 indices,
 *   CLPRIM_CHECK_INDICES).
 *   clprim_reduce_sum takes flags after `in`, as clprim_reduce_max, and
 *   clprim_mpi_reduce_sum takes them after `in` too; clprim_segmented_sum
 *   takes flags before `out`, as clprim_segmented_max;
 *   clprim_scan_exclusive and clprim_scan_inclusive take flags after `in`
 *   (0, or CLPRIM_EXACT for exact float and double scans);
 *   clprim_reduce_by_key takes flags after `values` (0 or CLPRIM_EXACT).
 *   clprim_sort_pairs and clprim_segmented_sort_pairs take a value type,
 *   as the by-key calls do (0.2: a size in bytes, 4 or 8).
 *   Every create call takes its handle first, as clprim_context_create:
 *   clprim_pipeline_create(&pipe, ctx, inputs, types) and
 *   clprim_mpi_context_create(&ctx, comm, options) (0.2: last).
 *   Every call that takes begin_offsets / end_offsets (segmented sum, max,
 *   min, argmax, argmin, top-k, nth_element, sort_keys, sort_pairs) takes
 *   an offset_type just before them: CLPRIM_UINT32 (as the run-length and
 *   non-trivial-runs lengths and offsets come by default) or CLPRIM_UINT64
 *   (0.2: uint64 only).
 * 0.2: n second, buffer ranges with offsets, one output convention (the
 *   API differs from 0.1). */

/*! clprim_version_number() :
 * @return : the run-time library's version, as CLPRIM_VERSION_NUMBER. */
CLPRIM_API unsigned clprim_version_number(void);

/*! clprim_version_string() :
 * @return : the run-time library's version as "MAJOR.MINOR.PATCH". */
CLPRIM_API const char *clprim_version_string(void);

/* ----------------------------------------------------------- status codes */

/* OpenCL's own error codes (CL_OUT_OF_RESOURCES, CL_BUILD_PROGRAM_FAILURE,
 * ...) pass through unchanged: they are negative numbers above -2000.
 * clprim's own codes sit in a separate range, from -4000 down. */
typedef enum clprim_status {
  CLPRIM_SUCCESS = 0,
  CLPRIM_ERROR_INVALID_ARGUMENT = -4001,  /* NULL handle, bad enum, bad option */
  CLPRIM_ERROR_BUFFER_TOO_SMALL = -4002,  /* n elements do not fit in a buffer */
  CLPRIM_ERROR_UNSUPPORTED_TYPE = -4003,  /* e.g. double without cl_khr_fp64 */
  CLPRIM_ERROR_PATH_UNAVAILABLE = -4004,  /* a forced path the device cannot run */
  CLPRIM_ERROR_DEVICE_NOT_FOUND = -4005,  /* no OpenCL device, or none matches */
  CLPRIM_ERROR_UNSUPPORTED_DEVICE = -4006, /* e.g. an out-of-order queue */
  CLPRIM_ERROR_OUT_OF_HOST_MEMORY = -4007,
  CLPRIM_ERROR_SIZE_TOO_LARGE = -4008, /* n beyond what the device can address */
  CLPRIM_ERROR_UNSUPPORTED_OPERATION = -4009, /* e.g. needs 64-bit atomics */
  CLPRIM_ERROR_CONTEXT_BUSY = -4010, /* another thread is in a call on this context */
  CLPRIM_ERROR_OPERATOR_LAYOUT = -4011 /* a user type's size or alignment differs on the device */
} clprim_status;

/*! clprim_status_name() :
 * @return : a constant, readable name for any status: clprim's own codes,
 *           OpenCL's codes ("CL_OUT_OF_RESOURCES"), or "unknown status". */
CLPRIM_API const char *clprim_status_name(int status);

/*! clprim_is_error() :
 * @return : 1 if status is an error (anything but CLPRIM_SUCCESS), else 0. */
CLPRIM_API int clprim_is_error(int status);

/* ---------------------------------------------------- types and paths */

typedef enum clprim_type {
  CLPRIM_INT32 = 0,
  CLPRIM_UINT32 = 1,
  CLPRIM_INT64 = 2,
  CLPRIM_UINT64 = 3,
  CLPRIM_FLOAT = 4, /* float32 */
  CLPRIM_DOUBLE = 5 /* float64: needs cl_khr_fp64 */
} clprim_type;
#define CLPRIM_TYPE_COUNT 6

/* One element or parameter of any clprim_type: set or read the member of
 * the call's type (i32 for CLPRIM_INT32, u32, i64, u64, f32 for
 * CLPRIM_FLOAT, f64). Values clprim returns have a 32-bit element in the
 * first 4 bytes and zeros in the rest. */
typedef union clprim_value {
  int32_t i32;
  uint32_t u32;
  int64_t i64;
  uint64_t u64;
  float f32;
  double f64;
  unsigned char bytes[8];
} clprim_value;

/*! clprim_type_size() :
 * @return : the size in bytes of one element of type, or 0 for a bad type. */
CLPRIM_API size_t clprim_type_size(clprim_type type);

/*! clprim_type_name() :
 * @return : "int32", "uint32", "int64", "uint64", "float" or "double";
 *           "invalid" for a bad type. */
CLPRIM_API const char *clprim_type_name(clprim_type type);

/* How kernels do subgroup (warp) work. The library probes the device and
 * picks the fastest path that it confirmed by running a test kernel; on a
 * CPU device (CL_DEVICE_TYPE_CPU) it picks CLPRIM_PATH_CPU. */
typedef enum clprim_path {
  CLPRIM_PATH_AUTO = 0,          /* let the library choose */
  CLPRIM_PATH_LOCAL = 1,         /* OpenCL 1.2 local memory and barriers only */
  CLPRIM_PATH_KHR_SUBGROUPS = 2, /* cl_khr_subgroups scans and reductions */
  CLPRIM_PATH_KHR_BALLOT = 3,    /* plus cl_khr_subgroup_ballot */
  CLPRIM_PATH_NV_PTX = 4,        /* inline PTX vote/shfl on NVIDIA */
  /* Kernels shaped for CPUs: a work-item per contiguous chunk, plain loops,
   * per-chunk partials instead of local-memory trees and atomics. Kernels
   * without such a shape are the local path's (the README lists which
   * families have them). Every device runs it; only CPUs get it by
   * default. */
  CLPRIM_PATH_CPU = 5
} clprim_path;
#define CLPRIM_PATH_COUNT 6

/*! clprim_path_name() :
 * @return : "auto", "local", "khr_subgroups", "khr_ballot", "nv_ptx" or "cpu";
 *           "invalid" for a bad value. */
CLPRIM_API const char *clprim_path_name(clprim_path path);

/*! clprim_path_from_name() :
 * Parses a path name as clprim_path_name() writes it (case-insensitive).
 * @return : CLPRIM_SUCCESS and *path set, or CLPRIM_ERROR_INVALID_ARGUMENT. */
CLPRIM_API clprim_status clprim_path_from_name(const char *name, clprim_path *path);

/* ---------------------------------------------------------------- buffers */

/* A range of a device buffer: the elements from `offset` on (offset counts
 * elements of the argument's type, not bytes). mem may be a sub-buffer.
 * An offset whose byte position (plus a sub-buffer's own origin) is a
 * multiple of the device's CL_DEVICE_MEM_BASE_ADDR_ALIGN costs nothing (the
 * call works on a sub-buffer); any other offset works too, through a copy
 * of the range into a temporary buffer (and back, for an output, once the
 * call succeeded). */
typedef struct clprim_buffer {
  cl_mem mem;
  size_t offset;
} clprim_buffer;

/*! clprim_buf(), clprim_buf_at() :
 * @return : the range of mem from element 0 (clprim_buf(NULL): no buffer,
 *           for an output not wanted), or from element offset. */
static inline clprim_buffer clprim_buf(cl_mem mem) {
  clprim_buffer b;
  b.mem = mem;
  b.offset = 0;
  return b;
}
static inline clprim_buffer clprim_buf_at(cl_mem mem, size_t offset) {
  clprim_buffer b;
  b.mem = mem;
  b.offset = offset;
  return b;
}

/* ---------------------------------------------------------------- context */

typedef struct clprim_context clprim_context;

/* Options for creating a context. Initialise with clprim_options_init(),
 * then change what you need. Each field left at its default falls back to an
 * environment variable, then to the built-in default. `size` (set by
 * clprim_options_init to the size your program was compiled with) lets a
 * later library with more fields read yours: fields are only ever added at
 * the end. */
typedef struct clprim_options {
  size_t size;
  /* Which device (clprim_context_create only). NULL: $CLPRIM_DEVICE, else the
   * first GPU, else the first device. "gpu", "cpu" or "accelerator" (any
   * case): the first device of that type. Otherwise a case-insensitive
   * substring of the platform name, vendor or version, or of the device
   * name; or "P:D", the platform and device indices that clprim-info
   * lists. */
  const char *device;
  /* CLPRIM_PATH_AUTO: $CLPRIM_PATH if set, else the best probed path (on a
   * CPU device, CLPRIM_PATH_CPU). Any
   * other value forces that path; a path the device cannot run makes context
   * creation fail with CLPRIM_ERROR_PATH_UNAVAILABLE. */
  clprim_path path;
  /* Folder for the disk cache of built kernels and probe results. NULL:
   * $CLPRIM_CACHE_DIR if set, else $XDG_CACHE_HOME/clprim, else
   * ~/.cache/clprim (the cache is on by default). "" or "off": no disk
   * cache. A folder that cannot be created or written is reported once on
   * stderr, and the context works without the cache. On PoCL, which keeps
   * its own kernel cache, built binaries are stored only by
   * clprim_context_prebuild() (unless POCL_KERNEL_CACHE=0). */
  const char *cache_dir;
  /* 0: a call made while another thread is in a call on the context returns
   * CLPRIM_ERROR_CONTEXT_BUSY at once. 1: it waits for the context, and
   * waiting calls get it in the order they arrived (one context shared by
   * threads, each call whole; the calls still run one at a time). */
  int wait_when_busy;
  /* Programs built at once, each on a host thread of its own (by
   * clprim_context_prebuild() and by a call that needs several): 0, the
   * default, is one per online CPU of the host, at most 8, on GPUs and
   * accelerators, and one on CPU devices (PoCL 3.1 builds one program at a
   * time in a process: threads only added 10%); n is at most n
   * (1: one at a time; values above 64 count as 64). On Oclgrind, which
   * crashed with programs built concurrently, always one. */
  unsigned build_threads;
} clprim_options;

/*! clprim_options_init() :
 * Sets size to sizeof(clprim_options) as this header defines it, and every
 * other field to its default (NULL, CLPRIM_PATH_AUTO, NULL, 0, 0). Inline, so
 * that the size is your program's. Options whose size is 0 (not
 * initialised) make context creation fail with
 * CLPRIM_ERROR_INVALID_ARGUMENT.
 * @return : nothing; options must not be NULL. */
static inline void clprim_options_init(clprim_options *options) {
  options->size = sizeof(clprim_options);
  options->device = NULL;
  options->path = CLPRIM_PATH_AUTO;
  options->cache_dir = NULL;
  options->wait_when_busy = 0;
  options->build_threads = 0;
}

/*! clprim_context_create() :
 * Creates a context on a device chosen as options->device says (NULL options:
 * all defaults), with its own OpenCL context and in-order queue, and probes
 * the device.
 * @return : CLPRIM_SUCCESS and *ctx set; or an error and *ctx as it was
 *           (clprim_context_last_error(NULL) says why):
 *           CLPRIM_ERROR_DEVICE_NOT_FOUND when no device exists or none
 *           matches (the devices are listed on stderr; see also
 *           clprim_list_devices), CLPRIM_ERROR_PATH_UNAVAILABLE, or an
 *           OpenCL code. */
CLPRIM_API clprim_status clprim_context_create(clprim_context **ctx,
                                               const clprim_options *options);

/*! clprim_context_create_from_queue() :
 * Creates a context on the caller's queue (and its context and device). The
 * library retains the queue and releases it in clprim_context_free(); the
 * caller keeps its own reference. The queue must be in-order; a queue with
 * CL_QUEUE_PROFILING_ENABLE lets clprim_context_last_time() report times.
 * options->device is ignored.
 * @return : CLPRIM_SUCCESS and *ctx set; or an error and *ctx as it was,
 *           with its text in clprim_context_last_error(NULL)
 *           (CLPRIM_ERROR_INVALID_ARGUMENT for a NULL queue,
 *           CLPRIM_ERROR_UNSUPPORTED_DEVICE for an out-of-order queue). */
CLPRIM_API clprim_status clprim_context_create_from_queue(clprim_context **ctx,
                                                          cl_command_queue queue,
                                                          const clprim_options *options);

/*! clprim_context_free() :
 * Waits for the context's queue to finish, then releases everything the
 * context holds. NULL is allowed.
 * @return : nothing. */
CLPRIM_API void clprim_context_free(clprim_context *ctx);

/*! clprim_context_queue(), clprim_context_cl_context(), clprim_context_device() :
 * The OpenCL objects the context works with; still owned by the context.
 * @return : the object, or NULL for a NULL ctx. */
CLPRIM_API cl_command_queue clprim_context_queue(const clprim_context *ctx);
CLPRIM_API cl_context clprim_context_cl_context(const clprim_context *ctx);
CLPRIM_API cl_device_id clprim_context_device(const clprim_context *ctx);

/*! clprim_context_build_log() :
 * @return : the log of the last kernel build that failed in this context
 *           (compiler messages; for a user's expression, see "pipeline"),
 *           or "" if none failed or a build succeeded since. Owned by the
 *           context; valid until the next build or clprim_context_free(). */
CLPRIM_API const char *clprim_context_build_log(const clprim_context *ctx);

/*! clprim_context_last_error() :
 * Why the last call on this context failed, in words that name the call,
 * the argument and the rule: "topk: k (5000) is larger than n (100)",
 * "sort_keys: keys_in holds 100 elements from offset 0, the call needs 200",
 * "scan_inclusive: in is required (a NULL buffer)", "sort_keys: flag 0x40
 * (CLPRIM_NTH_REJECT_NAN) is not one this call takes"; for a failed build
 * "...: the kernel build of sort.cl failed with -11
 * (CL_BUILD_PROGRAM_FAILURE), see clprim_context_build_log()", for an
 * OpenCL failure "...: clEnqueueNDRangeKernel returned -5
 * (CL_OUT_OF_RESOURCES)". Every call that takes the context (the primitive
 * calls, the pipeline calls, clprim_context_prebuild, clear_cache,
 * wait_for, last_event, last_time) empties it when it starts, so it always
 * describes the last such call: "" after one that succeeded. A call refused
 * with CLPRIM_ERROR_CONTEXT_BUSY leaves it alone (it is the text of the call
 * that holds the context); read it on the thread that made the call, before
 * that thread's next call on ctx. With CLPRIM_TRACE set, each text is also
 * printed to stderr when the failure happens. Context creation has no
 * context to keep a text in: with a NULL ctx this returns why the calling
 * thread's last clprim_context_create() or
 * clprim_context_create_from_queue() failed ("context_create: device
 * \"foo\" matches no OpenCL device (the devices: 0:0 ...)",
 * "context_create: options->path (9) is not a clprim_path"), or "" when it
 * succeeded or none was made. Other calls with a NULL ctx leave no text.
 * A text is at most 255 bytes: a longer one (a long list of devices, a
 * remote rank's text after clprim_mpi's own) is cut there.
 * @return : a NUL-terminated text, never NULL: the context's (valid until
 *           its next call or clprim_context_free()), "" when the last call
 *           succeeded; for a NULL ctx this thread's creation text (valid
 *           until its next creation). */
CLPRIM_API const char *clprim_context_last_error(const clprim_context *ctx);

/*! clprim_context_programs_made() :
 * The number of OpenCL programs this context has made since it was created:
 * compiled, or loaded from the disk cache (clprim_context_clear_cache()
 * makes later calls count again). A call whose programs are already made
 * adds nothing, so a test can check that new parameters rebuilt nothing.
 * @return : the count, 0 for a NULL ctx. */
CLPRIM_API uint64_t clprim_context_programs_made(const clprim_context *ctx);

/*! clprim_context_last_time() :
 * Device time of the last primitive call, from the start of its first
 * enqueued command to the end of its last, read from OpenCL profiling events
 * (waits for that call to finish). Needs a queue created with
 * CL_QUEUE_PROFILING_ENABLE (see clprim_context_create_from_queue).
 * @return : CLPRIM_SUCCESS and *ms set; CLPRIM_ERROR_UNSUPPORTED_OPERATION
 *           when the queue does not profile or no call enqueued anything. */
CLPRIM_API clprim_status clprim_context_last_time(clprim_context *ctx, double *ms);

/*! clprim_context_last_event() :
 * An event that completes when the work of the last call on this context is
 * done (the event of its last command; the queue is in-order), for the
 * caller to wait on or to chain work on another queue. Retained for the
 * caller, who releases it with clReleaseEvent().
 * @return : CLPRIM_SUCCESS and *event set; CLPRIM_ERROR_UNSUPPORTED_OPERATION
 *           and *event NULL when the last call enqueued nothing (n = 0, an
 *           error); CLPRIM_ERROR_INVALID_ARGUMENT for NULL arguments. */
CLPRIM_API clprim_status clprim_context_last_event(clprim_context *ctx, cl_event *event);

/*! clprim_context_wait_for() :
 * Makes the first command of the next call that enqueues work wait for
 * `count` events (the caller's own commands that write its input, on this
 * queue or another of the same cl_context); later commands follow it in
 * order. The events are retained until then (or clprim_context_free);
 * calling again before that call adds to the list. A call that waits for
 * the device (a host result, or one of those README's "Calls return once
 * their work is enqueued" names) then waits for these events too: do not
 * give it one that the calling thread completes only after it returns.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL ctx,
 *           NULL events with count > 0, or a NULL event;
 *           CLPRIM_ERROR_OUT_OF_HOST_MEMORY. */
CLPRIM_API clprim_status clprim_context_wait_for(clprim_context *ctx, cl_uint count,
                                                 const cl_event *events);

/*! clprim_context_prebuild() :
 * Builds now, several at once (clprim_options.build_threads), the programs
 * that every family's calls run on this context's path, for every element type
 * the device supports, so that no later call waits for a compiler; with
 * the disk cache on they are stored there too, and later processes start
 * warm (`clprim-info --prebuild` does this once for a device). Programs
 * that depend on a call's own arguments (the expression of
 * clprim_select_expr) are still built by that call. Takes seconds on a GPU,
 * minutes on a CPU runtime.
 * @return : CLPRIM_SUCCESS, or the error of the first program (in the
 *           order collected) whose build failed, with its log in
 *           clprim_context_build_log() and a text in
 *           clprim_context_last_error() that names its file and counts the
 *           others that failed; every program is tried, and what built is
 *           kept either way. */
CLPRIM_API clprim_status clprim_context_prebuild(clprim_context *ctx);

/*! clprim_context_prebuild_progress() :
 * clprim_context_prebuild(), calling progress(user, done, total) after each
 * program it builds or loads from the disk cache (done = 1 to total; none
 * when every program is made already). Calls come from the threads that
 * build (the calling thread among them), one at a time, under a lock: done
 * goes up by one with each call and each program is counted once. The
 * callback must not call clprim on ctx, and should return quickly (the
 * other threads wait for their next program while it runs).
 * @return : as clprim_context_prebuild(). */
typedef void (*clprim_progress_fn)(void *user, unsigned done, unsigned total);
CLPRIM_API clprim_status clprim_context_prebuild_progress(clprim_context *ctx,
                                                          clprim_progress_fn progress, void *user);

/*! clprim_context_clear_cache() :
 * Releases the context's built programs and kernels (they are rebuilt, or
 * loaded from the disk cache, on next use). The disk cache is untouched.
 * @return : CLPRIM_SUCCESS, or CLPRIM_ERROR_INVALID_ARGUMENT for NULL ctx. */
CLPRIM_API clprim_status clprim_context_clear_cache(clprim_context *ctx);

/*! clprim_list_devices() :
 * Writes one line per OpenCL device, "P:D platform / device (type)", into buf
 * (truncated to size, always NUL-terminated when size > 0).
 * @return : the number of devices found (0 when there is none). */
CLPRIM_API unsigned clprim_list_devices(char *buf, size_t size);

/* ------------------------------------------------------ probed facts */

/* What probing found; filled by clprim_context_get_info(). */
typedef struct clprim_device_info {
  char platform_name[128];
  char platform_version[128];
  char vendor[128];
  char device_name[128];
  char device_version[128];
  char driver_version[128];
  char opencl_c_version[128];
  cl_device_type device_type;
  unsigned compute_units;
  uint64_t global_mem_size;
  uint64_t max_alloc_size;
  uint64_t local_mem_size;
  size_t max_work_group_size;
  /* Subgroup sizes seen by the probe kernels (0 when no subgroup path runs). */
  unsigned subgroup_size;
  /* NVIDIA only (cl_nv_device_attribute_query), else 0. */
  unsigned nv_compute_capability_major;
  unsigned nv_compute_capability_minor;
  unsigned nv_warp_size;
  int has_fp64;         /* cl_khr_fp64: CLPRIM_DOUBLE works */
  int has_int64_atomics; /* cl_khr_int64_base_atomics */
  /* Bit (1u << p) is set for each clprim_path p confirmed by a test kernel.
   * CLPRIM_PATH_LOCAL and CLPRIM_PATH_CPU are always there. */
  unsigned paths_available;
  /* The path this context uses (the best available, or the forced one). */
  clprim_path path;
} clprim_device_info;

/*! clprim_context_get_info() :
 * Fills the first info_size bytes of *info (pass sizeof *info: a later
 * library, whose struct may have more fields at the end, then writes only
 * those your program knows).
 * @return : CLPRIM_SUCCESS and *info filled, or CLPRIM_ERROR_INVALID_ARGUMENT
 *           (NULL ctx or info, info_size 0). */
CLPRIM_API clprim_status clprim_context_get_info(const clprim_context *ctx,
                                                 clprim_device_info *info, size_t info_size);

/* ------------------------------------- the device-side header, for apps */

/*! clprim_device_source() :
 * The OpenCL C source of clprim's device-side header (clprim/clprim_device.h):
 * portable subgroup operations (ballot, shuffles, subgroup and work-group
 * scans and reductions) with one implementation per path. Put it before your
 * own kernel source, and build with clprim_context_device_options().
 * @return : a constant NUL-terminated string. */
CLPRIM_API const char *clprim_device_source(void);

/*! clprim_context_device_options() :
 * @return : the build options ("-D..." and, where needed, "-cl-std=...") that
 *           select this context's path in clprim_device_source(); owned by
 *           the context. NULL for a NULL ctx. */
CLPRIM_API const char *clprim_context_device_options(const clprim_context *ctx);

/* ------------------------------------------------------- every primitive */

/* Every primitive returns CLPRIM_SUCCESS or an error, and on error writes
 * nothing to the caller's outputs; clprim_context_last_error() then says
 * which argument or step failed. The errors every call can return:
 *   CLPRIM_ERROR_INVALID_ARGUMENT: NULL ctx, a NULL buffer that the call
 *     needs, a bad type or enum, unknown flags, no output where the call
 *     needs one, an output range that overlaps an input or another output
 *     (except where a call allows it, as scan in place);
 *   CLPRIM_ERROR_BUFFER_TOO_SMALL: a range runs past its buffer's end;
 *   CLPRIM_ERROR_UNSUPPORTED_TYPE: double without cl_khr_fp64;
 *   CLPRIM_ERROR_CONTEXT_BUSY: another thread is in a call on ctx;
 *   CL_INVALID_CONTEXT: a buffer of another cl_context;
 *   a kernel build error (see clprim_context_build_log), or another OpenCL
 *   code (CL_OUT_OF_RESOURCES, ...).
 * Each call lists only its own further errors. */

/* Flags: every flag macro has a bit of its own (0.3), and each call
 * refuses, with CLPRIM_ERROR_INVALID_ARGUMENT, any bit it does not take.
 * Flags shared by the calls that write indices (select, partition, top-k). */
#define CLPRIM_INDICES_64 8u /* uint64 indices, not uint32 */

/* ------------------------------------------------------------------ scan */

/*! clprim_scan_exclusive(), clprim_scan_inclusive() :
 * Prefix sums of the n elements of in, written to out (n elements):
 *   exclusive: out[i] = in[0] + ... + in[i-1]   (out[0] = 0)
 *   inclusive: out[i] = in[0] + ... + in[i]
 * Integer sums wrap around (two's complement). out may be the same range as
 * in (in place), but no other overlap. n = 0 writes nothing. Float sums are
 * accurate to the bound in docs/ACCURACY.md. flags: 0, or CLPRIM_EXACT
 * (float and double only; see the reductions): each out[i] is the exact sum
 * of its elements rounded once (to nearest, ties to even), as
 * clprim_reduce_sum gives the sum of those elements, so the same bits on
 * every device, path, work-group size and run. The exclusive scan's out[0]
 * is +0 (the sum of no element), and its out[i] is the inclusive out[i-1]:
 * -0 only when in[0 .. i-1] are all -0. It costs far more than a plain
 * scan (docs/ACCURACY.md: method and figures).
 * @return : CLPRIM_SUCCESS once the work is enqueued, or an error (see
 *           "every primitive"); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           unknown flags or CLPRIM_EXACT on an integer type. */
CLPRIM_API clprim_status clprim_scan_exclusive(clprim_context *ctx, size_t n, clprim_type type,
                                               clprim_buffer in, unsigned flags, clprim_buffer out);
CLPRIM_API clprim_status clprim_scan_inclusive(clprim_context *ctx, size_t n, clprim_type type,
                                               clprim_buffer in, unsigned flags, clprim_buffer out);

/*! clprim_scan_inclusive_by_key(), clprim_scan_exclusive_by_key() :
 * Prefix sums of the n values (value_type) that restart at each run of the
 * n keys (key_type; runs as in the "runs" section: equal consecutive keys
 * under ==, each NaN a run of its own), as CUB's InclusiveSumByKey /
 * ExclusiveSumByKey: for i in a run that starts at h,
 *   inclusive: out[i] = values[h] + ... + values[i]
 *   exclusive: out[i] = values[h] + ... + values[i-1]   (0 at h)
 * Integer sums wrap around. out may be the values' range (in place), not
 * the keys'. n = 0 writes nothing. Float sums: docs/ACCURACY.md.
 * @return : as clprim_scan_inclusive(); CLPRIM_ERROR_INVALID_ARGUMENT also
 *           for out on the keys. */
CLPRIM_API clprim_status clprim_scan_inclusive_by_key(clprim_context *ctx, size_t n,
                                                      clprim_type key_type, clprim_buffer keys,
                                                      clprim_type value_type,
                                                      clprim_buffer values, clprim_buffer out);
CLPRIM_API clprim_status clprim_scan_exclusive_by_key(clprim_context *ctx, size_t n,
                                                      clprim_type key_type, clprim_buffer keys,
                                                      clprim_type value_type,
                                                      clprim_buffer values, clprim_buffer out);


/* ------------------------------------------------------------ reductions */

/* Flags of argmax / argmin / min / max (OR them; 0 is the default). */
#define CLPRIM_REDUCE_ABS 1u /* compare |x|; the element itself is returned */
/* NaN is larger than every number (so argmax returns the first NaN, as
 * numpy.argmax does). By default NaNs are ignored: one is returned only when
 * every element is NaN (then index 0). For argmin / min, NaN as largest never
 * wins either, so this flag changes nothing there. */
#define CLPRIM_REDUCE_NAN_LARGEST 2u

/*! clprim_argmax(), clprim_argmin() :
 * The largest (smallest) of the n elements of in and the index of its FIRST
 * occurrence (ties go to the lowest index). -0.0 and +0.0 are equal. With
 * CLPRIM_REDUCE_ABS the element of largest (smallest) absolute value is
 * chosen, and returned with its sign (|INT32_MIN| counts as 2^31). NaNs as
 * CLPRIM_REDUCE_NAN_LARGEST says.
 * Results (give at least one): *value and *index on the host (the call
 * waits), and `result`, two uint64 elements on the device: the element's
 * bits (a 32-bit element zero-extended) and its index.
 * @return : CLPRIM_SUCCESS, or CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           n = 0 (no answer). */
CLPRIM_API clprim_status clprim_argmax(clprim_context *ctx, size_t n, clprim_type type,
                                       clprim_buffer in, unsigned flags, clprim_value *value,
                                       uint64_t *index, clprim_buffer result);
CLPRIM_API clprim_status clprim_argmin(clprim_context *ctx, size_t n, clprim_type type,
                                       clprim_buffer in, unsigned flags, clprim_value *value,
                                       uint64_t *index, clprim_buffer result);

/*! clprim_reduce_max(), clprim_reduce_min() :
 * The largest (smallest) of the n elements, with the flags and NaN rules of
 * clprim_argmax(). Results: *value (the call waits) and / or `result`, one
 * uint64 element on the device (the element's bits, a 32-bit element
 * zero-extended).
 * @return : as clprim_argmax(). */
CLPRIM_API clprim_status clprim_reduce_max(clprim_context *ctx, size_t n, clprim_type type,
                                           clprim_buffer in, unsigned flags, clprim_value *value,
                                           clprim_buffer result);
CLPRIM_API clprim_status clprim_reduce_min(clprim_context *ctx, size_t n, clprim_type type,
                                           clprim_buffer in, unsigned flags, clprim_value *value,
                                           clprim_buffer result);

/* Flag of the float and double sums: the exact sum of the elements,
 * rounded once to the nearest (ties to even), so the same bits on every
 * device, path, work-group size and run. NaN if any element is NaN or
 * +inf and -inf are both there, else an infinity if one is there; an
 * exact sum beyond the type's range gives an infinity; subnormals are
 * exact; an exact zero is +0 unless every element is -0. Cost and method:
 * docs/ACCURACY.md. */
#define CLPRIM_EXACT 2048u

/*! clprim_reduce_sum() :
 * The sum of the n elements of in (0 for n = 0). Integer sums wrap around
 * (two's complement). Float and double are summed in their own type,
 * pairwise within tiles; the error bound is in docs/ACCURACY.md. NaN and
 * infinities propagate as in any sum. flags: 0, or CLPRIM_EXACT (float and
 * double only). Results: *sum (the call waits) and / or `result`, one
 * uint64 element on the device (the sum's bits, 32-bit sums
 * zero-extended).
 * @return : CLPRIM_SUCCESS or an error (see "every primitive");
 *           CLPRIM_ERROR_INVALID_ARGUMENT also for CLPRIM_EXACT on an
 *           integer type. */
CLPRIM_API clprim_status clprim_reduce_sum(clprim_context *ctx, size_t n, clprim_type type,
                                           clprim_buffer in, unsigned flags, clprim_value *sum,
                                           clprim_buffer result);

/* Segmented reductions (CUB DeviceSegmentedReduce): one result per segment
 * s, over in[begin_offsets[s] .. end_offsets[s]) (`segments` of each, of
 * offset_type on the device; segments may be empty, overlap or leave gaps).
 *
 * Offsets, in every segmented call: offset_type is CLPRIM_UINT32 or
 * CLPRIM_UINT64 (anything else: CLPRIM_ERROR_INVALID_ARGUMENT, nothing
 * written), the type of both begin_offsets and end_offsets; the offset of
 * their clprim_buffer counts elements of that type. uint32 offsets take the
 * lengths and offsets of clprim_run_length_encode() / _non_trivial_runs()
 * scanned as they come, with no widening pass. Every
 * segment is checked on the device first: begin > end or end > n gives
 * CLPRIM_ERROR_INVALID_ARGUMENT with nothing written. Each segment is
 * reduced by a subgroup (a work-group on the local path); segments = 0
 * writes nothing. */

/*! clprim_segmented_sum() :
 * out[s] (segments elements of type) = the sum of segment s, 0 when empty.
 * Integer sums wrap around; float and double are added in their type, each
 * team member's share in order, then a tree (docs/ACCURACY.md). flags: 0,
 * or CLPRIM_EXACT (float and double): each segment's exact sum rounded
 * once, as clprim_reduce_sum gives it (a team of work-items a segment,
 * docs/ACCURACY.md).
 * @return : CLPRIM_SUCCESS once the work is enqueued (after the check's
 *           read); CLPRIM_ERROR_INVALID_ARGUMENT for bad segments, a bad
 *           offset_type, unknown flags or CLPRIM_EXACT on an integer type. */
CLPRIM_API clprim_status clprim_segmented_sum(clprim_context *ctx, size_t n, clprim_type type,
                                              clprim_buffer in, size_t segments,
                                              clprim_type offset_type, clprim_buffer begin_offsets,
                                              clprim_buffer end_offsets, unsigned flags,
                                              clprim_buffer out);

/*! clprim_segmented_max(), clprim_segmented_min() :
 * out[s] (segments elements of type) = the largest (smallest) element of
 * segment s, with the flags and NaN rules of clprim_argmax(); an empty
 * segment gives the type's lowest (largest) value, -inf (+inf) for floats.
 * @return : as clprim_segmented_sum(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           unknown flags. */
CLPRIM_API clprim_status clprim_segmented_max(clprim_context *ctx, size_t n, clprim_type type,
                                              clprim_buffer in, size_t segments,
                                              clprim_type offset_type, clprim_buffer begin_offsets,
                                              clprim_buffer end_offsets, unsigned flags,
                                              clprim_buffer out);
CLPRIM_API clprim_status clprim_segmented_min(clprim_context *ctx, size_t n, clprim_type type,
                                              clprim_buffer in, size_t segments,
                                              clprim_type offset_type, clprim_buffer begin_offsets,
                                              clprim_buffer end_offsets, unsigned flags,
                                              clprim_buffer out);

/*! clprim_segmented_argmax(), clprim_segmented_argmin() :
 * For each segment s, two uint64 at out[2 s] and out[2 s + 1]: the bits of
 * its largest (smallest) element (a 32-bit element zero-extended) and that
 * element's index in the segment (from its begin offset, as CUB), the first
 * one on ties; flags and NaN rules of clprim_argmax(). An empty segment
 * gives 0 and UINT64_MAX.
 * @return : as clprim_segmented_max(). */
CLPRIM_API clprim_status clprim_segmented_argmax(clprim_context *ctx, size_t n, clprim_type type,
                                                 clprim_buffer in, size_t segments,
                                                 clprim_type offset_type,
                                                 clprim_buffer begin_offsets,
                                                 clprim_buffer end_offsets, unsigned flags,
                                                 clprim_buffer out);
CLPRIM_API clprim_status clprim_segmented_argmin(clprim_context *ctx, size_t n, clprim_type type,
                                                 clprim_buffer in, size_t segments,
                                                 clprim_type offset_type,
                                                 clprim_buffer begin_offsets,
                                                 clprim_buffer end_offsets, unsigned flags,
                                                 clprim_buffer out);

/* ----------------------------------------------------------------- select */

/* Built-in predicates for clprim_select() and clprim_partition(). a and b are
 * kernel arguments: a new threshold builds nothing. NaN compares false, so a
 * NaN passes only NE, OUTSIDE, NONZERO and IS_NAN; -0.0 equals 0.0. */
typedef enum clprim_predicate_op {
  CLPRIM_PRED_GT = 0,      /* x > a */
  CLPRIM_PRED_GE = 1,      /* x >= a */
  CLPRIM_PRED_LT = 2,      /* x < a */
  CLPRIM_PRED_LE = 3,      /* x <= a */
  CLPRIM_PRED_EQ = 4,      /* x == a */
  CLPRIM_PRED_NE = 5,      /* x != a */
  CLPRIM_PRED_INSIDE = 6,  /* a <= x && x < b, i.e. x in [a, b) */
  CLPRIM_PRED_OUTSIDE = 7, /* !(a <= x && x < b): the complement of INSIDE */
  CLPRIM_PRED_NONZERO = 8, /* x != 0 */
  CLPRIM_PRED_IS_NAN = 9,  /* x is NaN (never, for integers) */
  CLPRIM_PRED_NOT_NAN = 10, /* x is not NaN (always, for integers) */
  CLPRIM_PRED_MASK_EQ = 11 /* (x & a) == b; integer types only */
} clprim_predicate_op;
#define CLPRIM_PRED_COUNT 12

/* A built-in predicate and its parameters (b: INSIDE and OUTSIDE, MASK_EQ). */
typedef struct clprim_predicate {
  clprim_predicate_op op;
  clprim_value a, b;
} clprim_predicate;

/* Element types of the stencil of clprim_select_flagged(): nonzero passes. */
typedef enum clprim_flag_type {
  CLPRIM_FLAGS_UINT8 = 0, /* one byte per element */
  CLPRIM_FLAGS_INT32 = 1  /* one int32 per element */
} clprim_flag_type;

/*! clprim_select() :
 * Stream compaction: the elements among the n of in that pass pred, in input
 * order, to `values` (elements of type) and / or `indices` (their positions
 * in in: uint32, or uint64 with CLPRIM_INDICES_64; n > 2^32 needs it), in one
 * pass; and their count to *count (the call waits) and / or `count_out` (one
 * uint64 on the device). With neither values nor indices only the count is
 * computed. Output ranges must hold n elements whatever the count; only the
 * first count are written. n = 0 gives a count of 0. flags:
 * CLPRIM_INDICES_64 or 0.
 * @return : CLPRIM_SUCCESS once the work is enqueued (and the count read,
 *           when count is given); CLPRIM_ERROR_INVALID_ARGUMENT also for a
 *           NULL pred, a bad op, MASK_EQ on float types, no output at all,
 *           indices of uint32 for n > 2^32. */
CLPRIM_API clprim_status clprim_select(clprim_context *ctx, size_t n, clprim_type type,
                                       clprim_buffer in, const clprim_predicate *pred,
                                       unsigned flags, clprim_buffer values,
                                       clprim_buffer indices, uint64_t *count,
                                       clprim_buffer count_out);

/*! clprim_select_flagged() :
 * As clprim_select(), but element i passes when stencil[i] is nonzero
 * (stencil: n elements of stencil_type). in may be clprim_buf(NULL) when
 * values is not wanted.
 * @return : as clprim_select(); CLPRIM_ERROR_INVALID_ARGUMENT also for a
 *           NULL stencil or a bad stencil_type. */
CLPRIM_API clprim_status clprim_select_flagged(clprim_context *ctx, size_t n, clprim_type type,
                                               clprim_buffer in, clprim_buffer stencil,
                                               clprim_flag_type stencil_type, unsigned flags,
                                               clprim_buffer values, clprim_buffer indices,
                                               uint64_t *count, clprim_buffer count_out);

/*! clprim_partition() :
 * Stable partition: writes all n elements (values and / or indices, as
 * clprim_select()), first those that pass pred, then those that fail, each
 * part in input order. The count is the number that pass.
 * flags: CLPRIM_INDICES_64, and CLPRIM_PARTITION_REVERSED for CUB's order
 * (DevicePartition::If): the failing elements are written backwards from
 * the end, the first one that fails at n - 1; position count then holds the
 * last one. This order needs no total before the writes, so it runs in one
 * pass where the device has the single-pass compaction (nv_ptx), against
 * three for the stable order (docs/PERFORMANCE.md). Every partition call
 * (_flagged, _expr, _expr_params) takes both flags; select refuses
 * CLPRIM_PARTITION_REVERSED.
 * @return : as clprim_select(). */
#define CLPRIM_PARTITION_REVERSED 32u
CLPRIM_API clprim_status clprim_partition(clprim_context *ctx, size_t n, clprim_type type,
                                          clprim_buffer in, const clprim_predicate *pred,
                                          unsigned flags, clprim_buffer values,
                                          clprim_buffer indices, uint64_t *count,
                                          clprim_buffer count_out);

/*! clprim_partition_flagged() :
 * As clprim_partition(), but element i passes when stencil[i] is nonzero.
 * @return : as clprim_select_flagged(). */
CLPRIM_API clprim_status clprim_partition_flagged(clprim_context *ctx, size_t n,
                                                  clprim_type type, clprim_buffer in,
                                                  clprim_buffer stencil,
                                                  clprim_flag_type stencil_type, unsigned flags,
                                                  clprim_buffer values, clprim_buffer indices,
                                                  uint64_t *count, clprim_buffer count_out);

/*! clprim_partition3() :
 * Stable three-way partition (CUB's three-way DevicePartition::If): writes
 * all n elements (values and / or indices, as clprim_partition()): first
 * those that pass `first`, then those that fail it and pass `second`, then
 * the rest, each part in input order. counts (the
 * host: the call waits) and / or counts_out (two uint64 on the device) get
 * the sizes of the first two parts.
 * @return : as clprim_partition(); CLPRIM_ERROR_INVALID_ARGUMENT also for a
 *           NULL or bad second predicate. */
CLPRIM_API clprim_status clprim_partition3(clprim_context *ctx, size_t n, clprim_type type,
                                           clprim_buffer in, const clprim_predicate *first,
                                           const clprim_predicate *second, unsigned flags,
                                           clprim_buffer values, clprim_buffer indices,
                                           uint64_t counts[2], clprim_buffer counts_out);

/*! clprim_partition3_flagged() :
 * clprim_partition3() with the tests given as two flag arrays (n flags each
 * of flag_type, on the device): an element whose first flag is nonzero goes
 * to the first part, else one whose second flag is nonzero to the second,
 * else to the third. The values are only read for the output.
 * @return : as clprim_partition3(); CLPRIM_ERROR_INVALID_ARGUMENT also for a
 *           bad flag_type or a missing flag array. */
CLPRIM_API clprim_status clprim_partition3_flagged(clprim_context *ctx, size_t n,
                                                   clprim_type type, clprim_buffer in,
                                                   clprim_buffer first_flags,
                                                   clprim_buffer second_flags,
                                                   clprim_flag_type flag_type, unsigned flags,
                                                   clprim_buffer values, clprim_buffer indices,
                                                   uint64_t counts[2], clprim_buffer counts_out);

/*! clprim_partition3_expr() :
 * clprim_partition3() with the tests given as two OpenCL C expressions over
 * x and i, as clprim_select_expr()'s (nonzero passes). Each pair of
 * expressions (per type) is compiled once and kept with the context's
 * programs. Expressions are checked first as a pipeline's are (see the
 * pipeline section): one that could reach outside the generated code is
 * refused before anything is compiled.
 * @return : as clprim_partition3(); CLPRIM_ERROR_INVALID_ARGUMENT also for a
 *           NULL, empty or refused expression; CL_BUILD_PROGRAM_FAILURE (the
 *           log: clprim_context_build_log(), as clprim_select_expr()'s, which
 *           also says "the first expression" or "the second expression") for
 *           one that does not compile. */
CLPRIM_API clprim_status clprim_partition3_expr(clprim_context *ctx, size_t n, clprim_type type,
                                                clprim_buffer in, const char *first,
                                                const char *second, unsigned flags,
                                                clprim_buffer values, clprim_buffer indices,
                                                uint64_t counts[2], clprim_buffer counts_out);

/*! clprim_select_expr(), clprim_partition_expr() :
 * As clprim_select() and clprim_partition(), with your own predicate: an
 * OpenCL C expression over x (the element, of the call's type: int, uint,
 * long, ulong, float or double) and i (its index in the range, ulong),
 * nonzero to pass, e.g. "x > 0.5f && (i & 1) == 0". Each distinct
 * expression (per type) is compiled once, then kept with the context's
 * programs (and in the disk cache when one is set). Expressions are checked
 * first as a pipeline's are (see the pipeline section): one that could
 * reach outside the generated code is refused before anything is compiled.
 * @return : as clprim_select(); CLPRIM_ERROR_INVALID_ARGUMENT also for a
 *           NULL, empty or refused expression; CL_BUILD_PROGRAM_FAILURE (or another
 *           build error) when it does not compile, with the compiler's
 *           messages in clprim_context_build_log() in the expression's own
 *           terms, as a pipeline's: "expression:LINE:COLUMN: message" (line
 *           and column in the expression's text), the line and a caret. */
CLPRIM_API clprim_status clprim_select_expr(clprim_context *ctx, size_t n, clprim_type type,
                                            clprim_buffer in, const char *expression,
                                            unsigned flags, clprim_buffer values,
                                            clprim_buffer indices, uint64_t *count,
                                            clprim_buffer count_out);
CLPRIM_API clprim_status clprim_partition_expr(clprim_context *ctx, size_t n, clprim_type type,
                                               clprim_buffer in, const char *expression,
                                               unsigned flags, clprim_buffer values,
                                               clprim_buffer indices, uint64_t *count,
                                               clprim_buffer count_out);

/*! clprim_select_expr_params(), clprim_partition_expr_params() :
 * As clprim_select_expr() and clprim_partition_expr(), with parameters:
 * params[0..7] (NULL: all 0) are p0..p7 in the expression (double, or
 * float without cl_khr_fp64), passed as kernel arguments, so a new value
 * builds nothing. The expression is a pipeline's filter (see "pipeline"):
 * it may also name the element as a, is refused when it could reach outside
 * the generated function, and a build log gives its line and column.
 * @return : as clprim_select_expr(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           a refused expression. */
CLPRIM_API clprim_status clprim_select_expr_params(clprim_context *ctx, size_t n,
                                                   clprim_type type, clprim_buffer in,
                                                   const char *expression, const double *params,
                                                   unsigned flags, clprim_buffer values,
                                                   clprim_buffer indices, uint64_t *count,
                                                   clprim_buffer count_out);
CLPRIM_API clprim_status clprim_partition_expr_params(clprim_context *ctx, size_t n,
                                                      clprim_type type, clprim_buffer in,
                                                      const char *expression,
                                                      const double *params, unsigned flags,
                                                      clprim_buffer values, clprim_buffer indices,
                                                      uint64_t *count, clprim_buffer count_out);

/* ------------------------------------ histograms and reduce-by-key */

/* Dense reduce-by-key and histograms. Keys are int32 or uint32 in
 * [0, num_keys); a key outside (negative, >= num_keys) is counted as invalid
 * and otherwise ignored. Outputs are OVERWRITTEN: every one of the num_keys
 * (bins) entries is written, 0 where no element fell (so n = 0 writes
 * zeros). Counts are uint32 (so n is at most 2^32 - 1: larger n gives
 * CLPRIM_ERROR_SIZE_TOO_LARGE); sums have the values' type, integer sums
 * wrap around (two's complement). Elements are added with atomics, so float
 * and double sums are added in no fixed order: a sum of m values differs
 * from the exact sum by at most about m * u * (sum of their |x|) (u = 2^-24
 * float, 2^-53 double) and may differ in the last bits between runs
 * (docs/ACCURACY.md), unless clprim_reduce_by_key_dense() has CLPRIM_EXACT.
 * num_keys (bins) is at most 2^31. */

/* Flag of clprim_reduce_by_key_dense(): float sums keep subnormal numbers.
 * Without it, NVIDIA's hardware float atomic adds to global memory (the
 * nv_ptx path) flush subnormal inputs and results to zero; with it every
 * path adds by compare-and-swap, as an ordinary addition rounds (slower
 * where many elements share a key), which keeps subnormals on devices that
 * report CL_FP_DENORM for float (NVIDIA, PoCL do). See docs/ACCURACY.md. */
#define CLPRIM_SUMS_KEEP_SUBNORMALS 16u

/*! clprim_histogram_keys() :
 * counts[k] = the number of i < n with keys[i] == k, for k < num_keys
 * (counts: num_keys uint32). The number of keys out of range goes to
 * *invalid (NULL, or the host: the call waits) and / or invalid_out (one
 * uint64 on the device; clprim_buf(NULL) for none).
 * @return : CLPRIM_SUCCESS once the work is enqueued;
 *           CLPRIM_ERROR_INVALID_ARGUMENT also for key_type not INT32 /
 *           UINT32 or num_keys = 0; CLPRIM_ERROR_SIZE_TOO_LARGE (num_keys >
 *           2^31, n >= 2^32). */
CLPRIM_API clprim_status clprim_histogram_keys(clprim_context *ctx, size_t n,
                                               clprim_type key_type, clprim_buffer keys,
                                               size_t num_keys, clprim_buffer counts,
                                               uint64_t *invalid, clprim_buffer invalid_out);

/*! clprim_reduce_by_key_dense() :
 * sums[k] = the sum of values[i] over the i < n with keys[i] == k, and, when
 * counts is given, counts[k] = their number (uint32), for k < num_keys.
 * Values (and sums) are of value_type: any clprim_type. int64 / uint64 and
 * double sums need 64-bit atomics (cl_khr_int64_base_atomics; double adds by
 * 64-bit compare-and-swap). flags: 0, CLPRIM_SUMS_KEEP_SUBNORMALS and / or
 * CLPRIM_EXACT (float and double values): each key's exact sum rounded
 * once (+0 for a key no element fell on, -0 only when every element of the
 * key was -0), the same bits on every device, path and run, with or without
 * 64-bit atomics (CLPRIM_SUMS_KEEP_SUBNORMALS is then redundant: exact
 * sums keep subnormals). Scratch: up to 112 bytes a key (float) or 568
 * (double), in ranges of keys (two passes over the data each) where
 * num_keys of them would not fit in a quarter of the device's memory; see
 * docs/ACCURACY.md. invalid, invalid_out: as clprim_histogram_keys().
 * @return : as clprim_histogram_keys(); CLPRIM_ERROR_UNSUPPORTED_OPERATION
 *           for 64-bit sums without CLPRIM_EXACT on a device without
 *           cl_khr_int64_base_atomics; CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           CLPRIM_EXACT with an integer value_type (nothing written). */
CLPRIM_API clprim_status clprim_reduce_by_key_dense(clprim_context *ctx, size_t n,
                                                    clprim_type key_type, clprim_buffer keys,
                                                    clprim_type value_type, clprim_buffer values,
                                                    size_t num_keys, unsigned flags,
                                                    clprim_buffer sums, clprim_buffer counts,
                                                    uint64_t *invalid, clprim_buffer invalid_out);

/*! clprim_histogram_even() :
 * Histogram of the n elements of in (any clprim_type) into `bins`
 * even-width bins over [lo, hi) (lo, hi: the member of type), as CUB's
 * HistogramEven: counts[b] (bins uint32) = the elements x with lo <= x < hi
 * and bin b, where for float / double b = (unsigned)((x - lo) * scale) with
 * scale = bins / (hi - lo) computed in the type (clamped to bins - 1 where
 * rounding reaches bins), and for integers b = (x - lo) * bins / (hi - lo)
 * exactly. Elements outside are counted separately: *outside (NULL, or 3
 * words on the host: the call waits) and / or outside_out (3 uint64 on the
 * device) receive the number below lo, at or above hi, and NaN (in that
 * order).
 * @return : as clprim_histogram_keys(), with CLPRIM_ERROR_INVALID_ARGUMENT
 *           also for bins = 0, lo >= hi, a NaN bound, an infinite hi - lo,
 *           and, for 64-bit integers, (hi - lo) * bins >= 2^64. */
CLPRIM_API clprim_status clprim_histogram_even(clprim_context *ctx, size_t n, clprim_type type,
                                               clprim_buffer in, clprim_value lo,
                                               clprim_value hi, size_t bins,
                                               clprim_buffer counts, uint64_t *outside,
                                               clprim_buffer outside_out);

/*! clprim_reduce_by_key() :
 * Reduce-by-key over runs (CUB DeviceReduce::ReduceByKey): each maximal run
 * of equal consecutive keys among the n is a segment. Writes, in order,
 * each segment's key to unique_keys and the sum of its values to sums, and
 * the number of segments to *count (the host: the call waits) and / or
 * count_out (one uint64 on the device). Keys: any clprim_type, compared
 * with == as runs are (see "runs": each NaN key is a segment of its own,
 * -0.0 and +0.0 are one key; keys need not be sorted); values: any
 * clprim_type, summed in their type (integers wrap around). unique_keys and
 * sums must hold n elements whatever the count; only the first count are
 * written. Sums are added in a fixed order (no atomics), the same on every
 * run: each work-item adds its 8 consecutive elements in order, then the
 * parts of a run that goes on into the next work-items and tiles are added
 * in order (docs/ACCURACY.md). n = 0 gives a count of 0. Writes in steps
 * (see the top of this file): the tiles' sums, then the fix-up of the runs
 * that span tiles and the count.
 * flags: 0, or CLPRIM_EXACT (float and double values): each segment's sum
 * is the exact sum of its values rounded once, as clprim_reduce_sum gives
 * it, the same bits on every device, path and work-group size. Written in
 * steps too: the keys and the count (the runs, found as clprim_unique_by_key
 * finds them), then the sums. A team of work-items sums each segment of up
 * to 2^16 elements, several work-groups a longer one; each segment costs a
 * rounding, so many short segments cost far more than without the flag
 * (docs/ACCURACY.md).
 * @return : CLPRIM_SUCCESS once the work is enqueued (and the count read when
 *           count is given); CLPRIM_ERROR_SIZE_TOO_LARGE;
 *           CLPRIM_ERROR_INVALID_ARGUMENT also for unknown flags or
 *           CLPRIM_EXACT with an integer value_type. */
CLPRIM_API clprim_status clprim_reduce_by_key(clprim_context *ctx, size_t n,
                                              clprim_type key_type, clprim_buffer keys,
                                              clprim_type value_type, clprim_buffer values,
                                              unsigned flags, clprim_buffer unique_keys,
                                              clprim_buffer sums, uint64_t *count,
                                              clprim_buffer count_out);

/* ------------------------------------------------------------------ runs */

/* A run is a maximal stretch of equal consecutive elements, compared with
 * == in their type (as CUB): -0.0 and +0.0 are one run (its first element's
 * bits are kept), and every NaN is a run of its own. Elements need not be
 * sorted. Every call here writes its outputs in input order, only the first
 * count elements of each (output ranges must hold n elements whatever the
 * count), and the count to *count (the host: the call waits) and / or
 * count_out (one uint64 on the device); n = 0 gives a count of 0. Outputs
 * may not overlap the input (no in-place call). Every output is optional,
 * but at least one must be given. */

/*! clprim_unique() :
 * The first element of each run among the n of in (CUB DeviceSelect::Unique).
 * @return : CLPRIM_SUCCESS once the work is enqueued (and the count read when
 *           count is given); CLPRIM_ERROR_INVALID_ARGUMENT for no output. */
CLPRIM_API clprim_status clprim_unique(clprim_context *ctx, size_t n, clprim_type type,
                                       clprim_buffer in, clprim_buffer out, uint64_t *count,
                                       clprim_buffer count_out);

/*! clprim_unique_by_key() :
 * For each run of the n keys, its first key to keys_out and the value at
 * the same position (values: n elements of value_type) to values_out (CUB
 * DeviceSelect::UniqueByKey). With both outputs it writes in steps (see the
 * top of this file): the keys, then the values.
 * @return : as clprim_unique(). */
CLPRIM_API clprim_status clprim_unique_by_key(clprim_context *ctx, size_t n,
                                              clprim_type key_type, clprim_buffer keys,
                                              clprim_type value_type, clprim_buffer values,
                                              clprim_buffer keys_out, clprim_buffer values_out,
                                              uint64_t *count, clprim_buffer count_out);

/*! clprim_run_length_encode() :
 * Run-length encoding of the n elements of in (CUB DeviceRunLengthEncode::
 * Encode): each run's first element to unique_out and its length to lengths
 * (uint32, or uint64 with CLPRIM_INDICES_64, which n > UINT32_MAX needs).
 * flags: 0 or CLPRIM_INDICES_64. With lengths it writes in steps (see the
 * top of this file): the runs, then their lengths.
 * @return : as clprim_unique(); CLPRIM_ERROR_INVALID_ARGUMENT also for other
 *           flags and for uint32 lengths with n > UINT32_MAX. */
CLPRIM_API clprim_status clprim_run_length_encode(clprim_context *ctx, size_t n,
                                                  clprim_type type, clprim_buffer in,
                                                  unsigned flags, clprim_buffer unique_out,
                                                  clprim_buffer lengths, uint64_t *count,
                                                  clprim_buffer count_out);

/*! clprim_non_trivial_runs() :
 * The runs longer than 1 (CUB DeviceRunLengthEncode::NonTrivialRuns): the
 * offset of each one's first element to offsets and its length to lengths
 * (both uint32, or uint64 with CLPRIM_INDICES_64), and their count. With
 * lengths it writes in steps (see the top of this file): the offsets, the
 * ends, then the lengths.
 * @return : as clprim_run_length_encode(). */
CLPRIM_API clprim_status clprim_non_trivial_runs(clprim_context *ctx, size_t n,
                                                 clprim_type type, clprim_buffer in,
                                                 unsigned flags, clprim_buffer offsets,
                                                 clprim_buffer lengths, uint64_t *count,
                                                 clprim_buffer count_out);

/* ------------------------------------------- selection by rank, top-k */

/* Order of the selection calls: elements compare as numbers, -0.0 equals
 * +0.0 (a zero is returned as +0.0), every NaN is one value larger than
 * +inf, infinities and denormals are ordinary numbers. Ranks are 0-based:
 * rank k is the element that sorting the input ascending puts at index k.
 * The input is only read, never modified. n must be below 2^32
 * (CLPRIM_ERROR_SIZE_TOO_LARGE otherwise).
 * Algorithm: SampleSelect (Ribizel and Anzt): per level one counting pass
 * over the data into 511 buckets (255 sampled splitters; equality buckets
 * for repeated values) and one pass that extracts the bucket holding the
 * rank, then the same on that bucket, until one work-group sorts the rest. */

/* Flags (OR them; 0 is the default). */
#define CLPRIM_NTH_REJECT_NAN 64u /* fail with CLPRIM_ERROR_INVALID_ARGUMENT if
                                     the input holds a NaN (nothing written) */
#define CLPRIM_TOPK_SMALLEST 128u /* clprim_topk: the k smallest, not largest */
#define CLPRIM_TOPK_SORTED 4u     /* clprim_topk: best first, ties by index */
/* clprim_topk also takes CLPRIM_INDICES_64. */

/*! clprim_nth_element() :
 * The element of rank k (0 <= k < n) among the n elements of in, to *value
 * (the host) and / or to `result` (one element of type on the device).
 * Waits for the device.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for n = 0
 *           (no answer), k >= n, a NaN with CLPRIM_NTH_REJECT_NAN;
 *           CLPRIM_ERROR_SIZE_TOO_LARGE (n >= 2^32). */
CLPRIM_API clprim_status clprim_nth_element(clprim_context *ctx, size_t n, clprim_type type,
                                            clprim_buffer in, uint64_t k, unsigned flags,
                                            clprim_value *value, clprim_buffer result);

/*! clprim_median() :
 * clprim_nth_element() with k = (n - 1) / 2: the lower median.
 * @return : as clprim_nth_element(). */
CLPRIM_API clprim_status clprim_median(clprim_context *ctx, size_t n, clprim_type type,
                                       clprim_buffer in, unsigned flags, clprim_value *value,
                                       clprim_buffer result);

/*! clprim_quantiles() :
 * The elements of many ranks in one call (the counting passes are shared):
 * ranks[j] (count of them, each < n, in any order, repeats allowed) gives
 * values[j] (NULL, or count values on the host) and / or element j of
 * `result` (count elements of type on the device). Waits for the device.
 * @return : as clprim_nth_element(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           NULL ranks, count = 0 or a rank >= n. */
CLPRIM_API clprim_status clprim_quantiles(clprim_context *ctx, size_t n, clprim_type type,
                                          clprim_buffer in, const uint64_t *ranks, size_t count,
                                          unsigned flags, clprim_value *values,
                                          clprim_buffer result);

/*! clprim_quantile_rank() :
 * The rank of quantile q (0 <= q <= 1) of n elements: the rank nearest to
 * q (n - 1), a tie to the lower one, clamped to [0, n - 1] (0 for n = 0 or
 * a NaN q). So clprim_quantile_rank(n, 0.5) is the median's rank
 * (n - 1) / 2, the lower median for even n (clprim_median). E.g. the 99th
 * percentile of n: clprim_quantile_rank(n, 0.99). (0.2 rounded ties up.)
 * @return : the rank. */
CLPRIM_API uint64_t clprim_quantile_rank(uint64_t n, double q);

/*! clprim_nth_element_approx() :
 * An element whose rank is near k, from one level of bucketing (one pass
 * over the data plus small work): a sampled splitter next to the bucket
 * that holds rank k, to *value and / or `result` (one element of type).
 * *rank_error (may be NULL) receives the exact distance between k and the
 * nearest rank that the returned element holds (0: it is the exact answer).
 * Inputs of at most 2048 elements are answered exactly. With random
 * splitters the error is typically below n / 256. Waits for the device.
 * @return : as clprim_nth_element(). */
CLPRIM_API clprim_status clprim_nth_element_approx(clprim_context *ctx, size_t n,
                                                   clprim_type type, clprim_buffer in,
                                                   uint64_t k, unsigned flags,
                                                   clprim_value *value, uint64_t *rank_error,
                                                   clprim_buffer result);

/*! clprim_topk() :
 * The k largest (CLPRIM_TOPK_SMALLEST: smallest) of the n elements of in,
 * 0 <= k <= n (n = 0 with k = 0 is the empty result): their values to
 * `values` (k elements) and / or their positions in in to `indices` (k
 * uint32, or uint64 with CLPRIM_INDICES_64). Elements equal to the k-th
 * best are taken from the lowest indices, so the result is deterministic.
 * The order is the input order by default; with CLPRIM_TOPK_SORTED best
 * first, equal elements by index. NaN is the largest element (see above).
 * k = 0 writes nothing. Returns once the work is enqueued (after the
 * threshold's small reads).
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for k > n,
 *           neither output, a NaN with CLPRIM_NTH_REJECT_NAN;
 *           CLPRIM_ERROR_SIZE_TOO_LARGE. */
CLPRIM_API clprim_status clprim_topk(clprim_context *ctx, size_t n, clprim_type type,
                                     clprim_buffer in, uint64_t k, unsigned flags,
                                     clprim_buffer values, clprim_buffer indices);

/* ------------------------------------- selection and top-k per segment */

/* Top-k and selection by rank in every segment at once (per-row top-k of a
 * batch): segments given by offsets (segment s is elements
 * [begin_offsets[s], end_offsets[s]), element offsets of offset_type,
 * CLPRIM_UINT32 or CLPRIM_UINT64, on the device (see "Offsets" at the
 * segmented reductions), begin <= end <= n, empty segments allowed, as
 * clprim_segmented_sort_keys)
 * or as rows of a matrix (row r is elements [r row_length, (r + 1)
 * row_length)). Order and ties as clprim_topk and clprim_nth_element.
 * Segments up to a length (the larger of 2^16 and n / (2 compute units))
 * are done one work-group each (radix selection in the work-group); longer
 * ones one after another by clprim_topk / clprim_nth_element on a copy.
 * n must be below 2^32 (CLPRIM_ERROR_SIZE_TOO_LARGE otherwise).
 * With offsets, the segments are checked on the device before anything is
 * written (CLPRIM_ERROR_INVALID_ARGUMENT for begin > end or end > n). Waits
 * for the device when there are long segments (their bounds are read). With
 * long segments, or with CLPRIM_TOPK_SORTED and k above 1024 (rows sorted
 * afterwards), the calls write in steps (see the top of this file): the
 * work-groups' rows, then each long segment's or the sort. */

/*! clprim_segmented_topk(), clprim_batched_topk() :
 * The k largest (CLPRIM_TOPK_SMALLEST: smallest) of each segment, to row s
 * of the outputs: values[s k + j] (elements of type) and / or indices[s k +
 * j] (the position in the segment, uint32 or uint64 with CLPRIM_INDICES_64)
 * for j < min(k, length of segment s). A segment shorter than k gives all
 * its elements (k is clamped per segment) and the rest of its row is not
 * written; an empty segment writes nothing. Each row is in input order, or
 * best first with CLPRIM_TOPK_SORTED (equal elements by index); elements
 * equal to the k-th best are taken from the lowest indices. k = 0 writes
 * nothing. The outputs hold segments * k elements.
 * Flags: CLPRIM_TOPK_SMALLEST, CLPRIM_TOPK_SORTED, CLPRIM_INDICES_64.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for neither
 *           output, other flags (CLPRIM_NTH_REJECT_NAN is not taken), a bad
 *           segment or offset_type; CLPRIM_ERROR_SIZE_TOO_LARGE. */
CLPRIM_API clprim_status clprim_segmented_topk(clprim_context *ctx, size_t n, clprim_type type,
                                               clprim_buffer in, size_t segments,
                                               clprim_type offset_type, clprim_buffer begin_offsets,
                                               clprim_buffer end_offsets, uint64_t k,
                                               unsigned flags, clprim_buffer values,
                                               clprim_buffer indices);
CLPRIM_API clprim_status clprim_batched_topk(clprim_context *ctx, size_t rows, size_t row_length,
                                             clprim_type type, clprim_buffer in, uint64_t k,
                                             unsigned flags, clprim_buffer values,
                                             clprim_buffer indices);

/*! clprim_segmented_nth_element(), clprim_batched_nth_element() :
 * result[s] (one element of type per segment) gets the element of rank
 * min(k, length - 1) of segment s: k is clamped per segment to its largest
 * element; an empty segment writes nothing. Values as clprim_nth_element
 * (a zero is returned as +0.0, a NaN as one quiet NaN). flags must be 0.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for a NULL
 *           result, flags, a bad segment or offset_type;
 *           CLPRIM_ERROR_SIZE_TOO_LARGE. */
CLPRIM_API clprim_status clprim_segmented_nth_element(clprim_context *ctx, size_t n,
                                                      clprim_type type, clprim_buffer in,
                                                      size_t segments, clprim_type offset_type,
                                                      clprim_buffer begin_offsets,
                                                      clprim_buffer end_offsets, uint64_t k,
                                                      unsigned flags, clprim_buffer result);
CLPRIM_API clprim_status clprim_batched_nth_element(clprim_context *ctx, size_t rows,
                                                    size_t row_length, clprim_type type,
                                                    clprim_buffer in, uint64_t k,
                                                    unsigned flags, clprim_buffer result);

/* ------------------------------------------------------------------ sort */

/* Radix sort (LSD, 8-bit digits) of keys of the six types, alone or with
 * 4- or 8-byte values, and argsort.
 * Order: ascending (CLPRIM_SORT_DESCENDING: descending) as the selection
 * calls order elements: -0.0 equals +0.0, every NaN is one value above +inf
 * (last ascending, first descending). Every sort is stable: equal keys (so
 * also -0.0 and +0.0, and NaNs) keep their input order, descending too. The
 * elements themselves are moved, so a -0.0 stays -0.0 and a NaN keeps its
 * bits.
 * Bit range: begin_bit <= end_bit <= the key's bits, both 0 for the whole
 * key. Integer keys then sort by those bits alone of their order key (as
 * CUB's begin_bit / end_bit: an unsigned key's own bits; a signed key with
 * its sign bit flipped, so the top bit orders negatives first); float keys
 * take only the whole key.
 * The input is only read, unless an output is the very range of its input:
 * then the sort is in place. Temporary memory (n keys and values, and
 * per-tile counts) comes from the context's scratch and stays there for
 * later calls. Returns once the work is enqueued (nothing is read back;
 * every digit of the bit range takes a pass, as CUB's: a narrower bit range
 * leaves out digits known to be equal).
 * NVIDIA: one pass per digit with decoupled look-back (Onesweep) up to
 * 2^30 keys; other devices and larger n: count, scan and scatter per digit.
 * Up to one tile (clprim_sort_tile(): 1024 to 4096 keys by device, key and
 * value size) one work-group sorts in local memory, with no read. */

/* Flags (OR them; 0 is the default). */
#define CLPRIM_SORT_DESCENDING 256u /* largest first */
/* clprim_argsort also takes CLPRIM_INDICES_64. */

/*! clprim_sort_tile() :
 * @return : the most keys of key_type (with a value of *value_type each;
 *           value_type NULL: keys alone) that one work-group sorts in local
 *           memory on this context: sorts of that many keys or fewer, and
 *           segments of that length or shorter, take one launch and no
 *           read; 0 for a NULL ctx, a key type that is none or that the
 *           device does not support, or a value type that is none. */
CLPRIM_API size_t clprim_sort_tile(const clprim_context *ctx, clprim_type key_type,
                                   const clprim_type *value_type);

/*! clprim_sort_keys() :
 * The n keys of keys_in, sorted, to keys_out (n keys; may be keys_in's
 * very range). n = 0 writes nothing.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for a bad
 *           bit range (begin_bit > end_bit, end_bit past the key, a partial
 *           range of float keys) or unknown flags. */
CLPRIM_API clprim_status clprim_sort_keys(clprim_context *ctx, size_t n, clprim_type type,
                                          clprim_buffer keys_in, unsigned begin_bit,
                                          unsigned end_bit, unsigned flags,
                                          clprim_buffer keys_out);

/*! clprim_sort_pairs() :
 * clprim_sort_keys(), with a value of value_type per key (any of the six
 * types, as unique_by_key and reduce_by_key take them; moved as bits, so
 * double values need no cl_khr_fp64): values_out[i] is the value that came
 * with keys_out[i]. keys_out may be keys_in's very range and values_out
 * values_in's.
 * @return : as clprim_sort_keys(); CLPRIM_ERROR_INVALID_ARGUMENT also for a
 *           value_type that is none. */
CLPRIM_API clprim_status clprim_sort_pairs(clprim_context *ctx, size_t n, clprim_type key_type,
                                           clprim_buffer keys_in, clprim_type value_type,
                                           clprim_buffer values_in, unsigned begin_bit,
                                           unsigned end_bit, unsigned flags,
                                           clprim_buffer keys_out, clprim_buffer values_out);

/*! clprim_argsort() :
 * The permutation that sorts keys_in: indices[i] is the position in keys_in
 * of the i-th key in sorted order (n uint32, or uint64 with
 * CLPRIM_INDICES_64), made on the device (no index array is read); keys_out
 * (clprim_buf(NULL) for none) receives the sorted keys. Stable, so equal
 * keys give ascending indices.
 * @return : as clprim_sort_keys(); CLPRIM_ERROR_SIZE_TOO_LARGE for n >= 2^32
 *           with uint32 indices. */
CLPRIM_API clprim_status clprim_argsort(clprim_context *ctx, size_t n, clprim_type type,
                                        clprim_buffer keys_in, unsigned begin_bit,
                                        unsigned end_bit, unsigned flags, clprim_buffer indices,
                                        clprim_buffer keys_out);

/*! clprim_segmented_sort_keys(), clprim_segmented_sort_pairs() :
 * Sorts each of `segments` segments of the n keys (and values) on its own,
 * as clprim_sort_keys() / clprim_sort_pairs() over the whole key: segment s
 * is elements [begin_offsets[s], end_offsets[s]) (element offsets of
 * offset_type, CLPRIM_UINT32 or CLPRIM_UINT64, on the device, see "Offsets"
 * at the segmented reductions; begin <= end <= n; empty segments are
 * allowed). Segments must
 * not overlap (overlapping ones give unspecified results, written within
 * their bounds); output elements outside every segment are not written.
 * Segments of up to one tile are sorted one work-group each in local
 * memory; longer ones by the device-wide sort, one after another (then the
 * call writes in steps, see the top of this file: the short segments, then
 * each long one). Waits for the device (one small read: the long segments).
 * @return : as clprim_sort_keys() / clprim_sort_pairs();
 *           CLPRIM_ERROR_INVALID_ARGUMENT also for a segment with
 *           begin > end or end > n (found on the device before anything is
 *           written) and for a bad offset_type. */
CLPRIM_API clprim_status clprim_segmented_sort_keys(clprim_context *ctx, size_t n, clprim_type type,
                                                    clprim_buffer keys_in, size_t segments,
                                                    clprim_type offset_type,
                                                    clprim_buffer begin_offsets,
                                                    clprim_buffer end_offsets, unsigned flags,
                                                    clprim_buffer keys_out);
CLPRIM_API clprim_status clprim_segmented_sort_pairs(
    clprim_context *ctx, size_t n, clprim_type key_type, clprim_buffer keys_in,
    clprim_type value_type, clprim_buffer values_in, size_t segments, clprim_type offset_type,
    clprim_buffer begin_offsets, clprim_buffer end_offsets, unsigned flags, clprim_buffer keys_out,
    clprim_buffer values_out);

/* ---------------------------------------------------------------- search */

/* Vectorised binary search (Thrust's lower_bound / upper_bound /
 * equal_range): for each of needles_n needles, a position in a haystack of
 * haystack_n elements of the same type, sorted as clprim_sort_keys() sorts
 * them: ascending, or descending with CLPRIM_SORT_DESCENDING; -0.0 equals
 * +0.0 and every NaN is one value above +inf (last ascending, first
 * descending). The haystack is not checked: an unsorted one gives
 * unspecified positions, each in [0, haystack_n].
 * Positions are uint32, or uint64 with CLPRIM_INDICES_64 (which haystack_n
 * > UINT32_MAX needs: a position may be haystack_n). An empty haystack
 * gives 0 for every needle; needles_n = 0 writes nothing. Outputs may not
 * overlap the inputs or each other; the haystack and the needles may be
 * the same range. One work-item per needle searches a sample of the
 * haystack kept in local memory, then about log2(haystack_n / 1024)
 * elements of the haystack itself. Returns once the work is enqueued.
 * Flags: CLPRIM_SORT_DESCENDING, CLPRIM_INDICES_64. */

/*! clprim_lower_bound() :
 * out[i] = the first position in the haystack whose element is not ordered
 * before needles[i] (haystack_n when there is none): where needles[i] would
 * be inserted before its equals.
 * @return : CLPRIM_SUCCESS once the work is enqueued;
 *           CLPRIM_ERROR_INVALID_ARGUMENT also for unknown flags;
 *           CLPRIM_ERROR_SIZE_TOO_LARGE for haystack_n > UINT32_MAX with
 *           uint32 positions. */
CLPRIM_API clprim_status clprim_lower_bound(clprim_context *ctx, size_t haystack_n,
                                            clprim_type type, clprim_buffer haystack,
                                            size_t needles_n, clprim_buffer needles,
                                            unsigned flags, clprim_buffer out);

/*! clprim_upper_bound() :
 * out[i] = the first position in the haystack whose element is ordered
 * after needles[i] (haystack_n when there is none): where needles[i] would
 * be inserted after its equals.
 * @return : as clprim_lower_bound(). */
CLPRIM_API clprim_status clprim_upper_bound(clprim_context *ctx, size_t haystack_n,
                                            clprim_type type, clprim_buffer haystack,
                                            size_t needles_n, clprim_buffer needles,
                                            unsigned flags, clprim_buffer out);

/*! clprim_equal_range() :
 * Both bounds in one launch: lower[i] as clprim_lower_bound(), upper[i] as
 * clprim_upper_bound(), so the haystack's elements equal to needles[i] are
 * [lower[i], upper[i]). Either output may be clprim_buf(NULL), not both.
 * @return : as clprim_lower_bound(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           no output. */
CLPRIM_API clprim_status clprim_equal_range(clprim_context *ctx, size_t haystack_n,
                                            clprim_type type, clprim_buffer haystack,
                                            size_t needles_n, clprim_buffer needles,
                                            unsigned flags, clprim_buffer lower,
                                            clprim_buffer upper);

/* ---------------------------------------------------- gather and scatter */

/* Elements moved by index (Thrust's gather and scatter): elements of
 * elem_size bytes, 1 to 64 (any clprim_type's size, or a struct of your
 * own; moved as bits, so double needs no cl_khr_fp64), by indices of
 * index_type, CLPRIM_UINT32 or CLPRIM_UINT64. Offsets of in and out count
 * elements of elem_size bytes, those of indices elements of index_type.
 * Every index is compared with its range's count on the device, so no
 * kernel reads or writes outside the ranges: without
 * CLPRIM_CHECK_INDICES an index out of range is skipped (gather: out[i]
 * keeps what it held; scatter: nothing is written for it). With
 * CLPRIM_CHECK_INDICES the call first checks every index on the device
 * and reads the verdict back (the call then waits for the device), and an
 * index out of range fails the call with CLPRIM_ERROR_INVALID_ARGUMENT and
 * nothing written; clprim_context_last_error() names the first such
 * position ("gather: indices[17] (1000) is out of range: in_count is
 * 100"). n = 0 writes nothing. out may not overlap in or indices; in and
 * indices may overlap. Elements move as the widest of 16, 8, 4, 2 or 1
 * bytes that divides elem_size.
 * Flags: CLPRIM_CHECK_INDICES. */
#define CLPRIM_CHECK_INDICES 4096u /* refuse an index out of range (the call waits) */

/*! clprim_gather() :
 * out[i] = in[indices[i]] for i < n, where in holds in_count elements
 * (one launch writes out; with CLPRIM_CHECK_INDICES a check and a read of
 * its verdict come first). Returns once the work is enqueued, except with
 * CLPRIM_CHECK_INDICES.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           elem_size outside 1 to 64, an index_type other than
 *           CLPRIM_UINT32 and CLPRIM_UINT64, unknown flags, and with
 *           CLPRIM_CHECK_INDICES an index not below in_count (nothing
 *           written). */
CLPRIM_API clprim_status clprim_gather(clprim_context *ctx, size_t n, size_t elem_size,
                                       clprim_buffer in, size_t in_count, clprim_type index_type,
                                       clprim_buffer indices, unsigned flags, clprim_buffer out);

/*! clprim_scatter() :
 * out[indices[i]] = in[i] for i < n, where out holds out_count elements;
 * the others of out keep what they held. Where several i have the same
 * index, one of them wins, whole (unspecified which). Elements of 4 bytes
 * (and of 8, where the device has cl_khr_int64_base_atomics) are written
 * by one launch of atomic exchanges; other sizes first mark a winner per
 * target in the context's scratch (4 bytes per element of out), then a
 * second launch writes the winners; above 2^31 elements such a scatter
 * writes in steps of 2^31 elements, one pair of launches each. Returns
 * once the work is enqueued, except with CLPRIM_CHECK_INDICES.
 * @return : as clprim_gather(), an index not below out_count being the
 *           one out of range. */
CLPRIM_API clprim_status clprim_scatter(clprim_context *ctx, size_t n, size_t elem_size,
                                        clprim_buffer in, clprim_type index_type,
                                        clprim_buffer indices, unsigned flags, clprim_buffer out,
                                        size_t out_count);

/* ----------------------------------------------------------------- merge */

/* The stable merge of two sorted ranges (Thrust's merge and merge_by_key,
 * CUB's DeviceMerge): range a of na elements and range b of nb elements,
 * each sorted as clprim_sort_keys() sorts them: ascending, or descending
 * with CLPRIM_SORT_DESCENDING; -0.0 equals +0.0 and every NaN is one value
 * above +inf (last ascending, first descending). The output's na + nb
 * elements are both ranges in that order; among equal keys a's come first,
 * then b's, each range's in its own order (so merging the two halves of a
 * stably sorted halves of an array gives its stable sort). Elements are moved
 * as they are: -0.0 stays -0.0 and a NaN keeps its bits. The ranges are not
 * checked: an unsorted one gives an output in an unspecified order (every
 * output element is still written, with elements of a and b). Outputs must
 * not overlap the inputs. Returns once the work is enqueued (merge path:
 * two launches, the second writing every output; keys alone with an empty
 * range: a copy). Flags:
 * CLPRIM_SORT_DESCENDING. */

/*! clprim_merge_keys() :
 * out[0, na + nb) = the merge of a[0, na) and b[0, nb).
 * @return : CLPRIM_SUCCESS once the work is enqueued;
 *           CLPRIM_ERROR_INVALID_ARGUMENT also for unknown flags;
 *           CLPRIM_ERROR_SIZE_TOO_LARGE for na + nb above SIZE_MAX. */
CLPRIM_API clprim_status clprim_merge_keys(clprim_context *ctx, size_t na, size_t nb,
                                           clprim_type type, clprim_buffer a, clprim_buffer b,
                                           unsigned flags, clprim_buffer out);

/*! clprim_merge_pairs() :
 * clprim_merge_keys() of keys_a and keys_b, with a value of value_type per
 * key (any of the six types, moved as bits, so double values need no
 * cl_khr_fp64): values_out[i] is the value that came with keys_out[i].
 * @return : as clprim_merge_keys(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           a value_type that is none. */
CLPRIM_API clprim_status clprim_merge_pairs(clprim_context *ctx, size_t na, size_t nb,
                                            clprim_type key_type, clprim_buffer keys_a,
                                            clprim_buffer keys_b, clprim_type value_type,
                                            clprim_buffer values_a, clprim_buffer values_b,
                                            unsigned flags, clprim_buffer keys_out,
                                            clprim_buffer values_out);

/*! clprim_merge_runs_keys() :
 * out[0, n) = the stable merge of `runs` sorted runs of keys (each sorted
 * as clprim_merge_keys() takes them): run r is keys[offsets[r],
 * offsets[r + 1]), with offsets `runs` + 1 values on the host, from 0, not
 * decreasing, to n. Among equal keys a lower run's come first, each run's
 * in its own order (a k-way merge, as of the pieces a sample sort
 * receives). ceil(log2 runs) rounds of pairwise merges, each as
 * clprim_merge_keys(); rounds before the last write to the context's
 * scratch (n keys, and n more from 3 rounds on), so only the last writes
 * out. runs = 0 needs n = 0; one run is a copy. Flags:
 * CLPRIM_SORT_DESCENDING. Returns once the work is enqueued.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for offsets
 *           that are NULL (runs > 0), do not start at 0, decrease or do
 *           not end at n, and unknown flags. */
CLPRIM_API clprim_status clprim_merge_runs_keys(clprim_context *ctx, size_t n, clprim_type type,
                                                clprim_buffer keys, size_t runs,
                                                const uint64_t *offsets, unsigned flags,
                                                clprim_buffer out);

/*! clprim_merge_runs_pairs() :
 * clprim_merge_runs_keys() with a value of value_type per key (moved as
 * bits): values_out[i] is the value that came with keys_out[i].
 * @return : as clprim_merge_runs_keys(); CLPRIM_ERROR_INVALID_ARGUMENT
 *           also for a value_type that is none. */
CLPRIM_API clprim_status clprim_merge_runs_pairs(clprim_context *ctx, size_t n,
                                                 clprim_type key_type, clprim_buffer keys,
                                                 clprim_type value_type, clprim_buffer values,
                                                 size_t runs, const uint64_t *offsets,
                                                 unsigned flags, clprim_buffer keys_out,
                                                 clprim_buffer values_out);

/* ------------------------------------------ user types and operators */

/* Your own element type and associative operator, written in OpenCL C,
 * for scans and reductions (Thrust's and CUB's functors, PyOpenCL's
 * GenericScanKernel). An operator is made once on a context and used by
 * any number of calls on it; its kernels are built when it is made, kept
 * with the context's programs and in the disk cache like every program.
 *
 * In the calls below, x ∘ y is the operator's combine applied as
 * combine(a = x, b = y). Results are defined for an associative operator:
 * (x ∘ y) ∘ z == x ∘ (y ∘ z); it need not be commutative (x ∘ y and y ∘ x
 * may differ: elements are combined in index order, with x on the left).
 * A non-associative operator (a float sum is only nearly associative) gives
 * a result in an unspecified grouping of the same sequence: it may differ
 * between devices, paths, sizes and offsets. The identity e must satisfy
 * e ∘ x == x ∘ e == x; it fills the ends of tiles, so a wrong one gives
 * wrong results. A pipeline's maps and reductions take operators too
 * (clprim_pipeline_map_op, clprim_pipeline_reduce_op). */
typedef struct clprim_operator clprim_operator;

/* Up to 8 parameters of an operator, p0..p7 in its expressions (double, or
 * float on a device without cl_khr_fp64): set by clprim_operator_set_params
 * and passed as kernel arguments, so a new value builds nothing. */
#define CLPRIM_OPERATOR_PARAMS 8

typedef struct clprim_operator_desc {
  /* The element type's OpenCL C name: a built-in ("float", "int",
   * "float2", "uchar") or one that `source` defines ("stats"). */
  const char *type;
  /* The host's sizeof and alignof of an element: size 1 to 64, align a
   * power of two that divides size. Checked on the device when the
   * operator is made: a type whose size or alignment differs there is
   * refused (CLPRIM_ERROR_OPERATOR_LAYOUT), so host and device agree on
   * every byte of an element. */
  size_t size, align;
  /* NULL, or OpenCL C put before the operator: the type's definition and
   * helper functions (any text; macros and names starting with clprim_ or
   * CLPRIM_ are the library's). */
  const char *source;
  /* One OpenCL C expression of a and b (both of the type, const) and
   * p0..p7, giving a ∘ b in the type; e.g. "a + b",
   * "(float2)(fmax(a.x + b.y, b.x), a.y + b.y)", "stats_merge(a, b)". */
  const char *combine;
  /* One OpenCL C expression of p0..p7 giving the identity in the type;
   * e.g. "0", "(float2)(-INFINITY, 0.0f)", "stats_zero()". */
  const char *identity;
} clprim_operator_desc;

/*! clprim_operator_create() :
 * Makes an operator from desc on ctx (desc's texts are copied). combine and
 * identity are each one expression, checked as a pipeline's expressions
 * are (no ';', braces, '#', comments or unbalanced parentheses: see
 * "pipeline"); source is not checked. Builds the operator's kernels (the
 * call waits), then checks the type's size and alignment on the device.
 * Parameters start at 0.
 * @return : CLPRIM_SUCCESS with *op set (free it with clprim_operator_free,
 *           before or after ctx); on failure *op is left as it was:
 *           CLPRIM_ERROR_INVALID_ARGUMENT for NULL arguments, a type name
 *           that is not one, a size or align out of range, or a refused
 *           expression; CLPRIM_ERROR_OPERATOR_LAYOUT for a size or
 *           alignment that differs on the device
 *           (clprim_context_last_error() gives both); a build error
 *           (CL_BUILD_PROGRAM_FAILURE) whose clprim_context_build_log()
 *           names the operator's texts as files: "operator-source",
 *           "operator-combine" and "operator-identity", with lines and
 *           columns in each text (on compilers that honour #line);
 *           CLPRIM_ERROR_CONTEXT_BUSY. */
CLPRIM_API clprim_status clprim_operator_create(clprim_operator **op, clprim_context *ctx,
                                                const clprim_operator_desc *desc);

/*! clprim_operator_free() :
 * Frees op (NULL is allowed). Calls already enqueued are not affected. */
CLPRIM_API void clprim_operator_free(clprim_operator *op);

/*! clprim_operator_set_params() :
 * Sets p0..p7 (params[0..7]; NULL: all 0) for the calls that follow.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL op. */
CLPRIM_API clprim_status clprim_operator_set_params(clprim_operator *op, const double *params);

/* In the calls below, op must have been made on ctx
 * (CLPRIM_ERROR_INVALID_ARGUMENT otherwise); in, out and result hold
 * elements of op's type, and their clprim_buffer offsets count such
 * elements. init points to one element in the host's layout (NULL: the
 * identity); its bytes are passed as a kernel argument, so it may change
 * or go away once the call returns. */

/*! clprim_reduce_op() :
 * init ∘ in[0] ∘ in[1] ∘ ... ∘ in[n-1] (init ∘ identity for n = 0).
 * Results: *result (op's size in bytes of host memory; the call waits)
 * and / or result_out, one element on the device.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT also for no
 *           result at all. */
CLPRIM_API clprim_status clprim_reduce_op(clprim_context *ctx, size_t n, const clprim_operator *op,
                                          clprim_buffer in, const void *init, void *result,
                                          clprim_buffer result_out);

/*! clprim_scan_inclusive_op(), clprim_scan_exclusive_op() :
 * Inclusive: out[i] = init ∘ in[0] ∘ ... ∘ in[i]. Exclusive: out[0] =
 * init, out[i] = init ∘ in[0] ∘ ... ∘ in[i-1]. out may be in's very range
 * (in place), not another overlapping one. n = 0 writes nothing.
 * @return : CLPRIM_SUCCESS once the work is enqueued. */
CLPRIM_API clprim_status clprim_scan_inclusive_op(clprim_context *ctx, size_t n,
                                                  const clprim_operator *op, clprim_buffer in,
                                                  const void *init, clprim_buffer out);
CLPRIM_API clprim_status clprim_scan_exclusive_op(clprim_context *ctx, size_t n,
                                                  const clprim_operator *op, clprim_buffer in,
                                                  const void *init, clprim_buffer out);

/*! clprim_scan_inclusive_by_key_op(), clprim_scan_exclusive_by_key_op() :
 * The scans above restarted at each run of equal consecutive keys
 * (key_type; runs as clprim_scan_inclusive_by_key() finds them: keys
 * compared with ==, each NaN a run of its own, -0.0 == +0.0), every run
 * from init: for i in a run that starts at h,
 *   inclusive: out[i] = init ∘ values[h] ∘ ... ∘ values[i]
 *   exclusive: out[i] = init ∘ values[h] ∘ ... ∘ values[i-1]   (init at h)
 * (init NULL: the identity). out may be the values' range (in place), not
 * the keys'. n = 0 writes nothing.
 * @return : CLPRIM_SUCCESS once the work is enqueued;
 *           CLPRIM_ERROR_INVALID_ARGUMENT also for out on the keys. */
CLPRIM_API clprim_status clprim_scan_inclusive_by_key_op(clprim_context *ctx, size_t n,
                                                         clprim_type key_type, clprim_buffer keys,
                                                         const clprim_operator *op,
                                                         clprim_buffer values, const void *init,
                                                         clprim_buffer out);
CLPRIM_API clprim_status clprim_scan_exclusive_by_key_op(clprim_context *ctx, size_t n,
                                                         clprim_type key_type, clprim_buffer keys,
                                                         const clprim_operator *op,
                                                         clprim_buffer values, const void *init,
                                                         clprim_buffer out);

/*! clprim_segmented_reduce_op() :
 * out[s] (segments elements of op's type) = init ∘ in[b] ∘ ... ∘ in[e -
 * 1] for segment s = [b, e) = [begin_offsets[s], end_offsets[s]): init
 * (or the identity) for an empty one. Offsets as every segmented call
 * takes them (see "Segmented reductions"): checked on the device before
 * anything is written (the call waits for the check). A work-group a
 * segment (a work-item on the cpu path).
 * @return : CLPRIM_SUCCESS once the work is enqueued (after the check's
 *           read); CLPRIM_ERROR_INVALID_ARGUMENT also for bad segments or a
 *           bad offset_type. */
CLPRIM_API clprim_status clprim_segmented_reduce_op(clprim_context *ctx, size_t n,
                                                    const clprim_operator *op, clprim_buffer in,
                                                    size_t segments, clprim_type offset_type,
                                                    clprim_buffer begin_offsets,
                                                    clprim_buffer end_offsets, const void *init,
                                                    clprim_buffer out);

/*! clprim_reduce_by_key_op() :
 * Reduce-by-key over runs with op: each maximal run of equal consecutive
 * keys (key_type, compared as clprim_reduce_by_key() compares them) is a
 * segment; writes, in order, each segment's key to unique_keys and init ∘
 * values[b] ∘ ... ∘ values[e - 1] to sums (elements of op's type), and
 * the number of segments to *count (the call waits) and / or count_out
 * (one uint64 on the device). unique_keys and sums must hold n elements
 * whatever the count; only the first count are written. n = 0 gives a
 * count of 0. Writes in steps (see the top of this file): the keys and the
 * count (the runs found as clprim_unique_by_key() finds them), then the
 * sums, a work-group a run (so a few very long runs take few work-groups).
 * @return : CLPRIM_SUCCESS once the work is enqueued (and the count read
 *           when count is given). */
CLPRIM_API clprim_status clprim_reduce_by_key_op(clprim_context *ctx, size_t n,
                                                 clprim_type key_type, clprim_buffer keys,
                                                 const clprim_operator *op, clprim_buffer values,
                                                 const void *init, clprim_buffer unique_keys,
                                                 clprim_buffer sums, uint64_t *count,
                                                 clprim_buffer count_out);

/*! clprim_adjacent_difference_op() :
 * out[0] = in[0], and out[i] = combine(a = in[i], b = in[i-1]) for 0 < i <
 * n (CUB's SubtractLeft with combine "a - b"): each element with its left
 * neighbour. The operator need not be associative here, and its identity is
 * not used. out may not overlap in. n = 0 writes nothing.
 * @return : CLPRIM_SUCCESS once the work is enqueued. */
CLPRIM_API clprim_status clprim_adjacent_difference_op(clprim_context *ctx, size_t n,
                                                       const clprim_operator *op,
                                                       clprim_buffer in, clprim_buffer out);

/* -------------------------------------------------------------- pipeline */

/* A pipeline: map -> filter -> ... -> one terminal over device arrays, the
 * stages fused into the kernels the terminal runs (filter -> count, sum, min
 * and max never store the filtered array; filter -> collect is select's
 * compaction with the stages as its predicate).
 *
 * Inputs: 1 to 4 arrays of the same length n (a zip), each of any
 * clprim_type, given to each run. In expressions they are a, b, c, d (the
 * element of each at index i).
 * Stages, in the order added:
 *   map: a new current element x of a declared type, from an OpenCL C
 *     expression (converted to that type as by a cast); or of a user
 *     operator's type (clprim_pipeline_map_op: see "user types and
 *     operators"), whose definition and helpers every later stage sees;
 *   filter: the element goes on only where a condition holds: a built-in
 *     predicate on x (its a and b in x's type), an input being nonzero
 *     (flags), or an expression (nonzero passes).
 * Before the first map x is a. Expressions see x, a..d (as the pipeline was
 * created with), i (ulong, the element's index) and the parameters p0..p7
 * (double, or float on a device without cl_khr_fp64), which each run sets:
 * a new parameter rebuilds nothing (clprim_context_programs_made()).
 * An expression is one OpenCL C expression: it may not hold ';', '{', '}',
 * '#', a backslash, a comment, a string or character literal, a digraph or
 * trigraph, or unbalanced parentheses / brackets (CLPRIM_ERROR_INVALID_
 * ARGUMENT when added: so no expression reaches outside the generated
 * function). An expression that does not compile makes the run fail with
 * the compiler's status (CL_BUILD_PROGRAM_FAILURE) and a build log that
 * quotes it: "expression:LINE:COLUMN: message" (line and column in the
 * expression's own text), the expression, a caret under the column, and the
 * stage.
 * Terminals (one; setting one replaces the last):
 *   collect (values and / or original indices, input order), count, a
 *   reduction (sum, min, max, argmax, argmin), a reduction with a user
 *   operator (reduce_op), an even histogram, the elements of ranks
 *   (nth_element, quantiles) or top-k of the passing elements. An x of a
 *   user operator's type goes to count and reduce_op only (the others fail
 *   the run with CLPRIM_ERROR_INVALID_ARGUMENT and a text); a map to a
 *   built-in type ("x.mean") may come first.
 * Results stay in device buffers that the pipeline owns (clprim_pipeline_
 * output) until the next run or clprim_pipeline_free(); the host reads them
 * only when asked (clprim_pipeline_read...), and they can be the input of
 * another pipeline or any clprim call. The generated source of a pipeline
 * shape (stages, types, terminal) is built once per context, and kept in
 * the disk cache as every program is. */
typedef struct clprim_pipeline clprim_pipeline;

/*! clprim_pipeline_create() :
 * *pipe: a pipeline on ctx over `inputs` (1 to 4) arrays of types[0..inputs-1],
 * with no stage yet. ctx must outlive the pipeline.
 * @return : CLPRIM_SUCCESS and *pipe set; else *pipe as it was and
 *           CLPRIM_ERROR_INVALID_ARGUMENT (NULL arguments, inputs out of
 *           range, a bad type), CLPRIM_ERROR_UNSUPPORTED_TYPE, or
 *           CLPRIM_ERROR_OUT_OF_HOST_MEMORY. */
CLPRIM_API clprim_status clprim_pipeline_create(clprim_pipeline **pipe, clprim_context *ctx,
                                                unsigned inputs, const clprim_type *types);

/*! clprim_pipeline_free() :
 * Releases the pipeline and its result buffers. NULL is allowed.
 * @return : nothing. */
CLPRIM_API void clprim_pipeline_free(clprim_pipeline *pipe);

/*! clprim_pipeline_map() :
 * Adds a map: x becomes `expression` converted to type (at most 16
 * stages in all).
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe or
 *           expression, a rejected expression (see above), a bad type, too
 *           many stages; CLPRIM_ERROR_UNSUPPORTED_TYPE. */
CLPRIM_API clprim_status clprim_pipeline_map(clprim_pipeline *pipe, clprim_type type,
                                             const char *expression);

/*! clprim_pipeline_map_op() :
 * Adds a map: x becomes `expression`, an element of op's type (a user
 * operator made on the pipeline's context: see "user types and
 * operators"). For a type of a clprim_type's OpenCL C name and size
 * ("float", "int", ...) the expression is converted as by a cast, and x
 * then has that clprim_type; for any other type ("stats", "float2") it is
 * not converted, so it must have the type already: a helper of op's
 * source, "stats_of(x)" (a compound literal's braces are refused, as in
 * every expression), or a vector literal "(float2)(x, 0.0f)". op's
 * source (its type and helpers) then comes before every stage's
 * expression: later filters read x's fields ("x.n > 1"), a later
 * clprim_pipeline_map makes a built-in x of them ("x.mean"). A pipeline
 * has one operator: its maps by an operator and clprim_pipeline_reduce_op
 * take the same (the same source, combine and identity). op's texts are
 * copied: op may be freed after the call. The expression's build log is a
 * map's (see above).
 * @return : as clprim_pipeline_map(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           a NULL op, an op of another context, and another operator than
 *           the pipeline's maps by an operator use. */
CLPRIM_API clprim_status clprim_pipeline_map_op(clprim_pipeline *pipe, const clprim_operator *op,
                                                const char *expression);

/*! clprim_pipeline_filter() :
 * Adds a filter by a built-in predicate on x (see "select"; a and b are
 * members of x's type, fixed when added).
 * @return : as clprim_pipeline_map(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           a NULL or bad predicate, MASK_EQ on floats, more than 4 built-in
 *           predicates, an x of a user operator's type (filter it with
 *           clprim_pipeline_filter_expr). */
CLPRIM_API clprim_status clprim_pipeline_filter(clprim_pipeline *pipe,
                                                const clprim_predicate *pred);

/*! clprim_pipeline_filter_flags() :
 * Adds a filter: the element passes where input `input` (0 for a, ...) is
 * nonzero.
 * @return : as clprim_pipeline_map(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           an input the pipeline does not have. */
CLPRIM_API clprim_status clprim_pipeline_filter_flags(clprim_pipeline *pipe, unsigned input);

/*! clprim_pipeline_filter_expr() :
 * Adds a filter: the element passes where `expression` is nonzero.
 * @return : as clprim_pipeline_map(). */
CLPRIM_API clprim_status clprim_pipeline_filter_expr(clprim_pipeline *pipe,
                                                     const char *expression);

/* What collect and top-k write (OR them; with CLPRIM_INDICES_64). */
#define CLPRIM_PIPE_VALUES_WANTED 512u
#define CLPRIM_PIPE_INDICES_WANTED 1024u

/* The reductions of clprim_pipeline_reduce(). */
typedef enum clprim_pipeline_reduction {
  CLPRIM_PIPE_SUM = 0,
  CLPRIM_PIPE_MIN = 1,
  CLPRIM_PIPE_MAX = 2,
  CLPRIM_PIPE_ARGMIN = 3,
  CLPRIM_PIPE_ARGMAX = 4
} clprim_pipeline_reduction;

/*! clprim_pipeline_collect() :
 * Terminal: the passing elements (x) in input order to the output
 * CLPRIM_PIPE_OUT_VALUES and / or their indices in the inputs to
 * CLPRIM_PIPE_OUT_INDICES (uint32; uint64 with CLPRIM_INDICES_64, which
 * n > 2^32 needs), and their count to CLPRIM_PIPE_OUT_COUNT. flags: at
 * least one of CLPRIM_PIPE_VALUES_WANTED, CLPRIM_PIPE_INDICES_WANTED, or 0
 * for the count alone.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe or
 *           unknown flags. */
CLPRIM_API clprim_status clprim_pipeline_collect(clprim_pipeline *pipe, unsigned flags);

/*! clprim_pipeline_count() :
 * Terminal: the number of passing elements, to CLPRIM_PIPE_OUT_COUNT,
 * without storing them.
 * @return : CLPRIM_SUCCESS, or CLPRIM_ERROR_INVALID_ARGUMENT (NULL pipe). */
CLPRIM_API clprim_status clprim_pipeline_count(clprim_pipeline *pipe);

/*! clprim_pipeline_reduce() :
 * Terminal: the sum, min, max, argmin or argmax of the passing elements x,
 * without storing them, to CLPRIM_PIPE_OUT_RESULT: two uint64, the
 * result's bits (a 32-bit x zero-extended) and, but for the sum, the index
 * of the (first) element chosen; UINT64_MAX and bits 0 when no element
 * passed (the sum is then 0). Sums as clprim_reduce_sum(), with its flag
 * CLPRIM_EXACT for float and double x (the exact sum of the passing
 * elements, rounded once; another x type fails the run with
 * CLPRIM_ERROR_INVALID_ARGUMENT); min / max / args with clprim_argmax()'s
 * rules and flags (CLPRIM_REDUCE_ABS, CLPRIM_REDUCE_NAN_LARGEST).
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe, a
 *           bad op or flags. */
CLPRIM_API clprim_status clprim_pipeline_reduce(clprim_pipeline *pipe,
                                                clprim_pipeline_reduction op, unsigned flags);

/*! clprim_pipeline_reduce_op() :
 * Terminal: init ∘ x_0 ∘ x_1 ∘ ... over the passing elements x, in index
 * order, with the user operator op (see "user types and operators"),
 * without storing them, to CLPRIM_PIPE_OUT_RESULT: one element of op's
 * type (op's size in bytes; read it with clprim_pipeline_read, not
 * clprim_pipeline_read_result); init ∘ identity when no element passes.
 * init points to one element in the host's layout (NULL: the identity),
 * copied by this call. op must be made on the pipeline's context and stay
 * alive while the pipeline may run it (its parameters are read at each
 * run: clprim_operator_set_params between runs builds nothing). x must
 * have op's type when the pipeline runs: a built-in x whose OpenCL C name
 * is op's type name ("float" for an int x is refused), or x of a map by
 * this operator (clprim_pipeline_map_op); else the run fails with
 * CLPRIM_ERROR_INVALID_ARGUMENT and a text that names both types.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe or
 *           op, an op of another context, or another operator than the
 *           pipeline's maps by an operator use. */
CLPRIM_API clprim_status clprim_pipeline_reduce_op(clprim_pipeline *pipe, const clprim_operator *op,
                                                   const void *init);

/*! clprim_pipeline_histogram() :
 * Terminal: the passing elements' histogram, as clprim_histogram_even()
 * (lo, hi: members of x's type), bins uint32 counts to
 * CLPRIM_PIPE_OUT_RESULT; their count to CLPRIM_PIPE_OUT_COUNT. The
 * passing elements are compacted first (into the pipeline's buffers).
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe or
 *           bins = 0 (the range is checked when run). */
CLPRIM_API clprim_status clprim_pipeline_histogram(clprim_pipeline *pipe, clprim_value lo,
                                                   clprim_value hi, size_t bins);

/*! clprim_pipeline_nth_element(), clprim_pipeline_quantiles() :
 * Terminal: among the m passing elements (ordered as clprim_nth_element()
 * orders them), the element of rank k, or of the ranks
 * clprim_quantile_rank(m, q[j]) for count quantiles q (copied), to
 * CLPRIM_PIPE_OUT_VALUES (elements of x's type, one per rank); m to
 * CLPRIM_PIPE_OUT_COUNT. Above 65536 elements (and below 2^32) the stages
 * run inside the selection's first counting and extracting passes, with no
 * compacted copy; smaller inputs are compacted first (into the pipeline's
 * buffers), then selected by clprim_quantiles().
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe, no
 *           quantiles, a q outside [0, 1]. A run with k >= m (or m = 0)
 *           fails with CLPRIM_ERROR_INVALID_ARGUMENT. */
CLPRIM_API clprim_status clprim_pipeline_nth_element(clprim_pipeline *pipe, uint64_t k);
CLPRIM_API clprim_status clprim_pipeline_quantiles(clprim_pipeline *pipe, const double *q,
                                                   size_t count);

/*! clprim_pipeline_topk() :
 * Terminal: the min(k, m) largest (CLPRIM_TOPK_SMALLEST: smallest) of the
 * m passing elements, as clprim_topk() (flags: CLPRIM_TOPK_SMALLEST,
 * CLPRIM_TOPK_SORTED, CLPRIM_INDICES_64), values to CLPRIM_PIPE_OUT_VALUES
 * and their indices in the inputs to CLPRIM_PIPE_OUT_INDICES; m to
 * CLPRIM_PIPE_OUT_COUNT. For 1 <= k <= 2048 on 32768 elements or more
 * (below 2^32) the stages run inside top-k's sample and its pass that
 * gathers the candidates, with no compacted copy, where the candidates are
 * at least k and not too many; otherwise (always when fewer than k pass)
 * the passing elements are compacted first.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe or
 *           unknown flags. */
CLPRIM_API clprim_status clprim_pipeline_topk(clprim_pipeline *pipe, uint64_t k, unsigned flags);

/*! clprim_pipeline_run() :
 * Runs the pipeline over n elements of each input (inputs[0..inputs-1],
 * ranges as every call takes them) with parameters params[0..7] (p0..p7;
 * NULL: all 0). The results go to the pipeline's outputs; the call waits
 * only where a terminal needs the count on the host (histogram,
 * selections, top-k). Builds the pipeline's programs on first use.
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe or
 *           inputs, no terminal, and as the terminal says; a build error
 *           (see above and clprim_context_build_log()), or the errors of
 *           every primitive. */
CLPRIM_API clprim_status clprim_pipeline_run(clprim_pipeline *pipe, size_t n,
                                             const clprim_buffer *inputs, const double *params);

/*! clprim_pipeline_run_counted() :
 * clprim_pipeline_run() over the elements i < *count of the n of each
 * input, where count is one uint64 on the device (such as another
 * pipeline's CLPRIM_PIPE_OUT_COUNT): a pipeline's result feeds the next
 * without the host reading its count; n is an upper bound (the inputs'
 * room). The kernels run over n elements and drop those at or past the
 * count, in a build of the pipeline's source of its own. A count above n
 * counts as n.
 * @return : as clprim_pipeline_run(); CLPRIM_ERROR_INVALID_ARGUMENT also for
 *           a NULL count buffer. */
CLPRIM_API clprim_status clprim_pipeline_run_counted(clprim_pipeline *pipe, size_t n,
                                                     const clprim_buffer *inputs,
                                                     clprim_buffer count, const double *params);

/* The outputs of a run (which terminal writes which: see the terminals). */
typedef enum clprim_pipeline_out {
  CLPRIM_PIPE_OUT_VALUES = 0,
  CLPRIM_PIPE_OUT_INDICES = 1,
  CLPRIM_PIPE_OUT_COUNT = 2, /* one uint64 */
  CLPRIM_PIPE_OUT_RESULT = 3
} clprim_pipeline_out;

/*! clprim_pipeline_type() :
 * @return : the type of x after the last stage (the type of
 *           CLPRIM_PIPE_OUT_VALUES and of reductions), or the first input's
 *           type; for an x of a user operator's type (clprim_pipeline_map_op
 *           with no built-in type), CLPRIM_TYPE_COUNT, which is no
 *           clprim_type (clprim_type_size() gives 0, clprim_type_name()
 *           "invalid", and calls refuse it); CLPRIM_INT32 for a NULL pipe. */
CLPRIM_API clprim_type clprim_pipeline_type(const clprim_pipeline *pipe);

/*! clprim_pipeline_output() :
 * The device buffer of an output of the last run (owned by the pipeline,
 * valid until its next run or free), for other calls to read without a
 * host round trip; *elements (may be NULL) receives the number of elements
 * it holds room for (the count, where the terminal has one, says how many
 * are written).
 * Takes the pipeline's context as the other pipeline calls do (so
 * CLPRIM_ERROR_CONTEXT_BUSY while another thread is in a call on it), and
 * a refusal has a text in clprim_context_last_error().
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT, with *mem and
 *           *elements untouched, for NULL arguments, a bad output, or one
 *           the last run's terminal did not write (or no run yet). */
CLPRIM_API clprim_status clprim_pipeline_output(const clprim_pipeline *pipe,
                                                clprim_pipeline_out which, cl_mem *mem,
                                                size_t *elements);

/*! clprim_pipeline_read() :
 * Reads `bytes` bytes of an output of the last run from byte `offset` to
 * host (the call waits). A read is not a primitive call:
 * clprim_context_last_time() and clprim_context_last_event() still describe
 * the run, and a wait list given by clprim_context_wait_for() is kept for
 * the next call.
 * @return : as clprim_pipeline_output(); CLPRIM_ERROR_BUFFER_TOO_SMALL for a
 *           range past the output's end; an OpenCL error. */
CLPRIM_API clprim_status clprim_pipeline_read(clprim_pipeline *pipe, clprim_pipeline_out which,
                                              size_t offset, size_t bytes, void *host);

/*! clprim_pipeline_read_result() :
 * The last run's reduce terminal (clprim_pipeline_reduce) as values:
 * *value (may be NULL) the result in x's type (clprim_pipeline_type), and
 * *index (may be NULL) the index of the element chosen: UINT64_MAX for
 * the sum, and when no element passed (the value is then 0). Waits, and is
 * not a primitive call (as clprim_pipeline_read).
 * @return : CLPRIM_SUCCESS; CLPRIM_ERROR_INVALID_ARGUMENT for a NULL pipe,
 *           both outputs NULL, another terminal (reduce_op too: read its
 *           result with clprim_pipeline_read), or no run yet. */
CLPRIM_API clprim_status clprim_pipeline_read_result(clprim_pipeline *pipe, clprim_value *value,
                                                     uint64_t *index);

/*! clprim_pipeline_read_count() :
 * The last run's count (CLPRIM_PIPE_OUT_COUNT) to *count, as
 * clprim_pipeline_read() of its 8 bytes.
 * @return : as clprim_pipeline_read(); CLPRIM_ERROR_INVALID_ARGUMENT for a
 *           NULL count. */
CLPRIM_API clprim_status clprim_pipeline_read_count(clprim_pipeline *pipe, uint64_t *count);

#ifdef __cplusplus
}
#endif
#endif /* CLPRIM_H */
