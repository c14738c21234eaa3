/* tuning.c: tuning as data. Each family (and engine) names its knobs and
 * gives a table of rows (path, device, key and value bytes -> knob values,
 * each with where it comes from); a call looks its shape up here. One
 * override exists, for experiments: $CLPRIM_TUNE="sort.wg=256,sort.items=32",
 * read once when a context is created (an unknown name fails the
 * creation); tests set the same through clprim__tune. docs/TUNING.md lists
 * the knobs. */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a table row holds for this context and these key / value sizes. */
static int row_holds(const clprim_context *ctx, const struct clprim_tuning_row *r,
                     unsigned key_bytes, unsigned value_bytes) {
  return (!r->paths || (r->paths >> ctx->info.path & 1u)) &&
         (!r->device_types || (r->device_types & ctx->info.device_type)) &&
         (!r->device || strstr(ctx->info.device_name, r->device)) &&
         (!r->key_bytes || r->key_bytes == key_bytes) &&
         (!r->value_bytes ||
          r->value_bytes == (value_bytes ? value_bytes : CLPRIM__NO_VALUES));
}

/* A family's slot in the context. By name, not by address: libclprim_mpi.so
 * holds its own copy of clprim's objects (CMakeLists.txt), so a context it
 * created lists that copy's descriptors, and a user's plain call on it runs
 * libclprim.so's code with libclprim.so's descriptor. */
static int family_index(const clprim_context *ctx, const struct clprim_family *f) {
  for (unsigned i = 0; i < ctx->family_count; ++i)
    if (ctx->families[i] == f || strcmp(ctx->families[i]->name, f->name) == 0) return (int)i;
  return -1;
}

void clprim__tuned(const clprim_context *ctx, const struct clprim_family *f, unsigned key_bytes,
                   unsigned value_bytes, long long *value) {
  for (unsigned k = 0; k < f->knob_count; ++k) value[k] = -1;
  for (unsigned r = 0; r < f->rows; ++r) {
    const struct clprim_tuning_row *row = &f->table[r];
    if (!row_holds(ctx, row, key_bytes, value_bytes)) continue;
    for (unsigned k = 0; k < f->knob_count; ++k)
      if (row->set >> k & 1u) value[k] = row->value[k];
  }
  const int i = family_index(ctx, f);
  for (unsigned k = 0; i >= 0 && k < f->knob_count; ++k)
    if (ctx->slots[i].set[k] >= 0) value[k] = ctx->slots[i].set[k];
}

void *clprim__state(const clprim_context *ctx, const struct clprim_family *f) {
  const int i = family_index(ctx, f);
  return i >= 0 ? ctx->slots[i].state : NULL;
}

/* One "family.knob=value": its family slot, knob and value. */
static int parse_one(const clprim_context *ctx, const char *s, size_t len, unsigned *family,
                     unsigned *knob, long long *value) {
  const char *dot = memchr(s, '.', len), *eq = memchr(s, '=', len);
  if (!dot || !eq || eq < dot) return 0;
  for (unsigned i = 0; i < ctx->family_count; ++i) {
    const struct clprim_family *f = ctx->families[i];
    if (strlen(f->name) != (size_t)(dot - s) || strncmp(f->name, s, (size_t)(dot - s)) != 0)
      continue;
    for (unsigned k = 0; k < f->knob_count; ++k) {
      const char *name = f->knobs[k].name;
      if (strlen(name) != (size_t)(eq - dot - 1) || strncmp(name, dot + 1, (size_t)(eq - dot - 1)))
        continue;
      char number[32];
      const size_t digits = len - (size_t)(eq + 1 - s);
      if (digits == 0 || digits >= sizeof number) return 0;
      memcpy(number, eq + 1, digits);
      number[digits] = 0;
      char *end;
      errno = 0;
      const long long v = strtoll(number, &end, 10);
      if (*end || errno || (v != -1 && (v < f->knobs[k].min || v > f->knobs[k].max))) return 0;
      *family = i, *knob = k, *value = v;
      return 1;
    }
  }
  return 0;
}

clprim_status clprim__tune(clprim_context *ctx, const char *assignments) {
  if (!ctx || !assignments) return CLPRIM_ERROR_INVALID_ARGUMENT;
  /* Every assignment is checked before any is set. */
  for (int apply = 0; apply < 2; ++apply)
    for (const char *s = assignments; *s;) {
      const size_t len = strcspn(s, ",");
      unsigned family, knob;
      long long value;
      if (len && !parse_one(ctx, s, len, &family, &knob, &value)) {
        fprintf(stderr, "clprim: tuning \"%.*s\" names no knob or is out of its range "
                        "(docs/TUNING.md lists them)\n", (int)len, s);
        return CLPRIM_ERROR_INVALID_ARGUMENT;
      }
      if (len && apply) ctx->slots[family].set[knob] = value;
      s += len + (s[len] == ',');
    }
  return CLPRIM_SUCCESS;
}

/* With $CLPRIM_TRACE: the table rows that hold on this device and path
 * (for the key and value sizes they name), then the knobs set by name. */
static void print_tuning(const clprim_context *ctx) {
  for (unsigned i = 0; i < ctx->family_count; ++i) {
    const struct clprim_family *f = ctx->families[i];
    for (unsigned r = 0; r < f->rows; ++r) {
      const struct clprim_tuning_row *row = &f->table[r];
      const unsigned values = row->value_bytes == CLPRIM__NO_VALUES ? 0 : row->value_bytes;
      if (!row_holds(ctx, row, row->key_bytes, values)) continue;
      fprintf(stderr, "clprim: tuning %s", f->name);
      if (row->key_bytes) fprintf(stderr, ", %u-byte keys", row->key_bytes);
      if (row->value_bytes == CLPRIM__NO_VALUES) fprintf(stderr, ", keys alone");
      else if (row->value_bytes) fprintf(stderr, ", %u-byte values", row->value_bytes);
      fprintf(stderr, ":");
      for (unsigned k = 0; k < f->knob_count; ++k)
        if (row->set >> k & 1u) fprintf(stderr, " %s=%lld", f->knobs[k].name, row->value[k]);
      fprintf(stderr, " -- %s\n", row->why);
    }
    for (unsigned k = 0; k < f->knob_count; ++k)
      if (ctx->slots[i].set[k] >= 0)
        fprintf(stderr, "clprim: tuning %s.%s=%lld (CLPRIM_TUNE)\n", f->name, f->knobs[k].name,
                ctx->slots[i].set[k]);
  }
}

clprim_status clprim__init_families(clprim_context *ctx,
                                    const struct clprim_family *const *families,
                                    unsigned count) {
  ctx->families = families, ctx->family_count = count;
  ctx->slots = calloc(count ? count : 1, sizeof *ctx->slots);
  if (!ctx->slots) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  for (unsigned i = 0; i < count; ++i) {
    for (unsigned k = 0; k < CLPRIM__KNOBS_MAX; ++k) ctx->slots[i].set[k] = -1;
    if (families[i]->state_size) {
      ctx->slots[i].state = calloc(1, families[i]->state_size);
      if (!ctx->slots[i].state) return CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
    }
  }
  const char *tune = getenv("CLPRIM_TUNE");
  const clprim_status st = tune ? clprim__tune(ctx, tune) : CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS && ctx->trace) print_tuning(ctx);
  return st;
}

void clprim__free_families(clprim_context *ctx) {
  for (unsigned i = 0; ctx->slots && i < ctx->family_count; ++i) free(ctx->slots[i].state);
  free(ctx->slots);
  ctx->slots = NULL;
}
