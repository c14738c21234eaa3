/* sample_select.c: the selection engine, SampleSelect (Ribizel and Anzt),
 * kernels in cl/nth_element.cl: the keys of given ranks among n elements,
 * for selection by rank (src/nth_element.c), top-k (src/topk.c, which runs
 * some level kernels too), per-segment selection, pipelines and clprim_mpi.
 *
 * The levels are driven from the host: every sub-problem (a bucket that
 * holds wanted ranks) costs a sample, a counting pass, a choice and one small
 * blocking read (its buckets' sizes), then an extraction of the chosen
 * buckets into the next level's buffer. Buckets of at most SMALL_MAX keys
 * are finished by one launch per level (nth_small: a work-group per rank,
 * no round trips). Level 0 reads the caller's elements (kernels built
 * for the type), later levels read keys (built for uint / ulong).
 *
 * Across devices (clprim_mpi) the same levels run on each device's part
 * with a combine hook (struct clprim_nth_combine) between their kernels:
 * the samples' splitters to the host and the combined ones back (their
 * bucket tables by nth_table), the bucket counts to the host and their sums
 * back before nth_choose, the chosen buckets placed by the device's own
 * counts, and the small sub-problems finished by the hook instead of
 * nth_small. With no hook none of this runs. */
#include "sample_select.h"
#include "../../cl/internal/layout.h"

#include <stdlib.h>
#include <string.h>

/* Scratch buffers of the engine (clprim__scratch names them; the names are
 * in sample_select.h: top-k uses these buffers too). */
#define SLOT_COUNTS CLPRIM__NTH_SLOT_COUNTS
#define SLOT_META CLPRIM__NTH_SLOT_META
#define SLOT_STATE CLPRIM__NTH_SLOT_STATE
#define SLOT_RANKS CLPRIM__NTH_SLOT_RANKS
#define SLOT_RESULTS CLPRIM__NTH_SLOT_RESULTS
#define SLOT_KEYS_A CLPRIM__NTH_SLOT_KEYS_A
#define SLOT_KEYS_B CLPRIM__NTH_SLOT_KEYS_B

#define BUCKETS NTH_BUCKETS
#define SPLITTERS CLPRIM__NTH_SPLITTERS
#define BASE NTH_BASE
#define SMALL_MAX 65536 /* sub-problems finished by nth_small */

/* The knobs: work-groups per compute unit of the counting and extraction
 * passes (-1: the launch's), and the largest sub-problem that nth_small
 * finishes in one work-group (tests lower it so that small inputs reach
 * the levels that share launches). */
enum { NTH_GROUPS_PER_UNIT, NTH_SMALL_MAX };
static const struct clprim_knob nth_knobs[] = {{"groups_per_unit", 1, 1024},
                                               {"small_max", 16, SMALL_MAX}};
static const struct clprim_tuning_row nth_table[] = {
    {0, 0, NULL, 0, 0, CLPRIM__KNOB(NTH_SMALL_MAX), {[NTH_SMALL_MAX] = SMALL_MAX},
     "sub-problems of up to 2^16 keys in one work-group"},
    {1u << CLPRIM_PATH_CPU, 0, NULL, 0, 0, CLPRIM__KNOB(NTH_SMALL_MAX), {[NTH_SMALL_MAX] = 4096},
     "the cpu path: up to 2^12 (its work-groups are one work-item; PoCL 3.1, 2 cores, "
     "top-1000 of 2^24 floats: 7.4 -> 4.4 ms)"}};
const struct clprim_family clprim__engine_sample_select = {
    "sample_select", nth_knobs, 2, nth_table, sizeof nth_table / sizeof nth_table[0], 0, NULL};

struct clprim_nth_config clprim__nth_config(const clprim_context *ctx) {
  const struct clprim_launch l = clprim__launch(ctx);
  struct clprim_nth_config c = {l.wg, l.max_groups, 16};
  if (ctx->info.path == CLPRIM_PATH_CPU) {
    /* One work-item a work-group (PoCL compiles such kernels in a tenth
     * of the time of 64-wide ones), a share each, and top-k's general
     * tiles of 4096 elements. */
    c.wg = 1;
    c.max_groups = clprim__cpu_shares(ctx, SIZE_MAX, 1);
    c.items = 4096;
  }
  long long v[2];
  clprim__tuned(ctx, &clprim__engine_sample_select, 0, 0, v);
  if (v[NTH_GROUPS_PER_UNIT] > 0)
    c.max_groups = (ctx->info.compute_units ? ctx->info.compute_units : 1) *
                   (size_t)v[NTH_GROUPS_PER_UNIT];
  return c;
}

static int is_float(clprim_type t) {
  return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
}
static unsigned key_bits(clprim_type t) {
  return (unsigned)clprim_type_size(t) * 8;
}

/* The level kernels of cl/nth_element.cl in one program (on GPUs; CPUs
 * build whole files), the top-k kernels of cl/topk.cl in another (see
 * src/topk.c): not one program per kernel (PoCL 3.1 optimised nth_count
 * built alone into wrong buckets, and was right with -cl-opt-disable or
 * with the other level kernels beside it). */
#define LEVEL_KERNELS "nth_sample nth_count nth_choose nth_extract nth_small nth_extract_one"

void clprim__nth_options(clprim_type type, const struct clprim_nth_config *c, int count_nans,
                         char *options, size_t size) {
  snprintf(options, size, "-DT=%s -DT_FLOAT=%d -DT_SIGNED=%d -DKEY_BITS=%u -DWG=%u -DITEMS=%u%s",
           clprim__cl_type(type), is_float(type), clprim__is_signed(type),
           key_bits(type), c->wg, c->items, count_nans ? " -DNTH_COUNT_NANS=1" : "");
}

struct clprim_kernel_request clprim__nth_request(clprim_type type,
                                                 const struct clprim_nth_config *c, int count_nans,
                                                 const char *name, cl_kernel *kernel,
                                                 char *options) {
  clprim__nth_options(type, c, count_nans && strcmp(name, "nth_count") == 0, options, 200);
  const char *const together = LEVEL_KERNELS;
  const struct clprim_kernel_request r = {"nth_element.cl", NULL,   options,
                                          name,             together, kernel,
                                          CLPRIM__SELECTION_FILES, NULL};
  return r;
}

/* The level kernels of one selection, fetched when first needed (a median
 * runs five of the twelve): k[0] for the elements (level 0), k[1] for the
 * keys of later levels, in the order of K_*. */
