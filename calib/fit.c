/* fit: weighted least-squares cost models. Derivations: docs/calib.md. */
#include "fit.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "coll.h"
#include "profile.h"
#include "txt.h"

/* Relative residuals of y ~ c0 + c1 x over [0, n). */
static void rel_residuals(const double *x, const double *y, size_t n, double c0, double c1,
                          double *rms, double *max) {
  double s = 0, m = 0;
  for (size_t i = 0; i < n; i++) {
    double r = fabs((c0 + c1 * x[i] - y[i]) / y[i]);
    s += r * r;
    if (r > m) m = r;
  }
  *rms = n ? sqrt(s / (double)n) : 0;
  *max = m;
}

int fit_line_rel(const double *x, const double *y, size_t n, fit_line *out, err_t *e) {
  if (n < 2) return err_set(e, ERR_RUNTIME, "fit: a line needs at least 2 points, got %zu", n);
  double *w = malloc(n * sizeof *w);
  if (!w) return err_set(e, ERR_NOMEM, "fit: out of memory");
  int distinct = 0;
  for (size_t i = 0; i < n; i++) {
    if (!(y[i] > 0) || !isfinite(y[i]) || !isfinite(x[i])) {
      free(w);
      return err_set(e, ERR_RUNTIME, "fit: point %zu has time %g (must be > 0)", i, y[i]);
    }
    w[i] = 1.0 / (y[i] * y[i]);
    if (x[i] != x[0]) distinct = 1;
  }
  if (!distinct) {
    free(w);
    return err_set(e, ERR_RUNTIME, "fit: all %zu points have the same size %g", n, x[0]);
  }
  double c0, c1, cov00, cov01, cov11, chisq;
  int st = gsl_fit_wlinear(x, 1, w, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &chisq);
  free(w);
  if (st) return err_set(e, ERR_RUNTIME, "fit: gsl_fit_wlinear: %s", gsl_strerror(st));
  out->c0 = c0;
  out->c1 = c1;
  out->chisq = chisq;
  rel_residuals(x, y, n, c0, c1, &out->rms_rel, &out->max_rel);
  return ERR_OK;
}

fit_ring_opts fit_ring_defaults(void) {
  fit_ring_opts o = {.max_regimes = 3, .min_points = 3, .min_gain = 0.5, .good_enough = 0.01};
  return o;
}

typedef struct {
  size_t first, count;
  fit_line line;
} seg;

/* Best split of s: the breakpoint minimising the two lines' summed chisq. Returns 0 if none. */
static int best_split(const double *x, const double *y, const seg *s, size_t min_points,
                      seg *left, seg *right, err_t *e, int *rc) {
  *rc = ERR_OK;
  int found = 0;
  double best = INFINITY;
  for (size_t k = min_points; k + min_points <= s->count; k++) {
    seg l = {.first = s->first, .count = k}, r = {.first = s->first + k, .count = s->count - k};
    if ((*rc = fit_line_rel(x + l.first, y + l.first, l.count, &l.line, e))) return 0;
    if ((*rc = fit_line_rel(x + r.first, y + r.first, r.count, &r.line, e))) return 0;
    double c = l.line.chisq + r.line.chisq;
    if (c < best) {
      best = c;
      *left = l;
      *right = r;
      found = 1;
    }
  }
  return found;
}

static double bic(double chisq, size_t npoints, size_t nregimes) {
  double n = (double)npoints;
  double k = 3.0 * (double)nregimes - 1.0; /* two coefficients per line, one breakpoint between */
  return n * log(chisq / n + 1e-300) + k * log(n);
}

