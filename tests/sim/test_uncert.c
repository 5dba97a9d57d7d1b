/* The profile's uncertainty (sim/uncert.h): the schema's checks, each with its message naming the
 * field; draws reproducible from a seed, lognormal with mean 1 and the stated spread, bounded by
 * max; every bundled profile's entries. */
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "data.h"
#include "profile.h"
#include "txt.h"
#include "uncert.h"

static cJSON *bundled(const char *name) {
  char path[4096];
  err_t e;
  size_t n;
  if (data_resolve(DATA_PROFILE, name, path, sizeof path, &e)) return NULL;
  char *text = txt_read_file(path, &n);
  cJSON *doc = NULL;
  if (text && profile_json_parse(text, n, path, &doc, &e)) doc = NULL;
  free(text);
  return doc;
}

static double num(const cJSON *doc, const char *a, const char *b, const char *c, const char *d) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(doc, a);
  x = cJSON_GetObjectItemCaseSensitive(x, b);
  x = cJSON_GetObjectItemCaseSensitive(x, c);
  if (d) x = cJSON_GetObjectItemCaseSensitive(x, d);
  return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* A copy of doc with uncertainty."comm.links.10gbe.efficiency" replaced by the JSON text entry
 * (or the whole uncertainty by `whole`), checked: the status and message. */
static int check_entry(const cJSON *doc, const char *key, const char *entry, err_t *e) {
  cJSON *d = cJSON_Duplicate(doc, 1), *u = cJSON_GetObjectItemCaseSensitive(d, "uncertainty"), *v = cJSON_Parse(entry);
  cJSON_DeleteItemFromObjectCaseSensitive(u, key);
  cJSON_AddItemToObject(u, key, v);
  int rc = uncert_check(d, "x.json", e);
  profile_t *p = NULL;
  err_t e2;
  int rc2 = profile_from_json(d, "x.json", PROFILE_WHOLE, &p, &e2); /* the schema runs the same check */
  profile_destroy(p);
  if ((rc != 0) != (rc2 != 0) || (rc && strcmp(e->msg, e2.msg) != 0)) rc = -1;
  cJSON_Delete(d);
  return rc;
}

