/* mpi.cl: what the MPI library (src/mpi/) needs on the device that no
 * family has: a constant added to a range, which turns a rank's local scan
 * into its part of the global scan and local indices into global ones; a
 * rank's share of the top-k picked from its candidates; and the merge of
 * two sorted runs, with which the sample sort merges the
 * sorted pieces a rank received instead of sorting them again. Everything
 * else (counting into buckets, extraction, sort, scan, select, top-k) is
 * the families' own kernels.
 *
 * Build options (every kernel the same, so that CPU runtimes, which build
 * the whole file, build it once per type): -DT=int|uint|long|ulong|float|
 * double, -DT_FLOAT=0|1, -DT_SIGNED=0|1, -DKEY_BITS=32|64, -DMERGE_WG (the
 * merge's work-group size), -DMERGE_ITEMS (outputs per work-item). */
#ifndef MERGE_WG
#define MERGE_WG 256
#endif
#ifndef MERGE_ITEMS
#define MERGE_ITEMS 8
#endif

#include "internal/keys.h"

#ifdef KERNEL_mpi_add
__kernel void mpi_add(__global T *x, ulong n, T add) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    x[i] += add;
}
#endif

/* A rank's share of the top-k from its candidates (src/mpi/selection.c): the
 * candidates at positions pos[0, n), their values to values (want & 1)
 * and their positions in the part plus offset, the global indices, to
 * indices32 (want & 2) or indices64 (want & 4). */
#ifdef KERNEL_mpi_pick
__kernel void mpi_pick(__global const T *cand, __global const uint *cand_index,
                       __global const uint *pos, ulong n, __global T *values,
                       __global uint *indices32, __global ulong *indices64, ulong offset,
                       uint want) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const uint p = pos[i];
    if (want & 1u) values[i] = cand[p];
    if (want & 2u) indices32[i] = (uint)(cand_index[p] + offset);
    if (want & 4u) indices64[i] = cand_index[p] + offset;
  }
}
#endif

/* ---- merge path (Green, McColl and Bader, "GPU merge path", 2012): the
 * merged output of runs a (na keys) and b (nb keys) is cut into tiles of
 * MERGE_TILE outputs; mpi_merge_split finds for each tile's first output d
 * how many of the first d outputs come from a (a binary search along the
 * cross diagonal d), and mpi_merge has one work-group merge one tile: both
 * runs' keys of the tile to local memory, the same search per work-item
 * for its MERGE_ITEMS outputs, then a coalesced store. Keys compare by
 * key_of (the order of every family: -0.0 equals +0.0, NaNs above +inf), and
 * a's key wins ties, so the merge is stable: equal keys of a come first. */
#define MERGE_TILE (MERGE_WG * MERGE_ITEMS)

/* How many of the first d outputs come from a: the smallest i with
 * a[i] > b[d - 1 - i] (a[i] goes after the b key it does not beat). */
#define MERGE_PATH(a, na, b, nb, d, result)                                                        \
  {                                                                                                \
    ulong lo_ = (d) > (nb) ? (d) - (nb) : 0, hi_ = (d) < (na) ? (d) : (na);                        \
    while (lo_ < hi_) {                                                                            \
      const ulong mid_ = (lo_ + hi_) / 2;                                                          \
      if (key_of((a)[mid_]) <= key_of((b)[(d)-1 - mid_]))                                          \
        lo_ = mid_ + 1;                                                                            \
      else                                                                                         \
        hi_ = mid_;                                                                                \
    }                                                                                              \
    result = lo_;                                                                                  \
  }

/* splits[t] for the tiles t = 0 .. tiles (the last: na, the end). */
#ifdef KERNEL_mpi_merge_split
__kernel void mpi_merge_split(__global const T *src, ulong a_at, ulong na, ulong b_at, ulong nb,
                              __global ulong *splits, ulong tiles) {
  const ulong t = get_global_id(0);
  if (t > tiles) return;
  const ulong total = na + nb;
  const ulong d = t * MERGE_TILE < total ? t * MERGE_TILE : total;
  ulong i;
  MERGE_PATH(src + a_at, na, src + b_at, nb, d, i);
  splits[t] = i;
}
#endif

/* dst[dst_at + d] for the outputs d of work-group g's tile. */
#ifdef KERNEL_mpi_merge
__kernel __attribute__((reqd_work_group_size(MERGE_WG, 1, 1))) void
mpi_merge(__global const T *src, ulong a_at, ulong na, ulong b_at, ulong nb,
          __global const ulong *splits, __global T *dst, ulong dst_at) {
  __local T s[MERGE_TILE];
  const uint lid = (uint)get_local_id(0);
  const ulong g = get_group_id(0), total = na + nb;
  const ulong d0 = g * MERGE_TILE, d1 = d0 + MERGE_TILE < total ? d0 + MERGE_TILE : total;
  const ulong i0 = splits[g], i1 = splits[g + 1];
  const uint la = (uint)(i1 - i0), lb = (uint)((d1 - i1) - (d0 - i0)), len = la + lb;
  __global const T *a = src + a_at + i0, *b = src + b_at + (d0 - i0);
  for (uint k = lid; k < len; k += MERGE_WG)
    s[k] = k < la ? a[k] : b[k - la];
  barrier(CLK_LOCAL_MEM_FENCE);
  /* This work-item's outputs [dl, dl + MERGE_ITEMS) of the tile. */
  const uint dl = lid * MERGE_ITEMS < len ? lid * MERGE_ITEMS : len;
  ulong ia_;
  MERGE_PATH(s, (ulong)la, s + la, (ulong)lb, (ulong)dl, ia_);
  uint ia = (uint)ia_, ib = dl - ia;
  T v[MERGE_ITEMS];
#pragma unroll
  for (uint e = 0; e < MERGE_ITEMS; ++e) {
    const int take_a = ib >= lb || (ia < la && key_of(s[ia]) <= key_of(s[la + ib]));
    v[e] = take_a ? s[ia < la ? ia : 0] : s[la + (ib < lb ? ib : 0)];
    if (take_a)
      ++ia;
    else
      ++ib;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (uint e = 0; e < MERGE_ITEMS; ++e)
    if (dl + e < len) s[dl + e] = v[e];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = lid; k < len; k += MERGE_WG)
    dst[dst_at + d0 + k] = s[k];
}
#endif
