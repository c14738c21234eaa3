/* test_mpi: clprim_mpi's collectives under mpirun (-np 1 to 4 in ctest):
 * every rank builds the same global array from one seed (rank 0's, printed
 * and broadcast), holds its part on its device, and checks its share of the
 * result against a CPU reference on the whole array (or, for histograms,
 * the one-device call on the whole array). Parts: uneven, with an empty
 * rank, all on one rank. Checks never jump out between collectives: a rank
 * notes a failure, and each test ends with an all-reduce of the notes.
 *
 *   test_mpi [--types=LIST]   LIST: type names (int32,float,...), default all */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "common.h"
#include "clprim/clprim_mpi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static MPI_Comm comm;
static int rank_, size_;
static clprim_context *ctx;
static int failures;
static unsigned type_mask = 0x3F;

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      if (failures++ < 8) {                                                                        \
        printf("rank %d, %s:%d: ", rank_, __FILE__, __LINE__);                                     \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
      }                                                                                            \
    }                                                                                              \
  } while (0)
#define EXPECT_STATUS(expected, expr)                                                              \
  do {                                                                                             \
    const int got_ = (int)(expr);                                                                  \
    EXPECT(got_ == (int)(expected), "%s returned %s, expected %s", #expr,                          \
           clprim_mpi_status_name(got_), clprim_mpi_status_name((int)(expected)));                 \
  } while (0)

/* ---------------------------------------------------- injected MPI errors */

/* The collectives that clprim_mpi calls pass through these (MPI's
 * profiling interface: the library's calls bind to the test's MPI_*). While
 * fail_in >= 0, the fail_in-th collective from then on returns
 * MPI_ERR_OTHER without communicating; every rank arms the same number, and
 * the ranks make the same collectives in the same order, so the failure
 * hits the same call everywhere, as a failed collective does. */
static long fail_in = -1;
static unsigned long collectives;
static int injected(void) {
  ++collectives;
  return fail_in >= 0 && fail_in-- == 0;
}
int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return injected() ? MPI_ERR_OTHER : PMPI_Allreduce(s, r, count, t, op, c);
}
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                  MPI_Comm c) {
  return injected() ? MPI_ERR_OTHER : PMPI_Allgather(s, sc, st, r, rc, rt, c);
}
int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int *rc,
                   const int *displs, MPI_Datatype rt, MPI_Comm c) {
  return injected() ? MPI_ERR_OTHER : PMPI_Allgatherv(s, sc, st, r, rc, displs, rt, c);
}
int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
               MPI_Comm c) {
  return injected() ? MPI_ERR_OTHER : PMPI_Gather(s, sc, st, r, rc, rt, root, c);
}
int MPI_Bcast(void *b, int count, MPI_Datatype t, int root, MPI_Comm c) {
  return injected() ? MPI_ERR_OTHER : PMPI_Bcast(b, count, t, root, c);
}
int MPI_Alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r,
                  const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c) {
  return injected() ? MPI_ERR_OTHER : PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c);
}
int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return injected() ? MPI_ERR_OTHER : PMPI_Exscan(s, r, count, t, op, c);
}
int MPI_Comm_split_type(MPI_Comm c, int split, int key, MPI_Info info, MPI_Comm *out) {
  return injected() ? MPI_ERR_OTHER : PMPI_Comm_split_type(c, split, key, info, out);
}

/* Every rank learns whether any rank failed; then cmocka hears of it. */
static void end_test(void) {
  int any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_MAX, comm);
  failures = 0;
  if (any) fail_msg("a rank failed (see above)");
}

/* ------------------------------------------------------------ the data */

/* Part sizes of the layouts: 0 uneven random cuts, 1 the same with rank 0
 * empty, 2 everything on the last rank. Same on every rank (same draws). */
static void layout(int kind, uint64_t n, uint64_t *n_of) {
  uint64_t cut[17];
  for (int r = 0; r <= size_; ++r)
    cut[r] = r == 0 ? 0 : r == size_ ? n : test_rand() % (n + 1);
  for (int r = 1; r < size_; ++r) /* sort the inner cuts */
    for (int q = r + 1; q < size_; ++q)
      if (cut[q] < cut[r]) {
        const uint64_t t = cut[q];
        cut[q] = cut[r], cut[r] = t;
      }
  for (int r = 0; r < size_; ++r)
    n_of[r] = cut[r + 1] - cut[r];
  if (kind == 1 && size_ > 1) n_of[1] += n_of[0], n_of[0] = 0;
  if (kind == 2)
    for (int r = 0; r < size_; ++r)
      n_of[r] = r == size_ - 1 ? n : 0;
}

struct global {
  clprim_type type;
  size_t es, n;
  unsigned char *data;
  uint64_t n_of[16], offset, n_local;
  cl_mem part; /* this rank's part (at least one element) */
};

/* dist: 0 random (wide integers, floats in [-1, 1)), 1 few distinct values
 * (90% one of them: skew), 2 random small. */
static void make(struct global *g, clprim_type type, size_t n, int kind, int dist) {
  memset(g, 0, sizeof *g);
  g->type = type, g->es = clprim_type_size(type), g->n = n;
  g->data = malloc(n * g->es + 8);
  test_random(type, g->data, n, dist == 0);
  if (dist == 1) {
    unsigned char few[5 * 8];
    test_random(type, few, 5, 1);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t r = test_rand() % 100;
      memcpy(g->data + i * g->es, few + (r < 90 ? 0 : r % 5) * g->es, g->es);
    }
  }
  layout(kind, n, g->n_of);
  for (int r = 0; r < rank_; ++r)
    g->offset += g->n_of[r];
  g->n_local = g->n_of[rank_];
  g->part = test_buffer(ctx, (g->n_local ? g->n_local : 1) * g->es, g->data + g->offset * g->es);
}

static void drop(struct global *g) {
  clReleaseMemObject(g->part);
  free(g->data);
}

static uint64_t bits_at(const struct global *g, size_t i) {
  uint64_t b = 0;
  memcpy(&b, g->data + i * g->es, g->es);
  return b;
}
static uint64_t key_at(const struct global *g, size_t i) { return test_order_key(g->type, g->data, i); }

static int wanted(clprim_type t) { return (type_mask >> t) & 1u; }

/* ---------------------------------------------------------- reductions */

