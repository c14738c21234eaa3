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

#endif /* CLPRIM_ENGINE_LOOKBACK_H */
