/* scan.h: the scan family's (src/scan.c) tile size of scan by key and
 * chunk of the exact scan, for the tests. Not installed. */
#ifndef CLPRIM_SCAN_H
#define CLPRIM_SCAN_H

#include "core/core.h"

/* Elements per tile of scan by key (the tests' sizes). */
size_t clprim__scan_by_key_tile(const clprim_context *ctx, clprim_type key_type,
                                clprim_type value_type);

/* Elements per chunk of the exact scan (CLPRIM_EXACT) of n elements on
 * this context (the tests' sizes: a work-item a chunk, blocks of
 * clprim__scan_exact_per_block chunks in the chunks' scan). */
size_t clprim__scan_exact_chunk(const clprim_context *ctx, size_t n);
size_t clprim__scan_exact_per_block(size_t chunks);

#endif /* CLPRIM_SCAN_H */
