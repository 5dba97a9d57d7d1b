/* strbuf: a growing string, for the text the library builds (model files, reports).
 *
 * Appends never fail loudly: an allocation failure marks the buffer failed, later appends do
 * nothing, and strbuf_take reports it by returning NULL. A zeroed strbuf is empty and ready. */
#ifndef DDPSIM_STRBUF_H
#define DDPSIM_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
  char *buf; /* NUL-terminated once anything was appended */
  size_t len, cap;
  int failed; /* an append ran out of memory */
} strbuf;

void strbuf_printf(strbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(strbuf *s, const char *fmt, va_list ap);

/* The text, owned by the caller from now on ("" if nothing was appended), or NULL if an append
 * failed (the buffer is then freed). Either way s is left empty. */
char *strbuf_take(strbuf *s);

void strbuf_free(strbuf *s); /* frees the contents; the strbuf is left empty */

#endif
