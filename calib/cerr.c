#include "cerr.h"

#include <stdarg.h>
#include <stdio.h>

int cerr_set(cerr *e, int code, const char *fmt, ...) {
  if (e) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
  }
  return code;
}
