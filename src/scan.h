/* scan.h: the scan family's (src/scan.c) tile size of scan by key, for
 * the tests. Not installed. */
#ifndef CLPRIM_SCAN_H
#define CLPRIM_SCAN_H

#include "core/core.h"

/* Elements per tile of scan by key (the tests' sizes). */
size_t clprim__scan_by_key_tile(const clprim_context *ctx, clprim_type key_type,
                                clprim_type value_type);

#endif /* CLPRIM_SCAN_H */
