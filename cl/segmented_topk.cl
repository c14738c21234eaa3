/* segmented_topk.cl: top-k and selection by rank per segment
 * (clprim_segmented_topk, clprim_batched_topk, clprim_segmented_nth_element,
 * clprim_batched_nth_element), driven by src/segmented_topk.c.
 *
 * One work-group per segment, for segments of up to `longest` elements
 * (longer ones are skipped here: the host runs the device-wide top-k or
 * selection on them). The work-group finds the key of the wanted rank by
 * MSD radix selection, 8 bits per pass over the segment: a local histogram
 * of the digit among the keys that share the digits chosen so far, then the
 * bucket that holds the rank. Top-k then walks the segment once in input
 * order and writes the keys beyond that key plus the first ones equal to it
 * (ties to the lowest index), so each row comes out in input order.
 *
 * Keys are cl/internal/keys.h's (-0.0 equals +0.0, NaN above +inf); for the
 * largest the keys are complemented, so both directions take the smallest.
 * Segments are [begins[s], ends[s]) (checked on the host's request by
 * seg_topk_check first), or rows: [s row_length, (s + 1) row_length) when
 * row_length is not 0.
 *
 * Build options: clprim__nth_options (src/nth_element.c): -DT, -DT_FLOAT,
 * -DT_SIGNED, -DKEY_BITS, -DWG (a power of two). */
#include "internal/keys.h"
#include "internal/segments.h"

#ifndef WG
#define WG 256
#endif
#define SEG_RADIX 256
#define SEG_PASSES (KEY_BITS / 8)

/* mode bits (src/segmented_topk.c) */
#define SEG_SMALLEST 1u  /* the k smallest (else largest) */
#define SEG_INDEX64 2u   /* ulong indices */
#define SEG_VALUES 4u    /* write values */
#define SEG_INDICES 8u   /* write indices */
#define SEG_BOUNDS 16u   /* write each row's output bounds (for the sort after) */

CLPRIM_INLINE T seg_value_of_key(KEY k) {
#if T_FLOAT
  return CLPRIM_CAT(as_, T)(CLPRIM_FLOAT_BITS_OF_KEY(k, KEY_SIGN));
#elif T_SIGNED
  return CLPRIM_CAT(as_, T)(CLPRIM_KEY_OF_SIGNED_BITS(k, KEY_SIGN));
#else
  return k;
#endif
}

/* Segment s's bounds [*b, *e); empty when it is long (the host runs those). */
CLPRIM_INLINE void seg_bounds(__global const ulong *begins, __global const ulong *ends,
                              ulong row_length, ulong s, ulong longest, ulong *b, ulong *e) {
  if (row_length) {
    *b = s * row_length, *e = *b + row_length;
  } else {
    *b = begins[s], *e = ends[s];
  }
  if (*e - *b > longest) *e = *b; /* long: not here */
}

/* The key (complemented with flip) of rank r among those of [b, e), found by
 * the work-group; *r_out: its rank among the keys equal to it. hist holds
 * SEG_RADIX counts, scratch CLPRIM_WG_SCRATCH(WG) words, shared 2. Every
 * work-item returns the same. */
