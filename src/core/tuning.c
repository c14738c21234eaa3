/* tuning.c: tuning as data. Each family (and engine) names its knobs and
 * gives a table of rows (path, device, key and value bytes -> knob values,
 * each with where it comes from); a call looks its shape up here. After the
 * table come the rows of the device's tuning file, which clprim-tune writes
 * (tools/clprim-tune.c), then one override, for experiments:
 * $CLPRIM_TUNE="sort.wg=256,sort.items=32", read once when a context is
 * created (an unknown name fails the creation); tests set the same through
 * clprim__tune. docs/TUNING.md lists the knobs. */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A row that names no path, device type or device: the portable defaults
 * (all that $CLPRIM_TUNING_TABLES=portable keeps). */
static int row_portable(const struct clprim_tuning_row *r) {
  return !r->paths && !r->device_types && !r->device;
}

/* Whether a table row holds for this context and these key / value sizes. */
static int row_holds(const clprim_context *ctx, const struct clprim_tuning_row *r,
                     unsigned key_bytes, unsigned value_bytes) {
  return (!ctx->tables_portable || row_portable(r)) &&
         (!r->paths || (r->paths >> ctx->info.path & 1u)) &&
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
  if (i < 0) return;
  const struct clprim_family_slot *slot = &ctx->slots[i];
  for (unsigned r = 0; r < slot->file_row_count; ++r) {
    const struct clprim_tuning_row *row = &slot->file_rows[r];
    if (!row_holds(ctx, row, key_bytes, value_bytes)) continue;
    for (unsigned k = 0; k < f->knob_count; ++k)
      if (row->set >> k & 1u) value[k] = row->value[k];
  }
  for (unsigned k = 0; k < f->knob_count; ++k)
    if (slot->set[k] >= 0) value[k] = slot->set[k];
}

void *clprim__state(const clprim_context *ctx, const struct clprim_family *f) {
  const int i = family_index(ctx, f);
  return i >= 0 ? ctx->slots[i].state : NULL;
}

/* The family named by the len bytes at s: its slot, or -1. */
static int family_named(const clprim_context *ctx, const char *s, size_t len) {
  for (unsigned i = 0; i < ctx->family_count; ++i)
    if (strlen(ctx->families[i]->name) == len && strncmp(ctx->families[i]->name, s, len) == 0)
      return (int)i;
  return -1;
}

/* The len bytes at s as a whole decimal number within [min, max] (and -1
 * where minus_one): 1 and *value, else 0. */
static int parse_number(const char *s, size_t len, long long min, long long max, int minus_one,
                        long long *value) {
  char number[32];
  if (len == 0 || len >= sizeof number) return 0;
  memcpy(number, s, len);
  number[len] = 0;
  char *end;
  errno = 0;
  const long long v = strtoll(number, &end, 10);
  if (*end || errno || !((minus_one && v == -1) || (v >= min && v <= max))) return 0;
  *value = v;
  return 1;
}

/* "knob=value" of family f in the len bytes at s: 1, *knob and *value
 * (-1 only where minus_one), else 0. */
static int parse_knob(const struct clprim_family *f, const char *s, size_t len, int minus_one,
                      unsigned *knob, long long *value) {
  const char *eq = memchr(s, '=', len);
  if (!eq) return 0;
  for (unsigned k = 0; k < f->knob_count; ++k) {
    const char *name = f->knobs[k].name;
    if (strlen(name) != (size_t)(eq - s) || strncmp(name, s, (size_t)(eq - s)) != 0) continue;
    *knob = k;
    return parse_number(eq + 1, len - (size_t)(eq + 1 - s), f->knobs[k].min, f->knobs[k].max,
                        minus_one, value);
  }
  return 0;
}

