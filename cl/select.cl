/* select.cl: stream compaction (select) and stable partition.
 *
 * Follows Bakunas-Milanowski, Rego, Sun and Wang, "Efficient Algorithms for
 * Stream Compaction on GPUs" (2016): the predicate's results are kept as one
 * 32-bit mask per group of 32 consecutive elements, so the scan runs over
 * per-tile counts only, not over a flag per element.
 *  1. select_masks: evaluates the predicate, stores the masks and one count
 *     per tile of TILE = WG * 32 elements (popcount, work-group reduction).
 *     Paths with a ballot build a mask with clprim_sg_ballot over 32 lanes
 *     reading 32 consecutive elements; the local path (and subgroups that
 *     are not a multiple of 32 wide) lets each work-item evaluate its own 32
 *     consecutive elements.
 *  2. the host scans the tile counts (exclusive, uint64) with clprim__scan;
 *     the last group stores a zero after the counts, so the scan leaves the
 *     total there.
 *  3. select_scatter: each element's output position is its tile's offset
 *     plus the passing elements before its word in the tile (work-group scan
 *     of popcounts) plus popcount(mask & lower-lanes-mask). Indices come from
 *     the masks alone; values are read again only when asked for. A
 *     partition also writes failing elements, after all passing ones
 *     (or, with its rest reversed, backwards from the end).
 *
 * Build options: -DT=int|uint|long|ulong|float|double, -DT_INTEGER for
 * the integer types, -DWG (a power of two), and what phase 1 reads: nothing
 * more for the built-in predicates (kernel arguments op, a, b),
 * -DFLAG_T=uchar|int for a flag array, an expression over x and i as the
 * function stage_test_1(x, i) before this file (STAGE_TESTS defined: see
 * src/engine/stages.h, clprim__stages_tests), or
 * -DRUNS=RUN_HEAD|RUN_NONTRIVIAL_HEAD|RUN_NONTRIVIAL_TAIL (internal/heads.h)
 * for the edges of runs of equal keys: the keys are the input, or with
 * -DKEY_T=<type> a separate array (src) beside the values (in) (the host
 * builds integer keys and all values as unsigned types: src/select.c,
 * clprim__select_runs), or
 * -DPIPELINE for a pipeline's stages (src/pipeline.c) as the element
 * source (internal/input.h; src and in are its first input), whose filters
 * are the predicate. */
#ifndef T
#define T float
#endif
#ifndef WG
#define WG 256
#endif
#include "internal/input.h"
#define TILE ((ulong)WG * 32)

/* clprim_predicate_op, in clprim.h's order. */
#define OP_GT 0
#define OP_GE 1
#define OP_LT 2
#define OP_LE 3
#define OP_EQ 4
#define OP_NE 5
#define OP_INSIDE 6
#define OP_OUTSIDE 7
#define OP_NONZERO 8
#define OP_IS_NAN 9
#define OP_NOT_NAN 10
#define OP_MASK_EQ 11

/* The built-in predicates. NaN compares false, so it passes only NE,
 * OUTSIDE (the complement of INSIDE), NONZERO and IS_NAN. */
CLPRIM_INLINE int builtin_passes(T x, int op, T a, T b) {
  switch (op) {
  case OP_GT: return x > a;
  case OP_GE: return x >= a;
  case OP_LT: return x < a;
  case OP_LE: return x <= a;
  case OP_EQ: return x == a;
  case OP_NE: return x != a;
  case OP_INSIDE: return a <= x && x < b;
  case OP_OUTSIDE: return !(a <= x && x < b);
  case OP_NONZERO: return x != (T)0;
#ifdef T_INTEGER
  case OP_IS_NAN: return 0;
  case OP_NOT_NAN: return 1;
  case OP_MASK_EQ: return (x & a) == b;
#else
  case OP_IS_NAN: return isnan(x);
  case OP_NOT_NAN: return !isnan(x);
#endif
  default: return 0;
  }
}

#include "internal/counts.h"

/* Whether element i, whose value (or flag) is x, passes; PASSES reads it
 * from src, the input or the flag array (or, for runs, the keys). */
