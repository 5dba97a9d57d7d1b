/* recommend: a bucket cap robust to the profile's uncertainty, and the knobs that help (recommend.h). */
#include "recommend.h"

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "reducer.h"
#include "strbuf.h"
#include "uncert.h"

#define TIE 1e-9 /* relative: times this close are the same */

/* The quantile q of v[0..n-1] (sorted in place). */
static double quantile(double *v, int n, double q) {
  gsl_sort(v, 1, (size_t)n);
  return gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, q);
}

/* Gains ref[s] / t[s] - 1 over draws s = 1..S (s = 0: nominal); with S == 0 the nominal alone. */
static void gain_of(const double *ref, const double *t, int S, double level, recommend_gain *g) {
  g->nominal = ref[0] / t[0] - 1;
  if (S == 0) {
    g->mean = g->lo = g->hi = g->nominal;
    g->wins = g->nominal > TIE;
    return;
  }
  double v[S];
  int wins = 0;
  for (int s = 0; s < S; s++) {
    v[s] = ref[s + 1] / t[s + 1] - 1;
    wins += v[s] > TIE;
  }
  g->mean = gsl_stats_mean(v, 1, (size_t)S);
  g->wins = (double)wins / S;
  g->lo = quantile(v, S, (1 - level) / 2);
  g->hi = quantile(v, S, (1 + level) / 2);
}

/* The nominal profile and the draws: profile_draws_build (sim/profile.h). */
typedef profile_draws draws_t;

/* Simulates every variant cfg[v] (v < nv) with every profile of d: t[s * nv + v]. */
static int simulate(const recommend_opts *o, const draws_t *d, const sim_config *cfg, int nv, double *t, int *runs,
                    sweep_row *first, err_t *e) {
  int n = d->n * nv;
  sim_config *c = malloc((size_t)n * sizeof *c);
  sweep_row *rows = malloc((size_t)n * sizeof *rows);
  int rc = ERR_OK;
  if (!c || !rows) rc = err_set(e, ERR_NOMEM, "out of memory");
  for (int s = 0; s < d->n && !rc; s++)
    for (int v = 0; v < nv; v++) {
      c[s * nv + v] = cfg[v];
      c[s * nv + v].profile = d->p[s];
    }
  sweep_opts so = o->run;
  so.what = SWEEP_ITERATION;
  if (!rc) rc = sweep_run(c, n, &so, rows, e);
  for (int i = 0; i < n && !rc; i++) t[i] = rows[i].value[FIELD_ITERATION_S];
  if (!rc && first) *first = rows[0];
  *runs += rc ? 0 : n;
  free(c);
  free(rows);
  return rc;
}

/* The other knobs, as variants of the recommended configuration. */
typedef struct {
  const char *knob;
  char setting[96], note[256];
  int applies;
  sim_config c;
} variant_t;

/* A new variant of rec for knob (its configuration rec's until the caller changes it). */
static variant_t *variant(variant_t *v, int *n, const char *knob, const sim_config *rec) {
  variant_t *x = &v[(*n)++];
  memset(x, 0, sizeof *x);
  x->knob = knob;
  x->c = *rec;
  return x;
}

/* Whether x's release has its knobs (reducer_check, sim/reducer.h): applies, else the note says why. */
static void release_check(variant_t *x) {
  reducer_knobs k;
  err_t e;
  sim_reducer_knobs(&x->c, &k);
  x->applies = reducer_check(&k, x->c.bucket_view, x->c.comm_hook, &e) == ERR_OK;
  if (!x->applies) snprintf(x->note, sizeof x->note, "%.250s", e.msg);
}

/* FSDP's knobs (docs/fsdp.md), as variants of its configuration: reshard_after_forward the other way,
 * HSDP with a replica per node, explicit forward prefetch of the next unit, and DDP itself. */
