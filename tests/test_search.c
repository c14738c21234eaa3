/* test_search: lower bound, upper bound and equal range against a CPU
 * reference on fresh random data, for every type and path the device runs:
 * haystacks sorted ascending and descending, of sizes 0, 1, 2, around
 * work-group sizes and the local sample's size (1023 to 1025, 2049 ...)
 * and about 100000; random elements, few distinct values (long runs of
 * equal keys, where the bounds differ), float special values (-0.0 and
 * +0.0 mixed, infinities, NaNs of several payloads at the end) and one
 * value throughout; needles equal to every element, just below and above
 * each (in the order), below the smallest, above the largest, zeros, NaNs
 * and random ones, in random order; ranges at offsets (sub-buffers and
 * staged copies), bytes around the outputs untouched; 32- and 64-bit
 * positions; small local samples and work-groups set through the family's
 * knobs; and every error case with nothing written. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define BIG_N ((size_t)100003) /* the largest haystack */
#define SMALL_N ((size_t)2100) /* the largest under CLPRIM_TEST_SMALL */

/* ------------------------------------------------------------- the data */
static uint64_t get(clprim_type type, const void *data, size_t i) {
  return clprim_type_size(type) == 4 ? ((const uint32_t *)data)[i] : ((const uint64_t *)data)[i];
}
static void put(clprim_type type, void *data, size_t i, uint64_t bits) {
  if (clprim_type_size(type) == 4)
    ((uint32_t *)data)[i] = (uint32_t)bits;
  else
    ((uint64_t *)data)[i] = bits;
}

/* The order key of an element given as its bits (test_order_key's order). */
static uint64_t key_of_bits(clprim_type type, uint64_t bits) {
  unsigned char e[8];
  memset(e, 0, sizeof e);
  put(type, e, 0, bits);
  return test_order_key(type, e, 0);
}

/* The bits of an element whose order key is key (written here from the
 * key's definition; NaN keys give some NaN). */
static uint64_t bits_of_key(clprim_type type, uint64_t key) {
  switch (type) {
  case CLPRIM_INT32: return (uint32_t)key ^ 0x80000000u;
  case CLPRIM_INT64: return key ^ 0x8000000000000000ull;
  case CLPRIM_FLOAT: {
    const uint32_t k = (uint32_t)key;
    return k & 0x80000000u ? k ^ 0x80000000u : (uint32_t)~k;
  }
  case CLPRIM_DOUBLE: return key & 0x8000000000000000ull ? key ^ 0x8000000000000000ull : ~key;
  default: return key;
  }
}

static uint64_t key_max(clprim_type type) {
  return clprim_type_size(type) == 4 ? 0xFFFFFFFFull : ~0ull;
}

/* NaNs (several payloads, both signs), -0, +0, infinities, 1, -1, the
 * smallest denormal (float, double). */
static const uint32_t special32[] = {0x7FC00000u, 0x7FC00001u, 0xFFC00000u, 0x7F800001u,
                                     0x80000000u, 0x00000000u, 0x7F800000u, 0xFF800000u,
                                     0x3F800000u, 0xBF800000u, 0x00000001u};
static const uint64_t special64[] = {0x7FF8000000000000ull, 0x7FF8000000000001ull,
                                     0xFFF8000000000000ull, 0x7FF0000000000001ull,
                                     0x8000000000000000ull, 0x0000000000000000ull,
                                     0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                     0x3FF0000000000000ull, 0xBFF0000000000000ull,
                                     0x0000000000000001ull};
/* Integers at the ends of their range and around 0. */
static uint64_t special_int(clprim_type type, uint64_t r) {
  const int wide = clprim_type_size(type) == 8;
  const uint64_t top = wide ? ~0ull : 0xFFFFFFFFull, sign = wide ? 1ull << 63 : 1ull << 31;
  const uint64_t v[] = {0, 1, top, sign, sign - 1, 2, top - 1};
  return v[r % COUNT(v)];
}

static uint64_t special(clprim_type type, uint64_t r) {
  if (type == CLPRIM_FLOAT) return special32[r % COUNT(special32)];
  if (type == CLPRIM_DOUBLE) return special64[r % COUNT(special64)];
  return special_int(type, r);
}

static uint64_t random_bits(clprim_type type) {
  const uint64_t r = test_rand();
  return clprim_type_size(type) == 4 ? r >> 32 : r;
}

