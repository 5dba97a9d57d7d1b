#include "sim.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp.h"
#include "engine.h"
#include "plan.h"
#include "readout.h"

const char *sim_mode_name(sim_mode m) { return m == SIM_MODE_FLAT ? "flat" : "ddp"; }
const char *sim_backend_name(sim_backend b) { return b == SIM_BACKEND_GLOO ? "gloo" : b == SIM_BACKEND_MPI ? "mpi" : "nccl"; }

int sim_mode_parse(const char *s, sim_mode *out) {
  if (strcmp(s, "ddp") == 0) *out = SIM_MODE_DDP;
  else if (strcmp(s, "flat") == 0) *out = SIM_MODE_FLAT;
  else return -1;
  return 0;
}

void sim_config_defaults(sim_config *c) {
  memset(c, 0, sizeof *c);
  c->nodes = 1;
  c->gpus_per_node = 0;
  c->batch = 0;
  c->precision = -1;
  c->mode = SIM_MODE_DDP;
  c->fidelity = SIM_FIDELITY_FLOW;
  c->iterations = 3;
  c->no_sync = 1;
  c->comm_hook = SIM_HOOK_NONE;
  c->jitter_cv = -1;
  c->seed = 1;
  c->jitter_ci_rel = SIM_JITTER_CI_REL;
  c->h2d = SIM_H2D_AUTO;
  c->host_launch_s = -1;
  c->host_dispatch_s = -1;
  c->dp_gil_share = 1;
  c->host_jitter_s = -1;
  c->dp_backward_gil = -1;
  c->framework = SIM_FRAMEWORK_DDP;
  c->symmetry = 1;
  c->gpu_sharing = 1;
  c->broadcast_buffers = 1;
}

int sim_dp_backward_gil(const sim_config *c) {
  return c->dp_backward_gil >= 0 ? c->dp_backward_gil > 0 : reducer_backward_gil(c->pytorch);
}

void sim_reducer_knobs(const sim_config *c, reducer_knobs *k) {
  memset(k, 0, sizeof *k);
  k->version = c->pytorch;
  k->bucket_cap_mb = c->bucket_cap_mb;
  k->first_bucket_mb = c->first_bucket_mb;
  k->find_unused_parameters = c->find_unused;
  k->static_graph = c->static_graph;
  k->ncap_list = c->ncap_list;
  for (int i = 0; i < c->ncap_list && i < REDUCER_MAX_LIMITS; i++) k->cap_list_mb[i] = c->cap_list_mb[i];
}

void sim_reducer_iteration(const sim_config *c, reducer_iter *it) {
  reducer_knobs k;
  sim_reducer_knobs(c, &k);
  reducer_iteration(&k, c->ddp_iteration, it);
  if (c->layout != SIM_LAYOUT_REDUCER) {
    it->layout = c->layout == SIM_LAYOUT_REBUILT ? REDUCER_REBUILT : REDUCER_CONSTRUCTION;
    it->delayed = 0;
    it->nlimits = 2;
    it->limits[0] = bucket_mb_to_bytes(c->first_bucket_mb > 0 ? c->first_bucket_mb : 1.0);
    it->limits[1] = bucket_mb_to_bytes(c->bucket_cap_mb > 0 ? c->bucket_cap_mb : 25.0);
  }
}

void sim_result_free(sim_result *r) {
  if (!r) return;
  bucket_plan_free(&r->plan);
  free(r->buckets);
  r->buckets = NULL;
  timeline_free(r->timeline);
  r->timeline = NULL;
}

double sim_ring_time(int n, double bytes, double lat_s, double bw_Bps) {
  if (n <= 1) return 0.0;
  return 2.0 * (n - 1) * (lat_s + bytes / ((double)n * bw_Bps));
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sim_run(const sim_config *c, sim_result *r, err_t *e) {
  memset(r, 0, sizeof *r);
  double wall0 = now_s();
  int rc;
  if (c->framework == SIM_FRAMEWORK_DP) {
    dp_plan dp;
    if ((rc = dp_plan_build(c, &dp, e)) == ERR_OK) {
      dp_readout(&dp, r);
      if (c->record_spans) rc = dp_timeline(&dp, c->model, &r->timeline, e);
      dp_plan_free(&dp);
    }
  } else {
    plan_t p;
    engine_record rec;
    if ((rc = plan_build(c, &p, e))) goto done;
    rc = engine_run(&p, &rec, e);
    if (rc == ERR_OK) {
      rc = readout_ddp(&p, &rec, r, e);
      engine_record_free(&rec);
    }
    plan_free(&p);
  }
done:
  if (rc) sim_result_free(r);
  r->wall_s = now_s() - wall0;
  return rc;
}
