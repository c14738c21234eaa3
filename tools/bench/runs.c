/* Rows of the runs family (run heads as the compaction's predicate):
 * unique, run-length encoding, unique-by-key, non-trivial runs and
 * scan-by-key, against one read of their inputs. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <string.h>

struct runs_arg {
  int op; /* 0 unique, 1 run_length_encode, 2 unique_by_key, 3 non_trivial_runs,
            4 inclusive scan by key */
  clprim_type type;
  cl_mem in, values, out_a, out_b, count;
  size_t n;
};

static clprim_status call_runs(clprim_context *ctx, void *p) {
  struct runs_arg *a = p;
  /* The count stays on the device (count_out; no host read in the timing). */
  const clprim_buffer in = clprim_buf(a->in), out_a = clprim_buf(a->out_a);
  const clprim_buffer out_b = clprim_buf(a->out_b), count = clprim_buf(a->count);
  switch (a->op) {
  case 0:
    return clprim_unique(ctx, a->n, a->type, in, out_a, NULL, count);
  case 1:
    return clprim_run_length_encode(ctx, a->n, a->type, in, 0, out_a, out_b, NULL, count);
  case 2:
    return clprim_unique_by_key(ctx, a->n, CLPRIM_UINT32, in, a->type, clprim_buf(a->values), out_a,
                                out_b, NULL, count);
  case 4:
    return clprim_scan_inclusive_by_key(ctx, a->n, CLPRIM_UINT32, in, a->type,
                                        clprim_buf(a->values), out_b);
  default:
    return clprim_non_trivial_runs(ctx, a->n, a->type, in, 0, out_a, out_b, NULL, count);
  }
}

/* Runs of type: runlen 1, random elements (xorshift64*, as test_rand: two
 * neighbours are almost never equal); otherwise sorted runs, element i =
 * i / runlen (as CUB's anchor's sorted_runs). Integers take the low bits of
 * that number; floats and doubles the bits of 1.0 plus its low 29 (61) bits:
 * distinct finite normal numbers, increasing along the sorted runs (1.0 + k
 * as a number would merge runs above 2^24 for float). */
static void *runs_data(struct bench *b, clprim_type type, size_t n, size_t runlen, unsigned seed) {
  unsigned char *p = bench_malloc(b, n * clprim_type_size(type));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    uint64_t k;
    if (runlen == 1) {
      s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
      k = s * 0x2545F4914F6CDD1Dull;
    } else {
      k = i / runlen;
    }
    switch (type) {
    case CLPRIM_INT32:
    case CLPRIM_UINT32:
      ((uint32_t *)p)[i] = (uint32_t)(runlen == 1 ? k >> 32 : k);
      break;
    case CLPRIM_INT64:
    case CLPRIM_UINT64:
      ((uint64_t *)p)[i] = k;
      break;
    case CLPRIM_FLOAT: {
      const uint32_t bits = 0x3F800000u + (uint32_t)(k & 0x1FFFFFFFu);
      memcpy((float *)p + i, &bits, 4);
      break;
    }
    case CLPRIM_DOUBLE: {
      const uint64_t bits = 0x3FF0000000000000ull + (k & 0x1FFFFFFFFFFFFFFFull);
      memcpy((double *)p + i, &bits, 8);
      break;
    }
    }
  }
  return p;
}

/* The by-key rows: uint32 keys in runs of runlen, random values of type
 * (float here), compared with a read of keys and values. */
static void report_by_key(struct bench *b, struct runs_arg *a, size_t runlen, const char *op,
                          const char *variant) {
  const size_t n = a->n, es = clprim_type_size(a->type);
  void *keys = runs_data(b, CLPRIM_UINT32, n, runlen, 7);
  a->in = bench_buffer(b, n * 4, keys);
  bench_free(b, keys);
  void *values = bench_random(b, a->type, n, 8);
  a->values = bench_buffer(b, n * es, values);
  bench_free(b, values);
  const double read = bench_read_ms(b, a->in, n * 4) + bench_read_ms(b, a->values, n * es);
  bench_report_read(b, op, variant, a->type, n, call_runs, a, read);
  bench_release(b, a->in);
  bench_release(b, a->values);
  a->in = a->values = NULL;
}

/* unique and run_length_encode (uint32 lengths) on runs of 1 (random), 8
 * and 1024 of the type; non_trivial_runs (uint32 offsets and lengths) on
 * runs of 8 of the type; unique_by_key on runs of 8 of uint32 keys with
 * float values (keys_out and values_out); scan_by_key (inclusive) of float
 * values by uint32 keys in runs of 1024. The count goes to a device buffer.
 * Each row is compared with one read of its inputs (the elements; keys and
 * values for the by-key rows), measured in the same run. */
