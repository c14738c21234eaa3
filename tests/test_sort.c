/* test_sort: radix sort (clprim_sort_keys, clprim_sort_pairs,
 * clprim_argsort, clprim_segmented_sort_keys / _pairs) against a CPU
 * reference, a stable sort on the host (qsort of (key, index) pairs, the
 * key being test_order_key's, or its bits [begin, end) for a bit range),
 * compared bit for bit: keys_out must hold the input elements' bits in the
 * reference order, values and indices exactly the reference's.
 * Covered, for every key type and every path the device runs:
 *  - keys alone, pairs with 4- and 8-byte values (a distinct random
 *    payload, so any instability shows), argsort with uint32 and uint64
 *    indices, with and without keys_out; ascending and descending;
 *  - sizes 0, 1, 2, 31, 32, 33, around clprim__sort_small_max (one
 *    work-group in local memory), clprim__sort_tile (sort_tile's tile) and
 *    clprim__sort_pass_tile (the digit passes' tile), 2 and 5 tiles of
 *    sort_tile's, 2 and 3 of the passes', and 100003 (small sizes only under
 *    CLPRIM_TEST_SMALL, where fewer mode / direction combinations run);
 *  - distributions: random bits (full range: floats then include NaNs,
 *    infinities and denormals), sorted, reverse sorted, all equal, 2, 16 and
 *    1024 distinct values, low entropy (AND of 2 or 3 random words), keys
 *    varying in their low 20 bits only (3 of the digit passes), special
 *    values;
 *  - stability: duplicate-heavy keys with value = index (4 and 8 bytes) and
 *    argsort, ascending and descending;
 *  - special values of float / double: NaNs of several payloads and both
 *    signs (bits kept, all equal, last ascending, first descending), -0.0
 *    and +0.0 (equal, so input order; bits kept), +-inf, denormals, +-min,
 *    +-max; integer extremes;
 *  - bit ranges of integer keys: [0,8), [4,20), [8,32), [0,0) (whole),
 *    [0,32), [16,16) (empty: input order), [31,32), 64-bit [20,50),
 *    [32,64), [63,64), [0,24) and more; float / double [0, bits) as the
 *    whole key;
 *  - in place: keys_out = keys_in, pairs with both or either in place,
 *    argsort with keys_out = keys_in; at offset 0 and unaligned, with 0 to 8
 *    digit passes that move keys (odd and even counts);
 *  - offsets: inputs and outputs at unaligned element offsets and at an
 *    aligned one (1024 elements), the elements around every output
 *    untouched, the input unchanged when not in place;
 *  - errors write nothing (outputs and in-place inputs checked): bad type,
 *    unknown flags, begin_bit > end_bit, end_bit past the key, a partial
 *    range of float keys, a value type that is none, a NULL output, NULL ctx,
 *    overlapping ranges that are not the very same, keys_out = values_in,
 *    indices on keys, buffers too small, n >= 2^32 with uint32 indices;
 *  - segmented keys and pairs: empty segments, length 1, one segment longer
 *    than a tile, 2^12 segments of 1024 keys (2^6 under CLPRIM_TEST_SMALL),
 *    random lengths with some longer than small_max, segments in shuffled
 *    order with gaps between them (the gaps of keys_out keep a sentinel),
 *    in place, at offsets; uint32 and uint64 offsets (under
 *    CLPRIM_TEST_SMALL one of them, by turns); a segment with begin > end
 *    or end > n fails with nothing written, with either offset type;
 *  - the digit passes at small sizes on contexts of the test's own
 *    (sort.small_max=0, sort.items=4: many small tiles), so
 *    that they also run under Oclgrind.
 * `test_sort --passes` runs the whole suite with those two knobs set on
 * the suite's contexts: every sort above 0 keys takes the digit passes
 * (count, scan and scatter; look-back on nv_ptx).
 * A mismatch is reported (the first 40 per cmocka test) and the test goes
 * on with its other cases; the cmocka test fails at its end. */
#include "common.h"

/* The public calls take a value type; the tests' modes count value bytes. */
#define BAD_VALUE_TYPE ((clprim_type)9)
static clprim_type value_type_of(size_t bytes) { return bytes == 4 ? CLPRIM_UINT32 : CLPRIM_UINT64; }

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAD 8                  /* sentinel elements after every range */
#define SENT_OUT 0xA5          /* sentinel byte of output buffers */
#define SENT_IN 0xC3           /* sentinel byte around inputs */
#define SMALL_N 3000           /* largest n under CLPRIM_TEST_SMALL */
#define BIG_N ((size_t)100003) /* the larger size */

/* ----------------------------------------------------------- reporting */
static unsigned failures;
#define MAX_REPORTS 40

