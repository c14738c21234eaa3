/* Rows of the search family: lower bounds (and equal ranges) of n random
 * needles in a sorted haystack of 2^20 elements and of n elements, against
 * one read of the needles. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct search_arg {
  int equal_range; /* 0: lower bounds, 1: both bounds */
  clprim_type type;
  cl_mem haystack, needles, lower, upper;
  size_t haystack_n, n;
};

static clprim_status call_search(clprim_context *ctx, void *p) {
  struct search_arg *a = p;
  const clprim_buffer h = clprim_buf(a->haystack), nd = clprim_buf(a->needles);
  if (a->equal_range)
    return clprim_equal_range(ctx, a->haystack_n, a->type, h, a->n, nd, 0, clprim_buf(a->lower),
                              clprim_buf(a->upper));
  return clprim_lower_bound(ctx, a->haystack_n, a->type, h, a->n, nd, 0, clprim_buf(a->lower));
}

/* Element i of p from 64 random or evenly spaced bits u: integers take
 * their top bits, floats [0, 1) from the top 53. */
static void put_element(clprim_type type, void *p, size_t i, uint64_t u) {
  switch (type) {
  case CLPRIM_INT32:
  case CLPRIM_UINT32:
    ((uint32_t *)p)[i] = (uint32_t)(u >> 32);
    break;
  case CLPRIM_INT64:
  case CLPRIM_UINT64:
    ((uint64_t *)p)[i] = u;
    break;
  case CLPRIM_FLOAT:
    ((float *)p)[i] = (float)((double)(u >> 11) * (1.0 / 9007199254740992.0));
    break;
  case CLPRIM_DOUBLE:
    ((double *)p)[i] = (double)(u >> 11) * (1.0 / 9007199254740992.0);
    break;
  }
}

/* A haystack of n elements sorted in the type's order (evenly spaced over
 * the type's range; int32 and int64: the spacing's top bit flipped, so it
 * stays sorted as signed), or n random needles (xorshift64*). */
static void *search_data(struct bench *b, clprim_type type, size_t n, int sorted, unsigned seed) {
  unsigned char *p = bench_malloc(b, n * clprim_type_size(type));
  const uint64_t spacing = UINT64_MAX / (n + 1);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    uint64_t u;
    if (sorted) {
      u = spacing * (i + 1);
      if (type == CLPRIM_INT32 || type == CLPRIM_INT64) u ^= 1ull << 63;
    } else {
      s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
      u = s * 0x2545F4914F6CDD1Dull;
    }
    put_element(type, p, i, u);
  }
  return p;
}

/* lower_bound and equal_range of n random needles into a haystack of 2^20
 * and one of n sorted elements (uint32 positions), each against one read
 * of the needles measured in the same run. */
static void run_search(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type);
  const int want_lower = bench_wants(b, "lower_bound"), want_equal = bench_wants(b, "equal_range");
  struct search_arg a;
  memset(&a, 0, sizeof a);
  a.type = type, a.n = n;
  void *host = search_data(b, type, n, 0, 11);
  a.needles = bench_buffer(b, n * es, host);
  bench_free(b, host);
  a.lower = bench_buffer(b, n * 4, NULL);
  a.upper = bench_buffer(b, n * 4, NULL);
  const double read = bench_read_ms(b, a.needles, n * es);
  const size_t haystacks[2] = {(size_t)1 << 20, n};
  for (int h = 0; h < 2; ++h) {
    if (h == 1 && n == haystacks[0]) continue; /* the same row */
    a.haystack_n = haystacks[h];
    host = search_data(b, type, a.haystack_n, 1, 5);
    a.haystack = bench_buffer(b, a.haystack_n * es, host);
    bench_free(b, host);
    char variant[48];
    snprintf(variant, sizeof variant, "haystack 2^%d", bench_lg(a.haystack_n));
    if (want_lower) {
      a.equal_range = 0;
      bench_report_read(b, "lower_bound", variant, type, n, call_search, &a, read);
    }
    if (want_equal) {
      a.equal_range = 1;
      bench_report_read(b, "equal_range", variant, type, n, call_search, &a, read);
    }
    bench_release(b, a.haystack);
    a.haystack = NULL;
  }
  bench_release(b, a.needles);
  bench_release(b, a.lower);
  bench_release(b, a.upper);
}

/* The first position whose key is >= q (upper 0) or > q (upper 1). */
static uint32_t cpu_bound(const uint32_t *keys, size_t n, uint32_t q, int upper) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < q || (upper && keys[mid] == q))
      lo = mid + 1;
    else
      hi = mid;
  }
  return (uint32_t)lo;
}

/* uint32 needles below 2^21 (half of them absent) in a sorted haystack of
 * the input below 2^20 (many repeated keys): the lower bounds, and with
 * equal_range the upper ones too, compared with a CPU binary search. */
static int check_bounds(struct bench_check *c, int equal_range) {
  const size_t n = c->n;
  uint32_t *keys = check_keys(c, 1u << 20, 1), *needles = check_host(c, n * 4);
  uint32_t *lower = check_host(c, n * 4), *upper = check_host(c, n * 4);
  if (!keys || !needles || !lower || !upper) return 0;
  for (size_t i = 0; i < n; ++i)
    needles[i] = c->host[(i * 7919) % n] % (1u << 21);
  struct search_arg a;
  memset(&a, 0, sizeof a);
  a.equal_range = equal_range, a.type = CLPRIM_UINT32, a.haystack_n = n, a.n = n;
  a.haystack = check_buffer(c, n * 4, keys), a.needles = check_buffer(c, n * 4, needles);
  a.lower = check_buffer(c, n * 4, NULL), a.upper = check_buffer(c, n * 4, NULL);
  if (!a.haystack || !a.needles || !a.lower || !a.upper || !check_ok(c, call_search(c->ctx, &a)) ||
      !check_read(c, a.lower, n * 4, lower) ||
      (equal_range && !check_read(c, a.upper, n * 4, upper)))
    return 0;
  for (size_t i = 0; i < n; ++i)
    if (lower[i] != cpu_bound(keys, n, needles[i], 0) ||
        (equal_range && upper[i] != cpu_bound(keys, n, needles[i], 1)))
      return 0;
  return 1;
}
static int check_lower_bound(struct bench_check *c) {
  return check_bounds(c, 0);
}
static int check_equal_range(struct bench_check *c) {
  return check_bounds(c, 1);
}

static const struct bench_op ops[] = {
    {"lower_bound", 0x3Fu,
     "n random needles in sorted haystacks of 2^20 and of n elements, uint32 positions",
     check_lower_bound},
    {"equal_range", 0x3Fu, "as lower_bound, both bounds", check_equal_range},
};

static clprim_status startup_lower_bound(const struct bench_startup_inputs *in) {
  return clprim_lower_bound(in->ctx, in->n, CLPRIM_FLOAT, clprim_buf(in->in), in->n,
                            clprim_buf(in->in), 0, clprim_buf(in->out));
}

static const struct bench_startup startup[] = {{"lower_bound", startup_lower_bound}};

const struct bench_family bench_search = {
    "search", ops, BENCH_COUNT(ops), run_search, startup, BENCH_COUNT(startup),
    "a work-item per needle: binary search of a sample of the haystack in local memory, "
    "then of the haystack",
    NULL,
    "a work-item per contiguous share of the needles: binary search of a sample of the "
    "haystack, then of the haystack"};
