/* nth_element.cl: selection by rank (nth_element, approximate selection,
 * quantiles, median), driven by src/nth_element.c. Top-k (src/topk.c, its
 * own kernels in cl/topk.cl) runs these level kernels too; what the two
 * files share (build options, constants, the meta buffer's layout, key
 * ranges of buckets, the traversal) is in internal/sample_select.h.
 *
 * SampleSelect (Ribizel and Anzt, "Parallel selection on GPUs", Parallel
 * Computing 2020): every element is mapped to an order-preserving unsigned
 * KEY (floats: sign-flipped bits, -0.0 as +0.0, every NaN one key above
 * +inf; signed integers: sign bit flipped), so one kernel family per key
 * width serves all six types. One level:
 *  1. nth_sample (one work-group): SAMPLE keys at pseudo-random positions,
 *     bitonic sort in local memory, 255 splitters every SAMPLE/256 keys; also
 *     zeroes the bucket totals.
 *     It also builds the bucket table (entry_of): 8192 entries over the
 *     splitters' key interval, each the range of splitters its keys can
 *     lie between.
 *  2. nth_count: each key's bucket by one load of the bucket table, and
 *     only where an entry holds splitters, a compare with its first and a
 *     binary search of the rest (-DNTH_TABLE_BITS=0: the branch-free search
 *     of an implicit tree, 8 local loads per key): bucket 2j is the
 *     open interval (s[j-1], s[j]), bucket 2j+1 the keys equal to s[j]
 *     (equality buckets: repeated splitters from duplicates make them big,
 *     and a rank that falls in one is answered at once). Counts per
 *     work-group in local memory (subgroup-aggregated where there is a
 *     ballot: peers with the same bucket add once), kept per group for
 *     step 4 and added atomically to the totals.
 *  3. nth_choose (one work-group): scans the totals, finds each wanted
 *     rank's bucket, answers ranks in equality buckets, places the chosen
 *     open buckets one after another in the next level's buffer.
 *  4. nth_extract: the same traversal as nth_count; each work-group reserves
 *     room for its share of each chosen bucket (its count from step 2) and
 *     writes those keys, unordered (order does not matter to selection).
 *     One chosen bucket is told by its key range (no search), more by the
 *     table search.
 * nth_table builds the bucket table of splitters written by the host (the
 * MPI library merges the ranks' samples on the host: src/mpi/selection.c).
 * A bucket of at most SMALL_MAX keys is finished by nth_small: one
 * work-group per rank repeats the level on its own (no host round trips),
 * and sorts the last BASE keys or fewer in local memory. */
#include "internal/sample_select.h"

/* The bucket table: TABLE_E entries over the splitters' key interval
 * [s_min, s_max] plus one for the keys below it and one for those above. */
#define TABLE_E (1u << NTH_TABLE_BITS)
#define TABLE_BELOW TABLE_E
#define TABLE_ABOVE (TABLE_E + 1)
#define TABLE_SIZE (TABLE_E + 2)

/* Bucket of k: 2j for s[j-1] < k < s[j], 2j+1 for k == s[j] (j = number of
 * splitters below k, found in 8 steps). */
CLPRIM_INLINE uint bucket_of(KEY k, __local const KEY *tree) {
  uint pos = 0;
  for (uint step = 128; step > 0; step >>= 1)
    if (tree[pos + step - 1] < k) pos += step;
  return 2 * pos + (pos < SPLITTERS && tree[pos] == k);
}

/* The bucket table (idea: a lookup by the key's position in the splitters'
 * interval replaces most of the search). entry_of is monotone in k, so for
 * a key in entry e the splitters below it number between lo(e) = #{j :
 * entry_of(s[j]) < e} and hi(e) = #{j : entry_of(s[j]) <= e}; table[e] =
 * lo | hi << 8. Keys below s[0] have entry TABLE_BELOW (0, 0), above
 * s[254] TABLE_ABOVE (255, 255). Where lo == hi (no splitter maps to the
 * entry: most entries when the table is several times finer than the
 * splitters) the bucket is 2 lo, no splitter read; else a binary search of
 * s[lo, hi) with the equality test from its last step. Correct for any
 * data: only the speed depends on how keys spread over the entries.
 * scale: entry = mul_hi(k - s_min, scale), clamped to TABLE_E - 1. */
#if NTH_TABLE_BITS
#ifndef NTH_CLAMP
#define NTH_CLAMP 1
#endif
CLPRIM_INLINE uint entry_of(KEY k, KEY smin, KEY smax, KEY scale) {
#if NTH_CLAMP /* keys outside [smin, smax] to the end entries: fewer instructions (H100,
                * 2^28 floats: nth_approx 0.70 against 0.73 ms); those keys then search */
  return (uint)min(mul_hi((KEY)(clamp(k, smin, smax) - smin), scale), (KEY)(TABLE_E - 1));
