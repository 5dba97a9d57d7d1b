/* Invariants of every report, over random configurations (models, topologies, profiles, jitter,
 * DDP and DataParallel, input pipelines, bucket caps, precisions, fidelities, no_sync, hooks):
 *   - every time finite and >= 0;
 *   - the breakdown's parts (loading, copy, compute, exposed communication, waiting for stragglers)
 *     add up to the iteration, and compute's parts to compute;
 *   - every bucket's ready <= start <= end inside the iteration its times come from;
 *   - throughput and efficiency consistent with the iteration and the single-GPU reference, the
 *     efficiency never above 1; with jitter, the mean known to 1% (95% interval) or 1,000
 *     iterations run, and the reported single-GPU reference within 3 intervals of a one-GPU
 *     prediction of the same flags;
 *   - the same numbers in the table, the JSON and the CSV row.
 * Seeded: DDPSIM_PROP_SEED (default 13) and DDPSIM_PROP_N configurations (default 2000; 150 under
 * AddressSanitizer); the seed is printed, and a failing configuration is printed whole, so that it
 * can be run again. A configuration the inputs cannot run (ERR_INPUT: a profile without that
 * precision or link class) is counted, not checked; any other failure fails the test. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "fixtures.h"
#include "predict.h"
#include "report.h"
#include "sweep.h"

#if defined(__SANITIZE_ADDRESS__)
#define DEFAULT_N 150
#else
#define DEFAULT_N 2000
#endif

static const char *const models[] = {"mlstm-4k", "resnet18", "resnet50", "bert-base"};
static const char *const topos[] = {"dgx1v-ib", "dgx1v-10gbe", "dgx1-p100", "pcie-8gpu"};
static const char *const profiles[] = {"v100-dgx1v", "p100-dgx1"};
#define NM (sizeof models / sizeof *models)
#define NT (sizeof topos / sizeof *topos)
#define NP (sizeof profiles / sizeof *profiles)

static int failed;

/* A number after `label` on the table's line starting with it (its first field after the label). */
static double table_num(const char *table, const char *label) {
  for (const char *l = table; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    size_t n = strlen(label);
    if (strncmp(l, label, n) == 0 && l[n] == ' ') return strtod(l + n, NULL);
  }
  return NAN;
}