enum dist { D_RANDOM, D_FEW, D_SPECIAL, D_ONE, D_COUNT };
static const char *const dist_names[D_COUNT] = {"random", "few values", "special values",
                                                "one value"};

/* An element and its order key, sorted by key (ties in any order). */
struct keyed {
  uint64_t key, bits;
};
static int by_key(const void *a, const void *b) {
  const uint64_t x = ((const struct keyed *)a)->key, y = ((const struct keyed *)b)->key;
  return x < y ? -1 : x > y;
}

/* n elements of distribution d, sorted ascending by key (descending: the
 * reverse), into hay; their keys into keys. */
static void make_haystack(clprim_type type, enum dist d, size_t n, int descending, void *hay,
                          uint64_t *keys) {
  struct keyed *e = malloc((n ? n : 1) * sizeof *e);
  uint64_t few[8];
  for (size_t j = 0; j < COUNT(few); ++j)
    few[j] = j < 3 ? special(type, test_rand()) : random_bits(type);
  const uint64_t one = test_rand() % 2 ? random_bits(type) : special(type, test_rand());
  for (size_t i = 0; i < n; ++i) {
    uint64_t b;
    switch (d) {
    case D_RANDOM: b = random_bits(type); break;
    case D_FEW: b = few[test_rand() % COUNT(few)]; break;
    case D_SPECIAL: b = test_rand() % 4 ? special(type, test_rand()) : random_bits(type); break;
    default: b = one; break;
    }
    e[i].bits = b, e[i].key = key_of_bits(type, b);
  }
  qsort(e, n, sizeof *e, by_key);
  for (size_t i = 0; i < n; ++i) {
    const size_t at = descending ? n - 1 - i : i;
    put(type, hay, at, e[i].bits);
    keys[at] = e[i].key;
  }
  free(e);
}

/* The needles for a haystack of n (keys): every element, the keys just
 * below and above each, the ends of the order, specials and random ones,
 * shuffled. Returns their count (at most 3 n + 64). */
static size_t make_needles(clprim_type type, const void *hay, const uint64_t *keys, size_t n,
                           void *needles) {
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    put(type, needles, m++, get(type, hay, i));
    if (keys[i] > 0) put(type, needles, m++, bits_of_key(type, keys[i] - 1));
    if (keys[i] < key_max(type)) put(type, needles, m++, bits_of_key(type, keys[i] + 1));
  }
  put(type, needles, m++, bits_of_key(type, 0));
  put(type, needles, m++, bits_of_key(type, key_max(type)));
  for (uint64_t s = 0; s < 11; ++s) put(type, needles, m++, special(type, s));
  const size_t extra = 64 - 13;
  for (size_t j = 0; j < extra; ++j) put(type, needles, m++, random_bits(type));
  for (size_t i = m; i > 1; --i) { /* Fisher-Yates */
    const size_t j = (size_t)(test_rand() % i);
    const uint64_t t = get(type, needles, i - 1);
    put(type, needles, i - 1, get(type, needles, j));
    put(type, needles, j, t);
  }
  return m;
}

/* --------------------------------------------------------- the reference */
/* The number of the n elements ordered before a needle of key q (upper =
 * 0), or not ordered after it (upper = 1): the first position whose
 * element is not before / is after the needle, keys being in order. */
static uint64_t reference_bound(const uint64_t *keys, size_t n, uint64_t q, int descending,
                                int upper) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint64_t k = keys[mid];
    const int before = descending ? (k > q || (upper && k == q)) : (k < q || (upper && k == q));
    if (before)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* ------------------------------------------------------------ one check */
enum call { C_LOWER, C_UPPER, C_EQUAL, C_EQUAL_LOWER, C_EQUAL_UPPER, C_COUNT };
static const char *const call_names[C_COUNT] = {
    "lower_bound", "upper_bound", "equal_range", "equal_range (lower only)",
    "equal_range (upper only)"};

struct search_case {
  enum call call;
  clprim_type type;
  enum dist dist;
  int descending, index64;
  size_t hay_at, needles_at, out_at; /* element offsets */
};