static void report(const char *fmt, ...) {
  if (failures++ >= MAX_REPORTS) return;
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

/* Fails the running cmocka test if any case of it failed. */
static void finish(void) {
  const unsigned f = failures;
  failures = 0;
  if (f) fail_msg("%u case(s) failed (the first ones printed above)", f);
}

/* Under Oclgrind (small sizes) the test's buffers live until the suite
 * ends: Oclgrind takes a buffer made where a released one was for
 * uninitialised, even after it is written (seen as reports in sort_pass and
 * sort_count that a run without releases does not give). */
static cl_mem *kept;
static size_t kept_count, kept_room;
static void release(cl_mem m) {
  if (!test_small()) {
    clReleaseMemObject(m);
    return;
  }
  if (kept_count == kept_room) {
    kept_room = kept_room ? 2 * kept_room : 64;
    kept = realloc(kept, kept_room * sizeof *kept);
    assert_non_null(kept);
  }
  kept[kept_count++] = m;
}
static void release_kept(void) {
  for (size_t i = 0; i < kept_count; ++i)
    clReleaseMemObject(kept[i]);
  free(kept);
  kept = NULL, kept_count = kept_room = 0;
}

/* Under CLPRIM_TEST_SMALL (Oclgrind, where a call takes seconds): 1 if
 * this case is one of every `stride` cases, taken in turn from a phase the
 * seed draws (main), so that successive runs take other cases; else
 * always 1. */
static unsigned picks;
static int passes_run; /* --passes: every sort takes the digit passes */
static int pick(unsigned stride) {
  return !test_small() || picks++ % stride == 0;
}

/* ------------------------------------------------------------- elements */
static unsigned key_bits(clprim_type type) {
  return (unsigned)clprim_type_size(type) * 8;
}

static void put(clprim_type type, void *data, size_t i, uint64_t bits) {
  if (clprim_type_size(type) == 4) {
    const uint32_t b = (uint32_t)bits;
    memcpy((unsigned char *)data + i * 4, &b, 4);
  } else {
    memcpy((unsigned char *)data + i * 8, &bits, 8);
  }
}

static uint64_t get(size_t es, const void *data, size_t i) {
  if (es == 4) {
    uint32_t b;
    memcpy(&b, (const unsigned char *)data + i * 4, 4);
    return b;
  }
  uint64_t b;
  memcpy(&b, (const unsigned char *)data + i * 8, 8);
  return b;
}

static int is_float(clprim_type type) {
  return type == CLPRIM_FLOAT || type == CLPRIM_DOUBLE;
}

/* ------------------------------------------------------------ reference */
struct ref {
  uint64_t key;
  size_t index;
};
static int ref_asc(const void *a, const void *b) {
  const struct ref *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}
static int ref_desc(const void *a, const void *b) {
  const struct ref *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The key element i sorts by: its order key (integers: the bits, a signed
 * type's sign bit flipped; floats: -0.0 = +0.0, every NaN one above +inf),
 * of an integer key only bits [begin, end) ([0, 0): all). */
static uint64_t sort_key(clprim_type type, const void *keys, size_t i, unsigned begin,
                         unsigned end) {
  const uint64_t k = test_order_key(type, keys, i);
  if (begin == 0 && end == 0) return k;
  const unsigned bits = end - begin;
  if (bits == 0) return 0;
  if (bits == 64) return k;
  return (k >> begin) & ((1ull << bits) - 1);
}

/* perm[r]: the input position of the key that the stable sort puts at r. */
static size_t *reference(clprim_type type, const void *keys, size_t n, unsigned begin, unsigned end,
                         int desc) {
  struct ref *r = malloc((n ? n : 1) * sizeof *r);
  size_t *perm = malloc((n ? n : 1) * sizeof *perm);
  assert_non_null(r);
  assert_non_null(perm);
  for (size_t i = 0; i < n; ++i)
    r[i].key = sort_key(type, keys, i, begin, end), r[i].index = i;
  qsort(r, n, sizeof *r, desc ? ref_desc : ref_asc);
  for (size_t i = 0; i < n; ++i)
    perm[i] = r[i].index;
  free(r);
  return perm;
}

/* -------------------------------------------------------- distributions */
enum {
  D_RANDOM,
  D_SORTED,
  D_REVERSE,
  D_EQUAL,
  D_FEW2,
  D_FEW16,
  D_FEW1024,
  D_LOW,
  D_NARROW,
  D_SPECIAL,
  D_COUNT
};
static const char *const dist_names[D_COUNT] = {
    "random bits", "sorted",        "reverse sorted", "all equal",   "2 distinct",
    "16 distinct", "1024 distinct", "low entropy",    "low 20 bits", "special values"};

/* Bit patterns: NaNs (quiet, signalling, negative, other payloads), -0,
 * +0, +inf, -inf, denormals (smallest, largest, both signs), +-min normal,
 * +-max, +-1. */
static const uint32_t special32[] = {
    0x7FC00000u, 0x7FC00001u, 0xFFC00000u, 0x7F800001u, 0xFF80ABCDu, 0x7FFFFFFFu, 0x80000000u,
    0x00000000u, 0x7F800000u, 0xFF800000u, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu,
    0x00800000u, 0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xBF800000u};
static const uint64_t special64[] = {
    0x7FF8000000000000ull, 0x7FF8000000000001ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull,
    0xFFF0000DEADBEEF0ull, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0x0000000000000000ull,
    0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull,
    0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x8010000000000000ull,
    0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, 0x3FF0000000000000ull, 0xBFF0000000000000ull};
/* Integer extremes (the low 32 bits of the 64-bit ones for 32-bit keys
 * are not used: those have their own). */
static const uint32_t extreme32[] = {0,           1,           0xFFFFFFFFu, 0x80000000u,
                                     0x7FFFFFFFu, 0x80000001u, 0xFFFFFFFEu, 2};
static const uint64_t extreme64[] = {0,
                                     1,
                                     ~0ull,
                                     0x8000000000000000ull,
                                     0x7FFFFFFFFFFFFFFFull,
                                     0x8000000000000001ull,
                                     ~1ull,
                                     0x00000000FFFFFFFFull,
                                     0xFFFFFFFF00000000ull};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void fill(clprim_type type, void *data, size_t n, unsigned dist) {
  const int wide = clprim_type_size(type) == 8;
  uint64_t pool[1024];
  switch (dist) {
  case D_RANDOM:
  case D_SORTED:
  case D_REVERSE:
    for (size_t i = 0; i < n; ++i)
      put(type, data, i, test_rand());
    if (dist != D_RANDOM && n) {
      size_t *perm = reference(type, data, n, 0, 0, dist == D_REVERSE);
      const size_t es = clprim_type_size(type);
      unsigned char *copy = malloc(n * es);
      memcpy(copy, data, n * es);
      for (size_t i = 0; i < n; ++i)
        memcpy((unsigned char *)data + i * es, copy + perm[i] * es, es);
      free(copy);
      free(perm);
    }
    break;
  case D_EQUAL: {
    const uint64_t v = test_rand();
    for (size_t i = 0; i < n; ++i)
      put(type, data, i, v);
    break;
  }
  case D_FEW2:
  case D_FEW16:
  case D_FEW1024: {
    const size_t k = dist == D_FEW2 ? 2 : dist == D_FEW16 ? 16 : 1024;
    for (size_t j = 0; j < k; ++j)
      pool[j] = test_rand();
    for (size_t i = 0; i < n; ++i)
      put(type, data, i, pool[test_rand() % k]);
    break;
  }
  case D_LOW: {
    const int three = (int)(test_rand() & 1);
    for (size_t i = 0; i < n; ++i) {
      uint64_t v = test_rand() & test_rand();
      if (three) v &= test_rand();
      put(type, data, i, v);
    }
    break;
  }
  case D_NARROW: {
    /* The order key's low 20 bits vary, its top bits are one value's. */
    uint64_t base;
    if (is_float(type))
      base = wide ? 0x3FE0000000000000ull : 0x3F000000u; /* 0.5: positive, so bits = key bits */
    else
      base = test_rand() & ~0xFFFFFFull;
    for (size_t i = 0; i < n; ++i)
      put(type, data, i, base | (test_rand() & 0xFFFFFu));
    break;
  }
  case D_SPECIAL:
    for (size_t i = 0; i < n; ++i) {
      const uint64_t r = test_rand();
      uint64_t v;
      if (r % 4 == 0)
        v = test_rand(); /* ordinary values among them */
      else if (type == CLPRIM_FLOAT)
        v = special32[(r >> 8) % COUNT(special32)];
      else if (type == CLPRIM_DOUBLE)
        v = special64[(r >> 8) % COUNT(special64)];
      else if (wide)
        v = extreme64[(r >> 8) % COUNT(extreme64)];
      else
        v = extreme32[(r >> 8) % COUNT(extreme32)];
      put(type, data, i, v);
    }
    break;
  }
}

/* Values of vsize bytes: value = index, or a random payload whose low 32
 * bits are distinct (a bijection of the index), so any reordering of equal
 * keys shows. */
static void fill_values(void *values, size_t n, size_t vsize, int index_values) {
  const uint32_t salt = (uint32_t)test_rand();
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = index_values
                     ? (uint64_t)i
                     : ((test_rand() << 32) | (uint32_t)((uint32_t)i * 0x9E3779B1u ^ salt));
    if (vsize == 4) {
      const uint32_t v32 = (uint32_t)v;
      memcpy((unsigned char *)values + i * 4, &v32, 4);
    } else {
      memcpy((unsigned char *)values + i * 8, &v, 8);
    }
  }
}

/* --------------------------------------------------------------- checks */
enum call { CALL_KEYS, CALL_PAIRS, CALL_ARGSORT };

struct mode {
  enum call call;
  size_t vsize;  /* pairs: value bytes; argsort: index bytes */
  int with_keys; /* argsort: keys_out given */
  const char *name;
};
static const struct mode modes[] = {
    {CALL_KEYS, 0, 1, "keys"},
    {CALL_PAIRS, 4, 1, "pairs (4-byte values)"},
    {CALL_PAIRS, 8, 1, "pairs (8-byte values)"},
    {CALL_ARGSORT, 4, 1, "argsort (uint32 indices, keys_out)"},
    {CALL_ARGSORT, 4, 0, "argsort (uint32 indices)"},
    {CALL_ARGSORT, 8, 1, "argsort (uint64 indices, keys_out)"},
    {CALL_ARGSORT, 8, 0, "argsort (uint64 indices)"},
};
#define MODES ((unsigned)COUNT(modes))
enum { M_KEYS, M_PAIRS4, M_PAIRS8, M_ARG32K, M_ARG32, M_ARG64K, M_ARG64 };

/* Value bytes the library sizes its tiles by. */
static size_t mode_vbytes(const struct mode *m) {
  return m->call == CALL_KEYS ? 0 : m->vsize;
}

struct sort_case {
  clprim_type type;
  struct mode mode;
  unsigned begin, end; /* bit range */
  int desc;
  unsigned in_place;    /* 1: keys_out is keys_in's range; 2: values_out is values_in's */
  size_t in_at, out_at; /* element offsets: inputs; outputs not in place */
  int index_values;     /* pairs: value = index */
};

static const char *path_of(clprim_context *ctx) {
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  return clprim_path_name(info.path);
}

static void describe(const struct sort_case *c, clprim_context *ctx, size_t n, const char *what,
                     char *buf, size_t size) {
  snprintf(buf, size,
           "%s %s%s n=%zu bits=[%u,%u) %s in_at=%zu out_at=%zu in_place=%u path=%s dist=%s",
           clprim_type_name(c->type), c->mode.name, c->index_values ? " (value = index)" : "", n,
           c->begin, c->end, c->desc ? "descending" : "ascending", c->in_at, c->out_at, c->in_place,
           path_of(ctx), what);
}

/* A host image of a buffer: `at` sentinel elements, the n elements of data
 * (sentinels if NULL), PAD sentinel elements. */
static unsigned char *image(size_t at, size_t n, size_t es, const void *data, int sentinel) {
  const size_t bytes = (at + n + PAD) * es;
  unsigned char *p = malloc(bytes);
  assert_non_null(p);
  memset(p, sentinel, bytes);
  if (n && data) memcpy(p + at * es, data, n * es);
  return p;
}

/* Compares a buffer's bytes with the expected image; reports the first
 * difference (inside the range [at, at + n) of elements of es bytes, or
 * outside it: an element written that must not be) and how many elements
 * differ. Returns 1 when equal. */
static int compare(const char *desc, const char *which, const unsigned char *got,
                   const unsigned char *want, size_t bytes, size_t es, size_t at, size_t n,
                   const size_t *perm) {
  if (memcmp(got, want, bytes) == 0) return 1;
  size_t first = SIZE_MAX, bad = 0;
  for (size_t e = 0; e < bytes / es; ++e)
    if (memcmp(got + e * es, want + e * es, es) != 0) {
      if (first == SIZE_MAX) first = e;
      ++bad;
    }
  const uint64_t g = get(es, got, first), w = get(es, want, first);
  if (first >= at && first < at + n)
    report("%s: %s element %zu is 0x%llx, expected 0x%llx (input %zu); %zu elements differ", desc,
           which, first - at, (unsigned long long)g, (unsigned long long)w,
           perm ? perm[first - at] : (size_t)0, bad);
  else
    report("%s: %s element %lld of the buffer (outside the range) is 0x%llx, was 0x%llx; %zu "
           "elements differ",
           desc, which, (long long)first - (long long)at, (unsigned long long)g,
           (unsigned long long)w, bad);
  return 0;
}

static cl_mem buffer_of(clprim_context *ctx, const unsigned char *img, size_t bytes) {
  return test_buffer(ctx, bytes, img);
}

/* Sorts keys (n, of c->type) as c says and checks every output, the
 * sentinels around it and the input. Returns 1 when all matched. */
static int check_sort(clprim_context *ctx, const struct sort_case *c, const void *keys, size_t n,
                      const char *what) {
  char desc[400];
  describe(c, ctx, n, what, desc, sizeof desc);
  const size_t es = clprim_type_size(c->type), vs = c->mode.vsize;
  const int pairs = c->mode.call == CALL_PAIRS, arg = c->mode.call == CALL_ARGSORT;
  const int want_keys = !arg || c->mode.with_keys;
  const int keys_in_place = (c->in_place & 1) && want_keys;
  const int values_in_place = pairs && (c->in_place & 2);
  size_t *perm = reference(c->type, keys, n, c->begin, c->end, c->desc);

  void *values = NULL;
  if (pairs) {
    values = malloc((n ? n : 1) * vs);
    fill_values(values, n, vs, c->index_values);
  }
  /* Inputs, and outputs: sentinel-filled, or the input's buffer in place. */
  unsigned char *kin_img = image(c->in_at, n, es, keys, SENT_IN);
  const size_t kin_bytes = (c->in_at + n + PAD) * es;
  cl_mem kin = buffer_of(ctx, kin_img, kin_bytes);
  const size_t kat = keys_in_place ? c->in_at : c->out_at;
  const size_t kout_bytes = (kat + n + PAD) * es;
  unsigned char *kout_want = keys_in_place ? image(c->in_at, n, es, keys, SENT_IN)
                                           : image(c->out_at, n, es, NULL, SENT_OUT);
  cl_mem kout = NULL;
  if (want_keys) kout = keys_in_place ? kin : buffer_of(ctx, kout_want, kout_bytes);
  unsigned char *vin_img = NULL, *vout_want = NULL;
  cl_mem vin = NULL, vout = NULL;
  const size_t vat = values_in_place ? c->in_at : c->out_at;
  const size_t vin_bytes = (c->in_at + n + PAD) * (vs ? vs : 1),
               vout_bytes = (vat + n + PAD) * (vs ? vs : 1);
  if (pairs) {
    vin_img = image(c->in_at, n, vs, values, SENT_IN);
    vin = buffer_of(ctx, vin_img, vin_bytes);
    vout_want = values_in_place ? image(c->in_at, n, vs, values, SENT_IN)
                                : image(c->out_at, n, vs, NULL, SENT_OUT);
    vout = values_in_place ? vin : buffer_of(ctx, vout_want, vout_bytes);
  } else if (arg) {
    vout_want = image(c->out_at, n, vs, NULL, SENT_OUT);
    vout = buffer_of(ctx, vout_want, vout_bytes);
  }

  const unsigned flags =
      (c->desc ? CLPRIM_SORT_DESCENDING : 0u) | (arg && vs == 8 ? (unsigned)CLPRIM_INDICES_64 : 0u);
  int st = CLPRIM_SUCCESS;
  switch (c->mode.call) {
  case CALL_KEYS:
    st = clprim_sort_keys(ctx, n, c->type, clprim_buf_at(kin, c->in_at), c->begin, c->end, flags,
                          clprim_buf_at(kout, kat));
    break;
  case CALL_PAIRS:
    st = clprim_sort_pairs(ctx, n, c->type, clprim_buf_at(kin, c->in_at), value_type_of(vs),
                           clprim_buf_at(vin, c->in_at), c->begin, c->end, flags,
                           clprim_buf_at(kout, kat), clprim_buf_at(vout, vat));
    break;
  case CALL_ARGSORT:
    st = clprim_argsort(ctx, n, c->type, clprim_buf_at(kin, c->in_at), c->begin, c->end, flags,
                        clprim_buf_at(vout, vat),
                        want_keys ? clprim_buf_at(kout, kat) : clprim_buf(NULL));
    break;
  }
  int ok = 1;
  if (st != CLPRIM_SUCCESS) {
    report("%s: returned %s", desc, clprim_status_name(st));
    ok = 0;
  } else {
    /* The expected outputs. */
    for (size_t r = 0; r < n; ++r) {
      if (want_keys)
        memcpy(kout_want + (kat + r) * es, (const unsigned char *)keys + perm[r] * es, es);
      if (pairs)
        memcpy(vout_want + (vat + r) * vs, (const unsigned char *)values + perm[r] * vs, vs);
      if (arg) put(vs == 8 ? CLPRIM_UINT64 : CLPRIM_UINT32, vout_want + vat * vs, r, perm[r]);
    }
    size_t most = kout_bytes > kin_bytes ? kout_bytes : kin_bytes;
    if (vout_bytes > most) most = vout_bytes;
    if (vin_bytes > most) most = vin_bytes;
    unsigned char *got = malloc(most);
    assert_non_null(got);
    if (want_keys) {
      test_read(ctx, kout, kout_bytes, got);
      ok &= compare(desc, "key", got, kout_want, kout_bytes, es, kat, n, perm);
    }
    if (pairs || arg) {
      test_read(ctx, vout, vout_bytes, got);
      ok &= compare(desc, pairs ? "value" : "index", got, vout_want, vout_bytes, vs, vat, n, perm);
    }
    if (!keys_in_place) {
      test_read(ctx, kin, kin_bytes, got);
      ok &= compare(desc, "input key (must not change)", got, kin_img, kin_bytes, es, c->in_at, n,
                    NULL);
    }
    if (pairs && !values_in_place) {
      test_read(ctx, vin, vin_bytes, got);
      ok &= compare(desc, "input value (must not change)", got, vin_img, vin_bytes, vs, c->in_at, n,
                    NULL);
    }
    free(got);
  }
  release(kin);
  if (kout && kout != kin) release(kout);
  if (vin) release(vin);
  if (vout && vout != vin) release(vout);
  free(kin_img);
  free(kout_want);
  free(vin_img);
  free(vout_want);
  free(values);
  free(perm);
  return ok;
}

/* ------------------------------------------------------------- contexts */
/* The contexts to test: each path the device runs, and the default one
 * only when it is not one of those. */
static int skip_path(unsigned p) {
  clprim_context *ctx = contexts.ctx[p];
  return !ctx || (p == CLPRIM_PATH_AUTO && contexts.ctx[ctx->info.path]);
}

/* Sizes to test for keys of type with vbytes of values: the fixed small
 * ones, around small_max (m), sort_tile's tile (t) and the passes' tile
 * (pt), several tiles, BIG_N; ascending, without repeats; under
 * CLPRIM_TEST_SMALL at most SMALL_N. */
static size_t sizes_of(clprim_context *ctx, clprim_type type, size_t vbytes, size_t *out) {
  const size_t m = clprim__sort_small_max(ctx, type, vbytes),
               t = clprim__sort_tile(ctx, type, vbytes),
               pt = clprim__sort_pass_tile(ctx, type, vbytes);
  const size_t cand[] = {0,      1,          2,           31,    32,     33,
                         m ? m - 1 : 0,      m,           m + 1, t - 1,  t,
                         t + 1,  2 * t + 1,  5 * t + 3,   pt - 1, pt,    pt + 1,
                         2 * pt + 1,         3 * pt + 5,  BIG_N, test_small() ? 2500 : 0};
  size_t count = 0;
  for (size_t i = 0; i < COUNT(cand); ++i) {
    const size_t n = cand[i];
    if (test_small() && n > SMALL_N) continue;
    size_t at = 0;
    while (at < count && out[at] < n)
      ++at;
    if (at < count && out[at] == n) continue;
    memmove(out + at + 1, out + at, (count - at) * sizeof *out);
    out[at] = n, ++count;
  }
  return count;
}

/* --------------------------------------------------------- every type */
/* Every mode, size and direction, with the distribution, the offsets and
 * (every fifth case) in-place outputs rotating; at the sizes of 2 tiles
 * and up, every distribution once more. Under CLPRIM_TEST_SMALL each mode
 * once, at a size and in a direction that turn with the mode and type. */
static void test_type(clprim_type type) {
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    if (!test_has_type(ctx, type)) return;
    const size_t es = clprim_type_size(type);
    unsigned rot = (unsigned)type;
    for (unsigned md = 0; md < MODES; ++md) {
      const struct mode *mode = &modes[md];
      size_t sizes[32];
      const size_t count = sizes_of(ctx, type, mode_vbytes(mode), sizes);
      if (md == 0)
        printf("%s on %s: small_max %zu, tile %zu, pass tile %zu (keys alone)\n",
               clprim_type_name(type), path_of(ctx), clprim__sort_small_max(ctx, type, 0),
               clprim__sort_tile(ctx, type, 0), clprim__sort_pass_tile(ctx, type, 0));
      const size_t t = clprim__sort_tile(ctx, type, mode_vbytes(mode));
      for (size_t s = 0; s < count; ++s) {
        const size_t n = sizes[s];
        void *keys = malloc((n ? n : 1) * es);
        for (int desc = 0; desc < 2; ++desc, ++rot) {
          /* Oclgrind: each mode once per type, at a size and direction in turn */
          if (test_small() && (s != (md * 3 + (unsigned)type) % count ||
                               (unsigned)desc != (md + (unsigned)type) % 2))
            continue;
          const unsigned d = rot % D_COUNT;
          fill(type, keys, n, d);
          struct sort_case c;
          memset(&c, 0, sizeof c);
          c.type = type, c.mode = *mode, c.desc = desc;
          c.in_at = rot % 3 == 1 ? 3 : 0, c.out_at = rot % 3 == 2 ? 7 : rot % 3 == 1 ? 5 : 0;
          if (rot % 5 == 4) c.in_place = 3;
          check_sort(ctx, &c, keys, n, dist_names[d]);
        }
        if (n >= 2 * t && !test_small())
          for (unsigned d = 0; d < D_COUNT; ++d, ++rot) {
            fill(type, keys, n, d);
            struct sort_case c;
            memset(&c, 0, sizeof c);
            c.type = type, c.mode = *mode, c.desc = (int)(rot & 1);
            check_sort(ctx, &c, keys, n, dist_names[d]);
          }
        free(keys);
      }
    }
  }
  finish();
}
TEST_EVERY_TYPE

/* ----------------------------------------------------- special values */
/* float / double full of NaNs (several payloads, both signs), zeros of
 * both signs, infinities, denormals: bits kept, NaNs last ascending and
 * first descending, -0.0 and +0.0 (and all NaNs) in input order. Every
 * mode and direction; integer extremes too. */
static void test_special_values(void **state) {
  (void)state;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!is_float(type) && test_small()) continue;
      if (!test_has_type(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      for (unsigned md = 0; md < MODES; ++md) {
        const size_t m = clprim__sort_small_max(ctx, type, mode_vbytes(&modes[md]));
        const size_t tile = clprim__sort_tile(ctx, type, mode_vbytes(&modes[md]));
        const size_t sizes[] = {2, 33, m + 1, 3 * tile + 5, BIG_N};
        for (size_t s = 0; s < COUNT(sizes); ++s) {
          const size_t n = sizes[s];
          if (test_small() && (n > SMALL_N || !pick(24))) continue;
          if (!is_float(type) && n == BIG_N) continue;
          void *keys = malloc(n * es);
          for (int desc = 0; desc < 2; ++desc) {
            fill(type, keys, n, D_SPECIAL);
            if (n == 2 && is_float(type)) { /* -0.0 before +0.0, and the other way round */
              put(type, keys, desc, es == 4 ? 0x80000000u : 0x8000000000000000ull);
              put(type, keys, 1 - desc, 0);
            }
            struct sort_case c;
            memset(&c, 0, sizeof c);
            c.type = type, c.mode = modes[md], c.desc = desc;
            c.out_at = (md + s) % 2 ? 3 : 0;
            check_sort(ctx, &c, keys, n, dist_names[D_SPECIAL]);
          }
          free(keys);
        }
      }
      if (!is_float(type)) continue;
      /* Keys whose plain bits share the high digits while their keys do
       * not: -0.0 among the two smallest negative numbers, NaNs with -inf
       * (the negative NaNs' bits lie just above -inf's). A histogram that
       * took the plain bits for the keys would drop passes these need. */
      const uint64_t trap_base[2] = {es == 4 ? 0x80000000u : 0x8000000000000000ull,
                                     es == 4 ? 0xFF800000u : 0xFFF0000000000000ull};
      for (unsigned trap = 0; trap < 2; ++trap)
        for (unsigned md = 0; md < MODES; ++md) {
          const size_t vb = mode_vbytes(&modes[md]);
          const size_t n = test_small() ? clprim__sort_small_max(ctx, type, vb) + 1
                                        : 3 * clprim__sort_tile(ctx, type, vb) + 5;
          if (test_small() && (n > SMALL_N || md != trap)) continue;
          void *keys = malloc(n * es);
          for (size_t i = 0; i < n; ++i) put(type, keys, i, trap_base[trap] + test_rand() % 3);
          for (int desc = 0; desc < 2; ++desc) {
            struct sort_case c;
            memset(&c, 0, sizeof c);
            c.type = type, c.mode = modes[md], c.desc = desc;
            check_sort(ctx, &c, keys, n, trap ? "-inf and NaNs" : "-0.0 and tiny negatives");
          }
          free(keys);
        }
      /* Every special value once, in each of its table's order and reversed. */
      const size_t n = es == 4 ? COUNT(special32) : COUNT(special64);
      void *keys = malloc(n * es);
      for (int rev = 0; rev < 2; ++rev)
        for (int desc = 0; desc < 2; ++desc) {
          if (test_small() && rev != desc) continue;
          for (size_t i = 0; i < n; ++i)
            put(type, keys, i,
                es == 4 ? special32[rev ? n - 1 - i : i] : special64[rev ? n - 1 - i : i]);
          struct sort_case c;
          memset(&c, 0, sizeof c);
          c.type = type, c.mode = modes[(unsigned)(rev * 2 + desc) % MODES], c.desc = desc;
          check_sort(ctx, &c, keys, n, "each special value once");
        }
      free(keys);
    }
  }
  finish();
}

