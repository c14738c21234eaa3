/* exact-bits.c: the exact sums' bits on every path of a device, from one
 * input file, so that runs on different platforms (PoCL 3.1, PoCL 5,
 * NVIDIA) can be compared with diff (docs/ACCURACY.md, "Checking it").
 *
 *   ./exact-bits gen FILE [SEED]   writes the input file: for float, then
 *                                  double, KINDS blocks of BLOCK elements
 *   ./exact-bits run FILE > OUT    sums, sums by key (runs, dense) and scans every block with
 *                                  CLPRIM_EXACT on every path the device runs
 *                                  ($CLPRIM_DEVICE) and prints one line per
 *                                  result (an array's: its hash)
 *
 * `run` exits 1 when two paths of the device disagree (the lines differ)
 * and prints, on stderr, which paths ran. The lines hold no device or path
 * name, so two platforms' outputs must be identical.
 * Build: gcc -O2 -Iinclude -Ibuild/include scripts/exact-bits.c -o exact-bits
 *        build/libclprim.a -lOpenCL -lm -lpthread */
#include <clprim/clprim.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KINDS = 8, BLOCK = 1 << 16, DENSE_KEYS = 3000, LINES = 4096, LINE = 96 };
static const char *const kind_name[KINDS] = {"uniform",   "exponents", "cancelling", "wide",
                                             "subnormal", "special",   "overflow",   "neg_zero"};

