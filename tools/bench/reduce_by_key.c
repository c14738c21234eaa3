/* Rows of the reduce-by-key family: dense keys (sums per key by atomics)
 * and runs of sorted keys, against one read of keys and values. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rbk_arg {
  int runs;       /* 0 reduce_by_key_dense, 1 reduce_by_key */
  unsigned flags; /* reduce_by_key: 0 or CLPRIM_EXACT */
  int exact;      /* reduce_by_key_dense with CLPRIM_EXACT */
  clprim_type type;
  cl_mem keys, values, out_a, out_b, count;
  size_t n, num_keys;
};

static clprim_status call_rbk(clprim_context *ctx, void *p) {
  struct rbk_arg *a = p;
  const clprim_buffer keys = clprim_buf(a->keys), values = clprim_buf(a->values);
  const clprim_buffer out_a = clprim_buf(a->out_a), none = clprim_buf(NULL);
  if (a->runs)
    return clprim_reduce_by_key(ctx, a->n, CLPRIM_INT32, keys, a->type, values, a->flags, out_a,
                                clprim_buf(a->out_b), NULL, clprim_buf(a->count));
  return clprim_reduce_by_key_dense(ctx, a->n, CLPRIM_INT32, keys, a->type, values, a->num_keys,
                                    a->exact ? CLPRIM_EXACT : 0u, out_a, none, NULL, none);
}

/* reduce_by_key_dense (and with CLPRIM_EXACT, float and double): int32
 * keys (random, sorted, partly sorted) into 2^20 keys, values of type;
 * reduce_by_key: sorted int32 keys in min(n, 2^20) runs, values of type;
 * reduce_by_key_exact: the same runs with CLPRIM_EXACT, and one run of all
 * n (pieces summed by several work-groups, then folded). */
static void run_rbk(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type), keys_many = (size_t)1 << 20;
  const int fp = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
  const int want_dense = bench_wants(b, "reduce_by_key_dense");
  const int want_dense_exact = fp && bench_wants(b, "reduce_by_key_dense_exact");
  const int want_exact = fp && bench_wants(b, "reduce_by_key_exact");
  const int want_runs = bench_wants(b, "reduce_by_key") || want_exact;
  const int dense_ok = es == 4 || b->info->has_int64_atomics;
  if (want_dense && !dense_ok)
    bench_skipped(b, "reduce_by_key_dense", "2^20 keys", type, n,
                  "64-bit sums need cl_khr_int64_base_atomics");
  if (!(want_dense && dense_ok) && !want_runs && !want_dense_exact) return;
  struct rbk_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n, a.num_keys = keys_many;
  void *host = bench_random(b, type, n, 3);
  a.values = bench_buffer(b, n * es, host);
  bench_free(b, host);
  const double read_values = bench_read_ms(b, a.values, n * es);
  /* out_a: 2^20 sums, or n unique keys; out_b: the runs' sums */
  a.out_a = bench_buffer(b, (n > keys_many ? n : keys_many) * 8, NULL);
  a.out_b = bench_buffer(b, n * es, NULL);
  a.count = bench_buffer(b, 8, NULL);
  const char *const order_names[3] = {"random", "sorted", "partly sorted"};
  for (int order = 0; order < 3; ++order) {
    if (!(want_dense && dense_ok) && !want_dense_exact && order != 1)
      continue; /* the runs: sorted keys alone */
    uint32_t *keys = bench_keys(b, n, keys_many, order);
    a.keys = bench_buffer(b, n * 4, keys);
    bench_free(b, keys);
    const double read = bench_read_ms(b, a.keys, n * 4) + read_values;
    char variant[32];
    if (want_dense && dense_ok) {
      a.runs = 0;
      snprintf(variant, sizeof variant, "2^20 keys %s", order_names[order]);
      bench_report_read(b, "reduce_by_key_dense", variant, type, n, call_rbk, &a, read);
    }
    if (want_dense_exact) {
      a.runs = 0, a.exact = 1;
      snprintf(variant, sizeof variant, "2^20 keys %s", order_names[order]);
      bench_report_read(b, "reduce_by_key_dense_exact", variant, type, n, call_rbk, &a, read);
      a.exact = 0;
    }
    if (order == 1 && want_runs) {
      /* Sorted keys i * 2^20 / n: min(n, 2^20) distinct keys, one run each. */
      a.runs = 1;
      snprintf(variant, sizeof variant, "2^%d sorted runs",
               bench_lg(n < keys_many ? n : keys_many));
      if (bench_wants(b, "reduce_by_key"))
        bench_report_read(b, "reduce_by_key", variant, type, n, call_rbk, &a, read);
      if (want_exact) {
        a.flags = CLPRIM_EXACT;
        bench_report_read(b, "reduce_by_key_exact", variant, type, n, call_rbk, &a, read);
        a.flags = 0;
      }
    }
    bench_release(b, a.keys);
  }
  if (want_exact) { /* one run: int32 keys all 0 */
    uint32_t *zeros = bench_malloc(b, n * 4);
    if (zeros) memset(zeros, 0, n * 4);
    a.keys = zeros ? bench_buffer(b, n * 4, zeros) : NULL;
    bench_free(b, zeros);
    if (a.keys) {
      a.runs = 1, a.flags = CLPRIM_EXACT;
      bench_report_read(b, "reduce_by_key_exact", "one run", type, n, call_rbk, &a,
                        bench_read_ms(b, a.keys, n * 4) + read_values);
      bench_release(b, a.keys);
    }
  }
  bench_release(b, a.values);
  bench_release(b, a.out_a);
  bench_release(b, a.out_b);
  bench_release(b, a.count);
}

