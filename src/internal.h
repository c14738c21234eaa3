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
/* Selection's and top-k's files, one program on CPU devices. */
#define CLPRIM__SELECTION_FILES "nth_element.cl topk.cl"
/* reduce.cl's kernels as CPU devices build them: argmax / argmin and sums,
 * apart from the segmented reductions (which made the first sum or argmax
 * on PoCL 3.1 0.5 s slower: 1.0 -> 1.55 s). */
#define CLPRIM__REDUCE_KERNELS "arg_partial arg_final sum_tiles"
#define CLPRIM__SEGMENTED_REDUCE_KERNELS "seg_check seg_reduce"

/* The knobs of docs/TUNING.md, one per environment variable of the same
 * name (CLPRIM_KNOB_SCAN_WG: $CLPRIM_SCAN_WG), read once per context into
 * ctx->tuning: -1 where unset (the library's own choice). */
enum clprim_knob {
  CLPRIM_KNOB_SCAN_WG,
  CLPRIM_KNOB_SCAN_ITEMS,
  CLPRIM_KNOB_SCAN_SINGLE_PASS,
  CLPRIM_KNOB_SELECT_ITEMS,
  CLPRIM_KNOB_SELECT_SINGLE_PASS,
  CLPRIM_KNOB_HIST_QUADS,
  CLPRIM_KNOB_HIST_AGG,
  CLPRIM_KNOB_HIST_RUNS,
  CLPRIM_KNOB_HIST_NV_FAST,
  CLPRIM_KNOB_HIST_BINNED,
  CLPRIM_KNOB_HIST_RANGE_SHIFT,
  CLPRIM_KNOB_HIST_SLICE,
  CLPRIM_KNOB_HIST_PQUADS,
  CLPRIM_KNOB_HIST_PWG,
  CLPRIM_KNOB_HIST_PART_RUNS,
  CLPRIM_KNOB_HIST_DIRECT,
  CLPRIM_KNOB_HIST_SHARED_RED,
  CLPRIM_KNOB_RBK_ITEMS,
  CLPRIM_KNOB_NTH_GROUPS_PER_UNIT,
  CLPRIM_KNOB_NTH_SMALL_MAX,
  CLPRIM_KNOB_NTH_TOPK_ROOM,
  CLPRIM_KNOB_SORT_ITEMS,
  CLPRIM_KNOB_SORT_ONESWEEP,
  CLPRIM_KNOB_SORT_SMALL_MAX,
  CLPRIM_KNOB_SORT_PEERS,
  CLPRIM_KNOB_SORT_WG,
  CLPRIM_KNOB_SEG_TOPK_LONG,
  CLPRIM_KNOB_MPI_GATHER_MAX,
  CLPRIM_KNOB_NATIVE_SCAN,
  CLPRIM_KNOB_TRACE,
  CLPRIM_KNOB_DEBUG,
  CLPRIM_KNOB_COUNT
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
};
#define CLPRIM__MAX_RANGES 8

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

  /* Events of the last public call: its first command's (profiling queues
   * only) and its last command's. */
  cl_event first_event, last_event;
  /* The caller's events that the next command waits for (clprim_context_wait_for). */
  cl_event *waits;
  cl_uint wait_count;

  long long tuning[CLPRIM_KNOB_COUNT]; /* see enum clprim_knob */
  /* Set during clprim_context_prebuild: clprim__kernels collects, builds nothing. */
  struct clprim_collect *collect;
  /* histogram.c: whether the nv_ptx fast kernels (match.any, red.f64) built:
   * 0 not tried, 1 yes, -1 no (the portable kernels are used). */
  int hist_nv_fast;

  /* core/call.c: 1 while a thread is in a call; the call's ranges. */
  atomic_int busy;
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
  unsigned calls; /* public calls begun (clprim__scratch_per_call) */
  /* Programs made for this context (compiled, or loaded from the disk
   * cache): clprim_context_programs_made(). */
  uint64_t programs_made;
  /* Pipeline top-k runs that top-k's candidate path finished
   * (clprim__topk_filtered; tests: which cases reach it). */
  uint64_t topk_filtered_runs;
};

/* ---- core/context.c */
/* The OpenCL C type name of a clprim_type ("int", "uint", ..., "double"). */
const char *clprim__cl_type(clprim_type type);
/* CLPRIM_SUCCESS for a valid type the device supports, else
 * CLPRIM_ERROR_INVALID_ARGUMENT (bad value) or CLPRIM_ERROR_UNSUPPORTED_TYPE. */
