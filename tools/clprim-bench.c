/* clprim-bench: device time of clprim's primitives, from OpenCL profiling
 * events: warm-up, then the median of --reps runs (at least 20), in ms, the
 * GB/s of the minimal bytes (each input read once, each output written once),
 * and the ratio to a clEnqueueCopyBuffer of the same number of bytes (read +
 * write) measured in the same run.
 *
 * Histograms and reduce-by-key (ops histogram, histogram_keys,
 * reduce_by_key_dense, reduce_by_key) and the runs family (unique,
 * run_length_encode, unique_by_key, non_trivial_runs, scan_by_key) and the segmented
 * reductions (segmented_sum, segmented_max, segmented_argmax: segments of
 * 1024) and per-row selection (batched_topk, batched_nth_element) are
 * compared with one READ of their inputs instead (a minimal read
 * kernel over the same bytes, same run).
 *
 * Usage: clprim-bench --help lists the ops, types, options and defaults.
 * Sizes are the powers of two from 2^min-log to 2^max-log elements (default
 * 16..28), bounded by device memory. The device: $CLPRIM_DEVICE.
 * --startup measures, per family (--op picks one), context creation plus a
 * first call in fresh processes: cold (every cache empty) and warm.
 * Selection ops (nth_element, nth_approx, quantiles, topk) report the ratio
 * to one read of the input ("read", a minimal kernel) instead of a copy.
 *
 * A row whose call fails is reported on stderr (op, variant, type, size and
 * status) and, with --json, as an object with an "error" field; the run goes
 * on. A row that cannot run at a size (top-k with k > n) is skipped with a
 * note. Exit status: 0 every row ran, 1 a row failed, 2 a usage error. */
#include <clprim/clprim.h>

#include <stdio.h>

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIN_REPS 20
#define MAX_REPS 256
#define MAX_LOG 40
#define MAX_LIVE 16

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
  cl_mem live[MAX_LIVE];
  void *live_host[MAX_LIVE];
};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Fatal errors outside the rows (startup mode, context creation). */
static void die(const char *what, int status) {
  fprintf(stderr, "clprim-bench: %s: %s\n", what, clprim_status_name(status));
  exit(1);
}

static int lg_of(size_t n) {
  int l = 0;
  while (((size_t)1 << l) < n && l < 63) ++l;
  return l;
}

/* ------------------------------------------------------ JSON, rows */

static void json_string(const char *s) {
  putchar('"');
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

/* A number, or null where it is not finite (JSON has no inf / nan). */
static void json_number(const char *key, const char *fmt, double v) {
  printf(",\"%s\":", key);
  if (isfinite(v)) printf(fmt, v);
  else printf("null");
}

/* Starts one JSON object of the results array, with the row's identity. */
static void json_row_begin(struct bench *b, const char *op, const char *variant, clprim_type type,
                           size_t n) {
  printf("%s{\"op\":", b->records++ ? ",\n" : "\n");
  json_string(op);
  printf(",\"variant\":");
  json_string(variant);
  printf(",\"type\":\"%s\",\"path\":\"%s\",\"n\":%zu", clprim_type_name(type),
         clprim_path_name(b->path), n);
}

/* A row that failed: stderr names op, variant, type, size and status; with
 * --json also an object with an "error" field. The run goes on. */
static void row_failed(struct bench *b, const char *op, const char *variant, clprim_type type,
                       size_t n, const char *what, int status) {
  ++b->failed;
  fprintf(stderr, "clprim-bench: %s %s %s n=2^%d: %s failed: %s\n", op, variant,
          clprim_type_name(type), lg_of(n), what, clprim_status_name(status));
  if (b->json) {
    json_row_begin(b, op, variant, type, n);
    printf(",\"error\":");
    json_string(clprim_status_name(status));
    printf(",\"failed_in\":");
    json_string(what);
    printf("}");
  }
  fflush(stdout);
}

/* A row that cannot run here: a note on stderr (and a "skipped" object). */
static void row_skipped(struct bench *b, const char *op, const char *variant, clprim_type type,
                        size_t n, const char *why) {
  fprintf(stderr, "clprim-bench: note: %s %s %s n=2^%d skipped: %s\n", op, variant,
          clprim_type_name(type), lg_of(n), why);
  if (b->json) {
    json_row_begin(b, op, variant, type, n);
    printf(",\"skipped\":");
    json_string(why);
    printf("}");
  }
  fflush(stdout);
}

/* A failure of a family's setup (a buffer, the copy or read baseline): the
 * family's remaining rows at this type and size are abandoned. */
static void fail_family(struct bench *b, const char *what, int status) {
  row_failed(b, b->cur_op, "(setup)", b->cur_type, b->cur_n, what, status);
  longjmp(b->abort_family, 1);
}

static void track_host(struct bench *b, void *p) {
  for (int i = 0; i < MAX_LIVE; ++i)
    if (!b->live_host[i]) {
      b->live_host[i] = p;
      return;
    }
}

static void free_host(struct bench *b, void *p) {
  for (int i = 0; i < MAX_LIVE; ++i)
    if (b->live_host[i] == p) b->live_host[i] = NULL;
  free(p);
}

static void *bench_malloc(struct bench *b, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) fail_family(b, "malloc", CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  track_host(b, p);
  return p;
}

static cl_mem device_buffer(struct bench *b, size_t bytes, const void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(b->cl, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            (void *)host, &err);
  if (err != CL_SUCCESS) fail_family(b, "clCreateBuffer", err);
  for (int i = 0; i < MAX_LIVE; ++i)
    if (!b->live[i]) {
      b->live[i] = m;
      break;
    }
  return m;
}

static void release_buffer(struct bench *b, cl_mem m) {
  for (int i = 0; i < MAX_LIVE; ++i)
    if (b->live[i] == m) b->live[i] = NULL;
  clReleaseMemObject(m);
}

/* After a family's setup failed: frees what it still held. */
static void release_live(struct bench *b) {
  for (int i = 0; i < MAX_LIVE; ++i) {
    if (b->live[i]) clReleaseMemObject(b->live[i]);
    free(b->live_host[i]);
    b->live[i] = NULL, b->live_host[i] = NULL;
  }
}

/* Median device time of a copy of `bytes` bytes (read + write = 2 * bytes). */
static double copy_ms(struct bench *b, cl_mem src, cl_mem dst, size_t bytes) {
  double t[MAX_REPS];
  int reps = b->reps;
  for (int r = -3; r < reps; ++r) {
    cl_event e;
    cl_int err = clEnqueueCopyBuffer(b->queue, src, dst, 0, 0, bytes, 0, NULL, &e);
    if (err != CL_SUCCESS) fail_family(b, "clEnqueueCopyBuffer", err);
    clWaitForEvents(1, &e);
    cl_ulong s, f;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof f, &f, NULL);
    clReleaseEvent(e);
    if (r >= 0) t[r] = (double)(f - s) * 1e-6;
  }
  return median(t, reps);
}

static int want_op(const struct bench *b, const char *op);

typedef clprim_status (*bench_call)(struct bench *b, void *arg);

/* Median device time of `call` (one clprim call per run) to *ms; on failure
 * the status, and *what names the step that failed. */
static clprim_status op_ms(struct bench *b, bench_call call, void *arg, double *ms,
                           const char **what) {
  double t[MAX_REPS];
  for (int r = -3; r < b->reps; ++r) {
    clprim_status st = call(b, arg);
    if (st != CLPRIM_SUCCESS) return *what = "call", st;
    double one;
    st = clprim_context_last_time(b->ctx, &one);
    if (st != CLPRIM_SUCCESS) return *what = "clprim_context_last_time", st;
    if (r >= 0) t[r] = one;
  }
  *ms = median(t, b->reps);
  return CLPRIM_SUCCESS;
}

/* Times `call` and prints one result: `bytes` is the minimal traffic (reads
 * + writes); the copy reference moves the same traffic (bytes / 2 read and
 * written). */
static void report(struct bench *b, const char *op, const char *variant, clprim_type type,
                   size_t n, bench_call call, void *arg, double bytes, double copy) {
  double ms = 0;
  const char *what = "";
  clprim_status st = op_ms(b, call, arg, &ms, &what);
  if (st != CLPRIM_SUCCESS) {
    row_failed(b, op, variant, type, n, what, st);
    return;
  }
  double gbs = bytes / (ms * 1e6);
  if (b->json) {
    json_row_begin(b, op, variant, type, n);
    json_number("ms", "%.5f", ms);
    json_number("gbps", "%.1f", gbs);
    json_number("copy_ms", "%.5f", copy);
    json_number("ratio_to_copy", "%.3f", ms / copy);
    printf("}");
  } else {
    printf("%-19s %-27s %-7s %-13s n=2^%-5.2g %9.4f ms %8.1f GB/s  copy %8.4f ms  ratio %.2f\n",
           op, variant, clprim_type_name(type), clprim_path_name(b->path), log2((double)n), ms,
           gbs, copy, ms / copy);
  }
  fflush(stdout);
}

/* Random elements of type: integers in [0, 1000), floats in [0, 1). */
static void *random_data(struct bench *b, clprim_type type, size_t n, unsigned seed) {
  size_t es = clprim_type_size(type);
  unsigned char *p = bench_malloc(b, n * es);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double u = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    switch (type) {
    case CLPRIM_INT32: case CLPRIM_UINT32: ((uint32_t *)p)[i] = (uint32_t)(u * 1000); break;
    case CLPRIM_INT64: case CLPRIM_UINT64: ((uint64_t *)p)[i] = (uint64_t)(u * 1000); break;
    case CLPRIM_FLOAT: ((float *)p)[i] = (float)u; break;
    case CLPRIM_DOUBLE: ((double *)p)[i] = u; break;
    }
  }
  return p;
}

/* -------------------------------------------------------------- scan */

struct scan_arg {
  clprim_type type;
  cl_mem in, out;
  size_t n;
  int inclusive;
};
static clprim_status call_scan(struct bench *b, void *p) {
  struct scan_arg *a = p;
  return a->inclusive
             ? clprim_scan_inclusive(b->ctx, a->n, a->type, clprim_buf(a->in), clprim_buf(a->out))
             : clprim_scan_exclusive(b->ctx, a->n, a->type, clprim_buf(a->in), clprim_buf(a->out));
}

static void bench_scan(struct bench *b, clprim_type type, size_t n) {
  size_t bytes = n * clprim_type_size(type);
  void *host = random_data(b, type, n, 1);
  struct scan_arg a = {type, NULL, NULL, n, 0};
  a.in = device_buffer(b, bytes, host);
  a.out = device_buffer(b, bytes, NULL);
  free_host(b, host);
  double copy = copy_ms(b, a.in, a.out, bytes);
  report(b, "scan", "exclusive", type, n, call_scan, &a, 2.0 * bytes, copy);
  a.inclusive = 1;
  report(b, "scan", "inclusive", type, n, call_scan, &a, 2.0 * bytes, copy);
  release_buffer(b, a.in);
  release_buffer(b, a.out);
}

/* -------------------------------------------------------- reductions */

struct reduce_arg {
  clprim_type type;
  cl_mem in, result;
  size_t n;
  int op; /* 0 argmax, 1 argmin, 2 sum */
};
static clprim_status call_reduce(struct bench *b, void *p) {
  struct reduce_arg *a = p;
  /* Results stay on the device (no host round trip inside the timing). */
  const clprim_buffer in = clprim_buf(a->in), result = clprim_buf(a->result);
  if (a->op == 2) return clprim_reduce_sum(b->ctx, a->n, a->type, in, NULL, result);
  return a->op ? clprim_argmin(b->ctx, a->n, a->type, in, 0, NULL, NULL, result)
               : clprim_argmax(b->ctx, a->n, a->type, in, 0, NULL, NULL, result);
}

/* Reductions read n elements once: the copy reference moves the same bytes
 * (half read, half written). */
