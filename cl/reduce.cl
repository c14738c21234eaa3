/* reduce.cl: argmax / argmin (value and first index), min, max and sums.
 *
 * argmax / argmin: the classic two-pass tree reduction (Harris, "Optimizing
 * Parallel Reduction in CUDA", 2007; CUB DeviceReduce::ArgMax): a grid-stride
 * loop in which every work-item keeps its best (key, index) pair over vector
 * loads, a subgroup reduction (subgroup paths) or a local-memory tree (local
 * path) per work-group, one pair per work-group to `partial_*`, then a single
 * work-group reduces the partials and writes the result.
 * Every element is mapped to an unsigned KEY whose integer order is the order
 * wanted (max, min, |x|, NaN policy), so one comparison serves every mode;
 * ties go to the lower index, which makes the result independent of the
 * order in which work-items visit elements.
 *
 * sum: pairwise within a tile (each work-item adds ITEMS elements, its
 * 4-vectors WG apart, then the work-group tree), one sum per tile, and the tile sums
 * reduced again by the same kernel until one is left (accuracy bound in
 * docs/ACCURACY.md).
 *
 * Build options: -DT=uint|ulong|float|double (the host builds signed
 * integers as the unsigned type of their width, with MODE_SIGNED in the
 * mode argument of the kernels that order elements), -DT_BITS=32|64,
 * -DT_FLOAT=0|1, -DS=the type sums are done in (the unsigned type for
 * integers: wrap-around without signed overflow), -DWG, -DITEMS.
 *
 * The input comes through internal/input.h: a plain load, or a pipeline's
 * stages (-DPIPELINE, src/pipeline.c), where an element that fails a filter
 * is not there: sum_tiles adds 0 for it (with -DPIPE_COUNT it adds 1 for
 * each element that is there), arg_partial skips it (none there:
 * NO_INDEX). */
#ifndef T
#define T uint
#define T_BITS 32
#define T_FLOAT 0
#define S uint
#endif
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 8
#endif
#define TILE ((ulong)WG * ITEMS)

#include "internal/input.h"

/* ------------------------------------------------------ argmax / argmin */

/* mode bits (kernel argument), as CLPRIM_REDUCE_ABS etc. plus MODE_MIN,
 * and MODE_SIGNED where T holds a signed integer's bits. */
#define MODE_ABS 1u
#define MODE_NAN_LARGEST 2u
#define MODE_MIN 0x100u
#define MODE_SIGNED 0x200u

#include "internal/keys.h"
#include "internal/cpu.h"
#define NO_INDEX 0xFFFFFFFFFFFFFFFFul
#define VEC4 CLPRIM_CAT(T, 4)
#if T_BITS == 32
#define AS_SIGNED as_int
#else
#define AS_SIGNED as_long
#endif

/* The key of x: a larger key is a better candidate. No number gets key 0
 * (for floats it is a NaN bit pattern), so key 0 with NO_INDEX is the
 * identity, and an ignored NaN (key 0) wins only when every element is NaN. */
CLPRIM_INLINE KEY candidate_key(T x, uint mode) {
#if T_FLOAT
  if (isnan(x)) return ((mode & MODE_NAN_LARGEST) && !(mode & MODE_MIN)) ? KEY_MAX : (KEY)0;
  KEY b = x == (T)0 ? (KEY)0 : AS_KEY(x); /* -0 equals +0 */
  if (mode & MODE_ABS) b &= ~KEY_SIGN;
  KEY k = key_of_bits(b);
#else
  /* A signed integer's key: its bits with the sign bit flipped, or with
   * MODE_ABS its abs(), which is unsigned, so |INT_MIN| fits (the built-in
   * also keeps Oclgrind away from the llvm.abs intrinsic it cannot run). */
  const KEY sign = (mode & MODE_SIGNED) ? KEY_SIGN : (KEY)0; /* (uniform) */
  KEY k = (mode & (MODE_ABS | MODE_SIGNED)) == (MODE_ABS | MODE_SIGNED)
              ? (KEY)abs(AS_SIGNED(x))
              : CLPRIM_KEY_OF_SIGNED_BITS(x, sign);
#endif
  return (mode & MODE_MIN) ? ~k : k;
}

