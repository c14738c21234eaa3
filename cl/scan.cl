/* scan.cl: exclusive and inclusive prefix sums over tiles of WG * ITEMS
 * elements.
 *
 * Tile layout: work-items load and store the tile as rows of WG vectors of
 * VW elements (VW = 4 when ITEMS is a multiple of 4, else 1), so each warp
 * touches consecutive 16-byte vectors (coalesced; ld.global.v4 on NVIDIA
 * through an aligned vector pointer: vload4 only promises element alignment
 * and compiles to scalar loads). The tile passes through local memory
 * (padded against bank conflicts) so that each work-item then scans ITEMS
 * consecutive elements, with one clprim_wg_scan_excl_add_T per tile:
 * subgroup scans on subgroup paths, the Blelloch up-/down-sweep on the local
 * path (the "load transpose" of CUB's block loads).
 *
 * Two algorithms share the tile code:
 *  - reduce-then-scan, every path: scan_reduce writes one sum per tile, the
 *    host scans those sums (recursively, with the same kernels), then
 *    scan_tiles scans each tile from its offset. Reads the input twice.
 *  - single pass with decoupled look-back (Merrill & Garland, "Single-pass
 *    Parallel Prefix Scan with Decoupled Look-back", 2016), nv_ptx only:
 *    tiles take ids in launch order from an atomic counter, publish their
 *    aggregate, and one warp looks back over predecessors' published values
 *    until it meets an inclusive prefix. Reads the input once. Needs
 *    work-groups that make progress while others wait, which NVIDIA GPUs
 *    give in practice.
 *
 * Build options: -DT=uint|ulong|float|double (signed integers use the
 * unsigned program: the bits are the same), -DT_BITS=32|64, -DWG, -DITEMS. */
#ifndef T
#define T uint
#define T_BITS 32
#endif
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 8
#endif
#define TILE ((ulong)WG * ITEMS)
#if ITEMS % 4 == 0
#define VW 4
#else
#define VW 1
#endif
#define ROWS (ITEMS / VW)

#define VEC4 CLPRIM_CAT(T, 4)
#define AS_T CLPRIM_CAT(as_, T)
#define WG_SCAN CLPRIM_CAT(clprim_wg_scan_excl_add_, T)
#define WG_REDUCE CLPRIM_CAT(clprim_wg_reduce_add_, T)

/* Local-memory index of tile element i: one pad word per 32 keeps the
 * work-items' ITEMS-strided reads on distinct banks. */
#define PAD(i) ((i) + (i) / 32)
#define TILE_LOCAL PAD(WG * ITEMS)

/* Copies the tile starting at tile_first (a multiple of 4, so vectors are
 * 16-byte aligned) into local memory, zeros past n; then gives this
 * work-item its ITEMS consecutive elements. Contains barriers. */
CLPRIM_INLINE void load_tile(__global const T *in, ulong n, ulong tile_first, __local T *buf,
                             T *v) {
  const uint lid = (uint)get_local_id(0);
  const bool full = tile_first + TILE <= n;
#pragma unroll
  for (uint r = 0; r < ROWS; ++r) {
    uint i = (r * WG + lid) * VW; /* tile-relative index of this vector */
#if VW == 4
    if (full) {
      VEC4 q = ((__global const VEC4 *)(in + tile_first))[r * WG + lid];
      buf[PAD(i)] = q.s0;
      buf[PAD(i + 1)] = q.s1;
      buf[PAD(i + 2)] = q.s2;
      buf[PAD(i + 3)] = q.s3;
      continue;
    }
#endif
#pragma unroll
    for (uint c = 0; c < VW; ++c)
      buf[PAD(i + c)] = full || tile_first + i + c < n ? in[tile_first + i + c] : (T)0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (uint k = 0; k < ITEMS; ++k) v[k] = buf[PAD(lid * ITEMS + k)];
}

CLPRIM_INLINE T sum_items(const T *v) {
  T s = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) s += v[k];
  return s;
}

/* Scans v from `run`, puts the results back in local memory, and stores the
 * tile's elements below n with the same coalesced pattern as load_tile.
 * Contains barriers. */