#if defined(RUNS)
#include "internal/heads.h"
#ifdef KEY_T
#define SRC_T KEY_T
#else
#define SRC_T T
#endif
/* Element i < n of src against its neighbours. */
CLPRIM_INLINE int run_edge_at(__global const SRC_T *src, ulong n, ulong i) {
  const SRC_T x = src[i];
  return clprim_run_edge(RUNS, i, n, i > 0 && CLPRIM_SAME_RUN(src[i - 1], x),
                         RUNS != RUN_HEAD && i + 1 < n && CLPRIM_SAME_RUN(x, src[i + 1]));
}
#define PASSES(src, i) run_edge_at(src, n, i)
#elif defined(FLAG_T)
#define SRC_T FLAG_T
#define PASSES_X(x, i) ((x) != 0)
#elif IN_FILTERS
/* The source's filters (internal/input.h) are the predicate. */
#define SRC_T IN_T
CLPRIM_INLINE int source_passes(IN_T a, ulong i IN_PARAMS) {
  T x;
  return in_element(a, i, &x IN_ARGS);
}
#define PASSES_X(x, i) source_passes((x), (i) IN_ARGS)
#elif defined(STAGE_TESTS)
#define SRC_T T
#define PASSES_X(x, i) stage_test_1(x, i)
#else
#define SRC_T T
#define PASSES_X(x, i) builtin_passes(x, op, a, b)
#define BUILTIN_PASSES 1 /* the cpu path's masks take the common ops apart */
#endif
#ifndef PASSES
#define PASSES(src, i) PASSES_X((src)[i], i)
#endif
/* What the scatter writes for element i of in. */
#define VALUE_AT(in, i) in_value((in)[i], (i) IN_ARGS)

/* Phase 1: masks[w] holds bit k set when element 32 w + k passes (words up
 * to ceil(n / 32)); tile_counts[t] the passing elements of tile t, and
 * tile_counts[tiles] = 0. */
#ifdef CLPRIM_CPU
/* The cpu path (-DCLPRIM_CPU, one work-item per work-group) keeps the
 * masks, but a "tile" is work-item g's share: the g-th of
 * get_global_size(0) contiguous runs of mask words, walked in order. */
#include "internal/cpu.h"
/* Work-item g's mask words [*w0, *w1) of the ceil(n / 32). */
#define cpu_words(n, w0, w1) cpu_share(((n) + 31) / 32, 1, (w0), (w1))
/* m = the mask of word w: bit k set when element 32 w + k < n passes
 * TEST(i). */
#define CPU_MASK(m, w, TEST)                                                                       \
  do {                                                                                             \
    const ulong first_ = (w) * 32;                                                                 \
    m = 0;                                                                                         \
    if (first_ + 32 <= n)                                                                          \
      for (uint k_ = 0; k_ < 32; ++k_) m |= (uint)(TEST(first_ + k_) != 0) << k_;                 \
    else                                                                                           \
      for (uint k_ = 0; first_ + k_ < n; ++k_) m |= (uint)(TEST(first_ + k_) != 0) << k_;         \
  } while (0)
#endif

#ifdef KERNEL_select_masks
#ifdef CLPRIM_CPU
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void select_masks(__global const SRC_T *src, ulong n, int op, T a, T b, __global uint *masks,
                  __global ulong *tile_counts IN_PARAMS) {
  ulong w0, w1, count = 0;
  cpu_words(n, &w0, &w1);
#define MASK_WORDS(TEST)                                                                           \
  for (ulong w = w0; w < w1; ++w) {                                                                \
    uint m;                                                                                        \
    CPU_MASK(m, w, TEST);                                                                          \
    masks[w] = m;                                                                                  \
    count += popcount(m);                                                                          \
  }
#define SELECT_TEST(i) PASSES(src, i)
#ifdef BUILTIN_PASSES
  /* The op's test outside the loop for the common ones: a loop the
   * compiler vectorises, not a switch per element. */
#define TEST_GT(i) (src[i] > a)
#define TEST_LT(i) (src[i] < a)
#define TEST_INSIDE(i) (a <= src[i] && src[i] < b)
  if (op == OP_GT)
    MASK_WORDS(TEST_GT)
  else if (op == OP_LT)
    MASK_WORDS(TEST_LT)
  else if (op == OP_INSIDE)
    MASK_WORDS(TEST_INSIDE)
  else
#endif
    MASK_WORDS(SELECT_TEST)
  const ulong g = get_global_id(0), groups = get_global_size(0);
  tile_counts[g] = count;
  if (g == groups - 1) tile_counts[groups] = 0;
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void select_masks(__global const SRC_T *src, ulong n, int op, T a, T b, __global uint *masks,
                  __global ulong *tile_counts IN_PARAMS) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0), group = (uint)get_group_id(0);
  const ulong tile_first = (ulong)group * TILE;
  uint word_in_tile = lid; /* the mask word this work-item stores */
  uint mask = 0;
  int built = 0;
