/* merge.cl: the stable merge of two sorted runs by merge path (Green,
 * McColl and Bader, "GPU merge path", 2012), for the merge family
 * (src/merge.c) and clprim_mpi's sample sort, which merges the sorted
 * pieces a rank received.
 *
 * The merged output of runs a (na keys) and b (nb keys) is cut into tiles
 * of TILE outputs. merge_split finds, for each tile's first output d, how
 * many of the first d outputs come from a: a binary search along the cross
 * diagonal d. merge_tiles has one work-group merge one tile: the tile's keys
 * of both runs to local memory, the same search per work-item for its
 * ITEMS outputs (an odd number keeps the work-items' strides through local
 * memory off each other's banks), then a coalesced store (and, with values,
 * each output's value fetched from where its key came from).
 *
 * Keys compare by key_of (internal/keys.h: the order of every family, -0.0
 * equal to +0.0, every NaN above +inf) xor flip (0 ascending, KEY_MAX
 * descending: the complement reverses the order), and a's key wins ties,
 * so the merge is stable: equal keys of a come first, then b's, each in its
 * own order. Keys and values are moved as they are (the bits of -0.0 and of
 * each NaN stay).
 *
 * Whatever the runs hold (unsorted runs too), each tile reads inside both
 * runs and writes exactly its outputs: merge_tiles clamps the splits to the
 * ones a tile can have.
 *
 * Runs and the output start at element offsets (a_at, b_at, out_at: runs
 * of one buffer for clprim_mpi; 0 for the merge family, whose ranges the
 * core gives as buffers of their own); values at the same offsets as their
 * keys.
 *
 * Build options: -DT -DT_FLOAT -DKEY_BITS=32|64 (the keys; a signed integer
 * type builds as the unsigned one, its sign bit in flip: src/core/keys.c),
 * -DV=uint|ulong (the values' bits; none: keys alone), -DWG (work-group
 * size), -DITEMS (outputs per work-item). */
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 11
#endif
#define TILE (WG * ITEMS)

#include "internal/keys.h"

/* The outputs of a tile, of `tiles`: TILE, but on the cpu path (one
 * work-item a tile, as many tiles as the host makes shares) an even share
 * of the total in multiples of 64. */
#ifdef CLPRIM_CPU
#include "internal/cpu.h"
#define TILE_OF(total, tiles) cpu_per((total), 64, (tiles))
#else
#define TILE_OF(total, tiles) ((ulong)TILE)
#endif

/* How many of the first d outputs come from a: the smallest i in
 * [max(0, d - nb), min(d, na)] with a[i] ordered after b[d - 1 - i] (a[i]
 * goes after the b key that it does not beat), over the runs' elements in
 * global memory (merge_path_local below: over a tile). A difference that
 * may be negative is taken as signed (sizes are below 2^63) with the
 * built-in max: the unsigned "d > nb ? d - nb : 0" becomes a
 * saturating-subtract intrinsic that Oclgrind 21.10 cannot run. */