static void bench_reduce(struct bench *b, clprim_type type, size_t n) {
  size_t bytes = n * clprim_type_size(type);
  void *host = random_data(b, type, n, 2);
  struct reduce_arg a = {type, NULL, NULL, n, 0};
  a.in = device_buffer(b, bytes, host);
  a.result = device_buffer(b, 16, NULL);
  free_host(b, host);
  cl_mem half = device_buffer(b, bytes / 2 + 1, NULL);
  double copy = copy_ms(b, a.in, half, bytes / 2);
  const char *const names[3] = {"argmax", "argmin", "reduce_sum"};
  for (a.op = 0; a.op < 3; ++a.op)
    if (want_op(b, names[a.op]))
      report(b, names[a.op], a.op == 2 ? "sum" : "first index", type, n, call_reduce, &a,
             (double)bytes, copy);
  release_buffer(b, a.in);
  release_buffer(b, a.result);
  release_buffer(b, half);
}

/* ------------------------------------------------------------ select */

struct select_arg {
  clprim_type type;
  cl_mem in;
  size_t n;
  clprim_predicate pred;
  cl_mem values, indices, count_buffer; /* NULL: not written */
  int partition; /* 1: clprim_partition; 2: the same, rest reversed; 3: clprim_partition3 */
  clprim_predicate pred2;
};
static clprim_status call_select(struct bench *b, void *p) {
  struct select_arg *a = p;
  /* uint32 indices; the count stays on the device. */
  if (a->partition == 3)
    return clprim_partition3(b->ctx, a->n, a->type, clprim_buf(a->in), &a->pred, &a->pred2, 0,
                             clprim_buf(a->values), clprim_buf(a->indices), NULL,
                             clprim_buf(a->count_buffer));
  if (a->partition)
    return clprim_partition(b->ctx, a->n, a->type, clprim_buf(a->in), &a->pred,
                            a->partition == 2 ? CLPRIM_PARTITION_REVERSED : 0u,
                            clprim_buf(a->values), clprim_buf(a->indices), NULL,
                            clprim_buf(a->count_buffer));
  return clprim_select(b->ctx, a->n, a->type, clprim_buf(a->in), &a->pred, 0,
                       clprim_buf(a->values), clprim_buf(a->indices), NULL,
                       clprim_buf(a->count_buffer));
}

/* Values x > 1 - p of uniform data in [0, 1) (integers: x > 1000 (1 - p)),
 * so about a fraction p passes. Variants: the selected values, their uint32
 * indices, both, and a partition's values, stable and with the rest
 * reversed (CUB's order). Minimal bytes: the input read
 * once and what is written; the copy reference moves the same traffic. */
static void bench_select(struct bench *b, clprim_type type, size_t n) {
  size_t es = clprim_type_size(type), bytes = n * es;
  void *host = random_data(b, type, n, 2);
  struct select_arg a;
  memset(&a, 0, sizeof a);
  a.type = type;
  a.in = device_buffer(b, bytes, host);
  a.n = n;
  cl_mem values = device_buffer(b, bytes, NULL), indices = device_buffer(b, n * 4, NULL);
  a.count_buffer = device_buffer(b, 16, NULL);
  /* The copy moves up to (n es + n (es + 4)) / 2 bytes. */
  size_t copy_bytes = bytes + n * 2 + 64;
  cl_mem copy_src = device_buffer(b, copy_bytes, NULL), copy_dst = device_buffer(b, copy_bytes, NULL);
  free_host(b, host);
  const double rates[3] = {0.01, 0.5, 0.99};
  static const char *const kinds[5] = {"values", "indices", "both", "partition",
                                       "partition reversed"};
  for (int r = 0; r < 3; ++r) {
    double threshold = 1.0 - rates[r];
    a.pred.op = CLPRIM_PRED_GT;
    switch (type) {
    case CLPRIM_INT32: a.pred.a.i32 = (int32_t)(threshold * 1000); break;
    case CLPRIM_UINT32: a.pred.a.u32 = (uint32_t)(threshold * 1000); break;
    case CLPRIM_INT64: a.pred.a.i64 = (int64_t)(threshold * 1000); break;
    case CLPRIM_UINT64: a.pred.a.u64 = (uint64_t)(threshold * 1000); break;
    case CLPRIM_FLOAT: a.pred.a.f32 = (float)threshold; break;
    case CLPRIM_DOUBLE: a.pred.a.f64 = threshold; break;
    }
    uint64_t selected = 0;
    /* The count alone (no values, no indices), to size the traffic. */
    clprim_status st = clprim_select(b->ctx, n, type, clprim_buf(a.in), &a.pred, 0,
                                     clprim_buf(NULL), clprim_buf(NULL), &selected,
                                     clprim_buf(NULL));
    if (st != CLPRIM_SUCCESS) fail_family(b, "clprim_select (count)", st);
    for (int k = 0; k < 5; ++k) {
      a.values = k != 1 ? values : NULL;
      a.indices = k == 1 || k == 2 ? indices : NULL;
      a.partition = k == 3 ? 1 : k == 4 ? 2 : 0;
      size_t written = k >= 3 ? n * es : (size_t)selected * (k == 0 ? es : k == 1 ? 4 : es + 4);
      size_t traffic = bytes + written;
      double copy = copy_ms(b, copy_src, copy_dst, (traffic / 2 + 7) / 8 * 8);
      char variant[32];
      snprintf(variant, sizeof variant, "%s p=%.2f", kinds[k], rates[r]);
      report(b, "select", variant, type, n, call_select, &a, (double)traffic, copy);
    }
  }
  /* Three-way partition into thirds: x < 1/3 first, then x < 2/3, then the
   * rest (integers: 333 and 667); values, compared with a copy of n
   * elements. */
  {
    const double t1 = 1.0 / 3, t2 = 2.0 / 3;
    memset(&a.pred, 0, sizeof a.pred), memset(&a.pred2, 0, sizeof a.pred2);
    a.pred.op = a.pred2.op = CLPRIM_PRED_LT;
    switch (type) {
    case CLPRIM_INT32: a.pred.a.i32 = 333, a.pred2.a.i32 = 667; break;
    case CLPRIM_UINT32: a.pred.a.u32 = 333, a.pred2.a.u32 = 667; break;
    case CLPRIM_INT64: a.pred.a.i64 = 333, a.pred2.a.i64 = 667; break;
    case CLPRIM_UINT64: a.pred.a.u64 = 333, a.pred2.a.u64 = 667; break;
    case CLPRIM_FLOAT: a.pred.a.f32 = (float)t1, a.pred2.a.f32 = (float)t2; break;
    case CLPRIM_DOUBLE: a.pred.a.f64 = t1, a.pred2.a.f64 = t2; break;
    }
    a.values = values, a.indices = NULL, a.partition = 3;
    const double copy = copy_ms(b, copy_src, copy_dst, bytes);
    report(b, "select", "partition3 thirds", type, n, call_select, &a, 2.0 * (double)bytes, copy);
    a.partition = 0;
  }
  release_buffer(b, a.in);
  release_buffer(b, values);
  release_buffer(b, indices);
  release_buffer(b, a.count_buffer);
  release_buffer(b, copy_src);
  release_buffer(b, copy_dst);
}

/* -------------------------------------------------------------- sort */

struct sort_arg {
  clprim_type type;
  cl_mem keys, values, keys_out, values_out, begins, ends;
  size_t n, segments;
  int op; /* 0 keys, 1 pairs (uint32 values), 2 argsort (uint32 indices), 3 segmented keys */
};
static clprim_status call_sort(struct bench *b, void *p) {
  struct sort_arg *a = p;
  switch (a->op) {
  case 0:
    return clprim_sort_keys(b->ctx, a->n, a->type, clprim_buf(a->keys), 0, 0, 0,
                            clprim_buf(a->keys_out));
  case 1:
    return clprim_sort_pairs(b->ctx, a->n, a->type, clprim_buf(a->keys), 4, clprim_buf(a->values),
                             0, 0, 0, clprim_buf(a->keys_out), clprim_buf(a->values_out));
  case 2:
    return clprim_argsort(b->ctx, a->n, a->type, clprim_buf(a->keys), 0, 0, 0,
                          clprim_buf(a->values_out), clprim_buf(NULL));
  default:
    return clprim_segmented_sort_keys(b->ctx, a->n, a->type, clprim_buf(a->keys), a->segments,
                                      clprim_buf(a->begins), clprim_buf(a->ends), 0,
                                      clprim_buf(a->keys_out));
  }
}

/* Keys with every bit random (integers over their whole range, so no
 * digit pass is skipped), floats uniform in (0, 1] as CUB's anchor's
 * curandGenerateUniform makes them (a random 32-bit integer times 2^-32
 * plus 2^-33, in float arithmetic: small values keep random low bits). */
static void *sort_keys_data(struct bench *b, clprim_type type, size_t n, unsigned seed) {
  size_t es = clprim_type_size(type);
  unsigned char *p = bench_malloc(b, n * es);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const uint64_t r = s * 0x2545F4914F6CDD1Dull;
    switch (type) {
    case CLPRIM_INT32: case CLPRIM_UINT32: ((uint32_t *)p)[i] = (uint32_t)(r >> 32); break;
    case CLPRIM_INT64: case CLPRIM_UINT64: ((uint64_t *)p)[i] = r; break;
    case CLPRIM_FLOAT: /* as curandGenerateUniform: a 32-bit integer, in float arithmetic */
      ((float *)p)[i] = (float)(uint32_t)(r >> 32) * 0x1p-32f + 0x1p-33f;
      break;
    case CLPRIM_DOUBLE: ((double *)p)[i] = (double)(r >> 11) * (1.0 / 9007199254740992.0); break;
    }
  }
  return p;
}

/* One row of the sort family: Gkeys/s, and the ratio to copies of the
 * bytes that the digit passes move (passes x (key + value bytes), read and
 * written), the copies measured in the same run. */
static void report_sort(struct bench *b, const char *op, const char *variant, clprim_type type,
                        size_t n, struct sort_arg *a, unsigned passes, double copy_one) {
  double ms = 0;
  const char *what = "";
  clprim_status st = op_ms(b, call_sort, a, &ms, &what);
  if (st != CLPRIM_SUCCESS) {
    row_failed(b, op, variant, type, n, what, st);
    return;
  }
  const double copy = passes * copy_one, gkeys = (double)n / (ms * 1e6);
  if (b->json) {
    json_row_begin(b, op, variant, type, n);
    json_number("ms", "%.5f", ms);
    json_number("gkeys_per_s", "%.3f", gkeys);
    json_number("passes", "%.0f", (double)passes);
    json_number("copy_ms", "%.5f", copy);
    json_number("ratio_to_copy", "%.3f", ms / copy);
    printf("}");
  } else {
    printf("%-19s %-27s %-7s %-13s n=2^%-5.2g %9.4f ms %7.2f Gkeys/s  %u x copy %8.4f ms  ratio "
           "%.2f\n",
           op, variant, clprim_type_name(type), clprim_path_name(b->path), log2((double)n), ms,
           gkeys, passes, copy, ms / copy);
  }
  fflush(stdout);
}

/* sort_keys, sort_pairs (uint32 values), argsort (uint32 indices) and
 * segmented_sort (segments of 1024 keys) on random keys. */
static void bench_sort(struct bench *b, clprim_type type, size_t n) {
  const size_t ks = clprim_type_size(type);
  const unsigned passes = (unsigned)ks; /* 8-bit digits; random keys skip none */
  void *host = sort_keys_data(b, type, n, 5);
  struct sort_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.keys = device_buffer(b, n * ks, host);
  free_host(b, host);
  a.keys_out = device_buffer(b, n * ks, NULL);
  const int pairs = want_op(b, "sort_pairs") || want_op(b, "argsort");
  if (pairs) {
    uint32_t *v = bench_malloc(b, n * 4);
    for (size_t i = 0; i < n; ++i) v[i] = (uint32_t)i;
    a.values = device_buffer(b, n * 4, v);
    free_host(b, v);
    a.values_out = device_buffer(b, n * 4, NULL);
  }
  cl_mem copy_src = device_buffer(b, n * (ks + 4), NULL);
  cl_mem copy_dst = device_buffer(b, n * (ks + 4), NULL);
  const double copy_keys = copy_ms(b, copy_src, copy_dst, n * ks);
  const double copy_pairs = pairs ? copy_ms(b, copy_src, copy_dst, n * (ks + 4)) : 0;
  if (want_op(b, "sort_keys")) {
    a.op = 0;
    report_sort(b, "sort_keys", "random keys", type, n, &a, passes, copy_keys);
  }
  if (want_op(b, "sort_pairs")) {
    a.op = 1;
    report_sort(b, "sort_pairs", "uint32 values", type, n, &a, passes, copy_pairs);
  }
  if (want_op(b, "argsort")) {
    a.op = 2;
    report_sort(b, "argsort", "uint32 indices", type, n, &a, passes, copy_pairs);
  }
  if (want_op(b, "segmented_sort") && n >= 1024) {
    a.op = 3, a.segments = n / 1024;
    uint64_t *off = bench_malloc(b, (a.segments + 1) * 8);
    for (size_t s = 0; s <= a.segments; ++s) off[s] = s * 1024;
    a.begins = device_buffer(b, a.segments * 8, off);
    a.ends = device_buffer(b, a.segments * 8, off + 1);
    free_host(b, off);
    char variant[48];
    snprintf(variant, sizeof variant, "2^%d segments of 1024", lg_of(a.segments));
    /* One work-group sorts each segment in local memory: one read and one
     * write of the keys, so the reference is one copy. */
    report_sort(b, "segmented_sort", variant, type, n, &a, 1, copy_keys);
    release_buffer(b, a.begins);
    release_buffer(b, a.ends);
  }
  release_buffer(b, a.keys);
  release_buffer(b, a.keys_out);
  if (pairs) {
    release_buffer(b, a.values);
    release_buffer(b, a.values_out);
  }
  release_buffer(b, copy_src);
  release_buffer(b, copy_dst);
}