#ifdef CLPRIM_HAS_BALLOT
  /* 32 lanes read 32 consecutive elements; after 32 rounds every lane holds
   * one word. (flat numbers the work-items subgroup by subgroup, and bit
   * `lane` of the ballot word is this lane's.) */
  if (clprim_sg_size() % 32 == 0 && WG % clprim_sg_size() == 0) {
    const uint flat = clprim_sg_id() * clprim_sg_size() + clprim_sg_lane();
    const uint slot = flat >> 5, lane = flat & 31u;
    for (uint k = 0; k < 32; ++k) {
      const uint w = k * (WG / 32) + slot;
      const ulong i = tile_first + (ulong)w * 32 + lane;
      const uint bits = clprim_sg_ballot(i < n && PASSES(src, i));
      if (lane == k) {
        mask = bits;
        word_in_tile = w;
      }
    }
    built = 1;
  }
#endif
  if (!built) {
    const ulong first = tile_first + (ulong)lid * 32;
    if (first + 32 <= n) {
      for (uint k = 0; k < 32; ++k) mask |= (uint)PASSES(src, first + k) << k;
    } else {
      for (uint k = 0; k < 32; ++k)
        if (first + k < n) mask |= (uint)PASSES(src, first + k) << k;
    }
  }
  const ulong word = (ulong)group * WG + word_in_tile;
  if (word * 32 < n) masks[word] = mask;
  const uint count = clprim_wg_reduce_add_uint(popcount(mask), scratch);
  CLPRIM_PUT_TILE_COUNT(tile_counts, count);
}
#endif
#endif

/* How a partition orders its failing elements: internal/layout.h's
 * PARTITION_STABLE and PARTITION_REVERSED_REST. */
#include "internal/layout.h"

/* A scatter's one output: element i's index (uint, or ulong when index64)
 * and / or its value x at position pos. */
#define PUT_OUTPUT(pos, i, x)                                                                      \
  do {                                                                                             \
    if (want_indices) {                                                                            \
      if (index64)                                                                                 \
        ((__global ulong *)indices)[pos] = (i);                                                    \
      else                                                                                         \
        indices[pos] = (uint)(i);                                                                  \
    }                                                                                              \
    if (want_values) values[pos] = (x);                                                            \
  } while (0)

/* Phase 3: writes each passing element (and with `partition` each failing
 * one, after offsets[tiles] passing ones or backwards from n - 1) to its
 * position: the index (uint, or ulong when index64) and / or the value.
 * Work-items take the tile's elements in turn (e = k WG + lid), so reads and
 * writes are coalesced. */