/* ---------------------------------------------------------- stability */
/* Duplicate-heavy keys (2 and 16 distinct values; special values for
 * floats: many NaNs and zeros) with value = index, 4- and 8-byte, and
 * argsort: equal keys keep their input order, ascending and descending. */
static void test_stability(void **state) {
  (void)state;
  const clprim_type types[] = {CLPRIM_INT32, CLPRIM_UINT64, CLPRIM_FLOAT, CLPRIM_DOUBLE};
  const unsigned ms[] = {M_PAIRS4, M_PAIRS8, M_ARG32, M_ARG64K};
  const unsigned dists[] = {D_FEW2, D_FEW16, D_SPECIAL};
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (size_t t = 0; t < COUNT(types); ++t) {
      const clprim_type type = types[t];
      if (!test_has_type(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      for (size_t k = 0; k < COUNT(ms); ++k) {
        const struct mode *mode = &modes[ms[k]];
        const size_t m = clprim__sort_small_max(ctx, type, mode_vbytes(mode));
        const size_t tile = clprim__sort_tile(ctx, type, mode_vbytes(mode));
        const size_t sizes[] = {33, m + 1, 2 * tile + 1, BIG_N};
        for (size_t s = 0; s < COUNT(sizes); ++s) {
          const size_t n = sizes[s];
          if (test_small() && (n > SMALL_N || !pick(28))) continue;
          void *keys = malloc(n * es);
          for (int desc = 0; desc < 2; ++desc) {
            const unsigned d = dists[(s + k + (size_t)desc) % COUNT(dists)];
            fill(type, keys, n, d);
            struct sort_case c;
            memset(&c, 0, sizeof c);
            c.type = type, c.mode = *mode, c.desc = desc, c.index_values = 1;
            check_sort(ctx, &c, keys, n, dist_names[d]);
          }
          free(keys);
        }
      }
    }
  }
  finish();
}

/* ---------------------------------------------------------- bit ranges */
/* Integer keys by bits [begin, end) of their order key (a signed key's
 * sign bit flipped); empty ranges keep the input order; float / double
 * with [0, bits) sort by the whole key. */
static void test_bit_ranges(void **state) {
  (void)state;
  static const unsigned r32[][2] = {{0, 8},  {4, 20},  {8, 32}, {0, 0},  {16, 16},
                                    {0, 32}, {31, 32}, {0, 1},  {0, 24}, {32, 32}};
  static const unsigned r64[][2] = {{0, 8},   {20, 50}, {32, 64}, {0, 0},   {16, 16}, {0, 64},
                                    {63, 64}, {0, 24},  {8, 32},  {60, 61}, {64, 64}};
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    unsigned rot = 0;
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!test_has_type(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      const unsigned(*ranges)[2] = es == 4 ? r32 : r64;
      const size_t nr = is_float(type) ? 2 : es == 4 ? COUNT(r32) : COUNT(r64);
      for (size_t r = 0; r < nr; ++r) {
        unsigned begin = ranges[r][0], end = ranges[r][1];
        if (is_float(type)) begin = 0, end = r ? key_bits(type) : 0;
        for (unsigned sz = 0; sz < 4; ++sz, ++rot) {
          const struct mode *mode = &modes[rot % MODES];
          const size_t m = clprim__sort_small_max(ctx, type, mode_vbytes(mode));
          const size_t tile = clprim__sort_tile(ctx, type, mode_vbytes(mode));
          const size_t sizes[4] = {33, m + 1, 3 * tile + 5, BIG_N};
          const size_t n = sizes[sz];
          if (test_small() && (n > SMALL_N || !pick(10))) continue;
          void *keys = malloc(n * es);
          const unsigned d = rot % 3 == 0 ? D_LOW : rot % 3 == 1 ? D_RANDOM : D_FEW1024;
          fill(type, keys, n, d);
          struct sort_case c;
          memset(&c, 0, sizeof c);
          c.type = type, c.mode = *mode, c.begin = begin, c.end = end, c.desc = (int)(rot / 2 % 2);
          c.out_at = rot % 4 == 3 ? 5 : 0;
          check_sort(ctx, &c, keys, n, dist_names[d]);
          free(keys);
        }
      }
    }
  }
  finish();
}

