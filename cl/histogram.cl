/* histogram.cl: dense reduce-by-key (sums and counts per key in [0, BINS))
 * and histograms of values into even-width bins over [lo, hi).
 *
 * Every element gets a bin (its key, or (x - lo) * scale for a value
 * histogram) or a class outside the bins (key out of range; value below lo,
 * at or above hi, or NaN). Work-items take chunks of ITEMS = 4 * QUADS
 * consecutive elements (a grid-stride loop over chunks, its trip count
 * uniform per work-group so subgroup operations stay converged), issue all
 * of a chunk's vector loads before using any (a load per element and then
 * dependent work left the loop latency-bound), and emit (bin, sum, count):
 *  - hist_local (bins fit in local memory): per-work-group bins in local
 *    memory, COPIES copies spread over the subgroups to cut contention,
 *    merged into the output with global atomics at the end. With
 *    LOCAL_RUNS, runs of equal bins are added in registers first (the host
 *    sets it for sums), else every element goes to a local atomic;
 *  - hist_global: global atomics, runs of equal bins added in registers
 *    first. With -DNV_FAST (nv_ptx on compute capability >= 7.0) lanes of a
 *    warp with the same bin find each other with match.any and add their
 *    values in a shuffle tree before one lane issues the atomic (Westphal,
 *    "Voting and shuffling to optimize atomic operations", NVIDIA 2015),
 *    counts and integer sums use red.global.add (no value returned) and
 *    float / double sums the native red.global.add.f32 / .f64; on other
 *    subgroup paths one round of leader election (subgroup reductions, any
 *    subgroup size) combines the lanes that share the first emitting lane's
 *    bin. AGGREGATE says which runs are aggregated so: 0 none, 1 all, 2 (the
 *    host's default on GPUs) each work-item's last run of a chunk, the one
 *    that sorted or clustered keys share with the neighbouring lanes. Float
 *    sums otherwise use 32-bit and double sums 64-bit compare-and-swap
 *    (cl_khr_int64_base_atomics), int64 sums atom_add on 64-bit integers.
 *    The host sets AGGREGATE=0 on CPU devices: PoCL 5 runs subgroup
 *    operations as work-group barriers, gains nothing from them, and its
 *    compiled kernel crashed (segfault; seen with float sums, whose
 *    compare-and-swap loop sits between those barriers).
 *  - hist_part_count / hist_part_scatter / hist_part_local (the binned
 *    path, below): bins beyond local memory partitioned by range of bins,
 *    then counted per range in local memory; the host's choice for large
 *    counts-only inputs on GPUs (faster than hist_global for 2^20 bins
 *    on the H100).
 * Counts outside the bins: per work-item in registers, one work-group
 * reduction and one atomic per work-group at the end.
 *
 * Build options: -DWG (a power of two, a multiple of 32 on nv_ptx), -DCOPIES
 * and -DLOCAL_RUNS=0|1 (hist_local), -DQUADS, -DAGGREGATE=0|1|2, and
 *   keys:   -DMODE_KEYS -DX_T=uint (a key is read as uint: negatives are
 *           out of range; int32 keys build the same program)
 *   values: -DX_T=int|uint|long|ulong|float|double, -DX_FLOAT=0|1
 *   -DV_T and -DS_T, both the type sums are added in (uint, ulong, float,
 *   double: int32 and int64 values load as the unsigned type of the same
 *   bits) when values are summed; -DHAS_COUNTS=0|1;
 *   binned path: -DRANGE_SHIFT, -DPQUADS. */
#ifndef WG
#define WG 256
#endif
#ifndef COPIES
#define COPIES 1
#endif
#ifndef X_T
#define X_T uint
#define MODE_KEYS 1
#endif
#ifndef X_FLOAT
#define X_FLOAT 0
#endif
#ifndef HAS_COUNTS
#define HAS_COUNTS 1
#endif
#ifdef V_T
#define HAS_VALUES 1
#else
#define HAS_VALUES 0
#define V_T uint
#define S_T uint
#endif

#ifndef QUADS
#define QUADS 4 /* 4-vectors per work-item per chunk */
#endif
#define ITEMS (4 * QUADS)
#ifndef AGGREGATE
#define AGGREGATE                                                                                  \
  2 /* hist_global's peer aggregation across lanes: 0 none, 1 every run,                           \
       2 each work-item's last run of a chunk */
#endif

#ifndef LOCAL_RUNS
#define LOCAL_RUNS 1 /* hist_local adds runs of equal bins in registers first */
#endif

#define X4 CLPRIM_CAT(X_T, 4)
#define V4 CLPRIM_CAT(V_T, 4)

#include "internal/atomics.h"
#include "internal/cpu.h"

#define NO_BIN 0xFFFFFFFFu /* never a bin: the host keeps bins <= 2^31 */

/* Classes of elements outside the bins; outside[] in the output. */
#define OUT_BELOW 0 /* value < lo, or (keys) key out of range */
#define OUT_ABOVE 1 /* value >= hi */
#define OUT_NAN 2

/* ------------------------------------------------------------- bins */

/* The bin of x, or NO_BIN with *cls set to its class. */
CLPRIM_INLINE uint bin_of(X_T x, uint bins, X_T lo, X_T hi, X_T scale, ulong range, uint *cls) {
#ifdef MODE_KEYS
  uint b = as_uint(x);
  *cls = OUT_BELOW;
  return b < bins ? b : NO_BIN;
#elif X_FLOAT
  if (isnan(x)) {
    *cls = OUT_NAN;
    return NO_BIN;
  }
  if (x < lo) {
    *cls = OUT_BELOW;
    return NO_BIN;
  }
  if (x >= hi) {
    *cls = OUT_ABOVE;
    return NO_BIN;
  }
  /* The same operations as the host's reference: one subtraction and one
   * multiplication in X_T, truncated; rounding up to bins is clamped. */
  X_T t = (x - lo) * scale;
  uint b = (uint)t;
  return b < bins ? b : bins - 1;
#else
  if (x < lo) {
    *cls = OUT_BELOW;
    return NO_BIN;
  }
  if (x >= hi) {
    *cls = OUT_ABOVE;
    return NO_BIN;
  }
  /* (x - lo) * bins / (hi - lo) exactly: the host keeps range * bins < 2^64. */
  ulong d = (ulong)x - (ulong)lo;
  return (uint)(d * bins / range);
#endif
}

