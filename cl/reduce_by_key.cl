/* reduce_by_key.cl: reduce-by-key over runs of equal consecutive keys (CUB
 * DeviceReduce::ReduceByKey semantics): each maximal run of equal keys is a
 * segment; outputs its key, the sum of its values, and the segment count.
 *
 * The head-flag scan of Blelloch's segmented scan, over tiles of
 * TILE = WG * ITEMS elements (each work-item ITEMS consecutive elements):
 *  1. rbk_count: the heads (i == 0 or key[i] != key[i-1]) per tile, and a 0
 *     after the last tile;
 *  2. the host scans those counts (exclusive, uint64): tile offsets, and the
 *     total after the last tile;
 *  3. rbk_reduce: a work-group scan of the work-items' head counts gives
 *     each head its segment index; every work-item adds its runs in
 *     registers, writes the key at each head and the sum of each run that
 *     ends inside it, and finishes its last run by adding the leading parts
 *     of the following work-items (up to the next one with a head) from local
 *     memory. The tile's part before its first head (its carry) goes to
 *     `carry`;
 *  4. rbk_fixup: for each tile with a head whose last segment goes on into
 *     the next tiles, adds their carries (up to the next tile with a head)
 *     to that segment's partial sum (kept in last_part) and writes it.
 * No atomics: sums are added in a fixed order (deterministic).
 *
 * Build options: -DK_T=uint|ulong|float|double (keys; runs as in
 * internal/heads.h: equal under ==, each NaN a run of its own; the host
 * builds signed integer keys as the unsigned type of their width),
 * -DV_T (values), -DS_T (the type sums are added in: uint, ulong, float,
 * double; the host gives V_T = S_T, which loads int32 / int64 values as
 * their bits), -DWG (a power of two; a multiple of 32 on nv_ptx), -DITEMS. */
#ifndef K_T
#define K_T int
#define V_T float
#define S_T float
#endif
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 8
#endif
#define TILE ((ulong)WG * ITEMS)
#define FIX_CHUNK 16
#include "internal/counts.h"
#include "internal/heads.h"

/* Full runs of ITEMS (a multiple of 4) consecutive elements are read through
 * aligned 4-vector pointers, all loads issued together (vload compiles to
 * scalar loads on NVIDIA; 8-vectors of double were split into scalar loads
 * by LLVM's NVPTX back end). */
#if ITEMS % 4 == 0
#define LOAD_ITEMS(T, p, i, out)                                                                   \
  do {                                                                                             \
    const __global CLPRIM_CAT(T, 4) *q_ = (const __global CLPRIM_CAT(T, 4) *)(p) + (i) / 4;        \
    for (int u_ = 0; u_ < ITEMS / 4; ++u_) {                                                       \
      const CLPRIM_CAT(T, 4) a_ = q_[u_];                                                          \
      out[4 * u_] = a_.s0, out[4 * u_ + 1] = a_.s1, out[4 * u_ + 2] = a_.s2;                       \
      out[4 * u_ + 3] = a_.s3;                                                                     \
    }                                                                                              \
  } while (0)
#endif

/* Loads this work-item's ITEMS keys and the key before them; sets valid
 * elements' head flags and returns the number of heads. */
CLPRIM_INLINE uint load_heads(__global const K_T *keys, ulong n, ulong first, K_T *k, int *head) {
  K_T prev = first > 0 && first <= n ? keys[first - 1] : (K_T)0;
  uint heads = 0;
#ifdef LOAD_ITEMS
  if (first + ITEMS <= n) {
    LOAD_ITEMS(K_T, keys, first, k);
  } else
#endif
  {
    for (int j = 0; j < ITEMS; ++j)
      k[j] = first + j < n ? keys[first + j] : (K_T)0;
  }
  for (int j = 0; j < ITEMS; ++j) {
    const ulong i = first + j;
    head[j] = i < n && (i == 0 || !CLPRIM_SAME_RUN(prev, k[j]));
    heads += (uint)head[j];
    prev = k[j];
  }
  return heads;
}

/* The cpu path (-DCLPRIM_CPU, one work-item per work-group): a "tile" is
 * work-item g's share of the elements, the g-th of get_global_size(0)
 * contiguous ones, walked in order by each kernel. */
#ifdef CLPRIM_CPU
#include "internal/cpu.h"
#define TILE_FIRST(t) ((t) * cpu_per(n, 1, tiles))
#else
#define TILE_FIRST(t) ((t) * TILE)
#endif