#else
  const KEY e = min(mul_hi((KEY)(k - smin), scale), (KEY)(TABLE_E - 1));
  return k < smin ? TABLE_BELOW : k > smax ? TABLE_ABOVE : (uint)e;
#endif
}

/* The scale that spreads [smin, smax] over the TABLE_E entries (rounding
 * does not matter: entry_of clamps, and any monotone map is correct). */
CLPRIM_INLINE KEY table_scale(KEY smin, KEY smax) {
  if (smax == smin) return 0;
#if KEY_BITS == 32
  const float two_kb = 4294967296.0f;
#else
  const float two_kb = 18446744073709551616.0f;
#endif
  const float f = (float)(TABLE_E - 1) * (two_kb / ((float)(smax - smin) + 1.0f));
  return f >= two_kb ? KEY_MAX : (KEY)f;
}

CLPRIM_INLINE uint bucket_in(KEY k, uint t, __local const KEY *tree) {
  uint lo = t & 0xFFu, hi = t >> 8;
  if (lo == hi) return 2 * lo;
  /* The entry's first splitter first: it answers keys up to it (an entry
   * of one splitter, or of one value repeated: duplicates), else the rest. */
  const KEY first = tree[lo];
  if (k <= first) return 2 * lo + (k == first);
  ++lo;
  int eq = 0;
  while (lo < hi) { /* s[hi] > k when hi < SPLITTERS: no equality there */
    const uint mid = (lo + hi) / 2;
    const KEY v = tree[mid];
    if (v < k)
      lo = mid + 1;
    else
      hi = mid, eq = v == k;
  }
  return 2 * lo + eq;
}

CLPRIM_INLINE uint bucket_by_table(KEY k, __local const ushort *table, __local const KEY *tree,
                                   KEY smin, KEY smax, KEY scale) {
  return bucket_in(k, table[entry_of(k, smin, smax, scale)], tree);
}

/* NTH_E keys: the table loads first (independent), then the searches. */
CLPRIM_INLINE void buckets_by_table(const KEY *k, uint *bucket, __local const ushort *table,
                                    __local const KEY *tree, KEY smin, KEY smax, KEY scale) {
  uint t[NTH_E];
#pragma unroll
  for (uint e = 0; e < NTH_E; ++e)
    t[e] = table[entry_of(k[e], smin, smax, scale)];
#pragma unroll
  for (uint e = 0; e < NTH_E; ++e)
    bucket[e] = bucket_in(k[e], t[e], tree);
}

/* The table to local memory (table_w: TABLE_SIZE / 2 uints). */
CLPRIM_INLINE void load_table(__local uint *table_w, __global const ulong *meta) {
  for (uint j = (uint)get_local_id(0); j < TABLE_SIZE / 2; j += WG)
    table_w[j] = META_TABLE(meta)[j];
}
#endif

/* Ascending bitonic sort of s[0, len), len a power of two, by the work-group.
 * Each step's work-items take the len / 2 pairs (i, i + j), i without bit j:
 * pair t has i = 2 t - t % j (none idle, half the iterations of one
 * work-item per element). */
CLPRIM_INLINE void local_sort(__local KEY *s, uint len) {
  const uint lid = (uint)get_local_id(0);
  for (uint k = 2; k <= len; k <<= 1)
    for (uint j = k >> 1; j > 0; j >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      for (uint t = lid; t < len / 2; t += WG) {
        const uint i = 2 * t - (t & (j - 1)), p = i + j;
        const KEY a = s[i], b = s[p];
        if ((a > b) == ((i & k) == 0)) s[i] = b, s[p] = a;
      }
    }
  barrier(CLK_LOCAL_MEM_FENCE);
}

CLPRIM_INLINE ulong mix64(ulong z) { /* splitmix64's finaliser */
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ul;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBul;
  return z ^ (z >> 31);
}

/* A level's sub-problems in one launch per kernel (nsubs > 0; else the
 * scalar arguments describe the one sub-problem): subs[SUB_WORDS s ...] =
 * offset, length, first work-group, work-groups, meta_at, counts_at,
 * state_at, r0, r1, rank_base, out_base, seed. nth_sample and nth_choose
 * run one work-group per sub-problem, nth_count and nth_extract the
 * sub-problem's work-groups. */
#define SUB_WORDS NTH_SUB_WORDS
CLPRIM_INLINE __global const ulong *sub_of_group(__global const ulong *subs, uint nsubs,
                                                 uint group) {
  uint lo = 0, hi = nsubs - 1; /* the last one whose first group <= group */
  while (lo < hi) {
    const uint mid = (lo + hi + 1) / 2;
    if (subs[SUB_WORDS * mid + 2] <= group)
      lo = mid;
    else
      hi = mid - 1;
  }
  return subs + SUB_WORDS * lo;
}

