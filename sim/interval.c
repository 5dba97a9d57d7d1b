/* interval: how sure a prediction is (interval.h). */
#include "interval.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "uncert.h"

static void central(double *v, int n, double level, double *lo, double *hi);

int interval_draws(const sim_config *c, const cJSON *doc, const char *origin, int draws, unsigned long seed, int jittered,
                   profile_draws *d, sim_config **cfgs, int *n, err_t *e) {
  memset(d, 0, sizeof *d);
  *cfgs = NULL;
  *n = 0;
  if (draws < 0) return err_set(e, ERR_USAGE, "interval: draws must be >= 0");
  if (!uncert_count(doc) || draws == 0) return ERR_OK;
  int rc = profile_draws_build(doc, origin, c->profile, seed, draws, d, e);
  if (!rc && (rc = interval_configs(c, d, jittered, cfgs, n, e))) profile_draws_free(d);
  return rc;
}

int interval_configs(const sim_config *c, const profile_draws *d, int jittered, sim_config **cfgs, int *n, err_t *e) {
  *cfgs = NULL;
  *n = 0;
  if (d->n == 0) return ERR_OK;
  /* d->p[0] is the nominal profile: simulated (without jitter) only as the reference of a jittered run. */
  int first = jittered ? 0 : 1;
  if (!(*cfgs = malloc((size_t)(d->n - first) * sizeof **cfgs))) return err_set(e, ERR_NOMEM, "out of memory");
  for (int s = first; s < d->n; s++) {
    sim_config *one = &(*cfgs)[s - first];
    *one = *c;
    one->profile = d->p[s];
    one->record_spans = 0;
    one->jitter_cv = 0;
    one->host_jitter_s = 0;
    /* Symmetry and the closed form give the same results as every rank's events (docs/simulation.md:
     * tests/sim/test_engine.c, test_full_golden.sh): the draws take them wherever they apply, even
     * where the nominal run was asked to play every rank (--no-symmetry, --events), so that a draw
     * simulates at most 2 nodes whatever the job's size. */
    one->symmetry = 1;
    one->events = 0;
  }
  *n = d->n - first;
  return ERR_OK;
}

int interval_profile(double nominal_s, int jittered, const double *t, int n, unsigned long seed, double level, interval_t *out,
                     err_t *e) {
  *out = (interval_t){.level = level, .seed = seed, .profile_lo = 1, .profile_hi = 1, .validated_lo = 1, .validated_hi = 1,
                      .measured_lo = 1, .measured_hi = 1, .nominal_s = nominal_s, .lo_s = nominal_s, .hi_s = nominal_s};
  if (!(level > 0 && level < 1)) return err_set(e, ERR_USAGE, "interval: the level must be in (0, 1)");
  if (!(nominal_s > 0)) return err_set(e, ERR_USAGE, "interval: the nominal iteration must be positive");
  int draws = n - (jittered && n > 0);
  if (draws <= 0) return ERR_OK;
  double ref = jittered ? t[0] : nominal_s, *r = malloc((size_t)draws * sizeof *r);
  if (!r) return err_set(e, ERR_NOMEM, "out of memory");
  for (int s = 0; s < draws; s++) r[s] = t[n - draws + s] / ref;
  for (int s = 0; s < draws && s < INTERVAL_MAX_DRAWS; s++) out->draw_ratio[s] = r[s];
  out->draws = draws;
  central(r, draws, level, &out->profile_lo, &out->profile_hi);
  out->lo_s = nominal_s * out->profile_lo;
  out->hi_s = nominal_s * out->profile_hi;
  free(r);
  return ERR_OK;
}

/* The parts, errors of the log time each a central interval at the level: combined in quadrature
 * on each side, as independent ones add (their product would hold more than the level). */
static void combine(interval_t *iv) {
  double lp = log(iv->profile_lo), lv = log(iv->validated_lo), lm = log(iv->measured_lo);
  double hp = log(iv->profile_hi), hv = log(iv->validated_hi), hm = log(iv->measured_hi);
  iv->lo_s = iv->nominal_s * exp(-sqrt(lp * lp + lv * lv + lm * lm));
  iv->hi_s = iv->nominal_s * exp(sqrt(hp * hp + hv * hv + hm * hm));
}

void interval_validated(interval_t *iv, int n, int all_points, double ratio_lo, double ratio_hi) {
  iv->validated_points = n;
  iv->validated_all_points = all_points;
  iv->validated_lo = all_points > 0 ? fmin(1.0, ratio_lo) : 1;
  iv->validated_hi = all_points > 0 ? fmax(1.0, ratio_hi) : 1;
  combine(iv);
}

void interval_measured(interval_t *iv, long steps, double rel_sd) {
  iv->measured_steps = steps > 0 && rel_sd > 0 ? steps : 0;
  iv->measured_rel_sd = iv->measured_steps ? rel_sd : 0;
  double sigma = sqrt(log1p(iv->measured_rel_sd * iv->measured_rel_sd)), z = gsl_cdf_ugaussian_Pinv((1 + iv->level) / 2);
  iv->measured_lo = exp(-z * sigma);
  iv->measured_hi = exp(z * sigma);
  combine(iv);
}

