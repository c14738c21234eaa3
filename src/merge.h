/* merge.h: the merge family's (src/merge.c) merge of two sorted runs, and
 * of k runs in rounds, on resolved buffers (clprim_merge_runs_* and
 * clprim_mpi's sample sort). Not installed. */
#ifndef CLPRIM_MERGE_H
#define CLPRIM_MERGE_H

#include "core/core.h"

/* Two sorted runs, a and b, and where their merge goes: element offsets
 * into cl_mem buffers (runs of one buffer are allowed; the output must not
 * overlap them). Values of value_size bytes (4 or 8; 0: keys alone) are
 * moved as bits with their keys, at the same offsets in a_values, b_values
 * and out_values. */
struct clprim_merge_runs {
  clprim_type type;
  size_t value_size;
  cl_mem a, b, out, a_values, b_values, out_values;
  size_t a_at, na, b_at, nb, out_at;
  int descending;
};
/* The stable merge (a's keys first among equal keys) of m's runs into
 * m->out, enqueued: two launches, of which the second writes every output
 * (keys alone with an empty run: a copy). */
clprim_status clprim__merge(clprim_context *ctx, const struct clprim_merge_runs *m);

/* A place in a buffer: keys (and values) from element `at`. */
struct clprim_merge_place {
  cl_mem keys, values;
  size_t at;
};
/* k sorted runs merged into one: run r is elements [offsets[r],
 * offsets[r + 1]) after src.at (offsets[0] = 0, offsets[runs] = n).
 * ceil(log2 runs) rounds of pairwise merges (clprim__merge; runs 2 j and
 * 2 j + 1 of a round, lower runs first among equal keys): round i < last
 * writes to `a` (i odd) or `b` (i even), the last round (or, for one run,
 * a copy) to `out`. So nothing reaches out before the last round's one
 * merge. The caller keeps them apart: a is not src; b may be src (written
 * from the second round on); out is not the buffer the last round reads. */
struct clprim_merge_rounds {
  clprim_type type;
  size_t value_size;
  int descending;
  struct clprim_merge_place src, a, b, out;
  size_t runs;
  const size_t *offsets;
};
/* The rounds that `runs` runs take. */
unsigned clprim__merge_round_count(size_t runs);
clprim_status clprim__merge_rounds(clprim_context *ctx, const struct clprim_merge_rounds *p);

#endif /* CLPRIM_MERGE_H */
