/* nth_element.c: selection by rank (nth_element, approximate selection,
 * quantiles, median) and top-k, kernels in cl/nth_element.cl (SampleSelect,
 * Ribizel and Anzt).
 *
 * The levels are driven from the host: every sub-problem (a bucket that
 * holds wanted ranks) costs a sample, a counting pass, a choice and one small
 * blocking read (its buckets' sizes), then an extraction of the chosen
 * buckets into the next level's buffer. Buckets of at most SMALL_MAX keys
 * are finished by one launch per level (nth_small: a work-group per rank,
 * no round trips). Level 0 reads the caller's elements (kernels built
 * for the type), later levels read keys (built for uint / ulong). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Scratch slots of this family. */
/* Scratch buffers of this family (clprim__scratch names them). */
#define SLOT_COUNTS "nth: per-group bucket counts" /* uint */
#define SLOT_META "nth: meta"                      /* META_WORDS ulongs, see the kernel */
#define SLOT_STATE "nth: state"                    /* nth_choose's answers */
#define SLOT_RANKS "nth: ranks"                    /* the wanted ranks, sorted */
#define SLOT_RESULTS "nth: results"                /* the keys of the ranks */
#define SLOT_KEYS_A "nth: keys A"                  /* levels' keys; top-k sort keys */
#define SLOT_KEYS_B "nth: keys B"                  /* levels' keys; top-k sort indices */
#define SLOT_TOPK_COUNTS "topk: tile counts"       /* the general path's scanned counts */
#define SLOT_TOPK_CANDIDATES "topk: candidates"    /* topk_small's candidates */

#define BUCKETS 512 /* as in cl/nth_element.cl */
#define META_WORDS 3368
#define BASE 2048
#define STATE_WORDS 6
#define SUB_WORDS 12                 /* as in cl/nth_element.cl */
#define SMALL_MAX 65536              /* sub-problems finished by nth_small */
#define TOPK_SMALL_MIN_N (16 * BASE) /* top-k by candidates from here on */

struct nth_config {
  unsigned wg;       /* work-items per work-group (a power of two, <= 512) */
  size_t max_groups; /* counting / extraction work-groups */
  unsigned items;    /* top-k elements per work-item */
};

static struct nth_config nth_config(const clprim_context *ctx) {
  const struct clprim_launch l = clprim__launch(ctx);
  struct nth_config c = {l.wg, l.max_groups, 16};
  const long long tune = ctx->tuning[CLPRIM_KNOB_NTH_GROUPS_PER_UNIT]; /* for comparisons */
  if (tune > 0 && tune <= 1024)
    c.max_groups = (ctx->info.compute_units ? ctx->info.compute_units : 1) * (size_t)tune;
  return c;
}

static int is_float(clprim_type t) {
  return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE;
}
static unsigned key_bits(clprim_type t) {
  return (unsigned)clprim_type_size(t) * 8;
}

/* The programs of cl/nth_element.cl: the level kernels in one, the top-k
 * kernels in another (not one program per kernel: PoCL 3.1 optimised
 * nth_count built alone into wrong buckets, and was right with
 * -cl-opt-disable or with the other level kernels beside it). */
#define LEVEL_KERNELS "nth_sample nth_count nth_choose nth_extract nth_small nth_extract_one"
#define TOPK_KERNELS                                                                               \
  "topk_count topk_scatter topk_pad topk_sort_step topk_gather topk_range_count "                 \
  "topk_candidates topk_candidates_direct topk_split topk_finish"
static const char *together_of(const char *name) {
  return strncmp(name, "nth_", 4) == 0 ? LEVEL_KERNELS : TOPK_KERNELS;
}

/* Build options of cl/nth_element.cl for type; count_nans: the build whose
 * nth_count also counts NaNs (for CLPRIM_NTH_REJECT_NAN). */
static void nth_options(clprim_type type, const struct nth_config *c, int count_nans,
                        char *options, size_t size) {
  snprintf(options, size, "-DT=%s -DT_FLOAT=%d -DT_SIGNED=%d -DKEY_BITS=%u -DWG=%u -DITEMS=%u%s",
           clprim__cl_type(type), is_float(type), type == CLPRIM_INT32 || type == CLPRIM_INT64,
           key_bits(type), c->wg, c->items, count_nans ? " -DNTH_COUNT_NANS=1" : "");
}

/* The request for kernel `name` of cl/nth_element.cl built for type, in
 * its group; count_nans: nth_count's build that counts NaNs. options (200
 * chars) receives the build options and must live as long as the request. */
static struct clprim_kernel_request nth_request(clprim_type type, const struct nth_config *c,
                                                int count_nans, const char *name,
                                                cl_kernel *kernel, char *options) {
  nth_options(type, c, count_nans && strcmp(name, "nth_count") == 0, options, 200);
  const struct clprim_kernel_request r = {"nth_element.cl", NULL, options, name,
                                          together_of(name), kernel};
  return r;
}

/* Builds names[j] of cl/nth_element.cl for type into kernels[j], together;
 * count_nans: nth_count's build that counts NaNs. */
static clprim_status nth_kernels_named(clprim_context *ctx, clprim_type type,
                                       const struct nth_config *c, int count_nans, unsigned count,
                                       const char *const *names, cl_kernel *kernels) {
  char options[8][200];
  struct clprim_kernel_request req[8];
  if (count > 8) return CLPRIM_ERROR_INVALID_ARGUMENT;
  for (unsigned j = 0; j < count; ++j)
    req[j] = nth_request(type, c, count_nans, names[j], &kernels[j], options[j]);
  return clprim__kernels(ctx, req, count);
}

/* The level kernels of one selection, fetched when first needed (a median
 * runs five of the twelve): k[0] for the elements (level 0), k[1] for the
 * keys of later levels, in the order of K_*. */
enum { K_SAMPLE, K_COUNT, K_CHOOSE, K_EXTRACT, K_SMALL, K_EXTRACT_ONE, K_COUNT_OF_KERNELS };
struct nth_kernels {
  clprim_type type[2];
  int count_nans; /* level 0's nth_count counts NaNs */
  cl_kernel k[2][K_COUNT_OF_KERNELS];
};

/* Builds the kernels of masks[0] (bits 1 << K_*, for the elements) and
 * masks[1] (for the keys) that are not built yet, together. */
