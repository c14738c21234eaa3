/* lookback.h: the host's part of decoupled look-back (engine/lookback.c).
 * Not installed. */
#ifndef CLPRIM_ENGINE_LOOKBACK_H
#define CLPRIM_ENGINE_LOOKBACK_H

#include "../core/core.h"

/* The zeroed tile states of a single-pass look-back kernel over `tiles`
 * tiles whose values have value_bits = 32, 62 (counts) or 64 bits (the
 * layouts of cl/internal/layout.h), in scratch buffer `name`.
 * CLPRIM_ERROR_SIZE_TOO_LARGE beyond 2^32 - 1 tiles. */
clprim_status clprim__lookback_state(clprim_context *ctx, const char *name, size_t tiles,
                                     unsigned value_bits, cl_mem *state);
/* The same for a user operator's values of value_bytes (layout.h's
 * LB_OP_*): the counter and the flags zeroed. */
clprim_status clprim__lookback_state_op(clprim_context *ctx, const char *name, size_t tiles,
                                        size_t value_bytes, cl_mem *state);

#endif /* CLPRIM_ENGINE_LOOKBACK_H */
