/* context.c: clprim over MPI (include/clprim/clprim_mpi.h), one rank per
 * device: its contexts, and the collective check that every call begins
 * with (one all-reduce of each rank's status and argument hash, one
 * all-gather of the part sizes), with the agreement on statuses after
 * local steps. The calls: collectives.c (reductions, histogram, scan,
 * compaction), selection.c (selection by rank, quantiles, top-k), sort.c
 * (the sample sort). Each runs the families' own work on each device and
 * combines what the ranks must share by MPI. */
#include "mpi.h"
#include "../families.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *clprim_mpi_status_name(int status) {
  switch (status) {
  case (int)CLPRIM_MPI_ERROR_MISMATCH:
    return "CLPRIM_MPI_ERROR_MISMATCH";
  case (int)CLPRIM_MPI_ERROR_REMOTE:
    return "CLPRIM_MPI_ERROR_REMOTE";
  case (int)CLPRIM_MPI_ERROR_MPI:
    return "CLPRIM_MPI_ERROR_MPI";
  case (int)CLPRIM_MPI_ERROR_INTERNAL:
    return "CLPRIM_MPI_ERROR_INTERNAL";
  default:
    return clprim_status_name(status);
  }
}

/* ---------------------------------------------------- the collective check */

void clprim__mpi_hash_add(uint64_t *h, const void *data, size_t bytes) {
  const unsigned char *b = data;
  for (size_t i = 0; i < bytes; ++i)
    *h = (*h ^ b[i]) * 0x100000001B3ull;
}

void clprim__mpi_part_free(struct clprim_mpi_part *p) {
  free(p->n_of);
  p->n_of = p->extra_of = p->work = NULL;
}

/* The text of a rank that did not fail, when another did (every rank
 * knows that one did, so all take part): the lowest failed rank's status
 * and text (one MPI_Allreduce for the rank, one MPI_Bcast from it), kept
 * as "mpi: rank R failed with S (NAME): <its text>". The ranks that failed
 * keep their own text. A context another thread is in a call on keeps its
 * text. */
static void explain_remote(clprim_context *ctx, MPI_Comm comm, clprim_status local) {
  int rank = 0, first = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return;
  const int mine = local != CLPRIM_SUCCESS ? rank : INT_MAX;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return;
  struct {
    int status;
    char text[CLPRIM__ERROR_TEXT];
  } failed;
  memset(&failed, 0, sizeof failed);
  if (rank == first) {
    failed.status = (int)local;
    snprintf(failed.text, sizeof failed.text, "%s", clprim_context_last_error(ctx));
  }
  if (MPI_Bcast(&failed, (int)sizeof failed, MPI_BYTE, first, comm) != MPI_SUCCESS) return;
  if (local != CLPRIM_SUCCESS || !ctx || clprim__hold(ctx, "mpi") != CLPRIM_SUCCESS) return;
  failed.text[sizeof failed.text - 1] = 0;
  clprim__fail(ctx, CLPRIM_MPI_ERROR_REMOTE, "rank %d failed with %d (%s)%s%s", first,
               failed.status, clprim_mpi_status_name(failed.status), failed.text[0] ? ": " : "",
               failed.text);
  clprim__unhold(ctx, CLPRIM_MPI_ERROR_REMOTE);
}

/* Differing arguments: every rank learns the lowest rank whose hash is not
 * rank 0's (one MPI_Bcast, one MPI_Allreduce) and keeps "mpi: the arguments
 * that must agree differ between ranks (rank R's are not rank 0's: ...)". */
static void explain_mismatch(clprim_context *ctx, MPI_Comm comm, uint64_t hash) {
  int rank = 0, first = 0;
  uint64_t root = hash;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
      MPI_Bcast(&root, 1, MPI_UINT64_T, 0, comm) != MPI_SUCCESS)
    return;
  const int mine = hash != root ? rank : INT_MAX;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return;
  if (!ctx || clprim__hold(ctx, "mpi") != CLPRIM_SUCCESS) return;
  clprim__fail(ctx, CLPRIM_MPI_ERROR_MISMATCH,
               "the arguments that must agree differ between ranks (rank %d's are not rank 0's: "
               "the type, a count such as k or bins, the flags, a range or a predicate)",
               first);
  clprim__unhold(ctx, CLPRIM_MPI_ERROR_MISMATCH);
}

/* The check: one MPI_Allreduce (max) of (error flag, hash, ~hash), so that
 * a rank with an error (or no memory for what follows) returns it and the
 * others CLPRIM_MPI_ERROR_REMOTE, and differing hashes give
 * CLPRIM_MPI_ERROR_MISMATCH everywhere; then one MPI_Allgather of
 * (n_local, extra) per rank. */