/* Phase 1: tile_counts[t] = the heads in tile t; tile_counts[tiles] = 0. */
#ifdef KERNEL_rbk_count
#ifdef CLPRIM_CPU
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
rbk_count(__global const K_T *keys, ulong n, __global ulong *tile_counts) {
  const ulong g = get_global_id(0), tiles = get_global_size(0);
  const ulong first = min(n, TILE_FIRST(g)), end = min(n, TILE_FIRST(g + 1));
  ulong heads = 0;
  K_T prev = first > 0 ? keys[first - 1] : (K_T)0;
  for (ulong i = first; i < end; ++i) {
    const K_T k = keys[i];
    heads += i == 0 || !CLPRIM_SAME_RUN(prev, k);
    prev = k;
  }
  tile_counts[g] = heads;
  if (g == tiles - 1) tile_counts[tiles] = 0;
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rbk_count(__global const K_T *keys, ulong n, __global ulong *tile_counts) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  const ulong first = (ulong)get_group_id(0) * TILE + (ulong)get_local_id(0) * ITEMS;
  K_T k[ITEMS];
  int head[ITEMS];
  const uint heads = load_heads(keys, n, first, k, head);
  const uint total = clprim_wg_reduce_add_uint(heads, scratch);
  CLPRIM_PUT_TILE_COUNT(tile_counts, total);
}
#endif
#endif

/* Phase 3: keys at heads, segment sums, tile carries (see above). offsets:
 * the scanned tile counts. RUN_STEP adds element x (key k, head: a run
 * starts there) to the walk: a head ends the run before it (its sum to
 * sums[current]) and starts segment next_segment; elements before the
 * walk's first head add to lead. */
#define RUN_STEP(head, k, x)                                                                       \
  do {                                                                                             \
    if (head) {                                                                                    \
      if (seen) sums[current] = run;                                                               \
      current = next_segment++;                                                                    \
      unique_keys[current] = (k);                                                                  \
      run = (x);                                                                                   \
      seen = 1;                                                                                    \
    } else if (seen) {                                                                             \
      run += (x);                                                                                  \
    } else {                                                                                       \
      lead += (x);                                                                                 \
    }                                                                                              \
  } while (0)
#ifdef KERNEL_rbk_reduce
#ifdef CLPRIM_CPU
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
rbk_reduce(__global const K_T *keys, __global const V_T *values, ulong n,
           __global const ulong *offsets, __global K_T *unique_keys, __global S_T *sums,
           __global S_T *carry, __global S_T *last_part) {
  const ulong g = get_global_id(0), tiles = get_global_size(0);
  const ulong first = min(n, TILE_FIRST(g)), end = min(n, TILE_FIRST(g + 1));
  ulong next_segment = offsets[g], current = 0;
  S_T lead = 0, run = 0;
  int seen = 0;
  K_T prev = first > 0 ? keys[first - 1] : (K_T)0;
  for (ulong i = first; i < end; ++i) {
    const K_T k = keys[i];
    RUN_STEP(i == 0 || !CLPRIM_SAME_RUN(prev, k), k, (S_T)values[i]);
    prev = k;
  }
  /* The share's last segment (rbk_fixup adds the next shares' carries to
   * last_part where it goes on), and the part before its first head. */
  if (seen) sums[current] = run, last_part[g] = run;
  carry[g] = lead;
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rbk_reduce(__global const K_T *keys, __global const V_T *values, ulong n,
           __global const ulong *offsets, __global K_T *unique_keys, __global S_T *sums,
           __global S_T *carry, __global S_T *last_part) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  __local S_T leading[WG]; /* each work-item's sum before its first head */
  __local uint head_count[WG];
  const uint lid = (uint)get_local_id(0);
  const ulong first = (ulong)get_group_id(0) * TILE + (ulong)lid * ITEMS;
  K_T k[ITEMS];
  int head[ITEMS];
  const uint heads = load_heads(keys, n, first, k, head);
  uint tile_heads;
  const uint before = clprim_wg_scan_excl_add_uint(heads, scratch, &tile_heads);
  V_T v[ITEMS];
#ifdef LOAD_ITEMS
  if (first + ITEMS <= n) {
    LOAD_ITEMS(V_T, values, first, v);
  } else
#endif
  {
    for (int j = 0; j < ITEMS; ++j)
      v[j] = first + j < n ? values[first + j] : (V_T)0;
  }
  ulong next_segment = offsets[get_group_id(0)] + before, current = 0;
  S_T lead = 0, run = 0;
  int seen = 0;
  for (int j = 0; j < ITEMS; ++j) {
    const ulong i = first + j;
    if (i >= n) break;
    RUN_STEP(head[j], k[j], (S_T)v[j]); /* a run may end inside this work-item */
  }
  leading[lid] = lead;
  head_count[lid] = heads;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (seen) {
    /* The last run goes on through the following work-items' leading parts. */
    for (uint m = lid + 1; m < WG; ++m) {
      run += leading[m];
      if (head_count[m]) break;
    }
    sums[current] = run;
    /* The tile's last segment: rbk_fixup adds the next tiles' carries to
     * this copy (it never reads the caller's buffer back). */
    if (current == offsets[get_group_id(0)] + tile_heads - 1) last_part[get_group_id(0)] = run;
  }
  if (lid == 0) {
    S_T c = 0;
    for (uint m = 0; m < WG; ++m) {
      c += leading[m];
      if (head_count[m]) break;
    }
    carry[get_group_id(0)] = c;
  }
}
#endif
#endif

