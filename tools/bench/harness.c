/* The bench harness (harness.h): the registry of families, a family's
 * memory, timing by profiling events, the copy and read baselines, and the
 * rows in text or JSON. Nothing here knows a family. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ registry */

/* The registry: a rows file (bench_<name>, tools/bench/<name>.c) for every
 * family of the library's list. */
#include "../../src/families.h"
#undef CORE
#undef ENGINE
#undef FAMILY
#define CORE(name)
#define ENGINE(name)
#define FAMILY(name) extern const struct bench_family bench_##name;
FAMILIES
#undef FAMILY
#define FAMILY(name) &bench_##name,
const struct bench_family *const bench_families[] = {FAMILIES};
const int bench_family_count = BENCH_COUNT(bench_families);

void bench_die(const char *what, int status) {
  fprintf(stderr, "clprim-bench: %s: %s\n", what, clprim_status_name(status));
  exit(1);
}

int bench_wants(const struct bench *b, const char *op) {
  return strcmp(b->op_filter, "all") == 0 || strcmp(b->op_filter, op) == 0;
}

int bench_lg(size_t n) {
  int l = 0;
  while (((size_t)1 << l) < n && l < 63)
    ++l;
  return l;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------ memory of a family */

void bench_run_family(struct bench *b, const struct bench_family *f, const char *name,
                      clprim_type type, size_t n) {
  b->cur_op = name;
  b->cur_type = type, b->cur_n = n;
  if (setjmp(b->abort_family) == 0) {
    f->run(b, type, n);
    return;
  }
  for (int i = 0; i < BENCH_MAX_LIVE; ++i) {
    if (b->live[i]) clReleaseMemObject(b->live[i]);
    free(b->live_host[i]);
    b->live[i] = NULL, b->live_host[i] = NULL;
  }
}

void bench_fail_setup(struct bench *b, const char *what, int status) {
  bench_failed(b, b->cur_op, "(setup)", b->cur_type, b->cur_n, what, status);
  longjmp(b->abort_family, 1);
}

void *bench_malloc(struct bench *b, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) bench_fail_setup(b, "malloc", CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  for (int i = 0; i < BENCH_MAX_LIVE; ++i)
    if (!b->live_host[i]) {
      b->live_host[i] = p;
      break;
    }
  return p;
}

void bench_free(struct bench *b, void *p) {
  for (int i = 0; i < BENCH_MAX_LIVE; ++i)
    if (b->live_host[i] == p) b->live_host[i] = NULL;
  free(p);
}

cl_mem bench_buffer(struct bench *b, size_t bytes, const void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(b->cl, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            (void *)host, &err);
  if (err != CL_SUCCESS) bench_fail_setup(b, "clCreateBuffer", err);
  for (int i = 0; i < BENCH_MAX_LIVE; ++i)
    if (!b->live[i]) {
      b->live[i] = m;
      break;
    }
  return m;
}

void bench_release(struct bench *b, cl_mem m) {
  for (int i = 0; i < BENCH_MAX_LIVE; ++i)
    if (b->live[i] == m) b->live[i] = NULL;
  clReleaseMemObject(m);
}

/* ------------------------------------------------- timing, baselines */

/* The device time of a finished command, in ms. */
static double event_ms(cl_event e) {
  cl_ulong start, end;
  clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
  clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
  return (double)(end - start) * 1e-6;
}

clprim_status bench_time(struct bench *b, bench_call call, void *arg, double *ms,
                         const char **what) {
  double t[BENCH_MAX_REPS];
  for (int r = -3; r < b->reps; ++r) {
    clprim_status st = call(b->ctx, arg);
    if (st != CLPRIM_SUCCESS) return *what = "call", st;
    double one;
    st = clprim_context_last_time(b->ctx, &one);
    if (st != CLPRIM_SUCCESS) return *what = "clprim_context_last_time", st;
    if (r >= 0) t[r] = one;
  }
  *ms = median(t, b->reps);
  return CLPRIM_SUCCESS;
}

clprim_status bench_time_span(struct bench *b, bench_call call, void *arg, double *ms) {
  double t[BENCH_MAX_REPS];
  cl_command_queue q = clprim_context_queue(b->ctx);
  for (int r = -3; r < b->reps; ++r) {
    cl_event before = NULL, after = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, &before);
    if (err != CL_SUCCESS) return (clprim_status)err;
    clprim_status st = call(b->ctx, arg);
    if (st == CLPRIM_SUCCESS) st = (clprim_status)clEnqueueMarkerWithWaitList(q, 0, NULL, &after);
    if (st == CLPRIM_SUCCESS) st = (clprim_status)clWaitForEvents(1, &after);
    cl_ulong start = 0, end = 0;
    if (st == CLPRIM_SUCCESS)
      st = (clprim_status)clGetEventProfilingInfo(before, CL_PROFILING_COMMAND_END, sizeof start,
                                                  &start, NULL);
    if (st == CLPRIM_SUCCESS)
      st = (clprim_status)clGetEventProfilingInfo(after, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                                  NULL);
    clReleaseEvent(before);
    if (after) clReleaseEvent(after);
    if (st != CLPRIM_SUCCESS) return st;
    if (r >= 0) t[r] = end > start ? (double)(end - start) * 1e-6 : 0.0;
  }
  *ms = median(t, b->reps);
  return CLPRIM_SUCCESS;
}

