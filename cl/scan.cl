/* scan.cl: exclusive and inclusive prefix sums over tiles of WG * ITEMS
 * elements.
 *
 * Tile layout: work-items load and store the tile as rows of WG 4-vectors
 * (internal/tile.h), so each warp touches consecutive 16-byte vectors. The
 * tile passes through local memory (padded against bank conflicts) so that
 * each work-item then scans ITEMS consecutive elements, with one
 * clprim_wg_scan_excl_add_T per tile: subgroup scans on subgroup paths, the
 * Blelloch up-/down-sweep on the local path (the "load transpose" of CUB's
 * block loads).
 *
 * Two algorithms share the tile code:
 *  - reduce-then-scan, every path: scan_reduce writes one sum per tile, the
 *    host scans those sums (recursively, with the same kernels), then
 *    scan_tiles scans each tile from its offset. Reads the input twice.
 *  - single pass with decoupled look-back (internal/lookback.h), nv_ptx
 *    only: reads the input once.
 *
 * Scan by key (sbk_*, built with -DK_T): sums that restart where the key
 * changes; see its section below. Exact scans (xscan_*, CLPRIM_EXACT, built
 * with -DT_FLOAT=1): each prefix's exact sum rounded once; the last section.
 *
 * Build options: -DT=uint|ulong|float|double (signed integers use the
 * unsigned program: the bits are the same), -DT_BITS=32|64, -DWG, -DITEMS
 * (a multiple of 4), and for scan by key -DK_T (the keys' type, compared
 * with ==: signed integer keys use the unsigned program too). */
#ifndef T
#define T uint
#define T_BITS 32
#endif
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 8
#endif
#include "internal/tile.h"
/* Here, not only inside the path's and kernels' #ifs that include it: the
 * host inlines each internal header once, at its first include. */
#include "internal/layout.h"
#define TILE ((ulong)WG * ITEMS)
#define ROWS (ITEMS / 4)

#define VEC4 CLPRIM_CAT(T, 4)
#define LOAD4_FULL CLPRIM_CAT(load4_full_, T)
#define WG_SCAN CLPRIM_CAT(clprim_wg_scan_excl_add_, T)
#define WG_REDUCE CLPRIM_CAT(clprim_wg_reduce_add_, T)

/* Local-memory index of tile element i: one pad word per 32 keeps the
 * work-items' ITEMS-strided reads on distinct banks. */
#define PAD(i) ((i) + (i) / 32)
#define TILE_LOCAL PAD(WG * ITEMS)

/* Copies the tile starting at tile_first into local memory, zeros past n;
 * then gives this work-item its ITEMS consecutive elements. Full tiles move
 * as aligned 4-vectors (internal/tile.h), the last one element by element.
 * Contains barriers. */
CLPRIM_INLINE void load_tile(__global const T *in, ulong n, ulong tile_first, __local T *buf,
                             T *v) {
  const uint lid = (uint)get_local_id(0);
  const bool full = tile_first + TILE <= n;
#pragma unroll
  for (uint r = 0; r < ROWS; ++r) {
    const uint i = (r * WG + lid) * 4; /* tile-relative index of this vector */
    if (full) {
      const VEC4 q = LOAD4_FULL(in, tile_first + i);
      buf[PAD(i)] = q.s0;
      buf[PAD(i + 1)] = q.s1;
      buf[PAD(i + 2)] = q.s2;
      buf[PAD(i + 3)] = q.s3;
      continue;
    }
#pragma unroll
    for (uint c = 0; c < 4; ++c)
      buf[PAD(i + c)] = tile_first + i + c < n ? in[tile_first + i + c] : (T)0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (uint k = 0; k < ITEMS; ++k) v[k] = buf[PAD(lid * ITEMS + k)];
}

CLPRIM_INLINE T sum_items(const T *v) {
  T s = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) s += v[k];
  return s;
}

/* Scans v from `run`, puts the results back in local memory, and stores the
 * tile's elements below n with the same pattern as load_tile. Contains
 * barriers. */
