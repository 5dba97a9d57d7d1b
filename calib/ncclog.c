/* ncclog: nccl-tests' output read back (ncclog.h). The layouts of every release, with the lines of
 * nccl-tests' source that print them, are in docs/calib.md ("import nccl-tests"). */
#include "ncclog.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The programs nccl-tests builds (src/<name>.cu, v2.19.6) and what their rows show: whether the
 * redop column holds a reduction (sendrecv's does: it runs run_ops; the others print "none", or
 * nothing before v2.13.4), whether the root column holds a rank (else -1), and busbw / algbw
 * (<name>GetBw). The four ddpsim models take coll_bus_factor (sim/coll.h, the same factors). */
enum { F_COLL, F_ONE, F_NM1_N, F_NONE };
typedef struct {
  const char *name;
  int coll; /* coll_kind, -1: not modelled */
  int reduces, rooted, factor;
} prog_t;
static const prog_t progs[] = {
    {"all_reduce", COLL_ALLREDUCE, 1, 0, F_COLL}, {"all_gather", COLL_ALLGATHER, 0, 0, F_COLL},
    {"reduce_scatter", COLL_REDUCESCATTER, 1, 0, F_COLL}, {"broadcast", COLL_BROADCAST, 0, 1, F_COLL},
    {"reduce", -1, 1, 1, F_ONE}, {"alltoall", -1, 0, 0, F_NM1_N}, {"sendrecv", -1, 1, 0, F_ONE},
    {"gather", -1, 0, 1, F_NM1_N}, {"scatter", -1, 0, 1, F_NM1_N},
    /* algbw is not size / time for these two: their rows never pass data_line's check */
    {"hypercube", -1, 0, 0, F_NONE}, {"alltoallv", -1, 0, 0, F_NONE}};
#define NPROGS (int)(sizeof progs / sizeof *progs)
#define MODELLED "ddpsim models all_reduce, all_gather, reduce_scatter and broadcast"

const char *ncclog_coll_name(int coll) {
  for (int i = 0; i < NPROGS; i++)
    if (progs[i].coll == coll && coll >= 0) return progs[i].name;
  return "?";
}

/* NAME_perf[_SUFFIX] (program_invocation_short_name, with the Makefile's NAME_SUFFIX) -> progs. */
static int prog_of(const char *name) {
  const char *q = strstr(name, "_perf");
  size_t n = q ? (size_t)(q - name) : strlen(name);
  for (int i = 0; i < NPROGS; i++)
    if (strlen(progs[i].name) == n && strncmp(name, progs[i].name, n) == 0) return i;
  return -1;
}

static double prog_factor(int i, int n) {
  switch (progs[i].factor) {
  case F_COLL: return coll_bus_factor((coll_kind)progs[i].coll, n);
  case F_ONE: return 1;
  case F_NM1_N: return (n - 1) / (double)n;
  default: return NAN;
  }
}

void ncclog_free(ncclog *l) {
  if (!l) return;
  free(l->rows);
  for (int i = 0; i < l->nhosts; i++) free(l->hostv[i]);
  free(l->hostv);
  l->rows = NULL;
  l->hostv = NULL;
  l->nrows = 0;
  l->nhosts = 0;
}

/* Appends name to the comma-separated list unless it is there (the list is for people: it stops
 * growing when full). */
static void add_name(char *list, size_t len, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += n)
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return;
  if (strlen(list) + n + 2 < len) snprintf(list + strlen(list), len - strlen(list), "%s%s", *list ? "," : "", name);
}

/* Counts a host once, however many there are. -1 when out of memory. */
static int add_host(ncclog *l, const char *host) {
  for (int i = 0; i < l->nhosts; i++)
    if (strcmp(l->hostv[i], host) == 0) return 0;
  char **g = realloc(l->hostv, (size_t)(l->nhosts + 1) * sizeof *g);
  if (!g) return -1;
  l->hostv = g;
  size_t n = strlen(host) + 1;
  if (!(l->hostv[l->nhosts] = malloc(n))) return -1;
  memcpy(l->hostv[l->nhosts], host, n);
  l->nhosts++;
  add_name(l->hosts, sizeof l->hosts, host);
  return 0;
}