clprim_status clprim__check_type(const clprim_context *ctx, clprim_type type);
/* Checks a caller's buffer: non-NULL, of ctx's cl_context, holding at least
 * `bytes` bytes. CLPRIM_ERROR_INVALID_ARGUMENT, CL_INVALID_CONTEXT,
 * CLPRIM_ERROR_BUFFER_TOO_SMALL or CLPRIM_SUCCESS. */
clprim_status clprim__check_buffer(const clprim_context *ctx, cl_mem buf, size_t bytes);
/* Calls visit(platform, device, p, d, arg) for every device of every
 * platform, in clprim_list_devices order ("p:d"), until it returns nonzero.
 * Returns the number of devices visited; error (may be NULL) gets the
 * OpenCL error that stopped the listing (no platform, or a platform without
 * devices, is none). */
typedef int (*clprim_device_visitor)(cl_platform_id, cl_device_id, unsigned, unsigned, void *);
unsigned clprim__for_each_device(clprim_device_visitor visit, void *arg, cl_int *error);
/* n elements of elem_size bytes, with overflow checked; SIZE_MAX on overflow. */
size_t clprim__bytes(size_t n, size_t elem_size);

/* ---- core/launch.c */
/* The launch shape a family starts from (see launch.c). */
struct clprim_launch {
  unsigned wg;       /* work-items per work-group, within the device's limit */
  size_t max_groups; /* work-groups of a grid-stride pass */
};
struct clprim_launch clprim__launch(const clprim_context *ctx);
/* wg halved until the device takes it (not below 32). */
unsigned clprim__fit_wg(const clprim_context *ctx, unsigned wg);

/* ---- core/tuning.c */
/* Reads every knob from the environment into ctx->tuning (context creation). */
void clprim__read_tuning(clprim_context *ctx);
/* Sets a knob (tests; -1: the library's choice); takes effect at the next call. */
void clprim__tune(clprim_context *ctx, enum clprim_knob knob, long long value);

/* ---- core/probe.c */
/* Fills ctx->info's device facts and ctx->info.paths_available, and
 * ctx->path_options. */
clprim_status clprim__probe(clprim_context *ctx);

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
/* Disk cache of small text records (probe results): key -> text. */
int clprim__cache_get_text(const clprim_context *ctx, const char *key, char *text, size_t size);
void clprim__cache_put_text(const clprim_context *ctx, const char *key, const char *text);

/* ---- core/call.c */
/* Every public call is
 *   CLPRIM_CHECK(clprim__call_begin(ctx));
 *   return clprim__call_end(ctx, the_call(...));
 * begin takes the context (CLPRIM_ERROR_INVALID_ARGUMENT for NULL,
 * CLPRIM_ERROR_CONTEXT_BUSY while another thread is in a call on it) and
 * forgets the last call's events; end finishes the call's ranges (staged
 * outputs copied back only on success), gives the context back and returns
 * status. */
clprim_status clprim__call_begin(clprim_context *ctx);
/* Releases the last call's events (clprim_context_last_event then has none). */
void clprim__forget_events(clprim_context *ctx);
clprim_status clprim__call_end(clprim_context *ctx, clprim_status status);
/* Takes / gives back the context alone (context calls that touch what a
 * call uses: clear_cache, wait_for, last_event, last_time). */
clprim_status clprim__hold(clprim_context *ctx);
void clprim__unhold(clprim_context *ctx);
/* How a call uses a range (OR them). */
#define CLPRIM__READ 1u
#define CLPRIM__WRITE 2u       /* written, maybe in part */
#define CLPRIM__ALL_WRITTEN 4u /* with WRITE: every byte written (a temporary copy starts empty) */
#define CLPRIM__SAME_OK 8u     /* may be the very range of an earlier argument (in place) */
#define CLPRIM__OUT (CLPRIM__WRITE)
#define CLPRIM__OUT_ALL (CLPRIM__WRITE | CLPRIM__ALL_WRITTEN)
/* Checks the caller's range b (count elements of elem_size from b.offset:
 * a buffer of ctx's cl_context, not NULL, large enough; an output that
 * overlaps no other range of the call) and gives the cl_mem that holds it
 * from byte 0: b.mem itself at offset 0, else a sub-buffer or a temporary
 * copy (see call.c). *mem may still change while later ranges of the call
 * are resolved: use it only after all are. Resolve inputs before outputs. */
