/* Rows of the select family: compaction (values, indices, both), partition
 * (stable and reversed) and the three-way partition, against a copy of the
 * same traffic. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <string.h>

struct select_arg {
  clprim_type type;
  cl_mem in;
  size_t n;
  clprim_predicate pred;
  cl_mem values, indices, count_buffer; /* NULL: not written */
  int partition; /* 1: clprim_partition; 2: the same, rest reversed; 3: clprim_partition3 */
  clprim_predicate pred2;
};

static clprim_status call_select(clprim_context *ctx, void *p) {
  struct select_arg *a = p;
  /* uint32 indices; the count stays on the device. */
  if (a->partition == 3)
    return clprim_partition3(ctx, a->n, a->type, clprim_buf(a->in), &a->pred, &a->pred2, 0,
                             clprim_buf(a->values), clprim_buf(a->indices), NULL,
                             clprim_buf(a->count_buffer));
  if (a->partition)
    return clprim_partition(ctx, a->n, a->type, clprim_buf(a->in), &a->pred,
                            a->partition == 2 ? CLPRIM_PARTITION_REVERSED : 0u,
                            clprim_buf(a->values), clprim_buf(a->indices), NULL,
                            clprim_buf(a->count_buffer));
  return clprim_select(ctx, a->n, a->type, clprim_buf(a->in), &a->pred, 0, clprim_buf(a->values),
                       clprim_buf(a->indices), NULL, clprim_buf(a->count_buffer));
}

/* x > 1 - p of uniform data in [0, 1) (integers: x > 1000 (1 - p)), so
 * that about a fraction p passes. */
static void set_threshold(clprim_predicate *pred, clprim_type type, double p) {
  const double threshold = 1.0 - p;
  pred->op = CLPRIM_PRED_GT;
  switch (type) {
  case CLPRIM_INT32:
    pred->a.i32 = (int32_t)(threshold * 1000);
    break;
  case CLPRIM_UINT32:
    pred->a.u32 = (uint32_t)(threshold * 1000);
    break;
  case CLPRIM_INT64:
    pred->a.i64 = (int64_t)(threshold * 1000);
    break;
  case CLPRIM_UINT64:
    pred->a.u64 = (uint64_t)(threshold * 1000);
    break;
  case CLPRIM_FLOAT:
    pred->a.f32 = (float)threshold;
    break;
  case CLPRIM_DOUBLE:
    pred->a.f64 = threshold;
    break;
  }
}

/* Thirds: x < 1/3 first, then x < 2/3, then the rest (integers: 333 and
 * 667). */
static void set_thirds(clprim_predicate *first, clprim_predicate *second, clprim_type type) {
  const double t1 = 1.0 / 3, t2 = 2.0 / 3;
  memset(first, 0, sizeof *first), memset(second, 0, sizeof *second);
  first->op = second->op = CLPRIM_PRED_LT;
  switch (type) {
  case CLPRIM_INT32:
    first->a.i32 = 333, second->a.i32 = 667;
    break;
  case CLPRIM_UINT32:
    first->a.u32 = 333, second->a.u32 = 667;
    break;
  case CLPRIM_INT64:
    first->a.i64 = 333, second->a.i64 = 667;
    break;
  case CLPRIM_UINT64:
    first->a.u64 = 333, second->a.u64 = 667;
    break;
  case CLPRIM_FLOAT:
    first->a.f32 = (float)t1, second->a.f32 = (float)t2;
    break;
  case CLPRIM_DOUBLE:
    first->a.f64 = t1, second->a.f64 = t2;
    break;
  }
}

/* Variants at p = 0.01, 0.5, 0.99 passing: the selected values, their
 * uint32 indices, both, and a partition's values, stable and with the rest
 * reversed (CUB's order); then the three-way partition into thirds. Minimal
 * bytes: the input read once and what is written; the copy reference moves
 * the same traffic. */