static void check_reductions(clprim_type type) {
  for (int kind = 0; kind < 3; ++kind) {
    struct global g;
    make(&g, type, 1000 + test_rand() % 3000, kind, 2);
    const int is_f = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
    /* sum */
    clprim_value s;
    EXPECT_STATUS(CLPRIM_SUCCESS,
                  clprim_mpi_reduce_sum(ctx, comm, g.n_local, type, clprim_buf(g.part), 0, &s));
    if (is_f) {
      double ref = 0, mag = 0;
      for (size_t i = 0; i < g.n; ++i)
        ref += test_value_f(type, g.data, i), mag += fabs(test_value_f(type, g.data, i));
      const double got = type == CLPRIM_FLOAT ? s.f32 : s.f64;
      EXPECT(fabs(got - ref) <= mag * (type == CLPRIM_FLOAT ? 1e-5 : 1e-12) + 1e-30,
             "%s sum %g, expected %g", clprim_type_name(type), got, ref);
      /* CLPRIM_EXACT: the bits of the exact sum on one device (test_reduce
       * checks those against a host reference), whatever the split. */
      clprim_value e, one;
      memset(&e, 0, sizeof e);
      memset(&one, 0, sizeof one);
      EXPECT_STATUS(CLPRIM_SUCCESS, clprim_mpi_reduce_sum(ctx, comm, g.n_local, type,
                                                          clprim_buf(g.part), CLPRIM_EXACT, &e));
      cl_mem whole = test_buffer(ctx, g.n * g.es, g.data);
      EXPECT_STATUS(CLPRIM_SUCCESS, clprim_reduce_sum(ctx, g.n, type, clprim_buf(whole),
                                                      CLPRIM_EXACT, &one, clprim_buf(NULL)));
      clReleaseMemObject(whole);
      EXPECT(memcmp(&e, &one, sizeof e) == 0, "%s exact sum %a over %d ranks, %a on one device",
             clprim_type_name(type), type == CLPRIM_FLOAT ? e.f32 : e.f64, size_,
             type == CLPRIM_FLOAT ? one.f32 : one.f64);
    } else {
      uint64_t ref = 0;
      for (size_t i = 0; i < g.n; ++i)
        ref += test_value_u(type, g.data, i);
      if (g.es == 4) ref = (uint32_t)ref;
      const uint64_t got = g.es == 4 ? s.u32 : s.u64;
      EXPECT(got == ref, "%s sum %llu, expected %llu", clprim_type_name(type),
             (unsigned long long)got, (unsigned long long)ref);
    }
    /* argmax / argmin (first occurrence), plain and by |x| */
    for (unsigned flags = 0; flags <= CLPRIM_REDUCE_ABS; flags += CLPRIM_REDUCE_ABS) {
      for (int is_max = 0; is_max < 2; ++is_max) {
        size_t best = 0;
        for (size_t i = 1; i < g.n; ++i) {
          double a, b;
          if (is_f) {
            a = test_value_f(type, g.data, i), b = test_value_f(type, g.data, best);
            if (flags) a = fabs(a), b = fabs(b);
          } else if (type == CLPRIM_INT32 || type == CLPRIM_INT64) {
            a = (double)(int64_t)test_value_u(type, g.data, i),
            b = (double)(int64_t)test_value_u(type, g.data, best);
            if (flags) a = fabs(a), b = fabs(b);
          } else {
            a = (double)test_value_u(type, g.data, i), b = (double)test_value_u(type, g.data, best);
          }
          if (is_max ? a > b : a < b) best = i;
        }
        clprim_value v;
        uint64_t index = UINT64_MAX;
        EXPECT_STATUS(CLPRIM_SUCCESS,
                      (is_max ? clprim_mpi_argmax : clprim_mpi_argmin)(
                          ctx, comm, g.n_local, type, clprim_buf(g.part), flags, &v, &index));
        EXPECT(index == best, "%s arg%s (flags %u, layout %d): index %llu, expected %zu",
               clprim_type_name(type), is_max ? "max" : "min", flags, kind,
               (unsigned long long)index, best);
        uint64_t vb = 0;
        memcpy(&vb, v.bytes, g.es);
        EXPECT(vb == bits_at(&g, best), "%s arg%s value", clprim_type_name(type),
               is_max ? "max" : "min");
        clprim_value m;
        EXPECT_STATUS(CLPRIM_SUCCESS,
                      (is_max ? clprim_mpi_reduce_max : clprim_mpi_reduce_min)(
                          ctx, comm, g.n_local, type, clprim_buf(g.part), flags, &m));
        EXPECT(memcmp(m.bytes, v.bytes, g.es) == 0, "%s reduce_%s", clprim_type_name(type),
               is_max ? "max" : "min");
      }
    }
    /* histogram: the one-device call on the whole array */
    {
      const size_t bins = 37;
      clprim_value lo, hi;
      memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
      switch (type) {
      case CLPRIM_INT32: lo.i32 = -50, hi.i32 = 60; break;
      case CLPRIM_UINT32: lo.u32 = 3, hi.u32 = 90; break;
      case CLPRIM_INT64: lo.i64 = -50, hi.i64 = 60; break;
      case CLPRIM_UINT64: lo.u64 = 3, hi.u64 = 90; break;
      case CLPRIM_FLOAT: lo.f32 = -0.75f, hi.f32 = 0.5f; break;
      case CLPRIM_DOUBLE: lo.f64 = -0.75, hi.f64 = 0.5; break;
      }
      cl_mem counts = test_buffer(ctx, bins * 4, NULL), all = test_buffer(ctx, g.n * g.es, g.data),
             ref_counts = test_buffer(ctx, bins * 4, NULL);
      uint64_t outside[3], ref_outside[3];
      EXPECT_STATUS(CLPRIM_SUCCESS,
                    clprim_mpi_histogram_even(ctx, comm, g.n_local, type, clprim_buf(g.part), lo,
                                              hi, bins, clprim_buf(counts), outside));
      EXPECT_STATUS(CLPRIM_SUCCESS,
                    clprim_histogram_even(ctx, g.n, type, clprim_buf(all), lo, hi, bins,
                                          clprim_buf(ref_counts), ref_outside, clprim_buf(NULL)));
      uint32_t got[37], ref[37];
      test_read(ctx, counts, sizeof got, got);
      test_read(ctx, ref_counts, sizeof ref, ref);
      EXPECT(memcmp(got, ref, sizeof got) == 0, "%s histogram (layout %d)", clprim_type_name(type),
             kind);
      EXPECT(memcmp(outside, ref_outside, sizeof outside) == 0, "%s histogram outside",
             clprim_type_name(type));
      clReleaseMemObject(counts), clReleaseMemObject(all), clReleaseMemObject(ref_counts);
    }
    drop(&g);
  }
}

/* ------------------------------------------------- scan and compaction */

