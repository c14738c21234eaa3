#include "common.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t state;

void test_init(const char *suite) {
  const char *env = getenv("CLPRIM_TEST_SEED");
  uint64_t seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ (uint64_t)clock();
  state = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  if (!state) state = 1;
  const char *filter = getenv("CLPRIM_TEST_FILTER"); /* a cmocka test-name pattern */
  if (filter && *filter) cmocka_set_test_filter(filter);
  printf("%s: seed %llu (set CLPRIM_TEST_SEED=%llu to repeat)%s\n", suite,
         (unsigned long long)seed, (unsigned long long)seed, test_small() ? ", small sizes" : "");
  fflush(stdout);
}

uint64_t test_rand(void) {
  /* xorshift64* */
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1Dull;
}

double test_uniform(void) { return (double)(test_rand() >> 11) * (1.0 / 9007199254740992.0); }

int test_small(void) {
  const char *env = getenv("CLPRIM_TEST_SMALL");
  return env && *env && strcmp(env, "0") != 0;
}

static int with_cpu; /* test_with_cpu_path was called */

void test_with_cpu_path(void) { with_cpu = 1; }

int test_path_excluded(unsigned path) {
  const char *only = getenv("CLPRIM_TEST_PATH"); /* one path's name: that path alone */
  return only && *only && strcmp(only, clprim_path_name((clprim_path)path)) != 0;
}

void test_open_contexts(struct test_contexts *t) {
  memset(t, 0, sizeof *t);
  clprim_options o;
  clprim_options_init(&o);
  int st = clprim_context_create(&t->ctx[CLPRIM_PATH_AUTO], &o);
  if (st != CLPRIM_SUCCESS) {
    fprintf(stderr, "cannot create a context: %s\n", clprim_status_name(st));
    exit(1);
  }
  clprim_device_info info;
  clprim_context_get_info(t->ctx[CLPRIM_PATH_AUTO], &info, sizeof info);
  printf("device: %s (%s)\n", info.device_name, info.platform_name);
  for (unsigned p = CLPRIM_PATH_LOCAL; p < CLPRIM_PATH_COUNT; ++p) {
    if (!(info.paths_available & (1u << p))) {
      printf("path %s: skipped (this device does not run it)\n", clprim_path_name((clprim_path)p));
      continue;
    }
    if (test_path_excluded(p)) {
      printf("path %s: skipped (CLPRIM_TEST_PATH=%s)\n", clprim_path_name((clprim_path)p),
             getenv("CLPRIM_TEST_PATH"));
      continue;
    }
    const char *every = getenv("CLPRIM_TEST_CPU_PATH");
    if (p == CLPRIM_PATH_CPU && !with_cpu && !(every && strcmp(every, "1") == 0)) {
      printf("path cpu: skipped (this suite's calls have no CPU-shaped kernels)\n");
      continue;
    }
    o.path = (clprim_path)p;
    st = clprim_context_create(&t->ctx[p], &o);
    if (st != CLPRIM_SUCCESS) {
      fprintf(stderr, "path %s: context failed: %s\n", clprim_path_name((clprim_path)p),
              clprim_status_name(st));
      exit(1);
    }
    printf("path %s: tested\n", clprim_path_name((clprim_path)p));
  }
  fflush(stdout);
}

struct test_contexts contexts;

static const char *tuned; /* test_tune's assignments, or NULL */

void test_tune(const char *assignments) { tuned = assignments; }

int test_setup(void **state) {
  (void)state;
  test_open_contexts(&contexts);
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT && tuned; ++p)
    if (contexts.ctx[p] && clprim__tune(contexts.ctx[p], tuned) != CLPRIM_SUCCESS) {
      fprintf(stderr, "cannot tune \"%s\"\n", tuned);
      exit(1);
    }
  if (tuned) printf("tuned on every context: %s\n", tuned);
  return 0;
}

int test_teardown(void **state) {
  (void)state;
  test_close_contexts(&contexts);
  return 0;
}

