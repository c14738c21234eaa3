/* sample_select.h: the device code that selection by rank (nth_element.cl)
 * and top-k (topk.cl) share; kernels pull it in with
 * `#include "internal/sample_select.h"` (src/core/program.c inlines it from
 * the embedded copy). Kernels themselves stay in their family's file.
 *
 * Both files run on one level of SampleSelect (see nth_element.cl): top-k's
 * kernels read what nth_sample, nth_count and nth_choose leave in a level's
 * meta buffer (the splitters, the bucket totals, the cursors). Here: the
 * build options' defaults, the constants and the meta buffer's layout, the
 * splitters to local memory, the key range of a run of buckets, and the
 * traversal of the elements that the counting and gathering passes share.
 * The bucket search and the other helpers of the level kernels alone stay in
 * nth_element.cl, those of top-k's kernels alone in topk.cl.
 *
 * Build options (the same for both files: clprim__nth_options in
 * src/nth_element.c): -DT=int|uint|long|ulong|float|double (uint / ulong for
 * levels after the first, which hold keys), -DT_FLOAT=0|1, -DT_SIGNED=0|1,
 * -DKEY_BITS=32|64, -DWG (a power of two), -DITEMS (top-k elements per
 * work-item and tile, a multiple of 4); nth_count's build for callers that
 * reject NaNs adds -DNTH_COUNT_NANS=1. */
#ifndef CLPRIM_SAMPLE_SELECT_H
#define CLPRIM_SAMPLE_SELECT_H

#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 16
#endif

#ifndef NTH_VEC
#define NTH_VEC 4 /* vectors of 4 per work-item and round in the full passes */
#endif
#ifndef NTH_TOP
#define NTH_TOP 2 /* search-tree levels held in registers (0, 1 or 2) */
#endif
#ifndef NTH_TABLE_BITS
#define NTH_TABLE_BITS 13 /* 0: the tree search alone (for comparisons); at most 13 */
#endif
#ifndef NTH_MAXC
#define NTH_MAXC 16 /* chosen buckets listed in the meta (NTH_RANGE_MAX at most) */
#endif
#ifndef NTH_RANGE_MAX /* chosen buckets extracted by key ranges, not searched */
#if NTH_TABLE_BITS
#define NTH_RANGE_MAX 1 /* more: the table search is cheaper than NTH_RANGE_MAX compares */
#else
#define NTH_RANGE_MAX NTH_MAXC
#endif
#endif
#ifndef NTH_COUNT_NANS
#define NTH_COUNT_NANS 0 /* nth_count: NaNs also in the NaN slot */
#endif
#define NTH_E (4 * NTH_VEC)

/* A level's buckets: 2j for the keys between splitters s[j-1] and s[j],
 * 2j+1 for those equal to s[j] (SPLITTERS splitters from a sample of SAMPLE
 * keys); NAN_SLOT counts NaNs. Its meta buffer (META_*): where each chosen
 * bucket goes in the next buffer, the bucket totals, the cursors, the
 * splitters, the chosen buckets, the bucket table and its scale. */
#include "internal/layout.h"
#define BUCKETS NTH_BUCKETS
#define NAN_SLOT 511
#define SPLITTERS 255
#define SAMPLE 1024
#define BASE NTH_BASE
#define NOT_CHOSEN 0xFFFFFFFFFFFFFFFFul
#define NO_BASE 0xFFFFFFFFu

#include "internal/keys.h"
#define VEC4 CLPRIM_CAT(T, 4)

/* The elements come through internal/input.h. Where they can be missing
 * (a pipeline's filter in level 0's passes and in top-k's candidate path),
 * the counting and gathering passes skip a missing element (their validity
 * is then per element, NTH_VALID), and the sample takes it as the key at
 * the end that no wanted rank reaches: KEY_MAX for selection and the
 * smallest k (it sorts last; a splitter that is KEY_MAX only makes an empty
 * bucket or one of KEY_MAX keys that are there), 0 for the largest k
 * (nth_sample's argument missing_low, which only such builds have:
 * NTH_SAMPLE_PARAMS; an argument, not a build option, so that one build
 * serves both directions). */
#include "internal/input.h"
#if IN_FILTERS
#define NTH_SAMPLE_PARAMS , int missing_low IN_PARAMS
#define NTH_MISSING_KEY (missing_low ? (KEY)0 : KEY_MAX)
#define NTH_VALID(valid, e) (valid)[e]
#else
#define NTH_SAMPLE_PARAMS
#define NTH_MISSING_KEY KEY_MAX
#define NTH_VALID(valid, e) (valid)[(e) / 4]
#endif

/* The key of element i, whose input is a; *there: whether it is there. */
CLPRIM_INLINE KEY in_key(IN_T a, ulong i, int *there IN_PARAMS) {
  T x;
  *there = in_element(a, i, &x IN_ARGS);
  return key_of(x);
}

