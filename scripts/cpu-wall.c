/* cpu-wall.c: clprim's calls on the data of scripts/cpu-anchor.cpp, timed
 * as the anchor times its loops: wall time from the call to the end of its
 * work (clFinish), median of 20 runs after 3 warm-ups, results in device
 * buffers. For the CPU rows of docs/PERFORMANCE.md, beside clprim-bench's
 * device times (profiling events), which leave out what a call costs on the
 * host and in the runtime's scheduling.
 *   cc -O2 -o /tmp/cpu-wall scripts/cpu-wall.c $(pkg-config --cflags --libs clprim)
 *   CLPRIM_DEVICE=cpu /tmp/cpu-wall 22 24 */
#include <clprim/clprim.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum {
  ROW_SCAN, ROW_SELECT, ROW_SUM, ROW_ARGMAX, ROW_HIST,
  ROW_SORT, ROW_MEDIAN, ROW_TOPK, ROW_RBK
};
static const char *const names[] = {"scan",      "select",      "reduce_sum",
                                    "argmax",    "histogram 256", "sort uint32",
                                    "median",    "topk 1000",   "reduce_by_key"};

struct bufs {
  size_t n;
  cl_mem x, u, keys, out, out2, small;
};

static clprim_status run(clprim_context *ctx, int row, const struct bufs *b) {
  const clprim_buffer none = clprim_buf(NULL);
  clprim_predicate pred;
  clprim_value lo, hi;
  memset(&pred, 0, sizeof pred);
  memset(&lo, 0, sizeof lo);
  memset(&hi, 0, sizeof hi);
  switch (row) {
  case ROW_SCAN:
    return clprim_scan_inclusive(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->x), 0, clprim_buf(b->out));
  case ROW_SELECT:
    pred.op = CLPRIM_PRED_GT;
    pred.a.f32 = 0.5f;
    return clprim_select(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->x), &pred, 0, clprim_buf(b->out),
                         none, NULL, clprim_buf(b->small));
  case ROW_SUM:
    return clprim_reduce_sum(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->x), 0, NULL, clprim_buf(b->small));
  case ROW_ARGMAX:
    return clprim_argmax(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->x), 0, NULL, NULL,
                         clprim_buf(b->small));
  case ROW_HIST:
    hi.f32 = 1.0f;
    return clprim_histogram_even(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->x), lo, hi, 256,
                                 clprim_buf(b->out), NULL, none);
  case ROW_SORT:
    return clprim_sort_keys(ctx, b->n, CLPRIM_UINT32, clprim_buf(b->u), 0, 0, 0,
                            clprim_buf(b->out));
  case ROW_MEDIAN:
    return clprim_median(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->x), 0, NULL, clprim_buf(b->small));
  case ROW_TOPK:
    return clprim_topk(ctx, b->n, CLPRIM_FLOAT, clprim_buf(b->x), 1000, CLPRIM_TOPK_SORTED,
                       clprim_buf(b->out), clprim_buf(b->out2));
  default:
    return clprim_reduce_by_key(ctx, b->n, CLPRIM_INT32, clprim_buf(b->keys), CLPRIM_FLOAT,
                                clprim_buf(b->x), 0, clprim_buf(b->out), clprim_buf(b->out2), NULL,
                                clprim_buf(b->small));
  }
}

static cl_mem buffer(clprim_context *ctx, size_t bytes, const void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(clprim_context_cl_context(ctx),
                            CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                            (void *)host, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "cpu-wall: clCreateBuffer(%zu) failed: %d\n", bytes, err);
    exit(1);
  }
  return m;
}

int main(int argc, char **argv) {
  clprim_context *ctx;
  if (clprim_context_create(&ctx, NULL) != CLPRIM_SUCCESS) {
    fprintf(stderr, "cpu-wall: %s\n", clprim_context_last_error(NULL));
    return 1;
  }
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  printf("cpu-wall: %s (%s), path %s: wall time to the end of the work, median of 20 runs after "
         "3 warm-ups\n",
         info.device_name, info.platform_name, clprim_path_name(info.path));
  int status = 0;
  for (int a = 1; a < (argc > 1 ? argc : 3); ++a) {
    const int lg = argc > 1 ? atoi(argv[a]) : (a == 1 ? 22 : 24);
    struct bufs b;
    b.n = (size_t)1 << lg;
    float *x = malloc(b.n * 4);
    uint32_t *u = malloc(b.n * 4);
    int32_t *keys = malloc(b.n * 4);
    const size_t runs = b.n < ((size_t)1 << 20) ? b.n : (size_t)1 << 20, len = b.n / runs;
    uint64_t s = 20261129;
    for (size_t i = 0; i < b.n; ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = (float)(s >> 40) / 16777216.0f, u[i] = (uint32_t)(s >> 17);
      keys[i] = (int32_t)(i / len);
    }
    b.x = buffer(ctx, b.n * 4, x), b.u = buffer(ctx, b.n * 4, u);
    b.keys = buffer(ctx, b.n * 4, keys);
    b.out = buffer(ctx, b.n * 4, NULL), b.out2 = buffer(ctx, b.n * 4, NULL);
    b.small = buffer(ctx, 64, NULL);
    free(x), free(u), free(keys);
    for (int row = 0; row <= ROW_RBK; ++row) {
      double t[23];
      for (int r = 0; r < 23; ++r) {
        clFinish(clprim_context_queue(ctx));
        const double t0 = now_ms();
        const clprim_status st = run(ctx, row, &b);
        clFinish(clprim_context_queue(ctx));
        t[r] = now_ms() - t0;
        if (st != CLPRIM_SUCCESS) {
          printf("%s n=2^%d failed: %s\n", names[row], lg, clprim_context_last_error(ctx));
          status = 1;
          break;
        }
      }
      qsort(t + 3, 20, sizeof t[0], cmp_double);
      printf("%-14s n=2^%-2d  clprim %9.3f ms\n", names[row], lg, (t[12] + t[13]) / 2);
    }
    clReleaseMemObject(b.x), clReleaseMemObject(b.u), clReleaseMemObject(b.keys);
    clReleaseMemObject(b.out), clReleaseMemObject(b.out2), clReleaseMemObject(b.small);
  }
  clprim_context_free(ctx);
  return status;
}