static clprim_status nth_need(clprim_context *ctx, const struct nth_config *c,
                              struct nth_kernels *s, unsigned mask_elements, unsigned mask_keys) {
  static const char *const names[K_COUNT_OF_KERNELS] = {
      "nth_sample", "nth_count", "nth_choose", "nth_extract", "nth_small", "nth_extract_one"};
  char options[2 * K_COUNT_OF_KERNELS][200];
  struct clprim_kernel_request req[2 * K_COUNT_OF_KERNELS];
  unsigned count = 0;
  for (int side = 0; side < 2; ++side) {
    const unsigned mask = side ? mask_keys : mask_elements;
    for (int j = 0; j < K_COUNT_OF_KERNELS; ++j) {
      if (!(mask & (1u << j)) || s->k[side][j]) continue;
      req[count] = nth_request(s->type[side], c, side == 0 && s->count_nans, names[j],
                               &s->k[side][j], options[count]);
      ++count;
    }
  }
  return clprim__kernels(ctx, req, count);
}
#define NTH_BIT(k) (1u << (k))

/* The element whose key is `key` (NaN keys give a quiet NaN). */
static clprim_value value_of_key(clprim_type type, uint64_t key) {
  clprim_value v;
  memset(&v, 0, sizeof v);
  switch (type) {
  case CLPRIM_INT32:
    v.u32 = (uint32_t)key ^ 0x80000000u;
    break;
  case CLPRIM_UINT32:
    v.u32 = (uint32_t)key;
    break;
  case CLPRIM_INT64:
    v.u64 = key ^ 0x8000000000000000ull;
    break;
  case CLPRIM_UINT64:
    v.u64 = key;
    break;
  case CLPRIM_FLOAT: {
    uint32_t k = (uint32_t)key;
    v.u32 = (k & 0x80000000u) ? k ^ 0x80000000u : ~k;
    break;
  }
  case CLPRIM_DOUBLE:
    v.u64 = (key & 0x8000000000000000ull) ? key ^ 0x8000000000000000ull : ~key;
    break;
  }
  return v;
}

static clprim_status check_common(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                                  unsigned flags, unsigned allowed) {
  if (!ctx) return CLPRIM_ERROR_INVALID_ARGUMENT;
  CLPRIM_CHECK(clprim__check_type(ctx, type));
  if (n == 0 || (flags & ~allowed)) return CLPRIM_ERROR_INVALID_ARGUMENT;
  if ((uint64_t)n >= ((uint64_t)1 << 32)) return CLPRIM_ERROR_SIZE_TOO_LARGE;
  return clprim__check_buffer(ctx, in, clprim__bytes(n, clprim_type_size(type)));
}

/* A bucket (or the input) that holds wanted ranks: keys [offset, offset +
 * len) of buf, whose smallest has rank rank_base; ranks[r0, r1). */
struct sub {
  cl_mem buf;
  size_t offset, len;
  uint64_t rank_base;
  unsigned r0, r1;
};

/* The keys of the ranks `ranks` (sorted ascending, each < n, count of them)
 * of the n elements of in from element in_offset (a multiple of 4), to keys[] on the host (and left
 * in SLOT_RESULTS). approximate: one level only; keys[] gets the nearest splitter and errors[] its
 * rank distance. Enqueues from the first kernel on; the call is begun and its arguments checked. */