static void run_select(struct bench *b, clprim_type type, size_t n) {
  size_t es = clprim_type_size(type), bytes = n * es;
  void *host = bench_random(b, type, n, 2);
  struct select_arg a;
  memset(&a, 0, sizeof a);
  a.type = type;
  a.in = bench_buffer(b, bytes, host);
  a.n = n;
  cl_mem values = bench_buffer(b, bytes, NULL), indices = bench_buffer(b, n * 4, NULL);
  a.count_buffer = bench_buffer(b, 16, NULL);
  /* The copy moves up to (n es + n (es + 4)) / 2 bytes. */
  size_t copy_bytes = bytes + n * 2 + 64;
  cl_mem copy_src = bench_buffer(b, copy_bytes, NULL), copy_dst = bench_buffer(b, copy_bytes, NULL);
  bench_free(b, host);
  const double rates[3] = {0.01, 0.5, 0.99};
  static const char *const kinds[5] = {"values", "indices", "both", "partition",
                                       "partition reversed"};
  for (int r = 0; r < 3; ++r) {
    set_threshold(&a.pred, type, rates[r]);
    uint64_t selected = 0;
    /* The count alone (no values, no indices), to size the traffic. */
    clprim_status st =
        clprim_select(b->ctx, n, type, clprim_buf(a.in), &a.pred, 0, clprim_buf(NULL),
                      clprim_buf(NULL), &selected, clprim_buf(NULL));
    if (st != CLPRIM_SUCCESS) bench_fail_setup(b, "clprim_select (count)", st);
    for (int k = 0; k < 5; ++k) {
      a.values = k != 1 ? values : NULL;
      a.indices = k == 1 || k == 2 ? indices : NULL;
      a.partition = k == 3 ? 1 : k == 4 ? 2 : 0;
      size_t written = k >= 3 ? n * es : (size_t)selected * (k == 0 ? es : k == 1 ? 4 : es + 4);
      size_t traffic = bytes + written;
      double copy = bench_copy_ms(b, copy_src, copy_dst, (traffic / 2 + 7) / 8 * 8);
      char variant[32];
      snprintf(variant, sizeof variant, "%s p=%.2f", kinds[k], rates[r]);
      bench_report_copy(b, "select", variant, type, n, call_select, &a, (double)traffic, copy);
    }
  }
  /* The three-way partition's values, compared with a copy of n elements. */
  set_thirds(&a.pred, &a.pred2, type);
  a.values = values, a.indices = NULL, a.partition = 3;
  const double copy = bench_copy_ms(b, copy_src, copy_dst, bytes);
  bench_report_copy(b, "select", "partition3 thirds", type, n, call_select, &a, 2.0 * (double)bytes,
                    copy);
  bench_release(b, a.in);
  bench_release(b, values);
  bench_release(b, indices);
  bench_release(b, a.count_buffer);
  bench_release(b, copy_src);
  bench_release(b, copy_dst);
}

/* The values and indices of the uint32 below 2^30 (about half), and their
 * count. */
static int check_compaction(struct bench_check *c) {
  const size_t n = c->n;
  uint32_t *values = check_host(c, n * 4), *indices = check_host(c, n * 4);
  cl_mem values_out = check_buffer(c, n * 4, NULL), indices_out = check_buffer(c, n * 4, NULL);
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_LT, pred.a.u32 = 1u << 30;
  uint64_t count = 0;
  if (!values || !indices || !values_out || !indices_out ||
      !check_ok(c, clprim_select(c->ctx, n, CLPRIM_UINT32, clprim_buf(c->in), &pred, 0,
                                 clprim_buf(values_out), clprim_buf(indices_out), &count,
                                 clprim_buf(NULL))) ||
      count > n || !check_read(c, values_out, count * 4, values) ||
      !check_read(c, indices_out, count * 4, indices))
    return 0;
  size_t passed = 0;
  for (size_t i = 0; i < n; ++i)
    if (c->host[i] < 1u << 30) {
      if (passed >= count || values[passed] != c->host[i] || indices[passed] != i) return 0;
      ++passed;
    }
  return passed == count;
}

/* The partition of the uint32 below 2^30 with the rest reversed (CUB's
 * order): the passing values in input order, then the failing ones from
 * the end backwards. */
