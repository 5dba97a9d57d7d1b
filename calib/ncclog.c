/* ncclog: nccl-tests' output read back (ncclog.h). */
#include "ncclog.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nccl-tests' program names (src/all_reduce.cu and its siblings build all_reduce_perf, ...) for the collectives sim/coll.h has. */
static const char *const prog[COLL_NKINDS] = {
    [COLL_ALLREDUCE] = "all_reduce", [COLL_ALLGATHER] = "all_gather", [COLL_REDUCESCATTER] = "reduce_scatter",
    [COLL_BROADCAST] = "broadcast"};

const char *ncclog_coll_name(int coll) { return coll >= 0 && coll < COLL_NKINDS ? prog[coll] : "?"; }

static int coll_of_prog(const char *name) {
  for (int k = 0; k < COLL_NKINDS; k++)
    if (strcmp(name, prog[k]) == 0) return k;
  return -1;
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

/* A number token; 0 when it is not one (N/A). */
static int number(const char *t, double *v) {
  char *end;
  errno = 0;
  *v = strtod(t, &end);
  return end != t && *end == '\0' && errno == 0 && isfinite(*v);
}

static int data_line(ncclog *l, char *s, int line, err_t *e) {
  char *tok[16];
  int n = 0;
  for (char *t = strtok(s, " \t\r"); t && n < 16; t = strtok(NULL, " \t\r")) tok[n++] = t;
  if (n != 12 && n != 13)
    return err_set(e, ERR_INPUT, "%s:%d: a data line has %d fields, not nccl-tests' 12 or 13 (size count type redop [root] "
                                 "time algbw busbw #wrong time algbw busbw #wrong)", l->path, line, n);
  ncclog_row r = {.line = line};
  char *end;
  errno = 0;
  unsigned long long b = strtoull(tok[0], &end, 10), c;
  if (*end || errno) return err_set(e, ERR_INPUT, "%s:%d: size '%s' is not a byte count", l->path, line, tok[0]);
  c = strtoull(tok[1], &end, 10);
  if (*end || errno) return err_set(e, ERR_INPUT, "%s:%d: count '%s' is not an element count", l->path, line, tok[1]);
  r.bytes = (size_t)b, r.count = (size_t)c;
  snprintf(l->type, sizeof l->type, "%s", tok[2]);
  snprintf(l->redop, sizeof l->redop, "%s", tok[3]);
  int k = n == 13 ? 5 : 4;
  for (int p = 0; p < 2; p++, k += 4) {
    double t, a, bb, w;
    r.has[p] = number(tok[k], &t) && number(tok[k + 1], &a) && number(tok[k + 2], &bb);
    r.wrong[p] = number(tok[k + 3], &w) ? (long long)w : -1;
    if (!r.has[p]) continue;
    if (!(t > 0)) return err_set(e, ERR_INPUT, "%s:%d: time %s us is not positive", l->path, line, tok[k]);
    r.time_us[p] = t, r.algbw_GBps[p] = a, r.busbw_GBps[p] = bb;
    /* algbw = size / time (GB/s = 1e9 B/s), as printed with 2 decimals from a time of 3 to 7 digits */
    double want = (double)r.bytes / (t * 1e3);
    if (fabs(a - want) > 0.006 + 0.01 * want)
      return err_set(e, ERR_INPUT, "%s:%d: algbw %s GB/s is not size / time = %.3f GB/s: not an nccl-tests line", l->path,
                     line, tok[k + 1], want);
  }
  if (!r.has[0] && !r.has[1]) return err_set(e, ERR_INPUT, "%s:%d: neither out-of-place nor in-place time", l->path, line);
  ncclog_row *g = realloc(l->rows, (l->nrows + 1) * sizeof *g);
  if (!g) return err_set(e, ERR_NOMEM, "out of memory");
  l->rows = g;
  l->rows[l->nrows++] = r;
  return ERR_OK;
}

/* The collective whose bus factor the rows show (the row of largest algbw, where 2 decimals are
 * precise), or -1 when none or several fit. */
static int infer_coll(const ncclog *l) {
  double a = 0, b = 0;
  for (size_t i = 0; i < l->nrows; i++)
    if (l->rows[i].has[0] && l->rows[i].algbw_GBps[0] > a) a = l->rows[i].algbw_GBps[0], b = l->rows[i].busbw_GBps[0];
  int found = -1;
  for (int k = 0; k < COLL_NKINDS && a > 0; k++)
    if (fabs(b - a * coll_bus_factor((coll_kind)k, l->nranks)) <= 0.006 + 0.005 * b) {
      /* all-gather and reduce-scatter: the same ring steps, so the same fit; the first is named */
      if (found >= 0 && coll_ring_steps((coll_kind)found, l->nranks) != coll_ring_steps((coll_kind)k, l->nranks)) return -1;
      if (found < 0) found = k;
    }
  return found;
}

int ncclog_parse(const char *text, const char *path, int coll, ncclog *l, err_t *e) {
  memset(l, 0, sizeof *l);
  snprintf(l->path, sizeof l->path, "%s", path);
  l->coll = -1;
  int said = -1, rc = ERR_OK, line = 0;
  const char *p = text;
  char buf[4096];
  while (*p && !rc) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    line++;
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
    p = nl ? nl + 1 : p + len;
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    /* srun -l and mpirun --tag-output put "N: " or "[1,0]<stdout>:" before each line */
    char *colon = strchr(s, ':');
    if (colon && colon > s && (strspn(s, "0123456789") == (size_t)(colon - s) || (*s == '[' && strstr(s, "<stdout>:") == colon - 8)))
      for (s = colon + 1; isspace((unsigned char)*s);) s++;
    if (*s == '#') {
      char host[256], dev[256], name[64];
      int r, g, pid, d;
      unsigned bus;
      long mn, mx;
      int nt, ng, w, it;
      if (sscanf(s, "# Rank %d Group %d Pid %d on %255s device %d [0x%x] %255[^\n]", &r, &g, &pid, host, &d, &bus, dev) == 7) {
        l->nranks++;
        if (add_host(l, host)) rc = err_set(e, ERR_NOMEM, "out of memory");
        add_name(l->devices, sizeof l->devices, dev);
      } else if (sscanf(s, "# Collective test concluded: %63s", name) == 1) {
        char *q = strstr(name, "_perf");
        if (q) *q = '\0';
        said = coll_of_prog(name);
        if (said < 0)
          rc = err_set(e, ERR_INPUT, "%s:%d: %s_perf: ddpsim models all_reduce, all_gather, reduce_scatter and broadcast", path,
                       line, name);
      } else if (sscanf(s, "# Avg bus bandwidth : %lf", &l->avg_busbw_GBps) == 1) {
      } else if (sscanf(s, "# nThread %d nGpus %d minBytes %ld maxBytes %ld", &nt, &ng, &mn, &mx) == 4) {
        const char *q = strstr(s, "warmup iters:");
        if (q && sscanf(q, "warmup iters: %d iters: %d", &w, &it) == 2) l->warmups = w, l->iters = it;
      }
      continue;
    }
    if (isdigit((unsigned char)*s)) rc = data_line(l, s, line, e);
  }
  if (rc) return rc;
  if (l->nrows == 0) return err_set(e, ERR_INPUT, "%s: no data lines: not an nccl-tests log", path);
  for (size_t i = 1; i < l->nrows; i++)
    if (l->rows[i].bytes <= l->rows[i - 1].bytes)
      return err_set(e, ERR_INPUT, "%s:%d: size %zu after %zu: one sweep per log, sizes increasing (several collectives, "
                                   "types or ops in one log: split it)", path, l->rows[i].line, l->rows[i].bytes, l->rows[i - 1].bytes);
  if (l->nranks < 2)
    return err_set(e, ERR_INPUT, "%s: %s: the log must list its ranks (\"#  Rank R ... on HOST device D\", one per rank, at "
                                 "least 2)", path, l->nranks ? "one rank line" : "no rank lines");
  if (said >= 0 && coll >= 0 && said != coll)
    return err_set(e, ERR_INPUT, "%s: the log is %s_perf's, not %s's", path, prog[said], prog[coll]);
  l->coll = said >= 0 ? said : coll >= 0 ? coll : infer_coll(l);
  if (l->coll < 0)
    return err_set(e, ERR_INPUT, "%s: the log does not say its collective and its busbw/algbw fits none or several: give "
                                 "--collective", path);
  double f = coll_bus_factor((coll_kind)l->coll, l->nranks);
  for (size_t i = 0; i < l->nrows; i++)
    for (int q = 0; q < 2; q++) {
      const ncclog_row *r = &l->rows[i];
      /* both printed with 2 decimals: each off by up to 0.005, algbw's error scaled by f */
      if (r->has[q] && fabs(r->busbw_GBps[q] - r->algbw_GBps[q] * f) > 0.0051 * (1 + f) + 0.005 * r->busbw_GBps[q])
        return err_set(e, ERR_INPUT, "%s:%d: busbw %.2f is not algbw %.2f x %.4g (%s over %d ranks): the log's collective or rank "
                                     "lines do not match its rows", path, r->line, r->busbw_GBps[q], r->algbw_GBps[q], f, prog[l->coll],
                       l->nranks);
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
  double scale = 2.0 * (l->nranks - 1) / (double)coll_ring_steps((coll_kind)l->coll, l->nranks), sum = 0;
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
    if (o->wrong < 0) res->wrong = -1;
    else if (res->wrong >= 0) res->wrong += o->wrong;
    sum += o->busbw_GBps;
  }
  res->avg_busbw_GBps = sum / (double)res->nrows;
  cfg->min_bytes = l->rows[0].bytes;
  cfg->max_bytes = l->rows[l->nrows - 1].bytes;
  cfg->factor = l->nrows > 1 && l->rows[0].bytes > 0 ? (double)l->rows[1].bytes / (double)l->rows[0].bytes : 2;
  cfg->iters = 1;
  cfg->warmups = l->warmups;
  cfg->check = res->wrong >= 0;
  return ERR_OK;
}
