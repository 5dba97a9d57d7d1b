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

int gemmcost_build(gemmcost_table *t, const double *m, const double *n, const double *k, const double *time_s,
                   const double *fit_s, int npts, err_t *e) {
  *t = (gemmcost_table){0};
  size_t sz = (size_t)(npts > 0 ? npts : 1) * sizeof(double);
  double *cnt = calloc(1, sz), *fit = calloc(1, sz);
  t->lm = malloc(sz), t->ln = malloc(sz), t->lk = malloc(sz), t->time_s = calloc(1, sz), t->resid = malloc(sz);
  if (!cnt || !fit || !t->lm || !t->ln || !t->lk || !t->time_s || !t->resid) {
    free(cnt);
    free(fit);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < npts; i++) {
    double x[3] = {log(m[i]), log(n[i]), log(k[i])};
    int j = 0;
    while (j < t->n && !(t->lm[j] == x[0] && t->ln[j] == x[1] && t->lk[j] == x[2])) j++;
    if (j == t->n) {
      t->lm[j] = x[0], t->ln[j] = x[1], t->lk[j] = x[2], fit[j] = fit_s[i];
      t->n++;
    }
    t->time_s[j] += time_s[i];
    cnt[j] += 1;
  }
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
