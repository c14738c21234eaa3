/* merge.h: the merge family's (src/merge.c) merge of two sorted runs on
 * resolved buffers, for clprim_mpi's sample sort. Not installed. */
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

#endif /* CLPRIM_MERGE_H */