/* ---------------------------------------------------------- atomics */

/* Counts and sums: with NV_FAST the native adds of clprim_device.h (red:
 * no value returned), else atomic_add / atom_add, and for floats and
 * doubles the compare-and-swap adds of internal/atomics.h. */
CLPRIM_INLINE void count_add(__global uint *p, uint c) {
#ifdef NV_FAST
  clprim_red_add_global_uint(p, c);
#else
  atomic_add((volatile __global uint *)p, c);
#endif
}

CLPRIM_INLINE void global_add(__global S_T *p, S_T v) {
#if !HAS_VALUES
  (void)p, (void)v;
#elif defined(NV_FAST)
  CLPRIM_CAT(clprim_red_add_global_, S_T)(p, v);
#elif defined(V_IS_FLOAT) || defined(V_IS_DOUBLE)
  CLPRIM_CAT(cas_add_, CLPRIM_CAT(S_T, _global))(p, v);
#elif defined(V_IS_LONG)
  atom_add((volatile __global ulong *)p, v);
#else
  atomic_add((volatile __global uint *)p, v);
#endif
}

CLPRIM_INLINE void local_add(__local S_T *p, S_T v) {
#if !HAS_VALUES
  (void)p, (void)v;
#elif defined(V_IS_FLOAT) || defined(V_IS_DOUBLE)
  CLPRIM_CAT(cas_add_, CLPRIM_CAT(S_T, _local))(p, v);
#elif defined(V_IS_LONG)
  atom_add((volatile __local ulong *)p, v);
#else
  atomic_add((volatile __local uint *)p, v);
#endif
}

/* ------------------------------------------- peer aggregation (nv_ptx) */

#if !AGGREGATE
#define AGGREGATE_GLOBAL 0
#elif defined(NV_FAST) && defined(CLPRIM_PATH_NV_PTX)
CLPRIM_INLINE uint lowest_bit(uint m) {
  return 31u - clz(m & (0u - m));
}

/* Lanes with emit set and the same bin add their sums and counts in a
 * shuffle tree (log2 of the peers' number of steps); returns 1 in the lowest
 * lane of each group of peers, which then holds the group's totals. Every
 * lane of the warp must call. */
CLPRIM_INLINE int aggregate_peers(int emit, uint bin, S_T *sum, uint *count) {
  if (!clprim_sg_ballot(emit)) return 0;
  const uint peers = clprim_sg_match_any(emit ? bin : NO_BIN);
  const uint lane = clprim_sg_lane();
  uint rank = popcount(peers & clprim_sg_lanemask_lt());
  /* Lanes that do not emit match each other (NO_BIN) but take no part. */
  uint above = emit ? peers & (0xFFFFFFFEu << lane) : 0u;
  S_T s = *sum;
  uint c = *count;
  while (clprim_sg_ballot(above != 0u)) {
    const uint next = above ? lowest_bit(above) : lane;
#if HAS_VALUES
    S_T ts = CLPRIM_CAT(clprim_sg_shuffle_, S_T)(s, next);
#endif
    uint tc = clprim_sg_shuffle_uint(c, next);
    if (above) {
#if HAS_VALUES
      s += ts;
#endif
      c += tc;
    }
    above &= clprim_sg_ballot(!(rank & 1u));
    rank >>= 1;
  }
  *sum = s;
  *count = c;
  return emit && lane == lowest_bit(peers);
}
#define AGGREGATE_GLOBAL 1
#elif defined(CLPRIM_HAS_SUBGROUPS)
/* Any subgroup size (khr paths, nv_ptx without NV_FAST): one round of leader
 * election. The lowest emitting lane leads; the lanes with its bin add their
 * sums and counts by subgroup reductions and the leader issues one atomic
 * for all of them; the other lanes issue their own. That catches the common
 * case (sorted or clustered keys: most of a subgroup shares a bin) at a
 * fixed cost, where a full match would loop once per distinct bin. */
CLPRIM_INLINE int aggregate_peers(int emit, uint bin, S_T *sum, uint *count) {
  const uint lane = clprim_sg_lane();
  const uint leader = clprim_sg_reduce_min_uint(emit ? lane : 0xFFFFFFFFu);
  if (leader == 0xFFFFFFFFu) return 0;
  const uint leader_bin = clprim_sg_broadcast_uint(bin, leader);
  const int joins = emit && bin == leader_bin;
  const uint c = clprim_sg_reduce_add_uint(joins ? *count : 0u);
#if HAS_VALUES
  const S_T s = CLPRIM_CAT(clprim_sg_reduce_add_, S_T)(joins ? *sum : (S_T)0);
#endif
  if (lane == leader) {
    *count = c;
#if HAS_VALUES
    *sum = s;
#endif
    return 1;
  }
  return emit && !joins;
}
#define AGGREGATE_GLOBAL 1
#else
#define AGGREGATE_GLOBAL 0
#endif

/* ------------------------------------------------------- the loop */

/* Processes chunk c (ITEMS consecutive elements of this work-item): all its
 * loads are issued first (QUADS vector loads of keys / values in flight per
 * work-item), then bins, runs of equal bins added in registers, and one
 * EMIT(flag, bin, sum, count) per run (EMIT_LAST for the chunk's last run),
 * macros of each kernel; without RUNS one EMIT per element. Every
 * work-item reaches EMIT and EMIT_LAST equally often (flag says whether it
 * holds a run), so subgroup operations in them stay converged. */
