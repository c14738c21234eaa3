/* nth_element.cl: selection by rank (nth_element, approximate selection,
 * quantiles) and top-k.
 *
 * SampleSelect (Ribizel and Anzt, "Parallel selection on GPUs", Parallel
 * Computing 2020): every element is mapped to an order-preserving unsigned
 * KEY (floats: sign-flipped bits, -0.0 as +0.0, every NaN one key above
 * +inf; signed integers: sign bit flipped), so one kernel family per key
 * width serves all six types. One level:
 *  1. nth_sample (one work-group): SAMPLE keys at pseudo-random positions,
 *     bitonic sort in local memory, 255 splitters every SAMPLE/256 keys; also
 *     zeroes the bucket totals.
 *  2. nth_count: each key's bucket by a branch-free binary search of the
 *     splitters (an implicit search tree in local memory): bucket 2j is the
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
 * A bucket of at most SMALL_MAX keys is finished by nth_small: one
 * work-group per rank repeats the level on its own (no host round trips),
 * and sorts the last BASE keys or fewer in local memory.
 *
 * Top-k: topk_count / topk_scatter compact the elements beyond a threshold
 * key plus the first `need` equal to it (ties to the lowest indices), in
 * index order; topk_sort_step / topk_gather sort them on request.
 *
 * Build options: -DT=int|uint|long|ulong|float|double (uint / ulong for
 * levels after the first, which hold keys), -DT_FLOAT=0|1, -DT_SIGNED=0|1,
 * -DKEY_BITS=32|64, -DWG (a power of two), -DITEMS (top-k elements per
 * work-item, a multiple of 4). */
#ifndef T
#define T uint
#define T_FLOAT 0
#define T_SIGNED 0
#define KEY_BITS 32
#endif
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 16
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#define BUCKETS 512  /* 511 buckets; slot 511 counts NaNs */
#define NAN_SLOT 511
#define SPLITTERS 255
#define SAMPLE 1024
#define BASE 2048
#define NOT_CHOSEN 0xFFFFFFFFFFFFFFFFul
#define NO_BASE 0xFFFFFFFFu

#if KEY_BITS == 32
#define KEY uint
#define KEY_SIGN 0x80000000u
#define KEY_MAX 0xFFFFFFFFu
#define AS_KEY as_uint
#else
#define KEY ulong
#define KEY_SIGN 0x8000000000000000ul
#define KEY_MAX 0xFFFFFFFFFFFFFFFFul
#define AS_KEY as_ulong
#endif
#define VEC4 CAT(T, 4)

/* The small buffer of one level, in ulong words: where each chosen bucket
 * goes in the next buffer, the bucket totals and extraction cursors (uint),
 * and the splitters. */
#define META_WORDS 1280
#define META_REGION(m) (m)
#define META_TOTALS(m) ((__global uint *)((m) + 512))
#define META_CURSORS(m) ((__global uint *)((m) + 768))
#define META_TREE(m) ((__global KEY *)((m) + 1024))

/* The order-preserving key of x. */
CLPRIM_INLINE KEY key_of(T x) {
#if T_FLOAT
  if (isnan(x)) return KEY_MAX;
  KEY b = x == (T)0 ? (KEY)0 : AS_KEY(x); /* -0 equals +0 */
  return (b & KEY_SIGN) ? ~b : (b | KEY_SIGN);
#elif T_SIGNED
  return AS_KEY(x) ^ KEY_SIGN;
#else
  return x;
#endif
}

/* Bucket of k: 2j for s[j-1] < k < s[j], 2j+1 for k == s[j] (j = number of
 * splitters below k, found in 8 steps). */
CLPRIM_INLINE uint bucket_of(KEY k, __local const KEY *tree) {
  uint pos = 0;
  for (uint step = 128; step > 0; step >>= 1)
    if (tree[pos + step - 1] < k) pos += step;
  return 2 * pos + (pos < SPLITTERS && tree[pos] == k);
}