void test_close_contexts(struct test_contexts *t) {
  for (unsigned p = 0; p < CLPRIM_PATH_COUNT; ++p) clprim_context_free(t->ctx[p]);
  memset(t, 0, sizeof *t);
}

int test_has_room(clprim_context *ctx, size_t largest, size_t total, const char *what) {
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  if (info.max_alloc_size >= largest && info.global_mem_size >= total) return 1;
  printf("%s on %s: skipped (largest allocation %.1f GiB, memory %.1f GiB; needs %.1f and %.1f)\n",
         what, clprim_path_name(info.path), info.max_alloc_size / 1073741824.0,
         info.global_mem_size / 1073741824.0, largest / 1073741824.0, total / 1073741824.0);
  return 0;
}

int test_has_type(clprim_context *ctx, clprim_type type) {
  if (clprim__type_supported(ctx, type)) return 1;
  clprim_device_info info;
  clprim_context_get_info(ctx, &info, sizeof info);
  printf("%s on %s: skipped (device lacks the type)\n", clprim_type_name(type),
         clprim_path_name(info.path));
  return 0;
}

cl_mem test_buffer(clprim_context *ctx, size_t bytes, const void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(clprim_context_cl_context(ctx),
                            CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                            bytes ? bytes : 1, bytes ? (void *)host : NULL, &err);
  if (err != CL_SUCCESS) fail_msg("clCreateBuffer(%zu): %s", bytes, clprim_status_name(err));
  return m;
}

const clprim_type test_offset_type[TEST_OFFSET_TYPES] = {CLPRIM_UINT32, CLPRIM_UINT64};

cl_mem test_offset_buffer(clprim_context *ctx, clprim_type offset_type, const uint64_t *offsets,
                          size_t count, size_t pad) {
  const size_t es = clprim_type_size(offset_type), total = (pad + count) * es;
  unsigned char *host = malloc(total ? total : 1);
  if (!host) fail_msg("out of host memory");
  memset(host, 0xFF, pad * es);
  for (size_t i = 0; i < count; ++i) {
    if (es == 4) {
      const uint32_t x = (uint32_t)offsets[i];
      memcpy(host + (pad + i) * 4, &x, 4);
    } else {
      memcpy(host + (pad + i) * 8, &offsets[i], 8);
    }
  }
  cl_mem m = test_buffer(ctx, total, host);
  free(host);
  return m;
}

void test_read(clprim_context *ctx, cl_mem buf, size_t bytes, void *host) {
  if (!bytes) return;
  cl_int err = clEnqueueReadBuffer(clprim_context_queue(ctx), buf, CL_TRUE, 0, bytes, host, 0,
                                   NULL, NULL);
  if (err != CL_SUCCESS) fail_msg("clEnqueueReadBuffer: %s", clprim_status_name(err));
}

void test_write(clprim_context *ctx, cl_mem buf, size_t bytes, const void *host) {
  if (!bytes) return;
  cl_int err = clEnqueueWriteBuffer(clprim_context_queue(ctx), buf, CL_TRUE, 0, bytes, host, 0,
                                    NULL, NULL);
  if (err != CL_SUCCESS) fail_msg("clEnqueueWriteBuffer: %s", clprim_status_name(err));
}

