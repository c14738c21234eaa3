/*
 * core.h: the runtime every family and engine stands on (src/core/):
 * contexts and probing, a call's start and end and its buffer ranges,
 * programs and the disk cache, enqueues, scratch, launch shapes, tuning.
 * It knows no family and no engine. Not installed.
 *
 * A public call goes: argument checks (clprim__check_*) -> clprim__call_begin
 * -> ranges (clprim__range) -> cached kernels (clprim__kernels) -> arguments
 * (clprim__set_args) -> enqueue (clprim__enqueue) -> clprim__call_end.
 */
#ifndef CLPRIM_CORE_H
#define CLPRIM_CORE_H

#include "clprim/clprim.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

/* A device buffer that a family keeps between calls, grown on demand,
 * under a name the family gives it ("scan: tile sums 0"): each family owns
 * its names, so a family can call another (select calls scan) without the
 * callee overwriting the caller's temporaries. */
struct clprim_scratch_entry {
  char *name;
  cl_mem buf;
  size_t size;
  unsigned call; /* ctx->calls when buf was made (Oclgrind, see scratch.c) */
  void *host;    /* pinned host memory (clprim__scratch_host): buf's mapping */
  struct clprim_scratch_entry *next;
};

/* A kernel object of a built program, made on first use. */
struct clprim_kernel_entry {
  char *name;
  cl_kernel kernel;
  struct clprim_kernel_entry *next;
};

/* One built program (one kernel or a small group: see program.c): what
 * identifies it (file, the family's build options, the kernels it holds,
 * "" for the whole file, source prefix) and its kernel objects. */
struct clprim_program_entry {
  char *file, *options, *kernels, *prefix;
  cl_program program;
  struct clprim_kernel_entry *kernels_made;
  struct clprim_program_entry *next;
};

/* A kernel a call needs: kernel `name` of cl/<file>, built with `options`
 * (-D...) and `prefix` (source text put before the file, e.g. a user's
 * expression; NULL for none), for the context's path, in a program of its
 * own or, when `together` lists kernel names (space-separated, name among
 * them), in one program with those; the kernel object goes to *kernel. */
struct clprim_kernel_request {
  const char *file, *prefix, *options, *name, *together;
  cl_kernel *kernel;
  /* NULL, or on CPU devices (whole-file programs) the files built as one
   * program instead of `file` alone, space-separated in a fixed order: PoCL
   * 3.1 gave wrong selections with nth_element.cl built without topk.cl
   * beside it (CLPRIM__SELECTION_FILES). */
  const char *cpu_files;
  /* NULL, or on CPU devices the kernels of `file` built as one program
   * instead of the whole file (space-separated): a file whose kernels
   * serve calls that never run together (PoCL compiles and optimises
   * every kernel of a program in clBuildProgram, so each adds to every
   * call's first build). */
  const char *cpu_together;
};

/* ---- families (core/tuning.c, core/prebuild.c): what each family and
 * engine tells the core about itself, in one descriptor that the registry
 * (src/registry.c) lists and hands to every context it creates. The core
 * knows the descriptors' shape, never a family by name. */

/* A tunable of a family: its name after the family's in CLPRIM_TUNE
 * ("sort.items") and the values it takes. */
struct clprim_knob {
  const char *name;
  long long min, max;
};
#define CLPRIM__KNOBS_MAX 16
/* A row of a family's tuning table: where it holds (each field 0 or NULL:
 * anywhere) and the knobs it sets (bit k of `set`: value[k]). Rows apply in
 * order, so portable defaults come first and device rows after them;
 * `why` says where the row comes from (device, driver, date, gain). */
struct clprim_tuning_row {
  unsigned paths;              /* bits 1u << path */
  cl_device_type device_types; /* CL_DEVICE_TYPE_GPU, _CPU */
  const char *device;          /* a substring of the device's name ("H200") */
  unsigned key_bytes, value_bytes; /* value_bytes CLPRIM__NO_VALUES: keys alone */
  unsigned set;
  long long value[CLPRIM__KNOBS_MAX];
  const char *why;
};
#define CLPRIM__KNOB(k) (1u << (k))
#define CLPRIM__NO_VALUES 255u
/* The buffers of clprim_context_prebuild's dry runs (core/prebuild.c),
 * never read or written. */