/* Ascending bitonic sort of s[0, len), len a power of two, by the work-group. */
CLPRIM_INLINE void local_sort(__local KEY *s, uint len) {
  const uint lid = (uint)get_local_id(0);
  for (uint k = 2; k <= len; k <<= 1)
    for (uint j = k >> 1; j > 0; j >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      for (uint i = lid; i < len; i += WG) {
        const uint p = i ^ j;
        if (p > i) {
          const KEY a = s[i], b = s[p];
          if ((a > b) == ((i & k) == 0)) s[i] = b, s[p] = a;
        }
      }
    }
  barrier(CLK_LOCAL_MEM_FENCE);
}

CLPRIM_INLINE ulong mix64(ulong z) { /* splitmix64's finaliser */
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ul;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBul;
  return z ^ (z >> 31);
}

/* tree: the splitters (SPLITTERS keys); totals: BUCKETS counters, zeroed. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nth_sample(__global const T *in, ulong offset, ulong n, ulong seed, __global ulong *meta) {
  __global KEY *tree = META_TREE(meta);
  __global uint *totals = META_TOTALS(meta);
  __local KEY s[SAMPLE];
  const uint lid = (uint)get_local_id(0);
  in += offset;
  for (uint j = lid; j < SAMPLE; j += WG) s[j] = key_of(in[mix64(seed + j) % n]);
  for (uint b = lid; b < BUCKETS; b += WG) totals[b] = 0;
  local_sort(s, SAMPLE);
  for (uint j = lid; j < SPLITTERS; j += WG) tree[j] = s[(j + 1) * (SAMPLE / 256)];
}

CLPRIM_INLINE __global const KEY *tree_g_of(__global ulong *meta) { return META_TREE(meta); }

CLPRIM_INLINE void load_tree(__local KEY *tree, __global const KEY *tree_g) {
  for (uint j = (uint)get_local_id(0); j < SPLITTERS + 1; j += WG)
    tree[j] = j < SPLITTERS ? tree_g[j] : KEY_MAX;
}

/* The traversal shared by nth_count and nth_extract, so that each
 * work-group sees the same elements in both: vectors of 4 taken grid-stride
 * (uniform trip count within a work-group), the last n % 4 elements by
 * work-group 0. VISIT(key, valid, index) is called by every work-item each
 * round. */
#define TRAVERSE(VISIT)                                                                            \
  {                                                                                                \
    const ulong quads = n / 4, gsize = get_global_size(0);                                         \
    __global const VEC4 *in4 = (__global const VEC4 *)(in + offset);                               \
    /* two vectors in flight per work-item and round (memory parallelism) */                       \
    for (ulong q0 = get_group_id(0) * (ulong)WG; q0 < quads; q0 += 2 * gsize) {                    \
      const ulong q = q0 + get_local_id(0), r = q + gsize;                                         \
      const int valid = q < quads, valid_r = r < quads;                                            \
      const VEC4 v = valid ? in4[q] : (VEC4)(0);                                                   \
      const VEC4 w = valid_r ? in4[r] : (VEC4)(0);                                                 \
      VISIT(key_of(v.s0), valid, 4 * q);                                                           \
      VISIT(key_of(v.s1), valid, 4 * q + 1);                                                       \
      VISIT(key_of(v.s2), valid, 4 * q + 2);                                                       \
      VISIT(key_of(v.s3), valid, 4 * q + 3);                                                       \
      VISIT(key_of(w.s0), valid_r, 4 * r);                                                         \
      VISIT(key_of(w.s1), valid_r, 4 * r + 1);                                                     \
      VISIT(key_of(w.s2), valid_r, 4 * r + 2);                                                     \
      VISIT(key_of(w.s3), valid_r, 4 * r + 3);                                                     \
    }                                                                                              \
    if (get_group_id(0) == 0) {                                                                    \
      const ulong i = 4 * quads + get_local_id(0);                                                 \
      const int valid = i < n;                                                                     \
      VISIT(key_of(valid ? in[offset + i] : (T)0), valid, i);                                      \
    }                                                                                              \
  }

