/* test_merge: the merge of two sorted ranges, keys and pairs, against a CPU
 * reference (the stable sort of both ranges' elements by key, a's before
 * b's among equal keys) on fresh random data, for every type and path the
 * device runs: ascending and descending; sizes 0 to about 100000 with
 * splits at either end, in the middle and at random, totals around the
 * tile (2048 outputs: 2047 to 2049, 4095 to 4097, 6145) and, with small
 * tiles set through the family's knobs (32 and 96 outputs), around those;
 * random keys, few distinct values (long runs of equal keys across both
 * ranges: stability), float special values (-0.0 and +0.0 mixed, NaNs of
 * several payloads, infinities, denormals), one value throughout, a
 * entirely before b and after it, a and b interleaved; values of every
 * type (moved as bits); ranges at offsets (sub-buffers and staged copies)
 * with the bytes around the outputs untouched and the inputs unchanged;
 * unsorted ranges (every output still one of the inputs' elements); and
 * every error case with nothing written. Also the merge of k runs
 * (clprim_merge_runs_keys / _pairs): 0 to 33 runs of random lengths (some
 * empty), every type, keys and pairs, both orders, against the stable sort
 * of all elements (lower runs first among equal keys), and bad offsets. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------- the data */
static uint64_t get(size_t es, const void *data, size_t i) {
  return es == 4 ? ((const uint32_t *)data)[i] : ((const uint64_t *)data)[i];
}
static void put(size_t es, void *data, size_t i, uint64_t bits) {
  if (es == 4)
    ((uint32_t *)data)[i] = (uint32_t)bits;
  else
    ((uint64_t *)data)[i] = bits;
}

/* The order key of an element given as its bits (test_order_key's order:
 * the sort family's). */
static uint64_t key_of_bits(clprim_type type, uint64_t bits) {
  unsigned char e[8];
  memset(e, 0, sizeof e);
  put(clprim_type_size(type), e, 0, bits);
  return test_order_key(type, e, 0);
}

/* NaNs (several payloads, both signs), -0, +0, infinities, 1, -1, the
 * smallest denormal; integers at the ends of their range and around 0. */
static const uint32_t special32[] = {0x7FC00000u, 0x7FC00001u, 0xFFC00000u, 0x7F800001u,
                                     0x80000000u, 0x00000000u, 0x7F800000u, 0xFF800000u,
                                     0x3F800000u, 0xBF800000u, 0x00000001u};
static const uint64_t special64[] = {0x7FF8000000000000ull, 0x7FF8000000000001ull,
                                     0xFFF8000000000000ull, 0x7FF0000000000001ull,
                                     0x8000000000000000ull, 0x0000000000000000ull,
                                     0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                     0x3FF0000000000000ull, 0xBFF0000000000000ull,
                                     0x0000000000000001ull};
static uint64_t special(clprim_type type, uint64_t r) {
  if (type == CLPRIM_FLOAT) return special32[r % COUNT(special32)];
  if (type == CLPRIM_DOUBLE) return special64[r % COUNT(special64)];
  const int wide = clprim_type_size(type) == 8;
  const uint64_t top = wide ? ~0ull : 0xFFFFFFFFull, sign = wide ? 1ull << 63 : 1ull << 31;
  const uint64_t v[] = {0, 1, top, sign, sign - 1, 2, top - 1};
  return v[r % COUNT(v)];
}
static uint64_t random_bits(clprim_type type) {
  const uint64_t r = test_rand();
  return clprim_type_size(type) == 4 ? r >> 32 : r;
}

enum dist { D_RANDOM, D_FEW, D_SPECIAL, D_ONE, D_A_FIRST, D_B_FIRST, D_INTERLEAVED, D_COUNT };
static const char *const dist_names[D_COUNT] = {
    "random", "few values", "special values", "one value", "a before b", "b before a",
    "interleaved"};

/* An element: its bits, order key and tag (its place in a, then b: a's
 * elements 0 .. na - 1, b's na ..), which the values are made from. */