void test_fill_u32(clprim_context *ctx, cl_mem buf, size_t n, cl_uint first, cl_uint step) {
  static const char *fill_src =
      "__kernel void fill(__global uint *p, ulong n, uint first, uint step) {\n"
      "  for (ulong i = get_global_id(0); i < n; i += get_global_size(0))\n"
      "    p[i] = first + step * (uint)i;\n"
      "}\n";
  cl_int err;
  cl_device_id dev = clprim_context_device(ctx);
  cl_program prog =
      clCreateProgramWithSource(clprim_context_cl_context(ctx), 1, &fill_src, NULL, &err);
  assert_int_equal(clBuildProgram(prog, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  cl_kernel fill = clCreateKernel(prog, "fill", &err);
  cl_ulong n64 = n;
  clSetKernelArg(fill, 0, sizeof buf, &buf);
  clSetKernelArg(fill, 1, sizeof n64, &n64);
  clSetKernelArg(fill, 2, sizeof first, &first);
  clSetKernelArg(fill, 3, sizeof step, &step);
  size_t global = (size_t)1 << 20;
  err = clEnqueueNDRangeKernel(clprim_context_queue(ctx), fill, 1, NULL, &global, NULL, 0, NULL,
                               NULL);
  assert_int_equal(err, CL_SUCCESS);
  clReleaseKernel(fill);
  clReleaseProgram(prog);
  for (int k = 0; k < 64; ++k) {
    size_t i = k < 32 ? test_rand() % n : n - 1 - (size_t)k % n;
    cl_uint got = test_read_u32(ctx, buf, i), want = first + step * (cl_uint)i;
    if (got != want) fail_msg("filling %zu elements: element %zu is %u, not %u", n, i, got, want);
  }
}

cl_uint test_read_u32(clprim_context *ctx, cl_mem buf, size_t i) {
  cl_uint got;
  cl_int err = clEnqueueReadBuffer(clprim_context_queue(ctx), buf, CL_TRUE, i * 4, 4, &got, 0,
                                   NULL, NULL);
  if (err != CL_SUCCESS) fail_msg("clEnqueueReadBuffer: %s", clprim_status_name(err));
  return got;
}

void test_random(clprim_type type, void *data, size_t n, int wide) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t r = test_rand();
    switch (type) {
    case CLPRIM_INT32:
      ((int32_t *)data)[i] = wide ? (int32_t)(uint32_t)r : (int32_t)(r % 2001) - 1000;
      break;
    case CLPRIM_UINT32:
      ((uint32_t *)data)[i] = wide ? (uint32_t)r : (uint32_t)(r % 1000);
      break;
    case CLPRIM_INT64:
      ((int64_t *)data)[i] = wide ? (int64_t)r : (int64_t)(r % 2000001) - 1000000;
      break;
    case CLPRIM_UINT64:
      ((uint64_t *)data)[i] = wide ? r : r % 1000000;
      break;
    case CLPRIM_FLOAT:
      ((float *)data)[i] = (float)(test_uniform() * 2.0 - 1.0);
      break;
    case CLPRIM_DOUBLE:
      ((double *)data)[i] = test_uniform() * 2.0 - 1.0;
      break;
    }
  }
}

uint64_t test_order_key(clprim_type type, const void *data, size_t i) {
  switch (type) {
  case CLPRIM_INT32:
    return (uint32_t)((const int32_t *)data)[i] ^ 0x80000000u;
  case CLPRIM_UINT32:
    return ((const uint32_t *)data)[i];
  case CLPRIM_INT64:
    return (uint64_t)((const int64_t *)data)[i] ^ 0x8000000000000000ull;
  case CLPRIM_UINT64:
    return ((const uint64_t *)data)[i];
  case CLPRIM_FLOAT: {
    float x = ((const float *)data)[i];
    if (isnan(x)) return 0xFFFFFFFFu;
    if (x == 0.0f) x = 0.0f;
    uint32_t b;
    memcpy(&b, &x, 4);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  }
  case CLPRIM_DOUBLE: {
    double x = ((const double *)data)[i];
    if (isnan(x)) return ~0ull;
    if (x == 0.0) x = 0.0;
    uint64_t b;
    memcpy(&b, &x, 8);
    return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
  }
  }
  return 0;
}

double test_value_f(clprim_type type, const void *data, size_t i) {
  return type == CLPRIM_FLOAT ? ((const float *)data)[i] : ((const double *)data)[i];
}

