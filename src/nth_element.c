/* nth_element.c: selection by rank (clprim_nth_element, _approx,
 * clprim_quantiles, clprim_median in include/clprim/clprim.h): argument
 * checks, then the selection engine (src/engine/sample_select.c). */
#include "engine/sample_select.h"
#include "../cl/internal/layout.h"

#include <stdlib.h>
#include <string.h>

#define BASE NTH_BASE

static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t);
const struct clprim_family clprim__family_nth_element = {"nth_element", NULL, 0, NULL, 0, 0,
                                                         prebuild};

/* one_k: the call is nth_element or median, whose one rank is k. */
static clprim_status quantiles(clprim_context *ctx, size_t n, clprim_type type,
                               clprim_buffer in_range, const uint64_t *ranks, size_t count,
                               unsigned flags, clprim_value *values, clprim_buffer result_range,
                               int one_k) {
  cl_mem in, result = NULL;
  CLPRIM_CHECK(clprim__nth_check(ctx, n, type, in_range, flags, CLPRIM_NTH_REJECT_NAN, &in));
  if (!ranks) return clprim__invalid(ctx, "ranks is required");
  if (count == 0 || count > 0xFFFFFFFFu)
    return clprim__invalid(ctx, "count (%zu) is 0 or 2^32 or more", count);
  if (!values && !result_range.mem)
    return clprim__invalid(ctx, "no result is wanted (values and result are both NULL)");
  for (size_t r = 0; r < count; ++r)
    if (ranks[r] >= n) {
      if (one_k) /* nth_element's k */
        return clprim__invalid(ctx, "k (%llu) is not below n (%zu)", (unsigned long long)ranks[r],
                               n);
      return clprim__invalid(ctx, "ranks[%zu] (%llu) is not below n (%zu)", r,
                             (unsigned long long)ranks[r], n);
    }
  const size_t es = clprim_type_size(type);
  if (result_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "result", result_range, es, count, CLPRIM__OUT_ALL, &result));
  /* Distinct ranks, sorted; keys for them; then back in the caller's order. */
  uint64_t *sorted = malloc(count * 8), *keys = malloc(count * 8);
  unsigned char *bytes = malloc(count * es);
  clprim_status st = CLPRIM_SUCCESS;
  if (!sorted || !keys || !bytes) st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  size_t distinct = 0;
  if (st == CLPRIM_SUCCESS) {
    memcpy(sorted, ranks, count * 8);
    distinct = clprim__distinct_ranks(sorted, count);
    st = clprim__nth_select_ranks(ctx, type, in, 0, n, sorted, (unsigned)distinct, flags, 0, keys,
                                  NULL);
  }
  /* The caller's buffer first; host values only once it is written. */
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; ++r) {
    const clprim_value v =
        clprim__value_of_key(type, keys[clprim__rank_slot(sorted, distinct, ranks[r])]);
    memcpy(bytes + r * es, v.bytes, es);
  }
  if (st == CLPRIM_SUCCESS && result) st = clprim__write(ctx, result, 0, count * es, bytes, 1);
  for (size_t r = 0; st == CLPRIM_SUCCESS && values && r < count; ++r)
    values[r] = clprim__value_of_key(type, keys[clprim__rank_slot(sorted, distinct, ranks[r])]);
  free(sorted);
  free(keys);
  free(bytes);
  return st;
}

clprim_status clprim_quantiles(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                               const uint64_t *ranks, size_t count, unsigned flags,
                               clprim_value *values, clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "quantiles"));
  return clprim__call_end(ctx, quantiles(ctx, n, type, in, ranks, count, flags, values, result, 0));
}

clprim_status clprim_nth_element(clprim_context *ctx, size_t n, clprim_type type,
                                 clprim_buffer in, uint64_t k, unsigned flags,
                                 clprim_value *value, clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "nth_element"));
  return clprim__call_end(ctx, quantiles(ctx, n, type, in, &k, 1, flags, value, result, 1));
}

clprim_status clprim_median(clprim_context *ctx, size_t n, clprim_type type, clprim_buffer in,
                            unsigned flags, clprim_value *value, clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "median"));
  const uint64_t k = n ? (n - 1) / 2 : 0;
  return clprim__call_end(ctx, quantiles(ctx, n, type, in, &k, 1, flags, value, result, 1));
}

/* The nearest rank to q (n - 1), a tie (x.5) to the lower one, so that
 * clprim_quantile_rank(n, 0.5) is clprim_median's rank (n - 1) / 2. */
uint64_t clprim_quantile_rank(uint64_t n, double q) {
  if (n == 0 || !(q > 0.0)) return 0; /* also NaN */
  if (q >= 1.0) return n - 1;
  const double x = q * (double)(n - 1);
  uint64_t r = (uint64_t)x; /* floor: x >= 0 */
  if (x - (double)r > 0.5) ++r;
  return r < n ? r : n - 1;
}

static clprim_status nth_approx(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in_range, uint64_t k, unsigned flags,
                                clprim_value *value, uint64_t *rank_error,
                                clprim_buffer result_range) {
  cl_mem in, result = NULL;
  CLPRIM_CHECK(clprim__nth_check(ctx, n, type, in_range, flags, CLPRIM_NTH_REJECT_NAN, &in));
  if (k >= n)
    return clprim__invalid(ctx, "k (%llu) is not below n (%zu)", (unsigned long long)k, n);
  if (!value && !result_range.mem)
    return clprim__invalid(ctx, "no result is wanted (value and result are both NULL)");
  const size_t es = clprim_type_size(type);
  if (result_range.mem)
    CLPRIM_CHECK(clprim__range(ctx, "result", result_range, es, 1, CLPRIM__OUT_ALL, &result));
  uint64_t key = 0, error = 0;
  /* Small inputs are answered exactly (one work-group sorts them). */
  CLPRIM_CHECK(clprim__nth_select_ranks(ctx, type, in, 0, n, &k, 1, flags, n > BASE, &key, &error));
  const clprim_value v = clprim__value_of_key(type, key);
  if (result) CLPRIM_CHECK(clprim__write(ctx, result, 0, es, v.bytes, 1));
  if (value) *value = v;
  if (rank_error) *rank_error = error;
  return CLPRIM_SUCCESS;
}

clprim_status clprim_nth_element_approx(clprim_context *ctx, size_t n, clprim_type type,
                                        clprim_buffer in, uint64_t k, unsigned flags,
                                        clprim_value *value, uint64_t *rank_error,
                                        clprim_buffer result) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "nth_element_approx"));
  return clprim__call_end(ctx,
                          nth_approx(ctx, n, type, in, k, flags, value, rank_error, result));
}

/* Dry runs (core/prebuild.c): one work-group and the levels, NaNs counted
 * or not, several ranks, the approximation. */
static void prebuild(clprim_context *ctx, const struct clprim_dry *d, clprim_type t) {
  const size_t mid = (size_t)1 << 16, sizes[3] = {1, mid, d->n};
  const clprim_buffer in = clprim_buf(d->in), none = clprim_buf(NULL);
  const uint64_t ranks[2] = {1, mid / 2};
  clprim_value v, values[2];
  uint64_t u;
  for (int s = 0; s < 3; ++s) {
    clprim_nth_element(ctx, sizes[s] + 1, t, in, 0, 0, &v, none);
    clprim_nth_element(ctx, sizes[s] + 1, t, in, 0, CLPRIM_NTH_REJECT_NAN, &v, none);
  }
  clprim_quantiles(ctx, mid, t, in, ranks, 2, 0, values, none);
  clprim_nth_element_approx(ctx, mid, t, in, mid / 2, 0, &v, &u, none);
}
