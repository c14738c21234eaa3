/* lookback.h: decoupled look-back (Merrill and Garland, "Single-pass
 * Parallel Prefix Scan with Decoupled Look-back", 2016), for single-pass
 * kernels: work-groups take tile ids in launch order (lb_next_tile),
 * publish their tile's aggregate, and one warp looks back over the
 * predecessors' published values until it meets an inclusive prefix.
 * Needs work-groups that make progress while others wait (NVIDIA GPUs give
 * that in practice; the hosts run these kernels on nv_ptx only) and the
 * 32-lane ballot of clprim_device.h.
 *
 * Build with LB_T (the value: uint, int, float, ulong, long, double) and
 * LB_BITS:
 *   32  values of 32 bits: one 64-bit word per tile, flag << 32 | bits;
 *   62  counts below 2^62 (LB_T ulong): one word, flag << 62 | count;
 *   64  other 64-bit values: a 32-bit flag per tile, then the aggregates,
 *       then the inclusive prefixes (layout.h); each value is written
 *       once, before its flag, with a fence between.
 * The state buffer (layout.h: LB_PACKED_BYTES / LB_SPLIT_BYTES) is zeroed
 * before the launch.
 *
 * Or define LB_OP (a user operator's values, see that section below).
 *
 * Or build with LB_DIGITS (a count of digits, as 256) for vectors of
 * counts, one per digit (Onesweep's digit offsets): each tile publishes
 * LB_DIGITS 32-bit words, flag << 30 | count (counts below 2^30), and one
 * work-item per digit looks back over the predecessors' words (layout.h:
 * LB_DIGIT_BYTES). */
#ifndef CLPRIM_LOOKBACK_H
#define CLPRIM_LOOKBACK_H
#include "internal/layout.h"

#define LB_EMPTY 0u
#define LB_AGGREGATE 1u /* the tile's own value */
#define LB_PREFIX 2u    /* the tile's value plus all earlier tiles' */

/* The next tile id (one work-item calls, then shares it). */
CLPRIM_INLINE uint lb_next_tile(__global uchar *state) {
  return atomic_inc((__global volatile uint *)state);
}

#ifdef LB_T
#if LB_BITS == 32 || LB_BITS == 62
CLPRIM_INLINE void lb_publish(__global uchar *state, uint tiles, uint tile, uint flag, LB_T value) {
  __global volatile ulong *status = (__global volatile ulong *)(state + LB_COUNTER_BYTES);
  (void)tiles;
#if LB_BITS == 32
  status[tile] = ((ulong)flag << 32) | as_uint(value);
#else
  status[tile] = ((ulong)flag << 62) | value;
#endif
}
CLPRIM_INLINE uint lb_read(__global uchar *state, uint tiles, long tile, LB_T *value) {
  __global volatile ulong *status = (__global volatile ulong *)(state + LB_COUNTER_BYTES);
  (void)tiles;
  const ulong s = status[tile];
#if LB_BITS == 32
  *value = CLPRIM_CAT(as_, LB_T)((uint)s);
  return (uint)(s >> 32);
#else
  *value = s & (((ulong)1 << 62) - 1);
  return (uint)(s >> 62);
#endif
}
#else
CLPRIM_INLINE void lb_publish(__global uchar *state, uint tiles, uint tile, uint flag, LB_T value) {
  __global volatile uint *flags = (__global volatile uint *)(state + LB_COUNTER_BYTES);
  __global volatile LB_T *values = (__global volatile LB_T *)(
      state + (flag == LB_PREFIX ? LB_PREFIXES_AT((ulong)tiles) : LB_AGGREGATES_AT((ulong)tiles)));
  values[tile] = value;
  clprim_fence_global();
  flags[tile] = flag;
}
CLPRIM_INLINE uint lb_read(__global uchar *state, uint tiles, long tile, LB_T *value) {
  __global volatile uint *flags = (__global volatile uint *)(state + LB_COUNTER_BYTES);
  const uint flag = flags[tile];
  clprim_fence_global();
  __global volatile LB_T *values = (__global volatile LB_T *)(
      state + (flag == LB_PREFIX ? LB_PREFIXES_AT((ulong)tiles) : LB_AGGREGATES_AT((ulong)tiles)));
  *value = flag == LB_EMPTY ? (LB_T)0 : values[tile];
  return flag;
}
#endif

/* Run by the 32 lanes of one warp: the sum of the values of all tiles
 * before `tile`. Each round reads the statuses of the 32 nearest unread
 * predecessors (lane 0 the nearest), waits until none is empty, and stops
 * at the nearest inclusive prefix. */
CLPRIM_INLINE LB_T lb_look_back(__global uchar *state, uint tiles, uint tile) {
  const uint lane = clprim_sg_lane();
  LB_T prefix = 0;
  long nearest = (long)tile - 1;
  for (;;) {
    const long at = nearest - (long)lane;
    LB_T value = 0;
    uint flag;
    do {
      flag = at < 0 ? LB_PREFIX : lb_read(state, tiles, at, &value);
    } while (clprim_sg_ballot(flag == LB_EMPTY) != 0);
    const uint prefixes = clprim_sg_ballot(flag == LB_PREFIX);
    if (prefixes) {
      const uint stop = 31u - clz(prefixes & (~prefixes + 1u)); /* nearest lane holding a prefix */
      return prefix + CLPRIM_CAT(clprim_sg_reduce_add_, LB_T)(lane <= stop ? value : (LB_T)0);
    }
    prefix += CLPRIM_CAT(clprim_sg_reduce_add_, LB_T)(value);
    nearest -= 32;
  }
}
#endif /* LB_T */