/* Adds one to counts[bucket] for each valid lane. With a ballot, the lanes
 * whose bucket is the subgroup's first lane's (all of them when the data
 * are equal or sorted: the case where plain local atomics serialise) are
 * found by one ballot and add once per 32-lane word; the others add alone.
 * (A full match over the bucket's 9 bits costs 9 ballots per element, more
 * than the atomics it saves on spread data.) */
#if defined(CLPRIM_HAS_BALLOT) && !defined(NTH_NO_AGGREGATE)
CLPRIM_INLINE void count_one(__local uint *counts, uint bucket, int valid) {
  const uint b = valid ? bucket : BUCKETS; /* 512: never a real bucket */
  const uint first = clprim_sg_broadcast_uint(b, 0);
  const int peer = valid && b == first;
  const uint peers = clprim_sg_ballot(peer);
  if (peer) {
    if ((peers & clprim_sg_lanemask_lt()) == 0) atomic_add(&counts[b], popcount(peers));
  } else if (valid) {
    atomic_inc(&counts[b]);
  }
}
#else
CLPRIM_INLINE void count_one(__local uint *counts, uint bucket, int valid) {
  if (valid) atomic_inc(&counts[bucket]);
}
#endif

/* counts[group * BUCKETS + b]: the group's keys in bucket b (b = NAN_SLOT:
 * NaNs), also added to totals[b]. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nth_count(__global const T *in, ulong offset, ulong n, __global ulong *meta,
               __global uint *counts) {
  __global const KEY *tree_g = META_TREE(meta);
  __global uint *totals = META_TOTALS(meta);
  __local KEY tree[SPLITTERS + 1];
  __local uint local_counts[BUCKETS];
  const uint lid = (uint)get_local_id(0);
  load_tree(tree, tree_g);
  for (uint b = lid; b < BUCKETS; b += WG) local_counts[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
#if T_FLOAT
#define COUNT_VISIT(k, valid, i)                                                                   \
  {                                                                                                \
    const KEY k_ = (k);                                                                            \
    count_one(local_counts, bucket_of(k_, tree), (valid));                                         \
    if ((valid) && k_ == KEY_MAX) atomic_inc(&local_counts[NAN_SLOT]);                             \
  }
#else
#define COUNT_VISIT(k, valid, i) count_one(local_counts, bucket_of((k), tree), (valid))
#endif
  TRAVERSE(COUNT_VISIT)
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint b = lid; b < BUCKETS; b += WG) {
    const uint c = local_counts[b];
    counts[get_group_id(0) * BUCKETS + b] = c;
    if (c) atomic_add(&totals[b], c);
  }
}

/* One work-group. For the ranks ranks[r0, r1) (minus rank_base, sorted):
 * state[0] = NaN count, state[1] = keys the extraction will write,
 * state[2 + 6 (r - r0) ...] = bucket, keys before the bucket, bucket size,
 * where the bucket goes in the next buffer (from out_base, 4-aligned), the
 * approximate answer (nearest splitter) and its rank distance. Ranks in
 * equality buckets get their key in results[r]. region_start[b] is set for
 * every bucket (NOT_CHOSEN when not extracted), cursors zeroed. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nth_choose(__global ulong *meta, __global const ulong *ranks, uint r0, uint r1,
                ulong rank_base, ulong out_base, __global ulong *state, __global ulong *results) {
  __global const uint *totals = META_TOTALS(meta);
  __global const KEY *tree = META_TREE(meta);
  __global ulong *region_start = META_REGION(meta);
  __global uint *cursors = META_CURSORS(meta);
  __local ulong before[BUCKETS];
  __local uint chosen[BUCKETS];
  __local ulong region[BUCKETS];
  __local ulong scratch[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0);
  const uint per = BUCKETS / WG; /* buckets per work-item (WG <= 512) */
  ulong mine = 0, total;
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
      if (before[mid] <= rel) lo = mid; else hi = mid - 1;
    }
    const uint b = lo;
    const ulong size = totals[b];
    __global ulong *st = state + 2 + 6 * (ulong)(r - r0);
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
    if (chosen[b]) run += (totals[b] + 3) & ~(ulong)3;
    cursors[b] = 0;
  }
  if (lid == 0) state[0] = totals[NAN_SLOT], state[1] = total;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint r = r0 + lid; r < r1; r += WG) {
    __global ulong *st = state + 2 + 6 * (ulong)(r - r0);
    st[3] = (st[0] & 1u) ? 0 : region[st[0]];
  }
}

