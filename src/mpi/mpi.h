/* mpi.h: what the files of clprim_mpi (src/mpi/) share: the collective
 * check of every call and the agreement on statuses (context.c), the
 * device code of cl/mpi.cl (collectives.c), the distributed selection that
 * top-k and the sort run (selection.c). Not installed. */
#ifndef CLPRIM_MPI_MPI_H
#define CLPRIM_MPI_MPI_H

#include "clprim/clprim_mpi.h"
#include "../internal.h"

#define CLPRIM__MPI_OK(call)                                                                       \
  do {                                                                                             \
    if ((call) != MPI_SUCCESS) return CLPRIM_MPI_ERROR_MPI;                                        \
  } while (0)

/* clprim_mpi's descriptor (its knob: gather_max), in its contexts beside
 * the registry's families. */
extern const struct clprim_family clprim__family_mpi;

/* ---- the collective check (context.c) */

/* FNV-1a over the arguments that every rank must pass alike. */
#define CLPRIM__MPI_HASH_START 0xCBF29CE484222325ull
void clprim__mpi_hash_add(uint64_t *h, const void *data, size_t bytes);

/* What the check learnt: this rank, the ranks, each rank's part size and
 * extra word, this rank's global offset and the global count; `work`: 4
 * words per rank for later gathers (clprim__mpi_gather_status). */
struct clprim_mpi_part {
  int rank, size;
  uint64_t n_local, offset, total;
  uint64_t *n_of, *extra_of, *work;
};
/* The check: one MPI_Allreduce (max) of (error flag, hash, ~hash), so that
 * a rank with an error (or no memory for what follows) returns it and the
 * others CLPRIM_MPI_ERROR_REMOTE, and differing hashes give
 * CLPRIM_MPI_ERROR_MISMATCH everywhere; then one MPI_Allgather of
 * (n_local, extra) per rank. On success *p is to be freed. */
clprim_status clprim__mpi_part_check(clprim_context *ctx, MPI_Comm comm, clprim_status local,
                                     uint64_t hash, uint64_t n_local, uint64_t extra,
                                     struct clprim_mpi_part *p);
void clprim__mpi_part_free(struct clprim_mpi_part *p);
/* After a local step: every rank learns whether any failed (one
 * MPI_Allreduce); the failed rank returns its error, the others
 * CLPRIM_MPI_ERROR_REMOTE. When one failed, ctx (may be NULL) of every
 * rank that did not keeps a text naming the lowest failed rank, its status
 * and its text (two collectives more, only then); differing hashes in the
 * check keep one naming the lowest rank whose arguments are not rank 0's. */
clprim_status clprim__mpi_agree(clprim_context *ctx, MPI_Comm comm, clprim_status local);
/* An MPI_Allgather of `words` words per rank with the local status in
 * front (all: (words + 1) per rank, allocated by every rank before: a
 * failed allocation must be agreed on first; record: words + 1); the
 * status as clprim__mpi_agree gives it. all[(words + 1) r + 1 ...] is rank
 * r's record. */
clprim_status clprim__mpi_gather_status(clprim_context *ctx, MPI_Comm comm, int size,
                                        clprim_status local, const uint64_t *mine, unsigned words,
                                        uint64_t *all, uint64_t *record);
/* A caller's range (the argument `name`), type and flags, checked outside
 * the calls that do the work (each takes the context for its check, so
 * that a refusal gets its text). */
clprim_status clprim__mpi_check_range(clprim_context *ctx, const char *name, clprim_buffer b,
                                      size_t elem, size_t n);
clprim_status clprim__mpi_check_type(clprim_context *ctx, const char *name, clprim_type type);
clprim_status clprim__mpi_check_flags(clprim_context *ctx, unsigned flags, unsigned allowed);
/* status, with the text "mpi: <format...>" on ctx (a check of the mpi
 * layer's own that fails; it takes the context for the text as the checks
 * above do). */
clprim_status clprim__mpi_fail(clprim_context *ctx, clprim_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- cl/mpi.cl (collectives.c) */

/* The build options of cl/mpi.cl for type (the same for its every kernel:
 * CPU runtimes build the whole file). */
void clprim__mpi_options(clprim_type type, char *options, size_t size);
/* x[0, n) += add (bits of type) in the caller's range, by cl/mpi.cl. */
clprim_status clprim__mpi_add_constant(clprim_context *ctx, clprim_type type, clprim_buffer range,
                                       size_t n, uint64_t add);

/* ---- distributed selection (selection.c) */

/* The common check of the selection calls and the sort (the check's hash
 * also covers more[0, more_bytes)); local_bad: this rank's arguments are
 * invalid. */
clprim_status clprim__mpi_nth_check(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                    clprim_type type, clprim_buffer in, unsigned flags,
                                    unsigned allowed, const void *more, size_t more_bytes,
                                    int local_bad, struct clprim_mpi_part *p);
/* The keys of the sorted distinct global ranks[0, count) of the parts `in`
 * (p: their check) to keys[]; approximate (count 1): *error the rank
 * distance. Collective. */
clprim_status clprim__mpi_select_ranks(clprim_context *ctx, MPI_Comm comm,
                                       const struct clprim_mpi_part *p, clprim_type type,
                                       clprim_buffer in, const uint64_t *ranks, size_t count,
                                       unsigned flags, int approximate, uint64_t *keys,
                                       uint64_t *error);
/* This rank's elements below and equal to each of the keys[0, nkeys)
 * (sorted, at most CLPRIM__NTH_SPLITTERS). Local. */
clprim_status clprim__mpi_count_around(clprim_context *ctx, const struct clprim_mpi_part *p,
                                       clprim_type type,
                                       clprim_buffer in, const uint64_t *keys, unsigned nkeys,
                                       uint64_t *below, uint64_t *equal);

#endif /* CLPRIM_MPI_MPI_H */