#define META_WORDS NTH_META_WORDS
#define META_REGION(m) (m)
#define META_TOTALS(m) ((__global uint *)((m) + NTH_META_TOTALS_AT))
#define META_CURSORS(m) ((__global uint *)((m) + NTH_META_CURSORS_AT))
#define META_TREE(m) ((__global KEY *)((m) + NTH_META_TREE_AT))
/* A filtered top-k's passing count (topk_candidates_direct): the cursor of
 * the NaN slot, which no extraction uses. */
#define META_PASSING(m) (META_CURSORS(m)[NAN_SLOT])
#define META_NCHOSEN(m) ((m)[1280]) /* open buckets chosen */
#define META_CHOSEN(m) ((m) + 1281) /* the first NTH_MAXC of them */
#define META_TABLE(m) ((__global uint *)((m) + 1312)) /* up to 2^13 + 2 ushorts */
#define META_SCALE(m) ((m)[3361])

CLPRIM_INLINE __global const KEY *tree_g_of(__global ulong *meta) {
  return META_TREE(meta);
}

CLPRIM_INLINE void load_tree(__local KEY *tree, __global const KEY *tree_g) {
  for (uint j = (uint)get_local_id(0); j < SPLITTERS + 1; j += WG)
    tree[j] = j < SPLITTERS ? tree_g[j] : KEY_MAX;
}

/* The smallest key whose bucket is at least b (bucket_of is monotone in the
 * key); *none when no key has. Splitters repeat under duplicates: an
 * equality bucket 2j+1 whose splitter equals s[j-1] stays empty. */
CLPRIM_INLINE KEY first_key_from(uint b, __local const KEY *tree, int *none) {
  const uint j = b / 2;
  *none = 0;
  if (b >= NAN_SLOT) {
    *none = 1;
    return 0;
  }
  if (!(b & 1u)) {
    if (j == 0) return 0;
    if (tree[j - 1] == KEY_MAX) *none = 1;
    return tree[j - 1] + 1;
  }
  if (j > 0 && tree[j - 1] == tree[j]) {
    if (tree[j] == KEY_MAX) *none = 1;
    return tree[j] + 1;
  }
  return tree[j];
}

/* The keys of buckets [lo, hi]: the keys k with k - *first <= *span
 * (unsigned); 0 when there are none. */
CLPRIM_INLINE int key_range(uint lo, uint hi, __local const KEY *tree, KEY *first, KEY *span) {
  int none_lo, none_hi;
  const KEY a = first_key_from(lo, tree, &none_lo);
  const KEY after = first_key_from(hi + 1, tree, &none_hi);
  const KEY b = none_hi ? KEY_MAX : after - 1;
  *first = a, *span = b - a;
  return !none_lo && !(!none_hi && after == 0) && a <= b;
}

/* The traversal shared by nth_count, nth_extract and topk_candidates, so
 * that each work-group sees the same elements in all: vectors of 4 taken
 * grid-stride, NTH_VEC of them per work-item and round (loads in flight;
 * uniform trip count within a work-group), the last n % 4 elements by
 * work-group 0, one per work-item (`group` of `groups`: the work-group
 * within its sub-problem). BATCH(keys, valid, quad) is called by
 * every work-item each round with NTH_E keys (key e from quad[e / 4],
 * valid for it: NTH_VALID(valid, e));
 * VISIT(key, valid, index) for the tail. TRAVERSE_FULL_FIRST (nth_count):
 * the rounds where all of the work-group's vectors lie inside come first,
 * with valid constant (no checks per key; the counting pass is bound by
 * instructions per key: H100, nth_approx 0.596 -> 0.588 ms; nth_extract_one
 * measured no better, so the other passes keep one loop). */
#if IN_FILTERS
/* Element e's key and validity (in range, and there), through
 * TRAVERSE_PASS(key, valid, pass, in_range): by default valid = pass.
 * nth_count defines it to fold a missing element into KEY_MAX, valid as
 * the range alone, and count it in fails_ (taken out of KEY_MAX's bucket
 * after the traversal): its pass is bound by instructions per key, and
 * keeping a validity per key cost more (H100, 2^28 floats, three tests in
 * the filter: 0.91 against 1.23 ms). */
#define TRAVERSE_KEY(c, sc)                                                                        \
  {                                                                                                \
    int pass_ = 0;                                                                                 \
    keys_[4 * v + c] = 0;                                                                          \
    if (in_range_)                                                                                 \
      keys_[4 * v + c] = in_key(x_.sc, offset + 4 * quad_[v] + c, &pass_ IN_ARGS);         \
    TRAVERSE_PASS(keys_[4 * v + c], valid_[4 * v + c], pass_, in_range_)                           \
  }
#define TRAVERSE_KEYS                                                                              \
  TRAVERSE_KEY(0, s0) TRAVERSE_KEY(1, s1) TRAVERSE_KEY(2, s2) TRAVERSE_KEY(3, s3)
#define TRAVERSE_VALID_SIZE NTH_E
#define TRAVERSE_TAIL_KEY(valid, i, key)                                                           \
  int pass_ = 0;                                                                                   \
  KEY key = 0;                                                                                     \
  if (valid) key = in_key(in[offset + i], offset + i, &pass_ IN_ARGS);                     \
  int tail_valid_;                                                                                 \
  TRAVERSE_PASS(key, tail_valid_, pass_, (valid))
