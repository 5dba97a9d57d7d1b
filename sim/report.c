#include "report.h"

#include <math.h>
#include <stdint.h>

#include "coll.h"
#include "cost.h"
#include "nccl.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An all-reduce of `bytes` taking `secs` over n GPUs as nccl-tests reports one (doc/PERFORMANCE.md):
 * algbw = bytes / time, busbw = algbw x 2(n-1)/n (sim/coll.h's bus factor), in GB/s = 1e9 B/s; 0
 * when no all-reduce ran (one GPU, no time). */
static void nccl_tests_bw(double bytes, double secs, int n, double *alg_GBps, double *bus_GBps) {
  *alg_GBps = secs > 0 && n > 1 ? bytes / secs / 1e9 : 0;
  *bus_GBps = *alg_GBps * coll_bus_factor(COLL_ALLREDUCE, n);
}

/* A simulated bucket's all-reduce: the bytes it reduced over its simulated time. */
static void bucket_bw(const sim_result *r, const sim_bucket_time *t, double *alg_GBps, double *bus_GBps) {
  nccl_tests_bw((double)t->wire_bytes, t->comm_end_s - t->comm_start_s, r->gpus, alg_GBps, bus_GBps);
}

static const char *h2d_name(sim_h2d h) {
  static const char *const names[] = {[SIM_H2D_AUTO] = "auto", [SIM_H2D_OFF] = "none", [SIM_H2D_PAGEABLE] = "pageable",
                                      [SIM_H2D_PINNED] = "pinned", [SIM_H2D_PINNED_ASYNC] = "pinned-async",
                                      [SIM_H2D_PREFETCH] = "prefetch"};
  return names[h];
}

static const char *hook_name(sim_comm_hook h) { return h == SIM_HOOK_FP16 ? "fp16" : h == SIM_HOOK_BF16 ? "bf16" : "none"; }
static const char *fid_name(sim_fidelity f) { return f == SIM_FIDELITY_STEP ? "step" : "flow"; }

static cJSON *bucket_params(const model_t *m, const bucket_t *b, int names) {
  cJSON *a = cJSON_CreateArray();
  for (int k = 0; a && k < b->ntensors; k++) {
    cJSON *v = names ? cJSON_CreateString(m->params[b->tensors[k]].name) : cJSON_CreateNumber(b->tensors[k]);
    if (!v || !cJSON_AddItemToArray(a, v)) {
      cJSON_Delete(v);
      cJSON_Delete(a);
      return NULL;
    }
  }
  return a;
}

cJSON *report_predict_json(const sim_config *c, const predict_result *p) {
  const sim_result *r = &p->sim;
  const model_t *m = c->model;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "model", m->name);
  cJSON_AddStringToObject(o, "topology", c->topo->name);
  cJSON_AddStringToObject(o, "profile", profile_name(c->profile));
  cJSON_AddNumberToObject(o, "nodes", c->nodes);
  cJSON_AddNumberToObject(o, "gpus_per_node", r->gpus / c->nodes);
  cJSON_AddNumberToObject(o, "gpus", r->gpus);
  cJSON_AddNumberToObject(o, "batch_per_gpu", (double)r->batch);
  cJSON_AddStringToObject(o, "precision", model_dtype_name(r->precision));
  int ddp = c->framework == SIM_FRAMEWORK_DDP; /* DataParallel has no buckets, modes or fidelities */
  char vb[16], lb[64];
  if (ddp) {
    cJSON_AddStringToObject(o, "mode", sim_mode_name(c->mode));
    cJSON_AddStringToObject(o, "fidelity", fid_name(c->fidelity));
    cJSON_AddStringToObject(o, "pytorch", reducer_version_name(c->pytorch, vb, sizeof vb));
    cJSON_AddNumberToObject(o, "bucket_cap_mb", c->bucket_cap_mb > 0 ? c->bucket_cap_mb : 25);
    cJSON_AddBoolToObject(o, "bucket_cap_mb_given", c->bucket_cap_mb > 0);
    cJSON_AddNumberToObject(o, "first_bucket_bytes",
                            (double)(p->steady.nlimits == 1 && p->steady.limits[0] == SIZE_MAX ? 0 : p->steady.limits[0]));
    cJSON_AddBoolToObject(o, "find_unused_parameters", c->find_unused);
    cJSON_AddBoolToObject(o, "static_graph", c->static_graph);
    cJSON_AddNumberToObject(o, "ddp_iteration", c->ddp_iteration);
    cJSON_AddStringToObject(o, "bucket_layout", reducer_iter_name(&p->steady, lb, sizeof lb));
    cJSON *early = cJSON_AddArrayToObject(o, "before_steady_state");
    for (int i = 0; early && i < p->nearly; i++) {
      cJSON *it = cJSON_CreateObject();
      if (!it) break;
      cJSON_AddNumberToObject(it, "ddp_iteration", i + 1);
      cJSON_AddNumberToObject(it, "iteration_s", p->early_s[i]);
      cJSON_AddStringToObject(it, "bucket_layout", reducer_iter_name(&p->early[i], lb, sizeof lb));
      cJSON_AddItemToArray(early, it);
    }
  }
  cJSON_AddNumberToObject(o, "iterations", c->iterations);
  if (ddp) {
    cJSON_AddNumberToObject(o, "no_sync", c->no_sync);
    cJSON_AddStringToObject(o, "comm_hook", hook_name(c->comm_hook));
  }
  cJSON_AddNumberToObject(o, "iteration_s", r->iteration_s);
  if (r->jittered && isfinite(r->iteration_ci_s)) cJSON_AddNumberToObject(o, "iteration_ci_s", r->iteration_ci_s);
  cJSON_AddNumberToObject(o, "samples_per_s", p->samples_per_s);
  cJSON_AddNumberToObject(o, "tokens_per_s", p->tokens_per_s);
  cJSON_AddStringToObject(o, "token_unit", m->token_unit);
  cJSON_AddNumberToObject(o, "compute_s", r->compute_s);
  cJSON_AddNumberToObject(o, "forward_s", r->forward_s);
  cJSON_AddNumberToObject(o, "backward_s", r->backward_s);
  cJSON_AddNumberToObject(o, "optimizer_s", r->optimizer_s);
  if (ddp) {
    cJSON_AddNumberToObject(o, "bucket_copy_s", r->bucket_copy_s);
    cJSON_AddBoolToObject(o, "bucket_view", c->bucket_view);
    cJSON *hd = cJSON_AddObjectToObject(o, "host_device");
    if (hd) {
      cJSON_AddNumberToObject(hd, "host_busy_s", r->host_busy_s);
      cJSON_AddNumberToObject(hd, "device_busy_s", r->device_busy_s);
      cJSON_AddNumberToObject(hd, "host_bound_s", r->host_bound_s);
      cJSON_AddNumberToObject(hd, "device_bound_s", r->device_bound_s);
      cJSON_AddNumberToObject(hd, "host_bound_max_s", r->host_bound_max_s);
      cJSON_AddNumberToObject(hd, "host_jitter_s", r->host_jitter_s);
    }
  }
  cJSON_AddNumberToObject(o, "exposed_comm_s", r->exposed_comm_s);
  cJSON_AddNumberToObject(o, "straggler_wait_s", r->straggler_wait_s);
  cJSON_AddNumberToObject(o, "straggler_s", r->straggler_s);
  cJSON_AddStringToObject(o, "framework", c->framework == SIM_FRAMEWORK_DP ? "dp" : "ddp");
  if (ddp) cJSON_AddStringToObject(o, "backend", sim_backend_name(c->backend));
  cJSON_AddNumberToObject(o, "host_launch_s", cost_host_launch(c));
  cJSON_AddNumberToObject(o, "host_dispatch_s", cost_host_dispatch(c));
  if (c->framework == SIM_FRAMEWORK_DP) {
    cJSON *dp = cJSON_AddObjectToObject(o, "dataparallel");
    if (dp) {
      cJSON_AddNumberToObject(dp, "scatter_s", r->dp_scatter_s);
      cJSON_AddNumberToObject(dp, "replicate_s", r->dp_replicate_s);
      cJSON_AddNumberToObject(dp, "gather_s", r->dp_gather_s);
      cJSON_AddNumberToObject(dp, "reduce_s", r->dp_reduce_s);
      cJSON_AddBoolToObject(dp, "backward_gil", sim_dp_backward_gil(c));
      cJSON_AddNumberToObject(dp, "gil_share", c->dp_gil_share);
      cJSON_AddNumberToObject(dp, "handover_s", c->dp_handover_s);
      cJSON_AddNumberToObject(dp, "host_busy_s", r->host_busy_s);
      cJSON_AddNumberToObject(dp, "host_bound_s", r->host_bound_s);
    }
  }
  cJSON_AddNumberToObject(o, "loading_s", r->loading_s);
  cJSON_AddNumberToObject(o, "transfer_s", r->transfer_s);
  if (ddp) cJSON_AddNumberToObject(o, "buffer_broadcast_s", r->buffer_broadcast_s);
  cJSON_AddStringToObject(o, "h2d", h2d_name(r->h2d));
  cJSON_AddNumberToObject(o, "num_workers", c->workers);
  cJSON_AddNumberToObject(o, "load_s_per_batch", c->load_s);
  cJSON_AddStringToObject(o, "jitter", r->jitter_kind == PROFILE_JITTER_LOGNORMAL ? "lognormal"
                                       : r->jitter_kind == PROFILE_JITTER_EMPIRICAL ? "empirical" : "none");
  cJSON_AddNumberToObject(o, "jitter_cv", r->jitter_cv);
  cJSON_AddNumberToObject(o, "seed", (double)c->seed);
  if (ddp) cJSON_AddNumberToObject(o, "comm_busy_s", r->comm_busy_s);
  cJSON_AddBoolToObject(o, "comm_shares_compute", r->shares_compute);
  cJSON_AddNumberToObject(o, "single_gpu_iteration_s", p->single_gpu_iteration_s);
  cJSON_AddNumberToObject(o, "scaling_efficiency", p->scaling_efficiency);
  cJSON_AddNumberToObject(o, "gradient_bytes", (double)model_total_bytes(m, r->precision));
  cJSON_AddNumberToObject(o, "extrapolated_ops", r->extrapolated_ops);
  cost_measured_info mi;
  cost_measured(c, r->batch, r->precision, &mi);
  cJSON *mj = cJSON_AddObjectToObject(o, "measured");
  if (mj) {
    cJSON_AddNumberToObject(mj, "ops", mi.used ? mi.ops : 0);
    cJSON_AddNumberToObject(mj, "recorded_ops", mi.ops);
    cJSON_AddNumberToObject(mj, "total_ops", mi.total);
    if (mi.ops) cJSON_AddStringToObject(mj, "device", mi.device);
    else cJSON_AddNullToObject(mj, "device");
    if (mi.ops && !mi.used) cJSON_AddStringToObject(mj, "ignored", mi.why);
    else cJSON_AddNullToObject(mj, "ignored");
  }
  cJSON *links = cJSON_AddObjectToObject(o, "links");
  if (links) {
    cJSON_AddNumberToObject(links, "intra_bw_Bps", r->intra_bw_Bps);
    cJSON_AddNumberToObject(links, "intra_lat_s", r->intra_lat_s);
    cJSON_AddNumberToObject(links, "nic_bw_Bps", r->nic_bw_Bps);
    cJSON_AddNumberToObject(links, "nic_lat_s", r->nic_lat_s);
    cJSON_AddNumberToObject(links, "channels", r->channels);
    cJSON_AddNumberToObject(links, "channel_bw_Bps", r->channel_bw_Bps);
    cJSON_AddNumberToObject(links, "nics_used", r->nics_used);
    cJSON_AddBoolToObject(links, "channel_search_exhausted", r->channels_exhausted);
  }
  if (ddp) cJSON_AddNumberToObject(o, "buckets_iteration_s", r->buckets_iteration_s);
  cJSON *bs = cJSON_AddArrayToObject(o, "buckets");
  for (int b = 0; bs && b < r->plan.n; b++) {
    const sim_bucket_time *t = &r->buckets[b];
    cJSON *j = cJSON_CreateObject();
    if (!j || !cJSON_AddItemToArray(bs, j)) {
      cJSON_Delete(j);
      cJSON_Delete(o);
      return NULL;
    }
    cJSON_AddNumberToObject(j, "index", t->index);
    cJSON_AddNumberToObject(j, "bytes", (double)t->bytes);
    cJSON_AddNumberToObject(j, "wire_bytes", (double)t->wire_bytes);
    cJSON_AddItemToObject(j, "params", bucket_params(m, &r->plan.b[b], 1));
    cJSON_AddItemToObject(j, "param_indices", bucket_params(m, &r->plan.b[b], 0));
    cJSON_AddNumberToObject(j, "ready_s", t->ready_s);
    cJSON_AddNumberToObject(j, "comm_start_s", t->comm_start_s);
    cJSON_AddNumberToObject(j, "comm_end_s", t->comm_end_s);
    cJSON_AddNumberToObject(j, "wait_s", t->comm_start_s - t->ready_s);
    cJSON_AddStringToObject(j, "algorithm", nccl_algo_name((nccl_algo)t->algo));
    cJSON_AddStringToObject(j, "protocol", nccl_proto_name((nccl_proto)t->proto));
    cJSON_AddNumberToObject(j, "nccl_estimate_s", t->nccl_estimate_s);
    double alg, bus;
    bucket_bw(r, t, &alg, &bus);
    cJSON_AddNumberToObject(j, "algbw_GBps", alg);
    cJSON_AddNumberToObject(j, "busbw_GBps", bus);
  }
  cJSON *sim = cJSON_AddObjectToObject(o, "simulation");
  if (sim) {
    cJSON_AddNumberToObject(sim, "messages", (double)r->messages);
    cJSON_AddNumberToObject(sim, "iterations", r->iterations_simulated);
    cJSON_AddNumberToObject(sim, "ranks_simulated", r->ranks_simulated);
    cJSON_AddNumberToObject(sim, "wall_s", r->wall_s);
    cJSON_AddNumberToObject(sim, "peak_rss_kb", (double)r->peak_rss_kb);
    cJSON_AddBoolToObject(sim, "closed_form", r->closed_form);
  }
  return o;
}

