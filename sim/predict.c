#include "predict.h"

#include <math.h>
#include <string.h>

#include "cost.h"
#include "framework.h"

void predict_twin(const sim_config *c, sim_config *one) {
  *one = *c;
  one->nodes = 1;
  one->gpus_per_node = 1;
  /* As many iterations as the run itself: an input pipeline needs them to reach its steady state. */
  one->fidelity = SIM_FIDELITY_FLOW;
  one->record_spans = 0; /* a trace shows the run itself */
  /* FSDP: one rank's work without collectives, its optimizer stepping its shard (the whole model's
   * optimizer would make sharding look like superlinear scaling). */
  if (framework_get(c->framework)->shard_world && one->fsdp_shard_world == 0) one->fsdp_shard_world = framework_shard_world(c);
  one->fsdp_replicate = 0;
  /* The jitter stays: the reference is one GPU under the same noise, drawing rank 0's draws
   * (sim/plan.c draws rank-major), so that the run, which waits for its slowest rank, is compared
   * with what the same noise does to one GPU, never with a noiseless one. */
}

/* What another simulation predict ran cost, added to the run's: its wall time, and the largest
 * resident set of any. */
static void account(sim_result *run, const sim_result *other) {
  run->wall_s += other->wall_s;
  if (other->peak_rss_kb > run->peak_rss_kb) run->peak_rss_kb = other->peak_rss_kb;
}

/* With jitter, runs c with more iterations until the 95% confidence interval of the mean iteration
 * is within c->jitter_ci_rel of it (0: no more), or PREDICT_MAX_ITERATIONS are reached; r is the last run, its
 * simulation figures covering the shorter runs too. */
static int run_to_precision(sim_config *c, sim_result *r, err_t *e) {
  int rc = sim_run(c, r, e);
  double goal = c->jitter_ci_rel;
  for (int round = 0; !rc && r->jittered && goal > 0 && round < 4; round++) {
    double rel = r->iteration_ci_s / r->iteration_s;
    int k = c->iterations;
    if ((k >= PREDICT_MIN_ITERATIONS && rel <= goal) || k >= PREDICT_MAX_ITERATIONS) break;
    /* The interval narrows as 1/sqrt(iterations): what this one needs, a fifth more for safety. */
    double want = k < PREDICT_MIN_ITERATIONS ? PREDICT_MIN_ITERATIONS : 1.2 * k * (rel / goal) * (rel / goal) + 1;
    c->iterations = want > PREDICT_MAX_ITERATIONS ? PREDICT_MAX_ITERATIONS : want < k + 1 ? k + 1 : (int)want;
    sim_result shorter = *r;
    rc = sim_run(c, r, e);
    if (!rc) account(r, &shorter);
    sim_result_free(&shorter);
  }
  return rc;
}

/* The 1-GPU twin's iteration, without jitter, with c's host costs per launch and op times s. */
static int twin_at(const sim_config *c, double launch_s, double dispatch_s, double s, double *iter_s, err_t *e) {
  sim_config h = *c, one;
  h.host_launch_s = s * launch_s;
  h.host_dispatch_s = s * dispatch_s;
  h.measured_step_s = 0;
  predict_twin(&h, &one);
  one.jitter_cv = 0;
  one.host_jitter_s = 0;
  one.jitter_ci_rel = 0;
  sim_result r;
  int rc = sim_run(&one, &r, e);
  if (rc) return rc;
  *iter_s = r.iteration_s;
  sim_result_free(&r);
  return ERR_OK;
}

int predict_host_from_step(sim_config *c, double *scale, err_t *e) {
  double T = c->measured_step_s, L = cost_host_launch(c), D = cost_host_dispatch(c);
  if (!(T > 0 && T <= SIM_MAX_STEP_S))
    return err_set(e, ERR_INPUT, "--measured-step-s must be above 0 and at most %g s, got %g", SIM_MAX_STEP_S, T);
  if (!(L > 0 || D > 0))
    return err_set(e, ERR_INPUT,
                   "--measured-step-s: profile %s has no host cost to scale (compute.host.launch_s, dispatch_s): give "
                   "--host-launch-us or --host-dispatch-us",
                   profile_name(c->profile));
  double tol = 1e-6 * T, lo = 0, hi = 1, flo, fhi;
  int rc = twin_at(c, L, D, 1, &fhi, e);
  if (rc) return rc;
  if (fabs(fhi - T) <= tol) {
    lo = hi = 1;
    flo = fhi;
  } else if (fhi < T) {
    /* longer than the profile's host makes it: grow the factor until the twin is at least as slow */
    double smax = SIM_MAX_HOST_US * 1e-6 / (L > D ? L : D);
    lo = 1, flo = fhi;
    while (fhi < T) {
      if (hi >= smax)
        return err_set(e, ERR_INPUT,
                       "--measured-step-s %g: one GPU's step would need host costs above %g s per launch or op (the "
                       "profile's %.3g us and %.3g us x %.3g still give %.6g s)",
                       T, SIM_MAX_HOST_US * 1e-6, L * 1e6, D * 1e6, hi, fhi);
      lo = hi, flo = fhi;
      hi = hi * 4 < smax ? hi * 4 : smax;
      if ((rc = twin_at(c, L, D, hi, &fhi, e))) return rc;
    }
  } else {
    if ((rc = twin_at(c, L, D, 0, &flo, e))) return rc;
    if (flo > T + tol)
      return err_set(e, ERR_INPUT,
                     "--measured-step-s %g: profile %s's GPU alone takes %.6g s for this job's step on one GPU, without any "
                     "host cost: the GPU measured is faster than the profile's (calibrate one: ddpcalib compute)",
                     T, profile_name(c->profile), flo);
  }
  /* Regula falsi with the Illinois rule: the twin's iteration grows with the factor, steepest where
   * the host bounds it. */
  double s = lo == hi ? lo : fabs(flo - T) <= tol ? lo : fabs(fhi - T) <= tol ? hi : -1;
  for (int it = 0, side = 0; s < 0 && it < 100; it++) {
    double m = hi - (fhi - T) * (hi - lo) / (fhi - flo), fm;
    if (!(m > lo && m < hi)) m = 0.5 * (lo + hi);
    if ((rc = twin_at(c, L, D, m, &fm, e))) return rc;
    if (fabs(fm - T) <= tol || hi - lo <= 1e-12 * hi) s = m;
    else if (fm < T) {
      lo = m, flo = fm;
      if (side == -1) fhi = T + 0.5 * (fhi - T);
      side = -1;
    } else {
      hi = m, fhi = fm;
      if (side == 1) flo = T + 0.5 * (flo - T);
      side = 1;
    }
  }
  if (s < 0) s = 0.5 * (lo + hi);
  c->host_launch_s = s * L;
  c->host_dispatch_s = s * D;
  c->measured_step_s = 0;
  *scale = s;
  return ERR_OK;
}