enum { K_SAMPLE, K_COUNT, K_CHOOSE, K_EXTRACT, K_SMALL, K_EXTRACT_ONE, K_COUNT_OF_KERNELS };
struct nth_kernels {
  clprim_type type[2];
  int count_nans; /* level 0's nth_count counts NaNs */
  const struct clprim_nth_filter *filter; /* level 0's builds: a pipeline's (or NULL) */
  cl_kernel k[2][K_COUNT_OF_KERNELS];
  cl_kernel table[2]; /* nth_table: across devices, and counts by given splitters */
};

/* Builds the kernels of masks[0] (bits 1 << K_*, for the elements) and
 * masks[1] (for the keys) that are not built yet, together. */
static clprim_status nth_need(clprim_context *ctx, const struct clprim_nth_config *c,
                              struct nth_kernels *s, unsigned mask_elements, unsigned mask_keys) {
  static const char *const names[K_COUNT_OF_KERNELS] = {
      "nth_sample", "nth_count", "nth_choose", "nth_extract", "nth_small", "nth_extract_one"};
  char options[2 * K_COUNT_OF_KERNELS][216];
  struct clprim_kernel_request req[2 * K_COUNT_OF_KERNELS];
  unsigned count = 0;
  for (int side = 0; side < 2; ++side) {
    const unsigned mask = side ? mask_keys : mask_elements;
    for (int j = 0; j < K_COUNT_OF_KERNELS; ++j) {
      if (!(mask & (1u << j)) || s->k[side][j]) continue;
      req[count] = clprim__nth_request(s->type[side], c, side == 0 && s->count_nans, names[j],
                                       &s->k[side][j], options[count]);
      if (side == 0 && s->filter) {
        req[count].prefix = s->filter->prefix;
        strcat(options[count], " -DPIPELINE");
      }
      ++count;
    }
  }
  return clprim__kernels(ctx, req, count);
}
#define NTH_BIT(k) (1u << (k))

/* nth_table for side 0 (the elements) or 1 (keys): in a program of its own
 * on GPUs (on CPUs the whole files), so that the level kernels' program is
 * the same whether or not it runs. */
static clprim_status table_need(clprim_context *ctx, const struct clprim_nth_config *c,
                                struct nth_kernels *s, int side) {
  if (s->table[side]) return CLPRIM_SUCCESS;
  char options[216];
  struct clprim_kernel_request r =
      clprim__nth_request(s->type[side], c, 0, "nth_table", &s->table[side], options);
  r.together = NULL;
  return clprim__kernels(ctx, &r, 1);
}

clprim_status clprim__nth_check(clprim_context *ctx, size_t n, clprim_type type,
                                clprim_buffer in, unsigned flags, unsigned allowed,
                                cl_mem *in_mem) {
  CLPRIM_CHECK(clprim__check_type(ctx, "type", type));
  if (n == 0) return clprim__invalid(ctx, "n is 0 (no element to choose)");
  CLPRIM_CHECK(clprim__check_flags(ctx, flags, allowed));
  if ((uint64_t)n >= ((uint64_t)1 << 32))
    return clprim__fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE, "n (%zu) is 2^32 or more", n);
  return clprim__range(ctx, "in", in, clprim_type_size(type), n, CLPRIM__READ, in_mem);
}

/* A bucket (or the input) that holds wanted ranks: keys [offset, offset +
 * len) of buf, whose smallest has rank rank_base; ranks[r0, r1). */
struct sub {
  cl_mem buf;
  size_t offset, len;
  uint64_t all; /* keys on all devices (across devices; else len) */
  uint64_t rank_base;
  unsigned r0, r1;
};

size_t clprim__nth_small_max(const clprim_context *ctx) {
  long long v[2];
  clprim__tuned(ctx, &clprim__engine_sample_select, 0, 0, v);
  return (size_t)v[NTH_SMALL_MAX];
}

/* Level 0's counts of a filtered selection: m, the passing elements (the
 * sum of the bucket totals that nth_count leaves in the meta), then the
 * ranks for m, written where nth_choose reads them. */
static clprim_status filtered_ranks(clprim_context *ctx, const struct clprim_nth_filter *f,
                                    cl_mem meta, cl_mem ranks_dev, uint64_t *ranks,
                                    unsigned *count) {
  uint32_t totals[BUCKETS];
  CLPRIM_CHECK(clprim__read(ctx, meta, NTH_META_TOTALS_AT * 8, sizeof totals, totals));
  uint64_t m = 0;
  for (unsigned b = 0; b < BUCKETS; ++b)
    m += totals[b];
  const unsigned got = f->ranks_of(f->arg, m, ranks);
  if (got == 0 || got > *count) return CLPRIM_ERROR_INVALID_ARGUMENT;
  *count = got;
  /* Not blocking (a blocking write drains the queue on NVIDIA's OpenCL):
   * ranks[] lives until the call's last read. */
  return clprim__write(ctx, ranks_dev, 0, (size_t)got * 8, ranks, 0);
}

/* Whether sub-problem p is finished in one step: by nth_small on one
 * device, by the combine hook's finish across devices. */
static int finished_at_once(const struct sub *p, const struct clprim_nth_combine *comb,
                            size_t small_max, int approximate) {
  return comb ? p->all <= comb->finish_max : p->len <= small_max && !approximate;
}

/* ---- across devices (a combine hook): the host's part of each level. The
 * sub-problems' meta buffers lie meta_words apart, a multiple of the
 * device's base alignment, so that nth_table can take one as a sub-buffer. */

/* The host's room of a combined selection of count ranks. */
struct combined {
  uint64_t *lens, *splitters, *counts, *regions;
  uint32_t *local, *global;
  unsigned char *trees;
  struct clprim_nth_part *parts;
};

static void combined_free(struct combined *m) {
  free(m->lens), free(m->splitters), free(m->counts), free(m->regions), free(m->local);
  free(m->global), free(m->trees), free(m->parts);
}

static int combined_alloc(struct combined *m, size_t count) {
  m->lens = malloc(count * 8), m->splitters = malloc(count * SPLITTERS * 8);
  m->counts = malloc(count * BUCKETS * 8), m->regions = malloc(count * BUCKETS * 8);
  m->local = malloc(count * BUCKETS * 4), m->global = malloc(count * BUCKETS * 4);
  m->trees = malloc(count * SPLITTERS * 8), m->parts = malloc(count * sizeof *m->parts);
  return m->lens && m->splitters && m->counts && m->regions && m->local && m->global && m->trees &&
         m->parts;
}

/* One non-blocking copy of the same `bytes` from word `word` of each of the
 * first nsubs sub-problems' meta buffers (write = 0: to host, where they
 * lie host_pitch bytes apart; 1: from it): one command for all. */
