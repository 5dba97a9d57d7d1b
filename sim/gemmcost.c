#include "gemmcost.h"

#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdlib.h>

void gemmcost_free(gemmcost_table *t) {
  free(t->lm);
  free(t->ln);
  free(t->lk);
  free(t->time_s);
  free(t->resid);
  *t = (gemmcost_table){0};
}

/* A point's shape (logs) and index; a distinct shape's first index, summed time and count. */
typedef struct {
  double x[3];
  int i;
} point_at;

typedef struct {
  int first;
  double sum, cnt;
} shape_at;

static int cmp_shape(const point_at *p, const point_at *q) {
  for (int d = 0; d < 3; d++)
    if (p->x[d] != q->x[d]) return p->x[d] < q->x[d] ? -1 : 1;
  return 0;
}

static int cmp_point(const void *a, const void *b) {
  const point_at *p = a, *q = b;
  int c = cmp_shape(p, q);
  return c ? c : (p->i > q->i) - (p->i < q->i);
}

static int cmp_first(const void *a, const void *b) {
  const shape_at *p = a, *q = b;
  return (p->first > q->first) - (p->first < q->first);
}

int gemmcost_build(gemmcost_table *t, const double *m, const double *n, const double *k, const double *time_s,
                   const double *fit_s, int npts, err_t *e) {
  *t = (gemmcost_table){0};
  size_t np = (size_t)(npts > 0 ? npts : 1), sz = np * sizeof(double);
  double *fit = calloc(1, sz), *cnt = calloc(1, sz);
  point_at *at = malloc(np * sizeof *at);
  shape_at *sh = malloc(np * sizeof *sh);
  t->lm = malloc(sz), t->ln = malloc(sz), t->lk = malloc(sz), t->time_s = calloc(1, sz), t->resid = malloc(sz);
  if (!fit || !cnt || !at || !sh || !t->lm || !t->ln || !t->lk || !t->time_s || !t->resid) {
    free(fit);
    free(cnt);
    free(at);
    free(sh);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  /* Each distinct shape once, in the order of its first point, its times summed in the points'
   * order: sorted by shape, then index, so that a table of thousands of points takes n log n. */
  for (int i = 0; i < npts; i++) at[i] = (point_at){{log(m[i]), log(n[i]), log(k[i])}, i};
  qsort(at, np, sizeof *at, cmp_point);
  for (int a = 0; a < npts;) {
    shape_at g = {.first = at[a].i};
    int b = a;
    for (; b < npts && cmp_shape(&at[a], &at[b]) == 0; b++) g.sum += time_s[at[b].i], g.cnt += 1;
    sh[t->n++] = g;
    a = b;
  }
  qsort(sh, (size_t)t->n, sizeof *sh, cmp_first);
  for (int j = 0; j < t->n; j++) {
    int f = sh[j].first;
    t->lm[j] = log(m[f]), t->ln[j] = log(n[f]), t->lk[j] = log(k[f]), fit[j] = fit_s[f];
    t->time_s[j] = sh[j].sum;
    cnt[j] = sh[j].cnt;
  }
  free(at);
  free(sh);
  for (int d = 0; d < 3; d++) t->lo[d] = INFINITY, t->hi[d] = -INFINITY;
  double ss = 0;
  for (int j = 0; j < t->n; j++) {
    t->time_s[j] /= cnt[j];
    t->resid[j] = log(t->time_s[j] / fit[j]);
    double rel = fabs(fit[j] - t->time_s[j]) / t->time_s[j];
    ss += rel * rel;
    if (rel > t->max_rel) t->max_rel = rel;
    const double x[3] = {t->lm[j], t->ln[j], t->lk[j]};
    for (int d = 0; d < 3; d++) t->lo[d] = fmin(t->lo[d], x[d]), t->hi[d] = fmax(t->hi[d], x[d]);
  }
  t->rms_rel = t->n ? sqrt(ss / t->n) : 0;
  free(cnt);
  free(fit);
  return ERR_OK;
}

int gemmcost_inside(const gemmcost_table *t, double m, double n, double k) {
  const double x[3] = {log(m), log(n), log(k)};
  for (int d = 0; d < 3; d++)
    if (!(x[d] >= t->lo[d] && x[d] <= t->hi[d])) return 0;
  return t->n > 0;
}

double gemmcost_time(const gemmcost_table *t, double m, double n, double k, double fit_s, int *extrapolated) {
  if (extrapolated) *extrapolated = 0;
  if (!gemmcost_inside(t, m, n, k)) {
    if (extrapolated) *extrapolated = 1;
    return fit_s;
  }
  const double x[3] = {log(m), log(n), log(k)};
  double d2[512];
  size_t idx[GEMMCOST_NEIGHBOURS];
  /* Squared distances in chunks so that any table size works without allocating: keep the
   * GEMMCOST_NEIGHBOURS nearest over all chunks. */
  double best_d[GEMMCOST_NEIGHBOURS];
  int best_i[GEMMCOST_NEIGHBOURS], nbest = 0;
  for (int base = 0; base < t->n; base += 512) {
    size_t len = (size_t)(t->n - base < 512 ? t->n - base : 512);
    for (size_t j = 0; j < len; j++) {
      int i = base + (int)j;
      double a = t->lm[i] - x[0], b = t->ln[i] - x[1], c = t->lk[i] - x[2];
      d2[j] = a * a + b * b + c * c;
      if (d2[j] == 0) return t->time_s[i]; /* a measured shape */
    }
    size_t kk = len < GEMMCOST_NEIGHBOURS ? len : GEMMCOST_NEIGHBOURS;
    gsl_sort_smallest_index(idx, kk, d2, 1, len);
    for (size_t q = 0; q < kk; q++) {
      double dv = d2[idx[q]];
      int iv = base + (int)idx[q];
      if (nbest < GEMMCOST_NEIGHBOURS) {
        best_d[nbest] = dv, best_i[nbest++] = iv;
        continue;
      }
      int worst = 0;
      for (int w = 1; w < nbest; w++)
        if (best_d[w] > best_d[worst]) worst = w;
      if (dv < best_d[worst]) best_d[worst] = dv, best_i[worst] = iv;
    }
  }
  double sw = 0, sr = 0;
  for (int q = 0; q < nbest; q++) {
    double w = 1.0 / (best_d[q] * best_d[q]); /* inverse fourth power of the distance */
    sw += w;
    sr += w * t->resid[best_i[q]];
  }
  return fit_s * exp(sr / sw);
}
