/* search.cl: vectorised binary search (lower bound, upper bound, equal
 * range) of needles in a sorted haystack, for the search family
 * (src/search.c).
 *
 * Elements compare by their order keys (internal/keys.h: key_of, so -0.0
 * equals +0.0 and every NaN is one key above +inf), xor flip: 0 for an
 * ascending haystack, KEY_MAX for a descending one (the complement reverses
 * the order), as sort.cl orders keys.
 *
 * search_bounds: one work-item per needle (a grid-stride loop; on the cpu
 * path, one work-item per work-group and a share of the needles). Each
 * work-group first copies a sample of the haystack into local memory: the
 * keys of elements (j + 1) * step - 1 for j < samples, step = n / (SAMPLES
 * + 1) + 1, so samples = n / step <= SAMPLES and the sample covers the
 * haystack evenly (every element when n <= SAMPLES). A needle is searched
 * in the sample first: c samples are ordered before it, so its bound lies
 * in [c * step, (c + 1) * step - 1] (up to n for the last block), which
 * one binary search over global memory of about log2(step) reads finishes.
 * The lower bound is the first element not ordered before the needle
 * (key >= the needle's), the upper bound the first ordered after it
 * (key > the needle's). Whatever the haystack holds, results lie in
 * [0, n].
 *
 * Build options: -DT (element type; a signed integer type builds as the
 * unsigned one, its sign bit in flip: src/core/keys.c) -DT_FLOAT -DKEY_BITS=32|64,
 * -DIDX_T=uint|ulong (the results), -DWG (work-group size),
 * -DSAMPLES (the most haystack keys in local memory). */
#ifndef T
#define T uint
#define T_FLOAT 0
#define KEY_BITS 32
#endif
#ifndef IDX_T
#define IDX_T uint
#endif
#ifndef WG
#define WG 256
#endif
#ifndef SAMPLES
#define SAMPLES 1024
#endif
#include "internal/keys.h"
#ifdef CLPRIM_CPU
#include "internal/cpu.h"
#endif

/* The number of the first `count` keys of sorted that come before key: those
 * < key (upper = 0) or <= key (upper = 1). */
CLPRIM_INLINE uint local_rank(__local const KEY *sorted, uint count, KEY key, int upper) {
  uint lo = 0, hi = count;
  while (lo < hi) {
    const uint mid = lo + (hi - lo) / 2;
    const KEY k = sorted[mid];
    if (k < key || (upper && k == key))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The bound of key in haystack[lo, hi], where hi is n or an element known
 * not to come before key: the first position whose key is >= key (upper =
 * 0) or > key (upper = 1). */
CLPRIM_INLINE ulong global_bound(__global const T *haystack, ulong lo, ulong hi, KEY key, KEY flip,
                                 int upper) {
  while (lo < hi) {
    const ulong mid = lo + (hi - lo) / 2;
    const KEY k = key_of(haystack[mid]) ^ flip;
    if (k < key || (upper && k == key))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The bound of one needle: its block from the sample, then the haystack. */
CLPRIM_INLINE ulong bound_of(__global const T *haystack, ulong n, __local const KEY *sample,
                             uint samples, ulong step, KEY key, KEY flip, int upper) {
  const ulong c = local_rank(sample, samples, key, upper);
  const ulong lo = c * step;
  const ulong hi = c < samples ? lo + step - 1 : n;
  return global_bound(haystack, lo, hi, key, flip, upper);
}

#ifdef KERNEL_search_bounds
/* lower / upper: the results (want bit 0: lower bounds, bit 1: upper
 * bounds; an output not wanted is bound to the other's buffer and not
 * written). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
search_bounds(__global const T *haystack, ulong n, __global const T *needles, ulong needles_n,
              KEY flip, int want, __global IDX_T *lower, __global IDX_T *upper) {
  __local KEY sample[SAMPLES];
  const ulong step = n / (SAMPLES + 1) + 1;
  const uint samples = (uint)(n / step);
  for (uint j = get_local_id(0); j < samples; j += WG)
    sample[j] = key_of(haystack[(j + 1) * step - 1]) ^ flip;
  barrier(CLK_LOCAL_MEM_FENCE);
#ifdef CLPRIM_CPU /* one work-item a work-group: a contiguous share of the needles each */
  ulong first, end;
  cpu_share(needles_n, 1, &first, &end);
  for (ulong i = first; i < end; ++i) {
#else
  for (ulong i = get_global_id(0); i < needles_n; i += get_global_size(0)) {
#endif
    const KEY key = key_of(needles[i]) ^ flip;
    if (want & 1) lower[i] = (IDX_T)bound_of(haystack, n, sample, samples, step, key, flip, 0);
    if (want & 2) upper[i] = (IDX_T)bound_of(haystack, n, sample, samples, step, key, flip, 1);
  }
}
#endif