static void check(clprim_context *ctx, const struct search_case *c, size_t n) {
  char desc[300];
  snprintf(desc, sizeof desc, "%s %s n=%zu %s%s hay_at=%zu needles_at=%zu out_at=%zu %d-bit path=%s",
           call_names[c->call], clprim_type_name(c->type), n, dist_names[c->dist],
           c->descending ? " descending" : "", c->hay_at, c->needles_at, c->out_at,
           c->index64 ? 64 : 32, test_path_of(ctx));
  const size_t es = clprim_type_size(c->type), is = c->index64 ? 8 : 4;
  unsigned char *hay = malloc((n ? n : 1) * es), *ndl = malloc((3 * n + 64) * es);
  uint64_t *keys = malloc((n ? n : 1) * sizeof *keys);
  make_haystack(c->type, c->dist, n, c->descending, hay, keys);
  const size_t m = make_needles(c->type, hay, keys, n, ndl);

  const int want_lower = c->call == C_LOWER || c->call == C_EQUAL || c->call == C_EQUAL_LOWER;
  const int want_upper = c->call == C_UPPER || c->call == C_EQUAL || c->call == C_EQUAL_UPPER;
  unsigned char *hay_img, *ndl_img, *lo_img, *up_img;
  cl_mem hbuf = test_image_buffer(ctx, c->hay_at, n, es, hay, &hay_img);
  cl_mem nbuf = test_image_buffer(ctx, c->needles_at, m, es, ndl, &ndl_img);
  cl_mem lbuf = test_image_buffer(ctx, c->out_at, m, is, NULL, &lo_img);
  cl_mem ubuf = test_image_buffer(ctx, c->out_at, m, is, NULL, &up_img);
  for (size_t i = 0; i < m; ++i) {
    const uint64_t q = key_of_bits(c->type, get(c->type, ndl, i));
    const uint64_t lo = reference_bound(keys, n, q, c->descending, 0);
    const uint64_t up = reference_bound(keys, n, q, c->descending, 1);
    const uint32_t lo32 = (uint32_t)lo, up32 = (uint32_t)up;
    if (want_lower) memcpy(lo_img + (c->out_at + i) * is, c->index64 ? (const void *)&lo : &lo32, is);
    if (want_upper) memcpy(up_img + (c->out_at + i) * is, c->index64 ? (const void *)&up : &up32, is);
  }
  const unsigned flags =
      (c->descending ? CLPRIM_SORT_DESCENDING : 0u) | (c->index64 ? CLPRIM_INDICES_64 : 0u);
  const clprim_buffer H = clprim_buf_at(hbuf, c->hay_at), N = clprim_buf_at(nbuf, c->needles_at);
  const clprim_buffer L = clprim_buf_at(lbuf, c->out_at), U = clprim_buf_at(ubuf, c->out_at);
  const clprim_buffer none = clprim_buf(NULL);
  clprim_status st;
  switch (c->call) {
  case C_LOWER: st = clprim_lower_bound(ctx, n, c->type, H, m, N, flags, L); break;
  case C_UPPER: st = clprim_upper_bound(ctx, n, c->type, H, m, N, flags, U); break;
  case C_EQUAL: st = clprim_equal_range(ctx, n, c->type, H, m, N, flags, L, U); break;
  case C_EQUAL_LOWER: st = clprim_equal_range(ctx, n, c->type, H, m, N, flags, L, none); break;
  default: st = clprim_equal_range(ctx, n, c->type, H, m, N, flags, none, U); break;
  }
  if (st != CLPRIM_SUCCESS) {
    test_report("%s: returned %s", desc, clprim_status_name(st));
  } else {
    test_compare_image(ctx, desc, "lower", lbuf, lo_img, (c->out_at + m + TEST_PAD) * is, is);
    test_compare_image(ctx, desc, "upper", ubuf, up_img, (c->out_at + m + TEST_PAD) * is, is);
    test_compare_image(ctx, desc, "haystack (must not change)", hbuf, hay_img,
                       (c->hay_at + n + TEST_PAD) * es, es);
    test_compare_image(ctx, desc, "needles (must not change)", nbuf, ndl_img,
                       (c->needles_at + m + TEST_PAD) * es, es);
  }
  clReleaseMemObject(hbuf), clReleaseMemObject(nbuf), clReleaseMemObject(lbuf);
  clReleaseMemObject(ubuf);
  free(hay), free(ndl), free(keys), free(hay_img), free(ndl_img), free(lo_img), free(up_img);
}

/* Haystack sizes: tiny ones, around work-group sizes (32, 64, 256), the
 * local sample (1024 keys: every element up to 1024, then every second
 * one up to 2049 ...) and BIG_N; at most SMALL_N under CLPRIM_TEST_SMALL. */
