/* Rows of the per-row selection family (src/segmented_topk.c): top-k and
 * nth_element per row of a matrix, against one read of the input. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct segtopk_arg {
  int nth;
  clprim_type type;
  cl_mem in, values, indices;
  size_t rows, row_length;
  uint64_t k;
};

static clprim_status call_segtopk(clprim_context *ctx, void *p) {
  struct segtopk_arg *a = p;
  if (a->nth)
    return clprim_batched_nth_element(ctx, a->rows, a->row_length, a->type, clprim_buf(a->in), a->k,
                                      0, clprim_buf(a->values));
  return clprim_batched_topk(ctx, a->rows, a->row_length, a->type, clprim_buf(a->in), a->k,
                             CLPRIM_TOPK_SORTED, clprim_buf(a->values), clprim_buf(a->indices));
}

/* Rows of 1024 and of 32768 random elements of the type (the last partial
 * row left out); top-k with k = 8 and 100, values and uint32 indices,
 * sorted; nth_element of rank row / 2 (the median). */
static void run_segtopk(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type);
  struct segtopk_arg a;
  memset(&a, 0, sizeof a);
  a.type = type;
  void *host = bench_random(b, type, n, 10);
  a.in = bench_buffer(b, n * es, host);
  bench_free(b, host);
  const double read = bench_read_ms(b, a.in, n * es);
  const size_t lengths[2] = {1024, 32768};
  for (int l = 0; l < 2; ++l) {
    a.row_length = lengths[l], a.rows = n / lengths[l];
    if (a.rows == 0) continue;
    a.values = bench_buffer(b, a.rows * 100 * es, NULL);
    a.indices = bench_buffer(b, a.rows * 100 * 4, NULL);
    char variant[96];
    if (bench_wants(b, "batched_topk")) {
      const uint64_t ks[2] = {8, 100};
      for (int j = 0; j < 2; ++j) {
        a.nth = 0, a.k = ks[j];
        snprintf(variant, sizeof variant, "rows of %zu, k = %llu, sorted", a.row_length,
                 (unsigned long long)a.k);
        bench_report_read(b, "batched_topk", variant, type, a.rows * a.row_length, call_segtopk, &a,
                          read);
      }
    }
    if (bench_wants(b, "batched_nth_element")) {
      a.nth = 1, a.k = a.row_length / 2;
      snprintf(variant, sizeof variant, "rows of %zu, the median", a.row_length);
      bench_report_read(b, "batched_nth_element", variant, type, a.rows * a.row_length,
                        call_segtopk, &a, read);
    }
    bench_release(b, a.values);
    bench_release(b, a.indices);
  }
  bench_release(b, a.in);
}

/* Rows of 1000 uint32 keys below 1000 (many equal): nth 0, the top 10 of
 * each row, sorted, with their positions in the row; nth 1, the element of
 * rank 500 of each. Each row's keys, best first with their positions (as
 * check_best_first), go to want (1000 per row). */
static int check_rows(struct bench_check *c, int nth, uint32_t **values, uint32_t **indices,
                      uint64_t **want) {
  const size_t rows = c->n / 1000, k = 10;
  uint32_t *keys = check_keys(c, 1000, 0);
  *values = check_host(c, rows * k * 4), *indices = check_host(c, rows * k * 4);
  *want = check_host(c, rows * 1000 * 8);
  struct segtopk_arg a;
  memset(&a, 0, sizeof a);
  a.nth = nth, a.type = CLPRIM_UINT32, a.rows = rows, a.row_length = 1000, a.k = nth ? 500 : k;
  a.in = check_buffer(c, c->n * 4, keys);
  a.values = check_buffer(c, rows * k * 4, NULL), a.indices = check_buffer(c, rows * k * 4, NULL);
  if (!keys || !*values || !*indices || !*want || !a.in || !a.values || !a.indices ||
      !check_ok(c, call_segtopk(c->ctx, &a)) ||
      !check_read(c, a.values, rows * (nth ? 1 : k) * 4, *values) ||
      (!nth && !check_read(c, a.indices, rows * k * 4, *indices)))
    return 0;
  for (size_t i = 0; i < rows * 1000; ++i)
    (*want)[i] = check_best_first(keys[i], i % 1000);
  for (size_t r = 0; r < rows; ++r)
    qsort(*want + r * 1000, 1000, 8, check_cmp_u64);
  return 1;
}

static int check_batched_topk(struct bench_check *c) {
  uint32_t *values, *indices;
  uint64_t *want;
  if (!check_rows(c, 0, &values, &indices, &want)) return 0;
  for (size_t r = 0; r < c->n / 1000; ++r)
    for (size_t j = 0; j < 10; ++j) {
      const uint64_t best = want[r * 1000 + j];
      if (indices[r * 10 + j] != (uint32_t)best ||
          values[r * 10 + j] != UINT32_MAX - (uint32_t)(best >> 32))
        return 0;
    }
  return 1;
}

/* Rank 500 ascending is rank 499 of the best-first order. */
static int check_batched_nth_element(struct bench_check *c) {
  uint32_t *values, *indices;
  uint64_t *want;
  if (!check_rows(c, 1, &values, &indices, &want)) return 0;
  for (size_t r = 0; r < c->n / 1000; ++r)
    if (values[r] != UINT32_MAX - (uint32_t)(want[r * 1000 + 499] >> 32)) return 0;
  return 1;
}

static const struct bench_op ops[] = {
    {"batched_topk", 0x3Fu,
     "rows of 1024 and 32768, k = 8 and 100, sorted, values and uint32 indices",
     check_batched_topk},
    {"batched_nth_element", 0x3Fu, "rows of 1024 and 32768, the median", check_batched_nth_element},
};

/* Rows of 1024, k = 8, sorted. */
static clprim_status startup_batched_topk(const struct bench_startup_inputs *in) {
  return clprim_batched_topk(in->ctx, in->n / 1024, 1024, CLPRIM_FLOAT, clprim_buf(in->in), 8,
                             CLPRIM_TOPK_SORTED, clprim_buf(in->out), clprim_buf(in->out2));
}

/* The median of each row of 1024. */
static clprim_status startup_batched_nth_element(const struct bench_startup_inputs *in) {
  return clprim_batched_nth_element(in->ctx, in->n / 1024, 1024, CLPRIM_FLOAT, clprim_buf(in->in),
                                    512, 0, clprim_buf(in->out));
}

static const struct bench_startup startup[] = {
    {"batched_topk", startup_batched_topk}, {"batched_nth_element", startup_batched_nth_element}};

const struct bench_family bench_segmented_topk = {
    "segmented_topk", ops, BENCH_COUNT(ops), run_segtopk, startup, BENCH_COUNT(startup),
    "a work-group per segment: radix selection (8-bit passes, the keys in play "
    "gathered in local memory), rows sorted in local memory; long segments through "
    "topk / nth_element",
    NULL,
    "a work-item per segment (one a work-group): the same radix selection and row sort; "
    "long segments through topk / nth_element"};