#define PROCESS_CHUNK(EMIT, EMIT_LAST, RUNS)                                                       \
  do {                                                                                             \
    const ulong first = c * ITEMS;                                                                 \
    X_T x[ITEMS];                                                                                  \
    V_T v[ITEMS];                                                                                  \
    if (first + ITEMS <= n) {                                                                      \
      for (int u = 0; u < QUADS; ++u) {                                                            \
        const X4 xq = ((const __global X4 *)in)[c * QUADS + u];                                    \
        x[4 * u] = xq.s0, x[4 * u + 1] = xq.s1, x[4 * u + 2] = xq.s2, x[4 * u + 3] = xq.s3;        \
      }                                                                                            \
      for (int u = 0; u < QUADS; ++u) {                                                            \
        V4 vq = (V4)0;                                                                             \
        if (HAS_VALUES) vq = ((const __global V4 *)values)[c * QUADS + u];                         \
        v[4 * u] = vq.s0, v[4 * u + 1] = vq.s1, v[4 * u + 2] = vq.s2, v[4 * u + 3] = vq.s3;        \
      }                                                                                            \
    } else {                                                                                       \
      for (int j = 0; j < ITEMS; ++j) {                                                            \
        const int ok_ = first + j < n;                                                             \
        x[j] = ok_ ? in[first + j] : (X_T)0;                                                       \
        v[j] = (HAS_VALUES && ok_) ? values[first + j] : (V_T)0;                                   \
      }                                                                                            \
    }                                                                                              \
    uint cur = NO_BIN, cnt = 0;                                                                    \
    S_T acc = 0;                                                                                   \
    for (int j = 0; j < ITEMS; ++j) {                                                              \
      const int ok = first + j < n;                                                                \
      uint cls = 0;                                                                                \
      const uint b = ok ? bin_of(x[j], bins, lo, hi, scale, range, &cls) : NO_BIN;                 \
      if (ok && b == NO_BIN) {                                                                     \
        out_below += cls == OUT_BELOW;                                                             \
        out_above += cls == OUT_ABOVE;                                                             \
        out_nan += cls == OUT_NAN;                                                                 \
      }                                                                                            \
      if (!(RUNS)) { /* every element on its own: fewer instructions */                            \
        EMIT(b != NO_BIN, b, (S_T)v[j], 1u);                                                       \
        continue;                                                                                  \
      }                                                                                            \
      const int change = b != NO_BIN && b != cur;                                                  \
      if (j > 0) EMIT((change && cnt > 0), cur, acc, cnt);                                         \
      if (change) {                                                                                \
        cur = b, acc = (S_T)v[j], cnt = 1;                                                         \
      } else if (b != NO_BIN) {                                                                    \
        acc += (S_T)v[j], cnt += 1;                                                                \
      }                                                                                            \
    }                                                                                              \
    EMIT_LAST(cnt > 0, cur, acc, cnt);                                                             \
  } while (0)

/* The grid-stride loop over chunks; its trip count is uniform per
 * work-group. */
#define FOR_EACH_CHUNK(EMIT, EMIT_LAST, RUNS)                                                      \
  const ulong chunks = (n + ITEMS - 1) / ITEMS, stride = get_global_size(0);                       \
  for (ulong group_first = (ulong)get_group_id(0) * WG; group_first < chunks;                      \
       group_first += stride) {                                                                    \
    const ulong c = group_first + lid;                                                             \
    PROCESS_CHUNK(EMIT, EMIT_LAST, RUNS);                                                          \
  }

/* Adds the work-group's outside counts to outside[0..2]: separate
 * reductions, not a loop over them (a loop around barriers, and subgroup
 * operations that PoCL implements with barriers, is what its kernel compiler
 * handles least well); keys have only one class. */
CLPRIM_INLINE void flush_outside(uint below, uint above, uint nan_count, __local uint *scratch,
                                 __global uint *outside) {
  const uint total_below = clprim_wg_reduce_add_uint(below, scratch);
#ifdef MODE_KEYS
  (void)above, (void)nan_count;
  if (get_local_id(0) == 0 && total_below) atomic_add(&outside[OUT_BELOW], total_below);
#else
  const uint total_above = clprim_wg_reduce_add_uint(above, scratch);
  const uint total_nan = clprim_wg_reduce_add_uint(nan_count, scratch);
  if (get_local_id(0) == 0) {
    if (total_below) atomic_add(&outside[OUT_BELOW], total_below);
    if (total_above) atomic_add(&outside[OUT_ABOVE], total_above);
    if (total_nan) atomic_add(&outside[OUT_NAN], total_nan);
  }
#endif
}

#define KERNEL_ARGS                                                                                \
  __global const X_T *in, __global const V_T *values, ulong n, uint bins, X_T lo, X_T hi,          \
      X_T scale, ulong range, __global uint *counts, __global S_T *sums, __global uint *outside

