/* Rows of the top-k family (threshold by selection, then compaction),
 * against one read of the input, on the distributions of data.h. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct topk_arg {
  clprim_type type;
  cl_mem in, values, indices;
  size_t n;
  uint64_t k;
};

static clprim_status call_topk(clprim_context *ctx, void *p) {
  struct topk_arg *a = p;
  return clprim_topk(ctx, a->n, a->type, clprim_buf(a->in), a->k, 0, clprim_buf(a->values),
                     clprim_buf(a->indices));
}

/* k = 1, 1000, n/2, values and uint32 indices, on uniform data and on 16
 * distinct values; with --data all (float and double) also on the other
 * distributions. A k above n is skipped. */
static void run_topk(struct bench *b, clprim_type type, size_t n) {
  size_t es = clprim_type_size(type), bytes = n * es;
  unsigned char *host = bench_random(b, type, n, 3);
  struct topk_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.in = bench_buffer(b, bytes, host);
  /* The outputs hold the largest k that runs at this n (k <= n). */
  const uint64_t ks[3] = {1, 1000, n / 2};
  const char *const kn[3] = {"1", "1000", "n/2"};
  size_t kmax = 1;
  for (int j = 0; j < 3; ++j)
    if (ks[j] <= n && ks[j] > kmax) kmax = (size_t)ks[j];
  a.values = bench_buffer(b, kmax * es, NULL);
  a.indices = bench_buffer(b, kmax * 4, NULL);
  for (int data = 0; data < bench_selection_count(b, type); ++data) {
    const char *dname = bench_selection_names[data];
    const double read = bench_selection_load(b, type, host, a.in, n, data);
    for (int j = 0; j < 3; ++j) {
      char variant[48];
      snprintf(variant, sizeof variant, "%s k=%s", dname, kn[j]);
      if (ks[j] > n || ks[j] == 0) {
        bench_skipped(b, "topk", variant, type, n, ks[j] ? "k > n" : "k = 0 (n/2 at n = 1)");
        continue;
      }
      a.k = ks[j];
      bench_report_read(b, "topk", variant, type, n, call_topk, &a, read);
    }
  }
  bench_free(b, host);
  bench_release(b, a.in);
  bench_release(b, a.values);
  bench_release(b, a.indices);
}

/* The top 100 of uint32 keys below 1000, sorted, values and indices: far
 * more than 100 keys tie at the top, and the lowest positions win. */
static int check_topk(struct bench_check *c) {
  const size_t n = c->n, k = 100;
  uint32_t *keys = check_keys(c, 1000, 0), *values = check_host(c, k * 4);
  uint32_t *indices = check_host(c, k * 4);
  uint64_t *best = check_host(c, n * 8);
  cl_mem in = check_buffer(c, n * 4, keys);
  cl_mem values_out = check_buffer(c, k * 4, NULL), indices_out = check_buffer(c, k * 4, NULL);
  if (!keys || !values || !indices || !best || !in || !values_out || !indices_out ||
      !check_ok(c, clprim_topk(c->ctx, n, CLPRIM_UINT32, clprim_buf(in), k, CLPRIM_TOPK_SORTED,
                               clprim_buf(values_out), clprim_buf(indices_out))) ||
      !check_read(c, values_out, k * 4, values) || !check_read(c, indices_out, k * 4, indices))
    return 0;
  for (size_t i = 0; i < n; ++i)
    best[i] = check_best_first(keys[i], i);
  qsort(best, n, 8, check_cmp_u64);
  for (size_t j = 0; j < k; ++j)
    if (indices[j] != (uint32_t)best[j] || values[j] != keys[indices[j]]) return 0;
  return 1;
}

static const struct bench_op ops[] = {
    {"topk", 0x3Fu, "k = 1, 1000, n/2, values and uint32 indices (a k above n is skipped)",
     check_topk},
};

static clprim_status startup_topk(const struct bench_startup_inputs *in) {
  return clprim_topk(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), 100, 0, clprim_buf(in->out),
                     clprim_buf(in->out2));
}

static const struct bench_startup startup[] = {{"topk", startup_topk}};

const struct bench_family bench_topk = {
    "topk", ops, BENCH_COUNT(ops), run_topk, startup, BENCH_COUNT(startup),
    "small k: candidates beyond a splitter; else threshold by selection, then "
    "compaction",
    NULL,
    "small k: candidates beyond a splitter, each share tested 16 elements at a time; else "
    "threshold by selection, then compaction"};
