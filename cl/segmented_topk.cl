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
 * segments_check first), or rows: [s row_length, (s + 1) row_length) when
 * row_length is not 0.
 *
 * Build options: clprim__nth_options (src/engine/sample_select.c): -DT,
 * -DT_FLOAT, -DT_SIGNED, -DKEY_BITS (the host builds a signed integer type
 * as the unsigned one of its width, with SEG_SIGNED in the kernels' mode
 * argument), -DWG (a power of two; 1 on the cpu path, where
 * each work-item takes whole segments alone); -DSEG_SERIAL=1 on CPU
 * devices (seg_scan_excl); -DCLPRIM_OFFSETS_32=1 for uint32 offsets
 * (internal/segments.h). */
#include "internal/keys.h"
#include "internal/segments.h"
#include "internal/local_sort.h"

#ifndef WG
#define WG 256
#endif
#ifndef SEG_SERIAL
#define SEG_SERIAL 0
#endif
#define SEG_RADIX 256
#define SEG_PASSES (KEY_BITS / 8)

/* mode bits (src/segmented_topk.c) */
#define SEG_SMALLEST 1u  /* the k smallest (else largest) */
#define SEG_INDEX64 2u   /* ulong indices */
#define SEG_VALUES 4u    /* write values */
#define SEG_INDICES 8u   /* write indices */
#define SEG_SORT 16u     /* rows best first (and each row's bounds for the sort after) */
#define SEG_SIGNED 32u   /* T holds a signed integer's bits: its sign bit flips in keys */
#define SEG_SORT_CAP 1024 /* rows of at most this many are sorted by the work-group */
#define SEG_CAND 1024     /* keys that the selection gathers in local memory */

/* The work-group's exclusive sum of x, and *total. With SEG_SERIAL (CPU
 * devices, which run a work-group's work-items one after another) work-item
 * 0 adds the WG values up alone: three barriers and no loop around them.
 * The tree scan (log2(WG) steps of two barriers in a loop) made PoCL 3.1
 * generate seg_topk's code for 20 s (its work-group compiler replicates the
 * code between barriers in loops, and the size-independent form that
 * clGetProgramInfo's binaries need vectorises each copy). */
CLPRIM_INLINE uint seg_scan_excl(uint x, __local uint *scratch, uint *total) {
#if SEG_SERIAL
  const uint lid = (uint)get_local_id(0);
  scratch[lid] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0)
    for (uint j = 1; j < WG; ++j)
      scratch[j] += scratch[j - 1];
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint inclusive = scratch[lid];
  *total = scratch[WG - 1];
  barrier(CLK_LOCAL_MEM_FENCE); /* the next call writes scratch */
  return inclusive - x;
#else
  return clprim_wg_scan_excl_add_uint(x, scratch, total);
#endif
}

/* Segment s's bounds [*b, *e); empty when it is long (the host runs those). */
CLPRIM_INLINE void seg_bounds(__global const CLPRIM_OFFSET *begins,
                              __global const CLPRIM_OFFSET *ends, ulong row_length, ulong s, ulong longest, ulong *b, ulong *e) {
  if (row_length) {
    *b = s * row_length, *e = *b + row_length;
  } else {
    *b = clprim_offset_at(begins, s), *e = clprim_offset_at(ends, s);
  }
  if (*e - *b > longest) *e = *b; /* long: not here */
}

/* The key (complemented with flip) of rank r among those of [b, e), found by
 * the work-group; *r_out: its rank among the keys equal to it. hist holds
 * SEG_RADIX counts, scratch CLPRIM_WG_SCRATCH(WG) words, shared 4, cand
 * SEG_CAND keys. Once the keys still in play (those that share the digits
 * chosen so far) are few, the pass that counts them also gathers them in
 * cand, each work-item in its own column (cand[t WG + lid], at most
 * SEG_CAND / WG each; with an atomic cursor in local memory PoCL 3.1 lost
 * integer keys, Oclgrind found nothing), and the later passes read cand
 * instead of the segment; a column that overflows leaves the pass to the
 * segment. So a segment of up to SEG_CAND elements is read once, a longer
 * one with spread keys twice. column (WG words) holds each work-item's
 * count there: a private count live across the barriers made PoCL 5's
 * kernel compiler fail. Every work-item returns the same. */