static void fmt_bytes(char *buf, size_t len, double b) {
  if (b >= 1024.0 * 1024.0) snprintf(buf, len, "%.2f MiB", b / (1024.0 * 1024.0));
  else if (b >= 1024.0) snprintf(buf, len, "%.1f KiB", b / 1024.0);
  else snprintf(buf, len, "%.0f B", b);
}

char *report_predict_table(const sim_config *c, const predict_result *p) {
  const sim_result *r = &p->sim;
  const model_t *m = c->model;
  strbuf s = {0};
  char gb[32];
  fmt_bytes(gb, sizeof gb, (double)model_total_bytes(m, r->precision));
  strbuf_printf(&s, "# %s on %d x %d GPUs (%s, profile %s)%s\n", m->name, c->nodes, r->gpus / c->nodes, c->topo->name,
      profile_name(c->profile), c->framework == SIM_FRAMEWORK_DP ? ", DataParallel" : "");
  int ddp = c->framework == SIM_FRAMEWORK_DDP;
  char vb[16], lb[64];
  if (ddp) {
    strbuf_printf(&s, "# batch %ld/GPU, %s, %s fidelity", r->batch, model_dtype_name(r->precision), fid_name(c->fidelity));
    if (c->mode == SIM_MODE_FLAT) {
      strbuf_printf(&s, ", flat: one all-reduce of every gradient after backward");
    } else {
      strbuf_printf(&s, "\n# PyTorch %s DDP, bucket_cap_mb %g%s%s%s: ", reducer_version_name(c->pytorch, vb, sizeof vb),
                    c->bucket_cap_mb > 0 ? c->bucket_cap_mb : 25, c->bucket_cap_mb > 0 ? "" : " (default)",
                    c->find_unused ? ", find_unused_parameters" : "", c->static_graph ? ", static_graph" : "");
      if (c->ddp_iteration > 0) strbuf_printf(&s, "iteration %d, ", c->ddp_iteration);
      else strbuf_printf(&s, "steady state, ");
      strbuf_printf(&s, "%s", reducer_iter_name(&p->steady, lb, sizeof lb));
    }
    if (c->no_sync > 1) strbuf_printf(&s, ", all-reduce every %d iterations", c->no_sync);
    if (c->comm_hook != SIM_HOOK_NONE) strbuf_printf(&s, ", %s compression hook", hook_name(c->comm_hook));
  } else {
    strbuf_printf(&s, "# batch %ld/GPU, %s, phases in order, summed%s", r->batch, model_dtype_name(r->precision),
        sim_dp_backward_gil(c) ? ", backward under the GIL" : "");
  }
  strbuf_printf(&s, "\n");
  strbuf_printf(&s, "%-24s %14.6f s   (the parts below add up to it)\n", "iteration", r->iteration_s);
  if (r->jittered && !isfinite(r->iteration_ci_s))
    strbuf_printf(&s, "# jitter: the mean of %d iterations, too few steady cycles to know its confidence interval\n"
                      "# (--jitter-ci 0 runs exactly --iterations); the one-GPU reference ran as many under the same jitter\n",
                  r->iterations_simulated);
  else if (r->jittered)
    strbuf_printf(&s, "# jitter: the mean of %d iterations, +/- %.6f s (%.2f%%; 95%% confidence interval); the\n"
                      "# one-GPU reference ran as many under the same jitter\n",
                  r->iterations_simulated, r->iteration_ci_s, 100 * r->iteration_ci_s / r->iteration_s);
  for (int i = 0; i < p->nearly; i++)
    strbuf_printf(&s, "# iteration %d: %.6f s once (%s), before the steady state; not part of the mean\n", i + 1,
                  p->early_s[i], reducer_iter_name(&p->early[i], lb, sizeof lb));
  if (c->load_s > 0) strbuf_printf(&s, "%-24s %14.6f s   (%d workers)\n", "  loading (waiting)", r->loading_s, c->workers);
  if (r->h2d != SIM_H2D_OFF) strbuf_printf(&s, "%-24s %14.6f s   (%s)\n", "  host-to-device copy", r->transfer_s, h2d_name(r->h2d));
  if (r->buffer_broadcast_s > 0)
    strbuf_printf(&s, "%-24s %14.6f s   (%ld bytes from rank 0)\n", "  broadcast buffers", r->buffer_broadcast_s,
                  c->model->buffer_bytes);
  strbuf_printf(&s, "%-24s %14.6f s\n", "  forward", r->forward_s);
  strbuf_printf(&s, "%-24s %14.6f s\n", "  backward", r->backward_s);
  strbuf_printf(&s, "%-24s %14.6f s\n", "  optimizer", r->optimizer_s);
  if (r->bucket_copy_s > 0) strbuf_printf(&s, "%-24s %14.6f s\n", "  bucket copies", r->bucket_copy_s);
  strbuf_printf(&s, "%-24s %14.6f s\n", "  exposed communication", r->exposed_comm_s);
  if (!ddp) {
    strbuf_printf(&s, "%-24s %14.6f s\n", "    replicate parameters", r->dp_replicate_s);
    strbuf_printf(&s, "%-24s %14.6f s\n", "    gather outputs+grads", r->dp_gather_s);
    strbuf_printf(&s, "%-24s %14.6f s\n", "    reduce gradients", r->dp_reduce_s);
  }
  if (ddp && r->host_jitter_s > 0)
    strbuf_printf(&s, "%-24s %14.6f s   (rank 0's host delay drawn; the slowest rank's is waited for)\n",
                  "  host noise", r->host_jitter_s);
  if (ddp && r->host_bound_s > 1e-9 * r->iteration_s)
    strbuf_printf(&s, "%-24s %14.6f s   (of compute: the GPU idle, waiting for the host to issue)\n", "  host-bound", r->host_bound_s);
  if (r->jitter_kind != PROFILE_JITTER_NONE)
    strbuf_printf(&s, "%-24s %14.6f s   (slowest GPU's spread over the mean: %.6f s)\n", "  waiting for stragglers",
                  r->straggler_wait_s, r->straggler_s);
  strbuf_printf(&s, "%-24s %14.1f\n", "samples/s", p->samples_per_s);
  strbuf_printf(&s, "%-24s %14.0f", "tokens/s", p->tokens_per_s);
  if (strcmp(m->token_unit, "tokens") != 0) strbuf_printf(&s, "   (tokens are %s)", m->token_unit);
  strbuf_printf(&s, "\n");
  strbuf_printf(&s, "%-24s %14.1f %%\n", "scaling efficiency", 100.0 * p->scaling_efficiency);
  if (ddp) strbuf_printf(&s, "%-24s %14.6f s\n", "communication busy", r->comm_busy_s);
  if (ddp)
    strbuf_printf(&s, "%-24s %14.6f s   (GPU busy %.6f s; the host waited for its GPU %.6f s)\n", "host issuing", r->host_busy_s,
                  r->device_busy_s, r->device_bound_s);
  strbuf_printf(&s, "%-24s %14s\n", "gradients", gb);
  if (r->gpus > 1 && c->framework == SIM_FRAMEWORK_DDP) {
    strbuf_printf(&s, "%-24s %14d     x %.2f GB/s", "NCCL channels", r->channels, r->channel_bw_Bps / 1e9);
    if (r->nics_used) strbuf_printf(&s, "   (through %d NIC%s per node)", r->nics_used, r->nics_used > 1 ? "s" : "");
    strbuf_printf(&s, "\n");
    if (r->channels_exhausted)
      strbuf_printf(&s, "# note: the channel search stopped at its step budget: NCCL may find more bandwidth\n");
  }
  if (r->ranks_simulated > 0 && r->ranks_simulated < r->gpus)
    strbuf_printf(&s, "# simulated %d of the %d GPUs: every node does the same (no jitter), so 2 nodes stand for all\n",
                  r->ranks_simulated, r->gpus);
  if (r->extrapolated_ops) strbuf_printf(&s, "# note: %d op cost(s) extrapolated outside the profile's measured range\n", r->extrapolated_ops);
  cost_measured_info mi;
  cost_measured(c, r->batch, r->precision, &mi);
  if (mi.used)
    strbuf_printf(&s, "# measured: %d of %d ops priced from their times measured on %s (torch %s, median of %ld steps, %s)\n",
                  mi.ops, mi.total, mi.device, m->measured.torch, m->measured.steps, m->measured.date);
  else if (mi.ops)
    strbuf_printf(&s, "# warning: the model's measured times (%d ops, on %s) were ignored: %s\n", mi.ops, mi.device, mi.why);
  if (!ddp) return strbuf_take(&s);
  /* The last iteration against the mean: apart by more than rounding only under jitter or no_sync. */
  if (fabs(r->buckets_iteration_s - r->iteration_s) > 1e-9 * r->iteration_s)
    strbuf_printf(&s, "#\n# buckets of the last simulated iteration (%.6f s; the mean above is over every steady one%s)\n",
                  r->buckets_iteration_s, r->jittered ? ", under jitter" : "");
  strbuf_printf(&s, "#\n# %-4s %12s %9s %12s %12s %12s %12s %8s %8s  %s\n", "bkt", "bytes", "params", "ready_s", "start_s", "end_s",
      "wait_s", "algbw", "busbw", "nccl");
  for (int b = 0; b < r->plan.n; b++) {
    const sim_bucket_time *t = &r->buckets[b];
    char bb[32];
    fmt_bytes(bb, sizeof bb, (double)t->bytes);
    double alg, bus;
    bucket_bw(r, t, &alg, &bus);
    strbuf_printf(&s, "  %-4d %12s %9d %12.6f %12.6f %12.6f %12.6f %8.2f %8.2f  %s/%s\n", b, bb, r->plan.b[b].ntensors, t->ready_s,
        t->comm_start_s, t->comm_end_s, t->comm_start_s - t->ready_s, alg, bus, nccl_algo_name((nccl_algo)t->algo),
        nccl_proto_name((nccl_proto)t->proto));
  }
  return strbuf_take(&s);
}