CLPRIM_INLINE ulong merge_path_global(__global const T *a, ulong na, __global const T *b, ulong nb,
                                      ulong d, KEY flip) {
  ulong lo = (ulong)max((long)d - (long)nb, 0L), hi = min(d, na);
  while (lo < hi) {
    const ulong mid = (lo + hi) / 2;
    if ((key_of(a[mid]) ^ flip) <= (key_of(b[d - 1 - mid]) ^ flip))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
/* splits[t] for the tiles t = 0 .. tiles (the last: na, the end). */
#ifdef KERNEL_merge_split
__kernel void merge_split(__global const T *a, ulong a_at, ulong na, __global const T *b,
                          ulong b_at, ulong nb, KEY flip, __global ulong *splits, ulong tiles) {
  const ulong t = get_global_id(0);
  if (t > tiles) return;
  const ulong total = na + nb, tile = TILE_OF(total, tiles);
  const ulong d = t * tile < total ? t * tile : total;
  splits[t] = merge_path_global(a + a_at, na, b + b_at, nb, d, flip);
}
#endif

/* A tile keeps each element as its raw key, key_of_bits of its bits:
 * ordered as the element, and turned back into the same bits at the store
 * by value_of_key (-0.0 and NaN payloads kept). Merging compares canonical keys, key_of's:
 * every NaN (raw keys above +inf's or below -inf's) is KEY_MAX, and -0.0
 * (raw KEY_SIGN - 1) is +0.0 (KEY_SIGN). Integers' raw keys are their
 * keys. */
#if T_FLOAT
#if KEY_BITS == 32
#define MERGE_INF_KEY 0xFF800000u /* +inf's key; -inf's is its complement */
#else
#define MERGE_INF_KEY 0xFFF0000000000000ul
#endif
#endif
CLPRIM_INLINE KEY merge_canon(KEY raw) {
#if T_FLOAT
  if (raw > MERGE_INF_KEY || raw < ~MERGE_INF_KEY) return KEY_MAX;
  return raw == KEY_SIGN - 1 ? KEY_SIGN : raw;
#else
  return raw;
#endif
}

/* merge_path_global over a tile's raw keys in local memory (flip: the
 * order's, applied to canonical keys). */
CLPRIM_INLINE uint merge_path_local(__local const KEY *a, uint na, __local const KEY *b, uint nb,
                                    uint d, KEY flip) {
  uint lo = (uint)max((int)d - (int)nb, 0), hi = min(d, na);
  while (lo < hi) {
    const uint mid = (lo + hi) / 2;
    if ((merge_canon(a[mid]) ^ flip) <= (merge_canon(b[d - 1 - mid]) ^ flip))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Tile g's outputs [d0, d1) and its piece of a, [i0, i1) (of b: [d0 - i0,
 * d1 - i1)). i0 is in [max(0, d0 - nb), min(d0, na)] (merge_path_global's
 * range); i1 is clamped to the ends that keep both pieces inside their
 * runs, which sorted runs meet anyway. */
CLPRIM_INLINE void tile_runs(__global const ulong *splits, ulong g, ulong tile, ulong na, ulong nb,
                             ulong *d0, ulong *d1, ulong *i0, ulong *i1) {
  const ulong total = na + nb;
  *d0 = min(g * tile, total), *d1 = min(*d0 + tile, total);
  *i0 = splits[g];
  const ulong lo1 = (ulong)max((long)*d1 - (long)nb, (long)*i0);
  const ulong hi1 = min(*i0 + (*d1 - *d0), na);
  const ulong i = splits[g + 1];
  *i1 = i < lo1 ? lo1 : i > hi1 ? hi1 : i;
}

#ifdef KERNEL_merge_tiles
#ifdef CLPRIM_CPU
/* The cpu path: work-item g merges its tile from the runs in global memory,
 * one output at a time (elements and values moved as they are). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
merge_tiles(__global const T *a, ulong a_at, ulong na, __global const T *b, ulong b_at, ulong nb,
            KEY flip, __global const ulong *splits, __global T *out, ulong out_at
#ifdef V
            ,
            __global const V *va, __global const V *vb, __global V *vout
#endif
) {
  const ulong g = get_group_id(0);
  ulong d0, d1, ia, ea;
  tile_runs(splits, g, TILE_OF(na + nb, get_num_groups(0)), na, nb, &d0, &d1, &ia, &ea);
  ulong ib = d0 - ia;
  const ulong eb = d1 - ea;
  a += a_at, b += b_at, out += out_at;
#ifdef V
  va += a_at, vb += b_at, vout += out_at;
#endif
  ulong d = d0;
  if (ia < ea && ib < eb) {
    /* Both pieces hold keys: each step takes the head that goes first,
     * without a branch (loads clamped to the pieces' last elements). */
    T xa = a[ia], xb = b[ib];
    KEY ka = key_of(xa) ^ flip, kb = key_of(xb) ^ flip;
    for (; ia < ea && ib < eb; ++d) {
      const int ta = ka <= kb;
      out[d] = ta ? xa : xb;
#ifdef V
      vout[d] = ta ? va[ia] : vb[ib];
#endif
      ia += ta, ib += 1 - ta;
      xa = a[min(ia, ea - 1)], xb = b[min(ib, eb - 1)];
      ka = key_of(xa) ^ flip, kb = key_of(xb) ^ flip;
    }
  }
  for (; ia < ea; ++d, ++ia) { /* what is left of one piece */
    out[d] = a[ia];
#ifdef V
    vout[d] = va[ia];
#endif
  }
  for (; ib < eb; ++d, ++ib) {
    out[d] = b[ib];
#ifdef V
    vout[d] = vb[ib];
#endif
  }
}
#else
/* out[out_at + d] for the outputs d of work-group g's tile (values to
 * vout[out_at + d] with -DV). The tile's raw keys go to local memory, each
 * work-item merges its ITEMS outputs in registers (raw keys, and with
 * values their positions in the tile), writes them back in place, and
 * the work-group stores them coalesced (values fetched from their runs by
 * position). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
merge_tiles(__global const T *a, ulong a_at, ulong na, __global const T *b, ulong b_at, ulong nb,
            KEY flip, __global const ulong *splits, __global T *out, ulong out_at
#ifdef V
            ,
            __global const V *va, __global const V *vb, __global V *vout
#endif
) {
  __local KEY s[TILE];
#ifdef V
  __local uint from[TILE]; /* each output's position in the tile */