/* The central `level` interval of v[0..n-1] (sorted in place), widened to contain 1. */
static void central(double *v, int n, double level, double *lo, double *hi) {
  gsl_sort(v, 1, (size_t)n);
  *lo = fmin(1.0, gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, (1 - level) / 2));
  *hi = fmax(1.0, gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, (1 + level) / 2));
}

void interval_ratio(const interval_t *a, const interval_t *b, int same_draws, int same_kind, double *lo, double *hi) {
  /* The profile part, as log half-widths of b / a on each side. */
  double plo, phi;
  int n = a->draws < INTERVAL_MAX_DRAWS ? a->draws : INTERVAL_MAX_DRAWS;
  if (same_draws && n > 0 && a->draws == b->draws) {
    double q[INTERVAL_MAX_DRAWS], flo, fhi;
    for (int k = 0; k < n; k++) q[k] = b->draw_ratio[k] / a->draw_ratio[k];
    central(q, n, a->level, &flo, &fhi);
    plo = -log(flo), phi = log(fhi);
  } else {
    plo = hypot(log(b->profile_lo), log(a->profile_hi));
    phi = hypot(log(b->profile_hi), log(a->profile_lo));
  }
  double vlo = 0, vhi = 0;
  if (!same_kind) {
    vlo = hypot(log(b->validated_lo), log(a->validated_hi));
    vhi = hypot(log(b->validated_hi), log(a->validated_lo));
  }
  /* The measured part: one model's steps on both sides (compare predicts one model) cancel; a side
   * alone with it (the other's profile not of the measured device) keeps its own. */
  double mlo = 0, mhi = 0;
  if (!(a->measured_steps > 0 && b->measured_steps > 0 && a->measured_rel_sd == b->measured_rel_sd)) {
    mlo = hypot(log(b->measured_lo), log(a->measured_hi));
    mhi = hypot(log(b->measured_hi), log(a->measured_lo));
  }
  *lo = exp(-sqrt(plo * plo + vlo * vlo + mlo * mlo));
  *hi = exp(sqrt(phi * phi + vhi * vhi + mhi * mhi));
}

int interval_same_kind(const sim_config *a, const sim_config *b) {
  return a->profile && b->profile && strcmp(profile_name(a->profile), profile_name(b->profile)) == 0 &&
         sim_precision(a) == sim_precision(b);
}

int interval_pair(const sim_config *a, const interval_t *ia, const sim_config *b, const interval_t *ib, double *lo, double *hi) {
  *lo = *hi = 1;
  if (!(ia->nominal_s > 0) || !(ib->nominal_s > 0)) return 0;
  int same_draws = a->profile == b->profile && ia->draws == ib->draws && ia->seed == ib->seed;
  interval_ratio(ia, ib, same_draws, interval_same_kind(a, b), lo, hi);
  return 1;
}

void interval_scale(const interval_t *iv, double value, int with_time, double *lo, double *hi) {
  double flo = iv->lo_s / iv->nominal_s, fhi = iv->hi_s / iv->nominal_s;
  *lo = with_time ? value * flo : value / fhi;
  *hi = with_time ? value * fhi : value / flo;
}

cJSON *interval_json(const interval_t *iv, const char *const *names, const double *values, const int *with_time) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "level", iv->level);
  cJSON_AddNumberToObject(o, "draws", iv->draws);
  cJSON_AddNumberToObject(o, "seed", (double)iv->seed);
  cJSON_AddNumberToObject(o, "profile_lo_factor", iv->profile_lo);
  cJSON_AddNumberToObject(o, "profile_hi_factor", iv->profile_hi);
  cJSON_AddNumberToObject(o, "validated_points", iv->validated_points);
  cJSON_AddNumberToObject(o, "validated_all_points", iv->validated_all_points);
  cJSON_AddNumberToObject(o, "validated_lo_factor", iv->validated_lo);
  cJSON_AddNumberToObject(o, "validated_hi_factor", iv->validated_hi);
  cJSON_AddBoolToObject(o, "validated_cached", iv->validated_cached);
  cJSON_AddNumberToObject(o, "measured_steps", (double)iv->measured_steps);
  cJSON_AddNumberToObject(o, "measured_rel_sd", iv->measured_rel_sd);
  cJSON_AddNumberToObject(o, "measured_lo_factor", iv->measured_lo);
  cJSON_AddNumberToObject(o, "measured_hi_factor", iv->measured_hi);
  for (int k = 0; names[k]; k++) {
    if (!(values[k] > 0)) continue; /* not given (no price, no card power) */
    cJSON *f = cJSON_AddObjectToObject(o, names[k]);
    if (!f) {
      cJSON_Delete(o);
      return NULL;
    }
    double lo, hi;
    interval_scale(iv, values[k], with_time[k], &lo, &hi);
    cJSON_AddNumberToObject(f, "lo", lo);
    cJSON_AddNumberToObject(f, "hi", hi);
  }
  return o;
}
