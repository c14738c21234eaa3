/* collectives.c: clprim_mpi's reductions, argmax / argmin, histogram,
 * scan and compaction: each rank's plain call on its part, then what the
 * ranks share (totals, offsets) combined in the check's words or one more
 * gather; and cl/mpi.cl's constant added to a range (a local scan to its
 * part of the global scan, local indices to global ones). */
#include "mpi.h"
#include "../../cl/internal/layout.h"
#include "../engine/exact.h"
#include "../reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    const int64_t x = type == CLPRIM_INT32 ? a.i32 : a.i64,
                  y = type == CLPRIM_INT32 ? b.i32 : b.i64;
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
/* ------------------------------------------- reductions and histograms */

#define SLOT_EXACT_RECORD "mpi: exact record"

/* The rank's part of an exact sum as one record of the accumulator's words
 * (clprim__exact_record_words of them) on the host. */
static clprim_status exact_part(clprim_context *ctx, clprim_type type, clprim_buffer range,
                                size_t n, int64_t *record) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "mpi"));
  const size_t bytes = clprim__exact_record_words(type) * 8;
  cl_mem in = NULL, rec;
  clprim_status st =
      n ? clprim__range(ctx, "in", range, clprim_type_size(type), n, CLPRIM__READ, &in)
        : CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS) st = clprim__scratch(ctx, SLOT_EXACT_RECORD, bytes, &rec);
  if (st == CLPRIM_SUCCESS) st = clprim__reduce_exact(ctx, type, in, n, 0, rec);
  if (st == CLPRIM_SUCCESS) st = clprim__read(ctx, rec, 0, bytes, record);
  return clprim__call_end(ctx, st);
}

/* The bits of the sum that a record (the ranks' words added) holds, rounded
 * once on this rank's device. */
static clprim_status exact_round(clprim_context *ctx, clprim_type type, const int64_t *record,
                                 uint64_t *bits) {
  CLPRIM_CHECK(clprim__call_begin(ctx, "mpi"));
  const size_t bytes = clprim__exact_record_words(type) * 8;
  cl_mem rec;
  clprim_status st = clprim__scratch(ctx, SLOT_EXACT_RECORD, bytes, &rec);
  if (st == CLPRIM_SUCCESS) st = clprim__write(ctx, rec, 0, bytes, record, 1);
  if (st == CLPRIM_SUCCESS) st = clprim__reduce_exact_round(ctx, type, rec);
  if (st == CLPRIM_SUCCESS) st = clprim__read(ctx, rec, 0, 8, bits);
  return clprim__call_end(ctx, st);
}

/* CLPRIM_EXACT: each rank's record, the records' words added and their
 * flags OR-ed over the ranks (digits below 2^32, so sums of 2^31 ranks fit),
 * then one rounding, the same on every rank. */