/* ------------------------------------------------------------ in place */
/* keys_out = keys_in; pairs with keys, values or both in place; argsort
 * with keys_out = keys_in; at offset 0 and 3 (unaligned). The digit passes
 * that move keys vary from 0 (all equal) to 8, odd and even (bit ranges of
 * 8, 16, 24 bits, keys varying in their low 20 bits, whole keys). */
static void test_in_place(void **state) {
  (void)state;
  struct variant {
    unsigned dist, begin, end;
  };
  static const struct variant vars[] = {{D_EQUAL, 0, 0},   {D_RANDOM, 0, 8}, {D_RANDOM, 0, 16},
                                        {D_RANDOM, 0, 24}, {D_NARROW, 0, 0}, {D_RANDOM, 0, 0},
                                        {D_FEW16, 0, 0}};
  static const struct {
    unsigned mode, in_place;
  } kinds[] = {{M_KEYS, 1},   {M_PAIRS4, 3}, {M_PAIRS8, 3}, {M_PAIRS4, 1},
               {M_PAIRS8, 2}, {M_ARG32K, 1}, {M_ARG64K, 1}};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!test_has_type(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      for (size_t k = 0; k < COUNT(kinds); ++k) {
        const struct mode *mode = &modes[kinds[k].mode];
        const size_t m = clprim__sort_small_max(ctx, type, mode_vbytes(mode));
        const size_t tile = clprim__sort_tile(ctx, type, mode_vbytes(mode));
        const size_t sizes[] = {1, 33, m, m + 1, 2 * tile + 1, BIG_N};
        for (size_t s = 0; s < COUNT(sizes); ++s) {
          const size_t n = sizes[s];
          if (test_small() && (n > SMALL_N || !pick(28))) continue;
          void *keys = malloc((n ? n : 1) * es);
          const unsigned nv = test_small() ? 1 : n == BIG_N ? 2 : (unsigned)COUNT(vars);
          for (unsigned v = 0; v < nv; ++v, ++rot) {
            const struct variant *var = &vars[(v + (unsigned)s + (unsigned)k) % COUNT(vars)];
            const int ranged = var->end != 0 && !is_float(type);
            fill(type, keys, n, var->dist);
            struct sort_case c;
            memset(&c, 0, sizeof c);
            c.type = type, c.mode = *mode, c.in_place = kinds[k].in_place;
            c.begin = ranged ? var->begin : 0, c.end = ranged ? var->end : 0;
            c.desc = (int)(rot & 1);
            c.in_at = rot % 3 == 0 ? 3 : 0;
            c.out_at = 5; /* outputs that are not in place */
            check_sort(ctx, &c, keys, n, dist_names[var->dist]);
          }
          free(keys);
        }
      }
    }
  }
  finish();
}

/* ------------------------------------------------------------- offsets */
/* Inputs and outputs at unaligned element offsets (1, 3, 5, 7: below any
 * sub-buffer alignment) and at 1024 elements (aligned on any device), every
 * type and mode; the elements around every output keep their sentinel,
 * the inputs stay as they were. */