struct clprim_dry {
  cl_mem in, in2, out, out2;
  size_t n;        /* elements a large dry run claims (in, out hold n * 8 bytes) */
  size_t max_bins; /* bins of the largest histogram dry run */
};
struct clprim_family {
  const char *name;
  const struct clprim_knob *knobs;
  unsigned knob_count;
  const struct clprim_tuning_row *table;
  unsigned rows;
  size_t state_size; /* bytes of the family's own state in each context */
  /* Dry runs of every plan for element type t (clprim_context_prebuild;
   * see core/prebuild.c), or NULL. */
  void (*prebuild)(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
};
/* A context's slot for each family: CLPRIM_TUNE's or the tests' values
 * (-1: the table's), and the family's state. */
struct clprim_family_slot {
  long long set[CLPRIM__KNOBS_MAX];
  void *state;
  /* The tuning file's rows for this family (core/tuning.c), applied after
   * the table's. */
  struct clprim_tuning_row *file_rows;
  unsigned file_row_count;
};

/* Requests gathered by clprim_context_prebuild's dry runs (owned copies). */
struct clprim_collect {
  struct clprim_kernel_request *requests;
  size_t count, room;
};
/* What clprim__kernels returns while collecting: the call stops there,
 * before anything is enqueued. Never returned by a public call. */
#define CLPRIM__COLLECTED ((clprim_status)-4900)

/* A caller's range in the call in progress (core/call.c): where it lies
 * (byte range [begin, end) of root, the buffer that caller is a sub-buffer
 * of, or caller) and the cl_mem that kernels use for it. */
struct clprim_range {
  cl_mem caller, root, mem;
  size_t at, bytes;  /* the range within caller */
  size_t begin, end; /* the range within root */
  int writes;        /* the call writes it */
  int sub;           /* mem is a sub-buffer of the call's own (released at its end) */
  int staged;        /* mem is a copy in scratch */
  int copy_back;     /* a staged output: copied to caller when the call succeeds */
  cl_mem *dest[2];   /* where the family keeps mem (updated if mem changes) */
  const char *name;  /* the argument's name, for an overlap's text */
};
#define CLPRIM__MAX_RANGES 8
#define CLPRIM__ERROR_TEXT 256 /* bytes of clprim_context_last_error()'s text */

struct clprim_context {
  cl_platform_id platform;
  cl_device_id device;
  cl_context cl_ctx;
  cl_command_queue queue;
  int profiling; /* queue has CL_QUEUE_PROFILING_ENABLE */

  clprim_device_info info; /* probed facts, info.path = chosen path */
  /* Paths whose extensions the device lists (bit 1u << path), before their
   * probe kernels ran: tells "not offered" from "failed its probe". */
  unsigned path_candidates;
  int probe_cached; /* the verdict came from the disk cache */
  /* Build options that select each path in clprim_device.h (a -cl-std=...
   * is added where the probe found it needed). */
  char path_options[CLPRIM_PATH_COUNT][160];

  char *cache_dir; /* NULL: no disk cache */
  char *build_log;
  struct clprim_program_entry *programs;

  struct clprim_scratch_entry *scratch;
  /* Outgrown scratch buffers, released with the context: a handle taken
   * earlier in a call stays valid when a later step grows the buffer. */
  cl_mem *retired;
  size_t retired_count, retired_room;
  struct clprim_zeros *zeros; /* Oclgrind: host zeros new scratch is written from */

  /* Events of the last public call: its first command's (profiling queues
   * only) and its last command's. */
  cl_event first_event, last_event;
  /* The caller's events that the next command waits for (clprim_context_wait_for). */
  cl_event *waits;
  cl_uint wait_count;

  /* The registry's families and engines, and this context's slot of each. */
  const struct clprim_family *const *families;
  unsigned family_count;
  struct clprim_family_slot *slots;
  /* The tuning file that was read (NULL: none), and $CLPRIM_TUNING_TABLES=
   * portable: the tables' rows that name a path, a device type or a device
   * are left out. */
  char *tuning_file;
  int tables_portable;
  int trace; /* $CLPRIM_TRACE: commands' times and the probe's verdicts on stderr */
  /* Set during clprim_context_prebuild: clprim__kernels collects, builds nothing. */
  struct clprim_collect *collect;