clprim_status clprim__mpi_part_check(clprim_context *ctx, MPI_Comm comm, clprim_status local,
                                     uint64_t hash, uint64_t n_local, uint64_t extra,
                                     struct clprim_mpi_part *p) {
  memset(p, 0, sizeof *p);
  if (comm == MPI_COMM_NULL)
    return clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, "comm is MPI_COMM_NULL");
  CLPRIM__MPI_OK(MPI_Comm_rank(comm, &p->rank));
  CLPRIM__MPI_OK(MPI_Comm_size(comm, &p->size));
  const size_t P = (size_t)p->size;
  p->n_of = malloc(P * 6 * 8);
  if (!p->n_of && local == CLPRIM_SUCCESS) local = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  uint64_t mine[3] = {local != CLPRIM_SUCCESS, hash, ~hash}, any[3];
  clprim_status st = CLPRIM_SUCCESS;
  if (MPI_Allreduce(mine, any, 3, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    st = CLPRIM_MPI_ERROR_MPI;
  else if (any[0]) {
    st = local != CLPRIM_SUCCESS ? local : CLPRIM_MPI_ERROR_REMOTE;
    explain_remote(ctx, comm, local);
  } else if (any[1] != hash || any[2] != ~hash) {
    st = CLPRIM_MPI_ERROR_MISMATCH;
    explain_mismatch(ctx, comm, hash);
  }
  uint64_t part[2] = {n_local, extra};
  p->extra_of = p->n_of + P;
  p->work = p->n_of + 2 * P;
  if (st == CLPRIM_SUCCESS &&
      MPI_Allgather(part, 2, MPI_UINT64_T, p->work, 2, MPI_UINT64_T, comm) != MPI_SUCCESS)
    st = CLPRIM_MPI_ERROR_MPI;
  if (st != CLPRIM_SUCCESS) {
    clprim__mpi_part_free(p);
    return st;
  }
  p->n_local = n_local;
  for (size_t r = 0; r < P; ++r) {
    p->n_of[r] = p->work[2 * r];
    p->extra_of[r] = p->work[2 * r + 1];
    if ((int)r < p->rank) p->offset += p->n_of[r];
    p->total += p->n_of[r];
  }
  return CLPRIM_SUCCESS;
}

/* After a local step: every rank learns whether any failed (one
 * MPI_Allreduce); the failed rank returns its error, the others
 * CLPRIM_MPI_ERROR_REMOTE. */
clprim_status clprim__mpi_agree(clprim_context *ctx, MPI_Comm comm, clprim_status local) {
  int bad = local != CLPRIM_SUCCESS, any = 0;
  CLPRIM__MPI_OK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
  if (any) explain_remote(ctx, comm, local);
  return local != CLPRIM_SUCCESS ? local : any ? CLPRIM_MPI_ERROR_REMOTE : CLPRIM_SUCCESS;
}

/* An MPI_Allgather of `words` words per rank (all: (words + 1) per rank,
 * allocated by every rank before: a failed allocation must be agreed on
 * first) with the local status in front; the status as clprim__mpi_agree() gives it.
 * all[(words + 1) r + 1 ...] is rank r's record. */
clprim_status clprim__mpi_gather_status(clprim_context *ctx, MPI_Comm comm, int size,
                                        clprim_status local, const uint64_t *mine, unsigned words,
                                        uint64_t *all, uint64_t *record) {
  record[0] = (uint64_t)(local != CLPRIM_SUCCESS);
  memcpy(record + 1, mine, words * 8);
  CLPRIM__MPI_OK(
      MPI_Allgather(record, (int)words + 1, MPI_UINT64_T, all, (int)words + 1, MPI_UINT64_T, comm));
  int any = 0;
  for (int r = 0; r < size && !any; ++r)
    any = all[(words + 1) * (size_t)r] != 0;
  if (any) explain_remote(ctx, comm, local);
  return local != CLPRIM_SUCCESS ? local : any ? CLPRIM_MPI_ERROR_REMOTE : CLPRIM_SUCCESS;
}

/* A caller's range, type and flags, checked outside the calls that do the
 * work: each takes the context for the moment of its check, so that what
 * it refuses gets a text (clprim_context_last_error) under the name "mpi". */
clprim_status clprim__mpi_check_range(clprim_context *ctx, const char *name, clprim_buffer b,
                                      size_t elem, size_t n) {
  if (!ctx) return CLPRIM_ERROR_INVALID_ARGUMENT;
  if (n == 0 && !b.mem) return CLPRIM_SUCCESS;
  CLPRIM_CHECK(clprim__hold(ctx, "mpi"));
  return clprim__unhold(ctx, clprim__check_buffer(ctx, name, b.mem, elem, b.offset, n));
}

clprim_status clprim__mpi_check_type(clprim_context *ctx, const char *name, clprim_type type) {
  if (!ctx) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__hold(ctx, "mpi"));
  return clprim__unhold(ctx, clprim__check_type(ctx, name, type));
}

clprim_status clprim__mpi_fail(clprim_context *ctx, clprim_status status, const char *format, ...) {
  if (!ctx || clprim__hold(ctx, "mpi") != CLPRIM_SUCCESS) return status;
  va_list ap;
  va_start(ap, format);
  clprim__vfail(ctx, status, format, ap);
  va_end(ap);
  return clprim__unhold(ctx, status);
}