CLPRIM_INLINE KEY seg_radix_select(__global const T *in, ulong b, ulong e, KEY flip, uint r,
                                   __local uint *hist, __local uint *scratch,
                                   __local uint *shared, uint *r_out) {
  const uint lid = (uint)get_local_id(0);
  KEY prefix = 0, mask = 0;
  for (uint pass = 0; pass < SEG_PASSES; ++pass) {
    const uint shift = KEY_BITS - 8 * (pass + 1);
    for (uint j = lid; j < SEG_RADIX; j += WG) hist[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong i = b + lid; i < e; i += WG) {
      const KEY key = key_of(in[i]) ^ flip;
      if ((key & mask) == prefix) atomic_inc(&hist[(uint)(key >> shift) & (SEG_RADIX - 1)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* The bucket whose counts before it are <= r < those up to it. */
    uint before = 0;
    for (uint base = 0; base < SEG_RADIX; base += WG) {
      const uint j = base + lid, c = j < SEG_RADIX ? hist[j] : 0u;
      uint total;
      const uint excl = before + clprim_wg_scan_excl_add_uint(c, scratch, &total);
      if (c && excl <= r && r < excl + c) shared[0] = j, shared[1] = excl;
      before += total;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint bucket = shared[0];
    r -= shared[1];
    prefix |= (KEY)bucket << shift;
    mask |= (KEY)(SEG_RADIX - 1) << shift;
    barrier(CLK_LOCAL_MEM_FENCE); /* shared and hist are read before the next pass writes */
  }
  *r_out = r;
  return prefix;
}

#ifdef KERNEL_seg_topk_check
/* The offsets' check (internal/segments.h): bad ones, and the long ones
 * (their ids and bounds) for the host. */
__kernel void seg_topk_check(__global const ulong *begins, __global const ulong *ends,
                             ulong segments, ulong n, ulong longest, __global uint *info,
                             __global uint *long_ids, __global ulong *long_bounds) {
  const ulong s = get_global_id(0);
  if (s < segments) clprim_check_segment(begins, ends, s, n, longest, info, long_ids, long_bounds);
}
#endif

#ifdef KERNEL_seg_nth
/* out[s]: the element of rank min(k, length - 1) of segment s (the
 * canonical value of its key: +0.0 for zeros, one NaN); empty segments
 * write nothing. */
__kernel void seg_nth(__global const T *in, __global const ulong *begins,
                      __global const ulong *ends, ulong row_length, ulong segments, ulong k,
                      ulong longest, __global T *out) {
  __local uint hist[SEG_RADIX], scratch[CLPRIM_WG_SCRATCH(WG)], shared[2];
  for (ulong s = get_group_id(0); s < segments; s += get_num_groups(0)) {
    ulong b, e;
    seg_bounds(begins, ends, row_length, s, longest, &b, &e);
    if (b == e) continue; /* uniform in the work-group */
    const uint r = (uint)(k < e - b ? k : e - b - 1);
    uint r_eq;
    const KEY key = seg_radix_select(in, b, e, 0, r, hist, scratch, shared, &r_eq);
    if (get_local_id(0) == 0) out[s] = seg_value_of_key(key);
  }
}
#endif

#ifdef KERNEL_seg_topk
/* Row s of the outputs (from s k): the min(k, length) best of segment s
 * in input order, values and / or indices in the segment. With SEG_BOUNDS,
 * row_begins[s] and row_ends[s] get the row's written range (empty for a
 * long segment): the segments of the sort that follows. */
__kernel void seg_topk(__global const T *in, __global const ulong *begins,
                       __global const ulong *ends, ulong row_length, ulong segments, ulong k,
                       ulong longest, uint mode, __global T *values, __global uint *indices,
                       __global ulong *row_begins, __global ulong *row_ends) {
  __local uint hist[SEG_RADIX], scratch[CLPRIM_WG_SCRATCH(WG)], shared[2];
  const uint lid = (uint)get_local_id(0);
  const KEY flip = (mode & SEG_SMALLEST) ? (KEY)0 : KEY_MAX;
  for (ulong s = get_group_id(0); s < segments; s += get_num_groups(0)) {
    ulong b, e;
    seg_bounds(begins, ends, row_length, s, longest, &b, &e);
    const uint m = (uint)(k < e - b ? k : e - b); /* the row's results */
    const ulong row = s * k;
    if ((mode & SEG_BOUNDS) && lid == 0) row_begins[s] = row, row_ends[s] = row + m;
    if (m == 0) continue; /* uniform in the work-group */
    uint need;
    const KEY t = seg_radix_select(in, b, e, flip, m - 1, hist, scratch, shared, &need);
    ++need; /* the keys equal to t that are taken: the first `need` */
    /* One walk in input order, WG elements a step; a step's counts in one
     * scan: (equal << 16) | below (WG <= 512). */
    uint taken = 0, equal = 0;
    for (ulong first = b; first < e && taken < m; first += WG) {
      const ulong i = first + lid;
      T x = 0;
      uint below = 0, eq = 0;
      if (i < e) {
        x = in[i];
        const KEY key = key_of(x) ^ flip;
        below = key < t, eq = key == t;
      }
      uint total;
      const uint excl = clprim_wg_scan_excl_add_uint((eq << 16) | below, scratch, &total);
      const uint eq_room = need > equal ? need - equal : 0u; /* equal keys still to take */
      if (below || (eq && (excl >> 16) < eq_room)) {
        const uint eq_taken = min(excl >> 16, eq_room); /* taken equal keys before x */
        const ulong j = row + taken + (excl & 0xFFFFu) + eq_taken;
        if (mode & SEG_VALUES) values[j] = x;
        if (mode & SEG_INDICES) {
          if (mode & SEG_INDEX64)
            ((__global ulong *)indices)[j] = i - b;
          else
            indices[j] = (uint)(i - b);
        }
      }
      const uint eq_total = total >> 16;
      taken += (total & 0xFFFFu) + min(eq_total, eq_room);
      equal += eq_total;
    }
  }
}
#endif