struct elem {
  uint64_t key, bits, tag;
};
static int descending_order; /* the order by_key sorts in */
static int by_key(const void *x, const void *y) {
  const struct elem *a = x, *b = y;
  if (a->key != b->key) return (a->key < b->key) != descending_order ? -1 : 1;
  return a->tag < b->tag ? -1 : a->tag > b->tag;
}

/* Element i's bits for distribution d (few: one of 8 values; the last
 * three by rank: i counts 0 .. na + nb - 1 over a then b). */
static uint64_t element_bits(clprim_type type, enum dist d, const uint64_t *few, uint64_t one,
                             size_t i, size_t na, size_t nb) {
  switch (d) {
  case D_RANDOM: return random_bits(type);
  case D_FEW: return few[test_rand() % 8];
  case D_SPECIAL: return test_rand() % 4 ? special(type, test_rand()) : random_bits(type);
  case D_ONE: return one;
  default: break;
  }
  /* Integers 0 .. 2 (na + nb) as the type's bits: a's ranks, b's ranks. */
  size_t r;
  if (d == D_A_FIRST)
    r = i;
  else if (d == D_B_FIRST)
    r = i < na ? nb + i : i - na;
  else
    r = i < na ? 2 * i : 2 * (i - na) + 1;
  (void)nb;
  switch (type) {
  case CLPRIM_FLOAT: {
    const float f = (float)r - 1000.0f;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  case CLPRIM_DOUBLE: {
    const double f = (double)r - 1000.0;
    uint64_t u;
    memcpy(&u, &f, 8);
    return u;
  }
  case CLPRIM_INT32: return (uint32_t)((int32_t)r - 1000);
  case CLPRIM_INT64: return (uint64_t)((int64_t)r - 1000);
  default: return r;
  }
}

/* The value of the element with tag t, of vs bytes: distinct for every tag
 * (multiplication by an odd number is a bijection). */
static uint64_t value_of_tag(size_t vs, uint64_t t) {
  return vs == 4 ? (uint32_t)(t * 2654435761u + 17) : t * 0x9E3779B97F4A7C15ull + 17;
}

/* ------------------------------------------------------------ one check */
struct merge_case {
  clprim_type type;
  int value_type; /* -1: keys alone */
  enum dist dist;
  int descending, unsorted;
  size_t a_at, b_at, out_at; /* element offsets (values at the same ones) */
};

static void check(clprim_context *ctx, const struct merge_case *c, size_t na, size_t nb) {
  char desc[300];
  const int pairs = c->value_type >= 0;
  snprintf(desc, sizeof desc,
           "merge_%s %s%s%s na=%zu nb=%zu %s%s%s a_at=%zu b_at=%zu out_at=%zu path=%s",
           pairs ? "pairs" : "keys", clprim_type_name(c->type), pairs ? " values " : "",
           pairs ? clprim_type_name((clprim_type)c->value_type) : "", na, nb,
           dist_names[c->dist], c->descending ? " descending" : "",
           c->unsorted ? " unsorted" : "", c->a_at, c->b_at, c->out_at, test_path_of(ctx));
  const size_t n = na + nb, es = clprim_type_size(c->type);
  const size_t vs = pairs ? clprim_type_size((clprim_type)c->value_type) : 4;
  struct elem *e = malloc((n ? n : 1) * sizeof *e);
  uint64_t few[8];
  for (size_t j = 0; j < COUNT(few); ++j)
    few[j] = j < 3 ? special(c->type, test_rand()) : random_bits(c->type);
  const uint64_t one = test_rand() % 2 ? random_bits(c->type) : special(c->type, test_rand());
  for (size_t i = 0; i < n; ++i) {
    e[i].bits = element_bits(c->type, c->dist, few, one, i, na, nb);
    e[i].key = key_of_bits(c->type, e[i].bits), e[i].tag = i;
  }
  /* Each range sorted (stably: by key, then tag), unless unsorted. */
  descending_order = c->descending;
  if (!c->unsorted) {
    qsort(e, na, sizeof *e, by_key);
    qsort(e + na, nb, sizeof *e, by_key);
  }
  unsigned char *ka = malloc((na ? na : 1) * es), *kb = malloc((nb ? nb : 1) * es);
  unsigned char *va = malloc((na ? na : 1) * vs), *vb = malloc((nb ? nb : 1) * vs);
  for (size_t i = 0; i < n; ++i) {
    e[i].tag = i; /* a's, then b's, in their order */
    if (i < na)
      put(es, ka, i, e[i].bits), put(vs, va, i, value_of_tag(vs, i));
    else
      put(es, kb, i - na, e[i].bits), put(vs, vb, i - na, value_of_tag(vs, i));
  }
  unsigned char *ka_img, *kb_img, *va_img, *vb_img, *ko_img, *vo_img;
  cl_mem ka_buf = test_image_buffer(ctx, c->a_at, na, es, ka, &ka_img);
  cl_mem kb_buf = test_image_buffer(ctx, c->b_at, nb, es, kb, &kb_img);
  cl_mem va_buf = test_image_buffer(ctx, c->a_at, na, vs, va, &va_img);
  cl_mem vb_buf = test_image_buffer(ctx, c->b_at, nb, vs, vb, &vb_img);
  cl_mem ko_buf = test_image_buffer(ctx, c->out_at, n, es, NULL, &ko_img);
  cl_mem vo_buf = test_image_buffer(ctx, c->out_at, n, vs, NULL, &vo_img);
  /* The reference: every element by key, a's before b's among equals. */
  qsort(e, n, sizeof *e, by_key);
  for (size_t i = 0; i < n; ++i) {
    put(es, ko_img + c->out_at * es, i, e[i].bits);
    if (pairs) put(vs, vo_img + c->out_at * vs, i, value_of_tag(vs, e[i].tag));
  }
  const unsigned flags = c->descending ? CLPRIM_SORT_DESCENDING : 0u;
  const clprim_buffer A = clprim_buf_at(ka_buf, c->a_at), B = clprim_buf_at(kb_buf, c->b_at);
  const clprim_buffer O = clprim_buf_at(ko_buf, c->out_at);
  clprim_status st;
  if (pairs)
    st = clprim_merge_pairs(ctx, na, nb, c->type, A, B, (clprim_type)c->value_type,
                            clprim_buf_at(va_buf, c->a_at), clprim_buf_at(vb_buf, c->b_at), flags,
                            O, clprim_buf_at(vo_buf, c->out_at));
  else
    st = clprim_merge_keys(ctx, na, nb, c->type, A, B, flags, O);
  if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s", desc, clprim_status_name(st));
  } else if (c->unsorted) {
    /* Every output is one of the inputs' elements (some key's bits); the
     * bytes around the output are untouched. */
    unsigned char *got = malloc((c->out_at + n + TEST_PAD) * es);
    test_read(ctx, ko_buf, (c->out_at + n + TEST_PAD) * es, got);
    uint64_t *have = malloc((n ? n : 1) * 8);
    for (size_t i = 0; i < n; ++i) have[i] = e[i].key;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t k = key_of_bits(c->type, get(es, got + c->out_at * es, i));
      int found = 0;
      for (size_t j = 0; j < n && !found; ++j) found = have[j] == k;
      if (!found) {
        test_report("%s: output %zu (0x%llx) is no input element", desc, i,
                    (unsigned long long)get(es, got + c->out_at * es, i));
        break;
      }
    }
    if (memcmp(got, ko_img, c->out_at * es) != 0 ||
        memcmp(got + (c->out_at + n) * es, ko_img + (c->out_at + n) * es, TEST_PAD * es) != 0)
      test_report("%s: bytes around the output changed", desc);
    free(got), free(have);
  } else {
    test_compare_image(ctx, desc, "keys_out", ko_buf, ko_img, (c->out_at + n + TEST_PAD) * es, es);
    test_compare_image(ctx, desc, "values_out", vo_buf, vo_img, (c->out_at + n + TEST_PAD) * vs,
                       vs);
    test_compare_image(ctx, desc, "a (must not change)", ka_buf, ka_img,
                       (c->a_at + na + TEST_PAD) * es, es);
    test_compare_image(ctx, desc, "b (must not change)", kb_buf, kb_img,
                       (c->b_at + nb + TEST_PAD) * es, es);
    test_compare_image(ctx, desc, "values_a (must not change)", va_buf, va_img,
                       (c->a_at + na + TEST_PAD) * vs, vs);
  }
  clReleaseMemObject(ka_buf), clReleaseMemObject(kb_buf), clReleaseMemObject(va_buf);
  clReleaseMemObject(vb_buf), clReleaseMemObject(ko_buf), clReleaseMemObject(vo_buf);
  free(e), free(ka), free(kb), free(va), free(vb);
  free(ka_img), free(kb_img), free(va_img), free(vb_img), free(ko_img), free(vo_img);
}