/* A finite number token; 0 when it is not one (N/A). */
static int number(const char *t, double *v) {
  char *end;
  errno = 0;
  *v = strtod(t, &end);
  return end != t && *end == '\0' && errno == 0 && isfinite(*v);
}

enum { MAXTOK = 64 }; /* fields of a line looked at; releases print at most 2 x 10 + 7 */

static int all_digits(const char *t) { return *t && strspn(t, "0123456789") == strlen(t); }

/* Where a data line's fields are, from the column header that precedes the rows ("# size count
 * type redop root time algbw busbw #wrong time ..."; v1.0: "# bytes N type op time algbw busbw
 * res ..."). -1: the column is absent. */
typedef struct {
  int line;         /* the header's line; 0: none read (12 or 13 fields, v2.x) */
  int n;            /* fields of a data line */
  int size, count, type, redop, root, time[2], algbw[2], busbw[2], wrong[2];
  int delta;        /* "error"/"res" (before v2.13): the largest error, not a count */
  int ms;           /* v1.0 prints milliseconds */
  int bitdiff, periter, cputime;
  char names[512];  /* the header's names, to tell a second header of another layout */
} layout;

static void layout_default(layout *y, int root) {
  memset(y, 0, sizeof *y);
  y->size = 0, y->count = 1, y->type = 2, y->redop = 3, y->root = root ? 4 : -1;
  int k = root ? 5 : 4;
  for (int p = 0; p < 2; p++, k += 4) y->time[p] = k, y->algbw[p] = k + 1, y->busbw[p] = k + 2, y->wrong[p] = k + 3;
  y->n = k;
}

/* Reads a column header into y; 0 when the line is none (the units line, "(B) (elements)", is not). */
static int header(char *s, layout *y, int line) {
  layout h;
  memset(&h, 0, sizeof h);
  h.size = h.count = h.type = h.redop = h.root = -1;
  for (int p = 0; p < 2; p++) h.time[p] = h.algbw[p] = h.busbw[p] = h.wrong[p] = -1;
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", s + 1);
  snprintf(h.names, sizeof h.names, "%s", s + 1);
  int n = 0, place = -1;
  for (char *t = strtok(copy, " \t\r"); t; t = strtok(NULL, " \t\r"), n++) {
    if (n == 0 && strcmp(t, "size") && strcmp(t, "bytes")) return 0;
    if (!strcmp(t, "size") || !strcmp(t, "bytes")) h.size = n, h.ms = !strcmp(t, "bytes");
    else if (!strcmp(t, "count") || !strcmp(t, "N")) h.count = n;
    else if (!strcmp(t, "type")) h.type = n;
    else if (!strcmp(t, "redop") || !strcmp(t, "op")) h.redop = n;
    else if (!strcmp(t, "root")) h.root = n;
    else if ((!strcmp(t, "time") || !strcmp(t, "cputime")) && place < 1) h.time[++place] = n, h.cputime = t[0] == 'c';
    else if (!strcmp(t, "algbw") && place >= 0) h.algbw[place] = n;
    else if (!strcmp(t, "busbw") && place >= 0) h.busbw[place] = n;
    else if ((!strcmp(t, "#wrong") || !strcmp(t, "error") || !strcmp(t, "res")) && place >= 0)
      h.wrong[place] = n, h.delta = t[0] != '#';
    else if (!strcmp(t, "#bitdiff")) h.bitdiff = 1;
    else if (!strcmp(t, "i_cv%")) h.periter = 1;
    else if (!strcmp(t, "timestamp")) n++; /* "%Y-%m-%d %H:%M:%S": two fields under one name */
  }
  if (place < 0 || n > MAXTOK || h.count < 0 || h.type < 0) return 0;
  for (int p = 0; p <= place; p++) /* each place's four columns, all named */
    if (h.algbw[p] < 0 || h.busbw[p] < 0 || h.wrong[p] < 0) return 0;
  h.n = n;
  h.line = line;
  *y = h;
  return 1;
}

