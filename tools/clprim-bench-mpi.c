/* clprim-bench-mpi: strong and weak scaling of clprim_mpi's collectives,
 * under mpirun (one rank per device; on a CPU runtime each rank is a PoCL
 * process on the same cores). Per op: the median wall time of --reps calls
 * (each between two barriers, so the slowest rank counts), and the bytes
 * a rank handed to MPI per call (the largest over the ranks; a broadcast
 * counts at its root) (counted by wrapping the MPI calls the
 * library makes through MPI's profiling interface, PMPI_*). With one rank
 * it also times the plain clprim call on the same data: the overhead of the
 * MPI layer alone.
 *
 * Usage: mpirun -np P clprim-bench-mpi [--n N] [--weak] [--reps R]
 *                                      [--type float|...] [--op NAME]
 *   --n N     elements in all (strong scaling, default 2^22); with --weak,
 *             elements per rank
 *   ops: sum argmax scan select nth_element nth_approx quantiles topk sort
 *   (quantiles: the 9 deciles) */
#define _POSIX_C_SOURCE 200809L
#include <clprim/clprim_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- bytes handed to MPI by this rank (the calls clprim_mpi makes) */
static unsigned long long sent_bytes, mpi_calls;
static size_t type_bytes(MPI_Datatype t) {
  int s = 0;
  PMPI_Type_size(t, &s);
  return (size_t)s;
}
int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  sent_bytes += (unsigned long long)count * type_bytes(t), ++mpi_calls;
  return PMPI_Allreduce(s, r, count, t, op, c);
}
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                  MPI_Comm c) {
  sent_bytes += (unsigned long long)sc * type_bytes(st), ++mpi_calls;
  return PMPI_Allgather(s, sc, st, r, rc, rt, c);
}
int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int *rc,
                   const int *displs, MPI_Datatype rt, MPI_Comm c) {
  sent_bytes += (unsigned long long)sc * type_bytes(st), ++mpi_calls;
  return PMPI_Allgatherv(s, sc, st, r, rc, displs, rt, c);
}
int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
               MPI_Comm c) {
  sent_bytes += (unsigned long long)sc * type_bytes(st), ++mpi_calls;
  return PMPI_Gather(s, sc, st, r, rc, rt, root, c);
}
int MPI_Bcast(void *b, int count, MPI_Datatype t, int root, MPI_Comm c) {
  int rank = 0;
  PMPI_Comm_rank(c, &rank);
  if (rank == root) sent_bytes += (unsigned long long)count * type_bytes(t);
  ++mpi_calls;
  return PMPI_Bcast(b, count, t, root, c);
}
int MPI_Alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r,
                  const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c) {
  int size = 0;
  PMPI_Comm_size(c, &size);
  for (int i = 0; i < size; ++i)
    sent_bytes += (unsigned long long)sc[i] * type_bytes(st);
  ++mpi_calls;
  return PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c);
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return rng * 0x2545F4914F6CDD1Dull;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t n = (uint64_t)1 << 22;
  int weak = 0, reps = 10;
  const char *op_filter = NULL;
  clprim_type type = CLPRIM_FLOAT;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc)
      n = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--weak"))
      weak = 1;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--op") && i + 1 < argc)
      op_filter = argv[++i];
    else if (!strcmp(argv[i], "--type") && i + 1 < argc) {
      ++i;
      for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t)
        if (!strcmp(argv[i], clprim_type_name((clprim_type)t))) type = (clprim_type)t;
    } else {
      if (rank == 0) fprintf(stderr, "usage: see the top of clprim-bench-mpi.c\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  clprim_context *ctx;
  clprim_status st = clprim_mpi_context_create(MPI_COMM_WORLD, NULL, &ctx);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank, clprim_mpi_status_name(st));
    MPI_Finalize();
    return 1;
  }
  const uint64_t total = weak ? n * (uint64_t)size : n;
  const uint64_t n_local = clprim_mpi_sort_share(total, rank, size);
  const size_t es = clprim_type_size(type);
  unsigned char *host = malloc((n_local + 1) * es);
  rng += (uint64_t)rank * 0x1234567ull;
  for (uint64_t i = 0; i < n_local; ++i) {
    const uint64_t r = next();
    if (type == CLPRIM_FLOAT) {
      const float f = (float)((double)(r >> 11) / 9007199254740992.0);
      memcpy(host + i * es, &f, 4);
    } else if (type == CLPRIM_DOUBLE) {
      const double d = (double)(r >> 11) / 9007199254740992.0;
      memcpy(host + i * es, &d, 8);
    } else {
      memcpy(host + i * es, &r, es);
    }
  }
  cl_int err;
  cl_context clc = clprim_context_cl_context(ctx);
  cl_command_queue q = clprim_context_queue(ctx);
  const size_t bytes = (n_local + 1) * es;
  cl_mem in = clCreateBuffer(clc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host, &err);
  cl_mem out = clCreateBuffer(clc, CL_MEM_READ_WRITE, bytes + 8, NULL, &err);
  cl_mem idx = clCreateBuffer(clc, CL_MEM_READ_WRITE, (n_local + 1) * 8, NULL, &err);
  const uint64_t k = 100 < total ? 100 : total;
  cl_mem topv = clCreateBuffer(clc, CL_MEM_READ_WRITE, (k + 1) * es, NULL, &err);
  if (rank == 0)
    printf("# clprim-bench-mpi: %d rank(s), %s scaling, %s, %llu elements in all "
           "(%llu per rank), median of %d\n"
           "# op            ms      MPI bytes/rank/call  MPI calls  one-device ms\n",
           size, weak ? "weak" : "strong", clprim_type_name(type), (unsigned long long)total,
           (unsigned long long)(total / (uint64_t)size), reps);
  static const char *const ops[] = {"sum",        "argmax",    "scan", "select", "nth_element",
                                    "nth_approx", "quantiles", "topk", "sort"};
  uint64_t deciles[9];
  clprim_value decile_values[9];
  for (int j = 0; j < 9; ++j)
    deciles[j] = total * (uint64_t)(j + 1) / 10;
  double *times = malloc(sizeof(double) * (size_t)reps);
  int failed = 0;
  for (unsigned o = 0; o < sizeof ops / sizeof *ops; ++o) {
    if (op_filter && strcmp(op_filter, ops[o])) continue;
    unsigned long long bytes_call = 0, calls_call = 0;
    double median[2] = {-1, -1}; /* clprim_mpi; one device (one rank only) */
    for (int single = 0; single < 1 + (size == 1); ++single)
      for (int r = -1; r < reps; ++r) { /* r = -1: warm-up */
        clprim_value v;
        uint64_t index, count;
        clprim_predicate pred;
        memset(&pred, 0, sizeof pred);
        pred.op = CLPRIM_PRED_GT;
        if (type == CLPRIM_FLOAT) pred.a.f32 = 0.5f;
        if (type == CLPRIM_DOUBLE) pred.a.f64 = 0.5;
        const clprim_buffer bin = clprim_buf(in);
        MPI_Barrier(MPI_COMM_WORLD);
        const unsigned long long b0 = sent_bytes, c0 = mpi_calls;
        const double t0 = MPI_Wtime();
        if (!single) {
          switch (o) {
          case 0: st = clprim_mpi_reduce_sum(ctx, MPI_COMM_WORLD, n_local, type, bin, &v); break;
          case 1: st = clprim_mpi_argmax(ctx, MPI_COMM_WORLD, n_local, type, bin, 0, &v, &index); break;
          case 2: st = clprim_mpi_scan_inclusive(ctx, MPI_COMM_WORLD, n_local, type, bin, clprim_buf(out)); break;
          case 3: st = clprim_mpi_select(ctx, MPI_COMM_WORLD, n_local, type, bin, &pred, CLPRIM_INDICES_64, clprim_buf(out), clprim_buf(idx), &count, NULL, NULL); break;
          case 4: st = clprim_mpi_nth_element(ctx, MPI_COMM_WORLD, n_local, type, bin, total / 2, 0, &v); break;
          case 5: st = clprim_mpi_nth_element_approx(ctx, MPI_COMM_WORLD, n_local, type, bin, total / 2, 0, &v, &index); break;
          case 6: st = clprim_mpi_quantiles(ctx, MPI_COMM_WORLD, n_local, type, bin, deciles, 9, 0, decile_values); break;
          case 7: st = clprim_mpi_topk(ctx, MPI_COMM_WORLD, n_local, type, bin, k, 0, clprim_buf(topv), clprim_buf(NULL), &count, NULL); break;
          default: st = clprim_mpi_sort_keys(ctx, MPI_COMM_WORLD, n_local, type, bin, clprim_buf(out), n_local + 1, &count); break;
          }
        } else { /* the same work on one device, without the MPI layer */
          switch (o) {
          case 0: st = clprim_reduce_sum(ctx, n_local, type, bin, &v, clprim_buf(NULL)); break;
          case 1: st = clprim_argmax(ctx, n_local, type, bin, 0, &v, &index, clprim_buf(NULL)); break;
          case 2: st = clprim_scan_inclusive(ctx, n_local, type, bin, clprim_buf(out)); break;
          case 3: st = clprim_select(ctx, n_local, type, bin, &pred, CLPRIM_INDICES_64, clprim_buf(out), clprim_buf(idx), &count, clprim_buf(NULL)); break;
          case 4: st = clprim_nth_element(ctx, n_local, type, bin, total / 2, 0, &v, clprim_buf(NULL)); break;
          case 5: st = clprim_nth_element_approx(ctx, n_local, type, bin, total / 2, 0, &v, &index, clprim_buf(NULL)); break;
          case 6: st = clprim_quantiles(ctx, n_local, type, bin, deciles, 9, 0, decile_values, clprim_buf(NULL)); break;
          case 7: st = clprim_topk(ctx, n_local, type, bin, k, 0, clprim_buf(topv), clprim_buf(NULL)); break;
          default: st = clprim_sort_keys(ctx, n_local, type, bin, 0, 0, 0, clprim_buf(out)); break;
          }
        }
        clFinish(q);
        MPI_Barrier(MPI_COMM_WORLD);
        if (r >= 0) times[r] = (MPI_Wtime() - t0) * 1e3;
        if (!single) bytes_call = sent_bytes - b0, calls_call = mpi_calls - c0;
        if (st != CLPRIM_SUCCESS) {
          fprintf(stderr, "rank %d: %s: %s\n", rank, ops[o], clprim_mpi_status_name(st));
          failed = 1;
        }
        if (r == reps - 1) {
          qsort(times, (size_t)reps, sizeof *times, cmp_double);
          median[single] = times[reps / 2];
        }
      }
    unsigned long long max_bytes = 0;
    MPI_Reduce(&bytes_call, &max_bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      printf("%-12s %9.3f %20llu %10llu", ops[o], median[0], max_bytes, calls_call);
      if (median[1] >= 0)
        printf(" %14.3f\n", median[1]);
      else
        printf(" %14s\n", "-");
      fflush(stdout);
    }
  }
  free(times);
  free(host);
  clReleaseMemObject(in), clReleaseMemObject(out), clReleaseMemObject(idx), clReleaseMemObject(topv);
  clprim_context_free(ctx);
  MPI_Finalize();
  return failed;
}