/* Totals around the default tile (2048 outputs) and up to about 100000;
 * at most 4097 under CLPRIM_TEST_SMALL. Each total is split at both ends,
 * in the middle and at random. */
static const size_t totals[] = {0,    1,    2,    3,    255,  256,  257,   2047,
                                2048, 2049, 4095, 4096, 4097, 6145, 31337, 100003};
#define SMALL_N ((size_t)4097)

/* The split of total number s of 4: all of a, none, half, random. */
static size_t split_of(size_t total, unsigned s) {
  switch (s % 4) {
  case 0: return total;
  case 1: return 0;
  case 2: return total / 2;
  default: return total ? (size_t)(test_rand() % (total + 1)) : 0;
  }
}

/* Every type and total; the split, distribution, order, values and
 * offsets turn with the case. */
static void test_type(clprim_type type) {
  unsigned rot = (unsigned)type * 5;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    if (!test_has_type(ctx, type)) continue;
    const size_t aligned = ctx->base_align; /* bytes: an aligned offset of any element size */
    const size_t es = clprim_type_size(type);
    for (size_t k = 0; k < COUNT(totals); ++k) {
      const size_t total = totals[k];
      if (test_small() && total > SMALL_N) continue;
      const int all = total == 2049 || total == 4097 || total == 31337;
      for (unsigned d = 0; d < D_COUNT; ++d, ++rot) {
        /* Every distribution at a few totals, else one. */
        if (!all && d != rot % D_COUNT) continue;
        if (test_small() && all && d % 2 != rot % 2) continue;
        struct merge_case c;
        memset(&c, 0, sizeof c);
        c.type = type, c.dist = (enum dist)d;
        c.value_type = rot % 3 == 0 ? -1 : (int)((rot / 3) % CLPRIM_TYPE_COUNT);
        if (c.value_type == CLPRIM_DOUBLE && !test_has_type(ctx, CLPRIM_DOUBLE))
          c.value_type = CLPRIM_UINT64;
        c.descending = rot / 2 % 2;
        c.a_at = rot % 3 == 1 ? 3 : rot % 3 == 2 ? aligned / es : 0;
        c.b_at = rot % 4 == 1 ? aligned / es : rot % 4 == 3 ? 5 : 0;
        c.out_at = rot % 5 == 2 ? 1 : rot % 5 == 4 ? aligned / 8 : 0;
        const size_t na = split_of(total, rot / 7 + d);
        check(ctx, &c, na, total - na);
      }
    }
  }
  test_report_end();
}
TEST_EVERY_TYPE