/* Phase 4, one work-item per tile: the tile's last segment gets the carries
 * of the following tiles that continue it. */
#ifdef KERNEL_rbk_fixup
__kernel void rbk_fixup(__global const K_T *keys, ulong n, __global const ulong *offsets,
                        ulong tiles, __global const S_T *carry, __global const S_T *last_part,
                        __global S_T *sums) {
  const ulong t = get_global_id(0);
  if (t >= tiles || offsets[t + 1] == offsets[t]) return;
  const ulong last = offsets[t + 1] - 1;
  S_T acc = last_part[t];
  int continued = 0, done = 0;
  /* The following tiles FIX_CHUNK at a time, their loads issued together (a
   * segment over many tiles would otherwise wait on one load per tile). */
  for (ulong chunk = t + 1; chunk < tiles && !done; chunk += FIX_CHUNK) {
    int starts_run[FIX_CHUNK], has_head[FIX_CHUNK];
    S_T part[FIX_CHUNK];
    for (int k = 0; k < FIX_CHUNK; ++k) {
      const ulong u = chunk + k;
      const int valid = u < tiles && TILE_FIRST(u) < n;
      starts_run[k] = !valid || !CLPRIM_SAME_RUN(keys[TILE_FIRST(u) - 1], keys[TILE_FIRST(u)]);
      has_head[k] = !valid || offsets[u + 1] != offsets[u];
      part[k] = valid ? carry[u] : (S_T)0;
    }
    for (int k = 0; k < FIX_CHUNK && !done; ++k) {
      if (starts_run[k]) {
        done = 1;
      } else {
        acc += part[k];
        continued = 1;
        done = has_head[k];
      }
    }
  }
  if (continued) sums[last] = acc;
}
#endif

/* CLPRIM_EXACT (src/reduce_by_key.c): each run's exact sum rounded once
 * (internal/exact.h). The runs were found and compacted first, as
 * clprim_unique_by_key does it: heads[s] (IDX_T) is where run s starts, and
 * *count (on the device: the host never waits for it) is the number of
 * runs. Then:
 *  - rbk_exact: a team of TEAM work-items a run of at most PIECE elements
 *    (WG / TEAM teams a work-group, each with its own words), the teams
 *    taking the runs in turn; a work-item a run on the cpu path (WG = 1).
 *    Teams, not the work-group, since most runs are short where there are
 *    many: the barriers and the rounding of a turn serve WG / TEAM runs;
 *  - a longer run is cut at the multiples of PIECE into pieces, which
 *    several work-groups sum: rbk_exact_pieces takes the chunks [k PIECE,
 *    (k + 1) PIECE) in turn and writes, as records, the piece of a long run
 *    that goes on from before the chunk (cont[k]) and the first piece of a
 *    long run that starts in it (start[k]; long_run[k] = that run, else
 *    NO_RUN); at most one long run starts in a chunk, since it ends past
 *    the chunk. rbk_exact_fold then adds start[k] and the cont records of
 *    the following chunks that the run reaches, and rounds once.
 * Build options: -DT=float|double (values), -DT_BITS, -DWG, -DIDX_T=uint|ulong,
 * -DPIECE, -DTEAM (a power of two dividing WG) and the exact accumulator's
 * (clprim__exact_options). */
#if defined(KERNEL_rbk_exact) || defined(KERNEL_rbk_exact_pieces) ||                              \
    defined(KERNEL_rbk_exact_fold)
#include "internal/exact.h"
#define NO_RUN (~0ul)

/* The end of run s of runs. */
CLPRIM_INLINE ulong run_end(__global const IDX_T *heads, ulong runs, ulong n, ulong s) {
  return s + 1 < runs ? (ulong)heads[s + 1] : n;
}
#endif

