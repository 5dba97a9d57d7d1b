/* uncert: the uncertainty of a profile's numbers, and profile documents drawn from it
 * (docs/profile.md, "Uncertainty"). JSON only: profile_draws_build (sim/profile.h) loads the drawn
 * documents as profiles, so this module does not depend on the profile's.
 *
 * A profile may carry an `uncertainty` object keyed by the JSON path of one of its numbers
 * ("comm.links.10gbe.efficiency"): {rel_sd, origin, why, max}. rel_sd is the relative standard
 * deviation of the number; origin says where it comes from: "measured" (a fit's residuals and the
 * spread of its samples, written by ddpcalib), "sourced" (what the source itself says, or how
 * loosely it says it), "assumed" (a stated assumption: wide, and `why` says why); max (optional)
 * bounds a draw (1 for a fraction). The profile's schema (sim/profile.c) checks the object with
 * uncert_check, so ddpsim and ddpcalib refuse the same ones.
 *
 * A draw multiplies each such number by its own lognormal factor with mean 1 and coefficient of
 * variation rel_sd (bounded by max), one per entry in the order of the object, from the caller's
 * seeded gsl_rng: a seed gives the same profiles on every machine. Library code: never prints. */
#ifndef DDPSIM_UNCERT_H
#define DDPSIM_UNCERT_H

#include <cjson/cJSON.h>
#include <gsl/gsl_rng.h>

#include "err.h"

/* Where an uncertainty comes from. */
typedef enum { UNCERT_MEASURED = 0, UNCERT_SOURCED = 1, UNCERT_ASSUMED = 2 } uncert_origin;

/* The largest rel_sd accepted: a factor of about 3 either way at one standard deviation. */
#define UNCERT_MAX_REL_SD 2.0

/* Checks doc's "uncertainty" (absent: ERR_OK): every key the path of a number of doc (or of one
 * whose whole object is absent: a section left out; ignored), every entry
 * {rel_sd in (0, UNCERT_MAX_REL_SD], origin, why (a string; required for "assumed"), max (> 0,
 * not below the number)} and nothing else. ERR_INPUT with `origin: uncertainty."PATH": what is
 * wrong`. */
int uncert_check(const cJSON *doc, const char *origin, err_t *e);

/* How many numbers of doc carry an uncertainty (present ones; 0 for none or a bad object). */
int uncert_count(const cJSON *doc);

/* The i-th entry (present or not): its path, rel_sd and origin (0), or -1 past the end. */
int uncert_entry(const cJSON *doc, int i, const char **path, double *rel_sd, uncert_origin *origin);

/* A copy of doc (checked by uncert_check) whose uncertain numbers are each multiplied by one draw
 * from rng; *out is the caller's to cJSON_Delete. ERR_NOMEM. */
int uncert_perturb(const cJSON *doc, const gsl_rng *rng, cJSON **out, err_t *e);

/* Sets (or replaces) doc's uncertainty entry for path: how ddpcalib records a fit's. ERR_NOMEM, or
 * ERR_USAGE for a rel_sd out of range or a bad origin. */
int uncert_set(cJSON *doc, const char *path, double rel_sd, uncert_origin origin, const char *why, err_t *e);

#endif