static void check_scan_select(clprim_type type) {
  for (int kind = 0; kind < 3; ++kind) {
    struct global g;
    make(&g, type, 500 + test_rand() % 5000, kind, 2);
    const int is_f = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
    const size_t nl = g.n_local ? g.n_local : 1;
    for (int inclusive = 0; inclusive < 2; ++inclusive) {
      const int in_place = kind == 1;
      cl_mem out = in_place ? test_buffer(ctx, nl * g.es, g.data + g.offset * g.es)
                            : test_buffer(ctx, nl * g.es, NULL);
      cl_mem in = in_place ? out : g.part;
      EXPECT_STATUS(CLPRIM_SUCCESS,
                    (inclusive ? clprim_mpi_scan_inclusive : clprim_mpi_scan_exclusive)(
                        ctx, comm, g.n_local, type, clprim_buf(in), clprim_buf(out)));
      unsigned char *got = malloc(nl * g.es);
      test_read(ctx, out, nl * g.es, got);
      uint64_t run_u = 0;
      double run_f = 0, mag = 0;
      int bad = 0;
      for (size_t i = 0; i < g.offset + g.n_local && !bad; ++i) {
        if (inclusive) {
          if (is_f)
            run_f += test_value_f(type, g.data, i), mag += fabs(test_value_f(type, g.data, i));
          else
            run_u += test_value_u(type, g.data, i);
        }
        if (i >= g.offset) {
          const size_t j = i - g.offset;
          if (is_f) {
            const double v = type == CLPRIM_FLOAT ? (double)((float *)got)[j] : ((double *)got)[j];
            bad = fabs(v - run_f) > mag * (type == CLPRIM_FLOAT ? 1e-5 : 1e-12) + 1e-30;
          } else {
            uint64_t v = 0;
            memcpy(&v, got + j * g.es, g.es);
            bad = v != (g.es == 4 ? (uint32_t)run_u : run_u);
          }
          EXPECT(!bad, "%s %s scan (layout %d) wrong at global %zu", clprim_type_name(type),
                 inclusive ? "inclusive" : "exclusive", kind, i);
        }
        if (!inclusive) {
          if (is_f)
            run_f += test_value_f(type, g.data, i), mag += fabs(test_value_f(type, g.data, i));
          else
            run_u += test_value_u(type, g.data, i);
        }
      }
      free(got);
      clReleaseMemObject(out);
    }
    /* select x > a: values and global indices */
    clprim_predicate pred;
    memset(&pred, 0, sizeof pred);
    pred.op = CLPRIM_PRED_GT;
    if (type == CLPRIM_UINT32) pred.a.u32 = 40;
    if (type == CLPRIM_UINT64) pred.a.u64 = 40;
    for (unsigned flags = 0; flags <= CLPRIM_INDICES_64; flags += CLPRIM_INDICES_64) {
      const size_t is = flags ? 8 : 4;
      cl_mem values = test_buffer(ctx, nl * g.es, NULL), indices = test_buffer(ctx, nl * is, NULL);
      uint64_t count = 0, at = 0, total = 0;
      EXPECT_STATUS(CLPRIM_SUCCESS,
                    clprim_mpi_select(ctx, comm, g.n_local, type, clprim_buf(g.part), &pred, flags,
                                      clprim_buf(values), clprim_buf(indices), &count, &at,
                                      &total));
      /* The reference: positions of x > a in the whole array. */
      uint64_t ref_total = 0, ref_at = 0;
      uint64_t *pos = malloc(g.n * 8);
      for (size_t i = 0; i < g.n; ++i) {
        const int pass = is_f ? test_value_f(type, g.data, i) > 0
                         : (type == CLPRIM_INT32 || type == CLPRIM_INT64)
                             ? (int64_t)test_value_u(type, g.data, i) > 0
                             : test_value_u(type, g.data, i) > 40;
        if (pass) {
          if (i < g.offset) ++ref_at;
          pos[ref_total++] = i;
        }
      }
      EXPECT(total == ref_total && at == ref_at, "%s select: total %llu at %llu, expected %llu %llu",
             clprim_type_name(type), (unsigned long long)total, (unsigned long long)at,
             (unsigned long long)ref_total, (unsigned long long)ref_at);
      unsigned char *v = malloc(nl * g.es), *x = malloc(nl * is);
      test_read(ctx, values, nl * g.es, v);
      test_read(ctx, indices, nl * is, x);
      for (uint64_t j = 0; j < count && at + j < ref_total; ++j) {
        uint64_t idx = 0, vb = 0;
        memcpy(&idx, x + j * is, is);
        memcpy(&vb, v + j * g.es, g.es);
        if (idx != pos[at + j] || vb != bits_at(&g, pos[at + j])) {
          EXPECT(0, "%s select: output %llu has index %llu, expected %llu", clprim_type_name(type),
                 (unsigned long long)(at + j), (unsigned long long)idx,
                 (unsigned long long)pos[at + j]);
          break;
        }
      }
      free(pos), free(v), free(x);
      clReleaseMemObject(values), clReleaseMemObject(indices);
    }
    drop(&g);
  }
}

/* ----------------------------------------------- selection and top-k */

struct keyed {
  uint64_t key, index;
};
static int cmp_keyed(const void *a, const void *b) {
  const struct keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}
/* The array's (key, index) pairs sorted ascending, stable. */
static struct keyed *sorted_keys(const struct global *g) {
  struct keyed *s = malloc(sizeof *s * (g->n + 1));
  for (size_t i = 0; i < g->n; ++i)
    s[i].key = key_at(g, i), s[i].index = i;
  qsort(s, g->n, sizeof *s, cmp_keyed);
  return s;
}
static uint64_t key_of_value(clprim_type type, clprim_value v) {
  return test_order_key(type, v.bytes, 0);
}