/* Small tiles (merge.wg = 32 with 1 and 3 outputs per work-item, and the
 * default work-group with 1; on the cpu path shares of 16 outputs): many
 * tiles at small sizes, every split. */
static void test_small_tiles(void **state) {
  (void)state;
  static const char *const tunes[] = {
      "merge.wg=32,merge.items=1,launch.cpu_share_min=16,launch.cpu_shares_per_unit=64",
      "merge.wg=32,merge.items=3",
      "merge.items=1"};
  static const size_t ns[] = {1, 2, 31, 32, 33, 95, 96, 97, 193, 255, 257, 700, 1999};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (size_t u = 0; u < COUNT(tunes); ++u) {
      TEST_OK(clprim__tune(ctx, tunes[u]));
      for (size_t k = 0; k < COUNT(ns); ++k, ++rot) {
        if (test_small() && (k + u) % 2) continue;
        struct merge_case c;
        memset(&c, 0, sizeof c);
        c.type = (clprim_type)(rot % CLPRIM_TYPE_COUNT);
        if (!test_has_type(ctx, c.type)) c.type = CLPRIM_FLOAT;
        c.dist = (enum dist)(rot % D_COUNT);
        c.value_type = rot % 2 ? -1 : (int)(rot / 2 % 4);
        c.descending = rot / 3 % 2;
        const size_t na = split_of(ns[k], rot / 2 + 2);
        check(ctx, &c, na, ns[k] - na);
      }
      TEST_OK(clprim__tune(ctx, "merge.wg=-1,merge.items=-1,launch.cpu_share_min=-1,"
                                "launch.cpu_shares_per_unit=-1"));
    }
  }
  test_report_end();
}