CLPRIM_INLINE void store_tile(__global T *out, ulong n, ulong tile_first, __local T *buf, T *v,
                              T run, int inclusive) {
  const uint lid = (uint)get_local_id(0);
#pragma unroll
  for (uint k = 0; k < ITEMS; ++k) {
    T before = run;
    run += v[k];
    buf[PAD(lid * ITEMS + k)] = inclusive ? run : before;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const bool full = tile_first + TILE <= n;
#pragma unroll
  for (uint r = 0; r < ROWS; ++r) {
    uint i = (r * WG + lid) * VW;
#if VW == 4
    if (full) {
#ifdef CLPRIM_PATH_NV_PTX
      ((__global VEC4 *)(out + tile_first))[r * WG + lid] =
          (VEC4)(buf[PAD(i)], buf[PAD(i + 1)], buf[PAD(i + 2)], buf[PAD(i + 3)]);
#else
      /* Oclgrind (which runs this path in the tests) flags a vector built
       * from scalars as an uninitialised store (its issue #126). */
      vstore4((VEC4)(buf[PAD(i)], buf[PAD(i + 1)], buf[PAD(i + 2)], buf[PAD(i + 3)]), r * WG + lid,
              out + tile_first);
#endif
      continue;
    }
#endif
#pragma unroll
    for (uint c = 0; c < VW; ++c)
      if (full || tile_first + i + c < n) out[tile_first + i + c] = buf[PAD(i + c)];
  }
}

/* Reduce-then-scan, step 1: the sum of each tile (order does not matter here,
 * so no transpose). */
#ifdef KERNEL_scan_reduce
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_reduce(__global const T *in, ulong n, __global T *tile_sums) {
  __local T scratch[CLPRIM_WG_SCRATCH(WG)];
  const ulong tile_first = (ulong)get_group_id(0) * TILE;
  const uint lid = (uint)get_local_id(0);
  const bool full = tile_first + TILE <= n;
  T s = 0;
#pragma unroll
  for (uint r = 0; r < ROWS; ++r) {
    uint i = (r * WG + lid) * VW;
#if VW == 4
    if (full) {
      VEC4 q = ((__global const VEC4 *)(in + tile_first))[r * WG + lid];
      s += (q.s0 + q.s1) + (q.s2 + q.s3);
      continue;
    }
#endif
#pragma unroll
    for (uint c = 0; c < VW; ++c)
      if (full || tile_first + i + c < n) s += in[tile_first + i + c];
  }
  T total = WG_REDUCE(s, scratch);
  if (lid == 0) tile_sums[get_group_id(0)] = total;
}
#endif

/* Reduce-then-scan, step 3 (or the whole scan of a single tile): scans each
 * tile, starting from tile_offsets[tile] when use_offsets is set. */
#ifdef KERNEL_scan_tiles
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_tiles(__global const T *in, __global T *out, ulong n, __global const T *tile_offsets,
                int use_offsets, int inclusive) {
  __local T scratch[CLPRIM_WG_SCRATCH(WG)];
  __local T buf[TILE_LOCAL];
  const ulong tile_first = (ulong)get_group_id(0) * TILE;
  T v[ITEMS];
  load_tile(in, n, tile_first, buf, v);
  T total;
  T run = WG_SCAN(sum_items(v), scratch, &total);
  if (use_offsets) run += tile_offsets[get_group_id(0)];
  store_tile(out, n, tile_first, buf, v, run, inclusive);
}
#endif

#ifdef CLPRIM_PATH_NV_PTX
/* Tile status for the look-back, in `state` (zeroed before the launch):
 * bytes 0..7 the tile counter; then for 32-bit T one 64-bit word per tile,
 * flag << 32 | value bits, written and read whole; for 64-bit T see below. */
#define FLAG_EMPTY 0u
#define FLAG_AGGREGATE 1u
#define FLAG_PREFIX 2u

CLPRIM_INLINE void nv_fence(void) { asm volatile("membar.gl;" ::: "memory"); }

#if T_BITS == 32
CLPRIM_INLINE void publish(__global uchar *state, uint tiles, uint tile, uint flag, T value) {
  __global volatile ulong *status = (__global volatile ulong *)(state + 8);
  status[tile] = ((ulong)flag << 32) | as_uint(value);
}
CLPRIM_INLINE uint read_status(__global uchar *state, uint tiles, long tile, T *value) {
  __global volatile ulong *status = (__global volatile ulong *)(state + 8);
  ulong s = status[tile];
  *value = AS_T((uint)s);
  return (uint)(s >> 32);
}
#else
/* 64-bit values: a flag per tile, then the aggregates, then the inclusive
 * prefixes. Each value is written once, before its flag (with a fence), so a
 * reader that saw a flag reads the value that goes with it. */
#define AGGREGATES_AT(tiles) (8 + (((ulong)(tiles) * 4 + 7) & ~(ulong)7))
#define PREFIXES_AT(tiles) (AGGREGATES_AT(tiles) + (ulong)(tiles) * 8)
CLPRIM_INLINE void publish(__global uchar *state, uint tiles, uint tile, uint flag, T value) {
  __global volatile uint *flags = (__global volatile uint *)(state + 8);
  __global volatile T *values = (__global volatile T *)(
      state + (flag == FLAG_PREFIX ? PREFIXES_AT(tiles) : AGGREGATES_AT(tiles)));
  values[tile] = value;
  nv_fence();
  flags[tile] = flag;
}
CLPRIM_INLINE uint read_status(__global uchar *state, uint tiles, long tile, T *value) {
  __global volatile uint *flags = (__global volatile uint *)(state + 8);
  uint flag = flags[tile];
  nv_fence();
  __global volatile T *values = (__global volatile T *)(
      state + (flag == FLAG_PREFIX ? PREFIXES_AT(tiles) : AGGREGATES_AT(tiles)));
  *value = flag == FLAG_EMPTY ? (T)0 : values[tile];
  return flag;
}
#endif

/* Run by the 32 lanes of warp 0: the sum of all tiles before `tile`. Each
 * round reads the statuses of the 32 nearest unread predecessors; lane 0 is
 * the nearest. */
CLPRIM_INLINE T look_back(__global uchar *state, uint tiles, uint tile) {
  uint lane = clprim_sg_lane();
  T prefix = 0;
  long nearest = (long)tile - 1;
  for (;;) {
    long at = nearest - (long)lane;
    T value = 0;
    uint flag;
    do {
      flag = at < 0 ? FLAG_PREFIX : read_status(state, tiles, at, &value);
    } while (clprim_sg_ballot(flag == FLAG_EMPTY) != 0);
    uint prefixes = clprim_sg_ballot(flag == FLAG_PREFIX);
    if (prefixes) {
      uint stop = 31u - clz(prefixes & (~prefixes + 1u)); /* nearest lane holding a prefix */
      prefix += CLPRIM_CAT(clprim_sg_reduce_add_, T)(lane <= stop ? value : (T)0);
      return prefix;
    }
    prefix += CLPRIM_CAT(clprim_sg_reduce_add_, T)(value);
    nearest -= 32;
  }
}

#ifdef KERNEL_scan_single_pass
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_single_pass(__global const T *in, __global T *out, ulong n, __global uchar *state,
                      uint tiles, int inclusive) {
  __local T scratch[CLPRIM_WG_SCRATCH(WG)];
  __local T buf[TILE_LOCAL];
  __local uint tile_id;
  __local T tile_prefix;
  uint lid = (uint)get_local_id(0);
  if (lid == 0) tile_id = atomic_inc((__global volatile uint *)state);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint tile = tile_id;
  const ulong tile_first = (ulong)tile * TILE;
  T v[ITEMS];
  load_tile(in, n, tile_first, buf, v);
  T aggregate;
  T run = WG_SCAN(sum_items(v), scratch, &aggregate);
  if (tile == 0) {
    if (lid == 0) publish(state, tiles, 0, FLAG_PREFIX, aggregate);
  } else {
    if (lid == 0) publish(state, tiles, tile, FLAG_AGGREGATE, aggregate);
    if (lid < 32) {
      T before = look_back(state, tiles, tile);
      if (lid == 0) {
        publish(state, tiles, tile, FLAG_PREFIX, before + aggregate);
        tile_prefix = before;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    run += tile_prefix;
  }
  store_tile(out, n, tile_first, buf, v, run, inclusive);
}
#endif
#endif