double bench_copy_ms(struct bench *b, cl_mem src, cl_mem dst, size_t bytes) {
  double t[BENCH_MAX_REPS];
  for (int r = -3; r < b->reps; ++r) {
    cl_event e;
    cl_int err = clEnqueueCopyBuffer(b->queue, src, dst, 0, 0, bytes, 0, NULL, &e);
    if (err != CL_SUCCESS) bench_fail_setup(b, "clEnqueueCopyBuffer", err);
    clWaitForEvents(1, &e);
    if (r >= 0) t[r] = event_ms(e);
    clReleaseEvent(e);
  }
  return median(t, b->reps);
}

/* The read baseline: a minimal kernel that reads every byte once (uint4
 * loads, grid-stride); the comparison the store can never beat. */
static const char *read_source =
    "__kernel void read_all(__global const uint4 *in, ulong n4, __global uint *out) {\n"
    "  uint acc = 0;\n"
    "  for (ulong i = get_global_id(0); i < n4; i += get_global_size(0)) {\n"
    "    uint4 v = in[i];\n"
    "    acc ^= v.x ^ v.y ^ v.z ^ v.w;\n"
    "  }\n"
    "  if (acc == 0x9E3779B9u) out[0] = acc;\n"
    "}\n";

/* The read kernel's runs; the status of the first step that failed, which
 * *what names. */
static cl_int read_runs(struct bench *b, cl_program program, cl_mem in, size_t bytes, double *t,
                        const char **what) {
  cl_int err;
  cl_device_id dev = clprim_context_device(b->ctx);
  if ((err = clBuildProgram(program, 1, &dev, "", NULL, NULL)) != CL_SUCCESS)
    return *what = "read baseline: clBuildProgram", err;
  cl_kernel kernel = clCreateKernel(program, "read_all", &err);
  if (err != CL_SUCCESS) return *what = "read baseline: clCreateKernel", err;
  cl_mem out = clCreateBuffer(b->cl, CL_MEM_READ_WRITE, 4, NULL, &err);
  if (err != CL_SUCCESS) {
    clReleaseKernel(kernel);
    return *what = "read baseline: clCreateBuffer", err;
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
      *what = "read baseline: clEnqueueNDRangeKernel";
      break;
    }
    clWaitForEvents(1, &e);
    if (r >= 0) t[r] = event_ms(e);
    clReleaseEvent(e);
  }
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  return err;
}

double bench_read_ms(struct bench *b, cl_mem in, size_t bytes) {
  cl_int err;
  const char *what = "read baseline: clCreateProgramWithSource";
  double t[BENCH_MAX_REPS];
  cl_program program = clCreateProgramWithSource(b->cl, 1, &read_source, NULL, &err);
  if (err == CL_SUCCESS) {
    err = read_runs(b, program, in, bytes, t, &what);
    clReleaseProgram(program);
  }
  if (err != CL_SUCCESS) bench_fail_setup(b, what, err);
  return median(t, b->reps);
}

/* ---------------------------------------------------------------- rows */

