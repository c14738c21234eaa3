/* lookback.c: the host's part of a single-pass kernel with decoupled
 * look-back (cl/internal/lookback.h): the tile-state buffer, in the layout
 * of cl/internal/layout.h, zeroed before the launch. */
#include "lookback.h"
#include "../../cl/internal/layout.h"

clprim_status clprim__lookback_state(clprim_context *ctx, const char *name, size_t tiles,
                                     unsigned value_bits, cl_mem *state) {
  if (tiles > UINT32_MAX) return CLPRIM_ERROR_SIZE_TOO_LARGE; /* tile ids are 32-bit */
  const size_t bytes = value_bits == 64 ? LB_SPLIT_BYTES(tiles) : LB_PACKED_BYTES(tiles);
  const cl_uint zero = 0;
  CLPRIM_CHECK(clprim__scratch(ctx, name, bytes, state));
  return clprim__fill(ctx, *state, &zero, sizeof zero, 0, bytes);
}

clprim_status clprim__lookback_state_op(clprim_context *ctx, const char *name, size_t tiles,
                                        size_t value_bytes, cl_mem *state) {
  if (tiles > UINT32_MAX) return CLPRIM_ERROR_SIZE_TOO_LARGE; /* tile ids are 32-bit */
  const cl_uint zero = 0;
  CLPRIM_CHECK(clprim__scratch(ctx, name, LB_OP_BYTES(tiles, value_bytes), state));
  return clprim__fill(ctx, *state, &zero, sizeof zero, 0, LB_OP_VALUES_AT(tiles));
}