static void check_selection(clprim_type type) {
  /* Small arrays (the gather alone) and larger ones (levels), skewed too;
   * case 1 gathers at 64 candidates (the CLPRIM_MPI_GATHER_MAX knob), so
   * that it runs several levels and the later levels' counting passes. */
  static const size_t sizes[3] = {3000, 40000, 25000};
  for (int c = 0; c < 3; ++c) {
    TEST_OK(clprim__tune(ctx, c == 1 ? "mpi.gather_max=64" : "mpi.gather_max=-1"));
    struct global g;
    make(&g, type, sizes[c] + test_rand() % 1000, c, c == 2 ? 1 : 0);
    struct keyed *s = sorted_keys(&g);
    uint64_t ranks[5] = {0, g.n - 1, (g.n - 1) / 2, test_rand() % g.n, test_rand() % g.n};
    for (int j = 0; j < 3; ++j) {
      clprim_value v;
      EXPECT_STATUS(CLPRIM_SUCCESS, clprim_mpi_nth_element(ctx, comm, g.n_local, type,
                                                           clprim_buf(g.part), ranks[j], 0, &v));
      EXPECT(key_of_value(type, v) == s[ranks[j]].key, "%s nth_element(%llu) of %zu (case %d)",
             clprim_type_name(type), (unsigned long long)ranks[j], g.n, c);
    }
    clprim_value q[5];
    EXPECT_STATUS(CLPRIM_SUCCESS, clprim_mpi_quantiles(ctx, comm, g.n_local, type,
                                                       clprim_buf(g.part), ranks, 5, 0, q));
    for (int j = 0; j < 5; ++j)
      EXPECT(key_of_value(type, q[j]) == s[ranks[j]].key, "%s quantiles[%d]", clprim_type_name(type),
             j);
    /* approximate: the rank error must be the true distance */
    {
      clprim_value v;
      uint64_t err = UINT64_MAX;
      EXPECT_STATUS(CLPRIM_SUCCESS,
                    clprim_mpi_nth_element_approx(ctx, comm, g.n_local, type, clprim_buf(g.part),
                                                  ranks[3], 0, &v, &err));
      const uint64_t key = key_of_value(type, v);
      size_t first = 0, last = 0;
      int found = 0;
      for (size_t i = 0; i < g.n; ++i)
        if (s[i].key == key) {
          if (!found) first = i;
          last = i, found = 1;
        }
      const uint64_t k = ranks[3];
      const uint64_t dist = !found ? UINT64_MAX : k < first ? first - k : k > last ? k - last : 0;
      EXPECT(found && dist == err, "%s approx(%llu): error %llu, true distance %llu",
             clprim_type_name(type), (unsigned long long)k, (unsigned long long)err,
             (unsigned long long)dist);
      EXPECT(dist <= g.n / 32, "%s approx: error %llu of %zu", clprim_type_name(type),
             (unsigned long long)dist, g.n);
    }
    /* top-k, largest and smallest; ties to the lowest global index */
    const uint64_t ks[2] = {1 + test_rand() % 100, g.n / 3};
    for (int j = 0; j < 2; ++j)
      for (unsigned flags = 0; flags <= CLPRIM_TOPK_SMALLEST; flags += CLPRIM_TOPK_SMALLEST) {
        const uint64_t k = ks[j];
        const int idx64 = j == 1 || flags != 0; /* 64-bit indices: both top-k paths */
        const size_t is = idx64 ? 8 : 4;
        cl_mem values = test_buffer(ctx, k * g.es, NULL), indices = test_buffer(ctx, k * is, NULL);
        uint64_t count = UINT64_MAX, at = UINT64_MAX;
        EXPECT_STATUS(CLPRIM_SUCCESS,
                      clprim_mpi_topk(ctx, comm, g.n_local, type, clprim_buf(g.part), k,
                                      flags | (idx64 ? CLPRIM_INDICES_64 : 0), clprim_buf(values),
                                      clprim_buf(indices), &count, &at));
        /* reference: the best k by (key, index), then in index order */
        uint64_t *best = malloc(k * 8 + 8);
        for (uint64_t i = 0; i < k; ++i)
          best[i] = 0;
        if (flags) {
          for (uint64_t i = 0; i < k; ++i)
            best[i] = s[i].index;
        } else { /* largest: from the top, equal keys by lowest index */
          uint64_t taken = 0;
          size_t hi = g.n;
          while (taken < k) {
            size_t lo = hi - 1;
            while (lo > 0 && s[lo - 1].key == s[hi - 1].key)
              --lo;
            for (size_t i = lo; i < hi && taken < k; ++i)
              best[taken++] = s[i].index;
            hi = lo;
          }
        }
        /* in index order */
        for (uint64_t a = 1; a < k; ++a) {
          uint64_t t = best[a], b = a;
          while (b > 0 && best[b - 1] > t)
            best[b] = best[b - 1], --b;
          best[b] = t;
        }
        uint64_t sum = 0, mine = count == UINT64_MAX ? 0 : count;
        MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, comm);
        EXPECT(sum == k, "%s topk(%llu) shares add to %llu", clprim_type_name(type),
               (unsigned long long)k, (unsigned long long)sum);
        unsigned char *v = malloc(k * g.es), *x = malloc(k * is);
        test_read(ctx, values, k * g.es, v);
        test_read(ctx, indices, k * is, x);
        for (uint64_t i = 0; i < mine && at + i < k; ++i) {
          uint64_t idx = 0, vb = 0;
          memcpy(&idx, x + i * is, is);
          memcpy(&vb, v + i * g.es, g.es);
          if (idx != best[at + i] || vb != bits_at(&g, best[at + i])) {
            EXPECT(0, "%s topk(%llu, flags %u, case %d): output %llu index %llu, expected %llu",
                   clprim_type_name(type), (unsigned long long)k, flags, c,
                   (unsigned long long)(at + i), (unsigned long long)idx,
                   (unsigned long long)best[at + i]);
            break;
          }
        }
        free(best), free(v), free(x);
        clReleaseMemObject(values), clReleaseMemObject(indices);
      }
    free(s);
    drop(&g);
  }
  TEST_OK(clprim__tune(ctx, "mpi.gather_max=-1"));
}

/* ------------------------------------------------------------------ sort */

static void check_sort(clprim_type type) {
  for (int c = 0; c < 3; ++c) {
    TEST_OK(clprim__tune(ctx, c == 0 ? "mpi.gather_max=64" : "mpi.gather_max=-1")); /* several levels */
    struct global g;
    make(&g, type, 2000 + test_rand() % 20000, c, c == 1 ? 1 : c == 2 ? 2 : 0);
    struct keyed *s = sorted_keys(&g);
    const uint64_t share = clprim_mpi_sort_share(g.n, rank_, size_);
    cl_mem out = test_buffer(ctx, (share + 1) * g.es, NULL);
    uint64_t count = UINT64_MAX;
    EXPECT_STATUS(CLPRIM_SUCCESS, clprim_mpi_sort_keys(ctx, comm, g.n_local, type,
                                                       clprim_buf(g.part), clprim_buf(out),
                                                       share + 1, &count));
    EXPECT(count == share, "%s sort: count %llu, share %llu", clprim_type_name(type),
           (unsigned long long)count, (unsigned long long)share);
    unsigned char *got = malloc((share + 1) * g.es);
    test_read(ctx, out, (share + 1) * g.es, got);
    uint64_t start = 0;
    for (int r = 0; r < rank_; ++r)
      start += clprim_mpi_sort_share(g.n, r, size_);
    for (uint64_t i = 0; i < share && i < count; ++i) {
      uint64_t vb = 0;
      memcpy(&vb, got + i * g.es, g.es);
      if (vb != bits_at(&g, s[start + i].index)) {
        EXPECT(0, "%s sort (case %d, n %zu): position %llu holds %llx, expected %llx",
               clprim_type_name(type), c, g.n, (unsigned long long)(start + i),
               (unsigned long long)vb, (unsigned long long)bits_at(&g, s[start + i].index));
        break;
      }
    }
    free(got), free(s);
    clReleaseMemObject(out);
    drop(&g);
  }
  TEST_OK(clprim__tune(ctx, "mpi.gather_max=-1"));
}

/* --------------------------------------------------------------- errors */

static void expect_text(const char *text, const char *part) {
  EXPECT(strstr(text, part) != NULL, "the text \"%s\" does not hold \"%s\"", text, part);
}

/* After a call that failed on the last rank alone with `status` (every
 * rank calls this): there its own text (not empty); on the others "rank
 * <last> failed with <status> (<name>): <the last rank's text>". */
