/* topk.cl: top-k (clprim_topk: the k largest or smallest elements, their
 * values and / or indices, optionally sorted), driven by src/topk.c. The
 * selections it runs are those of nth_element.cl (its level kernels, driven
 * by src/nth_element.c); the device code the two files share is in
 * internal/sample_select.h, and the build options are the same. The
 * kernels that traverse the elements take IN_PARAMS and NTH_VALID as
 * nth_element.cl's do: a pipeline's filter -> top-k (src/pipeline.c) runs
 * the small-k path below with the pipeline's stages as the element source
 * (internal/input.h, -DPIPELINE), where topk_candidates_direct skips the
 * missing elements and counts those there (META_PASSING), topk_split works
 * on the candidates as always, and topk_finish takes the values through
 * in_value; the general path's kernels only
 * compile in that build (CPU devices build both files as one program), and
 * topk_range_count / topk_candidates do not run with a filter.
 *
 * The general path: the threshold, the key of rank n - k (largest) or k - 1
 * (smallest), by selection; then topk_count / topk_scatter compact the
 * elements beyond the threshold key plus the first `need` equal to it (ties
 * to the lowest indices), in index order; topk_pad / topk_sort_step /
 * topk_gather sort them on request (CLPRIM_TOPK_SORTED).
 *
 * Small k (k <= BASE, large n): the keys beyond one splitter of the sample
 * (nth_sample: a key range) are the candidates; topk_candidates_direct
 * gathers them in one pass (topk_range_count + topk_candidates, two passes,
 * when they overflow the room the host expected; with CLPRIM_NTH_REJECT_NAN
 * a counting level for the threshold's rank picks them, then
 * topk_candidates). The rest works on the candidates only: the exact
 * threshold among them (a selection), topk_split into those beyond it and
 * the indices of those equal to it, the largest index that ties may take (a
 * selection on those indices, only when more tie than are needed), and
 * topk_finish, one work-group that sorts the k pairs and writes them. */
#include "internal/counts.h"
#include "internal/sample_select.h"
#include "internal/tile.h"
#include "internal/local_sort.h"
#ifdef CLPRIM_CPU
#include "internal/cpu.h"
#endif

/* Whether key k is beyond the threshold t (above it for the largest, below
 * it for the smallest). */
CLPRIM_INLINE int beyond(KEY k, KEY t, int smallest) {
  return smallest ? k < t : k > t;
}

/* The general top-k passes read a tile of WG * ITEMS elements as ITEMS / 4
 * rows of WG 4-vectors (coalesced): element (r, lid, c) is tile_first +
 * (r WG + lid) 4 + c, so index order is row, then work-item, then c. */
#define TK_ROWS (ITEMS / 4)
#define TK_TILE ((ulong)WG * ITEMS)
#define TK_EQUAL 0xFFFFFFFFul /* the equal count: the low half of a packed count */

/* The 4 elements from `first` (a multiple of 4; internal/tile.h); those at
 * n or beyond read as 0 (the callers ignore them). */
#define topk_load4 CLPRIM_CAT(load4_, T)

/* Output j of top-k: the value x (want_values) and the index i (uint, or
 * ulong with index64; want_indices). */
CLPRIM_INLINE void topk_put(__global T *values, __global uint *indices, ulong j, T x, ulong i,
                            int want_values, int want_indices, int index64) {
  if (want_values) values[j] = x;
  if (want_indices) {
    if (index64)
      ((__global ulong *)indices)[j] = i;
    else
      indices[j] = (uint)i;
  }
}

/* (beyond << 32) | equal for one element, zero past n. */
CLPRIM_INLINE ulong topk_flag(T x, ulong i, ulong n, KEY t, int smallest) {
  const KEY k = key_of(x);
  return i >= n ? 0ul : beyond(k, t, smallest) ? ((ulong)1 << 32) : (k == t ? 1ul : 0ul);
}

