/* keys.c: elements and their order keys on the host, as cl/internal/keys.h
 * orders them on the device (integers by value, floats by value with
 * -0.0 equal to +0.0 and every NaN one key above +inf). */
#include "core.h"
#include "../../cl/internal/keys.h"

#include <string.h>

uint64_t clprim__key_of_bits(clprim_type type, uint64_t bits) {
  const uint32_t sign32 = 0x80000000u;
  const uint64_t sign64 = 0x8000000000000000ull;
  switch (type) {
  case CLPRIM_INT32:
    return CLPRIM_KEY_OF_SIGNED_BITS((uint32_t)bits, sign32);
  case CLPRIM_UINT32:
    return (uint32_t)bits;
  case CLPRIM_INT64:
    return CLPRIM_KEY_OF_SIGNED_BITS(bits, sign64);
  case CLPRIM_UINT64:
    return bits;
  case CLPRIM_FLOAT: {
    uint32_t b = (uint32_t)bits;
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFu; /* NaN */
    if ((b & 0x7FFFFFFFu) == 0) b = 0;                         /* -0.0 */
    return (uint32_t)CLPRIM_KEY_OF_FLOAT_BITS(b, sign32);
  }
  case CLPRIM_DOUBLE: {
    uint64_t b = bits;
    if ((b & ~sign64) > 0x7FF0000000000000ull) return UINT64_MAX;
    if ((b & ~sign64) == 0) b = 0;
    return CLPRIM_KEY_OF_FLOAT_BITS(b, sign64);
  }
  }
  return 0;
}

clprim_value clprim__value_of_key(clprim_type type, uint64_t key) {
  clprim_value v;
  memset(&v, 0, sizeof v);
  const uint32_t k32 = (uint32_t)key, sign32 = 0x80000000u;
  const uint64_t sign64 = 0x8000000000000000ull;
  switch (type) {
  case CLPRIM_INT32:
    v.u32 = CLPRIM_KEY_OF_SIGNED_BITS(k32, sign32); /* its own inverse */
    break;
  case CLPRIM_UINT32:
    v.u32 = k32;
    break;
  case CLPRIM_INT64:
    v.u64 = CLPRIM_KEY_OF_SIGNED_BITS(key, sign64);
    break;
  case CLPRIM_UINT64:
    v.u64 = key;
    break;
  case CLPRIM_FLOAT:
    v.u32 = CLPRIM_FLOAT_BITS_OF_KEY(k32, sign32);
    break;
  case CLPRIM_DOUBLE:
    v.u64 = CLPRIM_FLOAT_BITS_OF_KEY(key, sign64);
    break;
  }
  return v;
}

int clprim__is_signed(clprim_type type) { return type == CLPRIM_INT32 || type == CLPRIM_INT64; }

clprim_type clprim__key_build_type(clprim_type type) {
  return type == CLPRIM_INT32 ? CLPRIM_UINT32 : type == CLPRIM_INT64 ? CLPRIM_UINT64 : type;
}

clprim_type clprim__bits_type(clprim_type type) {
  return clprim_type_size(type) == 8 ? CLPRIM_UINT64 : CLPRIM_UINT32;
}

uint64_t clprim__key_flip(clprim_type type, int descending) {
  const int wide = clprim_type_size(type) == 8;
  uint64_t flip = descending ? (wide ? UINT64_MAX : 0xFFFFFFFFu) : 0;
  /* A signed key's order is the unsigned order of its bits with the sign
   * bit flipped (keys.h, CLPRIM_KEY_OF_SIGNED_BITS). */
  if (clprim__is_signed(type)) flip ^= (uint64_t)1 << (wide ? 63 : 31);
  return flip;
}
