/* Rows of the gather family: gather of n random elements by n random
 * uint32 indices in [0, n) (as Thrust's gather benchmark, whose indices
 * are random bits masked to the size), and scatter by a random
 * permutation, each against a copy of the bytes it reads and writes. */
#include "check.h"
#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gather_arg {
  int scatter;
  size_t n, es;
  cl_mem in, indices, out;
};

static clprim_status call_gather(clprim_context *ctx, void *p) {
  struct gather_arg *a = p;
  if (a->scatter)
    return clprim_scatter(ctx, a->n, a->es, clprim_buf(a->in), CLPRIM_UINT32,
                          clprim_buf(a->indices), 0, clprim_buf(a->out), a->n);
  return clprim_gather(ctx, a->n, a->es, clprim_buf(a->in), a->n, CLPRIM_UINT32,
                       clprim_buf(a->indices), 0, clprim_buf(a->out));
}

/* n uint32 indices (xorshift64*): random in [0, n), or a random
 * permutation of [0, n) (Fisher-Yates). */
static uint32_t *random_indices(struct bench *b, size_t n, int permutation, unsigned seed) {
  uint32_t *p = bench_malloc(b, n * 4);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    const uint64_t r = s * 0x2545F4914F6CDD1Dull;
    if (!permutation) {
      p[i] = (uint32_t)((r >> 32) % n);
    } else {
      const size_t j = (size_t)((r >> 16) % (i + 1));
      p[i] = p[j], p[j] = (uint32_t)i;
    }
  }
  return p;
}

/* gather (random indices) and scatter (a permutation) of n elements of
 * type with uint32 indices, against a copy of the bytes they move: the
 * indices and the elements read, the elements written (n (4 + 2 es)
 * bytes, a copy of half of them). in and out hold n (es + 2) bytes, so
 * that the copy runs between them. */
static void run_gather(struct bench *b, clprim_type type, size_t n) {
  const size_t es = clprim_type_size(type), copy_bytes = n * (es + 2);
  struct gather_arg a;
  memset(&a, 0, sizeof a);
  a.n = n, a.es = es;
  void *elements = bench_random(b, type, n, 17);
  unsigned char *host = bench_malloc(b, copy_bytes);
  memcpy(host, elements, n * es);
  memset(host + n * es, 0, copy_bytes - n * es);
  bench_free(b, elements);
  a.in = bench_buffer(b, copy_bytes, host);
  bench_free(b, host);
  a.out = bench_buffer(b, copy_bytes, NULL);
  const double copy = bench_copy_ms(b, a.in, a.out, copy_bytes);
  for (int scatter = 0; scatter < 2; ++scatter) {
    const char *op = scatter ? "scatter" : "gather";
    if (!bench_wants(b, op)) continue;
    uint32_t *indices = random_indices(b, n, scatter, scatter ? 23 : 19);
    a.indices = bench_buffer(b, n * 4, indices);
    bench_free(b, indices);
    a.scatter = scatter;
    bench_report_copy(b, op, scatter ? "a permutation" : "random indices", type, n, call_gather, &a,
                      (double)n * (4 + 2 * es), copy);
    bench_release(b, a.indices);
    a.indices = NULL;
  }
  bench_release(b, a.in);
  bench_release(b, a.out);
}

/* The input gathered by indices from it (below 2^31, taken modulo n) or
 * scattered by a permutation made from it, compared with the CPU's. */
static int check_move(struct bench_check *c, int scatter) {
  const size_t n = c->n;
  uint32_t *indices = check_host(c, n * 4), *got = check_host(c, n * 4);
  if (!indices || !got) return 0;
  for (size_t i = 0; i < n; ++i) {
    if (!scatter) {
      indices[i] = c->host[i] % (uint32_t)n;
    } else {
      const size_t j = c->host[i] % (i + 1);
      indices[i] = indices[j], indices[j] = (uint32_t)i;
    }
  }
  struct gather_arg a;
  memset(&a, 0, sizeof a);
  a.scatter = scatter, a.n = n, a.es = 4, a.in = c->in;
  a.indices = check_buffer(c, n * 4, indices), a.out = check_buffer(c, n * 4, NULL);
  if (!a.indices || !a.out || !check_ok(c, call_gather(c->ctx, &a)) ||
      !check_read(c, a.out, n * 4, got))
    return 0;
  for (size_t i = 0; i < n; ++i)
    if (scatter ? got[indices[i]] != c->host[i] : got[i] != c->host[indices[i]]) return 0;
  return 1;
}
static int check_gather(struct bench_check *c) {
  return check_move(c, 0);
}
static int check_scatter(struct bench_check *c) {
  return check_move(c, 1);
}

static const struct bench_op ops[] = {
    {"gather", 0x3Fu, "n elements gathered by n random uint32 indices in [0, n)", check_gather},
    {"scatter", 0x3Fu, "n elements scattered by a random permutation (uint32 indices)",
     check_scatter},
};

static clprim_status startup_gather(const struct bench_startup_inputs *in) {
  return clprim_gather(in->ctx, in->n, 4, clprim_buf(in->in), in->n, CLPRIM_UINT32,
                       clprim_buf(in->keys), 0, clprim_buf(in->out));
}

static const struct bench_startup startup[] = {{"gather", startup_gather}};

const struct bench_family bench_gather = {
    "gather", ops, BENCH_COUNT(ops), run_gather, startup, BENCH_COUNT(startup),
    "a team of work-items per element (a word each); scatter by atomic exchange (4- and 8-byte "
    "elements) or a winner per target marked first",
    NULL,
    "a work-item per contiguous share of the elements; scatter by atomic exchange or a winner "
    "per target marked first"};