/* ------------------------------------------------- one-read baseline */

/* The read baseline: a minimal kernel that reads every byte once (uint4
 * loads, grid-stride), measured in the same run as the calls it is compared
 * with (histograms, reduce-by-key, selection, runs). */
static const char *read_source =
    "__kernel void read_all(__global const uint4 *in, ulong n4, __global uint *out) {\n"
    "  uint acc = 0;\n"
    "  for (ulong i = get_global_id(0); i < n4; i += get_global_size(0)) {\n"
    "    uint4 v = in[i];\n"
    "    acc ^= v.x ^ v.y ^ v.z ^ v.w;\n"
    "  }\n"
    "  if (acc == 0x9E3779B9u) out[0] = acc;\n"
    "}\n";

static double read_ms(struct bench *b, cl_mem in, size_t bytes) {
  cl_int err;
  const char *what = "";
  cl_kernel kernel = NULL;
  cl_mem out = NULL;
  double t[MAX_REPS];
  cl_program program = clCreateProgramWithSource(b->cl, 1, &read_source, NULL, &err);
  if (err != CL_SUCCESS) {
    what = "read baseline: clCreateProgramWithSource";
    goto fail;
  }
  cl_device_id dev = clprim_context_device(b->ctx);
  err = clBuildProgram(program, 1, &dev, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    what = "read baseline: clBuildProgram";
    goto fail;
  }
  kernel = clCreateKernel(program, "read_all", &err);
  if (err != CL_SUCCESS) {
    what = "read baseline: clCreateKernel";
    goto fail;
  }
  out = clCreateBuffer(b->cl, CL_MEM_READ_WRITE, 4, NULL, &err);
  if (err != CL_SUCCESS) {
    what = "read baseline: clCreateBuffer";
    goto fail;
  }
  cl_ulong n4 = bytes / 16;
  size_t local = 256, global = local * (b->info->compute_units ? b->info->compute_units : 1) * 8;
  if (!(b->info->device_type & CL_DEVICE_TYPE_GPU)) local = 64, global = 64 * 64;
  clSetKernelArg(kernel, 0, sizeof in, &in);
  clSetKernelArg(kernel, 1, sizeof n4, &n4);
  clSetKernelArg(kernel, 2, sizeof out, &out);
  for (int r = -3; r < b->reps; ++r) {
    cl_event e;
    err = clEnqueueNDRangeKernel(b->queue, kernel, 1, NULL, &global, &local, 0, NULL, &e);
    if (err != CL_SUCCESS) {
      what = "read baseline: clEnqueueNDRangeKernel";
      goto fail;
    }
    clWaitForEvents(1, &e);
    cl_ulong s0, f;
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof s0, &s0, NULL);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof f, &f, NULL);
    clReleaseEvent(e);
    if (r >= 0) t[r] = (double)(f - s0) * 1e-6;
  }
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  return median(t, b->reps);
fail:
  if (out) clReleaseMemObject(out);
  if (kernel) clReleaseKernel(kernel);
  if (program) clReleaseProgram(program);
  fail_family(b, what, err);
  return 0;
}

/* Times `call` and prints one result against the read baseline (ratio = ms
 * / one read of the input); call NULL: `read` itself is the result. */
static void report_vs_read(struct bench *b, const char *op, const char *variant, clprim_type type,
                           size_t n, bench_call call, void *arg, double read) {
  double ms = read;
  const char *what = "";
  clprim_status st = call ? op_ms(b, call, arg, &ms, &what) : CLPRIM_SUCCESS;
  if (st != CLPRIM_SUCCESS) {
    row_failed(b, op, variant, type, n, what, st);
    return;
  }
  if (b->json) {
    json_row_begin(b, op, variant, type, n);
    json_number("ms", "%.5f", ms);
    json_number("read_ms", "%.5f", read);
    json_number("ratio_to_read", "%.3f", ms / read);
    printf("}");
  } else {
    printf("%-19s %-27s %-7s %-13s n=2^%-5.2g %9.4f ms  read %8.4f ms  ratio %.2f\n", op, variant,
           clprim_type_name(type), clprim_path_name(b->path), log2((double)n), ms, read, ms / read);
  }
  fflush(stdout);
}

/* ------------------------------------------------- selection, top-k */

struct nth_arg {
  clprim_type type;
  cl_mem in, out, indices;
  size_t n;
  int op; /* 0 nth, 1 approx, 2 quantiles, 3 topk */
  uint64_t k;
  const uint64_t *ranks;
  size_t count;
};
static clprim_status call_nth(struct bench *b, void *p) {
  struct nth_arg *a = p;
  clprim_value v, vs[128];
  uint64_t err;
  const clprim_buffer in = clprim_buf(a->in), none = clprim_buf(NULL);
  switch (a->op) {
  case 0: return clprim_nth_element(b->ctx, a->n, a->type, in, a->k, 0, &v, none);
  case 1: return clprim_nth_element_approx(b->ctx, a->n, a->type, in, a->k, 0, &v, &err, none);
  case 2: return clprim_quantiles(b->ctx, a->n, a->type, in, a->ranks, a->count, 0, vs, none);
  default:
    return clprim_topk(b->ctx, a->n, a->type, in, a->k, 0, clprim_buf(a->out),
                       clprim_buf(a->indices));
  }
}

/* The distributions of the selection tests (tests/test_nth_element.c), for
 * float and double: `data` 0 uniform in [0, 1), 1 16 distinct values (the
 * uniform data rounded down to sixteenths), then normal, sorted, reverse
 * sorted, all equal, 128 and 1024 distinct values, half the elements equal
 * to one value (the median's: heavy duplicates of the answer), adversarial
 * (99% within 1e-30 of 0, 1% spread over +-5e5). */
static const char *const nth_data_names[] = {"uniform", "16distinct", "normal", "sorted",
                                             "reverse", "equal", "128distinct", "1024distinct",
                                             "dup_answer", "adversarial"};
#define NTH_DATA_COUNT (int)(sizeof nth_data_names / sizeof nth_data_names[0])

static void nth_data(clprim_type type, unsigned char *host, size_t n, int data) {
  if (data == 1) {
    for (size_t i = 0; i < n; ++i) switch (type) {
      case CLPRIM_INT32: case CLPRIM_UINT32: ((uint32_t *)host)[i] = ((uint32_t *)host)[i] / 64 * 64; break;
      case CLPRIM_INT64: case CLPRIM_UINT64: ((uint64_t *)host)[i] = ((uint64_t *)host)[i] / 64 * 64; break;
      case CLPRIM_FLOAT: ((float *)host)[i] = floorf(((float *)host)[i] * 16) / 16; break;
      case CLPRIM_DOUBLE: ((double *)host)[i] = floor(((double *)host)[i] * 16) / 16; break;
      }
    return;
  }
  uint64_t s = 0x2545F4914F6CDD1Dull + (uint64_t)data;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const double u = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    const double u2 = (double)(s & 0x7FFu) / 2048.0 + (double)i / (double)n / 2048.0;
    double v = 0;
    switch (data) {
    case 2: v = sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * u2); break;
    case 3: v = (double)i / (double)n; break;
    case 4: v = 1.0 - (double)i / (double)n; break;
    case 5: v = 0.5; break;
    case 6: v = (double)(s % 128) / 128; break;
    case 7: v = (double)(s % 1024) / 1024; break;
    case 8: v = u < 0.5 ? 0.5 : u; break;
    default: v = u < 0.99 ? 1e-30 * u2 : (u - 0.995) * 1e8; break;
    }
    if (type == CLPRIM_FLOAT) ((float *)host)[i] = (float)v;
    else ((double *)host)[i] = v;
  }
}

/* nth_element (k = n/2, n/100, n-1), approximate (k = n/2), quantiles (9
 * deciles, 99 percentiles), top-k (k = 1, 1000, n/2; values and uint32
 * indices) on uniform data and on 16 distinct values; with --data all (float
 * and double) also on the other distributions of nth_data. */
static void bench_nth(struct bench *b, clprim_type type, size_t n) {
  size_t es = clprim_type_size(type), bytes = n * es;
  unsigned char *host = random_data(b, type, n, 3);
  struct nth_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.in = device_buffer(b, bytes, host);
  /* Top-k's outputs hold the largest k that runs at this n (k <= n). */
  const uint64_t topk_ks[3] = {1, 1000, n / 2};
  const char *const topk_kn[3] = {"1", "1000", "n/2"};
  size_t kmax = 1;
  for (int j = 0; j < 3; ++j)
    if (topk_ks[j] <= n && topk_ks[j] > kmax) kmax = (size_t)topk_ks[j];
  a.out = device_buffer(b, kmax * es, NULL);
  a.indices = device_buffer(b, kmax * 4, NULL);
  uint64_t deciles[9], percentiles[99];
  for (int j = 0; j < 9; ++j) deciles[j] = clprim_quantile_rank(n, (j + 1) / 10.0);
  for (int j = 0; j < 99; ++j) percentiles[j] = clprim_quantile_rank(n, (j + 1) / 100.0);
  const int ndata = b->all_data && (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE) ? NTH_DATA_COUNT : 2;
  for (int data = 0; data < ndata; ++data) {
    const char *dname = nth_data_names[data];
    if (data) {
      nth_data(type, host, n, data);
      cl_int err = clEnqueueWriteBuffer(b->queue, a.in, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
      if (err != CL_SUCCESS) fail_family(b, "clEnqueueWriteBuffer", err);
    }
    double read = read_ms(b, a.in, bytes);
    char variant[48];
    if (want_op(b, "read")) report_vs_read(b, "read", dname, type, n, NULL, NULL, read);
    if (want_op(b, "nth_element")) {
      const uint64_t ks[3] = {n / 2, n / 100, n - 1};
      const char *kn[3] = {"n/2", "n/100", "n-1"};
      a.op = 0;
      for (int j = 0; j < 3; ++j) {
        a.k = ks[j];
        snprintf(variant, sizeof variant, "%s k=%s", dname, kn[j]);
        report_vs_read(b, "nth_element", variant, type, n, call_nth, &a, read);
      }
    }
    if (want_op(b, "nth_approx")) {
      a.op = 1, a.k = n / 2;
      snprintf(variant, sizeof variant, "%s k=n/2", dname);
      report_vs_read(b, "nth_approx", variant, type, n, call_nth, &a, read);
    }
    if (want_op(b, "quantiles")) {
      a.op = 2, a.ranks = deciles, a.count = 9;
      snprintf(variant, sizeof variant, "%s 9 deciles", dname);
      report_vs_read(b, "quantiles", variant, type, n, call_nth, &a, read);
      a.ranks = percentiles, a.count = 99;
      snprintf(variant, sizeof variant, "%s 99 percentiles", dname);
      report_vs_read(b, "quantiles", variant, type, n, call_nth, &a, read);
    }
    if (want_op(b, "topk")) {
      a.op = 3;
      for (int j = 0; j < 3; ++j) {
        snprintf(variant, sizeof variant, "%s k=%s", dname, topk_kn[j]);
        if (topk_ks[j] > n || topk_ks[j] == 0) {
          row_skipped(b, "topk", variant, type, n, topk_ks[j] ? "k > n" : "k = 0 (n/2 at n = 1)");
          continue;
        }
        a.k = topk_ks[j];
        report_vs_read(b, "topk", variant, type, n, call_nth, &a, read);
      }
    }
  }
  free_host(b, host);
  release_buffer(b, a.in);
  release_buffer(b, a.out);
  release_buffer(b, a.indices);
}

/* ------------------------------------------- histograms, reduce-by-key */

struct hist_arg {
  int op; /* 0 histogram_even, 1 histogram_keys, 2 reduce_by_key_dense, 3 reduce_by_key */
  clprim_type type;
  cl_mem keys, values, out_a, out_b, count;
  size_t n, bins;
  clprim_value lo, hi;
};
static clprim_status call_hist(struct bench *b, void *p) {
  struct hist_arg *a = p;
  const clprim_buffer keys = clprim_buf(a->keys), values = clprim_buf(a->values);
  const clprim_buffer out_a = clprim_buf(a->out_a), none = clprim_buf(NULL);
  switch (a->op) {
  case 0:
    return clprim_histogram_even(b->ctx, a->n, a->type, values, a->lo, a->hi, a->bins, out_a,
                                 NULL, none);
  case 1: return clprim_histogram_keys(b->ctx, a->n, a->type, keys, a->bins, out_a, NULL, none);
  case 2:
    return clprim_reduce_by_key_dense(b->ctx, a->n, CLPRIM_INT32, keys, a->type, values, a->bins,
                                      0, out_a, none, NULL, none);
  default:
    return clprim_reduce_by_key(b->ctx, a->n, CLPRIM_INT32, keys, a->type, values, out_a,
                                clprim_buf(a->out_b), NULL, clprim_buf(a->count));
  }
}

/* Keys in [0, bins): random, sorted, or sorted with each key swapped with
 * its neighbour with probability 1/2 (partly sorted). */
static uint32_t *bench_keys(struct bench *b, size_t n, size_t bins, int order) {
  uint32_t *k = bench_malloc(b, n * 4);
  uint64_t s = 0x243F6A8885A308D3ull;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    k[i] = order == 0 ? (uint32_t)(s % bins) : (uint32_t)((unsigned __int128)i * bins / n);
  }
  if (order == 2)
    for (size_t i = 0; i + 1 < n; ++i) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      if (s & 1) {
        uint32_t t = k[i];
        k[i] = k[i + 1], k[i + 1] = t;
      }
    }
  return k;
}

