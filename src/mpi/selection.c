/* selection.c: clprim_mpi's selection by rank, quantiles and top-k.
 *
 * Distributed selection runs the selection engine's levels
 * (engine/sample_select.c) on each rank's part, with a combine hook
 * (struct clprim_nth_combine) whose steps are this file's collectives:
 * the ranks' samples merged by weight into the splitters every rank
 * counts with (one gather to rank 0, one broadcast), the bucket counts
 * summed (one all-reduce), and the base case: sub-problems of at most
 * gather_max candidates on all ranks together gathered to every host and
 * sorted there (one all-gather of their sizes, one of their keys). Each
 * collective carries the ranks' statuses, so that a rank that fails stops
 * the others at the same step. The wanted ranks of one call (quantiles,
 * sort's splitters) go through the levels together, in passes of
 * DSEL_BATCH.
 *
 * ONE_RANK: on a communicator of one rank, selection (nth_element,
 * quantiles, approximate) and top-k run the plain call after the check: the
 * levels' round trips to the host and the collectives cost 15% (nth_element)
 * to 4 x (top-k) at 2^28 on the H100 (docs/SCALING.md). */
#include "mpi.h"

#include <stdlib.h>
#include <string.h>

#define SPLITTERS CLPRIM__NTH_SPLITTERS
#define BUCKETS NTH_BUCKETS

/* ---------------------------------------------- distributed selection */

/* Wanted ranks of one pass of the levels: more run in passes of this many
 * (the host's room and rank 0's gather grow with them). */
#define DSEL_BATCH 256

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}
struct weighted {
  uint64_t key, weight;
};
static int cmp_weighted(const void *a, const void *b) {
  return cmp_u64(&((const struct weighted *)a)->key, &((const struct weighted *)b)->key);
}

/* The 255 splitters of one sub-problem that every rank takes: the ranks'
 * samples (each splitter of rank r stands for len_r / 256 candidates)
 * merged by key, and cut at every 256th of their total weight. Rank r's
 * record starts at all[r stride]; at `at` in it its len_r, then its 255
 * splitters. */
static void merge_splitters(const uint64_t *all, int size, size_t stride, size_t at,
                            struct weighted *w, uint64_t *out) {
  size_t m = 0;
  uint64_t total = 0;
  int ranks = 0;
  for (int r = 0; r < size; ++r) {
    const uint64_t *rec = all + (size_t)r * stride + at;
    if (rec[0] == 0) continue;
    for (unsigned j = 0; j < SPLITTERS; ++j)
      w[m].key = rec[1 + j], w[m].weight = rec[0], ++m;
    total += rec[0] * SPLITTERS;
    ++ranks;
  }
  /* Each rank's splitters are sorted: up to 8 ranks are merged in one
   * pass over their heads (rank 0 merges the samples of hundreds of
   * sub-problems per level: qsort cost it milliseconds), more by qsort. */
  if (ranks <= 8) {
    struct weighted merged[8 * SPLITTERS];
    size_t head[8] = {0};
    for (size_t k = 0; k < m; ++k) {
      int best = -1;
      for (int r = 0; r < ranks; ++r)
        if (head[r] < SPLITTERS &&
            (best < 0 || w[r * SPLITTERS + head[r]].key < w[best * SPLITTERS + head[best]].key))
          best = r;
      merged[k] = w[best * SPLITTERS + head[best]++];
    }
    memcpy(w, merged, m * sizeof *w);
  } else {
    qsort(w, m, sizeof *w, cmp_weighted);
  }
  size_t k = 0;
  uint64_t run = m ? w[0].weight : 0;
  for (unsigned j = 0; j < SPLITTERS; ++j) {
    const double target = (double)total * (j + 1) / 256.0;
    while (k + 1 < m && (double)run < target)
      run += w[++k].weight;
    out[j] = m ? w[k].key : 0;
  }
}

