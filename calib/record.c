/* record: measurements and fits into the profile tree. */
#include "record.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemmcost.h"
#include "profile.h"
#include "profilew.h"
#include "uncert.h"

#define NOMEM(e) err_set(e, ERR_NOMEM, "out of memory")

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

/* Appends every size of the sweep, with its per-iteration times, to the array `sizes`. 0 when out
 * of memory. */
static int sizes_json(cJSON *sizes, const commbench_cfg *cfg, const commbench_result *res) {
  for (size_t k = 0; k < res->nrows; k++) {
    const commbench_row *r = &res->rows[k];
    cJSON *o = cJSON_CreateObject();
    if (!o) return 0;
    cJSON_AddItemToArray(sizes, o);
    cJSON *t = cJSON_CreateDoubleArray(r->samples_s, cfg->iters);
    if (!t) return 0;
    cJSON_AddItemToObject(o, "times_s", t);
    if (!cJSON_AddNumberToObject(o, "bytes", (double)r->bytes) ||
        !cJSON_AddNumberToObject(o, "mean_s", r->mean_s) ||
        !cJSON_AddNumberToObject(o, "median_s", r->median_s) ||
        !cJSON_AddNumberToObject(o, "min_s", r->min_s) || !cJSON_AddNumberToObject(o, "max_s", r->max_s) ||
        !cJSON_AddNumberToObject(o, "algbw_Bps", r->algbw_GBps * 1e9) ||
        !cJSON_AddNumberToObject(o, "busbw_Bps", r->busbw_GBps * 1e9) ||
        !(r->wrong >= 0 ? cJSON_AddNumberToObject(o, "wrong", (double)r->wrong)
                        : cJSON_AddNullToObject(o, "wrong")))
      return 0;
  }
  return 1;
}

/* uncertainty.comm.links.<class>.<field> (docs/profile.md, "Uncertainty"), measured: the regime's
 * rms relative residual (how well the model fits) and the median over its sizes of the relative
 * standard deviation of the timed iterations (how much a run varies), added in quadrature. Left
 * out when both are 0 (nothing to say). */
static int record_measured(cJSON *doc, const char *link_class, const char *field, const fit_regime *g,
                           const commbench_cfg *cfg, const commbench_result *res, err_t *e) {
  double cv[res->nrows], spread = 0;
  size_t n = 0;
  for (size_t k = g->first; k < g->first + g->count && k < res->nrows && cfg->iters >= 2; k++) {
    double m = gsl_stats_mean(res->rows[k].samples_s, 1, (size_t)cfg->iters);
    if (m > 0) cv[n++] = gsl_stats_sd_m(res->rows[k].samples_s, 1, (size_t)cfg->iters, m) / m;
  }
  if (n) {
    gsl_sort(cv, 1, n);
    spread = gsl_stats_median_from_sorted_data(cv, 1, n);
  }
  double sd = fmin(hypot(g->rms_rel, spread), UNCERT_MAX_REL_SD);
  if (!(sd > 0)) return ERR_OK;
  char path[160], why[300];
  snprintf(path, sizeof path, "comm.links.%.60s.%s", link_class, field);
  snprintf(why, sizeof why,
           "ddpcalib comm: rms relative residual %.3g of the ring fit's regime (%zu sizes) and median relative "
           "spread %.3g of %d timed iterations per size, in quadrature",
           g->rms_rel, g->count, spread, cfg->iters);
  return uncert_set(doc, path, sd, UNCERT_MEASURED, why, e);
}