static int fsdp_variants(const sim_config *rec, variant_t *v) {
  int n = 0, gpn = rec->gpus_per_node > 0 ? rec->gpus_per_node : rec->topo->gpus_per_node;
  variant_t *x = variant(v, &n, "reshard_after_forward", rec);
  x->c.fsdp_reshard = !rec->fsdp_reshard;
  x->applies = 1;
  snprintf(x->setting, sizeof x->setting, "fully_shard(unit, reshard_after_forward=%s)", x->c.fsdp_reshard ? "True" : "False");
  snprintf(x->note, sizeof x->note, x->c.fsdp_reshard ? "frees each unit's parameters after forward: less memory, an all-gather more per unit"
                                                      : "keeps every unit's parameters from forward to backward: more memory per GPU");
  x = variant(v, &n, "hsdp", rec);
  x->c.fsdp_replicate = rec->nodes;
  snprintf(x->setting, sizeof x->setting, "a (%d, %d) mesh: shard within each node, replicate across nodes", rec->nodes, gpn);
  x->applies = rec->fsdp_replicate <= 1 && rec->nodes > 1 && gpn > 1;
  snprintf(x->note, sizeof x->note, "%s",
           !x->applies ? (rec->fsdp_replicate > 1 ? "already HSDP" : "needs several nodes of several GPUs")
                       : "each GPU holds a node's shard, not the job's: more memory per GPU");
  x = variant(v, &n, "forward_prefetch", rec);
  x->c.fsdp_forward_prefetch = rec->fsdp_forward_prefetch + 1;
  x->applies = 1;
  snprintf(x->setting, sizeof x->setting, "set_modules_to_forward_prefetch(the next %d unit(s))", x->c.fsdp_forward_prefetch);
  snprintf(x->note, sizeof x->note, "one more unit's parameters all-gathered ahead: more memory in forward");
  x = variant(v, &n, "framework", rec);
  x->c.framework = SIM_FRAMEWORK_DDP;
  x->c.fsdp_units = NULL;
  x->c.fsdp_reshard = 1;
  x->c.fsdp_replicate = x->c.fsdp_forward_prefetch = 0;
  x->c.fsdp_param_dtype = x->c.fsdp_reduce_dtype = -1;
  x->applies = 1;
  snprintf(x->setting, sizeof x->setting, "DistributedDataParallel (bucket_cap_mb 25)");
  snprintf(x->note, sizeof x->note, "every GPU keeps the whole model, its gradients and optimizer state: check it fits (predict)");
  return n;
}

