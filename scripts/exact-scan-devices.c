/* exact-scan-devices: the exact scans (CLPRIM_EXACT) give the same bits on
 * every device and path. Runs float and double, inclusive and exclusive
 * exact scans of the same data (every exponent; near-cancelling pairs of
 * every exponent, so the sum crosses 0 with its residue far below its
 * elements; uniform with a few infinities and a NaN) on the first GPU
 * (its default path and the local path) and the first CPU device (the
 * cpu and local paths), and compares every prefix's bits with the first
 * context's. tests/test_scan.c checks the bits against a host reference;
 * this carries that to devices where the tests do not run.
 *   cc -O2 -Iinclude scripts/exact-scan-devices.c -Lbuild -lclprim -lOpenCL -lm
 *   ./a.out [n]   (default 2^22; exit status 1 on any difference) */
#include <clprim/clprim.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) { /* xorshift64* */
  state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
  return state * 0x2545F4914F6CDD1Dull;
}
static double uniform(void) {
  return (double)(next() >> 11) * 0x1p-53;
}

static void make(int dbl, int kind, void *p, size_t n) {
  const int emin = dbl ? -1074 : -149, emax = dbl ? 1023 : 127;
  for (size_t i = 0; i < n; ++i) {
    const double sign = next() % 2 ? -1.0 : 1.0;
    double x = sign * ldexp(1 + uniform(), emin + (int)(next() % (unsigned)(emax - emin + 1)));
    if (kind == 1 && i % 2) { /* the negative of the one before, often one unit off */
      x = dbl ? -((double *)p)[i - 1] : -((float *)p)[i - 1];
      if (next() % 4)
        x = dbl ? nextafter(x, sign * INFINITY) : nextafterf((float)x, (float)(sign * INFINITY));
    }
    if (kind == 2) x = next() % 100000 == 0 ? sign * INFINITY : 2 * uniform() - 1;
    if (dbl)
      ((double *)p)[i] = x;
    else
      ((float *)p)[i] = isinf((float)x) && !isinf(x) ? (float)(sign * 0x1.fffffep127) : (float)x;
  }
  if (kind == 2 && n > 4) {
    if (dbl)
      ((double *)p)[n - n / 4] = NAN;
    else
      ((float *)p)[n - n / 4] = NAN;
  }
}

int main(int argc, char **argv) {
  const size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 22;
  const char *const devices[4] = {"gpu", "gpu", "cpu", "cpu"};
  const clprim_path paths[4] = {CLPRIM_PATH_AUTO, CLPRIM_PATH_LOCAL, CLPRIM_PATH_AUTO,
                                CLPRIM_PATH_LOCAL};
  clprim_context *ctx[4] = {NULL, NULL, NULL, NULL};
  for (int c = 0; c < 4; ++c) {
    clprim_options o;
    clprim_options_init(&o);
    o.device = devices[c], o.path = paths[c];
    if (clprim_context_create(&ctx[c], &o) != CLPRIM_SUCCESS) {
      printf("%s, path %d: no context\n", devices[c], (int)paths[c]);
      ctx[c] = NULL;
    }
  }
  unsigned char *host = malloc(n * 8), *first = malloc(n * 8), *got = malloc(n * 8);
  int bad = 0, runs = 0;
  for (int dbl = 0; dbl < 2; ++dbl)
    for (int kind = 0; kind < 3; ++kind) {
      const size_t es = dbl ? 8 : 4;
      make(dbl, kind, host, n);
      for (int inclusive = 0; inclusive < 2; ++inclusive) {
        int have_first = 0;
        for (int c = 0; c < 4; ++c) {
          if (!ctx[c]) continue;
          clprim_device_info info;
          clprim_context_get_info(ctx[c], &info, sizeof info);
          if (dbl && !info.has_fp64) continue;
          cl_int err;
          cl_mem buf = clCreateBuffer(clprim_context_cl_context(ctx[c]),
                                      CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * es, host, &err);
          const clprim_type t = dbl ? CLPRIM_DOUBLE : CLPRIM_FLOAT;
          const clprim_status st = err != CL_SUCCESS ? (clprim_status)err
                                   : inclusive
                                       ? clprim_scan_inclusive(ctx[c], n, t, clprim_buf(buf),
                                                               CLPRIM_EXACT, clprim_buf(buf))
                                       : clprim_scan_exclusive(ctx[c], n, t, clprim_buf(buf),
                                                               CLPRIM_EXACT, clprim_buf(buf));
          if (st == CLPRIM_SUCCESS)
            err = clEnqueueReadBuffer(clprim_context_queue(ctx[c]), buf, CL_TRUE, 0, n * es,
                                      have_first ? got : first, 0, NULL, NULL);
          if (buf) clReleaseMemObject(buf);
          const char *what = dbl ? "double" : "float";
          if (st != CLPRIM_SUCCESS || err != CL_SUCCESS) {
            printf("%s kind %d %s, %s path %s: %s\n", what, kind,
                   inclusive ? "inclusive" : "exclusive", info.device_name,
                   clprim_path_name(info.path), clprim_status_name(st));
            bad = 1;
            continue;
          }
          ++runs;
          if (!have_first) {
            have_first = 1;
            continue;
          }
          size_t diff = 0, at = 0;
          for (size_t i = n; i-- > 0;)
            if (memcmp(got + i * es, first + i * es, es) != 0) ++diff, at = i;
          printf("%s kind %d %s, %s path %s: %zu prefixes differ from the first context's%s\n",
                 what, kind, inclusive ? "inclusive" : "exclusive", info.device_name,
                 clprim_path_name(info.path), diff, diff ? " (FAIL)" : "");
          if (diff) printf("  first at %zu\n", at), bad = 1;
        }
      }
    }
  printf("%d runs, %s\n", runs, bad ? "DIFFERENCES" : "the same bits everywhere");
  for (int c = 0; c < 4; ++c)
    clprim_context_free(ctx[c]);
  free(host), free(first), free(got);
  return bad;
}
