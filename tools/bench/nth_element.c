/* Rows of the nth_element family (selection by rank, SampleSelect): exact
 * and approximate selection and quantiles, against one read of the input,
 * on the distributions of data.h; and the read baseline alone. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <string.h>

struct nth_arg {
  clprim_type type;
  cl_mem in;
  size_t n;
  int op; /* 0 nth, 1 approx, 2 quantiles */
  uint64_t k;
  const uint64_t *ranks;
  size_t count;
};

static clprim_status call_nth(clprim_context *ctx, void *p) {
  struct nth_arg *a = p;
  clprim_value v, vs[128];
  uint64_t err;
  const clprim_buffer in = clprim_buf(a->in), none = clprim_buf(NULL);
  switch (a->op) {
  case 0:
    return clprim_nth_element(ctx, a->n, a->type, in, a->k, 0, &v, none);
  case 1:
    return clprim_nth_element_approx(ctx, a->n, a->type, in, a->k, 0, &v, &err, none);
  default:
    return clprim_quantiles(ctx, a->n, a->type, in, a->ranks, a->count, 0, vs, none);
  }
}

/* nth_element (k = n/2, n/100, n-1), approximate (k = n/2), quantiles (9
 * deciles, 99 percentiles) on uniform data and on 16 distinct values; with
 * --data all (float and double) also on the other distributions. */
static void run_nth(struct bench *b, clprim_type type, size_t n) {
  size_t bytes = n * clprim_type_size(type);
  unsigned char *host = bench_random(b, type, n, 3);
  struct nth_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.in = bench_buffer(b, bytes, host);
  uint64_t deciles[9], percentiles[99];
  for (int j = 0; j < 9; ++j)
    deciles[j] = clprim_quantile_rank(n, (j + 1) / 10.0);
  for (int j = 0; j < 99; ++j)
    percentiles[j] = clprim_quantile_rank(n, (j + 1) / 100.0);
  for (int data = 0; data < bench_selection_count(b, type); ++data) {
    const char *dname = bench_selection_names[data];
    const double read = bench_selection_load(b, type, host, a.in, n, data);
    char variant[48];
    if (bench_wants(b, "read")) bench_report_read(b, "read", dname, type, n, NULL, NULL, read);
    if (bench_wants(b, "nth_element")) {
      const uint64_t ks[3] = {n / 2, n / 100, n - 1};
      const char *kn[3] = {"n/2", "n/100", "n-1"};
      a.op = 0;
      for (int j = 0; j < 3; ++j) {
        a.k = ks[j];
        snprintf(variant, sizeof variant, "%s k=%s", dname, kn[j]);
        bench_report_read(b, "nth_element", variant, type, n, call_nth, &a, read);
      }
    }
    if (bench_wants(b, "nth_approx")) {
      a.op = 1, a.k = n / 2;
      snprintf(variant, sizeof variant, "%s k=n/2", dname);
      bench_report_read(b, "nth_approx", variant, type, n, call_nth, &a, read);
    }
    if (bench_wants(b, "quantiles")) {
      a.op = 2, a.ranks = deciles, a.count = 9;
      snprintf(variant, sizeof variant, "%s 9 deciles", dname);
      bench_report_read(b, "quantiles", variant, type, n, call_nth, &a, read);
      a.ranks = percentiles, a.count = 99;
      snprintf(variant, sizeof variant, "%s 99 percentiles", dname);
      bench_report_read(b, "quantiles", variant, type, n, call_nth, &a, read);
    }
  }
  bench_free(b, host);
  bench_release(b, a.in);
}

/* Ranks n/100, the lower median and n - 1 of the random uint32. */
static int check_nth_element(struct bench_check *c) {
  uint32_t *sorted = check_keys(c, 0, 1);
  const uint64_t ks[3] = {c->n / 100, (c->n - 1) / 2, c->n - 1};
  for (int j = 0; j < 3; ++j) {
    clprim_value v;
    if (!sorted ||
        !check_ok(c, clprim_nth_element(c->ctx, c->n, CLPRIM_UINT32, clprim_buf(c->in), ks[j], 0,
                                        &v, clprim_buf(NULL))) ||
        v.u32 != sorted[ks[j]])
      return 0;
  }
  return 1;
}

/* Near rank n / 2: an element of the input whose reported rank error is
 * the distance from n / 2 to the nearest rank it holds. */
static int check_nth_approx(struct bench_check *c) {
  const uint64_t k = c->n / 2;
  clprim_value v;
  uint64_t error = 0;
  if (!check_ok(c, clprim_nth_element_approx(c->ctx, c->n, CLPRIM_UINT32, clprim_buf(c->in), k, 0,
                                             &v, &error, clprim_buf(NULL))))
    return 0;
  uint64_t below = 0, equal = 0; /* v holds ranks [below, below + equal) */
  for (size_t i = 0; i < c->n; ++i)
    below += c->host[i] < v.u32, equal += c->host[i] == v.u32;
  const uint64_t last = below + equal - 1;
  return equal > 0 && error == (k < below ? below - k : k > last ? k - last : 0);
}

/* The 9 deciles of uint32 keys below 1000 (many equal elements). */
static int check_quantiles(struct bench_check *c) {
  uint32_t *keys = check_keys(c, 1000, 0), *sorted = check_keys(c, 1000, 1);
  cl_mem in = check_buffer(c, c->n * 4, keys);
  uint64_t ranks[9];
  clprim_value got[9];
  for (int j = 0; j < 9; ++j)
    ranks[j] = clprim_quantile_rank(c->n, (j + 1) / 10.0);
  if (!keys || !sorted || !in ||
      !check_ok(c, clprim_quantiles(c->ctx, c->n, CLPRIM_UINT32, clprim_buf(in), ranks, 9, 0, got,
                                    clprim_buf(NULL))))
    return 0;
  for (int j = 0; j < 9; ++j)
    if (got[j].u32 != sorted[ranks[j]]) return 0;
  return 1;
}

static const struct bench_op ops[] = {
    {"read", 0x3Fu, "the one-read baseline kernel alone", NULL},
    {"nth_element", 0x3Fu, "k = n/2, n/100, n-1", check_nth_element},
    {"nth_approx", 0x3Fu, "k = n/2", check_nth_approx},
    {"quantiles", 0x3Fu, "9 deciles, 99 percentiles", check_quantiles},
};

static clprim_status startup_median(const struct bench_startup_inputs *in) {
  clprim_value v;
  return clprim_median(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), 0, &v, clprim_buf(NULL));
}

static const struct bench_startup startup[] = {{"median", startup_median}};

const struct bench_family bench_nth_element = {
    "nth_element", ops, BENCH_COUNT(ops), run_nth, startup, BENCH_COUNT(startup),
    "SampleSelect: 255 splitters, bucket counts, recursion into the rank's bucket",
    NULL,
    "SampleSelect: 255 splitters, bucket counts by one work-item a work-group over "
    "contiguous shares, recursion into the rank's bucket"};