#ifdef KERNEL_select_scatter
#ifdef CLPRIM_CPU
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void select_scatter(__global const IN_T *in, ulong n, __global const uint *masks,
                    __global const ulong *offsets, ulong tiles, __global T *values,
                    __global uint *indices, int want_values, int want_indices, int index64,
                    int partition, int want_count, __global ulong *count_out IN_PARAMS) {
  const ulong g = get_global_id(0);
  if (want_count && g == tiles - 1) *count_out = offsets[tiles];
  ulong w0, w1;
  cpu_words(n, &w0, &w1);
  ulong passing = offsets[g]; /* the passing elements before the next one */
  const ulong passing_total = partition ? offsets[tiles] : 0;
  for (ulong w = w0; w < w1; ++w) {
    uint m = masks[w];
    const ulong first = w * 32;
    if (!partition) { /* the set bits alone */
      for (; m; m &= m - 1u) {
        const ulong i = first + (31u - clz(m & (0u - m)));
        PUT_OUTPUT(passing, i, VALUE_AT(in, i));
        ++passing;
      }
      continue;
    }
    for (uint k = 0; k < 32 && first + k < n; ++k) {
      const ulong i = first + k;
      ulong pos;
      if ((m >> k) & 1u)
        pos = passing++;
      else if (partition == PARTITION_REVERSED_REST)
        pos = n - 1 - (i - passing);
      else
        pos = passing_total + (i - passing);
      PUT_OUTPUT(pos, i, VALUE_AT(in, i));
    }
  }
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void select_scatter(__global const IN_T *in, ulong n, __global const uint *masks,
                    __global const ulong *offsets, ulong tiles, __global T *values,
                    __global uint *indices, int want_values, int want_indices, int index64,
                    int partition, int want_count, __global ulong *count_out IN_PARAMS) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  __local uint tile_masks[WG];
  __local ulong word_base[WG];
  const uint lid = (uint)get_local_id(0), group = (uint)get_group_id(0);
  /* The count too, so that one command writes every output. */
  if (want_count && group == tiles - 1 && lid == 0) *count_out = offsets[tiles];
  const ulong tile_first = (ulong)group * TILE;
  const ulong word = (ulong)group * WG + lid;
  const uint mask = word * 32 < n ? masks[word] : 0u;
  uint tile_total;
  const uint before = clprim_wg_scan_excl_add_uint(popcount(mask), scratch, &tile_total);
  tile_masks[lid] = mask;
  word_base[lid] = offsets[group] + before;
  const ulong passing_total = partition ? offsets[tiles] : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 0; k < 32; ++k) {
    const uint e = k * WG + lid;
    const ulong i = tile_first + e;
    if (i >= n) break;
    const uint m = tile_masks[e >> 5], bit = e & 31u;
    const ulong passing_before = word_base[e >> 5] + popcount(m & ((1u << bit) - 1u));
    ulong pos;
    if ((m >> bit) & 1u)
      pos = passing_before;
    else if (partition == PARTITION_REVERSED_REST)
      pos = n - 1 - (i - passing_before);
    else if (partition)
      pos = passing_total + (i - passing_before);
    else
      continue;
    PUT_OUTPUT(pos, i, VALUE_AT(in, i));
  }
}
#endif
#endif

/* ------------------------------------------------ three-way partition */
/* Two tests: class A passes the first, class B fails it and passes the
 * second, class C is the rest; the output holds all of A, then B, then C,
 * each in input order (stable). The tests are two built-in predicates (op,
 * a, b and op2, a2, b2), or with -DFLAG_T two flag arrays (flags1, flags2:
 * nonzero passes), or two expressions over x and i (STAGE_TESTS: the
 * functions stage_test_1 and stage_test_2 before this file).
 *  1. select3_masks: per word the masks of A and of B (masks[w] and
 *     masks[words + w]); tile t's counts at tile_counts[t] (A) and
 *     tile_counts[tiles + t] (B), and a 0 at tile_counts[2 tiles].
 *  2. one exclusive scan of those 2 tiles + 1 counts: offsets[t] is tile t's
 *     first A position, offsets[tiles + t] its first B position (after every
 *     A), offsets[2 tiles] the number of A and B together.
 *  3. select3_scatter: an element of C goes to offsets[2 tiles] plus the C
 *     elements before it; counts_out gets the two counts. */
