/* text.c: text assembled piece by piece (program sources, a pipeline's
 * generated function, translated build logs): grown as needed, its lines
 * counted, and an allocation that fails remembered rather than checked at
 * every step. */
#include "core.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void clprim__text_add(struct clprim_text *t, const char *s, size_t len) {
  if (t->failed) return;
  if (t->len + len + 1 > t->room) {
    const size_t room = (t->len + len + 1) * 2;
    char *p = realloc(t->s, room);
    if (!p) {
      t->failed = 1;
      return;
    }
    t->s = p, t->room = room;
  }
  memcpy(t->s + t->len, s, len);
  for (size_t k = 0; k < len; ++k) t->lines += s[k] == '\n';
  t->len += len;
  t->s[t->len] = '\0';
}

void clprim__text_printf(struct clprim_text *t, const char *format, ...) {
  if (t->failed) return;
  char small[256];
  va_list ap;
  va_start(ap, format);
  const int need = vsnprintf(small, sizeof small, format, ap);
  va_end(ap);
  if (need < 0) {
    t->failed = 1;
    return;
  }
  if ((size_t)need < sizeof small) {
    clprim__text_add(t, small, (size_t)need);
    return;
  }
  char *big = malloc((size_t)need + 1);
  if (!big) {
    t->failed = 1;
    return;
  }
  va_start(ap, format);
  vsnprintf(big, (size_t)need + 1, format, ap);
  va_end(ap);
  clprim__text_add(t, big, (size_t)need);
  free(big);
}