static clprim_status metas_rect(clprim_context *ctx, cl_mem meta, size_t meta_words, int write,
                                size_t nsubs, size_t word, size_t bytes, void *host,
                                size_t host_pitch) {
  const size_t origin[3] = {word * 8, 0, 0}, zero[3] = {0, 0, 0}, region[3] = {bytes, nsubs, 1};
  const size_t pitch = meta_words * 8;
  return (clprim_status)(write ? clEnqueueWriteBufferRect(ctx->queue, meta, CL_FALSE, origin, zero,
                                                          region, pitch, 0, host_pitch, 0, host, 0,
                                                          NULL, NULL)
                               : clEnqueueReadBufferRect(ctx->queue, meta, CL_FALSE, origin, zero,
                                                         region, pitch, 0, host_pitch, 0, host, 0,
                                                         NULL, NULL));
}

/* nth_table on the meta buffer at word meta_at (an aligned sub-buffer:
 * the kernel takes a whole buffer). */
static clprim_status table_at(clprim_context *ctx, cl_kernel table, unsigned wg, cl_mem meta,
                              size_t meta_at) {
  const cl_buffer_region region = {meta_at * 8, NTH_META_WORDS * 8};
  cl_int err = CL_SUCCESS;
  cl_mem sub = meta_at == 0 ? meta
                            : clCreateSubBuffer(meta, CL_MEM_READ_WRITE,
                                                CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  clprim_status st = (clprim_status)err;
  if (st == CLPRIM_SUCCESS) st = clprim__set_args(table, 1, sizeof sub, &sub);
  if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, table, 1, wg);
  if (sub && sub != meta) clReleaseMemObject(sub); /* kept by the runtime until the kernel ran */
  return st;
}

/* Keys of key_size bytes to and from a meta buffer's tree. */
static void pack_tree(size_t key_size, const uint64_t *splitters, unsigned char *tree) {
  for (unsigned j = 0; j < SPLITTERS; ++j) {
    const uint32_t k32 = (uint32_t)splitters[j];
    memcpy(tree + key_size * j, key_size == 4 ? (const void *)&k32 : (const void *)&splitters[j],
           key_size);
  }
}
static void unpack_tree(size_t key_size, const unsigned char *tree, uint64_t *splitters) {
  for (unsigned j = 0; j < SPLITTERS; ++j) {
    uint32_t k32 = 0;
    uint64_t k64 = 0;
    memcpy(key_size == 4 ? (void *)&k32 : (void *)&k64, tree + key_size * j, key_size);
    splitters[j] = key_size == 4 ? k32 : k64;
  }
}

/* After the level's samples: the nbig sub-problems' splitters (m->lens:
 * their keys on this device) to the host,
 * combined, the combined ones to every sub-problem's tree (nth_choose
 * reads them for the equality buckets), and their bucket tables for those
 * with keys on this device (nth_table). */
static clprim_status combine_splitters(clprim_context *ctx, const struct clprim_nth_combine *comb,
                                       clprim_status st, struct combined *m, size_t nbig,
                                       cl_mem meta, size_t meta_words, size_t key_size,
                                       cl_kernel table, unsigned wg) {
  const size_t tree_bytes = SPLITTERS * key_size;
  if (st == CLPRIM_SUCCESS)
    st = metas_rect(ctx, meta, meta_words, 0, nbig, NTH_META_TREE_AT, tree_bytes, m->trees,
                    tree_bytes);
  if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(ctx->queue);
  for (size_t b = 0; st == CLPRIM_SUCCESS && b < nbig; ++b) {
    if (m->lens[b])
      unpack_tree(key_size, m->trees + b * tree_bytes, m->splitters + b * SPLITTERS);
    else
      memset(m->splitters + b * SPLITTERS, 0, SPLITTERS * 8);
  }
  st = comb->splitters(comb->arg, st, nbig, m->lens, m->splitters);
  if (st != CLPRIM_SUCCESS) return st;
  for (size_t b = 0; b < nbig; ++b)
    pack_tree(key_size, m->splitters + b * SPLITTERS, m->trees + b * tree_bytes);
  /* Not blocking: m->trees stays until the call's end. */
  st = metas_rect(ctx, meta, meta_words, 1, nbig, NTH_META_TREE_AT, tree_bytes, m->trees,
                  tree_bytes);
  for (size_t b = 0; st == CLPRIM_SUCCESS && b < nbig; ++b)
    if (m->lens[b] > 0) st = table_at(ctx, table, wg, meta, b * meta_words);
  return st;
}

/* After the level's counts: the nbig sub-problems' bucket totals on this
 * device to the host (kept in m->local for the extraction's regions),
 * combined, and the sums written back where nth_choose reads them. The
 * totals are 32-bit on the device: a bucket of 2^32 keys or more on all
 * devices together fails (CLPRIM_ERROR_SIZE_TOO_LARGE). */
static clprim_status combine_counts(clprim_context *ctx, const struct clprim_nth_combine *comb,
                                    clprim_status st, struct combined *m, size_t nbig, cl_mem meta,
                                    size_t meta_words) {
  if (st == CLPRIM_SUCCESS)
    st = metas_rect(ctx, meta, meta_words, 0, nbig, NTH_META_TOTALS_AT, BUCKETS * 4, m->local,
                    BUCKETS * 4);
  if (st == CLPRIM_SUCCESS) st = (clprim_status)clFinish(ctx->queue);
  for (size_t b = 0; b < nbig; ++b)
    for (unsigned j = 0; j < BUCKETS; ++j) {
      if (st != CLPRIM_SUCCESS || m->lens[b] == 0) m->local[b * BUCKETS + j] = 0;
      m->counts[b * BUCKETS + j] = m->local[b * BUCKETS + j];
    }
  st = comb->counts(comb->arg, st, nbig, m->counts);
  for (size_t i = 0; st == CLPRIM_SUCCESS && i < nbig * BUCKETS; ++i) {
    if (m->counts[i] > UINT32_MAX) st = CLPRIM_ERROR_SIZE_TOO_LARGE; /* alike on every device */
    m->global[i] = (uint32_t)m->counts[i];
  }
  if (st != CLPRIM_SUCCESS) return st;
  return metas_rect(ctx, meta, meta_words, 1, nbig, NTH_META_TOTALS_AT, BUCKETS * 4, m->global,
                    BUCKETS * 4);
}

/* After nth_choose (which placed the chosen buckets by the combined
 * totals): where each chosen bucket of sub-problem `big` goes by this
 * device's own counts (m->local), from out_base, 4-aligned, in bucket
 * order, to m->regions (NOT_CHOSEN for the others); hs: its state.
 * Returns the keys they take. */