int fit_ring(const double *bytes, const double *time_s, size_t n, int nranks,
             const fit_ring_opts *opts, fit_ring_result *out, err_t *e) {
  fit_ring_opts o = opts ? *opts : fit_ring_defaults();
  if (nranks < 2) return err_set(e, ERR_RUNTIME, "fit: a ring needs at least 2 ranks, got %d", nranks);
  if (o.max_regimes < 1 || o.max_regimes > FIT_MAX_REGIMES)
    return err_set(e, ERR_USAGE, "fit: max_regimes must be in [1, %d]", FIT_MAX_REGIMES);
  if (o.min_points < 3) o.min_points = 3;
  if (n < 2) return err_set(e, ERR_RUNTIME, "fit: the sweep has %zu size(s); need at least 2", n);
  for (size_t i = 1; i < n; i++)
    if (!(bytes[i] > bytes[i - 1]))
      return err_set(e, ERR_RUNTIME, "fit: sizes must increase (point %zu)", i);

  seg segs[FIT_MAX_REGIMES];
  size_t nseg = 1;
  segs[0].first = 0;
  segs[0].count = n;
  int rc = fit_line_rel(bytes, time_s, n, &segs[0].line, e);
  if (rc) return rc;

  while (nseg < o.max_regimes) {
    double total = 0;
    for (size_t i = 0; i < nseg; i++) total += segs[i].line.chisq;
    size_t best_i = 0;
    double best_total = INFINITY;
    seg best_l = {0}, best_r = {0};
    for (size_t i = 0; i < nseg; i++) {
      if (segs[i].count < 2 * o.min_points || segs[i].line.rms_rel < o.good_enough) continue;
      seg l = {0}, r = {0};
      if (!best_split(bytes, time_s, &segs[i], o.min_points, &l, &r, e, &rc)) {
        if (rc) return rc;
        continue;
      }
      double t = total - segs[i].line.chisq + l.line.chisq + r.line.chisq;
      if (t < best_total) {
        best_total = t;
        best_i = i;
        best_l = l;
        best_r = r;
      }
    }
    if (!isfinite(best_total)) break;
    if (best_total > (1.0 - o.min_gain) * total) break;
    if (bic(best_total, n, nseg + 1) >= bic(total, n, nseg)) break;
    memmove(&segs[best_i + 2], &segs[best_i + 1], (nseg - best_i - 1) * sizeof segs[0]);
    segs[best_i] = best_l;
    segs[best_i + 1] = best_r;
    nseg++;
  }

  double steps = (double)coll_ring_steps(COLL_ALLREDUCE, (long)nranks);
  memset(out, 0, sizeof *out);
  out->nranks = nranks;
  out->nregimes = nseg;
  for (size_t i = 0; i < nseg; i++) {
    fit_regime *g = &out->regime[i];
    g->first = segs[i].first;
    g->count = segs[i].count;
    g->min_bytes = bytes[g->first];
    g->max_bytes = bytes[g->first + g->count - 1];
    double c0 = segs[i].line.c0, c1 = segs[i].line.c1;
    if (!(c1 > 0)) {
      /* Time does not grow with size here: a latency-bound regime (or noise hiding a tiny slope).
       * Fit the constant instead: the weighted mean c0 = sum(1/t) / sum(1/t^2), bandwidth
       * unbounded. The largest sizes must show a bandwidth, or there is nothing to give ddpsim. */
      if (i == nseg - 1)
        return err_set(e, ERR_RUNTIME,
                       "fit: time does not grow with size between %.0f and %.0f bytes "
                       "(slope %g s/B): no bandwidth to fit; raise -e or add iterations",
                       g->min_bytes, g->max_bytes, c1);
      double a = 0, b = 0;
      for (size_t j = g->first; j < g->first + g->count; j++) {
        a += 1.0 / time_s[j];
        b += 1.0 / (time_s[j] * time_s[j]);
      }
      c0 = a / b;
      c1 = 0;
      rel_residuals(bytes + g->first, time_s + g->first, g->count, c0, c1, &segs[i].line.rms_rel,
                    &segs[i].line.max_rel);
    }
    g->lat_s = c0 / steps;
    g->bw_Bps = c1 > 0 ? steps / (nranks * c1) : INFINITY;
    g->rms_rel = segs[i].line.rms_rel;
    g->max_rel = segs[i].line.max_rel;
  }
  out->lat_s = out->regime[0].lat_s;
  if (!(out->lat_s > 0)) {
    double tmin = time_s[0];
    for (size_t i = 1; i < n; i++)
      if (time_s[i] < tmin) tmin = time_s[i];
    out->lat_s = tmin / steps;
  }
  out->bw_Bps = out->regime[nseg - 1].bw_Bps;
  double s = 0, m = 0;
  for (size_t i = 0; i < n; i++) {
    double r = fabs((fit_ring_time(out, bytes[i]) - time_s[i]) / time_s[i]);
    s += r * r;
    if (r > m) m = r;
  }
  out->rms_rel = sqrt(s / (double)n);
  out->max_rel = m;
  return ERR_OK;
}