#define SEG_COLUMN (SEG_CAND / WG) /* gathered keys per work-item */
#define SEG_OWN (WG < SEG_RADIX ? SEG_RADIX / WG : 1) /* buckets per work-item */
CLPRIM_INLINE KEY seg_radix_select(__global const T *in, ulong b, ulong e, KEY flip, uint r,
                                   __local uint *hist, __local uint *scratch,
                                   __local uint *shared, __local KEY *cand, __local uint *column,
                                   uint *r_out) {
  const uint lid = (uint)get_local_id(0);
  KEY prefix = 0, mask = 0;
  ulong in_play = e - b; /* keys that share the chosen digits */
  uint gathered = 0;     /* 1 once they are in cand (uniform) */
  for (uint pass = 0; pass < SEG_PASSES; ++pass) {
    const uint shift = KEY_BITS - 8 * (pass + 1);
    const uint gather = !gathered && in_play <= SEG_CAND; /* uniform */
    for (uint j = lid; j < SEG_RADIX; j += WG) hist[j] = 0;
    if (lid == 0) shared[2] = 0; /* a column overflowed */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (gathered) {
      for (uint t = 0; t < column[lid]; ++t) {
        const KEY key = cand[t * WG + lid];
        if ((key & mask) == prefix) atomic_inc(&hist[(uint)(key >> shift) & (SEG_RADIX - 1)]);
      }
    } else {
      uint got = 0;
      /* Unrolled on GPUs, so that loads are in flight together (rows of
       * 32768, H100: top-100 3.42 -> 3.33 ms); CPU compilers take longer. */
#if !SEG_SERIAL
#pragma unroll 4
#endif
      for (ulong i = b + lid; i < e; i += WG) {
        const KEY key = key_of(in[i]) ^ flip;
        if ((key & mask) == prefix) {
          atomic_inc(&hist[(uint)(key >> shift) & (SEG_RADIX - 1)]);
          if (gather && got < SEG_COLUMN) cand[got * WG + lid] = key;
          got += gather;
        }
      }
      if (got > SEG_COLUMN) atomic_or(&shared[2], 1u);
      column[lid] = got;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* The bucket whose counts before it are <= r < those up to it: each
     * work-item sums its SEG_OWN buckets, one scan places the sums, and the
     * work-item whose sums hold rank r finds its bucket among them (one
     * bucket each on GPUs, WG >= SEG_RADIX). */
    const uint own = lid * SEG_OWN;
    uint mine = 0;
    for (uint j = own; j < own + SEG_OWN && j < SEG_RADIX; ++j) mine += hist[j];
    uint total;
    uint excl = seg_scan_excl(mine, scratch, &total);
    if (excl <= r && r < excl + mine) {
      for (uint j = own; j < own + SEG_OWN; ++j) {
        const uint c = hist[j];
        if (excl <= r && r < excl + c) shared[0] = j, shared[1] = excl, shared[3] = c;
        excl += c;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint bucket = shared[0];
    r -= shared[1];
    prefix |= (KEY)bucket << shift;
    mask |= (KEY)(SEG_RADIX - 1) << shift;
    if (gather && shared[2] == 0) gathered = 1; /* cand holds this pass's keys */
    if (!gathered) in_play = shared[3];
    barrier(CLK_LOCAL_MEM_FENCE); /* shared and hist are read before the next pass writes */
  }
  *r_out = r;
  return prefix;
}


#ifdef KERNEL_seg_nth
/* out[s]: the element of rank min(k, length - 1) of segment s (the
 * canonical value of its key: +0.0 for zeros, one NaN); empty segments
 * write nothing. mode: SEG_SIGNED or 0. */
__kernel void seg_nth(__global const T *in, __global const CLPRIM_OFFSET *begins,
                      __global const CLPRIM_OFFSET *ends, ulong row_length, ulong segments, ulong k,
                      ulong longest, __global T *out, uint mode) {
  __local uint hist[SEG_RADIX], scratch[CLPRIM_WG_SCRATCH(WG)], shared[4];
  __local KEY cand[SEG_CAND];
  __local uint column[WG];
  const KEY sign = (mode & SEG_SIGNED) ? KEY_SIGN : (KEY)0;
  for (ulong s = get_group_id(0); s < segments; s += get_num_groups(0)) {
    ulong b, e;
    seg_bounds(begins, ends, row_length, s, longest, &b, &e);
    if (b == e) continue; /* uniform in the work-group */
    const uint r = (uint)(k < e - b ? k : e - b - 1);
    uint r_eq;
    const KEY key =
        seg_radix_select(in, b, e, sign, r, hist, scratch, shared, cand, column, &r_eq);
    if (get_local_id(0) == 0) out[s] = value_of_key(key ^ sign);
  }
}
#endif

#ifdef KERNEL_seg_topk
/* Output j of row `row`: value x and / or index i (in the segment). */
CLPRIM_INLINE void seg_put(__global T *values, __global uint *indices, uint mode, ulong j, T x,
                           ulong i) {
  if (mode & SEG_VALUES) values[j] = x;
  if (mode & SEG_INDICES) {
    if (mode & SEG_INDEX64)
      ((__global ulong *)indices)[j] = i;
    else
      indices[j] = (uint)i;
  }
}

/* Row s of the outputs (from s k): the m = min(k, length) best of segment
 * s, values and / or indices in the segment; in input order, or with
 * SEG_SORT best first (ties by index): rows of up to SEG_SORT_CAP sorted
 * here, in local memory (bitonic, on (key, index)); longer ones are left
 * to the segmented sort that follows, whose segments row_begins[s] and
 * row_ends[s] are (empty for the rows sorted here and for long segments). */
__kernel void seg_topk(__global const T *in, __global const CLPRIM_OFFSET *begins,
                       __global const CLPRIM_OFFSET *ends, ulong row_length, ulong segments, ulong k,
                       ulong longest, uint mode, __global T *values, __global uint *indices,
                       __global ulong *row_begins, __global ulong *row_ends) {
  __local uint hist[SEG_RADIX], scratch[CLPRIM_WG_SCRATCH(WG)], shared[4];
  __local KEY sort_keys[SEG_SORT_CAP]; /* also the selection's gathered keys (SEG_CAND) */
  __local ulong sort_index[SEG_SORT_CAP];
  __local uint column[WG];
  const uint lid = (uint)get_local_id(0);
  const KEY flip = ((mode & SEG_SMALLEST) ? (KEY)0 : KEY_MAX) ^
                   ((mode & SEG_SIGNED) ? KEY_SIGN : (KEY)0);
  for (ulong s = get_group_id(0); s < segments; s += get_num_groups(0)) {
    ulong b, e;
    seg_bounds(begins, ends, row_length, s, longest, &b, &e);
    const uint m = (uint)(k < e - b ? k : e - b); /* the row's results */
    const ulong row = s * k;
    const int here = (mode & SEG_SORT) && m <= SEG_SORT_CAP; /* sorted in local memory */
    if ((mode & SEG_SORT) && lid == 0) row_begins[s] = row, row_ends[s] = row + (here ? 0 : m);
    if (m == 0) continue; /* uniform in the work-group */
    uint need;
    const KEY t =
        seg_radix_select(in, b, e, flip, m - 1, hist, scratch, shared, sort_keys, column, &need);
    ++need; /* the keys equal to t that are taken: the first `need` */
    /* One walk in input order, WG elements a step; a step's counts in one
     * scan: (equal << 16) | below (WG <= 512). On GPUs each step loads the
     * next step's element before its scan, so that the load's latency
     * overlaps the scan's barriers (rows of 32768: the walk took 1.5 ms of
     * the 3.2, one latency per step). */
    uint taken = 0, equal = 0;
#if !SEG_SERIAL
    T x_next = b + lid < e ? in[b + lid] : (T)0;
#endif
    for (ulong first = b; first < e && taken < m; first += WG) {
      const ulong i = first + lid;
#if SEG_SERIAL
      const T x = i < e ? in[i] : (T)0;
#else
      const T x = x_next;
      if (i + WG < e) x_next = in[i + WG];
#endif
      KEY key = 0;
      uint below = 0, eq = 0;
      if (i < e) {
        key = key_of(x) ^ flip;
        below = key < t, eq = key == t;
      }
      uint total;
      const uint excl = seg_scan_excl((eq << 16) | below, scratch, &total);
      /* equal keys still to take (the built-in: Oclgrind cannot run the
       * llvm.usub.sat intrinsic that the compiler makes of a ?: form) */
      const uint eq_room = sub_sat(need, equal);
      if (below || (eq && (excl >> 16) < eq_room)) {
        const uint eq_taken = min(excl >> 16, eq_room); /* taken equal keys before x */
        const uint j = taken + (excl & 0xFFFFu) + eq_taken;
        if (here)
          sort_keys[j] = key, sort_index[j] = i - b;
        else
          seg_put(values, indices, mode, row + j, x, i - b);
      }
      const uint eq_total = total >> 16;
      taken += (total & 0xFFFFu) + min(eq_total, eq_room);
      equal += eq_total;
    }
    if (!here) continue; /* uniform */
    /* The row's (key, index) pairs sorted (internal/local_sort.h), padded to
     * a power of two with pairs that sort last, then the row from them. */
    uint size = 1;
    while (size < m) size <<= 1;
    for (uint j = m + lid; j < size; j += WG) sort_keys[j] = KEY_MAX, sort_index[j] = ~0ul;
    clprim_local_sort_pairs(sort_keys, sort_index, size);
    for (uint j = lid; j < m; j += WG) {
      const ulong i = sort_index[j];
      seg_put(values, indices, mode, row + j, (mode & SEG_VALUES) ? in[b + i] : (T)0, i);
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* the next row's walk writes sort_keys */
  }
}
#endif
