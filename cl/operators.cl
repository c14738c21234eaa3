/* operators.cl: reductions, scans and adjacent differences with a user's
 * type and operator (clprim_operator_*, src/operators.c). The program's
 * prefix (src/engine/operator.c) defines clprim_op_t, clprim_op_params
 * (p0..p7), clprim_op_combine(a, b, prm) and clprim_op_identity(prm).
 *
 * Elements are combined in index order, the lower index on the left (the
 * operator need not be commutative). Tiles of WG * ITEMS elements are
 * loaded into local memory with consecutive work-items on consecutive
 * elements, then each work-item combines ITEMS consecutive ones, and a
 * work-group tree (clprim_device.h's CLPRIM_DEFINE_WG_OP) combines the
 * work-items' values. Scans are reduce-then-scan: op_reduce writes one
 * total per tile, the host scans those totals with the same kernels, then
 * op_scan_tiles scans each tile from its offset.
 *
 * The cpu path (-DCLPRIM_CPU, work-groups of one work-item): a tile of
 * ITEMS elements combined in order by one work-item, with no local
 * memory.
 *
 * The tiles' elements come through internal/input.h: a plain load, or a
 * pipeline's stages (-DPIPELINE: src/pipeline.c's reduce_op terminal,
 * which builds op_reduce alone over its first level, with -DPIPE_OUT_IS_T
 * since the host checked that x has the operator's type), where an
 * element that fails a filter is not there and gives the identity (which
 * leaves the others' combination, in index order, as it is).
 *
 * Build options: -DWG (work-items, every launch), -DITEMS (elements a
 * work-item, per tile). */
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#define TILE ((ulong)WG * ITEMS)
/* Local-memory index of tile element i: one pad element per 32 keeps a
 * warp's reads of ITEMS-strided elements on distinct banks (for elements
 * of one to three words and ITEMS of 4 to 16; 16-way conflicts without),
 * and TILE_LOCAL elements hold the padded tile. */
#define PAD(i) ((i) + (i) / 32)
#define TILE_LOCAL PAD(TILE)
#include "internal/segments.h"
/* Here, not only inside the single pass's #if: the host inlines each
 * internal header once, at its first include. */
#include "internal/layout.h"
#include "internal/heads.h"
#define OPT clprim_op_t
#define OP(a, b) clprim_op_combine(a, b, prm)
#define T clprim_op_t
#include "internal/input.h"

CLPRIM_DEFINE_WG_OP(op, clprim_op_t, clprim_op_params, clprim_op_combine, clprim_op_identity)

/* OP_ELEMENT(in, i): element i of the input, or the identity where it is
 * not there (a pipeline's filter failed it). With the plain load it is
 * in[i] itself, a struct assignment: through a function the compiler
 * copied a global element to local memory with llvm.memmove, which
 * Oclgrind's uninitialised-value check cannot run. */
#if IN_FILTERS
CLPRIM_INLINE OPT op_element(__global const IN_T *in, ulong i,
                             const clprim_op_params prm IN_PARAMS) {
  OPT x;
  return in_element(in[i], i, &x IN_ARGS) ? x : clprim_op_identity(prm);
}
#define OP_ELEMENT(in, i) op_element(in, i, prm IN_ARGS)
#else
#define OP_ELEMENT(in, i) (in)[i]
#endif

/* The tile from element `first` into buf (the identity past n). Ends with a
 * barrier. */
