#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_vprintf(strbuf *s, const char *fmt, va_list ap) {
  if (s->failed) return;
  for (;;) {
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? s->cap - s->len : 0, fmt, cp);
    va_end(cp);
    if (n < 0) {
      s->failed = 1;
      return;
    }
    if (s->buf && (size_t)n < s->cap - s->len) {
      s->len += (size_t)n;
      return;
    }
    size_t nc = (s->cap + (size_t)n + 64) * 2;
    char *nb = realloc(s->buf, nc);
    if (!nb) {
      s->failed = 1;
      return;
    }
    s->buf = nb;
    s->cap = nc;
  }
}

void strbuf_printf(strbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  strbuf_vprintf(s, fmt, ap);
  va_end(ap);
}

char *strbuf_take(strbuf *s) {
  char *out = NULL;
  if (!s->failed) out = s->buf ? s->buf : strdup("");
  else free(s->buf);
  memset(s, 0, sizeof *s);
  return out;
}

void strbuf_free(strbuf *s) {
  free(s->buf);
  memset(s, 0, sizeof *s);
}
