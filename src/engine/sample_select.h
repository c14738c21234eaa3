/* sample_select.h: the selection engine (engine/sample_select.c), as
 * selection by rank, top-k, per-segment selection, pipelines and clprim_mpi
 * run it. Not installed. */
#ifndef CLPRIM_ENGINE_SAMPLE_SELECT_H
#define CLPRIM_ENGINE_SAMPLE_SELECT_H

#include "../core/core.h"
#include "../../cl/internal/layout.h"

/* Selection's and top-k's files, one program on CPU devices. */
#define CLPRIM__SELECTION_FILES "nth_element.cl topk.cl"

/* Top-k runs selection by rank (clprim__nth_select_ranks) and level kernels
 * of cl/nth_element.cl (nth_sample, nth_count, nth_choose) on selection's
 * scratch buffers, named here; its own kernels (cl/topk.cl) take the same
 * build options. */
#define CLPRIM__NTH_SLOT_COUNTS "nth: per-group bucket counts" /* uint */
#define CLPRIM__NTH_SLOT_META "nth: meta"       /* NTH_META_WORDS ulongs (cl/internal/layout.h) */
#define CLPRIM__NTH_SLOT_STATE "nth: state"     /* nth_choose's answers */
#define CLPRIM__NTH_SLOT_RANKS "nth: ranks"     /* the wanted ranks, sorted */
#define CLPRIM__NTH_SLOT_RESULTS "nth: results" /* the keys of the ranks */
#define CLPRIM__NTH_SLOT_KEYS_A "nth: keys A"   /* levels' keys; top-k sort keys */
#define CLPRIM__NTH_SLOT_KEYS_B "nth: keys B"   /* levels' keys; top-k sort indices */
struct clprim_nth_config {
  unsigned wg;       /* work-items per work-group (a power of two, <= 512) */
  size_t max_groups; /* counting / extraction work-groups */
  unsigned items;    /* top-k elements per work-item */
};
/* The engine's shape on ctx's path (on the cpu path one work-item a
 * work-group, a share each), also cl/segmented_topk.cl's. */
struct clprim_nth_config clprim__nth_config(const clprim_context *ctx);
/* Build options of cl/nth_element.cl (and cl/topk.cl) for type; count_nans:
 * the build whose nth_count also counts NaNs (for CLPRIM_NTH_REJECT_NAN). */
void clprim__nth_options(clprim_type type, const struct clprim_nth_config *c, int count_nans,
                         char *options, size_t size);
/* The request for level kernel `name` (nth_*) of cl/nth_element.cl built
 * for type, in the level kernels' program; count_nans: nth_count's build
 * that counts NaNs. options (200 chars) receives the build options and must
 * live as long as the request. */
struct clprim_kernel_request clprim__nth_request(clprim_type type,
                                                 const struct clprim_nth_config *c, int count_nans,
                                                 const char *name, cl_kernel *kernel,
                                                 char *options);
/* The argument checks that selection and top-k share: type, n (1 to
 * 2^32 - 1), flags within `allowed`, in holding n elements (resolved to
 * *in_mem). */
clprim_status clprim__nth_check(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in, unsigned flags, unsigned allowed,
                                cl_mem *in_mem);
/* The keys of the ranks `ranks` (sorted ascending, each < n, count of them)
 * of the n elements of in from element in_offset (a multiple of 4), to
 * keys[] on the host (and left in CLPRIM__NTH_SLOT_RESULTS). approximate:
 * one level only; keys[] gets the nearest splitter and errors[] its rank
 * distance. Enqueues from the first kernel on; the call is begun and its
 * arguments checked. */
clprim_status clprim__nth_select_ranks(clprim_context *ctx, clprim_type type, cl_mem in,
                                       size_t in_offset, size_t n, const uint64_t *ranks,
                                       unsigned count, unsigned flags, int approximate,
                                       uint64_t *keys, uint64_t *errors);
/* A pipeline's filter (pipeline.c) inside selection by rank: level 0's
 * sample, count and extraction run cl/nth_element.cl built with the
 * pipeline's source (-DPIPELINE) and its kernel arguments after their own,
 * over the n elements of the first input; `type` is the pipeline's output
 * type. The ranks depend on the number m of passing elements, which the
 * counting pass learns: ranks_of(arg, m, ranks) then writes them (sorted,
 * distinct, at most `count`) and returns their number, 0 for none (the call
 * fails with CLPRIM_ERROR_INVALID_ARGUMENT). */
