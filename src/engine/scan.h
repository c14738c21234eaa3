/* scan.h: the device-wide prefix sum that families and engines call
 * (engine/scan.c). Not installed. */
#ifndef CLPRIM_ENGINE_SCAN_H
#define CLPRIM_ENGINE_SCAN_H

#include "../core/core.h"

/* Prefix sum without argument checks or clprim__call_begin, for families
 * and engines: in and out hold n elements of type (in == out allowed). */
clprim_status clprim__scan(clprim_context *ctx, clprim_type type, cl_mem in, cl_mem out, size_t n,
                           int inclusive);
/* Elements per scan tile for type on this context (tests use it for sizes
 * around tile boundaries). */
size_t clprim__scan_tile(const clprim_context *ctx, clprim_type type);

#endif /* CLPRIM_ENGINE_SCAN_H */
