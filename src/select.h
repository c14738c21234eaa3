/* select.h: what the select family (src/select.c) offers the runs and
 * pipeline families. Not installed. */
#ifndef CLPRIM_SELECT_H
#define CLPRIM_SELECT_H

#include "core/core.h"

/* Compaction of the edges of runs of n equal consecutive keys (kind:
 * RUN_HEAD, RUN_NONTRIVIAL_HEAD or RUN_NONTRIVIAL_TAIL of
 * cl/internal/heads.h): the values at the edges (values of value_type, or
 * NULL: the keys) to values_out and / or their positions to indices (uint32,
 * or uint64 with index64), their count to count_out (one uint64 on the
 * device). cl_mems as clprim__range gives them; NULL where not wanted. */
struct clprim_runs_select {
  size_t n;
  int kind;
  clprim_type key_type, value_type;
  cl_mem keys, values, values_out, indices, count_out;
  int index64;
  /* RUN_HEAD where the single pass runs (clprim__select_single_pass_tile):
   * indices get the run lengths instead, but for the runs that go on past
   * a tile, whose starts runs.cl's runs_fix_ends turns into lengths with
   * the ends left here (2 ulongs per tile, and 2 more). */
  cl_mem run_ends;
};
clprim_status clprim__select_runs(clprim_context *ctx, const struct clprim_runs_select *r);

/* Compaction of a pipeline's elements (the n elements of in, the first
 * input, through `prefix`, the pipeline's source, built with -DPIPELINE;
 * elements of type): values and / or indices (uint64 with index64), the
 * count to count_out (one uint64 on the device) and / or *count (read).
 * extra: the kernels' extra arguments (first is set here). NULL where not
 * wanted; no argument checks. */
struct clprim_pipe_select {
  size_t n;
  clprim_type type;
  const char *prefix;
  cl_mem in, values, indices, count_out;
  int index64;
  uint64_t *count;
  struct clprim_extra_args *extra;
  int partition; /* nonzero: all n written, the passing ones first (select.c's orders) */
};
clprim_status clprim__select_pipeline(clprim_context *ctx, const struct clprim_pipe_select *p);

/* Elements per select tile on this context (tests: sizes around tiles). */
size_t clprim__select_tile(const clprim_context *ctx);
/* Elements per tile of select's single-pass kernel, 0 where it does not run. */
size_t clprim__select_single_pass_tile(const clprim_context *ctx, clprim_type type);

#endif /* CLPRIM_SELECT_H */