/* One selection's collectives (the engine's combine hook, arg) and their
 * room for S sub-problems, allocated before the ranks agree to start (a
 * rank without it could not take part): record (a rank's samples, or its
 * parts' sizes), all and w (rank 0's gather and merge), merged (the
 * splitters broadcast, after a status word), counts (this rank's bucket
 * counts after a status word, then the sums), lens and lens_all (the
 * parts' sizes here and on every rank). */
struct dsel {
  clprim_context *ctx;
  MPI_Comm comm;
  int rank, size;
  clprim_type type;
  int count_nans; /* level 0 rejects NaNs (CLPRIM_NTH_REJECT_NAN on floats) */
  uint64_t *record, *all, *merged, *counts, *lens, *lens_all;
  struct weighted *w;
};

static void dsel_free(struct dsel *d) {
  free(d->record), free(d->all), free(d->merged), free(d->counts), free(d->lens);
  free(d->lens_all), free(d->w);
}

static clprim_status dsel_alloc(struct dsel *d, size_t S) {
  const size_t P = (size_t)d->size, rec = 1 + S * (SPLITTERS + 1);
  d->record = malloc(rec * 8), d->merged = malloc((1 + S * SPLITTERS) * 8);
  d->counts = malloc(2 * (S * BUCKETS + 1) * 8);
  d->lens = malloc((S + 1) * 8), d->lens_all = malloc(P * (S + 1) * 8);
  if (d->rank == 0) d->all = malloc(P * rec * 8), d->w = malloc(P * SPLITTERS * sizeof *d->w);
  const int ok = d->record && d->merged && d->counts && d->lens && d->lens_all &&
                 (d->rank != 0 || (d->all && d->w));
  return ok ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
}

static clprim_status dsel_agree(void *arg, clprim_status local) {
  const struct dsel *d = arg;
  return clprim__mpi_agree(d->ctx, d->comm, local);
}

/* Each rank's record (its status, then per sub-problem its candidates and
 * its sample's splitters) to rank 0, which merges each sub-problem's and
 * broadcasts them (a status word first). */
static clprim_status dsel_splitters(void *arg, clprim_status local, size_t S,
                                    const uint64_t *lens, uint64_t *splitters) {
  struct dsel *d = arg;
  const size_t rec = 1 + S * (SPLITTERS + 1);
  uint64_t *record = d->record, *merged = d->merged;
  memset(record, 0, rec * 8);
  record[0] = local != CLPRIM_SUCCESS;
  for (size_t s = 0; local == CLPRIM_SUCCESS && s < S; ++s) {
    record[1 + s * (SPLITTERS + 1)] = lens[s];
    memcpy(record + 2 + s * (SPLITTERS + 1), splitters + s * SPLITTERS, SPLITTERS * 8);
  }
  CLPRIM__MPI_OK(
      MPI_Gather(record, (int)rec, MPI_UINT64_T, d->all, (int)rec, MPI_UINT64_T, 0, d->comm));
  merged[0] = 0;
  if (d->rank == 0) {
    for (int r = 0; r < d->size; ++r)
      merged[0] |= d->all[(size_t)r * rec];
    for (size_t s = 0; !merged[0] && s < S; ++s)
      merge_splitters(d->all, d->size, rec, 1 + s * (SPLITTERS + 1), d->w,
                      merged + 1 + s * SPLITTERS);
  }
  CLPRIM__MPI_OK(MPI_Bcast(merged, (int)(1 + S * SPLITTERS), MPI_UINT64_T, 0, d->comm));
  if (local != CLPRIM_SUCCESS) return local;
  if (merged[0]) return CLPRIM_MPI_ERROR_REMOTE;
  memcpy(splitters, merged + 1, S * SPLITTERS * 8);
  return CLPRIM_SUCCESS;
}