#if defined(FLAG_T)
#define P3_FLAG_T FLAG_T
#define P3_FIRST(x, i) (flags1[i] != 0)
#define P3_SECOND(x, i) (flags2[i] != 0)
#elif defined(STAGE_TESTS) && STAGE_TESTS == 2
#define P3_FIRST(x, i) stage_test_1(x, i)
#define P3_SECOND(x, i) stage_test_2(x, i)
#else
#define P3_FIRST(x, i) builtin_passes(x, op, a, b)
#define P3_SECOND(x, i) builtin_passes(x, op2, a2, b2)
#endif
#ifndef P3_FLAG_T
#define P3_FLAG_T uchar /* (flags1 and flags2 unused) */
#endif
#ifdef KERNEL_select3_masks
#ifdef CLPRIM_CPU
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void select3_masks(__global const T *src, ulong n, int op, T a, T b, int op2, T a2, T b2,
                   __global uint *masks, ulong words, __global ulong *tile_counts,
                   __global const P3_FLAG_T *flags1, __global const P3_FLAG_T *flags2) {
  ulong w0, w1, count_a = 0, count_b = 0;
  cpu_words(n, &w0, &w1);
#ifdef FLAG_T
#define P3_X(i) ((T)0) /* the flags decide: the values are not read */
#else
#define P3_X(i) src[i]
#endif
#define P3_TEST_A(i) P3_FIRST(P3_X(i), (i))
#define P3_TEST_B(i) (!P3_FIRST(P3_X(i), (i)) && P3_SECOND(P3_X(i), (i)))
  for (ulong w = w0; w < w1; ++w) {
    uint ma, mb;
    CPU_MASK(ma, w, P3_TEST_A);
    CPU_MASK(mb, w, P3_TEST_B);
    masks[w] = ma, masks[words + w] = mb;
    count_a += popcount(ma), count_b += popcount(mb);
  }
  const ulong g = get_global_id(0), groups = get_global_size(0);
  tile_counts[g] = count_a;
  tile_counts[groups + g] = count_b;
  if (g == groups - 1) tile_counts[2 * groups] = 0;
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void select3_masks(__global const T *src, ulong n, int op, T a, T b, int op2, T a2, T b2,
                   __global uint *masks, ulong words, __global ulong *tile_counts,
                   __global const P3_FLAG_T *flags1, __global const P3_FLAG_T *flags2) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0), group = (uint)get_group_id(0);
  const ulong first = (ulong)group * TILE + (ulong)lid * 32;
  uint mask_a = 0, mask_b = 0;
  for (uint k = 0; k < 32; ++k) {
    const ulong i = first + k;
    if (i >= n) break;
#ifdef FLAG_T
    const T x = 0; /* the flags decide: the values are not read */
#else
    const T x = src[i];
#endif
    const uint in_a = (uint)P3_FIRST(x, i);
    mask_a |= in_a << k;
    mask_b |= (uint)(!in_a && P3_SECOND(x, i)) << k;
  }
  const ulong word = (ulong)group * WG + lid;
  if (word < words) masks[word] = mask_a, masks[words + word] = mask_b;
  /* Counts of A in the low 16 bits, of B in the high (a tile holds at most
   * 32 WG <= 32768 of each). */
  const uint both = clprim_wg_reduce_add_uint(popcount(mask_a) | popcount(mask_b) << 16, scratch);
  if (lid == 0) {
    const uint tiles = (uint)get_num_groups(0);
    tile_counts[group] = both & 0xFFFFu;
    tile_counts[tiles + group] = both >> 16;
    if (group == tiles - 1) tile_counts[2 * (ulong)tiles] = 0;
  }
}
#endif
#endif

#ifdef KERNEL_select3_scatter
#ifdef CLPRIM_CPU
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void select3_scatter(__global const T *in, ulong n, __global const uint *masks, ulong words,
                     __global const ulong *offsets, ulong tiles, __global T *values,
                     __global uint *indices, int want_values, int want_indices, int index64,
                     __global ulong *counts_out) {
  const ulong g = get_global_id(0);
  ulong w0, w1;
  cpu_words(n, &w0, &w1);
  /* The A and B positions of the next element of each (B's after every A). */
  ulong a_at = offsets[g], b_at = offsets[tiles + g];
  const ulong a_total = offsets[tiles], ab_total = offsets[2 * tiles];
  if (g == tiles - 1) counts_out[0] = a_total, counts_out[1] = ab_total - a_total;
  for (ulong w = w0; w < w1; ++w) {
    const uint ma = masks[w], mb = masks[words + w];
    const ulong first = w * 32;
    for (uint k = 0; k < 32 && first + k < n; ++k) {
      const ulong i = first + k;
      ulong pos;
      if ((ma >> k) & 1u)
        pos = a_at++;
      else if ((mb >> k) & 1u)
        pos = b_at++;
      else /* the C elements before i: i minus the A and B ones */
        pos = ab_total + (i - a_at - (b_at - a_total));
      PUT_OUTPUT(pos, i, in[i]);
    }
  }
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void select3_scatter(__global const T *in, ulong n, __global const uint *masks, ulong words,
                     __global const ulong *offsets, ulong tiles, __global T *values,
                     __global uint *indices, int want_values, int want_indices, int index64,
                     __global ulong *counts_out) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  __local uint tile_a[WG], tile_b[WG], word_before[WG];
  const uint lid = (uint)get_local_id(0), group = (uint)get_group_id(0);
  const ulong tile_first = (ulong)group * TILE;
  const ulong word = (ulong)group * WG + lid;
  const uint ma = word < words ? masks[word] : 0u, mb = word < words ? masks[words + word] : 0u;
  uint tile_both;
  const uint before = clprim_wg_scan_excl_add_uint(popcount(ma) | popcount(mb) << 16, scratch,
                                                   &tile_both);
  tile_a[lid] = ma, tile_b[lid] = mb, word_before[lid] = before;
  const ulong a_at = offsets[group], b_at = offsets[tiles + group];
  const ulong a_total = offsets[tiles], ab_total = offsets[2 * tiles];
  if (group == tiles - 1 && lid == 0) counts_out[0] = a_total, counts_out[1] = ab_total - a_total;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 0; k < 32; ++k) {
    const uint e = k * WG + lid;
    const ulong i = tile_first + e;
    if (i >= n) break;
    const uint w = e >> 5, bit = e & 31u, lower = (1u << bit) - 1u;
    const uint wa = tile_a[w], wb = tile_b[w], wbefore = word_before[w];
    const ulong a_before = a_at + (wbefore & 0xFFFFu) + popcount(wa & lower);
    const ulong b_before = b_at + (wbefore >> 16) + popcount(wb & lower);
    ulong pos;
    if ((wa >> bit) & 1u)
      pos = a_before;
    else if ((wb >> bit) & 1u)
      pos = b_before;
    else /* the C elements before i: i minus the A and B ones */
      pos = ab_total + (i - a_before - (b_before - a_total));
    PUT_OUTPUT(pos, i, in[i]);
  }
}
#endif
#endif