CLPRIM_INLINE void store_tile(__global T *out, ulong n, ulong tile_first, __local T *buf, T *v,
                              T run, int inclusive) {
  const uint lid = (uint)get_local_id(0);
#pragma unroll
  for (uint k = 0; k < ITEMS; ++k) {
    T before = run;
    run += v[k];
    buf[PAD(lid * ITEMS + k)] = inclusive ? run : before;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const bool full = tile_first + TILE <= n;
#pragma unroll
  for (uint r = 0; r < ROWS; ++r) {
    const uint i = (r * WG + lid) * 4;
    if (full) {
      CLPRIM_STORE4(T, (VEC4)(buf[PAD(i)], buf[PAD(i + 1)], buf[PAD(i + 2)], buf[PAD(i + 3)]), out,
                    tile_first + i);
      continue;
    }
#pragma unroll
    for (uint c = 0; c < 4; ++c)
      if (tile_first + i + c < n) out[tile_first + i + c] = buf[PAD(i + c)];
  }
}

/* ------------------------------------------------------------ cpu path */
/* The cpu path (-DCLPRIM_CPU, launched with one work-item per work-group):
 * the same two kernels over CPU_TILE-element tiles, where work-item g takes
 * the g-th of get_global_size(0) contiguous shares of the tiles and writes
 * or reads one sum per share. A tile is 16 rows of 16 consecutive elements:
 * each row is scanned in fours (scan16), the rows' totals likewise, and
 * each element is carry + (rows before + row prefix), so a prefix is at
 * most 6 + 6 + 2 additions deep within its tile plus one per earlier tile
 * (docs/ACCURACY.md). */
#ifdef CLPRIM_CPU
#define CPU_TILE 256
#define VEC16 CLPRIM_CAT(T, 16)

#include "internal/cpu.h"

/* Tile t of [first, end) (256 elements, zeros past end) into x. */
CLPRIM_INLINE void cpu_load(__global const T *in, ulong first, ulong end, T *x) {
  if (first + CPU_TILE <= end) {
    for (int r = 0; r < 16; ++r) vstore16(vload16(r, in + first), r, x);
    return;
  }
  for (uint i = 0; i < CPU_TILE; ++i) x[i] = first + i < end ? in[first + i] : (T)0;
}

/* Inclusive prefix sums of v[0, 16) in place: each 4 in order, then each 4
 * from the last of the 4 before (at most 6 additions deep). Plain loops:
 * with 4 steps of vector shuffles (shuffle2) instead, scans of 2^22-2^24
 * floats took 2-4 times as long on PoCL 5 (16 cores). */
CLPRIM_INLINE void scan16(T *v) {
  for (int q = 0; q < 16; q += 4)
    for (int j = 1; j < 4; ++j) v[q + j] += v[q + j - 1];
  for (int q = 4; q < 16; q += 4) {
    const T c = v[q - 1];
    for (int j = 0; j < 4; ++j) v[q + j] += c;
  }
}

/* Scans the tile x (16 rows of 16; x is left with its rows' inclusive
 * sums) into y (inclusive or exclusive, from carry); returns its total. */
CLPRIM_INLINE T cpu_scan_tile(T *x, T *y, T carry, int inclusive) {
  T before[17];
  for (int r = 0; r < 16; ++r) scan16(x + 16 * r);
  for (int r = 0; r < 16; ++r) before[r + 1] = x[16 * r + 15];
  scan16(before + 1); /* before[r]: the rows before row r */
  before[0] = 0;
  for (int r = 0; r < 16; ++r) {
    const T b = before[r];
    if (inclusive) {
      for (int j = 0; j < 16; ++j) y[16 * r + j] = carry + (b + x[16 * r + j]);
    } else {
      y[16 * r] = carry + b;
      for (int j = 1; j < 16; ++j) y[16 * r + j] = carry + (b + x[16 * r + j - 1]);
    }
  }
  return before[16];
}

#ifdef KERNEL_scan_reduce
/* Step 1: the sum of each share, tile by tile (a tile's rows added as 16
 * lanes, 16 deep, then the lanes pairwise). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void scan_reduce(__global const T *in, ulong n, __global T *tile_sums) {
  ulong first, end;
  cpu_share(n, CPU_TILE, &first, &end);
  T s = 0;
  for (ulong t = first; t < end; t += CPU_TILE) {
    T x[CPU_TILE];
    cpu_load(in, t, end, x);
    VEC16 a = vload16(0, x);
    for (int r = 1; r < 16; ++r) a += vload16(r, x);
    const CLPRIM_CAT(T, 8) a8 = a.lo + a.hi;
    const VEC4 a4 = a8.lo + a8.hi;
    s += (a4.s0 + a4.s2) + (a4.s1 + a4.s3);
  }
  tile_sums[get_global_id(0)] = s;
}
#endif

#ifdef KERNEL_scan_tiles
/* Step 3 (or the whole scan with one share): each share from its offset. */
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void scan_tiles(__global const T *in, __global T *out, ulong n, __global const T *tile_offsets,
                int use_offsets, int inclusive) {
  ulong first, end;
  cpu_share(n, CPU_TILE, &first, &end);
  T carry = use_offsets ? tile_offsets[get_global_id(0)] : (T)0;
  for (ulong t = first; t < end; t += CPU_TILE) {
    T x[CPU_TILE], y[CPU_TILE];
    cpu_load(in, t, end, x);
    carry += cpu_scan_tile(x, y, carry, inclusive);
    if (t + CPU_TILE <= end) {
      for (int r = 0; r < 16; ++r) vstore16(vload16(r, y), r, out + t);
    } else {
      for (uint i = 0; t + i < end; ++i) out[t + i] = y[i];
    }
  }
}
#endif
#else /* the tile kernels of the other paths */

/* Reduce-then-scan, step 1: the sum of each tile (order does not matter here,
 * so no transpose). */
#ifdef KERNEL_scan_reduce
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_reduce(__global const T *in, ulong n, __global T *tile_sums) {
  __local T scratch[CLPRIM_WG_SCRATCH(WG)];
  const ulong tile_first = (ulong)get_group_id(0) * TILE;
  const uint lid = (uint)get_local_id(0);
  const bool full = tile_first + TILE <= n;
  T s = 0;
#pragma unroll
  for (uint r = 0; r < ROWS; ++r) {
    const ulong first = tile_first + (r * WG + lid) * 4;
    if (full) {
      const VEC4 q = LOAD4_FULL(in, first);
      s += (q.s0 + q.s1) + (q.s2 + q.s3);
      continue;
    }
#pragma unroll
    for (uint c = 0; c < 4; ++c)
      if (first + c < n) s += in[first + c];
  }
  T total = WG_REDUCE(s, scratch);
  if (lid == 0) tile_sums[get_group_id(0)] = total;
}
#endif

/* Reduce-then-scan, step 3 (or the whole scan of a single tile): scans each
 * tile, starting from tile_offsets[tile] when use_offsets is set. */
#ifdef KERNEL_scan_tiles
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_tiles(__global const T *in, __global T *out, ulong n, __global const T *tile_offsets,
                int use_offsets, int inclusive) {
  __local T scratch[CLPRIM_WG_SCRATCH(WG)];
  __local T buf[TILE_LOCAL];
  const ulong tile_first = (ulong)get_group_id(0) * TILE;
  T v[ITEMS];
  load_tile(in, n, tile_first, buf, v);
  T total;
  T run = WG_SCAN(sum_items(v), scratch, &total);
  if (use_offsets) run += tile_offsets[get_group_id(0)];
  store_tile(out, n, tile_first, buf, v, run, inclusive);
}
#endif
#endif /* CLPRIM_CPU */

/* ------------------------------------------------------------ scan by key */
/* Prefix sums of values that restart at each run head of the keys
 * (internal/heads.h: keys equal under ==). Work-item j of a tile takes ITEMS
 * consecutive keys and values (4-vector loads), notes its heads, and its
 * pair (f, s): whether it holds a head, and the sum after its last head (of
 * all its values if none). The work-group scans the pairs with the
 * segmented operator (f1, s1) + (f2, s2) = (f1 | f2, f2 ? s2 : s1 + s2)
 * (Hillis-Steele in local memory), which gives each work-item the sum it
 * continues from, and the tile's own pair. Across tiles:
 *  - nv_ptx, sbk_single_pass: decoupled look-back in which a tile holding a
 *    head publishes its sum after that head as an inclusive prefix at once
 *    (it does not depend on earlier tiles), so the plain sum look-back stops
 *    there and gives every tile the sum it continues from;
 *  - elsewhere: sbk_carry writes each tile's pair, sbk_carry_scan (one
 *    work-group) scans them, sbk_tiles scans each tile from its carry. */
#ifdef K_T
#include "internal/heads.h"
#define SBK_ROWS (ITEMS / 4)
#define K_VEC4 CLPRIM_CAT(K_T, 4)

/* A tile's pass: loads this work-item's ITEMS keys and values (4-vector
 * loads of its consecutive elements; through local memory, CUB's
 * warp-transposed loads, measured slower on the H100: 1.91 against 1.51
 * ms for 2^28 float values) and returns its heads (bit j). */
CLPRIM_INLINE uint sbk_load(__global const K_T *keys, __global const T *values, ulong n,
                            ulong first, T *x) {
  K_T k[ITEMS];
  if (first + ITEMS <= n) {
#pragma unroll
    for (uint r = 0; r < SBK_ROWS; ++r) {
      const K_VEC4 kv = ((__global const K_VEC4 *)keys)[first / 4 + r];
      const VEC4 xv = ((__global const VEC4 *)values)[first / 4 + r];
      k[4 * r] = kv.s0, k[4 * r + 1] = kv.s1, k[4 * r + 2] = kv.s2, k[4 * r + 3] = kv.s3;
      x[4 * r] = xv.s0, x[4 * r + 1] = xv.s1, x[4 * r + 2] = xv.s2, x[4 * r + 3] = xv.s3;
    }
  } else {
#pragma unroll
    for (uint j = 0; j < ITEMS; ++j) {
      k[j] = first + j < n ? keys[first + j] : (K_T)0;
      x[j] = first + j < n ? values[first + j] : (T)0;
    }
  }
  K_T prev = first > 0 && first <= n ? keys[first - 1] : k[0];
  uint heads = 0;
#pragma unroll
  for (uint j = 0; j < ITEMS; ++j) {
    heads |= (uint)(first + j < n && (first + j == 0 || !CLPRIM_SAME_RUN(prev, k[j]))) << j;
    prev = k[j];
  }
  return heads;
}

/* The work-group's segmented exclusive scan of the work-items' pairs (f, s):
 * *from_f / *from_s for this work-item (a head before it; the sum it
 * continues from, or from the start when *from_f is 0), and the whole
 * group's pair. Contains barriers. nv_ptx: each warp scans with shuffles
 * and the warps' totals meet in local memory; elsewhere Hillis-Steele in
 * local memory. */
#ifdef CLPRIM_PATH_NV_PTX
CLPRIM_INLINE void sbk_wg_scan(uint f, T s, __local uint *flags, __local T *sums, uint *from_f,
                               T *from_s, uint *all_f, T *all_s) {
  const uint lid = (uint)get_local_id(0), lane = lid & 31u, warp = lid >> 5;
#pragma unroll
  for (uint d = 1; d < 32; d <<= 1) {
    const uint pf = clprim_sg_shuffle_up_uint(f, d);
    const T ps = CLPRIM_CAT(clprim_sg_shuffle_up_, T)(s, d);
    if (lane >= d) {
      if (!f) s += ps;
      f |= pf;
    }
  }
  uint ef = clprim_sg_shuffle_up_uint(f, 1); /* the warp-exclusive pair */
  T es = CLPRIM_CAT(clprim_sg_shuffle_up_, T)(s, 1);
  if (lane == 0) ef = 0, es = 0;
  if (lane == 31) flags[warp] = f, sums[warp] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint pf = 0, tf = 0;
  T ps = 0, ts = 0;
  for (uint w = 0; w < WG / 32; ++w) {
    const uint wf = flags[w];
    const T ws = sums[w];
    if (w == warp) pf = tf, ps = ts;
    ts = wf ? ws : ts + ws;
    tf |= wf;
  }
  *from_f = pf | ef;
  *from_s = ef ? es : ps + es;
  *all_f = tf;
  *all_s = ts;
  barrier(CLK_LOCAL_MEM_FENCE);
}
#else
CLPRIM_INLINE void sbk_wg_scan(uint f, T s, __local uint *flags, __local T *sums, uint *from_f,
                               T *from_s, uint *all_f, T *all_s) {
  const uint lid = (uint)get_local_id(0);
  flags[lid] = f;
  sums[lid] = s;
  for (uint d = 1; d < WG; d <<= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint pf = lid >= d ? flags[lid - d] : 0u;
    const T ps = lid >= d ? sums[lid - d] : (T)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid >= d) {
      if (!flags[lid]) sums[lid] += ps;
      flags[lid] |= pf;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  *from_f = lid ? flags[lid - 1] : 0u;
  *from_s = lid ? sums[lid - 1] : (T)0;
  *all_f = flags[WG - 1];
  *all_s = sums[WG - 1];
  barrier(CLK_LOCAL_MEM_FENCE);
}

#endif

/* This work-item's pair from its heads and values, then sbk_wg_scan. */
CLPRIM_INLINE void sbk_scan_pairs(uint heads, const T *x, __local uint *flags, __local T *sums,
                                  uint *from_f, T *from_s, uint *tile_f, T *tile_s) {
  T s = 0;
#pragma unroll
  for (uint j = 0; j < ITEMS; ++j) s = ((heads >> j) & 1u) ? x[j] : s + x[j];
  sbk_wg_scan(heads != 0, s, flags, sums, from_f, from_s, tile_f, tile_s);
}

/* Scans this work-item's values from `run` (restarting at heads) and
 * stores them. */
CLPRIM_INLINE void sbk_store(__global T *out, ulong n, ulong first, uint heads, T *x, T run,
                             int inclusive) {
#pragma unroll
  for (uint j = 0; j < ITEMS; ++j) {
    const T before = ((heads >> j) & 1u) ? (T)0 : run;
    run = before + x[j];
    x[j] = inclusive ? run : before;
  }
  if (first + ITEMS <= n) {
#pragma unroll
    for (uint r = 0; r < SBK_ROWS; ++r)
      CLPRIM_STORE4(T, (VEC4)(x[4 * r], x[4 * r + 1], x[4 * r + 2], x[4 * r + 3]), out,
                    first + 4 * r);
  } else {
#pragma unroll
    for (uint j = 0; j < ITEMS; ++j)
      if (first + j < n) out[first + j] = x[j];
  }
}

#ifdef CLPRIM_CPU
#include "internal/cpu.h"
/* The cpu path: work-item g's share (cpu_share, whole runs of ITEMS
 * elements), ITEMS at a time; (f, s): a head in the share, and the sum
 * from its last head (or its start). */
CLPRIM_INLINE void sbk_share_pair(uint heads, const T *x, uint *f, T *s) {
  for (uint j = 0; j < ITEMS; ++j) *s = ((heads >> j) & 1u) ? x[j] : *s + x[j];
  *f |= heads != 0;
}
#endif

/* Elsewhere, step 1: each tile's pair. */
#ifdef KERNEL_sbk_carry
#ifdef CLPRIM_CPU
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void sbk_carry(__global const K_T *keys, __global const T *values, ulong n,
               __global uint *tile_flags, __global T *tile_sums) {
  ulong first, end;
  cpu_share(n, ITEMS, &first, &end);
  uint f = 0;
  T s = 0;
  for (ulong c = first; c < end; c += ITEMS) {
    T x[ITEMS];
    sbk_share_pair(sbk_load(keys, values, n, c, x), x, &f, &s);
  }
  tile_flags[get_global_id(0)] = f, tile_sums[get_global_id(0)] = s;
}
#else
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sbk_carry(__global const K_T *keys, __global const T *values, ulong n,
               __global uint *tile_flags, __global T *tile_sums) {
  __local uint flags[WG];
  __local T sums[WG];
  const ulong first = (ulong)get_group_id(0) * TILE + (ulong)get_local_id(0) * ITEMS;
  T x[ITEMS];
  const uint heads = sbk_load(keys, values, n, first, x);
  uint from_f, tile_f;
  T from_s, tile_s;
  sbk_scan_pairs(heads, x, flags, sums, &from_f, &from_s, &tile_f, &tile_s);
  if (get_local_id(0) == 0) tile_flags[get_group_id(0)] = tile_f, tile_sums[get_group_id(0)] = tile_s;
}
#endif
#endif

/* Elsewhere, step 2, one work-group: carry[t] = the sum tile t continues
 * from (the segmented exclusive scan of the tiles' pairs), WG tiles at a
 * time. */
#ifdef KERNEL_sbk_carry_scan
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sbk_carry_scan(__global const uint *tile_flags, __global const T *tile_sums, ulong tiles,
                    __global T *carry) {
  __local uint flags[WG];
  __local T sums[WG];
  const uint lid = (uint)get_local_id(0);
  T running = 0;
  for (ulong base = 0; base < tiles; base += WG) {
    const ulong t = base + lid;
    const uint f = t < tiles ? tile_flags[t] : 0u;
    const T x = t < tiles ? tile_sums[t] : (T)0;
    uint from_f, all_f;
    T from_s, all_s;
    sbk_wg_scan(f, x, flags, sums, &from_f, &from_s, &all_f, &all_s);
    if (t < tiles) carry[t] = from_f ? from_s : from_s + running;
    running = all_f ? all_s : all_s + running;
  }
}
#endif

/* Elsewhere, step 3 (or the whole scan of one tile): each tile from its
 * carry (use_carry 0: from nothing). */
#ifdef KERNEL_sbk_tiles
#ifdef CLPRIM_CPU
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void sbk_tiles(__global const K_T *keys, __global const T *values, __global T *out, ulong n,
               __global const T *carry, int use_carry, int inclusive) {
  ulong first, end;
  cpu_share(n, ITEMS, &first, &end);
  uint f = 0;
  T run = use_carry ? carry[get_global_id(0)] : (T)0;
  for (ulong c = first; c < end; c += ITEMS) {
    T x[ITEMS];
    const uint heads = sbk_load(keys, values, n, c, x);
    const T from = run;
    sbk_share_pair(heads, x, &f, &run);
    sbk_store(out, n, c, heads, x, from, inclusive);
  }
}
#else
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sbk_tiles(__global const K_T *keys, __global const T *values, __global T *out, ulong n,
               __global const T *carry, int use_carry, int inclusive) {
  __local uint flags[WG];
  __local T sums[WG];
  const ulong first = (ulong)get_group_id(0) * TILE + (ulong)get_local_id(0) * ITEMS;
  T x[ITEMS];
  const uint heads = sbk_load(keys, values, n, first, x);
  uint from_f, tile_f;
  T from_s, tile_s;
  sbk_scan_pairs(heads, x, flags, sums, &from_f, &from_s, &tile_f, &tile_s);
  const T tile_carry = use_carry ? carry[get_group_id(0)] : (T)0;
  sbk_store(out, n, first, heads, x, from_f ? from_s : from_s + tile_carry, inclusive);
}
#endif
#endif
#endif /* K_T */

#ifdef CLPRIM_PATH_NV_PTX
#define LB_T T
#define LB_BITS T_BITS
#include "internal/lookback.h"

#ifdef KERNEL_scan_single_pass
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_single_pass(__global const T *in, __global T *out, ulong n, __global uchar *state,
                      uint tiles, int inclusive) {
  __local T scratch[CLPRIM_WG_SCRATCH(WG)];
  __local T buf[TILE_LOCAL];
  __local uint tile_id;
  __local T tile_prefix;
  uint lid = (uint)get_local_id(0);
  if (lid == 0) tile_id = lb_next_tile(state);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint tile = tile_id;
  const ulong tile_first = (ulong)tile * TILE;
  T v[ITEMS];
  load_tile(in, n, tile_first, buf, v);
  T aggregate;
  T run = WG_SCAN(sum_items(v), scratch, &aggregate);
  if (tile == 0) {
    if (lid == 0) lb_publish(state, tiles, 0, LB_PREFIX, aggregate);
  } else {
    if (lid == 0) lb_publish(state, tiles, tile, LB_AGGREGATE, aggregate);
    if (lid < 32) {
      T before = lb_look_back(state, tiles, tile);
      if (lid == 0) {
        lb_publish(state, tiles, tile, LB_PREFIX, before + aggregate);
        tile_prefix = before;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    run += tile_prefix;
  }
  store_tile(out, n, tile_first, buf, v, run, inclusive);
}
#endif

#if defined(K_T) && defined(KERNEL_sbk_single_pass)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sbk_single_pass(__global const K_T *keys, __global const T *values, __global T *out,
                     ulong n, __global uchar *state, uint tiles, int inclusive) {
  __local uint flags[WG];
  __local T sums[WG];
  __local uint tile_id;
  __local T tile_carry;
  const uint lid = (uint)get_local_id(0);
  if (lid == 0) tile_id = lb_next_tile(state);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint tile = tile_id;
  const ulong first = (ulong)tile * TILE + (ulong)lid * ITEMS;
  T x[ITEMS];
  const uint heads = sbk_load(keys, values, n, first, x);
  uint from_f, tile_f;
  T from_s, tile_s;
  sbk_scan_pairs(heads, x, flags, sums, &from_f, &from_s, &tile_f, &tile_s);
  if (tile == 0) {
    if (lid == 0) lb_publish(state, tiles, 0, LB_PREFIX, tile_s), tile_carry = 0;
  } else {
    /* A tile with a head: its sum after the last head is what later tiles
     * continue from, whatever came before (an inclusive prefix at once). */
    if (lid == 0) lb_publish(state, tiles, tile, tile_f ? LB_PREFIX : LB_AGGREGATE, tile_s);
    if (lid < 32) {
      const T before = lb_look_back(state, tiles, tile);
      if (lid == 0) {
        if (!tile_f) lb_publish(state, tiles, tile, LB_PREFIX, before + tile_s);
        tile_carry = before;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  sbk_store(out, n, first, heads, x, from_f ? from_s : from_s + tile_carry, inclusive);
}
#endif
#endif

/* ------------------------------------------------ exact scans (CLPRIM_EXACT) */
/* Each prefix is the exact sum of its elements rounded once, to nearest with
 * ties to even (internal/exact.h: the words, the flags, exact_round), so
 * that every prefix has the same bits on every device, path and shape. The
 * elements are cut into chunks of `chunk` consecutive elements, a work-item
 * a chunk (the host's plan: src/scan.c):
 *  1. xscan_chunks: each chunk's exact sum, as a record (EXACT_RECORD words:
 *     the normalised words, then the flags);
 *  2. the records' exclusive scan, word by word (integer adds of the
 *     digits, the flags OR-ed), in place: xscan_blocks sums blocks of
 *     `per_block` records, xscan_block_scan (one work-group) scans the
 *     blocks' sums, xscan_block_apply scans each block from its sum;
 *  3. xscan_out: each work-item takes its chunk's prefix record into a
 *     running sum (internal/exact.h's exact_run: sign and magnitude, the
 *     digits normalised) and, element by element, adds the element and
 *     rounds from the top three digits (O(1) a prefix, but for carries
 *     and a sum that changes sign: O(EXACT_W) then).
 * A record's digits are below 2^32, so sums of fewer than 2^31 records (the
 * host keeps to 2^30 chunks) and then of fewer than 2^31 elements (a chunk)
 * fit in a word. Built with -DT=float|double, -DT_BITS, -DT_FLOAT=1, -DWG
 * and the exact accumulator's options (engine/exact.c). */
#if defined(T_FLOAT) && T_FLOAT /* not in a whole-file build of another type */
#include "internal/exact.h"
#define XSCAN_RECORD EXACT_RECORD(EXACT_W)

#ifdef KERNEL_xscan_chunks
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void xscan_chunks(__global const T *in, ulong n, ulong chunk, ulong chunks,
                  __global long *records) {
  const ulong c = get_global_id(0);
  if (c >= chunks) return;
  const ulong first = c * chunk, end = min(n, first + chunk);
  long word[EXACT_W];
  for (int w = 0; w < EXACT_W; ++w) word[w] = 0;
  uint flags = 0;
  for (ulong i = first; i < end; ++i) {
    const T v = in[i];
    flags |= exact_element_flags(v);
    if (isfinite(v)) exact_private_add(word, v);
  }
  exact_normalise(word);
  __global long *record = records + c * XSCAN_RECORD;
  for (int w = 0; w < EXACT_W; ++w) record[w] = word[w];
  record[EXACT_W] = flags;
}
#endif

/* Work-item g: word g % XSCAN_RECORD of block g / XSCAN_RECORD (records
 * [b * per_block, (b + 1) * per_block) of chunks), so that neighbours read
 * neighbouring words. The flags' word is OR-ed, the others added. */
#ifdef KERNEL_xscan_blocks
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void xscan_blocks(__global const long *records, ulong chunks, ulong per_block, ulong blocks,
                  __global long *block_sums) {
  const ulong g = get_global_id(0), b = g / XSCAN_RECORD;
  const uint w = (uint)(g % XSCAN_RECORD);
  if (b >= blocks) return;
  const ulong end = min(chunks, (b + 1) * per_block);
  long s = 0;
  for (ulong r = b * per_block; r < end; ++r) {
    const long v = records[r * XSCAN_RECORD + w];
    s = w == EXACT_W ? s | v : s + v;
  }
  block_sums[g] = s;
}
#endif

/* The exclusive scan, in place, of count words at v[0], v[stride], ...,
 * from run (OR-ed for the flags' word, else added), eight loads in flight
 * before their stores; returns the total. */
CLPRIM_INLINE long xscan_column(__global long *v, ulong stride, ulong count, long run, int flags) {
  for (ulong r = 0; r < count; r += 8) {
    long x[8];
    const uint m = (uint)min((ulong)8, count - r);
#pragma unroll
    for (uint j = 0; j < 8; ++j)
      if (j < m) x[j] = v[(r + j) * stride];
#pragma unroll
    for (uint j = 0; j < 8; ++j)
      if (j < m) {
        v[(r + j) * stride] = run;
        run = flags ? run | x[j] : run + x[j];
      }
  }
  return run;
}

#ifdef KERNEL_xscan_block_scan
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void xscan_block_scan(__global long *block_sums, ulong blocks) {
  for (uint w = get_local_id(0); w < XSCAN_RECORD; w += WG)
    xscan_column(block_sums + w, XSCAN_RECORD, blocks, 0, w == EXACT_W);
}
#endif

#ifdef KERNEL_xscan_block_apply
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void xscan_block_apply(__global long *records, ulong chunks, ulong per_block, ulong blocks,
                       __global const long *block_sums) {
  const ulong g = get_global_id(0), b = g / XSCAN_RECORD;
  const uint w = (uint)(g % XSCAN_RECORD);
  if (b >= blocks) return;
  const ulong first = b * per_block, end = min(chunks, first + per_block);
  xscan_column(records + first * XSCAN_RECORD + w, XSCAN_RECORD, end - first, block_sums[g],
               w == EXACT_W);
}
#endif

/* Each element's prefix: the chunk's prefix record (none: use_prefix 0, a
 * single chunk), then the elements one by one. An element is read before
 * its output is written (in place). */
#ifdef KERNEL_xscan_out
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void xscan_out(__global const T *in, __global T *out, ulong n, ulong chunk, ulong chunks,
               __global const long *prefixes, int use_prefix, int inclusive) {
  const ulong c = get_global_id(0);
  if (c >= chunks) return;
  const ulong first = c * chunk, end = min(n, first + chunk);
  long word[EXACT_W];
  uint flags = 0;
  for (int w = 0; w < EXACT_W; ++w) word[w] = 0;
  if (use_prefix) {
    __global const long *record = prefixes + c * XSCAN_RECORD;
    for (int w = 0; w < EXACT_W; ++w) word[w] = record[w];
    flags = (uint)record[EXACT_W];
  }
  struct exact_run run;
  exact_run_from_words(&run, word, flags);
  for (ulong i = first; i < end; ++i) {
    const T v = in[i];
    if (!inclusive) out[i] = CLPRIM_CAT(as_, T)(exact_run_round(&run));
    exact_run_add(&run, v);
    if (inclusive) out[i] = CLPRIM_CAT(as_, T)(exact_run_round(&run));
  }
}
#endif
#endif /* T_FLOAT */