static void test_offsets(void **state) {
  (void)state;
  static const size_t ats[][2] = {{1, 3}, {5, 0}, {0, 7}, {1024, 1024}, {3, 1024}, {1024, 1}};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!test_has_type(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      for (unsigned md = 0; md < MODES; ++md) {
        const size_t m = clprim__sort_small_max(ctx, type, mode_vbytes(&modes[md]));
        const size_t tile = clprim__sort_tile(ctx, type, mode_vbytes(&modes[md]));
        const size_t sizes[] = {33, m + 1, 2 * tile + 1};
        for (size_t s = 0; s < COUNT(sizes); ++s, ++rot) {
          const size_t n = sizes[s];
          if (test_small() && (n > SMALL_N || !pick(18))) continue;
          void *keys = malloc(n * es);
          const unsigned d = rot % D_COUNT;
          fill(type, keys, n, d);
          struct sort_case c;
          memset(&c, 0, sizeof c);
          c.type = type, c.mode = modes[md], c.desc = (int)(rot & 1);
          c.in_at = ats[rot % COUNT(ats)][0], c.out_at = ats[rot % COUNT(ats)][1];
          check_sort(ctx, &c, keys, n, dist_names[d]);
          free(keys);
        }
      }
    }
  }
  finish();
}

/* -------------------------------------------------------------- errors */
/* Reads buf and checks it still holds img; reports `what` otherwise. */
static void expect_unchanged(clprim_context *ctx, cl_mem buf, const unsigned char *img,
                             size_t bytes, const char *what) {
  unsigned char *got = malloc(bytes);
  test_read(ctx, buf, bytes, got);
  if (memcmp(got, img, bytes) != 0) report("%s: a failed call wrote to a buffer", what);
  free(got);
}

#define EXPECT(status, call)                                                                       \
  do {                                                                                             \
    const int got_ = (int)(call);                                                                  \
    if (got_ != (int)(status))                                                                     \
      report("line %d: %s returned %s, expected %s", __LINE__, #call, clprim_status_name(got_),    \
             clprim_status_name(status));                                                          \
  } while (0)

static void test_errors(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  const size_t n = 3000;
  const clprim_type U = CLPRIM_UINT32, F = CLPRIM_FLOAT, D = CLPRIM_DOUBLE, U64 = CLPRIM_UINT64;
  const unsigned DESC = CLPRIM_SORT_DESCENDING, I64 = CLPRIM_INDICES_64;
  /* Every buffer holds 2n + PAD 8-byte words of random bits. */
  const size_t bytes = (2 * n + PAD) * 8;
  unsigned char *in_img = malloc(bytes), *out_img = malloc(bytes);
  for (size_t i = 0; i < bytes / 8; ++i) {
    const uint64_t r = test_rand();
    memcpy(in_img + i * 8, &r, 8);
  }
  memset(out_img, SENT_OUT, bytes);
  /* clprim_sort_tile: the one-work-group size of each key type, alone and
   * with values of each type, 0 for bad arguments. */
  for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t)
    if (ctx->info.has_fp64 || t != CLPRIM_DOUBLE) {
      assert_int_equal(clprim_sort_tile(ctx, (clprim_type)t, NULL),
                       clprim__sort_small_max(ctx, (clprim_type)t, 0));
      for (int v = 0; v < CLPRIM_TYPE_COUNT; ++v) {
        const clprim_type vt = (clprim_type)v;
        assert_int_equal(clprim_sort_tile(ctx, (clprim_type)t, &vt),
                         clprim__sort_small_max(ctx, (clprim_type)t, clprim_type_size(vt)));
      }
    }
  const clprim_type no_type = (clprim_type)9;
  assert_int_equal(clprim_sort_tile(NULL, U, NULL), 0);
  assert_int_equal(clprim_sort_tile(ctx, no_type, NULL), 0);
  assert_int_equal(clprim_sort_tile(ctx, U, &no_type), 0);
  cl_mem keys = test_buffer(ctx, bytes, in_img), vals = test_buffer(ctx, bytes, in_img);
  cl_mem kout = test_buffer(ctx, bytes, out_img), vout = test_buffer(ctx, bytes, out_img);
  cl_mem small = test_buffer(ctx, 4 * n - 4, out_img); /* n - 1 4-byte elements */
  cl_mem bo = NULL, eo = NULL;
  const clprim_buffer K = clprim_buf(keys), V = clprim_buf(vals), KO = clprim_buf(kout),
                      VO = clprim_buf(vout), S = clprim_buf(small), NONE = clprim_buf(NULL);

  /* ctx NULL */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(NULL, n, U, K, 0, 0, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(NULL, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(NULL, n, U, K, 0, 0, 0, VO, KO));
  /* bad type */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, (clprim_type)6, K, 0, 0, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, (clprim_type)-1, K, 0, 0, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_sort_pairs(ctx, n, (clprim_type)6, K, CLPRIM_UINT32, V, 0, 0, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, (clprim_type)6, K, 0, 0, 0, VO, KO));
  /* unknown flags: CLPRIM_INDICES_64 is argsort's alone */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 0, 0, 2, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 0, 0, I64, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 0, 0, 0x80000000u, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, I64, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 0, 0, 2 | DESC, VO, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 0, 0, 0x40000000u, VO, KO));
  /* bit ranges */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 8, 4, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 1, 0, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 0, 33, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 40, 40, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, CLPRIM_INT32, K, 16, 33, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n / 2, U64, K, 0, 65, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 20, 10, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 0, 40, 0, VO, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 9, 8, 0, VO, NONE));
  /* partial ranges of float keys */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, F, K, 0, 16, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, F, K, 16, 32, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, F, K, 0, 31, DESC, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, F, K, 16, 16, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, F, K, CLPRIM_UINT32, V, 1, 32, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, F, K, 8, 32, 0, VO, KO));
  if (ctx->info.has_fp64) {
    EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n / 2, D, K, 0, 32, 0, KO));
    EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n / 2, D, K, 32, 64, 0, VO, KO));
  } else {
    EXPECT(CLPRIM_ERROR_UNSUPPORTED_TYPE, clprim_sort_keys(ctx, n / 2, D, K, 0, 0, 0, KO));
  }
  /* value sizes */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, BAD_VALUE_TYPE, V, 0, 0, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, BAD_VALUE_TYPE, V, 0, 0, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, BAD_VALUE_TYPE, V, 0, 0, 0, KO, VO));
  /* NULL buffers */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 0, 0, 0, NONE));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, NONE, 0, 0, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, NONE, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, KO, NONE));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, NONE, 0, 0, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 0, 0, 0, NONE, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 0, 0, 0, NONE, NONE));
  /* overlaps that are not the very same range */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_sort_keys(ctx, n, U, K, 0, 0, 0, clprim_buf_at(keys, 1)));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_sort_keys(ctx, n, U, clprim_buf_at(keys, 5), 0, 0, 0, K));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_sort_keys(ctx, n, U, K, 0, 0, 0, clprim_buf_at(keys, n - 1)));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, KO, clprim_buf_at(vals, 2)));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, KO, clprim_buf_at(kout, n / 2)));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, KO, KO)); /* values_out = keys_out */
  /* keys_out = values_in (same range, same element size) */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, V, VO));
  /* values_out = keys_in */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, KO, K));
  /* argsort: indices on keys_in or keys_out, keys_out overlapping keys_in */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 0, 0, 0, K, NONE));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 0, 0, 0, KO, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_argsort(ctx, n, U, K, 0, 0, 0, VO, clprim_buf_at(keys, 3)));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_argsort(ctx, n, U, K, 0, 0, I64, clprim_buf_at(kout, 1), clprim_buf_at(kout, 2)));
  /* buffers too small */
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_sort_keys(ctx, n, U, K, 0, 0, 0, S));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_sort_keys(ctx, n, U, S, 0, 0, 0, KO));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_sort_keys(ctx, n, U, K, 0, 0, 0, clprim_buf_at(kout, bytes / 4 - n + 1)));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_sort_keys(ctx, n, U, clprim_buf_at(keys, bytes / 4 - n + 1), 0, 0, 0, KO));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, 0, 0, KO, S));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, S, 0, 0, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_sort_pairs(ctx, bytes / 8 + 1, U, K, CLPRIM_UINT64, V, 0, 0, 0, KO, VO)); /* 8-byte values */
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_argsort(ctx, n, U, K, 0, 0, 0, S, NONE));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL, clprim_argsort(ctx, n, U, K, 0, 0, 0, VO, S));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_argsort(ctx, n / 2 + 1, U, K, 0, 0, I64, clprim_buf(small), NONE));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_sort_keys(ctx, bytes / 8 + 1, U64, K, 0, 0, 0, KO)); /* 8-byte keys */
#if SIZE_MAX > 0xFFFFFFFFu
  EXPECT(CLPRIM_ERROR_SIZE_TOO_LARGE,
         clprim_argsort(ctx, (size_t)1 << 32, U, K, 0, 0, 0, VO, NONE));
