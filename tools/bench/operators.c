/* Rows of user types and operators (src/operators.c), the cases of CUB's
 * anchor (scripts/ and the table): an inclusive scan and a reduce
 * of a 12-byte (n, mean, M2) struct with Chan's merge, an inclusive scan
 * with max-plus on float2, adjacent difference of floats; and built-in
 * sums spelled as operators ("a + b" on int32) beside the built-in calls,
 * each against a copy of the bytes it moves. float rows take the float
 * input as the structs' means; int32 rows take the int32 input. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The (n, mean, M2) of a stream (Chan, Golub & LeVeque's pairwise merge),
 * as CUB's anchor writes it. */
static const char stats_source[] =
    "typedef struct { float n, mean, m2; } stats;\n"
    "stats stats_merge(stats x, stats y) {\n"
    "  const float n = x.n + y.n;\n"
    "  if (n == 0) return x;\n"
    "  const float d = y.mean - x.mean;\n"
    "  stats r = {n, x.mean + d * y.n / n, x.m2 + y.m2 + d * d * x.n * y.n / n};\n"
    "  return r;\n"
    "}\n"
    "stats stats_zero(void) { stats z = {0, 0, 0}; return z; }\n";

enum { OP_STATS, OP_MAXPLUS, OP_DIFF, OP_INT_SUM, OP_COUNT };
static const clprim_operator_desc descs[OP_COUNT] = {
    {"stats", 12, 4, stats_source, "stats_merge(a, b)", "stats_zero()"},
    {"float2", 8, 8, NULL, "(float2)(fmax(a.x + b.y, b.x), a.y + b.y)", "(float2)(-INFINITY, 0.0f)"},
    {"float", 4, 4, NULL, "a - b", "0.0f"},
    {"int", 4, 4, NULL, "a + b", "0"},
};

struct ops_arg {
  clprim_operator *op;
  cl_mem in, out;
  size_t n;
  /* 0 inclusive scan, 1 reduce, 2 adjacent difference, 3 built-in scan, 4 built-in sum,
   * 5 inclusive scan by key, 6 built-in scan by key (int32 values) */
  int call;
  cl_mem keys; /* scans by key: uint32 keys */
};

static clprim_status call_ops(clprim_context *ctx, void *p) {
  struct ops_arg *a = p;
  const clprim_buffer in = clprim_buf(a->in), out = clprim_buf(a->out);
  switch (a->call) {
  case 0:
    return clprim_scan_inclusive_op(ctx, a->n, a->op, in, NULL, out);
  case 1:
    return clprim_reduce_op(ctx, a->n, a->op, in, NULL, NULL, out);
  case 2:
    return clprim_adjacent_difference_op(ctx, a->n, a->op, in, out);
  case 3:
    return clprim_scan_inclusive(ctx, a->n, CLPRIM_INT32, in, 0, out);
  case 4:
    return clprim_reduce_sum(ctx, a->n, CLPRIM_INT32, in, 0, NULL, out);
  case 5:
    return clprim_scan_inclusive_by_key_op(ctx, a->n, CLPRIM_UINT32, clprim_buf(a->keys), a->op,
                                           in, NULL, out);
  default:
    return clprim_scan_inclusive_by_key(ctx, a->n, CLPRIM_UINT32, clprim_buf(a->keys),
                                        CLPRIM_INT32, in, out);
  }
}

/* One row: call on n elements of `size` bytes from host (and keys, for
 * scans by key), against a copy of the bytes it reads and writes. */
static void ops_row_keys(struct bench *b, const char *name, const char *variant, clprim_type type,
                         size_t n, clprim_operator *op, int call, const void *host, size_t size,
                         cl_mem keys) {
  struct ops_arg a = {op, NULL, NULL, n, call, keys};
  /* clprim_reduce_sum's device result is one uint64. */
  const size_t bytes = n * size + (keys ? n * 4 : 0);
  const size_t written = call == 4 ? 8 : call == 1 ? size : n * size;
  a.in = bench_buffer(b, n * size, host);
  a.out = bench_buffer(b, written, NULL);
  /* The copy's source: in, or with keys (more bytes than in holds) one of
   * its own. */
  cl_mem half = bench_buffer(b, (bytes + written) / 2 + 1, NULL);
  cl_mem src = keys ? bench_buffer(b, (bytes + written) / 2 + 1, NULL) : a.in;
  const double copy = bench_copy_ms(b, src, half, (bytes + written) / 2);
  if (keys) bench_release(b, src);
  bench_report_copy(b, name, variant, type, n, call_ops, &a, (double)(bytes + written), copy);
  bench_release(b, a.in);
  bench_release(b, a.out);
  bench_release(b, half);
}

static void ops_row(struct bench *b, const char *name, const char *variant, clprim_type type,
                    size_t n, clprim_operator *op, int call, const void *host, size_t size) {
  ops_row_keys(b, name, variant, type, n, op, call, host, size, NULL);
}