static const size_t sizes[] = {0,    1,    2,    3,    31,   32,   33,   63,    64,    65,   255,
                               256,  257,  1023, 1024, 1025, 2049, 2050, 3076,  10007, BIG_N};

/* Every type and size; the distribution, order, call, offsets and width
 * turn with the case. Under CLPRIM_TEST_SMALL fewer types per call. */
static void test_calls(int part) {
  unsigned rot = (unsigned)part * 7;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    const size_t aligned = ctx->base_align; /* bytes: an aligned offset of any element size */
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!test_has_type(ctx, type)) continue;
      if (test_small() && (unsigned)t % 2 != (unsigned)part % 2) continue;
      const size_t es = clprim_type_size(type);
      for (size_t k = 0; k < COUNT(sizes); ++k) {
        const size_t n = sizes[k];
        if (test_small() && n > SMALL_N) continue;
        for (unsigned d = 0; d < D_COUNT; ++d, ++rot) {
          /* Every distribution at a few sizes, else one. */
          const int all = n == 257 || n == 1025 || n == 10007;
          if (!all && d != rot % D_COUNT) continue;
          struct search_case c;
          memset(&c, 0, sizeof c);
          c.type = type, c.dist = (enum dist)d;
          c.call = (enum call)((rot + (unsigned)part) % C_COUNT);
          c.descending = (rot / 3 + (unsigned)part) % 2;
          c.index64 = rot / 2 % 2;
          c.hay_at = rot % 3 == 1 ? 3 : rot % 3 == 2 ? aligned / es : 0;
          c.needles_at = rot % 4 == 1 ? aligned / es : rot % 4 == 3 ? 5 : 0;
          c.out_at = rot % 5 == 2 ? 1 : rot % 5 == 4 ? aligned / (c.index64 ? 8 : 4) : 0;
          check(ctx, &c, n);
        }
      }
    }
  }
  test_report_end();
}

static void test_calls_0(void **state) { (void)state, test_calls(0); }
static void test_calls_1(void **state) { (void)state, test_calls(1); }

/* Small local samples and work-groups (search.samples = 1, 3, 64;
 * search.wg = 32; on the cpu path shares of 16 needles): many blocks per
 * haystack at small sizes, every call. */
static void test_small_samples(void **state) {
  (void)state;
  static const char *const tunes[] = {
      "search.samples=1,search.wg=32,launch.cpu_share_min=16,launch.cpu_shares_per_unit=64",
      "search.samples=3",
      "search.samples=64,search.wg=32"};
  static const size_t ns[] = {0, 1, 2, 3, 4, 5, 7, 63, 64, 65, 66, 129, 700, 1999};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (size_t u = 0; u < COUNT(tunes); ++u) {
      TEST_OK(clprim__tune(ctx, tunes[u]));
      for (size_t k = 0; k < COUNT(ns); ++k, ++rot) {
        struct search_case c;
        memset(&c, 0, sizeof c);
        c.type = (clprim_type)(rot % CLPRIM_TYPE_COUNT);
        if (!test_has_type(ctx, c.type)) c.type = CLPRIM_FLOAT;
        c.dist = (enum dist)(rot % D_COUNT == D_ONE ? D_FEW : rot % D_COUNT);
        c.call = (enum call)(rot % C_COUNT);
        c.descending = rot / 2 % 2, c.index64 = rot / 3 % 2;
        check(ctx, &c, ns[k]);
      }
      TEST_OK(clprim__tune(ctx, "search.samples=-1,search.wg=-1,launch.cpu_share_min=-1,"
                                "launch.cpu_shares_per_unit=-1"));
    }
  }
  test_report_end();
}

/* The needles are the haystack's own range; and an empty haystack gives 0
 * for every needle. */