/* Bins in local memory (COPIES * bins counts and / or sums). */
#ifdef KERNEL_hist_local
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
hist_local(KERNEL_ARGS, __local uint *local_counts, __local S_T *local_sums) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0);
  for (uint i = lid; i < COPIES * bins; i += WG) {
    if (HAS_COUNTS) local_counts[i] = 0;
    if (HAS_VALUES) local_sums[i] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint base = (lid >> 5) % COPIES * bins;
  uint out_below = 0, out_above = 0, out_nan = 0;
#if defined(CLPRIM_CPU) && WG == 1
  /* The cpu path: the work-item alone owns the bins, and takes the g-th of
   * get_global_size(0) contiguous shares of the elements, one by one. */
  ulong first, end;
  cpu_share(n, 1, &first, &end);
#define CPU_ONE(i)                                                                                 \
  {                                                                                                \
    uint cls = 0;                                                                                  \
    const uint b = bin_of(in[i], bins, lo, hi, scale, range, &cls);                                \
    if (b != NO_BIN) {                                                                             \
      if (HAS_COUNTS) local_counts[b] += 1u;                                                       \
      if (HAS_VALUES) local_sums[b] += (S_T)values[i];                                             \
    } else {                                                                                       \
      out_below += cls == OUT_BELOW;                                                               \
      out_above += cls == OUT_ABOVE;                                                               \
      out_nan += cls == OUT_NAN;                                                                   \
    }                                                                                              \
  }
  ulong i = first;
#if X_FLOAT && !defined(MODE_KEYS)
  /* 16 at a time: their bins and whether all are inside [lo, hi) (a loop
   * the compiler vectorises), then 16 adds; else those 16 one by one. */
  for (; i + 16 <= end; i += 16) {
    uint bb[16];
    int all = 1;
    for (uint j = 0; j < 16; ++j) {
      const X_T x = in[i + j];
      const int inside = x >= lo && x < hi; /* NaN is not */
      all &= inside;
      const uint b = (uint)(((inside ? x : lo) - lo) * scale); /* as bin_of */
      bb[j] = b < bins ? b : bins - 1;
    }
    if (all) {
      for (uint j = 0; j < 16; ++j) {
        if (HAS_COUNTS) local_counts[bb[j]] += 1u;
        if (HAS_VALUES) local_sums[bb[j]] += (S_T)values[i + j];
      }
    } else {
      for (ulong k = i; k < i + 16; ++k) CPU_ONE(k)
    }
  }
#endif
  for (; i < end; ++i) CPU_ONE(i)
#else
#define EMIT_LOCAL(flag, bin, sum, count)                                                          \
  if (flag) {                                                                                      \
    if (HAS_COUNTS) atomic_add(&local_counts[base + (bin)], (count));                              \
    if (HAS_VALUES) local_add(&local_sums[base + (bin)], (sum));                                   \
  }
  FOR_EACH_CHUNK(EMIT_LOCAL, EMIT_LOCAL, LOCAL_RUNS)
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = lid; i < bins; i += WG) {
    uint c = 0;
    S_T s = 0;
    for (uint k = 0; k < COPIES; ++k) {
      if (HAS_COUNTS) c += atomic_or(&local_counts[k * bins + i], 0u);
      if (HAS_VALUES) s += local_sums[k * bins + i];
    }
    if (HAS_COUNTS && c) count_add(&counts[i], c);
    if (HAS_VALUES && s != (S_T)0) global_add(&sums[i], s);
  }
  flush_outside(out_below, out_above, out_nan, scratch, outside);
}
#endif

/* Global atomics, aggregated over peers where the path allows. */
#ifdef KERNEL_hist_global
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void hist_global(KERNEL_ARGS) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0);
  uint out_below = 0, out_above = 0, out_nan = 0;
#define EMIT_DIRECT(flag, bin, sum, count)                                                         \
  if (flag) {                                                                                      \
    if (HAS_COUNTS) count_add(&counts[bin], (count));                                              \
    if (HAS_VALUES) global_add(&sums[bin], (sum));                                                 \
  }
#if AGGREGATE_GLOBAL
#define EMIT_AGGREGATED(flag, bin, sum, count)                                                     \
  {                                                                                                \
    S_T s_ = (sum);                                                                                \
    uint c_ = (count);                                                                             \
    if (aggregate_peers((flag), (bin), &s_, &c_)) {                                                \
      if (HAS_COUNTS) count_add(&counts[bin], c_);                                                 \
      if (HAS_VALUES) global_add(&sums[bin], s_);                                                  \
    }                                                                                              \
  }
#else
#define EMIT_AGGREGATED EMIT_DIRECT
#endif
#if AGGREGATE == 2
  /* Runs inside a chunk directly; each work-item's last run, which sorted
   * or clustered keys share with the neighbouring lanes, aggregated. */
  FOR_EACH_CHUNK(EMIT_DIRECT, EMIT_AGGREGATED, 1)
#else
  FOR_EACH_CHUNK(EMIT_AGGREGATED, EMIT_AGGREGATED, 1)
#endif
  flush_outside(out_below, out_above, out_nan, scratch, outside);
}
#endif

/* ---------------------------------------------------- the binned path */

/* Bins that do not fit in local memory, partitioned first (the split of a
 * radix sort pass, by the bin's high bits, then per-range local histograms;
 * the "binned" strategy of GPU histogramming): a range is 2^RANGE_SHIFT
 * consecutive bins, as many as a work-group's local memory holds.
 *  1. hist_part_count: each work-group takes tiles_per_group consecutive
 *     tiles of PTILE elements and counts its elements per range (local
 *     atomics, runs of equal ranges added first); range_counts[r * groups +
 *     g] (range-major), plus a 0 after the last; counts outside the bins.
 *  2. the host scans range_counts (exclusive): each (range, group)'s offset
 *     in the partitioned buffer; the extra entry becomes the total.
 *  3. hist_part_scatter: the same tiles again; each tile is ranked by range
 *     in local memory (one local atomic per run of equal ranges, a scan of
 *     the tile's range counts) and written out range by range, so global
 *     writes are runs per range: bin & RANGE_MASK as a ushort (and the
 *     value) at the range's cursor.
 *  4. hist_part_local: each work-group takes a slice of the partitioned
 *     buffer, which may cross range boundaries: per range it meets, local
 *     bins are cleared, counted / summed, and the nonzero ones added to the
 *     output with global atomics; a short piece of a range goes straight to
 *     the global atomics.
 * Elements outside the bins are counted in pass 1 only and never written. */
#ifndef RANGE_SHIFT
#define RANGE_SHIFT 13
#endif
#define RANGE_BINS (1u << RANGE_SHIFT)
#define RANGE_MASK (RANGE_BINS - 1u)
#ifndef PQUADS
#define PQUADS 4 /* 4-vectors per work-item per tile of the binned passes */
#endif
#define PITEMS (4 * PQUADS)
#define PTILE (WG * PITEMS)

/* Loads this work-item's PITEMS elements starting at first (a multiple of
 * 4) into x[], and with LOAD_VALUES (and HAS_VALUES) their values into v[]. */
