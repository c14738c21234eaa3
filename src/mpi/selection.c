/* selection.c: clprim_mpi's selection by rank, quantiles and top-k.
 *
 * Distributed selection (dsel_*) runs SampleSelect's level kernels of
 * cl/nth_element.cl on each rank's candidates: nth_sample for the local
 * samples' splitters, nth_table for the bucket tables of the splitters
 * merged on the host, nth_count into their buckets, nth_extract for the
 * chosen buckets. The wanted ranks of one call (quantiles, sort's
 * splitters) go through the levels together: each level's sub-problems
 * (the buckets that hold wanted ranks) share one round of collectives and
 * one launch per kernel (the kernels' sub-problem rows).
 *
 * ONE_RANK: on a communicator of one rank, selection (nth_element,
 * quantiles, approximate) and top-k run the plain call after the check: the
 * levels' round trips to the host and the collectives cost 15% (nth_element)
 * to 4 x (top-k) at 2^28 on the H100 (docs/SCALING.md). */
#include "mpi.h"
#include "../../cl/internal/layout.h"

#include <stdlib.h>
#include <string.h>

#define SPLITTERS 255
#define BUCKETS NTH_BUCKETS
#define NAN_SLOT (NTH_BUCKETS - 1)
#define SLOT_META "mpi: meta"
#define SLOT_COUNTS "mpi: per-group bucket counts"
#define SLOT_KEYS_A "mpi: keys A"
#define SLOT_KEYS_B "mpi: keys B"
#define LEVEL_KERNELS "nth_sample nth_count nth_extract nth_table"

/* ---------------------------------------------- distributed selection */

/* One selection's state on this rank: the level kernels for the elements
 * (side 0: level 0 reads the caller's input) and for keys (side 1), and
 * the meta buffer and per-group counts of dsel_count (one counting pass
 * with given splitters: top-k's and sort's counts around keys). */
enum { D_SAMPLE, D_COUNT, D_EXTRACT, D_TABLE, D_KERNELS };
struct dsel {
  clprim_context *ctx;
  MPI_Comm comm;
  const struct clprim_mpi_part *p;
  clprim_type type, key_type;
  size_t key_size;
  int count_nans; /* level 0 counts NaNs (CLPRIM_NTH_REJECT_NAN on floats) */
  cl_mem in;      /* the caller's elements (resolved range) */
  struct clprim_nth_config c;
  cl_kernel k[2][D_KERNELS];
  cl_mem meta, counts;
  uint64_t gather_max; /* CLPRIM_MPI_GATHER_MAX, or lower (CLPRIM_MPI_GATHER_MAX knob: tests) */
};

static int is_float(clprim_type t) { return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE; }

/* Builds the kernels of side (0: elements, 1: keys) that are not built yet. */
static clprim_status dsel_kernels(struct dsel *d, int side) {
  static const char *const names[D_KERNELS] = {"nth_sample", "nth_count", "nth_extract",
                                               "nth_table"};
  char options[D_KERNELS][200];
  struct clprim_kernel_request req[D_KERNELS];
  unsigned count = 0;
  for (int j = 0; j < D_KERNELS; ++j) {
    if (d->k[side][j]) continue;
    /* selection's own build options: on CPU devices the very programs of
     * clprim_nth_element and clprim_topk */
    clprim__nth_options(side ? d->key_type : d->type, &d->c, side == 0 && d->count_nans,
                        options[count], 200);
    const struct clprim_kernel_request r = {"nth_element.cl", NULL,          options[count],
                                            names[j],         LEVEL_KERNELS, &d->k[side][j],
                                            CLPRIM__SELECTION_FILES, NULL};
    req[count++] = r;
  }
  return count ? clprim__kernels(d->ctx, req, count) : CLPRIM_SUCCESS;
}

static size_t dsel_groups(const struct dsel *d, size_t len) {
  size_t g = (len / 4 + d->c.wg - 1) / d->c.wg;
  if (g > d->c.max_groups) g = d->c.max_groups;
  return g ? g : 1;
}

/* Splitters (keys on the host) to and from a meta buffer's tree (keys of
 * key_size bytes). */
static void pack_tree(size_t key_size, const uint64_t *splitters, unsigned char *tree) {
  for (unsigned j = 0; j < SPLITTERS; ++j) {
    if (key_size == 4) {
      const uint32_t k32 = (uint32_t)splitters[j];
      memcpy(tree + 4 * j, &k32, 4);
    } else {
      memcpy(tree + 8 * j, &splitters[j], 8);
    }
  }
}
static void unpack_tree(size_t key_size, const unsigned char *tree, uint64_t *splitters) {
  for (unsigned j = 0; j < SPLITTERS; ++j) {
    if (key_size == 4) {
      uint32_t k32;
      memcpy(&k32, tree + 4 * j, 4);
      splitters[j] = k32;
    } else {
      memcpy(&splitters[j], tree + 8 * j, 8);
    }
  }
}

/* Writes the splitters (keys, sorted) to the meta buffer's tree, has
 * nth_table build their bucket table and zero the totals, then counts the
 * len candidates of buf (side) into the buckets: local[b] (BUCKETS words)
 * receives this rank's totals. */
