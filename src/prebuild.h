/* prebuild.h: clprim_context_prebuild for chosen types (tests).
 * Not installed. */
#ifndef CLPRIM_PREBUILD_H
#define CLPRIM_PREBUILD_H

#include "core/core.h"

/* clprim_context_prebuild for the types whose bit (1u << type) is set
 * (tests prebuild one or two types). */
clprim_status clprim__prebuild(clprim_context *ctx, unsigned types);

#endif /* CLPRIM_PREBUILD_H */