double fit_ring_time(const fit_ring_result *r, double bytes) {
  return (double)coll_ring_steps(COLL_ALLREDUCE, (long)r->nranks) * (r->lat_s + bytes / ((double)r->nranks * r->bw_Bps));
}

double fit_roofline_time(const fit_roofline *r, double flops, double bytes) {
  double tc = r->rate_flops > 0 ? flops / r->rate_flops : 0;
  double tm = r->mem_bw_Bps > 0 ? bytes / r->mem_bw_Bps : 0;
  return r->launch_s + (tc > tm ? tc : tm);
}

/* Weighted fit y = c1 x through the origin (weights 1/y^2). */
static int fit_origin(const double *x, const double *y, size_t n, double *c1, err_t *e) {
  double *w = malloc(n * sizeof *w);
  if (!w) return err_set(e, ERR_NOMEM, "fit: out of memory");
  for (size_t i = 0; i < n; i++) w[i] = 1.0 / (y[i] * y[i]);
  double cov, chisq;
  int st = gsl_fit_wmul(x, 1, w, 1, y, 1, n, c1, &cov, &chisq);
  free(w);
  if (st) return err_set(e, ERR_RUNTIME, "fit: gsl_fit_wmul: %s", gsl_strerror(st));
  return ERR_OK;
}

/* t = launch + x / rate, launch clamped at 0. */
static int fit_affine_rate(const double *x, const double *t, size_t n, double *launch, double *rate,
                           const char *what, err_t *e) {
  fit_line l;
  int rc = fit_line_rel(x, t, n, &l, e);
  if (rc) return rc;
  double c0 = l.c0, c1 = l.c1;
  /* Below the shortest launch cost a profile holds (1 ns) the intercept is no launch cost at all,
   * as a negative one: refit through the origin, or the gate would refuse a valid fit. */
  if (c0 < PROFILE_LAT_MIN_s) {
    c0 = 0;
    if ((rc = fit_origin(x, t, n, &c1, e))) return rc;
  }
  if (!(c1 > 0))
    return err_set(e, ERR_RUNTIME, "fit: %s time does not grow with size: no rate to fit", what);
  *launch = c0;
  *rate = 1.0 / c1;
  return ERR_OK;
}

static void roofline_residuals(fit_roofline *r, const double *flops, const double *bytes,
                               const double *t, size_t n) {
  double s = 0, m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((fit_roofline_time(r, flops ? flops[i] : 0, bytes[i]) - t[i]) / t[i]);
    s += d * d;
    if (d > m) m = d;
  }
  r->rms_rel = sqrt(s / (double)n);
  r->max_rel = m;
}

int fit_roofline_ewise(const double *bytes, const double *time_s, size_t n, fit_roofline *out,
                       err_t *e) {
  memset(out, 0, sizeof *out);
  int rc = fit_affine_rate(bytes, time_s, n, &out->launch_s, &out->mem_bw_Bps, "elementwise", e);
  if (rc) return rc;
  roofline_residuals(out, NULL, bytes, time_s, n);
  return ERR_OK;
}