cJSON *report_buckets_json(const model_t *m, model_dtype run, const bucket_plan *plan, const report_bucket_comm *comm) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "model", m->name);
  cJSON_AddStringToObject(o, "precision", model_dtype_name(run));
  cJSON_AddNumberToObject(o, "gradient_bytes", (double)model_total_bytes(m, run));
  if (comm) {
    cJSON_AddStringToObject(o, "job", comm->job);
    cJSON_AddNumberToObject(o, "gpus", comm->ranks);
  }
  cJSON *bs = cJSON_AddArrayToObject(o, "buckets");
  for (int b = 0; bs && b < plan->n; b++) {
    cJSON *j = cJSON_CreateObject();
    if (!j || !cJSON_AddItemToArray(bs, j)) {
      cJSON_Delete(j);
      cJSON_Delete(o);
      return NULL;
    }
    cJSON_AddNumberToObject(j, "index", b);
    cJSON_AddNumberToObject(j, "bytes", (double)plan->b[b].bytes);
    cJSON_AddStringToObject(j, "dtype", model_dtype_name((model_dtype)plan->b[b].dtype_key));
    cJSON_AddItemToObject(j, "params", bucket_params(m, &plan->b[b], 1));
    cJSON_AddItemToObject(j, "param_indices", bucket_params(m, &plan->b[b], 0));
    if (!comm) continue;
    const plan_coll *pc = &comm->coll[b];
    double alg, bus;
    nccl_tests_bw(pc->bytes, pc->estimate_s, comm->ranks, &alg, &bus);
    cJSON *k = cJSON_AddObjectToObject(j, "allreduce");
    if (!k) {
      cJSON_Delete(o);
      return NULL;
    }
    cJSON_AddNumberToObject(k, "wire_bytes", pc->bytes);
    cJSON_AddStringToObject(k, "algorithm", nccl_algo_name(pc->algo));
    cJSON_AddStringToObject(k, "protocol", nccl_proto_name(pc->proto));
    cJSON_AddNumberToObject(k, "nccl_estimate_s", pc->estimate_s);
    cJSON_AddNumberToObject(k, "algbw_GBps", alg);
    cJSON_AddNumberToObject(k, "busbw_GBps", bus);
  }
  return o;
}