static int variants(const sim_config *rec, double cap_mb, variant_t *v) {
  if (rec->framework == SIM_FRAMEWORK_FSDP) return fsdp_variants(rec, v);
  int n = 0;
  /* First bucket: a small one of its own lets the last layers' gradients go out early. */
  for (int i = 0; i < 2; i++) {
    double first = i == 0 ? 1 : 5;
    if (first >= cap_mb) continue;
    variant_t *x = variant(v, &n, "first_bucket_cap", rec);
    x->c.ncap_list = 2;
    x->c.cap_list_mb[0] = first;
    x->c.cap_list_mb[1] = cap_mb;
    snprintf(x->setting, sizeof x->setting, "bucket_cap_mb_list=[%g, %g]", first, cap_mb);
    release_check(x);
  }
  if (!rec->bucket_view) {
    variant_t *x = variant(v, &n, "gradient_as_bucket_view", rec);
    x->c.bucket_view = 1;
    snprintf(x->setting, sizeof x->setting, "gradient_as_bucket_view=True");
    release_check(x);
  }
  /* The hooks compress fp32 buckets (sim/plan.c): a gradient's own type, not the run's, decides
   * (autocast keeps fp32 parameters, so fp32 gradients, under an fp16 or bf16 run). */
  int prec = rec->precision >= 0 ? rec->precision : (int)rec->model->precision, fp32_grads = 0;
  for (int i = 0; i < rec->model->nparams && !fp32_grads; i++)
    fp32_grads = model_param_dtype(&rec->model->params[i], (model_dtype)prec) == MODEL_FP32;
  for (int h = SIM_HOOK_FP16; h <= SIM_HOOK_BF16 && rec->comm_hook == SIM_HOOK_NONE; h++) {
    variant_t *x = variant(v, &n, "comm_hook", rec);
    x->c.comm_hook = (sim_comm_hook)h;
    snprintf(x->setting, sizeof x->setting, "register_comm_hook(None, %s_compress_hook)", sim_comm_hook_name((sim_comm_hook)h));
    if (!fp32_grads) {
      snprintf(x->note, sizeof x->note, "the gradients are already 16-bit (%s): nothing to compress", model_dtype_name((model_dtype)prec));
      continue;
    }
    release_check(x);
    if (x->applies)
      snprintf(x->note, sizeof x->note, "gradients travel in %s: check the model still converges", sim_comm_hook_name((sim_comm_hook)h));
  }
  /* broadcast_buffers=False: no broadcast of rank 0's buffers (BatchNorm's running statistics)
   * before every forward (sim/plan.c); only where there are buffers and several ranks. */
  int gpn = rec->gpus_per_node > 0 ? rec->gpus_per_node : rec->topo->gpus_per_node;
  if (rec->mode == SIM_MODE_DDP && rec->broadcast_buffers && rec->model->buffer_bytes > 0 && rec->nodes * gpn > 1) {
    variant_t *x = variant(v, &n, "broadcast_buffers", rec);
    x->c.broadcast_buffers = 0;
    snprintf(x->setting, sizeof x->setting, "broadcast_buffers=False");
    release_check(x);
    if (x->applies)
      snprintf(x->note, sizeof x->note, "each rank keeps its own buffers (BatchNorm's running statistics are no longer "
               "rank 0's on every rank): check evaluation, or use SyncBatchNorm");
  }
  /* static_graph=True: the Reducer then knows the graph, so find_unused_parameters no longer keeps
   * the construction-time buckets from iteration 3 on (sim/reducer.c, rebuilds; reducer.cpp's
   * rebuild condition); without find_unused_parameters the steady state is the same (no change). */
  if (rec->mode == SIM_MODE_DDP && !rec->static_graph) {
    variant_t *x = variant(v, &n, "static_graph", rec);
    x->c.static_graph = 1;
    reducer_knobs k;
    sim_reducer_knobs(rec, &k);
    int v = k.version ? k.version : REDUCER_VERSION_LATEST; /* the argument from 1.11, the method before */
    snprintf(x->setting, sizeof x->setting, "%s", v >= 111 ? "DistributedDataParallel(..., static_graph=True)" : "ddp._set_static_graph()");
    release_check(x);
    if (x->applies)
      snprintf(x->note, sizeof x->note, "only where every iteration runs the same graph and uses the same parameters");
  }
  for (int kk = 2; kk <= 4; kk *= 2) {
    variant_t *x = variant(v, &n, "no_sync", rec);
    x->c.no_sync = rec->no_sync * kk;
    x->applies = 1;
    snprintf(x->setting, sizeof x->setting, "no_sync() for %d of every %d iterations", x->c.no_sync - 1, x->c.no_sync);
    snprintf(x->note, sizeof x->note, "gradient accumulation: %dx the samples per optimizer step, which changes training, "
             "not only its speed", kk);
  }
  return n;
}

/* Whether advice a ranks before b: applying before not, then the larger mean gain. */
static int advice_before(const recommend_advice *a, const recommend_advice *b) {
  if (a->applies != b->applies) return a->applies;
  return a->applies && a->gain.mean > b->gain.mean;
}