static clprim_status select_ranks(clprim_context *ctx, clprim_type type, cl_mem in,
                                  size_t in_offset, size_t n, const uint64_t *ranks, unsigned count,
                                  unsigned flags, int approximate, uint64_t *keys,
                                  uint64_t *errors) {
  const struct nth_config c = nth_config(ctx);
  const clprim_type key_type = key_bits(type) == 32 ? CLPRIM_UINT32 : CLPRIM_UINT64;
  const size_t key_size = clprim_type_size(type);
  struct nth_kernels ks;
  memset(&ks, 0, sizeof ks);
  ks.type[0] = type, ks.type[1] = key_type;
  ks.count_nans = is_float(type) && (flags & CLPRIM_NTH_REJECT_NAN); /* level 0 counts NaNs too */
  size_t groups = (n / 4 + c.wg - 1) / c.wg;
  if (groups > c.max_groups) groups = c.max_groups;
  if (groups == 0) groups = 1;
  /* CLPRIM_NTH_SMALL_MAX (tests): smaller sub-problems go to nth_small, so
   * that small inputs reach the levels that share launches. */
  size_t small_max = SMALL_MAX;
  const long long small_tune = ctx->tuning[CLPRIM_KNOB_NTH_SMALL_MAX];
  if (small_tune >= 16 && small_tune <= SMALL_MAX) small_max = (size_t)small_tune;
  /* What most calls run, built together before anything is enqueued: one
   * counting level over the elements whose chosen bucket nth_small finishes,
   * or nth_small alone for a small input. Later needs are built as they come
   * (nothing of the caller's is written before the last step). */
  if (n <= small_max && !approximate)
    CLPRIM_CHECK(nth_need(ctx, &c, &ks, NTH_BIT(K_SMALL), 0));
  else
    CLPRIM_CHECK(nth_need(ctx, &c, &ks,
                          NTH_BIT(K_SAMPLE) | NTH_BIT(K_COUNT) | NTH_BIT(K_CHOOSE) |
                              (approximate ? 0 : NTH_BIT(K_EXTRACT_ONE)),
                          approximate ? 0 : NTH_BIT(K_SMALL)));
  cl_mem counts, meta, state, ranks_dev, results, level_buf[2] = {NULL, NULL};
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_COUNTS, groups * BUCKETS * 4, &counts));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_META, META_WORDS * 8, &meta));
  /* state: 8 words (nth_small's), then per sub-problem 2 words and
   * STATE_WORDS per rank (at most count of each). */
  const size_t state_words = 8 + (2 + STATE_WORDS) * (size_t)count;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_STATE, state_words * 8, &state));
  /* The ranks, then a level's table of sub-problems (SUB_WORDS each). */
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RANKS, (size_t)count * 8 * (1 + SUB_WORDS), &ranks_dev));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RESULTS, (size_t)count * 8, &results));
  uint64_t *host_state = malloc(state_words * 8),
           *table = malloc((size_t)count * 8 * (1 + SUB_WORDS));
  /* Per sub-problem of a level: its groups and where its parts start. */
  size_t *cur_groups = malloc(sizeof(size_t) * count);
  cl_ulong *cur_meta = malloc(sizeof(cl_ulong) * 3 * count), *cur_counts = cur_meta + count,
           *cur_state = cur_meta + 2 * count;
  /* nth_small's jobs, after 8 words (state[0] is its NaN count); each rank
   * is a job at most once, so every level's jobs get words of their own. */
  uint64_t *jobs = calloc(8 + (size_t)count * 5, 8);
  struct sub *cur = malloc(sizeof *cur * count), *next = malloc(sizeof *next * count);
  clprim_status st = CLPRIM_SUCCESS;
  if (!host_state || !jobs || !cur || !next || !cur_groups || !cur_meta || !table)
    st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  /* Not blocking: the reads below wait for it (and an error path finishes
   * the queue before `ranks` may go away). */
  if (st == CLPRIM_SUCCESS)
    st = (clprim_status)clEnqueueWriteBuffer(ctx->queue, ranks_dev, CL_FALSE, 0, (size_t)count * 8,
                                             ranks, 0, NULL, NULL);

  size_t ncur = 1, nnext = 0;
  if (st == CLPRIM_SUCCESS) {
    struct sub first = {in, in_offset, n, 0, 0, count};
    cur[0] = first;
  }
  int small_at_level0 = 0;
  size_t job_base = 0; /* jobs of the levels before */
  for (unsigned level = 0; st == CLPRIM_SUCCESS && ncur > 0; ++level) {
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
      if (st != CLPRIM_SUCCESS) break;
    }
    cl_mem out = level_buf[level % 2];
    size_t fill = 0, njobs = 0, room = 0, nbig = 0, all_groups = 0;
    nnext = 0;
    /* Pass 1: small sub-problems become nth_small jobs; the others get
     * their sample, count and choice enqueued side by side (each its own
     * meta, counts and state parts), then one read of all their states. */
    for (size_t s = 0; s < ncur; ++s) {
      const struct sub *p = &cur[s];
      if (p->len <= small_max && !approximate)
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
      if (g == 0) g = 1;
      cur_groups[s] = g;
      if (!(p->len <= small_max && !approximate)) all_groups += g;
    }
    if (nbig > 0) {
      st = clprim__scratch(ctx, SLOT_META, nbig * META_WORDS * 8, &meta);
      if (st == CLPRIM_SUCCESS)
        st = clprim__scratch(ctx, SLOT_COUNTS, all_groups * BUCKETS * 4, &counts);
      if (st != CLPRIM_SUCCESS) break;
    }
    {
      const unsigned level_mask = (nbig ? NTH_BIT(K_SAMPLE) | NTH_BIT(K_COUNT) | NTH_BIT(K_CHOOSE) : 0) |
                                  (njobs ? NTH_BIT(K_SMALL) : 0);
      st = nth_need(ctx, &c, &ks, level == 0 ? level_mask : 0, level == 0 ? 0 : level_mask);
      if (st != CLPRIM_SUCCESS) break;
    }
    njobs = 0;
    size_t big = 0, counts_words = 0;
    /* After level 0, several sub-problems share each launch (a table). */
    const int batched = level > 0 && nbig > 1;
    const cl_uint no_subs = 0;
    const cl_ulong subs_at = count, zero64 = 0;
    for (size_t s = 0; s < ncur && st == CLPRIM_SUCCESS; ++s) {
      const struct sub *p = &cur[s];
      cl_ulong off = p->offset, len = p->len, rank_base = p->rank_base;
      cl_uint r0 = p->r0, r1 = p->r1;
      if (p->len <= small_max && !approximate) { /* one nth_small job per rank */
        if (level == 0) small_at_level0 = 1;
        for (unsigned r = r0; r < r1; ++r, ++njobs) {
          uint64_t *j = jobs + 8 + 5 * (job_base + njobs);
          j[0] = off, j[1] = len, j[2] = ranks[r] - rank_base, j[3] = r, j[4] = room;
          if (len > BASE) room += 2 * (size_t)len;
        }
        continue;
      }
      const size_t g = cur_groups[s];
      cl_ulong seed = 0x5EED0000ull + level * 1000003ull + s, out_base = fill;
      cl_ulong meta_at = big * META_WORDS, counts_at = counts_words,
               state_at = 2 * big + STATE_WORDS * r0;
      cur_meta[s] = meta_at, cur_counts[s] = counts_at, cur_state[s] = state_at;
      /* Each sub-problem's chosen buckets fit in its keys plus the
       * 4-alignment of each (level 0: placed after the read, at 0). */
      fill += (((size_t)len + 3) & ~(size_t)3) + 4 * (size_t)(r1 - r0); /* 4-aligned: VEC4 loads */
      if (batched) {
        uint64_t *row = table + count + SUB_WORDS * big;
        row[0] = off, row[1] = len, row[2] = counts_words / BUCKETS, row[3] = g;
        row[4] = meta_at, row[5] = counts_at, row[6] = state_at, row[7] = r0, row[8] = r1;
        row[9] = rank_base, row[10] = out_base, row[11] = seed;
      }
      ++big, counts_words += g * BUCKETS;
      if (batched) continue;
      st = clprim__set_args(k[0], 9, sizeof p->buf, &p->buf, sizeof off, &off, sizeof len, &len,
                            sizeof seed, &seed, sizeof meta, &meta, sizeof meta_at, &meta_at,
                            sizeof ranks_dev, &ranks_dev, sizeof subs_at, &subs_at, sizeof no_subs,
                            &no_subs);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[0], 1, c.wg);
      if (st == CLPRIM_SUCCESS)
        st = clprim__set_args(k[1], 10, sizeof p->buf, &p->buf, sizeof off, &off, sizeof len, &len,
                              sizeof meta, &meta, sizeof meta_at, &meta_at, sizeof counts, &counts,
                              sizeof counts_at, &counts_at, sizeof ranks_dev, &ranks_dev,
                              sizeof subs_at, &subs_at, sizeof no_subs, &no_subs);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[1], g, c.wg);
      if (st == CLPRIM_SUCCESS)
        st = clprim__set_args(
            k[2], 13, sizeof meta, &meta, sizeof meta_at, &meta_at, sizeof ranks_dev, &ranks_dev,
            sizeof r0, &r0, sizeof r1, &r1, sizeof rank_base, &rank_base, sizeof out_base,
            &out_base, sizeof state, &state, sizeof state_at, &state_at, sizeof results, &results,
            sizeof ranks_dev, &ranks_dev, sizeof subs_at, &subs_at, sizeof no_subs, &no_subs);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[2], 1, c.wg);
    }
    cl_mem level_in = ncur > 0 ? cur[0].buf : NULL; /* after level 0, one buffer */
    const cl_uint nsubs = (cl_uint)nbig;
    if (st == CLPRIM_SUCCESS && batched) {
      /* With the ranks before it (Oclgrind counts a write that leaves the
       * buffer's head out as uninitialised). Not blocking: the state read
       * below waits for it. */
      memcpy(table, ranks, (size_t)count * 8);
      st = (clprim_status)clEnqueueWriteBuffer(
          ctx->queue, ranks_dev, CL_FALSE, 0, (count + nbig * SUB_WORDS) * 8, table, 0, NULL, NULL);
      if (st == CLPRIM_SUCCESS)
        st = clprim__set_args(k[0], 9, sizeof level_in, &level_in, sizeof zero64, &zero64,
                              sizeof zero64, &zero64, sizeof zero64, &zero64, sizeof meta, &meta,
                              sizeof zero64, &zero64, sizeof ranks_dev, &ranks_dev, sizeof subs_at,
                              &subs_at, sizeof nsubs, &nsubs);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[0], nbig, c.wg);
      if (st == CLPRIM_SUCCESS)
        st = clprim__set_args(k[1], 10, sizeof level_in, &level_in, sizeof zero64, &zero64,
                              sizeof zero64, &zero64, sizeof meta, &meta, sizeof zero64, &zero64,
                              sizeof counts, &counts, sizeof zero64, &zero64, sizeof ranks_dev,
                              &ranks_dev, sizeof subs_at, &subs_at, sizeof nsubs, &nsubs);
      if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k[1], all_groups, c.wg);
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
        if (!(cur[s].len <= small_max && !approximate))
          words = cur_state[s] + 2 + STATE_WORDS * (size_t)(cur[s].r1 - cur[s].r0);
      st = clprim__read(ctx, state, 0, words * 8, host_state);
    }
    /* Pass 2: the next level's sub-problems, and the extractions. */
    int any_extract = 0;
    for (size_t s = 0; s < ncur && st == CLPRIM_SUCCESS; ++s) {
      const struct sub *p = &cur[s];
      if (p->len <= small_max && !approximate) continue;
      cl_ulong off = p->offset, len = p->len, meta_at = cur_meta[s], counts_at = cur_counts[s];
      const unsigned r0 = p->r0, r1 = p->r1;
      const uint64_t *hs = host_state + cur_state[s];
      if (level == 0 && (flags & CLPRIM_NTH_REJECT_NAN) && hs[0] > 0) {
        st = CLPRIM_ERROR_INVALID_ARGUMENT;
        break;
      }
      if (level == 0 && !approximate) { /* one sub-problem at level 0 */
        st = clprim__scratch(ctx, level_slot, ((size_t)hs[1] + 8) * key_size, &out);
        if (st != CLPRIM_SUCCESS) break;
      }
      if (approximate) {
        for (unsigned r = r0; r < r1; ++r) {
          keys[r] = hs[2 + STATE_WORDS * (r - r0) + 4];
          errors[r] = hs[2 + STATE_WORDS * (r - r0) + 5];
        }
        continue;
      }
      /* Ranks in one open bucket become one sub-problem of the next level. */
      for (unsigned r = r0; r < r1;) {
        const uint64_t *w = hs + 2 + STATE_WORDS * (r - r0);
        unsigned e = r + 1;
        while (e < r1 && hs[2 + STATE_WORDS * (e - r0)] == w[0])
          ++e;
        if (!(w[0] & 1u)) {
          struct sub q = {out, (size_t)w[3], (size_t)w[2], p->rank_base + w[1], r, e};
          next[nnext++] = q;
        }
        r = e;
      }
      if (hs[1] > 0) any_extract = 1;
      if (hs[1] > 0 && !batched) {
        /* One open bucket chosen: nth_extract_one, a streaming pass by its
         * key range. */
        cl_uint one = 0, nopen = 0;
        for (unsigned r = r0; r < r1; ++r) {
          const uint64_t b = hs[2 + STATE_WORDS * (r - r0)];
          if (!(b & 1u) && (nopen == 0 || b != one)) one = (cl_uint)b, ++nopen;
        }
        st = nth_need(ctx, &c, &ks, level == 0 ? NTH_BIT(nopen == 1 ? K_EXTRACT_ONE : K_EXTRACT) : 0,
                      level == 0 ? 0 : NTH_BIT(nopen == 1 ? K_EXTRACT_ONE : K_EXTRACT));
        if (st != CLPRIM_SUCCESS) break;
        cl_kernel x = nopen == 1 ? k[K_EXTRACT_ONE] : k[K_EXTRACT];
        st = clprim__set_args(x, 11, sizeof p->buf, &p->buf, sizeof off, &off, sizeof len, &len,
                              sizeof meta, &meta, sizeof meta_at, &meta_at, sizeof counts, &counts,
                              sizeof counts_at, &counts_at, sizeof out, &out, sizeof ranks_dev,
                              &ranks_dev, sizeof subs_at, &subs_at, sizeof no_subs, &no_subs);
        if (st == CLPRIM_SUCCESS && nopen == 1)
          st = (clprim_status)clSetKernelArg(x, 11, sizeof one, &one);
        if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, x, cur_groups[s], c.wg);
      }
    }
    if (st == CLPRIM_SUCCESS && batched && any_extract)
      st = nth_need(ctx, &c, &ks, 0, NTH_BIT(K_EXTRACT)); /* batched: after level 0 */
    if (st == CLPRIM_SUCCESS && batched && any_extract) {
      st = clprim__set_args(k[3], 11, sizeof level_in, &level_in, sizeof zero64, &zero64,
                            sizeof zero64, &zero64, sizeof meta, &meta, sizeof zero64, &zero64,
                            sizeof counts, &counts, sizeof zero64, &zero64, sizeof out, &out,
                            sizeof ranks_dev, &ranks_dev, sizeof subs_at, &subs_at, sizeof nsubs,
                            &nsubs);
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
        st = (clprim_status)clEnqueueWriteBuffer(ctx->queue, state, CL_FALSE, 0,
                                                 (8 + 5 * (job_base + njobs)) * 8, jobs, 0, NULL,
                                                 NULL);
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
      if (st == CLPRIM_SUCCESS && nans > 0) st = CLPRIM_ERROR_INVALID_ARGUMENT;
    }
  }
  if (st != CLPRIM_SUCCESS) clFinish(ctx->queue);
  free(host_state);
  free(cur_groups);
  free(cur_meta);
  free(table);
  free(jobs);
  free(cur);
  free(next);
  return st;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