void bench_json_string(const char *s) {
  putchar('"');
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

/* A number, or null where it is not finite (JSON has no inf / nan). */
static void json_number(const char *key, const char *format, double v) {
  printf(",\"%s\":", key);
  if (isfinite(v))
    printf(format, v);
  else
    printf("null");
}

/* Starts one JSON object of the results array, with the row's identity. */
static void json_row_begin(struct bench *b, const char *op, const char *variant, clprim_type type,
                           size_t n) {
  printf("%s{\"op\":", b->records++ ? ",\n" : "\n");
  bench_json_string(op);
  printf(",\"variant\":");
  bench_json_string(variant);
  printf(",\"type\":\"%s\",\"path\":\"%s\",\"n\":%zu", clprim_type_name(type),
         clprim_path_name(b->path), n);
}

void bench_row_begin(struct bench *b, const char *op, const char *variant, clprim_type type,
                     size_t n, double ms) {
  if (b->json) {
    json_row_begin(b, op, variant, type, n);
    json_number("ms", "%.5f", ms);
  } else {
    printf("%-19s %-27s %-7s %-13s n=2^%-5.2g %9.4f ms", op, variant, clprim_type_name(type),
           clprim_path_name(b->path), log2((double)n), ms);
  }
}

void bench_row_number(struct bench *b, const char *key, const char *json_format,
                      const char *text_format, double value) {
  if (b->json)
    json_number(key, json_format, value);
  else
    printf(text_format, value);
}

void bench_row_string(struct bench *b, const char *key, const char *text_format,
                      const char *value) {
  if (b->json) {
    printf(",\"%s\":", key);
    bench_json_string(value);
  } else {
    printf(text_format, value);
  }
}

void bench_row_end(struct bench *b) {
  printf(b->json ? "}" : "\n");
  fflush(stdout);
}

void bench_failed(struct bench *b, const char *op, const char *variant, clprim_type type, size_t n,
                  const char *what, int status) {
  ++b->failed;
  fprintf(stderr, "clprim-bench: %s %s %s n=2^%d: %s failed: %s\n", op, variant,
          clprim_type_name(type), bench_lg(n), what, clprim_status_name(status));
  if (b->json) {
    json_row_begin(b, op, variant, type, n);
    printf(",\"error\":");
    bench_json_string(clprim_status_name(status));
    printf(",\"failed_in\":");
    bench_json_string(what);
    printf("}");
  }
  fflush(stdout);
}

void bench_skipped(struct bench *b, const char *op, const char *variant, clprim_type type, size_t n,
                   const char *why) {
  fprintf(stderr, "clprim-bench: note: %s %s %s n=2^%d skipped: %s\n", op, variant,
          clprim_type_name(type), bench_lg(n), why);
  if (b->json) {
    json_row_begin(b, op, variant, type, n);
    printf(",\"skipped\":");
    bench_json_string(why);
    printf("}");
  }
  fflush(stdout);
}

int bench_row_timed(struct bench *b, const char *op, const char *variant, clprim_type type,
                    size_t n, bench_call call, void *arg, double *ms) {
  const char *what = "";
  clprim_status st = bench_time(b, call, arg, ms, &what);
  if (st != CLPRIM_SUCCESS) {
    bench_failed(b, op, variant, type, n, what, st);
    return 0;
  }
  bench_row_begin(b, op, variant, type, n, *ms);
  return 1;
}

void bench_report_copy(struct bench *b, const char *op, const char *variant, clprim_type type,
                       size_t n, bench_call call, void *arg, double bytes, double copy) {
  double ms = 0;
  if (!bench_row_timed(b, op, variant, type, n, call, arg, &ms)) return;
  bench_row_number(b, "gbps", "%.1f", " %8.1f GB/s", bytes / (ms * 1e6));
  bench_row_number(b, "copy_ms", "%.5f", "  copy %8.4f ms", copy);
  bench_row_number(b, "ratio_to_copy", "%.3f", "  ratio %.2f", ms / copy);
  bench_row_end(b);
}

void bench_report_read(struct bench *b, const char *op, const char *variant, clprim_type type,
                       size_t n, bench_call call, void *arg, double read) {
  double ms = read;
  if (!call)
    bench_row_begin(b, op, variant, type, n, ms);
  else if (!bench_row_timed(b, op, variant, type, n, call, arg, &ms))
    return;
  bench_row_number(b, "read_ms", "%.5f", "  read %8.4f ms", read);
  bench_row_number(b, "ratio_to_read", "%.3f", "  ratio %.2f", ms / read);
  bench_row_end(b);
}