/* What the caps' times t[s * nc + c] say, and the knobs tried on the recommendation (times in tv). */
static int analyse(const recommend_opts *o, recommend_result *r, const draws_t *dd, const sim_config *cfg, const double *t,
                   double *tv, err_t *e) {
  int nc = r->ncaps, S = r->samples, rc = ERR_OK;
  const draws_t d = *dd;
  variant_t var[RECOMMEND_MAX_ADVICE];

  /* Regret per draw (the nominal profile's when there are none), its quantile per cap. */
  int s0 = S ? 1 : 0, ns = S ? S : 1;
  double reg[ns], col[d.n];
  for (int c = 0; c < nc; c++) {
    int fast = 0;
    r->nominal_s[c] = t[c];
    r->mean_s[c] = 0;
    r->regret_max[c] = 0;
    for (int s = s0; s < s0 + ns; s++) {
      double m = t[s * nc];
      for (int k = 1; k < nc; k++) m = fmin(m, t[s * nc + k]);
      reg[s - s0] = t[s * nc + c] / m - 1;
      fast += reg[s - s0] <= TIE;
      r->mean_s[c] += t[s * nc + c] / ns;
      r->regret_max[c] = fmax(r->regret_max[c], reg[s - s0]);
    }
    r->fastest[c] = (double)fast / ns;
    r->regret_q[c] = quantile(reg, ns, o->quantile);
    for (int s = s0; s < s0 + ns; s++) reg[s - s0] = t[s * nc + c];
    r->lo_s[c] = quantile(reg, ns, (1 - o->level) / 2);
    r->hi_s[c] = quantile(reg, ns, (1 + o->level) / 2);
  }
  /* The best: the least regret; among ties the default, then the fastest nominally. */
  r->best = r->def;
  for (int c = 0; c < nc; c++) {
    double a = r->regret_q[c], b = r->regret_q[r->best];
    if (a < b - TIE || (fabs(a - b) <= TIE && r->best != r->def && r->nominal_s[c] < r->nominal_s[r->best] * (1 - TIE))) r->best = c;
  }
  double ref[d.n];
  for (int s = 0; s < d.n; s++) ref[s] = t[s * nc + r->def], col[s] = t[s * nc + r->best];
  gain_of(ref, col, S, o->level, &r->gain);
  r->meaningful = r->best != r->def && r->gain.lo >= o->min_gain;
  r->recommended = r->meaningful ? r->best : r->def;

  if (o->advise) {
    int nv = variants(&cfg[r->recommended], r->caps_mb[r->recommended], var), run = 0;
    sim_config vc[RECOMMEND_MAX_ADVICE];
    int map[RECOMMEND_MAX_ADVICE];
    for (int v = 0; v < nv; v++)
      if (var[v].applies) map[v] = run, vc[run++] = var[v].c;
    if (run && (rc = simulate(o, &d, vc, run, tv, &r->simulations, NULL, e))) return rc;
    for (int s = 0; s < d.n; s++) ref[s] = t[s * nc + r->recommended];
    for (int v = 0; v < nv; v++) {
      recommend_advice a = {.knob = var[v].knob, .applies = var[v].applies};
      snprintf(a.setting, sizeof a.setting, "%s", var[v].setting);
      snprintf(a.note, sizeof a.note, "%s", var[v].note);
      if (a.applies) {
        for (int s = 0; s < d.n; s++) col[s] = tv[s * run + map[v]];
        gain_of(ref, col, S, o->level, &a.gain);
        a.helps = a.gain.lo >= o->min_gain;
        a.hurts = a.gain.hi <= -o->min_gain;
        a.same = a.gain.nominal == 0 && a.gain.lo == 0 && a.gain.hi == 0;
      }
      /* Of the first-bucket variants, the better one only. */
      if (r->nadvice > 0 && strcmp(r->advice[r->nadvice - 1].knob, a.knob) == 0 && !strcmp(a.knob, "first_bucket_cap")) {
        if (a.applies && a.gain.mean > r->advice[r->nadvice - 1].gain.mean) r->advice[r->nadvice - 1] = a;
        continue;
      }
      r->advice[r->nadvice++] = a;
    }
    /* Ranked: the knobs that apply by their mean gain, the best first; those that do not, last
     * (insertion sort: stable, a handful of knobs). */
    for (int i = 1; i < r->nadvice; i++) {
      recommend_advice a = r->advice[i];
      int j = i;
      for (; j > 0 && advice_before(&a, &r->advice[j - 1]); j--) r->advice[j] = r->advice[j - 1];
      r->advice[j] = a;
    }
  }
  return rc;
}

