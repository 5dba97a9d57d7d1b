/* record: measurements and fits into the profile tree. */
#include "record.h"

#include <math.h>
#include <stdio.h>

#include "profilew.h"

#define NOMEM(e) cerr_set(e, CERR_NOMEM, "out of memory")

static cJSON *regime_json(const fit_regime *g) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (!cJSON_AddNumberToObject(o, "min_bytes", g->min_bytes) ||
      !cJSON_AddNumberToObject(o, "max_bytes", g->max_bytes) ||
      !cJSON_AddNumberToObject(o, "points", (double)g->count) ||
      !cJSON_AddNumberToObject(o, "lat_s", g->lat_s) ||
      !(isfinite(g->bw_Bps) ? cJSON_AddNumberToObject(o, "bw_Bps", g->bw_Bps)
                            : cJSON_AddStringToObject(o, "bw_Bps", "unbounded (latency-bound)")) ||
      !cJSON_AddNumberToObject(o, "rms_rel_resid", g->rms_rel) ||
      !cJSON_AddNumberToObject(o, "max_rel_resid", g->max_rel)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

int record_comm(cJSON *doc, const char *link_class, const commbench_backend *b,
                const commbench_cfg *cfg, const commbench_result *res, const fit_ring_result *fit,
                cerr *e) {
  cJSON *links = profilew_obj(profilew_obj(doc, "comm"), "links");
  cJSON *samples = profilew_obj(profilew_obj(doc, "samples"), "comm");
  if (!links || !samples) return NOMEM(e);
  cJSON *l = cJSON_CreateObject(), *s = cJSON_CreateObject();
  if (!l || !s) goto nomem;
  char src[512];
  snprintf(src, sizeof src,
           "ddpcalib comm --backend %s: %d ranks on %d host(s), float sum all-reduce %zu..%zu B, "
           "ring model fitted per size regime (docs/calib.md)",
           b->name, b->nranks, b->nhosts, res->rows[0].bytes, res->rows[res->nrows - 1].bytes);
  cJSON *f, *regs;
  if (!cJSON_AddNumberToObject(l, "lat_s", fit->lat_s) || !cJSON_AddNumberToObject(l, "bw_Bps", fit->bw_Bps) ||
      !cJSON_AddStringToObject(l, "source", src) || !cJSON_AddStringToObject(l, "backend", b->name) ||
      !cJSON_AddNumberToObject(l, "nranks", b->nranks) || !cJSON_AddNumberToObject(l, "nhosts", b->nhosts) ||
      !(f = cJSON_AddObjectToObject(l, "fit")) ||
      !cJSON_AddStringToObject(f, "model", "ring: t(S) = 2(n-1) (lat_s + S / (n bw_Bps))") ||
      !cJSON_AddStringToObject(f, "method",
                               "weighted least squares (weights 1/t^2) on the median time per size, "
                               "bends by binary segmentation; lat_s from the smallest-size regime, "
                               "bw_Bps from the largest-size regime") ||
      !cJSON_AddNumberToObject(f, "min_bytes", (double)res->rows[0].bytes) ||
      !cJSON_AddNumberToObject(f, "max_bytes", (double)res->rows[res->nrows - 1].bytes) ||
      !cJSON_AddNumberToObject(f, "rms_rel_resid", fit->rms_rel) ||
      !cJSON_AddNumberToObject(f, "max_rel_resid", fit->max_rel) ||
      !cJSON_AddNumberToObject(f, "avg_busbw_Bps", res->avg_busbw_GBps * 1e9) ||
      !(regs = cJSON_AddArrayToObject(f, "regimes")))
    goto nomem;
  for (size_t i = 0; i < fit->nregimes; i++) {
    cJSON *g = regime_json(&fit->regime[i]);
    if (!g) goto nomem;
    cJSON_AddItemToArray(regs, g);
  }
  cJSON *sizes;
  if (!cJSON_AddStringToObject(s, "backend", b->name) || !cJSON_AddNumberToObject(s, "nranks", b->nranks) ||
      !cJSON_AddStringToObject(s, "type", "float") || !cJSON_AddStringToObject(s, "redop", "sum") ||
      !cJSON_AddNumberToObject(s, "iters", cfg->iters) || !cJSON_AddNumberToObject(s, "warmups", cfg->warmups) ||
      !cJSON_AddStringToObject(s, "time", "per iteration, max over processes, seconds") ||
      !(sizes = cJSON_AddArrayToObject(s, "sizes")))
    goto nomem;
  for (size_t k = 0; k < res->nrows; k++) {
    const commbench_row *r = &res->rows[k];
    cJSON *o = cJSON_CreateObject();
    if (!o) goto nomem;
    cJSON_AddItemToArray(sizes, o);
    cJSON *t = cJSON_CreateDoubleArray(r->samples_s, cfg->iters);
    if (!t) goto nomem;
    cJSON_AddItemToObject(o, "times_s", t);
    if (!cJSON_AddNumberToObject(o, "bytes", (double)r->bytes) ||
        !cJSON_AddNumberToObject(o, "mean_s", r->mean_s) ||
        !cJSON_AddNumberToObject(o, "median_s", r->median_s) ||
        !cJSON_AddNumberToObject(o, "min_s", r->min_s) || !cJSON_AddNumberToObject(o, "max_s", r->max_s) ||
        !cJSON_AddNumberToObject(o, "algbw_Bps", r->algbw_GBps * 1e9) ||
        !cJSON_AddNumberToObject(o, "busbw_Bps", r->busbw_GBps * 1e9) ||
        !(r->wrong >= 0 ? cJSON_AddNumberToObject(o, "wrong", (double)r->wrong)
                        : cJSON_AddNullToObject(o, "wrong")))
      goto nomem;
  }
  if (cJSON_GetObjectItemCaseSensitive(links, link_class)) cJSON_DeleteItemFromObjectCaseSensitive(links, link_class);
  if (cJSON_GetObjectItemCaseSensitive(samples, link_class))
    cJSON_DeleteItemFromObjectCaseSensitive(samples, link_class);
  cJSON_AddItemToObject(links, link_class, l);
  cJSON_AddItemToObject(samples, link_class, s);
  return CERR_OK;
nomem:
  cJSON_Delete(l);
  cJSON_Delete(s);
  return NOMEM(e);
}