static void run_runs(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type);
  const int want_unique = bench_wants(b, "unique"), want_rle = bench_wants(b, "run_length_encode");
  const int want_ntr = bench_wants(b, "non_trivial_runs");
  const int want_ubk = bench_wants(b, "unique_by_key") && type == CLPRIM_FLOAT;
  const int want_sbk = bench_wants(b, "scan_by_key") && type == CLPRIM_FLOAT;
  /* uint32 lengths and offsets: n must be below 2^32. */
  const int index32_ok = (uint64_t)n <= UINT32_MAX;
  struct runs_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.out_a = bench_buffer(b, n * es, NULL); /* unique elements, offsets (uint32), keys_out */
  a.out_b = bench_buffer(b, n * (es > 4 ? es : 4), NULL); /* lengths (uint32), values_out */
  a.count = bench_buffer(b, 8, NULL);
  static const size_t runlens[3] = {1, 8, 1024};
  for (int v = 0; v < 3; ++v) {
    const size_t runlen = runlens[v];
    char variant[32];
    snprintf(variant, sizeof variant, "runs of %zu", runlen);
    if (want_unique || want_rle || (runlen == 8 && want_ntr)) {
      void *host = runs_data(b, type, n, runlen, 7);
      a.in = bench_buffer(b, n * es, host);
      bench_free(b, host);
      const double read = bench_read_ms(b, a.in, n * es);
      if (want_unique) {
        a.op = 0;
        bench_report_read(b, "unique", variant, type, n, call_runs, &a, read);
      }
      if (want_rle) {
        a.op = 1;
        if (index32_ok)
          bench_report_read(b, "run_length_encode", variant, type, n, call_runs, &a, read);
        else
          bench_skipped(b, "run_length_encode", variant, type, n, "uint32 lengths need n < 2^32");
      }
      if (runlen == 8 && want_ntr) {
        a.op = 3;
        if (index32_ok)
          bench_report_read(b, "non_trivial_runs", variant, type, n, call_runs, &a, read);
        else
          bench_skipped(b, "non_trivial_runs", variant, type, n, "uint32 lengths need n < 2^32");
      }
      bench_release(b, a.in);
      a.in = NULL;
    }
    if (runlen == 8 && want_ubk) {
      a.op = 2;
      report_by_key(b, &a, runlen, "unique_by_key", "runs of 8 uint32 keys");
    }
    if (runlen == 1024 && want_sbk) {
      /* Inclusive sums of float values by uint32 keys in runs of 1024, as
       * CUB's anchor. */
      a.op = 4;
      report_by_key(b, &a, runlen, "scan_by_key", "inclusive, runs of 1024 uint32 keys");
    }
  }
  bench_release(b, a.out_a);
  bench_release(b, a.out_b);
  bench_release(b, a.count);
}

/* A check's input and results: uint32 keys in runs of random lengths (a
 * new run at 3 elements in 8, so over a third of the runs have length 1),
 * their heads (the position each run starts at, then n), float values
 * below 16 (exact sums), and the call's outputs. */
struct runs_check {
  uint32_t *keys, *heads, *out_a, *out_b;
  float *values;
  size_t runs;
  uint64_t count;
};

/* Makes r's input, runs op on it (elements: the keys; by key: uint32 keys
 * and float values) and reads its outputs: the count, then count elements
 * of each (the scan: its n sums to out_b). */
static int check_call(struct bench_check *c, int op, struct runs_check *r) {
  const size_t n = c->n;
  r->keys = check_host(c, n * 4), r->heads = check_host(c, (n + 1) * 4);
  r->values = check_host(c, n * 4);
  r->out_a = check_host(c, n * 4), r->out_b = check_host(c, n * 4);
  if (!r->keys || !r->heads || !r->values || !r->out_a || !r->out_b) return 0;
  r->runs = 0;
  for (size_t i = 0; i < n; ++i) {
    const int head = i == 0 || c->host[i] % 8 < 3;
    r->keys[i] = head ? (uint32_t)i : r->keys[i - 1];
    if (head) r->heads[r->runs++] = (uint32_t)i;
    r->values[i] = (float)(c->host[i] % 16);
  }
  r->heads[r->runs] = (uint32_t)n;
  struct runs_arg a;
  memset(&a, 0, sizeof a);
  a.op = op, a.n = n, a.type = op == 2 || op == 4 ? CLPRIM_FLOAT : CLPRIM_UINT32;
  a.in = check_buffer(c, n * 4, r->keys), a.values = check_buffer(c, n * 4, r->values);
  a.out_a = check_buffer(c, n * 4, NULL), a.out_b = check_buffer(c, n * 4, NULL);
  a.count = check_buffer(c, 8, NULL);
  if (!a.in || !a.values || !a.out_a || !a.out_b || !a.count || !check_ok(c, call_runs(c->ctx, &a)))
    return 0;
  if (op == 4) return check_read(c, a.out_b, n * 4, r->out_b);
  return check_read(c, a.count, 8, &r->count) && r->count <= n &&
         check_read(c, a.out_a, r->count * 4, r->out_a) &&
         (op == 0 || check_read(c, a.out_b, r->count * 4, r->out_b));
}