static clprim_status dsel_count(struct dsel *d, int side, cl_mem buf, size_t len,
                                const uint64_t *splitters, uint64_t *local) {
  memset(local, 0, BUCKETS * 8);
  unsigned char tree[SPLITTERS * 8];
  pack_tree(d->key_size, splitters, tree);
  if (len == 0) return CLPRIM_SUCCESS;
  CLPRIM_CHECK(dsel_kernels(d, side));
  CLPRIM_CHECK(clprim__write(d->ctx, d->meta, NTH_META_TREE_AT * 8, SPLITTERS * d->key_size, tree,
                             1));
  CLPRIM_CHECK(clprim__set_args(d->k[side][D_TABLE], 1, sizeof d->meta, &d->meta));
  CLPRIM_CHECK(clprim__enqueue(d->ctx, d->k[side][D_TABLE], 1, d->c.wg));
  const size_t g = dsel_groups(d, len);
  CLPRIM_CHECK(clprim__scratch(d->ctx, SLOT_COUNTS, g * BUCKETS * 4, &d->counts));
  const cl_ulong zero = 0, n64 = len;
  const cl_uint no_subs = 0;
  cl_kernel k = d->k[side][D_COUNT];
  CLPRIM_CHECK(clprim__set_args(k, 10, sizeof buf, &buf, sizeof zero, &zero, sizeof n64, &n64,
                                sizeof d->meta, &d->meta, sizeof zero, &zero, sizeof d->counts,
                                &d->counts, sizeof zero, &zero, sizeof d->meta, &d->meta,
                                sizeof zero, &zero, sizeof no_subs, &no_subs));
  CLPRIM_CHECK(clprim__enqueue(d->ctx, k, g, d->c.wg));
  uint32_t totals[BUCKETS];
  CLPRIM_CHECK(clprim__read(d->ctx, d->meta, NTH_META_TOTALS_AT * 8, sizeof totals, totals));
  for (unsigned b = 0; b < BUCKETS; ++b)
    local[b] = totals[b];
  return CLPRIM_SUCCESS;
}

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

/* A sub-problem of a selection level: the candidates of one bucket of the
 * level before (level 0: every element) on every rank, and the wanted
 * ranks among them. The wanted ranks of one call go through the levels
 * together: per level one round of collectives for all their
 * sub-problems, and on each device one launch per level kernel for all of
 * them (the kernels' sub-problem rows, cl/nth_element.cl). */
struct dsub {
  size_t at, len;  /* this rank's candidates: [at, at + len) of the level's buffer */
  uint64_t all;    /* every rank's candidates */
  uint64_t first;  /* the global rank of its smallest candidate */
  size_t r0, r1;   /* the wanted ranks[r0, r1) fall in it */
  size_t parent;   /* the sub-problem of the level before that it is a bucket of */
  unsigned bucket; /* which bucket */
};

/* Wanted ranks of one pass of the levels: more run in passes of this many
 * (the host's room and rank 0's gather grow with them). */
#define DSEL_BATCH 256
/* A sub-problem's extraction block: its meta buffer's words from 0 up to
 * the chosen buckets' list (cl/internal/sample_select.h's META_*): where
 * each bucket goes, the totals (unused), the cursors, the tree, the
 * chosen buckets. */
#define BLOCK_WORDS (NTH_META_TREE_AT + 256 + 1 + 16)
#define BLOCK_NCHOSEN (NTH_META_TREE_AT + 256)
#define NOT_CHOSEN UINT64_MAX

/* The host's room of one pass (S sub-problems at most) and the device
 * buffers of the current level. */
struct dsel_room {
  size_t S, stride; /* stride: words between sub-problems' meta buffers */
  struct dsub *subs, *next;
  uint64_t *record, *all, *merged, *counts, *global, *rows, *blocks, *lens_all;
  uint32_t *totals;
  unsigned char *trees;
  struct weighted *w;
  cl_mem metas, level_counts, level_rows;
};

static void room_free(struct dsel_room *m) {
  free(m->subs), free(m->next), free(m->record), free(m->all), free(m->merged), free(m->counts);
  free(m->global), free(m->rows), free(m->blocks), free(m->lens_all), free(m->totals);
  free(m->trees), free(m->w);
}

static clprim_status room_alloc(struct dsel *d, size_t S, struct dsel_room *m) {
  const size_t P = (size_t)d->p->size, rec = 1 + S * (SPLITTERS + 1);
  memset(m, 0, sizeof *m);
  m->S = S;
  /* Each sub-problem's meta buffer at an offset that a sub-buffer may take
   * (nth_table takes a buffer of its own). */
  size_t align = d->ctx->base_align > 64 ? d->ctx->base_align : 64;
  m->stride = (NTH_META_WORDS * 8 + align - 1) / align * align / 8;
  m->subs = malloc(S * sizeof *m->subs), m->next = malloc(S * sizeof *m->next);
  m->record = malloc(rec * 8), m->merged = malloc((1 + S * SPLITTERS) * 8);
  m->counts = malloc((S * BUCKETS + 1) * 8), m->global = malloc((S * BUCKETS + 1) * 8);
  m->rows = malloc(2 * S * NTH_SUB_WORDS * 8), m->blocks = malloc(S * BLOCK_WORDS * 8);
  m->lens_all = malloc(P * (S + 1) * 8), m->totals = malloc(S * BUCKETS * 4);
  m->trees = malloc(S * SPLITTERS * 8);
  if (d->p->rank == 0) m->all = malloc(P * rec * 8), m->w = malloc(P * SPLITTERS * sizeof *m->w);
  const int ok = m->subs && m->next && m->record && m->merged && m->counts && m->global &&
                 m->rows && m->blocks && m->lens_all && m->totals && m->trees &&
                 (d->p->rank != 0 || (m->all && m->w));
  return ok ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
}

