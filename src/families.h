/* families.h: the list of families and engines, once (src/registry.c
 * makes it the contexts' list; clprim_mpi adds its own descriptor to it).
 * Not installed. */
#ifndef CLPRIM_FAMILIES_H
#define CLPRIM_FAMILIES_H

/* FAMILY(name), ENGINE(name), CORE(name): the descriptor clprim__family_<name> of
 * src/<name>.c, clprim__engine_<name> of src/engine/<name>.c, or clprim__core_<name> of
 * src/core/<name>.c (the core's own tunables). The build reads the FAMILY lines too
 * (CMakeLists.txt): each family also has tests/test_<name>.c and tools/bench/<name>.c,
 * whose rows bench_<name> the bench lists from here. */
#define FAMILIES                                                                                   \
  CORE(launch)                                                                                     \
  ENGINE(scan)                                                                                     \
  ENGINE(count_scan_scatter)                                                                       \
  ENGINE(sample_select)                                                                            \
  ENGINE(exact)                                                                                    \
  FAMILY(scan)                                                                                     \
  FAMILY(reduce)                                                                                   \
  FAMILY(select)                                                                                   \
  FAMILY(histogram)                                                                                \
  FAMILY(reduce_by_key)                                                                            \
  FAMILY(runs)                                                                                     \
  FAMILY(nth_element)                                                                              \
  FAMILY(topk)                                                                                     \
  FAMILY(segmented_topk)                                                                           \
  FAMILY(sort)                                                                                     \
  FAMILY(pipeline)                                                                                 \
  FAMILY(search)                                                                                   \
  FAMILY(merge)                                                                                    \
  FAMILY(gather)                                                                                   \
  FAMILY(operators)

#define CORE(name) /* declared in core/core.h */
#define ENGINE(name) extern const struct clprim_family clprim__engine_##name;
#define FAMILY(name) extern const struct clprim_family clprim__family_##name;
FAMILIES
#undef CORE
#undef ENGINE
#undef FAMILY

/* The list as array elements: {CLPRIM__FAMILY_LIST} */
#define CORE(name) &clprim__core_##name,
#define ENGINE(name) &clprim__engine_##name,
#define FAMILY(name) &clprim__family_##name,
#define CLPRIM__FAMILY_LIST FAMILIES

#endif /* CLPRIM_FAMILIES_H */
