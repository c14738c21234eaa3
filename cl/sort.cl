/* sort.cl: LSD radix sort, 8-bit digits, stable.
 *
 * Keys are the elements' bits, ordered by their keys (internal/keys.h:
 * key_digit), so one build per key width and type serves ascending and
 * descending order and any bit range (kernel arguments flip, shift, mask).
 *  - sort_histogram: one read of the input counts the digits of every pass
 *    (Onesweep takes each digit's first position from it; nothing is read
 *    back, so the call never waits). Float keys are counted by key_of, and
 *    a flag word records whether a key is a NaN or -0.0; sort_pass moves
 *    plain bit keys (pass_key) and, where the flag is set, maps the NaNs'
 *    and -0.0's to key_of's for their digits.
 *  - sort_pass: one digit pass over tiles of TILE = WG * ITEMS keys. Each
 *    tile ranks its keys by digit, stably (rank_count, rank_keys), gathers
 *    them in local memory in digit order and writes each digit's run to its
 *    place:
 *      SORT_ONESWEEP (nv_ptx): the tile's offset per digit comes from a
 *        decoupled look-back over digit-count vectors (Adinets and Merrill,
 *        "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs",
 *        2022): one pass, about 2n of traffic per digit;
 *      else: sort_count counts each tile's digits, the host scans the
 *        counts (digit-major: all tiles' digit 0, then digit 1, ...), and
 *        sort_pass reads its offsets (core count -> scan -> scatter).
 *  - sort_tile: one work-group sorts up to TILE keys in local memory, every
 *    pass (small n, and each short segment of a segmented sort).
 * Ranking: each 32-lane group (a warp on nv_ptx) first counts its keys per
 * digit; from those counts, scanned, it keeps running positions per digit,
 * and a key's rank among its group's equal digits comes from the lanes
 * that share its digit: on nv_ptx atomic ORs of lane bits into a local
 * word per digit, or a ballot per digit bit (sort_pass with an 8-byte key
 * or value and values; the host picks, -DSORT_PASS_PEERS),
 * elsewhere those atomic ORs with barriers for the warp syncs.
 * Key r of work-item l sits at tile position
 * (l / 32) * 32 * ITEMS + r * 32 + l % 32, so groups, rounds and lanes
 * follow the input order and the sort is stable.
 *
 * Build options: -DT (element type; a signed integer type builds as the
 * unsigned one, its sign bit in flip: src/core/keys.c) -DT_FLOAT -DKEY_BITS=32|64,
 * -DV_BYTES=0|4|8 (values carried with the keys), -DWG (a multiple of 32),
 * -DITEMS, -DOFS_T=uint|ulong (scanned counts), -DSORT_ONESWEEP,
 * -DCLPRIM_OFFSETS_32=1 (segments' offsets are uint32, internal/segments.h). */
#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef V_BYTES
#define V_BYTES 0
#endif
#ifndef OFS_T
#define OFS_T uint
#endif
#include "internal/keys.h"
#include "internal/layout.h"
#define LB_DIGITS SORT_RADIX
#include "internal/lookback.h"

/* Loops over a work-item's keys unroll on nv_ptx (keys stay in registers);
 * elsewhere they stay loops: the local path's ranking has barriers in its
 * rounds, and PoCL's compile time grows with every unrolled copy. */
#ifdef CLPRIM_PATH_NV_PTX
#define UNROLL _Pragma("unroll")
#else
#define UNROLL
#endif

#define RADIX SORT_RADIX
#define TILE (WG * ITEMS)
#define GROUPS (WG / 32)
/* Digits per work-item in per-digit loops (1 when WG >= RADIX). */
#define DIGITS_PER_ITEM ((RADIX + WG - 1) / WG)
/* The digit of a tile's missing keys (the last tile's positions from its
 * count on): the largest, so they rank after all its keys. */
#define PAD_DIGIT (RADIX - 1u)

#if V_BYTES == 8
#define V ulong
#else
#define V uint
#endif
/* The exchange buffer holds a tile of keys or of values. */
#if KEY_BITS == 64 || V_BYTES == 8
#define XCHG ulong
#define XCHG_WORDS 2 /* 32-bit words per element */
#else
#define XCHG uint
#define XCHG_WORDS 1
#endif

/* The tile position of key r of work-item lid. */
CLPRIM_INLINE uint tile_pos(uint lid, uint r) {
  return (lid >> 5) * (32u * ITEMS) + r * 32u + (lid & 31u);
}

#ifdef CLPRIM_PATH_NV_PTX
/* How a warp finds its lanes with equal digits: sort_pass's way comes from
 * the host (-DSORT_PASS_PEERS, src/sort.c's pass_peers). */