/* The start of nth_count, nth_extract and nth_extract_one: group and
 * groups (the work-group within its sub-problem, and the sub-problem's
 * work-groups), and with nsubs the sub-problem's offset, n, meta_at and
 * counts_at from its row; meta and counts moved to the parts. */
#define SUB_PROBLEM_SETUP                                                                          \
  uint group = (uint)get_group_id(0), groups = (uint)(get_global_size(0) / WG);                    \
  if (nsubs) {                                                                                     \
    __global const ulong *sub = sub_of_group(subs + subs_at, nsubs, group);                        \
    offset = sub[0], n = sub[1], group -= (uint)sub[2], groups = (uint)sub[3];                     \
    meta_at = sub[4], counts_at = sub[5];                                                          \
  }                                                                                                \
  meta += meta_at;                                                                                 \
  counts += counts_at;

#if NTH_TABLE_BITS
/* The bucket table of splitters sp[0], sp[stride], ... (SPLITTERS of
 * them, sorted) and its scale, to the meta buffer (see entry_of): the
 * splitters' entries, then each work-item walks TABLE_E / WG consecutive
 * entries: lo(e + 1) = hi(e), found by one binary search at its first entry
 * and steps after. ent: SPLITTERS + 1 uints. Ends with a barrier. */
CLPRIM_INLINE void make_table(__global ulong *meta, __local const KEY *sp, uint stride,
                              __local uint *ent) {
  const uint lid = (uint)get_local_id(0);
  const KEY smin = sp[0], smax = sp[(SPLITTERS - 1) * stride];
  const KEY scale = table_scale(smin, smax);
  for (uint j = lid; j < SPLITTERS + 1; j += WG)
    ent[j] = j < SPLITTERS ? entry_of(sp[j * stride], smin, smax, scale) : TABLE_E;
  barrier(CLK_LOCAL_MEM_FENCE);
  __global ushort *table = (__global ushort *)META_TABLE(meta);
  const uint per = (TABLE_E + WG - 1) / WG, e0 = lid * per;
  uint lo = 0; /* splitters whose entry is below e: ent[lo] is the first not */
  for (uint step = 128; step > 0; step >>= 1)
    if (ent[lo + step - 1] < e0) lo += step;
  for (uint e = e0; e < e0 + per && e < TABLE_E; ++e) {
    uint hi = lo; /* splitters whose entry is at most e */
    while (ent[hi] <= e) /* ent[SPLITTERS] = TABLE_E stops it */
      ++hi;
    table[e] = (ushort)(lo | hi << 8);
    lo = hi;
  }
  if (lid == 0) {
    table[TABLE_BELOW] = 0;
    table[TABLE_ABOVE] = (ushort)(SPLITTERS | SPLITTERS << 8);
  }
  if (lid == 0) META_SCALE(meta) = scale;
  barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

/* The bucket table (make_table) of the splitters that the host wrote to a
 * meta buffer's tree, with the totals zeroed (one work-group): the MPI
 * library (src/mpi/selection.c) merges the ranks' splitters on the host. */
#ifdef KERNEL_nth_table
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void nth_table(__global ulong *meta) {
  __local KEY tree[SPLITTERS + 1];
  const uint lid = (uint)get_local_id(0);
  load_tree(tree, META_TREE(meta));
  for (uint b = lid; b < BUCKETS; b += WG)
    META_TOTALS(meta)[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
#if NTH_TABLE_BITS
  __local uint ent[SPLITTERS + 1];
  make_table(meta, tree, 1, ent);
#endif
}
#endif

/* tree: the splitters (SPLITTERS keys); totals: BUCKETS counters, zeroed. */
#ifdef KERNEL_nth_sample
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
nth_sample(__global const IN_T *in, ulong offset, ulong n, ulong seed, __global ulong *meta,
           ulong meta_at, __global const ulong *subs, ulong subs_at, uint nsubs NTH_SAMPLE_PARAMS) {
  if (nsubs) {
    __global const ulong *sub = subs + subs_at + SUB_WORDS * get_group_id(0);
    offset = sub[0], n = sub[1], meta_at = sub[4], seed = sub[11];
  }
  meta += meta_at;
  __global KEY *tree = META_TREE(meta);
  __global uint *totals = META_TOTALS(meta);
  __local KEY s[SAMPLE];
  const uint lid = (uint)get_local_id(0);
  /* A fixed trip count, so that the loads are issued together (not on
   * the cpu path: one work-item would unroll SAMPLE iterations, seconds of
   * PoCL's compile). */
#ifndef CLPRIM_CPU
#pragma unroll
#endif
  for (uint r = 0; r < SAMPLE / WG; ++r) {
    const uint j = r * WG + lid;
    const ulong i = offset + mul_hi(mix64(seed + j), n); /* in [offset, offset + n) */
    int there;
    const KEY k = in_key(in[i], i, &there IN_ARGS);
    s[j] = there ? k : NTH_MISSING_KEY;
  }
  for (uint b = lid; b < BUCKETS; b += WG)
    totals[b] = 0;
  if (lid == 0) META_CURSORS(meta)[0] = 0; /* for topk_candidates_direct */
  if (IN_FILTERS && lid == 0) META_PASSING(meta) = 0; /* for a filtered topk_candidates_direct */
  local_sort(s, SAMPLE);
  for (uint j = lid; j < SPLITTERS; j += WG)
    tree[j] = s[(j + 1) * (SAMPLE / 256)];
#if NTH_TABLE_BITS
  __local uint ent[SPLITTERS + 1];
  make_table(meta, s + SAMPLE / 256, SAMPLE / 256, ent);
#endif
}
#endif

/* The splitters in Eytzinger (breadth-first) order, 1-based: node j at
 * depth d = log2(j) is splitter (2 (j - 2^d) + 1) 2^(7-d) - 1. A level's
 * nodes sit side by side, so the lanes of a subgroup that search one level
 * hit different banks (in sorted order a level's nodes are 2^(8-d) apart:
 * up to 8 of them in one bank). */
CLPRIM_INLINE void load_eytz(__local KEY *eytz, __global const KEY *tree_g) {
  for (uint j = (uint)get_local_id(0); j < SPLITTERS + 1; j += WG) {
    if (j == 0) continue;
    const uint d = 31 - clz(j);
    eytz[j] = tree_g[(2 * (j - (1u << d)) + 1) * (1u << (7 - d)) - 1];
  }
}

/* The buckets of NTH_E keys at once (the same as bucket_of): the searches
 * are independent, so their local-memory loads overlap (one search alone is
 * 9 dependent loads). The top NTH_TOP levels of the tree come from
 * registers (top[0..2] = eytz[1..3]); then i = 2 i + (eytz[i] < k), branch
 * free, and the splitters below k are i - 256. */
CLPRIM_INLINE void buckets_of(const KEY *k, uint *bucket, __local const KEY *tree,
                              __local const KEY *eytz, const KEY *top) {
  uint i[NTH_E];
#pragma unroll
  for (uint e = 0; e < NTH_E; ++e) {
    i[e] = 1;
#if NTH_TOP >= 1
    i[e] = 2 + (top[0] < k[e]);
#endif
#if NTH_TOP >= 2
    const KEY v = i[e] == 2 ? top[1] : top[2];
    i[e] = 2 * i[e] + (v < k[e]);
#endif
  }
#pragma unroll
  for (uint level = NTH_TOP; level < 8; ++level)
#pragma unroll
    for (uint e = 0; e < NTH_E; ++e)
      i[e] = 2 * i[e] + (eytz[i[e]] < k[e]);
#pragma unroll
  for (uint e = 0; e < NTH_E; ++e) {
    const uint pos = i[e] - 256;
    bucket[e] = 2 * pos + (pos < SPLITTERS && tree[pos] == k[e]);
  }
}

CLPRIM_INLINE void load_top(KEY *top, __local const KEY *eytz) {
  top[0] = eytz[1], top[1] = eytz[2], top[2] = eytz[3];
}

/* Adds one to counts[bucket] for a valid lane. (A subgroup-aggregated form,
 * where lanes that share a bucket add once, measured slower on the H100:
 * uniform 1.04 against 0.86 ms, 16 distinct values 1.05 against 0.87 ms for
 * the counting pass over 2^28 floats; docs/PERFORMANCE.md.) */
CLPRIM_INLINE void count_one(__local uint *counts, uint bucket, int valid) {
  if (valid) atomic_inc(&counts[bucket]);
}
/* The cpu path counts in each work-item's own counters (no atomic per
 * key), added to the work-group's at the end. */
#ifdef CLPRIM_CPU
#define COUNT_ONE(counts, bucket, valid) (own_counts[bucket] += (uint)((valid) != 0))
#define COUNT_INC(p) (++own_counts[(p) - local_counts])
#define COUNT_SUB(p, x) (own_counts[(p) - local_counts] -= (x))
#else
#define COUNT_ONE(counts, bucket, valid) count_one((counts), (bucket), (valid))
#define COUNT_INC(p) atomic_inc(p)
#define COUNT_SUB(p, x) atomic_sub((p), (x))
#endif

/* The bucket search of nth_count and nth_extract: by the table, or with
 * -DNTH_TABLE_BITS=0 by the tree alone. SEARCH_SETUP declares and loads
 * (before a barrier), SEARCH_TOP reads what the searches keep in registers
 * (after it). */
#if NTH_TABLE_BITS
#define SEARCH_SETUP                                                                               \
  __local uint table_w[TABLE_SIZE / 2];                                                            \
  load_table(table_w, meta);
#define SEARCH_TOP                                                                                 \
  __local const ushort *table = (__local const ushort *)table_w;                                   \
  const KEY smin = tree[0], smax = tree[SPLITTERS - 1], scale = (KEY)META_SCALE(meta);
#define SEARCH_BATCH(keys, b) buckets_by_table(keys, b, table, tree, smin, smax, scale)
#define SEARCH_ONE(k) bucket_by_table(k, table, tree, smin, smax, scale)
#else
#define SEARCH_SETUP                                                                               \
  __local KEY eytz[SPLITTERS + 1];                                                                 \
  load_eytz(eytz, tree_g);
#define SEARCH_TOP                                                                                 \
  KEY top[3];                                                                                      \
  load_top(top, eytz);
#define SEARCH_BATCH(keys, b) buckets_of(keys, b, tree, eytz, top)
#define SEARCH_ONE(k) bucket_of(k, tree)
#endif

/* counts[group * BUCKETS + b]: the group's keys in bucket b, also added to
 * totals[b]; b = NAN_SLOT: NaNs, counted only when built with
 * -DNTH_COUNT_NANS=1 (for callers that reject NaN input: the count costs
 * instructions per key, and the pass is bound by them). */
#ifdef KERNEL_nth_count
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
nth_count(__global const IN_T *in, ulong offset, ulong n, __global ulong *meta, ulong meta_at,
          __global uint *counts, ulong counts_at, __global const ulong *subs, ulong subs_at,
          uint nsubs IN_PARAMS) {
  SUB_PROBLEM_SETUP
  __global const KEY *tree_g = META_TREE(meta);
  __global uint *totals = META_TOTALS(meta);
  __local KEY tree[SPLITTERS + 1];
  __local uint local_counts[BUCKETS];
  const uint lid = (uint)get_local_id(0);
  load_tree(tree, tree_g);
  SEARCH_SETUP
  for (uint b = lid; b < BUCKETS; b += WG)
    local_counts[b] = 0;
#ifdef CLPRIM_CPU
  uint own_counts[BUCKETS];
  for (uint b = 0; b < BUCKETS; ++b) own_counts[b] = 0;
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  SEARCH_TOP
#if T_FLOAT && NTH_COUNT_NANS
#define COUNT_NAN(k, valid)                                                                        \
  if ((valid) && (k) == KEY_MAX) COUNT_INC(&local_counts[NAN_SLOT]);
#else
#define COUNT_NAN(k, valid)
#endif
#define COUNT_BATCH(keys, valid, quad)                                                             \
  {                                                                                                \
    uint b_[NTH_E];                                                                                \
    SEARCH_BATCH(keys, b_);                                                                        \
    _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e) {                                           \
      COUNT_ONE(local_counts, b_[e], NTH_VALID(valid, e));                                         \
      COUNT_NAN(keys[e], NTH_VALID(valid, e))                                                      \
    }                                                                                              \
  }
#define COUNT_VISIT(k, valid, i)                                                                   \
  {                                                                                                \
    const KEY k_ = (k);                                                                            \
    COUNT_ONE(local_counts, SEARCH_ONE(k_), (valid));                                              \
    COUNT_NAN(k_, valid)                                                                           \
  }
#if IN_FILTERS
#if T_FLOAT && NTH_COUNT_NANS
#error "a filtering source's count folds missing elements into KEY_MAX, NaN's key"
#endif
  /* Missing elements counted as KEY_MAX, then taken out (sample_select.h). */
  uint fails_ = 0;
#undef TRAVERSE_PASS
#define TRAVERSE_PASS(key, valid, pass, in_range)                                                  \
  {                                                                                                \
    const int failed_ = (in_range) && !(pass);                                                     \
    key = failed_ ? KEY_MAX : key;                                                                 \
    valid = (in_range);                                                                            \
    fails_ += (uint)failed_;                                                                       \
  }
  TRAVERSE_FULL_FIRST(COUNT_BATCH, COUNT_VISIT)
#undef TRAVERSE_PASS
#define TRAVERSE_PASS(key, valid, pass, in_range) valid = (pass);
  if (fails_) COUNT_SUB(&local_counts[SEARCH_ONE((KEY)KEY_MAX)], fails_);
#else
  TRAVERSE_FULL_FIRST(COUNT_BATCH, COUNT_VISIT)
#endif
#ifdef CLPRIM_CPU
  for (uint b = 0; b < BUCKETS; ++b)
    if (own_counts[b]) atomic_add(&local_counts[b], own_counts[b]);
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint b = lid; b < BUCKETS; b += WG) {
    const uint c = local_counts[b];
    counts[group * BUCKETS + b] = c;
    if (c) atomic_add(&totals[b], c);
  }
}
#endif