static uint64_t state;
static uint64_t next(void) { /* splitmix64 */
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double uniform(void) {
  return (double)(next() >> 11) * 0x1p-53;
}
static double sign(void) {
  return next() & 1 ? -1.0 : 1.0;
}

/* Element i of block `kind` for a type with exponents in [emin, emax] and
 * mantissa bits p, as a double (exact in the type). */
static double element(int kind, size_t i, int emin, int emax, int p, double big) {
  const double sub = ldexp(1.0, emin - p + 1); /* the smallest subnormal */
  switch (kind) {
  case 0:
    return 2 * uniform() - 1;
  case 1: /* every exponent but the top 20 (the overflow block has those) */
    return sign() * ldexp(1 + uniform(), emin + (int)(next() % (uint64_t)(emax - 20 - emin)));
  case 2:
    return 0; /* pairs: filled by the caller */
  case 3:
    return sign() * ldexp(1 + uniform(), (int)(next() % 300) - 150); /* 90 decades */
  case 4:
    return sign() * sub * (double)(next() % (1ull << (p - 1)));
  case 5: {
    const uint64_t r = next() % 1000;
    if (i % 4096 == 17) return r < 500 ? INFINITY : r < 800 ? -INFINITY : NAN;
    return sign() * ldexp(1 + uniform(), (int)(next() % 40) - 20);
  }
  case 6:
    return sign() * big * (0.5 + 0.5 * uniform());
  default:
    return -0.0;
  }
}

static int gen(const char *file, uint64_t seed) {
  state = seed;
  FILE *f = fopen(file, "wb");
  if (!f) return 1;
  for (int t = 0; t < 2; ++t)
    for (int kind = 0; kind < KINDS; ++kind) {
      double *x = malloc(BLOCK * sizeof *x);
      for (size_t i = 0; i < BLOCK; ++i)
        x[i] = t == 0 ? element(kind, i, -126, 127, 24, FLT_MAX)
                      : element(kind, i, -1022, 1023, 53, DBL_MAX);
      if (kind == 2) { /* x and -x (exact in the type), shuffled, and one small value */
        for (size_t i = 0; i + 1 < BLOCK; i += 2) {
          const double v = element(1, i, t ? -1000 : -120, t ? 1000 : 120, 0, 0);
          x[i] = t == 0 ? (double)(float)v : v;
          x[i + 1] = -x[i];
        }
        for (size_t i = BLOCK - 1; i > 0; --i) {
          const size_t j = next() % (i + 1);
          const double s = x[i];
          x[i] = x[j];
          x[j] = s;
        }
        x[BLOCK / 3] = t == 0 ? 0x1p-140 : 0x1p-1070;
      }
      for (size_t i = 0; i < BLOCK; ++i) {
        if (t == 0) {
          const float v = (float)x[i];
          fwrite(&v, 4, 1, f);
        } else {
          fwrite(&x[i], 8, 1, f);
        }
      }
      free(x);
    }
  return fclose(f) != 0;
}

/* One result line: text, or the FNV-1a hash of m elements' bits. */
static char lines[LINES][LINE];
static int line_count;
static void put(const char *op, clprim_type t, int kind, size_t n, const unsigned char *bits,
                size_t m) {
  uint64_t h = 0xcbf29ce484222325ull;
  const size_t es = clprim_type_size(t);
  for (size_t i = 0; i < m * es; ++i)
    h = (h ^ bits[i]) * 0x100000001b3ull;
  if (line_count < LINES) {
    if (m == 1) {
      uint64_t v = 0;
      memcpy(&v, bits, es);
      snprintf(lines[line_count++], LINE, "%s %s %s n=%zu: 0x%0*llx", op, clprim_type_name(t),
               kind_name[kind], n, (int)(2 * es), (unsigned long long)v);
    } else {
      snprintf(lines[line_count++], LINE, "%s %s %s n=%zu: %zu results, hash %016llx", op,
               clprim_type_name(t), kind_name[kind], n, m, (unsigned long long)h);
    }
  }
}

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const clprim_status s_ = (call);                                                               \
    if (s_ != CLPRIM_SUCCESS) {                                                                    \
      fprintf(stderr, "%s: %s (%s)\n", #call, clprim_status_name(s_),                              \
              clprim_context_last_error(ctx));                                                     \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

/* Every exact sum of one path over the file's blocks, into lines[]. */
static int sums(clprim_context *ctx, const unsigned char *data) {
  cl_context cl = clprim_context_cl_context(ctx);
  cl_command_queue q = clprim_context_queue(ctx);
  static const size_t prefixes[] = {0, 1, 2, 1000, 4097, 16384, 16385, 65535, BLOCK};
  const size_t segs = 600;
  uint64_t *begins = malloc(segs * 8), *ends = malloc(segs * 8);
  size_t at = 0;
  for (size_t s = 0; s < segs; ++s) { /* lengths 0, 1, 2, ... and a few long ones */
    const size_t len = s % 50 == 49 ? 4000 + s : s % 7 == 3 ? 0 : s % 97;
    begins[s] = at < BLOCK ? at : BLOCK;
    ends[s] = at + len < BLOCK ? at + len : BLOCK;
    at += len;
  }
  cl_int err;
  cl_mem b = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, segs * 8, begins, &err);
  cl_mem e = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, segs * 8, ends, &err);
  cl_mem out = clCreateBuffer(cl, CL_MEM_READ_WRITE, segs * 8, NULL, &err);
  unsigned char *host = malloc(segs * 8), *scanned = malloc(BLOCK * 8);
  cl_mem scan = clCreateBuffer(cl, CL_MEM_READ_WRITE, BLOCK * 8, NULL, &err);
  /* the keys of reduce_by_key: runs of 1 to 96 elements and some of 5000 */
  uint32_t *key = malloc(BLOCK * 4);
  for (size_t i = 0, run = 0; i < BLOCK; ++run)
    for (size_t len = run % 40 == 39 ? 5000 : 1 + run % 96; len > 0 && i < BLOCK; --len)
      key[i++] = (uint32_t)run;
  cl_mem keys = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, BLOCK * 4, key, &err);
  cl_mem unique = clCreateBuffer(cl, CL_MEM_READ_WRITE, BLOCK * 4, NULL, &err);
  /* the keys of reduce_by_key_dense: scattered over DENSE_KEYS */
  for (size_t i = 0; i < BLOCK; ++i) key[i] = (uint32_t)((i * 2654435761u) >> 7) % DENSE_KEYS;
  cl_mem dense_keys =
      clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, BLOCK * 4, key, &err);
  free(key);
  size_t offset = 0;
  for (clprim_type t = CLPRIM_FLOAT; t <= CLPRIM_DOUBLE; ++t) {
    const size_t es = clprim_type_size(t);
    for (int kind = 0; kind < KINDS; ++kind, offset += BLOCK * es) {
      cl_mem in = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, BLOCK * es,
                                 (void *)(data + offset), &err);
      for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; ++p) {
        clprim_value v;
        CHECK(clprim_reduce_sum(ctx, prefixes[p], t, clprim_buf(in), CLPRIM_EXACT, &v,
                                clprim_buf(NULL)));
        put("reduce_sum", t, kind, prefixes[p], (const unsigned char *)&v, 1);
      }
      CHECK(clprim_segmented_sum(ctx, BLOCK, t, clprim_buf(in), segs, CLPRIM_UINT64, clprim_buf(b),
                                 clprim_buf(e), CLPRIM_EXACT, clprim_buf(out)));
      CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, segs * es, host, 0, NULL, NULL) != CL_SUCCESS
                ? CLPRIM_ERROR_INVALID_ARGUMENT
                : CLPRIM_SUCCESS);
      put("segmented_sum", t, kind, BLOCK, host, segs);
      for (int inclusive = 0; inclusive < 2; ++inclusive) {
        CHECK((inclusive ? clprim_scan_inclusive : clprim_scan_exclusive)(
            ctx, BLOCK, t, clprim_buf(in), CLPRIM_EXACT, clprim_buf(scan)));
        CHECK(clEnqueueReadBuffer(q, scan, CL_TRUE, 0, BLOCK * es, scanned, 0, NULL, NULL) !=
                      CL_SUCCESS
                  ? CLPRIM_ERROR_INVALID_ARGUMENT
                  : CLPRIM_SUCCESS);
        put(inclusive ? "scan_inclusive" : "scan_exclusive", t, kind, BLOCK, scanned, BLOCK);
      }
      uint64_t runs = 0;
      CHECK(clprim_reduce_by_key(ctx, BLOCK, CLPRIM_UINT32, clprim_buf(keys), t, clprim_buf(in),
                                 CLPRIM_EXACT, clprim_buf(unique), clprim_buf(scan), &runs,
                                 clprim_buf(NULL)));
      CHECK(clEnqueueReadBuffer(q, scan, CL_TRUE, 0, runs * es, scanned, 0, NULL, NULL) !=
                    CL_SUCCESS
                ? CLPRIM_ERROR_INVALID_ARGUMENT
                : CLPRIM_SUCCESS);
      put("reduce_by_key", t, kind, BLOCK, scanned, runs);
      for (size_t bins = 50; bins <= DENSE_KEYS; bins *= 60) { /* local words, global words */
        CHECK(clprim_reduce_by_key_dense(ctx, BLOCK, CLPRIM_UINT32, clprim_buf(dense_keys), t,
                                         clprim_buf(in), bins, CLPRIM_EXACT, clprim_buf(scan),
                                         clprim_buf(NULL), NULL, clprim_buf(NULL)));
        CHECK(clEnqueueReadBuffer(q, scan, CL_TRUE, 0, bins * es, scanned, 0, NULL, NULL) !=
                      CL_SUCCESS
                  ? CLPRIM_ERROR_INVALID_ARGUMENT
                  : CLPRIM_SUCCESS);
        put("reduce_by_key_dense", t, kind, BLOCK, scanned, bins);
      }
      clprim_pipeline *pipe;
      CHECK(clprim_pipeline_create(&pipe, ctx, 1, &t));
      CHECK(clprim_pipeline_map(pipe, t, t == CLPRIM_FLOAT ? "a * 3.0f" : "a * 3.0"));
      CHECK(clprim_pipeline_filter_expr(pipe, "x > 0"));
      CHECK(clprim_pipeline_reduce(pipe, CLPRIM_PIPE_SUM, CLPRIM_EXACT));
      const clprim_buffer inputs = clprim_buf(in);
      CHECK(clprim_pipeline_run(pipe, BLOCK, &inputs, NULL));
      clprim_value v;
      uint64_t index;
      CHECK(clprim_pipeline_read_result(pipe, &v, &index));
      put("pipeline_sum", t, kind, BLOCK, (const unsigned char *)&v, 1);
      clprim_pipeline_free(pipe);
      clReleaseMemObject(in);
    }
  }
  clReleaseMemObject(b);
  clReleaseMemObject(e);
  clReleaseMemObject(out);
  clReleaseMemObject(scan);
  clReleaseMemObject(keys);
  clReleaseMemObject(unique);
  clReleaseMemObject(dense_keys);
  free(scanned);
  free(begins);
  free(ends);
  free(host);
  return 0;
}