/* #wrong: a count of wrong elements, printed "%5g"/"%6g" of an int64 (v2.13 on: 1e+06 and up in
 * exponent form), or before v2.13 "%5.0le" of the largest error, whose count is the footer's
 * (delta 1; delta -1: no header says which, and a fraction is an error). -1 for N/A (-c 0). */
static int wrong_of(const ncclog *l, const char *t, int delta, int line, long long *w, err_t *e) {
  double v;
  if (!strcmp(t, "N/A")) return *w = -1, ERR_OK;
  if (!number(t, &v) || !(v >= 0))
    return err_set(e, ERR_INPUT, "%s:%d: %s '%s' is not a non-negative number", l->path, line, delta ? "error" : "#wrong", t);
  if (delta > 0 || (delta < 0 && v != floor(v))) return *w = -2, ERR_OK;
  /* 2^63: the first double past int64, so that the conversion is defined */
  if (v != floor(v) || v >= 9223372036854775808.0)
    return err_set(e, ERR_INPUT, "%s:%d: #wrong '%s' is not a count of wrong elements (a whole number below 2^63)", l->path,
                   line, t);
  *w = (long long)v;
  return ERR_OK;
}

/* Half the last printed digit's unit: 0.005 for "12.34", 0.5 for "1234", 5 for "1e+01". */
static double half_unit(const char *t) {
  const char *dot = strchr(t, '.'), *ex = strpbrk(t, "eE");
  int decimals = dot ? (int)((ex ? ex : t + strlen(t)) - dot - 1) : 0;
  return 0.5 * pow(10, -decimals + (ex ? atoi(ex + 1) : 0));
}

/* What the rows say of their collective (the same in every row). */
typedef struct {
  int seen, reduces, rooted, root_col;
  char redop[16];
  long root;
} evidence;

