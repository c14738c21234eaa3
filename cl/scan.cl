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
 * Build options: -DT=uint|ulong|float|double (signed integers use the
 * unsigned program: the bits are the same), -DT_BITS=32|64, -DWG, -DITEMS
 * (a multiple of 4). */
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
#endif