/* Runs the call on keys below 1000 (sorted for the runs) and the random
 * uint32 as values, and reads out_a and out_b (count elements each) to
 * got_a and got_b; the keys to *keys. */
static int check_run(struct bench_check *c, int runs, uint32_t **keys, uint32_t **got_a,
                     uint32_t **got_b, uint64_t *count) {
  const size_t n = c->n;
  *keys = check_keys(c, 1000, runs);
  *got_a = check_host(c, n * 4), *got_b = check_host(c, n * 4);
  struct rbk_arg a;
  memset(&a, 0, sizeof a);
  a.runs = runs, a.type = CLPRIM_UINT32, a.n = n, a.num_keys = 1000;
  a.keys = check_buffer(c, n * 4, *keys), a.values = c->in;
  a.out_a = check_buffer(c, n * 4, NULL), a.out_b = check_buffer(c, n * 4, NULL);
  a.count = check_buffer(c, 8, NULL);
  if (!*keys || !*got_a || !*got_b || !a.keys || !a.out_a || !a.out_b || !a.count ||
      !check_ok(c, call_rbk(c->ctx, &a)))
    return 0;
  *count = runs ? 0 : 1000;
  if (runs && !check_read(c, a.count, 8, count)) return 0;
  return *count <= n && check_read(c, a.out_a, *count * 4, *got_a) &&
         (!runs || check_read(c, a.out_b, *count * 4, *got_b));
}

/* Sums of the uint32 values per key (keys below 1000, in random order). */
static int check_reduce_by_key_dense(struct bench_check *c) {
  uint32_t *keys, *sums, *unused, want[1000] = {0};
  uint64_t count;
  if (!check_run(c, 0, &keys, &sums, &unused, &count)) return 0;
  for (size_t i = 0; i < c->n; ++i)
    want[keys[i]] += c->host[i];
  return memcmp(sums, want, sizeof want) == 0;
}

/* CLPRIM_EXACT over the runs of sorted keys below 1000: float integers
 * below 2^24 with random signs, each run's exact sum an integer that C's
 * conversion rounds once. */
static int check_reduce_by_key_exact(struct bench_check *c) {
  const size_t n = c->n;
  uint32_t *keys = check_keys(c, 1000, 1), *unique = check_host(c, n * 4 + 4);
  float *x = check_host(c, n * 4 + 4), *sums = check_host(c, n * 4 + 4);
  if (!keys || !unique || !x || !sums) return 0;
  for (size_t i = 0; i < n; ++i)
    x[i] = (float)((int64_t)(c->host[i] & 0xFFFFFFu) * ((c->host[i] >> 30) & 1 ? -1 : 1));
  struct rbk_arg a;
  memset(&a, 0, sizeof a);
  a.runs = 1, a.flags = CLPRIM_EXACT, a.type = CLPRIM_FLOAT, a.n = n;
  a.keys = check_buffer(c, n * 4 + 4, keys), a.values = check_buffer(c, n * 4 + 4, x);
  a.out_a = check_buffer(c, n * 4 + 4, NULL), a.out_b = check_buffer(c, n * 4 + 4, NULL);
  a.count = check_buffer(c, 8, NULL);
  uint64_t count = 0;
  if (!a.keys || !a.values || !a.out_a || !a.out_b || !a.count ||
      !check_ok(c, call_rbk(c->ctx, &a)) || !check_read(c, a.count, 8, &count) || count > n ||
      !check_read(c, a.out_a, count * 4, unique) || !check_read(c, a.out_b, count * 4, sums))
    return 0;
  uint64_t run = 0;
  for (size_t i = 0; i < n; ++run) {
    int64_t sum = 0;
    const size_t head = i;
    while (i < n && keys[i] == keys[head]) sum += (int64_t)x[i++];
    const float want = (float)sum;
    if (run >= count || unique[run] != keys[head] || memcmp(&sums[run], &want, 4) != 0) return 0;
  }
  return run == count;
}