static int data_line(ncclog *l, const layout *lay, evidence *ev, char *s, int line, err_t *e) {
  char *tok[MAXTOK];
  int n = 0;
  for (char *t = strtok(s, " \t\r"); t; t = strtok(NULL, " \t\r"), n++)
    if (n < MAXTOK) tok[n] = t;
  layout y;
  if (lay->line) {
    y = *lay;
    /* before v2.13.4 the programs without a reduction printed an empty redop: one field fewer,
     * with a number where the redop is */
    if (n == y.n - 1 && y.redop >= 0 && y.redop < n && strspn(tok[y.redop], "-0123456789.") == strlen(tok[y.redop])) {
      int *f[] = {&y.size, &y.count, &y.type, &y.root, &y.time[0], &y.time[1], &y.algbw[0], &y.algbw[1], &y.busbw[0], &y.busbw[1], &y.wrong[0], &y.wrong[1]};
      for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (*f[i] > y.redop) (*f[i])--;
      y.redop = -1;
      y.n--;
    }
    if (n != y.n)
      return err_set(e, ERR_INPUT, "%s:%d: a data line of %d fields, where the column header (line %d) names %d: a line cut "
                                   "short or two run together", l->path, line, n, lay->line, lay->n);
  } else {
    if (n != 12 && n != 13)
      return err_set(e, ERR_INPUT, "%s:%d: a data line of %d fields, not nccl-tests' 12 or 13 (size count type redop [root] "
                                   "time algbw busbw #wrong time algbw busbw #wrong; no column header line says otherwise)",
                     l->path, line, n);
    /* 12 fields with a root where the time goes: a 13-field line cut short */
    else if (n == 12 && tok[4][0] == '-')
      return err_set(e, ERR_INPUT, "%s:%d: a data line of 12 fields whose fifth, '%s', is a root, not a time: the 13-field "
                                   "layout (with a root column) cut short", l->path, line, tok[4]);
    layout_default(&y, n == 13);
    y.delta = -1;
    /* 12 fields with a number fourth: v2.13.0-v2.13.3's empty redop before the root, or the
     * root of v2.0-v2.11's broadcast: the root is fourth, the time fifth */
    if (n == 12 && strspn(tok[3], "-0123456789") == strlen(tok[3])) {
      layout_default(&y, 1);
      y.delta = -1;
      y.redop = -1;
      y.root = 3;
      for (int p = 0; p < 2; p++) y.time[p]--, y.algbw[p]--, y.busbw[p]--, y.wrong[p]--;
      y.n = 12;
    }
  }
  ncclog_row r = {.line = line};
  char *end;
  errno = 0;
  if (!all_digits(tok[y.size])) return err_set(e, ERR_INPUT, "%s:%d: size '%s' is not a byte count", l->path, line, tok[y.size]);
  unsigned long long b = strtoull(tok[y.size], &end, 10);
  if (errno) return err_set(e, ERR_INPUT, "%s:%d: size '%s' is out of range", l->path, line, tok[y.size]);
  if (!all_digits(tok[y.count])) return err_set(e, ERR_INPUT, "%s:%d: count '%s' is not an element count", l->path, line, tok[y.count]);
  unsigned long long c = strtoull(tok[y.count], &end, 10);
  if (errno || b > SIZE_MAX || c > SIZE_MAX) return err_set(e, ERR_INPUT, "%s:%d: count '%s' is out of range", l->path, line, tok[y.count]);
  r.bytes = (size_t)b, r.count = (size_t)c;
  const char *redop = y.redop >= 0 ? tok[y.redop] : "";
  long root = -1;
  if (y.root >= 0) {
    root = strtol(tok[y.root], &end, 10);
    if (*end || end == tok[y.root] || errno || root < -1 || root > INT_MAX)
      return err_set(e, ERR_INPUT, "%s:%d: root '%s' is not a rank or -1", l->path, line, tok[y.root]);
  }
  int reduces = *redop && strcmp(redop, "none") != 0, rooted = root >= 0;
  if (!ev->seen) {
    ev->seen = 1, ev->reduces = reduces, ev->rooted = rooted, ev->root = root, ev->root_col = y.root >= 0;
    snprintf(ev->redop, sizeof ev->redop, "%s", *redop ? redop : "none");
    snprintf(l->type, sizeof l->type, "%s", tok[y.type]);
    snprintf(l->redop, sizeof l->redop, "%s", ev->redop);
  } else if (strcmp(l->type, tok[y.type]) || strcmp(ev->redop, *redop ? redop : "none") || root != ev->root)
    return err_set(e, ERR_INPUT, "%s:%d: type %s, redop %s, root %ld after %s, %s, %ld: one sweep per log (several types, ops or "
                                 "roots in one log: split it, or run with -d, -o and -r of one value)", l->path, line,
                   tok[y.type], *redop ? redop : "none", root, l->type, ev->redop, ev->root);
  for (int p = 0; p < 2; p++) {
    double t, a, bb;
    if (y.time[p] < 0) continue; /* v1.0's broadcast prints out of place only */
    r.has[p] = number(tok[y.time[p]], &t) && number(tok[y.algbw[p]], &a) && number(tok[y.busbw[p]], &bb);
    if (!r.has[p]) {
      if (strcmp(tok[y.time[p]], "N/A") && !number(tok[y.time[p]], &t))
        return err_set(e, ERR_INPUT, "%s:%d: time '%s' is not a number", l->path, line, tok[y.time[p]]);
      continue;
    }
    if (y.ms) t *= 1e3;
    if (!(t > 0)) return err_set(e, ERR_INPUT, "%s:%d: time %s %s is not positive", l->path, line, tok[y.time[p]], y.ms ? "ms" : "us");
    if (!(a >= 0) || !(bb >= 0))
      return err_set(e, ERR_INPUT, "%s:%d: algbw %s or busbw %s GB/s is negative", l->path, line, tok[y.algbw[p]], tok[y.busbw[p]]);
    int rc = wrong_of(l, tok[y.wrong[p]], y.delta, line, &r.wrong[p], e);
    if (rc) return rc;
    r.time_us[p] = t, r.algbw_GBps[p] = a, r.busbw_GBps[p] = bb;
    /* algbw = size / time (GB/s = 1e9 B/s), each rounded as printed: algbw to its decimals (2, or
     * fewer where the width is short), the time to its own (v1.0's milliseconds to 1 us) */
    double want = (double)r.bytes / (t * 1e3), ht = half_unit(tok[y.time[p]]) * (y.ms ? 1e3 : 1);
    if (fabs(a - want) > 1.02 * half_unit(tok[y.algbw[p]]) + want * (ht / t + 0.005))
      return err_set(e, ERR_INPUT, "%s:%d: algbw %s GB/s is not size / time = %.3f GB/s: not an nccl-tests line", l->path,
                     line, tok[y.algbw[p]], want);
  }
  if (!r.has[0] && !r.has[1]) return err_set(e, ERR_INPUT, "%s:%d: neither out-of-place nor in-place time", l->path, line);
  ncclog_row *g = realloc(l->rows, (l->nrows + 1) * sizeof *g);
  if (!g) return err_set(e, ERR_NOMEM, "out of memory");
  l->rows = g;
  l->rows[l->nrows++] = r;
  return ERR_OK;
}