#ifdef CLPRIM_PATH_NV_PTX
/* Single pass with decoupled look-back (internal/lookback.h), nv_ptx only:
 * each work-group takes the next tile id, reads its SP_TILE elements once
 * (rows of WG 4-vectors, internal/tile.h), ranks the passing ones with warp
 * ballots, publishes its count, looks back for the count of all earlier
 * tiles and writes its passing elements, packed in local memory first. One
 * read of the input instead of two; no masks. Select, and the partition
 * with its rest reversed (the failing elements before a tile are its first
 * element's index minus the passing ones); a stable partition needs the
 * total first, so it runs the three phases.
 *
 * Order inside a tile: row r, then warp w, then lane, then vector component
 * c (e = (r WG + lid) 4 + c), so the chunk (r, w) holds 128 consecutive
 * elements. */
#ifndef ITEMS
#define ITEMS 16
#endif
#define SP_ROWS (ITEMS / 4)
#define SP_TILE ((ulong)WG * ITEMS)
#define SP_WARPS (WG / 32)
#define SP_CHUNKS (SP_ROWS * SP_WARPS)
#define SP_PER_LANE ((SP_CHUNKS + 31) / 32)
#define SRC_VEC4 CLPRIM_CAT(SRC_T, 4)
#if defined(FLAG_T) || defined(KEY_T)
#define SP_VALUE(s, k, i) in[i]
#else
#define SP_VALUE(s, k, i) in_value((s)[k], (i) IN_ARGS)
#endif
#define LB_T ulong
#define LB_BITS 62 /* counts */
#include "internal/lookback.h"
#include "internal/tile.h"