#ifdef LB_OP
/* Values of any type LB_OP_T (a struct too) combined by LB_OP(a, b, p), in
 * tile order (the operator need not commute), with identity LB_ID(p); p
 * of type LB_P is what they need. The warp moves values with
 * LB_SHUFFLE_DOWN(x, d) and LB_SHUFFLE(x, lane) (clprim_device.h's
 * CLPRIM_DEFINE_WG_OP gives them on nv_ptx). Layout: layout.h's LB_OP_*; a
 * value is written before its flag, with a fence between. */
CLPRIM_INLINE void lb_op_publish(__global uchar *state, uint tiles, uint tile, uint flag,
                                 LB_OP_T value) {
  __global volatile uint *flags = (__global volatile uint *)(state + LB_COUNTER_BYTES);
  __global volatile LB_OP_T *values = (__global volatile LB_OP_T *)(
      state + (flag == LB_PREFIX ? LB_OP_PREFIXES_AT((ulong)tiles, sizeof(LB_OP_T))
                                 : LB_OP_VALUES_AT((ulong)tiles)));
  values[tile] = value;
  clprim_fence_global();
  flags[tile] = flag;
}

/* Run by the 32 lanes of one warp: the combination of all tiles before
 * `tile`, oldest on the left. Each round reads the statuses of the 32
 * nearest unread predecessors (lane 0 the nearest), waits until none is
 * empty, combines them up to the nearest inclusive prefix (higher lanes,
 * older tiles, on the left) and puts the result before what it has. */
CLPRIM_INLINE LB_OP_T lb_op_look_back(__global uchar *state, uint tiles, uint tile, const LB_P p) {
  __global volatile uint *flags = (__global volatile uint *)(state + LB_COUNTER_BYTES);
  __global volatile LB_OP_T *aggregates = (__global volatile LB_OP_T *)(state + LB_OP_VALUES_AT((ulong)tiles));
  __global volatile LB_OP_T *prefixes =
      (__global volatile LB_OP_T *)(state + LB_OP_PREFIXES_AT((ulong)tiles, sizeof(LB_OP_T)));
  const uint lane = clprim_sg_lane();
  LB_OP_T prefix = LB_ID(p);
  long nearest = (long)tile - 1;
  for (;;) {
    const long at = nearest - (long)lane;
    uint flag;
    do {
      flag = at < 0 ? LB_PREFIX : flags[at];
    } while (clprim_sg_ballot(flag == LB_EMPTY) != 0);
    clprim_fence_global();
    LB_OP_T value = at < 0 ? LB_ID(p) : flag == LB_PREFIX ? prefixes[at] : aggregates[at];
    const uint found = clprim_sg_ballot(flag == LB_PREFIX);
    const uint stop = found ? 31u - clz(found & (~found + 1u)) : 31u; /* nearest prefix's lane */
    if (lane > stop) value = LB_ID(p);
    for (uint d = 1; d < 32; d <<= 1) { /* lane l: lanes [l, l + 2d), the higher on the left */
      LB_OP_T y = LB_SHUFFLE_DOWN(value, d);
      if (lane + d < 32) value = LB_OP(y, value, p);
    }
    prefix = LB_OP(LB_SHUFFLE(value, 0), prefix, p);
    if (found) return prefix;
    nearest -= 32;
  }
}
#endif /* LB_OP */

#ifdef LB_DIGITS
#define LB_DIGIT_COUNT_MASK 0x3FFFFFFFu
CLPRIM_INLINE void lb_digit_publish(__global uchar *state, uint tile, uint digit, uint flag,
                                    uint count) {
  __global volatile uint *words = (__global volatile uint *)(state + LB_COUNTER_BYTES);
  words[(ulong)tile * LB_DIGITS + digit] = flag << 30 | count;
}
/* Run by one work-item per digit, after its tile published the aggregate
 * `count` (tile 0 publishes only its prefix, and does not look back): the
 * sum of the digit's counts over all tiles before `tile`, walking back tile
 * by tile to the nearest inclusive prefix; then publishes this tile's
 * prefix. */
CLPRIM_INLINE uint lb_digit_look_back(__global uchar *state, uint tile, uint digit, uint count) {
  __global volatile uint *words = (__global volatile uint *)(state + LB_COUNTER_BYTES);
  uint prefix = 0;
  for (long p = (long)tile - 1; p >= 0; --p) {
    uint w;
    do {
      w = words[(ulong)p * LB_DIGITS + digit];
    } while ((w >> 30) == LB_EMPTY);
    prefix += w & LB_DIGIT_COUNT_MASK;
    if ((w >> 30) == LB_PREFIX) break;
  }
  lb_digit_publish(state, tile, digit, LB_PREFIX, prefix + count);
  return prefix;
}
#endif /* LB_DIGITS */
#endif /* CLPRIM_LOOKBACK_H */