clprim_status clprim_quantiles(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                               const uint64_t *ranks, size_t count, unsigned flags,
                               clprim_value *values, cl_mem result) {
  CLPRIM_CHECK(check_common(ctx, type, in, n, flags, CLPRIM_NTH_REJECT_NAN));
  if (!ranks || count == 0 || count > 0xFFFFFFFFu || (!values && !result))
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  for (size_t r = 0; r < count; ++r)
    if (ranks[r] >= n) return CLPRIM_ERROR_INVALID_ARGUMENT;
  const size_t es = clprim_type_size(type);
  if (result) {
    CLPRIM_CHECK(clprim__check_buffer(ctx, result, clprim__bytes(count, es)));
    if (result == in) return CLPRIM_ERROR_INVALID_ARGUMENT;
  }
  /* Distinct ranks, sorted; keys for them; then back in the caller's order. */
  uint64_t *sorted = malloc(count * 8), *keys = malloc(count * 8);
  unsigned char *bytes = malloc(count * es);
  clprim_status st = CLPRIM_SUCCESS;
  if (!sorted || !keys || !bytes) st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  size_t distinct = 0;
  if (st == CLPRIM_SUCCESS) {
    memcpy(sorted, ranks, count * 8);
    qsort(sorted, count, 8, cmp_u64);
    for (size_t r = 0; r < count; ++r)
      if (distinct == 0 || sorted[distinct - 1] != sorted[r]) sorted[distinct++] = sorted[r];
    clprim__call_begin(ctx);
    st = select_ranks(ctx, type, in, 0, n, sorted, (unsigned)distinct, flags, 0, keys, NULL);
  }
  if (st == CLPRIM_SUCCESS) {
    for (size_t r = 0; r < count; ++r) {
      size_t lo = 0, hi = distinct - 1;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sorted[mid] < ranks[r])
          lo = mid + 1;
        else
          hi = mid;
      }
      clprim_value v = value_of_key(type, keys[lo]);
      memcpy(bytes + r * es, v.bytes, es);
      if (values) values[r] = v;
    }
    if (result)
      st = (clprim_status)clEnqueueWriteBuffer(ctx->queue, result, CL_TRUE, 0, count * es, bytes, 0,
                                               NULL, NULL);
  }
  free(sorted);
  free(keys);
  free(bytes);
  return st;
}