static void test_same_range(void **state) {
  (void)state;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (test_skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    enum { N = 300 };
    float hay[N];
    /* Runs of 7 equal values from -10, a -0.0 among the run of zeros
     * (which equals +0.0), two NaNs at the end. */
    for (size_t i = 0; i < N; ++i) hay[i] = (float)(i / 7) - 10.0f;
    hay[72] = -0.0f, hay[N - 1] = hay[N - 2] = NAN;
    cl_mem h = test_buffer(ctx, sizeof hay, hay);
    cl_mem lo = test_buffer(ctx, N * 8, NULL), up = test_buffer(ctx, N * 8, NULL);
    TEST_OK(clprim_equal_range(ctx, N, CLPRIM_FLOAT, clprim_buf(h), N, clprim_buf(h),
                               CLPRIM_INDICES_64, clprim_buf(lo), clprim_buf(up)));
    uint64_t l[N], u[N];
    test_read(ctx, lo, sizeof l, l);
    test_read(ctx, up, sizeof u, u);
    for (size_t i = 0; i < N; ++i) {
      size_t wl = i, wu = i + 1;
      while (wl > 0 && (hay[wl - 1] == hay[i] || (hay[i] != hay[i] && hay[wl - 1] != hay[wl - 1])))
        --wl;
      while (wu < N && (hay[wu] == hay[i] || (hay[i] != hay[i] && hay[wu] != hay[wu]))) ++wu;
      if (l[i] != wl || u[i] != wu)
        test_report("same range on %s: element %zu: [%llu, %llu), expected [%zu, %zu)", test_path_of(ctx), i,
               (unsigned long long)l[i], (unsigned long long)u[i], wl, wu);
    }
    /* An empty haystack: every bound 0. */
    uint32_t l32[N];
    memset(l32, 0xA5, sizeof l32);
    test_write(ctx, lo, sizeof l32, l32);
    TEST_OK(clprim_upper_bound(ctx, 0, CLPRIM_FLOAT, clprim_buf(h), N, clprim_buf(h), 0,
                               clprim_buf(lo)));
    test_read(ctx, lo, sizeof l32, l32);
    for (size_t i = 0; i < N; ++i)
      if (l32[i] != 0) {
        test_report("empty haystack on %s: bound %zu is %u", test_path_of(ctx), i, l32[i]);
        break;
      }
    clReleaseMemObject(h), clReleaseMemObject(lo), clReleaseMemObject(up);
  }
  test_report_end();
}