/* One "family.knob=value": its family slot, knob and value. */
static int parse_one(const clprim_context *ctx, const char *s, size_t len, unsigned *family,
                     unsigned *knob, long long *value) {
  const char *dot = memchr(s, '.', len);
  if (!dot) return 0;
  const int i = family_named(ctx, s, (size_t)(dot - s));
  if (i < 0 || !parse_knob(ctx->families[i], dot + 1, len - (size_t)(dot + 1 - s), 1, knob, value))
    return 0;
  *family = (unsigned)i;
  return 1;
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

/* One row of family f that holds here, after prefix: its sizes, knobs and
 * where it comes from (`from`, then its why). */
static void print_row(const clprim_context *ctx, FILE *out, const char *prefix,
                      const struct clprim_family *f, const struct clprim_tuning_row *row,
                      const char *from) {
  const unsigned values = row->value_bytes == CLPRIM__NO_VALUES ? 0 : row->value_bytes;
  if (!row_holds(ctx, row, row->key_bytes, values)) return;
  fprintf(out, "%s%s", prefix, f->name);
  if (row->key_bytes) fprintf(out, ", %u-byte keys", row->key_bytes);
  if (row->value_bytes == CLPRIM__NO_VALUES)
    fprintf(out, ", keys alone");
  else if (row->value_bytes)
    fprintf(out, ", %u-byte values", row->value_bytes);
  fprintf(out, ":");
  for (unsigned k = 0; k < f->knob_count; ++k)
    if (row->set >> k & 1u) fprintf(out, " %s=%lld", f->knobs[k].name, row->value[k]);
  fprintf(out, " -- %s%s\n", from, row->why);
}

void clprim__print_tuning(const clprim_context *ctx, FILE *out, const char *prefix) {
  if (ctx->tables_portable)
    fprintf(out, "%sthe tables' portable rows only (CLPRIM_TUNING_TABLES=portable)\n", prefix);
  for (unsigned i = 0; i < ctx->family_count; ++i) {
    const struct clprim_family *f = ctx->families[i];
    for (unsigned r = 0; r < f->rows; ++r)
      print_row(ctx, out, prefix, f, &f->table[r], "table: ");
    for (unsigned r = 0; r < ctx->slots[i].file_row_count; ++r)
      print_row(ctx, out, prefix, f, &ctx->slots[i].file_rows[r], "");
    for (unsigned k = 0; k < f->knob_count; ++k)
      if (ctx->slots[i].set[k] >= 0)
        fprintf(out, "%s%s.%s=%lld -- CLPRIM_TUNE\n", prefix, f->name, f->knobs[k].name,
                ctx->slots[i].set[k]);
  }
}

/* ---- the tuning file (clprim-tune writes it) */

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (; *s; ++s)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

int clprim__tuning_file_path(const clprim_context *ctx, char *path, size_t size) {
  const char *env = getenv("CLPRIM_TUNING_FILE");
  int n;
  if (env) {
    if (!*env || strcmp(env, "off") == 0) return 0;
    n = snprintf(path, size, "%s", env);
  } else {
    if (!ctx->cache_dir) return 0;
    uint64_t h = fnv1a(0xcbf29ce484222325ull, ctx->info.platform_name);
    h = fnv1a(fnv1a(h, "\n"), ctx->info.device_name);
    h = fnv1a(fnv1a(h, "\n"), ctx->info.driver_version);
    n = snprintf(path, size, "%s/tuning-%016llx.txt", ctx->cache_dir, (unsigned long long)h);
  }
  return n > 0 && (size_t)n < size;
}

/* The token at *s (ended by white space), its length in *len, and *s moved
 * past it and the white space after it. */
static const char *next_token(const char **s, size_t *len) {
  const char *t = *s;
  *len = strcspn(t, " \t\r\n");
  *s = t + *len + strspn(t + *len, " \t\r\n");
  return t;
}

/* One line of the tuning file, "family [key_bytes=N] [value_bytes=N|none]
 * knob=value...", '#' to the line's end a comment: 1 (*family and *row),
 * 0 for a blank line, -1 when wrong (*why). */
static int parse_row(const clprim_context *ctx, char *line, unsigned *family,
                     struct clprim_tuning_row *row, const char **why) {
  line[strcspn(line, "#")] = 0;
  const char *s = line + strspn(line, " \t\r\n");
  if (!*s) return 0;
  size_t len;
  const char *t = next_token(&s, &len);
  const int i = family_named(ctx, t, len);
  if (i < 0) return *why = "no family has that name", -1;
  memset(row, 0, sizeof *row);
  row->why = "tuning file";
  while (*s) {
    t = next_token(&s, &len);
    long long v;
    unsigned k;
    if (len > 10 && strncmp(t, "key_bytes=", 10) == 0) {
      if (!parse_number(t + 10, len - 10, 1, 64, 0, &v)) return *why = "a wrong key_bytes", -1;
      row->key_bytes = (unsigned)v;
    } else if (len > 12 && strncmp(t, "value_bytes=", 12) == 0) {
      if (len == 16 && strncmp(t + 12, "none", 4) == 0)
        row->value_bytes = CLPRIM__NO_VALUES;
      else if (parse_number(t + 12, len - 12, 1, 64, 0, &v))
        row->value_bytes = (unsigned)v;
      else
        return *why = "a wrong value_bytes", -1;
    } else if (parse_knob(ctx->families[i], t, len, 0, &k, &v)) {
      row->set |= 1u << k, row->value[k] = v;
    } else {
      return *why = "a knob the family does not have, or a value out of its range", -1;
    }
  }
  if (!row->set) return *why = "no knob set", -1;
  *family = (unsigned)i;
  return 1;
}

/* Reads ctx's tuning file where there is one: its rows after the tables'
 * (a wrong line is left out, with a line on stderr). */
static clprim_status load_tuning_file(clprim_context *ctx) {
  char path[4200];
  if (!clprim__tuning_file_path(ctx, path, sizeof path)) return CLPRIM_SUCCESS;
  FILE *in = fopen(path, "r");
  if (!in) {
    if (getenv("CLPRIM_TUNING_FILE"))
      fprintf(stderr, "clprim: the tuning file %s (CLPRIM_TUNING_FILE) cannot be read\n", path);
    return CLPRIM_SUCCESS;
  }
  char line[1024];
  unsigned number = 0;
  clprim_status st = CLPRIM_SUCCESS;
  while (st == CLPRIM_SUCCESS && fgets(line, sizeof line, in)) {
    ++number;
    unsigned family;
    struct clprim_tuning_row row;
    const char *why = "";
    const int got = parse_row(ctx, line, &family, &row, &why);
    if (got < 0)
      fprintf(stderr, "clprim: tuning file %s, line %u: %s; the line is left out\n", path, number,
              why);
    if (got <= 0) continue;
    struct clprim_family_slot *slot = &ctx->slots[family];
    struct clprim_tuning_row *rows =
        realloc(slot->file_rows, (slot->file_row_count + 1) * sizeof *rows);
    if (!rows) {
      st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
      break;
    }
    rows[slot->file_row_count++] = row;
    slot->file_rows = rows;
  }
  fclose(in);
  if (st == CLPRIM_SUCCESS) {
    ctx->tuning_file = malloc(strlen(path) + 1);
    if (ctx->tuning_file)
      strcpy(ctx->tuning_file, path);
    else
      st = CLPRIM_ERROR_OUT_OF_HOST_MEMORY;
  }
  return st;
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
  const char *tables = getenv("CLPRIM_TUNING_TABLES");
  if (tables && *tables) {
    if (strcmp(tables, "portable") != 0) {
      fprintf(stderr, "clprim: CLPRIM_TUNING_TABLES=\"%s\" is not \"portable\"\n", tables);
      return clprim__invalid(ctx, "CLPRIM_TUNING_TABLES=\"%s\" is not \"portable\"", tables);
    }
    ctx->tables_portable = 1;
  }
  CLPRIM_CHECK(load_tuning_file(ctx));
  const char *tune = getenv("CLPRIM_TUNE");
  const clprim_status st = tune ? clprim__tune(ctx, tune) : CLPRIM_SUCCESS;
  if (st == CLPRIM_SUCCESS && ctx->trace) clprim__print_tuning(ctx, stderr, "clprim: tuning ");
  return st;
}

void clprim__free_families(clprim_context *ctx) {
  for (unsigned i = 0; ctx->slots && i < ctx->family_count; ++i) {
    free(ctx->slots[i].state);
    free(ctx->slots[i].file_rows);
  }
  free(ctx->slots);
  ctx->slots = NULL;
  free(ctx->tuning_file);
  ctx->tuning_file = NULL;
}