clprim_status clprim_nth_element(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                                 uint64_t k, unsigned flags, clprim_value *value, cl_mem result) {
  return clprim_quantiles(ctx, type, in, n, &k, 1, flags, value, result);
}

clprim_status clprim_median(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                            unsigned flags, clprim_value *value, cl_mem result) {
  return clprim_nth_element(ctx, type, in, n, n ? (n - 1) / 2 : 0, flags, value, result);
}

uint64_t clprim_quantile_rank(uint64_t n, double q) {
  if (n == 0 || !(q > 0.0)) return 0; /* also NaN */
  if (q >= 1.0) return n - 1;
  uint64_t r = (uint64_t)(q * (double)(n - 1) + 0.5);
  return r < n ? r : n - 1;
}

clprim_status clprim_nth_element_approx(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                                        uint64_t k, unsigned flags, clprim_value *value,
                                        uint64_t *rank_error) {
  CLPRIM_CHECK(check_common(ctx, type, in, n, flags, CLPRIM_NTH_REJECT_NAN));
  if (k >= n || !value) return CLPRIM_ERROR_INVALID_ARGUMENT;
  clprim__call_begin(ctx);
  uint64_t key = 0, error = 0;
  /* Small inputs are answered exactly (one work-group sorts them). */
  CLPRIM_CHECK(select_ranks(ctx, type, in, 0, n, &k, 1, flags, n > BASE, &key, &error));
  *value = value_of_key(type, key);
  if (rank_error) *rank_error = error;
  return CLPRIM_SUCCESS;
}

/* ----------------------------------------------------------------- top-k */

/* Top-k for k <= BASE: a sample's splitter that leaves a few times k keys
 * beyond it (one streaming pass counts them per group; with
 * CLPRIM_NTH_REJECT_NAN a counting level for the threshold's rank instead,
 * which also counts NaNs), then one pass gathers the candidates (the keys
 * beyond it) with their indices, and the rest works on them: the exact threshold
 * among the candidates, the split into those beyond it and the indices of
 * those equal to it, the largest index that ties may take (a selection on
 * those indices, only when more tie than are needed), and one work-group
 * that sorts the k pairs and writes them. *done = 0 (nothing written) when
 * the candidates are too many to be worth it (heavy duplicates) or, by
 * chance, fewer than k. */