static size_t local_regions(struct combined *m, size_t big, const uint64_t *hs, unsigned nranks,
                            uint64_t out_base) {
  uint64_t *region = m->regions + big * BUCKETS;
  const uint32_t *local = m->local + big * BUCKETS;
  for (unsigned b = 0; b < BUCKETS; ++b)
    region[b] = UINT64_MAX;
  for (unsigned r = 0; r < nranks; ++r) {
    const uint64_t b = hs[NTH_STATE_HEAD + NTH_STATE_WORDS * r];
    if (!(b & 1u)) region[b] = 0;
  }
  uint64_t at = out_base;
  for (unsigned b = 0; b < BUCKETS; ++b)
    if (region[b] != UINT64_MAX) region[b] = at, at += ((uint64_t)local[b] + 3) & ~(uint64_t)3;
  return (size_t)(at - out_base);
}

/* clprim__nth_select_ranks, with a filter clprim__nth_select_filtered (the
 * ranks then written to filled[] after level 0's count, and *count_io
 * lowered to their number), with a combine hook clprim__nth_select_combined
 * (n_all: the elements on all devices). */
static clprim_status select_ranks(clprim_context *ctx, clprim_type type, cl_mem in,
                                  size_t in_offset, size_t n, const uint64_t *ranks,
                                  unsigned *count_io, unsigned flags, int approximate,
                                  uint64_t *keys, uint64_t *errors,
                                  const struct clprim_nth_filter *filter, uint64_t *filled,
                                  const struct clprim_nth_combine *comb, uint64_t n_all) {
  unsigned count = *count_io;
  if (filter) ranks = filled;
  const struct clprim_nth_config c = clprim__nth_config(ctx);
  const clprim_type key_type = key_bits(type) == 32 ? CLPRIM_UINT32 : CLPRIM_UINT64;
  const size_t key_size = clprim_type_size(type);
  struct nth_kernels ks;
  memset(&ks, 0, sizeof ks);
  ks.type[0] = type, ks.type[1] = key_type;
  ks.count_nans = is_float(type) && (flags & CLPRIM_NTH_REJECT_NAN); /* level 0 counts NaNs too */
  ks.filter = filter;
  size_t groups = (n / 4 + c.wg - 1) / c.wg;
  if (groups > c.max_groups) groups = c.max_groups;
  if (groups == 0) groups = 1;
  const size_t small_max = clprim__nth_small_max(ctx);
  /* A filter runs in level 0's counting passes, which a small input skips. */
  if (filter && (n <= small_max || approximate || comb)) return CLPRIM_ERROR_INVALID_ARGUMENT;
  /* Across devices the sub-problems' meta buffers lie at aligned offsets
   * (nth_table takes one as a sub-buffer); on one device side by side. */
  const size_t align = ctx->base_align > 64 ? ctx->base_align : 64;
  const size_t meta_words = comb ? (NTH_META_WORDS * 8 + align - 1) / align * align / 8
                                 : NTH_META_WORDS;
  /* What most calls run, built together before anything is enqueued: one
   * counting level over the elements whose chosen bucket nth_small finishes,
   * or nth_small alone for a small input. Later needs are built as they come
   * (nothing of the caller's is written before the last step). Across
   * devices the hook finishes the small ones. */
  clprim_status st = CLPRIM_SUCCESS;
  if (comb)
    st = n_all > comb->finish_max
             ? nth_need(ctx, &c, &ks, NTH_BIT(K_SAMPLE) | NTH_BIT(K_COUNT) | NTH_BIT(K_CHOOSE), 0)
             : CLPRIM_SUCCESS;
  else if (n <= small_max && !approximate)
    st = nth_need(ctx, &c, &ks, NTH_BIT(K_SMALL), 0);
  else
    st = nth_need(ctx, &c, &ks,
                  NTH_BIT(K_SAMPLE) | NTH_BIT(K_COUNT) | NTH_BIT(K_CHOOSE) |
                      (approximate ? 0 : NTH_BIT(K_EXTRACT_ONE)),
                  approximate ? 0 : NTH_BIT(K_SMALL));
  cl_mem counts = NULL, meta = NULL, state = NULL, ranks_dev = NULL, results = NULL,
         level_buf[2] = {NULL, NULL};
  /* A filter's programs are the pipeline's own: on Oclgrind level 0's
   * buffers are then this call's (clprim__scratch_per_call: other programs
   * wrote them in earlier calls). */
  clprim_status (*const level_scratch)(clprim_context *, const char *, size_t, cl_mem *) =
      filter ? clprim__scratch_per_call : clprim__scratch;
  if (st == CLPRIM_SUCCESS) st = level_scratch(ctx, SLOT_COUNTS, groups * BUCKETS * 4, &counts);
  if (st == CLPRIM_SUCCESS) st = level_scratch(ctx, SLOT_META, meta_words * 8, &meta);
  /* state: NTH_JOBS_AT words (nth_small's), then per sub-problem
   * NTH_STATE_HEAD words and NTH_STATE_WORDS per rank (at most count of each). */
  const size_t state_words = NTH_JOBS_AT + (NTH_STATE_HEAD + NTH_STATE_WORDS) * (size_t)count;
  if (st == CLPRIM_SUCCESS) st = level_scratch(ctx, SLOT_STATE, state_words * 8, &state);
  /* The ranks, then a level's table of sub-problems (NTH_SUB_WORDS each);
   * across devices a second table after it: the sub-problems with keys on
   * this device (the others are only chosen from). */
  const size_t tables = comb ? 2 : 1;
  const size_t ranks_words = (size_t)count * (1 + tables * NTH_SUB_WORDS);
  if (st == CLPRIM_SUCCESS) st = clprim__scratch(ctx, SLOT_RANKS, ranks_words * 8, &ranks_dev);
  if (st == CLPRIM_SUCCESS) st = clprim__scratch(ctx, SLOT_RESULTS, (size_t)count * 8, &results);
  if (st != CLPRIM_SUCCESS && !comb) return st;
  uint64_t *host_state = malloc(state_words * 8), *table = malloc(ranks_words * 8);
  /* Per sub-problem of a level: its groups and where its parts start. */
  size_t *cur_groups = malloc(sizeof(size_t) * count);
  cl_ulong *cur_meta = malloc(sizeof(cl_ulong) * 3 * count), *cur_counts = cur_meta + count,
           *cur_state = cur_meta + 2 * count;
  /* nth_small's jobs, after NTH_JOBS_AT words (state[0] is its NaN count);
   * each rank is a job at most once, so every level's jobs get words of
   * their own. */
  uint64_t *jobs = calloc(NTH_JOBS_AT + (size_t)count * NTH_JOB_WORDS, 8);
  struct sub *cur = malloc(sizeof *cur * count), *next = malloc(sizeof *next * count);
  struct combined m;
  memset(&m, 0, sizeof m);
  if (!host_state || !jobs || !cur || !next || !cur_groups || !cur_meta || !table ||
      (comb && !combined_alloc(&m, count)))
    if (st == CLPRIM_SUCCESS) st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  /* Not blocking: the reads below wait for it (and an error path finishes
   * the queue before `ranks` may go away). */
  if (st == CLPRIM_SUCCESS && !filter)
    st = clprim__write(ctx, ranks_dev, 0, (size_t)count * 8, ranks, 0);

  size_t ncur = 1, nnext = 0;
  if (cur) {
    struct sub first = {in, in_offset, n, comb ? n_all : n, 0, 0, count};
    cur[0] = first;
  }
  int small_at_level0 = 0;
  size_t job_base = 0; /* jobs of the levels before */
  for (unsigned level = 0;; ++level) {
    /* Across devices every level starts agreed (a device that failed
     * stops the others here). */
    if (comb) st = comb->agree(comb->arg, st);
    if (st != CLPRIM_SUCCESS || ncur == 0) break;
    cl_kernel *k = ks.k[level == 0 ? 0 : 1];
    /* The level's output buffer, sized by what it can receive: after level
     * 0's one read (its chosen buckets), else the level's keys (the buckets
     * chosen from them are fewer), plus the 4-alignment of each region and
     * of each sub-problem's part. */
    const char *level_slot = level % 2 ? SLOT_KEYS_B : SLOT_KEYS_A;
    if (level > 0) {
      size_t keys = 8 + 8 * (size_t)count;
      for (size_t s = 0; s < ncur; ++s)
        keys += cur[s].len;
      st = clprim__scratch(ctx, level_slot, keys * key_size, &level_buf[level % 2]);
      if (st != CLPRIM_SUCCESS && !comb) break;
    }
    cl_mem out = level_buf[level % 2];
    size_t fill = 0, njobs = 0, room = 0, nbig = 0, all_groups = 0, nactive = 0;
    nnext = 0;
    /* Pass 1: small sub-problems become nth_small jobs (across devices:
     * the hook's); the others get their sample, count and choice enqueued
     * side by side (each its own meta, counts and state parts), then one
     * read of all their states. */
    for (size_t s = 0; s < ncur; ++s) {
      const struct sub *p = &cur[s];
      if (finished_at_once(p, comb, small_max, approximate))
        ++njobs;
      else
        ++nbig;
    }
    /* Many sub-problems share the groups (their counts stay small). */
    const size_t group_cap = nbig > 2 ? (2 * groups + nbig - 1) / nbig : groups;
    for (size_t s = 0; s < ncur; ++s) {
      const struct sub *p = &cur[s];
      size_t g = (p->len / 4 + c.wg - 1) / c.wg;
      if (g > group_cap) g = group_cap;
      if (g == 0 && p->len > 0) g = 1; /* none only across devices, for no keys here */
      cur_groups[s] = g;
      if (!finished_at_once(p, comb, small_max, approximate)) all_groups += g;
    }
    if (nbig > 0 && st == CLPRIM_SUCCESS) {
      st = level_scratch(ctx, SLOT_META, nbig * meta_words * 8, &meta);
      if (st == CLPRIM_SUCCESS)
        st = level_scratch(ctx, SLOT_COUNTS, (all_groups ? all_groups : 1) * BUCKETS * 4, &counts);
    }
    if (st == CLPRIM_SUCCESS) {
      const unsigned level_mask =
          (nbig ? NTH_BIT(K_SAMPLE) | NTH_BIT(K_COUNT) | NTH_BIT(K_CHOOSE) : 0) |
          (njobs && !comb ? NTH_BIT(K_SMALL) : 0);
      st = nth_need(ctx, &c, &ks, level == 0 ? level_mask : 0, level == 0 ? 0 : level_mask);
      if (st == CLPRIM_SUCCESS && comb && nbig) st = table_need(ctx, &c, &ks, level > 0);
    }
    if (st != CLPRIM_SUCCESS && !comb) break;
    njobs = 0;
    size_t big = 0, counts_words = 0;
    /* After level 0, several sub-problems share each launch (a table);
     * across devices always, as the hook's steps go between the kernels. */
    const int batched = nbig > 0 && (comb || (level > 0 && nbig > 1));
    const cl_uint no_subs = 0;
    const cl_ulong subs_at = count, zero64 = 0;
    /* Across devices the loop runs whatever this device's status: every
     * device takes part in the hook's steps for the same sub-problems (its
     * launches come after it, batched). */
    for (size_t s = 0; s < ncur && (st == CLPRIM_SUCCESS || comb); ++s) {
      const struct sub *p = &cur[s];
      cl_ulong off = p->offset, len = p->len, rank_base = p->rank_base;
      cl_uint r0 = p->r0, r1 = p->r1;
      if (finished_at_once(p, comb, small_max, approximate)) {
        if (comb) { /* the hook's */
          const struct clprim_nth_part part = {p->buf, p->offset, p->len, p->all, p->rank_base,
                                               p->r0, p->r1};
          m.parts[njobs++] = part;
          continue;
        }
        /* one nth_small job per rank */
        if (level == 0) small_at_level0 = 1;
        for (unsigned r = r0; r < r1; ++r, ++njobs) {
          uint64_t *j = jobs + NTH_JOBS_AT + NTH_JOB_WORDS * (job_base + njobs);
          j[0] = off, j[1] = len, j[2] = ranks[r] - rank_base, j[3] = r, j[4] = room;
          if (len > BASE) room += 2 * (size_t)len;
        }
        continue;
      }
      const size_t g = cur_groups[s];
      cl_ulong seed = 0x5EED0000ull + level * 1000003ull + s + (comb ? comb->seed : 0),
               out_base = fill;
      cl_ulong meta_at = big * meta_words, counts_at = counts_words,
               state_at = NTH_STATE_HEAD * big + NTH_STATE_WORDS * r0;
      cur_meta[s] = meta_at, cur_counts[s] = counts_at, cur_state[s] = state_at;
      /* Each sub-problem's chosen buckets fit in its keys plus the
       * 4-alignment of each (level 0: placed after the read, at 0). */
      fill += (((size_t)len + 3) & ~(size_t)3) + 4 * (size_t)(r1 - r0); /* 4-aligned: VEC4 loads */
      if (batched) {
        uint64_t *row = table + count + NTH_SUB_WORDS * big;
        row[0] = off, row[1] = len, row[2] = counts_words / BUCKETS, row[3] = g;
        row[4] = meta_at, row[5] = counts_at, row[6] = state_at, row[7] = r0, row[8] = r1;
        row[9] = rank_base, row[10] = out_base, row[11] = seed;
        if (comb) m.lens[big] = p->len;
      }
      ++big, counts_words += g * BUCKETS;
      if (batched) continue;
      st = clprim__set_args(k[0], 9, sizeof p->buf, &p->buf, sizeof off, &off, sizeof len, &len,
                            sizeof seed, &seed, sizeof meta, &meta, sizeof meta_at, &meta_at,
                            sizeof ranks_dev, &ranks_dev, sizeof subs_at, &subs_at, sizeof no_subs,
                            &no_subs);
      const int filtered = filter && level == 0; /* the filter's kernel arguments after ours */
      const cl_int fail_low = 0; /* nth_sample: a failing element as KEY_MAX (sample_select.h) */
      if (st == CLPRIM_SUCCESS && filtered)
        st = (clprim_status)clSetKernelArg(k[0], 9, sizeof fail_low, &fail_low);
      if (st == CLPRIM_SUCCESS && filtered)
        filter->extra->first = 10, st = clprim__set_extra_args(k[0], filter->extra);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[0], 1, c.wg);
      if (st == CLPRIM_SUCCESS)
        st = clprim__set_args(k[1], 10, sizeof p->buf, &p->buf, sizeof off, &off, sizeof len, &len,
                              sizeof meta, &meta, sizeof meta_at, &meta_at, sizeof counts, &counts,
                              sizeof counts_at, &counts_at, sizeof ranks_dev, &ranks_dev,
                              sizeof subs_at, &subs_at, sizeof no_subs, &no_subs);
      if (st == CLPRIM_SUCCESS && filtered)
        filter->extra->first = 10, st = clprim__set_extra_args(k[1], filter->extra);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[1], g, c.wg);
      if (st == CLPRIM_SUCCESS && filtered) { /* one sub-problem: ranks [0, count) */
        st = filtered_ranks(ctx, filter, meta, ranks_dev, filled, &count);
        cur[s].r1 = r1 = count;
      }
      if (st == CLPRIM_SUCCESS)
        st = clprim__set_args(
            k[2], 13, sizeof meta, &meta, sizeof meta_at, &meta_at, sizeof ranks_dev, &ranks_dev,
            sizeof r0, &r0, sizeof r1, &r1, sizeof rank_base, &rank_base, sizeof out_base,
            &out_base, sizeof state, &state, sizeof state_at, &state_at, sizeof results, &results,
            sizeof ranks_dev, &ranks_dev, sizeof subs_at, &subs_at, sizeof no_subs, &no_subs);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[2], 1, c.wg);
    }
    /* Across devices, the small sub-problems first: the hook's answers,
     * also to the results where the final read takes them (approximate:
     * exact answers, no rank distance). */
    if (comb && njobs > 0) {
      st = comb->finish(comb->arg, st, level == 0, m.parts, njobs, ranks, keys);
      for (size_t j = 0; st == CLPRIM_SUCCESS && j < njobs; ++j) {
        const struct clprim_nth_part *q = &m.parts[j];
        if (approximate)
          for (unsigned r = q->r0; r < q->r1; ++r)
            errors[r] = 0;
        else /* not blocking: keys[] stays until the final read, which is after it */
          st = clprim__write(ctx, results, q->r0 * 8, (size_t)(q->r1 - q->r0) * 8, keys + q->r0, 0);
      }
      njobs = 0;
    }
    cl_mem level_in = ncur > 0 ? cur[0].buf : NULL; /* after level 0, one buffer */
    const cl_uint nsubs = (cl_uint)nbig;
    /* The launches that count keys on this device: across devices those of
     * the sub-problems with keys here, in the second table (every
     * sub-problem's choice is made on every device). */
    cl_ulong active_at = subs_at;
    if (batched && comb) {
      active_at = count + nbig * NTH_SUB_WORDS;
      for (size_t b = 0; b < nbig; ++b)
        if (m.lens[b] > 0)
          memcpy(table + active_at + NTH_SUB_WORDS * nactive++, table + count + NTH_SUB_WORDS * b,
                 NTH_SUB_WORDS * 8);
    } else {
      nactive = nbig;
    }
    const cl_uint nact = (cl_uint)nactive;
    if (batched && (st == CLPRIM_SUCCESS || comb)) {
      /* With the ranks before it (Oclgrind counts a write that leaves the
       * buffer's head out as uninitialised). Not blocking: the state read
       * below waits for it. */
      memcpy(table, ranks, (size_t)count * 8);
      if (st == CLPRIM_SUCCESS)
        st = clprim__write(ctx, ranks_dev, 0,
                           (count + (nbig + (comb ? nactive : 0)) * NTH_SUB_WORDS) * 8, table, 0);
      if (st == CLPRIM_SUCCESS && nactive > 0)
        st = clprim__set_args(k[0], 9, sizeof level_in, &level_in, sizeof zero64, &zero64,
                              sizeof zero64, &zero64, sizeof zero64, &zero64, sizeof meta, &meta,
                              sizeof zero64, &zero64, sizeof ranks_dev, &ranks_dev,
                              sizeof active_at, &active_at, sizeof nact, &nact);
      if (st == CLPRIM_SUCCESS && nactive > 0) st = clprim__enqueue(ctx, k[0], nactive, c.wg);
      if (comb)
        st = combine_splitters(ctx, comb, st, &m, nbig, meta, meta_words, key_size,
                               ks.table[level > 0], c.wg);
      if (st == CLPRIM_SUCCESS && nactive > 0)
        st = clprim__set_args(k[1], 10, sizeof level_in, &level_in, sizeof zero64, &zero64,
                              sizeof zero64, &zero64, sizeof meta, &meta, sizeof zero64, &zero64,
                              sizeof counts, &counts, sizeof zero64, &zero64, sizeof ranks_dev,
                              &ranks_dev, sizeof active_at, &active_at, sizeof nact, &nact);
      if (st == CLPRIM_SUCCESS && nactive > 0) st = clprim__enqueue(ctx, k[1], all_groups, c.wg);
      if (comb) st = combine_counts(ctx, comb, st, &m, nbig, meta, meta_words);
      const cl_uint zero32 = 0;
      if (st == CLPRIM_SUCCESS)
        st = clprim__set_args(
            k[2], 13, sizeof meta, &meta, sizeof zero64, &zero64, sizeof ranks_dev, &ranks_dev,
            sizeof zero32, &zero32, sizeof zero32, &zero32, sizeof zero64, &zero64, sizeof zero64,
            &zero64, sizeof state, &state, sizeof zero64, &zero64, sizeof results, &results,
            sizeof ranks_dev, &ranks_dev, sizeof subs_at, &subs_at, sizeof nsubs, &nsubs);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[2], nbig, c.wg);
    }
    if (st == CLPRIM_SUCCESS && nbig > 0) {
      size_t words = 0;
      for (size_t s = 0; s < ncur; ++s)
        if (!finished_at_once(&cur[s], comb, small_max, approximate))
          words = cur_state[s] + NTH_STATE_HEAD + NTH_STATE_WORDS * (size_t)(cur[s].r1 - cur[s].r0);
      st = clprim__read(ctx, state, 0, words * 8, host_state);
    }
    /* Pass 2: the next level's sub-problems, and the extractions. */
    int any_extract = 0;
    big = 0;
    for (size_t s = 0; s < ncur && st == CLPRIM_SUCCESS; ++s) {
      const struct sub *p = &cur[s];
      if (finished_at_once(p, comb, small_max, approximate)) continue;
      cl_ulong off = p->offset, len = p->len, meta_at = cur_meta[s], counts_at = cur_counts[s];
      const unsigned r0 = p->r0, r1 = p->r1;
      const uint64_t *hs = host_state + cur_state[s];
      if (level == 0 && (flags & CLPRIM_NTH_REJECT_NAN) && hs[0] > 0) {
        st = clprim__invalid(ctx, "in holds a NaN (CLPRIM_NTH_REJECT_NAN)");
        break;
      }
      /* Across devices the chosen buckets go where this device's own
       * counts place them (nth_choose placed them by the sums). */
      const size_t row = big++; /* its row in the level's table */
      const uint64_t out_base = comb ? table[count + NTH_SUB_WORDS * row + 10] : 0;
      const size_t local_keys =
          comb && !approximate ? local_regions(&m, row, hs, r1 - r0, out_base) : 0;
      if (level == 0 && !approximate) { /* one sub-problem at level 0 */
        st = clprim__scratch(ctx, level_slot, ((size_t)(comb ? local_keys : hs[1]) + 8) * key_size,
                             &out);
        if (st != CLPRIM_SUCCESS) break;
      }
      if (approximate) {
        for (unsigned r = r0; r < r1; ++r) {
          keys[r] = hs[NTH_STATE_HEAD + NTH_STATE_WORDS * (r - r0) + 4];
          errors[r] = hs[NTH_STATE_HEAD + NTH_STATE_WORDS * (r - r0) + 5];
        }
        continue;
      }
      /* Ranks in one open bucket become one sub-problem of the next level. */
      for (unsigned r = r0; r < r1;) {
        const uint64_t *w = hs + NTH_STATE_HEAD + NTH_STATE_WORDS * (r - r0);
        unsigned e = r + 1;
        while (e < r1 && hs[NTH_STATE_HEAD + NTH_STATE_WORDS * (e - r0)] == w[0])
          ++e;
        if (!(w[0] & 1u)) {
          struct sub q = {out, (size_t)w[3], (size_t)w[2], w[2], p->rank_base + w[1], r, e};
          if (comb)
            q.offset = (size_t)m.regions[row * BUCKETS + w[0]],
            q.len = m.local[row * BUCKETS + w[0]];
          next[nnext++] = q;
        }
        r = e;
      }
      if (comb ? local_keys > 0 && p->len > 0 : hs[1] > 0) any_extract = 1;
      if (hs[1] > 0 && !batched) {
        /* One open bucket chosen: nth_extract_one, a streaming pass by its
         * key range. */
        cl_uint one = 0, nopen = 0;
        for (unsigned r = r0; r < r1; ++r) {
          const uint64_t b = hs[NTH_STATE_HEAD + NTH_STATE_WORDS * (r - r0)];
          if (!(b & 1u) && (nopen == 0 || b != one)) one = (cl_uint)b, ++nopen;
        }
        st =
            nth_need(ctx, &c, &ks, level == 0 ? NTH_BIT(nopen == 1 ? K_EXTRACT_ONE : K_EXTRACT) : 0,
                     level == 0 ? 0 : NTH_BIT(nopen == 1 ? K_EXTRACT_ONE : K_EXTRACT));
        if (st != CLPRIM_SUCCESS) break;
        cl_kernel x = nopen == 1 ? k[K_EXTRACT_ONE] : k[K_EXTRACT];
        st = clprim__set_args(x, 11, sizeof p->buf, &p->buf, sizeof off, &off, sizeof len, &len,
                              sizeof meta, &meta, sizeof meta_at, &meta_at, sizeof counts, &counts,
                              sizeof counts_at, &counts_at, sizeof out, &out, sizeof ranks_dev,
                              &ranks_dev, sizeof subs_at, &subs_at, sizeof no_subs, &no_subs);
        if (st == CLPRIM_SUCCESS && nopen == 1)
          st = (clprim_status)clSetKernelArg(x, 11, sizeof one, &one);
        if (st == CLPRIM_SUCCESS && filter && level == 0)
          filter->extra->first = nopen == 1 ? 12 : 11,
          st = clprim__set_extra_args(x, filter->extra);
        if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, x, cur_groups[s], c.wg);
      }
    }
    /* Across devices: the regions by this device's counts over those of
     * nth_choose (not blocking: m.regions stays until the call's end). */
    if (st == CLPRIM_SUCCESS && comb && any_extract)
      st = metas_rect(ctx, meta, meta_words, 1, nbig, 0, BUCKETS * 8, m.regions, BUCKETS * 8);
    if (st == CLPRIM_SUCCESS && batched && any_extract)
      st = nth_need(ctx, &c, &ks, level == 0 ? NTH_BIT(K_EXTRACT) : 0,
                    level == 0 ? 0 : NTH_BIT(K_EXTRACT));
    if (st == CLPRIM_SUCCESS && batched && any_extract) {
      st = clprim__set_args(k[3], 11, sizeof level_in, &level_in, sizeof zero64, &zero64,
                            sizeof zero64, &zero64, sizeof meta, &meta, sizeof zero64, &zero64,
                            sizeof counts, &counts, sizeof zero64, &zero64, sizeof out, &out,
                            sizeof ranks_dev, &ranks_dev, sizeof active_at, &active_at,
                            sizeof nact, &nact);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[3], all_groups, c.wg);
    }
    if (st == CLPRIM_SUCCESS && njobs > 0) {
      /* The jobs' room is the counts buffer (free once this level's
       * extractions are enqueued), grown if needed. */
      st = clprim__scratch(
          ctx, SLOT_COUNTS,
          room * key_size > groups * BUCKETS * 4 ? room * key_size : groups * BUCKETS * 4, &counts);
      /* Not blocking (no round trip before nth_small): each level's jobs
       * have their own words of `jobs`, unchanged until the final read.
       * The write starts at the buffer's head (rewriting the earlier
       * levels' jobs as they were): Oclgrind counts a write that leaves
       * the head out as uninitialised. */
      cl_ulong base64 = job_base;
      if (st == CLPRIM_SUCCESS)
        st = clprim__write(ctx, state, 0, (NTH_JOBS_AT + NTH_JOB_WORDS * (job_base + njobs)) * 8,
                           jobs, 0);
      if (st == CLPRIM_SUCCESS)
        st = clprim__set_args(k[4], 5, sizeof level_in, &level_in, sizeof state, &state,
                              sizeof base64, &base64, sizeof counts, &counts, sizeof results,
                              &results);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[4], njobs, c.wg);
      job_base += njobs;
    }
    struct sub *t = cur;
    cur = next, next = t;
    ncur = nnext;
  }
  if (st == CLPRIM_SUCCESS && !approximate) {
    st = clprim__read(ctx, results, 0, (size_t)count * 8, keys);
    if (st == CLPRIM_SUCCESS && small_at_level0 && (flags & CLPRIM_NTH_REJECT_NAN)) {
      uint64_t nans = 0;
      st = clprim__read(ctx, state, 0, 8, &nans);
      if (st == CLPRIM_SUCCESS && nans > 0)
        st = clprim__invalid(ctx, "in holds a NaN (CLPRIM_NTH_REJECT_NAN)");
    }
  }
  if (comb) st = comb->agree(comb->arg, st);
  if (st != CLPRIM_SUCCESS) clFinish(ctx->queue);
  free(host_state);
  free(cur_groups);
  free(cur_meta);
  free(table);
  free(jobs);
  free(cur);
  free(next);
  combined_free(&m);
  *count_io = count;
  return st;
}