static void expect_remote_text(const char *text, clprim_status status) {
  char theirs[256];
  snprintf(theirs, sizeof theirs, "%s", text);
  /* PMPI_: not one of the collectives that the tests count and fail */
  PMPI_Bcast(theirs, sizeof theirs, MPI_CHAR, size_ - 1, comm);
  if (rank_ == size_ - 1) {
    EXPECT(*text, "the failed rank has no text (status %d)", (int)status);
    return;
  }
  char want[512];
  snprintf(want, sizeof want, "rank %d failed with %d (%s): %s", size_ - 1, (int)status,
           clprim_mpi_status_name(status), theirs);
  /* Texts are cut at TEXT_MAX bytes (clprim_context_last_error(): a long
   * device list): from "rank" on, text is want, or its start when text is
   * that long. */
  enum { TEXT_MAX = 255 };
  char head[32];
  snprintf(head, sizeof head, "rank %d failed", size_ - 1);
  const char *at = strstr(text, head);
  const size_t have = at ? strlen(at) : 0;
  const int whole = have == strlen(want), cut = strlen(text) == TEXT_MAX;
  EXPECT(at && strncmp(at, want, have) == 0 && (whole || cut),
         "the text \"%s\" does not hold \"%s\" (or its start, up to %d bytes)", text, want,
         (int)TEXT_MAX);
}

static void check_errors(void) {
  struct global g;
  make(&g, CLPRIM_FLOAT, 5000, 0, 0);
  clprim_value v;
  /* Mismatched arguments: the type differs on rank 0. */
  if (size_ > 1) {
    const clprim_type t = rank_ == 0 ? CLPRIM_UINT32 : CLPRIM_FLOAT;
    EXPECT_STATUS(CLPRIM_MPI_ERROR_MISMATCH,
                  clprim_mpi_reduce_sum(ctx, comm, g.n_local, t, clprim_buf(g.part), 0, &v));
    expect_text(clprim_context_last_error(ctx),
                "mpi: the arguments that must agree differ between ranks (rank 1's are not "
                "rank 0's");
    EXPECT_STATUS(CLPRIM_MPI_ERROR_MISMATCH,
                  clprim_mpi_nth_element(ctx, comm, g.n_local, CLPRIM_FLOAT, clprim_buf(g.part),
                                         rank_ == 0 ? 1 : 2, 0, &v));
  }
  /* A bad argument on the last rank alone: it says so, the others REMOTE. */
  const int last = rank_ == size_ - 1;
  EXPECT_STATUS(last ? CLPRIM_ERROR_INVALID_ARGUMENT : CLPRIM_MPI_ERROR_REMOTE,
                clprim_mpi_nth_element(ctx, comm, g.n_local, CLPRIM_FLOAT, clprim_buf(g.part), 1,
                                       0, last ? NULL : &v));
  EXPECT_STATUS(last ? CLPRIM_ERROR_INVALID_ARGUMENT : CLPRIM_MPI_ERROR_REMOTE,
                clprim_mpi_reduce_sum(ctx, comm, g.n_local, CLPRIM_FLOAT, clprim_buf(g.part), 0,
                                      last ? NULL : &v));
  if (last) expect_text(clprim_context_last_error(ctx), "mpi: sum is NULL");
  expect_remote_text(clprim_context_last_error(ctx), CLPRIM_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_mpi_reduce_sum(ctx, comm, g.n_local, CLPRIM_UINT32, clprim_buf(g.part),
                                      CLPRIM_EXACT, &v));
  EXPECT_STATUS(last ? CLPRIM_ERROR_BUFFER_TOO_SMALL : CLPRIM_MPI_ERROR_REMOTE,
                clprim_mpi_scan_inclusive(ctx, comm, g.n_local + last, CLPRIM_FLOAT,
                                          clprim_buf(g.part), clprim_buf(g.part)));
  expect_remote_text(clprim_context_last_error(ctx), CLPRIM_ERROR_BUFFER_TOO_SMALL);
  /* A context that the last rank cannot create: its reason on every rank. */
  {
    clprim_options o;
    clprim_options_init(&o);
    o.device = last ? "no-such-device-anywhere" : NULL;
    clprim_context *other = NULL;
    EXPECT_STATUS(last ? CLPRIM_ERROR_DEVICE_NOT_FOUND : CLPRIM_MPI_ERROR_REMOTE,
                  clprim_mpi_context_create(&other, comm, &o));
    EXPECT(other == NULL, "a failed clprim_mpi_context_create set *ctx");
    if (last)
      expect_text(clprim_mpi_context_create_error(),
                  "context_create: device \"no-such-device-anywhere\" matches no OpenCL device");
    expect_remote_text(clprim_mpi_context_create_error(), CLPRIM_ERROR_DEVICE_NOT_FOUND);
  }
  /* Sort: rank 0's output too small. */
  {
    const uint64_t share = clprim_mpi_sort_share(g.n, rank_, size_);
    cl_mem out = test_buffer(ctx, (share + 1) * g.es, NULL);
    EXPECT_STATUS(rank_ == 0 ? CLPRIM_ERROR_BUFFER_TOO_SMALL : CLPRIM_MPI_ERROR_REMOTE,
                  clprim_mpi_sort_keys(ctx, comm, g.n_local, CLPRIM_FLOAT, clprim_buf(g.part),
                                       clprim_buf(out), rank_ == 0 ? share - 1 : share, NULL));
    clReleaseMemObject(out);
  }
  /* Global errors: the same status everywhere. */
  EXPECT_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_mpi_nth_element(ctx, comm, g.n_local, CLPRIM_FLOAT, clprim_buf(g.part),
                                       g.n, 0, &v));
  EXPECT_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_mpi_topk(ctx, comm, g.n_local, CLPRIM_FLOAT, clprim_buf(g.part), 3, 0,
                                clprim_buf(NULL), clprim_buf(NULL), NULL, NULL));
  EXPECT_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                clprim_mpi_reduce_sum(ctx, MPI_COMM_NULL, g.n_local, CLPRIM_FLOAT,
                                      clprim_buf(g.part), 0, &v));
  /* A NaN on the last rank with CLPRIM_NTH_REJECT_NAN: every rank refuses
   * (small arrays: the gather; large ones: the counting level). */
  for (int big = 0; big < 2; ++big) {
    struct global h;
    make(&h, CLPRIM_FLOAT, big ? 30000 : 2000, 0, 0);
    if (last && h.n_local > 0) {
      const float nan = NAN;
      test_write(ctx, h.part, 4, &nan);
    }
    uint64_t with_nan = h.n_of[size_ - 1] > 0;
    EXPECT_STATUS(with_nan ? CLPRIM_ERROR_INVALID_ARGUMENT : CLPRIM_SUCCESS,
                  clprim_mpi_nth_element(ctx, comm, h.n_local, CLPRIM_FLOAT, clprim_buf(h.part),
                                         h.n / 2, CLPRIM_NTH_REJECT_NAN, &v));
    /* top-k: from local candidates (small k) and from the whole parts */
    cl_mem top = test_buffer(ctx, h.n * 4, NULL);
    for (unsigned smallest = 0; smallest <= CLPRIM_TOPK_SMALLEST; smallest += CLPRIM_TOPK_SMALLEST)
      EXPECT_STATUS(with_nan ? CLPRIM_ERROR_INVALID_ARGUMENT : CLPRIM_SUCCESS,
                    clprim_mpi_topk(ctx, comm, h.n_local, CLPRIM_FLOAT, clprim_buf(h.part),
                                    big ? 10 : h.n - 5, CLPRIM_NTH_REJECT_NAN | smallest,
                                    clprim_buf(top), clprim_buf(NULL), NULL, NULL));
    clReleaseMemObject(top);
    drop(&h);
  }
  /* MPI errors come back as a status where the handler returns them. */
  {
    MPI_Comm dup;
    MPI_Comm_dup(comm, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm bad = dup;
    MPI_Comm_free(&bad); /* bad is now MPI_COMM_NULL */
    EXPECT_STATUS(CLPRIM_ERROR_INVALID_ARGUMENT,
                  clprim_mpi_reduce_sum(ctx, bad, g.n_local, CLPRIM_FLOAT, clprim_buf(g.part), 0, &v));
  }
  drop(&g);
}

