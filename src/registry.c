/* registry.c: the one list of families and engines. Each gives a
 * descriptor (core/core.h's struct clprim_family: its name, tuning knobs and
 * table, state, prebuild hook), and every context gets this list when it is
 * created: CLPRIM_TUNE names its knobs, clprim_context_prebuild walks it.
 * Adding a family adds one line to FAMILIES. */
#include "core/core.h"

/* ENGINE(name), FAMILY(name): the descriptor clprim__family_<name> of src/<name>.c, or of
 * src/engine/<name>.c for engines (clprim__engine_<name>). */
#define FAMILIES                                                                                   \
  ENGINE(scan)                                                                                     \
  ENGINE(count_scan_scatter)                                                                       \
  ENGINE(sample_select)                                                                            \
  FAMILY(scan)                                                                                     \
  FAMILY(reduce)                                                                                   \
  FAMILY(select)                                                                                   \
  FAMILY(histogram)                                                                                \
  FAMILY(reduce_by_key)                                                                            \
  FAMILY(runs)                                                                                     \
  FAMILY(nth_element)                                                                              \
  FAMILY(topk)                                                                                     \
  FAMILY(segmented_topk)                                                                           \
  FAMILY(sort)

#define ENGINE(name) extern const struct clprim_family clprim__engine_##name;
#define FAMILY(name) extern const struct clprim_family clprim__family_##name;
FAMILIES
#undef ENGINE
#undef FAMILY

#define ENGINE(name) &clprim__engine_##name,
#define FAMILY(name) &clprim__family_##name,
static const struct clprim_family *const families[] = {FAMILIES};
#undef ENGINE
#undef FAMILY
#define COUNT ((unsigned)(sizeof families / sizeof families[0]))

clprim_status clprim_context_create(clprim_context **out, const clprim_options *options) {
  return clprim__create(out, NULL, options, families, COUNT);
}

clprim_status clprim_context_create_from_queue(clprim_context **out, cl_command_queue queue,
                                               const clprim_options *options) {
  if (!queue) {
    if (out) *out = NULL;
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  }
  return clprim__create(out, queue, options, families, COUNT);
}