static clprim_status topk_small(clprim_context *ctx, clprim_type type, cl_mem in, size_t n,
                                uint64_t k, unsigned flags, cl_mem values, cl_mem indices,
                                int *done) {
  *done = 0;
  const struct nth_config c = nth_config(ctx);
  const clprim_type key_type = key_bits(type) == 32 ? CLPRIM_UINT32 : CLPRIM_UINT64;
  const size_t es = clprim_type_size(type);
  const int smallest = (flags & CLPRIM_TOPK_SMALLEST) != 0;
  /* The kernels of this path, built together: the one-pass gather
   * (topk_candidates_direct) without NaN rejection, a counting level and the
   * counted gather with it; the overflow's pair of passes only when it
   * happens. */
  const int reject_nan = (flags & CLPRIM_NTH_REJECT_NAN) != 0;
  static const char *const names_direct[4] = {"nth_sample", "topk_candidates_direct",
                                              "topk_split", "topk_finish"};
  static const char *const names_counted[6] = {"nth_sample", "topk_split", "topk_finish",
                                               "nth_count",  "nth_choose", "topk_candidates"};
  static const char *const names_overflow[2] = {"topk_range_count", "topk_candidates"};
  cl_kernel kernels[6] = {NULL}, more[2] = {NULL};
  CLPRIM_CHECK(nth_kernels_named(ctx, type, &c, is_float(type) && reject_nan, reject_nan ? 6 : 4,
                                 reject_nan ? names_counted : names_direct, kernels));
  cl_kernel sample = kernels[0], direct = reject_nan ? NULL : kernels[1];
  cl_kernel split = kernels[reject_nan ? 1 : 2], finish = kernels[reject_nan ? 2 : 3];
  cl_kernel count_kernel = kernels[3], choose = kernels[4], candidates = kernels[5];
  cl_kernel range_count = NULL;
  size_t groups = (n / 4 + c.wg - 1) / c.wg;
  if (groups > c.max_groups) groups = c.max_groups;
  if (groups == 0) groups = 1;
  cl_mem counts, meta, state, ranks_dev, results;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_COUNTS, groups * BUCKETS * 4, &counts));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_META, META_WORDS * 8, &meta));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_STATE, (2 + STATE_WORDS) * 8, &state));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RANKS, 8, &ranks_dev));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_RESULTS, 8, &results));

  cl_ulong zero64 = 0, len = n, seed = 0x70CC0000ull;
  const cl_uint no_subs = 0;
  CLPRIM_CHECK(clprim__set_args(sample, 9, sizeof in, &in, sizeof zero64, &zero64, sizeof len, &len,
                                sizeof seed, &seed, sizeof meta, &meta, sizeof zero64, &zero64,
                                sizeof meta, &meta, sizeof zero64, &zero64, sizeof no_subs,
                                &no_subs));
  CLPRIM_CHECK(clprim__enqueue(ctx, sample, 1, c.wg));
  size_t cands, room; /* candidates, and the room laid out for them */
  cl_uint lo, hi;
  cl_mem cand;
  const size_t pairs = BASE; /* room for the chosen pairs */
  /* The candidates' buffer, in ulong words (see cl/nth_element.cl), for
   * room candidates. */
#define ALIGN4(x) (((x) + 3) & ~(size_t)3)
#define CAND_LAYOUT(room)                                                                          \
  idx_at = ALIGN4(((room)*es + 7) / 8), eq_at = idx_at + ALIGN4(room),                             \
  pk_at = eq_at + ALIGN4(room), pi_at = pk_at + pairs, cur_at = pi_at + pairs
  size_t idx_at, eq_at, pk_at, pi_at, cur_at;
  int gathered = 0; /* the candidates are in cand already */
  if (!(flags & CLPRIM_NTH_REJECT_NAN)) {
    /* The sample alone picks the candidates' buckets: beyond the splitter
     * whose sample rank leaves about 4k + 256 keys expected beyond it (the
     * chance of fewer than k is negligible; then the general path). One
     * streaming pass counts them per group. */
    const uint64_t want = 4 * k + 256;
    unsigned j;
    if (smallest) {
      for (j = 0; j < 254 && (uint64_t)n * 4 * (j + 1) < want * 1024; ++j)
        ;
      lo = 0, hi = 2 * j; /* keys below s[j] */
    } else {
      for (j = 255; j > 1 && (uint64_t)n * (1024 - 4 * j) < want * 1024; --j)
        ;
      lo = 2 * j, hi = 510; /* keys above s[j-1] */
    }
    /* One pass gathers them into room for 4 times the expected number (the
     * sample's share beyond the splitter); more, and the counted way. */
    const uint64_t expected = smallest ? (uint64_t)n * 4 * (j + 1) / 1024
                                       : (uint64_t)n * (1024 - 4 * (uint64_t)j) / 1024;
    size_t cap = (size_t)(4 * expected + 4096);
    if (cap > n / 16 + 1) cap = n / 16 + 1;
    /* CLPRIM_NTH_TOPK_ROOM (tests): a smaller room, so that the counted
     * way after an overflow runs. */
    const long long room_tune = ctx->tuning[CLPRIM_KNOB_NTH_TOPK_ROOM];
    if (room_tune > 0 && (unsigned long long)room_tune < cap) cap = (size_t)room_tune;
    CAND_LAYOUT(cap);
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_TOPK_CANDIDATES, (cur_at + 4) * 8, &cand));
    cl_ulong idx_at64 = idx_at, cap64 = cap, cur64 = cur_at;
    CLPRIM_CHECK(clprim__set_args(direct, 10, sizeof in, &in, sizeof zero64, &zero64, sizeof len,
                                  &len, sizeof meta, &meta, sizeof lo, &lo, sizeof hi, &hi,
                                  sizeof cand, &cand, sizeof idx_at64, &idx_at64, sizeof cap64,
                                  &cap64, sizeof cur64, &cur64));
    CLPRIM_CHECK(clprim__enqueue(ctx, direct, groups, c.wg));
    cl_uint total = 0;
    CLPRIM_CHECK(clprim__read(ctx, meta, 768 * 8, 4, &total));
    cands = total, room = cap, gathered = total <= cap;
    if (cands < k || cands > n / 16) return CLPRIM_SUCCESS; /* the general path */
    if (!gathered) {
      CLPRIM_CHECK(nth_kernels_named(ctx, type, &c, 0, 2, names_overflow, more));
      range_count = more[0], candidates = more[1];
      CLPRIM_CHECK(clprim__set_args(range_count, 7, sizeof in, &in, sizeof zero64, &zero64,
                                    sizeof len, &len, sizeof meta, &meta, sizeof counts, &counts,
                                    sizeof lo, &lo, sizeof hi, &hi));
      CLPRIM_CHECK(clprim__enqueue(ctx, range_count, groups, c.wg));
    }
  } else {
    /* Level 0 for the threshold's rank (its NaN count is wanted). */
    cl_ulong rank = smallest ? k - 1 : n - k;
    CLPRIM_CHECK((clprim_status)clEnqueueWriteBuffer(ctx->queue, ranks_dev, CL_TRUE, 0, 8, &rank, 0,
                                                     NULL, NULL));
    cl_uint r0 = 0, r1 = 1;
    CLPRIM_CHECK(clprim__set_args(count_kernel, 10, sizeof in, &in, sizeof zero64, &zero64,
                                  sizeof len, &len, sizeof meta, &meta, sizeof zero64, &zero64,
                                  sizeof counts, &counts, sizeof zero64, &zero64, sizeof meta,
                                  &meta, sizeof zero64, &zero64, sizeof no_subs, &no_subs));
    CLPRIM_CHECK(clprim__enqueue(ctx, count_kernel, groups, c.wg));
    CLPRIM_CHECK(clprim__set_args(
        choose, 13, sizeof meta, &meta, sizeof zero64, &zero64, sizeof ranks_dev, &ranks_dev,
        sizeof r0, &r0, sizeof r1, &r1, sizeof zero64, &zero64, sizeof zero64, &zero64,
        sizeof state, &state, sizeof zero64, &zero64, sizeof results, &results, sizeof meta, &meta,
        sizeof zero64, &zero64, sizeof no_subs, &no_subs));
    CLPRIM_CHECK(clprim__enqueue(ctx, choose, 1, c.wg));
    uint64_t st[2 + STATE_WORDS];
    CLPRIM_CHECK(clprim__read(ctx, state, 0, sizeof st, st));
    if (st[0] > 0) return CLPRIM_ERROR_INVALID_ARGUMENT;
    const uint64_t bucket = st[2], before = st[3], size = st[4];
    cands = (size_t)(smallest ? before + size : n - before);
    lo = smallest ? 0 : (cl_uint)bucket, hi = smallest ? (cl_uint)bucket : 510;
    room = cands;
  }
  if (cands > n / 16) return CLPRIM_SUCCESS; /* not worth it: the general path */
  if (!gathered) {
    room = cands;
    CAND_LAYOUT(room);
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_TOPK_CANDIDATES, (cur_at + 4) * 8, &cand));
    cl_ulong idx_at64 = idx_at, cur64 = cur_at;
    CLPRIM_CHECK(clprim__set_args(candidates, 10, sizeof in, &in, sizeof zero64, &zero64,
                                  sizeof len, &len, sizeof meta, &meta, sizeof counts, &counts,
                                  sizeof lo, &lo, sizeof hi, &hi, sizeof cand, &cand,
                                  sizeof idx_at64, &idx_at64, sizeof cur64, &cur64));
    CLPRIM_CHECK(clprim__enqueue(ctx, candidates, groups, c.wg));
  }
