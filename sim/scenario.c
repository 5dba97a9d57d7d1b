#include "scenario.h"

#include <stdlib.h>
#include <string.h>

const char *const sim_mode_names[] = {[SIM_MODE_DDP] = "ddp", [SIM_MODE_FLAT] = "flat", NULL};
const char *const sim_fidelity_names[] = {[SIM_FIDELITY_FLOW] = "flow", [SIM_FIDELITY_STEP] = "step", NULL};
const char *const sim_comm_hook_names[] = {[SIM_HOOK_NONE] = "none", [SIM_HOOK_FP16] = "fp16", [SIM_HOOK_BF16] = "bf16",
                                           NULL};
const char *const sim_framework_names[] = {[SIM_FRAMEWORK_DDP] = "ddp", [SIM_FRAMEWORK_DP] = "dp", [SIM_FRAMEWORK_FSDP] = "fsdp", NULL};
const char *const sim_backend_names[] = {[SIM_BACKEND_NCCL] = "nccl", [SIM_BACKEND_GLOO] = "gloo",
                                         [SIM_BACKEND_MPI] = "mpi", NULL};
const char *const sim_h2d_names[] = {[SIM_H2D_AUTO] = "auto",         [SIM_H2D_OFF] = "none",
                                     [SIM_H2D_PAGEABLE] = "pageable", [SIM_H2D_PINNED] = "pinned",
                                     [SIM_H2D_PINNED_ASYNC] = "pinned-async", [SIM_H2D_PREFETCH] = "prefetch", NULL};

const char *sim_mode_name(sim_mode m) { return sim_mode_names[m]; }
const char *sim_fidelity_name(sim_fidelity f) { return sim_fidelity_names[f]; }
const char *sim_comm_hook_name(sim_comm_hook h) { return sim_comm_hook_names[h]; }
const char *sim_framework_name(sim_framework f) { return sim_framework_names[f]; }
const char *sim_backend_name(sim_backend b) { return sim_backend_names[b]; }
const char *sim_h2d_name(sim_h2d h) { return sim_h2d_names[h]; }

int sim_name_index(const char *const *names, const char *s) {
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], s) == 0) return i;
  return -1;
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
  c->host_event_s = -1;
  c->dp_gil_share = 1;
  c->host_jitter_s = -1;
  c->dp_backward_gil = -1;
  c->framework = SIM_FRAMEWORK_DDP;
  c->fsdp_reshard = 1;
  c->fsdp_param_dtype = c->fsdp_reduce_dtype = -1;
  c->symmetry = 1;
  c->gpu_sharing = 1;
  c->broadcast_buffers = 1;
}

double sim_bucket_cap_mb(const sim_config *c) {
  reducer_knobs k;
  sim_reducer_knobs(c, &k);
  return reducer_cap_mb(&k);
}

long sim_batch(const sim_config *c) { return c->batch > 0 ? c->batch : c->model->batch; }

model_dtype sim_precision(const sim_config *c) { return c->precision >= 0 ? (model_dtype)c->precision : c->model->precision; }

int sim_dp_backward_gil(const sim_config *c) {
  return c->dp_backward_gil >= 0 ? c->dp_backward_gil > 0 : reducer_backward_gil(c->pytorch);
}

sim_backend sim_default_backend(sim_framework f, int pytorch) {
  sim_config d;
  sim_config_defaults(&d);
  return f == SIM_FRAMEWORK_DDP && reducer_default_pg(pytorch) == REDUCER_PG_GLOO ? SIM_BACKEND_GLOO : d.backend;
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
  k->no_broadcast_buffers = !c->broadcast_buffers;
  k->pg = c->backend == SIM_BACKEND_GLOO ? REDUCER_PG_GLOO : c->backend == SIM_BACKEND_MPI ? REDUCER_PG_MPI : REDUCER_PG_NCCL;
}

void sim_reducer_iteration(const sim_config *c, reducer_iter *it) {
  reducer_knobs k;
  sim_reducer_knobs(c, &k);
  reducer_iteration(&k, c->ddp_iteration, it);
  if (c->layout != SIM_LAYOUT_REDUCER) {
    it->layout = c->layout == SIM_LAYOUT_REBUILT ? REDUCER_REBUILT : REDUCER_CONSTRUCTION;
    it->delayed = 0;
    it->nlimits = 2;
    it->limits[0] = bucket_mb_to_bytes(c->first_bucket_mb > 0 ? c->first_bucket_mb : REDUCER_FIRST_BUCKET_MB);
    it->limits[1] = bucket_mb_to_bytes(sim_bucket_cap_mb(c));
    it->fit = BUCKET_FIT_REACH;
    it->order = it->layout == REDUCER_REBUILT ? BUCKET_ORDER_READY : BUCKET_ORDER_SORTED_REVERSED;
  }
}

void sim_result_free(sim_result *r) {
  if (!r) return;
  bucket_plan_free(&r->plan);
  free(r->buckets);
  r->buckets = NULL;
  free(r->fsdp);
  r->fsdp = NULL;
  r->nfsdp = 0;
  timeline_free(r->timeline);
  r->timeline = NULL;
}
