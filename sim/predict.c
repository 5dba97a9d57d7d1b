#include "predict.h"

#include <string.h>

void predict_twin(const sim_config *c, sim_config *one) {
  *one = *c;
  one->nodes = 1;
  one->gpus_per_node = 1;
  /* As many iterations as the run itself: an input pipeline needs them to reach its steady state. */
  one->fidelity = SIM_FIDELITY_FLOW;
  one->jitter_cv = 0; /* the reference is the expected single-GPU time, not one noisy draw */
  one->record_spans = 0; /* a trace shows the run itself */
}

/* What another simulation predict ran cost, added to the run's: its wall time, and the largest
 * resident set of any. */
static void account(sim_result *run, const sim_result *other) {
  run->wall_s += other->wall_s;
  if (other->peak_rss_kb > run->peak_rss_kb) run->peak_rss_kb = other->peak_rss_kb;
}

int predict_run(const sim_config *c, predict_result *out, err_t *e) {
  return predict_run_opts(c, &(predict_opts){0}, out, e);
}

int predict_run_opts(const sim_config *c, const predict_opts *o, predict_result *out, err_t *e) {
  memset(out, 0, sizeof *out);
  int rc = sim_run(c, &out->sim, e);
  if (rc) return rc;
  sim_config one;
  predict_twin(c, &one);
  sim_result base;
  if (out->sim.gpus == 1) {
    out->single_gpu_iteration_s = out->sim.iteration_s;
  } else if (o->single_gpu_iteration_s > 0) {
    out->single_gpu_iteration_s = o->single_gpu_iteration_s;
  } else {
    if ((rc = sim_run(&one, &base, e))) {
      predict_result_free(out);
      return rc;
    }
    out->single_gpu_iteration_s = base.iteration_s;
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
