/* clprim-demo: a short tour of clprim's families on the default device, on
 * one array of a million floats (temperatures, say), each result checked on
 * the CPU and each call timed. The first program to read when learning
 * clprim: every call is the plain public API. Exit status 1 if a result is
 * wrong, 2 for a usage error. */
#define _POSIX_C_SOURCE 200809L
#include <clprim/clprim.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* Prints one line of the tour (the call's time since `since`, the queue
 * finished) and counts a wrong result. */
static void report(cl_command_queue q, double since, const char *what, clprim_status st,
                   int right, const char *result) {
  clFinish(q);
  const double ms = now_ms() - since;
  if (st != CLPRIM_SUCCESS) {
    printf("  %-34s FAILED: %s\n", what, clprim_status_name(st));
    ++failures;
    return;
  }
  printf("  %-34s %s %9.1f ms  %s\n", what, right ? "ok   " : "WRONG", ms, result);
  failures += !right;
}

static void usage(FILE *to) {
  fprintf(to,
          "Usage: clprim-demo [--help]\n"
          "A tour of clprim on one array of a million floats: argmax, median, a\n"
          "percentile, top 5, a selection, a histogram, sums per key and a scan,\n"
          "each checked on the CPU. Each line gives the call's wall time with its\n"
          "results read back; a family's first call includes building its kernels\n"
          "(kept in the disk cache for later runs).\n"
          "The device: $CLPRIM_DEVICE (a name or platform substring, see\n"
          "clprim-info), else the first GPU, else the first device.\n"
          "Exit status: 0 every result right, 1 a result wrong or a call failed,\n"
          "2 a usage error.\n");
}