#define PEERS_BALLOT 0 /* a ballot per digit bit */
#define PEERS_OR 2     /* atomic ORs of lane bits into a local word per digit */
#ifdef SORT_PASS_PEERS
#define PASS_PEERS SORT_PASS_PEERS
#else
#define PASS_PEERS PEERS_BALLOT
#endif
#define TILE_PEERS PEERS_OR /* sort_tile: 5.6 against 6.9 ms with ballots (2^18 x 1024) */

/* The lanes of the warp whose digit equals d. words: RADIX per warp
 * (PEERS_OR). */
CLPRIM_INLINE uint warp_peers(uint d, uint how, __local uint *words) {
#ifdef CLPRIM_HAS_MATCH /* (the .sync warp operations the ORs' syncs need) */
  if (how == PEERS_OR) {
    words += ((uint)get_local_id(0) >> 5) * RADIX;
    words[d] = 0;
    clprim_sg_sync();
    atomic_or(&words[d], 1u << ((uint)get_local_id(0) & 31u));
    clprim_sg_sync();
    const uint peers = words[d];
    clprim_sg_sync();
    return peers;
  }
#endif
  (void)how, (void)words;
  /* A ballot per digit bit, unrolled (H100, 2^28 keys: a loop whose count
   * was known only at run time took 3% longer for uint32 keys and 5% for
   * floats). */
  uint peers = ~0u;
UNROLL
  for (uint b = 0; b < SORT_DIGIT_BITS; ++b) peers &= clprim_sg_same_bit(d, b);
  return peers;
}
#else
#define PASS_PEERS 0
#define TILE_PEERS 0
#endif
/* rank_round's local words: a word per digit per 32-lane group, on
 * nv_ptx for PEERS_OR only. */
#ifdef CLPRIM_PATH_NV_PTX
#define PEER_WORDS(how) ((how) == 2 ? GROUPS * RADIX : 1)
#else
#define PEER_WORDS(how) (GROUPS * RADIX)
#endif

/* One round of ranking, called by the whole work-group: d is this
 * work-item's digit, counts its 32-lane group's running positions per
 * digit. Returns counts[d] plus how many of this round's earlier lanes have
 * digit d, and adds this round's keys to counts. */
CLPRIM_INLINE uint rank_round(uint d, uint how, __local uint *counts, __local uint *digits) {
  const uint lane = (uint)get_local_id(0) & 31u;
#ifdef CLPRIM_PATH_NV_PTX
  /* upto: this lane and the lower ones with digit d; the highest of them
   * (the leader, whose upto counts them all) adds them to counts. */
  const uint peers = warp_peers(d, how, digits);
  const uint upto = popcount(peers & ((2u << lane) - 1u));
  const uint leader = 31u - clz(peers);
  uint before = 0;
  if (lane == leader) before = atomic_add(&counts[d], upto);
  return clprim_nv_shfl_idx(before, leader) + upto - 1u;
#else
  /* The group's lanes with digit d, as bits of a local word per digit
   * (atomic ORs; barriers where nv_ptx has warp syncs). The previous
   * round read its words before its last barrier. */
  (void)how;
  __local uint *words = digits + ((uint)get_local_id(0) >> 5) * RADIX;
  words[d] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_or(&words[d], 1u << lane);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint peers = words[d];
  const uint lower = popcount(peers & ((1u << lane) - 1u));
  const uint before = counts[d];
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((peers >> lane) == 1u) counts[d] = before + popcount(peers);
  return before + lower;
#endif
}

/* Ranking a tile's keys by digit, stably, in two calls (the digits are
 * counted once, as in CUB's BlockRadixRankMatchEarlyCounts):
 *  rank_count: each 32-lane group counts its keys per digit in counts
 *    (GROUPS * RADIX); tot[j] becomes the tile's count of digit
 *    lid * DIGITS_PER_ITEM + j (Onesweep publishes them before the ranking);
 *  rank_keys: start[dd] becomes digit dd's first tile position, each
 *    group's count the position of its first key of that digit, and then
 *    rank[r] key r's position in the tile ordered by digit.
 * d[r] is key r's digit; a tile's missing keys take PAD_DIGIT, so they
 * rank after all its keys and need no case of their own. digits
 * (PEER_WORDS), scan (CLPRIM_WG_SCRATCH(WG)): local scratch. */