/* Pair a wins over pair b: a larger key, or an equal one at a lower index. */
#define better(ka, ia, kb, ib) CLPRIM_CAT(clprim_argmax_before_, KEY)(ka, ia, kb, ib)

CLPRIM_INLINE void consider(T x, ulong i, uint mode, KEY *best, ulong *best_index) {
  KEY k = candidate_key(x, mode);
  if (better(k, i, *best, *best_index)) *best = k, *best_index = i;
}

/* Input element a at i, considered when it is there (internal/input.h). */
#define CONSIDER(a, i)                                                                             \
  do {                                                                                             \
    T x_;                                                                                          \
    if (in_element((a), (i), &x_ IN_ARGS)) consider(x_, (i), mode, &best, &best_index);          \
  } while (0)

/* The work-group's best pair, in every work-item. */
#define wg_best CLPRIM_CAT(clprim_wg_reduce_argmax_, KEY)

/* Pass 1: the best (key, index) of each work-group's share of in[0, n). */
#ifdef KERNEL_arg_partial
#ifdef CLPRIM_CPU
/* The cpu path (WG = 1): work-item g takes the g-th of get_global_size(0)
 * contiguous chunks of in (of whole 16-element rows but the last), and 16
 * lanes keep a best pair each, lane l over the elements l, l + 16, ... of
 * the chunk in order (plain loops the compiler can vectorise). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void arg_partial(__global const IN_T *in, ulong n, uint mode, __global KEY *partial_keys,
                 __global ulong *partial_indices IN_PARAMS) {
  const ulong g = get_global_id(0);
  ulong b, e;
  cpu_share(n, 16, &b, &e);
  KEY best[16];
  ulong best_index[16];
  for (int l = 0; l < 16; ++l) best[l] = 0, best_index[l] = NO_INDEX;
  ulong i = b;
#if IN_FILTERS
  for (; i + 16 <= e; i += 16)
    for (int l = 0; l < 16; ++l) {
      T x;
      if (in_element(in[i + l], i + l, &x IN_ARGS)) {
        const KEY k = candidate_key(x, mode);
        if (better(k, i + l, best[l], best_index[l])) best[l] = k, best_index[l] = i + l;
      }
    }
#else
  /* Each lane starts from its first element and sees the rest in index
   * order, so a strictly larger key is the only better one: a select per
   * lane, no branch. */
  if (i + 16 <= e) {
    for (int l = 0; l < 16; ++l) best[l] = candidate_key(in[i + l], mode), best_index[l] = i + l;
    for (i += 16; i + 16 <= e; i += 16)
      for (int l = 0; l < 16; ++l) {
        const KEY k = candidate_key(in[i + l], mode);
        const int w = k > best[l];
        best[l] = w ? k : best[l];
        best_index[l] = w ? i + l : best_index[l];
      }
  }
#endif
  for (; i < e; ++i) {
    T x;
    if (in_element(in[i], i, &x IN_ARGS)) consider(x, i, mode, &best[0], &best_index[0]);
  }
  for (int l = 1; l < 16; ++l)
    if (better(best[l], best_index[l], best[0], best_index[0]))
      best[0] = best[l], best_index[0] = best_index[l];
  partial_keys[g] = best[0];
  partial_indices[g] = best_index[0];
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void arg_partial(__global const IN_T *in, ulong n, uint mode, __global KEY *partial_keys,
                 __global ulong *partial_indices IN_PARAMS) {
  __local KEY keys[WG];
  __local ulong indices[WG];
  const ulong stride = get_global_size(0), quads = n / 4;
  KEY best = 0;
  ulong best_index = NO_INDEX;
  for (ulong q = get_global_id(0); q < quads; q += stride) {
    IN_VEC4 v = vload4(q, in);
    CONSIDER(v.s0, 4 * q);
    CONSIDER(v.s1, 4 * q + 1);
    CONSIDER(v.s2, 4 * q + 2);
    CONSIDER(v.s3, 4 * q + 3);
  }
  ulong tail = 4 * quads + get_global_id(0);
  if (tail < n) CONSIDER(in[tail], tail);
  wg_best(&best, &best_index, keys, indices);
  if (get_local_id(0) == 0) {
    partial_keys[get_group_id(0)] = best;
    partial_indices[get_group_id(0)] = best_index;
  }
}
#endif
#endif