/* counts[tile] = (beyond << 32) | equal for the tile; counts[tiles] = 0. */
#ifdef KERNEL_topk_count
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
topk_count(__global const T *in, ulong n, KEY t, int smallest, __global ulong *counts) {
  __local ulong scratch[CLPRIM_WG_SCRATCH(WG)];
  const ulong tile_first = (ulong)get_group_id(0) * TK_TILE;
  ulong c = 0;
  for (uint r = 0; r < TK_ROWS; ++r) {
    const ulong first = tile_first + (ulong)(r * WG + get_local_id(0)) * 4;
    if (first >= n) break;
    const VEC4 x = topk_load4(in, n, first);
    c += topk_flag(x.s0, first, n, t, smallest) + topk_flag(x.s1, first + 1, n, t, smallest) +
         topk_flag(x.s2, first + 2, n, t, smallest) + topk_flag(x.s3, first + 3, n, t, smallest);
  }
  const ulong total = clprim_wg_reduce_add_ulong(c, scratch);
  CLPRIM_PUT_TILE_COUNT(counts, total);
}
#endif

/* After an exclusive scan of counts: element i is taken when beyond, or
 * equal and among the first `need` equal ones (need = k - all beyond); its
 * place is (beyond before it) + min(equal before it, need): index order.
 * A tile that takes nothing (no element beyond, and no equal one or the
 * ties used up before it: small k on few distinct values) returns at once,
 * without reading its elements. Each row: a work-group scan of the packed
 * counts of the work-items' 4 elements.
 * sorted = 0: values (T) and indices (uint, or ulong when index64) to the
 * outputs; sorted = 1: sort keys (largest first: ~key) to sort_keys and
 * indices (ulong) to sort_indices. */
#ifdef KERNEL_topk_scatter
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
topk_scatter(__global const T *in, ulong n, KEY t, int smallest, __global const ulong *offsets,
             ulong tiles, ulong k, __global T *values, __global uint *indices, int want_values,
             int want_indices, int index64, int sorted, __global KEY *sort_keys,
             __global ulong *sort_indices) {
  __local ulong scratch[CLPRIM_WG_SCRATCH(WG)];
  const ulong tile_first = (ulong)get_group_id(0) * TK_TILE;
  const ulong at = offsets[get_group_id(0)], after = offsets[get_group_id(0) + 1];
  const ulong need = k - (offsets[tiles] >> 32);
  ulong beyond_before = at >> 32, equal_before = at & TK_EQUAL;
  if ((after >> 32) == beyond_before &&
      ((after & TK_EQUAL) == equal_before || equal_before >= need))
    return; /* the same for the whole work-group */
  for (uint r = 0; r < TK_ROWS; ++r) {
    const ulong first = tile_first + (ulong)(r * WG + get_local_id(0)) * 4;
    const VEC4 x4 = topk_load4(in, n, first);
    const T x[4] = {x4.s0, x4.s1, x4.s2, x4.s3};
    ulong f[4], c = 0;
    for (uint e = 0; e < 4; ++e)
      f[e] = topk_flag(x[e], first + e, n, t, smallest), c += f[e];
    ulong row;
    const ulong b = clprim_wg_scan_excl_add_ulong(c, scratch, &row);
    ulong bb = beyond_before + (b >> 32), eb = equal_before + (b & TK_EQUAL);
    beyond_before += row >> 32, equal_before += row & TK_EQUAL;
    for (uint e = 0; e < 4; ++e) {
      ulong pos;
      if (f[e] >> 32) {
        pos = bb + min(eb, need);
        ++bb;
      } else if (f[e] && eb < need) {
        pos = bb + eb;
        ++eb;
      } else {
        continue;
      }
      const ulong i = first + e;
      if (sorted) {
        const KEY key = key_of(x[e]);
        sort_keys[pos] = smallest ? key : ~key;
        sort_indices[pos] = i;
      } else {
        topk_put(values, indices, pos, x[e], i, want_values, want_indices, index64);
      }
    }
  }
}
#endif

/* The padding of the sort arrays, [k, len2): sorts last. (A kernel, not a
 * fill: Oclgrind does not count filled bytes as initialised.) */
#ifdef KERNEL_topk_pad
__kernel void topk_pad(__global KEY *keys, __global ulong *idx, ulong k, ulong len2) {
  const ulong j = k + get_global_id(0);
  if (j < len2) keys[j] = KEY_MAX, idx[j] = 0xFFFFFFFFFFFFFFFFul;
}
#endif

/* One step (block size `block`, distance `dist`) of an ascending bitonic
 * sort of (key, index) pairs in global memory; one work-item per pair. */