int predict_host(const sim_config *c, sim_config *cal, predict_result *out, err_t *e) {
  *cal = *c;
  double scale = 0;
  int rc = cal->measured_step_s > 0 ? predict_host_from_step(cal, &scale, e) : ERR_OK;
  if (rc) return rc;
  out->host_launch_s = cost_host_launch(cal);
  out->host_dispatch_s = cost_host_dispatch(cal);
  out->host_scale = scale;
  out->measured_step_s = c->measured_step_s > 0 ? c->measured_step_s : NAN;
  return ERR_OK;
}

int predict_run(const sim_config *c, predict_result *out, err_t *e) {
  return predict_run_opts(c, &(predict_opts){0}, out, e);
}

int predict_run_opts(const sim_config *given, const predict_opts *o, predict_result *out, err_t *e) {
  memset(out, 0, sizeof *out);
  sim_config cal;
  const sim_config *c = &cal;
  int rc = predict_host(given, &cal, out, e);
  if (rc) return rc;
  sim_config run = cal;
  if ((rc = run_to_precision(&run, &out->sim, e))) return rc;
  sim_config one;
  predict_twin(&run, &one); /* the run's iterations: the twin's draws are rank 0's */
  sim_result base;
  if (out->sim.gpus == 1) {
    out->single_gpu_iteration_s = out->sim.iteration_s;
  } else if (o->single_gpu_iteration_s > 0 && !out->sim.jittered) {
    out->single_gpu_iteration_s = o->single_gpu_iteration_s;
  } else {
    if ((rc = sim_run(&one, &base, e))) {
      predict_result_free(out);
      return rc;
    }
    out->single_gpu_iteration_s = base.iteration_s;
    /* Under jitter with an input pipeline, the run's mean can come out a hair below its twin's
     * (a slow iteration lets the loaders catch up): the two are then equal within their intervals,
     * and the run, which cannot be faster than one GPU, is reported at the bound, efficiency 1. */
    double gap = out->single_gpu_iteration_s - out->sim.iteration_s;
    double noise = out->sim.iteration_ci_s + base.iteration_ci_s; /* NAN: too few cycles to know */
    if (out->sim.jittered && gap > 0 && (isnan(noise) || gap <= noise))
      out->single_gpu_iteration_s = out->sim.iteration_s;
    account(&out->sim, &base);
    sim_result_free(&base);
  }
  sim_reducer_iteration(c, &out->steady);
  if (!o->skip_early && c->framework == SIM_FRAMEWORK_DDP && c->mode == SIM_MODE_DDP && c->ddp_iteration == 0 &&
      c->layout == SIM_LAYOUT_REDUCER && out->sim.gpus > 1) {
    /* The iterations before the Reducer's steady state, each simulated once. */
    reducer_knobs k;
    sim_reducer_knobs(c, &k);
    for (int it = 1; it < reducer_steady_iteration(&k) && it <= 2; it++) {
      sim_config early = *c;
      early.ddp_iteration = it;
      early.iterations = 1;
      early.no_sync = 1;
      early.record_spans = 0;
      sim_result f;
      if ((rc = sim_run(&early, &f, e))) {
        predict_result_free(out);
        return rc;
      }
      sim_reducer_iteration(&early, &out->early[out->nearly]);
      out->early_s[out->nearly++] = f.iteration_s;
      account(&out->sim, &f);
      sim_result_free(&f);
    }
  }
  const sim_result *r = &out->sim;
  out->samples_per_s = (double)r->gpus * (double)r->batch / r->iteration_s;
  out->tokens_per_s = out->samples_per_s * (double)c->model->tokens_per_sample;
  double single = (double)r->batch / out->single_gpu_iteration_s;
  out->scaling_efficiency = out->samples_per_s / ((double)r->gpus * single);
  return ERR_OK;
}

void predict_result_free(predict_result *p) {
  if (p) sim_result_free(&p->sim);
}