/* The bucket counts summed over the ranks, with a status word. */
static clprim_status dsel_counts(void *arg, clprim_status local, size_t S, uint64_t *counts) {
  struct dsel *d = arg;
  const size_t words = S * BUCKETS + 1;
  uint64_t *mine = d->counts, *sums = d->counts + words;
  memcpy(mine, counts, (words - 1) * 8);
  mine[words - 1] = local != CLPRIM_SUCCESS;
  CLPRIM__MPI_OK(
      MPI_Allreduce(mine, sums, (int)words, MPI_UINT64_T, MPI_SUM, d->comm));
  if (local != CLPRIM_SUCCESS) return local;
  if (sums[words - 1]) return CLPRIM_MPI_ERROR_REMOTE;
  memcpy(counts, sums, (words - 1) * 8);
  return CLPRIM_SUCCESS;
}

/* The base case: every rank's candidates of the parts gathered (one
 * all-gather of their counts with the statuses, one all-gatherv of the
 * keys) and sorted on every host; their wanted ranks answered. */
static clprim_status dsel_finish(void *arg, clprim_status local, int elements,
                                 const struct clprim_nth_part *parts, size_t nparts,
                                 const uint64_t *ranks, uint64_t *keys) {
  struct dsel *d = arg;
  const int P = d->size;
  size_t mine_n = 0, every_n = 0, most = 0;
  for (size_t j = 0; j < nparts; ++j) {
    mine_n += parts[j].len, every_n += parts[j].all;
    if (parts[j].all > most) most = parts[j].all;
  }
  const size_t es = clprim_type_size(d->type);
  unsigned char *raw = malloc((mine_n + 1) * es);
  uint64_t *mine = malloc((mine_n + 1) * 8), *every = malloc((every_n + 1) * 8);
  uint64_t *sorted = malloc((most + 1) * 8), *lens = d->lens, *lens_all = d->lens_all;
  int *counts = malloc(sizeof(int) * 2 * (size_t)P), *displs = counts ? counts + P : NULL;
  clprim_status st = local;
  if (st == CLPRIM_SUCCESS && !(raw && mine && every && sorted && counts))
    st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  size_t at = 0;
  cl_command_queue queue = clprim_context_queue(d->ctx);
  for (size_t j = 0; j < nparts; ++j) {
    const struct clprim_nth_part *u = &parts[j];
    if (st == CLPRIM_SUCCESS && u->len > 0)
      st = (clprim_status)clEnqueueReadBuffer(queue, u->buf, CL_FALSE, u->offset * es, u->len * es,
                                              raw + at * es, 0, NULL, NULL);
    lens[j] = u->len;
    at += u->len;
  }
  if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(queue);
  for (size_t i = 0; st == CLPRIM_SUCCESS && i < mine_n; ++i) {
    uint64_t bits = 0;
    memcpy(&bits, raw + i * es, es); /* little-endian hosts */
    mine[i] = elements ? clprim__key_of_bits(d->type, bits) : bits;
  }
  /* Every rank's counts per part (and status), then the keys. */
  st = clprim__mpi_gather_status(d->ctx, d->comm, P, st, lens, (unsigned)nparts, lens_all,
                                 d->record);
  int total = 0;
  for (int q = 0; st == CLPRIM_SUCCESS && q < P; ++q) {
    uint64_t n = 0;
    for (size_t x = 0; x < nparts; ++x)
      n += lens_all[(nparts + 1) * (size_t)q + 1 + x];
    counts[q] = (int)n, displs[q] = total, total += (int)n;
  }
  if (st == CLPRIM_SUCCESS && MPI_Allgatherv(mine, (int)mine_n, MPI_UINT64_T, every, counts, displs,
                                             MPI_UINT64_T, d->comm) != MPI_SUCCESS)
    st = CLPRIM_MPI_ERROR_MPI;
  /* Part j's keys: from each rank's block, after its earlier ones. */
  const uint64_t nan_key = es == 4 ? 0xFFFFFFFFull : UINT64_MAX;
  for (size_t j = 0; st == CLPRIM_SUCCESS && j < nparts; ++j) {
    const struct clprim_nth_part *u = &parts[j];
    size_t n = 0;
    for (int q = 0; q < P; ++q) {
      const uint64_t *rec = lens_all + (nparts + 1) * (size_t)q + 1;
      size_t from = (size_t)displs[q];
      for (size_t x = 0; x < j; ++x)
        from += rec[x];
      memcpy(sorted + n, every + from, rec[j] * 8);
      n += rec[j];
    }
    qsort(sorted, n, 8, cmp_u64);
    if (elements && d->count_nans && n > 0 && sorted[n - 1] == nan_key) {
      /* every rank saw the same keys */
      st = clprim__mpi_fail(d->ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
                            "in holds a NaN (CLPRIM_NTH_REJECT_NAN)");
      break;
    }
    for (unsigned r = u->r0; r < u->r1; ++r)
      keys[r] = sorted[ranks[r] - u->first];
  }
  free(raw), free(mine), free(every), free(sorted), free(counts);
  return st;
}