/* --------------------------------------------------------------- errors */
static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  enum { N = 64 };
  uint32_t hay[N], poison[2 * N];
  for (size_t i = 0; i < N; ++i) hay[i] = (uint32_t)(i / 3);
  for (size_t i = 0; i < 2 * N; ++i) poison[i] = 0xC0FFEEu;
  cl_mem h = test_buffer(ctx, sizeof hay, hay), nd = test_buffer(ctx, sizeof hay, hay);
  cl_mem o1 = test_buffer(ctx, sizeof poison, poison), o2 = test_buffer(ctx, sizeof poison, poison);
  cl_mem small = test_buffer(ctx, 7, NULL), foreign = test_foreign_buffer(ctx, sizeof poison);
  const clprim_type u32 = CLPRIM_UINT32;
  const clprim_buffer H = clprim_buf(h), D = clprim_buf(nd), A = clprim_buf(o1),
                      B = clprim_buf(o2), S = clprim_buf(small), none = clprim_buf(NULL);
  const unsigned I64 = CLPRIM_INDICES_64, DESC = CLPRIM_SORT_DESCENDING;
  /* No context, a bad type, no haystack or needles, no output, unknown
   * flags, short or foreign buffers, outputs over an input or each other. */
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_lower_bound(NULL, N, u32, H, N, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_upper_bound(NULL, N, u32, H, N, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_equal_range(NULL, N, u32, H, N, D, 0, A, B));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_lower_bound(ctx, N, (clprim_type)9, H, N, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_equal_range(ctx, N, (clprim_type)-1, H, N, D, 0, A, B));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_lower_bound(ctx, N, u32, none, N, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_upper_bound(ctx, N, u32, H, N, none, 0, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_lower_bound(ctx, N, u32, H, N, D, 0, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_upper_bound(ctx, N, u32, H, N, D, 0, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_equal_range(ctx, N, u32, H, N, D, 0, none, none));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_lower_bound(ctx, N, u32, H, N, D, 2, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_upper_bound(ctx, N, u32, H, N, D, 4, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_equal_range(ctx, N, u32, H, N, D, DESC | I64 | 16, A, B));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_lower_bound(ctx, N + 1, u32, H, N, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_lower_bound(ctx, N, u32, H, N + 1, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_lower_bound(ctx, N, u32, clprim_buf_at(h, 1), N, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_lower_bound(ctx, N, u32, H, N, D, 0, S));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_upper_bound(ctx, N, u32, H, 2 * N + 1, clprim_buf(o2), I64, A));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_lower_bound(ctx, N, CLPRIM_UINT64, H, N / 2, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_equal_range(ctx, N, u32, H, N, D, 0, A, S));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_lower_bound(ctx, N, u32, H, N, D, 0, clprim_buf(foreign)));
  TEST_STATUS(CL_INVALID_CONTEXT,
              clprim_upper_bound(ctx, N, u32, clprim_buf(foreign), N, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_lower_bound(ctx, N, u32, H, N, D, 0, H));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_upper_bound(ctx, N, u32, H, N, D, 0, D));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_equal_range(ctx, N, u32, H, N, D, 0, A, A));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_equal_range(ctx, N, u32, H, N, D, 0, A, clprim_buf_at(o1, N - 1)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_equal_range(ctx, N / 2, u32, H, N / 2, D, I64, A, clprim_buf_at(o1, N / 2 - 1)));
  TEST_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
              clprim_equal_range(ctx, N, u32, H, N, clprim_buf(o2), 0, A, clprim_buf_at(o2, 8)));
  /* uint32 positions cannot hold a haystack of more than UINT32_MAX. */
  TEST_STATUS(CLPRIM_ERROR_SIZE_TOO_LARGE,
              clprim_lower_bound(ctx, (size_t)UINT32_MAX + 1, u32, H, N, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_BUFFER_TOO_SMALL,
              clprim_lower_bound(ctx, (size_t)UINT32_MAX + 1, u32, H, N, D, I64, A));
  /* double on a device without fp64 */
  const int had_fp64 = ctx->info.has_fp64;
  ctx->info.has_fp64 = 0;
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_lower_bound(ctx, N / 2, CLPRIM_DOUBLE, H, N / 2, D, 0, A));
  TEST_STATUS(CLPRIM_ERROR_UNSUPPORTED_TYPE,
              clprim_equal_range(ctx, N / 2, CLPRIM_DOUBLE, H, N / 2, D, 0, A, B));
  ctx->info.has_fp64 = had_fp64;
  /* Nothing was written. */
  uint32_t after[2 * N];
  test_read(ctx, o1, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, o2, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, h, sizeof hay, after);
  assert_memory_equal(after, hay, sizeof hay);
  /* No needles: success, nothing written (also with an empty haystack). */
  TEST_OK(clprim_lower_bound(ctx, N, u32, H, 0, D, 0, A));
  TEST_OK(clprim_equal_range(ctx, 0, u32, H, 0, D, I64 | DESC, A, B));
  TEST_OK(clprim_upper_bound(ctx, N, u32, H, 0, D, 0, S));
  test_read(ctx, o1, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  test_read(ctx, o2, sizeof after, after);
  assert_memory_equal(after, poison, sizeof poison);
  clReleaseMemObject(h), clReleaseMemObject(nd), clReleaseMemObject(o1), clReleaseMemObject(o2);
  clReleaseMemObject(small), clReleaseMemObject(foreign);
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  TEST_TEXT(ctx, INVALID,
            clprim_lower_bound(ctx, 100, CLPRIM_INT32, A, 10, B, CLPRIM_TOPK_SMALLEST, O),
            "lower_bound: flag 0x80 (CLPRIM_TOPK_SMALLEST)");
  TEST_TEXT(ctx, INVALID, clprim_upper_bound(ctx, 100, CLPRIM_INT32, A, 10, B, 0, NONE),
            "upper_bound: out is required");
  TEST_TEXT(ctx, INVALID, clprim_equal_range(ctx, 100, CLPRIM_INT32, A, 10, B, 0, NONE, NONE),
            "equal_range: no output is given (lower and upper");
  TEST_TEXT(ctx, SMALL, clprim_equal_range(ctx, 100, CLPRIM_INT32, A, 2000, B, 0, O, O2),
            "needles holds 1024 elements from offset 0, the call needs 2000");
  TEST_TEXT(ctx, INVALID,
            clprim_equal_range(ctx, 100, CLPRIM_INT32, A, 10, B, CLPRIM_REDUCE_NAN_LARGEST, O, O2),
            "CLPRIM_REDUCE_NAN_LARGEST");
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(void) {
  test_init("test_search");
  test_with_cpu_path();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),     cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_same_range), cmocka_unit_test(test_small_samples),
      cmocka_unit_test(test_calls_0),    cmocka_unit_test(test_calls_1),
  };
  return cmocka_run_group_tests(tests, test_setup, test_teardown);
}