#endif
  const uint lid = (uint)get_local_id(0);
  const ulong g = get_group_id(0);
  ulong d0, d1, i0, i1;
  tile_runs(splits, g, TILE, na, nb, &d0, &d1, &i0, &i1);
  const ulong j0 = d0 - i0; /* the tile's first element of b */
  const uint la = (uint)(i1 - i0), len = (uint)(d1 - d0), lb = len - la;
  __global const T *ta = a + a_at + i0, *tb = b + b_at + j0;
  for (uint k = lid; k < len; k += WG)
    s[k] = key_of_bits(AS_KEY(k < la ? ta[k] : tb[k - la]));
  barrier(CLK_LOCAL_MEM_FENCE);
  /* This work-item's outputs [dl, dl + ITEMS) of the tile. */
  const uint dl = lid * ITEMS < len ? lid * ITEMS : len;
  uint ia = merge_path_local(s, la, s + la, lb, dl, flip), ib = dl - ia;
  KEY v[ITEMS];
#ifdef V
  uint src[ITEMS];
#endif
#pragma unroll
  for (uint e = 0; e < ITEMS; ++e) {
    const int take_a = ib >= lb || (ia < la && (merge_canon(s[ia]) ^ flip) <=
                                                   (merge_canon(s[la + ib]) ^ flip));
    const uint at = take_a ? (ia < la ? ia : 0) : la + (ib < lb ? ib : 0);
    v[e] = s[at];
#ifdef V
    src[e] = at;
#endif
    if (take_a)
      ++ia;
    else
      ++ib;
  }
  barrier(CLK_LOCAL_MEM_FENCE); /* every key read: the outputs take their place */
#pragma unroll
  for (uint e = 0; e < ITEMS; ++e)
    if (dl + e < len) {
      s[dl + e] = v[e];
#ifdef V
      from[dl + e] = src[e];
#endif
    }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = lid; k < len; k += WG) {
    out[out_at + d0 + k] = value_of_key(s[k]);
#ifdef V
    const uint f = from[k];
    vout[out_at + d0 + k] = f < la ? va[a_at + i0 + f] : vb[b_at + j0 + (f - la)];
#endif
  }
}
#endif
#endif