/* One non-blocking copy of the same part of the first `count` sub-problems'
 * meta buffers (`bytes` from word `word` of each) from (write = 0) or to
 * host memory, where they lie host_pitch bytes apart: one command for all
 * sub-problems, not one each. */
static clprim_status metas_rect(struct dsel *d, struct dsel_room *m, int write, size_t count,
                                size_t word, size_t bytes, void *host, size_t host_pitch) {
  const size_t origin[3] = {word * 8, 0, 0}, zero[3] = {0, 0, 0}, region[3] = {bytes, count, 1};
  const size_t pitch = m->stride * 8;
  return (clprim_status)(write ? clEnqueueWriteBufferRect(d->ctx->queue, m->metas, CL_FALSE, origin,
                                                          zero, region, pitch, 0, host_pitch, 0,
                                                          host, 0, NULL, NULL)
                               : clEnqueueReadBufferRect(d->ctx->queue, m->metas, CL_FALSE, origin,
                                                         zero, region, pitch, 0, host_pitch, 0,
                                                         host, 0, NULL, NULL));
}

/* The base case of the sub-problems with at most gather_max candidates in
 * all: every rank's candidates of them gathered (one all-gather of the
 * counts with the statuses, one all-gatherv of the keys) and sorted on
 * every host; their wanted ranks answered. *pending: this rank's status
 * from the level before, which the all-gather carries (then it is reset);
 * with no such sub-problem nothing is done and it stays. */
static clprim_status dsel_base(struct dsel *d, struct dsel_room *m, unsigned level, cl_mem cur,
                               size_t nsubs, const uint64_t *ranks, uint64_t *keys,
                               clprim_status *pending) {
  const int P = d->p->size, side = level > 0;
  size_t small = 0, mine_n = 0, every_n = 0, most = 0;
  for (size_t s = 0; s < nsubs; ++s) {
    const struct dsub *u = &m->subs[s];
    if (u->all > d->gather_max) continue;
    ++small, mine_n += u->len, every_n += u->all;
    if (u->all > most) most = u->all;
  }
  if (small == 0) return CLPRIM_SUCCESS;
  const size_t es = side ? d->key_size : clprim_type_size(d->type);
  unsigned char *raw = malloc((mine_n + 1) * es);
  uint64_t *mine = malloc((mine_n + 1) * 8), *every = malloc((every_n + 1) * 8);
  uint64_t *sorted = malloc((most + 1) * 8), *lens = m->counts; /* free until the level */
  int *counts = malloc(sizeof(int) * 2 * (size_t)P), *displs = counts ? counts + P : NULL;
  clprim_status st =
      raw && mine && every && sorted && counts ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  if (*pending != CLPRIM_SUCCESS) st = *pending;
  *pending = CLPRIM_SUCCESS;
  size_t at = 0, j = 0;
  for (size_t s = 0; s < nsubs; ++s) {
    const struct dsub *u = &m->subs[s];
    if (u->all > d->gather_max) continue;
    if (st == CLPRIM_SUCCESS && u->len > 0)
      st = (clprim_status)clEnqueueReadBuffer(d->ctx->queue, cur, CL_FALSE, u->at * es, u->len * es,
                                              raw + at * es, 0, NULL, NULL);
    lens[j++] = u->len;
    at += u->len;
  }
  if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(d->ctx->queue);
  for (size_t i = 0; st == CLPRIM_SUCCESS && i < mine_n; ++i) {
    uint64_t bits = 0;
    memcpy(&bits, raw + i * es, es); /* little-endian hosts */
    mine[i] = side ? bits : clprim__key_of_bits(d->type, bits);
  }
  /* Every rank's counts per sub-problem (and status), then the keys. */
  uint64_t *record = m->record; /* free at this point of the level */
  st = clprim__mpi_gather_status(d->comm, P, st, lens, (unsigned)small, m->lens_all, record);
  int total = 0;
  for (int q = 0; st == CLPRIM_SUCCESS && q < P; ++q) {
    uint64_t n = 0;
    for (size_t x = 0; x < small; ++x)
      n += m->lens_all[(small + 1) * (size_t)q + 1 + x];
    counts[q] = (int)n, displs[q] = total, total += (int)n;
  }
  if (st == CLPRIM_SUCCESS && MPI_Allgatherv(mine, (int)mine_n, MPI_UINT64_T, every, counts, displs,
                                             MPI_UINT64_T, d->comm) != MPI_SUCCESS)
    st = CLPRIM_MPI_ERROR_MPI;
  /* Sub-problem j's keys: from each rank's block, after its earlier ones. */
  const uint64_t nan_key = d->key_size == 4 ? 0xFFFFFFFFull : UINT64_MAX;
  j = 0;
  for (size_t s = 0; st == CLPRIM_SUCCESS && s < nsubs; ++s) {
    const struct dsub *u = &m->subs[s];
    if (u->all > d->gather_max) continue;
    size_t n = 0;
    for (int q = 0; q < P; ++q) {
      const uint64_t *rec = m->lens_all + (small + 1) * (size_t)q + 1;
      size_t from = (size_t)displs[q];
      for (size_t x = 0; x < j; ++x)
        from += rec[x];
      memcpy(sorted + n, every + from, rec[j] * 8);
      n += rec[j];
    }
    ++j;
    qsort(sorted, n, 8, cmp_u64);
    if (level == 0 && d->count_nans && n > 0 && sorted[n - 1] == nan_key) {
      st = CLPRIM_ERROR_INVALID_ARGUMENT; /* every rank saw the same keys */
      break;
    }
    for (size_t r = u->r0; r < u->r1; ++r)
      keys[r] = sorted[ranks[r] - u->first];
  }
  free(raw), free(mine), free(every), free(sorted), free(counts);
  return st;
}