int record_comm(cJSON *doc, const char *link_class, const commbench_backend *b,
                const commbench_cfg *cfg, const commbench_result *res, const fit_ring_result *fit,
                double link_units, const char *units_from, err_t *e) {
  if (!(link_units >= 1) || !isfinite(link_units))
    return err_set(e, ERR_USAGE, "link units must be >= 1, got %g", link_units);
  cJSON *links = profilew_obj(profilew_obj(doc, "comm"), "links");
  cJSON *samples = profilew_obj(profilew_obj(doc, "samples"), "comm");
  if (!links || !samples) return NOMEM(e);
  cJSON *l = cJSON_CreateObject(), *s = cJSON_CreateObject();
  if (!l || !s) goto nomem;
  char src[1024];
  int len = snprintf(src, sizeof src,
                     "ddpcalib comm --backend %s: %d ranks on %d host(s), float sum all-reduce %zu..%zu B, "
                     "ring model fitted per size regime (docs/calib.md)",
                     b->name, b->nranks, b->nhosts, res->rows[0].bytes, res->rows[res->nrows - 1].bytes);
  if (units_from && len > 0 && (size_t)len < sizeof src)
    snprintf(src + len, sizeof src - (size_t)len,
             "; bw_Bps is one link's: the ring's %.4g B/s over the %g links the ring's channels span (%s)", fit->bw_Bps,
             link_units, units_from);
  cJSON *f, *regs;
  if (!cJSON_AddNumberToObject(l, "lat_s", fit->lat_s) || !cJSON_AddNumberToObject(l, "bw_Bps", fit->bw_Bps / link_units) ||
      (units_from && (!cJSON_AddNumberToObject(l, "ring_bw_Bps", fit->bw_Bps) ||
                      !cJSON_AddNumberToObject(l, "link_units", link_units))) ||
      !cJSON_AddStringToObject(l, "source", src) || !cJSON_AddStringToObject(l, "backend", b->name) ||
      /* MPI or gloo between CPU processes: the cores that compute also move and reduce the data. */
      !cJSON_AddBoolToObject(l, "shares_compute", strcmp(b->name, "mpi") == 0 || strcmp(b->name, "gloo") == 0) ||
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
  if (!sizes_json(sizes, cfg, res)) goto nomem;
  if (cJSON_GetObjectItemCaseSensitive(links, link_class)) cJSON_DeleteItemFromObjectCaseSensitive(links, link_class);
  if (cJSON_GetObjectItemCaseSensitive(samples, link_class))
    cJSON_DeleteItemFromObjectCaseSensitive(samples, link_class);
  cJSON_AddItemToObject(links, link_class, l);
  cJSON_AddItemToObject(samples, link_class, s);
  /* The bandwidth comes from the largest-size regime, the latency from the smallest (fit.h). */
  int rc = fit->nregimes ? record_measured(doc, link_class, "bw_Bps", &fit->regime[fit->nregimes - 1], cfg, res, e) : ERR_OK;
  if (!rc && fit->nregimes) rc = record_measured(doc, link_class, "lat_s", &fit->regime[0], cfg, res, e);
  return rc;
nomem:
  cJSON_Delete(l);
  cJSON_Delete(s);
  return NOMEM(e);
}

/* comm.nccl.<algo>.<proto> of one fitted combination: what ddpsim reads and how it was got. */
static cJSON *combo_json(const nccltune_combo *c) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = cJSON_AddNumberToObject(o, "base_lat_s", c->base_lat_s) &&
           cJSON_AddNumberToObject(o, "bw_factor", c->bw_factor) &&
           cJSON_AddNumberToObject(o, "c0_s", c->c0_s) && cJSON_AddNumberToObject(o, "c1_s_per_B", c->c1_s_per_B) &&
           cJSON_AddNumberToObject(o, "hop_terms_s", c->hops_s) &&
           cJSON_AddNumberToObject(o, "min_bytes", c->min_bytes) &&
           cJSON_AddNumberToObject(o, "max_bytes", c->max_bytes) &&
           cJSON_AddNumberToObject(o, "points", (double)c->points) &&
           cJSON_AddNumberToObject(o, "regimes", (double)c->nregimes) &&
           cJSON_AddNumberToObject(o, "rms_rel_resid", c->rms_rel) &&
           cJSON_AddNumberToObject(o, "max_rel_resid", c->max_rel);
  if (ok && c->base_clamped)
    ok = cJSON_AddNumberToObject(o, "base_lat_fit_s", c->base_fit_s) &&
         cJSON_AddStringToObject(o, "base_note",
                                 "the assumed hop latencies exceed the measured latency c0: base recorded as 0, "
                                 "so the model overestimates this combination's latency by -base_lat_fit_s");
  if (ok && c->bw_clamped)
    ok = cJSON_AddNumberToObject(o, "bw_factor_fit", c->bw_factor_fit) &&
         cJSON_AddStringToObject(o, "bw_note",
                                 "faster than ring/Simple's bandwidth: recorded as 1 (ddpsim's upper bound), "
                                 "so the model underestimates this combination's bandwidth");
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

int record_nccl(cJSON *doc, const char *link_class, const char *hops_source, const nccltune_setup *s,
                const nccltune_result *r, const commbench_cfg *cfg,
                const commbench_result res[NCCL_NALGO][NCCL_NPROTO], err_t *e) {
  cJSON *comm = profilew_obj(doc, "comm");
  cJSON *link = cJSON_GetObjectItemCaseSensitive(profilew_obj(comm, "links"), link_class);
  if (!comm) return NOMEM(e);
  if (!cJSON_IsObject(link))
    return err_set(e, ERR_RUNTIME, "internal: record_nccl: comm.links.%s must be recorded first", link_class);
  cJSON *nccl = cJSON_CreateObject(), *hops = cJSON_CreateObject(), *smp = NULL;
  if (!nccl || !hops) goto nomem;

  /* The hops written for this class are the ones the fit assumed for its edges: between nodes
   * when the sweep crossed nodes (the class is then the network), inside a node otherwise. All six
   * combinations get one, so a later merge that enables another combination still finds it. */
  char refused[256] = "";
  double minb = 0, maxb = 0;
  for (int a = 0; a < NCCL_NALGO; a++) {
    if (!nccl_algo_swept(a, NCCL_PROTO_SIMPLE)) continue; /* the sweeps measure none of it (each swept algorithm runs Simple) */
    cJSON *ao = cJSON_AddObjectToObject(nccl, nccl_algo_name(a)), *ho = cJSON_AddObjectToObject(hops, nccl_algo_name(a));
    if (!ao || !ho) goto nomem;
    for (int q = 0; q < NCCL_NPROTO; q++) {
      if (!nccl_algo_swept(a, q)) continue;
      const nccltune_combo *c = &r->c[a][q];
      double hop = s->nodes > 1 ? s->hop_net_s[a][q] : s->hop_intra_s[a][q];
      if (!cJSON_AddNumberToObject(ho, nccl_proto_name(q), hop)) goto nomem;
      if (!c->enabled) {
        size_t l = strlen(refused);
        snprintf(refused + l, sizeof refused - l, "%s%s/%s", l ? ", " : "", nccl_algo_name(a),
                 nccl_proto_name(q));
        continue;
      }
      if (minb == 0 || c->min_bytes < minb) minb = c->min_bytes;
      if (c->max_bytes > maxb) maxb = c->max_bytes;
      cJSON *co = combo_json(c);
      if (!co) goto nomem;
      cJSON_AddItemToObject(ao, nccl_proto_name(q), co);
    }
    if (!ao->child) cJSON_DeleteItemFromObjectCaseSensitive(nccl, nccl_algo_name(a));
  }
  char src[1024];
  snprintf(src, sizeof src,
           "measured by ddpcalib comm --nccl-tuning (NCCL_ALGO and NCCL_PROTO forced per combination): "
           "%d ranks on %d node(s), %d per node, float sum all-reduce %.0f..%.0f B. Per combination "
           "t = c0 + c1 S by weighted least squares (1/t^2) per size regime, c0 of the smallest sizes, c1 of "
           "the largest; base_lat_s = c0 - hop terms (hop_lat_s assumed, see comm.links.%s.hop_lat_s.source); "
           "bw_factor = edge bytes per byte / (c1 bw) with bw = %.4g B/s, ring/Simple's. "
           "Disabled (refused by NCCL): %s. docs/calib.md",
           s->nranks, s->nodes, s->gpus_per_node, minb, maxb, link_class, s->bw_Bps, *refused ? refused : "none");
  if (!cJSON_AddStringToObject(nccl, "source", src) || !cJSON_AddStringToObject(hops, "source", hops_source ? hops_source : ""))
    goto nomem;

  if (res && cfg) {
    cJSON *combos;
    smp = cJSON_CreateObject();
    if (!smp || !cJSON_AddNumberToObject(smp, "nranks", s->nranks) || !cJSON_AddNumberToObject(smp, "nodes", s->nodes) ||
        !cJSON_AddNumberToObject(smp, "iters", cfg->iters) || !cJSON_AddNumberToObject(smp, "warmups", cfg->warmups) ||
        !cJSON_AddStringToObject(smp, "time", "per iteration, max over processes, seconds") ||
        !(combos = cJSON_AddObjectToObject(smp, "combinations")))
      goto nomem;
    for (int a = 0; a < NCCL_NALGO; a++)
      for (int q = 0; q < NCCL_NPROTO; q++) {
        if (!nccl_algo_swept(a, q)) continue;
        char name[32];
        snprintf(name, sizeof name, "%s/%s", nccl_algo_name(a), nccl_proto_name(q));
        cJSON *co = cJSON_AddObjectToObject(combos, name), *sizes;
        if (!co || !cJSON_AddBoolToObject(co, "refused", !r->c[a][q].enabled) ||
            !(sizes = cJSON_AddArrayToObject(co, "sizes")))
          goto nomem;
        if (r->c[a][q].enabled && !sizes_json(sizes, cfg, &res[a][q])) goto nomem;
      }
  }

  if (cJSON_GetObjectItemCaseSensitive(comm, "nccl")) cJSON_DeleteItemFromObjectCaseSensitive(comm, "nccl");
  cJSON_AddItemToObject(comm, "nccl", nccl);
  if (cJSON_GetObjectItemCaseSensitive(link, "hop_lat_s")) cJSON_DeleteItemFromObjectCaseSensitive(link, "hop_lat_s");
  cJSON_AddItemToObject(link, "hop_lat_s", hops);
  if (smp) {
    cJSON *samples = profilew_obj(profilew_obj(doc, "samples"), "nccl");
    if (!samples) {
      cJSON_Delete(smp);
      return NOMEM(e);
    }
    if (cJSON_GetObjectItemCaseSensitive(samples, link_class)) cJSON_DeleteItemFromObjectCaseSensitive(samples, link_class);
    cJSON_AddItemToObject(samples, link_class, smp);
  }
  return ERR_OK;
nomem:
  cJSON_Delete(nccl);
  cJSON_Delete(hops);
  cJSON_Delete(smp);
  return NOMEM(e);
}

/* Leave-one-out error of the table rule: each interior point predicted from the others. */
static void table_loo(const double *size, const double *t, size_t n, double *rms, double *max) {
  double s = 0, m = 0;
  size_t used = 0;
  double *xs = malloc(n * sizeof *xs), *ts = malloc(n * sizeof *ts);
  double *bs = malloc(n * sizeof *bs), *bt = malloc(n * sizeof *bt);
  if (xs && ts && bs && bt) {
    for (size_t i = 0; i < n; i++) {
      size_t k = 0;
      for (size_t j = 0; j < n; j++)
        if (size[j] != size[i]) xs[k] = size[j], ts[k++] = t[j];
      if (k < 2) continue;
      fit_table tab = {.size = bs, .time_s = bt};
      if (fit_table_build(xs, ts, k, &tab, NULL)) continue;
      int ex;
      double p = fit_table_time(&tab, size[i], 0, &ex);
      if (ex) continue;
      double r = fabs(p - t[i]) / t[i];
      s += r * r;
      if (r > m) m = r;
      used++;
    }
  }
  *rms = used ? sqrt(s / (double)used) : 0;
  *max = m;
  free(xs), free(ts), free(bs), free(bt);
}

/* Leave-one-out error of ddpsim's shape-aware GEMM rule (sim/gemmcost.h): each distinct shape
 * inside the others' range predicted from them and the fitted roofline. */
static void gemm_loo(const double *m, const double *n, const double *k, const double *f, const double *b,
                     const double *t, size_t np, const fit_roofline *fit, double *rms, double *max) {
  double s = 0, mx = 0;
  size_t used = 0;
  double *buf = malloc(5 * (np ? np : 1) * sizeof *buf);
  for (size_t i = 0; buf && i < np; i++) {
    size_t q = 0;
    for (size_t j = 0; j < np; j++)
      if (j != i) {
        buf[q] = m[j], buf[np + q] = n[j], buf[2 * np + q] = k[j], buf[3 * np + q] = t[j];
        buf[4 * np + q++] = fit_roofline_time(fit, f[j], b[j]);
      }
    gemmcost_table tab;
    int ex = 1;
    double p = 0;
    if (!gemmcost_build(&tab, buf, buf + np, buf + 2 * np, buf + 3 * np, buf + 4 * np, (int)q, NULL))
      p = gemmcost_time(&tab, m[i], n[i], k[i], fit_roofline_time(fit, f[i], b[i]), &ex);
    gemmcost_free(&tab);
    if (ex) continue;
    double r = fabs(p - t[i]) / t[i];
    s += r * r;
    if (r > mx) mx = r;
    used++;
  }
  *rms = used ? sqrt(s / (double)used) : 0;
  *max = mx;
  free(buf);
}

static cJSON *meas_json(const computebench_meas *m) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON *t = cJSON_CreateDoubleArray(m->samples_s, (int)m->nsamples);
  if (!t) {
    cJSON_Delete(o);
    return NULL;
  }
  int ok = cJSON_AddStringToObject(o, "op", m->name) != NULL;
  if (m->H) ok = ok && cJSON_AddNumberToObject(o, "H", m->H) && cJSON_AddNumberToObject(o, "B", m->B) &&
                 cJSON_AddNumberToObject(o, "T", m->T);
  if (m->m) ok = ok && cJSON_AddNumberToObject(o, "m", (double)m->m) &&
                 cJSON_AddNumberToObject(o, "n", (double)m->n) && cJSON_AddNumberToObject(o, "k", (double)m->k);
  if (m->flops > 0) ok = ok && cJSON_AddNumberToObject(o, "flops", m->flops);
  if (m->bytes > 0) ok = ok && cJSON_AddNumberToObject(o, "bytes", m->bytes);
  ok = ok && cJSON_AddNumberToObject(o, "mean_s", m->mean_s) &&
       cJSON_AddNumberToObject(o, "median_s", m->median_s) && cJSON_AddNumberToObject(o, "min_s", m->min_s) &&
       cJSON_AddNumberToObject(o, "max_s", m->max_s) && cJSON_AddNumberToObject(o, "stdev_s", m->stdev_s);
  cJSON_AddItemToObject(o, "times_s", t);
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static cJSON *roofline_json(const fit_roofline *f, int gemm, const char *src) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = cJSON_AddStringToObject(o, "model", "roofline") && cJSON_AddNumberToObject(o, "launch_s", f->launch_s);
  if (gemm)
    ok = ok && cJSON_AddNumberToObject(o, "peak_flops", f->rate_flops) &&
         cJSON_AddNumberToObject(o, "efficiency", 1.0) &&
         cJSON_AddNumberToObject(o, "compute_bound_points", (double)f->compute_bound);
  ok = ok && cJSON_AddNumberToObject(o, "mem_bw_Bps", f->mem_bw_Bps) &&
       cJSON_AddNumberToObject(o, "mem_efficiency", 1.0) &&
       cJSON_AddNumberToObject(o, "rms_rel_resid", f->rms_rel) &&
       cJSON_AddNumberToObject(o, "max_rel_resid", f->max_rel) && cJSON_AddStringToObject(o, "source", src);
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* compute.jitter (docs/profile.md): every timed whole iteration of the real mLSTM divided by the
 * mean of its shape's runs; ddpsim draws from these ratios to make GPUs straggle. Written only when
 * some shape has at least two timed iterations and every ratio is one the schema takes; otherwise
 * fit->jitter_left_out says why. */
static int record_jitter(cJSON *compute, const computebench_result *res, record_compute_fit *fit, err_t *e) {
  size_t total = 0;
  for (size_t i = 0; i < res->n; i++)
    if (res->m[i].kind == COMPUTEBENCH_MLSTM && strcmp(res->m[i].name, "iteration") == 0 && res->m[i].nsamples >= 2)
      total += res->m[i].nsamples;
  cJSON_DeleteItemFromObjectCaseSensitive(compute, "jitter");
  if (total == 0) return ERR_OK;
  double *ratios = malloc(total * sizeof *ratios);
  if (!ratios) return NOMEM(e);
  size_t k = 0;
  for (size_t i = 0; i < res->n; i++) {
    const computebench_meas *m = &res->m[i];
    if (m->kind != COMPUTEBENCH_MLSTM || strcmp(m->name, "iteration") != 0 || m->nsamples < 2 || !(m->mean_s > 0)) continue;
    for (size_t j = 0; j < m->nsamples; j++) {
      double r = m->samples_s[j] / m->mean_s;
      if (!(r >= PROFILE_JITTER_RATIO_MIN && r <= PROFILE_JITTER_RATIO_MAX)) {
        snprintf(fit->jitter_left_out, sizeof fit->jitter_left_out,
                 "compute.jitter left out: timed iteration %zu of H=%d B=%d T=%d took %.3g us, %.3g times its "
                 "shape's mean (%.3g us), outside the %g .. %g a profile takes; the machine disturbed the "
                 "timing (the times stay in samples): rerun on a quiet machine, with more -n, or give "
                 "ddpsim --jitter-cv",
                 j + 1, m->H, m->B, m->T, m->samples_s[j] * 1e6, r, m->mean_s * 1e6, PROFILE_JITTER_RATIO_MIN,
                 PROFILE_JITTER_RATIO_MAX);
        free(ratios);
        return ERR_OK;
      }
      ratios[k++] = r;
    }
  }
  if (k == 0) {
    free(ratios);
    return ERR_OK;
  }
  cJSON *j = cJSON_CreateObject();
  cJSON *arr = cJSON_CreateDoubleArray(ratios, (int)k);
  free(ratios);
  if (!j || !arr || !cJSON_AddStringToObject(j, "model", "empirical") ||
      !cJSON_AddStringToObject(j, "source",
                               "ddpcalib compute: each timed whole iteration of the real mLSTM / the mean of its shape's runs")) {
    cJSON_Delete(j);
    cJSON_Delete(arr);
    return NOMEM(e);
  }
  cJSON_AddItemToObject(j, "ratios", arr);
  cJSON_AddItemToObject(compute, "jitter", j);
  fit->jitter_ratios = k;
  return ERR_OK;
}

/* The profile's "device" object, replaced whole by what the device reports (calib/devinfo.h): its
 * name (a CPU's /proc/cpuinfo model name, cudaDeviceProp.name, as the exporter's --time names it:
 * ddpsim prices a model's measured op times only on a profile of the same device, sim/cost.h),
 * memory_bytes, sm_count and hbm_Bps where known (absent where 0), and source naming each call. */
static int record_device(cJSON *doc, const devinfo *d, err_t *e) {
  cJSON_DeleteItemFromObjectCaseSensitive(doc, "device");
  cJSON *dev = profilew_obj(doc, "device");
  if (!dev) return NOMEM(e);
  int rc = profilew_str(dev, "name", d->name, e);
  /* Its kind: what ddpsim's gloo backend needs to know (a CPU's tensors are in host memory, nothing
   * is staged; docs/simulation.md, "Communication backends"). */
  if (!rc) rc = profilew_str(dev, "kind", d->backend == DEVINFO_CUDA ? "gpu" : "cpu", e);
  if (!rc && d->memory_bytes > 0) rc = profilew_num(dev, "memory_bytes", d->memory_bytes, e);
  if (!rc && d->sm_count > 0) rc = profilew_num(dev, "sm_count", d->sm_count, e);
  if (!rc && d->hbm_Bps > 0) rc = profilew_num(dev, "hbm_Bps", d->hbm_Bps, e);
  if (!rc) rc = profilew_str(dev, "source", d->source, e);
  return rc;
}

int record_compute(cJSON *doc, const computebench_cfg *cfg, const computebench_result *res,
                   record_compute_fit *fit, err_t *e) {
  const char *prec = computebench_precisions[cfg->precision];
  memset(fit, 0, sizeof *fit);
  size_t n = res->n;
  /* Distinct gemm shapes (averaged) and copy sizes. */
  double *gm = calloc(n, sizeof *gm), *gn = calloc(n, sizeof *gn), *gk = calloc(n, sizeof *gk);
  double *gt = calloc(n, sizeof *gt), *gf = calloc(n, sizeof *gf), *gb = calloc(n, sizeof *gb);
  double *eb = calloc(n, sizeof *eb), *et = calloc(n, sizeof *et);
  int *cnt = calloc(n, sizeof *cnt), *of_model = calloc(n, sizeof *of_model);
  cJSON *prec_obj = NULL, *samp = NULL;
  int rc = ERR_OK;
  if (!gm || !gn || !gk || !gt || !gf || !gb || !eb || !et || !cnt || !of_model) {
    rc = NOMEM(e);
    goto done;
  }
  size_t ng = 0, ne = 0;
  for (size_t i = 0; i < n; i++) {
    const computebench_meas *m = &res->m[i];
    if (m->kind == COMPUTEBENCH_EWISE) {
      eb[ne] = m->bytes;
      et[ne++] = m->median_s;
    } else if (m->kind == COMPUTEBENCH_GEMM) {
      size_t j = 0;
      while (j < ng && !(gm[j] == m->m && gn[j] == m->n && gk[j] == m->k)) j++;
      if (j == ng) {
        gm[j] = (double)m->m, gn[j] = (double)m->n, gk[j] = (double)m->k;
        gf[j] = m->flops, gb[j] = m->bytes, ng++;
      }
      gt[j] += m->median_s;
      cnt[j]++;
      of_model[j] |= strcmp(m->name, "model") == 0;
    }
  }
  for (size_t j = 0; j < ng; j++) gt[j] /= cnt[j];
  if (ng < 2 || ne < 2) {
    rc = err_set(e, ERR_RUNTIME, "compute: %zu GEMM shapes and %zu copy sizes; need 2 of each to fit", ng, ne);
    goto done;
  }
  if ((rc = fit_roofline_ewise(eb, et, ne, &fit->ewise, e))) goto done;
  if ((rc = fit_roofline_gemm(gf, gb, gt, ng, fit->ewise.mem_bw_Bps, &fit->gemm, e))) goto done;
  fit->gemm_points = ng;
  fit->ewise_points = ne;
  gemm_loo(gm, gn, gk, gf, gb, gt, ng, &fit->gemm, &fit->gemm_loo_rms, &fit->gemm_loo_max);
  table_loo(eb, et, ne, &fit->ewise_loo_rms, &fit->ewise_loo_max);

  prec_obj = cJSON_CreateObject();
  samp = cJSON_CreateObject();
  if (!prec_obj || !samp) goto nomem;
  for (int kind = 0; kind < 2; kind++) {
    int gemm = kind == 0;
    cJSON *k = cJSON_AddObjectToObject(prec_obj, gemm ? "gemm" : "ewise"), *pts;
    if (!k || !cJSON_AddStringToObject(k, "model", "table") || !(pts = cJSON_AddArrayToObject(k, "points")))
      goto nomem;
    size_t np = gemm ? ng : ne;
    for (size_t j = 0; j < np; j++) {
      cJSON *p = cJSON_CreateObject();
      if (!p) goto nomem;
      cJSON_AddItemToArray(pts, p);
      int ok = gemm ? cJSON_AddNumberToObject(p, "m", gm[j]) && cJSON_AddNumberToObject(p, "n", gn[j]) &&
                          cJSON_AddNumberToObject(p, "k", gk[j])
                    : cJSON_AddNumberToObject(p, "bytes", eb[j]) != NULL;
      if (!ok || !cJSON_AddNumberToObject(p, "time_s", gemm ? gt[j] : et[j])) goto nomem;
      if (gemm && of_model[j] && !cJSON_AddStringToObject(p, "model", cfg->model_name)) goto nomem;
    }
    if (gemm && cfg->nmodel_shapes) {
      /* Which shapes --model measured: each such point carries "model", and this says for what. */
      cJSON *ms = cJSON_AddObjectToObject(k, "model_shapes");
      if (!ms || !cJSON_AddStringToObject(ms, "model", cfg->model_name) ||
          !cJSON_AddNumberToObject(ms, "batch", (double)cfg->model_batch) ||
          !cJSON_AddNumberToObject(ms, "shapes", (double)cfg->nmodel_shapes) ||
          !cJSON_AddStringToObject(ms, "source", "ddpcalib compute --model: every gemm and conv op's (implicit) GEMM "
                                                 "of the model at this batch; the points marked \"model\""))
        goto nomem;
    }
    char src[512];
    snprintf(src, sizeof src,
             "ddpcalib compute --backend %s: %s on %s; median of %d timed runs per point; "
             "fallback fitted by weighted least squares (docs/calib.md)",
             cfg->backend == COMPUTEBENCH_CUDA ? "cuda" : "cpu",
             gemm ? (cfg->backend == COMPUTEBENCH_CUDA
                         ? (cfg->precision != COMPUTEBENCH_FP32 ? "cuBLAS GEMM, random operands"
                            : cfg->tf32                          ? "cuBLAS GEMM (TF32 tensor cores), random operands"
                                                                 : "cuBLAS GEMM (strict fp32), random operands")
                         : "cblas_sgemm")
                  : (cfg->backend == COMPUTEBENCH_CUDA ? "cudaMemcpy device to device" : "memcpy"),
             res->dev.name, cfg->iters);
    cJSON *fb = roofline_json(gemm ? &fit->gemm : &fit->ewise, gemm, "fitted to the points above");
    if (!fb) goto nomem;
    cJSON_AddItemToObject(k, "fallback", fb);
    /* What an fp32 GEMM table measured on a card with TF32 is: TF32 tensor cores or strict fp32
     * (docs/calib.md); a card without TF32 has only the one math, and nothing is written. */
    if (gemm && cfg->backend == COMPUTEBENCH_CUDA && cfg->precision == COMPUTEBENCH_FP32 && res->dev.tf32 &&
        !cJSON_AddStringToObject(k, "math", cfg->tf32 ? "tf32" : "strict"))
      goto nomem;
    if (!cJSON_AddStringToObject(k, "source", src) ||
        !cJSON_AddNumberToObject(k, "loo_rms_rel_resid", gemm ? fit->gemm_loo_rms : fit->ewise_loo_rms) ||
        !cJSON_AddNumberToObject(k, "loo_max_rel_resid", gemm ? fit->gemm_loo_max : fit->ewise_loo_max))
      goto nomem;
    if (gemm) {
      double lo = INFINITY, hi = 0;
      for (size_t j = 0; j < ng; j++) lo = fmin(lo, gf[j]), hi = fmax(hi, gf[j]);
      if (!cJSON_AddNumberToObject(k, "min_flops", lo) || !cJSON_AddNumberToObject(k, "max_flops", hi)) goto nomem;
    } else {
      double lo = INFINITY, hi = 0;
      for (size_t j = 0; j < ne; j++) lo = fmin(lo, eb[j]), hi = fmax(hi, eb[j]);
      if (!cJSON_AddNumberToObject(k, "min_bytes", lo) || !cJSON_AddNumberToObject(k, "max_bytes", hi)) goto nomem;
    }
  }
  cJSON *ml, *gs, *es;
  if (!cJSON_AddStringToObject(samp, "backend", cfg->backend == COMPUTEBENCH_CUDA ? "cuda" : "cpu") ||
      !cJSON_AddStringToObject(samp, "device", res->dev.name) ||
      !cJSON_AddNumberToObject(samp, "iters", cfg->iters) ||
      !cJSON_AddNumberToObject(samp, "warmups", cfg->warmups) ||
      !cJSON_AddStringToObject(samp, "time",
                               "seconds per run; fwd_step and bwd_step: one sample per step") ||
      !(ml = cJSON_AddArrayToObject(samp, "mlstm")) || !(gs = cJSON_AddArrayToObject(samp, "gemm")) ||
      !(es = cJSON_AddArrayToObject(samp, "ewise")))
    goto nomem;
  for (size_t i = 0; i < n; i++) {
    const computebench_meas *m = &res->m[i];
    cJSON *o = meas_json(m);
    if (!o) goto nomem;
    cJSON_AddItemToArray(m->kind == COMPUTEBENCH_MLSTM ? ml : m->kind == COMPUTEBENCH_GEMM ? gs : es, o);
  }
  cJSON *compute = profilew_obj(doc, "compute"), *sc = profilew_obj(profilew_obj(doc, "samples"), "compute");
  if (!compute || !sc) goto nomem;
  if ((rc = record_jitter(compute, res, fit, e))) goto done;
  if ((rc = record_device(doc, &res->dev, e))) goto done;
  cJSON_DeleteItemFromObjectCaseSensitive(compute, prec);
  cJSON_DeleteItemFromObjectCaseSensitive(sc, prec);
  cJSON_AddItemToObject(compute, prec, prec_obj);
  cJSON_AddItemToObject(sc, prec, samp);
  prec_obj = samp = NULL;
  goto done;
nomem:
  rc = NOMEM(e);
done:
  cJSON_Delete(prec_obj);
  cJSON_Delete(samp);
  free(gm), free(gn), free(gk), free(gt), free(gf), free(gb), free(eb), free(et), free(cnt), free(of_model);
  return rc;
}