#ifdef KERNEL_topk_sort_step
__kernel void topk_sort_step(__global KEY *keys, __global ulong *idx, ulong block, ulong dist) {
  const ulong i = get_global_id(0), p = i ^ dist;
  if (p <= i) return;
  const KEY ka = keys[i], kb = keys[p];
  const ulong ia = idx[i], ib = idx[p];
  const int greater = ka > kb || (ka == kb && ia > ib);
  if (greater == ((i & block) == 0)) {
    keys[i] = kb, keys[p] = ka;
    idx[i] = ib, idx[p] = ia;
  }
}
#endif

/* The sorted pairs to the outputs: values[j] = in[idx[j]]. */
#ifdef KERNEL_topk_gather
__kernel void topk_gather(__global const T *in, __global const ulong *idx, ulong k,
                          __global T *values, __global uint *indices, int want_values,
                          int want_indices, int index64) {
  const ulong j = get_global_id(0);
  if (j >= k) return;
  const ulong i = idx[j];
  topk_put(values, indices, j, want_values ? in[i] : (T)0, i, want_values, want_indices, index64);
}
#endif

/* ------------------------------------------------- top-k, small k (<= BASE)
 * After one counting level for the threshold's rank, every element of a
 * bucket beyond the threshold's bucket is in the top k: one pass gathers the
 * candidates (those buckets and the threshold's, with their indices), and
 * the rest works on the candidates only. Candidate buffer `cand`, in ulong
 * words: keys (KEY) from 0, indices from idx_at, equal-to-threshold indices
 * from eq_at, the chosen (sort key, index) pairs from pk_at / pi_at, and
 * cursors (uint) at cur_at (topk_split's two, topk_finish's), zeroed by the
 * kernel that gathers the candidates (not by a fill: Oclgrind does not count filled bytes after a
 * buffer's head as initialised). */

/* The group's keys in buckets [lo, hi] (one key range: a streaming pass, no
 * search) to counts[group * BUCKETS + lo] (the other counts of [lo, hi]
 * zero), their sum to totals[lo]; cursor 0 zeroed. Instead of a full
 * counting level when the sample alone picks the candidates' buckets. */
#ifdef KERNEL_topk_range_count
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
topk_range_count(__global const IN_T *in, ulong offset, ulong n, __global ulong *meta,
                 __global uint *counts, uint lo, uint hi IN_PARAMS) {
  __local KEY tree[SPLITTERS + 1];
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0);
  const uint group = (uint)get_group_id(0), groups = (uint)(get_global_size(0) / WG);
  load_tree(tree, tree_g_of(meta));
  barrier(CLK_LOCAL_MEM_FENCE);
  KEY first, span;
  const int any = key_range(lo, hi, tree, &first, &span);
  uint mine = 0;
#define RANGE_COUNT_VISIT(k, valid, i) mine += (valid) && any && (k)-first <= span;
#define RANGE_COUNT_BATCH(keys, valid, quad)                                                       \
  _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e)                                              \
      RANGE_COUNT_VISIT(keys[e], NTH_VALID(valid, e), 0)
  TRAVERSE(RANGE_COUNT_BATCH, RANGE_COUNT_VISIT)
  const uint total = clprim_wg_reduce_add_uint(mine, scratch);
  for (uint b = lo + lid; b <= hi; b += WG)
    counts[get_group_id(0) * BUCKETS + b] = b == lo ? total : 0;
  if (lid == 0) {
    if (total) atomic_add(&META_TOTALS(meta)[lo], total);
    if (get_group_id(0) == 0) META_CURSORS(meta)[0] = 0;
  }
}
#endif

/* Keys and indices of the elements in buckets [lo, hi], unordered: told by
 * the buckets' key range (a streaming pass, no search). */