static int cmp_float(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc > 1) {
    const int help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
    usage(help ? stdout : stderr);
    return help && argc == 2 ? 0 : 2;
  }
  clprim_context *ctx;
  clprim_status st = clprim_context_create(&ctx, NULL); /* $CLPRIM_DEVICE, else first GPU */
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "no context: %s\n", clprim_status_name(st));
    return 1;
  }
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  printf("device: %s (%s), path %s\n", info.device_name, info.platform_name,
         clprim_path_name(info.path));

  /* One million readings in [-20, 40), a few of them far off. */
  const size_t n = 1000000;
  float *t = malloc(n * sizeof *t), *sorted = malloc(n * sizeof *sorted);
  float *got = malloc(n * sizeof *got);
  int *keys = malloc(n * sizeof *keys);
  if (!t || !sorted || !got || !keys) return 1;
  unsigned long long s = 42;
  for (size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    t[i] = -20.0f + 60.0f * (float)(s >> 40) / (float)(1ull << 24);
    if (i % 100003 == 0) t[i] = 1000.0f + (float)i; /* outliers */
    keys[i] = (int)(i / 1000);                       /* 1000 readings per station */
  }
  memcpy(sorted, t, n * sizeof *t);
  qsort(sorted, n, sizeof *sorted, cmp_float);

  cl_context cl = clprim_context_cl_context(ctx);
  cl_command_queue q = clprim_context_queue(ctx);
  cl_int err;
  cl_mem in = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, t, &err);
  cl_mem key_buf = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, keys, &err);
  cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 4, NULL, &err);
  cl_mem out2 = clCreateBuffer(cl, CL_MEM_READ_WRITE, n * 4, NULL, &err);
  if (!in || !key_buf || !out || !out2) {
    fprintf(stderr, "clCreateBuffer: %s\n", clprim_status_name(err));
    return 1;
  }
  char line[128];
  double t0;
  printf("a tour on %zu floats (wall time per call, results read back):\n", n);

  /* Reductions: the largest reading and where it is. */
  clprim_value v;
  uint64_t at;
  t0 = now_ms();
  st = clprim_argmax(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, &v, &at, clprim_buf(NULL));
  snprintf(line, sizeof line, "%.1f at index %llu", v.f32, (unsigned long long)at);
  report(q, t0, "argmax", st, st == CLPRIM_SUCCESS && v.f32 == sorted[n - 1] && t[at] == v.f32, line);

  /* The median, and the 99th percentile. */
  t0 = now_ms();
  st = clprim_median(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, &v, clprim_buf(NULL));
  snprintf(line, sizeof line, "%.4f", v.f32);
  report(q, t0, "median (the lower one)", st, st == CLPRIM_SUCCESS && v.f32 == sorted[(n - 1) / 2], line);
  const uint64_t p99 = clprim_quantile_rank(n, 0.99);
  t0 = now_ms();
  st = clprim_nth_element(ctx, n, CLPRIM_FLOAT, clprim_buf(in), p99, 0, &v, clprim_buf(NULL));
  snprintf(line, sizeof line, "%.4f", v.f32);
  report(q, t0, "99th percentile (nth_element)", st, st == CLPRIM_SUCCESS && v.f32 == sorted[p99], line);

  /* The five hottest readings, sorted. */
  t0 = now_ms();
  st = clprim_topk(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 5, CLPRIM_TOPK_SORTED, clprim_buf(out),
                   clprim_buf(NULL));
  int right = st == CLPRIM_SUCCESS &&
              clEnqueueReadBuffer(q, out, CL_TRUE, 0, 5 * 4, got, 0, NULL, NULL) == CL_SUCCESS;
  for (int k = 0; k < 5 && right; ++k) right = got[k] == sorted[n - 1 - k];
  snprintf(line, sizeof line, "%.1f %.1f %.1f %.1f %.1f", got[0], got[1], got[2], got[3], got[4]);
  report(q, t0, "top 5 (topk, sorted)", st, right, line);

  /* The readings above 35 degrees, in order (stream compaction). */
  clprim_predicate hot;
  memset(&hot, 0, sizeof hot);
  hot.op = CLPRIM_PRED_GT;
  hot.a.f32 = 35.0f;
  uint64_t count = 0;
  t0 = now_ms();
  st = clprim_select(ctx, n, CLPRIM_FLOAT, clprim_buf(in), &hot, 0, clprim_buf(out),
                     clprim_buf(NULL), &count, clprim_buf(NULL));
  right = st == CLPRIM_SUCCESS &&
          clEnqueueReadBuffer(q, out, CL_TRUE, 0, count * 4, got, 0, NULL, NULL) == CL_SUCCESS;
  size_t c = 0;
  for (size_t i = 0; i < n && right; ++i)
    if (t[i] > 35.0f) right = c < count && got[c++] == t[i];
  right = right && c == count;
  snprintf(line, sizeof line, "%llu readings", (unsigned long long)count);
  report(q, t0, "select x > 35 (in order)", st, right, line);

  /* A histogram: 12 bins of 5 degrees over [-20, 40); outliers outside. */
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo);
  memset(&hi, 0, sizeof hi);
  lo.f32 = -20.0f, hi.f32 = 40.0f;
  uint64_t outside[3];
  cl_uint bins[12];
  t0 = now_ms();
  st = clprim_histogram_even(ctx, n, CLPRIM_FLOAT, clprim_buf(in), lo, hi, 12, clprim_buf(out),
                             outside, clprim_buf(NULL));
  right = st == CLPRIM_SUCCESS &&
          clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof bins, bins, 0, NULL, NULL) == CL_SUCCESS;
  uint64_t total = outside[0] + outside[1] + outside[2];
  for (int b = 0; b < 12; ++b) total += bins[b];
  right = right && total == n && outside[1] == 10; /* the ten outliers lie above */
  snprintf(line, sizeof line, "%u in [-20, -15), %llu above 40", bins[0],
           (unsigned long long)outside[1]);
  report(q, t0, "histogram, 12 bins", st, right, line);

  /* The sum per station (reduce-by-key over runs of equal keys). */
  uint64_t stations = 0;
  t0 = now_ms();
  st = clprim_reduce_by_key(ctx, n, CLPRIM_INT32, clprim_buf(key_buf), CLPRIM_FLOAT,
                            clprim_buf(in), 0, clprim_buf(out), clprim_buf(out2), &stations,
                            clprim_buf(NULL));
  right = st == CLPRIM_SUCCESS && stations == n / 1000 &&
          clEnqueueReadBuffer(q, out2, CL_TRUE, 0, stations * 4, got, 0, NULL, NULL) == CL_SUCCESS;
  for (size_t k = 0; k < stations && right; ++k) {
    double sum = 0, bound = 0;
    for (size_t i = k * 1000; i < (k + 1) * 1000; ++i) sum += t[i], bound += fabs(t[i]);
    right = fabs(got[k] - sum) <= 1e-4 * bound; /* float sums: docs/ACCURACY.md */
  }
  snprintf(line, sizeof line, "%llu stations, the first sums %.1f", (unsigned long long)stations,
           got[0]);
  report(q, t0, "sum per station (reduce_by_key)", st, right, line);

  /* Running totals (an inclusive scan). */
  t0 = now_ms();
  st = clprim_scan_inclusive(ctx, n, CLPRIM_FLOAT, clprim_buf(in), 0, clprim_buf(out));
  right = st == CLPRIM_SUCCESS &&
          clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * 4, got, 0, NULL, NULL) == CL_SUCCESS;
  double run = 0, bound = 0;
  for (size_t i = 0; i < n && right; ++i) {
    run += t[i], bound += fabs(t[i]);
    right = fabs(got[i] - run) <= 1e-4 * bound + 1e-3;
  }
  snprintf(line, sizeof line, "last %.1f", got[n - 1]);
  report(q, t0, "running total (scan)", st, right, line);

  clReleaseMemObject(in), clReleaseMemObject(key_buf);
  clReleaseMemObject(out), clReleaseMemObject(out2);
  free(t), free(sorted), free(got), free(keys);
  clprim_context_free(ctx);
  printf("%s\n", failures ? "some results were WRONG" : "every result checked on the CPU: correct");
  return failures ? 1 : 0;
}