/* A rank line, any release: "#  Rank R Group G Pid P on HOST device D [BUS] NAME" (v2.13.4 on;
 * BUS 0000:07:00 from v2.14.1, 0x07 before), "#   Rank R Pid P on ..." (v2.0 to v2.13.3), "#   Rank R
 * on ..." (v1.0). 1 when it is one, with its parts; 0 when not. */
typedef struct {
  int rank, group, pid, pci;
  char host[256], dev[256];
} rankline;

static int rank_line(const char *s, rankline *k) {
  int d, used = 0;
  char bus[64];
  if (sscanf(s, "# Rank %d %n", &k->rank, &used) != 1 || !used) return 0;
  k->group = strncmp(s + used, "Group ", 6) == 0;
  k->pid = strstr(s + used, "Pid ") != NULL;
  const char *on = strncmp(s + used, "on ", 3) == 0 ? s + used : strstr(s + used, " on ");
  if (on && *on == ' ') on++;
  if (!on || sscanf(on, "on %255s device %d [%63[^]]] %255[^\n]", k->host, &d, bus, k->dev) != 4) return 0;
  k->pci = strchr(bus, ':') != NULL;
  return 1;
}

/* The prefixes launchers put before each line: srun -l's "N: ", Open MPI --tag-output's
 * "[J,R]<stdout>:", MPICH and Intel MPI's -prepend-rank "[N] ". */
static char *strip_prefix(char *s) {
  size_t d = strspn(s, "0123456789");
  if (d > 0 && s[d] == ':') s += d + 1;
  else if (*s == '[') {
    char *close = strchr(s, ']');
    if (close && strncmp(close, "]<stdout>:", 10) == 0) s = close + 10;
    else if (close && close > s + 1 && strspn(s + 1, "0123456789") == (size_t)(close - s - 1) && close[1] == ' ') s = close + 1;
  }
  while (isspace((unsigned char)*s)) s++;
  return s;
}

/* The collective the rows show: the programs whose redop, root and bus factor (on the row of
 * largest algbw, where 2 decimals are precise) fit. Fills match[] and returns their count. */
static int fitting(const ncclog *l, const evidence *ev, int *match) {
  double a = 0, b = 0;
  for (size_t i = 0; i < l->nrows; i++)
    for (int p = 0; p < 2; p++)
      if (l->rows[i].has[p] && l->rows[i].algbw_GBps[p] > a) a = l->rows[i].algbw_GBps[p], b = l->rows[i].busbw_GBps[p];
  int n = 0;
  for (int k = 0; k < NPROGS; k++) {
    double f = prog_factor(k, l->nranks);
    if (progs[k].reduces != ev->reduces || progs[k].rooted != ev->rooted || !isfinite(f)) continue;
    /* sendrecv, gather, scatter came with the root column (v2.13.0); a log without one has none */
    if (!ev->root_col && !strcmp(progs[k].name, "sendrecv")) continue;
    if (a > 0 && fabs(b - a * f) > 0.0051 * (1 + f) + 0.005 * b) continue;
    match[n++] = k;
  }
  return n;
}

