/* clprim-bench-mpi: strong and weak scaling of clprim_mpi's collectives,
 * under mpirun (one rank per device; on a CPU runtime each rank is a PoCL
 * process on the same cores). Per op: the median wall time of --reps calls
 * after one warm-up call (each between two barriers, so the slowest rank
 * counts); the time the calls spent inside MPI (communication, waiting for
 * other ranks included; the rest is device work and host steps); the bytes
 * a rank handed to MPI for other ranks per call (the largest over the
 * ranks; a broadcast counts at its root) and the MPI calls, both counted by
 * wrapping the MPI calls the library makes through MPI's profiling
 * interface (PMPI_*). With one rank it also times the plain clprim call on
 * the same data: the overhead of the MPI layer alone.
 *
 * Sort also prints, per rank, the median of each phase of the library's
 * profile (clprim_mpi_last_profile), and the floor of its exchange measured
 * in the same job with the very counts the sort's MPI_Alltoallv used: a
 * device-to-host read of the bytes the rank sends into pinned memory (a
 * CL_MEM_ALLOC_HOST_PTR buffer, mapped), a plain MPI_Alltoallv between
 * pinned buffers, a host-to-device write of the bytes it receives; and for
 * the diagnosis the same copies from and to pageable memory (malloc), the
 * MPI_Alltoallv between pageable buffers, and what pinning and mapping
 * such buffers costs.
 *
 * Usage: mpirun -np P clprim-bench-mpi [--n N] [--weak] [--reps R]
 *            [--type float|...] [--op NAME[,NAME...]] [--q Q] [--k K]
 *            [--bins B] [--json] [--gpus-check]
 *   --n N     elements in all (strong scaling, default 2^22); with --weak,
 *             elements per rank
 *   ops: sum argmax scan select histogram nth_element nth_approx quantiles
 *        topk sort (default: all)
 *   --q Q     quantiles: Q evenly spaced ranks, j N / (Q + 1) (default 9,
 *             the deciles; 99: the percentiles)
 *   --k K     top-k's k (default 100); --bins B histogram bins (default 256)
 *   --json    one JSON object per op (rank 0) instead of the table
 *   --gpus-check  only the device line of every rank, then exit */
#define _POSIX_C_SOURCE 200809L
#include <clprim/clprim_mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- what the library hands to MPI while `counting` (its calls only) */
static int counting;
static unsigned long long sent_bytes, mpi_calls;
static double mpi_seconds;
/* The last MPI_Alltoallv's counts and displacements (elements, 4 P ints)
 * and its element size: the bench replays them between its own buffers. */
static int *a2a_args, a2a_ranks, a2a_elem;