static clprim_status exact_total(clprim_context *ctx, MPI_Comm comm, clprim_type type,
                                 int64_t *mine, uint64_t *bits) {
  const size_t words = clprim__exact_record_words(type);
  int64_t all[EXACT_RECORD(EXACT_WORDS_DOUBLE)];
  uint64_t flags = (uint64_t)mine[words - 1], any = 0;
  if (MPI_Allreduce(mine, all, (int)(words - 1), MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS ||
      MPI_Allreduce(&flags, &any, 1, MPI_UINT64_T, MPI_BOR, comm) != MPI_SUCCESS)
    return CLPRIM_MPI_ERROR_MPI;
  all[words - 1] = (int64_t)any;
  return exact_round(ctx, type, all, bits);
}

clprim_status clprim_mpi_reduce_sum(clprim_context *ctx, MPI_Comm comm, size_t n_local,
                                    clprim_type type, clprim_buffer in, unsigned flags,
                                    clprim_value *sum) {
  clprim_value s;
  memset(&s, 0, sizeof s);
  int64_t record[EXACT_RECORD(EXACT_WORDS_DOUBLE)];
  const int exact = (flags & CLPRIM_EXACT) != 0;
  clprim_status st =
      sum ? CLPRIM_SUCCESS : clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, "sum is NULL");
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_type(ctx, "type", type);
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_flags(ctx, flags, CLPRIM_EXACT);
  if (st == CLPRIM_SUCCESS && exact && type != CLPRIM_FLOAT && type != CLPRIM_DOUBLE)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
                          "CLPRIM_EXACT is for float and double sums (type is %s)",
                          clprim_type_name(type));
  if (st == CLPRIM_SUCCESS && exact)
    st = exact_part(ctx, type, in, n_local, record);
  else if (st == CLPRIM_SUCCESS && n_local > 0)
    st = clprim_reduce_sum(ctx, n_local, type, in, 0, &s, clprim_buf(NULL));
  uint64_t hash = CLPRIM__MPI_HASH_START;
  clprim__mpi_hash_add(&hash, &type, sizeof type);
  clprim__mpi_hash_add(&hash, &flags, sizeof flags);
  if (exact) {
    struct clprim_mpi_part check;
    CLPRIM_CHECK(clprim__mpi_part_check(ctx, comm, st, hash, n_local, 0, &check));
    clprim__mpi_part_free(&check);
    uint64_t bits = 0;
    CLPRIM_CHECK(exact_total(ctx, comm, type, record, &bits));
    *sum = value_of_bits(type, bits);
    return CLPRIM_SUCCESS;
  }
  /* The part's sum rides in the check's extra word. */
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_part_check(ctx, comm, st, hash, n_local, bits_of(type, s), &p));
  uint64_t total = bits_of(type, value_of_bits(type, 0));
  int first = 1;
  for (int r = 0; r < p.size; ++r) {
    if (p.n_of[r] == 0) continue;
    total = first ? p.extra_of[r] : add_bits(type, total, p.extra_of[r]);
    first = 0;
  }
  clprim__mpi_part_free(&p);
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
  clprim_status st = clprim__mpi_check_type(ctx, "type", type);
  if (st == CLPRIM_SUCCESS)
    st = clprim__mpi_check_flags(ctx, flags, CLPRIM_REDUCE_ABS | CLPRIM_REDUCE_NAN_LARGEST);
  if (st == CLPRIM_SUCCESS && n_local > 0)
    st = (is_max ? clprim_argmax : clprim_argmin)(ctx, n_local, type, in, flags, &v, &i,
                                                  clprim_buf(NULL));
  uint64_t hash = CLPRIM__MPI_HASH_START;
  clprim__mpi_hash_add(&hash, &type, sizeof type);
  clprim__mpi_hash_add(&hash, &flags, sizeof flags);
  clprim__mpi_hash_add(&hash, &is_max, sizeof is_max);
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_part_check(ctx, comm, st, hash, n_local, bits_of(type, v), &p));
  /* The indices: a second word per rank. */
  uint64_t *idx = p.work;
  st = MPI_Allgather(&i, 1, MPI_UINT64_T, idx, 1, MPI_UINT64_T, comm) == MPI_SUCCESS
           ? CLPRIM_SUCCESS
           : CLPRIM_MPI_ERROR_MPI;
  if (st == CLPRIM_SUCCESS && p.total == 0)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, "no rank holds an element (n 0)");
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
  clprim__mpi_part_free(&p);
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
  clprim_status st = clprim__mpi_check_type(ctx, "type", type);
  if (st == CLPRIM_SUCCESS && (bins == 0 || bins > ((size_t)1 << 31)))
    st = clprim__mpi_fail(ctx, bins ? CLPRIM_ERROR_SIZE_TOO_LARGE : CLPRIM_ERROR_INVALID_ARGUMENT,
                          "bins (%zu) is not 1 to 2^31", bins);
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_range(ctx, "counts", counts, 4, bins);
  if (st == CLPRIM_SUCCESS && !counts.mem)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, "counts is required");
  uint64_t hash = CLPRIM__MPI_HASH_START;
  const size_t es = clprim_type_size(type);
  clprim__mpi_hash_add(&hash, &type, sizeof type);
  if (es) clprim__mpi_hash_add(&hash, lo.bytes, es), clprim__mpi_hash_add(&hash, hi.bytes, es);
  clprim__mpi_hash_add(&hash, &bins, sizeof bins);
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_part_check(ctx, comm, st, hash, n_local, 0, &p));
  const uint64_t total = p.total;
  clprim__mpi_part_free(&p);
  if (total >= ((uint64_t)1 << 32))
    return clprim__mpi_fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE,
                            "the ranks hold %llu elements, 2^32 or more (32-bit counts)",
                            (unsigned long long)total);
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
  st = clprim__mpi_agree(ctx, comm, st);
  if (st == CLPRIM_SUCCESS && bins + 3 > (size_t)INT32_MAX)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_SIZE_TOO_LARGE,
                          "bins (%zu): more than one MPI_Allreduce takes", bins);
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

void clprim__mpi_options(clprim_type type, char *options, size_t size) {
  snprintf(options, size,
           "-DT=%s -DT_FLOAT=%d -DT_SIGNED=%d -DKEY_BITS=%u",
           clprim__cl_type(type), type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE,
           type == CLPRIM_INT32 || type == CLPRIM_INT64, 8 * (unsigned)clprim_type_size(type));
}