/* One level of the sub-problems m->subs[0, nsubs) (each with more than
 * gather_max candidates): each rank samples its candidates of each on its
 * device (nth_sample), the samples go to rank 0 (one gather), which merges
 * each sub-problem's and broadcasts the splitters (one broadcast); each
 * rank counts its candidates into their buckets (nth_table, nth_count);
 * the counts are summed (one all-reduce, with a status word).
 * Afterwards m->merged + 1 + 255 s: sub-problem s's splitters,
 * m->counts[BUCKETS s + b]: this rank's count of its bucket b, m->global:
 * every rank's. pending: this rank's status from the level before (the
 * gather carries it: a failed extraction stops every rank here). */
static clprim_status dsel_level(struct dsel *d, struct dsel_room *m, unsigned level, cl_mem cur,
                                size_t nsubs, clprim_status pending) {
  const int P = d->p->size, side = level > 0;
  const size_t S = nsubs, rec = 1 + S * (SPLITTERS + 1), ks = d->key_size;
  clprim_status st = pending;
  if (st == CLPRIM_SUCCESS) st = dsel_kernels(d, side);
  /* The rows of the sub-problems this rank holds candidates of. */
  uint64_t *rows = m->rows;
  size_t active = 0, groups = 0;
  for (size_t s = 0; s < S; ++s) {
    const struct dsub *u = &m->subs[s];
    if (u->len == 0) continue;
    uint64_t *row = rows + NTH_SUB_WORDS * active++;
    memset(row, 0, NTH_SUB_WORDS * 8);
    const size_t g = dsel_groups(d, u->len);
    row[0] = u->at, row[1] = u->len, row[2] = groups, row[3] = g;
    row[4] = s * m->stride, row[5] = groups * BUCKETS;
    row[11] = 0x5EED0000ull + level * 1000003ull + (uint64_t)d->p->rank * 7919ull + s;
    groups += g;
  }
  if (st == CLPRIM_SUCCESS)
    st = clprim__scratch(d->ctx, "mpi: metas", S * m->stride * 8, &m->metas);
  if (st == CLPRIM_SUCCESS)
    st = clprim__scratch(d->ctx, "mpi: level rows", 2 * m->S * NTH_SUB_WORDS * 8, &m->level_rows);
  if (st == CLPRIM_SUCCESS)
    st =
        clprim__scratch(d->ctx, SLOT_COUNTS, (groups ? groups : 1) * BUCKETS * 4, &m->level_counts);
  const cl_ulong zero = 0;
  const cl_uint nact = (cl_uint)active;
  if (st == CLPRIM_SUCCESS && active > 0) {
    st = clprim__write(d->ctx, m->level_rows, 0, active * NTH_SUB_WORDS * 8, rows, 0);
    cl_kernel k = d->k[side][D_SAMPLE];
    if (st == CLPRIM_SUCCESS)
      st = clprim__set_args(k, 9, sizeof cur, &cur, sizeof zero, &zero, sizeof zero, &zero,
                            sizeof zero, &zero, sizeof m->metas, &m->metas, sizeof zero, &zero,
                            sizeof m->level_rows, &m->level_rows, sizeof zero, &zero, sizeof nact,
                            &nact);
    if (st == CLPRIM_SUCCESS) st = clprim__enqueue(d->ctx, k, active, d->c.wg);
    if (st == CLPRIM_SUCCESS)
      st = metas_rect(d, m, 0, S, NTH_META_TREE_AT, SPLITTERS * ks, m->trees, SPLITTERS * 8);
    if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(d->ctx->queue);
  }
  /* Each rank's record: its status, then per sub-problem its candidates
   * and its sample's splitters. */
  uint64_t *record = m->record;
  memset(record, 0, rec * 8);
  record[0] = st != CLPRIM_SUCCESS;
  for (size_t s = 0; st == CLPRIM_SUCCESS && s < S; ++s) {
    record[1 + s * (SPLITTERS + 1)] = m->subs[s].len;
    if (m->subs[s].len)
      unpack_tree(ks, m->trees + s * SPLITTERS * 8, record + 2 + s * (SPLITTERS + 1));
  }
  CLPRIM__MPI_OK(MPI_Gather(record, (int)rec, MPI_UINT64_T, m->all, (int)rec, MPI_UINT64_T, 0, d->comm));
  uint64_t *merged = m->merged;
  merged[0] = 0;
  if (d->p->rank == 0) {
    for (int r = 0; r < P; ++r)
      merged[0] |= m->all[(size_t)r * rec];
    for (size_t s = 0; !merged[0] && s < S; ++s)
      merge_splitters(m->all, P, rec, 1 + s * (SPLITTERS + 1), m->w, merged + 1 + s * SPLITTERS);
  }
  CLPRIM__MPI_OK(MPI_Bcast(merged, (int)(1 + S * SPLITTERS), MPI_UINT64_T, 0, d->comm));
  if (st == CLPRIM_SUCCESS && merged[0]) st = CLPRIM_MPI_ERROR_REMOTE;
  if (st != CLPRIM_SUCCESS) return st;
  /* The merged splitters (one write for all), their tables, one counting
   * launch for all. */
  for (size_t s = 0; s < S; ++s)
    pack_tree(ks, merged + 1 + s * SPLITTERS, m->trees + s * SPLITTERS * 8);
  if (active > 0)
    st = metas_rect(d, m, 1, S, NTH_META_TREE_AT, SPLITTERS * ks, m->trees, SPLITTERS * 8);
  for (size_t a = 0; st == CLPRIM_SUCCESS && a < active; ++a) {
    const size_t s = rows[NTH_SUB_WORDS * a + 4] / m->stride;
    const cl_buffer_region region = {s * m->stride * 8, NTH_META_WORDS * 8};
    cl_int err = CL_SUCCESS;
    cl_mem meta = st == CLPRIM_SUCCESS
                      ? clCreateSubBuffer(m->metas, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                          &region, &err)
                      : NULL;
    if (st == CLPRIM_SUCCESS) st = (clprim_status)err;
    if (st == CLPRIM_SUCCESS) st = clprim__set_args(d->k[side][D_TABLE], 1, sizeof meta, &meta);
    if (st == CLPRIM_SUCCESS) st = clprim__enqueue(d->ctx, d->k[side][D_TABLE], 1, d->c.wg);
    if (meta) clReleaseMemObject(meta); /* kept by the runtime until the kernel ran */
  }
  if (st == CLPRIM_SUCCESS && active > 0) {
    cl_kernel k = d->k[side][D_COUNT];
    st = clprim__set_args(k, 10, sizeof cur, &cur, sizeof zero, &zero, sizeof zero, &zero,
                          sizeof m->metas, &m->metas, sizeof zero, &zero, sizeof m->level_counts,
                          &m->level_counts, sizeof zero, &zero, sizeof m->level_rows,
                          &m->level_rows, sizeof zero, &zero, sizeof nact, &nact);
    if (st == CLPRIM_SUCCESS) st = clprim__enqueue(d->ctx, k, groups, d->c.wg);
    if (st == CLPRIM_SUCCESS)
      st = metas_rect(d, m, 0, S, NTH_META_TOTALS_AT, BUCKETS * 4, m->totals, BUCKETS * 4);
    if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(d->ctx->queue);
  }
  uint64_t *local = m->counts;
  memset(local, 0, (S * BUCKETS + 1) * 8);
  for (size_t s = 0; st == CLPRIM_SUCCESS && s < S; ++s)
    for (unsigned b = 0; m->subs[s].len && b < BUCKETS; ++b)
      local[s * BUCKETS + b] = m->totals[s * BUCKETS + b];
  local[S * BUCKETS] = st != CLPRIM_SUCCESS;
  CLPRIM__MPI_OK(MPI_Allreduce(local, m->global, (int)(S * BUCKETS + 1), MPI_UINT64_T, MPI_SUM, d->comm));
  if (st == CLPRIM_SUCCESS && m->global[S * BUCKETS]) st = CLPRIM_MPI_ERROR_REMOTE;
  if (st == CLPRIM_SUCCESS && level == 0 && d->count_nans && m->global[NAN_SLOT] > 0)
    st = CLPRIM_ERROR_INVALID_ARGUMENT; /* a NaN with CLPRIM_NTH_REJECT_NAN */
  return st;
}