#define PART_LOAD(first, x, v, LOAD_VALUES)                                                        \
  do {                                                                                             \
    if ((first) + PITEMS <= n) {                                                                   \
      for (int u = 0; u < PQUADS; ++u) {                                                           \
        const X4 xq = ((const __global X4 *)in)[(first) / 4 + u];                                  \
        x[4 * u] = xq.s0, x[4 * u + 1] = xq.s1, x[4 * u + 2] = xq.s2, x[4 * u + 3] = xq.s3;        \
      }                                                                                            \
      for (int u = 0; u < PQUADS; ++u) {                                                           \
        V4 vq = (V4)0;                                                                             \
        if (HAS_VALUES && (LOAD_VALUES)) vq = ((const __global V4 *)values)[(first) / 4 + u];      \
        v[4 * u] = vq.s0, v[4 * u + 1] = vq.s1, v[4 * u + 2] = vq.s2, v[4 * u + 3] = vq.s3;        \
      }                                                                                            \
    } else {                                                                                       \
      for (int j = 0; j < PITEMS; ++j) {                                                           \
        const int ok_ = (first) + j < n;                                                           \
        x[j] = ok_ ? in[(first) + j] : (X_T)0;                                                     \
        v[j] = (HAS_VALUES && (LOAD_VALUES) && ok_) ? values[(first) + j] : (V_T)0;                \
      }                                                                                            \
    }                                                                                              \
  } while (0)

#define PART_ARGS                                                                                  \
  __global const X_T *in, __global const V_T *values, ulong n, uint bins, X_T lo, X_T hi,          \
      X_T scale, ulong range, uint ranges, uint tiles_per_group

#ifdef KERNEL_hist_part_count
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
hist_part_count(PART_ARGS, __global uint *range_counts, __global uint *outside,
                __local uint *counts_l) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0), group = (uint)get_group_id(0);
  const uint groups = (uint)get_num_groups(0);
  for (uint r = lid; r < ranges; r += WG)
    counts_l[r] = 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint out_below = 0, out_above = 0, out_nan = 0;
  const ulong tile0 = (ulong)group * tiles_per_group;
  for (uint t = 0; t < tiles_per_group; ++t) {
    const ulong first = (tile0 + t) * PTILE + (ulong)lid * PITEMS;
    if (first >= n) break; /* no barrier in this loop */
    X_T x[PITEMS];
    V_T v[PITEMS];
    PART_LOAD(first, x, v, 0);
    uint cur = NO_BIN, len = 0;
    for (int j = 0; j < PITEMS; ++j) {
      const int ok = first + j < n;
      uint cls = 0;
      const uint b = ok ? bin_of(x[j], bins, lo, hi, scale, range, &cls) : NO_BIN;
      if (ok && b == NO_BIN) {
        out_below += cls == OUT_BELOW;
        out_above += cls == OUT_ABOVE;
        out_nan += cls == OUT_NAN;
      }
      const uint r = b == NO_BIN ? NO_BIN : b >> RANGE_SHIFT;
      if (r != cur) {
        if (len) atomic_add(&counts_l[cur], len);
        cur = r, len = 0;
      }
      len += r != NO_BIN;
    }
    if (len) atomic_add(&counts_l[cur], len);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint r = lid; r < ranges; r += WG)
    range_counts[(ulong)r * groups + group] = atomic_or(&counts_l[r], 0u);
  if (group == 0 && lid == 0) range_counts[(ulong)ranges * groups] = 0u;
  flush_outside(out_below, out_above, out_nan, scratch, outside);
}
#endif