#define TRAVERSE_PASS(key, valid, pass, in_range) valid = (pass);
#else
#define TRAVERSE_KEYS                                                                              \
  valid_[v] = in_range_;                                                                           \
  keys_[4 * v] = key_of(x_.s0), keys_[4 * v + 1] = key_of(x_.s1);                                  \
  keys_[4 * v + 2] = key_of(x_.s2), keys_[4 * v + 3] = key_of(x_.s3);
#define TRAVERSE_VALID_SIZE NTH_VEC
#define TRAVERSE_TAIL_KEY(valid, i, key)                                                           \
  const KEY key = key_of((valid) ? in[offset + i] : (T)0);                                         \
  const int tail_valid_ = (valid);
#endif
#define TRAVERSE_ROUND(BATCH, CHECK)                                                               \
  {                                                                                                \
    KEY keys_[NTH_E];                                                                              \
    int valid_[TRAVERSE_VALID_SIZE];                                                               \
    ulong quad_[NTH_VEC];                                                                          \
    _Pragma("unroll") for (uint v = 0; v < NTH_VEC; ++v) {                                         \
      quad_[v] = q0 + v * gsize;                                                                   \
      const int in_range_ = !(CHECK) || quad_[v] < quad_end;                                       \
      const IN_VEC4 x_ = in_range_ ? in4[quad_[v]] : (IN_VEC4)(0);                         \
      TRAVERSE_KEYS                                                                                \
    }                                                                                              \
    BATCH(keys_, valid_, quad_)                                                                    \
  }
/* The last n % 4 elements: work-group 0, one per work-item (on the cpu
 * path, whose work-groups may be one work-item, all by its first). */
#ifdef CLPRIM_CPU
#define TRAVERSE_TAIL(VISIT)                                                                       \
  if (group == 0 && lid_ == 0)                                                                     \
    for (ulong i = 4 * quads; i < n; ++i) {                                                        \
      TRAVERSE_TAIL_KEY(1, i, tail_key_)                                                           \
      VISIT(tail_key_, tail_valid_, i);                                                            \
    }
#else
#define TRAVERSE_TAIL(VISIT)                                                                       \
  if (group == 0) {                                                                                \
    const ulong i = 4 * quads + lid_;                                                              \
    TRAVERSE_TAIL_KEY(i < n, i, tail_key_)                                                         \
    VISIT(tail_key_, tail_valid_, i);                                                              \
  }
#endif
#ifdef CLPRIM_CPU
/* The cpu path: the work-group's contiguous share of the vectors, split
 * into one contiguous run per work-item (rounds of NTH_VEC consecutive
 * vectors, their number uniform within the work-group); the tail as
 * below. */
#define TRAVERSE_LOOPS(BATCH, VISIT, FULL_FIRST)                                                    \
  {                                                                                                \
    const ulong quads = n / 4, gsize = 1, lid_ = get_local_id(0);                                  \
    const ulong per_group_ = (quads + groups - 1) / groups;                                        \
    const ulong per_item_ = (per_group_ + WG - 1) / WG;                                            \
    const ulong group_end_ = min(quads, (group + 1) * per_group_);                                 \
    const ulong q_first_ = group * per_group_ + lid_ * per_item_;                                  \
    const ulong quad_end = min(group_end_, q_first_ + per_item_);                                  \
    __global const IN_VEC4 *in4 = (__global const IN_VEC4 *)(in + offset);                 \
    for (ulong q0 = q_first_; q0 < q_first_ + per_item_; q0 += NTH_VEC)                            \
      TRAVERSE_ROUND(BATCH, 1)                                                                     \
    TRAVERSE_TAIL(VISIT)                                                                           \
  }
#else
#define TRAVERSE_LOOPS(BATCH, VISIT, FULL_FIRST)                                                    \
  {                                                                                                \
    const ulong quads = n / 4, quad_end = quads, gsize = (ulong)groups * WG;                       \
    const ulong lid_ = get_local_id(0);                                                            \
    __global const IN_VEC4 *in4 = (__global const IN_VEC4 *)(in + offset);                 \
    ulong q0 = group * (ulong)WG + lid_;                                                           \
    if (FULL_FIRST)                                                                                \
      for (; q0 - lid_ + (WG - 1) + (NTH_VEC - 1) * gsize < quads; q0 += NTH_VEC * gsize)          \
        TRAVERSE_ROUND(BATCH, 0)                                                                   \
    for (; q0 < quads + lid_; q0 += NTH_VEC * gsize)                                               \
      TRAVERSE_ROUND(BATCH, 1)                                                                     \
    TRAVERSE_TAIL(VISIT)                                                                           \
  }
#endif
#define TRAVERSE(BATCH, VISIT) TRAVERSE_LOOPS(BATCH, VISIT, 0)
#define TRAVERSE_FULL_FIRST(BATCH, VISIT) TRAVERSE_LOOPS(BATCH, VISIT, 1)

#endif /* CLPRIM_SAMPLE_SELECT_H */
