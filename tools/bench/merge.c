/* Rows of the merge family: the merge of two sorted halves of n random
 * elements (keys, and pairs with uint32 values), and of 8 sorted runs
 * (keys; three rounds), against a copy of the same bytes. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS 8 /* merge_runs_keys' runs */

struct merge_arg {
  int pairs, runs; /* runs: 0 for the two-range merge */
  clprim_type type;
  cl_mem keys, values, out, out_values; /* keys, values: both halves, one after the other */
  size_t n;
};

/* The offsets of RUNS runs of n elements as equal as can be. */
static void runs_offsets(size_t n, uint64_t *offsets) {
  for (int r = 0; r <= RUNS; ++r) offsets[r] = (uint64_t)n * (uint64_t)r / RUNS;
}

static clprim_status call_merge(clprim_context *ctx, void *p) {
  struct merge_arg *a = p;
  if (a->runs) {
    uint64_t offsets[RUNS + 1];
    runs_offsets(a->n, offsets);
    return clprim_merge_runs_keys(ctx, a->n, a->type, clprim_buf(a->keys), RUNS, offsets, 0,
                                  clprim_buf(a->out));
  }
  const size_t na = a->n / 2, nb = a->n - na;
  const clprim_buffer ka = clprim_buf(a->keys), kb = clprim_buf_at(a->keys, na);
  if (!a->pairs) return clprim_merge_keys(ctx, na, nb, a->type, ka, kb, 0, clprim_buf(a->out));
  return clprim_merge_pairs(ctx, na, nb, a->type, ka, kb, CLPRIM_UINT32, clprim_buf(a->values),
                            clprim_buf_at(a->values, na), 0, clprim_buf(a->out),
                            clprim_buf(a->out_values));
}

/* The n elements of in, each of `runs` runs (offsets[r] .. offsets[r + 1])
 * sorted by clprim_sort_keys. */
static clprim_status sort_runs(struct bench *b, clprim_type type, cl_mem in, cl_mem out,
                               int runs, const uint64_t *offsets) {
  clprim_status st = CLPRIM_SUCCESS;
  for (int r = 0; r < runs && st == CLPRIM_SUCCESS; ++r)
    st = clprim_sort_keys(b->ctx, (size_t)(offsets[r + 1] - offsets[r]), type,
                          clprim_buf_at(in, (size_t)offsets[r]), 0, 0, 0,
                          clprim_buf_at(out, (size_t)offsets[r]));
  return st == CLPRIM_SUCCESS ? (clprim_status)clFinish(b->queue) : st;
}

/* merge_keys and merge_pairs (uint32 values) of two sorted halves of n
 * random elements, against a copy of the bytes they read and write. */
static void run_merge(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type);
  struct merge_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  void *host = bench_random(b, type, n, 13);
  cl_mem unsorted = bench_buffer(b, n * es, host);
  bench_free(b, host);
  a.keys = bench_buffer(b, n * es, NULL);
  a.out = bench_buffer(b, n * es, NULL);
  const uint64_t halves[3] = {0, n / 2, n};
  const clprim_status st = sort_runs(b, type, unsorted, a.keys, 2, halves);
  if (bench_wants(b, "merge_runs_keys")) {
    cl_mem runs = bench_buffer(b, n * es, NULL);
    uint64_t offsets[RUNS + 1];
    runs_offsets(n, offsets);
    const clprim_status rst = sort_runs(b, type, unsorted, runs, RUNS, offsets);
    if (rst != CLPRIM_SUCCESS) {
      bench_fail_setup(b, "sorting the runs", rst);
    } else {
      struct merge_arg r = a;
      r.keys = runs, r.runs = RUNS;
      const double copy = bench_copy_ms(b, runs, a.out, n * es);
      bench_report_copy(b, "merge_runs_keys", "8 sorted runs", type, n, call_merge, &r,
                        2.0 * n * es, copy);
    }
    bench_release(b, runs);
  }
  bench_release(b, unsorted);
  if (st != CLPRIM_SUCCESS) {
    bench_fail_setup(b, "sorting the halves", st);
  } else {
    if (bench_wants(b, "merge_keys")) {
      const double copy = bench_copy_ms(b, a.keys, a.out, n * es);
      bench_report_copy(b, "merge_keys", "sorted halves", type, n, call_merge, &a,
                        2.0 * n * es, copy);
    }
    if (bench_wants(b, "merge_pairs")) {
      a.pairs = 1;
      a.values = bench_buffer(b, n * 4, NULL);
      a.out_values = bench_buffer(b, n * 4, NULL);
      const double copy =
          bench_copy_ms(b, a.keys, a.out, n * es) + bench_copy_ms(b, a.values, a.out_values, n * 4);
      bench_report_copy(b, "merge_pairs", "halves, uint32 values", type, n,
                        call_merge, &a, 2.0 * n * (es + 4), copy);
      bench_release(b, a.values);
      bench_release(b, a.out_values);
    }
  }
  bench_release(b, a.keys);
  bench_release(b, a.out);
}

