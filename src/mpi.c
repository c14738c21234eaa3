/* mpi.c: clprim over MPI (include/clprim/clprim_mpi.h), one rank per
 * device. Every call: the collective check (one all-gather of each rank's
 * status, argument hash and part size), then the families' own work on each
 * device (public calls, or selection's level kernels through internal.h),
 * with what the ranks must share combined by MPI. The only kernel of its own
 * (cl/mpi.cl) adds a constant to a range.
 *
 * Distributed selection (dsel_*) runs SampleSelect's level kernels of
 * cl/nth_element.cl on each rank's candidates: nth_sample for the local
 * sample's splitters, nth_table for the bucket table of the splitters
 * merged on the host, nth_count into their buckets, nth_extract_one for
 * the chosen bucket. The ranks of one call (quantiles, sort's splitters)
 * share level 0 (struct dsel's level0).
 *
 * ONE_RANK: on a communicator of one rank, selection (nth_element,
 * quantiles, approximate) and top-k run the plain call after the check: the
 * levels' round trips to the host and the collectives cost 15% (nth_element)
 * to 4 x (top-k) at 2^28 on the H100 (docs/SCALING.md). */
#include "clprim/clprim_mpi.h"
#include "internal.h"
#include "../cl/internal/keys.h"
#include "../cl/internal/layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPLITTERS 255
#define BUCKETS NTH_BUCKETS
#define NAN_SLOT (NTH_BUCKETS - 1)
#define SLOT_META "mpi: meta"
#define SLOT_META_LATER "mpi: meta, later levels"
#define SLOT_COUNTS "mpi: per-group bucket counts"
#define SLOT_COUNTS_LATER "mpi: per-group bucket counts, later levels"
#define SLOT_KEYS_A "mpi: keys A"
#define SLOT_KEYS_B "mpi: keys B"
#define LEVEL_KERNELS "nth_sample nth_count nth_extract_one nth_table"

#define MPI_OK(call)                                                                               \
  do {                                                                                             \
    if ((call) != MPI_SUCCESS) return CLPRIM_MPI_ERROR_MPI;                                        \
  } while (0)

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

uint64_t clprim_mpi_sort_share(uint64_t n, int rank, int ranks) {
  if (ranks <= 0 || rank < 0 || rank >= ranks) return 0;
  /* (r n) / P without overflow for n below 2^56 and P below 256 */
  const uint64_t p = (uint64_t)ranks, r = (uint64_t)rank;
  const uint64_t lo = (n / p) * r + (n % p) * r / p, hi = (n / p) * (r + 1) + (n % p) * (r + 1) / p;
  return hi - lo;
}
static uint64_t share_start(uint64_t n, uint64_t r, uint64_t p) {
  return (n / p) * r + (n % p) * r / p;
}

/* ---------------------------------------------------- the collective check */

/* FNV-1a over the arguments that every rank must pass alike. */
static void hash_add(uint64_t *h, const void *data, size_t bytes) {
  const unsigned char *b = data;
  for (size_t i = 0; i < bytes; ++i)
    *h = (*h ^ b[i]) * 0x100000001B3ull;
}
#define HASH_START 0xCBF29CE484222325ull

/* What the check learnt: this rank, the ranks, each rank's part size and
 * extra word, this rank's global offset and the global count; `work`: 4
 * words per rank for later gathers (gather_status). */
struct part {
  int rank, size;
  uint64_t n_local, offset, total;
  uint64_t *n_of, *extra_of, *work;
};

static void part_free(struct part *p) {
  free(p->n_of);
  p->n_of = p->extra_of = p->work = NULL;
}

/* The check: one MPI_Allreduce (max) of (error flag, hash, ~hash), so that
 * a rank with an error (or no memory for what follows) returns it and the
 * others CLPRIM_MPI_ERROR_REMOTE, and differing hashes give
 * CLPRIM_MPI_ERROR_MISMATCH everywhere; then one MPI_Allgather of
 * (n_local, extra) per rank. */
