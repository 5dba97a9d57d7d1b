/* prices: the table of example prices per GPU-hour (prices.h). */
#include "prices.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txt.h"

struct prices {
  char *text;
  price_row *rows;
  int n;
};

void prices_destroy(prices_t *t) {
  if (!t) return;
  free(t->text);
  free(t->rows);
  free(t);
}

int prices_class_ok(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '-')) return 0;
  return 1;
}

static int is_date(const char *s) {
  size_t n = strlen(s);
  if (n != 7 && n != 10) return 0;
  for (size_t i = 0; i < n; i++)
    if ((i == 4 || i == 7) ? s[i] != '-' : !isdigit((unsigned char)s[i])) return 0;
  int month = (s[5] - '0') * 10 + (s[6] - '0');
  int day = n == 10 ? (s[8] - '0') * 10 + (s[9] - '0') : 1;
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

static int is_currency(const char *s) {
  for (int i = 0; i < 3; i++)
    if (!isupper((unsigned char)s[i])) return 0;
  return s[3] == '\0';
}

int prices_load(const char *path, prices_t **out, err_t *e) {
  *out = NULL;
  prices_t *t = calloc(1, sizeof *t);
  if (!t) return err_set(e, ERR_NOMEM, "%s: out of memory", path);
  int rc = txt_read_text(path, &t->text, e), cap = 0, lineno = 0, header = 0;
  if (rc) goto fail;
  char *line = t->text;
  while (line && *line) {
    char *next = strchr(line, '\n');
    if (next) *next++ = '\0';
    lineno++;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r') line[--len] = '\0';
    if (!header) {
      if (strcmp(line, "ddpsim-prices 1") != 0) {
        rc = err_set(e, ERR_INPUT, "%s:%d: the first line must be 'ddpsim-prices 1'", path, lineno);
        goto fail;
      }
      header = 1;
      line = next;
      continue;
    }
    if (line[0] == '#' || line[strspn(line, " \t")] == '\0') {
      line = next;
      continue;
    }
    char *f[8];
    int nf = 0;
    for (char *p = line; nf < 8;) {
      f[nf++] = p;
      char *tab = strchr(p, '\t');
      if (!tab) break;
      *tab = '\0';
      p = tab + 1;
    }
    if (nf != 7) {
      rc = err_set(e, ERR_INPUT, "%s:%d: %s fields separated by tabs: profile class price currency date what source", path, lineno,
                   nf < 7 ? "too few" : "more than seven");
      goto fail;
    }
    price_row r = {.profile = f[0], .class_ = f[1], .currency = f[3], .date = f[4], .what = f[5], .source = f[6], .line = lineno};
    const char *bad = NULL;
    if (!*r.profile) bad = "an empty profile";
    else if (!prices_class_ok(r.class_)) bad = "the class must be a word of a-z, 0-9 and '-'";
    else if (txt_parse_double(f[2], &r.price_per_gpu_hour) || !(r.price_per_gpu_hour > 0) || r.price_per_gpu_hour > 1e6)
      bad = "the price must be a number above 0 and at most 1e6 per GPU-hour";
    else if (!is_currency(r.currency)) bad = "the currency must be an ISO 4217 code: three capital letters (USD)";
    else if (!is_date(r.date)) bad = "the date must be YYYY-MM-DD or YYYY-MM";
    else if (!*r.what) bad = "an empty description of the offer";
    else if (strncmp(r.source, "https://", 8) != 0 && strncmp(r.source, "http://", 7) != 0)
      bad = "the source must be the http(s) address the price was read at";
    if (bad) {
      rc = err_set(e, ERR_INPUT, "%s:%d: %s", path, lineno, bad);
      goto fail;
    }
    for (int k = 0; k < t->n; k++)
      if (!strcmp(t->rows[k].profile, r.profile) && !strcmp(t->rows[k].class_, r.class_)) {
        rc = err_set(e, ERR_INPUT, "%s:%d: %s %s is priced on line %d already", path, lineno, r.profile, r.class_, t->rows[k].line);
        goto fail;
      }
    if (t->n == cap) {
      cap = cap ? 2 * cap : 16;
      price_row *g = realloc(t->rows, (size_t)cap * sizeof *g);
      if (!g) {
        rc = err_set(e, ERR_NOMEM, "%s: out of memory", path);
        goto fail;
      }
      t->rows = g;
    }
    t->rows[t->n++] = r;
    line = next;
  }
  if (!header) {
    rc = err_set(e, ERR_INPUT, "%s:1: empty: the first line must be 'ddpsim-prices 1'", path);
    goto fail;
  }
  *out = t;
  return ERR_OK;
fail:
  prices_destroy(t);
  return rc;
}

const price_row *prices_find(const prices_t *t, const char *profile, const char *cls) {
  int any = !cls || !strcmp(cls, "auto");
  for (int k = 0; k < t->n; k++)
    if (!strcmp(t->rows[k].profile, profile) && (any || !strcmp(t->rows[k].class_, cls))) return &t->rows[k];
  return NULL;
}

void prices_classes(const prices_t *t, const char *profile, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int k = 0; k < t->n && n < len; k++)
    if (!strcmp(t->rows[k].profile, profile))
      n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", t->rows[k].class_);
}

void prices_note(const price_row *r, char *buf, size_t len) {
  snprintf(buf, len, "%g %s per GPU-hour: %s, %s, %s, %s", r->price_per_gpu_hour, r->currency, r->class_, r->date, r->what, r->source);
}