CLPRIM_INLINE void load_tile(__global const IN_T *in, ulong n, ulong first, __local OPT *buf,
                             const clprim_op_params prm IN_PARAMS) {
  const uint lid = (uint)get_local_id(0);
  if (first + TILE <= n) {
    for (uint r = 0; r < ITEMS; ++r)
      buf[PAD(r * WG + lid)] = OP_ELEMENT(in, first + r * WG + lid);
  } else {
    for (uint r = 0; r < ITEMS; ++r) {
      const uint i = r * WG + lid;
      buf[PAD(i)] = first + i < n ? OP_ELEMENT(in, first + i) : clprim_op_identity(prm);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* This work-item's ITEMS consecutive elements of the tile, combined. */
CLPRIM_INLINE OPT items_total(__local const OPT *buf, const clprim_op_params prm) {
  const uint at = (uint)get_local_id(0) * ITEMS;
  OPT v = buf[PAD(at)];
  for (uint k = 1; k < ITEMS; ++k) v = OP(v, buf[PAD(at + k)]);
  return v;
}

/* The element type's size and alignment, for the host's check
 * (clprim_operator_create): the alignment is where an element starts after
 * one char in a struct (plain C, where not every compiler has an
 * alignof). */
#ifdef KERNEL_op_layout
__kernel void op_layout(__global uint *out) {
  struct {
    char c;
    OPT x;
  } probe;
  if (get_global_id(0) == 0)
    out[0] = (uint)sizeof(OPT),
    out[1] = (uint)((__private char *)&probe.x - (__private char *)&probe);
}
#endif

/* Work-group g combines tiles [g * per_group, (g + 1) * per_group) of n
 * elements (fewer in the last) into out[g], after init where use_init. */
#ifdef KERNEL_op_reduce
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void op_reduce(__global const IN_T *in, ulong n, ulong per_group, __global OPT *out, int use_init,
               const OPT init, const clprim_op_params prm IN_PARAMS) {
#ifdef CLPRIM_CPU
  /* The cpu path (work-groups of one work-item, -DWG=1): the group's
   * range in four contiguous quarters, combined side by side (four
   * independent chains keep the core's pipeline full when combine is slow,
   * a division say), then in order. */
  const ulong first = get_group_id(0) * per_group * TILE, end = min(n, first + per_group * TILE);
  /* (a signed difference: Oclgrind has no llvm.usub.sat, which an
   * unsigned one clamped at 0 compiles to) */
  const ulong q = (ulong)max((long)end - (long)first, 0L) / 4;
  OPT acc[4];
  for (uint k = 0; k < 4; ++k) acc[k] = clprim_op_identity(prm);
  for (ulong i = 0; i < q; ++i)
    for (uint k = 0; k < 4; ++k) acc[k] = OP(acc[k], OP_ELEMENT(in, first + k * q + i));
  for (ulong i = first + 4 * q; i < end; ++i) acc[3] = OP(acc[3], OP_ELEMENT(in, i));
  const OPT all = OP(OP(acc[0], acc[1]), OP(acc[2], acc[3]));
  out[get_group_id(0)] = use_init ? OP(init, all) : all;
#else
  __local OPT buf[TILE_LOCAL];
  __local OPT part[WG];
  const ulong g = get_group_id(0);
#ifdef PIPELINE
  /* A pipeline's build: one tile a work-group (the host passes per_group
   * 1), with no loop around the barriers. PoCL 5 fails an assertion
   * building the stages (their early returns, inlined) inside a loop that
   * holds barriers. */
  load_tile(in, n, g * TILE, buf, prm IN_ARGS);
  const OPT acc = clprim_wg_reduce_op(items_total(buf, prm), part, prm);
#else
  const ulong tiles = n / TILE + (n % TILE != 0);
  const ulong end = min(tiles, (g + 1) * per_group);
  OPT acc = clprim_op_identity(prm);
  for (ulong t = g * per_group; t < end; ++t) {
    load_tile(in, n, t * TILE, buf, prm IN_ARGS);
    const OPT v = items_total(buf, prm);
    acc = OP(acc, clprim_wg_reduce_op(v, part, prm));
  }
#endif
  if (get_local_id(0) == 0) out[g] = use_init ? OP(init, acc) : acc;
#endif
}
#endif

#ifndef CLPRIM_CPU
/* The tile in buf (its elements from `first`, of n), scanned from prefix
 * ∘ before (before: the work-items' before this one, from the work-group
 * scan) into out. */
CLPRIM_INLINE void store_scanned(__global OPT *out, ulong n, ulong first, __local OPT *buf,
                                 OPT run, int inclusive, const clprim_op_params prm) {
  const uint lid = (uint)get_local_id(0);
  for (uint k = 0; k < ITEMS; ++k) {
    const OPT x = buf[PAD(lid * ITEMS + k)];
    if (inclusive) run = OP(run, x);
    buf[PAD(lid * ITEMS + k)] = run;
    if (!inclusive) run = OP(run, x);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint r = 0; r < ITEMS; ++r) {
    const uint i = r * WG + lid;
    if (first + i < n) out[first + i] = buf[PAD(i)];
  }
}
#endif

/* Tile t of n elements scanned into out (inclusive or exclusive), after
 * offsets[t] (the tiles before it, where use_offsets) and init (where
 * use_init). out may be in. */
#ifdef KERNEL_op_scan_tiles
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void op_scan_tiles(__global const OPT *in, __global OPT *out, ulong n,
                   __global const OPT *offsets, int use_offsets, int use_init, const OPT init,
                   int inclusive, const clprim_op_params prm) {
  const ulong t = get_group_id(0), first = t * TILE;
  OPT prefix = use_offsets ? offsets[t] : clprim_op_identity(prm);
  if (use_init) prefix = OP(init, prefix);
#ifdef CLPRIM_CPU
  /* The cpu path: the tile in order (x read before out is written: in
   * place works). */
  const ulong end = min(n, first + TILE);
  for (ulong i = first; i < end; ++i) {
    const OPT x = in[i];
    if (inclusive) prefix = OP(prefix, x);
    out[i] = prefix;
    if (!inclusive) prefix = OP(prefix, x);
  }
#else
  __local OPT buf[TILE_LOCAL];
  __local OPT part[WG];
  load_tile(in, n, first, buf, prm);
  OPT total;
  const OPT before = clprim_wg_scan_excl_op(items_total(buf, prm), part, &total, prm);
  store_scanned(out, n, first, buf, OP(prefix, before), inclusive, prm);
#endif
}
#endif

/* nv_ptx: the whole scan in one pass with decoupled look-back
 * (internal/lookback.h's LB_OP): work-groups take tiles in launch order,
 * publish their tile's total, and warp 0 looks back for the tiles before.
 * Reads the input once. state: layout.h's LB_OP_* for `tiles` tiles,
 * counter and flags zeroed. */
#if defined(KERNEL_op_scan_single) && defined(CLPRIM_PATH_NV_PTX)
#define LB_OP_T OPT
#define LB_P clprim_op_params
#define LB_OP(a, b, p) clprim_op_combine(a, b, p)
#define LB_ID(p) clprim_op_identity(p)
#define LB_SHUFFLE_DOWN(x, d) clprim_sg_shuffle_down_op(x, d)
#define LB_SHUFFLE(x, lane) clprim_sg_shuffle_op(x, lane)
#include "internal/lookback.h"
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void op_scan_single(__global const OPT *in, __global OPT *out, ulong n, __global uchar *state,
                    uint tiles, int use_init, const OPT init, int inclusive,
                    const clprim_op_params prm) {
  __local OPT buf[TILE_LOCAL];
  __local OPT part[WG];
  __local uint tile_id;
  __local OPT tile_prefix;
  const uint lid = (uint)get_local_id(0);
  if (lid == 0) tile_id = lb_next_tile(state);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint t = tile_id;
  const ulong first = (ulong)t * TILE;
  load_tile(in, n, first, buf, prm);
  OPT total;
  const OPT before = clprim_wg_scan_excl_op(items_total(buf, prm), part, &total, prm);
  if (t == 0) {
    if (lid == 0) lb_op_publish(state, tiles, 0, LB_PREFIX, total), tile_prefix = clprim_op_identity(prm);
  } else {
    if (lid == 0) lb_op_publish(state, tiles, t, LB_AGGREGATE, total);
    if (lid < 32) { /* warp 0 */
      const OPT excl = lb_op_look_back(state, tiles, t, prm);
      if (lid == 0) lb_op_publish(state, tiles, t, LB_PREFIX, OP(excl, total)), tile_prefix = excl;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  OPT prefix = tile_prefix;
  if (use_init) prefix = OP(init, prefix);
  store_scanned(out, n, first, buf, OP(prefix, before), inclusive, prm);
}
#endif

/* acc combined with in[b, e) in order: by the work-group, tile by tile
 * (buf and part as op_reduce's), or on the cpu path by one work-item. Not
 * in a pipeline's build (op_reduce alone: its load_tile reads the stages). */
#ifndef PIPELINE
#ifdef CLPRIM_CPU
#define RANGE_LOCALS
#define RANGE_TOTAL(acc, in, b, e) range_total(acc, in, b, e, prm)
CLPRIM_INLINE OPT range_total(OPT acc, __global const OPT *in, ulong b, ulong e,
                              const clprim_op_params prm) {
  for (ulong i = b; i < e; ++i) acc = OP(acc, in[i]);
  return acc;
}
#else
#define RANGE_LOCALS                                                                               \
  __local OPT buf[TILE_LOCAL];                                                                           \
  __local OPT part[WG];
#define RANGE_TOTAL(acc, in, b, e) range_total(acc, in, b, e, buf, part, prm)
CLPRIM_INLINE OPT range_total(OPT acc, __global const OPT *in, ulong b, ulong e,
                              __local OPT *buf, __local OPT *part, const clprim_op_params prm) {
  for (ulong first = b; first < e; first += TILE) {
    load_tile(in, e, first, buf, prm);
    acc = OP(acc, clprim_wg_reduce_op(items_total(buf, prm), part, prm));
  }
  return acc;
}
#endif
#endif /* PIPELINE */

/* One segment [begins[s], ends[s]) a work-group (grid-stride over the
 * segments) into out[s], after init where use_init. */
#ifdef KERNEL_op_segmented
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void op_segmented(__global const OPT *in, __global const CLPRIM_OFFSET *begins,
                  __global const CLPRIM_OFFSET *ends, ulong segments, __global OPT *out,
                  int use_init, const OPT init, const clprim_op_params prm) {
  RANGE_LOCALS
  for (ulong s = get_group_id(0); s < segments; s += get_num_groups(0)) {
    const ulong b = clprim_offset_at(begins, s), e = clprim_offset_at(ends, s);
    const OPT acc = RANGE_TOTAL(use_init ? init : clprim_op_identity(prm), in, b, e);
    if (get_local_id(0) == 0) out[s] = acc;
  }
}
#endif

/* Run s of the *count runs whose heads (first positions) are heads[0 ..
 * *count), the last ending at n, a work-group (grid-stride over the runs)
 * into sums[s], after init where use_init. */
#ifdef KERNEL_op_runs
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void op_runs(__global const OPT *values, __global const ulong *heads, __global const ulong *count,
             ulong n, __global OPT *sums, int use_init, const OPT init,
             const clprim_op_params prm) {
  RANGE_LOCALS
  const ulong runs = *count;
  for (ulong s = get_group_id(0); s < runs; s += get_num_groups(0)) {
    const ulong b = heads[s], e = s + 1 < runs ? heads[s + 1] : n;
    const OPT acc = RANGE_TOTAL(use_init ? init : clprim_op_identity(prm), values, b, e);
    if (get_local_id(0) == 0) sums[s] = acc;
  }
}
#endif

/* out[i] = in[i] combined with its left neighbour (a = in[i], b = in[i -
 * 1]); out[0] = in[0]. A grid-stride loop: the neighbour's load is
 * another work-item's element, served from cache. */
#ifdef KERNEL_op_adjacent
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void op_adjacent(__global const OPT *in, __global OPT *out, ulong n,
                 const clprim_op_params prm) {
#ifdef CLPRIM_CPU
  /* CPUs: each work-item a contiguous share, streamed through one core's
   * cache. */
  const ulong share = n / get_global_size(0) + 1, first = get_global_id(0) * share;
  const ulong end = min(n, first + share);
  for (ulong i = first; i < end; ++i) out[i] = i ? OP(in[i], in[i - 1]) : in[0];
#else
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
    out[i] = i ? OP(in[i], in[i - 1]) : in[0];
#endif
}
#endif

/* ------------------------------------------------------------ scan by key
 * A scan that restarts at each run of equal consecutive keys, as a scan of
 * pairs (head, value): (fa, a) ∘ (fb, b) = (fa | fb, fb ? b : a ∘ b), which
 * is associative when ∘ is. A head's value is init ∘ x where the call has
 * init, so that every run starts from init. op_sbk_reduce writes each
 * tile's pair (a head anywhere in it; the combination since its last
 * head), the next level scans those pairs (heads from the flags), and
 * op_sbk_scan_tiles scans each tile from the combination carried into it.
 *
 * Where runs start, by `kind` (internal/heads.h's RUN_KEYS_*, a kernel
 * argument, so one program serves every key type): keys in runs as the
 * runs family has them, or RUN_KEYS_FLAGS, the next level's flags. */

typedef struct {
  OPT v;
  uint f;
} sbk_pair;

CLPRIM_INLINE sbk_pair sbk_combine(const sbk_pair a, const sbk_pair b,
                                   const clprim_op_params prm) {
  sbk_pair r;
  r.f = a.f | b.f;
  r.v = b.f ? b.v : OP(a.v, b.v);
  return r;
}

CLPRIM_INLINE sbk_pair sbk_identity(const clprim_op_params prm) {
  sbk_pair r;
  r.v = clprim_op_identity(prm);
  r.f = 0;
  return r;
}

#ifndef CLPRIM_CPU
CLPRIM_DEFINE_WG_OP(sbk, sbk_pair, clprim_op_params, sbk_combine, sbk_identity)
#endif

/* Whether element i starts a run. */
CLPRIM_INLINE uint sbk_head(__global const uchar *keys, uint kind, ulong i) {
  if (kind == RUN_KEYS_FLAGS) return ((__global const uint *)keys)[i] != 0;
  if (i == 0) return 1;
  if (kind == RUN_KEYS_32) {
    __global const uint *k = (__global const uint *)keys;
    return !CLPRIM_SAME_RUN(k[i - 1], k[i]);
  }
  if (kind == RUN_KEYS_64) {
    __global const ulong *k = (__global const ulong *)keys;
    return !CLPRIM_SAME_RUN(k[i - 1], k[i]);
  }
#ifdef CLPRIM_HAS_FP64
  if (kind == RUN_KEYS_DOUBLE) {
    __global const double *k = (__global const double *)keys;
    return !CLPRIM_SAME_RUN(k[i - 1], k[i]);
  }
#endif
  __global const float *k = (__global const float *)keys;
  return !CLPRIM_SAME_RUN(k[i - 1], k[i]);
}

/* Element i as a pair: its head, and its value (init ∘ x at a head where
 * use_init). */
CLPRIM_INLINE sbk_pair sbk_element(__global const uchar *keys, uint kind, __global const OPT *in,
                                   ulong i, int use_init, const OPT init,
                                   const clprim_op_params prm) {
  sbk_pair e;
  e.f = sbk_head(keys, kind, i);
  e.v = in[i];
  if (e.f && use_init) e.v = OP(init, e.v);
  return e;
}

#ifndef CLPRIM_CPU
/* The tile from element `first` into buf and heads (the pair identity past
 * n). Ends with a barrier. */
CLPRIM_INLINE void sbk_load(__global const uchar *keys, uint kind, __global const OPT *in, ulong n,
                            ulong first, __local OPT *buf, __local uchar *heads, int use_init,
                            const OPT init, const clprim_op_params prm) {
  const uint lid = (uint)get_local_id(0);
  for (uint r = 0; r < ITEMS; ++r) {
    const uint i = r * WG + lid;
    sbk_pair e = sbk_identity(prm);
    if (first + i < n) e = sbk_element(keys, kind, in, first + i, use_init, init, prm);
    buf[i] = e.v, heads[i] = (uchar)e.f;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* This work-item's ITEMS consecutive pairs of the tile, combined. */
CLPRIM_INLINE sbk_pair sbk_items_total(__local const OPT *buf, __local const uchar *heads,
                                       const clprim_op_params prm) {
  const uint at = (uint)get_local_id(0) * ITEMS;
  sbk_pair acc;
  acc.v = buf[at], acc.f = heads[at];
  for (uint k = 1; k < ITEMS; ++k) {
    if (heads[at + k])
      acc.v = buf[at + k], acc.f = 1;
    else
      acc.v = OP(acc.v, buf[at + k]);
  }
  return acc;
}
#endif

/* Tile t's pair into flags[t] (a head in the tile) and totals[t]. */
#ifdef KERNEL_op_sbk_reduce
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void op_sbk_reduce(__global const uchar *keys, uint kind, __global const OPT *in, ulong n,
                   __global uint *flags, __global OPT *totals, int use_init, const OPT init,
                   const clprim_op_params prm) {
  const ulong t = get_group_id(0), first = t * TILE;
#ifdef CLPRIM_CPU
  const ulong end = min(n, first + TILE);
  sbk_pair acc = sbk_identity(prm);
  for (ulong i = first; i < end; ++i) {
    const sbk_pair e = sbk_element(keys, kind, in, i, use_init, init, prm);
    acc.v = e.f ? e.v : OP(acc.v, e.v);
    acc.f |= e.f;
  }
#else
  __local OPT buf[TILE];
  __local uchar heads[TILE];
  __local sbk_pair part[WG];
  sbk_load(keys, kind, in, n, first, buf, heads, use_init, init, prm);
  const sbk_pair acc = clprim_wg_reduce_sbk(sbk_items_total(buf, heads, prm), part, prm);
#endif
  if (get_local_id(0) == 0) flags[t] = acc.f, totals[t] = acc.v;
}
#endif

/* Tile t scanned into out, after offsets[t] (the combination carried in
 * from the tiles before, where use_offsets). Inclusive: out[i] is the
 * combination from i's run head (after init) to i. Exclusive: out[i] is
 * the one to i - 1, and init (or the identity) at a head; with RUN_KEYS_FLAGS
 * (the next levels: exclusive, no init) a head's out is what was carried
 * into it. out may be in. */
#ifdef KERNEL_op_sbk_scan_tiles
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void op_sbk_scan_tiles(__global const uchar *keys, uint kind, __global const OPT *in,
                       __global OPT *out, ulong n, __global const OPT *offsets, int use_offsets,
                       int use_init, const OPT init, int inclusive, const clprim_op_params prm) {
  const ulong t = get_group_id(0), first = t * TILE;
  const OPT carry = use_offsets ? offsets[t] : clprim_op_identity(prm);
  const OPT reset = use_init ? init : clprim_op_identity(prm);
  const int runs_restart = kind != RUN_KEYS_FLAGS;
#ifdef CLPRIM_CPU
  const ulong end = min(n, first + TILE);
  OPT run = carry;
  for (ulong i = first; i < end; ++i) {
    const sbk_pair e = sbk_element(keys, kind, in, i, use_init, init, prm);
    const OPT next = e.f ? e.v : OP(run, e.v);
    out[i] = inclusive ? next : e.f && runs_restart ? reset : run;
    run = next;
  }
#else
  __local OPT buf[TILE];
  __local uchar heads[TILE];
  __local sbk_pair part[WG];
  sbk_load(keys, kind, in, n, first, buf, heads, use_init, init, prm);
  sbk_pair total;
  const sbk_pair before =
      clprim_wg_scan_excl_sbk(sbk_items_total(buf, heads, prm), part, &total, prm);
  OPT run = before.f ? before.v : OP(carry, before.v);
  const uint lid = (uint)get_local_id(0);
  for (uint k = 0; k < ITEMS; ++k) {
    const uint i = lid * ITEMS + k;
    const uint h = heads[i];
    const OPT x = buf[i];
    const OPT next = h ? x : OP(run, x);
    buf[i] = inclusive ? next : h && runs_restart ? reset : run;
    run = next;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint r = 0; r < ITEMS; ++r) {
    const uint i = r * WG + lid;
    if (first + i < n) out[first + i] = buf[i];
  }
#endif
}
#endif