/* ------------------------------------------------ every collective, each way */

/* Each collective of clprim_mpi.h, called on float data (n_local elements
 * in g->part) in one of these ways: as every rank should (GOOD); rank 0
 * alone with another type (MISMATCH_TYPE) or another value of an argument
 * that must agree (MISMATCH_ARG: k, ranks, flags, bins' range, predicate,
 * inclusive against exclusive); the last rank alone with a bad argument
 * (BAD_LAST: n_local past its buffer; for context creation a device that
 * does not exist). */
enum {
  OP_CONTEXT,
  OP_SUM,
  OP_SUM_EXACT,
  OP_ARGMAX,
  OP_ARGMIN,
  OP_MAX,
  OP_MIN,
  OP_HISTOGRAM,
  OP_SCAN_EXCLUSIVE,
  OP_SCAN_INCLUSIVE,
  OP_SELECT,
  OP_NTH,
  OP_QUANTILES,
  OP_APPROX,
  OP_TOPK,
  OP_SORT,
  OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
    "context_create",     "reduce_sum",     "reduce_sum_exact", "argmax",      "argmin",
    "reduce_max",         "reduce_min",     "histogram",        "scan_exclusive",
    "scan_inclusive",     "select",         "nth_element",      "quantiles",
    "nth_element_approx", "topk",           "sort_keys"};
enum { GOOD, MISMATCH_TYPE, MISMATCH_ARG, BAD_LAST };
/* Ops without an argument besides the type that must agree. */
static int has_arg(int op) {
  return op != OP_CONTEXT && op != OP_SUM && op != OP_SUM_EXACT && op != OP_SORT;
}

struct op_outputs {
  cl_mem out, idx, counts, topv; /* out: max(n_local, sort share) + 4 elements */
};

static int call_op(int op, const struct global *g, int how, const struct op_outputs *o) {
  const int first = rank_ == 0, last = rank_ == size_ - 1;
  const clprim_type type = how == MISMATCH_TYPE && first ? CLPRIM_UINT32 : CLPRIM_FLOAT;
  const int alt = how == MISMATCH_ARG && first;
  const size_t n = (size_t)g->n_local + (how == BAD_LAST && last ? 2 : 0);
  const clprim_buffer in = clprim_buf(g->part), out = clprim_buf(o->out);
  clprim_value v, q[3];
  uint64_t index, count;
  clprim_predicate pred;
  memset(&pred, 0, sizeof pred);
  switch (op) {
  case OP_CONTEXT: {
    clprim_options opt;
    clprim_options_init(&opt);
    if (how == BAD_LAST && last) opt.device = "99:99";
    /* A failure leaves the handle as it was (a wrong status otherwise). */
    clprim_context *c = (clprim_context *)&opt;
    const int st = clprim_mpi_context_create(&c, comm, &opt);
    if (st == CLPRIM_SUCCESS) clprim_context_free(c);
    return st == CLPRIM_SUCCESS || c == (clprim_context *)&opt ? st : CLPRIM_ERROR_INVALID_ARGUMENT;
  }
  case OP_SUM:
    return clprim_mpi_reduce_sum(ctx, comm, n, type, in, 0, &v);
  case OP_SUM_EXACT: /* (rank 0's uint32 of MISMATCH_TYPE without the flag) */
    return clprim_mpi_reduce_sum(ctx, comm, n, type, in,
                                 type == CLPRIM_FLOAT ? CLPRIM_EXACT : 0, &v);
  case OP_ARGMAX:
  case OP_ARGMIN:
    return (op == OP_ARGMAX ? clprim_mpi_argmax : clprim_mpi_argmin)(
        ctx, comm, n, type, in, alt ? CLPRIM_REDUCE_ABS : 0, &v, &index);
  case OP_MAX:
  case OP_MIN:
    return (op == OP_MAX ? clprim_mpi_reduce_max : clprim_mpi_reduce_min)(
        ctx, comm, n, type, in, alt ? CLPRIM_REDUCE_ABS : 0, &v);
  case OP_HISTOGRAM: {
    clprim_value lo, hi;
    memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
    lo.f32 = -0.5f, hi.f32 = alt ? 0.25f : 0.5f;
    return clprim_mpi_histogram_even(ctx, comm, n, type, in, lo, hi, 16, clprim_buf(o->counts),
                                     NULL);
  }
  case OP_SCAN_EXCLUSIVE:
  case OP_SCAN_INCLUSIVE:
    return ((op == OP_SCAN_INCLUSIVE) != alt
                ? clprim_mpi_scan_inclusive
                : clprim_mpi_scan_exclusive)(ctx, comm, n, type, in, out);
  case OP_SELECT:
    pred.op = CLPRIM_PRED_GT, pred.a.f32 = alt ? 0.5f : 0.0f;
    return clprim_mpi_select(ctx, comm, n, type, in, &pred, CLPRIM_INDICES_64, out,
                             clprim_buf(o->idx), &count, NULL, NULL);
  case OP_NTH:
    return clprim_mpi_nth_element(ctx, comm, n, type, in, g->n / 2 + (uint64_t)alt, 0, &v);
  case OP_QUANTILES: {
    const uint64_t ranks[3] = {0, g->n / 2 + (uint64_t)alt, g->n - 1};
    return clprim_mpi_quantiles(ctx, comm, n, type, in, ranks, 3, 0, q);
  }
  case OP_APPROX:
    return clprim_mpi_nth_element_approx(ctx, comm, n, type, in, g->n / 3 + (uint64_t)alt, 0, &v,
                                         &index);
  case OP_TOPK:
    return clprim_mpi_topk(ctx, comm, n, type, in, 10 + (uint64_t)alt, 0, clprim_buf(o->topv),
                           clprim_buf(NULL), &count, NULL);
  default:
    return clprim_mpi_sort_keys(ctx, comm, n, type, in, out, g->n_local + g->n + 4, &count);
  }
}

