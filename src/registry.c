/* registry.c: the one list of families and engines. Each gives a
 * descriptor (core/core.h's struct clprim_family: its name, tuning knobs and
 * table, state, prebuild hook), and every context gets this list when it is
 * created: CLPRIM_TUNE names its knobs, clprim_context_prebuild walks it.
 * Adding a family adds one line to FAMILIES (families.h). */
#include "core/core.h"
#include "families.h"

static const struct clprim_family *const families[] = {CLPRIM__FAMILY_LIST};
#define COUNT ((unsigned)(sizeof families / sizeof families[0]))

clprim_status clprim_context_create(clprim_context **out, const clprim_options *options) {
  return clprim__create(out, NULL, options, families, COUNT);
}

clprim_status clprim_context_create_from_queue(clprim_context **out, cl_command_queue queue,
                                               const clprim_options *options) {
  if (!queue) {
    clprim__create_begin();
    return clprim__create_fail(CLPRIM_ERROR_INVALID_ARGUMENT,
                               "context_create_from_queue: queue is NULL");
  }
  return clprim__create(out, queue, options, families, COUNT);
}
