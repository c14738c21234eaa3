/* clprim-bench: device time of clprim's primitives, from OpenCL profiling
 * events: warm-up, then the median of --reps runs (at least 20), in ms, the
 * GB/s of the minimal bytes (each input read once, each output written once),
 * and the ratio to a clEnqueueCopyBuffer of the same number of bytes (read +
 * write) measured in the same run.
 *
 * Histograms and reduce-by-key (ops histogram, histogram_keys,
 * reduce_by_key_dense, reduce_by_key) are compared with one READ of their
 * inputs instead (clprim_reduce_sum over the same bytes, same run).
 *
 * Usage: clprim-bench [--op NAME|all] [--type T|all] [--path P] [--min-log K]
 *                     [--max-log K] [--reps R] [--json] [--startup]
 * Sizes are the powers of two from 2^min-log to 2^max-log elements (default
 * 16..28), bounded by device memory. The device: $CLPRIM_DEVICE.
 * --startup measures, per family (--op picks one), context creation plus a
 * first call in fresh processes: cold (every cache empty) and warm.
 * Selection ops (nth_element, nth_approx, quantiles, topk) report the ratio
 * to one read of the input ("read", a minimal kernel) instead of a copy. */
#include <clprim/clprim.h>

#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bench {
  clprim_context *ctx;
  cl_context cl;
  cl_command_queue queue;
  int reps;
  int json;
  int records;
  const char *op_filter;
  int type_filter; /* -1: all */
  int all_data;    /* --data all: selection on every distribution of its tests */
  clprim_path path;
};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, int status) {
  fprintf(stderr, "clprim-bench: %s: %s\n", what, clprim_status_name(status));
  exit(1);
}