static void set_release(ncclog *l, const layout *y, int ranks_kind, int starting, const char *version) {
  const char *r;
  if (y->ms) r = "v1.0.0";
  else if (y->line && y->delta) r = "v2.0.0..v2.11.0";
  else if (*version) r = version;
  else if (starting) r = "v2.16.7..v2.17.3";
  else if (ranks_kind == 4) r = "v2.14.1..v2.16.6";
  else if (ranks_kind == 3) r = "v2.13.4..v2.14.0";
  else if (ranks_kind == 2 && y->line) r = "v2.13.0..v2.13.3";
  else r = "v2.x (no column header)";
  snprintf(l->release, sizeof l->release, "%s%s%s%s", *version ? "v" : "", r, y->periter ? " per-iteration" : "",
           y->bitdiff ? " #bitdiff" : "");
}

int ncclog_parse(const char *text, const char *path, int coll, ncclog *l, err_t *e) {
  memset(l, 0, sizeof *l);
  snprintf(l->path, sizeof l->path, "%s", path);
  l->coll = -1;
  l->oob = -1;
  int said = -1, said_line = 0, rc = ERR_OK, line = 0, ranks_kind = 0, starting = 0;
  char version[32] = "";
  layout lay = {0};
  evidence ev = {0};
  unsigned char *seen = NULL; /* rank numbers listed */
  size_t nseen = 0;
  const char *p = text;
  char buf[4096];
  while (*p && !rc) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    line++;
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
    p = nl ? nl + 1 : p + len;
    for (size_t m = strlen(buf); m > 0 && isspace((unsigned char)buf[m - 1]);) buf[--m] = '\0';
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    s = strip_prefix(s);
    if (*s == '#') {
      char name[64];
      rankline k;
      int nt, ng;
      long mn, mx;
      if (rank_line(s, &k)) {
        if (k.rank < 0 || k.rank >= (1 << 20)) {
          rc = err_set(e, ERR_INPUT, "%s:%d: rank %d is out of range (0 to 2^20)", path, line, k.rank);
          break;
        }
        if ((size_t)k.rank >= nseen) {
          size_t m = (size_t)k.rank + 1 > 2 * nseen ? (size_t)k.rank + 1 : 2 * nseen;
          unsigned char *g = realloc(seen, m);
          if (!g) {
            rc = err_set(e, ERR_NOMEM, "out of memory");
            break;
          }
          memset(g + nseen, 0, m - nseen);
          seen = g, nseen = m;
        }
        if (seen[k.rank]++) {
          rc = err_set(e, ERR_INPUT, "%s:%d: rank %d listed twice: two runs in one log (split it), or processes started without "
                                     "MPI (nccl-tests built without MPI=1: each is a run of its own)", path, line, k.rank);
          break;
        }
        l->nranks++;
        ranks_kind = k.group ? (k.pci ? 4 : 3) : k.pid ? 2 : 1;
        if (add_host(l, k.host)) rc = err_set(e, ERR_NOMEM, "out of memory");
        add_name(l->devices, sizeof l->devices, k.dev);
      } else if (sscanf(s, "# Collective test concluded: %63s", name) == 1 ||
                 sscanf(s, "# Collective test starting: %63s", name) == 1) {
        int k2 = prog_of(name);
        starting = 1;
        if (k2 < 0) rc = err_set(e, ERR_INPUT, "%s:%d: %s: not a program nccl-tests builds", path, line, name);
        else if (said >= 0 && k2 != said)
          rc = err_set(e, ERR_INPUT, "%s:%d: %s_perf after %s_perf (line %d): one run per log", path, line, progs[k2].name,
                       progs[said].name, said_line);
        else if (progs[k2].coll < 0) rc = err_set(e, ERR_INPUT, "%s:%d: %s_perf: " MODELLED, path, line, progs[k2].name);
        said = k2, said_line = line;
      } else if (sscanf(s, "# nccl-tests version %31s", version) == 1) {
      } else if (sscanf(s, "# Avg bus bandwidth : %lf", &l->avg_busbw_GBps) == 1) {
      } else if (sscanf(s, "# Out of bounds values : %lld", &l->oob) == 1) {
      } else if (sscanf(s, "# nThread %d nGpus %d minBytes %ld maxBytes %ld", &nt, &ng, &mn, &mx) == 4) {
        const char *q = strstr(s, "warmup iters:");
        int w, it;
        if (q && sscanf(q, "warmup iters: %d iters: %d", &w, &it) == 2) l->warmups = w, l->iters = it;
      } else {
        layout h;
        if (header(s, &h, line)) {
          if (lay.line && l->nrows && strcmp(h.names, lay.names))
            rc = err_set(e, ERR_INPUT, "%s:%d: a column header unlike the one on line %d: two runs in one log (split it)", path,
                         line, lay.line);
          lay = h;
        }
      }
      continue;
    }
    /* a data line starts with the size and the count; NCCL INFO lines ("10-4-3-3:97095:97196 [0]
     * NCCL INFO ...", hosts named by their address) and the rest do not */
    char first[32] = "", second[32] = "";
    if (sscanf(s, "%31s %31s", first, second) >= 1 && all_digits(first) && (!*second || all_digits(second)))
      rc = data_line(l, &lay, &ev, s, line, e);
  }
  free(seen);
  if (rc) return rc;
  set_release(l, &lay, ranks_kind, starting, version);
  if (l->nrows == 0) return err_set(e, ERR_INPUT, "%s: no data lines: not an nccl-tests log", path);
  for (size_t i = 1; i < l->nrows; i++)
    if (l->rows[i].bytes <= l->rows[i - 1].bytes)
      return err_set(e, ERR_INPUT, "%s:%d: size %zu after %zu: one sweep per log, sizes increasing (several collectives, "
                                   "types or ops in one log: split it)", path, l->rows[i].line, l->rows[i].bytes, l->rows[i - 1].bytes);
  if (l->nranks < 2)
    return err_set(e, ERR_INPUT, "%s: %s: the log must list its ranks (\"#  Rank R ... on HOST device D\", one per rank, at "
                                 "least 2)", path, l->nranks ? "one rank line" : "no rank lines");
  if (said >= 0 && coll >= 0 && progs[said].coll != coll)
    return err_set(e, ERR_INPUT, "%s:%d: the log is %s_perf's, not %s's", path, said_line, progs[said].name, ncclog_coll_name(coll));
  char shows[128];
  snprintf(shows, sizeof shows, "redop %s, root %ld", ev.redop, ev.root);
  if (said >= 0) l->coll = progs[said].coll;
  else if (coll >= 0) {
    int k = prog_of(ncclog_coll_name(coll));
    if (progs[k].reduces != ev.reduces || progs[k].rooted != ev.rooted)
      return err_set(e, ERR_INPUT, "%s: the rows show %s: not %s's (which %s and %s a root)", path, shows, progs[k].name,
                     progs[k].reduces ? "reduces" : "does not reduce", progs[k].rooted ? "has" : "has no");
    l->coll = coll;
  } else {
    int match[NPROGS], m = fitting(l, &ev, match);
    if (m == 0)
      return err_set(e, ERR_INPUT, "%s: the log does not say its collective, and no nccl-tests program's rows show %s with its "
                                   "busbw / algbw over %d ranks: give --collective", path, shows, l->nranks);
    if (m > 1) {
      char names[256] = "";
      for (int i = 0; i < m; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s_perf", i ? (i == m - 1 ? " or " : ", ") : "",
                 progs[match[i]].name);
      return err_set(e, ERR_INPUT, "%s: the log does not say its collective (no \"# Collective test concluded\" line, before "
                                   "nccl-tests v2.16.7), and its rows (%s, busbw / algbw over %d ranks) fit %s alike: give "
                                   "--collective", path, shows, l->nranks, names);
    }
    if (progs[match[0]].coll < 0)
      return err_set(e, ERR_INPUT, "%s: the rows (%s, busbw / algbw over %d ranks) are %s_perf's: " MODELLED
                                   " (give --collective if the log is one of those)", path, shows, l->nranks, progs[match[0]].name);
    l->coll = progs[match[0]].coll;
  }
  double f = coll_bus_factor((coll_kind)l->coll, l->nranks);
  for (size_t i = 0; i < l->nrows; i++)
    for (int q = 0; q < 2; q++) {
      const ncclog_row *r = &l->rows[i];
      /* both printed with 2 decimals: each off by up to 0.005, algbw's error scaled by f */
      if (r->has[q] && fabs(r->busbw_GBps[q] - r->algbw_GBps[q] * f) > 0.0051 * (1 + f) + 0.005 * r->busbw_GBps[q])
        return err_set(e, ERR_INPUT, "%s:%d: busbw %.2f is not algbw %.2f x %.4g (%s over %d ranks): the log's collective or rank "
                                     "lines do not match its rows", path, r->line, r->busbw_GBps[q], r->algbw_GBps[q], f,
                       ncclog_coll_name(l->coll), l->nranks);
    }
  return ERR_OK;
}