clprim_status clprim__range(clprim_context *ctx, clprim_buffer b, size_t elem_size, size_t count,
                            unsigned use, cl_mem *mem);

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
/* Releases every scratch buffer (clprim_context_free). */
void clprim__release_scratch(clprim_context *ctx);

/* ---- core/prebuild.c */
/* clprim_context_prebuild for the types whose bit (1u << type) is set
 * (tests prebuild one or two types). */
clprim_status clprim__prebuild(clprim_context *ctx, unsigned types);

/* ---- core/count_scan_scatter.c */
/* One launch: `groups` work-groups of `wg` work-items. */
struct clprim_pass {
  cl_kernel kernel;
  size_t groups, wg;
};
/* Count, scan, scatter (see count_scan_scatter.c). The kernels' arguments
 * are set; `offsets` holds counts + 1 values of offset_type (CLPRIM_UINT64,
 * or CLPRIM_UINT32 where totals fit), written by the count pass.
 * scatter.kernel NULL: count and scan only. */
struct clprim_count_scan_scatter {
  struct clprim_pass count, scatter;
  clprim_type offset_type;
  cl_mem offsets;
  size_t counts;
};
/* The scratch buffer `name` for counts + 1 offsets of type. */
clprim_status clprim__offsets(clprim_context *ctx, const char *name, clprim_type type,
                              size_t counts, cl_mem *offsets);
clprim_status clprim__count_scan_scatter(clprim_context *ctx,
                                         const struct clprim_count_scan_scatter *p);

/* ---- select.c, for the runs family (src/runs.c) */
/* Compaction of the edges of runs of n equal consecutive keys (kind:
 * RUN_HEAD, RUN_NONTRIVIAL_HEAD or RUN_NONTRIVIAL_TAIL of
 * cl/internal/heads.h): the values at the edges (values of value_type, or
 * NULL: the keys) to values_out and / or their positions to indices (uint32,
 * or uint64 with index64), their count to count_out (one uint64 on the
 * device). cl_mems as clprim__range gives them; NULL where not wanted. */
struct clprim_runs_select {
  size_t n;
  int kind;
  clprim_type key_type, value_type;
  cl_mem keys, values, values_out, indices, count_out;
  int index64;
  /* RUN_HEAD where the single pass runs (clprim__select_single_pass_tile):
   * indices get the run lengths instead, but for the runs that go on past
   * a tile, whose starts runs.cl's runs_fix_ends turns into lengths with
   * the ends left here (2 ulongs per tile, and 2 more). */
  cl_mem run_ends;
};
clprim_status clprim__select_runs(clprim_context *ctx, const struct clprim_runs_select *r);

/* ---- select.c, for the pipeline family (src/pipeline.c) */
/* Compaction of a pipeline's elements (the n elements of in, the first
 * input, through `prefix`, the pipeline's source, built with -DPIPELINE;
 * elements of type): values and / or indices (uint64 with index64), the
 * count to count_out (one uint64 on the device) and / or *count (read).
 * extra: the kernels' extra arguments (first is set here). NULL where not
 * wanted; no argument checks. */
struct clprim_pipe_select {
  size_t n;
  clprim_type type;
  const char *prefix;
  cl_mem in, values, indices, count_out;
  int index64;
  uint64_t *count;
  struct clprim_extra_args *extra;
  int partition; /* nonzero: all n written, the passing ones first (select.c's orders) */
};
clprim_status clprim__select_pipeline(clprim_context *ctx, const struct clprim_pipe_select *p);
/* pipeline.c, for select.c: the compaction of sel (whose prefix and extra
 * it sets) by a one-filter pipeline of `expression` over elements of
 * sel->type with parameters params[0..7] (NULL: 0); the expression is
 * checked (CLPRIM_ERROR_INVALID_ARGUMENT) and a build log translated as a
 * pipeline's. */
clprim_status clprim__select_expr(clprim_context *ctx, struct clprim_pipe_select *sel,
                                  const char *expression, const double *params);
/* pipeline.c: whether a user's expression is one expression that cannot
 * reach outside the code around it (clprim.h's pipeline section says what
 * is refused); the three-way partition's expressions are checked with it. */