int recommend_run(const recommend_opts *o, recommend_result *r, err_t *e) {
  memset(r, 0, sizeof *r);
  int nc = o->ncaps;
  if (nc < 1 || nc > RECOMMEND_MAX_CAPS) return err_set(e, ERR_USAGE, "1 to %d caps, not %d", RECOMMEND_MAX_CAPS, nc);
  if (!(o->quantile > 0 && o->quantile <= 1)) return err_set(e, ERR_USAGE, "the regret's quantile must be in (0, 1]");
  if (!(o->level > 0 && o->level < 1)) return err_set(e, ERR_USAGE, "the interval's level must be in (0, 1)");
  if (o->samples < 0) return err_set(e, ERR_USAGE, "samples must be >= 0");
  r->ncaps = nc;
  r->def = -1;
  for (int c = 0; c < nc; c++) {
    r->caps_mb[c] = o->caps_mb[c];
    if (c > 0 && !(o->caps_mb[c] > o->caps_mb[c - 1])) return err_set(e, ERR_USAGE, "caps must ascend");
    if (o->caps_mb[c] == o->default_mb) r->def = c;
  }
  if (r->def < 0) return err_set(e, ERR_USAGE, "the default cap (%g MB) is not among the caps", o->default_mb);
  r->uncertain = uncert_count(o->profile_doc);
  int S = r->uncertain ? o->samples : 0;
  r->samples = S;
  draws_t d;
  int rc = profile_draws_build(o->profile_doc, o->profile_origin, o->base->profile, o->seed, S, &d, e);
  if (rc) return rc;
  sim_config cfg[RECOMMEND_MAX_CAPS];
  double *t = malloc((size_t)d.n * (RECOMMEND_MAX_CAPS + RECOMMEND_MAX_ADVICE) * sizeof *t), *tv = t ? t + (size_t)d.n * nc : NULL;
  if (!t) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto done;
  }
  for (int c = 0; c < nc; c++) {
    cfg[c] = *o->base;
    /* The default is DDP's with bucket_cap_mb not given (from 2.4 its first bucket stays 1 MiB);
     * every other cap is one the user passes, which from 2.4 also caps the first bucket. */
    cfg[c].bucket_cap_mb = c == r->def ? 0 : o->caps_mb[c];
  }
  if (!(rc = simulate(o, &d, cfg, nc, t, &r->simulations, &r->scenario, e))) rc = analyse(o, r, &d, cfg, t, tv, e);
done:
  free(t);
  profile_draws_free(&d);
  return rc;
}

/* ---- reports ---- */

static void gain_text(strbuf *s, const recommend_gain *g, const recommend_opts *o, int draws) {
  if (draws)
    strbuf_printf(s, "%+.2f%% (%.0f%% interval %+.2f%% .. %+.2f%%; faster in %.0f%% of %d draws)", 100 * g->mean, 100 * o->level,
                  100 * g->lo, 100 * g->hi, 100 * g->wins, draws);
  else
    strbuf_printf(s, "%+.2f%% (nominal profile only)", 100 * g->nominal);
}