clprim_status clprim__nth_select_ranks(clprim_context *ctx, clprim_type type, cl_mem in,
                                       size_t in_offset, size_t n, const uint64_t *ranks,
                                       unsigned count, unsigned flags, int approximate,
                                       uint64_t *keys, uint64_t *errors) {
  return select_ranks(ctx, type, in, in_offset, n, ranks, &count, flags, approximate, keys,
                      errors, NULL, NULL, NULL, n);
}

clprim_status clprim__nth_select_combined(clprim_context *ctx, clprim_type type, cl_mem in,
                                          size_t in_offset, size_t n, uint64_t n_all,
                                          const uint64_t *ranks, unsigned count, unsigned flags,
                                          int approximate,
                                          const struct clprim_nth_combine *combine,
                                          uint64_t *keys, uint64_t *errors) {
  return select_ranks(ctx, type, in, in_offset, n, ranks, &count, flags, approximate, keys,
                      errors, NULL, NULL, combine, n_all);
}

clprim_status clprim__nth_select_filtered(clprim_context *ctx, clprim_type type, cl_mem in,
                                          size_t n, const struct clprim_nth_filter *filter,
                                          unsigned count, uint64_t *ranks, uint64_t *keys,
                                          unsigned *distinct) {
  *distinct = count;
  return select_ranks(ctx, type, in, 0, n, ranks, distinct, 0, 0, keys, NULL, filter, ranks, NULL,
                      n);
}

