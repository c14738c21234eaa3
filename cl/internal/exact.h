/* exact.h: the exact accumulator (the engine of src/engine/exact.c): float
 * and double sums kept exactly and rounded once, to nearest with ties to
 * even, so that a sum has the same bits on every device, path, shape and
 * run. After Collange, Defour, Graillat & Iakymchuk, "Full-speed
 * deterministic bit-accurate parallel floating-point summation on multi-
 * and many-core architectures" (ExBLAS, 2015), in three levels:
 *
 * 1. Each work-item adds its elements into an expansion of EXACT_TERMS
 *    numbers of type EXACT_E (double where the device has it, so that a
 *    float sum rarely needs more than the first term) by error-free
 *    additions (Knuth's TwoSum). What the expansion cannot hold (an error
 *    left after its last term, or an addition that would overflow) goes to
 *    the work-group's accumulator at once; the terms go there at the end.
 * 2. The work-group's accumulator: EXACT_WORDS(T) words of 64 bits, word w
 *    weighing 2^(32 w + EXACT_BASE(T)). A number enters as three 32-bit
 *    digits added to three consecutive words (carry-save: each word's upper
 *    half takes the carries, so 2^31 digits fit in a word before one could
 *    overflow). Work-items add with 64-bit local atomics where the device
 *    has them (EXACT_ATOM64), else with a pair of 32-bit words and a carry
 *    (exact_add), and plainly on the cpu path (one work-item a
 *    work-group). The words are then normalised (digits in [0, 2^32), the
 *    top word signed) and written out, with the flags, as one record of
 *    EXACT_RECORD(T) words.
 * 3. exact_round: the records' digits are added word by word (below 2^63
 *    for 2^31 records), normalised, and rounded once.
 *
 * Non-finite inputs are not added: the flags record +inf, -inf and NaN,
 * and the result is what IEEE addition in any order gives (NaN for any
 * NaN or for +inf with -inf). An exact sum beyond the largest finite
 * number rounds to an infinity. A zero sum is -0 only when every element
 * added was -0, and there was one (the expansion's first term starts at -0
 * and leaves it for good on any other element; a flag says that an element
 * was added).
 *
 * Needs T, T_BITS (the element type: float or double) and WG. */
#ifndef CLPRIM_EXACT_H
#define CLPRIM_EXACT_H

#include "internal/layout.h"

#ifdef CLPRIM_HAS_FP64
#define EXACT_E double
#else
#define EXACT_E float
#endif
#define EXACT_TERMS 4
#if T_BITS == 64
#define EXACT_W EXACT_WORDS_DOUBLE
#define EXACT_B EXACT_BASE_DOUBLE
#define EXACT_P 53 /* bits of the result's significand */
#define EXACT_RESULT_BITS ulong
#else
#define EXACT_W EXACT_WORDS_FLOAT
#define EXACT_B EXACT_BASE_FLOAT
#define EXACT_P 24
#define EXACT_RESULT_BITS uint
#endif
/* Whether an expansion term can overflow: only when it has the element's
 * own type (a float's sums are far inside double's range). */
#if T_BITS == 64 || !defined(CLPRIM_HAS_FP64)
#define EXACT_CAN_OVERFLOW 1
#else
#define EXACT_CAN_OVERFLOW 0
#endif

#if WG == 1
#define EXACT_MODE 0 /* plain adds: one work-item owns the words */
#elif defined(EXACT_ATOM64) && EXACT_ATOM64 && defined(cl_khr_int64_base_atomics)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define EXACT_MODE 1 /* 64-bit local atomics */
#else
#define EXACT_MODE 2 /* a low and a high 32-bit word, 32-bit atomics */
#endif

/* The work-group's words: EXACT_W longs, or (EXACT_MODE 2) EXACT_W low
 * halves then EXACT_W high halves. Declare them with EXACT_LOCAL(name). */
#if EXACT_MODE == 2
#define EXACT_LOCAL(name) __local uint name[2 * EXACT_W]
#define EXACT_ACC volatile __local uint
#else
#define EXACT_LOCAL(name) __local long name[EXACT_W]
#define EXACT_ACC volatile __local long
#endif

CLPRIM_INLINE void exact_add(EXACT_ACC *acc, int w, long d) {
#if EXACT_MODE == 0
  acc[w] += d;
#elif EXACT_MODE == 1
  atom_add(&acc[w], d);
#else
  /* 64-bit two's complement addition from two 32-bit ones: the low word's
   * carry goes into the high word with the high half of d. */
  const ulong u = (ulong)d;
  const uint lo = (uint)u, old = atomic_add(&acc[w], lo);
  atomic_add(&acc[EXACT_W + w], (uint)(u >> 32) + (uint)(old + lo < old));
#endif
}

/* Local words for `teams` accumulators (team t's: name + t *
 * EXACT_ACC_WORDS). */
#if EXACT_MODE == 2
#define EXACT_ACC_WORDS (2 * EXACT_W)
#define EXACT_LOCAL_TEAMS(name, teams) __local uint name[(teams)*EXACT_ACC_WORDS]
#else
#define EXACT_ACC_WORDS EXACT_W
#define EXACT_LOCAL_TEAMS(name, teams) __local long name[(teams)*EXACT_ACC_WORDS]
#endif

/* Word w's value once every work-item's adds are done (after a barrier). */
CLPRIM_INLINE long exact_word(EXACT_ACC *acc, int w) {
#if EXACT_MODE == 2
  return (long)(((ulong)acc[EXACT_W + w] << 32) | acc[w]);
#else
  return acc[w];
#endif
}

/* Sets the words to zero, by `count` work-items (`me` one of them); the
 * caller's barrier follows. */