int clprim__expression_ok(const char *e);

/* ---- core/lookback.c */
/* The zeroed tile states of a single-pass look-back kernel over `tiles`
 * tiles whose values have value_bits = 32, 62 (counts) or 64 bits (the
 * layouts of cl/internal/layout.h), in scratch buffer `name`.
 * CLPRIM_ERROR_SIZE_TOO_LARGE beyond 2^32 - 1 tiles. */
clprim_status clprim__lookback_state(clprim_context *ctx, const char *name, size_t tiles,
                                     unsigned value_bits, cl_mem *state);

/* ---- scan.c */
/* Prefix sum without argument checks or clprim__call_begin, for other
 * families: in and out hold n elements of type (in == out allowed). */
clprim_status clprim__scan(clprim_context *ctx, clprim_type type, cl_mem in, cl_mem out, size_t n,
                           int inclusive);
/* Elements per scan tile for type on this context (tests use it for sizes
 * around tile boundaries). */
size_t clprim__scan_tile(const clprim_context *ctx, clprim_type type);
/* Elements per tile of scan by key (the tests' sizes). */
size_t clprim__scan_by_key_tile(const clprim_context *ctx, clprim_type key_type,
                                clprim_type value_type);

/* ---- reduce.c */
/* Elements per work-group tile of the reductions for type on this context
 * (tests use it for sizes around tile boundaries). */
size_t clprim__reduce_tile(const clprim_context *ctx, clprim_type type);
/* For the pipeline family: the build options of cl/reduce.cl for type (to
 * which a pipeline adds its own), and the two reductions over n elements of
 * in with kernels of such a build whose arguments past the first 3
 * (sum_tiles) or 5 (arg_partial, arg_final) the caller has set. The result
 * (16 bytes: the sum's bits; or the element's bits and its index) is left in
 * the family's scratch buffer *result. sum: `kernel` (sum_tiles) runs every
 * level; level_arg >= 0: the index of its argument that says whether the
 * level is the first (a pipeline's build computes the elements there and
 * loads sums after: one program for all levels, as Oclgrind reads what
 * another program's kernel wrote as uninitialised). arg: mode as
 * cl/reduce.cl's (flags, MODE_MIN = 0x100); n = 0 allowed (index
 * UINT64_MAX, for pipelines). */
void clprim__reduce_options(const clprim_context *ctx, clprim_type type, char *options,
                            size_t size);
clprim_status clprim__reduce_sum_run(clprim_context *ctx, clprim_type type, cl_kernel kernel,
                                     int level_arg, cl_mem in, size_t n, cl_mem *result);
clprim_status clprim__reduce_arg_run(clprim_context *ctx, clprim_type type, cl_kernel partial,
                                     cl_kernel final, cl_mem in, size_t n, unsigned mode,
                                     cl_mem *result);
/* ---- histogram.c */
/* One histogram or dense reduce-by-key (reduce_by_key.c's dense call runs
 * the histogram engine): keys in [0, bins) (keys_mode) or values into even
 * bins over [lo, hi) (scale = bins / (hi - lo) in the values' type; range =
 * hi - lo for integers), optional values summed per bin. */
struct clprim_hist_call {
  int keys_mode;      /* keys in [0, bins) (else a value histogram) */
  clprim_type x_type; /* the keys' or values' type */
  clprim_type v_type; /* summed values' type, when values */
  size_t n, bins;
  clprim_value lo, hi, scale;
  uint64_t range;
  int keep_subnormals; /* float sums by compare-and-swap on every path */
  /* The caller's ranges: in; values (NULL mem: counts only); counts, sums
   * (either may be NULL, not both); outside_out (NULL mem, or outside_words
   * uint64 on the device). */
  clprim_buffer in_range, values_range, counts_range, sums_range, outside_range;
  uint64_t *outside; /* NULL, or outside_words words (keys: 1, even: 3) on the host */
  size_t outside_words;
  /* The ranges as the kernels get them (clprim__range), set by the check. */
  cl_mem in, values, counts, sums, outside_out;
};
/* Checks the call's arguments and runs it; the caller begins and ends the call. */
clprim_status clprim__histogram(clprim_context *ctx, struct clprim_hist_call *c);
/* The most bins that hist_local keeps in local memory, for counts (has_counts)
 * and / or sums of sum_size bytes (0: none); tests use it. */