/* histogram: values of type (uniform [0, 1), integers [0, 1000)) into 256
 * and 2^20 bins; histogram_keys: random keys of type (int32 or uint32) into
 * 2^20 bins; reduce_by_key_dense: int32 keys (random, sorted, partly sorted)
 * into 2^20 keys, values of type; reduce_by_key: sorted int32 keys in
 * min(n, 2^20) runs, values of type. */
static void bench_hist(struct bench *b, clprim_type type, size_t n) {
  const clprim_device_info *info = b->info;
  const size_t es = clprim_type_size(type), bins_many = (size_t)1 << 20;
  struct hist_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  void *host = random_data(b, type, n, 3);
  a.values = device_buffer(b, n * es, host);
  free_host(b, host);
  double read_values = read_ms(b, a.values, n * es);
  char variant[32];
  if (want_op(b, "histogram")) {
    a.op = 0;
    if (type == CLPRIM_FLOAT) a.hi.f32 = 1.0f;
    else if (type == CLPRIM_DOUBLE) a.hi.f64 = 1.0;
    else if (es == 4) a.hi.u32 = 1000;
    else a.hi.u64 = 1000;
    const size_t bin_counts[2] = {256, bins_many};
    a.out_a = device_buffer(b, bins_many * 4, NULL);
    for (int k = 0; k < 2; ++k) {
      a.bins = bin_counts[k];
      snprintf(variant, sizeof variant, "%zu bins", a.bins);
      report_vs_read(b, "histogram", variant, type, n, call_hist, &a, read_values);
    }
    release_buffer(b, a.out_a);
  }
  const int want_keys = want_op(b, "histogram_keys") && (type == CLPRIM_INT32 || type == CLPRIM_UINT32), want_dense = want_op(b, "reduce_by_key_dense");
  const int want_runs = want_op(b, "reduce_by_key");
  const int dense_ok = es == 4 || info->has_int64_atomics;
  if (want_dense && !dense_ok)
    row_skipped(b, "reduce_by_key_dense", "2^20 keys", type, n,
                "64-bit sums need cl_khr_int64_base_atomics");
  if (want_keys || (want_dense && dense_ok) || want_runs) {
    const char *const order_names[3] = {"random", "sorted", "partly sorted"};
    /* out_a: 2^20 sums or counts, or n unique keys */
    a.out_a = device_buffer(b, (n > bins_many ? n : bins_many) * 8, NULL);
    a.out_b = device_buffer(b, n * es, NULL);
    a.count = device_buffer(b, 8, NULL);
    a.bins = bins_many;
    for (int order = 0; order < 3; ++order) {
      uint32_t *keys = bench_keys(b, n, bins_many, order);
      a.keys = device_buffer(b, n * 4, keys);
      free_host(b, keys);
      double read_keys = read_ms(b, a.keys, n * 4);
      if (order == 0 && want_keys) {
        a.op = 1; /* the keys of type (int32 or uint32), all in [0, 2^20) */
        report_vs_read(b, "histogram_keys", "2^20 keys random", type, n, call_hist, &a, read_keys);
      }
      if (want_dense && dense_ok) {
        a.op = 2;
        snprintf(variant, sizeof variant, "2^20 keys %s", order_names[order]);
        report_vs_read(b, "reduce_by_key_dense", variant, type, n, call_hist, &a,
                       read_keys + read_values);
      }
      if (order == 1 && want_runs) {
        a.op = 3;
        /* Sorted keys i * 2^20 / n: min(n, 2^20) distinct keys, one run each.
         * out_a: the unique keys (int32), out_b: the sums (type) */
        snprintf(variant, sizeof variant, "2^%d sorted runs", lg_of(n < bins_many ? n : bins_many));
        report_vs_read(b, "reduce_by_key", variant, type, n, call_hist, &a, read_keys + read_values);
      }
      release_buffer(b, a.keys);
    }
    release_buffer(b, a.out_a);
    release_buffer(b, a.out_b);
    release_buffer(b, a.count);
  }
  release_buffer(b, a.values);
}

/* -------------------------------------------------------------- runs */

struct runs_arg {
  int op; /* 0 unique, 1 run_length_encode, 2 unique_by_key, 3 non_trivial_runs,
            4 inclusive scan by key */
  clprim_type type;
  cl_mem in, values, out_a, out_b, count;
  size_t n;
};
static clprim_status call_runs(struct bench *b, void *p) {
  struct runs_arg *a = p;
  /* The count stays on the device (count_out; no host read in the timing). */
  const clprim_buffer in = clprim_buf(a->in), out_a = clprim_buf(a->out_a);
  const clprim_buffer out_b = clprim_buf(a->out_b), count = clprim_buf(a->count);
  switch (a->op) {
  case 0: return clprim_unique(b->ctx, a->n, a->type, in, out_a, NULL, count);
  case 1: return clprim_run_length_encode(b->ctx, a->n, a->type, in, 0, out_a, out_b, NULL, count);
  case 2:
    return clprim_unique_by_key(b->ctx, a->n, CLPRIM_UINT32, in, a->type, clprim_buf(a->values),
                                out_a, out_b, NULL, count);
  case 4:
    return clprim_scan_inclusive_by_key(b->ctx, a->n, CLPRIM_UINT32, in, a->type,
                                        clprim_buf(a->values), out_b);
  default: return clprim_non_trivial_runs(b->ctx, a->n, a->type, in, 0, out_a, out_b, NULL, count);
  }
}

/* Runs of type: runlen 1, random elements (xorshift64*, as test_rand: two
 * neighbours are almost never equal); otherwise sorted runs, element i =
 * i / runlen (as CUB's anchor's sorted_runs). Integers take the low bits of
 * that number; floats and doubles the bits of 1.0 plus its low 29 (61) bits:
 * distinct finite normal numbers, increasing along the sorted runs (1.0 + k
 * as a number would merge runs above 2^24 for float). */
static void *runs_data(struct bench *b, clprim_type type, size_t n, size_t runlen, unsigned seed) {
  unsigned char *p = bench_malloc(b, n * clprim_type_size(type));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    uint64_t k;
    if (runlen == 1) {
      s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
      k = s * 0x2545F4914F6CDD1Dull;
    } else {
      k = i / runlen;
    }
    switch (type) {
    case CLPRIM_INT32: case CLPRIM_UINT32:
      ((uint32_t *)p)[i] = (uint32_t)(runlen == 1 ? k >> 32 : k);
      break;
    case CLPRIM_INT64: case CLPRIM_UINT64: ((uint64_t *)p)[i] = k; break;
    case CLPRIM_FLOAT: {
      const uint32_t bits = 0x3F800000u + (uint32_t)(k & 0x1FFFFFFFu);
      memcpy((float *)p + i, &bits, 4);
      break;
    }
    case CLPRIM_DOUBLE: {
      const uint64_t bits = 0x3FF0000000000000ull + (k & 0x1FFFFFFFFFFFFFFFull);
      memcpy((double *)p + i, &bits, 8);
      break;
    }
    }
  }
  return p;
}

/* unique and run_length_encode (uint32 lengths) on runs of 1 (random), 8
 * and 1024 of the type; non_trivial_runs (uint32 offsets and lengths) on
 * runs of 8 of the type; unique_by_key on runs of 8 of uint32 keys with
 * float values (keys_out and values_out); scan_by_key (inclusive) of float
 * values by uint32 keys in runs of 1024. The count goes to a device buffer.
 * Each row is compared with one read of its inputs (the elements; keys and
 * values for unique_by_key), measured in the same run. */
static void bench_runs(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type);
  const int want_unique = want_op(b, "unique"), want_rle = want_op(b, "run_length_encode");
  const int want_ntr = want_op(b, "non_trivial_runs");
  const int want_ubk = want_op(b, "unique_by_key") && type == CLPRIM_FLOAT;
  const int want_sbk = want_op(b, "scan_by_key") && type == CLPRIM_FLOAT;
  /* uint32 lengths and offsets: n must be below 2^32. */
  const int index32_ok = (uint64_t)n <= UINT32_MAX;
  struct runs_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.out_a = device_buffer(b, n * es, NULL); /* unique elements, offsets (uint32), keys_out */
  a.out_b = device_buffer(b, n * (es > 4 ? es : 4), NULL); /* lengths (uint32), values_out */
  a.count = device_buffer(b, 8, NULL);
  static const size_t runlens[3] = {1, 8, 1024};
  for (int v = 0; v < 3; ++v) {
    const size_t runlen = runlens[v];
    char variant[32];
    snprintf(variant, sizeof variant, "runs of %zu", runlen);
    if (want_unique || want_rle || (runlen == 8 && want_ntr)) {
      void *host = runs_data(b, type, n, runlen, 7);
      a.in = device_buffer(b, n * es, host);
      free_host(b, host);
      const double read = read_ms(b, a.in, n * es);
      if (want_unique) {
        a.op = 0;
        report_vs_read(b, "unique", variant, type, n, call_runs, &a, read);
      }
      if (want_rle) {
        a.op = 1;
        if (index32_ok) report_vs_read(b, "run_length_encode", variant, type, n, call_runs, &a, read);
        else row_skipped(b, "run_length_encode", variant, type, n, "uint32 lengths need n < 2^32");
      }
      if (runlen == 8 && want_ntr) {
        a.op = 3;
        if (index32_ok) report_vs_read(b, "non_trivial_runs", variant, type, n, call_runs, &a, read);
        else row_skipped(b, "non_trivial_runs", variant, type, n, "uint32 lengths need n < 2^32");
      }
      release_buffer(b, a.in);
      a.in = NULL;
    }
    if (runlen == 8 && want_ubk) {
      /* Keys: uint32 runs of 8; values: random floats (type is float here). */
      void *keys = runs_data(b, CLPRIM_UINT32, n, runlen, 7);
      a.in = device_buffer(b, n * 4, keys);
      free_host(b, keys);
      void *values = random_data(b, type, n, 8);
      a.values = device_buffer(b, n * es, values);
      free_host(b, values);
      const double read = read_ms(b, a.in, n * 4) + read_ms(b, a.values, n * es);
      a.op = 2;
      report_vs_read(b, "unique_by_key", "runs of 8 uint32 keys", type, n, call_runs, &a, read);
      release_buffer(b, a.in);
      release_buffer(b, a.values);
      a.in = a.values = NULL;
    }
    if (runlen == 1024 && want_sbk) {
      /* Inclusive sums of float values by uint32 keys in runs of 1024 (as
       * CUB's anchor); compared with a read of keys and values. */
      void *keys = runs_data(b, CLPRIM_UINT32, n, runlen, 7);
      a.in = device_buffer(b, n * 4, keys);
      free_host(b, keys);
      void *values = random_data(b, type, n, 8);
      a.values = device_buffer(b, n * es, values);
      free_host(b, values);
      const double read = read_ms(b, a.in, n * 4) + read_ms(b, a.values, n * es);
      a.op = 4;
      report_vs_read(b, "scan_by_key", "inclusive, runs of 1024 uint32 keys", type, n, call_runs,
                     &a, read);
      release_buffer(b, a.in);
      release_buffer(b, a.values);
      a.in = a.values = NULL;
    }
  }
  release_buffer(b, a.out_a);
  release_buffer(b, a.out_b);
  release_buffer(b, a.count);
}