/* One work-group. For the ranks ranks[r0, r1) (minus rank_base, sorted):
 * state[0] = NaN count, state[1] = keys the extraction will write,
 * state[2 + 6 (r - r0) ...] = bucket, keys before the bucket, bucket size,
 * where the bucket goes in the next buffer (from out_base, 4-aligned), the
 * approximate answer (nearest splitter) and its rank distance. Ranks in
 * equality buckets get their key in results[r]. region_start[b] is set for
 * every bucket (NOT_CHOSEN when not extracted), cursors zeroed.
 * meta_at, counts_at, state_at (here and in the other level kernels): where
 * this sub-problem's parts start, so that all of a level's sub-problems are
 * enqueued before one read of their states. */
#ifdef KERNEL_nth_choose
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
nth_choose(__global ulong *meta, ulong meta_at, __global const ulong *ranks, uint r0, uint r1,
           ulong rank_base, ulong out_base, __global ulong *state, ulong state_at,
           __global ulong *results, __global const ulong *subs, ulong subs_at, uint nsubs) {
  if (nsubs) {
    __global const ulong *sub = subs + subs_at + SUB_WORDS * get_group_id(0);
    meta_at = sub[4], state_at = sub[6], r0 = (uint)sub[7], r1 = (uint)sub[8];
    rank_base = sub[9], out_base = sub[10];
  }
  meta += meta_at;
  state += state_at;
  __global const uint *totals = META_TOTALS(meta);
  __global const KEY *tree = META_TREE(meta);
  __global ulong *region_start = META_REGION(meta);
  __global uint *cursors = META_CURSORS(meta);
  __local ulong before[BUCKETS];
  __local uint chosen[BUCKETS];
  __local ulong region[BUCKETS];
  __local ulong scratch[CLPRIM_WG_SCRATCH(WG)];
  __local uint nchosen;
  const uint lid = (uint)get_local_id(0);
  const uint per = BUCKETS / WG; /* buckets per work-item (WG <= 512) */
  ulong mine = 0, total;
  if (lid == 0) nchosen = 0;
  for (uint j = 0; j < per; ++j) {
    const uint b = lid * per + j;
    chosen[b] = 0;
    mine += b < NAN_SLOT ? totals[b] : 0;
  }
  ulong run = clprim_wg_scan_excl_add_ulong(mine, scratch, &total);
  for (uint j = 0; j < per; ++j) {
    const uint b = lid * per + j;
    before[b] = run;
    run += b < NAN_SLOT ? totals[b] : 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint r = r0 + lid; r < r1; r += WG) {
    const ulong rel = ranks[r] - rank_base;
    uint lo = 0, hi = NAN_SLOT - 1; /* the last bucket b with before[b] <= rel */
    while (lo < hi) {
      const uint mid = (lo + hi + 1) / 2;
      if (before[mid] <= rel)
        lo = mid;
      else
        hi = mid - 1;
    }
    const uint b = lo;
    const ulong size = totals[b];
    __global ulong *st = state + NTH_STATE_HEAD + NTH_STATE_WORDS * (ulong)(r - r0);
    st[0] = b, st[1] = before[b], st[2] = size;
    KEY approx;
    ulong error = 0;
    if (b & 1u) {
      approx = tree[b / 2];
      results[r] = approx;
    } else {
      atomic_or(&chosen[b], 1u); /* ranks in one bucket: one write each */
      const uint j = b / 2;
      /* below: s[j-1], whose last rank is before[b] - 1; above: s[j], first
       * rank before[b] + size. Splitters are elements, so both exist. */
      const ulong err_below = j > 0 ? rel - (before[b] - 1) : 0xFFFFFFFFFFFFFFFFul;
      const ulong err_above = j < SPLITTERS ? before[b] + size - rel : 0xFFFFFFFFFFFFFFFFul;
      if (err_below <= err_above)
        approx = tree[j - 1], error = err_below;
      else
        approx = tree[j], error = err_above;
    }
    st[4] = approx, st[5] = error;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  /* The chosen buckets, 4-aligned, one after another. */
  mine = 0;
  for (uint j = 0; j < per; ++j) {
    const uint b = lid * per + j;
    if (chosen[b]) mine += (totals[b] + 3) & ~(ulong)3;
  }
  run = clprim_wg_scan_excl_add_ulong(mine, scratch, &total);
  for (uint j = 0; j < per; ++j) {
    const uint b = lid * per + j;
    region[b] = region_start[b] = chosen[b] ? out_base + run : NOT_CHOSEN;
    if (chosen[b]) {
      run += (totals[b] + 3) & ~(ulong)3;
      const uint c = atomic_inc(&nchosen); /* any order */
      if (c < NTH_MAXC) META_CHOSEN(meta)[c] = b;
    }
    cursors[b] = 0;
  }
  if (lid == 0) state[0] = totals[NAN_SLOT], state[1] = total;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) META_NCHOSEN(meta) = nchosen;
  for (uint r = r0 + lid; r < r1; r += WG) {
    __global ulong *st = state + NTH_STATE_HEAD + NTH_STATE_WORDS * (ulong)(r - r0);
    st[3] = (st[0] & 1u) ? 0 : region[st[0]];
  }
}
#endif