/* The two sorted halves of keys with repeats (the input modulo 2^10), with
 * each key's position as its value: the keys must come out sorted, and
 * equal keys with a's positions first, each half's in order (the stable
 * sort of the whole input, which the CPU makes here). */
static int check_merge(struct bench_check *c, int pairs) {
  const size_t n = c->n, na = n / 2;
  uint32_t *keys = check_keys(c, 1u << 10, 0), *values = check_host(c, n * 4);
  uint64_t *want = check_host(c, n * 8);
  uint32_t *got = check_host(c, n * 4), *got_values = check_host(c, n * 4);
  if (!keys || !values || !want || !got || !got_values) return 0;
  /* Each half sorted, as (key, position) pairs; then the whole. */
  for (size_t i = 0; i < n; ++i)
    want[i] = (uint64_t)keys[i] << 32 | (uint32_t)i;
  qsort(want, na, 8, check_cmp_u64);
  qsort(want + na, n - na, 8, check_cmp_u64);
  for (size_t i = 0; i < n; ++i)
    keys[i] = (uint32_t)(want[i] >> 32), values[i] = (uint32_t)want[i];
  qsort(want, n, 8, check_cmp_u64); /* positions of a come before b's */
  struct merge_arg a;
  memset(&a, 0, sizeof a);
  a.pairs = pairs, a.type = CLPRIM_UINT32, a.n = n;
  a.keys = check_buffer(c, n * 4, keys), a.values = check_buffer(c, n * 4, values);
  a.out = check_buffer(c, n * 4, NULL), a.out_values = check_buffer(c, n * 4, NULL);
  if (!a.keys || !a.values || !a.out || !a.out_values || !check_ok(c, call_merge(c->ctx, &a)) ||
      !check_read(c, a.out, n * 4, got) ||
      (pairs && !check_read(c, a.out_values, n * 4, got_values)))
    return 0;
  for (size_t i = 0; i < n; ++i)
    if (got[i] != (uint32_t)(want[i] >> 32) || (pairs && got_values[i] != (uint32_t)want[i]))
      return 0;
  return 1;
}
static int check_merge_keys(struct bench_check *c) {
  return check_merge(c, 0);
}
/* RUNS sorted runs of keys with repeats: the output sorted (keys alone
 * show no order among equals). */
static int check_merge_runs(struct bench_check *c) {
  const size_t n = c->n;
  uint32_t *keys = check_keys(c, 1u << 10, 0), *got = check_host(c, n * 4);
  if (!keys || !got) return 0;
  uint64_t offsets[RUNS + 1];
  runs_offsets(n, offsets);
  for (int r = 0; r < RUNS; ++r)
    qsort(keys + offsets[r], (size_t)(offsets[r + 1] - offsets[r]), 4, check_cmp_u32);
  struct merge_arg a;
  memset(&a, 0, sizeof a);
  a.runs = RUNS, a.type = CLPRIM_UINT32, a.n = n;
  a.keys = check_buffer(c, n * 4, keys), a.out = check_buffer(c, n * 4, NULL);
  if (!a.keys || !a.out || !check_ok(c, call_merge(c->ctx, &a)) || !check_read(c, a.out, n * 4, got))
    return 0;
  qsort(keys, n, 4, check_cmp_u32);
  return memcmp(keys, got, n * 4) == 0;
}
static int check_merge_pairs(struct bench_check *c) {
  return check_merge(c, 1);
}

static const struct bench_op ops[] = {
    {"merge_keys", 0x3Fu, "two sorted halves of n random elements merged", check_merge_keys},
    {"merge_pairs", 0x3Fu, "as merge_keys, with uint32 values", check_merge_pairs},
    {"merge_runs_keys", 0x3Fu, "8 sorted runs of n / 8 random elements merged (3 rounds)",
     check_merge_runs},
};

static clprim_status startup_merge(const struct bench_startup_inputs *in) {
  return clprim_merge_keys(in->ctx, in->n / 2, in->n - in->n / 2, CLPRIM_FLOAT, clprim_buf(in->in),
                           clprim_buf_at(in->in, in->n / 2), 0, clprim_buf(in->out));
}

static clprim_status startup_merge_runs(const struct bench_startup_inputs *in) {
  uint64_t offsets[9];
  for (int r = 0; r <= 8; ++r) offsets[r] = in->n / 8 * (uint64_t)r;
  return clprim_merge_runs_keys(in->ctx, in->n / 8 * 8, CLPRIM_FLOAT, clprim_buf(in->in), 8,
                                offsets, 0, clprim_buf(in->out));
}

static const struct bench_startup startup[] = {{"merge_keys", startup_merge},
                                               {"merge_runs_keys", startup_merge_runs}};

const struct bench_family bench_merge = {
    "merge", ops, BENCH_COUNT(ops), run_merge, startup, BENCH_COUNT(startup),
    "merge path: each tile's split by a binary search along its diagonal, then a work-group "
    "merges the tile in local memory",
    NULL,
    "merge path: each share's split by a binary search along its diagonal, then a work-item "
    "merges its share from global memory"};