/* Pass 2, one work-group: the best of `count` partials; result[0] = the
 * element's bits (zero-extended), result[1] = its index. */
#ifdef KERNEL_arg_final
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void arg_final(__global const IN_T *in, __global const KEY *partial_keys,
               __global const ulong *partial_indices, uint count,
               __global ulong *result IN_PARAMS) {
  KEY best = 0;
  ulong best_index = NO_INDEX;
  for (uint p = (uint)get_local_id(0); p < count; p += WG)
    if (better(partial_keys[p], partial_indices[p], best, best_index))
      best = partial_keys[p], best_index = partial_indices[p];
#ifndef CLPRIM_CPU /* (the cpu path: one work-item) */
  __local KEY keys[WG];
  __local ulong indices[WG];
  wg_best(&best, &best_index, keys, indices);
#endif
  if (get_local_id(0) == 0) {
    /* No index: no element is there (a filtering source). */
    const T x = best_index != NO_INDEX ? in_value(in[best_index], best_index IN_ARGS) : (T)0;
    result[0] = (ulong)AS_KEY(x);
    result[1] = best_index;
  }
}
#endif

/* ------------------------------------------------------------------ sum */

#define S4 CLPRIM_CAT(S, 4)
#define AS_S CLPRIM_CAT(as_, S)

/* What input element a at i adds: the element where it is there (with
 * -DPIPE_COUNT, a pipeline's count: 1), else 0. A filtering source's build
 * runs every level: the first (first_level) over the input through the
 * source, the rest over the sums. */
CLPRIM_INLINE S in_term(IN_T a, ulong i IN_PARAMS) {
  T x;
  const int there = in_element(a, i, &x IN_ARGS);
#ifdef PIPE_COUNT
  return (S)(there != 0);
#else
  return there ? AS_S(x) : (S)0;
#endif
}
#if IN_FILTERS
#define SUM_PARAMS IN_PARAMS, int first_level
#else
#define SUM_PARAMS
#endif

/* The sum of each tile of TILE elements of in[0, n), to tile_sums (the
 * buffers hold T; integers are read as the unsigned S, the same bits).
 * Work-item j of a full tile adds the 4-vectors j, j + WG, j + 2 WG, ... of
 * its tile (ITEMS elements, in that order): each load instruction of a
 * subgroup reads consecutive 16-byte vectors (coalesced), where ITEMS
 * consecutive elements per work-item spread each load over ITEMS * 4 bytes
 * per lane. The order of additions still depends only on n and the tile
 * shape. */
#ifdef KERNEL_sum_tiles
#ifdef CLPRIM_CPU
/* The cpu path (WG = 1, TILE a multiple of 256): work-item t adds tile t in
 * blocks of 256 elements. 16 lanes: lane l adds the elements l, l + 16, ...
 * of a block in order (16 deep), then the blocks' lane sums in order, then
 * the lanes pairwise (4 deep); docs/ACCURACY.md has the bound. */