int ncclog_to_sweep(const ncclog *l, int in_place, commbench_cfg *cfg, commbench_result *res, err_t *e) {
  memset(res, 0, sizeof *res);
  memset(cfg, 0, sizeof *cfg);
  res->rows = calloc(l->nrows, sizeof *res->rows);
  if (!res->rows) return err_set(e, ERR_NOMEM, "out of memory");
  res->nranks = l->nranks;
  res->wrong = 0;
  double scale = (double)coll_ring_steps(COLL_ALLREDUCE, l->nranks) / (double)coll_ring_steps((coll_kind)l->coll, l->nranks), sum = 0;
  for (size_t i = 0; i < l->nrows; i++) {
    const ncclog_row *r = &l->rows[i];
    commbench_row *o = &res->rows[res->nrows];
    if (!r->has[in_place])
      return err_set(e, ERR_INPUT, "%s:%d: no %s time", l->path, r->line, in_place ? "in-place" : "out-of-place");
    o->samples_s = malloc(sizeof *o->samples_s);
    if (!o->samples_s) return err_set(e, ERR_NOMEM, "out of memory");
    res->nrows++;
    o->bytes = r->bytes;
    o->count = r->count;
    o->mean_s = o->median_s = o->min_s = o->max_s = o->samples_s[0] = r->time_us[in_place] * 1e-6 * scale;
    o->algbw_GBps = r->algbw_GBps[in_place];
    o->busbw_GBps = r->busbw_GBps[in_place];
    o->wrong = r->wrong[in_place];
    /* before v2.13 a row prints its largest error: none is wrong when the footer counts 0 */
    if (o->wrong == -2) o->wrong = l->oob == 0 ? 0 : -1;
    if (o->wrong < 0) res->wrong = -1;
    else if (res->wrong >= 0) res->wrong = o->wrong > LLONG_MAX - res->wrong ? LLONG_MAX : res->wrong + o->wrong;
    sum += o->busbw_GBps;
  }
  /* the footer's count where the rows give none (older releases): wrong values were found */
  if (res->wrong < 0 && l->oob > 0) res->wrong = l->oob;
  res->avg_busbw_GBps = sum / (double)res->nrows;
  cfg->min_bytes = l->rows[0].bytes;
  cfg->max_bytes = l->rows[l->nrows - 1].bytes;
  cfg->factor = l->nrows > 1 && l->rows[0].bytes > 0 ? (double)l->rows[1].bytes / (double)l->rows[0].bytes : 2;
  cfg->iters = 1;
  cfg->warmups = l->warmups;
  cfg->check = res->wrong >= 0;
  return ERR_OK;
}