/* Writes the keys of the chosen buckets to out[region_start[b] + ...]. Up
 * to NTH_MAXC chosen buckets are told by their key ranges (a streaming pass:
 * no search), more by the search. */
#ifdef KERNEL_nth_extract
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
nth_extract(__global const IN_T *in, ulong offset, ulong n, __global ulong *meta,
            ulong meta_at, __global const uint *counts, ulong counts_at, __global KEY *out,
            __global const ulong *subs, ulong subs_at, uint nsubs IN_PARAMS) {
  SUB_PROBLEM_SETUP
  __global const KEY *tree_g = META_TREE(meta);
  __global const ulong *region_start = META_REGION(meta);
  __global uint *cursors = META_CURSORS(meta);
  __local KEY tree[SPLITTERS + 1];
  __local uint base[BUCKETS];
  __local uint fill[BUCKETS];
  __local KEY first[NTH_MAXC], span[NTH_MAXC];
  __local uint bucket_c[NTH_MAXC];
  __local ulong at[NTH_MAXC];
  __local uint ranged;
  const uint lid = (uint)get_local_id(0);
  const uint nchosen = (uint)META_NCHOSEN(meta);
  load_tree(tree, tree_g);
  if (lid == 0) ranged = 0;
  for (uint b = lid; b < BUCKETS; b += WG) {
    const uint c = counts[group * BUCKETS + b];
    base[b] =
        b < NAN_SLOT && c && region_start[b] != NOT_CHOSEN ? atomic_add(&cursors[b], c) : NO_BASE;
    fill[b] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (nchosen <= NTH_RANGE_MAX) {
    /* The chosen buckets this group holds keys of, compacted. */
    for (uint j = lid; j < nchosen; j += WG) {
      const uint b = (uint)META_CHOSEN(meta)[j];
      KEY f, s;
      if (base[b] != NO_BASE && key_range(b, b, tree, &f, &s)) {
        const uint c = atomic_inc(&ranged);
        first[c] = f, span[c] = s, bucket_c[c] = b, at[c] = region_start[b] + base[b];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint nr = ranged;
    if (nr == 0) return; /* uniform */
#define RANGE_VISIT(k, valid, i)                                                                   \
  if (valid) {                                                                                     \
    const KEY k_ = (k);                                                                            \
    for (uint c_ = 0; c_ < nr; ++c_)                                                               \
      if (k_ - first[c_] <= span[c_]) out[at[c_] + atomic_inc(&fill[bucket_c[c_]])] = k_;          \
  }
#define RANGE_BATCH(keys, valid, quad)                                                             \
  _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e)                                               \
      RANGE_VISIT(keys[e], NTH_VALID(valid, e), 0)
    TRAVERSE(RANGE_BATCH, RANGE_VISIT)
    return;
  }
  SEARCH_SETUP
  barrier(CLK_LOCAL_MEM_FENCE);
  SEARCH_TOP
#define EXTRACT_VISIT(k, valid, i)                                                                 \
  if (valid) {                                                                                     \
    const KEY k_ = (k);                                                                            \
    const uint b_ = SEARCH_ONE(k_);                                                                \
    if (base[b_] != NO_BASE) out[region_start[b_] + base[b_] + atomic_inc(&fill[b_])] = k_;        \
  }
#define EXTRACT_BATCH(keys, valid, quad)                                                           \
  {                                                                                                \
    uint b_[NTH_E];                                                                                \
    SEARCH_BATCH(keys, b_);                                                                        \
    _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e)                                             \
      if (NTH_VALID(valid, e) && base[b_[e]] != NO_BASE)                                           \
        out[region_start[b_[e]] + base[b_[e]] + atomic_inc(&fill[b_[e]])] = keys[e];               \
  }
  TRAVERSE(EXTRACT_BATCH, EXTRACT_VISIT)
}
#endif

/* nth_extract for one chosen open bucket b (the host saw one in the state):
 * its key range tells its keys, a streaming pass with no search and no
 * list of ranges. Same arguments as nth_extract, plus b. */
#ifdef KERNEL_nth_extract_one
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
nth_extract_one(__global const IN_T *in, ulong offset, ulong n, __global ulong *meta,
                ulong meta_at, __global const uint *counts, ulong counts_at, __global KEY *out,
                __global const ulong *subs, ulong subs_at, uint nsubs, uint b IN_PARAMS) {
  SUB_PROBLEM_SETUP
  __local KEY tree[SPLITTERS + 1];
  __local ulong at_l;
  __local uint fill;
  const uint lid = (uint)get_local_id(0);
  load_tree(tree, tree_g_of(meta));
  if (lid == 0) {
    const uint c = counts[group * BUCKETS + b];
    at_l = c ? META_REGION(meta)[b] + atomic_add(&META_CURSORS(meta)[b], c) : NOT_CHOSEN;
    fill = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong at = at_l;
  if (at == NOT_CHOSEN) return; /* uniform: none of the group's keys */
  KEY first, span;
  key_range(b, b, tree, &first, &span); /* not empty: the group holds keys of b */
#define ONE_VISIT(k, valid, i)                                                                     \
  if (valid) {                                                                                     \
    const KEY k_ = (k);                                                                            \
    if (k_ - first <= span) out[at + atomic_inc(&fill)] = k_;                                      \
  }
#define ONE_BATCH(keys, valid, quad)                                                               \
  _Pragma("unroll") for (uint e = 0; e < NTH_E; ++e)                                               \
      ONE_VISIT(keys[e], NTH_VALID(valid, e), 0)
  TRAVERSE(ONE_BATCH, ONE_VISIT)
}
#endif

/* Small sub-problems (at most SMALL_MAX keys), all of a level in one launch:
 * one work-group per wanted rank, no host round trip. state[8 + 5 (job_base
 * + group) ...]:
 * offset and length of the keys in `in`, the rank within them, where the
 * answer goes in results, and the work-group's room in `scratch` (2 length
 * keys, ping-pong). The work-group repeats the level (sample, count in
 * local memory, choose, extract) on its own until at most BASE keys are
 * left, then sorts them. state[0]: the NaNs that work-group 0 read in its
 * first round (all of in[offset, offset + length): used when the input
 * itself is small). */
#ifdef KERNEL_nth_small
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
nth_small(__global const T *in, __global ulong *state, ulong job_base, __global KEY *scratch,
          __global ulong *results) {
  __global const ulong *jobs = state + NTH_JOBS_AT + NTH_JOB_WORDS * job_base;
  __local KEY s[BASE];
  __local KEY tree[SPLITTERS + 1];
  __local uint counts[BUCKETS];
  __local ulong chosen[3]; /* bucket, keys before it, its size */
  __local uint fill;
  const uint lid = (uint)get_local_id(0);
  __global const ulong *job = jobs + NTH_JOB_WORDS * (ulong)get_group_id(0);
  const ulong offset = job[0], cap = job[1], where = job[3];
  ulong len = job[1], rel = job[2];
  __global KEY *room = scratch + job[4];
  __global const KEY *src = room; /* from the second round on */
  uint nans = 0, round = 0;
  int answered = 0;
#define SMALL_LOAD(i) (round == 0 ? key_of(in[offset + (i)]) : src[i])
  for (; len > BASE; ++round) {
    for (uint j = lid; j < SAMPLE; j += WG)
      s[j] = SMALL_LOAD(mix64(0xC0FFEEul + round * 7919ul + j) % len);
    for (uint b = lid; b < BUCKETS; b += WG)
      counts[b] = 0;
    local_sort(s, SAMPLE);
    for (uint j = lid; j < SPLITTERS + 1; j += WG)
      tree[j] = j < SPLITTERS ? s[(j + 1) * (SAMPLE / 256)] : KEY_MAX;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong i = lid; i < len; i += WG) {
      const KEY k = SMALL_LOAD(i);
#if T_FLOAT
      if (round == 0 && k == KEY_MAX) ++nans;
#endif
      atomic_inc(&counts[bucket_of(k, tree)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
      ulong before = 0;
      uint b = 0;
      while (b < NAN_SLOT - 1 && before + counts[b] <= rel)
        before += counts[b++];
      chosen[0] = b, chosen[1] = before, chosen[2] = counts[b];
      fill = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint b = (uint)chosen[0];
    if (b & 1u) { /* an equality bucket holds the answer */
      if (lid == 0) results[where] = tree[b / 2];
      answered = 1;
      break;
    }
    __global KEY *dst = room + (round & 1u) * cap;
    for (ulong i = lid; i < len; i += WG) {
      const KEY k = SMALL_LOAD(i);
      if (bucket_of(k, tree) == b) dst[atomic_inc(&fill)] = k;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    rel -= chosen[1];
    len = chosen[2];
    src = dst;
  }
  if (!answered) { /* at most BASE keys left: sort them */
    uint len2 = 1;
    while (len2 < len)
      len2 <<= 1;
    for (uint j = lid; j < len2; j += WG) {
      const KEY k = j < len ? SMALL_LOAD(j) : KEY_MAX;
#if T_FLOAT
      if (round == 0 && j < len && k == KEY_MAX) ++nans;
#endif
      s[j] = k;
    }
    local_sort(s, len2);
    if (lid == 0) results[where] = s[rel];
  }
#undef SMALL_LOAD
  if (get_group_id(0) == 0) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) fill = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (nans) atomic_add(&fill, nans);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) state[0] = fill;
  }
}
#endif
