/* The bench harness: what a rows file (tools/bench/<family>.c) uses to time
 * its calls and print its rows, and the descriptor each one registers.
 *
 * A family's descriptor names its ops (the names --op takes, the types each
 * takes, a help line, a check against the CPU), the function that runs its
 * rows at one type and size, and the first calls --startup times. The
 * harness knows no family: bench_families (harness.c) lists the
 * descriptors, in the order the rows are run and --help lists them.
 *
 * Timing: OpenCL profiling events, 3 warm-up runs, then the median of
 * b->reps runs. Baselines measured in the same run: a clEnqueueCopyBuffer of
 * the same bytes, or one read of the inputs by a minimal kernel. A failed
 * call is a failed row (stderr, and an "error" object with --json) and the
 * run goes on; a failed setup (a buffer, a baseline) abandons the family's
 * remaining rows at that type and size (bench_fail_setup). */
#ifndef CLPRIM_BENCH_HARNESS_H
#define CLPRIM_BENCH_HARNESS_H

#include <clprim/clprim.h>

#include <setjmp.h>
#include <stddef.h>

#define BENCH_MIN_REPS 20
#define BENCH_MAX_REPS 256
#define BENCH_MAX_LIVE 16
#define BENCH_COUNT(array) (int)(sizeof(array) / sizeof((array)[0]))

struct bench {
  clprim_context *ctx;
  cl_context cl;
  cl_command_queue queue;
  int reps;
  int json;
  int records; /* JSON objects written */
  int failed;  /* rows that failed */
  const char *op_filter;
  int all_data; /* --data all: selection on every distribution of its tests */
  clprim_path path;
  const clprim_device_info *info;
  /* What runs now (named by errors), and where a setup failure returns. */
  const char *cur_op;
  clprim_type cur_type;
  size_t cur_n;
  jmp_buf abort_family;
  /* Buffers and host memory of the running family (released on failure). */
  cl_mem live[BENCH_MAX_LIVE];
  void *live_host[BENCH_MAX_LIVE];
};

/* What a check gets (tools/bench/check.h has its helpers). */
struct bench_check;

/* One op of a family: what --op takes. */
struct bench_op {
  const char *name;
  unsigned types; /* bit (1u << type) for each clprim_type the op takes */
  const char *help;
  /* Runs the op once on the check's input and compares the result with the
   * CPU: 1 when right. NULL for a baseline with nothing to check. */
  int (*check)(struct bench_check *c);
};

/* What a --startup first call gets: 2^20 floats (in), int32 keys i / 64 %
 * 1024 (keys), two outputs of n uint64 (out, out2) and the uint64 bounds of
 * n / 1024 segments of 1024 (begins, ends). */
struct bench_startup_inputs {
  clprim_context *ctx;
  size_t n;
  cl_mem in, keys, out, out2, begins, ends;
};

/* A first call --startup times, by the name --op gives it. */
struct bench_startup {
  const char *name;
  clprim_status (*call)(const struct bench_startup_inputs *in);
};

/* A family's rows: its ops, how to run them, its startup calls. */
struct bench_family {
  const char *name; /* the library's family (src/<name>.c) */
  const struct bench_op *ops;
  int op_count;
  /* The rows of the ops --op wants at one type and size. */
  void (*run)(struct bench *b, clprim_type type, size_t n);
  const struct bench_startup *startup;
  int startup_count;
  /* The algorithm the family runs (clprim-info), on the nv_ptx and cpu
   * paths where those differ (NULL: the same). */
  const char *algorithm, *algorithm_nv, *algorithm_cpu;
};

/* The registry (harness.c): every family, in the order of the rows. */
extern const struct bench_family *const bench_families[];
extern const int bench_family_count;

/* Runs f's rows at one type and size; `name` names the step in a failed
 * setup's row, after which what the family held is released. */
void bench_run_family(struct bench *b, const struct bench_family *f, const char *name,
                      clprim_type type, size_t n);

/* A fatal error outside the rows (the device, --startup): a message and
 * exit status 1. */
void bench_die(const char *what, int status);

/* Whether --op wants op (its name, or all). */
int bench_wants(const struct bench *b, const char *op);

/* The smallest l with 2^l >= n. */
int bench_lg(size_t n);

/* ------------------------------------------------ memory of a family */

/* Host memory and device buffers that a failed setup releases; a failure
 * to get them fails the setup. host may be NULL (an uninitialised buffer). */
void *bench_malloc(struct bench *b, size_t bytes);
void bench_free(struct bench *b, void *p);
cl_mem bench_buffer(struct bench *b, size_t bytes, const void *host);
void bench_release(struct bench *b, cl_mem m);

/* A failure of a family's setup: a "(setup)" row names it, and the
 * family's remaining rows at this type and size are abandoned. */
void bench_fail_setup(struct bench *b, const char *what, int status);

/* ------------------------------------------------- timing, baselines */

/* One clprim call of a row (arg: the family's own arguments); checks may
 * make the same call on their own context. */
typedef clprim_status (*bench_call)(clprim_context *ctx, void *arg);

/* Median device time of `call` to *ms; on failure the status, and *what
 * names the step that failed. */
clprim_status bench_time(struct bench *b, bench_call call, void *arg, double *ms,
                         const char **what);

/* Median device time from a marker before `call` to one after it: a span
 * of several clprim calls, with the gaps that their host reads leave. */
clprim_status bench_time_span(struct bench *b, bench_call call, void *arg, double *ms);

/* Median device time of a copy of `bytes` bytes (read + write = 2 bytes). */
double bench_copy_ms(struct bench *b, cl_mem src, cl_mem dst, size_t bytes);

/* Median device time of one read of the first `bytes` bytes of in. */
double bench_read_ms(struct bench *b, cl_mem in, size_t bytes);

/* ---------------------------------------------------------------- rows */

/* Times `call` and prints one row: GB/s of `bytes` (the minimal traffic,
 * reads + writes) and the ratio to `copy` (a copy of bytes / 2). */
void bench_report_copy(struct bench *b, const char *op, const char *variant, clprim_type type,
                       size_t n, bench_call call, void *arg, double bytes, double copy);

/* Times `call` and prints one row against one read of its inputs (`read`
 * ms); call NULL: `read` itself is the row. */
void bench_report_read(struct bench *b, const char *op, const char *variant, clprim_type type,
                       size_t n, bench_call call, void *arg, double read);

/* A row that failed (stderr names op, variant, type, size and status; an
 * "error" object with --json), or cannot run here (a note on stderr, a
 * "skipped" object). */
void bench_failed(struct bench *b, const char *op, const char *variant, clprim_type type, size_t n,
                  const char *what, int status);
void bench_skipped(struct bench *b, const char *op, const char *variant, clprim_type type, size_t n,
                   const char *why);

/* A row of a family's own shape: begin (identity and ms), then fields in
 * the order of both outputs (a JSON key and format, a text format), then
 * end. A number that is not finite is null in JSON. */
void bench_row_begin(struct bench *b, const char *op, const char *variant, clprim_type type,
                     size_t n, double ms);
/* Times `call` and begins its row (1, and *ms), or reports the row failed
 * (0). */
int bench_row_timed(struct bench *b, const char *op, const char *variant, clprim_type type,
                    size_t n, bench_call call, void *arg, double *ms);
void bench_row_number(struct bench *b, const char *key, const char *json_format,
                      const char *text_format, double value);
void bench_row_string(struct bench *b, const char *key, const char *text_format, const char *value);
void bench_row_end(struct bench *b);

/* A JSON string, escaped, on stdout. */
void bench_json_string(const char *s);

#endif