uint64_t test_value_u(clprim_type type, const void *data, size_t i) {
  switch (type) {
  case CLPRIM_INT32:
    return (uint64_t)(int64_t)((const int32_t *)data)[i];
  case CLPRIM_UINT32:
    return ((const uint32_t *)data)[i];
  default:
    return ((const uint64_t *)data)[i];
  }
}

cl_mem test_foreign_buffer(clprim_context *ctx, size_t bytes) {
  cl_int err;
  cl_device_id dev = clprim_context_device(ctx);
  cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, bytes, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  clReleaseContext(other); /* the buffer keeps it */
  return foreign;
}

int test_by_key_asc(const void *a, const void *b) {
  const struct test_keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

int test_by_key_desc(const void *a, const void *b) {
  const struct test_keyed *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

int test_by_index(const void *a, const void *b) {
  const struct test_keyed *x = a, *y = b;
  return (x->index > y->index) - (x->index < y->index);
}

void test_text_has(clprim_context *ctx, const char *part, const char *what) {
  const char *text = clprim_context_last_error(ctx);
  if (!text) fail_msg("%s: clprim_context_last_error returned NULL", what);
  if (!part && *text) fail_msg("%s: the text is \"%s\", expected \"\"", what, text);
  if (part && !strstr(text, part))
    fail_msg("%s: the text \"%s\" does not name \"%s\"", what, text, part);
}

static unsigned char pattern_byte(size_t i) {
  return (unsigned char)(i * 37u + 11u);
}

cl_mem test_image_buffer(clprim_context *ctx, size_t at, size_t n, size_t es, const void *data,
                         unsigned char **img) {
  const size_t bytes = (at + n + TEST_PAD) * es;
  *img = malloc(bytes);
  assert_non_null(*img);
  memset(*img, TEST_SENTINEL, bytes);
  if (data) memcpy(*img + at * es, data, n * es);
  return test_buffer(ctx, bytes, *img);
}

void test_compare_image(clprim_context *ctx, const char *desc, const char *which, cl_mem buf,
                        const unsigned char *want, size_t bytes, size_t es) {
  unsigned char *got = malloc(bytes);
  assert_non_null(got);
  test_read(ctx, buf, bytes, got);
  for (size_t i = 0; i < bytes; i += es)
    if (memcmp(got + i, want + i, es) != 0) {
      uint64_t g = 0, w = 0;
      memcpy(&g, got + i, es < 8 ? es : 8), memcpy(&w, want + i, es < 8 ? es : 8);
      test_report("%s: %s element %zu of the buffer is 0x%llx, expected 0x%llx", desc, which,
                  i / es, (unsigned long long)g, (unsigned long long)w);
      break;
    }
  free(got);
}

cl_mem test_pattern(clprim_context *ctx, size_t bytes) {
  unsigned char *host = malloc(bytes);
  assert_non_null(host);
  for (size_t i = 0; i < bytes; ++i)
    host[i] = pattern_byte(i);
  cl_mem buf = test_buffer(ctx, bytes, host);
  free(host);
  return buf;
}

void test_pattern_intact(clprim_context *ctx, cl_mem buf, size_t bytes, const char *what) {
  unsigned char *host = malloc(bytes);
  assert_non_null(host);
  test_read(ctx, buf, bytes, host);
  for (size_t i = 0; i < bytes; ++i)
    if (host[i] != pattern_byte(i)) fail_msg("%s: byte %zu was written", what, i);
  free(host);
}

static int reported;

void test_report(const char *fmt, ...) {
  if (++reported > 12) return;
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

void test_report_end(void) {
  if (reported) {
    printf("ERROR: %d case(s) failed (the first ones printed above)\n", reported);
    reported = 0;
    fail();
  }
}

int test_skip_path(unsigned p) {
  clprim_context *ctx = contexts.ctx[p];
  return !ctx || (p == CLPRIM_PATH_AUTO && contexts.ctx[ctx->info.path]);
}

const char *test_path_of(const clprim_context *ctx) { return clprim_path_name(ctx->info.path); }

/* ------------------------------------------------- exact sums (CLPRIM_EXACT) */

static void exact_set(clprim_type t, void *p, size_t i, double v) {
  if (t == CLPRIM_FLOAT)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

/* The reference of CLPRIM_EXACT, written apart from the device's method:
 * the positive and the negative elements added into two unsigned big
 * integers (32-bit limbs, weight 2^(32 l - 1074 or - 149)), the smaller
 * taken from the larger, the top 64 bits with the rest OR-ed into the
 * lowest (round to odd), converted by C's own rounding and scaled. */
#define REF_LIMBS 72
struct big {
  uint32_t limb[REF_LIMBS];
};

static void big_add_bits(struct big *b, uint64_t m, int pos) {
  for (int l = pos / 32, r = pos % 32; m != 0 || r < 0; ++l) {
    const uint64_t part = r >= 0 ? (m << r) & 0xFFFFFFFFu : 0;
    m = r > 0 ? m >> (32 - r) : m >> 32;
    r = 0;
    uint64_t carry = part;
    for (int k = l; carry != 0; ++k) {
      assert_true(k < REF_LIMBS);
      const uint64_t v = (uint64_t)b->limb[k] + carry;
      b->limb[k] = (uint32_t)v;
      carry = v >> 32;
    }
  }
}

static int big_cmp(const struct big *a, const struct big *b) {
  for (int l = REF_LIMBS - 1; l >= 0; --l)
    if (a->limb[l] != b->limb[l]) return a->limb[l] < b->limb[l] ? -1 : 1;
  return 0;
}

static void big_sub(struct big *a, const struct big *b) { /* a -= b, a >= b */
  int64_t borrow = 0;
  for (int l = 0; l < REF_LIMBS; ++l) {
    int64_t v = (int64_t)a->limb[l] - b->limb[l] - borrow;
    borrow = v < 0;
    a->limb[l] = (uint32_t)(v + (borrow ? ((int64_t)1 << 32) : 0));
  }
}

/* Whether bits (of type t, float zero-extended) are a NaN. */
int test_nan_bits(clprim_type t, uint64_t bits) {
  return t == CLPRIM_FLOAT ? (bits & 0x7FFFFFFFu) > 0x7F800000u
                           : (bits << 1) > 0xFFE0000000000000ull;
}

/* The exactly rounded sum's bits (zero-extended for float). */
uint64_t test_exact_reference(clprim_type t, const void *p, size_t n) {
  static struct big pos, neg;
  memset(&pos, 0, sizeof pos);
  memset(&neg, 0, sizeof neg);
  int nan = 0, pinf = 0, ninf = 0, all_neg_zero = n > 0;
  const int dbl = t == CLPRIM_DOUBLE;
  for (size_t i = 0; i < n; ++i) {
    const double x = test_value_f(t, p, i);
    if (isnan(x)) nan = 1;
    if (isinf(x)) x > 0 ? (pinf = 1) : (ninf = 1);
    if (!(x == 0 && signbit(x))) all_neg_zero = 0;
    if (!isfinite(x) || x == 0) continue;
    /* x = m * 2^e exactly, m an integer below 2^53 */
    int e;
    const double f = frexp(fabs(x), &e);
    uint64_t m = (uint64_t)ldexp(f, 53);
    e -= 53;
    const int base = dbl ? -1074 : -149;
    while (e < base) { /* float subnormals: m's low bits are 0 */
      assert_true((m & 1) == 0);
      m >>= 1, ++e;
    }
    big_add_bits(x > 0 ? &pos : &neg, m, e - base);
  }
  if (nan || (pinf && ninf)) return dbl ? 0x7FF8000000000000ull : 0x7FC00000u;
  if (pinf) return dbl ? 0x7FF0000000000000ull : 0x7F800000u;
  if (ninf) return dbl ? 0xFFF0000000000000ull : 0xFF800000u;
  const int c = big_cmp(&pos, &neg), negative = c < 0;
  struct big *mag = negative ? &neg : &pos;
  big_sub(mag, negative ? &pos : &neg);
  int top = -1;
  for (int l = REF_LIMBS - 1; l >= 0 && top < 0; --l)
    if (mag->limb[l])
      for (int b = 31; b >= 0 && top < 0; --b)
        if (mag->limb[l] >> b & 1) top = 32 * l + b;
  if (top < 0) {
    if (all_neg_zero) return dbl ? 0x8000000000000000ull : 0x80000000u;
    return 0;
  }
  /* The top 64 bits (or fewer), the rest OR-ed into bit 0. */
  const int low = top >= 63 ? top - 63 : 0;
  uint64_t w = 0;
  int sticky = 0;
  for (int b = top; b >= low; --b)
    w = w << 1 | (mag->limb[b / 32] >> (b % 32) & 1);
  for (int b = 0; b < low; ++b)
    sticky |= mag->limb[b / 32] >> (b % 32) & 1;
  w |= (uint64_t)sticky;
  const int base = dbl ? -1074 : -149;
  uint64_t bits;
  if (dbl) {
    double v = ldexp((double)w, low + base);
    if (negative) v = -v;
    memcpy(&bits, &v, 8);
  } else {
    float v = ldexpf((float)w, low + base);
    if (negative) v = -v;
    uint32_t b32;
    memcpy(&b32, &v, 4);
    bits = b32;
  }
  return bits;
}

void test_swap(void *p, size_t size, size_t i, size_t j) {
  unsigned char tmp[8], *a = (unsigned char *)p + i * size, *b = (unsigned char *)p + j * size;
  memcpy(tmp, a, size);
  memcpy(a, b, size);
  memcpy(b, tmp, size);
}

/* Random inputs of the exact sums. */
const char *const test_exact_kind_name[TEST_EX_KINDS] = {
    "uniform [-1, 1)", "every exponent", "cancelling pairs", "subnormals", "near the largest"};

void test_exact_input(clprim_type t, void *p, size_t n, enum test_exact_kind k) {
  const int dbl = t == CLPRIM_DOUBLE;
  const int emin = dbl ? -1074 : -149, emax = dbl ? 1023 : 127;
  const double largest = dbl ? DBL_MAX : FLT_MAX;
  for (size_t i = 0; i < n; ++i) {
    const double sign = test_rand() % 2 ? -1.0 : 1.0, u = test_uniform();
    double x;
    switch (k) {
    case TEST_EX_UNIFORM:
      x = 2 * u - 1;
      break;
    case TEST_EX_WIDE:
      x = sign * ldexp(1 + u, emin + (int)(test_rand() % (unsigned)(emax - emin + 1)));
      break;
    case TEST_EX_CANCEL:
      x = sign * ldexp(1 + u, (int)(test_rand() % 60));
      break;
    case TEST_EX_SUBNORMAL:
      x = sign * ldexp(floor(u * ldexp(1, dbl ? 52 : 23)), emin);
      break;
    default:
      x = sign * largest * (0.5 + 0.5 * u);
      break;
    }
    if (!dbl && k == TEST_EX_WIDE && isinf((float)x)) x = sign * largest;
    exact_set(t, p, i, x);
  }
  if (k == TEST_EX_CANCEL) { /* the second half: the first's negatives, shuffled, a few left */
    const size_t es = clprim_type_size(t);
    for (size_t i = 0; i + n / 2 < n && i < n / 2; ++i)
      exact_set(t, p, n / 2 + i, -test_value_f(t, p, i));
    for (size_t i = n > 0 ? n - 1 : 0; i > 0; --i) test_swap(p, es, i, test_rand() % (i + 1));
    for (size_t i = 0; i < n / 1000 + 1 && n > 0; ++i)
      exact_set(t, p, test_rand() % n, ldexp(test_uniform(), -(int)(test_rand() % 100)));
  }
}