CLPRIM_INLINE void exact_clear_by(EXACT_ACC *acc, uint me, uint count) {
  for (uint w = me; w < EXACT_ACC_WORDS; w += count) acc[w] = 0;
}
CLPRIM_INLINE void exact_clear(EXACT_ACC *acc) { exact_clear_by(acc, get_local_id(0), WG); }

/* EXACT_OUTLINE=1 (the host sets it on CPU devices): exact_flush and
 * exact_item_add are external functions that are not inlined. Inlined (or
 * static and not inlined), PoCL 3.1's optimiser lost every add of a
 * work-group (all words 0) where exact_flush was called both in the element
 * loop (a rare, conditional call) and after it, and miscounted the cpu
 * path's blocks redone by exact_item_add; built with -cl-opt-disable, or
 * run in Oclgrind, the same source was right. */
#if EXACT_OUTLINE
#define EXACT_CALL __attribute__((noinline))
#else
#define EXACT_CALL CLPRIM_INLINE
#endif

/* Adds x (finite, a multiple of 2^EXACT_B) to the words: its significand m
 * weighs 2^(pos + EXACT_B), so it lands at bit pos % 32 of word pos / 32
 * and spans at most three words. */
EXACT_CALL void exact_flush(EXACT_ACC *acc, EXACT_E x) {
#ifdef CLPRIM_HAS_FP64
  const ulong bits = as_ulong(x);
  const int neg = (int)(bits >> 63), e = (int)(bits >> 52) & 0x7ff;
  ulong m = bits & 0xFFFFFFFFFFFFFul;
  if (e != 0) m |= 1ul << 52;
  int pos = (e != 0 ? e : 1) - 1075 - EXACT_B; /* the weight of m's bit 0 */
#else
  const uint bits = as_uint(x);
  const int neg = (int)(bits >> 31), e = (int)(bits >> 23) & 0xff;
  ulong m = bits & 0x7FFFFFu;
  if (e != 0) m |= 1u << 23;
  int pos = (e != 0 ? e : 1) - 150 - EXACT_B;
#endif
  if (m == 0) return;
  if (pos < 0) { /* below 2^EXACT_B: those bits are zero */
    m = pos > -64 ? m >> -pos : 0;
    pos = 0;
  }
  const int w = pos >> 5, r = pos & 31;
  const ulong lo = m << r, hi = r != 0 ? m >> (64 - r) : 0;
  const long d0 = (long)(lo & 0xFFFFFFFFu), d1 = (long)(lo >> 32), d2 = (long)hi;
  if (d0 != 0) exact_add(acc, w, neg ? -d0 : d0);
  if (d1 != 0) exact_add(acc, w + 1, neg ? -d1 : d1);
  if (d2 != 0) exact_add(acc, w + 2, neg ? -d2 : d2);
}

/* Whether sum s is not finite or error r is not 0, by the bits (PoCL 3.1
 * vectorised isfinite() and r != 0 in the cpu path's lanes wrongly: an
 * overflow went unseen). */
#ifdef CLPRIM_HAS_FP64
CLPRIM_INLINE int exact_odd(double s, double r) {
  return ((as_ulong(s) >> 52 & 0x7FF) == 0x7FF) | ((as_ulong(r) << 1) != 0);
}
#else
CLPRIM_INLINE int exact_odd(float s, float r) {
  return ((as_uint(s) >> 23 & 0xFF) == 0xFF) | ((as_uint(r) << 1) != 0);
}
#endif

/* A work-item's expansion and flags. */
struct exact_item {
  EXACT_E term[EXACT_TERMS];
  uint flags;
};

CLPRIM_INLINE void exact_item_init(struct exact_item *it) {
  it->term[0] = (EXACT_E)-0.0f;
  for (int t = 1; t < EXACT_TERMS; ++t) it->term[t] = (EXACT_E)0;
  it->flags = 0;
}

/* Adds element v to the work-item's expansion (TwoSum down the terms; the
 * error left over, if any, to the words). */
EXACT_CALL void exact_item_add(struct exact_item *it, EXACT_ACC *acc, T v) {
  it->flags |= EXACT_FLAG_ADDED;
  if (!isfinite(v)) {
    it->flags |= isnan(v) ? EXACT_FLAG_NAN : v > 0 ? EXACT_FLAG_POS_INF : EXACT_FLAG_NEG_INF;
    return;
  }
  EXACT_E x = (EXACT_E)v;
#pragma unroll
  for (int t = 0; t < EXACT_TERMS; ++t) { /* unrolled: the terms stay in registers */
    const EXACT_E a = it->term[t], s = a + x;
#if EXACT_CAN_OVERFLOW
    if (isinf(s)) break; /* x goes to the words as it is */
#endif
    const EXACT_E bb = s - a;
    x = (a - (s - bb)) + (x - bb);
    it->term[t] = s;
    if (x == (EXACT_E)0) return;
  }
  it->flags |= EXACT_FLAG_WORDS;
  exact_flush(acc, x);
}

/* The work-item's flags, with EXACT_FLAG_NOT_NEG_ZERO where its first
 * term left -0. */
CLPRIM_INLINE uint exact_item_flags(const struct exact_item *it) {
  const int neg_zero = it->term[0] == (EXACT_E)0 && signbit(it->term[0]);
  return it->flags | (neg_zero ? 0u : EXACT_FLAG_NOT_NEG_ZERO);
}

/* The work-item's terms to the words. */
CLPRIM_INLINE void exact_item_flush_terms(const struct exact_item *it, EXACT_ACC *acc) {
#pragma unroll
  for (int t = 0; t < EXACT_TERMS; ++t)
    if (it->term[t] != (EXACT_E)0) exact_flush(acc, it->term[t]);
}