CLPRIM_INLINE S cpu_term(__global const IN_T *in, ulong i, ulong n SUM_PARAMS) {
  if (i >= n) return (S)0;
#if IN_FILTERS
  if (first_level) return in_term(in[i], i IN_ARGS);
#endif
  return ((__global const S *)in)[i];
}
#if IN_FILTERS
#define CPU_TERM(i) cpu_term(in, (i), n IN_ARGS, first_level)
#define CPU_PLAIN (!first_level)
#else
#define CPU_TERM(i) cpu_term(in, (i), n)
#define CPU_PLAIN 1
#endif

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void sum_tiles(__global const IN_T *in, ulong n, __global S *tile_sums SUM_PARAMS) {
  const ulong base = get_global_id(0) * TILE;
  S lane[16];
  for (int l = 0; l < 16; ++l) lane[l] = 0;
  for (ulong b = base; b < n && b < base + TILE; b += 256) {
    S part[16];
    if (CPU_PLAIN && b + 256 <= n) {
      __global const S *p = (__global const S *)in + b;
      for (int l = 0; l < 16; ++l) part[l] = p[l];
      for (int k = 1; k < 16; ++k)
        for (int l = 0; l < 16; ++l) part[l] += p[16 * k + l];
    } else {
      for (int l = 0; l < 16; ++l) part[l] = CPU_TERM(b + l);
      for (int k = 1; k < 16; ++k)
        for (int l = 0; l < 16; ++l) part[l] += CPU_TERM(b + 16 * k + l);
    }
    for (int l = 0; l < 16; ++l) lane[l] += part[l];
  }
  for (int w = 8; w > 0; w >>= 1)
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  tile_sums[get_global_id(0)] = lane[0];
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sum_tiles(__global const IN_T *in, ulong n, __global S *tile_sums SUM_PARAMS) {
  __local S scratch[CLPRIM_WG_SCRATCH(WG)];
  const ulong base = (ulong)get_group_id(0) * TILE;
  const uint lid = (uint)get_local_id(0);
  /* Loaded into registers first, then added in order (as scan.cl does;
   * Oclgrind's uninitialised-value check crashed on the fused form). */
  S v[ITEMS];
#if IN_FILTERS
  if (first_level) {
#pragma unroll
    for (int k = 0; k < ITEMS / 4; ++k) {
      const ulong quad = (ulong)k * WG + lid, i = base + 4 * quad;
      if (i + 4 <= n) {
        const IN_VEC4 q = vload4(quad, in + base);
        v[4 * k] = in_term(q.s0, i IN_ARGS);
        v[4 * k + 1] = in_term(q.s1, i + 1 IN_ARGS);
        v[4 * k + 2] = in_term(q.s2, i + 2 IN_ARGS);
        v[4 * k + 3] = in_term(q.s3, i + 3 IN_ARGS);
      } else { /* the end of the last tile */
        for (int e = 0; e < 4; ++e)
          v[4 * k + e] = i + e < n ? in_term(in[i + e], i + e IN_ARGS) : (S)0;
      }
    }
  } else
#endif
  {
    __global const S *sums = (__global const S *)in;
#pragma unroll
    for (int k = 0; k < ITEMS / 4; ++k) {
      const ulong quad = (ulong)k * WG + lid, i = base + 4 * quad;
      if (i + 4 <= n) {
        S4 q = vload4(quad, sums + base);
        v[4 * k] = q.s0;
        v[4 * k + 1] = q.s1;
        v[4 * k + 2] = q.s2;
        v[4 * k + 3] = q.s3;
      } else { /* the end of the last tile */
        for (int e = 0; e < 4; ++e) v[4 * k + e] = i + e < n ? sums[i + e] : (S)0;
      }
    }
  }
  S s = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) s += v[k];
  S total = CLPRIM_CAT(clprim_wg_reduce_add_, S)(s, scratch);
  if (get_local_id(0) == 0) tile_sums[get_group_id(0)] = total;
}
#endif
#endif

/* ------------------------------------------- exact sums (CLPRIM_EXACT) */
/* The exact accumulator (internal/exact.h; the plan: src/engine/exact.c).
 * exact_tiles: work-group g adds the g-th contiguous share of the elements
 * (work-item l its elements l, l + WG, ...: loads coalesced) and writes
 * record g. exact_final (one work-group): the records' words added, then
 * one rounding (round = 1), or left as one record (round = 0). */
#if defined(KERNEL_exact_tiles) || defined(KERNEL_exact_final) || defined(KERNEL_seg_exact)
#include "internal/exact.h"
#endif

#ifdef KERNEL_exact_tiles
#ifdef CLPRIM_CPU
/* The cpu path (WG = 1): 16 lanes, each a two-term expansion (a sum and
 * its error's sum) of every 16th element of a block, branch-free so that
 * the compiler vectorises it. A block after which a lane's error-of-error
 * is not 0, or a sum not finite (an infinity, a NaN, an overflow), is done
 * again element by element by the work-item's general expansion. */