#ifdef KERNEL_hist_part_scatter
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
hist_part_scatter(PART_ARGS, __global const uint *range_offsets, __global ushort *part_bins,
                  __global V_T *part_values, __local uint *tile_count, __local uint *tile_offset, __local uint *cursor,
                  __local uint *write_base, __local uint *staged_bins, __local V_T *staged_values) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0), group = (uint)get_group_id(0);
  const uint groups = (uint)get_num_groups(0);
  for (uint r = lid; r < ranges; r += WG) {
    cursor[r] = range_offsets[(ulong)r * groups + group];
    tile_count[r] = 0u;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint per_item = (ranges + WG - 1) / WG; /* ranges each work-item scans */
  const ulong tile0 = (ulong)group * tiles_per_group;
  for (uint t = 0; t < tiles_per_group; ++t) {
    const ulong tile_first = (tile0 + t) * PTILE;
    if (tile_first >= n) break; /* uniform over the work-group */
    const ulong first = tile_first + (ulong)lid * PITEMS;
    X_T x[PITEMS];
    V_T v[PITEMS];
    uint b[PITEMS], rank[PITEMS] = {0};
    PART_LOAD(first, x, v, 1);
    for (int j = 0; j < PITEMS; ++j) {
      uint cls = 0;
      b[j] = first + j < n ? bin_of(x[j], bins, lo, hi, scale, range, &cls) : NO_BIN;
    }
    /* rank[j] first holds the length of the run of equal ranges from j on,
     * then (one local atomic per run) the rank of each element among the
     * tile's elements of its range. */
    rank[PITEMS - 1] = 1u;
    for (int j = PITEMS - 2; j >= 0; --j)
      rank[j] = (b[j] >> RANGE_SHIFT) == (b[j + 1] >> RANGE_SHIFT) ? rank[j + 1] + 1u : 1u;
    for (int j = 0; j < PITEMS; ++j) {
      if (b[j] == NO_BIN) continue;
      if (j > 0 && (b[j] >> RANGE_SHIFT) == (b[j - 1] >> RANGE_SHIFT))
        rank[j] = rank[j - 1] + 1u;
      else
        rank[j] = atomic_add(&tile_count[b[j] >> RANGE_SHIFT], rank[j]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* The tile's offset per range; the counts are reset for the next tile. */
    uint mine = 0;
    for (uint k = 0; k < per_item; ++k) {
      const uint r = lid * per_item + k;
      if (r < ranges) mine += atomic_or(&tile_count[r], 0u);
    }
    uint total;
    uint offset = clprim_wg_scan_excl_add_uint(mine, scratch, &total);
    for (uint k = 0; k < per_item; ++k) {
      const uint r = lid * per_item + k;
      if (r < ranges) {
        const uint count = atomic_xchg(&tile_count[r], 0u);
        tile_offset[r] = offset;
        write_base[r] = cursor[r] - offset;
        cursor[r] += count;
        offset += count;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < PITEMS; ++j)
      if (b[j] != NO_BIN) {
        const uint p = tile_offset[b[j] >> RANGE_SHIFT] + rank[j];
        staged_bins[p] = b[j];
        if (HAS_VALUES) staged_values[p] = v[j];
      }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Consecutive work-items write consecutive elements of a range. */
    for (uint p = lid; p < total; p += WG) {
      const uint bin = staged_bins[p];
      const uint dst = write_base[bin >> RANGE_SHIFT] + p;
      part_bins[dst] = (ushort)(bin & RANGE_MASK);
      if (HAS_VALUES) part_values[dst] = staged_values[p];
    }
    /* The next tile's first barrier separates these reads from its writes. */
  }
}
#endif

/* The range holding element i of the partitioned buffer: the last r whose
 * start (its group 0 offset) is <= i. */
CLPRIM_INLINE uint range_of(__global const uint *range_offsets, uint ranges, uint groups, uint i) {
  uint a = 0, z = ranges - 1; /* start(a) <= i always (start(0) = 0) */
  while (a < z) {
    const uint m = (a + z + 1) / 2;
    if (range_offsets[(ulong)m * groups] <= i)
      a = m;
    else
      z = m - 1;
  }
  return a;
}

#ifdef KERNEL_hist_part_local
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
hist_part_local(__global const ushort *part_bins, __global const V_T *part_values,
                __global const uint *range_offsets, uint ranges, uint groups, uint slice, uint bins,
                __global uint *counts, __global S_T *sums, __local uint *local_counts,
                __local S_T *local_sums) {
  const uint lid = (uint)get_local_id(0);
  const uint total = range_offsets[(ulong)ranges * groups];
  const ulong s0 = (ulong)get_group_id(0) * slice;
  if (s0 >= total) return; /* uniform over the work-group */
  const uint end = (uint)min(s0 + slice, (ulong)total);
  uint pos = (uint)s0;
  for (uint r = range_of(range_offsets, ranges, groups, pos); pos < end; ++r) {
    const uint range_end = r + 1 < ranges ? range_offsets[(ulong)(r + 1) * groups] : total;
    const uint stop = min(end, range_end);
    const uint base = r << RANGE_SHIFT;
    if (stop - pos < RANGE_BINS / 2) {
      /* A short piece: cheaper than clearing and flushing the local bins. */
      for (ulong i = (ulong)pos + lid; i < stop; i += WG) {
        const uint bin = base + part_bins[i];
        if (HAS_COUNTS) count_add(&counts[bin], 1u);
        if (HAS_VALUES) global_add(&sums[bin], (S_T)part_values[i]);
      }
    } else if (stop > pos) {
      for (uint i = lid; i < RANGE_BINS; i += WG) {
        if (HAS_COUNTS) local_counts[i] = 0u;
        if (HAS_VALUES) local_sums[i] = 0;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      ulong i = (ulong)pos + lid;
      for (; i + 3 * WG < stop; i += 4 * WG) {
        uint bq[4];
        V_T vq[4];
        for (int u = 0; u < 4; ++u) {
          bq[u] = part_bins[i + u * WG];
          vq[u] = HAS_VALUES ? part_values[i + u * WG] : (V_T)0;
        }
        for (int u = 0; u < 4; ++u) {
          if (HAS_COUNTS) atomic_add(&local_counts[bq[u]], 1u);
          if (HAS_VALUES) local_add(&local_sums[bq[u]], (S_T)vq[u]);
        }
      }
      for (; i < stop; i += WG) {
        const uint bin = part_bins[i];
        if (HAS_COUNTS) atomic_add(&local_counts[bin], 1u);
        if (HAS_VALUES) local_add(&local_sums[bin], (S_T)part_values[i]);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (uint k = lid; k < RANGE_BINS && base + k < bins; k += WG) {
        if (HAS_COUNTS) {
          const uint c = atomic_or(&local_counts[k], 0u);
          if (c) count_add(&counts[base + k], c);
        }
        if (HAS_VALUES) {
          const S_T s = local_sums[k];
          if (s != (S_T)0) global_add(&sums[base + k], s);
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    pos = stop;
  }
}
#endif

/* ------------------------------------------- exact sums (CLPRIM_EXACT) */
/* Dense reduce-by-key with CLPRIM_EXACT (-DHIST_EXACT, with -DT=V_T,
 * -DT_BITS and the exact accumulator's options; internal/exact.h): each
 * key's sum kept exactly in 32-bit digits and rounded once. The keys of a
 * pass are [k0, k1) (keys = k1 - k0 of them); per key k - k0: its window
 * masks at meta[k EXACT_MASKS] (internal/exact.h: the words its elements
 * reach, and its flags), its lowest word lo at meta[keys EXACT_MASKS + k],
 * and its window of global words (two uints each: internal/exact.h) at
 * offsets[k]: words lo, lo + 1, ... of the accumulator, as many as
 * offsets[k + 1] - offsets[k].
 *  - hist_exact_window: the elements' counts and, per key, the words their
 *    digits reach and their flags (usually one atomic_or an element, none
 *    for what the work-item has already sent to the same key);
 *  - hist_exact_lengths: each key's window (from its lowest word to one
 *    above its highest: normalised, fewer than 2^32 elements' digits
 *    carry less than 2^32 into it, a long with the sign), or (full) every
 *    word; the host scans them into offsets;
 *  - hist_exact_clear: the windows' words zeroed;
 *  - hist_exact_global: each element's digits (at most 3) added to its
 *    key's window with global atomics (64-bit, or 32-bit pairs with a
 *    carry): windows fit the keys' exponents, so their words are few and
 *    stay in cache;
 *  - hist_exact_local (every key's full window, keys that fit in local
 *    memory): each work-group adds its elements to per-key words in local
 *    memory, then each key's nonzero words to its window, counts and flags;
 *  - hist_exact_normalise: each window's carries normalised, between
 *    passes over 2^31 - 1 elements or fewer (a word takes a digit from each
 *    element at most);
 *  - hist_exact_round: each key's words rounded once into sums[k0 + k].
 * Work-group g takes the g-th contiguous share of elements [first, end),
 * its work-item l the elements l, l + WG, ... (loads coalesced). Keys out
 * of range are counted when count_outside is set. */
#ifdef HIST_EXACT
#include "internal/exact.h"

/* Work-group g's share [*b, *e) of [first, end). */
CLPRIM_INLINE void exact_share(ulong first, ulong end, ulong *b, ulong *e) {
  const ulong groups = get_num_groups(0), len = end - first;
  const ulong per = ((len + groups - 1) / groups + WG - 1) / WG * WG;
  *b = min(end, first + (ulong)get_group_id(0) * per);
  *e = min(end, *b + per);
}

#define EXACT_DATA_ARGS                                                                            \
  __global const X_T *in, __global const V_T *values, ulong first, ulong end, uint bins, uint k0,  \
      uint k1, __global uint *meta, __global const ulong *offsets, __global uint *words,           \
      __global uint *counts, __global uint *outside, uint count_outside

#ifdef KERNEL_hist_exact_window
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
hist_exact_window(EXACT_DATA_ARGS) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  (void)offsets, (void)words;
  const uint keys = k1 - k0;
  ulong b, e;
  exact_share(first, end, &b, &e);
  uint invalid = 0;
  struct exact_sent sent;
  exact_sent_init(&sent);
  for (ulong i = b + get_local_id(0); i < e; i += WG) {
    const uint key = as_uint(in[i]);
    if (key >= bins) {
      ++invalid;
      continue;
    }
    if (key < k0 || key >= k1) continue;
    const uint k = key - k0;
    if (HAS_COUNTS) atomic_inc(&counts[key]);
    EXACT_E x;
    const uint f = exact_element(values[i], &x) << EXACT_MASK_WORDS;
    __global uint *mask = meta + (ulong)k * EXACT_MASKS;
    if (x == (EXACT_E)0) {
      const uint need = exact_sent_bits(&sent, key, 0, f);
      if (need != 0u) atomic_or(&mask[0], need);
      continue;
    }
    long d[3];
    const int w = exact_split(x, d);
    const int lo = w + (d[0] != 0 ? 0 : d[1] != 0 ? 1 : 2);
    const int hi = w + (d[2] != 0 ? 2 : d[1] != 0 ? 1 : 0);
    const int ml = lo / EXACT_MASK_WORDS, mh = hi / EXACT_MASK_WORDS;
    const uint hi_bit = 1u << (hi % EXACT_MASK_WORDS);
    uint need = exact_sent_bits(&sent, key, ml,
                                f | 1u << (lo % EXACT_MASK_WORDS) | (mh == ml ? hi_bit : 0u));
    if (need != 0u) atomic_or(&mask[ml], need);
    if (mh != ml) {
      need = exact_sent_bits(&sent, key, mh, hi_bit);
      if (need != 0u) atomic_or(&mask[mh], need);
    }
  }
  if (count_outside) flush_outside(invalid, 0, 0, scratch, outside);
}
#endif

#ifdef KERNEL_hist_exact_lengths
__kernel void hist_exact_lengths(__global uint *meta, uint keys, uint full,
                                 __global ulong *lengths) {
  for (uint k = get_global_id(0); k < keys; k += get_global_size(0)) {
    int lo = EXACT_W, hi = -1;
    for (int m = 0; m < EXACT_MASKS; ++m) {
      const uint bits = meta[(ulong)k * EXACT_MASKS + m] & ((1u << EXACT_MASK_WORDS) - 1u);
      if (bits == 0u) continue;
      lo = min(lo, m * EXACT_MASK_WORDS + (int)(31u - clz(bits & (0u - bits))));
      hi = max(hi, m * EXACT_MASK_WORDS + (int)(31u - clz(bits)));
    }
    if (full) lo = 0, hi = EXACT_W - 1;
    meta[(ulong)keys * EXACT_MASKS + k] = hi < 0 ? 0u : (uint)lo;
    lengths[k] = hi < 0 ? 0 : (ulong)(min(hi + 1, EXACT_W - 1) - lo + 1); /* to highest + 1 */
  }
  if (get_global_id(0) == 0) lengths[keys] = 0;
}
#endif

#ifdef KERNEL_hist_exact_clear
__kernel void hist_exact_clear(__global uint *words, __global const ulong *offsets, uint keys) {
  const ulong total = 2 * offsets[keys];
  for (ulong i = get_global_id(0); i < total; i += get_global_size(0)) words[i] = 0u;
}
#endif

#ifdef KERNEL_hist_exact_global
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
hist_exact_global(EXACT_DATA_ARGS) {
  (void)counts, (void)outside, (void)count_outside;
  const uint keys = k1 - k0;
  ulong b, e;
  exact_share(first, end, &b, &e);
  for (ulong i = b + get_local_id(0); i < e; i += WG) {
    const uint key = as_uint(in[i]);
    if (key < k0 || key >= k1) continue; /* keys out of range too */
    const uint k = key - k0;
    EXACT_E x;
    exact_element(values[i], &x);
    if (x == (EXACT_E)0) continue;
    long d[3];
    const int w = exact_split(x, d);
    /* word w + j of the accumulator is word w + j - lo of the window */
    const ulong at = offsets[k] + (ulong)(w - (int)meta[(ulong)keys * EXACT_MASKS + k]);
    for (int j = 0; j < 3; ++j)
      if (d[j] != 0) exact_gadd(words + 2 * (at + (ulong)j), d[j]);
  }
}
#endif

#ifdef KERNEL_hist_exact_local
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
hist_exact_local(EXACT_DATA_ARGS, __local EXACT_LWORD *local_words, __local uint *key_flags,
                 __local uint *key_counts) {
  __local uint scratch[CLPRIM_WG_SCRATCH(WG)];
  (void)k0, (void)k1;
  const uint lid = (uint)get_local_id(0);
  for (uint j = lid; j < bins * EXACT_ACC_WORDS; j += WG) local_words[j] = 0;
  for (uint k = lid; k < bins; k += WG) key_flags[k] = 0u, key_counts[k] = 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  ulong b, e;
  exact_share(first, end, &b, &e);
  uint invalid = 0;
  struct exact_sent sent;
  exact_sent_init(&sent);
  for (ulong i = b + lid; i < e; i += WG) {
    const uint key = as_uint(in[i]);
    if (key >= bins) {
      ++invalid;
      continue;
    }
    EXACT_E x;
    const uint f = exact_sent_bits(&sent, key, 0, exact_element(values[i], &x));
#if WG == 1
    if (HAS_COUNTS) key_counts[key] += 1u;
    key_flags[key] |= f;
#else
    if (HAS_COUNTS) atomic_inc(&key_counts[key]);
    if (f != 0u) atomic_or(&key_flags[key], f);
#endif
    if (x != (EXACT_E)0) exact_flush((EXACT_ACC *)(local_words + key * EXACT_ACC_WORDS), x);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  /* A work-item a key: its nonzero words (not normalised: raw sums of
   * digits, as hist_exact_global's) to its full window. */
  for (uint k = lid; k < bins; k += WG) {
    const uint f = key_flags[k];
    if (f == 0u) continue; /* no element: no word either */
    EXACT_ACC *acc = (EXACT_ACC *)(local_words + k * EXACT_ACC_WORDS);
    for (int w = 0; w < EXACT_W; ++w) {
      const long d = exact_word(acc, w);
      if (d != 0) exact_gadd(words + 2 * (offsets[k] + (ulong)w), d);
    }
    atomic_or(&meta[(ulong)k * EXACT_MASKS], f << EXACT_MASK_WORDS);
    if (HAS_COUNTS) atomic_add(&counts[k], key_counts[k]);
  }
  if (count_outside) flush_outside(invalid, 0, 0, scratch, outside);
}
#endif

#ifdef KERNEL_hist_exact_normalise
__kernel void hist_exact_normalise(__global uint *words, __global const ulong *offsets,
                                   uint keys) {
  for (uint k = get_global_id(0); k < keys; k += get_global_size(0)) {
    const ulong at = offsets[k];
    const int len = (int)(offsets[k + 1] - at);
    long word[EXACT_W];
    for (int w = 0; w < len; ++w) word[w] = exact_gword(words + 2 * (at + (ulong)w));
    if (len > 0) exact_normalise_window(word, len);
    for (int w = 0; w < len; ++w) exact_gword_set(words + 2 * (at + (ulong)w), word[w]);
  }
}
#endif

#ifdef KERNEL_hist_exact_round
__kernel void hist_exact_round(__global const uint *meta, __global const ulong *offsets,
                               __global const uint *words, uint k0, uint keys,
                               __global V_T *sums) {
  for (uint k = get_global_id(0); k < keys; k += get_global_size(0)) {
    uint f = 0u;
    for (int m = 0; m < EXACT_MASKS; ++m)
      f |= EXACT_MASK_FLAGS(meta[(ulong)k * EXACT_MASKS + m]);
    EXACT_RESULT_BITS bits = 0; /* no element: +0 */
    if (f != 0u) {
      long word[EXACT_W];
      for (int w = 0; w < EXACT_W; ++w) word[w] = 0;
      const ulong at = offsets[k];
      const int len = (int)(offsets[k + 1] - at), lo = (int)meta[(ulong)keys * EXACT_MASKS + k];
      for (int w = 0; w < len; ++w) word[lo + w] = exact_gword(words + 2 * (at + (ulong)w));
      bits = exact_round(word, f);
    }
    sums[k0 + k] = CLPRIM_CAT(as_, T)(bits);
  }
}
#endif
#endif /* HIST_EXACT */

/* Zeroes the first a_words, b_words, c_words 32-bit words of a, b, c (the
 * outputs and the outside counters before the atomics), in one launch; a
 * kernel rather than clEnqueueFillBuffer, whose bytes Oclgrind's checks see
 * as uninitialised when an atomic then reads them. */
#ifdef KERNEL_hist_zero
__kernel void hist_zero(__global uint *a, ulong a_words, __global uint *b, ulong b_words,
                        __global uint *c, ulong c_words) {
  const ulong stride = get_global_size(0);
  for (ulong i = get_global_id(0); i < a_words; i += stride)
    a[i] = 0u;
  for (ulong i = get_global_id(0); i < b_words; i += stride)
    b[i] = 0u;
  for (ulong i = get_global_id(0); i < c_words; i += stride)
    c[i] = 0u;
}
#endif

/* Copies the call's results from scratch to the caller's buffers, in one
 * launch, so that one command writes every output (a failed call writes
 * nothing): the first count_words and sum_words 32-bit words of counts and
 * sums, and the outside_words uint32 counters of outside as uint64 words. */
#ifdef KERNEL_hist_commit
__kernel void hist_commit(__global const uint *counts, __global uint *counts_out,
                          ulong count_words, __global const uint *sums, __global uint *sums_out,
                          ulong sum_words, __global const uint *outside,
                          __global ulong *outside_out, uint outside_words) {
  const ulong stride = get_global_size(0);
  for (ulong i = get_global_id(0); i < count_words; i += stride)
    counts_out[i] = counts[i];
  for (ulong i = get_global_id(0); i < sum_words; i += stride)
    sums_out[i] = sums[i];
  if (get_global_id(0) < outside_words) outside_out[get_global_id(0)] = outside[get_global_id(0)];
}
#endif