/* Unsorted ranges: unspecified order, but every tile stays inside both
 * ranges and writes only the output (Oclgrind checks the bounds). */
static void test_unsorted(void **state) {
  (void)state;
  static const size_t ns[] = {7, 100, 2049, 5000};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (int small = 0; small < 2; ++small) {
      if (small) TEST_OK(clprim__tune(ctx, "merge.wg=32,merge.items=3"));
      for (size_t k = 0; k < COUNT(ns); ++k, ++rot) {
        struct merge_case c;
        memset(&c, 0, sizeof c);
        c.type = rot % 2 ? CLPRIM_UINT32 : CLPRIM_INT64;
        c.dist = D_RANDOM, c.unsorted = 1, c.value_type = rot % 3 ? -1 : CLPRIM_UINT32;
        c.descending = rot / 2 % 2;
        const size_t na = k % 2 ? ns[k] / 3 : ns[k] - ns[k] / 5;
        check(ctx, &c, na, ns[k] - na);
      }
      if (small) TEST_OK(clprim__tune(ctx, "merge.wg=-1,merge.items=-1"));
    }
  }
  test_report_end();
}

/* --------------------------------------------------------------- errors */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  enum { N = 64 };
  uint32_t keys[N], poison[2 * N];
  for (size_t i = 0; i < N; ++i) keys[i] = (uint32_t)(i / 3);
  for (size_t i = 0; i < 2 * N; ++i) poison[i] = 0xC0FFEEu;
  cl_mem a = test_buffer(ctx, sizeof keys, keys), b = test_buffer(ctx, sizeof keys, keys);
  cl_mem o1 = test_buffer(ctx, sizeof poison, poison), o2 = test_buffer(ctx, sizeof poison, poison);
  cl_mem small = test_buffer(ctx, 7, NULL), foreign = test_foreign_buffer(ctx, sizeof poison);
  const clprim_type u32 = CLPRIM_UINT32;
  const clprim_buffer A = clprim_buf(a), B = clprim_buf(b), O = clprim_buf(o1),
                      O2 = clprim_buf(o2), S = clprim_buf(small), none = clprim_buf(NULL);
  const unsigned DESC = CLPRIM_SORT_DESCENDING;
  /* No context, bad types, missing ranges, unknown flags, short or foreign
   * buffers, outputs over an input or each other, sizes that overflow. */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_merge_keys(NULL, N, N, u32, A, B, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(NULL, N, N, u32, A, B, u32, A, B, 0, O, O2));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_keys(ctx, N, N, (clprim_type)9, A, B, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(ctx, N, N, u32, A, B, (clprim_type)-1, A, B, 0, O, O2));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(ctx, N, N, u32, A, B, (clprim_type)6, A, B, 0, O, O2));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_merge_keys(ctx, N, N, u32, none, B, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_merge_keys(ctx, N, N, u32, A, none, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_merge_keys(ctx, N, N, u32, A, B, 0, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(ctx, N, N, u32, A, B, u32, none, B, 0, O, O2));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(ctx, N, N, u32, A, B, u32, A, B, 0, O, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_merge_keys(ctx, N, N, u32, A, B, 2, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(ctx, N, N, u32, A, B, u32, A, B, DESC | CLPRIM_INDICES_64, O, O2));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_merge_keys(ctx, N + 1, N, u32, A, B, 0, O));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_merge_keys(ctx, N, N, u32, A, clprim_buf_at(b, 1), 0, O));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_merge_keys(ctx, N, N, u32, A, B, 0, S));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_merge_keys(ctx, N, N + 1, u32, A, clprim_buf(o2), 0, clprim_buf_at(o1, 1)));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_merge_pairs(ctx, N, N, u32, A, B, CLPRIM_UINT64, A, B, 0, O, O2));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_merge_pairs(ctx, N, N, u32, A, B, u32, A, B, 0, O, S));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_merge_keys(ctx, N, N, u32, A, B, 0, clprim_buf(foreign)));
  TEST_STATUS(CL_INVALID_CONTEXT, clprim_merge_keys(ctx, N, N, u32, clprim_buf(foreign), B, 0, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_merge_keys(ctx, N / 2, N / 2, u32, A, B, 0, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_keys(ctx, N / 4, N / 4, u32, A, B, 0, clprim_buf_at(b, N / 8)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(ctx, N / 2, N / 2, u32, A, B, u32, A, B, 0, O, O));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(ctx, N / 2, N / 2, u32, A, B, u32, A, B, 0, O,
                                 clprim_buf_at(o1, N - 1)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_pairs(ctx, N / 2, N / 2, u32, A, B, u32, A, B, 0, O, B));
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_merge_keys(ctx, SIZE_MAX, 2, u32, A, B, 0, O));
  /* double on a device without fp64 (as keys; as values they are bits) */
  const int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_merge_keys(ctx, N / 4, N / 4, CLPRIM_DOUBLE, A, B, 0, O));
  ctx->info.has_fp64 = had_fp64;
  /* Nothing was written. */
  uint32_t after[2 * N];
  test_read(ctx, o1, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, o2, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, a, sizeof keys, after);
  assert_memory_equal(after, keys, sizeof keys);
  /* Nothing to merge: success, nothing written, whatever the buffers. */
  TEST_OK(clprim_merge_keys(ctx, 0, 0, u32, A, B, 0, O));
  TEST_OK(clprim_merge_pairs(ctx, 0, 0, u32, A, B, u32, A, B, DESC, O, O2));
  test_read(ctx, o1, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, o2, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  clReleaseMemObject(a), clReleaseMemObject(b), clReleaseMemObject(o1), clReleaseMemObject(o2);
  clReleaseMemObject(small), clReleaseMemObject(foreign);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, and nothing is written. */
/* ------------------------------------------------------------ k runs */

/* clprim_merge_runs_keys / _pairs of `runs` runs of random lengths (some
 * empty) over n keys against the stable sort of all of them (the runs are
 * consecutive, so input order is run order). */
static void check_runs(clprim_context *ctx, clprim_type type, int value_type, enum dist d,
                       int descending, size_t runs, size_t n) {
  char desc[200];
  const int pairs = value_type >= 0;
  snprintf(desc, sizeof desc, "merge_runs_%s %s%s%s runs=%zu n=%zu %s%s path=%s",
           pairs ? "pairs" : "keys", clprim_type_name(type), pairs ? " values " : "",
           pairs ? clprim_type_name((clprim_type)value_type) : "", runs, n, dist_names[d],
           descending ? " descending" : "", test_path_of(ctx));
  const size_t es = clprim_type_size(type);
  const size_t vs = pairs ? clprim_type_size((clprim_type)value_type) : 4;
  uint64_t *offsets = malloc((runs + 1) * sizeof *offsets);
  offsets[0] = 0;
  for (size_t r = 1; r < runs; ++r) /* random cuts, sorted */
    offsets[r] = test_rand() % 5 == 0 ? 0 : test_rand() % (n + 1);
  if (runs > 0) offsets[runs] = n;
  for (size_t r = 1; r < runs; ++r)
    for (size_t q = r + 1; q < runs; ++q)
      if (offsets[q] < offsets[r]) {
        const uint64_t t = offsets[q];
        offsets[q] = offsets[r], offsets[r] = t;
      }
  struct elem *e = malloc((n ? n : 1) * sizeof *e);
  uint64_t few[8];
  for (size_t j = 0; j < COUNT(few); ++j)
    few[j] = j < 3 ? special(type, test_rand()) : random_bits(type);
  for (size_t i = 0; i < n; ++i) {
    e[i].bits = element_bits(type, d, few, few[0], i, n, 0);
    e[i].key = key_of_bits(type, e[i].bits), e[i].tag = i;
  }
  descending_order = descending;
  for (size_t r = 0; r < runs; ++r) /* each run sorted, stably */
    qsort(e + offsets[r], offsets[r + 1] - offsets[r], sizeof *e, by_key);
  unsigned char *k = malloc((n ? n : 1) * es), *v = malloc((n ? n : 1) * vs);
  for (size_t i = 0; i < n; ++i) {
    e[i].tag = i;
    put(es, k, i, e[i].bits), put(vs, v, i, value_of_tag(vs, i));
  }
  cl_mem kb = test_buffer(ctx, (n ? n : 1) * es, n ? k : NULL);
  cl_mem vb = test_buffer(ctx, (n ? n : 1) * vs, n ? v : NULL);
  cl_mem ko = test_buffer(ctx, (n ? n : 1) * es, NULL), vo = test_buffer(ctx, (n ? n : 1) * vs, NULL);
  qsort(e, n, sizeof *e, by_key); /* the reference: lower runs first among equals */
  const unsigned flags = descending ? CLPRIM_SORT_DESCENDING : 0u;
  clprim_status st;
  if (pairs)
    st = clprim_merge_runs_pairs(ctx, n, type, clprim_buf(kb), (clprim_type)value_type,
                                 clprim_buf(vb), runs, offsets, flags, clprim_buf(ko),
                                 clprim_buf(vo));
  else
    st = clprim_merge_runs_keys(ctx, n, type, clprim_buf(kb), runs, offsets, flags,
                                clprim_buf(ko));
  if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s", desc, clprim_status_name(st));
  } else if (n > 0) {
    unsigned char *gk = malloc(n * es), *gv = malloc(n * vs), *gin = malloc(n * es);
    test_read(ctx, ko, n * es, gk);
    if (pairs) test_read(ctx, vo, n * vs, gv);
    test_read(ctx, kb, n * es, gin);
    for (size_t i = 0; i < n; ++i) {
      if (get(es, gk, i) != e[i].bits) {
        test_report("%s: key %zu is 0x%llx, expected 0x%llx", desc, i,
                    (unsigned long long)get(es, gk, i), (unsigned long long)e[i].bits);
        break;
      }
      if (pairs && get(vs, gv, i) != value_of_tag(vs, e[i].tag)) {
        test_report("%s: value %zu is not the one of its key", desc, i);
        break;
      }
    }
    if (memcmp(gin, k, n * es) != 0) test_report("%s: the input changed", desc);
    free(gk), free(gv), free(gin);
  }
  clReleaseMemObject(kb), clReleaseMemObject(vb), clReleaseMemObject(ko), clReleaseMemObject(vo);
  free(offsets), free(e), free(k), free(v);
}

/* Every type, keys and pairs, 0 to 33 runs (1, 2, 3 and more rounds, an
 * odd run out), both orders, sizes around the tile (2048 outputs). */
static void test_runs(void **state) {
  (void)state;
  static const size_t run_counts[] = {0, 1, 2, 3, 4, 5, 8, 9, 33};
  static const size_t ns[] = {0, 1, 7, 2047, 2049, 40000};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (clprim_type t = CLPRIM_INT32; t < CLPRIM_TYPE_COUNT; ++t) {
      if (!test_has_type(ctx, t)) continue;
      for (size_t r = 0; r < COUNT(run_counts); ++r)
        for (size_t s = 0; s < COUNT(ns); ++s, ++rot) {
          const size_t n = run_counts[r] == 0 ? 0 : ns[s];
          if (test_small() && n > 2049) continue;
          if (run_counts[r] == 0 && s > 0) continue;
          /* Oclgrind: half the pairs of run count and size, in turn. */
          if (test_small() && run_counts[r] && (r + s + (size_t)t) % 2) continue;
          const int vt = rot % 3 == 0 ? -1 : rot % 3 == 1 ? (int)CLPRIM_UINT32 : (int)CLPRIM_INT64;
          const enum dist d = rot % 3 == 0 ? D_RANDOM : rot % 3 == 1 ? D_FEW : D_SPECIAL;
          check_runs(ctx, t, vt, d, rot / 3 % 2, run_counts[r], n);
        }
    }
  }
  /* Bad offsets and flags: refused, nothing written. */
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  cl_mem in = test_pattern(ctx, 400), out = test_pattern(ctx, 400);
  const uint64_t not_at_0[3] = {1, 5, 100}, decreasing[3] = {0, 50, 40},
                 short_end[3] = {0, 50, 99};
  const uint64_t *bad[] = {NULL, not_at_0, decreasing, short_end};
  for (size_t b = 0; b < COUNT(bad); ++b)
    TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_merge_runs_keys(ctx, 100, CLPRIM_UINT32, clprim_buf(in), 2, bad[b], 0,
                                       clprim_buf(out)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_runs_keys(ctx, 100, CLPRIM_UINT32, clprim_buf(in), 0, not_at_0, 0,
                                     clprim_buf(out)));
  const uint64_t good[3] = {0, 50, 100};
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_runs_keys(ctx, 100, CLPRIM_UINT32, clprim_buf(in), 2, good,
                                     CLPRIM_TOPK_SMALLEST, clprim_buf(out)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_merge_runs_keys(ctx, 100, CLPRIM_UINT32, clprim_buf(in), 2, good, 0,
                                     clprim_buf(in)));
  test_pattern_intact(ctx, out, 400, "out");
  clReleaseMemObject(in), clReleaseMemObject(out);
  test_report_end();
}