size_t clprim__histogram_local_max(const clprim_context *ctx, int has_counts, size_t sum_size);
/* ---- sort.c */
/* For keys of type with values of value_size bytes (0: none): the keys per
 * tile of sort_tile (one work-group in local memory), the most keys that
 * one work-group sorts, and the keys per tile of the digit passes (tests:
 * sizes around each). */
size_t clprim__sort_tile(const clprim_context *ctx, clprim_type type, size_t value_size);
size_t clprim__sort_small_max(const clprim_context *ctx, clprim_type type, size_t value_size);
size_t clprim__sort_pass_tile(const clprim_context *ctx, clprim_type type, size_t value_size);
/* clprim_segmented_sort_pairs (value_size 4 or 8) or _keys (value_size 0,
 * values NULL) on resolved buffers, arguments checked (src/segmented_topk.c
 * sorts its rows with it). */
clprim_status clprim__segmented_sort(clprim_context *ctx, clprim_type type, size_t value_size,
                                     cl_mem keys_in, cl_mem values_in, cl_mem keys_out,
                                     cl_mem values_out, size_t n, size_t segments, cl_mem begins,
                                     cl_mem ends, unsigned flags);
/* ---- select.c */
/* Elements per select tile on this context (tests: sizes around tiles). */
size_t clprim__select_tile(const clprim_context *ctx);
/* Elements per tile of select's single-pass kernel, 0 where it does not run. */
size_t clprim__select_single_pass_tile(const clprim_context *ctx, clprim_type type);
/* ---- topk.c */
/* clprim_topk inside a call the caller began (pipelines: top-k and the
 * mapping of its positions in one call, as Oclgrind reads what another
 * program wrote in an earlier call as uninitialised). */
clprim_status clprim__topk(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                           uint64_t k, unsigned flags, clprim_buffer values,
                           clprim_buffer indices);
/* clprim_topk on resolved buffers (values and / or indices; NULL for
 * none), arguments checked, 1 <= k <= n < 2^32 (src/segmented_topk.c runs
 * it on long segments). */
clprim_status clprim__topk_run(clprim_context *ctx, size_t n, clprim_type type, cl_mem in,
                               uint64_t k, unsigned flags, cl_mem values, cl_mem indices);
struct clprim_nth_filter;
/* A pipeline's filter -> top-k without a compacted copy (pipeline.c): top-k's
 * candidate path (k <= NTH_BASE on at least 16 NTH_BASE elements, below
 * 2^32, flags of clprim_pipeline_topk) with the stages in its sample and its
 * gathering pass (filter: prefix and extra; its ranks_of is not used) over
 * the n elements of in, the first input; type is x's. *done = 1: the k values
 * (x) and indices (positions in the inputs) written, *passing the passing
 * count m (k <= m). *done = 0: nothing written (not this path, fewer
 * than k candidates, too many, or more than the room laid out): the caller
 * compacts. */
clprim_status clprim__topk_filtered(clprim_context *ctx, size_t n, clprim_type type, cl_mem in,
                                    uint64_t k, unsigned flags,
                                    const struct clprim_nth_filter *filter, cl_mem values,
                                    cl_mem indices, uint64_t *passing, int *done);
/* ---- nth_element.c (used by topk.c) */
/* Top-k runs selection by rank (clprim__nth_select_ranks) and level kernels
 * of cl/nth_element.cl (nth_sample, nth_count, nth_choose) on selection's
 * scratch buffers, named here; its own kernels (cl/topk.cl) take the same
 * build options. */
#define CLPRIM__NTH_SLOT_COUNTS "nth: per-group bucket counts" /* uint */
#define CLPRIM__NTH_SLOT_META "nth: meta"       /* NTH_META_WORDS ulongs (cl/internal/layout.h) */
#define CLPRIM__NTH_SLOT_STATE "nth: state"     /* nth_choose's answers */
#define CLPRIM__NTH_SLOT_RANKS "nth: ranks"     /* the wanted ranks, sorted */
#define CLPRIM__NTH_SLOT_RESULTS "nth: results" /* the keys of the ranks */
#define CLPRIM__NTH_SLOT_KEYS_A "nth: keys A"   /* levels' keys; top-k sort keys */
#define CLPRIM__NTH_SLOT_KEYS_B "nth: keys B"   /* levels' keys; top-k sort indices */
struct clprim_nth_config {
  unsigned wg;       /* work-items per work-group (a power of two, <= 512) */
  size_t max_groups; /* counting / extraction work-groups */
  unsigned items;    /* top-k elements per work-item */
};
struct clprim_nth_config clprim__nth_config(const clprim_context *ctx);
/* Build options of cl/nth_element.cl (and cl/topk.cl) for type; count_nans:
 * the build whose nth_count also counts NaNs (for CLPRIM_NTH_REJECT_NAN). */