static clprim_operator *make(struct bench *b, int which) {
  clprim_operator *op = NULL;
  const clprim_status st = clprim_operator_create(&op, b->ctx, &descs[which]);
  if (st != CLPRIM_SUCCESS) bench_fail_setup(b, "clprim_operator_create", st);
  return op;
}

static void run_operators(struct bench *b, clprim_type type, size_t n) {
  const int scan = bench_wants(b, "scan_op"), reduce = bench_wants(b, "reduce_op");
  const int diff = bench_wants(b, "adjacent_difference_op");
  const int by_key = bench_wants(b, "scan_by_key_op");
  if (type == CLPRIM_FLOAT && (scan || reduce || diff)) {
    float *x = bench_random(b, CLPRIM_FLOAT, n, 0);
    if (scan || reduce) {
      /* Each element one observation (n 1, its value, M2 0), as the anchor's. */
      float *s = bench_malloc(b, n * 12);
      for (size_t i = 0; i < n; ++i) s[3 * i] = 1, s[3 * i + 1] = x[i], s[3 * i + 2] = 0;
      clprim_operator *op = make(b, OP_STATS);
      if (scan) ops_row(b, "scan_op", "(n, mean, M2) 12 bytes", type, n, op, 0, s, 12);
      if (reduce) ops_row(b, "reduce_op", "(n, mean, M2) 12 bytes", type, n, op, 1, s, 12);
      clprim_operator_free(op);
      bench_free(b, s);
    }
    if (scan) {
      float *f2 = bench_malloc(b, n * 8);
      for (size_t i = 0; i < n; ++i) f2[2 * i] = x[i], f2[2 * i + 1] = x[i] - 0.5f;
      clprim_operator *op = make(b, OP_MAXPLUS);
      ops_row(b, "scan_op", "max-plus float2", type, n, op, 0, f2, 8);
      clprim_operator_free(op);
      bench_free(b, f2);
    }
    if (diff) {
      clprim_operator *op = make(b, OP_DIFF);
      ops_row(b, "adjacent_difference_op", "a - b", type, n, op, 2, x, 4);
      clprim_operator_free(op);
    }
    bench_free(b, x);
  }
  if (type == CLPRIM_INT32 && (scan || reduce || by_key)) {
    int32_t *x = bench_random(b, CLPRIM_INT32, n, 0);
    clprim_operator *op = make(b, OP_INT_SUM);
    if (by_key) { /* runs of 1024 uint32 keys */
      uint32_t *k = bench_malloc(b, n * 4);
      for (size_t i = 0; i < n; ++i) k[i] = (uint32_t)(i / 1024);
      cl_mem keys = bench_buffer(b, n * 4, k);
      ops_row_keys(b, "scan_by_key_op", "a + b, runs of 1024", type, n, op, 5, x, 4, keys);
      ops_row_keys(b, "scan_by_key_op", "built-in clprim_scan_inclusive_by_key", type, n, NULL, 6,
                   x, 4, keys);
      bench_release(b, keys);
      bench_free(b, k);
    }
    if (scan) {
      ops_row(b, "scan_op", "a + b", type, n, op, 0, x, 4);
      ops_row(b, "scan_op", "built-in clprim_scan_inclusive", type, n, NULL, 3, x, 4);
    }
    if (reduce) {
      ops_row(b, "reduce_op", "a + b", type, n, op, 1, x, 4);
      ops_row(b, "reduce_op", "built-in clprim_reduce_sum", type, n, NULL, 4, x, 4);
    }
    clprim_operator_free(op);
    bench_free(b, x);
  }
}