#define EXACT_LANES 16
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void exact_tiles(__global const IN_T *in, ulong n, __global long *records IN_PARAMS) {
  EXACT_LOCAL(acc);
  volatile __local uint flags;
  const uint lid = get_local_id(0);
  exact_clear(acc);
  if (lid == 0) flags = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong groups = get_num_groups(0), per = ((n + groups - 1) / groups + WG - 1) / WG * WG;
  const ulong first = min(n, (ulong)get_group_id(0) * per), end = min(n, first + per);
  struct exact_item it;
  exact_item_init(&it);
  ulong i = first + lid;
#ifdef EXACT_LANES
  EXACT_E hi[EXACT_LANES], lo[EXACT_LANES];
  for (int l = 0; l < EXACT_LANES; ++l) hi[l] = lo[l] = (EXACT_E)-0.0f;
  for (; !IN_FILTERS && i + EXACT_LANES <= end; i += EXACT_LANES) {
    EXACT_E h[EXACT_LANES], g[EXACT_LANES];
    int odd = 0;
    for (int l = 0; l < EXACT_LANES; ++l) {
      const EXACT_E x = (EXACT_E)((__global const T *)in)[i + l];
      const EXACT_E s = hi[l] + x, bb = s - hi[l], e = (hi[l] - (s - bb)) + (x - bb);
      const EXACT_E t = lo[l] + e, cc = t - lo[l], r = (lo[l] - (t - cc)) + (e - cc);
      h[l] = s;
      g[l] = t;
      odd |= exact_odd(s, r);
    }
    if (odd) {
      for (int l = 0; l < EXACT_LANES; ++l) exact_item_add(&it, acc, in[i + l]);
    } else {
      for (int l = 0; l < EXACT_LANES; ++l) {
        hi[l] = h[l];
        lo[l] = g[l];
      }
    }
  }
  for (int l = 0; l < EXACT_LANES; ++l) {
    /* the lanes' sums into the expansion: a lane that took an element
     * other than -0 left -0 for good, as the expansion's first term */
    if (!(hi[l] == (EXACT_E)0 && signbit(hi[l]))) it.flags |= EXACT_FLAG_NOT_NEG_ZERO;
    if (hi[l] != (EXACT_E)0) exact_flush(acc, hi[l]);
    if (lo[l] != (EXACT_E)0) exact_flush(acc, lo[l]);
  }
  if (i > first) it.flags |= EXACT_FLAG_ADDED;
#else
  /* four loads in flight a work-item, then their adds */
  for (; i + 3 * WG < end; i += 4 * WG) {
    T v[4];
    int there[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) there[k] = in_element(in[i + k * WG], i + k * WG, &v[k] IN_ARGS);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (there[k]) exact_item_add(&it, acc, v[k]);
  }
#endif
  for (; i < end; i += WG) {
    T v;
    if (in_element(in[i], i, &v IN_ARGS)) exact_item_add(&it, acc, v);
  }
  exact_item_end(&it, acc, &flags);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    long word[EXACT_W];
    for (int w = 0; w < EXACT_W; ++w) word[w] = exact_word(acc, w);
    exact_normalise(word);
    __global long *record = records + get_group_id(0) * EXACT_RECORD(EXACT_W);
    for (int w = 0; w < EXACT_W; ++w) record[w] = word[w];
    record[EXACT_W] = flags;
  }
}
#endif

#ifdef KERNEL_exact_final
/* EXACT_SLICES slices of the records a word: work-item j adds word
 * j % EXACT_W of the records j / EXACT_W, + EXACT_SLICES, ... (fewer
 * loads in a row for each), then work-item 0 adds the slices. */
#define EXACT_SLICES (WG > EXACT_W ? WG / EXACT_W : 1)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void exact_final(__global const long *records, uint groups, uint round, __global long *result) {
  __local long part[EXACT_SLICES * EXACT_W];
  volatile __local uint flags;
  const uint lid = get_local_id(0);
  if (lid == 0) flags = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint f = 0;
  for (uint g = lid; g < groups; g += WG) f |= (uint)records[(ulong)g * EXACT_RECORD(EXACT_W) + EXACT_W];