/* CLPRIM_EXACT: float integers below 2^24 with random signs, summed by key
 * (keys below 1000, in random order): each key's exact sum is an integer
 * that C's conversion rounds as the flag must. */
static int check_reduce_by_key_dense_exact(struct bench_check *c) {
  const size_t n = c->n, m = n ? n : 1;
  uint32_t *keys = check_keys(c, 1000, 0);
  float *x = check_host(c, m * 4), *sums = check_host(c, 1000 * 4);
  int64_t want[1000] = {0};
  if (!keys || !x || !sums) return 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t v = (int64_t)(c->host[i] & 0xFFFFFFu) * ((c->host[i] >> 30) & 1 ? -1 : 1);
    x[i] = (float)v;
    want[keys[i]] += v;
  }
  struct rbk_arg a;
  memset(&a, 0, sizeof a);
  a.exact = 1, a.type = CLPRIM_FLOAT, a.n = n, a.num_keys = 1000;
  a.keys = check_buffer(c, m * 4, keys), a.values = check_buffer(c, m * 4, x);
  a.out_a = check_buffer(c, 1000 * 4, NULL);
  if (!a.keys || !a.values || !a.out_a || !check_ok(c, call_rbk(c->ctx, &a)) ||
      !check_read(c, a.out_a, 1000 * 4, sums))
    return 0;
  for (size_t k = 0; k < 1000; ++k) {
    const float w = (float)want[k];
    if (memcmp(&sums[k], &w, 4) != 0) return 0;
  }
  return 1;
}

/* Each run of the sorted keys: its key and the sum of its uint32 values. */
static int check_reduce_by_key(struct bench_check *c) {
  uint32_t *keys, *unique, *sums;
  uint64_t count, run = 0;
  if (!check_run(c, 1, &keys, &unique, &sums, &count)) return 0;
  for (size_t i = 0; i < c->n; ++run) {
    uint32_t sum = 0;
    const size_t head = i;
    while (i < c->n && keys[i] == keys[head])
      sum += c->host[i++];
    if (run >= count || unique[run] != keys[head] || sums[run] != sum) return 0;
  }
  return run == count;
}

static const struct bench_op ops[] = {
    {"reduce_by_key_dense", 0x3Fu,
     "int32 keys in [0, 2^20) (random, sorted, partly sorted), values of\n"
     "                       the type (64-bit values need cl_khr_int64_base_atomics)",
     check_reduce_by_key_dense},
    {"reduce_by_key_dense_exact", 0x30u,
     "as reduce_by_key_dense with CLPRIM_EXACT (each key's exact sum, rounded once), float "
     "and double",
     check_reduce_by_key_dense_exact},
    {"reduce_by_key", 0x3Fu, "sorted int32 keys in min(n, 2^20) runs, values of the type",
     check_reduce_by_key},
    {"reduce_by_key_exact", 0x30u,
     "as reduce_by_key with CLPRIM_EXACT (each run's exact sum, rounded once), float and\n"
     "                       double; also one run of all n",
     check_reduce_by_key_exact},
};

static clprim_status startup_reduce_by_key(const struct bench_startup_inputs *in) {
  uint64_t count;
  return clprim_reduce_by_key(in->ctx, in->n, CLPRIM_INT32, clprim_buf(in->keys), CLPRIM_FLOAT,
                              clprim_buf(in->in), 0, clprim_buf(in->out), clprim_buf(in->out2),
                              &count, clprim_buf(NULL));
}

static clprim_status startup_reduce_by_key_dense(const struct bench_startup_inputs *in) {
  return clprim_reduce_by_key_dense(in->ctx, in->n, CLPRIM_INT32, clprim_buf(in->keys),
                                    CLPRIM_FLOAT, clprim_buf(in->in), 1024, 0, clprim_buf(in->out),
                                    clprim_buf(NULL), NULL, clprim_buf(NULL));
}

static const struct bench_startup startup[] = {
    {"reduce_by_key", startup_reduce_by_key}, {"reduce_by_key_dense", startup_reduce_by_key_dense}};

const struct bench_family bench_reduce_by_key = {
    "reduce_by_key", ops, BENCH_COUNT(ops), run_rbk, startup, BENCH_COUNT(startup),
    "runs: head counts -> scan -> per-tile reduce, fix-up across tiles; exact: the runs "
    "compacted, a team a run, longer runs in pieces and folded; dense: the histogram engine "
    "with sums",
    NULL,
    "runs: a work-item per contiguous share (heads, scan, reduce), fix-up across shares; "
    "exact: a work-item a run; dense: the histogram engine"};