/* The checks: int32 "a + b" (wrapping, exact) against the CPU. */
static int check_int_sum(struct bench_check *c, int call) {
  clprim_operator *op = NULL;
  if (!check_ok(c, clprim_operator_create(&op, c->ctx, &descs[OP_INT_SUM]))) return 0;
  const size_t n = c->n;
  uint32_t *out = check_host(c, n * 4);
  cl_mem dev = check_buffer(c, n * 4, NULL);
  struct ops_arg a = {op, c->in, dev, n, call, NULL};
  int ok = out && dev && check_ok(c, call_ops(c->ctx, &a)) &&
           check_read(c, dev, call == 1 ? 4 : n * 4, out);
  uint32_t run = 0;
  for (size_t i = 0; ok && i < n; ++i) {
    run += c->host[i];
    if (call == 0 && out[i] != run) ok = 0;
    if (call == 2 && out[i] != (i ? c->host[i] - c->host[i - 1] : c->host[0])) ok = 0;
  }
  if (ok && call == 1 && out[0] != run) ok = 0;
  clprim_operator_free(op);
  return ok;
}
static int check_scan_op(struct bench_check *c) {
  return check_int_sum(c, 0);
}
static int check_reduce_op(struct bench_check *c) {
  return check_int_sum(c, 1);
}
/* Scan by key, int32 "a + b" over runs of 100 uint32 keys, against the CPU. */
static int check_scan_by_key_op(struct bench_check *c) {
  clprim_operator *op = NULL;
  if (!check_ok(c, clprim_operator_create(&op, c->ctx, &descs[OP_INT_SUM]))) return 0;
  const size_t n = c->n;
  uint32_t *out = check_host(c, n * 4), *k = check_host(c, n * 4);
  for (size_t i = 0; k && i < n; ++i) k[i] = (uint32_t)(i / 100);
  cl_mem dev = check_buffer(c, n * 4, NULL), keys = k ? check_buffer(c, n * 4, k) : NULL;
  struct ops_arg a = {op, c->in, dev, n, 5, keys};
  int ok = out && dev && keys && check_ok(c, call_ops(c->ctx, &a)) &&
           check_read(c, dev, n * 4, out);
  uint32_t run = 0;
  for (size_t i = 0; ok && i < n; ++i) {
    run = i % 100 ? run + c->host[i] : c->host[i];
    if (out[i] != run) ok = 0;
  }
  clprim_operator_free(op);
  return ok;
}
/* "a + b" given to adjacent difference is a sum of neighbours, not a
 * difference: the check uses the difference's own operator on uint32 bits. */
static int check_adjacent(struct bench_check *c) {
  clprim_operator_desc d = {"uint", 4, 4, NULL, "a - b", "0u"};
  clprim_operator *op = NULL;
  if (!check_ok(c, clprim_operator_create(&op, c->ctx, &d))) return 0;
  const size_t n = c->n;
  uint32_t *out = check_host(c, n * 4);
  cl_mem dev = check_buffer(c, n * 4, NULL);
  int ok = out && dev &&
           check_ok(c, clprim_adjacent_difference_op(c->ctx, n, op, clprim_buf(c->in),
                                                     clprim_buf(dev))) &&
           check_read(c, dev, n * 4, out);
  for (size_t i = 0; ok && i < n; ++i)
    if (out[i] != (i ? c->host[i] - c->host[i - 1] : c->host[0])) ok = 0;
  clprim_operator_free(op);
  return ok;
}

#define FLOAT_INT ((1u << CLPRIM_FLOAT) | (1u << CLPRIM_INT32))
static const struct bench_op ops[] = {
    {"scan_op", FLOAT_INT,
     "inclusive scans with user operators: (n, mean, M2) and max-plus float2 (float), "
     "\"a + b\" and the built-in scan (int32)",
     check_scan_op},
    {"reduce_op", FLOAT_INT,
     "reduce with (n, mean, M2) (float), \"a + b\" and the built-in sum (int32)", check_reduce_op},
    {"adjacent_difference_op", 1u << CLPRIM_FLOAT, "\"a - b\" on float (CUB's SubtractLeft)",
     check_adjacent},
    {"scan_by_key_op", 1u << CLPRIM_INT32,
     "inclusive scan by key, \"a + b\" on int32 over runs of 1024 uint32 keys, and the built-in "
     "scan by key",
     check_scan_by_key_op},
};

/* A new operator and its first scan (2^19 float2 from the 2^20 floats). */
static clprim_status startup_scan_op(const struct bench_startup_inputs *in) {
  clprim_operator *op = NULL;
  clprim_status st = clprim_operator_create(&op, in->ctx, &descs[OP_MAXPLUS]);
  if (st == CLPRIM_SUCCESS)
    st = clprim_scan_inclusive_op(in->ctx, in->n / 2, op, clprim_buf(in->in), NULL,
                                  clprim_buf(in->out));
  clprim_operator_free(op);
  return st;
}

/* A new operator and its first scan by key (2^19 float2 from the 2^20
 * floats, int32 keys). */
static clprim_status startup_scan_by_key_op(const struct bench_startup_inputs *in) {
  clprim_operator *op = NULL;
  clprim_status st = clprim_operator_create(&op, in->ctx, &descs[OP_MAXPLUS]);
  if (st == CLPRIM_SUCCESS)
    st = clprim_scan_inclusive_by_key_op(in->ctx, in->n / 2, CLPRIM_INT32, clprim_buf(in->keys),
                                         op, clprim_buf(in->in), NULL, clprim_buf(in->out));
  clprim_operator_free(op);
  return st;
}

static const struct bench_startup startup[] = {{"scan_op", startup_scan_op},
                                               {"scan_by_key_op", startup_scan_by_key_op}};

const struct bench_family bench_operators = {
    "operators", ops, BENCH_COUNT(ops), run_operators, startup, BENCH_COUNT(startup),
    "tiles through local memory, ITEMS consecutive elements a work-item, a work-group tree in "
    "index order; scans reduce-then-scan",
    NULL, NULL};