int fit_roofline_gemm(const double *flops, const double *bytes, const double *time_s, size_t n,
                      double mem_bw_Bps, fit_roofline *out, err_t *e) {
  if (!(mem_bw_Bps > 0)) return err_set(e, ERR_RUNTIME, "fit: gemm needs a memory bandwidth > 0");
  if (n < 2) return err_set(e, ERR_RUNTIME, "fit: gemm needs at least 2 points, got %zu", n);
  memset(out, 0, sizeof *out);
  out->mem_bw_Bps = mem_bw_Bps;
  unsigned char *cb = malloc(n);
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  int rc = ERR_OK;
  if (!cb || !x || !y) {
    rc = err_set(e, ERR_NOMEM, "fit: out of memory");
    goto done;
  }
  memset(cb, 1, n); /* start with every point compute-bound */
  for (int round = 0; round < 20; round++) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (cb[i]) {
        x[m] = flops[i];
        y[m] = time_s[i];
        m++;
      }
    if (m < 2) break; /* nothing left to fit a rate on: keep the previous one */
    if ((rc = fit_affine_rate(x, y, m, &out->launch_s, &out->rate_flops, "gemm", e))) goto done;
    int changed = 0;
    size_t ncb = 0;
    for (size_t i = 0; i < n; i++) {
      unsigned char c = flops[i] / out->rate_flops >= bytes[i] / mem_bw_Bps;
      changed |= c != cb[i];
      cb[i] = c;
      ncb += c;
    }
    out->compute_bound = ncb;
    if (!changed) break;
  }
  if (!(out->rate_flops > 0)) {
    rc = err_set(e, ERR_RUNTIME, "fit: no gemm point is compute-bound: no rate to fit");
    goto done;
  }
  roofline_residuals(out, flops, bytes, time_s, n);
done:
  free(cb);
  free(x);
  free(y);
  return rc;
}