/* After dsel_level: each wanted rank's bucket. Ranks in an equality bucket
 * are answered (its splitter); approximate: every rank is (the nearer
 * splitter around its bucket, *error the rank distance). Else the open
 * buckets that hold wanted ranks become the next level's sub-problems
 * (m->next, *nnext of them), their candidates extracted on each device in
 * one launch (nth_extract) into the level's other key buffer (*next_buf),
 * one after another. Returns this rank's status alone: the next level's
 * first collective carries it (there is one: *nnext > 0 whenever this
 * can fail). */
static clprim_status dsel_choose(struct dsel *d, struct dsel_room *m, unsigned level, cl_mem cur,
                                 size_t nsubs, const uint64_t *ranks, int approximate,
                                 uint64_t *keys, uint64_t *error, size_t *nnext, cl_mem *next_buf) {
  const int side = level > 0;
  const size_t ks = d->key_size;
  size_t n = 0, room = 0;
  *nnext = 0;
  for (size_t s = 0; s < nsubs; ++s) {
    const struct dsub *u = &m->subs[s];
    const uint64_t *global = m->global + s * BUCKETS, *local = m->counts + s * BUCKETS;
    const uint64_t *splitters = m->merged + 1 + s * SPLITTERS;
    uint64_t before = 0;
    unsigned b = 0;
    for (size_t r = u->r0; r < u->r1; ++r) {
      const uint64_t rel = ranks[r] - u->first;
      while (b < NAN_SLOT - 1 && before + global[b] <= rel)
        before += global[b++];
      if (b & 1u) { /* an equality bucket: its splitter */
        keys[r] = splitters[b / 2];
        continue;
      }
      if (approximate) { /* the nearer of the splitters around the bucket */
        const unsigned j = b / 2;
        const uint64_t below = j > 0 ? rel - (before - 1) : UINT64_MAX;
        const uint64_t above = j < SPLITTERS ? before + global[b] - rel : UINT64_MAX;
        if (below <= above)
          keys[r] = splitters[j - 1], *error = below;
        else
          keys[r] = splitters[j], *error = above;
        continue;
      }
      if (n > 0 && m->next[n - 1].parent == s && m->next[n - 1].bucket == b) {
        m->next[n - 1].r1 = r + 1; /* the same bucket as the rank before */
        continue;
      }
      struct dsub *v = &m->next[n++];
      v->at = room, v->len = (size_t)local[b], v->all = global[b], v->first = u->first + before;
      v->r0 = r, v->r1 = r + 1, v->parent = s, v->bucket = b;
      room += (v->len + 3) & ~(size_t)3; /* 4-aligned: the passes load vectors of 4 */
    }
  }
  if (approximate || n == 0) return CLPRIM_SUCCESS;
  /* Each sub-problem's extraction block (where its chosen buckets go), and
   * the rows of those that hold candidates of one. */
  clprim_status st =
      clprim__scratch(d->ctx, level % 2 ? SLOT_KEYS_B : SLOT_KEYS_A, (room + 8) * ks, next_buf);
  uint64_t *rows = m->rows + m->S * NTH_SUB_WORDS, *count_rows = m->rows;
  size_t extracting = 0, groups = 0, v = 0, a = 0;
  for (size_t s = 0; s < nsubs; ++s) {
    const struct dsub *u = &m->subs[s];
    uint64_t *block = m->blocks + s * BLOCK_WORDS;
    uint64_t chosen = 0;
    for (unsigned b = 0; b < BUCKETS; ++b)
      block[b] = NOT_CHOSEN;
    memset(block + BUCKETS, 0, (BLOCK_WORDS - BUCKETS) * 8);
    memcpy(block + NTH_META_TREE_AT, m->trees + s * SPLITTERS * 8, SPLITTERS * ks);
    for (; v < n && m->next[v].parent == s; ++v) {
      const unsigned b = m->next[v].bucket;
      block[b] = m->next[v].at;
      if (chosen < 16) block[BLOCK_NCHOSEN + 1 + chosen] = b;
      ++chosen;
    }
    block[BLOCK_NCHOSEN] = chosen;
    if (u->len == 0) continue;
    const uint64_t *row = count_rows + NTH_SUB_WORDS * a++; /* its row in the counting launch */
    if (chosen == 0) continue;
    uint64_t *x = rows + NTH_SUB_WORDS * extracting++;
    memcpy(x, row, NTH_SUB_WORDS * 8);
    x[2] = groups, groups += x[3];
  }
  if (st == CLPRIM_SUCCESS && extracting > 0)
    st = metas_rect(d, m, 1, nsubs, 0, BLOCK_WORDS * 8, m->blocks, BLOCK_WORDS * 8);
  const cl_ulong zero = 0, subs_at = m->S * NTH_SUB_WORDS;
  const cl_uint nx = (cl_uint)extracting;
  if (st == CLPRIM_SUCCESS && extracting > 0) {
    st = clprim__write(d->ctx, m->level_rows, subs_at * 8, extracting * NTH_SUB_WORDS * 8, rows, 0);
    cl_kernel k = d->k[side][D_EXTRACT];
    if (st == CLPRIM_SUCCESS)
      st = clprim__set_args(k, 11, sizeof cur, &cur, sizeof zero, &zero, sizeof zero, &zero,
                            sizeof m->metas, &m->metas, sizeof zero, &zero, sizeof m->level_counts,
                            &m->level_counts, sizeof zero, &zero, sizeof *next_buf, next_buf,
                            sizeof m->level_rows, &m->level_rows, sizeof subs_at, &subs_at,
                            sizeof nx, &nx);
    if (st == CLPRIM_SUCCESS) st = clprim__enqueue(d->ctx, k, groups, d->c.wg);
  }
  /* The host's blocks and rows must stay until the writes ran. */
  if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(d->ctx->queue);
  *nnext = n;
  return st;
}

