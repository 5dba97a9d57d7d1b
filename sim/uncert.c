/* uncert: profile uncertainties and draws from them (uncert.h). */
#include "uncert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

static const char *const origins[] = {"measured", "sourced", "assumed", NULL};

/* The number at a dotted path of doc, or NULL; *parent (may be NULL) is set to whether the object
 * that would hold it exists. */
static cJSON *at(const cJSON *doc, const char *path, int *parent) {
  char buf[512];
  if (parent) *parent = 0;
  if (strlen(path) >= sizeof buf) return NULL;
  strcpy(buf, path);
  char *last = strrchr(buf, '.');
  const cJSON *obj = doc;
  if (last) {
    *last = 0;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && obj; k = strtok_r(NULL, ".", &save))
      obj = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, k) : NULL;
  }
  if (!cJSON_IsObject(obj)) return NULL;
  if (parent) *parent = 1;
  cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, last ? last + 1 : buf);
  return cJSON_IsNumber(n) ? n : NULL;
}

#define BAD(...) err_set(e, ERR_INPUT, __VA_ARGS__)

int uncert_check(const cJSON *doc, const char *origin, err_t *e) {
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(doc, "uncertainty"), *en;
  if (!u) return ERR_OK;
  if (!cJSON_IsObject(u)) return BAD("%s: \"uncertainty\" must be an object keyed by the JSON path of a number", origin);
  cJSON_ArrayForEach(en, u) {
    const char *p = en->string;
    int parent;
    const cJSON *num = at(doc, p, &parent);
    /* A typo is refused; a number whose whole object is absent (a section left out, a part for
     * ddpcalib merge) has nothing to draw. */
    if (!num && parent) return BAD("%s: uncertainty.\"%.200s\": no such number in the profile", origin, p);
    if (!cJSON_IsObject(en)) return BAD("%s: uncertainty.\"%.200s\" must be an object {rel_sd, origin, why}", origin, p);
    const cJSON *f;
    cJSON_ArrayForEach(f, en) {
      if (strcmp(f->string, "rel_sd") && strcmp(f->string, "origin") && strcmp(f->string, "why") && strcmp(f->string, "max"))
        return BAD("%s: uncertainty.\"%.200s\": unknown field \"%.60s\" (rel_sd, origin, why, max)", origin, p, f->string);
    }
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(en, "rel_sd"), *o = cJSON_GetObjectItemCaseSensitive(en, "origin"),
                *why = cJSON_GetObjectItemCaseSensitive(en, "why"), *mx = cJSON_GetObjectItemCaseSensitive(en, "max");
    if (!cJSON_IsNumber(sd) || !(sd->valuedouble > 0) || sd->valuedouble > UNCERT_MAX_REL_SD)
      return BAD("%s: uncertainty.\"%.200s\".rel_sd must be a relative standard deviation above 0, at most %g", origin, p,
                 UNCERT_MAX_REL_SD);
    int k = 0;
    while (origins[k] && !(cJSON_IsString(o) && strcmp(o->valuestring, origins[k]) == 0)) k++;
    if (!origins[k]) return BAD("%s: uncertainty.\"%.200s\".origin must be \"measured\", \"sourced\" or \"assumed\"", origin, p);
    if (why ? !cJSON_IsString(why) || !*why->valuestring : k == UNCERT_ASSUMED)
      return BAD("%s: uncertainty.\"%.200s\".why must say why it is that wide (a string; required for an assumption)", origin, p);
    if (mx && (!cJSON_IsNumber(mx) || !(mx->valuedouble > 0) || (num && mx->valuedouble < num->valuedouble)))
      return BAD("%s: uncertainty.\"%.200s\".max must be a number above 0 and not below the value (%g)", origin, p,
                 num ? num->valuedouble : 0);
  }
  return ERR_OK;
}

int uncert_entry(const cJSON *doc, int i, const char **path, double *rel_sd, uncert_origin *origin) {
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(doc, "uncertainty");
  const cJSON *en = cJSON_IsObject(u) ? cJSON_GetArrayItem(u, i) : NULL;
  if (!en) return -1;
  const cJSON *sd = cJSON_GetObjectItemCaseSensitive(en, "rel_sd"), *o = cJSON_GetObjectItemCaseSensitive(en, "origin");
  *path = en->string;
  *rel_sd = cJSON_IsNumber(sd) ? sd->valuedouble : 0;
  *origin = UNCERT_ASSUMED;
  for (int k = 0; origins[k]; k++)
    if (cJSON_IsString(o) && strcmp(o->valuestring, origins[k]) == 0) *origin = (uncert_origin)k;
  return 0;
}

int uncert_count(const cJSON *doc) {
  const cJSON *en;
  int n = 0;
  cJSON_ArrayForEach(en, cJSON_GetObjectItemCaseSensitive(doc, "uncertainty")) n += at(doc, en->string, NULL) != NULL;
  return n;
}

int uncert_perturb(const cJSON *doc, const gsl_rng *rng, cJSON **out, err_t *e) {
  *out = cJSON_Duplicate(doc, 1);
  if (!*out) return err_set(e, ERR_NOMEM, "out of memory");
  const cJSON *en;
  cJSON_ArrayForEach(en, cJSON_GetObjectItemCaseSensitive(doc, "uncertainty")) {
    cJSON *num = at(*out, en->string, NULL);
    if (!num) continue; /* its object is absent: nothing to draw */
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(en, "rel_sd"), *mx = cJSON_GetObjectItemCaseSensitive(en, "max");
    /* Lognormal with mean 1 and coefficient of variation cv: sigma^2 = ln(1 + cv^2), mu = -sigma^2/2. */
    double cv = sd->valuedouble, s2 = log1p(cv * cv), f = exp(-s2 / 2 + sqrt(s2) * gsl_ran_ugaussian(rng));
    double v = num->valuedouble * f;
    if (mx && v > mx->valuedouble) v = mx->valuedouble;
    cJSON_SetNumberValue(num, v);
  }
  return ERR_OK;
}

int uncert_set(cJSON *doc, const char *path, double rel_sd, uncert_origin origin, const char *why, err_t *e) {
  if (!(rel_sd > 0) || rel_sd > UNCERT_MAX_REL_SD || (int)origin < 0 || origin > UNCERT_ASSUMED)
    return err_set(e, ERR_USAGE, "uncertainty of %s: rel_sd %g or origin out of range", path, rel_sd);
  cJSON *u = cJSON_GetObjectItemCaseSensitive(doc, "uncertainty");
  if (!u && !(u = cJSON_AddObjectToObject(doc, "uncertainty"))) return err_set(e, ERR_NOMEM, "out of memory");
  cJSON *en = cJSON_CreateObject();
  if (!en || !cJSON_AddNumberToObject(en, "rel_sd", rel_sd) || !cJSON_AddStringToObject(en, "origin", origins[origin]) ||
      (why && !cJSON_AddStringToObject(en, "why", why))) {
    cJSON_Delete(en);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  if (cJSON_GetObjectItemCaseSensitive(u, path)) cJSON_ReplaceItemInObjectCaseSensitive(u, path, en);
  else cJSON_AddItemToObject(u, path, en);
  return ERR_OK;
}