void clprim__nth_options(clprim_type type, const struct clprim_nth_config *c, int count_nans,
                         char *options, size_t size);
/* The request for level kernel `name` (nth_*) of cl/nth_element.cl built
 * for type, in the level kernels' program; count_nans: nth_count's build
 * that counts NaNs. options (200 chars) receives the build options and must
 * live as long as the request. */
struct clprim_kernel_request clprim__nth_request(clprim_type type,
                                                 const struct clprim_nth_config *c, int count_nans,
                                                 const char *name, cl_kernel *kernel,
                                                 char *options);
/* The element whose key is `key` (cl/internal/keys.h; NaN keys give a
 * quiet NaN); selection, per-segment selection and the MPI library. */
clprim_value clprim__value_of_key(clprim_type type, uint64_t key);
/* The argument checks that selection and top-k share: type, n (1 to
 * 2^32 - 1), flags within `allowed`, in holding n elements (resolved to
 * *in_mem). */
clprim_status clprim__nth_check(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in, unsigned flags, unsigned allowed,
                                cl_mem *in_mem);
/* The keys of the ranks `ranks` (sorted ascending, each < n, count of them)
 * of the n elements of in from element in_offset (a multiple of 4), to
 * keys[] on the host (and left in CLPRIM__NTH_SLOT_RESULTS). approximate:
 * one level only; keys[] gets the nearest splitter and errors[] its rank
 * distance. Enqueues from the first kernel on; the call is begun and its
 * arguments checked. */
clprim_status clprim__nth_select_ranks(clprim_context *ctx, clprim_type type, cl_mem in,
                                       size_t in_offset, size_t n, const uint64_t *ranks,
                                       unsigned count, unsigned flags, int approximate,
                                       uint64_t *keys, uint64_t *errors);
/* A pipeline's filter (pipeline.c) inside selection by rank: level 0's
 * sample, count and extraction run cl/nth_element.cl built with the
 * pipeline's source (-DPIPELINE) and its kernel arguments after their own,
 * over the n elements of the first input; `type` is the pipeline's output
 * type. The ranks depend on the number m of passing elements, which the
 * counting pass learns: ranks_of(arg, m, ranks) then writes them (sorted,
 * distinct, at most `count`) and returns their number, 0 for none (the call
 * fails with CLPRIM_ERROR_INVALID_ARGUMENT). */
struct clprim_nth_filter {
  const char *prefix;
  struct clprim_extra_args *extra;
  unsigned (*ranks_of)(void *arg, uint64_t m, uint64_t *ranks);
  void *arg;
};
/* The keys of the filter's ranks (at most count; *distinct gets their
 * number, the ranks stay in ranks[]); n must exceed clprim__nth_small_max. */
clprim_status clprim__nth_select_filtered(clprim_context *ctx, clprim_type type, cl_mem in,
                                          size_t n, const struct clprim_nth_filter *filter,
                                          unsigned count, uint64_t *ranks, uint64_t *keys,
                                          unsigned *distinct);
/* Sub-problems of at most this many keys are finished by one work-group
 * (nth_small), the whole input too. */
size_t clprim__nth_small_max(const clprim_context *ctx);
/* Selection takes distinct ranks in ascending order: ranks[0, count)
 * sorted, each value kept once; returns how many. clprim__rank_slot: where
 * `rank` (one of them) stands among the distinct[0, count). */
size_t clprim__distinct_ranks(uint64_t *ranks, size_t count);
size_t clprim__rank_slot(const uint64_t *distinct, size_t count, uint64_t rank);

#define CLPRIM_CHECK(expr)                                                                         \
  do {                                                                                             \
    clprim_status clprim_check_status_ = (clprim_status)(expr);                                    \
    if (clprim_check_status_ != CLPRIM_SUCCESS) return clprim_check_status_;                       \
  } while (0)

#endif /* CLPRIM_INTERNAL_H */