#if WG == 1
  flags = f;
#else
  if (f != 0) atomic_or(&flags, f);
#endif
  for (uint j = lid; j < EXACT_SLICES * EXACT_W; j += WG) {
    const uint w = j % EXACT_W;
    long s = 0;
    for (uint g = j / EXACT_W; g < groups; g += EXACT_SLICES)
      s += records[(ulong)g * EXACT_RECORD(EXACT_W) + w];
    part[j] = s;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    long word[EXACT_W];
    for (int w = 0; w < EXACT_W; ++w) word[w] = 0;
    for (int j = 0; j < EXACT_SLICES * EXACT_W; ++j) word[j % EXACT_W] += part[j];
    if (round) {
      result[0] = (long)exact_round(word, flags);
    } else { /* one record of them all (clprim_mpi adds the ranks') */
      exact_normalise(word);
      for (int w = 0; w < EXACT_W; ++w) result[w] = word[w];
      result[EXACT_W] = flags;
    }
  }
}
#endif

/* ------------------------------------------------ segmented reductions */
/* One reduction per segment [begins[s], ends[s]) of in, by a team: a
 * subgroup where the path has subgroups, else the work-group; teams take
 * the segments in turn. Each team member adds (or keeps the best of) the
 * elements lane, lane + TEAM, ... of the segment (loads coalesced, SEG_UNROLL
 * of them in flight), then the team reduces. op: SEG_SUM (sums_out[s], T
 * bits of the sum in S), SEG_VALUE (min / max: the element to sums_out[s];
 * for an empty segment `empty`), SEG_ARG (argmax / argmin: best_out[2 s] =
 * the element's bits, zero-extended, best_out[2 s + 1] = its index in the
 * segment; an empty segment gives 0 and NO_INDEX). The segments were
 * checked first (segments_check). */
#define SEG_SUM 0
#define SEG_VALUE 1
#define SEG_ARG 2
#define SEG_UNROLL 8
#include "internal/segments.h" /* segments_check, the offsets' load */

#ifdef KERNEL_seg_reduce
#ifdef CLPRIM_HAS_SUBGROUPS
#define SEG_TEAM clprim_sg_size()
#define SEG_LANE clprim_sg_lane()
#define SEG_TEAM_ID ((ulong)get_group_id(0) * clprim_sg_count() + clprim_sg_id())
#define SEG_TEAMS ((ulong)get_num_groups(0) * clprim_sg_count())
#else
#define SEG_TEAM WG
#define SEG_LANE get_local_id(0)
#define SEG_TEAM_ID ((ulong)get_group_id(0))
#define SEG_TEAMS ((ulong)get_num_groups(0))
#endif

/* The team's sum, in every member (subgroups) or in member 0. */
CLPRIM_INLINE S seg_team_sum(S x, __local S *scratch) {
#ifdef CLPRIM_HAS_SUBGROUPS
  (void)scratch;
  return CLPRIM_CAT(clprim_sg_reduce_add_, S)(x);
#else
  return CLPRIM_CAT(clprim_wg_reduce_add_, S)(x, scratch);
#endif
}

