#include "txt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *txt_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf) goto fail;
  for (;;) {
    if (n + 1 >= cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) goto fail;
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) goto fail;
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
fail: {
  int saved = errno ? errno : EIO;
  free(buf);
  fclose(f);
  errno = saved;
  return NULL;
}
}

int txt_read_text(const char *path, char **text, err_t *e) {
  size_t len;
  if (!(*text = txt_read_file(path, &len))) return err_set(e, ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  const char *nul = memchr(*text, 0, len);
  if (!nul) return ERR_OK;
  int line = 1;
  for (const char *c = *text; c < nul; c++) line += *c == '\n';
  free(*text);
  *text = NULL;
  return err_set(e, ERR_INPUT, "%s:%d: a NUL byte: not a text file", path, line);
}

int txt_split(char *line, char **tok, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p || *p == '#') break;
    if (n == max) return -1;
    tok[n++] = p;
    while (*p && !isspace((unsigned char)*p) && *p != '#') p++;
    if (*p == '#') {
      *p = '\0';
      break;
    }
    if (*p) *p++ = '\0';
  }
  return n;
}

int txt_parse_long(const char *s, long *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

/* Parses a leading double and returns the rest of the string in *rest. */
static int lead_double(const char *s, double *v, const char **rest) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double d = strtod(s, &end);
  if (errno || end == s || !isfinite(d)) return -1;
  *v = d;
  *rest = end;
  return 0;
}

int txt_parse_double(const char *s, double *out) {
  const char *rest;
  double v;
  if (lead_double(s, &v, &rest) || *rest) return -1;
  *out = v;
  return 0;
}

struct unit {
  const char *name;
  double factor;
};

static int with_unit(const char *s, const struct unit *units, double *out) {
  const char *rest;
  double v;
  if (lead_double(s, &v, &rest)) return -1;
  for (const struct unit *u = units; u->name; u++) {
    if (strcmp(rest, u->name) == 0) {
      *out = v * u->factor;
      return 0;
    }
  }
  return -1;
}

int txt_parse_bw(const char *s, double *Bps) {
  static const struct unit units[] = {
      {"Bps", 1.0},       {"kBps", 1e3},      {"KBps", 1e3},     {"MBps", 1e6},
      {"GBps", 1e9},      {"TBps", 1e12},     {"bps", 1.0 / 8},  {"kbps", 1e3 / 8},
      {"Kbps", 1e3 / 8},  {"Mbps", 1e6 / 8},  {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8},
      {NULL, 0}};
  return with_unit(s, units, Bps);
}

int txt_parse_time(const char *s, double *sec) {
  static const struct unit units[] = {{"s", 1.0},   {"ms", 1e-3}, {"us", 1e-6},
                                      {"ns", 1e-9}, {NULL, 0}};
  return with_unit(s, units, sec);
}

const char *txt_kv(const char *tok, const char *key) {
  size_t k = strlen(key);
  if (strncmp(tok, key, k) == 0 && tok[k] == '=') return tok + k + 1;
  return NULL;
}