/* The work-item's terms to the words, its flags to *flags (a local word
 * the work-group shares). */
CLPRIM_INLINE void exact_item_end(const struct exact_item *it, EXACT_ACC *acc,
                                  volatile __local uint *flags) {
  exact_item_flush_terms(it, acc);
  const uint f = exact_item_flags(it);
#if WG == 1
  *flags |= f;
#else
  if (f != 0) atomic_or(flags, f);
#endif
}

/* Carries normalised: words 0 .. EXACT_W - 2 in [0, 2^32), the rest in the
 * top word (signed). Sequential, on one work-item. */
CLPRIM_INLINE void exact_normalise(long *word) {
  long carry = 0;
  for (int w = 0; w < EXACT_W - 1; ++w) {
    const long v = word[w] + carry;
    word[w] = v & 0xFFFFFFFFl;
    carry = v >> 32; /* arithmetic: the floor */
  }
  word[EXACT_W - 1] += carry;
}

/* The bits of the exact sum word[] (as the records' digits added, any
 * carries) with flags, rounded once to T's nearest, ties to even. word[] is
 * the caller's scratch (changed). */
CLPRIM_INLINE EXACT_RESULT_BITS exact_round(long *word, uint flags) {
  const EXACT_RESULT_BITS sign = (EXACT_RESULT_BITS)1 << (T_BITS - 1);
  const EXACT_RESULT_BITS inf = (((EXACT_RESULT_BITS)1 << (T_BITS - EXACT_P)) - 1) << (EXACT_P - 1);
  if ((flags & EXACT_FLAG_NAN) ||
      ((flags & EXACT_FLAG_POS_INF) && (flags & EXACT_FLAG_NEG_INF)))
    return inf | ((EXACT_RESULT_BITS)1 << (EXACT_P - 2)); /* a quiet NaN */
  if (flags & EXACT_FLAG_POS_INF) return inf;
  if (flags & EXACT_FLAG_NEG_INF) return inf | sign;
  exact_normalise(word);
  const int neg = word[EXACT_W - 1] < 0;
  if (neg) {
    for (int w = 0; w < EXACT_W; ++w) word[w] = -word[w];
    exact_normalise(word);
  }
  int h = EXACT_W - 1;
  while (h >= 0 && word[h] == 0) --h;
  if (h < 0) /* an exact zero: -0 only for elements that were all -0 */
    return (flags & EXACT_FLAG_ADDED) && !(flags & EXACT_FLAG_NOT_NEG_ZERO) ? sign : 0;
  const int top = 32 * h + 63 - (int)clz((ulong)word[h]); /* the highest bit set */
#define EXACT_BIT(k) ((ulong)(word[(k) >> 5] >> ((k) & 31)) & 1)
  EXACT_RESULT_BITS bits;
  if (top < EXACT_P) {
    /* At most P bits at weight 2^EXACT_B, the smallest subnormal's: exact
     * (a subnormal, or the first binade, whose exponent field is 1). */
    bits = (EXACT_RESULT_BITS)word[0] | (EXACT_P > 32 ? (EXACT_RESULT_BITS)word[1] << 16 << 16 : 0);
  } else {
    int shift = top - (EXACT_P - 1);
    ulong m = 0;
    for (int k = top; k >= shift; --k) m = m << 1 | EXACT_BIT(k);
    const int round_bit = (int)EXACT_BIT(shift - 1);
    int sticky = 0;
    const int s = shift - 1; /* the bits below the round bit */
    for (int w = 0; w < (s >> 5); ++w) sticky |= word[w] != 0;
    if ((s & 31) != 0) sticky |= ((ulong)word[s >> 5] & ((1ul << (s & 31)) - 1)) != 0;
    if (round_bit && (sticky || (m & 1))) ++m;
    if (m >> EXACT_P) {
      m >>= 1;
      ++shift;
    }
    /* m * 2^(EXACT_B + shift): the leading bit's biased exponent is
     * shift + 1, since EXACT_B is 1 - bias - (P - 1). */
    const ulong biased = (ulong)shift + 1;
    if (biased >= ((1ul << (T_BITS - EXACT_P)) - 1)) return neg ? inf | sign : inf;
    bits = (EXACT_RESULT_BITS)((biased << (EXACT_P - 1)) | (m & ((1ul << (EXACT_P - 1)) - 1)));
  }
#undef EXACT_BIT
  return neg ? bits | sign : bits;
}

/* ---- The fast path: a work-group's sum without the words. Most sums
 * need none of them: where every work-item's expansion holds at most two
 * terms, nothing went to the words and no element was an infinity or NaN,
 * a tree of error-free pair additions gives the exact sum as a pair (hi,
 * lo), and hi + lo rounds to T without the words. It fails (and the
 * caller takes the words' path, exact_item_end then exact_round, with the
 * terms still in its registers) when an addition of the tree leaves an
 * error the pair cannot hold, or when the result is not finite or below
 * T's smallest normal number (conversions there may flush subnormals). */

/* a + b = *s + *e exactly (Knuth's TwoSum), unless *s overflows. */
CLPRIM_INLINE void exact_two_sum(EXACT_E a, EXACT_E b, EXACT_E *s, EXACT_E *e) {
  *s = a + b;
  const EXACT_E bb = *s - a;
  *e = (a - (*s - bb)) + (b - bb);
}

/* (*hi, *lo) += (bh, bl) exactly; 0 where the sum does not fit a pair
 * (or is not finite). */