/* The team's best pair, in every member (subgroups) or in member 0. */
CLPRIM_INLINE void seg_team_best(KEY *k, ulong *i, __local KEY *keys, __local ulong *indices) {
#ifdef CLPRIM_HAS_SUBGROUPS
  (void)keys, (void)indices;
  const KEY top = CLPRIM_CAT(clprim_sg_reduce_max_, KEY)(*k);
  *i = clprim_sg_reduce_min_ulong(*k == top ? *i : NO_INDEX);
  *k = top;
#else
  wg_best(k, i, keys, indices);
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void seg_reduce(__global const T *in, __global const CLPRIM_OFFSET *begins,
                __global const CLPRIM_OFFSET *ends, ulong segments, int op, uint mode, T empty, __global T *sums_out,
                __global ulong *best_out) {
  __local S scratch[CLPRIM_WG_SCRATCH(WG)];
  __local KEY keys[WG];
  __local ulong indices[WG];
  const uint lane = (uint)SEG_LANE, team = (uint)SEG_TEAM;
  for (ulong s = SEG_TEAM_ID; s < segments; s += SEG_TEAMS) {
    const ulong b = clprim_offset_at(begins, s), e = clprim_offset_at(ends, s);
    if (op == SEG_SUM) {
      S acc = 0;
      ulong i = b + lane;
      for (; i + (SEG_UNROLL - 1) * (ulong)team < e; i += SEG_UNROLL * (ulong)team) {
        S v[SEG_UNROLL];
#pragma unroll
        for (int u = 0; u < SEG_UNROLL; ++u) v[u] = CLPRIM_CAT(as_, S)(in[i + u * (ulong)team]);
#pragma unroll
        for (int u = 0; u < SEG_UNROLL; ++u) acc += v[u];
      }
      for (; i < e; i += team) acc += CLPRIM_CAT(as_, S)(in[i]);
      const S total = seg_team_sum(acc, scratch);
      if (lane == 0) sums_out[s] = CLPRIM_CAT(as_, T)(total);
    } else {
      KEY best = 0;
      ulong best_index = NO_INDEX;
      ulong i = b + lane;
      for (; i + (SEG_UNROLL - 1) * (ulong)team < e; i += SEG_UNROLL * (ulong)team) {
        T v[SEG_UNROLL];
#pragma unroll
        for (int u = 0; u < SEG_UNROLL; ++u) v[u] = in[i + u * (ulong)team];
#pragma unroll
        for (int u = 0; u < SEG_UNROLL; ++u) consider(v[u], i + u * (ulong)team, mode, &best, &best_index);
      }
      for (; i < e; i += team) consider(in[i], i, mode, &best, &best_index);
      seg_team_best(&best, &best_index, keys, indices);
      if (lane == 0) {
        const int none = best_index == NO_INDEX;
        if (op == SEG_VALUE) {
          sums_out[s] = none ? empty : in[best_index];
        } else {
          best_out[2 * s] = none ? 0 : (ulong)AS_KEY(in[best_index]);
          best_out[2 * s + 1] = none ? NO_INDEX : best_index - b;
        }
      }
    }
  }
}
#endif

/* The exact segmented sum (CLPRIM_EXACT; internal/exact.h). On the cpu
 * path (WG = 1) a work-item a segment. */
#ifdef KERNEL_seg_exact
/* Teams of `team` work-items (a power of two from min(32, WG) to WG, the
 * host's choice by the mean segment length) take a segment each:
 * exact_team_range (the fast path, else the team's words and one rounding
 * by its first member). */
#define SEG_EXACT_TEAMS (WG >= 32 ? WG / 32 : 1)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void seg_exact(__global const T *in, __global const CLPRIM_OFFSET *begins,
               __global const CLPRIM_OFFSET *ends, ulong segments, uint team,
               __global T *sums_out) {
  EXACT_LOCAL_TEAMS(words, SEG_EXACT_TEAMS);
  volatile __local uint flags[SEG_EXACT_TEAMS];
  __local EXACT_E tree_hi[WG], tree_lo[WG];
  const uint lid = get_local_id(0), lane = lid % team, tm = lid / team, teams = WG / team;
  for (ulong first = (ulong)get_group_id(0) * teams; first < segments;
       first += (ulong)get_num_groups(0) * teams) {
    const ulong s = first + tm;
    const ulong b = s < segments ? clprim_offset_at(begins, s) : 0;
    const ulong e = s < segments ? clprim_offset_at(ends, s) : 0;
    const EXACT_RESULT_BITS bits =
        exact_team_range(words + tm * EXACT_ACC_WORDS, &flags[tm], tree_hi + tm * team,
                         tree_lo + tm * team, in, b, e, lane, team);
    if (lane == 0 && s < segments) sums_out[s] = CLPRIM_CAT(as_, T)(bits);
  }
}
#endif
