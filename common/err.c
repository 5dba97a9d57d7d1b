#include "err.h"

#include <stdarg.h>
#include <stdio.h>

int err_set(err_t *e, int code, const char *fmt, ...) {
  if (e) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
  }
  return code;
}

int err_exit_code(int code) {
  if (code == ERR_OK) return 0;
  return code == ERR_USAGE ? 2 : 1;
}