/* Mismatched arguments give CLPRIM_MPI_ERROR_MISMATCH on every rank, a bad
 * argument on one rank its error there and CLPRIM_MPI_ERROR_REMOTE on the
 * others, and an MPI error at any of a call's collectives
 * CLPRIM_MPI_ERROR_MPI on every rank; never a hang (ctest's time limit),
 * and the next call works. 9000 elements: selection runs one level
 * before its gather. */
static void check_every_collective(void) {
  struct global g;
  make(&g, CLPRIM_FLOAT, 9000, 0, 0);
  struct op_outputs o;
  o.out = test_buffer(ctx, (g.n_local + g.n + 4) * 4, NULL);
  o.idx = test_buffer(ctx, (g.n_local + 4) * 8, NULL);
  o.counts = test_buffer(ctx, 16 * 4, NULL);
  o.topv = test_buffer(ctx, 16 * 4, NULL);
  const int last = rank_ == size_ - 1;
  for (int op = 0; op < OP_COUNT; ++op) {
    /* mismatches (more than one rank) */
    for (int how = MISMATCH_TYPE; size_ > 1 && how <= MISMATCH_ARG; ++how) {
      if ((how == MISMATCH_TYPE && op == OP_CONTEXT) || (how == MISMATCH_ARG && !has_arg(op)))
        continue;
      const int st = call_op(op, &g, how, &o);
      EXPECT(st == (int)CLPRIM_MPI_ERROR_MISMATCH, "%s, %s differs on rank 0: %s", op_names[op],
             how == MISMATCH_TYPE ? "the type" : "an argument", clprim_mpi_status_name(st));
    }
    /* a bad argument on the last rank */
    {
      const int st = call_op(op, &g, BAD_LAST, &o);
      const int want = !last              ? (int)CLPRIM_MPI_ERROR_REMOTE
                       : op == OP_CONTEXT ? (int)CLPRIM_ERROR_DEVICE_NOT_FOUND
                                          : (int)CLPRIM_ERROR_BUFFER_TOO_SMALL;
      EXPECT(st == want, "%s, bad argument on the last rank: %s, expected %s", op_names[op],
             clprim_mpi_status_name(st), clprim_mpi_status_name(want));
    }
    /* an MPI error at each of the call's collectives in turn */
    collectives = 0;
    int st = call_op(op, &g, GOOD, &o);
    EXPECT(st == CLPRIM_SUCCESS, "%s: %s", op_names[op], clprim_mpi_status_name(st));
    const long calls = (long)collectives;
    long fewest = 0, most = 0;
    PMPI_Allreduce(&calls, &fewest, 1, MPI_LONG, MPI_MIN, comm);
    PMPI_Allreduce(&calls, &most, 1, MPI_LONG, MPI_MAX, comm);
    EXPECT(fewest == most && calls > 0, "%s: %ld to %ld collectives on the ranks", op_names[op],
           fewest, most);
    if (rank_ == 0) printf("%s: %ld collectives, each failed in turn\n", op_names[op], calls);
    for (long j = 0; j < fewest && fewest == most; ++j) {
      fail_in = j;
      st = call_op(op, &g, GOOD, &o);
      EXPECT(st == (int)CLPRIM_MPI_ERROR_MPI && fail_in == -1,
             "%s, collective %ld of %ld failing: %s", op_names[op], j + 1, calls,
             clprim_mpi_status_name(st));
      fail_in = -1;
    }
    st = call_op(op, &g, GOOD, &o);
    EXPECT(st == CLPRIM_SUCCESS, "%s after the errors: %s", op_names[op],
           clprim_mpi_status_name(st));
  }
  clReleaseMemObject(o.out), clReleaseMemObject(o.idx), clReleaseMemObject(o.counts),
      clReleaseMemObject(o.topv);
  drop(&g);
}

/* ------------------------------------------------------- sort's balance */

/* Sample sort on keys that defeat splitters taken from a sample alone: all
 * equal, two values, one value for 90% (the rest spread), a skewed spread
 * (most keys in a sliver of the range); and for floats equal keys with
 * different bits (-0.0 and +0.0, NaNs with different payloads), which the
 * merge of the received runs must keep in global index order. Every rank
 * must hold its share (within one element of N / P, so well within the
 * issue's 10%) and the bits of those global sorted positions. */