/* The keys of the sorted distinct global ranks[0, count) (count at most
 * DSEL_BATCH) to keys[]: the levels of all of them together. */
static clprim_status dsel_ranks(struct dsel *d, const uint64_t *ranks, size_t count,
                                int approximate, uint64_t *keys, uint64_t *error) {
  struct dsel_room m;
  clprim_status st = clprim__mpi_agree(d->comm, room_alloc(d, count, &m));
  size_t nsubs = 1;
  if (st == CLPRIM_SUCCESS) {
    const struct dsub all = {0, (size_t)d->p->n_local, d->p->total, 0, 0, count, 0, 0};
    m.subs[0] = all;
  }
  cl_mem cur = d->in;
  *error = 0;
  /* A failed extraction on this rank, not yet told the others. */
  clprim_status pending = CLPRIM_SUCCESS;
  for (unsigned level = 0; st == CLPRIM_SUCCESS && nsubs > 0; ++level) {
    st = dsel_base(d, &m, level, cur, nsubs, ranks, keys, &pending);
    size_t big = 0; /* the rest go on */
    for (size_t s = 0; s < nsubs; ++s)
      if (m.subs[s].all > d->gather_max) m.subs[big++] = m.subs[s];
    nsubs = big;
    if (st != CLPRIM_SUCCESS || nsubs == 0) break;
    st = dsel_level(d, &m, level, cur, nsubs, pending);
    pending = CLPRIM_SUCCESS;
    cl_mem next = NULL;
    size_t nnext = 0;
    if (st == CLPRIM_SUCCESS)
      pending =
          dsel_choose(d, &m, level, cur, nsubs, ranks, approximate, keys, error, &nnext, &next);
    if (approximate) break;
    struct dsub *t = m.subs;
    m.subs = m.next, m.next = t;
    nsubs = nnext, cur = next;
  }
  room_free(&m);
  return st;
}