char *report_buckets_table(const model_t *m, model_dtype run, const bucket_plan *plan, const report_bucket_comm *comm) {
  strbuf s = {0};
  strbuf_printf(&s, "# %s, %s gradients, %d buckets in reduction order\n", m->name, model_dtype_name(run), plan->n);
  if (comm)
    strbuf_printf(&s, "# each all-reduce as NCCL's model prices it on an idle network, %s; algbw and busbw (GB/s) as "
                      "nccl-tests defines them\n# %-4s %14s %5s %12s %8s %8s  %-11s params (registration index)\n",
                  comm->job, "bkt", "bytes", "dtype", "estimate_us", "algbw", "busbw", "nccl");
  else
    strbuf_printf(&s, "# %-4s %14s %5s  params (registration index)\n", "bkt", "bytes", "dtype");
  for (int b = 0; b < plan->n; b++) {
    strbuf_printf(&s, "  %-4d %14zu %5s ", b, plan->b[b].bytes, model_dtype_name((model_dtype)plan->b[b].dtype_key));
    if (comm) {
      const plan_coll *pc = &comm->coll[b];
      double alg, bus;
      char nc[32];
      nccl_tests_bw(pc->bytes, pc->estimate_s, comm->ranks, &alg, &bus);
      snprintf(nc, sizeof nc, "%s/%s", nccl_algo_name(pc->algo), nccl_proto_name(pc->proto));
      strbuf_printf(&s, "%12.1f %8.2f %8.2f  %-11s", pc->estimate_s * 1e6, alg, bus, nc);
    }
    for (int k = 0; k < plan->b[b].ntensors; k++) {
      int t = plan->b[b].tensors[k];
      strbuf_printf(&s, " %s(%d)", m->params[t].name, t);
    }
    strbuf_printf(&s, "\n");
  }
  return strbuf_take(&s);
}