static void check_sort_balance(clprim_type type) {
  const int is_f = type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
  for (int dist = 0; dist < 4 + is_f; ++dist) {
    struct global g;
    make(&g, type, 6000 + test_rand() % 6000, dist % 3, 0);
    unsigned char few[2 * 8];
    test_random(type, few, 2, 1);
    for (size_t i = 0; i < g.n; ++i) {
      unsigned char *x = g.data + i * g.es;
      const uint64_t r = test_rand() % 100;
      if (dist == 0) memcpy(x, few, g.es);                  /* all equal */
      if (dist == 1) memcpy(x, few + (r & 1) * g.es, g.es); /* two values */
      if (dist == 2 && r < 90) memcpy(x, few, g.es);        /* 90% one value */
      if (dist == 4) { /* signed zeros, NaN payloads, a few numbers */
        const uint64_t pick = r % 5, payload = test_rand() % 7 + 1;
        if (type == CLPRIM_FLOAT) {
          const uint32_t b = pick == 0   ? 0x80000000u
                             : pick == 1 ? 0u
                             : pick == 2 ? 0x7FC00000u | (uint32_t)payload
                             : pick == 3 ? 0xFFC00000u | (uint32_t)payload
                                         : 0x3F800000u; /* 1.0 */
          memcpy(x, &b, 4);
        } else {
          const uint64_t b = pick == 0   ? 0x8000000000000000ull
                             : pick == 1 ? 0ull
                             : pick == 2 ? 0x7FF8000000000000ull | payload
                             : pick == 3 ? 0xFFF8000000000000ull | payload
                                         : 0x3FF0000000000000ull; /* 1.0 */
          memcpy(x, &b, 8);
        }
      }
      if (dist == 3) {                                      /* skewed spread */
        const double u = test_uniform(), skew = u * u * u * u * u * u * u * u;
        switch (type) {
        case CLPRIM_INT32: {
          const int32_t v = (int32_t)(skew * 2e9) - 1000000000;
          memcpy(x, &v, 4);
          break;
        }
        case CLPRIM_UINT32: {
          const uint32_t v = (uint32_t)(skew * 4e9);
          memcpy(x, &v, 4);
          break;
        }
        case CLPRIM_INT64: {
          const int64_t v = (int64_t)(skew * 9e18) - 4000000000000000000ll;
          memcpy(x, &v, 8);
          break;
        }
        case CLPRIM_UINT64: {
          const uint64_t v = (uint64_t)(skew * 1.8e19);
          memcpy(x, &v, 8);
          break;
        }
        case CLPRIM_FLOAT: {
          const float v = (float)(skew * 1e6 - 1);
          memcpy(x, &v, 4);
          break;
        }
        case CLPRIM_DOUBLE: {
          const double v = skew * 1e6 - 1;
          memcpy(x, &v, 8);
          break;
        }
        }
      }
    }
    test_write(ctx, g.part, (g.n_local ? g.n_local : 1) * g.es, g.data + g.offset * g.es);
    struct keyed *s = sorted_keys(&g);
    const uint64_t share = clprim_mpi_sort_share(g.n, rank_, size_);
    cl_mem out = test_buffer(ctx, (g.n + 1) * g.es, NULL);
    uint64_t count = UINT64_MAX;
    EXPECT_STATUS(CLPRIM_SUCCESS,
                  clprim_mpi_sort_keys(ctx, comm, g.n_local, type, clprim_buf(g.part),
                                       clprim_buf(out), g.n + 1, &count));
    const double even = (double)g.n / size_;
    EXPECT(count != UINT64_MAX && fabs((double)count - even) <= 0.1 * even,
           "%s sort (keys %d): %llu of %zu keys on rank %d, not within 10%% of %.0f",
           clprim_type_name(type), dist, (unsigned long long)count, g.n, rank_, even);
    EXPECT(count == share, "%s sort (keys %d): count %llu, share %llu", clprim_type_name(type),
           dist, (unsigned long long)count, (unsigned long long)share);
    unsigned char *got = malloc((share + 1) * g.es);
    test_read(ctx, out, (share + 1) * g.es, got);
    uint64_t start = 0;
    for (int r = 0; r < rank_; ++r)
      start += clprim_mpi_sort_share(g.n, r, size_);
    for (uint64_t i = 0; i < share && count == share; ++i)
      if (memcmp(got + i * g.es, g.data + s[start + i].index * g.es, g.es) != 0) {
        EXPECT(0, "%s sort (keys %d): position %llu wrong", clprim_type_name(type), dist,
               (unsigned long long)(start + i));
        break;
      }
    free(got), free(s);
    clReleaseMemObject(out);
    drop(&g);
  }
}

/* ----------------------------------------------------------- the suite */

static void for_types(void (*check)(clprim_type)) {
  for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
    if (!wanted((clprim_type)t)) continue;
    if (t == CLPRIM_DOUBLE && !clprim__type_supported(ctx, CLPRIM_DOUBLE)) continue;
    check((clprim_type)t);
  }
  end_test();
}
static void test_reductions(void **state) { (void)state, for_types(check_reductions); }
static void test_scan_select(void **state) { (void)state, for_types(check_scan_select); }
static void test_selection(void **state) { (void)state, for_types(check_selection); }
static void test_sort_keys(void **state) { (void)state, for_types(check_sort); }
static void test_errors(void **state) {
  (void)state;
  check_errors();
  end_test();
}

static void test_sort_balance(void **state) {
  (void)state, for_types(check_sort_balance);
}
static void test_every_collective(void **state) {
  (void)state;
  check_every_collective();
  end_test();
}

/* Which device each rank took (clprim_mpi_context_create's local-rank rule
 * or $CLPRIM_DEVICE), one line per rank printed by rank 0: the device's
 * name and platform, and on NVIDIA its PCI bus (cl_nv_device_attribute_query),
 * so that a run on several GPUs shows that each rank had its own. */
static void print_device(void) {
  char line[400], name[128] = "?", platform[128] = "?", ext[8192] = "", pci[48] = "pci -";
  cl_device_id dev = clprim_context_device(ctx);
  cl_platform_id plat = NULL;
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
  clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof platform, platform, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  ext[sizeof ext - 1] = '\0';
  if (strstr(ext, "cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0; /* CL_DEVICE_PCI_BUS_ID_NV, CL_DEVICE_PCI_SLOT_ID_NV */
    clGetDeviceInfo(dev, 0x4008, sizeof bus, &bus, NULL);
    clGetDeviceInfo(dev, 0x4009, sizeof slot, &slot, NULL);
    snprintf(pci, sizeof pci, "pci bus 0x%02x slot 0x%02x", bus, slot);
  }
  int local = -1;
  clprim_mpi_local_rank(comm, &local);
  const char *env = getenv("CLPRIM_DEVICE");
  snprintf(line, sizeof line, "test_mpi: rank %d (local rank %d, CLPRIM_DEVICE=%s): %s, %s, %s",
           rank_, local, env && *env ? env : "unset", name, platform, pci);
  char *all = rank_ == 0 ? malloc(sizeof line * (size_t)size_) : NULL;
  /* PMPI_: not one of the collectives that the tests count and fail */
  PMPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, comm);
  for (int r = 0; all && r < size_; ++r)
    printf("%s\n", all + (size_t)r * sizeof line);
  fflush(stdout);
  free(all);
}

static int setup(void **state) {
  (void)state;
  const int st = clprim_mpi_context_create(&ctx, comm, NULL);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "rank %d: clprim_mpi_context_create: %s\n", rank_, clprim_mpi_status_name(st));
    return -1;
  }
  print_device();
  return 0;
}
static int teardown(void **state) {
  (void)state;
  clprim_context_free(ctx);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "--types=", 8) == 0) {
      type_mask = 0;
      char list[128];
      snprintf(list, sizeof list, "%s", argv[i] + 8);
      for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
        for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t)
          if (strcmp(tok, clprim_type_name((clprim_type)t)) == 0) type_mask |= 1u << t;
    }
  /* One seed for all: rank 0's. */
  unsigned long long seed = 0;
  if (rank_ == 0) {
    const char *env = getenv("CLPRIM_TEST_SEED");
    seed = env && *env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
  }
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  char text[32];
  snprintf(text, sizeof text, "%llu", seed);
  setenv("CLPRIM_TEST_SEED", text, 1);
  char name[64];
  snprintf(name, sizeof name, "test_mpi (rank %d of %d)", rank_, size_);
  test_init(name);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),       cmocka_unit_test(test_every_collective),
      cmocka_unit_test(test_reductions),   cmocka_unit_test(test_scan_select),
      cmocka_unit_test(test_selection),    cmocka_unit_test(test_sort_keys),
      cmocka_unit_test(test_sort_balance),
  };
  const int failed = cmocka_run_group_tests(tests, setup, teardown);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
  MPI_Finalize();
  return any ? 1 : 0;
}