static double jnum(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* One check of one configuration; the first failure prints the configuration. */
static int bad(const char *desc, int ok, const char *cfg, const char *what, double a, double b) {
  if (ok) return 0;
  if (failed++ < 10) printf("FAIL  %s: %s (%.17g vs %.17g)\n      config: %s\n", desc, what, a, b, cfg);
  return 1;
}

static int close_rel(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300; }

/* All the invariants of one prediction; returns the number that failed. */
static int check_one(const sim_config *c, const predict_result *p, const char *cfg) {
  const sim_result *r = &p->sim;
  int n = 0;
  double tol = 1e-9 * r->iteration_s;
  const double parts[] = {r->loading_s, r->transfer_s, r->buffer_broadcast_s, r->compute_s, r->exposed_comm_s,
                          r->straggler_wait_s};
  const char *const names[] = {"loading_s", "transfer_s", "buffer_broadcast_s", "compute_s", "exposed_comm_s",
                               "straggler_wait_s"};
  const double others[] = {r->forward_s, r->backward_s, r->optimizer_s, r->bucket_copy_s, r->comm_busy_s,
                           r->straggler_s, r->dp_scatter_s, r->dp_replicate_s, r->dp_gather_s, r->dp_reduce_s,
                           r->buckets_iteration_s};
  n += bad("iteration", isfinite(r->iteration_s) && r->iteration_s > 0, cfg, "iteration_s finite and > 0", r->iteration_s, 0);
  double sum = 0;
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    n += bad("part", isfinite(parts[i]) && parts[i] >= 0, cfg, names[i], parts[i], 0);
    sum += parts[i];
  }
  for (size_t i = 0; i < sizeof others / sizeof *others; i++)
    n += bad("time", isfinite(others[i]) && others[i] >= 0, cfg, "a reported time finite and >= 0", others[i], (double)i);
  n += bad("sum", fabs(sum - r->iteration_s) <= tol, cfg, "parts add up to iteration_s", sum, r->iteration_s);
  /* No report shows an impossible number: N GPUs are never more than N times one GPU. With jitter
   * the one-GPU reference runs under the same jitter with rank 0's draws (sim/predict.h). */
  n += bad("efficiency", p->scaling_efficiency > 0 && p->scaling_efficiency <= 1 + 1e-9, cfg, "0 < scaling_efficiency <= 1",
           p->scaling_efficiency, 1);
  if (r->jittered) {
    /* Enough iterations that the mean is known to SIM_JITTER_CI_REL, or the most the plan runs. */
    n += bad("ci", isfinite(r->iteration_ci_s) && r->iteration_ci_s > 0, cfg, "a jittered run's confidence interval > 0",
             r->iteration_ci_s, 0);
    n += bad("ci", (r->iterations_simulated >= PREDICT_MIN_ITERATIONS && r->iteration_ci_s <= SIM_JITTER_CI_REL * r->iteration_s * (1 + 1e-12)) ||
                       r->iterations_simulated >= PREDICT_MAX_ITERATIONS,
             cfg, "the interval within 1% of the mean, or the most iterations run", r->iteration_ci_s / r->iteration_s,
             r->iterations_simulated);
  } else {
    n += bad("ci", r->iteration_ci_s == 0, cfg, "no interval without jitter", r->iteration_ci_s, 0);
  }
  double comp = r->forward_s + r->backward_s + r->optimizer_s + r->bucket_copy_s;
  n += bad("compute", fabs(comp - r->compute_s) <= tol, cfg, "forward+backward+optimizer+copies = compute_s", comp, r->compute_s);
  if (c->framework == SIM_FRAMEWORK_DP)
    n += bad("dp", fabs(r->dp_replicate_s + r->dp_gather_s + r->dp_reduce_s - r->exposed_comm_s) <= tol, cfg,
             "DataParallel: replicate+gather+reduce = exposed", r->dp_replicate_s + r->dp_gather_s + r->dp_reduce_s, r->exposed_comm_s);
  double it_b = r->buckets_iteration_s, tb = 1e-9 * it_b;
  for (int b = 0; b < r->plan.n; b++) {
    const sim_bucket_time *t = &r->buckets[b];
    int ok = t->ready_s >= -tb && t->ready_s <= t->comm_start_s + tb && t->comm_start_s <= t->comm_end_s + tb &&
             t->comm_end_s <= it_b + tb;
    n += bad("bucket", ok, cfg, "0 <= ready <= start <= end <= the bucket's iteration", t->comm_end_s, it_b);
  }
  double sps = (double)r->gpus * (double)r->batch / r->iteration_s;
  n += bad("throughput", close_rel(sps, p->samples_per_s, 1e-12), cfg, "samples/s = gpus x batch / iteration", sps, p->samples_per_s);
  double eff = p->samples_per_s / ((double)r->gpus * (double)r->batch / p->single_gpu_iteration_s);
  n += bad("efficiency", close_rel(eff, p->scaling_efficiency, 1e-12) && eff > 0, cfg,
           "efficiency = throughput / (gpus x single-GPU throughput)", eff, p->scaling_efficiency);
  if (r->gpus == 1)
    n += bad("efficiency", close_rel(p->scaling_efficiency, 1, 1e-12), cfg, "one GPU: efficiency 1", p->scaling_efficiency, 1);

  /* The three outputs. The table prints 6 decimals of a second and whole tokens/s. */
  char *table = report_predict_table(c, p, NULL);
  cJSON *j = report_predict_json(c, p, NULL);
  char *text = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON *back = text ? cJSON_Parse(text) : NULL;
  sweep_row row;
  sweep_row_fill(c, p, &row);
  char *csv = sweep_csv(c, &row, 1, NULL, 0, NULL);
  if (!table || !back || !csv) {
    printf("FAIL  out of memory formatting the reports\n");
    exit(1);
  }
  const struct {
    const char *table, *json;
    double v;
  } f[] = {{"iteration", "iteration_s", r->iteration_s},
           {"  forward", "forward_s", r->forward_s},
           {"  backward", "backward_s", r->backward_s},
           {"  optimizer", "optimizer_s", r->optimizer_s},
           {"  exposed communication", "exposed_comm_s", r->exposed_comm_s},
           {NULL, "compute_s", r->compute_s},
           {NULL, "straggler_wait_s", r->straggler_wait_s},
           {NULL, "loading_s", r->loading_s},
           {NULL, "transfer_s", r->transfer_s},
           {"samples/s", "samples_per_s", p->samples_per_s},
           {"tokens/s", "tokens_per_s", p->tokens_per_s}};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
    /* cJSON prints 15 significant digits where they read back within its own tolerance: the last
     * bit or two may differ. */
    n += bad("json", close_rel(jnum(back, f[i].json), f[i].v, 1e-14), cfg, f[i].json, jnum(back, f[i].json), f[i].v);
    if (!f[i].table) continue;
    double t = table_num(table, f[i].table), half = f[i].table[0] == 's' ? 0.05 : f[i].table[0] == 't' ? 0.5 : 5e-7;
    n += bad("table", fabs(t - f[i].v) <= half * (1 + 1e-9), cfg, f[i].table, t, f[i].v);
  }
  if (r->jitter_kind != PROFILE_JITTER_NONE)
    n += bad("table", fabs(table_num(table, "  waiting for stragglers") - r->straggler_wait_s) <= 5e-7, cfg,
             "waiting for stragglers", table_num(table, "  waiting for stragglers"), r->straggler_wait_s);
  /* sweep's CSV (sim/sweep.h): its header names the columns; the numbers are printed with %.10g; a
   * configuration column of another framework's ('-': DataParallel's or FSDP's bucket_cap_mb) is NAN
   * here. */
  const struct {
    const char *col;
    double v;
  } want[] = {{"nodes", c->nodes}, {"gpus", r->gpus},
              {"bucket_cap_mb", c->framework != SIM_FRAMEWORK_DDP ? NAN : c->bucket_cap_mb > 0 ? c->bucket_cap_mb : REDUCER_DEFAULT_CAP_MB},
              {"iteration_s", r->iteration_s}, {"samples_per_s", p->samples_per_s}, {"tokens_per_s", p->tokens_per_s},
              {"scaling_efficiency", p->scaling_efficiency}, {"compute_s", r->compute_s}, {"exposed_comm_s", r->exposed_comm_s},
              {"transfer_s", r->transfer_s}, {"batch_per_gpu", (double)r->batch}};
  const char *line2 = strchr(csv, '\n');
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    /* The column's index in the header, then that field of the row. */
    int idx = 0, found = -1;
    for (const char *q = csv; q < line2 && found < 0; idx++) {
      size_t len = strcspn(q, ",\n");
      if (len == strlen(want[k].col) && strncmp(q, want[k].col, len) == 0) found = idx;
      q += len + 1;
    }
    const char *f = line2 + 1;
    for (int i = 0; found >= 0 && i < found && f; i++) f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
    if (isnan(want[k].v)) { /* '-': not this framework's */
      n += bad("csv", found >= 0 && f && f[0] == '-' && (f[1] == ',' || f[1] == '\n'), cfg, want[k].col, NAN, NAN);
      continue;
    }
    double got = found >= 0 && f ? strtod(f, NULL) : NAN;
    n += bad("csv", close_rel(got, want[k].v, 1e-9) || fabs(got - want[k].v) <= 1e-15, cfg, want[k].col, got, want[k].v);
  }
  free(table), free(text), free(csv);
  cJSON_Delete(j), cJSON_Delete(back);
  return n;
}