struct clprim_nth_filter {
  const char *prefix;
  struct clprim_extra_args *extra;
  unsigned (*ranks_of)(void *arg, uint64_t m, uint64_t *ranks);
  void *arg;
};
/* The keys of the filter's ranks (at most count; *distinct gets their
 * number, the ranks stay in ranks[]); n must exceed clprim__nth_small_max. */
clprim_status clprim__nth_select_filtered(clprim_context *ctx, clprim_type type, cl_mem in,
                                          size_t n, const struct clprim_nth_filter *filter,
                                          unsigned count, uint64_t *ranks, uint64_t *keys,
                                          unsigned *distinct);
/* Selection over elements spread across several devices (clprim_mpi: one
 * part on each rank's device): what the levels combine across the devices.
 * NULL everywhere else (one device). Every device runs the same levels
 * over the same sub-problems (buckets that hold wanted ranks, chosen by the
 * combined counts), so every device calls these in the same order; each
 * call is given this device's status so far (`local`) and returns the one
 * that all devices agree on: this device's error, else the hook's code for
 * another device's failure (clprim_mpi: CLPRIM_MPI_ERROR_REMOTE), else
 * success.
 *  splitters: the level's nsubs sub-problems' splitters (CLPRIM__NTH_SPLITTERS
 *    keys each, from this device's sample of its lens[s] keys of the
 *    sub-problem; none where lens[s] is 0), replaced by the ones that every
 *    device counts with.
 *  counts: their bucket counts on this device (NTH_BUCKETS each), replaced
 *    by the sums over the devices.
 *  finish: the sub-problems of at most finish_max keys on all devices
 *    together (nparts of them): keys[r] for each one's wanted ranks.
 *    elements: their keys are still the caller's elements (level 0).
 *  agree: the status alone: at the start of each level and at the end.
 * seed: added to the samples' seeds (differs between devices). */
#define CLPRIM__NTH_SPLITTERS (NTH_BUCKETS / 2 - 1)
struct clprim_nth_part {
  cl_mem buf;
  size_t offset, len;    /* this device's keys: [offset, offset + len) of buf */
  uint64_t all, first;   /* keys on all devices; global rank of the smallest */
  unsigned r0, r1;       /* the wanted ranks[r0, r1) */
};
struct clprim_nth_combine {
  clprim_status (*splitters)(void *arg, clprim_status local, size_t nsubs, const uint64_t *lens,
                             uint64_t *splitters);
  clprim_status (*counts)(void *arg, clprim_status local, size_t nsubs, uint64_t *counts);
  clprim_status (*finish)(void *arg, clprim_status local, int elements,
                          const struct clprim_nth_part *parts, size_t nparts,
                          const uint64_t *ranks, uint64_t *keys);
  clprim_status (*agree)(void *arg, clprim_status local);
  uint64_t finish_max, seed;
  void *arg;
};
/* clprim__nth_select_ranks over this device's n elements of in (from
 * in_offset, a multiple of 4) and the other devices' (n_all on all
 * together, ranks global), with combine; returns the status every device
 * agrees on. n may be 0 (then in may be NULL). */
clprim_status clprim__nth_select_combined(clprim_context *ctx, clprim_type type, cl_mem in,
                                          size_t in_offset, size_t n, uint64_t n_all,
                                          const uint64_t *ranks, unsigned count, unsigned flags,
                                          int approximate,
                                          const struct clprim_nth_combine *combine,
                                          uint64_t *keys, uint64_t *errors);
/* One counting pass over the n elements of in with given splitters
 * (CLPRIM__NTH_SPLITTERS keys, sorted): totals[b] for the NTH_BUCKETS
 * buckets (2j: between splitters j - 1 and j, 2j + 1: equal to splitter
 * j). The call is begun. */
clprim_status clprim__nth_count_by_splitters(clprim_context *ctx, clprim_type type, cl_mem in,
                                             size_t n, const uint64_t *splitters,
                                             uint64_t *totals);
/* Sub-problems of at most this many keys are finished by one work-group
 * (nth_small), the whole input too. */
size_t clprim__nth_small_max(const clprim_context *ctx);
/* Selection takes distinct ranks in ascending order: ranks[0, count)
 * sorted, each value kept once; returns how many. clprim__rank_slot: where
 * `rank` (one of them) stands among the distinct[0, count). */
size_t clprim__distinct_ranks(uint64_t *ranks, size_t count);
size_t clprim__rank_slot(const uint64_t *distinct, size_t count, uint64_t rank);

#endif /* CLPRIM_ENGINE_SAMPLE_SELECT_H */