char *recommend_table(const recommend_opts *o, const recommend_result *r) {
  const sim_config *c = o->base;
  strbuf s = {0};
  strbuf_printf(&s, "# %s on %d node(s) (%s, profile %s), %s %s\n", c->model->name, c->nodes, c->topo->name,
                profile_name(c->profile), c->framework == SIM_FRAMEWORK_FSDP ? "framework" : "mode",
                c->framework == SIM_FRAMEWORK_FSDP ? "fsdp" : sim_mode_name(c->mode));
  if (r->samples)
    strbuf_printf(&s, "# %d draws of the profile's %d uncertain numbers (seed %lu); regret: %s over the draws\n", r->samples,
                  r->uncertain, o->seed, o->quantile >= 1 ? "worst case" : "quantile");
  else
    strbuf_printf(&s, "# the profile states no uncertainty (docs/profile.md, \"Uncertainty\"): nominal numbers only\n");
  /* With the worst case as the regret (quantile 1, the default) the two columns would be the same
   * numbers: one is shown. The default's row says what DDP's default is: 25 MB with a first bucket
   * of 1 MiB where the release has one, unlike a cap of 25 given explicitly (sim/reducer.h). */
  int both = o->quantile < 1;
  if (c->framework == SIM_FRAMEWORK_FSDP) {
    strbuf_printf(&s, "# FSDP2 (fully_shard): no buckets; the configuration as given:\n  iteration %.6f s nominal, %.6f s mean over the draws\n",
                  r->nominal_s[r->def], r->mean_s[r->def]);
    goto advice;
  }
  if (both) strbuf_printf(&s, "# %-10s %14s %14s %10s %10s %9s\n", "cap_MB", "iteration_s", "mean_s", "regret", "worst", "fastest");
  else strbuf_printf(&s, "# %-10s %14s %14s %10s %9s\n", "cap_MB", "iteration_s", "mean_s", "worst", "fastest");
  for (int i = 0; i < r->ncaps; i++) {
    strbuf_printf(&s, "  %-10g %14.6f %14.6f ", r->caps_mb[i], r->nominal_s[i], r->mean_s[i]);
    if (both) strbuf_printf(&s, "%+9.2f%% ", 100 * r->regret_q[i]);
    strbuf_printf(&s, "%+9.2f%% %8.0f%%%s", 100 * r->regret_max[i], 100 * r->fastest[i], i == r->best ? "  <- least regret" : "");
    if (i == r->def) strbuf_printf(&s, "  default (%g, first 1 MiB)", o->default_mb);
    strbuf_printf(&s, "\n");
  }
  strbuf_printf(&s, "\n");
  if (r->meaningful) {
    strbuf_printf(&s, "recommended bucket_cap_mb %g: faster than the default %g MB by ", r->caps_mb[r->best], o->default_mb);
    gain_text(&s, &r->gain, o, r->samples);
    strbuf_printf(&s, "\n");
  } else if (r->best == r->def) {
    strbuf_printf(&s, "recommended bucket_cap_mb %g (the default): no cap is better than the default\n", o->default_mb);
  } else {
    strbuf_printf(&s, "recommended bucket_cap_mb %g (the default): no cap is meaningfully better than the default; the best, %g MB, gains ",
                  o->default_mb, r->caps_mb[r->best]);
    gain_text(&s, &r->gain, o, r->samples);
    strbuf_printf(&s, "; its interval starts below the %.2f%% a meaningful gain needs (--min-gain)\n", 100 * o->min_gain);
  }
advice:
  if (r->nadvice) strbuf_printf(&s, "\n# other knobs, each on the recommended configuration:\n");
  for (int i = 0; i < r->nadvice; i++) {
    const recommend_advice *a = &r->advice[i];
    strbuf_printf(&s, "  %-24s %s: ", a->knob, a->setting);
    if (!a->applies) {
      strbuf_printf(&s, "does not apply: %s\n", a->note);
      continue;
    }
    if (a->same) { /* the knob changes nothing that is simulated: said so, not as a gain of 0 */
      strbuf_printf(&s, "no change: the same iteration as the recommended configuration's, in every draw\n");
      continue;
    }
    gain_text(&s, &a->gain, o, r->samples);
    strbuf_printf(&s, " -> %s", a->helps ? "helps" : a->hurts ? "slower" : "no meaningful gain");
    strbuf_printf(&s, "%s%s\n", *a->note ? "; " : "", a->note);
  }
  return strbuf_take(&s);
}