#endif

  /* Segmented: flags, NULL buffers, overlaps, value sizes, small buffers. */
  uint64_t *offs = malloc(8 * 8);
  for (int i = 0; i < 8; ++i)
    offs[i] = (uint64_t)i * 100;
  bo = test_buffer(ctx, 8 * 8, offs);
  for (int i = 0; i < 8; ++i)
    offs[i] = (uint64_t)i * 100 + 50;
  eo = test_buffer(ctx, 8 * 8, offs);
  const clprim_buffer B = clprim_buf(bo), E = clprim_buf(eo);
  const clprim_type O64 = CLPRIM_UINT64, O32 = CLPRIM_UINT32;
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(NULL, n, U, K, 8, O64, B, E, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, (clprim_type)6, K, 8, O64, B, E, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, O64, B, E, 2, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, O64, B, E, I64, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, O64, B, E, 0, NONE));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, O64, NONE, E, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, O64, B, NONE, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, O64, B, E, 0, clprim_buf_at(keys, 1)));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_segmented_sort_keys(ctx, n, U, K, 9, O64, B, E, 0, KO)); /* 9 offsets in 8 */
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, O64, B, E, 0, S));
  /* uint32 offsets: 16 fit in the 64 bytes, 17 do not; only uint32 and uint64 are offset types. */
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_segmented_sort_keys(ctx, n, U, K, 17, O32, B, E, 0, KO));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, O32, clprim_buf_at(bo, 9), E, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, U, K, 8, F, B, E, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_keys(ctx, n, U, K, 0, CLPRIM_INT64, B, E, 0, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 8, (clprim_type)9, B, E, 0, KO,
                                     VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_pairs(ctx, n, U, K, BAD_VALUE_TYPE, V, 8, O64, B, E, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_pairs(ctx, n, U, K, BAD_VALUE_TYPE, V, 8, O64, B, E, 0, KO, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 8, O64, B, E, 0, V, VO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 8, O64, B, E, 0, KO, K));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 8, O64, B, E, 0, KO, KO));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 8, O64, B, E, 0, KO,
                                     clprim_buf_at(vals, 1)));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT,
         clprim_segmented_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 8, O64, B, E, 0, KO, NONE));
  EXPECT(CLPRIM_ERROR_BUFFER_TOO_SMALL,
         clprim_segmented_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, S, 8, O64, B, E, 0, KO, VO));

  /* n = 0 (and no segments) succeeds and writes nothing. */
  EXPECT(CLPRIM_SUCCESS, clprim_sort_keys(ctx, 0, U, K, 0, 0, 0, KO));
  EXPECT(CLPRIM_SUCCESS, clprim_sort_pairs(ctx, 0, U64, K, CLPRIM_UINT64, V, 0, 0, DESC, KO, VO));
  EXPECT(CLPRIM_SUCCESS, clprim_argsort(ctx, 0, F, K, 0, 0, I64, VO, KO));
  EXPECT(CLPRIM_SUCCESS, clprim_segmented_sort_keys(ctx, n, U, K, 0, O64, B, E, 0, KO));
  EXPECT(CLPRIM_SUCCESS,
         clprim_segmented_sort_pairs(ctx, n, U, K, CLPRIM_UINT32, V, 0, O64, B, E, 0, KO, VO));

  expect_unchanged(ctx, keys, in_img, bytes, "keys_in");
  expect_unchanged(ctx, vals, in_img, bytes, "values_in");
  expect_unchanged(ctx, kout, out_img, bytes, "keys_out");
  expect_unchanged(ctx, vout, out_img, bytes, "values_out");
  expect_unchanged(ctx, small, out_img, 4 * n - 4, "the small buffer");

  /* Errors in place: the keys stay as they were. */
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, U, K, 0, 0, 4, K));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_keys(ctx, n, F, K, 0, 8, 0, K));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_sort_pairs(ctx, n, U, K, BAD_VALUE_TYPE, V, 0, 0, 0, K, V));
  EXPECT(CLPRIM_ERROR_INVALID_ARGUMENT, clprim_argsort(ctx, n, U, K, 0, 33, 0, VO, K));
  expect_unchanged(ctx, keys, in_img, bytes, "keys in place");
  expect_unchanged(ctx, vals, in_img, bytes, "values in place");
  expect_unchanged(ctx, vout, out_img, bytes, "indices");

  free(offs);
  cl_mem all[] = {keys, vals, kout, vout, small, bo, eo};
  for (size_t i = 0; i < COUNT(all); ++i)
    release(all[i]);
  free(in_img);
  free(out_img);
  finish();
}

/* ----------------------------------------------------------- segmented */
struct segs {
  uint64_t *begin, *end;
  size_t count;
};

/* Segmented sort of keys (and values: vs 0 for none) against a reference
 * sort of each segment, with offsets of type ot; the output starts as a
 * sentinel (or, in place, as the input) and must keep it outside every
 * segment. Offsets of keys, values and outputs: in_at / out_at, of the
 * segment arrays: seg_at (elements of ot). */
static void check_segmented_offsets(clprim_context *ctx, clprim_type type, size_t vs,
                                    const void *keys, size_t n, const struct segs *sg, int desc,
                                    int in_place, size_t in_at, size_t out_at, size_t seg_at,
                                    const char *what, clprim_type ot) {
  char desc_s[400];
  snprintf(desc_s, sizeof desc_s,
           "segmented %s %s%s n=%zu segments=%zu %s in_place=%d in_at=%zu out_at=%zu seg_at=%zu "
           "%s offsets path=%s (%s)",
           clprim_type_name(type), vs ? "pairs, value bytes " : "keys",
           vs == 4   ? "4"
           : vs == 8 ? "8"
                     : "",
           n, sg->count, desc ? "descending" : "ascending", in_place, in_at, out_at, seg_at,
           clprim_type_name(ot), path_of(ctx), what);
  const size_t es = clprim_type_size(type);
  /* in_place: 1 keys_out is keys_in's range, 2 values_out is values_in's. */
  const int keys_ip = in_place & 1, values_ip = vs && (in_place & 2);
  const size_t at = keys_ip ? in_at : out_at, vat = values_ip ? in_at : out_at;
  void *values = NULL;
  if (vs) {
    values = malloc((n ? n : 1) * vs);
    fill_values(values, n, vs, 0);
  }
  unsigned char *kin_img = image(in_at, n, es, keys, SENT_IN);
  unsigned char *kout_want =
      keys_ip ? image(in_at, n, es, keys, SENT_IN) : image(out_at, n, es, NULL, SENT_OUT);
  unsigned char *vin_img = vs ? image(in_at, n, vs, values, SENT_IN) : NULL;
  unsigned char *vout_want = !vs        ? NULL
                             : values_ip ? image(in_at, n, vs, values, SENT_IN)
                                        : image(out_at, n, vs, NULL, SENT_OUT);
  const size_t kin_bytes = (in_at + n + PAD) * es, kout_bytes = (at + n + PAD) * es;
  const size_t vin_bytes = (in_at + n + PAD) * vs, vout_bytes = (vat + n + PAD) * vs;
  cl_mem kin = test_buffer(ctx, kin_bytes, kin_img);
  cl_mem kout = keys_ip ? kin : test_buffer(ctx, kout_bytes, kout_want);
  cl_mem vin = vs ? test_buffer(ctx, vin_bytes, vin_img) : NULL;
  cl_mem vout = !vs ? NULL : values_ip ? vin : test_buffer(ctx, vout_bytes, vout_want);
  /* (seg_at elements of all bits set before the offsets: not segments) */
  cl_mem bo = test_offset_buffer(ctx, ot, sg->begin, sg->count, seg_at);
  cl_mem eo = test_offset_buffer(ctx, ot, sg->end, sg->count, seg_at);

  const unsigned flags = desc ? CLPRIM_SORT_DESCENDING : 0u;
  int st;
  if (vs)
    st = clprim_segmented_sort_pairs(ctx, n, type, clprim_buf_at(kin, in_at), value_type_of(vs),
                                     clprim_buf_at(vin, in_at), sg->count, ot,
                                     clprim_buf_at(bo, seg_at), clprim_buf_at(eo, seg_at), flags,
                                     clprim_buf_at(kout, at), clprim_buf_at(vout, vat));
  else
    st = clprim_segmented_sort_keys(ctx, n, type, clprim_buf_at(kin, in_at), sg->count, ot,
                                    clprim_buf_at(bo, seg_at), clprim_buf_at(eo, seg_at), flags,
                                    clprim_buf_at(kout, at));
  if (st != CLPRIM_SUCCESS) {
    report("%s: returned %s", desc_s, clprim_status_name(st));
  } else {
    for (size_t s = 0; s < sg->count; ++s) {
      const size_t b = (size_t)sg->begin[s], len = (size_t)(sg->end[s] - sg->begin[s]);
      size_t *perm = reference(type, (const unsigned char *)keys + b * es, len, 0, 0, desc);
      for (size_t r = 0; r < len; ++r) {
        memcpy(kout_want + (at + b + r) * es, (const unsigned char *)keys + (b + perm[r]) * es, es);
        if (vs)
          memcpy(vout_want + (vat + b + r) * vs, (const unsigned char *)values + (b + perm[r]) * vs,
                 vs);
      }
      free(perm);
    }
    const size_t most = kout_bytes > kin_bytes ? kout_bytes : kin_bytes;
    const size_t most_v = vout_bytes > vin_bytes ? vout_bytes : vin_bytes;
    unsigned char *got = malloc(most > most_v ? most : most_v);
    test_read(ctx, kout, kout_bytes, got);
    compare(desc_s, "key", got, kout_want, kout_bytes, es, at, n, NULL);
    if (vs) {
      test_read(ctx, vout, vout_bytes, got);
      compare(desc_s, "value", got, vout_want, vout_bytes, vs, vat, n, NULL);
    }
    if (!keys_ip) {
      test_read(ctx, kin, kin_bytes, got);
      compare(desc_s, "input key (must not change)", got, kin_img, kin_bytes, es, in_at, n, NULL);
    }
    if (vs && !values_ip) {
      test_read(ctx, vin, vin_bytes, got);
      compare(desc_s, "input value (must not change)", got, vin_img, vin_bytes, vs, in_at, n,
              NULL);
    }
    free(got);
  }
  release(kin);
  if (kout != kin) release(kout);
  if (vin) release(vin);
  if (vout && vout != vin) release(vout);
  release(bo);
  release(eo);
  free(kin_img);
  free(kout_want);
  free(vin_img);
  free(vout_want);
  free(values);
}