#ifdef KERNEL_topk_candidates
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
topk_candidates(__global const IN_T *in, ulong offset, ulong n, __global ulong *meta,
                __global const uint *counts, uint lo, uint hi, __global ulong *cand, ulong idx_at,
                ulong cur_at IN_PARAMS) {
  __local KEY tree[SPLITTERS + 1];
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  __local uint base, fill;
  const uint lid = (uint)get_local_id(0);
  const uint group = (uint)get_group_id(0), groups = (uint)(get_global_size(0) / WG);
  __global KEY *cand_keys = (__global KEY *)cand;
  __global ulong *cand_idx = cand + idx_at;
  load_tree(tree, tree_g_of(meta));
  if (group == 0 && lid == 0) cand[cur_at] = cand[cur_at + 1] = 0; /* the cursors */
  uint mine = 0;
  for (uint b = lid; b < NAN_SLOT; b += WG)
    if (b >= lo && b <= hi) mine += counts[get_group_id(0) * BUCKETS + b];
  const uint total = clprim_wg_reduce_add_uint(mine, scratch);
  if (lid == 0) base = total ? atomic_add(&META_CURSORS(meta)[0], total) : 0, fill = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (total == 0) return; /* uniform */
  KEY first, span;
  key_range(lo, hi, tree, &first, &span); /* not empty: total > 0 */
#define CANDIDATE_VISIT(k, valid, i)                                                               \
  if (valid) {                                                                                     \
    const KEY k_ = (k);                                                                            \
    if (k_ - first <= span) {                                                                      \
      const uint p_ = base + atomic_inc(&fill);                                                    \
      cand_keys[p_] = k_;                                                                          \
      cand_idx[p_] = (i);                                                                          \
    }                                                                                              \
  }
#define CANDIDATE_BATCH(keys, valid, quad)                                                         \
  _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e)                                               \
      CANDIDATE_VISIT(keys[e], NTH_VALID(valid, e), 4 * quad[e / 4] + e % 4)
  TRAVERSE(CANDIDATE_BATCH, CANDIDATE_VISIT)
}
#endif

/* The same candidates without a counting pass before: each round of the
 * traversal the group's candidates take local places (a local atomic), one
 * global atomic on META_CURSORS(meta)[0] (zeroed by nth_sample) reserves
 * room for all of them, and only places below cap are written. The cursor
 * ends as the number of candidates: more than cap, and the host repeats
 * the work with topk_range_count and topk_candidates. */
#ifdef KERNEL_topk_candidates_direct
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
topk_candidates_direct(__global const IN_T *in, ulong offset, ulong n, __global ulong *meta,
                       uint lo, uint hi, __global ulong *cand, ulong idx_at, ulong cap,
                       ulong cur_at IN_PARAMS) {
  __local KEY tree[SPLITTERS + 1];
  __local uint fill[2], base;
  const uint lid = (uint)get_local_id(0);
  const uint group = (uint)get_group_id(0), groups = (uint)(get_global_size(0) / WG);
  __global KEY *cand_keys = (__global KEY *)cand;
  __global ulong *cand_idx = cand + idx_at;
  __global uint *cursor = META_CURSORS(meta);
  load_tree(tree, tree_g_of(meta));
  if (lid == 0) fill[0] = 0;
  if (group == 0 && lid == 0) cand[cur_at] = cand[cur_at + 1] = 0; /* the cursors */
#if IN_FILTERS
  __local uint passing_l;
  uint passing = 0;
  if (lid == 0) passing_l = 0;
#define DIRECT_PASSING(valid) passing += (valid) ? 1u : 0u;
#else
#define DIRECT_PASSING(valid)
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  KEY first, span;
  if (!key_range(lo, hi, tree, &first, &span)) return; /* uniform */
  uint par = 0;
#define DIRECT_VISIT(k, valid, i)                                                                  \
  DIRECT_PASSING(valid)                                                                            \
  if ((valid) && (k)-first <= span) {                                                              \
    const uint p_ = atomic_inc(cursor);                                                            \
    if (p_ < cap) cand_keys[p_] = (k), cand_idx[p_] = (i);                                         \
  }
#ifdef CLPRIM_CPU /* no barriers in the traversal: each candidate takes its place alone */
#define DIRECT_BATCH(keys, valid, quad)                                                            \
  _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e) {                                             \
    DIRECT_VISIT(keys[e], NTH_VALID(valid, e), 4 * quad[e / 4] + e % 4)                            \
  }
#else
#define DIRECT_BATCH(keys, valid, quad)                                                            \
  {                                                                                                \
    uint r_[NTH_E];                                                                                \
    _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e) {                                           \
      DIRECT_PASSING(NTH_VALID(valid, e))                                                          \
      r_[e] =                                                                                      \
          NTH_VALID(valid, e) && keys[e] - first <= span ? atomic_inc(&fill[par]) : 0xFFFFFFFFu;   \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    if (lid == 0) {                                                                                \
      const uint c_ = fill[par];                                                                   \
      base = c_ ? atomic_add(cursor, c_) : 0;                                                      \
      fill[par ^ 1u] = 0;                                                                          \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    const ulong b_ = base;                                                                         \
    _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e) if (r_[e] != 0xFFFFFFFFu &&                 \
                                                           b_ + r_[e] < cap) {                     \
      cand_keys[b_ + r_[e]] = keys[e];                                                             \
      cand_idx[b_ + r_[e]] = 4 * quad[e / 4] + e % 4;                                              \
    }                                                                                              \
    par ^= 1u;                                                                                     \
  }
