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

/* Word w's value once every work-item's adds are done (after a barrier). */
CLPRIM_INLINE long exact_word(EXACT_ACC *acc, int w) {
#if EXACT_MODE == 2
  return (long)(((ulong)acc[EXACT_W + w] << 32) | acc[w]);
#else
  return acc[w];
#endif
}

/* Sets the words to zero; the caller's barrier follows. */
CLPRIM_INLINE void exact_clear(EXACT_ACC *acc) {
#if EXACT_MODE == 2
  for (int w = get_local_id(0); w < 2 * EXACT_W; w += WG) acc[w] = 0;
#else
  for (int w = get_local_id(0); w < EXACT_W; w += WG) acc[w] = 0;
#endif
}

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
  exact_flush(acc, x);
}

/* The work-item's terms to the words, its flags to *flags (a local word
 * the work-group shares). */
CLPRIM_INLINE void exact_item_end(const struct exact_item *it, EXACT_ACC *acc,
                                  volatile __local uint *flags) {
#pragma unroll
  for (int t = 0; t < EXACT_TERMS; ++t)
    if (it->term[t] != (EXACT_E)0) exact_flush(acc, it->term[t]);
  uint f = it->flags;
  if (!(it->term[0] == (EXACT_E)0 && signbit(it->term[0]))) f |= EXACT_FLAG_NOT_NEG_ZERO;
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
/* A work-group's words of one key in local memory: EXACT_LSTRIDE elements
 * of EXACT_LWORD (the layout of EXACT_LOCAL: exact_add, exact_flush and
 * exact_word take a pointer to them). */
#if EXACT_MODE == 2
#define EXACT_LWORD uint
#define EXACT_LSTRIDE (2 * EXACT_W)
#else
#define EXACT_LWORD long
#define EXACT_LSTRIDE EXACT_W
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