/* check_segmented_offsets with uint32 or uint64 offsets: one width for
 * each build of the kernels (the keys' clprim__key_build_type; 0, 4 or 8
 * value bytes), turning with both, so that every build of the keys and
 * every value size meets both widths, and each build of sort_tile is
 * compiled once (the offsets' width is a build option: on PoCL a kernel
 * object each). */
static void check_segmented(clprim_context *ctx, clprim_type type, size_t vs, const void *keys,
                            size_t n, const struct segs *sg, int desc, int in_place, size_t in_at,
                            size_t out_at, size_t seg_at, const char *what) {
  const unsigned build = (unsigned)clprim__key_build_type(type);
  check_segmented_offsets(ctx, type, vs, keys, n, sg, desc, in_place, in_at, out_at, seg_at, what,
                          test_offset_type[(build + vs / 4) % TEST_OFFSET_TYPES]);
}

static void segs_alloc(struct segs *sg, size_t count) {
  sg->begin = malloc((count ? count : 1) * 8);
  sg->end = malloc((count ? count : 1) * 8);
  sg->count = 0;
}
static void segs_free(struct segs *sg) {
  free(sg->begin);
  free(sg->end);
}
static void segs_add(struct segs *sg, size_t b, size_t e) {
  sg->begin[sg->count] = b, sg->end[sg->count] = e, ++sg->count;
}
static void segs_shuffle(struct segs *sg) {
  for (size_t i = sg->count; i > 1; --i) {
    const size_t j = (size_t)(test_rand() % i);
    uint64_t t = sg->begin[i - 1];
    sg->begin[i - 1] = sg->begin[j], sg->begin[j] = t;
    t = sg->end[i - 1];
    sg->end[i - 1] = sg->end[j], sg->end[j] = t;
  }
}

/* Random lengths: most short, some up to small_max, some longer than
 * small_max (sorted by the device-wide sort), and empty ones; gaps of 0 to
 * 4 elements between them; in shuffled order. Returns n. */
static size_t segs_random(struct segs *sg, size_t count, size_t small_max, size_t tile) {
  size_t at = test_rand() % 3;
  for (size_t s = 0; s < count; ++s) {
    const unsigned r = (unsigned)(test_rand() % 20);
    size_t len;
    if (r < 3)
      len = 0;
    else if (r < 5)
      len = 1;
    else if (r < 14)
      len = 2 + (size_t)(test_rand() % 64);
    else if (r < 18 || test_small())
      len = small_max ? (size_t)(test_rand() % small_max) + 1 : 5;
    else
      len = small_max + 1 + (size_t)(test_rand() % (tile + 17));
    segs_add(sg, at, at + len);
    at += len + (size_t)(test_rand() % 5);
  }
  segs_shuffle(sg);
  return at + (size_t)(test_rand() % 3);
}

static void test_segmented(void **state) {
  (void)state;
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!test_has_type(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      for (unsigned vk = 0; vk < 3; ++vk) {
        const size_t vs = vk == 0 ? 0 : vk == 1 ? 4 : 8;
        /* Every type with keys alone and with one value size (4 or 8
         * bytes, turning with the type); Oclgrind: float keys and int64
         * with 8-byte values, one direction per kind of segments. */
        if (vk != 0 && vk != 1 + (unsigned)t % 2) continue;
        if (test_small() &&
            !((type == CLPRIM_FLOAT && vs == 0) || (type == CLPRIM_INT64 && vs == 8)))
          continue;
        const size_t m = clprim__sort_small_max(ctx, type, vs),
                     tile = clprim__sort_tile(ctx, type, vs);
        struct segs sg;
        /* 1. empty segments, length 1, short ones; shuffled, with gaps. */
        {
          segs_alloc(&sg, 12);
          const size_t lens[12] = {0, 1, 0, 2, 33, 1, 0, 5, 31, 32, 1, 0};
          size_t at = 1;
          for (int s = 0; s < 12; ++s) {
            segs_add(&sg, at, at + lens[s]);
            at += lens[s] + (size_t)(s % 3);
          }
          segs_shuffle(&sg);
          const size_t n = at + 2;
          void *keys = malloc(n * es);
          for (int desc = 0; desc < 2; ++desc, ++rot) {
            if (test_small() && desc != (int)(vk % 2)) continue;
            const unsigned d = rot % D_COUNT;
            fill(type, keys, n, d);
            check_segmented(ctx, type, vs, keys, n, &sg, desc, rot % 3 == 2 ? 3 : 0, 0,
                            rot % 2 ? 5 : 0, 0, dist_names[d]);
          }
          free(keys);
          segs_free(&sg);
        }
        /* 2. one segment longer than a tile, elements outside it at both ends. */
        if (!test_small() || 3 * tile < SMALL_N) {
          const size_t n = 3 * tile + 11;
          segs_alloc(&sg, 1);
          segs_add(&sg, 4, n - 3);
          void *keys = malloc(n * es);
          for (int desc = 0; desc < 2; ++desc, ++rot) {
            const unsigned d = desc ? D_FEW16 : D_SPECIAL;
            fill(type, keys, n, d);
            check_segmented(ctx, type, vs, keys, n, &sg, desc, desc ? 3 : 0, rot % 2 ? 3 : 0, 0, 0,
                            dist_names[d]);
          }
          /* Keys in place and values not, and the reverse, over an odd
           * number of digit passes (low 20 bits: 3): one of the two starts
           * from a copy. */
          for (int ip = 1; vs && ip <= 2; ++ip, ++rot) {
            fill(type, keys, n, D_NARROW);
            check_segmented(ctx, type, vs, keys, n, &sg, ip == 2, ip, 3, 0, 0,
                            dist_names[D_NARROW]);
          }
          free(keys);
          segs_free(&sg);
        }
        /* 3. random lengths, some longer than small_max. */
        {
          const size_t count = test_small() ? 12 : 60;
          segs_alloc(&sg, count);
          const size_t n = segs_random(&sg, count, test_small() && m > 200 ? 200 : m, tile);
          void *keys = malloc(n * es);
          for (int desc = 0; desc < 2; ++desc, ++rot) {
            if (test_small() && desc == (int)(vk % 2)) continue;
            const unsigned d = rot % D_COUNT;
            fill(type, keys, n, d);
            check_segmented(ctx, type, vs, keys, n, &sg, desc, (int)(rot % 4), rot % 3 == 0 ? 3 : 0,
                            rot % 3 == 1 ? 5 : 0, rot % 4 == 0 ? 3 : 0, dist_names[d]);
          }
          free(keys);
          segs_free(&sg);
        }
      }
    }
  }
  finish();
}

/* 2^12 segments of 1024 keys covering the whole input, in order, then
 * shuffled and in place; keys and 8-byte pairs. Under CLPRIM_TEST_SMALL
 * 2^6 segments of uint32 keys: Oclgrind takes about 1.6 s per segment
 * (one work-group each), so 2^8 alone took 408 s of the 10-minute run.
 * With --passes 2^9 segments, each one long (its own digit passes). */
static void test_segmented_many(void **state) {
  (void)state;
  const size_t count = test_small() ? 64 : passes_run ? 512 : 4096, len = 1024, n = count * len;
  const clprim_type types[] = {CLPRIM_UINT32, CLPRIM_DOUBLE, CLPRIM_INT64, CLPRIM_FLOAT};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    for (size_t t = 0; t < COUNT(types); ++t, ++rot) {
      if (test_small() && t) break;
      const clprim_type type = types[t];
      if (!test_has_type(ctx, type)) continue;
      struct segs sg;
      segs_alloc(&sg, count);
      for (size_t s = 0; s < count; ++s)
        segs_add(&sg, s * len, (s + 1) * len);
      if (t % 2) segs_shuffle(&sg);
      void *keys = malloc(n * clprim_type_size(type));
      const unsigned d = t == 1 ? D_SPECIAL : D_RANDOM;
      fill(type, keys, n, d);
      check_segmented(ctx, type, t % 2 ? 8 : 0, keys, n, &sg, (int)(t / 2), t == 2 ? 3 : 0, 0, 0, 0,
                      dist_names[d]);
      free(keys);
      segs_free(&sg);
    }
  }
  finish();
}

/* A bad segment (begin > end, end > n) among good ones: invalid argument,
 * nothing written (sentinel outputs; in place, the input). */