CLPRIM_INLINE void rank_count(const uint *d, uint *tot, __local uint *counts) {
  const uint lid = (uint)get_local_id(0);
  __local uint *mine = counts + (lid >> 5) * RADIX;
  for (uint j = lid; j < GROUPS * RADIX; j += WG) counts[j] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
UNROLL
  for (uint r = 0; r < ITEMS; ++r) atomic_inc(&mine[d[r]]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint j = 0; j < DIGITS_PER_ITEM; ++j) {
    const uint dd = lid * DIGITS_PER_ITEM + j;
    tot[j] = 0;
    if (dd < RADIX)
      for (uint g = 0; g < GROUPS; ++g) tot[j] += counts[g * RADIX + dd];
  }
}
CLPRIM_INLINE void rank_keys(const uint *d, const uint *tot, uint *rank, uint how,
                             __local uint *counts, __local uint *start, __local uint *digits,
                             __local uint *scan) {
  const uint lid = (uint)get_local_id(0);
  uint own = 0, total;
  for (uint j = 0; j < DIGITS_PER_ITEM; ++j) own += tot[j];
  /* Per digit of this work-item (the same ones rank_count summed): each
   * group's count becomes the positions before it. */
  uint before = clprim_wg_scan_excl_add_uint(own, scan, &total);
  for (uint j = 0; j < DIGITS_PER_ITEM; ++j) {
    const uint dd = lid * DIGITS_PER_ITEM + j;
    if (dd < RADIX) {
      start[dd] = before;
      for (uint g = 0; g < GROUPS; ++g) {
        const uint c = counts[g * RADIX + dd];
        counts[g * RADIX + dd] = before;
        before += c;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  __local uint *mine = counts + (lid >> 5) * RADIX;
UNROLL
  for (uint r = 0; r < ITEMS; ++r) rank[r] = rank_round(d[r], how, mine, digits);
}

/* ------------------------------------------------------------ histogram */
/* hist (passes * RADIX counts, each a low and a high 32-bit word, then a
 * ticket word and a flag word; zeroed): every pass's digit counts over
 * keys[base .. base + n), of key_of. Float keys: the flag becomes 1 if a
 * key is a NaN or -0.0 (key_of differs from the plain bit key, key_of_bits,
 * only there; sort_pass reads the flag). SORT_ONESWEEP: also starts
 * (passes * RADIX), where each digit's keys begin. */
#ifdef CLPRIM_CPU
#include "internal/cpu.h" /* cpu_share: the same share of keys in every kernel */
#endif

#ifdef KERNEL_sort_histogram
#if T_FLOAT
/* key_of from an element's bits b, from the plain bit key with the two
 * cases that the flag records (inf2: +inf's bits shifted left by one). */
CLPRIM_INLINE KEY hist_float_key(KEY b, KEY inf2, uint *special) {
  const uint nan = (b << 1) > inf2, neg0 = b == KEY_SIGN;
  *special |= nan | neg0;
  return nan ? KEY_MAX : key_of_bits(neg0 ? (KEY)0 : b);
}
#endif
#ifdef CLPRIM_CPU
/* The cpu path (one work-item per work-group): work-item g counts the g-th
 * of get_global_size(0) contiguous shares of the keys in private counters
 * and adds them to hist (the cpu path has no Onesweep: starts unused). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
sort_histogram(__global const KEY *keys, ulong base, ulong n, KEY flip, uint first_shift,
               uint passes, uint last_mask, __global uint *hist, __global ulong *starts) {
  (void)starts;
  uint counts[SORT_MAX_PASSES * RADIX];
  for (uint j = 0; j < passes * RADIX; ++j) counts[j] = 0;
  const uint low = (passes - 1u) * SORT_DIGIT_BITS;
  const KEY range = ((KEY)last_mask << low) | (((KEY)1 << low) - 1u);
#if T_FLOAT
  uint special = 0;
  const KEY inf2 = AS_KEY((T)INFINITY) << 1;
#endif
  ulong first, end;
  cpu_share(n, 1, &first, &end);
  for (ulong i = first; i < end; ++i) {
    const KEY b = keys[base + i];
#if T_FLOAT
    const KEY k = ((hist_float_key(b, inf2, &special) ^ flip) >> first_shift) & range;
#else
    const KEY k = ((key_of(CLPRIM_CAT(as_, T)(b)) ^ flip) >> first_shift) & range;
#endif
    for (uint p = 0; p < passes; ++p)
      ++counts[p * RADIX + ((uint)(k >> (p * SORT_DIGIT_BITS)) & (RADIX - 1u))];
  }
#if T_FLOAT
  if (special) atomic_or(&hist[2 * passes * RADIX + 1], 1u);
#endif
  for (uint j = 0; j < passes * RADIX; ++j) {
    const uint c = counts[j];
    if (c && atomic_add(&hist[2 * j], c) > UINT_MAX - c) atomic_inc(&hist[2 * j + 1]);
  }
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
sort_histogram(__global const KEY *keys, ulong base, ulong n, KEY flip, uint first_shift,
               uint passes, uint last_mask, __global uint *hist, __global ulong *starts) {
  __local uint counts[SORT_MAX_PASSES * RADIX];
#ifdef SORT_ONESWEEP
  __local uint last;
  __local ulong scan[CLPRIM_WG_SCRATCH(WG)];
#endif
  const uint lid = (uint)get_local_id(0);
  for (uint j = lid; j < passes * RADIX; j += WG) counts[j] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  /* The sorted bits of a key, shifted down: pass p's digit is then bits
   * [8p, 8p + 8) (the last pass's masked by the range). */
  const uint low = (passes - 1u) * SORT_DIGIT_BITS;
  const KEY range = ((KEY)last_mask << low) | (((KEY)1 << low) - 1u);
#define HIST_PASSES (KEY_BITS / SORT_DIGIT_BITS)
#if T_FLOAT
  uint special = 0; /* a NaN or -0.0: key_of is not the plain bit key */
  const KEY inf2 = AS_KEY((T)INFINITY) << 1; /* NaNs' bits above it, shifted */
#define HIST_KEY(b) (((hist_float_key((b), inf2, &special) ^ flip) >> first_shift) & range)
#else
#define HIST_KEY(b) (((key_of(CLPRIM_CAT(as_, T)(b)) ^ flip) >> first_shift) & range)
#endif
  /* Tiles of WG * SORT_HIST_ITEMS keys, every get_num_groups-th to this
   * work-group; a work-item loads its keys of a tile before it counts them
   * (the loads overlap), then adds one per key and pass to the digit's
   * counter in local memory. Keys past n (the last tile) count as 0 and
   * are taken off digit 0 at the end. (H100, 2^28 uint32 keys: 0.57 ms
   * counting key by key over the passes, the same when all keys are equal:
   * a warp's atomics on one address do not serialise there. Adding each
   * work-item's runs of equal digits at once took 0.98 ms; a ballot per
   * digit bit to aggregate a warp's equal digits 4.3 ms.) */
  const ulong tile = (ulong)WG * SORT_HIST_ITEMS;
  uint pad = 0;
  for (ulong first = (ulong)get_group_id(0) * tile; first < n; first += get_num_groups(0) * tile) {
    __global const KEY *at = keys + base + first + lid;
    KEY k[SORT_HIST_ITEMS];
    if (n - first >= tile) {
UNROLL
      for (uint j = 0; j < SORT_HIST_ITEMS; ++j) k[j] = at[j * WG];
UNROLL
      for (uint j = 0; j < SORT_HIST_ITEMS; ++j) k[j] = HIST_KEY(k[j]);
    } else {
      pad = (uint)(tile - (n - first));
UNROLL
      for (uint j = 0; j < SORT_HIST_ITEMS; ++j)
        k[j] = first + lid + j * WG < n ? at[j * WG] : (KEY)0;
UNROLL
      for (uint j = 0; j < SORT_HIST_ITEMS; ++j)
        k[j] = first + lid + j * WG < n ? HIST_KEY(k[j]) : (KEY)0;
    }
UNROLL
    for (uint p = 0; p < HIST_PASSES; ++p) {
      if (p >= passes) break;
UNROLL
      for (uint j = 0; j < SORT_HIST_ITEMS; ++j)
        atomic_inc(&counts[p * RADIX + ((uint)(k[j] >> (p * SORT_DIGIT_BITS)) & (RADIX - 1u))]);
    }
  }
#if T_FLOAT
  if (special) atomic_or(&hist[2 * passes * RADIX + 1], 1u);
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < passes) counts[lid * RADIX] -= pad; /* pad is the same in every work-item */
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint j = lid; j < passes * RADIX; j += WG) {
    const uint c = counts[j];
    if (c && atomic_add(&hist[2 * j], c) > UINT_MAX - c) atomic_inc(&hist[2 * j + 1]);
  }
#ifdef SORT_ONESWEEP
  /* The last work-group to finish (a ticket after the counts) turns the
   * counts into where each digit's keys start, per pass, for sort_pass. */
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (lid == 0) last = atomic_inc(&hist[2 * passes * RADIX]) == get_num_groups(0) - 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!last) return;
  const uint first = lid * DIGITS_PER_ITEM;
  for (uint p = 0; p < passes; ++p) {
    ulong c[DIGITS_PER_ITEM], own = 0, total;
    for (uint j = 0; j < DIGITS_PER_ITEM; ++j) {
      const uint at = 2 * (p * RADIX + first + j);
      c[j] = first + j < RADIX
                 ? (ulong)atomic_add(&hist[at], 0u) | (ulong)atomic_add(&hist[at + 1], 0u) << 32
                 : 0;
      own += c[j];
    }
    ulong before = clprim_wg_scan_excl_add_ulong(own, scan, &total);
    for (uint j = 0; j < DIGITS_PER_ITEM; ++j) {
      if (first + j < RADIX) starts[p * RADIX + first + j] = before;
      before += c[j];
    }
  }