/* Writes the keys of the chosen buckets to out[region_start[b] + ...]. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nth_extract(__global const T *in, ulong offset, ulong n, __global ulong *meta,
                 __global const uint *counts, __global KEY *out) {
  __global const KEY *tree_g = META_TREE(meta);
  __global const ulong *region_start = META_REGION(meta);
  __global uint *cursors = META_CURSORS(meta);
  __local KEY tree[SPLITTERS + 1];
  __local uint base[BUCKETS];
  __local uint fill[BUCKETS];
  const uint lid = (uint)get_local_id(0);
  load_tree(tree, tree_g);
  for (uint b = lid; b < BUCKETS; b += WG) {
    const uint c = counts[get_group_id(0) * BUCKETS + b];
    base[b] = b < NAN_SLOT && c && region_start[b] != NOT_CHOSEN ? atomic_add(&cursors[b], c)
                                                                  : NO_BASE;
    fill[b] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#define EXTRACT_VISIT(k, valid, i)                                                                 \
  if (valid) {                                                                                     \
    const KEY k_ = (k);                                                                            \
    const uint b_ = bucket_of(k_, tree);                                                           \
    if (base[b_] != NO_BASE) out[region_start[b_] + base[b_] + atomic_inc(&fill[b_])] = k_;        \
  }
  TRAVERSE(EXTRACT_VISIT)
}

/* Small sub-problems (at most SMALL_MAX keys), all of a level in one launch:
 * one work-group per wanted rank, no host round trip. state[8 + 5 group ...]:
 * offset and length of the keys in `in`, the rank within them, where the
 * answer goes in results, and the work-group's room in `scratch` (2 length
 * keys, ping-pong). The work-group repeats the level (sample, count in
 * local memory, choose, extract) on its own until at most BASE keys are
 * left, then sorts them. state[0]: the NaNs that work-group 0 read in its
 * first round (all of in[offset, offset + length): used when the input
 * itself is small). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nth_small(__global const T *in, __global ulong *state, __global KEY *scratch,
               __global ulong *results) {
  __global const ulong *jobs = state + 8;
  __local KEY s[BASE];
  __local KEY tree[SPLITTERS + 1];
  __local uint counts[BUCKETS];
  __local ulong chosen[3]; /* bucket, keys before it, its size */
  __local uint fill;
  const uint lid = (uint)get_local_id(0);
  __global const ulong *job = jobs + 5 * (ulong)get_group_id(0);
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
    for (uint b = lid; b < BUCKETS; b += WG) counts[b] = 0;
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
      while (b < NAN_SLOT - 1 && before + counts[b] <= rel) before += counts[b++];
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
    while (len2 < len) len2 <<= 1;
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

/* ----------------------------------------------------------------- top-k */

/* Whether key k is beyond the threshold t (above it for the largest, below
 * it for the smallest). */
CLPRIM_INLINE int beyond(KEY k, KEY t, int smallest) { return smallest ? k < t : k > t; }