static int check_partition_reversed(struct bench_check *c) {
  const size_t n = c->n;
  uint32_t *got = check_host(c, n * 4);
  cl_mem out = check_buffer(c, n * 4, NULL);
  struct select_arg a;
  memset(&a, 0, sizeof a);
  a.type = CLPRIM_UINT32, a.in = c->in, a.n = n, a.values = out, a.partition = 2;
  a.pred.op = CLPRIM_PRED_LT, a.pred.a.u32 = 1u << 30;
  if (!got || !out || !check_ok(c, call_select(c->ctx, &a)) || !check_read(c, out, n * 4, got))
    return 0;
  size_t passed = 0, failed = 0;
  for (size_t i = 0; i < n; ++i)
    if (got[c->host[i] < 1u << 30 ? passed++ : n - 1 - failed++] != c->host[i]) return 0;
  return 1;
}

/* The three-way partition into thirds of uint32 keys below 1000: each part
 * in input order. */
static int check_partition3(struct bench_check *c) {
  const size_t n = c->n;
  uint32_t *keys = check_keys(c, 1000, 0), *got = check_host(c, n * 4);
  cl_mem in = check_buffer(c, n * 4, keys), out = check_buffer(c, n * 4, NULL);
  struct select_arg a;
  memset(&a, 0, sizeof a);
  a.type = CLPRIM_UINT32, a.in = in, a.n = n, a.values = out, a.partition = 3;
  set_thirds(&a.pred, &a.pred2, CLPRIM_UINT32);
  if (!keys || !got || !in || !out || !check_ok(c, call_select(c->ctx, &a)) ||
      !check_read(c, out, n * 4, got))
    return 0;
  size_t at = 0;
  for (uint32_t part = 0; part < 3; ++part)
    for (size_t i = 0; i < n; ++i)
      if ((keys[i] < 333 ? 0u : keys[i] < 667 ? 1u : 2u) == part && got[at++] != keys[i]) return 0;
  return 1;
}

/* select: the compaction, the reversed partition, the three-way one. */
static int check_select(struct bench_check *c) {
  return check_compaction(c) && check_partition_reversed(c) && check_partition3(c);
}

static const struct bench_op ops[] = {
    {"select", 0x3Fu,
     "values, indices, both, partition (stable, rest reversed), at p = 0.01, 0.5, 0.99 passing",
     check_select},
};

static clprim_status startup_select(const struct bench_startup_inputs *in) {
  clprim_predicate pred;
  uint64_t count;
  memset(&pred, 0, sizeof pred);
  pred.op = CLPRIM_PRED_GT, pred.a.f32 = 0.5f;
  return clprim_select(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), &pred, 0,
                       clprim_buf(in->out), clprim_buf(NULL), &count, clprim_buf(NULL));
}

static clprim_status startup_select_expr(const struct bench_startup_inputs *in) {
  uint64_t count;
  return clprim_select_expr(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), "x > 0.5f", 0,
                            clprim_buf(in->out), clprim_buf(NULL), &count, clprim_buf(NULL));
}

static clprim_status startup_partition3(const struct bench_startup_inputs *in) {
  clprim_predicate first, second;
  memset(&first, 0, sizeof first), memset(&second, 0, sizeof second);
  first.op = CLPRIM_PRED_LT, first.a.f32 = 1.0f / 3;
  second.op = CLPRIM_PRED_LT, second.a.f32 = 2.0f / 3;
  return clprim_partition3(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), &first, &second, 0,
                           clprim_buf(in->out), clprim_buf(NULL), NULL, clprim_buf(in->out2));
}

static const struct bench_startup startup[] = {{"select", startup_select},
                                               {"select_expr", startup_select_expr},
                                               {"partition3", startup_partition3}};

const struct bench_family bench_select = {
    "select", ops, BENCH_COUNT(ops), run_select, startup, BENCH_COUNT(startup),
    "count -> scan -> scatter (predicate masks, tile offsets)",
    "single pass: warp ballots and decoupled look-back",
    "count -> scan -> scatter, a work-item walking each contiguous share of the masks"};