CLPRIM_INLINE int exact_pair_add(EXACT_E *hi, EXACT_E *lo, EXACT_E bh, EXACT_E bl) {
  EXACT_E s, e, t, f, u, g, h, v, w, k, l, m;
  exact_two_sum(*hi, bh, &s, &e);
  exact_two_sum(*lo, bl, &t, &f); /* the sum is s + e + t + f */
  exact_two_sum(e, t, &u, &g);    /* s + u + g + f */
  exact_two_sum(s, u, &h, &v);    /* h + v + g + f */
  exact_two_sum(v, g, &w, &k);    /* h + w + k + f */
  exact_two_sum(w, f, &l, &m);    /* h + l + k + m */
  exact_two_sum(h, l, hi, lo);
  return k == (EXACT_E)0 && m == (EXACT_E)0 && isfinite(*hi) && isfinite(*lo);
}

/* The bits of T nearest to the exact hi + lo (ties to even), or 0 with
 * *ok cleared where the fast path cannot round it. (hi, lo) is a pair as
 * exact_pair_add leaves it: hi = hi + lo rounded to EXACT_E. */
CLPRIM_INLINE EXACT_RESULT_BITS exact_pair_round(EXACT_E hi, EXACT_E lo, uint flags, int *ok) {
  *ok = 1;
  if (hi == (EXACT_E)0 && lo == (EXACT_E)0) { /* -0 only for elements that were all -0 */
    const int neg = (flags & EXACT_FLAG_ADDED) && !(flags & EXACT_FLAG_NOT_NEG_ZERO);
    return neg ? (EXACT_RESULT_BITS)1 << (T_BITS - 1) : 0;
  }
#if T_BITS == 32 && defined(CLPRIM_HAS_FP64)
  /* Round to odd, then to float: double's 53 bits are more than float's
   * 24 + 2, so the second rounding is the exact sum's. */
  if (lo != 0.0 && (as_ulong(hi) & 1) == 0)
    hi = as_double(as_ulong(hi) + ((hi > 0.0) == (lo > 0.0) ? 1 : -1));
  const float r = (float)hi;
  if (!(fabs(hi) >= 0x1p-126) || !isfinite(r)) *ok = 0;
  return as_uint(r);
#elif T_BITS == 64
  if (!(fabs(hi) >= 0x1p-1022)) *ok = 0;
  return as_ulong(hi);
#else
  if (!(fabs(hi) >= 0x1p-126f)) *ok = 0;
  return as_uint(hi);
#endif
}

/* A team's exact sum by the fast path: 1 and *bits (every member) where
 * it could, else 0 (every member; the caller then adds the terms to the
 * team's words by exact_item_flush_terms: the flags are in already).
 * Teams are `team` consecutive work-items (a power of two dividing WG, the
 * same for the whole work-group), each member `lane` in its team; every
 * work-item of the work-group calls it (it has barriers). *flags, the
 * team's word that the members' flags are ORed into, must be 0 before,
 * with a barrier after it was set; tree_hi / tree_lo are the team's
 * `team` local numbers of each. */
CLPRIM_INLINE int exact_team_try(const struct exact_item *it, uint lane, uint team,
                                 volatile __local uint *flags, __local EXACT_E *tree_hi,
                                 __local EXACT_E *tree_lo, EXACT_RESULT_BITS *bits) {
  const uint f = exact_item_flags(it);
  int simple = !(f & (EXACT_FLAG_NAN | EXACT_FLAG_POS_INF | EXACT_FLAG_NEG_INF | EXACT_FLAG_WORDS));
#pragma unroll
  for (int t = 2; t < EXACT_TERMS; ++t) simple &= it->term[t] == (EXACT_E)0;
  /* a sum the pair cannot hold is NaN, and stays NaN up the tree */
  EXACT_E hi = simple ? it->term[0] : (EXACT_E)NAN, lo = it->term[1];
#if WG == 1
  (void)lane, (void)team, (void)tree_hi, (void)tree_lo;
  *flags |= f;
#else
  if (f != 0) atomic_or(flags, f);
  tree_hi[lane] = hi;
  tree_lo[lane] = lo;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = team / 2; s > 0; s >>= 1) {
    if (lane < s) {
      hi = tree_hi[lane];
      lo = tree_lo[lane];
      if (!exact_pair_add(&hi, &lo, tree_hi[lane + s], tree_lo[lane + s])) hi = (EXACT_E)NAN;
      tree_hi[lane] = hi;
      tree_lo[lane] = lo;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  hi = tree_hi[0];
  lo = tree_lo[0];
#endif
  EXACT_E h, l; /* a pair no addition normalised yet (a team of one) */
  exact_two_sum(hi, lo, &h, &l);
  if (!isfinite(h) || !isfinite(l)) return 0;
  int ok;
  *bits = exact_pair_round(h, l, *flags, &ok);
  return ok;
}

/* ---- Ranges and records by teams: team t of `team` work-items (work-items
 * t team .. t team + team - 1, lane = the work-item's place in it) sums its
 * own range into its own words (acc, flags: the team's, one of
 * EXACT_LOCAL_TEAMS, and its flag word), as the exact segmented sum and
 * the exact reduce-by-key over runs use them. Every work-item of the
 * work-group calls these (they hold barriers), with its team's arguments,
 * and may call one again at once (the words are read before they
 * return). On the cpu path (WG = 1) a work-item's own sums. */

/* Always inlined: a helper that a kernel calls more than once with its
 * __local words (rbk_exact_pieces: exact_wg_range_record twice) was left
 * out of line by clang, which then dropped the words' and flags' pointer
 * parameters and used the kernel's __local arrays directly in the helper.
 * PoCL 3.1 moves a kernel's __local variables into per-work-group memory
 * only where the kernel itself uses them: the helper's uses stayed bound
 * to one static copy in the kernel's shared object, which every
 * work-group on every PoCL thread then shared (records with other
 * chunks' elements, nondeterministic; right on one thread and in
 * Oclgrind). Inlined, every use is the kernel's own. */
#define EXACT_WG_INLINE CLPRIM_INLINE __attribute__((always_inline))

/* The team's words and flags cleared, then in[b, e) into the members'
 * expansions (lane l adds b + l, b + l + team, ..., four loads in flight). */
EXACT_WG_INLINE void exact_team_items(EXACT_ACC *acc, volatile __local uint *flags,
                                      __global const T *in, ulong b, ulong e, uint lane, uint team,
                                      struct exact_item *it) {
  exact_clear_by(acc, lane, team);
  if (lane == 0) *flags = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  exact_item_init(it);
  ulong i = b + lane;
  for (; i + 3 * team < e; i += 4 * team) {
    T v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = in[i + k * team];
#pragma unroll
    for (int k = 0; k < 4; ++k) exact_item_add(it, acc, v[k]);
  }
  for (; i < e; i += team) exact_item_add(it, acc, in[i]);
}

/* The exact sum of in[b, e) rounded once: the bits in lane 0 (and in every
 * lane where the fast path took it). tree_hi / tree_lo: the team's slices
 * of the tree (exact_team_try). */
CLPRIM_INLINE EXACT_RESULT_BITS exact_team_range(EXACT_ACC *acc, volatile __local uint *flags,
                                                 __local EXACT_E *tree_hi,
                                                 __local EXACT_E *tree_lo,
                                                 __global const T *in, ulong b, ulong e,
                                                 uint lane, uint team) {
  struct exact_item it;
  exact_team_items(acc, flags, in, b, e, lane, team, &it);
  EXACT_RESULT_BITS bits = 0;
  const int fast = exact_team_try(&it, lane, team, flags, tree_hi, tree_lo, &bits);
  if (!fast) exact_item_flush_terms(&it, acc); /* the words' path */
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lane == 0 && !fast) {
    long word[EXACT_W];
    for (int w = 0; w < EXACT_W; ++w) word[w] = exact_word(acc, w);
    bits = exact_round(word, *flags);
  }
  barrier(CLK_LOCAL_MEM_FENCE); /* the words are read before the next range clears them */
  return bits;
}