clprim_status clprim__nth_count_by_splitters(clprim_context *ctx, clprim_type type, cl_mem in,
                                             size_t n, const uint64_t *splitters,
                                             uint64_t *totals) {
  const struct clprim_nth_config c = clprim__nth_config(ctx);
  struct nth_kernels ks;
  memset(&ks, 0, sizeof ks);
  ks.type[0] = type;
  memset(totals, 0, BUCKETS * 8);
  if (n == 0) return CLPRIM_SUCCESS;
  CLPRIM_CHECK(nth_need(ctx, &c, &ks, NTH_BIT(K_COUNT), 0));
  CLPRIM_CHECK(table_need(ctx, &c, &ks, 0));
  size_t groups = (n / 4 + c.wg - 1) / c.wg;
  if (groups > c.max_groups) groups = c.max_groups;
  if (groups == 0) groups = 1;
  cl_mem meta, counts;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_META, NTH_META_WORDS * 8, &meta));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_COUNTS, groups * BUCKETS * 4, &counts));
  const size_t key_size = clprim_type_size(type);
  unsigned char tree[SPLITTERS * 8];
  pack_tree(key_size, splitters, tree);
  CLPRIM_CHECK(clprim__write(ctx, meta, NTH_META_TREE_AT * 8, SPLITTERS * key_size, tree, 1));
  CLPRIM_CHECK(table_at(ctx, ks.table[0], c.wg, meta, 0));
  const cl_ulong zero = 0, n64 = n;
  const cl_uint no_subs = 0;
  CLPRIM_CHECK(clprim__set_args(ks.k[0][K_COUNT], 10, sizeof in, &in, sizeof zero, &zero,
                                sizeof n64, &n64, sizeof meta, &meta, sizeof zero, &zero,
                                sizeof counts, &counts, sizeof zero, &zero, sizeof meta, &meta,
                                sizeof zero, &zero, sizeof no_subs, &no_subs));
  CLPRIM_CHECK(clprim__enqueue(ctx, ks.k[0][K_COUNT], groups, c.wg));
  uint32_t t32[BUCKETS];
  CLPRIM_CHECK(clprim__read(ctx, meta, NTH_META_TOTALS_AT * 8, sizeof t32, t32));
  for (unsigned b = 0; b < BUCKETS; ++b)
    totals[b] = t32[b];
  return CLPRIM_SUCCESS;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

size_t clprim__distinct_ranks(uint64_t *ranks, size_t count) {
  qsort(ranks, count, 8, cmp_u64);
  size_t distinct = 0;
  for (size_t r = 0; r < count; ++r)
    if (distinct == 0 || ranks[distinct - 1] != ranks[r]) ranks[distinct++] = ranks[r];
  return distinct;
}

size_t clprim__rank_slot(const uint64_t *distinct, size_t count, uint64_t rank) {
  size_t lo = 0, hi = count - 1;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (distinct[mid] < rank)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