#else
  (void)starts;
#endif
}
#endif /* CLPRIM_CPU */
#endif

/* ------------------------------------------- count (no look-back): tiles */
/* counts[d * tiles + t] = the keys of tile t with digit d; counts[RADIX *
 * tiles] = 0 (the scan leaves the total there). */
#ifdef KERNEL_sort_count
#ifdef CLPRIM_CPU
/* The cpu path: a "tile" is work-item g's share (cpu_share). */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
sort_count(__global const KEY *keys, ulong base, ulong n, KEY flip, uint shift, uint mask,
           __global OFS_T *counts) {
  uint c[RADIX];
  for (uint d = 0; d < RADIX; ++d) c[d] = 0;
  ulong first, end;
  cpu_share(n, 1, &first, &end);
  for (ulong i = first; i < end; ++i) ++c[key_digit(keys[base + i], flip, shift, mask)];
  const ulong g = get_global_id(0), tiles = get_global_size(0);
  for (uint d = 0; d < RADIX; ++d) counts[d * tiles + g] = c[d];
  if (g == tiles - 1) counts[RADIX * tiles] = 0;
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
sort_count(__global const KEY *keys, ulong base, ulong n, KEY flip, uint shift, uint mask,
           __global OFS_T *counts) {
  __local uint tile_counts[RADIX];
  const uint lid = (uint)get_local_id(0), tile = (uint)get_group_id(0);
  const uint tiles = (uint)get_num_groups(0);
  for (uint j = lid; j < RADIX; j += WG) tile_counts[j] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong first = (ulong)tile * TILE;
  for (uint j = 0; j < ITEMS; ++j) {
    const ulong i = first + j * WG + lid;
    if (i < n) atomic_inc(&tile_counts[key_digit(keys[base + i], flip, shift, mask)]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint j = lid; j < RADIX; j += WG) counts[(ulong)j * tiles + tile] = tile_counts[j];
  if (tile == tiles - 1 && lid == 0) counts[(ulong)RADIX * tiles] = 0;
}
#endif /* CLPRIM_CPU */
#endif

/* ------------------------------------------------------------ one pass */
/* One digit pass from keys_in[in_base ..] to keys_out[out_base ..] (n
 * keys), values alike (gen_index: the values are the keys' positions, for
 * argsort's first pass). SORT_ONESWEEP: starts[pass * RADIX + d] is where
 * digit d's keys begin in the output (from sort_histogram's counts), state
 * (LB_DIGIT_BYTES, zeroed) holds the look-back; else offsets holds the
 * scanned tile counts. hist[special_at]: sort_histogram's flag (float keys
 * only). */
#ifdef KERNEL_sort_pass
/* The key sort_pass ranks and moves, from an element's bits, and back;
 * the digit of such a key. Float keys: the plain bit key (keys.h
 * key_of_bits, then the flip), so that the ranking and the scatter work on
 * unsigned keys as for integers, and the elements' bits come back intact.
 * Where a key is a NaN or -0.0 (special, the same for the whole launch),
 * the digit is key_of's: plain_key_of maps the plain keys of -0.0 and of
 * the NaNs to key_of's. (Moving the elements' bits and taking key_of on
 * every digit instead cost about 0.7 ms of a 2^28-key pass on the H100;
 * having both ways in one kernel, 2% on the H200 and twice the build
 * time.) */
#if T_FLOAT
CLPRIM_INLINE KEY plain_key_of(KEY u) {
  const KEY ninf = key_of_bits(AS_KEY((T)-INFINITY)), pinf = key_of_bits(AS_KEY((T)INFINITY));
  return u > pinf || u < ninf ? KEY_MAX : u == key_of_bits(KEY_SIGN) ? key_of_bits((KEY)0) : u;
}
#endif
CLPRIM_INLINE KEY pass_key(KEY bits, KEY flip) {
#if T_FLOAT
  return key_of_bits(bits) ^ flip;
#else
  (void)flip;
  return bits;
#endif
}
CLPRIM_INLINE KEY pass_bits(KEY key, KEY flip) {
#if T_FLOAT
  return CLPRIM_FLOAT_BITS_OF_KEY(key ^ flip, KEY_SIGN);
#else
  (void)flip;
  return key;
#endif
}
/* Whether sort_histogram found a NaN or -0.0 among float keys (its flag
 * word, hist[special_at]); never for other keys. */
CLPRIM_INLINE uint pass_special(__global const uint *hist, uint special_at) {
#if T_FLOAT
  return hist[special_at] != 0u;
#else
  (void)hist, (void)special_at;
  return 0;
#endif
}
CLPRIM_INLINE uint pass_digit(KEY key, KEY flip, uint shift, uint mask, uint special) {
#if T_FLOAT
  return (uint)((special ? plain_key_of(key ^ flip) ^ flip : key) >> shift) & mask;
#else
  (void)special;
  return key_digit(key, flip, shift, mask);
#endif
}

#ifdef CLPRIM_CPU
/* The cpu path: work-item g moves its share (cpu_share) in order, each key
 * to the next place of its digit (from the scanned counts): stable. */
__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void
sort_pass(__global const KEY *keys_in, ulong in_base, __global KEY *keys_out, ulong out_base,
          __global const V *values_in, __global V *values_out, ulong n, KEY flip, uint shift,
          uint mask, uint gen_index, __global const OFS_T *offsets, __global const ulong *starts,
          uint pass, __global uchar *state, __global const uint *hist, uint special_at) {
  (void)starts, (void)pass, (void)state;
  const uint special = pass_special(hist, special_at);
  const ulong g = get_global_id(0), tiles = get_global_size(0);
  OFS_T place[RADIX];
  for (uint d = 0; d < RADIX; ++d) place[d] = offsets[d * tiles + g];
  ulong first, end;
  cpu_share(n, 1, &first, &end);
  __global const KEY *in = keys_in + in_base;
  __global KEY *out = keys_out + out_base;
  for (ulong i = first; i < end; ++i) {
    const KEY bits = in[i];
    const uint d = pass_digit(pass_key(bits, flip), flip, shift, mask, special);
    const OFS_T at = place[d]++;
    out[at] = bits;
#if V_BYTES
    values_out[out_base + at] = gen_index ? (V)i : values_in[in_base + i];
#endif
  }
#if !V_BYTES
  (void)values_in, (void)values_out, (void)gen_index;
#endif
}
#else /* the other paths */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
sort_pass(__global const KEY *keys_in, ulong in_base, __global KEY *keys_out, ulong out_base,
          __global const V *values_in, __global V *values_out, ulong n, KEY flip, uint shift,
          uint mask, uint gen_index, __global const OFS_T *offsets, __global const ulong *starts,
          uint pass, __global uchar *state, __global const uint *hist, uint special_at) {
  /* The ranking's counts and peer words share the exchange buffer (as in
   * CUB's Onesweep), which leaves room for larger tiles. */
#define RANK_WORDS (GROUPS * RADIX + PEER_WORDS(PASS_PEERS))
#define PASS_XCHG (TILE * XCHG_WORDS > RANK_WORDS ? TILE : (RANK_WORDS + 1) / XCHG_WORDS)
  __local XCHG xchg[PASS_XCHG];
  __local uint *counts = (__local uint *)xchg, *digits = counts + GROUPS * RADIX;
  __local uint start[RADIX];
  __local uint scan[CLPRIM_WG_SCRATCH(WG)];
  __local OFS_T place[RADIX]; /* where the tile's digit-d keys go, less start[d] */
  const uint lid = (uint)get_local_id(0);
  const uint special = pass_special(hist, special_at);
#ifdef SORT_ONESWEEP
  __local uint tile_id;
  if (lid == 0) tile_id = lb_next_tile(state);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint tile = tile_id;
  (void)offsets;
#else
  const uint tile = (uint)get_group_id(0);
  (void)starts, (void)pass, (void)state;
#endif
  const ulong first = (ulong)tile * TILE;
  const uint here = (uint)min((ulong)TILE, n - first); /* keys in this tile */

  /* A full tile loads without bounds checks; the last one's missing keys
   * take PAD_DIGIT. */
  KEY k[ITEMS];
  uint d[ITEMS], rank[ITEMS];
  __global const KEY *in = keys_in + in_base + first;
  if (here == TILE) {
UNROLL
    for (uint r = 0; r < ITEMS; ++r) k[r] = pass_key(in[tile_pos(lid, r)], flip);
  } else {
UNROLL
    for (uint r = 0; r < ITEMS; ++r) {
      const uint p = tile_pos(lid, r);
      k[r] = p < here ? pass_key(in[p], flip) : (KEY)0;
    }
  }
  /* (Selected after the loads, on every tile: when a full tile's digits
   * came straight from the keys, ptxas folded the mask into each ballot's
   * bit test, 8 instructions a key where one R2P sets 7 predicates.) */
UNROLL
  for (uint r = 0; r < ITEMS; ++r)
    d[r] = tile_pos(lid, r) < here ? pass_digit(k[r], flip, shift, mask, special) : PAD_DIGIT;
  uint tot[DIGITS_PER_ITEM];
  rank_count(d, tot, counts);
#ifdef SORT_ONESWEEP
  /* Early counts: the tile's digit counts are published before the
   * ranking, so that later tiles' look-backs find them without waiting
   * for it. (Only the last tile has missing keys, counted at PAD_DIGIT; no
   * tile looks back at it.) */
  for (uint j = 0; j < DIGITS_PER_ITEM; ++j) {
    const uint dd = lid * DIGITS_PER_ITEM + j;
    if (dd < RADIX) lb_digit_publish(state, tile, dd, tile == 0 ? LB_PREFIX : LB_AGGREGATE, tot[j]);
  }
#endif
  rank_keys(d, tot, rank, PASS_PEERS, counts, start, digits, scan);

  /* place[d] + i: where tile position i of digit d goes from out_base, in
   * OFS_T arithmetic (it wraps; n fits it): where the digit's keys start
   * (Onesweep: from the upfront histogram, plus the earlier tiles' counts),
   * less the digit's first tile position. */
  for (uint j = 0; j < DIGITS_PER_ITEM; ++j) {
    const uint dd = lid * DIGITS_PER_ITEM + j;
    if (dd >= RADIX) break;
#ifdef SORT_ONESWEEP
    const uint prefix = tile == 0 ? 0u : lb_digit_look_back(state, tile, dd, tot[j]);
    place[dd] = (OFS_T)starts[pass * RADIX + dd] + prefix - start[dd];
#else
    place[dd] = offsets[(ulong)dd * get_num_groups(0) + tile] - start[dd];
#endif
  }

  /* Keys into local memory in digit order (once the ranking is done with
   * counts; the missing keys after the others), then out, each digit's run
   * from its place (consecutive work-items, consecutive addresses; a full
   * tile without bounds checks). */
  barrier(CLK_LOCAL_MEM_FENCE);
  __local KEY *xk = (__local KEY *)xchg;
UNROLL
  for (uint r = 0; r < ITEMS; ++r) xk[rank[r]] = k[r];
  barrier(CLK_LOCAL_MEM_FENCE);
  __global KEY *out = keys_out + out_base;
  /* With values, the digit of the key at tile position j * WG + lid, kept
   * for its value's scatter in the high half of rank[j]: ranks are below
   * TILE, at most 2^16 with src/sort.c's shapes and knobs (H100, uint32 /
   * uint32 pairs, 2^28: 9.34 ms a sort at 384 x 20, against 9.45 with a
   * register per digit at 512 x 15). */
#if !V_BYTES
#define KEEP_DIGIT(j, dd) ((void)0)
#else
#if TILE > 0x10000
#error "sort_pass: ranks with values must fit in 16 bits (TILE <= 65536)"
#endif
#define KEEP_DIGIT(j, dd) (rank[j] |= (dd) << 16)
#define KEPT_DIGIT(j) (rank[j] >> 16)
#define RANK(r) (rank[r] & 0xFFFFu)
#endif
  if (here == TILE) {
UNROLL
    for (uint j = 0; j < ITEMS; ++j) {
      const KEY key = xk[j * WG + lid];
      const uint dd = pass_digit(key, flip, shift, mask, special);
      KEEP_DIGIT(j, dd);
      out[place[dd] + (j * WG + lid)] = pass_bits(key, flip);
    }
  } else {
UNROLL
    for (uint j = 0; j < ITEMS; ++j) {
      const uint i = j * WG + lid;
      const KEY key = xk[i];
      const uint dd = pass_digit(key, flip, shift, mask, special);
      KEEP_DIGIT(j, dd);
      if (i < here) out[place[dd] + i] = pass_bits(key, flip);
    }
  }
#if V_BYTES
  V v[ITEMS];
  __global const V *vin = values_in + in_base + first;
  if (gen_index) {
UNROLL
    for (uint r = 0; r < ITEMS; ++r) v[r] = (V)(first + tile_pos(lid, r));
  } else if (here == TILE) {
UNROLL
    for (uint r = 0; r < ITEMS; ++r) v[r] = vin[tile_pos(lid, r)];
  } else {
UNROLL
    for (uint r = 0; r < ITEMS; ++r) {
      const uint p = tile_pos(lid, r);
      v[r] = p < here ? vin[p] : (V)0;
    }
  }
  __local V *xv = (__local V *)xchg;
  barrier(CLK_LOCAL_MEM_FENCE);
UNROLL
  for (uint r = 0; r < ITEMS; ++r) xv[RANK(r)] = v[r];
  barrier(CLK_LOCAL_MEM_FENCE);
  __global V *vout = values_out + out_base;
  if (here == TILE) {
UNROLL
    for (uint j = 0; j < ITEMS; ++j)
      vout[place[KEPT_DIGIT(j)] + (j * WG + lid)] = xv[j * WG + lid];
  } else {
UNROLL
    for (uint j = 0; j < ITEMS; ++j) {
      const uint i = j * WG + lid;
      if (i < here) vout[place[KEPT_DIGIT(j)] + i] = xv[i];
    }
  }
#else
  (void)values_in, (void)values_out, (void)gen_index;
#endif
}
#endif /* CLPRIM_CPU */
#endif

/* ------------------------------------------------- sort in local memory */
/* Sorts keys[base .. base + len) (and values) within one work-group, every
 * pass, to out. Segmented (segmented != 0): work-group s sorts segment s,
 * [begins[s], ends[s]), if it holds 1 to TILE keys (longer ones are sorted
 * by the passes). Else the one work-group sorts [0, n). gen_index: values
 * are the positions. */
#include "internal/segments.h" /* the offsets' type and load; segments_check */
#ifdef KERNEL_sort_tile
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
sort_tile(__global const KEY *keys_in, __global KEY *keys_out, __global const V *values_in,
          __global V *values_out, ulong n, uint segmented,
          __global const CLPRIM_OFFSET *begins, __global const CLPRIM_OFFSET *ends, KEY flip, uint first_shift, uint passes, uint last_mask,
          uint gen_index) {
  __local XCHG xchg[TILE];
  __local uint counts[GROUPS * RADIX];
  __local uint start[RADIX];
  __local uint digits[PEER_WORDS(TILE_PEERS)];
  __local uint scan[CLPRIM_WG_SCRATCH(WG)];
  const uint lid = (uint)get_local_id(0);
  ulong base = 0, len = n;
  if (segmented) {
    base = clprim_offset_at(begins, get_group_id(0));
    len = clprim_offset_at(ends, get_group_id(0)) - base;
    if (len == 0 || len > TILE) return; /* the same for the whole work-group */
  }
  const uint here = (uint)len;
  KEY k[ITEMS];
  uint d[ITEMS], rank[ITEMS];
#if V_BYTES
  V v[ITEMS];
#endif
UNROLL
  for (uint r = 0; r < ITEMS; ++r) {
    const uint p = tile_pos(lid, r);
    k[r] = p < here ? keys_in[base + p] : (KEY)0;
#if V_BYTES
    v[r] = gen_index ? (V)p : p < here ? values_in[base + p] : (V)0;
#endif
  }
  __local KEY *xk = (__local KEY *)xchg;
#if V_BYTES
  __local V *xv = (__local V *)xchg;
#endif
  for (uint pass = 0; pass < passes; ++pass) {
    const uint shift = first_shift + pass * SORT_DIGIT_BITS;
    const uint mask = pass + 1 == passes ? last_mask : RADIX - 1u;
    /* The missing keys take the largest digit: they rank after the
     * others, back to the positions from here on. */
UNROLL
    for (uint r = 0; r < ITEMS; ++r)
      d[r] = tile_pos(lid, r) < here ? key_digit(k[r], flip, shift, mask) : PAD_DIGIT;
    uint tot[DIGITS_PER_ITEM];
    rank_count(d, tot, counts);
    rank_keys(d, tot, rank, TILE_PEERS, counts, start, digits, scan);
UNROLL
    for (uint r = 0; r < ITEMS; ++r) xk[rank[r]] = k[r];
    barrier(CLK_LOCAL_MEM_FENCE);
UNROLL
    for (uint r = 0; r < ITEMS; ++r) k[r] = xk[tile_pos(lid, r)];
#if V_BYTES
    barrier(CLK_LOCAL_MEM_FENCE);
UNROLL
    for (uint r = 0; r < ITEMS; ++r) xv[rank[r]] = v[r];
    barrier(CLK_LOCAL_MEM_FENCE);
UNROLL
    for (uint r = 0; r < ITEMS; ++r) v[r] = xv[tile_pos(lid, r)];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
  }
UNROLL
  for (uint r = 0; r < ITEMS; ++r) {
    const uint p = tile_pos(lid, r);
    if (p < here) {
      keys_out[base + p] = k[r];
#if V_BYTES
      values_out[base + p] = v[r];
#endif
    }
  }
#if !V_BYTES
  (void)values_in, (void)values_out, (void)gen_index;
#endif
}
#endif

/* ------------------------------------------------- segmented: the check */
/* internal/segments.h's segments_check (included above sort_tile);
 * segments longer than one tile are listed, with their bounds (the host
 * reads them in one go). */