static uint32_t run_length(const struct runs_check *r, size_t run) {
  return r->heads[run + 1] - r->heads[run];
}

/* The first key of each run (unique); with its length (run-length
 * encoding); with the value at its head (unique-by-key). */
static int check_heads(struct bench_check *c, int op) {
  struct runs_check r;
  if (!check_call(c, op, &r) || r.count != r.runs) return 0;
  for (size_t run = 0; run < r.runs; ++run) {
    const uint32_t head = r.heads[run];
    if (r.out_a[run] != r.keys[head] || (op == 1 && r.out_b[run] != run_length(&r, run)) ||
        (op == 2 && memcmp(&r.out_b[run], &r.values[head], 4) != 0))
      return 0;
  }
  return 1;
}
static int check_unique(struct bench_check *c) {
  return check_heads(c, 0);
}
static int check_run_length_encode(struct bench_check *c) {
  return check_heads(c, 1);
}
static int check_unique_by_key(struct bench_check *c) {
  return check_heads(c, 2);
}

/* The offset and length of each run longer than 1. */
static int check_non_trivial_runs(struct bench_check *c) {
  struct runs_check r;
  if (!check_call(c, 3, &r)) return 0;
  size_t found = 0;
  for (size_t run = 0; run < r.runs; ++run)
    if (run_length(&r, run) > 1) {
      if (found >= r.count || r.out_a[found] != r.heads[run] ||
          r.out_b[found] != run_length(&r, run))
        return 0;
      ++found;
    }
  return found == r.count;
}

/* Inclusive sums of the values that restart at each run. */
static int check_scan_by_key(struct bench_check *c) {
  struct runs_check r;
  if (!check_call(c, 4, &r)) return 0;
  float sum = 0;
  for (size_t i = 0; i < c->n; ++i) {
    sum = (i == 0 || r.keys[i] != r.keys[i - 1] ? 0.0f : sum) + r.values[i];
    if (memcmp(&r.out_b[i], &sum, 4) != 0) return 0;
  }
  return 1;
}

static const struct bench_op ops[] = {
    {"unique", 0x3Fu, "runs of 1 (random), 8 and 1024 (sorted runs i / r); count on the device",
     check_unique},
    {"run_length_encode", 0x3Fu, "as unique, with uint32 lengths", check_run_length_encode},
    {"unique_by_key", 0x10u, "runs of 8 of uint32 keys, values of the type (float only)",
     check_unique_by_key},
    {"non_trivial_runs", 0x3Fu, "runs of 8, uint32 offsets and lengths", check_non_trivial_runs},
    {"scan_by_key", 0x10u,
     "inclusive sums of values of the type (float only) by uint32 keys in runs of 1024",
     check_scan_by_key},
};

static clprim_status startup_unique(const struct bench_startup_inputs *in) {
  uint64_t count;
  return clprim_unique(in->ctx, in->n, CLPRIM_INT32, clprim_buf(in->keys), clprim_buf(in->out),
                       &count, clprim_buf(NULL));
}

static clprim_status startup_run_length_encode(const struct bench_startup_inputs *in) {
  uint64_t count;
  return clprim_run_length_encode(in->ctx, in->n, CLPRIM_INT32, clprim_buf(in->keys), 0,
                                  clprim_buf(in->out), clprim_buf(in->out2), &count,
                                  clprim_buf(NULL));
}

static clprim_status startup_scan_by_key(const struct bench_startup_inputs *in) {
  return clprim_scan_inclusive_by_key(in->ctx, in->n, CLPRIM_INT32, clprim_buf(in->keys),
                                      CLPRIM_FLOAT, clprim_buf(in->in), clprim_buf(in->out));
}

static const struct bench_startup startup[] = {{"unique", startup_unique},
                                               {"run_length_encode", startup_run_length_encode},
                                               {"scan_by_key", startup_scan_by_key}};

const struct bench_family bench_runs = {
    "runs", ops, BENCH_COUNT(ops), run_runs, startup, BENCH_COUNT(startup),
    "run edges as the compaction's predicate: count -> scan -> scatter, lengths after",
    "run edges as the compaction's predicate: single pass with look-back, lengths in "
    "it",
    "run edges as the compaction's predicate: count -> scan -> scatter over contiguous "
    "shares, lengths after"};