/* x[0, n) += add (bits of type) in the caller's range, by cl/mpi.cl. */
clprim_status clprim__mpi_add_constant(clprim_context *ctx, clprim_type type, clprim_buffer range,
                                  size_t n, uint64_t add) {
  if (n == 0) return CLPRIM_SUCCESS;
  CLPRIM_CHECK(clprim__call_begin(ctx, "mpi"));
  cl_mem mem;
  cl_kernel k;
  char options[160];
  clprim__mpi_options(type, options, sizeof options);
  clprim_status st = clprim__range(ctx, "out", range, clprim_type_size(type), n,
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
  clprim_status st = clprim__mpi_check_type(ctx, "type", type);
  const size_t es = clprim_type_size(type);
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_range(ctx, "in", in, es, n_local);
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_range(ctx, "out", out, es, n_local);
  uint64_t hash = CLPRIM__MPI_HASH_START;
  clprim__mpi_hash_add(&hash, &type, sizeof type);
  clprim__mpi_hash_add(&hash, &inclusive, sizeof inclusive);
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_part_check(ctx, comm, st, hash, n_local, 0, &p));
  /* The part's total: its inclusive scan's last element (plus the last
   * input, read first: the scan may be in place, for an exclusive one). */
  clprim_value last_in, last_out;
  memset(&last_in, 0, sizeof last_in);
  memset(&last_out, 0, sizeof last_out);
  if (n_local > 0) {
    if (!inclusive) st = read_range(ctx, in, es, n_local - 1, 1, last_in.bytes);
    if (st == CLPRIM_SUCCESS)
      st = (inclusive ? clprim_scan_inclusive : clprim_scan_exclusive)(ctx, n_local, type, in, 0,
                                                                       out);
    if (st == CLPRIM_SUCCESS) st = read_range(ctx, out, es, n_local - 1, 1, last_out.bytes);
  }
  const uint64_t total = inclusive
                             ? bits_of(type, last_out)
                             : add_bits(type, bits_of(type, last_out), bits_of(type, last_in));
  /* Each rank's total (one gather with the statuses), the offset added in
   * rank order over the ranks before that hold elements. */
  uint64_t record[2];
  st = clprim__mpi_gather_status(ctx, comm, p.size, st, &total, 1, p.work, record);
  uint64_t offset = 0;
  int has_before = 0;
  for (int r = 0; st == CLPRIM_SUCCESS && r < p.rank; ++r) {
    if (p.n_of[r] == 0) continue;
    offset = has_before ? add_bits(type, offset, p.work[2 * r + 1]) : p.work[2 * r + 1];
    has_before = 1;
  }
  if (st == CLPRIM_SUCCESS && has_before)
    st = clprim__mpi_add_constant(ctx, type, out, n_local, offset);
  clprim__mpi_part_free(&p);
  return clprim__mpi_agree(ctx, comm, st);
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
  clprim_status st = clprim__mpi_check_type(ctx, "type", type);
  if (st == CLPRIM_SUCCESS && !pred)
    st = clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT, "pred is NULL");
  if (st == CLPRIM_SUCCESS) st = clprim__mpi_check_flags(ctx, flags, CLPRIM_INDICES_64);
  const size_t es = clprim_type_size(type);
  uint64_t hash = CLPRIM__MPI_HASH_START;
  clprim__mpi_hash_add(&hash, &type, sizeof type);
  clprim__mpi_hash_add(&hash, &flags, sizeof flags);
  if (pred) {
    clprim__mpi_hash_add(&hash, &pred->op, sizeof pred->op);
    clprim__mpi_hash_add(&hash, pred->a.bytes, 8);
    clprim__mpi_hash_add(&hash, pred->b.bytes, 8);
  }
  const int outputs = (values.mem != NULL) | (indices.mem != NULL) << 1;
  clprim__mpi_hash_add(&hash, &outputs, sizeof outputs);
  struct clprim_mpi_part p;
  CLPRIM_CHECK(clprim__mpi_part_check(ctx, comm, st, hash, n_local, 0, &p));
  const int index64 = (flags & CLPRIM_INDICES_64) != 0;
  if (indices.mem && !index64 && p.total > UINT32_MAX) {
    clprim__mpi_part_free(&p);
    /* every rank: the global count is known to all */
    return clprim__mpi_fail(ctx, CLPRIM_ERROR_INVALID_ARGUMENT,
                            "the ranks hold %llu elements: 32-bit indices need "
                            "CLPRIM_INDICES_64",
                            (unsigned long long)p.total);
  }
  uint64_t count = 0;
  if (n_local > 0)
    st = clprim_select(ctx, n_local, type, in, pred, flags, values, indices, &count,
                       clprim_buf(NULL));
  (void)es;
  uint64_t record[2];
  st = clprim__mpi_gather_status(ctx, comm, p.size, st, &count, 1, p.work, record);
  uint64_t before = 0, all = 0;
  for (int r = 0; st == CLPRIM_SUCCESS && r < p.size; ++r) {
    if (r < p.rank) before += p.work[2 * r + 1];
    all += p.work[2 * r + 1];
  }
  /* Local indices to global ones. */
  if (st == CLPRIM_SUCCESS && indices.mem && p.offset > 0)
    st = clprim__mpi_add_constant(ctx, index64 ? CLPRIM_UINT64 : CLPRIM_UINT32, indices, count,
                                  p.offset);
  clprim__mpi_part_free(&p);
  st = clprim__mpi_agree(ctx, comm, st);
  if (st == CLPRIM_SUCCESS) {
    if (local_count) *local_count = count;
    if (global_offset) *global_offset = before;
    if (global_count) *global_count = all;
  }
  return st;
}