static size_t type_bytes(MPI_Datatype t) {
  int s = 0;
  PMPI_Type_size(t, &s);
  return (size_t)s;
}
static double t_begin(void) {
  return counting ? PMPI_Wtime() : 0;
}
static int t_end(double t0, unsigned long long bytes, int rc) {
  if (counting) mpi_seconds += PMPI_Wtime() - t0, sent_bytes += bytes, ++mpi_calls;
  return rc;
}
int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  const double t0 = t_begin();
  return t_end(t0, (unsigned long long)count * type_bytes(t),
               PMPI_Allreduce(s, r, count, t, op, c));
}
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                  MPI_Comm c) {
  const double t0 = t_begin();
  return t_end(t0, (unsigned long long)sc * type_bytes(st),
               PMPI_Allgather(s, sc, st, r, rc, rt, c));
}
int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int *rc,
                   const int *displs, MPI_Datatype rt, MPI_Comm c) {
  const double t0 = t_begin();
  return t_end(t0, (unsigned long long)sc * type_bytes(st),
               PMPI_Allgatherv(s, sc, st, r, rc, displs, rt, c));
}
int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root,
               MPI_Comm c) {
  const double t0 = t_begin();
  return t_end(t0, (unsigned long long)sc * type_bytes(st),
               PMPI_Gather(s, sc, st, r, rc, rt, root, c));
}
int MPI_Bcast(void *b, int count, MPI_Datatype t, int root, MPI_Comm c) {
  int rank = 0;
  PMPI_Comm_rank(c, &rank);
  const double t0 = t_begin();
  const int rc = PMPI_Bcast(b, count, t, root, c);
  return t_end(t0, rank == root ? (unsigned long long)count * type_bytes(t) : 0, rc);
}
int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  const double t0 = t_begin();
  return t_end(t0, (unsigned long long)count * type_bytes(t), PMPI_Exscan(s, r, count, t, op, c));
}
int MPI_Alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r,
                  const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c) {
  int size = 0, rank = 0;
  PMPI_Comm_size(c, &size);
  PMPI_Comm_rank(c, &rank);
  unsigned long long bytes = 0;
  for (int i = 0; i < size; ++i)
    if (i != rank) bytes += (unsigned long long)sc[i] * type_bytes(st);
  if (counting) {
    free(a2a_args);
    a2a_args = malloc(sizeof(int) * 4 * (size_t)size);
    if (a2a_args) {
      memcpy(a2a_args, sc, sizeof(int) * (size_t)size);
      memcpy(a2a_args + size, sd, sizeof(int) * (size_t)size);
      memcpy(a2a_args + 2 * size, rc, sizeof(int) * (size_t)size);
      memcpy(a2a_args + 3 * size, rd, sizeof(int) * (size_t)size);
      a2a_ranks = size, a2a_elem = (int)type_bytes(st);
    }
  }
  const double t0 = t_begin();
  return t_end(t0, bytes, PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c));
}

/* ---- helpers */

static int rank_, size_;

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return rng * 0x2545F4914F6CDD1Dull;
}

/* "p:d" of a device in clprim_list_devices order (the platforms' and
 * their devices' order), or "?". */
static void device_index(cl_device_id dev, char *out, size_t size) {
  cl_platform_id plats[16];
  cl_uint np = 0;
  snprintf(out, size, "?");
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) return;
  for (cl_uint p = 0; p < np && p < 16; ++p) {
    cl_device_id devs[64];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS) continue;
    for (cl_uint d = 0; d < nd && d < 64; ++d)
      if (devs[d] == dev) snprintf(out, size, "%u:%u", p, d);
  }
}

/* One line per rank, printed in rank order by rank 0: host, local rank,
 * $CLPRIM_DEVICE, the device (clprim_list_devices index, name, platform)
 * and on NVIDIA its PCI bus (cl_nv_device_attribute_query), so that a run
 * shows which GPU each rank used. */
static void print_devices(clprim_context *ctx) {
  char line[512], host[64] = "?", name[128] = "?", platform[128] = "?", ext[8192] = "", idx[16];
  gethostname(host, sizeof host);
  host[sizeof host - 1] = '\0';
  cl_device_id dev = clprim_context_device(ctx);
  cl_platform_id plat = NULL;
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
  clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof platform, platform, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext, ext, NULL);
  ext[sizeof ext - 1] = '\0';
  device_index(dev, idx, sizeof idx);
  char pci[64] = "pci -";
  if (strstr(ext, "cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0; /* CL_DEVICE_PCI_BUS_ID_NV, CL_DEVICE_PCI_SLOT_ID_NV */
    clGetDeviceInfo(dev, 0x4008, sizeof bus, &bus, NULL);
    clGetDeviceInfo(dev, 0x4009, sizeof slot, &slot, NULL);
    snprintf(pci, sizeof pci, "pci bus 0x%02x slot 0x%02x", bus, slot);
  }
  int local = -1;
  clprim_mpi_local_rank(MPI_COMM_WORLD, &local);
  const char *env = getenv("CLPRIM_DEVICE");
  snprintf(line, sizeof line,
           "# rank %d on %s (local rank %d, CLPRIM_DEVICE=%s): device %s %s, %s, %s", rank_, host,
           local, env && *env ? env : "unset", idx, name, platform, pci);
  char *all = rank_ == 0 ? malloc(sizeof line * (size_t)size_) : NULL;
  PMPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank_ == 0) {
    for (int r = 0; r < size_; ++r)
      printf("%s\n", all + (size_t)r * sizeof line);
    fflush(stdout);
  }
  free(all);
}