#undef CAND_LAYOUT
#undef ALIGN4
  cl_ulong idx_at64 = idx_at;

  /* The threshold among the candidates (keys, so the key type). */
  uint64_t rank2 = smallest ? k - 1 : cands - k, t = 0;
  CLPRIM_CHECK(select_ranks(ctx, key_type, cand, 0, cands, &rank2, 1, 0, 0, &t, NULL));

  /* (The split's two cursors were zeroed by the gathering kernel.) */
  cl_uint t32 = (cl_uint)t;
  cl_ulong t64 = t, c64 = cands, eq64 = eq_at, pk64 = pk_at, pi64 = pi_at, cur64 = cur_at;
  const void *tp = es == 4 ? (const void *)&t32 : (const void *)&t64;
  cl_int small32 = smallest, sorted32 = (flags & CLPRIM_TOPK_SORTED) != 0;
  size_t split_groups = (cands + c.wg - 1) / c.wg;
  if (split_groups > groups) split_groups = groups;
  CLPRIM_CHECK(clprim__set_args(split, 10, sizeof cand, &cand, sizeof idx_at64, &idx_at64,
                                sizeof c64, &c64, es, tp, sizeof small32, &small32, sizeof sorted32,
                                &sorted32, sizeof eq64, &eq64, sizeof pk64, &pk64, sizeof pi64,
                                &pi64, sizeof cur64, &cur64));
  CLPRIM_CHECK(clprim__enqueue(ctx, split, split_groups, c.wg));
  cl_uint split_counts[2];
  CLPRIM_CHECK(clprim__read(ctx, cand, cur_at * 8, 8, split_counts));
  const uint64_t beyond_count = split_counts[0], equal_count = split_counts[1];
  const uint64_t need = k - beyond_count;
  /* Ties: the need lowest indices among the equal ones. */
  uint64_t last = ~(uint64_t)0;
  if (equal_count > need) {
    uint64_t rank3 = need - 1;
    CLPRIM_CHECK(select_ranks(ctx, CLPRIM_UINT64, cand, eq_at, (size_t)equal_count, &rank3, 1, 0, 0,
                              &last, NULL));
  }
  const int index64 = (flags & CLPRIM_TOPK_INDICES_64) != 0;
  cl_uint g32 = (cl_uint)beyond_count, k32 = (cl_uint)k;
  cl_ulong e64 = equal_count, last64 = last;
  cl_int want_values = values != NULL, want_indices = indices != NULL, index32 = index64;
  cl_mem vbuf = values ? values : cand, ibuf = indices ? indices : cand;
  CLPRIM_CHECK(clprim__set_args(finish, 17, sizeof in, &in, sizeof cand, &cand, sizeof pk64, &pk64,
                                sizeof pi64, &pi64, sizeof g32, &g32, sizeof eq64, &eq64,
                                sizeof e64, &e64, sizeof last64, &last64, es, tp, sizeof small32,
                                &small32, sizeof sorted32, &sorted32, sizeof k32, &k32, sizeof vbuf,
                                &vbuf, sizeof ibuf, &ibuf, sizeof want_values, &want_values,
                                sizeof want_indices, &want_indices, sizeof index32, &index32));
  CLPRIM_CHECK(clprim__enqueue(ctx, finish, 1, c.wg));
  *done = 1;
  return CLPRIM_SUCCESS;
}