/* counts[tile] = (beyond << 32) | equal for the tile's WG * ITEMS elements
 * (each work-item ITEMS consecutive ones); counts[tiles] = 0. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void topk_count(__global const T *in, ulong n, KEY t, int smallest, __global ulong *counts) {
  __local ulong scratch[CLPRIM_WG_SCRATCH(WG)];
  const ulong first = ((ulong)get_group_id(0) * WG + get_local_id(0)) * ITEMS;
  ulong c = 0;
  for (uint j = 0; j < ITEMS; ++j) {
    if (first + j >= n) break;
    const KEY k = key_of(in[first + j]);
    c += beyond(k, t, smallest) ? ((ulong)1 << 32) : (k == t ? 1ul : 0ul);
  }
  const ulong total = clprim_wg_reduce_add_ulong(c, scratch);
  if (get_local_id(0) == 0) {
    counts[get_group_id(0)] = total;
    if (get_group_id(0) == get_num_groups(0) - 1) counts[get_num_groups(0)] = 0;
  }
}

/* After an exclusive scan of counts: element i is taken when beyond, or
 * equal and among the first `need` equal ones (need = k - all beyond); its
 * place is (beyond before it) + min(equal before it, need): index order.
 * sorted = 0: values (T) and indices (uint, or ulong when index64) to the
 * outputs; sorted = 1: sort keys (largest first: ~key) to sort_keys and
 * indices (ulong) to sort_indices. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void topk_scatter(__global const T *in, ulong n, KEY t, int smallest,
                  __global const ulong *offsets, ulong tiles, ulong k, __global T *values,
                  __global uint *indices, int want_values, int want_indices, int index64,
                  int sorted, __global KEY *sort_keys, __global ulong *sort_indices) {
  __local ulong scratch[CLPRIM_WG_SCRATCH(WG)];
  const ulong first = ((ulong)get_group_id(0) * WG + get_local_id(0)) * ITEMS;
  ulong c = 0;
  for (uint j = 0; j < ITEMS; ++j) {
    if (first + j >= n) break;
    const KEY key = key_of(in[first + j]);
    c += beyond(key, t, smallest) ? ((ulong)1 << 32) : (key == t ? 1ul : 0ul);
  }
  ulong all;
  const ulong b = offsets[get_group_id(0)] + clprim_wg_scan_excl_add_ulong(c, scratch, &all);
  const ulong need = k - (offsets[tiles] >> 32);
  ulong beyond_before = b >> 32, equal_before = b & 0xFFFFFFFFul;
  for (uint j = 0; j < ITEMS; ++j) {
    const ulong i = first + j;
    if (i >= n) break;
    const T x = in[i];
    const KEY key = key_of(x);
    ulong pos;
    if (beyond(key, t, smallest)) {
      pos = beyond_before + min(equal_before, need);
      ++beyond_before;
    } else if (key == t && equal_before < need) {
      pos = beyond_before + equal_before;
      ++equal_before;
    } else {
      continue;
    }
    if (sorted) {
      sort_keys[pos] = smallest ? key : ~key;
      sort_indices[pos] = i;
    } else {
      if (want_values) values[pos] = x;
      if (want_indices) {
        if (index64)
          ((__global ulong *)indices)[pos] = i;
        else
          indices[pos] = (uint)i;
      }
    }
  }
}

/* The padding of the sort arrays, [k, len2): sorts last. (A kernel, not a
 * fill: Oclgrind does not count filled bytes as initialised.) */
__kernel void topk_pad(__global KEY *keys, __global ulong *idx, ulong k, ulong len2) {
  const ulong j = k + get_global_id(0);
  if (j < len2) keys[j] = KEY_MAX, idx[j] = 0xFFFFFFFFFFFFFFFFul;
}

/* One step (block size `block`, distance `dist`) of an ascending bitonic
 * sort of (key, index) pairs in global memory; one work-item per pair. */
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

/* The sorted pairs to the outputs: values[j] = in[idx[j]]. */
__kernel void topk_gather(__global const T *in, __global const ulong *idx, ulong k,
                          __global T *values, __global uint *indices, int want_values,
                          int want_indices, int index64) {
  const ulong j = get_global_id(0);
  if (j >= k) return;
  const ulong i = idx[j];
  if (want_values) values[j] = in[i];
  if (want_indices) {
    if (index64)
      ((__global ulong *)indices)[j] = i;
    else
      indices[j] = (uint)i;
  }
}

/* ------------------------------------------------- top-k, small k (<= BASE)
 * After one counting level for the threshold's rank, every element of a
 * bucket beyond the threshold's bucket is in the top k: one pass gathers the
 * candidates (those buckets and the threshold's, with their indices), and
 * the rest works on the candidates only. Candidate buffer `cand`, in ulong
 * words: keys (KEY) from 0, indices from idx_at, equal-to-threshold indices
 * from eq_at, the chosen (sort key, index) pairs from pk_at / pi_at, and
 * two cursors (uint) at cur_at. */