clprim_status clprim__mpi_select_ranks(clprim_context *ctx, MPI_Comm comm,
                                       const struct clprim_mpi_part *p, clprim_type type,
                                       clprim_buffer in, const uint64_t *ranks, size_t count,
                                       unsigned flags, int approximate, uint64_t *keys,
                                       uint64_t *error) {
  struct dsel d;
  memset(&d, 0, sizeof d);
  d.ctx = ctx, d.comm = comm, d.rank = p->rank, d.size = p->size, d.type = type;
  d.count_nans = (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE) && (flags & CLPRIM_NTH_REJECT_NAN);
  /* The candidates are gathered once at most gather_max are left on all
   * ranks together (the knob lowers it: tests). */
  long long gather_max;
  clprim__tuned(ctx, &clprim__family_mpi, 0, 0, &gather_max);
  const struct clprim_nth_combine combine = {
      dsel_splitters,
      dsel_counts,
      dsel_finish,
      dsel_agree,
      gather_max >= 1 && gather_max < CLPRIM_MPI_GATHER_MAX ? (uint64_t)gather_max
                                                            : CLPRIM_MPI_GATHER_MAX,
      (uint64_t)p->rank * 7919ull,
      &d};
  clprim_status st = clprim__call_begin(ctx, "mpi");
  const int begun = st == CLPRIM_SUCCESS;
  cl_mem in_mem = NULL;
  if (st == CLPRIM_SUCCESS && p->n_local > 0)
    st = clprim__range(ctx, "in", in, clprim_type_size(type), p->n_local, CLPRIM__READ, &in_mem);
  if (st == CLPRIM_SUCCESS)
    st = dsel_alloc(&d, count < DSEL_BATCH ? count : DSEL_BATCH);
  st = clprim__mpi_agree(ctx, comm, st);
  uint64_t e = 0;
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; r += DSEL_BATCH) {
    const size_t batch = count - r < DSEL_BATCH ? count - r : DSEL_BATCH;
    st = clprim__nth_select_combined(ctx, type, in_mem, 0, p->n_local, p->total, ranks + r,
                                     (unsigned)batch, flags, approximate, &combine, keys + r,
                                     error ? error : &e);
  }
  dsel_free(&d);
  return begun ? clprim__call_end(ctx, st) : st;
}

/* The common check of the selection calls; hash covers extra words. */
clprim_status clprim__mpi_nth_check(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                               clprim_type type, clprim_buffer in, unsigned flags,
                               unsigned allowed, const void *more, size_t more_bytes,
                               int local_bad, struct clprim_mpi_part *p) {
  clprim_status st =
      local_bad ? clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, "an output is required")
                : clprim__mpi_check_type(ctx, "type", type);
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_flags(ctx, flags, allowed);
  if (st == CLPRIM_SUCCESS && n_local >= ((uint64_t)1 << 32))
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "n_local (%zu) is 2^32 or more",
                          n_local);
  if (st == CLPRIM_SUCCESS)
    st = clprim__mpi_check_range(ctx, "in", in, clprim_type_size(type), n_local);
  uint64_t hash = CLPRIM__MPI_HASH_START;
  clprim__mpi_hash_add(&hash, &type, sizeof type);
  clprim__mpi_hash_add(&hash, &flags, sizeof flags);
  if (more_bytes) clprim__mpi_hash_add(&hash, more, more_bytes);
  return clprim__mpi_part_check(ctx, comm, st, hash, n_local, 0, p);
}