clprim_status clprim_topk(clprim_context *ctx, clprim_type type, cl_mem in, size_t n, uint64_t k,
                          unsigned flags, cl_mem values, cl_mem indices) {
  const unsigned allowed =
      CLPRIM_NTH_REJECT_NAN | CLPRIM_TOPK_SMALLEST | CLPRIM_TOPK_SORTED | CLPRIM_TOPK_INDICES_64;
  CLPRIM_CHECK(check_common(ctx, type, in, n, flags, allowed));
  if (k > n || (!values && !indices)) return CLPRIM_ERROR_INVALID_ARGUMENT;
  if (values == in || indices == in || (values && values == indices))
    return CLPRIM_ERROR_INVALID_ARGUMENT;
  const size_t es = clprim_type_size(type);
  const int index64 = (flags & CLPRIM_TOPK_INDICES_64) != 0;
  if (values) CLPRIM_CHECK(clprim__check_buffer(ctx, values, clprim__bytes(k, es)));
  if (indices) CLPRIM_CHECK(clprim__check_buffer(ctx, indices, clprim__bytes(k, index64 ? 8 : 4)));
  if (k == 0) return CLPRIM_SUCCESS;

  const struct nth_config c = nth_config(ctx);
  const int smallest = (flags & CLPRIM_TOPK_SMALLEST) != 0;
  const int sorted = (flags & CLPRIM_TOPK_SORTED) != 0;
  const size_t tile = (size_t)c.wg * c.items, tiles = n / tile + (n % tile != 0);
  cl_mem offsets;
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_TOPK_COUNTS, (tiles + 1) * 8, &offsets));

  clprim__call_begin(ctx);
  if (k <= BASE && n >= TOPK_SMALL_MIN_N) {
    int done;
    CLPRIM_CHECK(topk_small(ctx, type, in, n, k, flags, values, indices, &done));
    if (done) return CLPRIM_SUCCESS;
  }
  /* The general path: its kernels, then the threshold, the key of rank
   * n - k (largest) or k - 1 (smallest). */
  static const char *const names[5] = {"topk_count", "topk_scatter", "topk_sort_step",
                                       "topk_gather", "topk_pad"};
  cl_kernel kernels[5] = {NULL};
  CLPRIM_CHECK(nth_kernels_named(ctx, type, &c, 0, sorted ? 5 : 2, names, kernels));
  cl_kernel count_kernel = kernels[0], scatter_kernel = kernels[1], step_kernel = kernels[2],
            gather_kernel = kernels[3], pad_kernel = kernels[4];
  uint64_t rank = smallest ? k - 1 : n - k, t = 0;
  CLPRIM_CHECK(select_ranks(ctx, type, in, 0, n, &rank, 1, flags, 0, &t, NULL));

  /* The sort arrays come after selection (they reuse its level buffers). */
  size_t len2 = 1;
  cl_mem sort_keys = offsets, sort_indices = offsets;
  if (sorted) {
    while (len2 < k)
      len2 <<= 1;
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_KEYS_A, len2 * es, &sort_keys));
    CLPRIM_CHECK(clprim__scratch(ctx, SLOT_KEYS_B, len2 * 8, &sort_indices));
    if (len2 > k) {
      cl_ulong k64 = k, len64 = len2;
      const size_t pad = len2 - k, group = pad < c.wg ? pad : c.wg;
      CLPRIM_CHECK(clprim__set_args(pad_kernel, 4, sizeof sort_keys, &sort_keys,
                                    sizeof sort_indices, &sort_indices, sizeof k64, &k64,
                                    sizeof len64, &len64));
      CLPRIM_CHECK(clprim__enqueue(ctx, pad_kernel, (pad + group - 1) / group, group));
    }
  }
  /* The threshold travels as a key of the type's width. */
  cl_uint t32 = (cl_uint)t;
  cl_ulong t64 = t;
  const size_t tsize = es;
  const void *tp = es == 4 ? (const void *)&t32 : (const void *)&t64;
  cl_ulong n64 = n, tiles64 = tiles, k64 = k;
  cl_int small32 = smallest, want_values = values != NULL, want_indices = indices != NULL;
  cl_int index32 = index64, sorted32 = sorted;
  cl_mem vbuf = values ? values : offsets, ibuf = indices ? indices : offsets;
  CLPRIM_CHECK(clprim__set_args(count_kernel, 5, sizeof in, &in, sizeof n64, &n64, tsize, tp,
                                sizeof small32, &small32, sizeof offsets, &offsets));
  CLPRIM_CHECK(clprim__enqueue(ctx, count_kernel, tiles, c.wg));
  CLPRIM_CHECK(clprim__scan(ctx, CLPRIM_UINT64, offsets, offsets, tiles + 1, 0));
  CLPRIM_CHECK(clprim__set_args(scatter_kernel, 15, sizeof in, &in, sizeof n64, &n64, tsize, tp,
                                sizeof small32, &small32, sizeof offsets, &offsets, sizeof tiles64,
                                &tiles64, sizeof k64, &k64, sizeof vbuf, &vbuf, sizeof ibuf, &ibuf,
                                sizeof want_values, &want_values, sizeof want_indices,
                                &want_indices, sizeof index32, &index32, sizeof sorted32, &sorted32,
                                sizeof sort_keys, &sort_keys, sizeof sort_indices, &sort_indices));
  CLPRIM_CHECK(clprim__enqueue(ctx, scatter_kernel, tiles, c.wg));
  if (!sorted) return CLPRIM_SUCCESS;

  const size_t group = len2 < c.wg ? len2 : c.wg;
  for (cl_ulong block = 2; block <= len2; block <<= 1)
    for (cl_ulong dist = block >> 1; dist > 0; dist >>= 1) {
      CLPRIM_CHECK(clprim__set_args(step_kernel, 4, sizeof sort_keys, &sort_keys,
                                    sizeof sort_indices, &sort_indices, sizeof block, &block,
                                    sizeof dist, &dist));
      CLPRIM_CHECK(clprim__enqueue(ctx, step_kernel, len2 / group, group));
    }
  const size_t gather_groups = (k + c.wg - 1) / c.wg;
  CLPRIM_CHECK(clprim__set_args(gather_kernel, 8, sizeof in, &in, sizeof sort_indices,
                                &sort_indices, sizeof k64, &k64, sizeof vbuf, &vbuf, sizeof ibuf,
                                &ibuf, sizeof want_values, &want_values, sizeof want_indices,
                                &want_indices, sizeof index32, &index32));
  return clprim__enqueue(ctx, gather_kernel, gather_groups, c.wg);
}