static void test_segmented_bad(void **state) {
  (void)state;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_context *ctx = contexts.ctx[p];
    const size_t n = 2000, count = 40;
    for (int bad = 0; bad < 4; ++bad) {
      const clprim_type type = bad % 2 ? CLPRIM_DOUBLE : CLPRIM_INT32;
      if (!test_has_type(ctx, type)) continue;
      const size_t es = clprim_type_size(type), vs = bad < 2 ? 0 : 4;
      uint64_t b[40], e[40];
      for (size_t s = 0; s < count; ++s)
        b[s] = s * 50, e[s] = s * 50 + 40;
      const size_t which = (size_t)(test_rand() % count);
      if (bad == 0) b[which] = e[which] + 1;            /* begin > end */
      if (bad == 1) e[which] = n + 1;                   /* end > n */
      if (bad == 2) b[which] = n + 5, e[which] = n + 9; /* both past n */
      if (bad == 3) b[which] = 30, e[which] = 10;
      unsigned char *kimg = malloc(n * es), *oimg = malloc(n * 8);
      fill(type, kimg, n, D_RANDOM);
      memset(oimg, SENT_OUT, n * 8);
      cl_mem keys = test_buffer(ctx, n * es, kimg), out = test_buffer(ctx, n * es, oimg);
      cl_mem vals = test_buffer(ctx, n * 4, oimg), vout = test_buffer(ctx, n * 4, oimg);
      for (unsigned w = 0; w < TEST_OFFSET_TYPES; ++w) {
        const clprim_type ot = test_offset_type[w];
        cl_mem bo = test_offset_buffer(ctx, ot, b, count, 0),
               eo = test_offset_buffer(ctx, ot, e, count, 0);
        for (int in_place = 0; in_place < 2; ++in_place) {
          const cl_mem ko = in_place ? keys : out, vo = in_place ? vals : vout;
          int st;
          if (vs)
            st = clprim_segmented_sort_pairs(ctx, n, type, clprim_buf(keys), value_type_of(vs),
                                             clprim_buf(vals), count, ot, clprim_buf(bo),
                                             clprim_buf(eo), in_place ? CLPRIM_SORT_DESCENDING : 0u,
                                             clprim_buf(ko), clprim_buf(vo));
          else
            st = clprim_segmented_sort_keys(ctx, n, type, clprim_buf(keys), count, ot,
                                            clprim_buf(bo), clprim_buf(eo),
                                            in_place ? CLPRIM_SORT_DESCENDING : 0u, clprim_buf(ko));
          if (st != CLPRIM_ERROR_INVALID_ARGUMENT)
            report(
                "segmented %s, bad segment %zu of kind %d, in place %d, %s offsets: returned %s, "
                "expected CLPRIM_ERROR_INVALID_ARGUMENT",
                clprim_type_name(type), which, bad, in_place, clprim_type_name(ot),
                clprim_status_name(st));
          char what[120];
          snprintf(what, sizeof what, "segmented %s, bad segment kind %d, in place %d, %s offsets",
                   clprim_type_name(type), bad, in_place, clprim_type_name(ot));
          expect_unchanged(ctx, keys, kimg, n * es, what);
          expect_unchanged(ctx, out, oimg, n * es, what);
          expect_unchanged(ctx, vals, oimg, n * 4, what);
          expect_unchanged(ctx, vout, oimg, n * 4, what);
        }
        release(bo);
        release(eo);
      }
      cl_mem all[] = {keys, out, vals, vout};
      for (size_t i = 0; i < COUNT(all); ++i)
        release(all[i]);
      free(kimg);
      free(oimg);
    }
  }
  finish();
}

/* ------------------------------------------------------- digit passes */
/* Contexts of the test's own with sort.small_max=0 and
 * sort.items=4: every sort takes the digit passes over many small
 * tiles, at sizes that Oclgrind runs too. Keys, pairs and argsort,
 * segmented (each non-empty segment sorted device-wide), in place and at
 * offsets. */
static void test_digit_passes(void **state) {
  (void)state;
  clprim_context *own[CLPRIM_PATH_COUNT] = {NULL};
  unsigned rot = 0;
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) {
    if (skip_path(p)) continue;
    clprim_options o;
    clprim_options_init(&o);
    o.path = contexts.ctx[p]->info.path;
    TEST_OK(clprim_context_create(&own[p], &o));
    clprim_context *ctx = own[p];
    TEST_OK(clprim__tune(ctx, "sort.small_max=0,sort.items=4"));
    for (int t = 0; t < CLPRIM_TYPE_COUNT; ++t) {
      const clprim_type type = (clprim_type)t;
      if (!test_has_type(ctx, type)) continue;
      const size_t es = clprim_type_size(type);
      for (unsigned md = 0; md < MODES; ++md) {
        const size_t tile = clprim__sort_tile(ctx, type, mode_vbytes(&modes[md]));
        if (md == 0 && t == 0)
          printf("digit passes on %s: small_max %zu, tile %zu\n", path_of(ctx),
                 clprim__sort_small_max(ctx, type, 0), tile);
        const size_t sizes[] = {1, 2, 33, tile - 1, tile + 1, 3 * tile + 5};
        for (size_t s = 0; s < COUNT(sizes); ++s, ++rot) {
          const size_t n = sizes[s];
          if (test_small() && (n > SMALL_N || !pick(13))) continue;
          void *keys = malloc(n * es);
          const unsigned d = rot % D_COUNT;
          fill(type, keys, n, d);
          struct sort_case c;
          memset(&c, 0, sizeof c);
          c.type = type, c.mode = modes[md], c.desc = (int)(rot / 2 % 2);
          c.in_place = rot % 4 == 1 ? 3 : 0;
          c.in_at = rot % 3 == 2 ? 3 : 0, c.out_at = rot % 5 == 1 ? 5 : 0;
          c.index_values = rot % 2;
          if (!is_float(type) && rot % 7 == 3) c.begin = 4, c.end = (unsigned)es * 8 - 4;
          check_sort(ctx, &c, keys, n, dist_names[d]);
          free(keys);
        }
      }
      /* Segmented: every segment is long here. */
      if (test_small() && type != CLPRIM_UINT32) continue;
      const size_t tile = clprim__sort_tile(ctx, type, 0), count = test_small() ? 4 : 10;
      struct segs sg;
      segs_alloc(&sg, count);
      const size_t n = segs_random(&sg, count, tile / 2, tile);
      void *keys = malloc(n * es);
      fill(type, keys, n, D_FEW16);
      check_segmented(ctx, type,
                      t % 3 == 0   ? 0
                      : t % 3 == 1 ? 4
                                   : 8,
                      keys, n, &sg, t % 2, t % 4 == 0 ? 3 : 0, 0, t % 4 == 1 ? 3 : 0, 0, "16 distinct");
      free(keys);
      segs_free(&sg);
    }
  }
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p)
    clprim_context_free(own[p]);
  finish();
}

/* clprim_context_last_error(): a refused call's text names the argument or
 * flag, a flag of another family is refused with nothing written, and a
 * call that succeeds leaves "". */
static void test_error_texts(void **state) {
  (void)state;
  clprim_context *ctx = contexts.ctx[CLPRIM_PATH_AUTO];
  TEST_TEXT_BUFFERS(ctx);
  TEST_TEXT(ctx, SMALL, clprim_sort_keys(ctx, 2000, CLPRIM_UINT32, A, 0, 0, 0, O),
            "sort_keys: keys_in holds 1024 elements from offset 0, the call needs 2000");
  /* CLPRIM_NTH_REJECT_NAN was 0.2's CLPRIM_SORT_DESCENDING bit. */
  TEST_TEXT(ctx, INVALID,
            clprim_sort_keys(ctx, 100, CLPRIM_UINT32, A, 0, 0, CLPRIM_NTH_REJECT_NAN, O),
            "sort_keys: flag 0x40 (CLPRIM_NTH_REJECT_NAN)");
  TEST_TEXT(ctx, INVALID,
            clprim_sort_pairs(ctx, 100, CLPRIM_UINT32, A, CLPRIM_UINT32, B, 0, 0, CLPRIM_REDUCE_ABS, O, O2),
            "sort_pairs: flag 0x1 (CLPRIM_REDUCE_ABS)");
  TEST_TEXT(ctx, INVALID, clprim_sort_pairs(ctx, 100, CLPRIM_UINT32, A, BAD_VALUE_TYPE, B, 0, 0, 0, O, O2),
            "value_type (9) is not a clprim_type");
  TEST_TEXT(ctx, INVALID,
            clprim_argsort(ctx, 100, CLPRIM_UINT32, A, 0, 0, CLPRIM_TOPK_SORTED, O, NONE),
            "argsort: flag 0x4 (CLPRIM_TOPK_SORTED)");
  TEST_TEXT(ctx, INVALID, clprim_sort_keys(ctx, 100, CLPRIM_FLOAT, A, 0, 16, 0, O), "float keys");
  TEST_TEXT(ctx, INVALID,
            clprim_segmented_sort_keys(ctx, 100, CLPRIM_UINT32, A, 1, CLPRIM_UINT64, B, B,
                                       CLPRIM_INDICES_64, O),
            "segmented_sort_keys: flag 0x8 (CLPRIM_INDICES_64)");
  TEST_TEXT(ctx, INVALID,
            clprim_segmented_sort_pairs(ctx, 100, CLPRIM_UINT32, A, CLPRIM_UINT32, B, 1,
                                        CLPRIM_DOUBLE, B, B, 0, O, O2),
            "segmented_sort_pairs: offset_type (5) is neither CLPRIM_UINT32 nor CLPRIM_UINT64");
  TEST_TEXT(ctx, INVALID, clprim_argsort(ctx, 100, CLPRIM_UINT32, A, 0, 0, 0, NONE, NONE),
            "argsort: indices is required");
  TEST_OK_NO_TEXT(ctx, clprim_sort_keys(ctx, 0, CLPRIM_UINT32, A, 0, 0, 0, O));
  test_pattern_intact(ctx, o, bytes, "o");
  test_pattern_intact(ctx, o2, bytes, "o2");
  TEST_TEXT_BUFFERS_FREE();
}

int main(int argc, char **argv) {
  test_init("test_sort");
  test_with_cpu_path();
  picks = (unsigned)(test_rand() % 1000); /* pick()'s phase, from the seed */
  /* --passes: every sort above 0 keys takes the digit passes (not the one
   * work-group sort), over tiles of 4 keys per work-item (on the cpu path
   * shares of 16 keys, up to 64 a compute unit), so that many tiles occur
   * at small n. */
  if (argc > 1 && strcmp(argv[1], "--passes") == 0) {
    test_tune("sort.small_max=0,sort.items=4,launch.cpu_share_min=16,"
              "launch.cpu_shares_per_unit=64");
    passes_run = 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),         cmocka_unit_test(test_error_texts),
      cmocka_unit_test(test_int32),          cmocka_unit_test(test_uint32),
      cmocka_unit_test(test_int64),          cmocka_unit_test(test_uint64),
      cmocka_unit_test(test_float),          cmocka_unit_test(test_double),
      cmocka_unit_test(test_special_values), cmocka_unit_test(test_stability),
      cmocka_unit_test(test_bit_ranges),     cmocka_unit_test(test_in_place),
      cmocka_unit_test(test_offsets),        cmocka_unit_test(test_segmented),
      cmocka_unit_test(test_segmented_many), cmocka_unit_test(test_segmented_bad),
      cmocka_unit_test(test_digit_passes),
  };
  const int failed = cmocka_run_group_tests(tests, test_setup, test_teardown);
  release_kept();
  return failed;
}