/* ------------------------------------------------ segmented reductions */

struct segreduce_arg {
  int op; /* 0 segmented_sum, 1 segmented_max, 2 segmented_argmax */
  clprim_type type;
  cl_mem in, begins, ends, out;
  size_t n, segments;
};
static clprim_status call_segreduce(struct bench *b, void *p) {
  struct segreduce_arg *a = p;
  /* The results stay on the device; the offsets are made before the timing. */
  const clprim_buffer in = clprim_buf(a->in), out = clprim_buf(a->out);
  const clprim_buffer begins = clprim_buf(a->begins), ends = clprim_buf(a->ends);
  switch (a->op) {
  case 0: return clprim_segmented_sum(b->ctx, a->n, a->type, in, a->segments, begins, ends, out);
  case 1:
    return clprim_segmented_max(b->ctx, a->n, a->type, in, a->segments, begins, ends, 0, out);
  default:
    return clprim_segmented_argmax(b->ctx, a->n, a->type, in, a->segments, begins, ends, 0, out);
  }
}

/* segmented_sum, segmented_max and segmented_argmax (two uint64 per segment:
 * value bits and index) on random elements of the type in segments of 1024
 * (begin 1024 s, end 1024 (s + 1), the last clipped at n: n / 1024 segments
 * for n >= 1024), uint64 offsets on the device. Each row is compared with
 * one read of the input, measured in the same run. */
static void bench_segreduce(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type);
  struct segreduce_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n, a.segments = (n + 1023) / 1024;
  void *host = random_data(b, type, n, 9);
  a.in = device_buffer(b, n * es, host);
  free_host(b, host);
  uint64_t *off = bench_malloc(b, a.segments * 16); /* begins, then ends */
  for (size_t s = 0; s < a.segments; ++s)
    off[s] = s * 1024, off[a.segments + s] = (s + 1) * 1024 < n ? (s + 1) * 1024 : n;
  a.begins = device_buffer(b, a.segments * 8, off);
  a.ends = device_buffer(b, a.segments * 8, off + a.segments);
  free_host(b, off);
  a.out = device_buffer(b, a.segments * 16, NULL); /* elements of type, or uint64 pairs */
  const double read = read_ms(b, a.in, n * es);
  static const char *const names[3] = {"segmented_sum", "segmented_max", "segmented_argmax"};
  for (a.op = 0; a.op < 3; ++a.op)
    if (want_op(b, names[a.op]))
      report_vs_read(b, names[a.op], "segments of 1024", type, n, call_segreduce, &a, read);
  release_buffer(b, a.in);
  release_buffer(b, a.begins);
  release_buffer(b, a.ends);
  release_buffer(b, a.out);
}

/* Top-k and nth_element per row of a matrix (batched_topk,
 * batched_nth_element): rows of 1024 and of 32768 random elements of the
 * type (the last partial row left out); top-k with k = 8 and 100, values
 * and uint32 indices, sorted; nth_element of rank row / 2 (the median).
 * Compared with one read of the input, in the same run. */
struct segtopk_arg {
  int nth;
  clprim_type type;
  cl_mem in, values, indices;
  size_t rows, row_length;
  uint64_t k;
};
static clprim_status call_segtopk(struct bench *b, void *p) {
  struct segtopk_arg *a = p;
  if (a->nth)
    return clprim_batched_nth_element(b->ctx, a->rows, a->row_length, a->type, clprim_buf(a->in),
                                      a->k, 0, clprim_buf(a->values));
  return clprim_batched_topk(b->ctx, a->rows, a->row_length, a->type, clprim_buf(a->in), a->k,
                             CLPRIM_TOPK_SORTED, clprim_buf(a->values), clprim_buf(a->indices));
}
static void bench_segtopk(struct bench *b, clprim_type type, size_t n) {
  if (!want_op(b, "batched_topk") && !want_op(b, "batched_nth_element")) return;
  const size_t es = clprim_type_size(type);
  struct segtopk_arg a;
  memset(&a, 0, sizeof a);
  a.type = type;
  void *host = random_data(b, type, n, 10);
  a.in = device_buffer(b, n * es, host);
  free_host(b, host);
  const double read = read_ms(b, a.in, n * es);
  const size_t lengths[2] = {1024, 32768};
  for (int l = 0; l < 2; ++l) {
    a.row_length = lengths[l], a.rows = n / lengths[l];
    if (a.rows == 0) continue;
    a.values = device_buffer(b, a.rows * 100 * es, NULL);
    a.indices = device_buffer(b, a.rows * 100 * 4, NULL);
    char variant[96];
    if (want_op(b, "batched_topk")) {
      const uint64_t ks[2] = {8, 100};
      for (int j = 0; j < 2; ++j) {
        a.nth = 0, a.k = ks[j];
        snprintf(variant, sizeof variant, "rows of %zu, k = %llu, sorted", a.row_length,
                 (unsigned long long)a.k);
        report_vs_read(b, "batched_topk", variant, type, a.rows * a.row_length, call_segtopk, &a,
                       read);
      }
    }
    if (want_op(b, "batched_nth_element")) {
      a.nth = 1, a.k = a.row_length / 2;
      snprintf(variant, sizeof variant, "rows of %zu, the median", a.row_length);
      report_vs_read(b, "batched_nth_element", variant, type, a.rows * a.row_length,
                     call_segtopk, &a, read);
    }
    release_buffer(b, a.values);
    release_buffer(b, a.indices);
  }
  release_buffer(b, a.in);
}

/* ------------------------------------------------------------ startup */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* The families --startup times, each by one call on 2^20 elements. */
static const char *const startup_families[] = {"scan",      "reduce_sum",  "argmax",
                                               "select",    "select_expr", "histogram",
                                               "reduce_by_key", "reduce_by_key_dense",
                                               "median",    "topk",        "sort",
                                               "unique",    "run_length_encode",
                                               "segmented_sum", "scan_by_key", "partition3",
                                               "batched_topk", "batched_nth_element"};
#define STARTUP_FAMILIES (int)(sizeof startup_families / sizeof startup_families[0])

static clprim_status startup_call(clprim_context *ctx, const char *family, cl_mem in, cl_mem keys,
                                  cl_mem out, cl_mem out2, cl_mem begins, cl_mem ends, size_t n) {
  clprim_value v;
  uint64_t count;
  const clprim_buffer none = clprim_buf(NULL);
  if (strcmp(family, "scan") == 0)
    return clprim_scan_exclusive(ctx, n, CLPRIM_FLOAT, clprim_buf(in), clprim_buf(out));
  if (strcmp(family, "reduce_sum") == 0)
    return clprim_reduce_sum(ctx, n, CLPRIM_FLOAT, clprim_buf(in), &v, none);
  if (strcmp(family, "argmax") == 0)
    return clprim_argmax(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, &v, &count, none);
  if (strcmp(family, "select") == 0 || strcmp(family, "select_expr") == 0) {
    if (strcmp(family, "select_expr") == 0)
      return clprim_select_expr(ctx, n, CLPRIM_FLOAT, clprim_buf(in), "x > 0.5f", 0,
                                clprim_buf(out), none, &count, none);
    clprim_predicate pred;
    memset(&pred, 0, sizeof pred);
    pred.op = CLPRIM_PRED_GT, pred.a.f32 = 0.5f;
    return clprim_select(ctx, n, CLPRIM_FLOAT, clprim_buf(in), &pred, 0, clprim_buf(out), none,
                         &count, none);
  }
  if (strcmp(family, "histogram") == 0) {
    clprim_value lo, hi;
    memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
    hi.f32 = 1.0f;
    return clprim_histogram_even(ctx, n, CLPRIM_FLOAT, clprim_buf(in), lo, hi, 256,
                                 clprim_buf(out), NULL, none);
  }
  if (strcmp(family, "reduce_by_key") == 0)
    return clprim_reduce_by_key(ctx, n, CLPRIM_INT32, clprim_buf(keys), CLPRIM_FLOAT,
                                clprim_buf(in), clprim_buf(out), clprim_buf(out2), &count, none);
  if (strcmp(family, "reduce_by_key_dense") == 0)
    return clprim_reduce_by_key_dense(ctx, n, CLPRIM_INT32, clprim_buf(keys), CLPRIM_FLOAT,
                                      clprim_buf(in), 1024, 0, clprim_buf(out), none, NULL, none);
  if (strcmp(family, "median") == 0)
    return clprim_median(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, &v, none);
  if (strcmp(family, "sort") == 0)
    return clprim_sort_keys(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, 0, 0, clprim_buf(out));
  if (strcmp(family, "unique") == 0)
    return clprim_unique(ctx, n, CLPRIM_INT32, clprim_buf(keys), clprim_buf(out), &count, none);
  if (strcmp(family, "run_length_encode") == 0)
    return clprim_run_length_encode(ctx, n, CLPRIM_INT32, clprim_buf(keys), 0, clprim_buf(out),
                                    clprim_buf(out2), &count, none);
  if (strcmp(family, "batched_topk") == 0) /* rows of 1024, k = 8, sorted */
    return clprim_batched_topk(ctx, n / 1024, 1024, CLPRIM_FLOAT, clprim_buf(in), 8,
                               CLPRIM_TOPK_SORTED, clprim_buf(out), clprim_buf(out2));
  if (strcmp(family, "batched_nth_element") == 0) /* the median of each row of 1024 */
    return clprim_batched_nth_element(ctx, n / 1024, 1024, CLPRIM_FLOAT, clprim_buf(in), 512, 0,
                                      clprim_buf(out));
  if (strcmp(family, "scan_by_key") == 0)
    return clprim_scan_inclusive_by_key(ctx, n, CLPRIM_INT32, clprim_buf(keys), CLPRIM_FLOAT,
                                        clprim_buf(in), clprim_buf(out));
  if (strcmp(family, "partition3") == 0) {
    clprim_predicate first, second;
    memset(&first, 0, sizeof first), memset(&second, 0, sizeof second);
    first.op = CLPRIM_PRED_LT, first.a.f32 = 1.0f / 3;
    second.op = CLPRIM_PRED_LT, second.a.f32 = 2.0f / 3;
    return clprim_partition3(ctx, n, CLPRIM_FLOAT, clprim_buf(in), &first, &second, 0,
                             clprim_buf(out), none, NULL, clprim_buf(out2));
  }
  if (strcmp(family, "segmented_sum") == 0)
    return clprim_segmented_sum(ctx, n, CLPRIM_FLOAT, clprim_buf(in), n / 1024, clprim_buf(begins),
                                clprim_buf(ends), clprim_buf(out));
  return clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 100, 0, clprim_buf(out),
                     clprim_buf(out2));
}