/* The work-group's exact sum of in[b, e) as one record
 * (EXACT_RECORD(EXACT_W) words: the normalised words, then the flags),
 * written by work-item 0: a part of a sum that exact_wg_fold finishes. */
EXACT_WG_INLINE void exact_wg_range_record(EXACT_ACC *acc, volatile __local uint *flags,
                                           __global const T *in, ulong b, ulong e,
                                           __global long *record) {
  struct exact_item it;
  exact_team_items(acc, flags, in, b, e, get_local_id(0), WG, &it);
  exact_item_end(&it, acc, flags);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) {
    long word[EXACT_W];
    for (int w = 0; w < EXACT_W; ++w) word[w] = exact_word(acc, w);
    exact_normalise(word);
    for (int w = 0; w < EXACT_W; ++w) record[w] = word[w];
    record[EXACT_W] = *flags;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* The slices of exact_wg_fold: work-item j adds word j % EXACT_W of the
 * records j / EXACT_W, + EXACT_FOLD_SLICES, ... Declare its scratch as
 * __local long name[EXACT_FOLD_PARTS]. */
#define EXACT_FOLD_SLICES (WG > EXACT_W ? WG / EXACT_W : 1)
#define EXACT_FOLD_PARTS (EXACT_FOLD_SLICES * EXACT_W)

/* The sum of record `first` and the `count` records from `rest` (each
 * EXACT_RECORD(EXACT_W) words, normalised) rounded once: the bits in
 * work-item 0 (the others get 0). Below 2^31 records. */
CLPRIM_INLINE EXACT_RESULT_BITS exact_wg_fold(__global const long *first,
                                              __global const long *rest, ulong count,
                                              __local long *part, volatile __local uint *flags) {
  const uint lid = get_local_id(0);
  if (lid == 0) *flags = (uint)first[EXACT_W];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint f = 0;
  for (ulong g = lid; g < count; g += WG) f |= (uint)rest[g * EXACT_RECORD(EXACT_W) + EXACT_W];
#if WG == 1
  *flags |= f;
#else
  if (f != 0) atomic_or(flags, f);
#endif
  /* part[slice * EXACT_W + w] (slice and w counted up, not divided out:
   * Oclgrind's uninitialised-value check stops at the freeze that LLVM puts
   * before a division and remainder of the same number) */
  uint slice = 0, w = lid;
  while (w >= EXACT_W) w -= EXACT_W, ++slice;
  for (uint j = lid; j < EXACT_FOLD_PARTS; j += WG) { /* j = slice * EXACT_W + w */
    long s = slice == 0 ? first[w] : 0;
    for (ulong g = slice; g < count; g += EXACT_FOLD_SLICES)
      s += rest[g * EXACT_RECORD(EXACT_W) + w];
    part[j] = s;
    for (w += WG; w >= EXACT_W; w -= EXACT_W) ++slice;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  EXACT_RESULT_BITS bits = 0;
  if (lid == 0) {
    long word[EXACT_W];
    for (int v = 0; v < EXACT_W; ++v) word[v] = 0;
    for (int p = 0; p < EXACT_FOLD_SLICES; ++p)
      for (int v = 0; v < EXACT_W; ++v) word[v] += part[p * EXACT_W + v];
    bits = exact_round(word, *flags);
  }
  barrier(CLK_LOCAL_MEM_FENCE); /* part and flags are read before the next fold */
  return bits;
}

/* ---- a work-item's own words (no atomics, no expansion): the exact
 * scan's running prefix (cl/scan.cl), where each element's sum is rounded
 * on its own. word[] holds EXACT_W words as the work-group's do; flags as
 * a record's. */

/* The flags that element v adds to a sum's. */
CLPRIM_INLINE uint exact_element_flags(T v) {
  if (isnan(v)) return EXACT_FLAG_ADDED | EXACT_FLAG_NAN;
  if (isinf(v)) return EXACT_FLAG_ADDED | (v > 0 ? EXACT_FLAG_POS_INF : EXACT_FLAG_NEG_INF);
  return EXACT_FLAG_ADDED | (v == (T)0 && signbit(v) ? 0u : EXACT_FLAG_NOT_NEG_ZERO);
}

/* Finite v's magnitude as three 32-bit digits d[0..2] for words w, w + 1,
 * w + 2 (its significand lands at bit pos % 32 of word pos / 32, pos >= 0
 * since EXACT_B is T's smallest subnormal exponent); returns whether v is
 * negative. d is all 0 for a zero. */
CLPRIM_INLINE int exact_digits(T v, int *w, uint *d) {
#if T_BITS == 64
  const ulong bits = as_ulong(v);
  const int neg = (int)(bits >> 63), e = (int)(bits >> 52) & 0x7ff;
  ulong m = bits & 0xFFFFFFFFFFFFFul;
  if (e != 0) m |= 1ul << 52;
#else
  const uint bits = as_uint(v);
  const int neg = (int)(bits >> 31), e = (int)(bits >> 23) & 0xff;
  ulong m = bits & 0x7FFFFFu;
  if (e != 0) m |= 1u << 23;
#endif
  const int pos = (e != 0 ? e : 1) - 1; /* the weight of m's bit 0, over 2^EXACT_B */
  const int r = pos & 31;
  const ulong lo = m << r, hi = r != 0 ? m >> (64 - r) : 0;
  *w = pos >> 5;
  d[0] = (uint)lo, d[1] = (uint)(lo >> 32), d[2] = (uint)hi;
  return neg;
}

/* Adds finite v to word[] (three words' digits, plainly: a word takes 2^31
 * such adds before it could overflow). Inlined on every device: PoCL 3.1
 * adds these private words right (test_scan's exact cases), and twice as
 * fast as not inlined. */
CLPRIM_INLINE void exact_private_add(long *word, T v) {
  int w;
  uint d[3];
  const int neg = exact_digits(v, &w, d);
  for (int k = 0; k < 3; ++k)
    word[w + k] += neg ? -(long)d[k] : (long)d[k];
}

/* ---- a running sum rounded after every add (the exact scan's prefixes):
 * sign and magnitude, the magnitude's digits normalised (each in [0,
 * 2^32), word k weighing 2^(32 k + EXACT_B) as above) and a bit per
 * nonzero digit, so that a rounding reads the top three digits and the
 * bits below them, not every word. An add propagates its carry (or
 * borrow) as far as it goes; a subtraction that passes zero negates the
 * magnitude (every word) and flips the sign. */
#define EXACT_NZ ((EXACT_W + 63) / 64) /* the nonzero digits' bit words */
struct exact_run {
  uint digit[EXACT_W];
  ulong nz[EXACT_NZ];
  int neg;
  uint flags;
};

CLPRIM_INLINE void exact_run_set(struct exact_run *r, int k, uint d) {
  r->digit[k] = d;
  const ulong bit = 1ul << (k & 63);
  r->nz[k >> 6] = d != 0 ? r->nz[k >> 6] | bit : r->nz[k >> 6] & ~bit;
}

/* The run from a sum's words and flags (word[]: a record's words or sums
 * of them, changed). */
CLPRIM_INLINE void exact_run_from_words(struct exact_run *r, long *word, uint flags) {
  exact_normalise(word);
  r->neg = word[EXACT_W - 1] < 0;
  if (r->neg) {
    for (int w = 0; w < EXACT_W; ++w)
      word[w] = -word[w];
    exact_normalise(word);
  }
  for (int j = 0; j < EXACT_NZ; ++j)
    r->nz[j] = 0;
  /* the top word is below 2^32: the words have room above any sum */
  for (int w = 0; w < EXACT_W; ++w)
    exact_run_set(r, w, (uint)word[w]);
  r->flags = flags;
}

/* Adds element v (any value: a non-finite one only sets its flag).
 * Inlined, as exact_private_add. */
CLPRIM_INLINE void exact_run_add(struct exact_run *r, T v) {
  r->flags |= exact_element_flags(v);
  if (!isfinite(v)) return;
  int w;
  uint d[3];
  const int neg = exact_digits(v, &w, d);
  if ((d[0] | d[1] | d[2]) == 0) return;
  if (neg == r->neg) { /* the magnitudes add */
    ulong carry = 0;
    for (int k = w; k < EXACT_W && (k < w + 3 || carry != 0); ++k) {
      const ulong s = (ulong)r->digit[k] + (k < w + 3 ? d[k - w] : 0u) + carry;
      exact_run_set(r, k, (uint)s);
      carry = s >> 32;
    }
    return;
  }
  long borrow = 0; /* v's magnitude is taken from the run's */
  for (int k = w; k < EXACT_W && (k < w + 3 || borrow != 0); ++k) {
    const long s = (long)r->digit[k] - (long)(k < w + 3 ? d[k - w] : 0u) - borrow;
    exact_run_set(r, k, (uint)s); /* s mod 2^32 */
    borrow = s < 0;
  }
  if (borrow) { /* past zero: the words hold 2^(32 EXACT_W) - |sum|; negated */
    ulong carry = 1;
    for (int k = 0; k < EXACT_W; ++k) {
      const ulong s = (ulong)(~r->digit[k]) + carry;
      exact_run_set(r, k, (uint)s);
      carry = s >> 32;
    }
    r->neg = !r->neg;
  }
}

/* Whether a digit below word j is not 0. */
CLPRIM_INLINE int exact_run_any_below(const struct exact_run *r, int j) {
  int any = 0;
  for (int i = 0; i < EXACT_NZ; ++i) {
    const int first = 64 * i;
    if (j >= first + 64)
      any |= r->nz[i] != 0;
    else if (j > first)
      any |= (r->nz[i] & ((1ul << (j - first)) - 1)) != 0;
  }
  return any;
}

/* The run's value rounded once to T's nearest, ties to even, as
 * exact_round gives it (the same flags' rules), from the top three
 * digits (at least 64 bits from the leading one: P + 1 of them and the
 * sticky bits) and whether any digit below them is not 0. */
CLPRIM_INLINE EXACT_RESULT_BITS exact_run_round(const struct exact_run *r) {
  const EXACT_RESULT_BITS sign = (EXACT_RESULT_BITS)1 << (T_BITS - 1);
  const EXACT_RESULT_BITS inf = (((EXACT_RESULT_BITS)1 << (T_BITS - EXACT_P)) - 1) << (EXACT_P - 1);
  const uint flags = r->flags;
  if ((flags & EXACT_FLAG_NAN) || ((flags & EXACT_FLAG_POS_INF) && (flags & EXACT_FLAG_NEG_INF)))
    return inf | ((EXACT_RESULT_BITS)1 << (EXACT_P - 2)); /* a quiet NaN */
  if (flags & EXACT_FLAG_POS_INF) return inf;
  if (flags & EXACT_FLAG_NEG_INF) return inf | sign;
  int h = -1; /* the top nonzero digit */
  for (int i = EXACT_NZ - 1; i >= 0 && h < 0; --i)
    if (r->nz[i] != 0) h = 64 * i + 63 - (int)clz(r->nz[i]);
  if (h < 0) /* an exact zero: -0 only for elements that were all -0 */
    return (flags & EXACT_FLAG_ADDED) && !(flags & EXACT_FLAG_NOT_NEG_ZERO) ? sign : 0;
  const int t = 31 - (int)clz(r->digit[h]); /* the leading bit in digit h */
  EXACT_RESULT_BITS bits;
  if (32 * h + t < EXACT_P) { /* exact: a subnormal or the first binade */
    bits = (EXACT_RESULT_BITS)r->digit[0] |
           (EXACT_P > 32 && h > 0 ? (EXACT_RESULT_BITS)r->digit[1] << 16 << 16 : 0);
  } else {
    /* The window: digits h, h - 1 (high) and h - 2 (low), 0 where missing;
     * its bit j weighs bit j + 32 (h - 2) of the words. */
    const ulong high = (ulong)r->digit[h] << 32 | (h >= 1 ? r->digit[h - 1] : 0u);
    const uint low = h >= 2 ? r->digit[h - 2] : 0u;
    const int rs = t + 64 - (EXACT_P - 1); /* m's lowest bit in the window: 12 .. 72 */
    ulong m;
    int round_bit, sticky;
    if (rs >= 32) {
      const int s = rs - 32;
      m = high >> s;
      round_bit = (int)(s > 0 ? (high >> (s - 1)) & 1 : low >> 31);
      sticky = (s > 1 && (high & ((1ul << (s - 1)) - 1)) != 0) ||
               (s > 0 ? low != 0 : (low & 0x7FFFFFFFu) != 0);
    } else {
      m = high << (32 - rs) | low >> rs;
      round_bit = (int)(low >> (rs - 1)) & 1;
      sticky = (low & ((1u << (rs - 1)) - 1)) != 0;
    }
    sticky |= exact_run_any_below(r, h - 2);
    int shift = rs + 32 * (h - 2); /* m's lowest bit in the words */
    if (round_bit && (sticky || (m & 1))) ++m;
    if (m >> EXACT_P) {
      m >>= 1;
      ++shift;
    }
    const ulong biased = (ulong)shift + 1; /* as in exact_round */
    if (biased >= ((1ul << (T_BITS - EXACT_P)) - 1)) return r->neg ? inf | sign : inf;
    bits = (EXACT_RESULT_BITS)((biased << (EXACT_P - 1)) | (m & ((1ul << (EXACT_P - 1)) - 1)));
  }
  return r->neg ? bits | sign : bits;
}

/* ------------------------------------------------------------------
 * Words that many work-items add to at once (dense reduce-by-key: words
 * per key in global memory, and a work-group's per-key words in local
 * memory). Elements go in one by one, with no expansion: a key's elements
 * are scattered, so each element's digits go to the words.
 *
 * A global word is two uints: with EXACT_GLOBAL_ATOM64 one long added with
 * 64-bit global atomics, else a low and a high half added with 32-bit
 * atomics and a carry (as exact_add's mode 2). Only the device reads them.
 * A word takes a digit from each element at most, so fewer than 2^31
 * elements between normalisations keep every word inside a long. */
#if defined(EXACT_ATOM64) && EXACT_ATOM64 && defined(cl_khr_int64_base_atomics)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define EXACT_GLOBAL_ATOM64 1
#else
#define EXACT_GLOBAL_ATOM64 0
#endif
/* A work-group's words of one key in local memory: EXACT_ACC_WORDS
 * elements of EXACT_LWORD (the layout of EXACT_LOCAL: exact_add,
 * exact_flush and exact_word take a pointer to them). */
#if EXACT_MODE == 2
#define EXACT_LWORD uint
#else
#define EXACT_LWORD long
#endif

/* The flags element v brings (EXACT_FLAG_ADDED, and NaN / an infinity, or
 * EXACT_FLAG_NOT_NEG_ZERO for a finite v other than -0), and in *x the
 * value to add (0 for a NaN or an infinity). By the bits, as exact_odd. */
CLPRIM_INLINE uint exact_element(T v, EXACT_E *x) {
#if T_BITS == 64
  const ulong u = as_ulong(v);
  const int special = (u >> 52 & 0x7FF) == 0x7FF, nan = (u << 12) != 0, neg = (int)(u >> 63);
  const int neg_zero = u == 0x8000000000000000ul;
#else
  const uint u = as_uint(v);
  const int special = (u >> 23 & 0xFF) == 0xFF, nan = (u << 9) != 0, neg = (int)(u >> 31);
  const int neg_zero = u == 0x80000000u;
#endif
  *x = special ? (EXACT_E)0 : (EXACT_E)v;
  if (special)
    return EXACT_FLAG_ADDED | (nan   ? EXACT_FLAG_NAN
                               : neg ? EXACT_FLAG_NEG_INF
                                     : EXACT_FLAG_POS_INF);
  return EXACT_FLAG_ADDED | (neg_zero ? 0u : EXACT_FLAG_NOT_NEG_ZERO);
}

/* x (finite, a multiple of 2^EXACT_B) as signed digits d[0..2] (as
 * exact_flush splits it: d[j] weighs word w + j); returns w. */
CLPRIM_INLINE int exact_split(EXACT_E x, long *d) {
#ifdef CLPRIM_HAS_FP64
  const ulong bits = as_ulong(x);
  const int neg = (int)(bits >> 63), e = (int)(bits >> 52) & 0x7ff;
  ulong m = bits & 0xFFFFFFFFFFFFFul;
  if (e != 0) m |= 1ul << 52;
  int pos = (e != 0 ? e : 1) - 1075 - EXACT_B;
#else
  const uint bits = as_uint(x);
  const int neg = (int)(bits >> 31), e = (int)(bits >> 23) & 0xff;
  ulong m = bits & 0x7FFFFFu;
  if (e != 0) m |= 1u << 23;
  int pos = (e != 0 ? e : 1) - 150 - EXACT_B;
#endif
  if (pos < 0) {
    m = pos > -64 ? m >> -pos : 0;
    pos = 0;
  }
  const int r = pos & 31;
  const ulong lo = m << r, hi = r != 0 ? m >> (64 - r) : 0;
  d[0] = (long)(lo & 0xFFFFFFFFu), d[1] = (long)(lo >> 32), d[2] = (long)hi;
  if (neg) d[0] = -d[0], d[1] = -d[1], d[2] = -d[2];
  return pos >> 5;
}

/* Adds d to the global word at p (two uints). */
CLPRIM_INLINE void exact_gadd(__global uint *p, long d) {
#if EXACT_GLOBAL_ATOM64
  atom_add((volatile __global long *)p, d);
#else
  const ulong u = (ulong)d;
  const uint lo = (uint)u, old = atomic_add((volatile __global uint *)p, lo);
  atomic_add((volatile __global uint *)p + 1, (uint)(u >> 32) + (uint)(old + lo < old));
#endif
}

/* The global word at p, once the adds are done; and its store. */
CLPRIM_INLINE long exact_gword(__global const uint *p) {
#if EXACT_GLOBAL_ATOM64
  return *(__global const long *)p;
#else
  return (long)(((ulong)p[1] << 32) | p[0]);
#endif
}
CLPRIM_INLINE void exact_gword_set(__global uint *p, long v) {
#if EXACT_GLOBAL_ATOM64
  *(__global long *)p = v;
#else
  p[0] = (uint)(ulong)v;
  p[1] = (uint)((ulong)v >> 32);
#endif
}

/* A key's window masks: EXACT_MASKS uints, mask m's bit j (j < 24) set
 * where an element's digits reach word 24 m + j (its lowest and highest),
 * and its bits 24 and up the flags (EXACT_FLAG_*, OR-ed over the masks):
 * an element usually needs one atomic_or, flags included. */
#define EXACT_MASK_WORDS 24
#define EXACT_MASKS ((EXACT_W + EXACT_MASK_WORDS - 1) / EXACT_MASK_WORDS)
#define EXACT_MASK_FLAGS(mask) ((mask) >> EXACT_MASK_WORDS)

/* What a work-item has already OR-ed into the masks of its last key: bits
 * already sent need no atomic (elements of sorted or clustered keys then
 * cost none, where every work-item would contend for one word). */
struct exact_sent {
  uint key, mask[EXACT_MASKS];
};
CLPRIM_INLINE void exact_sent_init(struct exact_sent *s) {
  s->key = 0xFFFFFFFFu;
  for (int m = 0; m < EXACT_MASKS; ++m)
    s->mask[m] = 0u;
}
/* The bits of mask m of key still to send from this work-item (0: none). */
CLPRIM_INLINE uint exact_sent_bits(struct exact_sent *s, uint key, int m, uint bits) {
  if (s->key != key) {
    s->key = key;
    for (int j = 0; j < EXACT_MASKS; ++j)
      s->mask[j] = 0u;
  }
  const uint need = bits & ~s->mask[m];
  s->mask[m] |= bits;
  return need;
}

/* exact_normalise of the len words of a window (word[0] the lowest): the
 * carries up to the last word, which keeps the sign. The window must
 * reach high enough to hold the sum. */
CLPRIM_INLINE void exact_normalise_window(long *word, int len) {
  long carry = 0;
  for (int w = 0; w < len - 1; ++w) {
    const long v = word[w] + carry;
    word[w] = v & 0xFFFFFFFFl;
    carry = v >> 32;
  }
  word[len - 1] += carry;
}

#endif /* CLPRIM_EXACT_H */