  /* core/call.c: 1 while a thread is in a call; the call's ranges. */
  atomic_int busy;
  /* clprim_options.wait_when_busy: callers take tickets and wait their
   * turn (next_ticket, serving) instead of getting CONTEXT_BUSY. */
  int wait_when_busy;
  pthread_mutex_t turn_lock;
  pthread_cond_t turn;
  unsigned long next_ticket, serving;
  /* The public call in progress ("scan_inclusive"), and the text of the
   * last call that failed ("" after one that succeeded):
   * clprim_context_last_error(). Written only by the thread that holds the
   * context. */
  const char *call_name;
  char last_error[CLPRIM__ERROR_TEXT];
  int nested; /* a public call made inside clprim_context_prebuild */
  struct clprim_range ranges[CLPRIM__MAX_RANGES];
  unsigned range_count;
  size_t base_align; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes */
  int oclgrind;   /* the device is Oclgrind's simulator (see scratch.c) */
  /* A CPU device that runs native kernels (CL_EXEC_NATIVE_KERNEL): the
   * count -> scan -> scatter passes scan their counts on the host's side, in
   * a native kernel, with no scan program to build (core/count_scan_scatter.c). */
  int native_kernels;
  /* The runtime keeps built programs in a disk cache of its own, and asking
   * it for a binary costs more than the build (PoCL, unless
   * POCL_KERNEL_CACHE=0: it generates every kernel of the program for any
   * local size, seconds on large programs): binaries go into clprim's disk
   * cache only while prebuilding (core/program.c). */
  int runtime_caches;
  int prebuilding; /* clprim_context_prebuild is building what it collected */
  /* Programs built at once, each by a thread of its own
   * (clprim_options.build_threads; core/program.c). */
  unsigned build_threads;
  /* clprim_context_prebuild_progress's callback while it builds, or NULL. */
  clprim_progress_fn progress;
  void *progress_user;
  unsigned calls; /* public calls begun (clprim__scratch_per_call) */
  /* Programs made for this context (compiled, or loaded from the disk
   * cache): clprim_context_programs_made(). */
  uint64_t programs_made;
};

/* ---- core/context.c */
/* clprim_context_create (queue NULL) and clprim_context_create_from_queue,
 * for the registry (src/registry.c), which gives every context its list of
 * families. */
clprim_status clprim__create(clprim_context **out, cl_command_queue queue,
                             const clprim_options *options,
                             const struct clprim_family *const *families, unsigned family_count);
/* The OpenCL C type name of a clprim_type ("int", "uint", ..., "double"). */
const char *clprim__cl_type(clprim_type type);
/* CLPRIM_SUCCESS for a valid type the device supports, else
 * CLPRIM_ERROR_INVALID_ARGUMENT (bad value) or CLPRIM_ERROR_UNSUPPORTED_TYPE,
 * with a text that names the argument (`name`, "key_type"). */
clprim_status clprim__check_type(clprim_context *ctx, const char *name, clprim_type type);
/* 1 when the device supports type (a valid one), with no text. */
int clprim__type_supported(const clprim_context *ctx, clprim_type type);
/* Checks the caller's buffer `name`: non-NULL, of ctx's cl_context, holding
 * at least `count` elements of elem_size bytes from element `offset`.
 * CLPRIM_ERROR_INVALID_ARGUMENT, CL_INVALID_CONTEXT,
 * CLPRIM_ERROR_BUFFER_TOO_SMALL, CLPRIM_ERROR_SIZE_TOO_LARGE (with a text
 * that names the argument) or CLPRIM_SUCCESS. */
clprim_status clprim__check_buffer(clprim_context *ctx, const char *name, cl_mem buf,
                                   size_t elem_size, size_t offset, size_t count);
/* Calls visit(platform, device, p, d, arg) for every device of every
 * platform, in clprim_list_devices order ("p:d"), until it returns nonzero.
 * Returns the number of devices visited; error (may be NULL) gets the
 * OpenCL error that stopped the listing (no platform, or a platform without
 * devices, is none). */
typedef int (*clprim_device_visitor)(cl_platform_id, cl_device_id, unsigned, unsigned, void *);
unsigned clprim__for_each_device(clprim_device_visitor visit, void *arg, cl_int *error);
/* a / b rounded up (b > 0): the tiles or groups that hold a elements. */
static inline size_t clprim__div_up(size_t a, size_t b) {
  return a / b + (a % b != 0);
}
/* n elements of elem_size bytes, with overflow checked; SIZE_MAX on overflow. */
size_t clprim__bytes(size_t n, size_t elem_size);

/* ---- core/text.c */
/* Text being assembled (s malloc'ed, NUL-terminated; zero-initialise it):
 * its lines counted; failed once an allocation failed (s keeps what came
 * before). The owner frees s. */
struct clprim_text {
  char *s;
  size_t len, room;
  unsigned lines;
  int failed;
};
void clprim__text_add(struct clprim_text *t, const char *s, size_t len);
void clprim__text_printf(struct clprim_text *t, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- core/launch.c */
/* The launch shape a family starts from (see launch.c). */
struct clprim_launch {
  unsigned wg;       /* work-items per work-group, within the device's limit */
  size_t max_groups; /* work-groups of a grid-stride pass */
};
struct clprim_launch clprim__launch(const clprim_context *ctx);
/* wg halved until the device takes it (not below 32). */
unsigned clprim__fit_wg(const clprim_context *ctx, unsigned wg);
/* The cpu path's launch: a work-item per work-group, each taking one of
 * this many contiguous shares of n elements (at least `least` elements a
 * share, launch.cpu_shares_per_unit (8) shares a compute unit at most, at
 * least one share). */
size_t clprim__cpu_shares(const clprim_context *ctx, size_t n, size_t least);
/* The shares of n elements (outputs, needles) in the cpu path's streaming
 * passes (sorts, reduce-by-key, scan by key, merge, search): at least
 * launch.cpu_share_min (4096) elements each, fewer costing more in launches
 * than they spread. */
size_t clprim__cpu_stream_shares(const clprim_context *ctx, size_t n);
/* The core's own tunables (core/launch.c): the cpu path's shares. */
extern const struct clprim_family clprim__core_launch;

/* ---- core/tuning.c */
/* The knobs of family f for keys and values of key_bytes and value_bytes
 * (0: none) on ctx: value[k] from the last row of f's table that holds
 * here and sets it, then from CLPRIM_TUNE or clprim__tune; -1 where none
 * sets it (the family's code then chooses). */
void clprim__tuned(const clprim_context *ctx, const struct clprim_family *f, unsigned key_bytes,
                   unsigned value_bytes, long long *value);
/* Sets knobs by name: "family.knob=value,..." as CLPRIM_TUNE takes them (a
 * value of -1 goes back to the table's). CLPRIM_ERROR_INVALID_ARGUMENT for
 * an unknown name or a value out of the knob's range, and nothing is set. */
clprim_status clprim__tune(clprim_context *ctx, const char *assignments);
/* The tuning file of ctx's device: $CLPRIM_TUNING_FILE if set ("" or
 * "off": none), else tuning-<hash of platform, device and driver>.txt in
 * the disk cache folder. 0 where there is none (no cache folder). */
int clprim__tuning_file_path(const clprim_context *ctx, char *path, size_t size);
/* Which table rows, tuning-file rows and CLPRIM_TUNE knobs hold on ctx's
 * device and path, family by family, with where each comes from: one line
 * each, after `prefix`. */
void clprim__print_tuning(const clprim_context *ctx, FILE *out, const char *prefix);
/* Family f's state in ctx (f->state_size bytes, zeroed at creation). */
void *clprim__state(const clprim_context *ctx, const struct clprim_family *f);
/* ---- core/keys.c: order keys on the host (cl/internal/keys.h's order) */
/* The order key of an element given as its bits (the low 32 for 4-byte
 * types). */
uint64_t clprim__key_of_bits(clprim_type type, uint64_t bits);
/* The element whose key is `key` (NaN keys give a quiet NaN). */
clprim_value clprim__value_of_key(clprim_type type, uint64_t key);
/* Kernels that order elements by key_of(x) ^ flip (a kernel argument:
 * sort, merge, search) are built for the type clprim__key_build_type gives:
 * a signed integer type builds as the unsigned one of its width, its sign
 * bit going into the flip that clprim__key_flip gives (all ones for
 * descending order), so both types share one program. */
clprim_type clprim__key_build_type(clprim_type type);
/* Whether type is a signed integer type (int32, int64). */
int clprim__is_signed(clprim_type type);
uint64_t clprim__key_flip(clprim_type type, int descending);
/* Kernels that only compare elements with == (run keys: reduce by key,
 * runs) build a signed integer type as clprim__key_build_type's unsigned
 * one too: the same bits are equal in both. Kernels that only move
 * elements build them as clprim__bits_type's unsigned type of their width
 * (float as uint, double as ulong). */
clprim_type clprim__bits_type(clprim_type type);
/* ---- core/prebuild.c */
/* clprim_context_prebuild for the types whose bit (1u << type) is set
 * (tests prebuild one or two types). */
clprim_status clprim__prebuild(clprim_context *ctx, unsigned types, clprim_progress_fn progress,
                               void *user);

/* Context creation's part: the slots of the families, and $CLPRIM_TUNE. */
clprim_status clprim__init_families(clprim_context *ctx,
                                    const struct clprim_family *const *families,
                                    unsigned count);
void clprim__free_families(clprim_context *ctx);

/* ---- core/probe.c */
/* Fills ctx->info's device facts and ctx->info.paths_available, and
 * ctx->path_options. */
clprim_status clprim__probe(clprim_context *ctx);
/* The best available path other than cpu (what CLPRIM_PATH_AUTO picks on
 * a device that is not a CPU). */
clprim_path clprim__best_layer(const clprim_context *ctx);

/* ---- core/program.c */
/* The embedded text of a file from cl/ or include/clprim/ ("scan.cl"). */
const char *clprim__source(const char *file_name);
/* Builds (or loads from the disk cache) the programs of the requests that
 * are not built yet, several at once (threads), then gives each request its
 * kernel. Families ask for every kernel a call runs before they enqueue
 * anything. On a build failure the log is kept in ctx->build_log. */
clprim_status clprim__kernels(clprim_context *ctx, const struct clprim_kernel_request *requests,
                              unsigned count);
/* clprim__kernels for one kernel without a prefix. */
clprim_status clprim__kernel(clprim_context *ctx, const char *file, const char *options,
                             const char *kernel_name, cl_kernel *kernel);
/* Builds source text (device header + source) with options, using the disk
 * cache when set. Used by clprim__kernel and by probing. */
clprim_status clprim__build(clprim_context *ctx, const char *source, const char *options,
                            cl_program *program);
void clprim__release_programs(clprim_context *ctx);
/* clprim_options.build_threads's default: the host's online CPUs, at most
 * CLPRIM__BUILD_THREADS_DEFAULT_MAX; an explicit value at most
 * CLPRIM__BUILD_THREADS_MAX. */
#define CLPRIM__BUILD_THREADS_DEFAULT_MAX 8u
#define CLPRIM__BUILD_THREADS_MAX 64u
unsigned clprim__default_build_threads(void);
/* Disk cache of small text records (probe results): key -> text. */
int clprim__cache_get_text(const clprim_context *ctx, const char *key, char *text, size_t size);
void clprim__cache_put_text(const clprim_context *ctx, const char *key, const char *text);

/* ---- core/call.c */
/* Every public call is
 *   CLPRIM_CHECK(clprim__call_begin(ctx, "the_call"));
 *   return clprim__call_end(ctx, the_call(...));
 * begin takes the context (CLPRIM_ERROR_INVALID_ARGUMENT for NULL,
 * CLPRIM_ERROR_CONTEXT_BUSY while another thread is in a call on it),
 * empties the last-error text, names the call (its public name without
 * "clprim_") and forgets the last call's events; end finishes the call's
 * ranges (staged outputs copied back only on success), leaves the text ""
 * on success or, on failure, the text of the first clprim__fail (or one
 * that names the status if none was set), gives the context back and
 * returns status. A public call made inside another (prebuild's dry runs)
 * keeps the outer call's name and text. */
clprim_status clprim__call_begin(clprim_context *ctx, const char *name);
/* Releases the last call's events (clprim_context_last_event then has none). */
void clprim__forget_events(clprim_context *ctx);
clprim_status clprim__call_end(clprim_context *ctx, clprim_status status);
/* Takes / gives back the context alone (context calls that touch what a
 * call uses: clear_cache, wait_for, last_event, last_time; a pipeline's
 * calls, whose runs make public calls inside); hold empties the last-error text and names the call
 * as clprim__call_begin does. */
clprim_status clprim__hold(clprim_context *ctx, const char *name);
/* Gives the context back and returns status; the text is left as
 * clprim__call_end leaves it. */
clprim_status clprim__unhold(clprim_context *ctx, clprim_status status);
/* The one way a failure gets its text (clprim_context_last_error): stores
 * "<call>: <format...>" in ctx, unless the call in progress already has a
 * text (the first failure is the cause), prints it to stderr under
 * CLPRIM_TRACE, and returns status. Only while ctx is held (a call). */
clprim_status clprim__fail(clprim_context *ctx, clprim_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* clprim__fail with a va_list (for wrappers such as clprim_mpi's). */
clprim_status clprim__vfail(clprim_context *ctx, clprim_status status, const char *format,
                            va_list ap);
/* Context creation's text (clprim_context_last_error(NULL)), kept per
 * thread: begin empties it; fail stores the text (format... as printf,
 * "context_create: ..."), unless one is stored already (the first failure
 * is the cause), and returns status. */
void clprim__create_begin(void);
clprim_status clprim__create_fail(clprim_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* clprim__fail with CLPRIM_ERROR_INVALID_ARGUMENT. */
clprim_status clprim__invalid(clprim_context *ctx, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* CLPRIM_SUCCESS when flags has no bit outside `allowed`, else
 * CLPRIM_ERROR_INVALID_ARGUMENT with a text that names the first such bit. */
clprim_status clprim__check_flags(clprim_context *ctx, unsigned flags, unsigned allowed);
/* clprim__fail for an OpenCL call that returned err ("clEnqueueCopyBuffer"). */
clprim_status clprim__cl_fail(clprim_context *ctx, cl_int err, const char *what);
/* How a call uses a range (OR them). */
#define CLPRIM__READ 1u
#define CLPRIM__WRITE 2u       /* written, maybe in part */
#define CLPRIM__ALL_WRITTEN 4u /* with WRITE: every byte written (a temporary copy starts empty) */
#define CLPRIM__SAME_OK 8u     /* may be the very range of an earlier argument (in place) */
#define CLPRIM__OUT (CLPRIM__WRITE)
#define CLPRIM__OUT_ALL (CLPRIM__WRITE | CLPRIM__ALL_WRITTEN)
/* Checks the caller's range b, the argument `name` (count elements of
 * elem_size from b.offset: a buffer of ctx's cl_context, not NULL, large
 * enough; an output that overlaps no other range of the call; a failure's
 * text names it) and gives the cl_mem that holds it
 * from byte 0: b.mem itself at offset 0, else a sub-buffer or a temporary
 * copy (see call.c). *mem may still change while later ranges of the call
 * are resolved: use it only after all are. Resolve inputs before outputs. */
clprim_status clprim__range(clprim_context *ctx, const char *name, clprim_buffer b,
                            size_t elem_size, size_t count, unsigned use, cl_mem *mem);
/* A segmented call's offsets: offset_type must be CLPRIM_UINT32 or
 * CLPRIM_UINT64 (else CLPRIM_ERROR_INVALID_ARGUMENT, a text that names
 * offset_type); begin_offsets and end_offsets are then resolved as
 * clprim__range's inputs of `segments` elements of that type (their
 * clprim_buffer offsets count such elements). */
clprim_status clprim__segment_offsets(clprim_context *ctx, clprim_type offset_type, size_t segments,
                                      clprim_buffer begin_offsets, clprim_buffer end_offsets,
                                      cl_mem *begins, cl_mem *ends);
/* Runs `check` (cl/internal/segments.h's segments_check, from the
 * family's program) over the segments and reads its verdict (the call
 * waits): CLPRIM_ERROR_INVALID_ARGUMENT, with a text, when a segment ends
 * before it begins or past n. Before anything is written. */
clprim_status clprim__check_segments(clprim_context *ctx, cl_kernel check, cl_mem begins,
                                     cl_mem ends, size_t segments, size_t n);
/* The build option that makes cl/internal/segments.h load offsets of
 * offset_type (a checked one): " -DCLPRIM_OFFSETS_32=1" for uint32, "" for
 * uint64 (the header's default, so those programs are the same as before
 * uint32 offsets existed). Appended to a program's options, so it is part
 * of the program's key. */
const char *clprim__offsets_option(clprim_type offset_type);

/* ---- core/enqueue.c, core/scratch.c */
/* Sets kernel arguments: clprim__set_args(k, 3, sizeof(a), &a, sizeof(b), &b,
 * sizeof(c), &c). A NULL pointer with a nonzero size gives a __local buffer. */
clprim_status clprim__set_args(cl_kernel kernel, unsigned count, ...);
/* Kernel arguments that follow a kernel's own (a pipeline's inputs and
 * parameters, appended by its PIPE_PARAMS): set from argument `first` on,
 * which the callee fills in before each clprim__set_extra_args. */
#define CLPRIM__EXTRA_MAX 24
struct clprim_extra_args {
  unsigned first, count;
  size_t size[CLPRIM__EXTRA_MAX];
  const void *value[CLPRIM__EXTRA_MAX];
};
clprim_status clprim__set_extra_args(cl_kernel kernel, const struct clprim_extra_args *extra);
/* 1-D launch of `groups` work-groups of `group_size` work-items. */
clprim_status clprim__enqueue(clprim_context *ctx, cl_kernel kernel, size_t groups,
                              size_t group_size);
clprim_status clprim__fill(clprim_context *ctx, cl_mem buf, const void *pattern,
                           size_t pattern_size, size_t offset, size_t bytes);
clprim_status clprim__copy(clprim_context *ctx, cl_mem src, cl_mem dst, size_t src_offset,
                           size_t dst_offset, size_t bytes);
/* A native kernel (ctx->native_kernels): fn(a copy of args' args_size
 * bytes), where the cl_mem at mem_at inside args becomes a host pointer to
 * mem's memory. */
clprim_status clprim__enqueue_native(clprim_context *ctx, void(CL_CALLBACK *fn)(void *),
                                     const void *args, size_t args_size, cl_mem mem,
                                     const void *mem_at);
/* Blocking read of device memory into host memory. */
clprim_status clprim__read(clprim_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                           void *host);
/* A count the device left (one uint64 at byte `at` of buf) to the caller:
 * copied to count_out and / or read into *count (the call waits), each
 * where not NULL (select, runs, reduce-by-key). */
clprim_status clprim__deliver_count(clprim_context *ctx, cl_mem buf, size_t at, cl_mem count_out,
                                    uint64_t *count);
/* Write of host memory to the device; blocking or not (then host must stay
 * valid until the command has run). */
clprim_status clprim__write(clprim_context *ctx, cl_mem buf, size_t offset, size_t bytes,
                            const void *host, int blocking);
/* Releases the events clprim_context_wait_for kept (consumed, or the context freed). */
void clprim__release_waits(clprim_context *ctx);
/* The scratch buffer `name` (see struct clprim_scratch_entry), of at least
 * `bytes` bytes. A handle stays valid until the context is freed. */
clprim_status clprim__scratch(clprim_context *ctx, const char *name, size_t bytes, cl_mem *buf);
/* As clprim__scratch, but on Oclgrind a buffer of its own in every public
 * call (see scratch.c): for buffers that several programs' kernels write. */
clprim_status clprim__scratch_per_call(clprim_context *ctx, const char *name, size_t bytes,
                                       cl_mem *buf);
/* Pinned host memory of at least `bytes` bytes under `name`, for copies
 * between the device and the host at DMA speed (clprim_mpi's exchange): a
 * CL_MEM_ALLOC_HOST_PTR buffer, mapped once when made and kept mapped until
 * the context is freed (page-locking costs about as much per byte as a
 * copy); *host is its memory. Only the host pointer is used in commands
 * (the buffer itself never is), so the mapping stays valid. A larger
 * request makes a new one (the old is released: hold no pointer into it). */
clprim_status clprim__scratch_host(clprim_context *ctx, const char *name, size_t bytes,
                                   void **host);
/* Releases every scratch buffer (clprim_context_free). */
void clprim__release_scratch(clprim_context *ctx);

#define CLPRIM_CHECK(expr)                                                                         \
  do {                                                                                             \
    clprim_status clprim_check_status_ = (clprim_status)(expr);                                    \
    if (clprim_check_status_ != CLPRIM_SUCCESS) return clprim_check_status_;                       \
  } while (0)

#endif /* CLPRIM_CORE_H */