/* Child mode: loads the OpenCL platforms (the ICD loader and drivers), then
 * creates a context with the given cache dir and runs the family's first
 * call; prints platform load, context creation, first call, and a bare
 * OpenCL context+queue on the same device (the driver's share of the
 * creation). */
static int startup_child(const char *dir, const char *family) {
  double t0 = now_ms();
  cl_platform_id platforms[16];
  cl_uint np = 0;
  clGetPlatformIDs(16, platforms, &np);
  double t1 = now_ms();
  clprim_options o;
  clprim_options_init(&o);
  o.cache_dir = dir;
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, &o);
  if (st != CLPRIM_SUCCESS) die("context", st);
  double t2 = now_ms();
  const size_t n = (size_t)1 << 20;
  float *host = malloc(n * sizeof *host);
  int32_t *keys = malloc(n * sizeof *keys);
  uint64_t *offsets = malloc(n / 1024 * 2 * sizeof *offsets); /* segments of 1024 */
  if (!host || !keys || !offsets) die("malloc", CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  for (size_t i = 0; i < n; ++i)
    host[i] = (float)((i * 2654435761u) % 1000003u) / 1000003.0f, keys[i] = (int32_t)(i / 64 % 1024);
  for (size_t s = 0; s < n / 1024; ++s)
    offsets[s] = s * 1024, offsets[n / 1024 + s] = (s + 1) * 1024;
  cl_int err;
  cl_context cl = clprim_context_cl_context(ctx);
  cl_mem in = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, host, &err);
  cl_mem kbuf = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, keys, &err);
  cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 8, NULL, &err);
  cl_mem out2 = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 8, NULL, &err);
  cl_mem begins = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n / 1024 * 8,
                                 offsets, &err);
  cl_mem ends = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n / 1024 * 8,
                               offsets + n / 1024, &err);
  clFinish(clprim_context_queue(ctx));
  double t3 = now_ms();
  st = startup_call(ctx, family, in, kbuf, out, out2, begins, ends, n);
  if (st != CLPRIM_SUCCESS) die(family, st);
  clFinish(clprim_context_queue(ctx));
  double t4 = now_ms();
  cl_device_id dev = clprim_context_device(ctx);
  double t5 = now_ms();
  cl_context c2 = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  cl_command_queue q2 = clCreateCommandQueue(c2, dev, 0, &err);
  double t6 = now_ms();
  clReleaseCommandQueue(q2);
  clReleaseContext(c2);
  clReleaseMemObject(in), clReleaseMemObject(kbuf), clReleaseMemObject(out), clReleaseMemObject(out2);
  clReleaseMemObject(begins), clReleaseMemObject(ends);
  free(host), free(keys), free(offsets);
  clprim_context_free(ctx);
  printf("%.2f %.2f %.2f %.2f\n", t1 - t0, t2 - t1, t4 - t3, t6 - t5);
  return 0;
}

/* Per family, a truly cold first call (a new empty clprim cache folder, a
 * fresh POCL_CACHE_DIR, CUDA_CACHE_DISABLE=1) and a warm one (a new process
 * with the folder the cold one filled, CUDA's cache on), each in a fresh
 * process. */
static void startup(const char *self, const char *only) {
  for (int f = 0; f < STARTUP_FAMILIES; ++f) {
    if (strcmp(only, "all") != 0 && strcmp(only, startup_families[f]) != 0) continue;
    char dir[] = "/tmp/clprim-bench-cache-XXXXXX", pocl[] = "/tmp/clprim-bench-pocl-XXXXXX";
    if (!mkdtemp(dir) || !mkdtemp(pocl)) die("mkdtemp", CLPRIM_ERROR_INVALID_ARGUMENT);
    for (int warm = 0; warm < 2; ++warm) {
      char cmd[4096];
      snprintf(cmd, sizeof cmd, "%s POCL_CACHE_DIR='%s' '%s' --startup-child '%s' %s",
               warm ? "" : "CUDA_CACHE_DISABLE=1", pocl, self, dir, startup_families[f]);
      FILE *p = popen(cmd, "r");
      double load = 0, create = 0, call = 0, bare = 0;
      if (!p || fscanf(p, "%lf %lf %lf %lf", &load, &create, &call, &bare) != 4)
        die("startup child", -1);
      pclose(p);
      printf("startup %-20s %-4s platforms %7.1f ms | clprim_context_create %7.1f ms (bare "
             "context+queue %7.1f ms) | first call %8.1f ms | clprim's own %8.1f ms\n",
             startup_families[f], warm ? "warm" : "cold", load, create, bare, call,
             create - bare + call);
      fflush(stdout);
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, pocl);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  }
}

/* ----------------------------------------------------------- pipeline */

struct pipe_arg {
  clprim_pipeline *pipe;
  clprim_buffer in;
  size_t n;
  double params[8];
  /* the baseline's call, when pipe is NULL */
  int baseline; /* 1: clprim_select (values), 2: clprim_median, 3: clprim_topk */
  clprim_predicate pred;
  cl_mem values, count, indices;
};
#define PIPE_TOP_K 100
static clprim_status call_pipe(struct bench *b, void *p) {
  struct pipe_arg *a = p;
  clprim_value v;
  switch (a->baseline) {
  case 1:
    return clprim_select(b->ctx, a->n, CLPRIM_FLOAT, a->in, &a->pred, 0, clprim_buf(a->values),
                         clprim_buf(NULL), NULL, clprim_buf(a->count));
  case 2: return clprim_median(b->ctx, a->n, CLPRIM_FLOAT, a->in, 0, &v, clprim_buf(NULL));
  case 3:
    return clprim_topk(b->ctx, a->n, CLPRIM_FLOAT, a->in, PIPE_TOP_K, 0, clprim_buf(a->values),
                       clprim_buf(a->indices));
  default: return clprim_pipeline_run(a->pipe, a->n, &a->in, a->params);
  }
}

/* Prints a pipeline row: ms against a baseline of the same run. */
static void pipeline_row(struct bench *b, const char *variant, size_t n, double ms,
                         const char *base_name, double base_ms) {
  if (b->json) {
    json_row_begin(b, "pipeline", variant, CLPRIM_FLOAT, n);
    json_number("ms", "%.5f", ms);
    printf(",\"baseline\":");
    json_string(base_name);
    json_number("baseline_ms", "%.5f", base_ms);
    json_number("ratio_to_baseline", "%.3f", ms / base_ms);
    printf("}");
  } else {
    printf("%-19s %-27s %-7s %-13s n=2^%-5.2g %9.4f ms  %s %8.4f ms  ratio %.2f\n", "pipeline",
           variant, "float", clprim_path_name(b->path), log2((double)n), ms, base_name, base_ms,
           ms / base_ms);
  }
  fflush(stdout);
}

/* The same chains as separate clprim calls, as a user without pipelines
 * would write them: the map as a pipeline of the map alone collecting every
 * element (clprim has no map call), then clprim_select of the mapped
 * elements and clprim_reduce_sum of those (count read by the host), or the
 * selection alone (count on the device); the filter -> median as
 * clprim_select_expr_params (count read) then clprim_median. */
struct chain_arg {
  struct pipe_arg *a;
  clprim_pipeline *map; /* x = a * p0, every element collected */
  int kind; /* 0: map, select, sum; 1: map, select; 2: select_expr, median */
};
static clprim_status call_chain(struct bench *b, struct chain_arg *c) {
  struct pipe_arg *a = c->a;
  clprim_status st;
  uint64_t count = 0;
  clprim_value v;
  if (c->kind == 2) {
    st = clprim_select_expr_params(b->ctx, a->n, CLPRIM_FLOAT, a->in,
                                   "!isnan(x) && x >= (float)p0 && x < (float)p1", a->params, 0,
                                   clprim_buf(a->values), clprim_buf(NULL), &count,
                                   clprim_buf(NULL));
    if (st == CLPRIM_SUCCESS)
      st = clprim_median(b->ctx, count, CLPRIM_FLOAT, clprim_buf(a->values), 0, &v,
                         clprim_buf(NULL));
    return st;
  }
  cl_mem mapped = NULL;
  st = clprim_pipeline_run(c->map, a->n, &a->in, a->params);
  if (st == CLPRIM_SUCCESS)
    st = clprim_pipeline_output(c->map, CLPRIM_PIPE_OUT_VALUES, &mapped, NULL);
  if (st == CLPRIM_SUCCESS)
    st = clprim_select(b->ctx, a->n, CLPRIM_FLOAT, clprim_buf(mapped), &a->pred, 0,
                       clprim_buf(a->values), clprim_buf(NULL), c->kind == 0 ? &count : NULL,
                       clprim_buf(c->kind == 0 ? NULL : a->count));
  if (st == CLPRIM_SUCCESS && c->kind == 0)
    st = clprim_reduce_sum(b->ctx, count, CLPRIM_FLOAT, clprim_buf(a->values), NULL,
                           clprim_buf(a->count));
  return st;
}

/* A chain's time from the profiling times of a marker before its first
 * call and one after its last (the device's span, with the gaps the
 * host's reads leave), median of reps after 3 warm-ups. */
static clprim_status chain_ms(struct bench *b, struct chain_arg *c, double *ms) {
  double t[MAX_REPS];
  cl_command_queue q = clprim_context_queue(b->ctx);
  for (int r = -3; r < b->reps; ++r) {
    cl_event before = NULL, after = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, &before);
    if (err != CL_SUCCESS) return (clprim_status)err;
    clprim_status st = call_chain(b, c);
    if (st == CLPRIM_SUCCESS) st = (clprim_status)clEnqueueMarkerWithWaitList(q, 0, NULL, &after);
    if (st == CLPRIM_SUCCESS) st = (clprim_status)clWaitForEvents(1, &after);
    cl_ulong start = 0, end = 0;
    if (st == CLPRIM_SUCCESS)
      st = (clprim_status)clGetEventProfilingInfo(before, CL_PROFILING_COMMAND_END, sizeof start,
                                                  &start, NULL);
    if (st == CLPRIM_SUCCESS)
      st = (clprim_status)clGetEventProfilingInfo(after, CL_PROFILING_COMMAND_END, sizeof end,
                                                  &end, NULL);
    clReleaseEvent(before);
    if (after) clReleaseEvent(after);
    if (st != CLPRIM_SUCCESS) return st;
    if (r >= 0) t[r] = end > start ? (double)(end - start) * 1e-6 : 0.0;
  }
  *ms = median(t, b->reps);
  return CLPRIM_SUCCESS;
}

static void report_chain(struct bench *b, const char *variant, struct chain_arg *c,
                         const char *fused_name, double fused_ms) {
  double ms = 0;
  const clprim_status st = chain_ms(b, c, &ms);
  if (st != CLPRIM_SUCCESS) {
    row_failed(b, "pipeline", variant, CLPRIM_FLOAT, c->a->n, "separate calls", st);
    return;
  }
  pipeline_row(b, variant, c->a->n, ms, fused_name, fused_ms);
}

/* A pipeline row against a baseline measured in the same run (ratio =
 * ms / base_ms). */
static double report_vs(struct bench *b, const char *variant, size_t n, struct pipe_arg *a,
                        const char *base_name, double base_ms) {
  double ms = 0;
  const char *what = "";
  clprim_status st = op_ms(b, call_pipe, a, &ms, &what);
  if (st != CLPRIM_SUCCESS) {
    row_failed(b, "pipeline", variant, CLPRIM_FLOAT, n, what, st);
    return 0;
  }
  pipeline_row(b, variant, n, ms, base_name, base_ms);
  return ms;
}

/* Uniform floats in [0, 1): (1) x = 2 a (map), x > 2 (1 - p) (filter, p
 * passing), sum: against one read of the input; (2) the same stages,
 * collect values (count on the device): against clprim_select of a > 1 - p
 * (the same elements); (3) a filter that drops 1% (NaN checks and a range
 * a < 0.99 with parameters), then the median of the rest: against
 * clprim_median of the whole input; (4) that filter, then the top 100
 * (values and indices): against clprim_topk of the whole input. After (1),
 * (2) and (3), the same chain as separate calls (struct chain_arg) against
 * the fused run. */