/* Keys and indices of the elements in buckets [lo, hi], unordered. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void topk_candidates(__global const T *in, ulong offset, ulong n, __global ulong *meta,
                     __global const uint *counts, uint lo, uint hi, __global ulong *cand,
                     ulong idx_at) {
  __local KEY tree[SPLITTERS + 1];
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  __local uint base, fill;
  const uint lid = (uint)get_local_id(0);
  __global KEY *cand_keys = (__global KEY *)cand;
  __global ulong *cand_idx = cand + idx_at;
  load_tree(tree, tree_g_of(meta));
  uint mine = 0;
  for (uint b = lid; b < NAN_SLOT; b += WG)
    if (b >= lo && b <= hi) mine += counts[get_group_id(0) * BUCKETS + b];
  const uint total = clprim_wg_reduce_add_uint(mine, scratch);
  if (lid == 0) base = total ? atomic_add(&META_CURSORS(meta)[0], total) : 0, fill = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
#define CANDIDATE_VISIT(k, valid, i)                                                               \
  if (valid) {                                                                                     \
    const KEY k_ = (k);                                                                            \
    const uint b_ = bucket_of(k_, tree);                                                           \
    if (b_ >= lo && b_ <= hi) {                                                                    \
      const uint p_ = base + atomic_inc(&fill);                                                    \
      cand_keys[p_] = k_;                                                                          \
      cand_idx[p_] = (i);                                                                          \
    }                                                                                              \
  }
  TRAVERSE(CANDIDATE_VISIT)
}

/* Splits the c candidates against the threshold key t: those beyond it go
 * to the pairs (sort key: smallest ? key : ~key when sorted, else 0), the
 * indices of those equal to it to eq. cursors[0] / [1] count them. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void topk_split(__global ulong *cand, ulong idx_at, ulong c, KEY t, int smallest, int sorted,
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

/* One work-group: the g pairs beyond the threshold and the equal ones with
 * index <= last (k in all), sorted by (sort key, index) in local memory,
 * to the outputs (values gathered from in). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void topk_finish(__global const T *in, __global const ulong *cand, ulong pk_at, ulong pi_at,
                 uint g, ulong eq_at, ulong e, ulong last, KEY t, int smallest, int sorted, uint k,
                 __global T *values, __global uint *indices, int want_values, int want_indices,
                 int index64) {
  __local KEY sk[BASE];
  __local ulong si[BASE];
  __local uint fill;
  const uint lid = (uint)get_local_id(0);
  uint len2 = 1;
  while (len2 < k) len2 <<= 1;
  if (lid == 0) fill = g;
  for (uint j = lid; j < len2; j += WG) {
    sk[j] = j < g ? ((__global const KEY *)(cand + pk_at))[j] : KEY_MAX;
    si[j] = j < g ? cand[pi_at + j] : 0xFFFFFFFFFFFFFFFFul;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const KEY tk = sorted ? (smallest ? t : ~t) : (KEY)0;
  for (ulong j = lid; j < e; j += WG) {
    const ulong i = cand[eq_at + j];
    if (i <= last) {
      const uint p = atomic_inc(&fill);
      sk[p] = tk, si[p] = i;
    }
  }
  for (uint b = 2; b <= len2; b <<= 1)
    for (uint d = b >> 1; d > 0; d >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
      for (uint i = lid; i < len2; i += WG) {
        const uint p = i ^ d;
        if (p > i) {
          const KEY ka = sk[i], kb = sk[p];
          const ulong ia = si[i], ib = si[p];
          if ((ka > kb || (ka == kb && ia > ib)) == ((i & b) == 0))
            sk[i] = kb, sk[p] = ka, si[i] = ib, si[p] = ia;
        }
      }
    }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint j = lid; j < k; j += WG) {
    const ulong i = si[j];
    if (want_values) values[j] = in[i];
    if (want_indices) {
      if (index64)
        ((__global ulong *)indices)[j] = i;
      else
        indices[j] = (uint)i;
    }
  }
}