static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  TEST_TEXT(ctx, INVALID,
            clprim_merge_keys(ctx, 10, 10, CLPRIM_INT32, A, B, CLPRIM_TOPK_SMALLEST, O),
            "merge_keys: flag 0x80 (CLPRIM_TOPK_SMALLEST)");
  TEST_TEXT(ctx, INVALID, clprim_merge_keys(ctx, 10, 10, CLPRIM_INT32, A, B, 0, NONE),
            "merge_keys: out is required");
  TEST_TEXT(ctx, INVALID,
            clprim_merge_pairs(ctx, 10, 10, CLPRIM_INT32, A, B, CLPRIM_FLOAT, A, B, 0, O, NONE),
            "merge_pairs: values_out is required");
  TEST_TEXT(ctx, INVALID,
            clprim_merge_pairs(ctx, 10, 10, CLPRIM_INT32, A, B, (clprim_type)7, A, B, 0, O, O2),
            "value_type (7) is not a clprim_type");
  TEST_TEXT(ctx, SMALL, clprim_merge_keys(ctx, 1000, 100, CLPRIM_INT32, A, B, 0, O),
            "out holds 1024 elements from offset 0, the call needs 1100");
  TEST_TEXT(ctx, INVALID, clprim_merge_keys(ctx, 10, 10, CLPRIM_INT32, A, B, 0, B),
            "out overlaps b");
  const uint64_t decreasing[3] = {0, 50, 40};
  TEST_TEXT(ctx, INVALID,
            clprim_merge_runs_keys(ctx, 100, CLPRIM_INT32, A, 2, decreasing, 0, O),
            "merge_runs_keys: offsets[2] (40): offsets must start at 0, not decrease and end "
            "at n (100)");
  TEST_TEXT(ctx, INVALID, clprim_merge_runs_keys(ctx, 100, CLPRIM_INT32, A, 2, NULL, 0, O),
            "merge_runs_keys: offsets is NULL");
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_merge");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),      cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_small_tiles), cmocka_unit_test(test_unsorted),
      cmocka_unit_test(test_runs),
      cmocka_unit_test(test_int32),       cmocka_unit_test(test_uint32),
      cmocka_unit_test(test_int64),       cmocka_unit_test(test_uint64),
      cmocka_unit_test(test_float),       cmocka_unit_test(test_double),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