static void bench_pipeline(struct bench *b, clprim_type type, size_t n) {
  const size_t bytes = n * sizeof(float);
  void *host = random_data(b, type, n, 4);
  struct pipe_arg a;
  memset(&a, 0, sizeof a);
  a.n = n;
  cl_mem in = device_buffer(b, bytes, host);
  a.in = clprim_buf(in);
  free_host(b, host);
  a.values = device_buffer(b, bytes, NULL);
  a.count = device_buffer(b, 16, NULL);
  a.indices = device_buffer(b, PIPE_TOP_K * 4, NULL);
  const double read = read_ms(b, in, bytes);
  const clprim_type ft = CLPRIM_FLOAT;
  clprim_status st;
  char variant[48];
  /* The separate calls' map: x = a * p0, every element collected. */
  struct chain_arg chain = {&a, NULL, 0};
  if ((st = clprim_pipeline_create(b->ctx, 1, &ft, &chain.map)) != CLPRIM_SUCCESS ||
      (st = clprim_pipeline_map(chain.map, CLPRIM_FLOAT, "x * (float)p0")) != CLPRIM_SUCCESS ||
      (st = clprim_pipeline_collect(chain.map, CLPRIM_PIPE_VALUES_WANTED)) != CLPRIM_SUCCESS)
    fail_family(b, "the separate calls' map", st);
  for (int row = 0; row < 4; ++row) {
    clprim_pipeline *pipe = NULL;
    if ((st = clprim_pipeline_create(b->ctx, 1, &ft, &pipe)) != CLPRIM_SUCCESS)
      fail_family(b, "clprim_pipeline_create", st);
    if (row < 2) {
      st = clprim_pipeline_map(pipe, CLPRIM_FLOAT, "x * (float)p0");
      if (st == CLPRIM_SUCCESS) st = clprim_pipeline_filter_expr(pipe, "x > (float)p1");
      if (st == CLPRIM_SUCCESS)
        st = row == 0 ? clprim_pipeline_reduce(pipe, CLPRIM_PIPE_SUM, 0)
                      : clprim_pipeline_collect(pipe, CLPRIM_PIPE_VALUES_WANTED);
    } else {
      const double half = 0.5;
      st = clprim_pipeline_filter_expr(pipe, "!isnan(x) && x >= (float)p0 && x < (float)p1");
      if (st == CLPRIM_SUCCESS)
        st = row == 2 ? clprim_pipeline_quantiles(pipe, &half, 1)
                      : clprim_pipeline_topk(pipe, PIPE_TOP_K, 0);
    }
    if (st != CLPRIM_SUCCESS) {
      clprim_pipeline_free(pipe);
      fail_family(b, "pipeline stages", st);
    }
    a.pipe = pipe;
    if (row < 2) {
      const double rates[2] = {0.5, 0.01};
      for (int r = 0; r < 2; ++r) {
        a.params[0] = 2.0, a.params[1] = 2.0 * (1.0 - rates[r]);
        if (row == 0) {
          a.baseline = 0;
          snprintf(variant, sizeof variant, "map-filter-sum p=%.2f", rates[r]);
          const double fused = report_vs(b, variant, n, &a, "read", read);
          memset(&a.pred, 0, sizeof a.pred);
          a.pred.op = CLPRIM_PRED_GT, a.pred.a.f32 = (float)a.params[1];
          chain.kind = 0;
          snprintf(variant, sizeof variant, "sep. map,select,sum p=%.2f", rates[r]);
          if (fused > 0) report_chain(b, variant, &chain, "fused", fused);
        } else {
          memset(&a.pred, 0, sizeof a.pred);
          a.pred.op = CLPRIM_PRED_GT, a.pred.a.f32 = (float)(1.0 - rates[r]);
          double base = 0;
          const char *what = "";
          a.baseline = 1;
          st = op_ms(b, call_pipe, &a, &base, &what);
          if (st != CLPRIM_SUCCESS) fail_family(b, "clprim_select baseline", st);
          a.baseline = 0;
          snprintf(variant, sizeof variant, "map-filter-collect p=%.2f", rates[r]);
          const double fused = report_vs(b, variant, n, &a, "select", base);
          a.pred.a.f32 = (float)a.params[1];
          chain.kind = 1;
          snprintf(variant, sizeof variant, "sep. map,select p=%.2f", rates[r]);
          if (fused > 0) report_chain(b, variant, &chain, "fused", fused);
        }
      }
    } else {
      double base = 0;
      const char *what = "";
      a.baseline = row == 2 ? 2 : 3;
      st = op_ms(b, call_pipe, &a, &base, &what);
      if (st != CLPRIM_SUCCESS)
        fail_family(b, row == 2 ? "clprim_median baseline" : "clprim_topk baseline", st);
      a.baseline = 0, a.params[0] = 0.0, a.params[1] = 0.99;
      const double fused =
          report_vs(b, row == 2 ? "filter-median p=0.99" : "filter-topk100 p=0.99", n, &a,
                    row == 2 ? "median" : "topk", base);
      if (row == 2 && fused > 0) {
        chain.kind = 2;
        report_chain(b, "sep. select_expr,median", &chain, "fused", fused);
      }
    }
    clprim_pipeline_free(pipe);
    a.pipe = NULL;
  }
  clprim_pipeline_free(chain.map);
  release_buffer(b, in);
  release_buffer(b, a.values);
  release_buffer(b, a.count);
  release_buffer(b, a.indices);
}

/* --------------------------------------------------------------- main */

/* The ops, their families, and the types each takes. */
enum {
  FAM_SCAN, FAM_REDUCE, FAM_SELECT, FAM_HIST, FAM_NTH, FAM_SORT, FAM_RUNS, FAM_SEGREDUCE,
  FAM_PIPELINE, FAM_COUNT
};
static const struct {
  const char *name;
  int family;
  unsigned types; /* bit (1u << type) for each clprim_type the op takes */
  const char *help;
} ops[] = {
    {"scan", FAM_SCAN, 0x3Fu, "exclusive and inclusive prefix sums"},
    {"argmax", FAM_REDUCE, 0x3Fu, "value and first index, result on the device"},
    {"argmin", FAM_REDUCE, 0x3Fu, "as argmax"},
    {"reduce_sum", FAM_REDUCE, 0x3Fu, "sum, result on the device"},
    {"select", FAM_SELECT, 0x3Fu,
     "values, indices, both, partition (stable, rest reversed), at p = 0.01, 0.5, 0.99 passing"},
    {"histogram", FAM_HIST, 0x3Fu, "histogram_even into 256 and 2^20 bins"},
    {"histogram_keys", FAM_HIST, 0x03u,
     "2^20 bins, random keys; the type is the key type (int32, uint32)"},
    {"reduce_by_key_dense", FAM_HIST, 0x3Fu,
     "int32 keys in [0, 2^20) (random, sorted, partly sorted), values of\n"
     "                       the type (64-bit values need cl_khr_int64_base_atomics)"},
    {"reduce_by_key", FAM_HIST, 0x3Fu,
     "sorted int32 keys in min(n, 2^20) runs, values of the type"},
    {"read", FAM_NTH, 0x3Fu, "the one-read baseline kernel alone"},
    {"nth_element", FAM_NTH, 0x3Fu, "k = n/2, n/100, n-1"},
    {"nth_approx", FAM_NTH, 0x3Fu, "k = n/2"},
    {"quantiles", FAM_NTH, 0x3Fu, "9 deciles, 99 percentiles"},
    {"topk", FAM_NTH, 0x3Fu,
     "k = 1, 1000, n/2, values and uint32 indices (a k above n is skipped)"},
    {"sort_keys", FAM_SORT, 0x3Fu,
     "radix sort of random keys (integers over their whole range, floats in [0, 1))"},
    {"sort_pairs", FAM_SORT, 0x3Fu, "as sort_keys, with uint32 values"},
    {"argsort", FAM_SORT, 0x3Fu, "as sort_keys, uint32 indices out"},
    {"segmented_sort", FAM_SORT, 0x3Fu, "keys in segments of 1024 (n / 1024 segments)"},
    {"unique", FAM_RUNS, 0x3Fu,
     "runs of 1 (random), 8 and 1024 (sorted runs i / r); count on the device"},
    {"run_length_encode", FAM_RUNS, 0x3Fu, "as unique, with uint32 lengths"},
    {"unique_by_key", FAM_RUNS, 0x10u,
     "runs of 8 of uint32 keys, values of the type (float only)"},
    {"non_trivial_runs", FAM_RUNS, 0x3Fu, "runs of 8, uint32 offsets and lengths"},
    {"scan_by_key", FAM_RUNS, 0x10u,
     "inclusive sums of values of the type (float only) by uint32 keys in runs of 1024"},
    {"segmented_sum", FAM_SEGREDUCE, 0x3Fu,
     "sum per segment of 1024 (n / 1024 segments, uint64 offsets), on the device"},
    {"segmented_max", FAM_SEGREDUCE, 0x3Fu, "as segmented_sum, the largest element"},
    {"segmented_argmax", FAM_SEGREDUCE, 0x3Fu,
     "as segmented_sum, value bits and first index (two uint64 per segment)"},
    {"batched_topk", FAM_SEGREDUCE, 0x3Fu,
     "rows of 1024 and 32768, k = 8 and 100, sorted, values and uint32 indices"},
    {"batched_nth_element", FAM_SEGREDUCE, 0x3Fu, "rows of 1024 and 32768, the median"},
    {"pipeline", FAM_PIPELINE, 0x10u,
     "float: map -> filter -> sum (vs one read), map -> filter -> collect (vs\n"
     "                       clprim_select of the same elements), filter -> median (vs\n"
     "                       clprim_median of the unfiltered input), filter -> top-100;\n"
     "                       \"sep.\" rows: the same chains as separate clprim calls (vs\n"
     "                       the fused run), timed between markers"},
};
#define OP_COUNT (int)(sizeof ops / sizeof ops[0])
static const char *const family_names[FAM_COUNT] = {
    "scan", "argmax/argmin/reduce_sum", "select",
    "histogram/histogram_keys/reduce_by_key(_dense)", "read/nth_element/nth_approx/quantiles/topk",
    "sort_keys/sort_pairs/argsort/segmented_sort",
    "unique/run_length_encode/unique_by_key/non_trivial_runs/scan_by_key",
    "segmented_sum/segmented_max/segmented_argmax/batched_topk/batched_nth_element", "pipeline"};

static int want_op(const struct bench *b, const char *op) {
  return strcmp(b->op_filter, "all") == 0 || strcmp(b->op_filter, op) == 0;
}

/* Whether family f has an op that --op wants and that takes type. */
static int family_runs(const struct bench *b, int f, clprim_type type) {
  for (int i = 0; i < OP_COUNT; ++i)
    if (ops[i].family == f && want_op(b, ops[i].name) && (ops[i].types >> type & 1u)) return 1;
  return 0;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: clprim-bench [--op NAME|all] [--type T|all] [--path P] [--min-log K] [--max-log K]\n"
          "                    [--reps R] [--data default|all] [--json] [--progress] [--startup]\n"
          "       clprim-bench --help\n");
}

