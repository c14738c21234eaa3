/* Rows of the sort family (LSD radix sort): keys, pairs, argsort and
 * segments of 1024, in Gkeys/s and against copies of the bytes that the
 * digit passes move. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sort_arg {
  clprim_type type;
  cl_mem keys, values, keys_out, values_out, begins, ends;
  size_t n, segments;
  int op; /* 0 keys, 1 pairs (uint32 values), 2 argsort (uint32 indices), 3 segmented keys */
};

static clprim_status call_sort(clprim_context *ctx, void *p) {
  struct sort_arg *a = p;
  switch (a->op) {
  case 0:
    return clprim_sort_keys(ctx, a->n, a->type, clprim_buf(a->keys), 0, 0, 0,
                            clprim_buf(a->keys_out));
  case 1:
    return clprim_sort_pairs(ctx, a->n, a->type, clprim_buf(a->keys), CLPRIM_UINT32, clprim_buf(a->values), 0,
                             0, 0, clprim_buf(a->keys_out), clprim_buf(a->values_out));
  case 2:
    return clprim_argsort(ctx, a->n, a->type, clprim_buf(a->keys), 0, 0, 0,
                          clprim_buf(a->values_out), clprim_buf(NULL));
  default:
    return clprim_segmented_sort_keys(ctx, a->n, a->type, clprim_buf(a->keys), a->segments,
                                      CLPRIM_UINT64, clprim_buf(a->begins), clprim_buf(a->ends), 0,
                                      clprim_buf(a->keys_out));
  }
}

/* Keys with every bit random (integers over their whole range, so no
 * digit pass is skipped), floats uniform in (0, 1] as CUB's anchor's
 * curandGenerateUniform makes them (a random 32-bit integer times 2^-32
 * plus 2^-33, in float arithmetic: small values keep random low bits). */
static void *sort_keys_data(struct bench *b, clprim_type type, size_t n, unsigned seed) {
  size_t es = clprim_type_size(type);
  unsigned char *p = bench_malloc(b, n * es);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const uint64_t r = s * 0x2545F4914F6CDD1Dull;
    switch (type) {
    case CLPRIM_INT32:
    case CLPRIM_UINT32:
      ((uint32_t *)p)[i] = (uint32_t)(r >> 32);
      break;
    case CLPRIM_INT64:
    case CLPRIM_UINT64:
      ((uint64_t *)p)[i] = r;
      break;
    case CLPRIM_FLOAT: /* as curandGenerateUniform: a 32-bit integer, in float arithmetic */
      ((float *)p)[i] = (float)(uint32_t)(r >> 32) * 0x1p-32f + 0x1p-33f;
      break;
    case CLPRIM_DOUBLE:
      ((double *)p)[i] = (double)(r >> 11) * (1.0 / 9007199254740992.0);
      break;
    }
  }
  return p;
}

/* One row: Gkeys/s, and the ratio to copies of the bytes that the digit
 * passes move (passes x (key + value bytes), read and written), the copies
 * measured in the same run. */
static void report_sort(struct bench *b, const char *op, const char *variant, clprim_type type,
                        size_t n, struct sort_arg *a, unsigned passes, double copy_one) {
  double ms = 0;
  if (!bench_row_timed(b, op, variant, type, n, call_sort, a, &ms)) return;
  const double copy = passes * copy_one;
  bench_row_number(b, "gkeys_per_s", "%.3f", " %7.2f Gkeys/s", (double)n / (ms * 1e6));
  bench_row_number(b, "passes", "%.0f", "  %.0f x copy", (double)passes);
  bench_row_number(b, "copy_ms", "%.5f", " %8.4f ms", copy);
  bench_row_number(b, "ratio_to_copy", "%.3f", "  ratio %.2f", ms / copy);
  bench_row_end(b);
}

/* sort_keys, sort_pairs (uint32 values), argsort (uint32 indices) and
 * segmented_sort (segments of 1024 keys) on random keys. */
static void run_sort(struct bench *b, clprim_type type, size_t n) {
  const size_t ks = clprim_type_size(type);
  const unsigned passes = (unsigned)ks; /* 8-bit digits; random keys skip none */
  void *host = sort_keys_data(b, type, n, 5);
  struct sort_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  a.keys = bench_buffer(b, n * ks, host);
  bench_free(b, host);
  a.keys_out = bench_buffer(b, n * ks, NULL);
  const int pairs = bench_wants(b, "sort_pairs") || bench_wants(b, "argsort");
  if (pairs) {
    uint32_t *v = bench_malloc(b, n * 4);
    for (size_t i = 0; i < n; ++i)
      v[i] = (uint32_t)i;
    a.values = bench_buffer(b, n * 4, v);
    bench_free(b, v);
    a.values_out = bench_buffer(b, n * 4, NULL);
  }
  cl_mem copy_src = bench_buffer(b, n * (ks + 4), NULL);
  cl_mem copy_dst = bench_buffer(b, n * (ks + 4), NULL);
  const double copy_keys = bench_copy_ms(b, copy_src, copy_dst, n * ks);
  const double copy_pairs = pairs ? bench_copy_ms(b, copy_src, copy_dst, n * (ks + 4)) : 0;
  if (bench_wants(b, "sort_keys")) {
    a.op = 0;
    report_sort(b, "sort_keys", "random keys", type, n, &a, passes, copy_keys);
  }
  if (bench_wants(b, "sort_pairs")) {
    a.op = 1;
    report_sort(b, "sort_pairs", "uint32 values", type, n, &a, passes, copy_pairs);
  }
  if (bench_wants(b, "argsort")) {
    a.op = 2;
    report_sort(b, "argsort", "uint32 indices", type, n, &a, passes, copy_pairs);
  }
  if (bench_wants(b, "segmented_sort") && n >= 1024) {
    a.op = 3, a.segments = n / 1024;
    uint64_t *off = bench_malloc(b, (a.segments + 1) * 8);
    for (size_t s = 0; s <= a.segments; ++s)
      off[s] = s * 1024;
    a.begins = bench_buffer(b, a.segments * 8, off);
    a.ends = bench_buffer(b, a.segments * 8, off + 1);
    bench_free(b, off);
    char variant[48];
    snprintf(variant, sizeof variant, "2^%d segments of 1024", bench_lg(a.segments));
    /* One work-group sorts each segment in local memory: one read and one
     * write of the keys, so the reference is one copy. */
    report_sort(b, "segmented_sort", variant, type, n, &a, 1, copy_keys);
    bench_release(b, a.begins);
    bench_release(b, a.ends);
  }
  bench_release(b, a.keys);
  bench_release(b, a.keys_out);
  if (pairs) {
    bench_release(b, a.values);
    bench_release(b, a.values_out);
  }
  bench_release(b, copy_src);
  bench_release(b, copy_dst);
}

