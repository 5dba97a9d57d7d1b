/* interval: how sure a prediction is (docs/memory.md, "How sure").
 *
 * Two sources (three for a model of measured op times), combined as factors on the iteration time:
 *   the profile's uncertainty, propagated: `draws` profiles drawn from its `uncertainty` object
 *     (profile_draws_build, as recommend draws them), each simulated (by the caller: sweep_run
 *     spreads them over processes); the central `level` interval of their iteration times, as factors
 *     on the nominal one. The draws run without jitter (no profile's uncertainty is about its
 *     jitter), so that a jittered configuration, which simulates every rank, costs them no more
 *     than its symmetric twin; its factors are then over the same configuration without jitter.
 *     They run with symmetry and the closed form (same results) even where the nominal run played
 *     every rank's events: a draw simulates at most 2 nodes, whatever the job's size;
 *   the validated error of this kind of run: the interval of true / predicted time that the
 *     published points `ddpsim accuracy` predicts give at the same level, centred on those of the
 *     same profile and precision (on all of them where it has none), as wide as their spread over
 *     every point (the caller gives it: validate/accuracy.h, accuracy_error_factors); it contains 1.
 *   the measured steps' spread, where the run prices the model's measured op times (the exporter's
 *     --time or --from-trace; sim/cost.h, cost_measured): its `measured` line's step_rel_sd as a
 *     lognormal of that coefficient of variation, the central interval at the level: how far one
 *     run's steps were from their mean, so how far another run's may be (a machine's load moves it).
 *   They are independent errors of the log time at the same level, so they add in quadrature on
 *   each side: lo = nominal x exp(-sqrt(log^2 profile_lo + log^2 validated_lo + log^2 measured_lo)),
 *   hi likewise (their product would hold more than the level). The interval always contains the
 *   nominal.
 * What follows from the iteration (throughput, time to train, cost, energy at the same power)
 * scales with it. Library code: never prints. */
#ifndef DDPSIM_INTERVAL_H
#define DDPSIM_INTERVAL_H

#include <cjson/cJSON.h>

#include "err.h"
#include "profile.h"
#include "sim.h"

/* The most draws an interval takes (predict's --draws). */
#define INTERVAL_MAX_DRAWS 1000

typedef struct {
  double level;              /* of both parts, (0, 1) */
  int draws;                 /* profiles drawn and simulated (0: the profile has no uncertainty) */
  unsigned long seed;
  double profile_lo, profile_hi;     /* factors on the nominal iteration (1, 1 without draws) */
  int validated_points;              /* published points of this kind (0: none, centred on all of them) */
  int validated_all_points;          /* published points the spread is from (0: none, factors 1) */
  double validated_lo, validated_hi; /* factors: the range of true / predicted time, widened to contain 1 */
  int validated_cached;              /* 1: the range came from the build's cache (validate/accuracy.h), 0:
                                        the points were predicted for this run (or there were none) */
  long measured_steps;               /* steps the measured op times are the mean of (0: no measured part) */
  double measured_rel_sd;            /* their spread (the model's step_rel_sd; 0 without) */
  double measured_lo, measured_hi;   /* factors (1, 1 without) */
  double nominal_s, lo_s, hi_s;      /* the iteration time and its interval */
  double draw_ratio[INTERVAL_MAX_DRAWS]; /* each draw's iteration over the reference, in draw order
                                            (the first `draws`): what a paired comparison divides */
} interval_t;

/* The profile part's simulations for configuration c (its profile's JSON document doc, named
 * origin): *d the `draws` profiles drawn (d->n == 0 when doc has no uncertainty or draws is 0; free
 * with profile_draws_free after the runs), and *cfgs the configurations to simulate, *n of them
 * (the caller frees *cfgs; NULL with 0): c at each drawn profile without jitter, after, where c's
 * nominal run was jittered (sim_result.jittered), c itself without jitter (the reference).
 * ERR_USAGE for draws < 0; a drawn profile's error. */
int interval_draws(const sim_config *c, const cJSON *doc, const char *origin, int draws, unsigned long seed, int jittered,
                   profile_draws *d, sim_config **cfgs, int *n, err_t *e);

/* The configurations of interval_draws for c from profiles d already drawn (of c's profile's
 * document: configurations of one profile share them). ERR_NOMEM. */
int interval_configs(const sim_config *c, const profile_draws *d, int jittered, sim_config **cfgs, int *n, err_t *e);

/* The profile part from the iteration times t[0..n-1] of interval_draws' configurations (n == 0:
 * none, factors 1), for the nominal iteration nominal_s: fills *out, with factors 1 for the
 * validated part. ERR_USAGE for a level outside (0, 1) or a nominal <= 0. */
int interval_profile(double nominal_s, int jittered, const double *t, int n, unsigned long seed, double level, interval_t *out,
                     err_t *e);

/* Adds the validated part: factors ratio_lo .. ratio_hi on the time (widened to contain 1), from
 * n published points of this kind among all_points. */
void interval_validated(interval_t *iv, int n, int all_points, double ratio_lo, double ratio_hi);

/* Adds the measured part: the spread rel_sd (>= 0) of the `steps` steps the model's op times were
 * measured over, as the central interval at iv's level of a lognormal with that coefficient of
 * variation (steps <= 0 or rel_sd <= 0: none). */
void interval_measured(interval_t *iv, long steps, double rel_sd);

/* The factors on the ratio b / a of two configurations' times, at a's level (a and b after
 * interval_validated). Paired where they share things: same_draws (both drew the same profile
 * document with the same seed and count, so that draw k is the same profile on both sides) takes
 * the central interval of the draws' ratios b.draw_ratio[k] / a.draw_ratio[k]; same_kind (the same
 * profile and precision) takes the validated error as shared, the same card's, so that it cancels;
 * a measured part on both sides of the same spread (one model's steps) cancels too. What is not
 * shared is independent and adds in quadrature (b's hi side with a's lo side). *lo <= 1 <= *hi. */
void interval_ratio(const interval_t *a, const interval_t *b, int same_draws, int same_kind, double *lo, double *hi);

/* Whether configurations a and b are of one kind for interval_ratio's same_kind: the same profile
 * (by name) and the same precision, so that one validated error is theirs. */
int interval_same_kind(const sim_config *a, const sim_config *b);

/* interval_ratio for configurations a and b of one run (a sweep's rows) with intervals ia and ib:
 * the draws are paired where both drew one profile object (the same loaded profile, so the same
 * document) with the same count and seed, the validated error where interval_same_kind. The factors
 * on b's time over a's into *lo, *hi; 0 (and factors 1) where either has no interval (nominal_s 0,
 * as --no-interval leaves it), else 1. */
int interval_pair(const sim_config *a, const interval_t *ia, const sim_config *b, const interval_t *ib, double *lo, double *hi);

/* The lo/hi of a figure that follows the iteration: one that grows with it (a time, cost, energy)
 * takes the factors as they are, a throughput their inverse. */
void interval_scale(const interval_t *iv, double value, int with_time, double *lo, double *hi);

/* The `interval` object (docs/cli.md): the factors, the iteration's lo/hi, and of each figure
 * given (value > 0; NULL names end the list) whether it grows with the iteration (times, cost,
 * energy) or shrinks (throughput): {"lo", "hi"} under its name. NULL when out of memory. */
cJSON *interval_json(const interval_t *iv, const char *const *names, const double *values, const int *with_time);

#endif