static cJSON *gain_json(const recommend_gain *g) {
  cJSON *o = cJSON_CreateObject();
  if (o && (!cJSON_AddNumberToObject(o, "nominal", g->nominal) || !cJSON_AddNumberToObject(o, "mean", g->mean) ||
            !cJSON_AddNumberToObject(o, "lo", g->lo) || !cJSON_AddNumberToObject(o, "hi", g->hi) ||
            !cJSON_AddNumberToObject(o, "wins", g->wins))) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

cJSON *recommend_json(const recommend_opts *o, const recommend_result *r) {
  const sim_config *c = o->base;
  cJSON *j = cJSON_CreateObject(), *caps = cJSON_AddArrayToObject(j, "caps"), *adv = cJSON_AddArrayToObject(j, "advice"), *g;
  if (!j || !caps || !adv) goto fail;
  int ok = cJSON_AddStringToObject(j, "model", c->model->name) && cJSON_AddStringToObject(j, "topology", c->topo->name) &&
           cJSON_AddStringToObject(j, "profile", profile_name(c->profile)) && cJSON_AddNumberToObject(j, "nodes", c->nodes) &&
           cJSON_AddNumberToObject(j, "samples", r->samples) && cJSON_AddNumberToObject(j, "seed", (double)o->seed) &&
           cJSON_AddNumberToObject(j, "uncertain_numbers", r->uncertain) &&
           cJSON_AddNumberToObject(j, "regret_quantile", o->quantile) && cJSON_AddNumberToObject(j, "interval_level", o->level) &&
           cJSON_AddNumberToObject(j, "min_gain", o->min_gain) &&
           cJSON_AddNumberToObject(j, "default_bucket_cap_mb", o->default_mb) &&
           cJSON_AddNumberToObject(j, "best_bucket_cap_mb", r->caps_mb[r->best]) &&
           cJSON_AddNumberToObject(j, "recommended_bucket_cap_mb", r->caps_mb[r->recommended]) &&
           cJSON_AddNumberToObject(j, "recommended_iteration_s", r->nominal_s[r->recommended]) &&
           cJSON_AddBoolToObject(j, "meaningful", r->meaningful) && (g = gain_json(&r->gain)) &&
           cJSON_AddItemToObject(j, "gain_over_default", g) && cJSON_AddNumberToObject(j, "simulations", r->simulations);
  /* The scenario's resolved fields, as sweep writes their columns (sim/fields.c's rows). */
  static const field_id scenario[] = {FIELD_BATCH_PER_GPU, FIELD_PRECISION, FIELD_PYTORCH};
  for (int i = 0; ok && i < 3; i++) {
    const field *f = &field_table[scenario[i]];
    const field_ctx x = {.c = c};
    char buf[64];
    double v = r->scenario.value[scenario[i]];
    const char *text = field_text(f, &x, v, buf, sizeof buf);
    ok = text ? cJSON_AddStringToObject(j, f->name, text) != NULL : cJSON_AddNumberToObject(j, f->name, v) != NULL;
  }
  for (int i = 0; ok && i < r->ncaps; i++) {
    cJSON *x = cJSON_CreateObject();
    ok = x && cJSON_AddItemToArray(caps, x) && cJSON_AddNumberToObject(x, "bucket_cap_mb", r->caps_mb[i]) &&
         cJSON_AddNumberToObject(x, "iteration_s", r->nominal_s[i]) && cJSON_AddNumberToObject(x, "mean_iteration_s", r->mean_s[i]) &&
         cJSON_AddNumberToObject(x, "iteration_s_lo", r->lo_s[i]) && cJSON_AddNumberToObject(x, "iteration_s_hi", r->hi_s[i]) &&
         cJSON_AddNumberToObject(x, "regret", r->regret_q[i]) && cJSON_AddNumberToObject(x, "worst_regret", r->regret_max[i]) &&
         cJSON_AddNumberToObject(x, "fastest", r->fastest[i]);
  }
  for (int i = 0; ok && i < r->nadvice; i++) {
    const recommend_advice *a = &r->advice[i];
    cJSON *x = cJSON_CreateObject();
    ok = x && cJSON_AddItemToArray(adv, x) && cJSON_AddStringToObject(x, "knob", a->knob) &&
         cJSON_AddStringToObject(x, "setting", a->setting) && cJSON_AddBoolToObject(x, "applies", a->applies) &&
         cJSON_AddStringToObject(x, "note", a->note);
    if (ok && a->applies)
      ok = cJSON_AddBoolToObject(x, "helps", a->helps) && cJSON_AddBoolToObject(x, "hurts", a->hurts) && cJSON_AddBoolToObject(x, "same", a->same) &&
           (g = gain_json(&a->gain)) && cJSON_AddItemToObject(x, "gain", g);
  }
  if (ok) return j;
fail:
  cJSON_Delete(j);
  return NULL;
}