#ifdef KERNEL_rbk_exact
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rbk_exact(__global const T *values, __global const IDX_T *heads, __global const ulong *count,
          ulong n, __global T *sums) {
#define TEAMS (WG / TEAM)
  EXACT_LOCAL_TEAMS(acc, TEAMS);
  volatile __local uint flags[TEAMS];
  __local EXACT_E tree_hi[WG], tree_lo[WG];
  const ulong runs = *count;
  const uint team = get_local_id(0) / TEAM, lane = get_local_id(0) % TEAM;
  /* every team takes every turn of its work-group, with an empty range
   * where it has no run or a run for rbk_exact_pieces: the barriers are the
   * work-group's (and with a `continue` past them for long runs, PoCL 3.1's
   * local path gave zero sums) */
  for (ulong turn = get_group_id(0) * TEAMS; turn < runs; turn += get_num_groups(0) * TEAMS) {
    const ulong s = turn + team;
    const ulong b = s < runs ? heads[s] : 0, e = s < runs ? run_end(heads, runs, n, s) : 0;
    const int alone = s < runs && e - b <= PIECE;
    const EXACT_RESULT_BITS bits =
        exact_team_range(acc + team * EXACT_ACC_WORDS, &flags[team], tree_hi + team * TEAM,
                         tree_lo + team * TEAM, values, b, alone ? e : b, lane, TEAM);
    if (lane == 0 && alone) sums[s] = CLPRIM_CAT(as_, T)(bits);
  }
#undef TEAMS
}
#endif

#ifdef KERNEL_rbk_exact_pieces
/* The last run that starts at or before position i (heads[0] = 0 <= i). */
CLPRIM_INLINE ulong run_at(__global const IDX_T *heads, ulong runs, ulong i) {
  ulong lo = 0, hi = runs; /* heads[lo] <= i < heads[hi] (heads[runs]: past the end) */
  while (hi - lo > 1) {
    const ulong mid = lo + (hi - lo) / 2;
    if ((ulong)heads[mid] <= i)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rbk_exact_pieces(__global const T *values, __global const IDX_T *heads,
                 __global const ulong *count, ulong n, __global long *cont,
                 __global long *start, __global ulong *long_run) {
  EXACT_LOCAL(acc);
  volatile __local uint flags;
  __local ulong range[5]; /* cont's begin and end, start's begin and end, its run */
  const ulong runs = *count, chunks = (n + PIECE - 1) / PIECE;
  for (ulong k = get_group_id(0); k < chunks; k += get_num_groups(0)) {
    if (get_local_id(0) == 0) {
      const ulong first = k * PIECE, end = min(n, first + PIECE);
      ulong s = run_at(heads, runs, first), b = heads[s], e = run_end(heads, runs, n, s);
      const int goes_on = b < first && e - b > PIECE;
      range[0] = first, range[1] = goes_on ? min(e, end) : first;
      s = run_at(heads, runs, end - 1), b = heads[s], e = run_end(heads, runs, n, s);
      const int starts = b >= first && e - b > PIECE;
      range[2] = b, range[3] = starts ? end : b, range[4] = starts ? s : NO_RUN;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong cb = range[0], ce = range[1], sb = range[2], se = range[3], s = range[4];
    barrier(CLK_LOCAL_MEM_FENCE); /* range is read before work-item 0 writes the next */
    if (get_local_id(0) == 0) long_run[k] = s;
    /* both records, empty where there is no such piece (barriers taken
     * alike in every turn) */
    const ulong words = EXACT_RECORD(EXACT_W);
    exact_wg_range_record(acc, &flags, values, cb, ce, cont + k * words);
    exact_wg_range_record(acc, &flags, values, sb, se, start + k * words);
  }
}
#endif

#ifdef KERNEL_rbk_exact_fold
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rbk_exact_fold(__global const IDX_T *heads, __global const ulong *count, ulong n,
               __global const long *cont, __global const long *start,
               __global const ulong *long_run, __global T *sums) {
  __local long part[EXACT_FOLD_PARTS];
  volatile __local uint flags;
  const ulong runs = *count, chunks = (n + PIECE - 1) / PIECE, words = EXACT_RECORD(EXACT_W);
  for (ulong k = get_group_id(0); k < chunks; k += get_num_groups(0)) {
    const ulong s = long_run[k];
    /* the chunks after k up to the one that holds the run's last element
     * (none without a run: a fold of the empty record, not written) */
    const ulong last = s == NO_RUN ? k : (run_end(heads, runs, n, s) - 1) / PIECE;
    const EXACT_RESULT_BITS bits =
        exact_wg_fold(start + k * words, cont + (k + 1) * words, last - k, part, &flags);
    if (get_local_id(0) == 0 && s != NO_RUN) sums[s] = CLPRIM_CAT(as_, T)(bits);
  }
}
#endif