int main(void) {
  gsl_set_error_handler_off();
  cJSON *doc = bundled("v100-dgx1v");
  CHECK(doc != NULL, "v100-dgx1v read");
  if (!doc) return check_status();
  err_t e;
  CHECK(uncert_check(doc, "v100", &e) == ERR_OK, "the bundled uncertainty passes the schema");
  int n = uncert_count(doc), assumed = 0, eff = 0;
  for (int i = 0; i < n; i++) {
    const char *path;
    double sd;
    uncert_origin o;
    uncert_entry(doc, i, &path, &sd, &o);
    assumed += o == UNCERT_ASSUMED;
    if (strcmp(path, "comm.links.10gbe.efficiency") == 0) eff = sd >= 0.2 && o == UNCERT_ASSUMED;
  }
  CHECK(n >= 10 && assumed >= 5, "v100-dgx1v: %d uncertain numbers, %d of them stated assumptions", n, assumed);
  CHECK(eff, "the 10 GbE efficiency is a stated assumption with a wide (>= 20%%) uncertainty");

  /* Every bundled reference profile states how well its links and elementwise costs are known: the
   * bandwidth (or efficiency) of each link NCCL uses, and each precision's elementwise memory
   * efficiency (docs/profiles.md: the A100 and H100 profiles had their host costs alone). */
  const char *refs[] = {"v100-dgx1v", "p100-dgx1", "a100-dgxa100", "h100-dgxh100"};
  for (size_t r = 0; r < sizeof refs / sizeof *refs; r++) {
    cJSON *pd = bundled(refs[r]);
    CHECK(pd != NULL && uncert_check(pd, refs[r], &e) == ERR_OK, "%s: read, its uncertainty passes the schema", refs[r]);
    if (!pd) continue;
    const cJSON *unc = cJSON_GetObjectItemCaseSensitive(pd, "uncertainty"), *link;
    cJSON_ArrayForEach(link, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pd, "comm"), "links")) {
      char bw[256], ef[256];
      snprintf(bw, sizeof bw, "comm.links.%s.bw_Bps", link->string);
      snprintf(ef, sizeof ef, "comm.links.%s.efficiency", link->string);
      CHECK(cJSON_GetObjectItemCaseSensitive(unc, bw) || cJSON_GetObjectItemCaseSensitive(unc, ef),
            "%s: link %s has an uncertainty of its bandwidth or efficiency", refs[r], link->string);
    }
    const cJSON *prec;
    cJSON_ArrayForEach(prec, cJSON_GetObjectItemCaseSensitive(pd, "compute")) {
      if (!cJSON_GetObjectItemCaseSensitive(prec, "ewise")) continue;
      char me[256];
      snprintf(me, sizeof me, "compute.%s.ewise.mem_efficiency", prec->string);
      CHECK(cJSON_GetObjectItemCaseSensitive(unc, me) != NULL, "%s: %s has an uncertainty", refs[r], me);
    }
    cJSON_Delete(pd);
  }

  /* Bad entries: each refused with its field named, by uncert_check and the schema alike. */
  const struct {
    const char *key, *entry, *want;
  } bad[] = {
      {"comm.links.10gbe.efficiency", "{\"rel_sd\": 0, \"origin\": \"sourced\"}", "uncertainty.\"comm.links.10gbe.efficiency\".rel_sd"},
      {"comm.links.10gbe.efficiency", "{\"rel_sd\": 2.5, \"origin\": \"sourced\"}", ".rel_sd must be"},
      {"comm.links.10gbe.efficiency", "{\"rel_sd\": 0.1, \"origin\": \"guessed\"}", ".origin must be"},
      {"comm.links.10gbe.efficiency", "{\"rel_sd\": 0.1, \"origin\": \"assumed\"}", ".why must say why"},
      {"comm.links.10gbe.efficiency", "{\"rel_sd\": 0.1, \"origin\": \"sourced\", \"max\": 0.5}", ".max must be a number above 0 and not below the value (0.7)"},
      {"comm.links.10gbe.efficiency", "{\"rel_sd\": 0.1, \"origin\": \"sourced\", \"sd\": 1}", "unknown field \"sd\""},
      {"comm.links.10gbe.efficiency", "0.3", "must be an object {rel_sd, origin, why}"},
      {"comm.links.10gbe.speed", "{\"rel_sd\": 0.1, \"origin\": \"sourced\"}", "uncertainty.\"comm.links.10gbe.speed\": no such number"},
      {"comm.links.10gbe.source", "{\"rel_sd\": 0.1, \"origin\": \"sourced\"}", "\"comm.links.10gbe.source\": no such number"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc = check_entry(doc, bad[i].key, bad[i].entry, &e);
    CHECK(rc == ERR_INPUT && strstr(e.msg, bad[i].want) && strncmp(e.msg, "x.json: ", 8) == 0, "refused: %s -> %s", bad[i].entry,
          rc == ERR_INPUT ? e.msg : "(accepted, or the schema disagreed)");
  }

  /* A number whose whole object is absent (a link class left out of this profile) is ignored. */
  CHECK(check_entry(doc, "comm.links.roce.bw_Bps", "{\"rel_sd\": 0.1, \"origin\": \"sourced\"}", &e) == ERR_OK,
        "an entry for an absent link class is accepted and ignored");

  /* Draws: a seed gives the same profiles; another seed others. */
  gsl_rng *r1 = gsl_rng_alloc(gsl_rng_mt19937), *r2 = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r1, 7);
  gsl_rng_set(r2, 7);
  cJSON *a, *b;
  uncert_perturb(doc, r1, &a, &e);
  uncert_perturb(doc, r2, &b, &e);
  CHECK(cJSON_Compare(a, b, 1), "seed 7 twice: the same drawn profile");
  cJSON_Delete(b);
  gsl_rng_set(r2, 8);
  uncert_perturb(doc, r2, &b, &e);
  double ea = num(a, "comm", "links", "10gbe", "efficiency"), eb = num(b, "comm", "links", "10gbe", "efficiency");
  CHECK(ea != eb && ea != 0.7, "seeds 7 and 8 draw other 10 GbE efficiencies (%.4f, %.4f)", ea, eb);
  CHECK(num(cJSON_GetObjectItemCaseSensitive(a, "compute"), "fp32", "gemm", "fallback", "peak_flops") ==
            num(cJSON_GetObjectItemCaseSensitive(doc, "compute"), "fp32", "gemm", "fallback", "peak_flops"),
        "a number without an uncertainty is not drawn");
  profile_t *p = NULL;
  CHECK(profile_from_json(a, "drawn", PROFILE_WHOLE, &p, &e) == ERR_OK, "a drawn profile passes the schema");
  profile_destroy(p);
  cJSON_Delete(a), cJSON_Delete(b);

  /* Many draws of the InfiniBand bandwidth (rel_sd 0.1, no max): mean 1 and cv 0.1 within what
   * 4000 draws allow (sd of the mean 0.0016; of the cv about 0.0012); the 10 GbE efficiency
   * (0.7, rel_sd 0.3, max 1) never above 1. */
  enum { N = 4000 };
  static double f[N];
  double top = 0;
  gsl_rng_set(r1, 2385);
  for (int i = 0; i < N; i++) {
    cJSON *d;
    uncert_perturb(doc, r1, &d, &e);
    f[i] = num(d, "comm", "links", "ib-edr", "bw_Bps") / 12e9;
    top = fmax(top, num(d, "comm", "links", "10gbe", "efficiency"));
    cJSON_Delete(d);
  }
  double mean = gsl_stats_mean(f, 1, N), cv = gsl_stats_sd(f, 1, N) / mean;
  CHECK(check_close(1, mean, 0.01, 0), "ib-edr bw_Bps draws: mean %.4f of the nominal (1 +- 0.01)", mean);
  CHECK(check_close(0.1, cv, 0.01, 0), "ib-edr bw_Bps draws: cv %.4f (0.1 +- 0.01)", cv);
  CHECK(top <= 1.0 && top > 0.95, "10 GbE efficiency draws reach %.4f, bounded by max 1", top);
  gsl_rng_free(r1), gsl_rng_free(r2);

  /* uncert_set: how ddpcalib records a fit's; then the schema accepts it. */
  CHECK(uncert_set(doc, "comm.links.ib-edr.lat_s", 0.042, UNCERT_MEASURED, "fit residuals", &e) == ERR_OK &&
            uncert_check(doc, "x", &e) == ERR_OK,
        "uncert_set replaces an entry and the result passes");
  CHECK(uncert_set(doc, "comm.links.ib-edr.lat_s", 0, UNCERT_MEASURED, NULL, &e) == ERR_USAGE, "uncert_set refuses rel_sd 0");
  cJSON_Delete(doc);

  const char *names[] = {"p100-dgx1"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    cJSON *d = bundled(names[i]);
    CHECK(d && uncert_check(d, names[i], &e) == ERR_OK && uncert_count(d) > 0, "%s states its uncertainty", names[i]);
    cJSON_Delete(d);
  }
  return check_status();
}