static void help(void) {
  usage(stdout);
  printf(
      "\nDevice time of clprim's primitives from OpenCL profiling events: 3 warm-up runs,\n"
      "then the median of R runs, in ms; GB/s of the minimal traffic and the ratio to a\n"
      "clEnqueueCopyBuffer of the same bytes (scan, reductions, select) or to one read of\n"
      "the inputs by a minimal kernel (histograms, reduce-by-key, selection, runs,\n"
      "segmented reductions), same run.\n"
      "\nOptions:\n"
      "  --op NAME      one op below, or all (default: all)\n"
      "  --type T       int32, uint32, int64, uint64, float, double, or all: every type each\n"
      "                 op takes (default: int32 and float; double needs cl_khr_fp64)\n"
      "  --path P       auto, local, khr_subgroups, khr_ballot, nv_ptx (default: auto, i.e.\n"
      "                 $CLPRIM_PATH, else the best path the device passed)\n"
      "  --min-log K    smallest size, 2^K elements, K in 0..%d (default: 16)\n"
      "  --max-log K    largest size, 2^K elements (default: 28); sizes that do not fit in\n"
      "                 device memory are skipped with a note\n"
      "  --reps R       timed runs per row, %d..%d (default: 25); fewer are raised to %d\n"
      "                 with a note\n"
      "  --data D       the selection ops' data: default (uniform and 16 distinct values)\n"
      "                 or all (every distribution of their tests, float and double)\n"
      "  --json         one JSON document on stdout instead of text: {\"clprim_version\",\n"
      "                 \"device\", \"platform\", \"driver\", \"path\", \"reps\", \"warmups\",\n"
      "                 \"results\": [one object per row; a failed row has \"error\", a\n"
      "                 skipped one \"skipped\"], \"rows_failed\"}\n"
      "  --progress     \"[i/N] op type 2^K\" on stderr before each step (default: only\n"
      "                 when stderr is a terminal)\n"
      "  --startup      per family (or the one --op names), context creation and a first\n"
      "                 call on 2^20 floats in fresh processes, cold (empty caches) and\n"
      "                 warm; takes only --op\n"
      "  -h, --help     this text\n"
      "\nOps (all take every type unless said):\n",
      MAX_LOG, MIN_REPS, MAX_REPS, MIN_REPS);
  for (int i = 0; i < OP_COUNT; ++i) printf("  %-20s %s\n", ops[i].name, ops[i].help);
  printf("  %-20s every op above\n", "all");
  printf("\n--startup families:");
  for (int f = 0; f < STARTUP_FAMILIES; ++f) printf(" %s", startup_families[f]);
  printf(" (or all)\n"
         "\nThe device: $CLPRIM_DEVICE (see clprim-info); the kernel cache: $CLPRIM_CACHE_DIR.\n"
         "Exit status: 0 every row ran, 1 a row failed (named on stderr: op, variant, type,\n"
         "size, status), 2 a usage error.\n");
}

static void usage_error(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "clprim-bench: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n");
  usage(stderr);
  fprintf(stderr, "(clprim-bench --help lists the ops, types and defaults)\n");
  exit(2);
}

/* A whole number in [lo, hi], or a usage error. */
static int parse_int(const char *opt, const char *v, long lo, long hi) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end != '\0') usage_error("%s: '%s' is not a whole number", opt, v);
  if (x < lo || x > hi) {
    char range[64];
    snprintf(range, sizeof range, "%s is outside %ld..%ld", v, lo, hi);
    usage_error("%s: %s", opt, range);
  }
  return (int)x;
}

static void run_family(struct bench *b, int f, clprim_type type, size_t n) {
  switch (f) {
  case FAM_SCAN: bench_scan(b, type, n); break;
  case FAM_REDUCE: bench_reduce(b, type, n); break;
  case FAM_SELECT: bench_select(b, type, n); break;
  case FAM_HIST: bench_hist(b, type, n); break;
  case FAM_SORT: bench_sort(b, type, n); break;
  case FAM_RUNS: bench_runs(b, type, n); break;
  case FAM_SEGREDUCE:
    bench_segreduce(b, type, n);
    bench_segtopk(b, type, n);
    break;
  case FAM_PIPELINE: bench_pipeline(b, type, n); break;
  default: bench_nth(b, type, n); break;
  }
}

/* One family at one type and size; a setup failure lands here. */
static void run_guarded(struct bench *b, int f, clprim_type type, size_t n) {
  b->cur_op = strcmp(b->op_filter, "all") == 0 ? family_names[f] : b->op_filter;
  b->cur_type = type, b->cur_n = n;
  if (setjmp(b->abort_family) == 0) run_family(b, f, type, n);
  else release_live(b);
}

/* The steps (family, type, size) of the run; counts them when !run. */
static int steps(struct bench *b, int min_log, int max_log, int type_sel, int progress, int run,
                 int total) {
  int count = 0, fp64_noted = 0;
  for (int lg = min_log; lg <= max_log; ++lg) {
    size_t n = (size_t)1 << lg;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      clprim_type type = (clprim_type)t;
      if (type_sel >= 0 ? t != type_sel
                        : type_sel == -1 && !(t == CLPRIM_INT32 || t == CLPRIM_FLOAT))
        continue;
      int families = 0;
      for (int f = 0; f < FAM_COUNT; ++f) families += family_runs(b, f, type);
      if (!families) continue;
      if (type == CLPRIM_DOUBLE && !b->info->has_fp64) {
        if (run && !fp64_noted++)
          fprintf(stderr, "clprim-bench: note: double skipped: the device has no cl_khr_fp64\n");
        continue;
      }
      size_t bytes = n * clprim_type_size(type);
      /* Room for about three arrays of the data (input, output, temporaries). */
      if (bytes > b->info->max_alloc_size || 3.2 * (double)bytes > (double)b->info->global_mem_size) {
        if (run)
          fprintf(stderr, "clprim-bench: note: %s n=2^%d skipped: 3.2 x %zu bytes exceed the "
                          "device's memory (or %zu bytes its largest buffer)\n",
                  clprim_type_name(type), lg, bytes, (size_t)b->info->max_alloc_size);
        continue;
      }
      for (int f = 0; f < FAM_COUNT; ++f) {
        if (!family_runs(b, f, type)) continue;
        ++count;
        if (!run) continue;
        if (progress)
          fprintf(stderr, "[%d/%d] %s %s 2^%d\n", count, total,
                  strcmp(b->op_filter, "all") == 0 ? family_names[f] : b->op_filter,
                  clprim_type_name(type), lg);
        run_guarded(b, f, type, n);
      }
    }
  }
  return count;
}

int main(int argc, char **argv) {
  static struct bench bench; /* static: kept intact across the longjmp of a failed family */
  struct bench *b = &bench;
  b->reps = 25;
  b->op_filter = "all";
  int type_sel = -1; /* -1: int32 and float, -2: all, else the type */
  int min_log = 16, max_log = 28, run_startup = 0, progress = isatty(STDERR_FILENO);
  const char *path_name = NULL, *reps_arg = NULL;
  clprim_options opts;
  clprim_options_init(&opts);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "--startup-child") == 0 && i + 2 < argc) return startup_child(argv[i + 1], argv[i + 2]);
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      help();
      return 0;
    }
    if (strcmp(a, "--startup") == 0) {
      run_startup = 1;
      continue;
    }
    if (strcmp(a, "--json") == 0) {
      b->json = 1;
      continue;
    }
    if (strcmp(a, "--progress") == 0) {
      progress = 1;
      continue;
    }
    static const char *const with_value[] = {"--op", "--type", "--path", "--min-log",
                                             "--max-log", "--data", "--reps"};
    int known = 0;
    for (size_t j = 0; j < sizeof with_value / sizeof *with_value; ++j)
      known |= strcmp(a, with_value[j]) == 0;
    if (!known) usage_error("unknown option '%s'%s", a, "");
    if (i + 1 >= argc) usage_error("%s needs a value%s", a, "");
    const char *v = argv[++i];
    if (strcmp(a, "--op") == 0) {
      b->op_filter = v;
    } else if (strcmp(a, "--type") == 0) {
      type_sel = strcmp(v, "all") == 0 ? -2 : -3;
      for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t)
        if (strcmp(v, clprim_type_name((clprim_type)t)) == 0) type_sel = t;
      if (type_sel == -3)
        usage_error("unknown --type '%s' (int32, uint32, int64, uint64, float, double or all)%s", v, "");
    } else if (strcmp(a, "--path") == 0) {
      if (clprim_path_from_name(v, &opts.path) != CLPRIM_SUCCESS)
        usage_error("unknown --path '%s' (auto, local, khr_subgroups, khr_ballot or nv_ptx)%s", v, "");
      path_name = v;
    } else if (strcmp(a, "--min-log") == 0) {
      min_log = parse_int(a, v, 0, MAX_LOG);
    } else if (strcmp(a, "--max-log") == 0) {
      max_log = parse_int(a, v, 0, MAX_LOG);
    } else if (strcmp(a, "--data") == 0) {
      if (strcmp(v, "all") != 0 && strcmp(v, "default") != 0)
        usage_error("unknown --data '%s' (default or all)%s", v, "");
      b->all_data = strcmp(v, "all") == 0;
    } else {
      b->reps = parse_int(a, v, 1, 1000000), reps_arg = v;
    }
  }
  if (run_startup) {
    int known = strcmp(b->op_filter, "all") == 0;
    for (int f = 0; f < STARTUP_FAMILIES; ++f) known |= strcmp(b->op_filter, startup_families[f]) == 0;
    if (!known) usage_error("unknown --op '%s' for --startup (clprim-bench --help lists them)%s", b->op_filter, "");
    if (b->json) usage_error("--json does not apply to --startup%s%s", "", "");
    startup(argv[0], b->op_filter);
    return 0;
  }
  int op_known = strcmp(b->op_filter, "all") == 0;
  unsigned op_types = 0x3Fu;
  for (int i = 0; i < OP_COUNT; ++i)
    if (strcmp(b->op_filter, ops[i].name) == 0) op_known = 1, op_types = ops[i].types;
  if (!op_known) usage_error("unknown --op '%s' (clprim-bench --help lists the ops)%s", b->op_filter, "");
  if (type_sel >= 0 && !(op_types >> type_sel & 1u))
    usage_error("--op %s does not take --type %s (clprim-bench --help lists the types)", b->op_filter,
                clprim_type_name((clprim_type)type_sel));
  if (min_log > max_log) {
    char range[96];
    snprintf(range, sizeof range, "--min-log %d > --max-log %d", min_log, max_log);
    usage_error("empty size range: %s%s", range, "");
  }
  if (b->reps < MIN_REPS) {
    fprintf(stderr, "clprim-bench: note: --reps %s raised to %d (the minimum)\n", reps_arg, MIN_REPS);
    b->reps = MIN_REPS;
  }
  if (b->reps > MAX_REPS) {
    fprintf(stderr, "clprim-bench: note: --reps %s lowered to %d (the maximum)\n", reps_arg, MAX_REPS);
    b->reps = MAX_REPS;
  }

  /* A profiling queue on the chosen device, and a context on it. */
  clprim_context *probe;
  clprim_status st = clprim_context_create(&probe, &opts);
  if (st == CLPRIM_ERROR_PATH_UNAVAILABLE) {
    fprintf(stderr, "clprim-bench: --path %s: the device cannot run it (%s); clprim-info lists the "
                    "paths each device passed\n", path_name ? path_name : "($CLPRIM_PATH)",
            clprim_status_name(st));
    return 1;
  }
  if (st != CLPRIM_SUCCESS) die("clprim_context_create", st);
  cl_int err;
  b->cl = clprim_context_cl_context(probe);
  clRetainContext(b->cl);
  b->queue = clCreateCommandQueue(b->cl, clprim_context_device(probe), CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) die("clCreateCommandQueue", err);
  clprim_context_free(probe);
  st = clprim_context_create_from_queue(&b->ctx, b->queue, &opts);
  if (st != CLPRIM_SUCCESS) die("clprim_context_create_from_queue", st);
  static clprim_device_info info;
  st = clprim_context_get_info(b->ctx, &info, sizeof info);
  if (st != CLPRIM_SUCCESS) die("clprim_context_get_info", st);
  b->info = &info;
  b->path = info.path;
  if (b->json) {
    printf("{\"clprim_version\":");
    json_string(clprim_version_string());
    printf(",\"device\":");
    json_string(info.device_name);
    printf(",\"platform\":");
    json_string(info.platform_name);
    printf(",\"driver\":");
    json_string(info.driver_version);
    printf(",\"path\":\"%s\",\"reps\":%d,\"warmups\":3,\n\"results\":[", clprim_path_name(b->path),
           b->reps);
  } else {
    printf("device: %s | %s | driver %s | path %s | median of %d runs after 3 warm-ups | clprim %s\n",
           info.device_name, info.platform_name, info.driver_version, clprim_path_name(b->path),
           b->reps, clprim_version_string());
  }
  fflush(stdout);

  int total = steps(b, min_log, max_log, type_sel, progress, 0, 0);
  steps(b, min_log, max_log, type_sel, progress, 1, total);
  if (b->json) printf("%s],\n\"rows_failed\":%d}\n", b->records ? "\n" : "", b->failed);
  fflush(stdout);
  if (b->failed)
    fprintf(stderr, "clprim-bench: %d row%s failed\n", b->failed, b->failed == 1 ? "" : "s");
  clprim_context_free(b->ctx);
  clReleaseCommandQueue(b->queue);
  clReleaseContext(b->cl);
  return b->failed ? 1 : 0;
}