clprim_status clprim_mpi_quantiles(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                   clprim_type type, clprim_buffer in, const uint64_t *ranks,
                                   size_t count, unsigned flags, clprim_value *values) {
  const int bad = !ranks || !values || count == 0;
  uint64_t h = CLPRIM__MPI_HASH_START;
  if (!bad) clprim__mpi_hash_add(&h, ranks, count * 8);
  const uint64_t more[2] = {count, h};
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_nth_check(ctx, comm, n_local, type, in, flags, CLPRIM_NTH_REJECT_NAN,
                                     more, sizeof more, bad, &p));
  clprim_status st = CLPRIM_SUCCESS;
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; ++r)
    if (ranks[r] >= p.total) /* alike on every rank */
      st = clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
                            "ranks[%zu] (%llu) is not below the ranks' n (%llu)", r,
                            (unsigned long long)ranks[r], (unsigned long long)p.total);
  uint64_t *sorted = NULL, *keys = NULL;
  size_t distinct = 0;
  if (st == CLPRIM_SUCCESS && p.size == 1) { /* one rank: the plain call (ONE_RANK) */
    st = clprim_quantiles(ctx, n_local, type, in, ranks, count, flags, values, clprim_buf(NULL));
    clprim__mpi_part_free(&p);
    return st;
  }
  if (st == CLPRIM_SUCCESS) {
    sorted = malloc(count * 8), keys = malloc(count * 8);
    st = clprim__mpi_agree(ctx, comm,
                           sorted && keys ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  }
  if (st == CLPRIM_SUCCESS) {
    memcpy(sorted, ranks, count * 8);
    distinct = clprim__distinct_ranks(sorted, count);
    st = clprim__mpi_select_ranks(ctx, comm, &p, type, in, sorted, distinct, flags, 0, keys, NULL);
  }
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; ++r)
    values[r] = clprim__value_of_key(type, keys[clprim__rank_slot(sorted, distinct, ranks[r])]);
  free(sorted);
  free(keys);
  clprim__mpi_part_free(&p);
  return st;
}

clprim_status clprim_mpi_nth_element(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                     clprim_type type, clprim_buffer in, uint64_t k,
                                     unsigned flags, clprim_value *value) {
  return clprim_mpi_quantiles(ctx, comm, n_local, type, in, &k, 1, flags, value);
}

clprim_status clprim_mpi_nth_element_approx(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                            clprim_type type, clprim_buffer in, uint64_t k,
                                            unsigned flags, clprim_value *value,
                                            uint64_t *rank_error) {
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_nth_check(ctx, comm, n_local, type, in, flags, CLPRIM_NTH_REJECT_NAN, &k,
                                     sizeof k, !value, &p));
  clprim_status st = k >= p.total ? clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
                                                     "k (%llu) is not below the ranks' n (%llu)",
                                                     (unsigned long long)k,
                                                     (unsigned long long)p.total)
                                   : CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS && p.size == 1) { /* one rank: the plain call (ONE_RANK) */
    st = clprim_nth_element_approx(ctx, n_local, type, in, k, flags, value, rank_error,
                                   clprim_buf(NULL));
    clprim__mpi_part_free(&p);
    return st;
  }
  uint64_t key = 0, error = 0;
  if (st == CLPRIM_SUCCESS)
    st = clprim__mpi_select_ranks(ctx, comm, &p, type, in, &k, 1, flags, 1, &key, &error);
  if (st == CLPRIM_SUCCESS) {
    *value = clprim__value_of_key(type, key);
    if (rank_error) *rank_error = error;
  }
  clprim__mpi_part_free(&p);
  return st;
}