char *report_sweep_best(const double *caps_mb, const double *iteration_s, int n) {
  int best = 0, second = -1;
  for (int i = 1; i < n; i++)
    if (iteration_s[i] < iteration_s[best]) best = i;
  for (int i = 0; i < n; i++)
    if (i != best && (second < 0 || iteration_s[i] < iteration_s[second])) second = i;
  strbuf s = {0};
  double margin = (iteration_s[second] - iteration_s[best]) / iteration_s[best];
  int ties = 0;
  for (int i = 0; i < n; i++) ties += (iteration_s[i] - iteration_s[best]) / iteration_s[best] <= 1e-9;
  if (ties == n)
    strbuf_printf(&s, "# best bucket cap: all %d caps tie (%.6f s per iteration): communication is hidden or insensitive\n", n,
        iteration_s[best]);
  else if (margin <= 1e-9)
    strbuf_printf(&s, "# best bucket cap: %d caps tie, e.g. %g MB and %g MB (%.6f s per iteration)\n", ties, caps_mb[best],
        caps_mb[second], iteration_s[best]);
  else
    strbuf_printf(&s, "# best bucket cap: %g MB, %.2f%% faster than the next best (%g MB)\n", caps_mb[best], 100.0 * margin,
        caps_mb[second]);
  return strbuf_take(&s);
}

