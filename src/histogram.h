/* histogram.h: the histogram engine of src/histogram.c (also dense
 * reduce-by-key). Not installed. */
#ifndef CLPRIM_HISTOGRAM_H
#define CLPRIM_HISTOGRAM_H

#include "core/core.h"

/* One histogram or dense reduce-by-key (reduce_by_key.c's dense call runs
 * the histogram engine): keys in [0, bins) (keys_mode) or values into even
 * bins over [lo, hi) (scale = bins / (hi - lo) in the values' type; range =
 * hi - lo for integers), optional values summed per bin. */
struct clprim_hist_call {
  int keys_mode;      /* keys in [0, bins) (else a value histogram) */
  clprim_type x_type; /* the keys' or values' type */
  clprim_type v_type; /* summed values' type, when values */
  size_t n, bins;
  clprim_value lo, hi, scale;
  uint64_t range;
  int keep_subnormals; /* float sums by compare-and-swap on every path */
  int exact;           /* CLPRIM_EXACT: float / double sums exact, rounded once */
  /* The caller's ranges: in; values (NULL mem: counts only); counts, sums
   * (either may be NULL, not both); outside_out (NULL mem, or outside_words
   * uint64 on the device). */
  clprim_buffer in_range, values_range, counts_range, sums_range, outside_range;
  uint64_t *outside; /* NULL, or outside_words words (keys: 1, even: 3) on the host */
  size_t outside_words;
  /* The ranges as the kernels get them (clprim__range), set by the check. */
  cl_mem in, values, counts, sums, outside_out;
};
/* Checks the call's arguments and runs it; the caller begins and ends the call. */
clprim_status clprim__histogram(clprim_context *ctx, struct clprim_hist_call *c);
/* The most bins that hist_local keeps in local memory, for counts (has_counts)
 * and / or sums of sum_size bytes (0: none); tests use it. */
size_t clprim__histogram_local_max(const clprim_context *ctx, int has_counts, size_t sum_size);
/* The most keys whose exact sums of v_type (float or double) hist_exact_local
 * keeps in local memory (CLPRIM_EXACT); tests use it. */
size_t clprim__histogram_exact_local_max(const clprim_context *ctx, clprim_type v_type);

#endif /* CLPRIM_HISTOGRAM_H */