/* ---------------------------------------------------------------- top-k */

/* Each rank's counts of its elements below and equal to the keys (one
 * counting pass with the keys as splitters: key j's equality bucket is
 * that of its first copy, the buckets before it hold the keys below). */
clprim_status clprim__mpi_count_around(clprim_context *ctx, const struct clprim_mpi_part *p,
                                       clprim_type type, clprim_buffer in, const uint64_t *keys,
                                       unsigned nkeys, uint64_t *below, uint64_t *equal) {
  uint64_t splitters[SPLITTERS], local[BUCKETS];
  CLPRIM_CHECK(clprim__call_begin(ctx, "mpi"));
  cl_mem in_mem = NULL;
  clprim_status st = CLPRIM_SUCCESS;
  if (p->n_local > 0)
    st = clprim__range(ctx, "in", in, clprim_type_size(type), p->n_local, CLPRIM__READ, &in_mem);
  /* keys (sorted) as splitters, the last repeated */
  for (unsigned j = 0; j < SPLITTERS; ++j)
    splitters[j] = keys[j < nkeys ? j : nkeys - 1];
  if (st == CLPRIM_SUCCESS)
    st = clprim__nth_count_by_splitters(ctx, type, in_mem, p->n_local, splitters, local);
  for (unsigned j = 0; st == CLPRIM_SUCCESS && j < nkeys; ++j) {
    unsigned first = j;
    while (first > 0 && splitters[first - 1] == splitters[j])
      --first;
    uint64_t b = 0;
    for (unsigned q = 0; q < 2 * first + 1; ++q)
      b += local[q];
    below[j] = b, equal[j] = local[2 * first + 1];
  }
  return clprim__call_end(ctx, st);
}

/* A rank's share of the top-k from its candidates (its best kl elements by
 * clprim_topk: values in input order and their uint32 positions): the best
 * `mine` of them, which are its best `mine` elements with the same ties
 * (lowest positions first), to values and / or indices (global: position
 * plus offset; uint64 with CLPRIM_INDICES_64), in input order. */
static clprim_status share_of_candidates(clprim_context *ctx, clprim_type type, cl_mem cand,
                                         cl_mem cand_index, uint64_t kl, uint64_t mine,
                                         unsigned flags, clprim_buffer values,
                                         clprim_buffer indices, uint64_t offset) {
  cl_int err;
  cl_mem picked =
      clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_READ_WRITE, mine * 4, NULL, &err);
  clprim_status st = (clprim_status)err;
  if (st == CLPRIM_SUCCESS)
    st = clprim_topk(ctx, kl, type, clprim_buf(cand), mine, flags & CLPRIM_TOPK_SMALLEST,
                     clprim_buf(NULL), clprim_buf(picked));
  const int index64 = (flags & CLPRIM_INDICES_64) != 0;
  if (st == CLPRIM_SUCCESS) st = clprim__call_begin(ctx, "mpi");
  if (st == CLPRIM_SUCCESS) {
    cl_mem v = picked, x = picked; /* unused outputs: any buffer, never written */
    cl_kernel k;
    char options[160];
    clprim__mpi_options(type, options, sizeof options);
    if (values.mem)
      st = clprim__range(ctx, "values", values, clprim_type_size(type), mine, CLPRIM__OUT_ALL, &v);
    if (st == CLPRIM_SUCCESS && indices.mem)
      st = clprim__range(ctx, "indices", indices, index64 ? 8 : 4, mine, CLPRIM__OUT_ALL, &x);
    if (st == CLPRIM_SUCCESS) st = clprim__kernel(ctx, "mpi.cl", options, "mpi_pick", &k);
    const cl_ulong n64 = mine, off64 = offset;
    const cl_uint want = (values.mem ? 1u : 0u) | (indices.mem ? (index64 ? 4u : 2u) : 0u);
    if (st == CLPRIM_SUCCESS)
      st = clprim__set_args(k, 9, sizeof cand, &cand, sizeof cand_index, &cand_index, sizeof picked,
                            &picked, sizeof n64, &n64, sizeof v, &v, sizeof x, &x, sizeof x, &x,
                            sizeof off64, &off64, sizeof want, &want);
    const struct clprim_launch l = clprim__launch(ctx);
    size_t groups = (mine + l.wg - 1) / l.wg;
    if (groups > l.max_groups) groups = l.max_groups;
    if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k, groups, l.wg);
    st = clprim__call_end(ctx, st);
  }
  if (picked) clReleaseMemObject(picked);
  return st;
}