static int cmp_pair(const void *a, const void *b) {
  const double *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

int fit_table_build(const double *size, const double *time_s, size_t npoints, fit_table *t,
                    err_t *e) {
  if (npoints < 1) return err_set(e, ERR_RUNTIME, "fit: a table needs at least one point");
  double *pairs = malloc(2 * npoints * sizeof *pairs);
  if (!pairs) return err_set(e, ERR_NOMEM, "fit: out of memory");
  for (size_t i = 0; i < npoints; i++) {
    if (!(size[i] > 0) || !(time_s[i] > 0)) {
      free(pairs);
      return err_set(e, ERR_RUNTIME, "fit: table point %zu has size %g, time %g (must be > 0)",
                     i, size[i], time_s[i]);
    }
    pairs[2 * i] = size[i];
    pairs[2 * i + 1] = time_s[i];
  }
  qsort(pairs, npoints, 2 * sizeof *pairs, cmp_pair);
  size_t k = 0;
  for (size_t i = 0; i < npoints;) {
    size_t j = i;
    double sum = 0;
    while (j < npoints && pairs[2 * j] == pairs[2 * i]) sum += pairs[2 * j++ + 1];
    t->size[k] = pairs[2 * i];
    t->time_s[k] = sum / (double)(j - i);
    k++;
    i = j;
  }
  t->n = k;
  free(pairs);
  return ERR_OK;
}

double fit_table_time(const fit_table *t, double size, double fallback_time_s, int *extrapolated) {
  *extrapolated = 0;
  if (size < t->size[0] || size > t->size[t->n - 1]) {
    *extrapolated = 1;
    return fallback_time_s;
  }
  size_t i = 0;
  while (i + 1 < t->n && t->size[i + 1] < size) i++;
  if (size == t->size[i] || i + 1 == t->n) return t->time_s[i];
  double x0 = log(t->size[i]), x1 = log(t->size[i + 1]);
  double r0 = t->size[i] / t->time_s[i], r1 = t->size[i + 1] / t->time_s[i + 1];
  double u = (log(size) - x0) / (x1 - x0);
  return size / (r0 + u * (r1 - r0));
}

/* ---- quality gates ---- */

/* The loader's ranges (sim/profile.h, common/txt.h): a fit outside them could not be written at all. */
static int out_of(double v, double lo, double hi, int zero_ok) { return !(isfinite(v) && ((v >= lo && v <= hi) || (zero_ok && v == 0))); }

int fit_ring_poor(const fit_ring_result *r, char *why, size_t len, int *keepable) {
  *keepable = 0;
  if (out_of(r->lat_s, PROFILE_LAT_MIN_s, PROFILE_LAT_MAX_s, 0))
    return snprintf(why, len, "latency %.4g s per hop is outside 1 ns .. 10 s", r->lat_s), 1;
  if (out_of(r->bw_Bps, TXT_BW_MIN_Bps, TXT_BW_MAX_Bps, 0))
    return snprintf(why, len, "bandwidth %.4g B/s is outside %g .. %g B/s", r->bw_Bps, TXT_BW_MIN_Bps, TXT_BW_MAX_Bps), 1;
  *keepable = 1;
  double hops = (double)coll_ring_steps(COLL_ALLREDUCE, (long)r->nranks);
  for (size_t i = 0; i < r->nregimes; i++) {
    const fit_regime *g = &r->regime[i];
    /* t(S) = 2(n-1) (lat + S / (n bw)): increasing in S, so the smallest size is the test. */
    double t_min = hops * (g->lat_s + (isinf(g->bw_Bps) ? 0 : g->min_bytes / (r->nranks * g->bw_Bps)));
    if (!(t_min > 0))
      return snprintf(why, len,
                      "the regime %.0f .. %.0f B has a negative time at its own smallest size (intercept %.4g us/hop): "
                      "not a physical fit",
                      g->min_bytes, g->max_bytes, g->lat_s * 1e6), 1;
    if (!(g->rms_rel <= FIT_MAX_RMS_REL))
      return snprintf(why, len, "the regime %.0f .. %.0f B misses its times by %.1f%% rms, above the %.0f%% threshold",
                      g->min_bytes, g->max_bytes, g->rms_rel * 100, FIT_MAX_RMS_REL * 100), 1;
  }
  if (!(r->rms_rel <= FIT_MAX_RMS_REL))
    return snprintf(why, len, "the model written (lat_s, bw_Bps) misses the sweep by %.1f%% rms, above the %.0f%% threshold",
                    r->rms_rel * 100, FIT_MAX_RMS_REL * 100), 1;
  return 0;
}

int fit_roofline_poor(const fit_roofline *r, int gemm, char *why, size_t len, int *keepable) {
  *keepable = 0;
  if (out_of(r->launch_s, PROFILE_LAT_MIN_s, PROFILE_LAT_MAX_s, 1))
    return snprintf(why, len, "launch cost %.4g s is outside 1 ns .. 10 s (or 0)", r->launch_s), 1;
  if (gemm && out_of(r->rate_flops, PROFILE_FLOPS_MIN, PROFILE_FLOPS_MAX, 0))
    return snprintf(why, len, "rate %.4g flop/s is outside 1e6 .. 1e18", r->rate_flops), 1;
  if (out_of(r->mem_bw_Bps, TXT_BW_MIN_Bps, TXT_BW_MAX_Bps, 0))
    return snprintf(why, len, "memory bandwidth %.4g B/s is outside %g .. %g B/s", r->mem_bw_Bps, TXT_BW_MIN_Bps,
                    TXT_BW_MAX_Bps), 1;
  *keepable = 1;
  if (!(r->rms_rel <= FIT_MAX_RMS_REL))
    return snprintf(why, len, "the fallback roofline misses the measured points by %.1f%% rms, above the %.0f%% threshold",
                    r->rms_rel * 100, FIT_MAX_RMS_REL * 100), 1;
  return 0;
}