#endif
#if defined(CLPRIM_CPU) && !IN_FILTERS
  /* The cpu path: its share 16 elements at a time, a test of all 16 (a
   * loop the compiler vectorises), then the rare hits one by one. */
  ulong b_, e_;
  cpu_share(n, 16, &b_, &e_);
  __global const T *x_ = in + offset;
  for (ulong i = b_; i < e_; i += 16) {
    const uint m = (uint)min((ulong)16, e_ - i);
    int hit = 0;
    for (uint j = 0; j < m; ++j) hit |= key_of(x_[i + j]) - first <= span;
    if (hit)
      for (uint j = 0; j < m; ++j) DIRECT_VISIT(key_of(x_[i + j]), 1, i + j)
  }
#else
  TRAVERSE(DIRECT_BATCH, DIRECT_VISIT)
#endif
#if IN_FILTERS
  /* The elements that are there, for the pipeline's count (m). */
  if (passing) atomic_add(&passing_l, passing);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0 && passing_l) atomic_add(&META_PASSING(meta), passing_l);
#endif
}
#endif

/* Splits the c candidates against the threshold key t: those beyond it go
 * to the pairs (sort key: smallest ? key : ~key when sorted, else 0), the
 * indices of those equal to it to eq. cursors[0] / [1] count them. */
#ifdef KERNEL_topk_split
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
topk_split(__global ulong *cand, ulong idx_at, ulong c, KEY t, int smallest, int sorted,
           ulong eq_at, ulong pk_at, ulong pi_at, ulong cur_at) {
  __global const KEY *keys = (__global const KEY *)cand;
  __global uint *cursors = (__global uint *)(cand + cur_at);
  for (ulong j = get_global_id(0); j < c; j += get_global_size(0)) {
    const KEY k = keys[j];
    if (beyond(k, t, smallest)) {
      const uint p = atomic_inc(&cursors[0]);
      ((__global KEY *)(cand + pk_at))[p] = sorted ? (smallest ? k : ~k) : (KEY)0;
      cand[pi_at + p] = cand[idx_at + j];
    } else if (k == t) {
      cand[eq_at + atomic_inc(&cursors[1])] = cand[idx_at + j];
    }
  }
}
#endif


/* One work-group: the g pairs beyond the threshold and the equal ones with
 * index <= last (k in all), sorted by (sort key, index) in local memory,
 * to the outputs (values gathered from in: in_value). The equal ones take
 * their places by the third cursor at cur_at (zeroed with topk_split's
 * two), not a local counter: the two arrays alone fill 32 KiB of local
 * memory with 64-bit keys (Oclgrind's, and some devices', whole size). */
#ifdef KERNEL_topk_finish
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
topk_finish(__global const IN_T *in, __global ulong *cand, ulong pk_at, ulong pi_at, uint g,
            ulong eq_at, ulong e, ulong last, KEY t, int smallest, int sorted, uint k,
            __global T *values, __global uint *indices, int want_values, int want_indices,
            int index64, ulong cur_at IN_PARAMS) {
  __local KEY sk[BASE];
  __local ulong si[BASE];
  __global uint *fill = (__global uint *)(cand + cur_at) + 2;
  const uint lid = (uint)get_local_id(0);
  uint len2 = 1;
  while (len2 < k)
    len2 <<= 1;
  for (uint j = lid; j < len2; j += WG) {
    sk[j] = j < g ? ((__global const KEY *)(cand + pk_at))[j] : KEY_MAX;
    si[j] = j < g ? cand[pi_at + j] : 0xFFFFFFFFFFFFFFFFul;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const KEY tk = sorted ? (smallest ? t : ~t) : (KEY)0;
  for (ulong j = lid; j < e; j += WG) {
    const ulong i = cand[eq_at + j];
    if (i <= last) {
      const uint p = g + atomic_inc(fill);
      sk[p] = tk, si[p] = i;
    }
  }
  clprim_local_sort_pairs(sk, si, len2);
  for (uint j = lid; j < k; j += WG) {
    const ulong i = si[j];
    topk_put(values, indices, j, want_values ? in_value(in[i], i IN_ARGS) : (T)0, i, want_values,
             want_indices, index64);
  }
}
#endif