/* Wall milliseconds of the slowest rank: the caller runs the work between
 * bench_start() and bench_stop(). */
static double bench_t0;
static void bench_start(void) {
  PMPI_Barrier(MPI_COMM_WORLD);
  bench_t0 = PMPI_Wtime();
}
static double bench_stop(void) {
  PMPI_Barrier(MPI_COMM_WORLD);
  return (PMPI_Wtime() - bench_t0) * 1e3;
}

/* A pinned host buffer: CL_MEM_ALLOC_HOST_PTR, mapped. */
static void *pin(cl_context clc, cl_command_queue q, size_t bytes, cl_mem *buf) {
  cl_int err;
  *buf = clCreateBuffer(clc, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (err != CL_SUCCESS) return NULL;
  void *host = clEnqueueMapBuffer(q, *buf, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0,
                                  NULL, NULL, &err);
  return err == CL_SUCCESS ? host : NULL;
}
static void unpin(cl_command_queue q, cl_mem buf, void *host) {
  if (host) clEnqueueUnmapMemObject(q, buf, host, 0, NULL, NULL);
  clFinish(q);
  if (buf) clReleaseMemObject(buf);
}

/* The floor of the sort's exchange, with the counts of its last
 * MPI_Alltoallv (a2a_args): each measurement the median of reps between
 * barriers (pinning: of 3). dev: a device buffer of at least the bytes
 * either way. Rank 0 prints; json: as one object's members. */
static void exchange_floor(clprim_context *ctx, cl_mem dev, int reps, double exchange_ms,
                           double sort_ms, double local_sort_ms, int json) {
  if (!a2a_args || a2a_ranks != size_) return;
  cl_context clc = clprim_context_cl_context(ctx);
  cl_command_queue q = clprim_context_queue(ctx);
  const int *sc = a2a_args, *sd = a2a_args + size_, *rc = a2a_args + 2 * size_,
            *rd = a2a_args + 3 * size_;
  size_t send_n = 0, recv_n = 0;
  for (int r = 0; r < size_; ++r) {
    if (sd[r] + sc[r] > (int)send_n) send_n = (size_t)(sd[r] + sc[r]);
    if (rd[r] + rc[r] > (int)recv_n) recv_n = (size_t)(rd[r] + rc[r]);
  }
  const size_t es = (size_t)a2a_elem, sb = send_n * es + 8, rb = recv_n * es + 8;
  const MPI_Datatype elem = es == 4 ? MPI_UINT32_T : MPI_UINT64_T;
  cl_mem sbuf = NULL, rbuf = NULL;
  char *shost = pin(clc, q, sb, &sbuf), *rhost = pin(clc, q, rb, &rbuf);
  char *spage = malloc(sb), *rpage = malloc(rb);
  if (!shost || !rhost || !spage || !rpage) {
    fprintf(stderr, "rank %d: no room for the exchange's floor\n", rank_);
    unpin(q, sbuf, shost), unpin(q, rbuf, rhost), free(spage), free(rpage);
    return;
  }
  memset(spage, 1, sb), memset(rpage, 1, rb); /* touched: no page faults in the timings */
  enum { D2H, A2A, H2D, D2H_PAGEABLE, A2A_PAGEABLE, H2D_PAGEABLE, MAP, PIN, KINDS };
  static const char *const names[KINDS] = {"d2h_pinned",   "alltoallv_pinned",   "h2d_pinned",
                                           "d2h_pageable", "alltoallv_pageable", "h2d_pageable",
                                           "map_unmap",    "pin_unpin"};
  double *t = malloc(sizeof(double) * (size_t)(reps + 1)), ms[KINDS];
  for (int kind = 0; kind < KINDS; ++kind) {
    const int n = kind == PIN ? 3 : reps;
    for (int r = -1; r < n; ++r) {
      bench_start();
      switch (kind) {
      case D2H:
      case D2H_PAGEABLE:
        clEnqueueReadBuffer(q, dev, CL_TRUE, 0, send_n * es, kind == D2H ? shost : spage, 0, NULL,
                            NULL);
        break;
      case H2D:
      case H2D_PAGEABLE:
        clEnqueueWriteBuffer(q, dev, CL_TRUE, 0, recv_n * es, kind == H2D ? rhost : rpage, 0, NULL,
                             NULL);
        break;
      case A2A:
        PMPI_Alltoallv(shost, sc, sd, elem, rhost, rc, rd, elem, MPI_COMM_WORLD);
        break;
      case A2A_PAGEABLE:
        PMPI_Alltoallv(spage, sc, sd, elem, rpage, rc, rd, elem, MPI_COMM_WORLD);
        break;
      case MAP: { /* what the sort does per call with its kept buffers */
        cl_int err;
        clEnqueueUnmapMemObject(q, sbuf, shost, 0, NULL, NULL);
        shost = clEnqueueMapBuffer(q, sbuf, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, sb, 0, NULL,
                                   NULL, &err);
        clFinish(q);
        break;
      }
      default: { /* what a sort that pins per call pays (both buffers) */
        cl_mem b1, b2;
        void *h1 = pin(clc, q, sb, &b1), *h2 = pin(clc, q, rb, &b2);
        unpin(q, b1, h1), unpin(q, b2, h2);
        break;
      }
      }
      const double x = bench_stop();
      if (r >= 0) t[r] = x;
    }
    ms[kind] = median(t, n);
  }
  free(t);
  const double floor_ms = ms[D2H] + ms[A2A] + ms[H2D];
  if (rank_ == 0) {
    const double gb = (double)(send_n * es) / 1e9;
    if (json) {
      printf(",\"floor\":{\"send_bytes_rank0\":%zu,\"recv_bytes_rank0\":%zu", send_n * es,
             recv_n * es);
      for (int kind = 0; kind < KINDS; ++kind)
        printf(",\"%s_ms\":%.3f", names[kind], ms[kind]);
      printf(",\"floor_ms\":%.3f,\"exchange_over_floor\":%.3f,\"sort_over_target\":%.3f}", floor_ms,
             exchange_ms > 0 ? floor_ms / exchange_ms : 0,
             sort_ms / (1.3 * floor_ms + local_sort_ms));
    } else {
      printf("#   floor of the exchange, rank 0 sends %.3f GB (its own piece left out), the same "
             "counts:\n",
             gb);
      for (int kind = 0; kind < KINDS; ++kind) {
        /* GB/s of rank 0's bytes: sent (reads, all-to-all) or received (writes) */
        const double moved = kind == H2D || kind == H2D_PAGEABLE ? (double)(recv_n * es) / 1e9
                             : kind == MAP || kind == PIN        ? 0
                                                                 : gb;
        printf("#     %-20s %10.3f ms", names[kind], ms[kind]);
        if (moved > 0 && ms[kind] > 0) printf(" %8.2f GB/s", moved / ms[kind] * 1e3);
        printf("\n");
      }
      printf("#     floor = d2h + alltoallv + h2d (pinned) = %.3f ms; the sort's exchange "
             "(to_host + exchange + to_device, slowest rank) %.3f ms: %.0f%% of the floor's "
             "speed (target 70%%)\n",
             floor_ms, exchange_ms, exchange_ms > 0 ? 100 * floor_ms / exchange_ms : 0);
      printf("#     the whole sort %.3f ms against 1.3 x floor + local sort (%.3f ms) = %.3f ms: "
             "%.2f x the target\n",
             sort_ms, local_sort_ms, 1.3 * floor_ms + local_sort_ms,
             sort_ms / (1.3 * floor_ms + local_sort_ms));
    }
  }
  unpin(q, sbuf, shost), unpin(q, rbuf, rhost);
  free(spage), free(rpage);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  uint64_t n = (uint64_t)1 << 22, k = 100;
  int weak = 0, reps = 10, json = 0, gpus_check = 0, quantile_count = 9;
  size_t bins = 256;
  const char *op_filter = NULL;
  clprim_type type = CLPRIM_FLOAT;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc)
      n = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--weak"))
      weak = 1;
    else if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (!strcmp(argv[i], "--gpus-check"))
      gpus_check = 1;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--q") && i + 1 < argc)
      quantile_count = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--k") && i + 1 < argc)
      k = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--bins") && i + 1 < argc)
      bins = (size_t)strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--op") && i + 1 < argc)
      op_filter = argv[++i];
    else if (!strcmp(argv[i], "--type") && i + 1 < argc) {
      ++i;
      int known = 0;
      for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t)
        if (!strcmp(argv[i], clprim_type_name((clprim_type)t))) type = (clprim_type)t, known = 1;
      if (!known) op_filter = "?";
    } else {
      op_filter = "?";
    }
  }
  if (op_filter && !strcmp(op_filter, "?")) {
    if (rank_ == 0) fprintf(stderr, "usage: see the top of clprim-bench-mpi.c\n");
    MPI_Finalize();
    return 2;
  }
  if (reps < 1) reps = 1;
  if (quantile_count < 1) quantile_count = 1;
  if (bins < 1) bins = 1;
  clprim_context *ctx;
  clprim_status st = clprim_mpi_context_create(&ctx, MPI_COMM_WORLD, NULL);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank_, clprim_mpi_status_name(st));
    MPI_Finalize();
    return 1;
  }
  print_devices(ctx);
  if (gpus_check) {
    clprim_context_free(ctx);
    MPI_Finalize();
    return 0;
  }
  const uint64_t total = weak ? n * (uint64_t)size_ : n;
  const uint64_t n_local = clprim_mpi_sort_share(total, rank_, size_);
  const size_t es = clprim_type_size(type);
  unsigned char *host = malloc((n_local + 1) * es);
  rng += (uint64_t)rank_ * 0x1234567ull;
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
  cl_int err, errs = 0;
  cl_context clc = clprim_context_cl_context(ctx);
  cl_command_queue q = clprim_context_queue(ctx);
  const size_t bytes = (n_local + 1) * es;
  if (k > total) k = total;
  cl_mem in = clCreateBuffer(clc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host, &err);
  errs |= err;
  cl_mem out = clCreateBuffer(clc, CL_MEM_READ_WRITE, bytes + 8, NULL, &err);
  errs |= err;
  cl_mem idx = clCreateBuffer(clc, CL_MEM_READ_WRITE, (n_local + 1) * 8, NULL, &err);
  errs |= err;
  cl_mem topv = clCreateBuffer(clc, CL_MEM_READ_WRITE, (k + 1) * es, NULL, &err);
  errs |= err;
  cl_mem counts = clCreateBuffer(clc, CL_MEM_READ_WRITE, bins * 4, NULL, &err);
  errs |= err;
  free(host);
  if (errs != CL_SUCCESS) {
    fprintf(stderr, "rank %d: could not make the buffers (%d)\n", rank_, (int)errs);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank_ == 0 && !json)
    printf("# clprim-bench-mpi: %d rank(s), %s scaling, %s, %llu elements in all "
           "(%llu per rank), median of %d; quantiles %d ranks, top-k k = %llu, histogram %zu "
           "bins\n"
           "# ms: wall, slowest rank; MPI ms: inside MPI calls (rank 0); bytes: to other ranks, "
           "per rank and call (the most of any rank)\n"
           "# op            ms     MPI ms  MPI bytes/rank/call  MPI calls  one-device ms\n",
           size_, weak ? "weak" : "strong", clprim_type_name(type), (unsigned long long)total,
           (unsigned long long)(total / (uint64_t)size_), reps, quantile_count,
           (unsigned long long)k, bins);
  static const char *const ops[] = {"sum",         "argmax",     "scan",      "select", "histogram",
                                    "nth_element", "nth_approx", "quantiles", "topk",   "sort"};
  enum { OP_SUM, OP_ARGMAX, OP_SCAN, OP_SELECT, OP_HIST, OP_NTH, OP_APPROX, OP_QUANT, OP_TOPK };
  uint64_t *qranks = malloc(sizeof(uint64_t) * (size_t)quantile_count);
  clprim_value *qvalues = malloc(sizeof(clprim_value) * (size_t)quantile_count);
  for (int j = 0; j < quantile_count; ++j)
    qranks[j] = total * (uint64_t)(j + 1) / (uint64_t)(quantile_count + 1);
  /* The histogram's range: the data's ([0, 1) for floats, the type's range else). */
  clprim_value lo, hi;
  memset(&lo, 0, sizeof lo), memset(&hi, 0, sizeof hi);
  switch (type) {
  case CLPRIM_FLOAT:
    hi.f32 = 1.0f;
    break;
  case CLPRIM_DOUBLE:
    hi.f64 = 1.0;
    break;
  case CLPRIM_INT32:
    lo.i32 = INT32_MIN, hi.i32 = INT32_MAX;
    break;
  case CLPRIM_UINT32:
    hi.u32 = UINT32_MAX;
    break;
  case CLPRIM_INT64:
    lo.i64 = INT64_MIN, hi.i64 = INT64_MAX;
    break;
  case CLPRIM_UINT64:
    hi.u64 = UINT64_MAX;
    break;
  }
  double *times = malloc(sizeof(double) * (size_t)reps);
  double *comm = malloc(sizeof(double) * (size_t)reps);
  double *phase_t = malloc(sizeof(double) * (size_t)reps * CLPRIM_MPI_PHASE_COUNT);
  int failed = 0;
  for (unsigned o = 0; o < sizeof ops / sizeof *ops; ++o) {
    if (op_filter) { /* a comma-separated list */
      const char *f = strstr(op_filter, ops[o]);
      const size_t len = strlen(ops[o]);
      while (f && ((f != op_filter && f[-1] != ',') || (f[len] && f[len] != ',')))
        f = strstr(f + 1, ops[o]);
      if (!f) continue;
    }
    unsigned long long bytes_call = 0, calls_call = 0;
    double med[2] = {-1, -1}, comm_ms = 0; /* clprim_mpi; one device (one rank only) */
    clprim_mpi_profile prof;
    memset(&prof, 0, sizeof prof);
    for (int single = 0; single < 1 + (size_ == 1); ++single)
      for (int r = -1; r < reps; ++r) { /* r = -1: warm-up */
        clprim_value v;
        uint64_t index, count, outside[3];
        clprim_predicate pred;
        memset(&pred, 0, sizeof pred);
        pred.op = CLPRIM_PRED_GT;
        if (type == CLPRIM_FLOAT) pred.a.f32 = 0.5f;
        if (type == CLPRIM_DOUBLE) pred.a.f64 = 0.5;
        const clprim_buffer bin = clprim_buf(in);
        const MPI_Comm w = MPI_COMM_WORLD;
        PMPI_Barrier(w);
        const unsigned long long b0 = sent_bytes, c0 = mpi_calls;
        const double m0 = mpi_seconds;
        const double t0 = PMPI_Wtime();
        counting = !single;
        if (!single) {
          switch (o) {
          case OP_SUM:
            st = clprim_mpi_reduce_sum(ctx, w, n_local, type, bin, 0, &v);
            break;
          case OP_ARGMAX:
            st = clprim_mpi_argmax(ctx, w, n_local, type, bin, 0, &v, &index);
            break;
          case OP_SCAN:
            st = clprim_mpi_scan_inclusive(ctx, w, n_local, type, bin, clprim_buf(out));
            break;
          case OP_SELECT:
            st = clprim_mpi_select(ctx, w, n_local, type, bin, &pred, CLPRIM_INDICES_64,
                                   clprim_buf(out), clprim_buf(idx), &count, NULL, NULL);
            break;
          case OP_HIST:
            st = clprim_mpi_histogram_even(ctx, w, n_local, type, bin, lo, hi, bins,
                                           clprim_buf(counts), outside);
            break;
          case OP_NTH:
            st = clprim_mpi_nth_element(ctx, w, n_local, type, bin, total / 2, 0, &v);
            break;
          case OP_APPROX:
            st =
                clprim_mpi_nth_element_approx(ctx, w, n_local, type, bin, total / 2, 0, &v, &index);
            break;
          case OP_QUANT:
            st = clprim_mpi_quantiles(ctx, w, n_local, type, bin, qranks, (size_t)quantile_count, 0,
                                      qvalues);
            break;
          case OP_TOPK:
            st = clprim_mpi_topk(ctx, w, n_local, type, bin, k, 0, clprim_buf(topv),
                                 clprim_buf(NULL), &count, NULL);
            break;
          default:
            st = clprim_mpi_sort_keys(ctx, w, n_local, type, bin, clprim_buf(out), n_local + 1,
                                      &count);
            break;
          }
        } else { /* the same work on one device, without the MPI layer */
          switch (o) {
          case OP_SUM:
            st = clprim_reduce_sum(ctx, n_local, type, bin, 0, &v, clprim_buf(NULL));
            break;
          case OP_ARGMAX:
            st = clprim_argmax(ctx, n_local, type, bin, 0, &v, &index, clprim_buf(NULL));
            break;
          case OP_SCAN:
            st = clprim_scan_inclusive(ctx, n_local, type, bin, 0, clprim_buf(out));
            break;
          case OP_SELECT:
            st = clprim_select(ctx, n_local, type, bin, &pred, CLPRIM_INDICES_64, clprim_buf(out),
                               clprim_buf(idx), &count, clprim_buf(NULL));
            break;
          case OP_HIST:
            st = clprim_histogram_even(ctx, n_local, type, bin, lo, hi, bins, clprim_buf(counts),
                                       outside, clprim_buf(NULL));
            break;
          case OP_NTH:
            st = clprim_nth_element(ctx, n_local, type, bin, total / 2, 0, &v, clprim_buf(NULL));
            break;
          case OP_APPROX:
            st = clprim_nth_element_approx(ctx, n_local, type, bin, total / 2, 0, &v, &index,
                                           clprim_buf(NULL));
            break;
          case OP_QUANT:
            st = clprim_quantiles(ctx, n_local, type, bin, qranks, (size_t)quantile_count, 0,
                                  qvalues, clprim_buf(NULL));
            break;
          case OP_TOPK:
            st = clprim_topk(ctx, n_local, type, bin, k, 0, clprim_buf(topv), clprim_buf(NULL));
            break;
          default: st = clprim_sort_keys(ctx, n_local, type, bin, 0, 0, 0, clprim_buf(out)); break;
          }
        }
        clFinish(q);
        counting = 0;
        PMPI_Barrier(w);
        if (r >= 0) {
          times[r] = (PMPI_Wtime() - t0) * 1e3;
          if (!single) {
            comm[r] = (mpi_seconds - m0) * 1e3;
            clprim_mpi_last_profile(&prof);
            for (int ph = 0; ph < CLPRIM_MPI_PHASE_COUNT; ++ph)
              phase_t[(size_t)ph * (size_t)reps + (size_t)r] = prof.ms[ph];
          }
        }
        if (!single) bytes_call = sent_bytes - b0, calls_call = mpi_calls - c0;
        if (st != CLPRIM_SUCCESS) {
          fprintf(stderr, "rank %d: %s: %s\n", rank_, ops[o], clprim_mpi_status_name(st));
          failed = 1;
        }
        if (r == reps - 1) {
          med[single] = median(times, reps);
          if (!single) comm_ms = median(comm, reps);
        }
      }
    unsigned long long max_bytes = 0;
    PMPI_Reduce(&bytes_call, &max_bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
      if (json) {
        printf("{\"op\":\"%s\",\"ranks\":%d,\"scaling\":\"%s\",\"type\":\"%s\",\"n\":%llu,"
               "\"reps\":%d,\"ms\":%.4f,\"mpi_ms\":%.4f,\"mpi_bytes\":%llu,\"mpi_calls\":%llu",
               ops[o], size_, weak ? "weak" : "strong", clprim_type_name(type),
               (unsigned long long)total, reps, med[0], comm_ms, max_bytes, calls_call);
        if (med[1] >= 0) printf(",\"one_device_ms\":%.4f", med[1]);
        if (o == OP_QUANT) printf(",\"quantiles\":%d", quantile_count);
        if (o == OP_TOPK) printf(",\"k\":%llu", (unsigned long long)k);
        if (o == OP_HIST) printf(",\"bins\":%zu", bins);
      } else {
        printf("%-12s %9.3f %9.3f %20llu %10llu", ops[o], med[0], comm_ms, max_bytes, calls_call);
        if (med[1] >= 0)
          printf(" %14.3f\n", med[1]);
        else
          printf(" %14s\n", "-");
      }
      fflush(stdout);
    }
    if (strcmp(ops[o], "sort") == 0) {
      /* Each rank's phases (medians), printed by rank 0 in rank order. */
      double mine[CLPRIM_MPI_PHASE_COUNT + 4], *all = malloc(sizeof mine * (size_t)size_);
      for (int ph = 0; ph < CLPRIM_MPI_PHASE_COUNT; ++ph)
        mine[ph] = median(phase_t + (size_t)ph * (size_t)reps, reps);
      mine[CLPRIM_MPI_PHASE_COUNT] = (double)prof.bytes_sent;
      mine[CLPRIM_MPI_PHASE_COUNT + 1] = (double)prof.bytes_received;
      mine[CLPRIM_MPI_PHASE_COUNT + 2] = (double)prof.bytes_to_host;
      mine[CLPRIM_MPI_PHASE_COUNT + 3] = (double)prof.bytes_to_device;
      PMPI_Allgather(mine, CLPRIM_MPI_PHASE_COUNT + 4, MPI_DOUBLE, all, CLPRIM_MPI_PHASE_COUNT + 4,
                     MPI_DOUBLE, MPI_COMM_WORLD);
      /* The exchange's phases and the local sort on the slowest rank. */
      double exchange_ms = 0, local_sort_ms = 0;
      for (int r = 0; r < size_; ++r) {
        const double *a = all + (size_t)r * (CLPRIM_MPI_PHASE_COUNT + 4);
        const double x = a[CLPRIM_MPI_PHASE_TO_HOST] + a[CLPRIM_MPI_PHASE_EXCHANGE] +
                         a[CLPRIM_MPI_PHASE_TO_DEVICE];
        if (x > exchange_ms) exchange_ms = x;
        if (a[CLPRIM_MPI_PHASE_LOCAL_SORT] > local_sort_ms)
          local_sort_ms = a[CLPRIM_MPI_PHASE_LOCAL_SORT];
      }
      if (rank_ == 0) {
        if (json) printf(",\"phases\":[");
        for (int r = 0; r < size_; ++r) {
          const double *a = all + (size_t)r * (CLPRIM_MPI_PHASE_COUNT + 4);
          if (json) {
            printf("%s{\"rank\":%d", r ? "," : "", r);
            for (int ph = 0; ph < CLPRIM_MPI_PHASE_COUNT; ++ph)
              printf(",\"%s_ms\":%.3f", clprim_mpi_phase_name(ph), a[ph]);
            printf(",\"bytes_sent\":%.0f,\"bytes_received\":%.0f}", a[CLPRIM_MPI_PHASE_COUNT],
                   a[CLPRIM_MPI_PHASE_COUNT + 1]);
          } else {
            printf("#   rank %d phases (ms):", r);
            for (int ph = 0; ph < CLPRIM_MPI_PHASE_COUNT; ++ph)
              printf(" %s %.3f", clprim_mpi_phase_name(ph), a[ph]);
            printf("; sent %.0f B, received %.0f B\n", a[CLPRIM_MPI_PHASE_COUNT],
                   a[CLPRIM_MPI_PHASE_COUNT + 1]);
          }
        }
        if (json) printf("]");
      }
      free(all);
      if (size_ > 1) exchange_floor(ctx, out, reps, exchange_ms, med[0], local_sort_ms, json);
    }
    if (rank_ == 0 && json) printf("}\n");
    fflush(stdout);
  }
  free(times), free(comm), free(phase_t), free(qranks), free(qvalues), free(a2a_args);
  clReleaseMemObject(in), clReleaseMemObject(out), clReleaseMemObject(idx);
  clReleaseMemObject(topv), clReleaseMemObject(counts);
  clprim_context_free(ctx);
  MPI_Finalize();
  return failed;
}