static int run(const char *file) {
  const size_t bytes = (size_t)KINDS * BLOCK * 12;
  unsigned char *data = malloc(bytes);
  FILE *f = fopen(file, "rb");
  if (!f || fread(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "exact-bits: cannot read %s\n", file);
    return 2;
  }
  fclose(f);
  static char first[LINES][LINE];
  int first_count = -1, status = 0;
  clprim_context *probe;
  clprim_device_info info;
  if (clprim_context_create(&probe, NULL) != CLPRIM_SUCCESS ||
      clprim_context_get_info(probe, &info, sizeof info) != CLPRIM_SUCCESS) {
    fprintf(stderr, "exact-bits: no context (%s)\n", clprim_context_last_error(NULL));
    return 2;
  }
  clprim_context_free(probe);
  for (int p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    if (!(info.paths_available & (1u << p))) continue;
    clprim_options o;
    clprim_options_init(&o);
    o.path = (clprim_path)p;
    clprim_context *ctx;
    if (clprim_context_create(&ctx, &o) != CLPRIM_SUCCESS) return 2;
    line_count = 0;
    const int failed = sums(ctx, data);
    fprintf(stderr, "path %s: %s\n", clprim_path_name((clprim_path)p), failed ? "failed" : "ran");
    clprim_context_free(ctx);
    if (failed) return 2;
    if (first_count < 0) {
      memcpy(first, lines, sizeof lines);
      first_count = line_count;
    } else if (line_count != first_count || memcmp(first, lines, sizeof lines) != 0) {
      for (int i = 0; i < line_count; ++i)
        if (strcmp(first[i], lines[i]) != 0)
          fprintf(stderr, "path %s differs: %s (first path: %s)\n",
                  clprim_path_name((clprim_path)p), lines[i], first[i]);
      status = 1;
    }
  }
  for (int i = 0; i < first_count; ++i)
    printf("%s\n", first[i]);
  free(data);
  return first_count < 0 ? 2 : status;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "gen") == 0)
    return gen(argv[2], argc > 3 ? strtoull(argv[3], NULL, 0) : 20261130u);
  if (argc == 3 && strcmp(argv[1], "run") == 0) return run(argv[2]);
  fprintf(stderr, "usage: exact-bits gen FILE [SEED] | exact-bits run FILE\n");
  return 2;
}