static clprim_status part_check(MPI_Comm comm, clprim_status local, uint64_t hash,
                                uint64_t n_local, uint64_t extra, struct part *p) {
  memset(p, 0, sizeof *p);
  if (comm == MPI_COMM_NULL) return CLPRIM_ERROR_INVALID_ARGUMENT;
  MPI_OK(MPI_Comm_rank(comm, &p->rank));
  MPI_OK(MPI_Comm_size(comm, &p->size));
  const size_t P = (size_t)p->size;
  p->n_of = malloc(P * 6 * 8);
  if (!p->n_of && local == CLPRIM_SUCCESS) local = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  uint64_t mine[3] = {local != CLPRIM_SUCCESS, hash, ~hash}, any[3];
  clprim_status st = CLPRIM_SUCCESS;
  if (MPI_Allreduce(mine, any, 3, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    st = CLPRIM_MPI_ERROR_MPI;
  else if (any[0])
    st = local != CLPRIM_SUCCESS ? local : CLPRIM_MPI_ERROR_REMOTE;
  else if (any[1] != hash || any[2] != ~hash)
    st = CLPRIM_MPI_ERROR_MISMATCH;
  uint64_t part[2] = {n_local, extra};
  p->extra_of = p->n_of + P;
  p->work = p->n_of + 2 * P;
  if (st == CLPRIM_SUCCESS &&
      MPI_Allgather(part, 2, MPI_UINT64_T, p->work, 2, MPI_UINT64_T, comm) != MPI_SUCCESS)
    st = CLPRIM_MPI_ERROR_MPI;
  if (st != CLPRIM_SUCCESS) {
    part_free(p);
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
static clprim_status agree(MPI_Comm comm, clprim_status local) {
  int bad = local != CLPRIM_SUCCESS, any = 0;
  MPI_OK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm));
  return local != CLPRIM_SUCCESS ? local : any ? CLPRIM_MPI_ERROR_REMOTE : CLPRIM_SUCCESS;
}

/* An MPI_Allgather of `words` words per rank (all: (words + 1) per rank,
 * allocated by every rank before: a failed allocation must be agreed on
 * first) with the local status in front; the status as agree() gives it.
 * all[(words + 1) r + 1 ...] is rank r's record. */
static clprim_status gather_status(MPI_Comm comm, int size, clprim_status local,
                                   const uint64_t *mine, unsigned words, uint64_t *all,
                                   uint64_t *record) {
  record[0] = (uint64_t)(local != CLPRIM_SUCCESS);
  memcpy(record + 1, mine, words * 8);
  MPI_OK(MPI_Allgather(record, (int)words + 1, MPI_UINT64_T, all, (int)words + 1, MPI_UINT64_T,
                       comm));
  if (local != CLPRIM_SUCCESS) return local;
  for (int r = 0; r < size; ++r)
    if (all[(words + 1) * (size_t)r]) return CLPRIM_MPI_ERROR_REMOTE;
  return CLPRIM_SUCCESS;
}

/* A caller's range, checked without taking the context. */
static clprim_status check_range(clprim_context *ctx, clprim_buffer b, size_t elem, size_t n) {
  if (!ctx) return CLPRIM_ERROR_INVALID_ARGUMENT;
  if (n == 0 && !b.mem) return CLPRIM_SUCCESS;
  const size_t bytes = clprim__bytes(b.offset + n, elem);
  if (bytes == SIZE_MAX) return CLPRIM_ERROR_SIZE_TOO_LARGE;
  return clprim__check_buffer(ctx, b.mem, bytes);
}

static clprim_status check_type(clprim_context *ctx, clprim_type type) {
  return ctx ? clprim__check_type(ctx, type) : CLPRIM_ERROR_INVALID_ARGUMENT;
}

/* Blocking read / write of a caller's range (outside a call). */
static clprim_status read_range(clprim_context *ctx, clprim_buffer b, size_t elem, size_t at,
                                size_t count, void *host) {
  return (clprim_status)clEnqueueReadBuffer(clprim_context_queue(ctx), b.mem, CL_TRUE,
                                            (b.offset + at) * elem, count * elem, host, 0, NULL,
                                            NULL);
}
static clprim_status write_range(clprim_context *ctx, clprim_buffer b, size_t elem, size_t at,
                                 size_t count, const void *host) {
  return (clprim_status)clEnqueueWriteBuffer(clprim_context_queue(ctx), b.mem, CL_TRUE,
                                             (b.offset + at) * elem, count * elem, host, 0, NULL,
                                             NULL);
}

/* ------------------------------------------------------- values on the host */

static uint64_t bits_of(clprim_type type, clprim_value v) {
  return clprim_type_size(type) == 4 ? (uint64_t)v.u32 : v.u64;
}
static clprim_value value_of_bits(clprim_type type, uint64_t bits) {
  clprim_value v;
  memset(&v, 0, sizeof v);
  if (clprim_type_size(type) == 4)
    v.u32 = (uint32_t)bits;
  else
    v.u64 = bits;
  return v;
}

/* The order key of an element's bits (cl/internal/keys.h's key_of). */
static uint64_t key_of_bits(clprim_type type, uint64_t bits) {
  const uint32_t sign32 = 0x80000000u;
  const uint64_t sign64 = 0x8000000000000000ull;
  switch (type) {
  case CLPRIM_INT32:
    return CLPRIM_KEY_OF_SIGNED_BITS((uint32_t)bits, sign32);
  case CLPRIM_UINT32:
    return (uint32_t)bits;
  case CLPRIM_INT64:
    return CLPRIM_KEY_OF_SIGNED_BITS(bits, sign64);
  case CLPRIM_UINT64:
    return bits;
  case CLPRIM_FLOAT: {
    uint32_t b = (uint32_t)bits;
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFu; /* NaN */
    if ((b & 0x7FFFFFFFu) == 0) b = 0;                         /* -0.0 */
    return (uint32_t)CLPRIM_KEY_OF_FLOAT_BITS(b, sign32);
  }
  case CLPRIM_DOUBLE: {
    uint64_t b = bits;
    if ((b & ~sign64) > 0x7FF0000000000000ull) return UINT64_MAX;
    if ((b & ~sign64) == 0) b = 0;
    return CLPRIM_KEY_OF_FLOAT_BITS(b, sign64);
  }
  }
  return 0;
}

/* a + b in type (integers wrap around). */
static uint64_t add_bits(clprim_type type, uint64_t a, uint64_t b) {
  clprim_value x = value_of_bits(type, a), y = value_of_bits(type, b), z;
  memset(&z, 0, sizeof z);
  switch (type) {
  case CLPRIM_INT32:
  case CLPRIM_UINT32:
    z.u32 = x.u32 + y.u32;
    break;
  case CLPRIM_INT64:
  case CLPRIM_UINT64:
    z.u64 = x.u64 + y.u64;
    break;
  case CLPRIM_FLOAT:
    z.f32 = x.f32 + y.f32;
    break;
  case CLPRIM_DOUBLE:
    z.f64 = x.f64 + y.f64;
    break;
  }
  return bits_of(type, z);
}

/* -1, 0, 1: a against b as argmax / argmin compare them (flags
 * CLPRIM_REDUCE_ABS); NaNs handled by the caller. */
static int compare_value(clprim_type type, unsigned flags, clprim_value a, clprim_value b) {
  const int abs_ = (flags & CLPRIM_REDUCE_ABS) != 0;
  switch (type) {
  case CLPRIM_INT32:
  case CLPRIM_INT64: {
    const int64_t x = type == CLPRIM_INT32 ? a.i32 : a.i64, y = type == CLPRIM_INT32 ? b.i32 : b.i64;
    if (abs_) {
      const uint64_t mx = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
      const uint64_t my = y < 0 ? 0 - (uint64_t)y : (uint64_t)y;
      return (mx > my) - (mx < my);
    }
    return (x > y) - (x < y);
  }
  case CLPRIM_UINT32:
  case CLPRIM_UINT64: {
    const uint64_t x = type == CLPRIM_UINT32 ? a.u32 : a.u64,
                   y = type == CLPRIM_UINT32 ? b.u32 : b.u64;
    return (x > y) - (x < y);
  }
  case CLPRIM_FLOAT:
  case CLPRIM_DOUBLE: {
    double x = type == CLPRIM_FLOAT ? a.f32 : a.f64, y = type == CLPRIM_FLOAT ? b.f32 : b.f64;
    if (abs_) x = fabs(x), y = fabs(y);
    return (x > y) - (x < y);
  }
  }
  return 0;
}
static int is_nan_value(clprim_type type, clprim_value v) {
  return (type == CLPRIM_FLOAT && isnan(v.f32)) || (type == CLPRIM_DOUBLE && isnan(v.f64));
}

/* ------------------------------------------------------------ contexts */

clprim_status clprim_mpi_local_rank(MPI_Comm comm, int *local_rank) {
  if (!local_rank || comm == MPI_COMM_NULL) return CLPRIM_ERROR_INVALID_ARGUMENT;
  MPI_Comm node;
  MPI_OK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
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

clprim_status clprim_mpi_context_create(MPI_Comm comm, const clprim_options *options,
                                        clprim_context **ctx) {
  if (!ctx || comm == MPI_COMM_NULL) return CLPRIM_ERROR_INVALID_ARGUMENT;
  *ctx = NULL;
  int local_rank = 0;
  clprim_status st = clprim_mpi_local_rank(comm, &local_rank);
  if (st != CLPRIM_SUCCESS) return st;
  clprim_options o;
  clprim_options_init(&o);
  if (options) {
    if (options->size < sizeof(size_t))
      st = CLPRIM_ERROR_INVALID_ARGUMENT;
    else
      memcpy(&o, options, options->size < sizeof o ? options->size : sizeof o), o.size = sizeof o;
  }
  char name[32];
  const char *env = getenv("CLPRIM_DEVICE");
  if (st == CLPRIM_SUCCESS && !o.device && !(env && *env)) {
    gpu_name((unsigned)local_rank, name, sizeof name);
    if (name[0]) o.device = name;
  }
  if (st == CLPRIM_SUCCESS) st = clprim_context_create(ctx, &o);
  st = agree(comm, st);
  if (st != CLPRIM_SUCCESS) {
    clprim_context_free(*ctx);
    *ctx = NULL;
  }
  return st;
}

/* ------------------------------------------- reductions and histograms */

clprim_status clprim_mpi_reduce_sum(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                    clprim_type type, clprim_buffer in, clprim_value *sum) {
  clprim_value s;
  memset(&s, 0, sizeof s);
  clprim_status st = sum ? CLPRIM_SUCCESS : CLPRIM_ERROR_INVALID_ARGUMENT;
  if (st == CLPRIM_SUCCESS) st = check_type(ctx, type);
  if (st == CLPRIM_SUCCESS && n_local > 0)
    st = clprim_reduce_sum(ctx, n_local, type, in, &s, clprim_buf(NULL));
  uint64_t hash = HASH_START;
  hash_add(&hash, &type, sizeof type);
  /* The part's sum rides in the check's extra word. */
  struct part p;
  CLPRIM_CHECK(part_check(comm, st, hash, n_local, bits_of(type, s), &p));
  uint64_t total = bits_of(type, value_of_bits(type, 0));
  int first = 1;
  for (int r = 0; r < p.size; ++r) {
    if (p.n_of[r] == 0) continue;
    total = first ? p.extra_of[r] : add_bits(type, total, p.extra_of[r]);
    first = 0;
  }
  part_free(&p);
  *sum = value_of_bits(type, total);
  return CLPRIM_SUCCESS;
}

/* argmax (is_max) or argmin of the global array: each rank's own, then
 * the best of them, ties to the lowest global index. */
static clprim_status arg_reduce(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                clprim_type type, clprim_buffer in, unsigned flags, int is_max,
                                clprim_value *value, uint64_t *index) {
  clprim_value v;
  uint64_t i = 0;
  memset(&v, 0, sizeof v);
  clprim_status st = check_type(ctx, type);
  if (flags & ~(unsigned)(CLPRIM_REDUCE_ABS | CLPRIM_REDUCE_NAN_LARGEST))
    st = CLPRIM_ERROR_INVALID_ARGUMENT;
  if (st == CLPRIM_SUCCESS && n_local > 0)
    st = (is_max ? clprim_argmax : clprim_argmin)(ctx, n_local, type, in, flags, &v, &i,
                                                  clprim_buf(NULL));
  uint64_t hash = HASH_START;
  hash_add(&hash, &type, sizeof type);
  hash_add(&hash, &flags, sizeof flags);
  hash_add(&hash, &is_max, sizeof is_max);
  struct part p;
  CLPRIM_CHECK(part_check(comm, st, hash, n_local, bits_of(type, v), &p));
  /* The indices: a second word per rank. */
  uint64_t *idx = p.work;
  st = MPI_Allgather(&i, 1, MPI_UINT64_T, idx, 1, MPI_UINT64_T, comm) == MPI_SUCCESS
           ? CLPRIM_SUCCESS
           : CLPRIM_MPI_ERROR_MPI;
  if (st == CLPRIM_SUCCESS && p.total == 0) st = CLPRIM_ERROR_INVALID_ARGUMENT;
  if (st == CLPRIM_SUCCESS) {
    int best = -1, best_class = -1;
    clprim_value bv;
    memset(&bv, 0, sizeof bv);
    uint64_t offset = 0, best_index = 0;
    for (int r = 0; r < p.size; offset += p.n_of[r], ++r) {
      if (p.n_of[r] == 0) continue;
      const clprim_value x = value_of_bits(type, p.extra_of[r]);
      /* class: 2 a NaN that wins (argmax with NAN_LARGEST), 1 a number, 0
       * a NaN that loses to every number. */
      const int nan = is_nan_value(type, x);
      const int cls = nan ? (is_max && (flags & CLPRIM_REDUCE_NAN_LARGEST) ? 2 : 0) : 1;
      int better = best < 0 || cls > best_class;
      if (!better && cls == best_class && cls == 1) {
        const int c = compare_value(type, flags, x, bv);
        better = is_max ? c > 0 : c < 0;
      }
      if (better) best = r, best_class = cls, bv = x, best_index = offset + idx[r];
    }
    if (value) *value = bv;
    if (index) *index = best_index;
  }
  part_free(&p);
  return st;
}

clprim_status clprim_mpi_argmax(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                clprim_type type, clprim_buffer in, unsigned flags,
                                clprim_value *value, uint64_t *index) {
  return arg_reduce(ctx, comm, n_local, type, in, flags, 1, value, index);
}
clprim_status clprim_mpi_argmin(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                clprim_type type, clprim_buffer in, unsigned flags,
                                clprim_value *value, uint64_t *index) {
  return arg_reduce(ctx, comm, n_local, type, in, flags, 0, value, index);
}
clprim_status clprim_mpi_reduce_max(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                    clprim_type type, clprim_buffer in, unsigned flags,
                                    clprim_value *value) {
  return arg_reduce(ctx, comm, n_local, type, in, flags, 1, value, NULL);
}
clprim_status clprim_mpi_reduce_min(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                    clprim_type type, clprim_buffer in, unsigned flags,
                                    clprim_value *value) {
  return arg_reduce(ctx, comm, n_local, type, in, flags, 0, value, NULL);
}

clprim_status clprim_mpi_histogram_even(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                        clprim_type type, clprim_buffer in, clprim_value lo,
                                        clprim_value hi, size_t bins, clprim_buffer counts,
                                        uint64_t *outside) {
  clprim_status st = check_type(ctx, type);
  if (st == CLPRIM_SUCCESS && (bins == 0 || bins > ((size_t)1 << 31)))
    st = bins ? CLPRIM_ERROR_SIZE_TOO_LARGE : CLPRIM_ERROR_INVALID_ARGUMENT;
  if (st == CLPRIM_SUCCESS) st = check_range(ctx, counts, 4, bins);
  if (st == CLPRIM_SUCCESS && !counts.mem) st = CLPRIM_ERROR_INVALID_ARGUMENT;
  uint64_t hash = HASH_START;
  const size_t es = clprim_type_size(type);
  hash_add(&hash, &type, sizeof type);
  if (es) hash_add(&hash, lo.bytes, es), hash_add(&hash, hi.bytes, es);
  hash_add(&hash, &bins, sizeof bins);
  struct part p;
  CLPRIM_CHECK(part_check(comm, st, hash, n_local, 0, &p));
  const uint64_t total = p.total;
  part_free(&p);
  if (total >= ((uint64_t)1 << 32)) return CLPRIM_ERROR_SIZE_TOO_LARGE;
  /* The bins' counts and the three outside counts, summed over the ranks. */
  uint64_t *sums = malloc((bins + 3) * 8), *mine = malloc((bins + 3) * 8);
  uint32_t *c32 = malloc(bins * 4);
  st = sums && mine && c32 ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  uint64_t out3[3] = {0, 0, 0};
  if (st == CLPRIM_SUCCESS)
    st = clprim_histogram_even(ctx, n_local, type, in, lo, hi, bins, counts, out3,
                               clprim_buf(NULL));
  if (st == CLPRIM_SUCCESS) st = read_range(ctx, counts, 4, 0, bins, c32);
  if (st == CLPRIM_SUCCESS) {
    for (size_t b = 0; b < bins; ++b)
      mine[b] = c32[b];
    memcpy(mine + bins, out3, sizeof out3);
  }
  st = agree(comm, st);
  if (st == CLPRIM_SUCCESS && bins + 3 > (size_t)INT32_MAX) st = CLPRIM_ERROR_SIZE_TOO_LARGE;
  if (st == CLPRIM_SUCCESS && MPI_Allreduce(mine, sums, (int)(bins + 3), MPI_UINT64_T, MPI_SUM,
                                            comm) != MPI_SUCCESS)
    st = CLPRIM_MPI_ERROR_MPI;
  if (st == CLPRIM_SUCCESS) {
    for (size_t b = 0; b < bins; ++b)
      c32[b] = (uint32_t)sums[b];
    st = write_range(ctx, counts, 4, 0, bins, c32);
    if (st == CLPRIM_SUCCESS && outside) memcpy(outside, sums + bins, 3 * 8);
  }
  free(sums);
  free(mine);
  free(c32);
  return st;
}

/* ------------------------------------------------- scan and compaction */

/* x[0, n) += add (bits of type) in the caller's range, by cl/mpi.cl. */
static clprim_status add_constant(clprim_context *ctx, clprim_type type, clprim_buffer range,
                                  size_t n, uint64_t add) {
  if (n == 0) return CLPRIM_SUCCESS;
  CLPRIM_CHECK(clprim__call_begin(ctx));
  cl_mem mem;
  cl_kernel k;
  char options[64];
  snprintf(options, sizeof options, "-DT=%s", clprim__cl_type(type));
  clprim_status st = clprim__range(ctx, range, clprim_type_size(type), n,
                                   CLPRIM__READ | CLPRIM__WRITE, &mem);
  if (st == CLPRIM_SUCCESS) st = clprim__kernel(ctx, "mpi.cl", options, "mpi_add", &k);
  const cl_ulong n64 = n;
  const clprim_value v = value_of_bits(type, add);
  if (st == CLPRIM_SUCCESS)
    st = clprim__set_args(k, 3, sizeof mem, &mem, sizeof n64, &n64, clprim_type_size(type),
                          v.bytes);
  const struct clprim_launch l = clprim__launch(ctx);
  size_t groups = (n + l.wg - 1) / l.wg;
  if (groups > l.max_groups) groups = l.max_groups;
  if (st == CLPRIM_SUCCESS) st = clprim__enqueue(ctx, k, groups, l.wg);
  return clprim__call_end(ctx, st);
}

static clprim_status scan(clprim_context *ctx, MPI_Comm comm, size_t n_local, clprim_type type,
                          clprim_buffer in, clprim_buffer out, int inclusive) {
  clprim_status st = check_type(ctx, type);
  const size_t es = clprim_type_size(type);
  if (st == CLPRIM_SUCCESS) st = check_range(ctx, in, es, n_local);
  if (st == CLPRIM_SUCCESS) st = check_range(ctx, out, es, n_local);
  uint64_t hash = HASH_START;
  hash_add(&hash, &type, sizeof type);
  hash_add(&hash, &inclusive, sizeof inclusive);
  struct part p;
  CLPRIM_CHECK(part_check(comm, st, hash, n_local, 0, &p));
  /* The part's total: its inclusive scan's last element (plus the last
   * input, read first: the scan may be in place, for an exclusive one). */
  clprim_value last_in, last_out;
  memset(&last_in, 0, sizeof last_in);
  memset(&last_out, 0, sizeof last_out);
  if (n_local > 0) {
    if (!inclusive) st = read_range(ctx, in, es, n_local - 1, 1, last_in.bytes);
    if (st == CLPRIM_SUCCESS)
      st = (inclusive ? clprim_scan_inclusive : clprim_scan_exclusive)(ctx, n_local, type, in,
                                                                       out);
    if (st == CLPRIM_SUCCESS) st = read_range(ctx, out, es, n_local - 1, 1, last_out.bytes);
  }
  const uint64_t total = inclusive ? bits_of(type, last_out)
                                   : add_bits(type, bits_of(type, last_out), bits_of(type, last_in));
  /* Each rank's total (one gather with the statuses), the offset added in
   * rank order over the ranks before that hold elements. */
  uint64_t record[2];
  st = gather_status(comm, p.size, st, &total, 1, p.work, record);
  uint64_t offset = 0;
  int has_before = 0;
  for (int r = 0; st == CLPRIM_SUCCESS && r < p.rank; ++r) {
    if (p.n_of[r] == 0) continue;
    offset = has_before ? add_bits(type, offset, p.work[2 * r + 1]) : p.work[2 * r + 1];
    has_before = 1;
  }
  if (st == CLPRIM_SUCCESS && has_before) st = add_constant(ctx, type, out, n_local, offset);
  part_free(&p);
  return agree(comm, st);
}

clprim_status clprim_mpi_scan_exclusive(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                        clprim_type type, clprim_buffer in, clprim_buffer out) {
  return scan(ctx, comm, n_local, type, in, out, 0);
}
clprim_status clprim_mpi_scan_inclusive(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                        clprim_type type, clprim_buffer in, clprim_buffer out) {
  return scan(ctx, comm, n_local, type, in, out, 1);
}

clprim_status clprim_mpi_select(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                clprim_type type, clprim_buffer in, const clprim_predicate *pred,
                                unsigned flags, clprim_buffer values, clprim_buffer indices,
                                uint64_t *local_count, uint64_t *global_offset,
                                uint64_t *global_count) {
  clprim_status st = check_type(ctx, type);
  if (st == CLPRIM_SUCCESS && !pred) st = CLPRIM_ERROR_INVALID_ARGUMENT;
  if (st == CLPRIM_SUCCESS && (flags & ~CLPRIM_INDICES_64)) st = CLPRIM_ERROR_INVALID_ARGUMENT;
  const size_t es = clprim_type_size(type);
  uint64_t hash = HASH_START;
  hash_add(&hash, &type, sizeof type);
  hash_add(&hash, &flags, sizeof flags);
  if (pred) {
    hash_add(&hash, &pred->op, sizeof pred->op);
    hash_add(&hash, pred->a.bytes, 8);
    hash_add(&hash, pred->b.bytes, 8);
  }
  const int outputs = (values.mem != NULL) | (indices.mem != NULL) << 1;
  hash_add(&hash, &outputs, sizeof outputs);
  struct part p;
  CLPRIM_CHECK(part_check(comm, st, hash, n_local, 0, &p));
  const int index64 = (flags & CLPRIM_INDICES_64) != 0;
  if (indices.mem && !index64 && p.total > UINT32_MAX) {
    part_free(&p);
    return CLPRIM_ERROR_INVALID_ARGUMENT; /* every rank: the global count is known to all */
  }
  uint64_t count = 0;
  if (n_local > 0)
    st = clprim_select(ctx, n_local, type, in, pred, flags, values, indices, &count,
                       clprim_buf(NULL));
  (void)es;
  uint64_t record[2];
  st = gather_status(comm, p.size, st, &count, 1, p.work, record);
  uint64_t before = 0, all = 0;
  for (int r = 0; st == CLPRIM_SUCCESS && r < p.size; ++r) {
    if (r < p.rank) before += p.work[2 * r + 1];
    all += p.work[2 * r + 1];
  }
  /* Local indices to global ones. */
  if (st == CLPRIM_SUCCESS && indices.mem && p.offset > 0)
    st = add_constant(ctx, index64 ? CLPRIM_UINT64 : CLPRIM_UINT32, indices, count, p.offset);
  part_free(&p);
  st = agree(comm, st);
  if (st == CLPRIM_SUCCESS) {
    if (local_count) *local_count = count;
    if (global_offset) *global_offset = before;
    if (global_count) *global_count = all;
  }
  return st;
}

/* ---------------------------------------------- distributed selection */

/* One selection's state on this rank: the level kernels for the elements
 * (side 0: level 0 reads the caller's input) and for keys (side 1), the
 * meta buffer of the current level (cl/internal/layout.h) and its
 * per-group counts, and the two key buffers that the levels extract into.
 * Level 0 keeps a meta buffer and counts of its own (meta0, counts0), and
 * what it learnt (splitters, counts, or the base case's keys) stays in
 * level0: the ranks of one call (quantiles, sort's splitters) share its
 * sample, counting pass and collectives, and only extract their buckets. */
enum { D_SAMPLE, D_COUNT, D_EXTRACT, D_TABLE, D_KERNELS };
struct dsel {
  clprim_context *ctx;
  MPI_Comm comm;
  const struct part *p;
  clprim_type type, key_type;
  size_t key_size;
  int count_nans; /* level 0 counts NaNs (CLPRIM_NTH_REJECT_NAN on floats) */
  cl_mem in;      /* the caller's elements (resolved range) */
  struct clprim_nth_config c;
  cl_kernel k[2][D_KERNELS];
  cl_mem meta, counts, keys[2];
  cl_mem meta0, meta_later;
  const char *counts_slot;
  uint64_t gather_max; /* CLPRIM_MPI_GATHER_MAX, or lower (CLPRIM_MPI_GATHER_MAX knob: tests) */
  struct {
    int ready;
    cl_mem counts;
    uint64_t splitters[SPLITTERS], global[BUCKETS], local[BUCKETS];
    uint64_t *base_keys; /* the base case at level 0: all keys, sorted (malloc'ed) */
  } level0;
};

static int is_float(clprim_type t) { return t == CLPRIM_FLOAT || t == CLPRIM_DOUBLE; }

/* Builds the kernels of side (0: elements, 1: keys) that are not built yet. */
static clprim_status dsel_kernels(struct dsel *d, int side) {
  static const char *const names[D_KERNELS] = {"nth_sample", "nth_count", "nth_extract_one",
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

/* Writes the splitters (keys, sorted) to the meta buffer's tree, has
 * nth_table build their bucket table and zero the totals, then counts the
 * len candidates of buf (side) into the buckets: local[b] (BUCKETS words)
 * receives this rank's totals. */
static clprim_status dsel_count(struct dsel *d, int side, cl_mem buf, size_t len,
                                const uint64_t *splitters, uint64_t *local) {
  memset(local, 0, BUCKETS * 8);
  unsigned char tree[SPLITTERS * 8];
  for (unsigned j = 0; j < SPLITTERS; ++j) {
    if (d->key_size == 4) {
      const uint32_t k32 = (uint32_t)splitters[j];
      memcpy(tree + 4 * j, &k32, 4);
    } else {
      memcpy(tree + 8 * j, &splitters[j], 8);
    }
  }
  if (len == 0) return CLPRIM_SUCCESS;
  CLPRIM_CHECK(dsel_kernels(d, side));
  CLPRIM_CHECK(clprim__write(d->ctx, d->meta, NTH_META_TREE_AT * 8, SPLITTERS * d->key_size, tree,
                             1));
  CLPRIM_CHECK(clprim__set_args(d->k[side][D_TABLE], 1, sizeof d->meta, &d->meta));
  CLPRIM_CHECK(clprim__enqueue(d->ctx, d->k[side][D_TABLE], 1, d->c.wg));
  const size_t g = dsel_groups(d, len);
  CLPRIM_CHECK(clprim__scratch(d->ctx, d->counts_slot, g * BUCKETS * 4, &d->counts));
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

/* This rank's 255 sampled splitters of its len candidates (nth_sample:
 * 1024 keys at pseudo-random positions, sorted). */
static clprim_status dsel_sample(struct dsel *d, int side, cl_mem buf, size_t len, uint64_t seed,
                                 uint64_t *splitters) {
  if (len == 0) return CLPRIM_SUCCESS;
  CLPRIM_CHECK(dsel_kernels(d, side));
  const cl_ulong zero = 0, n64 = len, seed64 = seed;
  const cl_uint no_subs = 0;
  cl_kernel k = d->k[side][D_SAMPLE];
  CLPRIM_CHECK(clprim__set_args(k, 9, sizeof buf, &buf, sizeof zero, &zero, sizeof n64, &n64,
                                sizeof seed64, &seed64, sizeof d->meta, &d->meta, sizeof zero,
                                &zero, sizeof d->meta, &d->meta, sizeof zero, &zero,
                                sizeof no_subs, &no_subs));
  CLPRIM_CHECK(clprim__enqueue(d->ctx, k, 1, d->c.wg));
  unsigned char tree[SPLITTERS * 8];
  CLPRIM_CHECK(
      clprim__read(d->ctx, d->meta, NTH_META_TREE_AT * 8, SPLITTERS * d->key_size, tree));
  for (unsigned j = 0; j < SPLITTERS; ++j) {
    if (d->key_size == 4) {
      uint32_t k32;
      memcpy(&k32, tree + 4 * j, 4);
      splitters[j] = k32;
    } else {
      memcpy(&splitters[j], tree + 8 * j, 8);
    }
  }
  return CLPRIM_SUCCESS;
}

/* The len candidates of buf (side) in bucket b, which dsel_count counted
 * last, to *out (a key buffer): nth_extract_one from position 0. */
static clprim_status dsel_extract(struct dsel *d, int side, cl_mem buf, size_t len, unsigned b,
                                  cl_mem out) {
  const cl_ulong zero = 0, n64 = len;
  const cl_uint no_subs = 0, b32 = b;
  const uint32_t cursor = 0;
  CLPRIM_CHECK(clprim__write(d->ctx, d->meta, (size_t)b * 8, 8, &zero, 1)); /* region start */
  CLPRIM_CHECK(clprim__write(d->ctx, d->meta, NTH_META_CURSORS_AT * 8 + (size_t)b * 4, 4, &cursor,
                             1));
  cl_kernel k = d->k[side][D_EXTRACT];
  CLPRIM_CHECK(clprim__set_args(k, 12, sizeof buf, &buf, sizeof zero, &zero, sizeof n64, &n64,
                                sizeof d->meta, &d->meta, sizeof zero, &zero, sizeof d->counts,
                                &d->counts, sizeof zero, &zero, sizeof out, &out, sizeof d->meta,
                                &d->meta, sizeof zero, &zero, sizeof no_subs, &no_subs,
                                sizeof b32, &b32));
  return clprim__enqueue(d->ctx, k, dsel_groups(d, len), d->c.wg);
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

/* The 255 splitters that every rank takes: the ranks' samples (each
 * splitter of rank r stands for len_r / 256 candidates) merged by key, and
 * cut at every 256th of their total weight. */
static void merge_splitters(const uint64_t *all, int size, struct weighted *w, uint64_t *out) {
  size_t m = 0;
  uint64_t total = 0;
  for (int r = 0; r < size; ++r) {
    const uint64_t *rec = all + (size_t)r * (SPLITTERS + 2);
    if (rec[1] == 0) continue; /* rec[0]: status, rec[1]: len */
    for (unsigned j = 0; j < SPLITTERS; ++j)
      w[m].key = rec[2 + j], w[m].weight = rec[1], ++m;
    total += rec[1] * SPLITTERS;
  }
  qsort(w, m, sizeof *w, cmp_weighted);
  size_t at = 0;
  uint64_t run = m ? w[0].weight : 0;
  for (unsigned j = 0; j < SPLITTERS; ++j) {
    const double target = (double)total * (j + 1) / 256.0;
    while (at + 1 < m && (double)run < target)
      run += w[++at].weight;
    out[j] = m ? w[at].key : 0;
  }
}

/* One level's splitters and counts: each rank's sample of its len
 * candidates (cur) and candidate count (and status), gathered at rank 0,
 * which merges them; the splitters (and whether any rank failed)
 * broadcast; each rank's counts into their buckets (local), all-reduced
 * (global) with a status word (the NaN slot counts NaNs where level 0
 * rejects them). all, w: room for the gather and the merge. */
static clprim_status dsel_level(struct dsel *d, unsigned level, cl_mem cur, size_t len,
                                uint64_t *all, struct weighted *w, uint64_t *splitters,
                                uint64_t *local, uint64_t *global) {
  const int P = d->p->size, side = level > 0;
  uint64_t mine[SPLITTERS + 1], record[SPLITTERS + 2], merged[SPLITTERS + 1] = {0};
  memset(mine, 0, sizeof mine);
  mine[0] = len;
  clprim_status st = dsel_sample(
      d, side, cur, len, 0x5EED0000ull + level * 1000003ull + (uint64_t)d->p->rank, mine + 1);
  record[0] = st != CLPRIM_SUCCESS;
  memcpy(record + 1, mine, sizeof mine);
  MPI_OK(MPI_Gather(record, SPLITTERS + 2, MPI_UINT64_T, all, SPLITTERS + 2, MPI_UINT64_T, 0,
                    d->comm));
  if (d->p->rank == 0) {
    for (int r = 0; r < P; ++r)
      merged[0] |= all[(size_t)r * (SPLITTERS + 2)];
    if (!merged[0]) merge_splitters(all, P, w, merged + 1);
  }
  MPI_OK(MPI_Bcast(merged, SPLITTERS + 1, MPI_UINT64_T, 0, d->comm));
  if (st == CLPRIM_SUCCESS && merged[0]) st = CLPRIM_MPI_ERROR_REMOTE;
  if (st != CLPRIM_SUCCESS) return st;
  memcpy(splitters, merged + 1, SPLITTERS * 8);
  uint64_t send[BUCKETS + 1], recv[BUCKETS + 1];
  st = dsel_count(d, side, cur, len, splitters, local);
  memcpy(send, local, BUCKETS * 8);
  send[BUCKETS] = st != CLPRIM_SUCCESS;
  MPI_OK(MPI_Allreduce(send, recv, BUCKETS + 1, MPI_UINT64_T, MPI_SUM, d->comm));
  if (st == CLPRIM_SUCCESS && recv[BUCKETS]) st = CLPRIM_MPI_ERROR_REMOTE;
  if (st == CLPRIM_SUCCESS && level == 0 && d->count_nans && recv[NAN_SLOT] > 0)
    st = CLPRIM_ERROR_INVALID_ARGUMENT; /* a NaN with CLPRIM_NTH_REJECT_NAN */
  if (st == CLPRIM_SUCCESS) memcpy(global, recv, BUCKETS * 8);
  return st;
}

/* The key of global rank k among the candidates (every rank the same
 * answer). approximate: one level; *error the rank distance. */
static clprim_status dsel_rank(struct dsel *d, uint64_t k, int approximate,
                               uint64_t *key, uint64_t *error) {
  const int P = d->p->size;
  uint64_t *all = malloc((size_t)P * (SPLITTERS + 2) * 8), splitters[SPLITTERS], record[2];
  struct weighted *w = malloc(sizeof *w * (size_t)P * SPLITTERS);
  uint64_t *local = malloc(2 * BUCKETS * 8), *global = local + BUCKETS;
  clprim_status st = agree(d->comm, all && w && local ? CLPRIM_SUCCESS
                                                      : CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  cl_mem cur = d->in;
  size_t len = d->p->n_local;
  uint64_t G = d->p->total, rel = k;
  *error = 0;
  for (unsigned level = 0; st == CLPRIM_SUCCESS; ++level) {
    const int side = level > 0;
    d->meta = level ? d->meta_later : d->meta0;
    d->counts_slot = level ? SLOT_COUNTS_LATER : SLOT_COUNTS;
    if (G <= d->gather_max && level == 0 && d->level0.base_keys) {
      *key = d->level0.base_keys[rel]; /* an earlier rank of this call gathered them */
      break;
    }
    if (G <= d->gather_max) {
      /* The base case: every rank's candidates, gathered and sorted. */
      uint64_t *keys = malloc((G + 1) * 8), *mine_keys = malloc((len + 1) * 8);
      int *counts = malloc(sizeof(int) * 2 * (size_t)P), *displs = counts + P;
      unsigned char *raw = malloc((len + 1) * 8);
      st = agree(d->comm, keys && mine_keys && counts && raw ? CLPRIM_SUCCESS
                                                             : CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
      const size_t es = side ? d->key_size : clprim_type_size(d->type);
      if (st == CLPRIM_SUCCESS && len > 0) st = clprim__read(d->ctx, cur, 0, len * es, raw);
      for (size_t i = 0; st == CLPRIM_SUCCESS && i < len; ++i) {
        uint64_t bits = 0;
        memcpy(&bits, raw + i * es, es); /* little-endian hosts */
        mine_keys[i] = side ? bits : key_of_bits(d->type, bits);
      }
      const uint64_t len64 = len;
      if (st == CLPRIM_SUCCESS) st = gather_status(d->comm, P, st, &len64, 1, d->p->work, record);
      int at = 0;
      for (int r = 0; st == CLPRIM_SUCCESS && r < P; ++r)
        counts[r] = (int)d->p->work[2 * r + 1], displs[r] = at, at += counts[r];
      if (st == CLPRIM_SUCCESS &&
          MPI_Allgatherv(mine_keys, (int)len, MPI_UINT64_T, keys, counts, displs, MPI_UINT64_T,
                         d->comm) != MPI_SUCCESS)
        st = CLPRIM_MPI_ERROR_MPI;
      if (st == CLPRIM_SUCCESS) {
        qsort(keys, (size_t)at, 8, cmp_u64);
        const uint64_t nan_key = d->key_size == 4 ? 0xFFFFFFFFull : UINT64_MAX;
        if (level == 0 && d->count_nans && at > 0 && keys[at - 1] == nan_key)
          st = CLPRIM_ERROR_INVALID_ARGUMENT; /* every rank saw the same keys */
        else
          *key = keys[rel];
      }
      if (st == CLPRIM_SUCCESS && level == 0) d->level0.base_keys = keys, keys = NULL;
      free(keys);
      free(mine_keys);
      free(counts);
      free(raw);
      break;
    }
    if (level == 0 && d->level0.ready) { /* an earlier rank of this call ran level 0 */
      memcpy(splitters, d->level0.splitters, sizeof splitters);
      memcpy(global, d->level0.global, BUCKETS * 8);
      memcpy(local, d->level0.local, BUCKETS * 8);
      d->counts = d->level0.counts;
    } else {
      st = dsel_level(d, level, cur, len, all, w, splitters, local, global);
      if (st != CLPRIM_SUCCESS) break;
      if (level == 0) {
        memcpy(d->level0.splitters, splitters, sizeof splitters);
        memcpy(d->level0.global, global, BUCKETS * 8);
        memcpy(d->level0.local, local, BUCKETS * 8);
        d->level0.counts = d->counts, d->level0.ready = 1;
      }
    }
    /* The bucket of rank rel (buckets 0 to NAN_SLOT - 1). */
    uint64_t before = 0;
    unsigned b = 0;
    while (b < NAN_SLOT - 1 && before + global[b] <= rel)
      before += global[b++];
    if (b & 1u) { /* an equality bucket: its splitter */
      *key = splitters[b / 2];
      break;
    }
    if (approximate) { /* the nearer of the splitters around the bucket */
      const unsigned j = b / 2;
      const uint64_t below = j > 0 ? rel - (before - 1) : UINT64_MAX;
      const uint64_t above = j < SPLITTERS ? before + global[b] - rel : UINT64_MAX;
      if (below <= above)
        *key = splitters[j - 1], *error = below;
      else
        *key = splitters[j], *error = above;
      break;
    }
    rel -= before;
    G = global[b];
    /* Each rank's candidates of bucket b, extracted on its device. */
    const size_t next_len = (size_t)local[b];
    cl_mem next = NULL;
    st = clprim__scratch(d->ctx, level % 2 ? SLOT_KEYS_B : SLOT_KEYS_A,
                         (next_len + 8) * d->key_size, &next);
    if (st == CLPRIM_SUCCESS && next_len > 0) st = dsel_extract(d, side, cur, len, b, next);
    st = agree(d->comm, st);
    cur = next, len = next_len;
  }
  free(all);
  free(w);
  free(local);
  return st;
}

/* Sets up a selection on this rank: the call begun, the input resolved,
 * the meta buffer. The caller ends the call. */
static clprim_status dsel_begin(struct dsel *d, clprim_context *ctx, MPI_Comm comm,
                                const struct part *p, clprim_type type, clprim_buffer in,
                                unsigned flags) {
  memset(d, 0, sizeof *d);
  d->ctx = ctx, d->comm = comm, d->p = p, d->type = type;
  d->key_size = clprim_type_size(type);
  d->key_type = d->key_size == 4 ? CLPRIM_UINT32 : CLPRIM_UINT64;
  d->count_nans = is_float(type) && (flags & CLPRIM_NTH_REJECT_NAN);
  d->c = clprim__nth_config(ctx);
  d->counts_slot = SLOT_COUNTS;
  const long long gather_max = ctx->tuning[CLPRIM_KNOB_MPI_GATHER_MAX];
  d->gather_max = gather_max >= 1 && gather_max < CLPRIM_MPI_GATHER_MAX ? (uint64_t)gather_max
                                                                        : CLPRIM_MPI_GATHER_MAX;
  if (p->n_local > 0)
    CLPRIM_CHECK(clprim__range(ctx, in, d->key_size, p->n_local, CLPRIM__READ, &d->in));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_META_LATER, NTH_META_WORDS * 8, &d->meta_later));
  CLPRIM_CHECK(clprim__scratch(ctx, SLOT_META, NTH_META_WORDS * 8, &d->meta0));
  d->meta = d->meta0;
  return CLPRIM_SUCCESS;
}

/* The keys of the sorted distinct global ranks[0, count) to keys[]. */
static clprim_status select_ranks(clprim_context *ctx, MPI_Comm comm, const struct part *p,
                                  clprim_type type, clprim_buffer in, const uint64_t *ranks,
                                  size_t count, unsigned flags, int approximate, uint64_t *keys,
                                  uint64_t *error) {
  struct dsel d;
  clprim_status st = clprim__call_begin(ctx);
  const int begun = st == CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS) st = dsel_begin(&d, ctx, comm, p, type, in, flags);
  st = agree(comm, st);
  uint64_t e = 0;
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; ++r)
    st = dsel_rank(&d, ranks[r], approximate, &keys[r], error ? error : &e);
  if (begun) free(d.level0.base_keys);
  return begun ? clprim__call_end(ctx, st) : st;
}

/* The common check of the selection calls; hash covers extra words. */
static clprim_status nth_check(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                               clprim_type type, clprim_buffer in, unsigned flags,
                               unsigned allowed, const void *more, size_t more_bytes,
                               int local_bad, struct part *p) {
  clprim_status st = local_bad ? CLPRIM_ERROR_INVALID_ARGUMENT : check_type(ctx, type);
  if (st == CLPRIM_SUCCESS && (flags & ~allowed)) st = CLPRIM_ERROR_INVALID_ARGUMENT;
  if (st == CLPRIM_SUCCESS && n_local >= ((uint64_t)1 << 32)) st = CLPRIM_ERROR_SIZE_TOO_LARGE;
  if (st == CLPRIM_SUCCESS) st = check_range(ctx, in, clprim_type_size(type), n_local);
  uint64_t hash = HASH_START;
  hash_add(&hash, &type, sizeof type);
  hash_add(&hash, &flags, sizeof flags);
  if (more_bytes) hash_add(&hash, more, more_bytes);
  return part_check(comm, st, hash, n_local, 0, p);
}

clprim_status clprim_mpi_quantiles(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                   clprim_type type, clprim_buffer in, const uint64_t *ranks,
                                   size_t count, unsigned flags, clprim_value *values) {
  const int bad = !ranks || !values || count == 0;
  uint64_t h = HASH_START;
  if (!bad) hash_add(&h, ranks, count * 8);
  const uint64_t more[2] = {count, h};
  struct part p;
  CLPRIM_CHECK(nth_check(ctx, comm, n_local, type, in, flags, CLPRIM_NTH_REJECT_NAN, more,
                         sizeof more, bad, &p));
  clprim_status st = CLPRIM_SUCCESS;
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; ++r)
    if (ranks[r] >= p.total) st = CLPRIM_ERROR_INVALID_ARGUMENT; /* alike on every rank */
  uint64_t *sorted = NULL, *keys = NULL;
  size_t distinct = 0;
  if (st == CLPRIM_SUCCESS && p.size == 1) { /* one rank: the plain call (ONE_RANK) */
    st = clprim_quantiles(ctx, n_local, type, in, ranks, count, flags, values, clprim_buf(NULL));
    part_free(&p);
    return st;
  }
  if (st == CLPRIM_SUCCESS) {
    sorted = malloc(count * 8), keys = malloc(count * 8);
    st = agree(comm, sorted && keys ? CLPRIM_SUCCESS : CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  }
  if (st == CLPRIM_SUCCESS) {
    memcpy(sorted, ranks, count * 8);
    distinct = clprim__distinct_ranks(sorted, count);
    st = select_ranks(ctx, comm, &p, type, in, sorted, distinct, flags, 0, keys, NULL);
  }
  for (size_t r = 0; st == CLPRIM_SUCCESS && r < count; ++r)
    values[r] = clprim__value_of_key(type, keys[clprim__rank_slot(sorted, distinct, ranks[r])]);
  free(sorted);
  free(keys);
  part_free(&p);
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
  struct part p;
  CLPRIM_CHECK(nth_check(ctx, comm, n_local, type, in, flags, CLPRIM_NTH_REJECT_NAN, &k, sizeof k,
                         !value, &p));
  clprim_status st = k >= p.total ? CLPRIM_ERROR_INVALID_ARGUMENT : CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS && p.size == 1) { /* one rank: the plain call (ONE_RANK) */
    st = clprim_nth_element_approx(ctx, n_local, type, in, k, flags, value, rank_error,
                                   clprim_buf(NULL));
    part_free(&p);
    return st;
  }
  uint64_t key = 0, error = 0;
  if (st == CLPRIM_SUCCESS) st = select_ranks(ctx, comm, &p, type, in, &k, 1, flags, 1, &key, &error);
  if (st == CLPRIM_SUCCESS) {
    *value = clprim__value_of_key(type, key);
    if (rank_error) *rank_error = error;
  }
  part_free(&p);
  return st;
}

/* ---------------------------------------------------------------- top-k */

/* Each rank's counts of its elements below and equal to the key t (one
 * counting pass with every splitter t: bucket 0 below, 1 equal, the last
 * open bucket above). */
static clprim_status count_around(clprim_context *ctx, MPI_Comm comm, const struct part *p,
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

clprim_status clprim_mpi_topk(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                              clprim_type type, clprim_buffer in, uint64_t k, unsigned flags,
                              clprim_buffer values, clprim_buffer indices,
                              uint64_t *local_count, uint64_t *global_offset) {
  const unsigned allowed = CLPRIM_TOPK_SMALLEST | CLPRIM_INDICES_64 | CLPRIM_NTH_REJECT_NAN;
  const int outputs = (values.mem != NULL) | (indices.mem != NULL) << 1;
  struct part p;
  const uint64_t more[2] = {k, (uint64_t)outputs};
  CLPRIM_CHECK(nth_check(ctx, comm, n_local, type, in, flags, allowed, more, sizeof more,
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
    struct part cp;
    const struct part *sp = &p; /* what the selection runs on */
    clprim_buffer sin = in;
    unsigned sflags = flags;
    cl_mem cand = NULL;
    int cand_part = 0;
    if (2 * candidates <= p.total) {
      const uint64_t kl = n_local < k ? n_local : k;
      clprim_status local = CLPRIM_SUCCESS;
      if (kl > 0) {
        cl_int err;
        cand = clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_READ_WRITE,
                              kl * clprim_type_size(type), NULL, &err);
        local = (clprim_status)err;
        if (local == CLPRIM_SUCCESS)
          local = clprim_topk(ctx, n_local, type, in, kl,
                              flags & (CLPRIM_TOPK_SMALLEST | CLPRIM_NTH_REJECT_NAN),
                              clprim_buf(cand), clprim_buf(NULL));
      }
      /* The only INVALID_ARGUMENT left is a NaN refused: refused on every
       * rank (its flag rides in the check's extra word). */
      const int nan = local == CLPRIM_ERROR_INVALID_ARGUMENT;
      st = part_check(comm, nan ? CLPRIM_SUCCESS : local, HASH_START, kl, (uint64_t)nan, &cp);
      cand_part = st == CLPRIM_SUCCESS;
      for (int r = 0; cand_part && r < cp.size; ++r)
        if (cp.extra_of[r]) st = CLPRIM_ERROR_INVALID_ARGUMENT;
      sp = &cp, sin = clprim_buf(cand), sflags = 0;
    }
    /* The threshold: the k-th best, by distributed selection. */
    const uint64_t rank = smallest ? k - 1 : sp->total - k;
    uint64_t t = 0, below = 0, equal = 0;
    if (st == CLPRIM_SUCCESS)
      st = select_ranks(ctx, comm, sp, type, sin, &rank, 1, sflags, 0, &t, NULL);
    const int selected = st == CLPRIM_SUCCESS;
    if (st == CLPRIM_SUCCESS) st = count_around(ctx, comm, sp, type, sin, &t, 1, &below, &equal);
    if (cand) clReleaseMemObject(cand);
    /* beyond: the local elements strictly better than t */
    const uint64_t beyond = smallest ? below : sp->n_local - below - equal;
    if (cand_part) part_free(&cp);
    const uint64_t words[2] = {beyond, equal};
    uint64_t record[3];
    uint64_t *all = malloc((size_t)p.size * 3 * 8);
    if (selected && st == CLPRIM_SUCCESS && !all) st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    if (selected) st = agree(comm, st); /* also: every rank can receive */
    if (st == CLPRIM_SUCCESS) st = gather_status(comm, p.size, st, words, 2, all, record);
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
    /* This rank's share: its own top-k (ties to its lowest indices). */
    if (st == CLPRIM_SUCCESS && mine > 0)
      st = clprim_topk(ctx, n_local, type, in, mine,
                       flags & (CLPRIM_TOPK_SMALLEST | CLPRIM_INDICES_64), values, indices);
    if (st == CLPRIM_SUCCESS && mine > 0 && indices.mem && p.offset > 0)
      st = add_constant(ctx, index64 ? CLPRIM_UINT64 : CLPRIM_UINT32, indices, mine, p.offset);
    if (agreed) st = agree(comm, st);
  }
  part_free(&p);
  if (st == CLPRIM_SUCCESS) {
    if (local_count) *local_count = mine;
    if (global_offset) *global_offset = before;
  }
  return st;
}

/* ----------------------------------------------------------------- sort */

/* Pinned host memory for MPI: a CL_MEM_ALLOC_HOST_PTR buffer, mapped. */
struct pinned {
  cl_mem buf;
  void *host;
  size_t bytes;
};
static clprim_status pinned_alloc(clprim_context *ctx, size_t bytes, struct pinned *s) {
  cl_int err;
  s->bytes = bytes ? bytes : 8;
  s->host = NULL;
  s->buf = clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
                          s->bytes, NULL, &err);
  if (err != CL_SUCCESS) return (clprim_status)err;
  s->host = clEnqueueMapBuffer(clprim_context_queue(ctx), s->buf, CL_TRUE,
                               CL_MAP_READ | CL_MAP_WRITE, 0, s->bytes, 0, NULL, NULL, &err);
  return (clprim_status)err;
}
static void pinned_free(clprim_context *ctx, struct pinned *s) {
  if (s->host) clEnqueueUnmapMemObject(clprim_context_queue(ctx), s->buf, s->host, 0, NULL, NULL);
  if (s->buf) clFinish(clprim_context_queue(ctx)), clReleaseMemObject(s->buf);
  s->buf = NULL, s->host = NULL;
}

clprim_status clprim_mpi_sort_keys(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                   clprim_type type, clprim_buffer in, clprim_buffer out,
                                   size_t out_capacity, uint64_t *out_count) {
  struct part p;
  CLPRIM_CHECK(nth_check(ctx, comm, n_local, type, in, 0, 0, NULL, 0, 0, &p));
  const size_t es = clprim_type_size(type);
  const uint64_t P = (uint64_t)p.size, N = p.total;
  const uint64_t share = clprim_mpi_sort_share(N, p.rank, p.size);
  /* Every rank's capacity is checked where it can be: locally. */
  clprim_status st = P > SPLITTERS + 1 ? CLPRIM_ERROR_SIZE_TOO_LARGE : CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS && out_capacity < share) st = CLPRIM_ERROR_BUFFER_TOO_SMALL;
  if (st == CLPRIM_SUCCESS) st = check_range(ctx, out, es, out_capacity);
  if (st == CLPRIM_SUCCESS && (share > INT32_MAX || n_local > INT32_MAX))
    st = CLPRIM_ERROR_SIZE_TOO_LARGE;
  st = agree(comm, st);
  const size_t np = (size_t)P;
  uint64_t *splitter_ranks = NULL, *keys = NULL, *below = NULL, *equal = NULL, *all = NULL,
           *record = NULL, *mine = NULL;
  int *scount = NULL, *sdispl = NULL, *rcount = NULL, *rdispl = NULL;
  if (st == CLPRIM_SUCCESS && N > 0 && P > 1) {
    splitter_ranks = malloc(np * 8), keys = malloc(np * 8), below = malloc(np * 8),
    equal = malloc(np * 8), all = malloc(np * (2 * np - 1) * 8), record = malloc(2 * np * 8);
    mine = malloc(2 * np * 8);
    scount = malloc(sizeof(int) * 4 * np);
    st = agree(comm, splitter_ranks && keys && below && equal && all && record && mine && scount
                         ? CLPRIM_SUCCESS
                         : CLPRIM_ERROR_OUT_OF_HOST_MEMORY);
  }
  cl_mem sorted = NULL;
  struct pinned send = {NULL, NULL, 0}, recv = {NULL, NULL, 0};
  int cuts_add_up = 0;
  if (st == CLPRIM_SUCCESS && N > 0 && P > 1) {
    sdispl = scount + np, rcount = scount + 2 * np, rdispl = scount + 3 * np;
    /* The splitters: the keys of global ranks r N / P (distinct, sorted). */
    size_t ns = 0;
    for (uint64_t r = 1; r < P; ++r) {
      const uint64_t at = share_start(N, r, P);
      if (at < N && (ns == 0 || splitter_ranks[ns - 1] != at)) splitter_ranks[ns++] = at;
    }
    if (ns > 0) st = select_ranks(ctx, comm, &p, type, in, splitter_ranks, ns, 0, 0, keys, NULL);
    /* Each rank's keys below and equal to each splitter, all-gathered. */
    if (st == CLPRIM_SUCCESS) {
      clprim_status local = CLPRIM_SUCCESS;
      if (ns > 0) local = count_around(ctx, comm, &p, type, in, keys, (unsigned)ns, below, equal);
      for (size_t j = 0; j < ns; ++j)
        mine[2 * j] = local == CLPRIM_SUCCESS ? below[j] : 0,
                 mine[2 * j + 1] = local == CLPRIM_SUCCESS ? equal[j] : 0;
      st = gather_status(comm, p.size, local, mine, (unsigned)(2 * ns), all, record);
    }
    /* cut[q][r]: how many of rank q's sorted keys go to ranks below r. */
    if (st == CLPRIM_SUCCESS) {
      const size_t w = 2 * ns + 1;
      for (size_t q = 0; q < np; ++q) {
        uint64_t prev_cut = 0;
        for (size_t r = 0; r <= np; ++r) {
          uint64_t cut;
          if (r == 0)
            cut = 0;
          else if (r == np)
            cut = p.n_of[q];
          else {
            const uint64_t at = share_start(N, r, P);
            if (at >= N) {
              cut = p.n_of[q];
            } else {
              size_t j = 0;
              while (splitter_ranks[j] != at)
                ++j;
              uint64_t all_below = 0, eq_before = 0;
              for (size_t x = 0; x < np; ++x) {
                all_below += all[w * x + 1 + 2 * j];
                if (x < q) eq_before += all[w * x + 2 + 2 * j];
              }
              const uint64_t need = at - all_below; /* equal keys that go below r */
              const uint64_t left = need > eq_before ? need - eq_before : 0;
              const uint64_t eq = all[w * q + 2 + 2 * j];
              cut = all[w * q + 1 + 2 * j] + (eq < left ? eq : left);
            }
          }
          if (r > 0) {
            const uint64_t c = cut - prev_cut;
            if (q == (size_t)p.rank) scount[r - 1] = (int)c;
            if (r - 1 == (size_t)p.rank) rcount[q] = (int)c;
          }
          prev_cut = cut;
        }
      }
      uint64_t s = 0, t = 0;
      for (size_t r = 0; r < np; ++r)
        sdispl[r] = (int)s, s += (uint64_t)scount[r], rdispl[r] = (int)t, t += (uint64_t)rcount[r];
      /* What this rank sends must be its part and what it receives its
       * share (else the exchange would overrun the buffers): checked before
       * the agreement below, so that every rank stops there. */
      cuts_add_up = s == n_local && t == share;
    }
    /* Sort the part, stage it, exchange, sort what came. */
    cl_int err = CL_SUCCESS;
    const int agreed = st == CLPRIM_SUCCESS;
    if (st == CLPRIM_SUCCESS && !cuts_add_up) st = CLPRIM_MPI_ERROR_INTERNAL;
    if (st == CLPRIM_SUCCESS && n_local > 0) {
      sorted = clCreateBuffer(clprim_context_cl_context(ctx), CL_MEM_READ_WRITE, n_local * es,
                              NULL, &err);
      st = (clprim_status)err;
      if (st == CLPRIM_SUCCESS)
        st = clprim_sort_keys(ctx, n_local, type, in, 0, 0, 0, clprim_buf(sorted));
    }
    if (st == CLPRIM_SUCCESS) st = pinned_alloc(ctx, n_local * es, &send);
    if (st == CLPRIM_SUCCESS) st = pinned_alloc(ctx, share * es, &recv);
    if (st == CLPRIM_SUCCESS && n_local > 0)
      st = (clprim_status)clEnqueueReadBuffer(clprim_context_queue(ctx), sorted, CL_TRUE, 0,
                                              n_local * es, send.host, 0, NULL, NULL);
    if (agreed) st = agree(comm, st);
    if (st == CLPRIM_SUCCESS) {
      const MPI_Datatype t = es == 4 ? MPI_UINT32_T : MPI_UINT64_T;
      if (MPI_Alltoallv(send.host, scount, sdispl, t, recv.host, rcount, rdispl, t, comm) !=
          MPI_SUCCESS)
        st = CLPRIM_MPI_ERROR_MPI;
    }
    if (st == CLPRIM_SUCCESS && share > 0)
      st = write_range(ctx, out, es, 0, share, recv.host);
    const int exchanged = st == CLPRIM_SUCCESS;
    if (st == CLPRIM_SUCCESS && share > 0)
      st = clprim_sort_keys(ctx, share, type, out, 0, 0, 0, out);
    if (exchanged) st = agree(comm, st);
  } else if (st == CLPRIM_SUCCESS && N > 0) { /* one rank: its own sort */
    st = agree(comm, clprim_sort_keys(ctx, n_local, type, in, 0, 0, 0, out));
  }
  pinned_free(ctx, &send);
  pinned_free(ctx, &recv);
  if (sorted) clReleaseMemObject(sorted);
  free(splitter_ranks), free(keys), free(below), free(equal), free(all), free(record), free(mine),
      free(scount);
  part_free(&p);
  if (st == CLPRIM_SUCCESS && out_count) *out_count = share;
  return st;
}