/* Sorts uint32 keys below 1000 (many equal) with op 1 (pairs: values are
 * the positions) or 2 (argsort) and compares with the stable order: equal
 * keys keep their input order. */
static int check_stable(struct bench_check *c, int op) {
  const size_t n = c->n;
  uint32_t *keys = check_keys(c, 1000, 0), *got_keys = check_host(c, n * 4);
  uint32_t *got_positions = check_host(c, n * 4), *positions = check_host(c, n * 4);
  uint64_t *want = check_host(c, n * 8);
  if (!keys || !got_keys || !got_positions || !positions || !want) return 0;
  for (size_t i = 0; i < n; ++i)
    positions[i] = (uint32_t)i, want[i] = (uint64_t)keys[i] << 32 | i;
  struct sort_arg a;
  memset(&a, 0, sizeof a);
  a.type = CLPRIM_UINT32, a.n = n, a.op = op;
  a.keys = check_buffer(c, n * 4, keys), a.values = check_buffer(c, n * 4, positions);
  a.keys_out = check_buffer(c, n * 4, NULL), a.values_out = check_buffer(c, n * 4, NULL);
  if (!a.keys || !a.values || !a.keys_out || !a.values_out || !check_ok(c, call_sort(c->ctx, &a)) ||
      !check_read(c, a.values_out, n * 4, got_positions) ||
      (op == 1 && !check_read(c, a.keys_out, n * 4, got_keys)))
    return 0;
  qsort(want, n, 8, check_cmp_u64);
  for (size_t i = 0; i < n; ++i)
    if (got_positions[i] != (uint32_t)want[i] || (op == 1 && got_keys[i] != want[i] >> 32))
      return 0;
  return 1;
}
static int check_sort_pairs(struct bench_check *c) {
  return check_stable(c, 1);
}
static int check_argsort(struct bench_check *c) {
  return check_stable(c, 2);
}

/* The random uint32 sorted whole (op 0), or in segments of 1000, the last
 * one shorter (op 3). */
static int check_sorted(struct bench_check *c, int op) {
  const size_t n = c->n, segments = (n + 999) / 1000;
  uint32_t *want = check_keys(c, 0, 0), *got = check_host(c, n * 4);
  uint64_t *off = check_host(c, (segments + 1) * 8);
  if (!want || !got || !off) return 0;
  for (size_t s = 0; s < segments; ++s)
    off[s] = s * 1000;
  off[segments] = n;
  struct sort_arg a;
  memset(&a, 0, sizeof a);
  a.type = CLPRIM_UINT32, a.n = n, a.op = op, a.segments = segments, a.keys = c->in;
  a.keys_out = check_buffer(c, n * 4, NULL);
  a.begins = check_buffer(c, segments * 8, off), a.ends = check_buffer(c, segments * 8, off + 1);
  if (!a.keys_out || !a.begins || !a.ends || !check_ok(c, call_sort(c->ctx, &a)) ||
      !check_read(c, a.keys_out, n * 4, got))
    return 0;
  if (op == 3)
    for (size_t s = 0; s < segments; ++s)
      qsort(want + off[s], off[s + 1] - off[s], 4, check_cmp_u32);
  else
    qsort(want, n, 4, check_cmp_u32);
  return memcmp(got, want, n * 4) == 0;
}
static int check_sort_keys(struct bench_check *c) {
  return check_sorted(c, 0);
}
static int check_segmented_sort(struct bench_check *c) {
  return check_sorted(c, 3);
}

static const struct bench_op ops[] = {
    {"sort_keys", 0x3Fu,
     "radix sort of random keys (integers over their whole range, floats in [0, 1))",
     check_sort_keys},
    {"sort_pairs", 0x3Fu, "as sort_keys, with uint32 values", check_sort_pairs},
    {"argsort", 0x3Fu, "as sort_keys, uint32 indices out", check_argsort},
    {"segmented_sort", 0x3Fu, "keys in segments of 1024 (n / 1024 segments)", check_segmented_sort},
};

static clprim_status startup_sort(const struct bench_startup_inputs *in) {
  return clprim_sort_keys(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), 0, 0, 0,
                          clprim_buf(in->out));
}

static const struct bench_startup startup[] = {{"sort", startup_sort}};

const struct bench_family bench_sort = {
    "sort", ops, BENCH_COUNT(ops), run_sort, startup, BENCH_COUNT(startup),
    "LSD radix, 8-bit digits: upfront histogram, count -> scan -> scatter per digit",
    "LSD radix, 8-bit digits: upfront histogram, one pass per digit with look-back "
    "(Onesweep)",
    "LSD radix, 8-bit digits: per-share digit counts -> scan -> each share scattered in order"};