/* Sets up a selection on this rank: the call begun, the input resolved,
 * the meta buffer. The caller ends the call. */
static clprim_status dsel_begin(struct dsel *d, clprim_context *ctx, MPI_Comm comm,
                                const struct clprim_mpi_part *p, clprim_type type, clprim_buffer in,
                                unsigned flags) {
  memset(d, 0, sizeof *d);
  d->ctx = ctx, d->comm = comm, d->p = p, d->type = type;
  d->key_size = clprim_type_size(type);
  d->key_type = d->key_size == 4 ? CLPRIM_UINT32 : CLPRIM_UINT64;
  d->count_nans = is_float(type) && (flags & CLPRIM_NTH_REJECT_NAN);
  d->c = clprim__nth_config(ctx);
  long long gather_max;
  clprim__tuned(ctx, &clprim__family_mpi, 0, 0, &gather_max);
  d->gather_max = gather_max >= 1 && gather_max < CLPRIM_MPI_GATHER_MAX ? (uint64_t)gather_max
                                                                        : CLPRIM_MPI_GATHER_MAX;
  if (p->n_local > 0)
    CLPRIM_CHECK(clprim__range(ctx, in, d->key_size, p->n_local, CLPRIM__READ, &d->in));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_META, NTH_META_WORDS * 8, &d->meta));
  return CLPRIM_SUCCESS;
}

/* The keys of the sorted distinct global ranks[0, count) to keys[], in
 * passes of DSEL_BATCH ranks. */
clprim_status clprim__mpi_select_ranks(clprim_context *ctx, MPI_Comm comm, const struct clprim_mpi_part *p,
                                  clprim_type type, clprim_buffer in, const uint64_t *ranks,
                                  size_t count, unsigned flags, int approximate, uint64_t *keys,
                                  uint64_t *error) {
  struct dsel d;
  clprim_status st = clprim__call_begin(ctx);
  const int begun = st == CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS) st = dsel_begin(&d, ctx, comm, p, type, in, flags);
  st = clprim__mpi_agree(comm, st);
  uint64_t e = 0;
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; r += DSEL_BATCH) {
    const size_t batch = count - r < DSEL_BATCH ? count - r : DSEL_BATCH;
    st = dsel_ranks(&d, ranks + r, batch, approximate, keys + r, error ? error : &e);
  }
  return begun ? clprim__call_end(ctx, st) : st;
}

/* The common check of the selection calls; hash covers extra words. */
clprim_status clprim__mpi_nth_check(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                               clprim_type type, clprim_buffer in, unsigned flags,
                               unsigned allowed, const void *more, size_t more_bytes,
                               int local_bad, struct clprim_mpi_part *p) {
  clprim_status st = local_bad ? CLPRIM_ERROR_INVALID_ARGUMENT : clprim__mpi_check_type(ctx, type);
  if (st == CLPRIM_SUCCESS && (flags & ~allowed)) st = CLPRIM_ERROR_INVALID_ARGUMENT;
  if (st == CLPRIM_SUCCESS && n_local >= ((uint64_t)1 << 32)) st = CLPRIM_ERROR_SIZE_TOO_LARGE;
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_range(ctx, in, clprim_type_size(type), n_local);
  uint64_t hash = CLPRIM__MPI_HASH_START;
  clprim__mpi_hash_add(&hash, &type, sizeof type);
  clprim__mpi_hash_add(&hash, &flags, sizeof flags);
  if (more_bytes) clprim__mpi_hash_add(&hash, more, more_bytes);
  return clprim__mpi_part_check(comm, st, hash, n_local, 0, p);
}

clprim_status clprim_mpi_quantiles(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                   clprim_type type, clprim_buffer in, const uint64_t *ranks,
                                   size_t count, unsigned flags, clprim_value *values) {
  const int bad = !ranks || !values || count == 0;
  uint64_t h = CLPRIM__MPI_HASH_START;
  if (!bad) clprim__mpi_hash_add(&h, ranks, count * 8);
  const uint64_t more[2] = {count, h};
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_nth_check(ctx, comm, n_local, type, in, flags, CLPRIM_NTH_REJECT_NAN, more,
                         sizeof more, bad, &p));
  clprim_status st = CLPRIM_SUCCESS;
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; ++r)
    if (ranks[r] >= p.total) st = CLPRIM_ERROR_INVALID_ARGUMENT; /* alike on every rank */
  uint64_t *sorted = NULL, *keys = NULL;
  size_t distinct = 0;
  if (st == CLPRIM_SUCCESS && p.size == 1) { /* one rank: the plain call (ONE_RANK) */
    st = clprim_quantiles(ctx, n_local, type, in, ranks, count, flags, values, clprim_buf(NULL));
    clprim__mpi_part_free(&p);
    return st;
  }
  if (st == CLPRIM_SUCCESS) {
    sorted = malloc(count * 8), keys = malloc(count * 8);
    st = clprim__mpi_agree(comm, sorted && keys ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
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
  CLPRIM_CHECK(clprim__mpi_nth_check(ctx, comm, n_local, type, in, flags, CLPRIM_NTH_REJECT_NAN, &k, sizeof k,
                         !value, &p));
  clprim_status st = k >= p.total ? CLPRIM_ERROR_INVALID_ARGUMENT : CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS && p.size == 1) { /* one rank: the plain call (ONE_RANK) */
    st = clprim_nth_element_approx(ctx, n_local, type, in, k, flags, value, rank_error,
                                   clprim_buf(NULL));
    clprim__mpi_part_free(&p);
    return st;
  }
  uint64_t key = 0, error = 0;
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_select_ranks(ctx, comm, &p, type, in, &k, 1, flags, 1, &key, &error);
  if (st == CLPRIM_SUCCESS) {
    *value = clprim__value_of_key(type, key);
    if (rank_error) *rank_error = error;
  }
  clprim__mpi_part_free(&p);
  return st;
}

