#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int parse_bytes(const char *s, const char *what, size_t *out, err_t *e) {
  if (!s || !*s) return err_set(e, ERR_USAGE, "%s: empty size", what);
  errno = 0;
  char *end;
  if (*s == '-') return err_set(e, ERR_USAGE, "%s: '%s' is negative", what, s);
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || errno) return err_set(e, ERR_USAGE, "%s: '%s' is not a size", what, s);
  unsigned long long mult = 1;
  if (*end) {
    switch (*end) {
    case 'k': case 'K': mult = 1ull << 10; break;
    case 'm': case 'M': mult = 1ull << 20; break;
    case 'g': case 'G': mult = 1ull << 30; break;
    default: return err_set(e, ERR_USAGE, "%s: '%s': unknown suffix (use K, M or G)", what, s);
    }
    if (end[1]) return err_set(e, ERR_USAGE, "%s: '%s': trailing characters", what, s);
  }
  if (v == 0) return err_set(e, ERR_USAGE, "%s: '%s' must be > 0", what, s);
  if (v > SIZE_MAX / mult) return err_set(e, ERR_USAGE, "%s: '%s' is too large", what, s);
  *out = (size_t)(v * mult);
  return ERR_OK;
}

int parse_int(const char *s, const char *what, long lo, long hi, long *out, err_t *e) {
  if (!s || !*s) return err_set(e, ERR_USAGE, "%s: empty value", what);
  errno = 0;
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno) return err_set(e, ERR_USAGE, "%s: '%s' is not an integer", what, s);
  if (v < lo || v > hi)
    return err_set(e, ERR_USAGE, "%s: %ld is out of range [%ld, %ld]", what, v, lo, hi);
  *out = v;
  return ERR_OK;
}

int parse_double(const char *s, const char *what, double *out, err_t *e) {
  if (!s || !*s) return err_set(e, ERR_USAGE, "%s: empty value", what);
  errno = 0;
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v))
    return err_set(e, ERR_USAGE, "%s: '%s' is not a number", what, s);
  if (!(v > 0)) return err_set(e, ERR_USAGE, "%s: '%s' must be > 0", what, s);
  *out = v;
  return ERR_OK;
}

int parse_int_list(const char *s, const char *what, long lo, long hi, long *out, size_t cap,
                   size_t *n, err_t *e) {
  if (!s || !*s) return err_set(e, ERR_USAGE, "%s: empty list", what);
  size_t k = 0;
  const char *p = s;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char item[64];
    if (len == 0 || len >= sizeof item)
      return err_set(e, ERR_USAGE, "%s: '%s' is not a comma-separated list", what, s);
    memcpy(item, p, len);
    item[len] = '\0';
    if (k == cap) return err_set(e, ERR_USAGE, "%s: more than %zu values", what, cap);
    int rc = parse_int(item, what, lo, hi, &out[k], e);
    if (rc) return rc;
    k++;
    if (!comma) break;
    p = comma + 1;
  }
  *n = k;
  return ERR_OK;
}