clprim_status clprim__mpi_check_flags(clprim_context *ctx, unsigned flags, unsigned allowed) {
  if (!ctx) return CLPRIM_ERROR_INVALID_ARGUMENT;
  if (!(flags & ~allowed)) return CLPRIM_SUCCESS;
  CLPRIM_CHECK(clprim__hold(ctx, "mpi"));
  return clprim__unhold(ctx, clprim__check_flags(ctx, flags, allowed));
}

/* ------------------------------------------------------------ contexts */

clprim_status clprim_mpi_local_rank(MPI_Comm comm, int *local_rank) {
  if (!local_rank || comm == MPI_COMM_NULL) return CLPRIM_ERROR_INVALID_ARGUMENT;
  MPI_Comm node;
  CLPRIM__MPI_OK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  const int rc = MPI_Comm_rank(node, local_rank);
  MPI_Comm_free(&node);
  return rc == MPI_SUCCESS ? CLPRIM_SUCCESS : CLPRIM_MPI_ERROR_MPI;
}

/* The GPUs in clprim_list_devices order: counted (take = -1), or the
 * number `take` named "p:d" into name. */
struct gpu_walk {
  long take;
  unsigned seen;
  char *name;
  size_t size;
};
static int gpu_visit(cl_platform_id platform, cl_device_id device, unsigned p, unsigned d,
                     void *arg) {
  struct gpu_walk *w = arg;
  cl_device_type t = 0;
  (void)platform;
  clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof t, &t, NULL);
  if (!(t & CL_DEVICE_TYPE_GPU)) return 0;
  if ((long)w->seen++ != w->take) return 0;
  snprintf(w->name, w->size, "%u:%u", p, d);
  return 1;
}

/* "P:D" of GPU number `which` modulo the GPUs (clprim_list_devices order),
 * or "" when the host lists no GPU. */
static void gpu_name(unsigned which, char *name, size_t size) {
  struct gpu_walk w = {-1, 0, name, size};
  name[0] = '\0';
  clprim__for_each_device(gpu_visit, &w, NULL); /* count */
  if (w.seen == 0) return;
  w.take = (long)(which % w.seen), w.seen = 0;
  clprim__for_each_device(gpu_visit, &w, NULL);
}

/* clprim_mpi's knob: the distributed selection gathers the candidates once
 * at most gather_max are left (all ranks together; tests set 64 so that
 * small inputs run several distributed levels; -1: CLPRIM_MPI_GATHER_MAX).
 * Its contexts get the registry's families and this descriptor. */
static const struct clprim_knob mpi_knobs[] = {{"gather_max", 1, CLPRIM_MPI_GATHER_MAX}};
const struct clprim_family clprim__family_mpi = {"mpi", mpi_knobs, 1, NULL, 0, 0, NULL};
static const struct clprim_family *const mpi_families[] = {CLPRIM__FAMILY_LIST &clprim__family_mpi};
#define MPI_FAMILIES ((unsigned)(sizeof mpi_families / sizeof mpi_families[0]))

const char *clprim_mpi_context_create_error(void) {
  return clprim_context_last_error(NULL);
}

clprim_status clprim_mpi_context_create(clprim_context **ctx, MPI_Comm comm,
                                        const clprim_options *options) {
  clprim__create_begin();
  if (!ctx || comm == MPI_COMM_NULL)
    return clprim__create_fail(CLPRIM_ERROR_INVALID_ARGUMENT, "mpi_context_create: %s is NULL",
                               ctx ? "comm" : "ctx");
  int local_rank = 0;
  clprim_status st = clprim_mpi_local_rank(comm, &local_rank);
  if (st != CLPRIM_SUCCESS) return st;
  clprim_options o;
  clprim_options_init(&o);
  if (options) {
    if (options->size < sizeof(size_t))
      st = clprim__create_fail(CLPRIM_ERROR_INVALID_ARGUMENT,
                               "mpi_context_create: options->size (%zu) is too small (initialise "
                               "options with clprim_options_init)",
                               options->size);
    else
      memcpy(&o, options, options->size < sizeof o ? options->size : sizeof o), o.size = sizeof o;
  }
  char name[32];
  const char *env = getenv("CLPRIM_DEVICE");
  if (st == CLPRIM_SUCCESS && !o.device && !(env && *env)) {
    gpu_name((unsigned)local_rank, name, sizeof name);
    if (name[0]) o.device = name;
  }
  clprim_context *made = NULL;
  if (st == CLPRIM_SUCCESS) st = clprim__create(&made, NULL, &o, mpi_families, MPI_FAMILIES);
  /* A rank whose creation failed has its text (clprim_context_last_error
   * (NULL)); the others get one that names it, through the context they
   * made and then free. */
  st = clprim__mpi_agree(made, comm, st);
  if (st != CLPRIM_SUCCESS) {
    if (made && made->last_error[0])
      clprim__create_fail(st, "mpi_context_create: %s", made->last_error);
    clprim__create_fail(st, "mpi_context_create: failed with %d (%s)", (int)st,
                        clprim_mpi_status_name(st));
    clprim_context_free(made);
    return st;
  }
  *ctx = made;
  return CLPRIM_SUCCESS;
}