/* ---------------------------------------------------------------- top-k */

/* Each rank's counts of its elements below and equal to the key t (one
 * counting pass with every splitter t: bucket 0 below, 1 equal, the last
 * open bucket above). */
clprim_status clprim__mpi_count_around(clprim_context *ctx, MPI_Comm comm, const struct clprim_mpi_part *p,
                                  clprim_type type, clprim_buffer in, const uint64_t *keys,
                                  unsigned nkeys, uint64_t *below, uint64_t *equal) {
  struct dsel d;
  uint64_t splitters[SPLITTERS], local[BUCKETS];
  clprim_status st = clprim__call_begin(ctx);
  const int begun = st == CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS) st = dsel_begin(&d, ctx, comm, p, type, in, 0);
  /* keys (sorted) as splitters, the last repeated: key j's equality bucket
   * is that of its first copy, and the keys below it fill the buckets
   * before. */
  for (unsigned j = 0; j < SPLITTERS; ++j)
    splitters[j] = keys[j < nkeys ? j : nkeys - 1];
  if (st == CLPRIM_SUCCESS) st = dsel_count(&d, 0, d.in, p->n_local, splitters, local);
  if (st == CLPRIM_SUCCESS) {
    for (unsigned j = 0; j < nkeys; ++j) {
      unsigned first = j;
      while (first > 0 && splitters[first - 1] == splitters[j])
        --first;
      uint64_t b = 0;
      for (unsigned q = 0; q < 2 * first + 1; ++q)
        b += local[q];
      below[j] = b, equal[j] = local[2 * first + 1];
    }
  }
  return begun ? clprim__call_end(ctx, st) : st;
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
  if (st == CLPRIM_SUCCESS) st = clprim__call_begin(ctx);
  if (st == CLPRIM_SUCCESS) {
    cl_mem v = picked, x = picked; /* unused outputs: any buffer, never written */
    cl_kernel k;
    char options[160];
    clprim__mpi_options(ctx, type, options, sizeof options);
    if (values.mem)
      st = clprim__range(ctx, values, clprim_type_size(type), mine, CLPRIM__OUT_ALL, &v);
    if (st == CLPRIM_SUCCESS && indices.mem)
      st = clprim__range(ctx, indices, index64 ? 8 : 4, mine, CLPRIM__OUT_ALL, &x);
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
  CLPRIM_CHECK(clprim__mpi_nth_check(ctx, comm, n_local, type, in, flags, allowed, more, sizeof more,
                         outputs == 0, &p));
  const int index64 = (flags & CLPRIM_INDICES_64) != 0, smallest = (flags & CLPRIM_TOPK_SMALLEST) != 0;
  clprim_status st = k > p.total || (indices.mem && !index64 && p.total > UINT32_MAX)
                         ? CLPRIM_ERROR_INVALID_ARGUMENT
                         : CLPRIM_SUCCESS;
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
      st = clprim__mpi_part_check(comm, nan ? CLPRIM_SUCCESS : local, CLPRIM__MPI_HASH_START, kl, (uint64_t)nan, &cp);
      cand_part = st == CLPRIM_SUCCESS;
      for (int r = 0; cand_part && r < cp.size; ++r)
        if (cp.extra_of[r]) st = CLPRIM_ERROR_INVALID_ARGUMENT;
      sp = &cp, sin = clprim_buf(cand), sflags = 0;
    }
    /* The threshold: the k-th best, by distributed selection. */
    const uint64_t rank = smallest ? k - 1 : sp->total - k;
    uint64_t t = 0, below = 0, equal = 0;
    if (st == CLPRIM_SUCCESS)
      st = clprim__mpi_select_ranks(ctx, comm, sp, type, sin, &rank, 1, sflags, 0, &t, NULL);
    const int selected = st == CLPRIM_SUCCESS;
    if (st == CLPRIM_SUCCESS) st = clprim__mpi_count_around(ctx, comm, sp, type, sin, &t, 1, &below, &equal);
    /* beyond: the local elements strictly better than t */
    const uint64_t beyond = smallest ? below : sp->n_local - below - equal;
    if (cand_part) clprim__mpi_part_free(&cp);
    const uint64_t words[2] = {beyond, equal};
    uint64_t record[3];
    uint64_t *all = malloc((size_t)p.size * 3 * 8);
    if (selected && st == CLPRIM_SUCCESS && !all) st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    if (selected) st = clprim__mpi_agree(comm, st); /* also: every rank can receive */
    if (st == CLPRIM_SUCCESS) st = clprim__mpi_gather_status(comm, p.size, st, words, 2, all, record);
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
      st = clprim__mpi_add_constant(ctx, index64 ? CLPRIM_UINT64 : CLPRIM_UINT32, indices, mine, p.offset);
    if (cand) clReleaseMemObject(cand);
    if (cand_index) clReleaseMemObject(cand_index);
    if (agreed) st = clprim__mpi_agree(comm, st);
  }
  clprim__mpi_part_free(&p);
  if (st == CLPRIM_SUCCESS) {
    if (local_count) *local_count = mine;
    if (global_offset) *global_offset = before;
  }
  return st;
}