int main(void) {
  const char *se = getenv("DDPSIM_PROP_SEED"), *ne = getenv("DDPSIM_PROP_N");
  unsigned long seed = se ? strtoul(se, NULL, 10) : 13;
  long N = ne ? strtol(ne, NULL, 10) : DEFAULT_N;
  printf("# seed %lu, %ld configurations (DDPSIM_PROP_SEED, DDPSIM_PROP_N to change)\n", seed, N);
  model_t *m[NM];
  topo_t *t[NT];
  profile_t *pr[NP];
  err_t e;
  for (size_t i = 0; i < NM; i++) m[i] = fixture_bundled_model(models[i]);
  for (size_t i = 0; i < NT; i++) t[i] = fixture_bundled_topo(topos[i]);
  for (size_t i = 0; i < NP; i++) pr[i] = fixture_bundled_profile(profiles[i]);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, seed);
  long ran = 0, refused = 0, bucket_checks = 0, jittered = 0;
  for (long k = 0; k < N; k++) {
    sim_config c;
    sim_config_defaults(&c);
    int mi = (int)gsl_rng_uniform_int(rng, NM), ti = (int)gsl_rng_uniform_int(rng, NT);
    int pi = ti >= 2 ? 1 : (int)gsl_rng_uniform_int(rng, NP); /* P100 topologies with the P100 profile */
    c.model = m[mi], c.topo = t[ti], c.profile = pr[pi];
    c.framework = gsl_rng_uniform(rng) < 0.15 ? SIM_FRAMEWORK_DP : SIM_FRAMEWORK_DDP;
    int dp = c.framework == SIM_FRAMEWORK_DP;
    c.nodes = dp ? 1 : 1 + (int)gsl_rng_uniform_int(rng, 4);
    c.gpus_per_node = 1 + (int)gsl_rng_uniform_int(rng, 8);
    c.batch = 1 + (long)gsl_rng_uniform_int(rng, 64);
    c.precision = gsl_rng_uniform(rng) < 0.5 ? MODEL_FP32 : MODEL_FP16;
    c.iterations = 1 + (int)gsl_rng_uniform_int(rng, 4);
    c.seed = gsl_rng_get(rng);
    c.load_s = gsl_rng_uniform(rng) < 0.3 ? gsl_rng_uniform(rng) * 0.2 : 0;
    c.workers = (int)gsl_rng_uniform_int(rng, 5);
    int h = (int)gsl_rng_uniform_int(rng, 5);
    c.h2d = h == 0 ? SIM_H2D_AUTO : h == 1 ? SIM_H2D_OFF : h == 2 ? SIM_H2D_PAGEABLE : h == 3 ? SIM_H2D_PINNED : SIM_H2D_PINNED_ASYNC;
    c.host_launch_s = gsl_rng_uniform(rng) < 0.3 ? gsl_rng_uniform(rng) * 2e-5 : -1;
    if (dp) {
      c.jitter_cv = 0;
      c.dp_backward_gil = gsl_rng_uniform(rng) < 0.5;
    } else {
      c.bucket_cap_mb = gsl_rng_uniform(rng) < 0.2 ? 0 : exp(log(0.25) + gsl_rng_uniform(rng) * log(800.0));
      c.first_bucket_mb = gsl_rng_uniform(rng) < 0.5 ? 0 : gsl_rng_uniform(rng) < 0.5 ? 1 : c.bucket_cap_mb;
      static const int releases[] = {0, 105, 110, 113, 203, 205};
      c.pytorch = releases[gsl_rng_uniform_int(rng, 6)];
      /* Jitter: up to 0.25 (past the 0.214), in one configuration of 16: each runs up to
       * 1,000 iterations, and its one-GPU cross-check as many again. */
      c.jitter_cv = gsl_rng_uniform(rng) < 0.06 ? gsl_rng_uniform(rng) * 0.25 : 0;
      c.mode = gsl_rng_uniform(rng) < 0.2 ? SIM_MODE_FLAT : SIM_MODE_DDP;
      double u = gsl_rng_uniform(rng);
      c.layout = u < 0.15 ? SIM_LAYOUT_REBUILT : u < 0.25 ? SIM_LAYOUT_CONSTRUCTION : SIM_LAYOUT_REDUCER;
      c.find_unused = gsl_rng_uniform(rng) < 0.2;
      c.static_graph = c.layout == SIM_LAYOUT_REDUCER && c.pytorch != 105 && gsl_rng_uniform(rng) < 0.15;
      c.ddp_iteration = gsl_rng_uniform(rng) < 0.15 ? 1 + (int)gsl_rng_uniform_int(rng, 3) : 0;
      c.bucket_view = c.pytorch != 105 && gsl_rng_uniform(rng) < 0.3;
      c.broadcast_buffers = gsl_rng_uniform(rng) < 0.8;
      c.no_sync = 1 + (int)gsl_rng_uniform_int(rng, 3);
      c.comm_hook = c.precision == MODEL_FP32 && c.pytorch != 105 && gsl_rng_uniform(rng) < 0.2 ? SIM_HOOK_FP16 : SIM_HOOK_NONE;
      if (c.comm_hook && (c.pytorch == 0 || c.pytorch >= 110) && gsl_rng_uniform(rng) < 0.5) c.comm_hook = SIM_HOOK_BF16;
      c.h2d = h == 4 && gsl_rng_uniform(rng) < 0.5 ? SIM_H2D_PREFETCH : c.h2d;
      /* Step fidelity simulates every ring step as a message: small jobs only. */
      c.fidelity = c.nodes * c.gpus_per_node <= 8 && gsl_rng_uniform(rng) < 0.2 ? SIM_FIDELITY_STEP : SIM_FIDELITY_FLOW;
    }
    char cfg[512];
    snprintf(cfg, sizeof cfg,
             "#%ld %s %s %s %s %dx%d batch %ld %s cap %.4g/%.4g mode %d pytorch %d layout %d fup %d static %d it %d view %d "
             "no_sync %d hook %d "
             "fid %d iters %d jitter %.3g seed %lu load %.3g w %d h2d %d host %.3g gil %d",
             k, models[mi], topos[ti], profiles[pi], dp ? "dp" : "ddp", c.nodes, c.gpus_per_node, c.batch,
             model_dtype_name((model_dtype)c.precision), c.bucket_cap_mb, c.first_bucket_mb, c.mode, c.pytorch,
             c.layout, c.find_unused, c.static_graph, c.ddp_iteration, c.bucket_view, c.no_sync, c.comm_hook, c.fidelity, c.iterations, c.jitter_cv, c.seed,
             c.load_s, c.workers, c.h2d, c.host_launch_s, c.dp_backward_gil);
    predict_result p;
    int rc = predict_run(&c, &p, &e);
    if (rc == ERR_INPUT) {
      refused++;
      continue;
    }
    if (rc) {
      if (failed++ < 10) printf("FAIL  the simulation failed (%d): %s\n      config: %s\n", rc, e.msg, cfg);
      continue;
    }
    ran++;
    bucket_checks += p.sim.plan.n;
    check_one(&c, &p, cfg);
    if (p.sim.jittered && p.sim.gpus > 1) {
      /* The reported one-GPU reference against a one-GPU prediction of the same flags: the same
       * draws (a prefix of one stream), so they differ only by how many iterations each averaged. */
      sim_config one = c;
      one.nodes = 1;
      one.gpus_per_node = 1;
      predict_result q;
      if ((rc = predict_run(&one, &q, &e))) {
        bad("one-GPU", 0, cfg, e.msg, rc, 0);
      } else {
        jittered++;
        double k = q.sim.iterations_simulated, kt = p.sim.iterations_simulated;
        double tol = 3 * q.sim.iteration_ci_s * sqrt(k > kt ? k / kt : 1) + 1e-9 * q.sim.iteration_s;
        bad("one-GPU", fabs(q.sim.iteration_s - p.single_gpu_iteration_s) <= tol, cfg,
            "single_gpu_iteration_s against a one-GPU predict (3 intervals)", p.single_gpu_iteration_s, q.sim.iteration_s);
        bad("one-GPU", p.sim.iteration_s >= q.sim.iteration_s - tol, cfg, "N GPUs no faster per iteration than one",
            p.sim.iteration_s, q.sim.iteration_s);
        predict_result_free(&q);
      }
    }
    predict_result_free(&p);
  }
  gsl_rng_free(rng);
  for (size_t i = 0; i < NM; i++) model_destroy(m[i]);
  for (size_t i = 0; i < NT; i++) topo_destroy(t[i]);
  for (size_t i = 0; i < NP; i++) profile_destroy(pr[i]);
  CHECK(failed == 0, "%ld configurations ran (%ld buckets) with every invariant holding; %d check(s) failed", ran,
        bucket_checks, failed);
  CHECK(jittered >= N / 40, "%ld jittered multi-GPU configurations cross-checked against a one-GPU prediction", jittered);
  CHECK(ran >= N * 3 / 4, "%ld of %ld configurations ran, %ld refused by their inputs (ERR_INPUT)", ran, N, refused);
  return check_status();
}
