/* keys.h: order-preserving keys, for kernels (selection, top-k, argmax /
 * argmin) and for the host, which turns a key back into an element.
 *
 * A key is an unsigned integer as wide as the element whose unsigned order
 * is the element order, so one kernel per width serves all six types:
 * floats with the sign bit set have every bit inverted, other floats get the
 * sign bit set; signed integers get the sign bit flipped; unsigned integers
 * are their own keys. key_of also maps -0.0 to +0.0's key and every NaN to
 * KEY_MAX (above +inf), the order every family documents.
 *
 * The macros are plain C and OpenCL C; the rest needs, in kernels, T and
 * KEY_BITS (or T_BITS) = 32 | 64, T_FLOAT = 0 | 1, T_SIGNED = 0 | 1 (absent:
 * 0, as in the kernels that take a signed type's sign bit in a flip
 * argument instead: src/core/keys.c, clprim__key_build_type). */
#ifndef CLPRIM_KEYS_H
#define CLPRIM_KEYS_H

#define CLPRIM_KEY_OF_FLOAT_BITS(b, sign) (((b) & (sign)) ? ~(b) : ((b) | (sign)))
#define CLPRIM_FLOAT_BITS_OF_KEY(k, sign) (((k) & (sign)) ? ((k) ^ (sign)) : ~(k))
#define CLPRIM_KEY_OF_SIGNED_BITS(b, sign) ((b) ^ (sign))

#ifdef __OPENCL_VERSION__
#ifndef T /* a file compiled without build options (a syntax check): uint */
#define T uint
#define T_FLOAT 0
#define T_SIGNED 0
#define KEY_BITS 32
#endif
#ifndef KEY_BITS
#define KEY_BITS T_BITS
#endif
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

/* The key of an element's bits (no special case for -0.0 or NaN). */
CLPRIM_INLINE KEY key_of_bits(KEY b) {
#if T_FLOAT
  return CLPRIM_KEY_OF_FLOAT_BITS(b, KEY_SIGN);
#elif T_SIGNED
  return CLPRIM_KEY_OF_SIGNED_BITS(b, KEY_SIGN);
#else
  return b;
#endif
}

/* The element whose bits have key k: key_of_bits undone (the element of
 * key_of(x) is x, but +0.0 for -0.0 and one NaN for every NaN). */
CLPRIM_INLINE T value_of_key(KEY k) {
#if T_FLOAT
  return CLPRIM_CAT(as_, T)(CLPRIM_FLOAT_BITS_OF_KEY(k, KEY_SIGN));
#elif T_SIGNED
  return CLPRIM_CAT(as_, T)(CLPRIM_KEY_OF_SIGNED_BITS(k, KEY_SIGN));
#else
  return k;
#endif
}

/* The key of x: -0.0 as +0.0, every NaN KEY_MAX. */
CLPRIM_INLINE KEY key_of(T x) {
#if T_FLOAT
  if (isnan(x)) return KEY_MAX;
  return key_of_bits(x == (T)0 ? (KEY)0 : AS_KEY(x));
#else
  return key_of_bits(AS_KEY(x));
#endif
}

/* Sort's digit of an element given as its bits: bits [shift, shift +
 * width) of key_of(x) ^ flip, where flip is 0 (ascending) or KEY_MAX
 * (descending: the complement reverses the order) and mask = 2^width - 1.
 * A bit range [begin_bit, end_bit) is passes of 8-bit digits from
 * begin_bit, the last one masked to end_bit. */
CLPRIM_INLINE uint key_digit(KEY bits, KEY flip, uint shift, uint mask) {
  return (uint)(((key_of(CLPRIM_CAT(as_, T)(bits)) ^ flip) >> shift) & mask);
}
#endif /* __OPENCL_VERSION__ */
#endif /* CLPRIM_KEYS_H */
