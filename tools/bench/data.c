/* Inputs shared by rows files (data.h). */
#include "data.h"

#include <math.h>

void *bench_random(struct bench *b, clprim_type type, size_t n, unsigned seed) {
  size_t es = clprim_type_size(type);
  unsigned char *p = bench_malloc(b, n * es);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    double u = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    switch (type) {
    case CLPRIM_INT32:
    case CLPRIM_UINT32:
      ((uint32_t *)p)[i] = (uint32_t)(u * 1000);
      break;
    case CLPRIM_INT64:
    case CLPRIM_UINT64:
      ((uint64_t *)p)[i] = (uint64_t)(u * 1000);
      break;
    case CLPRIM_FLOAT:
      ((float *)p)[i] = (float)u;
      break;
    case CLPRIM_DOUBLE:
      ((double *)p)[i] = u;
      break;
    }
  }
  return p;
}

uint32_t *bench_keys(struct bench *b, size_t n, size_t bins, int order) {
  uint32_t *k = bench_malloc(b, n * 4);
  uint64_t s = 0x243F6A8885A308D3ull;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    k[i] = order == 0 ? (uint32_t)(s % bins) : (uint32_t)((unsigned __int128)i * bins / n);
  }
  if (order == 2)
    for (size_t i = 0; i + 1 < n; ++i) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      if (s & 1) {
        uint32_t t = k[i];
        k[i] = k[i + 1], k[i + 1] = t;
      }
    }
  return k;
}

/* 0 uniform in [0, 1), 1 16 distinct values (the uniform data rounded down
 * to sixteenths), then normal, sorted, reverse sorted, all equal, 128 and
 * 1024 distinct values, half the elements equal to one value (the
 * median's: heavy duplicates of the answer), adversarial (99% within 1e-30
 * of 0, 1% spread over +-5e5). */
const char *const bench_selection_names[] = {
    "uniform", "16distinct",  "normal",       "sorted",     "reverse",
    "equal",   "128distinct", "1024distinct", "dup_answer", "adversarial"};

int bench_selection_count(const struct bench *b, clprim_type type) {
  return b->all_data && (type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE)
             ? BENCH_COUNT(bench_selection_names)
             : 2;
}

/* The uniform data rounded down: integers to multiples of 64 (of [0, 1000):
 * 16 values), floats to sixteenths. */
static void round_to_16_values(clprim_type type, unsigned char *host, size_t n) {
  for (size_t i = 0; i < n; ++i)
    switch (type) {
    case CLPRIM_INT32:
    case CLPRIM_UINT32:
      ((uint32_t *)host)[i] = ((uint32_t *)host)[i] / 64 * 64;
      break;
    case CLPRIM_INT64:
    case CLPRIM_UINT64:
      ((uint64_t *)host)[i] = ((uint64_t *)host)[i] / 64 * 64;
      break;
    case CLPRIM_FLOAT:
      ((float *)host)[i] = floorf(((float *)host)[i] * 16) / 16;
      break;
    case CLPRIM_DOUBLE:
      ((double *)host)[i] = floor(((double *)host)[i] * 16) / 16;
      break;
    }
}

/* Distributions 2 and up (float and double). */
static void float_distribution(clprim_type type, unsigned char *host, size_t n, int data) {
  uint64_t s = 0x2545F4914F6CDD1Dull + (uint64_t)data;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const double u = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    const double u2 = (double)(s & 0x7FFu) / 2048.0 + (double)i / (double)n / 2048.0;
    double v = 0;
    switch (data) {
    case 2:
      v = sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * u2);
      break;
    case 3:
      v = (double)i / (double)n;
      break;
    case 4:
      v = 1.0 - (double)i / (double)n;
      break;
    case 5:
      v = 0.5;
      break;
    case 6:
      v = (double)(s % 128) / 128;
      break;
    case 7:
      v = (double)(s % 1024) / 1024;
      break;
    case 8:
      v = u < 0.5 ? 0.5 : u;
      break;
    default:
      v = u < 0.99 ? 1e-30 * u2 : (u - 0.995) * 1e8;
      break;
    }
    if (type == CLPRIM_FLOAT)
      ((float *)host)[i] = (float)v;
    else
      ((double *)host)[i] = v;
  }
}

double bench_selection_load(struct bench *b, clprim_type type, unsigned char *host, cl_mem in,
                            size_t n, int data) {
  const size_t bytes = n * clprim_type_size(type);
  if (data) {
    if (data == 1)
      round_to_16_values(type, host, n);
    else
      float_distribution(type, host, n, data);
    cl_int err = clEnqueueWriteBuffer(b->queue, in, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    if (err != CL_SUCCESS) bench_fail_setup(b, "clEnqueueWriteBuffer", err);
  }
  return bench_read_ms(b, in, bytes);
}