#ifdef KERNEL_select_single_pass
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void select_single_pass(__global const SRC_T *src, __global const IN_T *in, ulong n, int op, T a,
                        T b, __global uchar *state, uint tiles, __global T *values,
                        __global uint *indices, int want_values, int want_indices, int index64,
                        __global ulong *total, __global ulong *run_ends,
                        int reversed_rest IN_PARAMS) {
  __local uint chunk_base[SP_CHUNKS];
  __local T stage[SP_TILE];
  __local uint tile_id, tile_count;
  __local ulong tile_prefix;
  const uint lid = (uint)get_local_id(0), lane = lid & 31u, warp = lid >> 5;
  if (lid == 0) tile_id = lb_next_tile(state);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint tile = tile_id;
  const ulong tile_first = (ulong)tile * SP_TILE;

  /* Load every row first (so all loads are in flight together; a ballot
   * between loads would wait for each row), then evaluate: bit 4 r + c of
   * `pass` for element (r, c). */
  SRC_T s[ITEMS];
  const bool full = tile_first + SP_TILE <= n;
#pragma unroll
  for (uint r = 0; r < SP_ROWS; ++r) {
    const ulong first = tile_first + (ulong)(r * WG + lid) * 4;
    const SRC_VEC4 q = full ? CLPRIM_CAT(load4_full_, SRC_T)(src, first)
                            : CLPRIM_CAT(load4_, SRC_T)(src, n, first);
    s[4 * r] = q.s0, s[4 * r + 1] = q.s1, s[4 * r + 2] = q.s2, s[4 * r + 3] = q.s3;
  }
  uint pass = 0;
#ifdef RUNS
  const bool last_tile = tile_first + SP_TILE >= n;
  uint run_heads = 0, run_same_next = 0, run_valid = last_tile ? 0u : ~0u;
  uint run_has_next = run_valid;
#endif
#pragma unroll
  for (uint r = 0; r < SP_ROWS; ++r) {
    const ulong first = tile_first + (ulong)(r * WG + lid) * 4;
#ifdef RUNS
    /* Runs: bit masks of heads and of equal successors (internal/heads.h),
     * in 32-bit logic; the neighbours outside the vector are the next
     * lanes' (a shuffle), or for the warp's first and last lane in memory.
     * Element 0 and the bounds are applied below. */
    SRC_T before = CLPRIM_CAT(clprim_sg_shuffle_up_, SRC_T)(s[4 * r + 3], 1);
    if (lane == 0 && first > 0 && first <= n) before = src[first - 1];
    SRC_T after = s[4 * r + 3];
#if RUNS != RUN_HEAD
    after = CLPRIM_CAT(clprim_sg_shuffle_, SRC_T)(s[4 * r], (lane + 1) & 31u);
    if (lane == 31 && first + 4 < n) after = src[first + 4];
#endif
#pragma unroll
    for (uint c = 0; c < 4; ++c) {
      const SRC_T x = s[4 * r + c];
      run_heads |= (uint)!CLPRIM_SAME_RUN(c ? s[4 * r + c - 1] : before, x) << (4 * r + c);
      run_same_next |= (uint)CLPRIM_SAME_RUN(x, c < 3 ? s[4 * r + c + 1] : after) << (4 * r + c);
    }
    if (last_tile) {
      const ulong left = first < n ? n - first : 0; /* elements of this vector and after */
      run_valid |= (left >= 4 ? 0xFu : (1u << left) - 1u) << (4 * r);
      run_has_next |= (left >= 5 ? 0xFu : left ? (1u << (left - 1)) - 1u : 0u) << (4 * r);
    }
#else
    /* No bound tests in full tiles: with them, builds of an expression
     * predicate kept every element's result in a register of its own (108-
     * 119 registers against 64, 1.3 x the time on the H100). */
#pragma unroll
    for (uint c = 0; c < 4; ++c)
      pass |= (uint)((full || first + c < n) && PASSES_X(s[4 * r + c], first + c)) << (4 * r + c);
#endif
  }
#ifdef RUNS
  if (tile_first == 0 && lid == 0) run_heads |= 1u; /* element 0 */
  pass = clprim_run_edges(RUNS, run_heads, run_same_next, run_valid, run_has_next);
#endif
  uint lane_before[SP_ROWS];
  const uint lower = (1u << lane) - 1u;
#pragma unroll
  for (uint r = 0; r < SP_ROWS; ++r) {
    uint before = 0, row_total = 0;
#pragma unroll
    for (uint c = 0; c < 4; ++c) {
      const uint bits = clprim_sg_ballot((pass >> (4 * r + c)) & 1u);
      before += popcount(bits & lower);
      row_total += popcount(bits);
    }
    lane_before[r] = before;
    if (lane == 0) chunk_base[r * SP_WARPS + warp] = row_total;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  /* Warp 0: chunk offsets inside the tile, then the look-back. */
  if (warp == 0) {
    uint counts[SP_PER_LANE], sum = 0;
#pragma unroll
    for (uint q = 0; q < SP_PER_LANE; ++q) {
      const uint k = lane * SP_PER_LANE + q;
      counts[q] = k < SP_CHUNKS ? chunk_base[k] : 0u;
      sum += counts[q];
    }
    uint run = clprim_sg_scan_excl_add_uint(sum);
    const uint aggregate = clprim_sg_broadcast_uint(run + sum, 31);
#pragma unroll
    for (uint q = 0; q < SP_PER_LANE; ++q) {
      const uint k = lane * SP_PER_LANE + q;
      if (k < SP_CHUNKS) chunk_base[k] = run;
      run += counts[q];
    }
    ulong before = 0;
    if (tile == 0) {
      if (lane == 0) lb_publish(state, tiles, 0, LB_PREFIX, aggregate);
    } else {
      if (lane == 0) lb_publish(state, tiles, tile, LB_AGGREGATE, aggregate);
      before = lb_look_back(state, tiles, tile);
      if (lane == 0) lb_publish(state, tiles, tile, LB_PREFIX, before + aggregate);
    }
    if (lane == 0) {
      tile_prefix = before;
      tile_count = aggregate;
      if (tile == tiles - 1) *total = before + aggregate;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  /* The tile's passing elements are packed in local memory at their ranks,
   * then written out by consecutive work-items: whole coalesced rows,
   * instead of each lane storing its up-to-4 elements strided. Values
   * first, then indices (tile-relative in the same buffer). A partition
   * with its rest reversed (CUB's order) stages the tile's failing elements
   * after the passing ones, in input order, and writes them backwards from
   * the end of the output: element e of the tile is the (e - rank)-th
   * failing one, `rank` passing ones before it. */
  const ulong base = tile_prefix;
  const uint count = tile_count;
  /* Slot k >= count of the staged tile: the (tile_first - base + k - count)-th
   * failing element, written at n - 1 minus that. */
#define REST_POSITION(k) (n - 1 - tile_first + base + count - (k))
  const uint staged = reversed_rest ? (uint)min((ulong)SP_TILE, n - tile_first) : count;
  /* The tile staged in local memory: the passing elements at their ranks,
   * with a reversed rest the failing ones after them, backwards; what
   * element e of the tile (this work-item's k-th) stages is WHAT(k, e). */
#define SP_STAGE(stage, WHAT)                                                                      \
  _Pragma("unroll") for (uint r = 0; r < SP_ROWS; ++r) {                                           \
    uint rank = chunk_base[r * SP_WARPS + warp] + lane_before[r];                                  \
    _Pragma("unroll") for (uint c = 0; c < 4; ++c) {                                               \
      const uint e = (r * WG + lid) * 4 + c;                                                       \
      if ((pass >> (4 * r + c)) & 1u)                                                              \
        stage[rank++] = WHAT(4 * r + c, e);                                                        \
      else if (reversed_rest && tile_first + e < n)                                                \
        stage[count + e - rank] = WHAT(4 * r + c, e);                                              \
    }                                                                                              \
  }
#define SP_STAGE_VALUE(k, e) SP_VALUE(s, k, tile_first + (e))
#define SP_STAGE_INDEX(k, e) (e)
  if (want_values) {
    SP_STAGE(stage, SP_STAGE_VALUE)
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = lid; k < staged; k += WG)
      values[k < count ? base + k : REST_POSITION(k)] = stage[k];
  }
  if (want_indices) {
    __local uint *stage_index = (__local uint *)stage;
    barrier(CLK_LOCAL_MEM_FENCE);
    SP_STAGE(stage_index, SP_STAGE_INDEX)
    barrier(CLK_LOCAL_MEM_FENCE);
#if defined(RUNS) && RUNS == RUN_HEAD
    if (want_indices == 2) {
      /* Run lengths instead of positions: a run that ends inside the tile
       * gets its length; the tile's last run its start, which runs.cl's
       * runs_fix_ends turns into its length with the end that the tile
       * holding the next head (or the last tile) leaves in run_ends:
       * (the run's slot + 1, or 0 for none; its end). */
      for (uint k = lid; k < count; k += WG) {
        const ulong len = k + 1 < count ? (ulong)(stage_index[k + 1] - stage_index[k])
                                        : tile_first + stage_index[k];
        if (index64)
          ((__global ulong *)indices)[base + k] = len;
        else
          indices[base + k] = (uint)len;
      }
      if (lid == 0) {
        run_ends[2 * tile] = count > 0 && base > 0 ? base : 0;
        run_ends[2 * tile + 1] = tile_first + (count > 0 ? stage_index[0] : 0);
        if (tile == tiles - 1) run_ends[2 * tiles] = base + count, run_ends[2 * tiles + 1] = n;
      }
    } else
#endif
    if (index64)
      for (uint k = lid; k < staged; k += WG)
        ((__global ulong *)indices)[k < count ? base + k : REST_POSITION(k)] =
            tile_first + stage_index[k];
    else
      for (uint k = lid; k < staged; k += WG)
        indices[k < count ? base + k : REST_POSITION(k)] = (uint)(tile_first + stage_index[k]);
  }
}
#undef REST_POSITION
#undef SP_STAGE
#undef SP_STAGE_VALUE
#undef SP_STAGE_INDEX
#endif
#endif