/* Median device time of a copy of `bytes` bytes (read + write = 2 * bytes). */
static double copy_ms(struct bench *b, cl_mem src, cl_mem dst, size_t bytes) {
  double t[256];
  int reps = b->reps;
  for (int r = -3; r < reps; ++r) {
    cl_event e;
    cl_int err = clEnqueueCopyBuffer(b->queue, src, dst, 0, 0, bytes, 0, NULL, &e);
    if (err != CL_SUCCESS) die("copy", err);
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

/* Median device time of `call` (one clprim call per run). */
static double op_ms(struct bench *b, bench_call call, void *arg) {
  double t[256];
  for (int r = -3; r < b->reps; ++r) {
    clprim_status st = call(b, arg);
    if (st != CLPRIM_SUCCESS) die("call", st);
    double ms;
    st = clprim_context_last_time(b->ctx, &ms);
    if (st != CLPRIM_SUCCESS) die("profiling", st);
    if (r >= 0) t[r] = ms;
  }
  return median(t, b->reps);
}

/* Prints one result: `bytes` is the minimal traffic (reads + writes); the
 * copy reference moves the same traffic (bytes / 2 read and written). */
static void report(struct bench *b, const char *op, const char *variant, clprim_type type,
                   size_t n, double ms, double bytes, double copy) {
  double gbs = bytes / (ms * 1e6);
  if (b->json) {
    printf("%s{\"op\":\"%s\",\"variant\":\"%s\",\"type\":\"%s\",\"path\":\"%s\",\"n\":%zu,"
           "\"ms\":%.5f,\"gbps\":%.1f,\"copy_ms\":%.5f,\"ratio_to_copy\":%.3f}",
           b->records++ ? ",\n" : "[\n", op, variant, clprim_type_name(type),
           clprim_path_name(b->path), n, ms, gbs, copy, ms / copy);
  } else {
    printf("%-14s %-18s %-7s %-13s n=2^%-5.2g %9.4f ms %8.1f GB/s  copy %8.4f ms  ratio %.2f\n",
           op, variant, clprim_type_name(type), clprim_path_name(b->path), log2((double)n), ms,
           gbs, copy, ms / copy);
  }
  fflush(stdout);
}

static cl_mem device_buffer(struct bench *b, size_t bytes, const void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(b->cl, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            (void *)host, &err);
  if (err != CL_SUCCESS) die("clCreateBuffer", err);
  return m;
}

/* Random elements of type: integers in [0, 1000), floats in [0, 1). */
static void *random_data(clprim_type type, size_t n, unsigned seed) {
  size_t es = clprim_type_size(type);
  unsigned char *p = malloc(n * es);
  if (!p) die("malloc", CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
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
  return a->inclusive ? clprim_scan_inclusive(b->ctx, a->type, a->in, a->out, a->n)
                      : clprim_scan_exclusive(b->ctx, a->type, a->in, a->out, a->n);
}

static void bench_scan(struct bench *b, clprim_type type, size_t n) {
  size_t bytes = n * clprim_type_size(type);
  void *host = random_data(type, n, 1);
  struct scan_arg a = {type, device_buffer(b, bytes, host), device_buffer(b, bytes, NULL), n, 0};
  free(host);
  double copy = copy_ms(b, a.in, a.out, bytes);
  report(b, "scan", "exclusive", type, n, op_ms(b, call_scan, &a), 2.0 * bytes, copy);
  a.inclusive = 1;
  report(b, "scan", "inclusive", type, n, op_ms(b, call_scan, &a), 2.0 * bytes, copy);
  clReleaseMemObject(a.in);
  clReleaseMemObject(a.out);
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
  if (a->op == 2) return clprim_reduce_sum(b->ctx, a->type, a->in, a->n, NULL, a->result);
  return a->op ? clprim_argmin(b->ctx, a->type, a->in, a->n, 0, NULL, NULL, a->result)
               : clprim_argmax(b->ctx, a->type, a->in, a->n, 0, NULL, NULL, a->result);
}

/* Reductions read n elements once: the copy reference moves the same bytes
 * (half read, half written). */
static void bench_reduce(struct bench *b, clprim_type type, size_t n) {
  size_t bytes = n * clprim_type_size(type);
  void *host = random_data(type, n, 2);
  struct reduce_arg a = {type, device_buffer(b, bytes, host), device_buffer(b, 16, NULL), n, 0};
  free(host);
  cl_mem half = device_buffer(b, bytes / 2 + 1, NULL);
  double copy = copy_ms(b, a.in, half, bytes / 2);
  const char *const names[3] = {"argmax", "argmin", "reduce_sum"};
  for (a.op = 0; a.op < 3; ++a.op)
    if (want_op(b, names[a.op]))
      report(b, names[a.op], a.op == 2 ? "sum" : "first index", type, n, op_ms(b, call_reduce, &a),
             (double)bytes, copy);
  clReleaseMemObject(a.in);
  clReleaseMemObject(a.result);
  clReleaseMemObject(half);
}

/* ------------------------------------------------------------ select */

struct select_arg {
  clprim_type type;
  cl_mem in;
  size_t n;
  clprim_predicate pred;
  clprim_select_output out;
  int partition;
};
static clprim_status call_select(struct bench *b, void *p) {
  struct select_arg *a = p;
  if (a->partition) return clprim_partition(b->ctx, a->type, a->in, a->n, &a->pred, &a->out);
  return clprim_select(b->ctx, a->type, a->in, a->n, &a->pred, &a->out);
}

/* Values x > 1 - p of uniform data in [0, 1) (integers: x > 1000 (1 - p)),
 * so about a fraction p passes. Variants: the selected values, their uint32
 * indices, both, and a partition's values. Minimal bytes: the input read
 * once and what is written; the copy reference moves the same traffic. */
static void bench_select(struct bench *b, clprim_type type, size_t n) {
  size_t es = clprim_type_size(type), bytes = n * es;
  void *host = random_data(type, n, 2);
  struct select_arg a;
  memset(&a, 0, sizeof a);
  a.type = type;
  a.in = device_buffer(b, bytes, host);
  a.n = n;
  cl_mem values = device_buffer(b, bytes, NULL), indices = device_buffer(b, n * 4, NULL);
  a.out.count_buffer = device_buffer(b, 8, NULL);
  /* The copy moves up to (n es + n (es + 4)) / 2 bytes. */
  size_t copy_bytes = bytes + n * 2 + 64;
  cl_mem copy_src = device_buffer(b, copy_bytes, NULL), copy_dst = device_buffer(b, copy_bytes, NULL);
  free(host);
  const double rates[3] = {0.01, 0.5, 0.99};
  static const char *const kinds[4] = {"values", "indices", "both", "partition"};
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
    clprim_status st = clprim_select_count(b->ctx, type, a.in, n, &a.pred, &selected);
    if (st != CLPRIM_SUCCESS) die("select count", st);
    for (int k = 0; k < 4; ++k) {
      a.out.values = k != 1 ? values : NULL;
      a.out.indices = k == 1 || k == 2 ? indices : NULL;
      a.partition = k == 3;
      size_t written = k == 3 ? n * es : (size_t)selected * (k == 0 ? es : k == 1 ? 4 : es + 4);
      size_t traffic = bytes + written;
      double copy = copy_ms(b, copy_src, copy_dst, (traffic / 2 + 7) / 8 * 8);
      double ms = op_ms(b, call_select, &a);
      char variant[32];
      snprintf(variant, sizeof variant, "%s p=%.2f", kinds[k], rates[r]);
      report(b, "select", variant, type, n, ms, (double)traffic, copy);
    }
  }
  clReleaseMemObject(a.in);
  clReleaseMemObject(values);
  clReleaseMemObject(indices);
  clReleaseMemObject(a.out.count_buffer);
  clReleaseMemObject(copy_src);
  clReleaseMemObject(copy_dst);
}

/* ------------------------------------------------- one-read baseline */

/* The read baseline: a minimal kernel that reads every byte once (uint4
 * loads, grid-stride), measured in the same run as the calls it is compared
 * with (histograms, reduce-by-key, selection). */
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
  cl_program program = clCreateProgramWithSource(b->cl, 1, &read_source, NULL, &err);
  if (err != CL_SUCCESS) die("read program", err);
  cl_device_id dev = clprim_context_device(b->ctx);
  err = clBuildProgram(program, 1, &dev, "", NULL, NULL);
  if (err != CL_SUCCESS) die("read build", err);
  cl_kernel kernel = clCreateKernel(program, "read_all", &err);
  if (err != CL_SUCCESS) die("read kernel", err);
  clprim_device_info info;
  clprim_context_get_info(b->ctx, &info, sizeof info);
  cl_mem out = device_buffer(b, 4, NULL);
  cl_ulong n4 = bytes / 16;
  size_t local = 256, global = local * (info.compute_units ? info.compute_units : 1) * 8;
  if (!(info.device_type & CL_DEVICE_TYPE_GPU)) local = 64, global = 64 * 64;
  clSetKernelArg(kernel, 0, sizeof in, &in);
  clSetKernelArg(kernel, 1, sizeof n4, &n4);
  clSetKernelArg(kernel, 2, sizeof out, &out);
  double t[256];
  for (int r = -3; r < b->reps; ++r) {
    cl_event e;
    err = clEnqueueNDRangeKernel(b->queue, kernel, 1, NULL, &global, &local, 0, NULL, &e);
    if (err != CL_SUCCESS) die("read", err);
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
}

/* One result against the read baseline (ratio = ms / one read of the input). */
static void report_vs_read(struct bench *b, const char *op, const char *variant, clprim_type type,
                           size_t n, double ms, double read) {
  if (b->json) {
    printf("%s{\"op\":\"%s\",\"variant\":\"%s\",\"type\":\"%s\",\"path\":\"%s\",\"n\":%zu,"
           "\"ms\":%.5f,\"read_ms\":%.5f,\"ratio_to_read\":%.3f}",
           b->records++ ? ",\n" : "[\n", op, variant, clprim_type_name(type),
           clprim_path_name(b->path), n, ms, read, ms / read);
  } else {
    printf("%-14s %-22s %-7s %-13s n=2^%-5.2g %9.4f ms  read %8.4f ms  ratio %.2f\n", op, variant,
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
  switch (a->op) {
  case 0: return clprim_nth_element(b->ctx, a->type, a->in, a->n, a->k, 0, &v, NULL);
  case 1: return clprim_nth_element_approx(b->ctx, a->type, a->in, a->n, a->k, 0, &v, &err);
  case 2: return clprim_quantiles(b->ctx, a->type, a->in, a->n, a->ranks, a->count, 0, vs, NULL);
  default: return clprim_topk(b->ctx, a->type, a->in, a->n, a->k, 0, a->out, a->indices);
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
  unsigned char *host = random_data(type, n, 3);
  struct nth_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.in = device_buffer(b, bytes, host);
  a.out = device_buffer(b, bytes / 2 + es, NULL);
  a.indices = device_buffer(b, n / 2 * 4 + 4, NULL);
  uint64_t deciles[9], percentiles[99];
  for (int j = 0; j < 9; ++j) deciles[j] = clprim_quantile_rank(n, (j + 1) / 10.0);
  for (int j = 0; j < 99; ++j) percentiles[j] = clprim_quantile_rank(n, (j + 1) / 100.0);
  const int ndata = b->all_data && (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE) ? NTH_DATA_COUNT : 2;
  for (int data = 0; data < ndata; ++data) {
    const char *dname = nth_data_names[data];
    if (data) {
      nth_data(type, host, n, data);
      cl_int err = clEnqueueWriteBuffer(b->queue, a.in, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
      if (err != CL_SUCCESS) die("write", err);
    }
    double read = read_ms(b, a.in, bytes);
    char variant[48];
    if (want_op(b, "read")) report_vs_read(b, "read", dname, type, n, read, read);
    if (want_op(b, "nth_element")) {
      const uint64_t ks[3] = {n / 2, n / 100, n - 1};
      const char *kn[3] = {"n/2", "n/100", "n-1"};
      a.op = 0;
      for (int j = 0; j < 3; ++j) {
        a.k = ks[j];
        snprintf(variant, sizeof variant, "%s k=%s", dname, kn[j]);
        report_vs_read(b, "nth_element", variant, type, n, op_ms(b, call_nth, &a), read);
      }
    }
    if (want_op(b, "nth_approx")) {
      a.op = 1, a.k = n / 2;
      snprintf(variant, sizeof variant, "%s k=n/2", dname);
      report_vs_read(b, "nth_approx", variant, type, n, op_ms(b, call_nth, &a), read);
    }
    if (want_op(b, "quantiles")) {
      a.op = 2, a.ranks = deciles, a.count = 9;
      snprintf(variant, sizeof variant, "%s 9 deciles", dname);
      report_vs_read(b, "quantiles", variant, type, n, op_ms(b, call_nth, &a), read);
      a.ranks = percentiles, a.count = 99;
      snprintf(variant, sizeof variant, "%s 99 percentiles", dname);
      report_vs_read(b, "quantiles", variant, type, n, op_ms(b, call_nth, &a), read);
    }
    if (want_op(b, "topk")) {
      const uint64_t ks[3] = {1, 1000, n / 2};
      const char *kn[3] = {"1", "1000", "n/2"};
      a.op = 3;
      for (int j = 0; j < 3; ++j) {
        a.k = ks[j] < n ? ks[j] : n;
        snprintf(variant, sizeof variant, "%s k=%s", dname, kn[j]);
        report_vs_read(b, "topk", variant, type, n, op_ms(b, call_nth, &a), read);
      }
    }
  }
  free(host);
  clReleaseMemObject(a.in);
  clReleaseMemObject(a.out);
  clReleaseMemObject(a.indices);
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
  switch (a->op) {
  case 0: return clprim_histogram_even(b->ctx, a->type, a->values, a->n, a->lo, a->hi, a->bins, a->out_a, NULL);
  case 1: return clprim_histogram_keys(b->ctx, CLPRIM_UINT32, a->keys, a->n, a->bins, a->out_a, NULL);
  case 2:
    return clprim_reduce_by_key_dense(b->ctx, CLPRIM_INT32, a->keys, a->type, a->values, a->n,
                                      a->bins, a->out_a, NULL, NULL);
  default:
    return clprim_reduce_by_key(b->ctx, CLPRIM_INT32, a->keys, a->type, a->values, a->n, a->out_a,
                                a->out_b, a->count, NULL);
  }
}

/* Keys in [0, bins): random, sorted, or sorted with each key swapped with
 * its neighbour with probability 1/2 (partly sorted). */
static uint32_t *bench_keys(size_t n, size_t bins, int order) {
  uint32_t *k = malloc(n * 4);
  if (!k) die("malloc", CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
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
 * and 2^20 bins; histogram_keys: 2^20 random uint32 keys;
 * reduce_by_key_dense: int32 keys (random, sorted, partly sorted) into 2^20
 * keys, values of type; reduce_by_key: int32 keys in 2^20 sorted runs. */
static void bench_hist(struct bench *b, clprim_type type, size_t n, const clprim_device_info *info) {
  const size_t es = clprim_type_size(type), bins_many = (size_t)1 << 20;
  struct hist_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  void *host = random_data(type, n, 3);
  a.values = device_buffer(b, n * es, host);
  free(host);
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
      report_vs_read(b, "histogram", variant, type, n, op_ms(b, call_hist, &a), read_values);
    }
    clReleaseMemObject(a.out_a);
  }
  const int want_keys = want_op(b, "histogram_keys"), want_dense = want_op(b, "reduce_by_key_dense");
  const int want_runs = want_op(b, "reduce_by_key");
  if (want_keys || want_dense || want_runs) {
    const char *const order_names[3] = {"random", "sorted", "partly sorted"};
    /* out_a: 2^20 sums or counts, or n unique keys */
    a.out_a = device_buffer(b, (n > bins_many ? n : bins_many) * 8, NULL);
    a.out_b = device_buffer(b, n * es, NULL);
    a.count = device_buffer(b, 8, NULL);
    a.bins = bins_many;
    for (int order = 0; order < 3; ++order) {
      uint32_t *keys = bench_keys(n, bins_many, order);
      a.keys = device_buffer(b, n * 4, keys);
      free(keys);
      double read_keys = read_ms(b, a.keys, n * 4);
      if (order == 0 && want_keys && (type == CLPRIM_INT32 || type == CLPRIM_UINT32)) {
        a.op = 1;
        report_vs_read(b, "histogram_keys", "2^20 keys random", CLPRIM_UINT32, n,
                    op_ms(b, call_hist, &a), read_keys);
      }
      if (want_dense && (es == 4 || info->has_int64_atomics)) {
        a.op = 2;
        snprintf(variant, sizeof variant, "2^20 keys %s", order_names[order]);
        report_vs_read(b, "reduce_by_key_dense", variant, type, n, op_ms(b, call_hist, &a), read_keys + read_values);
      }
      if (order == 1 && want_runs) {
        a.op = 3;
        /* out_a: the unique keys (int32), out_b: the sums (type) */
        report_vs_read(b, "reduce_by_key", "2^20 sorted runs", type, n, op_ms(b, call_hist, &a), read_keys + read_values);
      }
      clReleaseMemObject(a.keys);
    }
    clReleaseMemObject(a.out_a);
    clReleaseMemObject(a.out_b);
    clReleaseMemObject(a.count);
  }
  clReleaseMemObject(a.values);
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
                                               "median",    "topk"};
#define STARTUP_FAMILIES (int)(sizeof startup_families / sizeof startup_families[0])

static clprim_status startup_call(clprim_context *ctx, const char *family, cl_mem in, cl_mem keys,
                                  cl_mem out, cl_mem out2, size_t n) {
  clprim_value v;
  uint64_t count;
  if (strcmp(family, "scan") == 0) return clprim_scan_exclusive(ctx, CLPRIM_FLOAT, in, out, n);
  if (strcmp(family, "reduce_sum") == 0) return clprim_reduce_sum(ctx, CLPRIM_FLOAT, in, n, &v, NULL);
  if (strcmp(family, "argmax") == 0) return clprim_argmax(ctx, CLPRIM_FLOAT, in, n, 0, &v, &count, NULL);
  if (strcmp(family, "select") == 0 || strcmp(family, "select_expr") == 0) {
    clprim_select_output o;
    memset(&o, 0, sizeof o);
    o.values = out, o.count = &count;
    if (strcmp(family, "select_expr") == 0)
      return clprim_select_expr(ctx, CLPRIM_FLOAT, in, n, "x > 0.5f", &o);
    clprim_predicate pred;
    memset(&pred, 0, sizeof pred);
    pred.op = CLPRIM_PRED_GT, pred.a.f32 = 0.5f;
    return clprim_select(ctx, CLPRIM_FLOAT, in, n, &pred, &o);
  }
  if (strcmp(family, "histogram") == 0) {
    clprim_value lo, hi;
    memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
    hi.f32 = 1.0f;
    return clprim_histogram_even(ctx, CLPRIM_FLOAT, in, n, lo, hi, 256, out, NULL);
  }
  if (strcmp(family, "reduce_by_key") == 0)
    return clprim_reduce_by_key(ctx, CLPRIM_INT32, keys, CLPRIM_FLOAT, in, n, out, out2, NULL, &count);
  if (strcmp(family, "reduce_by_key_dense") == 0)
    return clprim_reduce_by_key_dense(ctx, CLPRIM_INT32, keys, CLPRIM_FLOAT, in, n, 1024, out,
                                      NULL, NULL);
  if (strcmp(family, "median") == 0) return clprim_median(ctx, CLPRIM_FLOAT, in, n, 0, &v, NULL);
  return clprim_topk(ctx, CLPRIM_FLOAT, in, n, 100, 0, out, out2);
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
  if (!host || !keys) die("malloc", CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  for (size_t i = 0; i < n; ++i)
    host[i] = (float)((i * 2654435761u) % 1000003u) / 1000003.0f, keys[i] = (int32_t)(i / 64 % 1024);
  cl_int err;
  cl_context cl = clprim_context_cl_context(ctx);
  cl_mem in = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, host, &err);
  cl_mem kbuf = clCreateBuffer(cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, keys, &err);
  cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 8, NULL, &err);
  cl_mem out2 = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 8, NULL, &err);
  clFinish(clprim_context_queue(ctx));
  double t3 = now_ms();
  st = startup_call(ctx, family, in, kbuf, out, out2, n);
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
  free(host), free(keys);
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

/* --------------------------------------------------------------- main */

static int want_op(const struct bench *b, const char *op) {
  return strcmp(b->op_filter, "all") == 0 || strcmp(b->op_filter, op) == 0;
}

int main(int argc, char **argv) {
  struct bench b;
  memset(&b, 0, sizeof b);
  b.reps = 25;
  b.op_filter = "all";
  b.type_filter = -1;
  int min_log = 16, max_log = 28, run_startup = 0;
  clprim_options opts;
  clprim_options_init(&opts);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--startup-child") == 0 && v && i + 2 < argc) return startup_child(v, argv[i + 2]);
    if (strcmp(a, "--startup") == 0) {
      run_startup = 1;
    } else if (strcmp(a, "--json") == 0) {
      b.json = 1;
    } else if (strcmp(a, "--op") == 0 && v) {
      b.op_filter = v, ++i;
    } else if (strcmp(a, "--type") == 0 && v) {
      ++i;
      for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t)
        if (strcmp(v, clprim_type_name((clprim_type)t)) == 0) b.type_filter = t;
      if (strcmp(v, "all") != 0 && b.type_filter < 0) die("unknown --type", CLPRIM_ERROR_INVALID_ARGUMENT);
    } else if (strcmp(a, "--path") == 0 && v) {
      ++i;
      if (clprim_path_from_name(v, &opts.path) != CLPRIM_SUCCESS) die("unknown --path", CLPRIM_ERROR_INVALID_ARGUMENT);
    } else if (strcmp(a, "--min-log") == 0 && v) {
      min_log = atoi(v), ++i;
    } else if (strcmp(a, "--max-log") == 0 && v) {
      max_log = atoi(v), ++i;
    } else if (strcmp(a, "--data") == 0 && v) {
      b.all_data = strcmp(v, "all") == 0, ++i;
    } else if (strcmp(a, "--reps") == 0 && v) {
      b.reps = atoi(v), ++i;
    } else {
      fprintf(stderr, "usage: clprim-bench [--op NAME|all] [--type T|all] [--path P] "
                      "[--min-log K] [--max-log K] [--reps R>=20] [--data all] [--json] [--startup]\n");
      return 2;
    }
  }
  if (run_startup) {
    startup(argv[0], b.op_filter);
    return 0;
  }
  if (b.reps < 20) b.reps = 20;
  if (b.reps > 256) b.reps = 256;

  /* A profiling queue on the chosen device, and a context on it. */
  clprim_context *probe;
  clprim_status st = clprim_context_create(&probe, &opts);
  if (st != CLPRIM_SUCCESS) die("context", st);
  cl_int err;
  b.cl = clprim_context_cl_context(probe);
  clRetainContext(b.cl);
  b.queue = clCreateCommandQueue(b.cl, clprim_context_device(probe), CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) die("clCreateCommandQueue", err);
  clprim_context_free(probe);
  st = clprim_context_create_from_queue(&b.ctx, b.queue, &opts);
  if (st != CLPRIM_SUCCESS) die("context", st);
  clprim_device_info info;
  clprim_context_get_info(b.ctx, &info, sizeof info);
  b.path = info.path;
  if (!b.json)
    printf("device: %s | %s | driver %s | path %s | median of %d runs after 3 warm-ups\n",
           info.device_name, info.platform_name, info.driver_version, clprim_path_name(b.path),
           b.reps);

  for (int lg = min_log; lg <= max_log; ++lg) {
    size_t n = (size_t)1 << lg;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      clprim_type type = (clprim_type)t;
      if (b.type_filter >= 0 ? t != b.type_filter : !(t == CLPRIM_INT32 || t == CLPRIM_FLOAT))
        continue;
      if (type == CLPRIM_DOUBLE && !info.has_fp64) continue;
      size_t bytes = n * clprim_type_size(type);
      /* Room for about three arrays of the data (input, output, temporaries). */
      if (bytes > info.max_alloc_size || 3.2 * (double)bytes > (double)info.global_mem_size) continue;
      if (want_op(&b, "scan")) bench_scan(&b, type, n);
      if (want_op(&b, "argmax") || want_op(&b, "argmin") || want_op(&b, "reduce_sum"))
        bench_reduce(&b, type, n);
      if (want_op(&b, "select")) bench_select(&b, type, n);
      if (want_op(&b, "histogram") || want_op(&b, "histogram_keys") ||
          want_op(&b, "reduce_by_key_dense") || want_op(&b, "reduce_by_key"))
        bench_hist(&b, type, n, &info);
      if (want_op(&b, "read") || want_op(&b, "nth_element") || want_op(&b, "nth_approx") ||
          want_op(&b, "quantiles") || want_op(&b, "topk"))
        bench_nth(&b, type, n);
    }
  }
  if (b.json) printf("%s]\n", b.records ? "\n" : "[");
  clprim_context_free(b.ctx);
  clReleaseCommandQueue(b.queue);
  clReleaseContext(b.cl);
  return 0;
}