clprim_status clprim_mpi_topk(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                              clprim_type type, clprim_buffer in, uint64_t k, unsigned flags,
                              clprim_buffer values, clprim_buffer indices,
                              uint64_t *local_count, uint64_t *global_offset) {
  const unsigned allowed = CLPRIM_TOPK_SMALLEST | CLPRIM_INDICES_64 | CLPRIM_NTH_REJECT_NAN;
  const int outputs = (values.mem != NULL) | (indices.mem != NULL) << 1;
  struct clprim_mpi_part p;
  const uint64_t more[2] = {k, (uint64_t)outputs};
  CLPRIM_CHECK(clprim__mpi_nth_check(ctx, comm, n_local, type, in, flags, allowed, more,
                                     sizeof more, outputs == 0, &p));
  const int index64 = (flags & CLPRIM_INDICES_64) != 0,
            smallest = (flags & CLPRIM_TOPK_SMALLEST) != 0;
  clprim_status st = CLPRIM_SUCCESS;
  if (k > p.total)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
                          "k (%llu) is more than the ranks' n (%llu)", (unsigned long long)k,
                          (unsigned long long)p.total);
  else if (indices.mem && !index64 && p.total > UINT32_MAX)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
                          "the ranks hold %llu elements: 32-bit indices need "
                          "CLPRIM_INDICES_64",
                          (unsigned long long)p.total);
  uint64_t mine = 0, before = 0;
  if (st == CLPRIM_SUCCESS && k > 0 && p.size == 1) { /* one rank: the plain call (ONE_RANK) */
    st = clprim_topk(ctx, n_local, type, in, k, flags, values, indices);
    mine = k;
  } else if (st == CLPRIM_SUCCESS && k > 0) {
    /* Local candidates, when they are at most half the elements: each
     * rank's own best min(k, n_local) (clprim_topk) hold every element of
     * the global top-k that the rank has, and as many of the threshold's
     * ties as the rank can be given, so the threshold and the counts around
     * it come from the candidates alone (with k P <= CLPRIM_MPI_GATHER_MAX
     * one gather). Else from the whole parts. */
    uint64_t candidates = 0;
    for (int r = 0; r < p.size; ++r)
      candidates += p.n_of[r] < k ? p.n_of[r] : k;
    struct clprim_mpi_part cp;
    const struct clprim_mpi_part *sp = &p; /* what the selection runs on */
    clprim_buffer sin = in;
    unsigned sflags = flags;
    cl_mem cand = NULL, cand_index = NULL;
    int cand_part = 0;
    const uint64_t kl = n_local < k ? n_local : k;
    if (2 * candidates <= p.total) {
      clprim_status local = CLPRIM_SUCCESS;
      if (kl > 0) {
        cl_int err, err2;
        cand = clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_READ_WRITE,
                              kl * clprim_type_size(type), NULL, &err);
        cand_index =
            clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_READ_WRITE, kl * 4, NULL, &err2);
        local = (clprim_status)(err != CL_SUCCESS ? err : err2);
        if (local == CLPRIM_SUCCESS)
          local = clprim_topk(ctx, n_local, type, in, kl,
                              flags & (CLPRIM_TOPK_SMALLEST | CLPRIM_NTH_REJECT_NAN),
                              clprim_buf(cand), clprim_buf(cand_index));
      }
      /* The only INVALID_ARGUMENT left is a NaN refused: refused on every
       * rank (its flag rides in the check's extra word). */
      const int nan = local == CLPRIM_ERROR_INVALID_ARGUMENT;
      st = clprim__mpi_part_check(ctx, comm, nan ? CLPRIM_SUCCESS : local, CLPRIM__MPI_HASH_START,
                                  kl, (uint64_t)nan, &cp);
      cand_part = st == CLPRIM_SUCCESS;
      for (int r = 0; cand_part && r < cp.size; ++r)
        if (cp.extra_of[r])
          st = clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
                                "in holds a NaN (CLPRIM_NTH_REJECT_NAN)");
      sp = &cp, sin = clprim_buf(cand), sflags = 0;
    }
    /* The threshold: the k-th best, by distributed selection. */
    const uint64_t rank = smallest ? k - 1 : sp->total - k;
    uint64_t t = 0, below = 0, equal = 0;
    if (st == CLPRIM_SUCCESS)
      st = clprim__mpi_select_ranks(ctx, comm, sp, type, sin, &rank, 1, sflags, 0, &t, NULL);
    const int selected = st == CLPRIM_SUCCESS;
    if (st == CLPRIM_SUCCESS)
      st = clprim__mpi_count_around(ctx, sp, type, sin, &t, 1, &below, &equal);
    /* beyond: the local elements strictly better than t */
    const uint64_t beyond = smallest ? below : sp->n_local - below - equal;
    if (cand_part) clprim__mpi_part_free(&cp);
    const uint64_t words[2] = {beyond, equal};
    uint64_t record[3];
    uint64_t *all = malloc((size_t)p.size * 3 * 8);
    if (selected && st == CLPRIM_SUCCESS && !all) st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    if (selected) st = clprim__mpi_agree(ctx, comm, st); /* also: every rank can receive */
    if (st == CLPRIM_SUCCESS)
      st = clprim__mpi_gather_status(ctx, comm, p.size, st, words, 2, all, record);
    if (st == CLPRIM_SUCCESS) {
      /* The ties go to the lowest global indices: ranks in order. */
      uint64_t better = 0, ties_before = 0;
      for (int r = 0; r < p.size; ++r)
        better += all[3 * r + 1];
      const uint64_t ties = k - better;
      for (int r = 0; r < p.size; ++r) {
        const uint64_t left = ties > ties_before ? ties - ties_before : 0;
        const uint64_t take = all[3 * r + 2] < left ? all[3 * r + 2] : left;
        const uint64_t share = all[3 * r + 1] + take;
        if (r < p.rank) before += share;
        if (r == p.rank) mine = share;
        ties_before += all[3 * r + 2];
      }
    }
    free(all);
    const int agreed = st == CLPRIM_SUCCESS;
    /* This rank's share: its own top-k (ties to its lowest indices); from
     * its candidates where it has them (a pass over k keys, not over the
     * part again). */
    if (st == CLPRIM_SUCCESS && mine > 0 && cand)
      st = share_of_candidates(ctx, type, cand, cand_index, kl, mine, flags, values, indices,
                               p.offset);
    if (st == CLPRIM_SUCCESS && mine > 0 && !cand)
      st = clprim_topk(ctx, n_local, type, in, mine,
                       flags & (CLPRIM_TOPK_SMALLEST | CLPRIM_INDICES_64), values, indices);
    if (st == CLPRIM_SUCCESS && mine > 0 && !cand && indices.mem && p.offset > 0)
      st = clprim__mpi_add_constant(ctx, index64 ? CLPRIM_UINT64 : CLPRIM_UINT32, indices, mine,
                                    p.offset);
    if (cand) clReleaseMemObject(cand);
    if (cand_index) clReleaseMemObject(cand_index);
    if (agreed) st = clprim__mpi_agree(ctx, comm, st);
  }
  clprim__mpi_part_free(&p);
  if (st == CLPRIM_SUCCESS) {
    if (local_count) *local_count = mine;
    if (global_offset) *global_offset = before;
  }
  return st;
}
