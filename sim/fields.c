/* fields: the table of a prediction's result fields (fields.h). */
#include "fields.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "coll.h"
#include "cost.h"
#include "ncclmodel.h"
#include "plan.h"

/* A simulated bucket's all-reduce: the bytes it reduced over its simulated time. */
void field_bucket_bw(const sim_result *r, const sim_bucket_time *t, double *alg_GBps, double *bus_GBps) {
  coll_nccl_tests_bw(COLL_ALLREDUCE, (double)t->wire_bytes, t->comm_end_s - t->comm_start_s, r->gpus, alg_GBps, bus_GBps);
}

cJSON *field_bucket_params(const model_t *m, const bucket_t *b, int names) {
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

/* ---- names of the scenario's enums as reports write them (sim/scenario.h's tables) ---- */

static const char *precision_name(int v, char *buf, size_t len) { return (void)buf, (void)len, model_dtype_name((model_dtype)v); }
static const char *mode_name(int v, char *buf, size_t len) { return (void)buf, (void)len, sim_mode_name((sim_mode)v); }
static const char *fidelity_name(int v, char *buf, size_t len) {
  return (void)buf, (void)len, sim_fidelity_name((sim_fidelity)v);
}
static const char *pytorch_name(int v, char *buf, size_t len) { return reducer_version_name(v, buf, len); }
static const char *hook_name(int v, char *buf, size_t len) {
  return (void)buf, (void)len, sim_comm_hook_name((sim_comm_hook)v);
}
static const char *framework_name(int v, char *buf, size_t len) { return (void)buf, (void)len, sim_framework_name((sim_framework)v); }
static const char *backend_name(int v, char *buf, size_t len) { return (void)buf, (void)len, sim_backend_name((sim_backend)v); }
static const char *h2d_name(int v, char *buf, size_t len) {
  return (void)buf, (void)len, sim_h2d_name((sim_h2d)v);
}
static const char *jitter_name(int v, char *buf, size_t len) {
  return (void)buf, (void)len, profile_jitter_name((profile_jitter_kind)v);
}

/* ---- accessors: what is not one member of predict_result ---- */

static const char *model_text(const field_ctx *x, char *b, size_t n) { return (void)b, (void)n, x->c->model->name; }
static const char *topology_text(const field_ctx *x, char *b, size_t n) { return (void)b, (void)n, x->c->topo->name; }
static const char *profile_text(const field_ctx *x, char *b, size_t n) { return (void)b, (void)n, profile_name(x->c->profile); }
static const char *token_unit_text(const field_ctx *x, char *b, size_t n) { return (void)b, (void)n, x->c->model->token_unit; }
static const char *currency_text(const field_ctx *x, char *b, size_t n) { /* copied: the job may be the caller's temporary */
  snprintf(b, n, "%s", x->job ? x->job->currency : "");
  return b;
}
static const char *layout_text(const field_ctx *x, char *b, size_t n) { return reducer_iter_name(&x->p->steady, b, n); }

static double nodes(const field_ctx *x) { return x->c->nodes; }
static double gpus_per_node(const field_ctx *x) { return x->c->nodes > 0 ? x->p->sim.gpus / x->c->nodes : 0; }
static double mode(const field_ctx *x) { return x->c->mode; }
static double fidelity(const field_ctx *x) { return x->c->fidelity; }
static double pytorch(const field_ctx *x) { return x->c->pytorch; }
static double cap_mb(const field_ctx *x) { return sim_bucket_cap_mb(x->c); }
static double cap_given(const field_ctx *x) { return x->c->bucket_cap_mb > 0; }
static double first_bucket(const field_ctx *x) {
  const reducer_iter *s = &x->p->steady;
  return (double)(s->nlimits == 1 && s->limits[0] == SIZE_MAX ? 0 : s->limits[0]);
}
static double find_unused(const field_ctx *x) { return x->c->find_unused; }
static double static_graph(const field_ctx *x) { return x->c->static_graph; }
static double ddp_iteration(const field_ctx *x) { return x->c->ddp_iteration; }
static double iterations(const field_ctx *x) { return x->c->iterations; }
static double no_sync(const field_ctx *x) { return x->c->no_sync; }
static double comm_hook(const field_ctx *x) { return x->c->comm_hook; }
/* Known with jitter only; NaN also where too few steady cycles were simulated to know it. */
static double iteration_ci(const field_ctx *x) { return x->p->sim.jittered ? x->p->sim.iteration_ci_s : NAN; }
static double bucket_view(const field_ctx *x) { return x->c->bucket_view; }
static double framework(const field_ctx *x) { return x->c->framework; }
static double backend(const field_ctx *x) { return x->c->backend; }
static double host_scale(const field_ctx *x) { return x->p->host_scale > 0 ? x->p->host_scale : NAN; }
static int measured_step_shown(const field_ctx *x) { return x->p->host_scale > 0; }
static void measured_step_note(strbuf *s, const field_ctx *x) {
  strbuf_printf(s, "   (given; the host's costs from it: %.3g x the profile's, %.3g us a launch, %.3g us an op)", x->p->host_scale,
                x->p->host_launch_s * 1e6, x->p->host_dispatch_s * 1e6);
}
static double backward_gil(const field_ctx *x) { return sim_dp_backward_gil(x->c); }
static double gil_share(const field_ctx *x) { return x->c->dp_gil_share; }
static double handover(const field_ctx *x) { return x->c->dp_handover_s; }
static double num_workers(const field_ctx *x) { return x->c->workers; }
static double load_s(const field_ctx *x) { return x->c->load_s; }
static double seed(const field_ctx *x) { return (double)x->c->seed; }
static double gradient_bytes(const field_ctx *x) { return (double)model_total_bytes(x->c->model, x->p->sim.precision); }
static double nbuckets(const field_ctx *x) { return x->p->sim.plan.n; }
static double unknown(const field_ctx *x) { return (void)x, NAN; } /* filled by the caller (sweep's interval) */

static double memory_peak(const field_ctx *x) { return x->mem ? x->mem->peak_bytes : NAN; }
static double fits(const field_ctx *x) { return x->mem && x->mem->device_bytes > 0 ? !memory_oom(x->mem) : NAN; }
static double max_batch(const field_ctx *x) {
  long b = x->mem ? memory_max_batch(x->mem) : -1;
  return b >= 0 ? (double)b : NAN;
}
static double train_s(const field_ctx *x) { return x->budget ? x->budget->train_s : NAN; }
static double gpu_hours(const field_ctx *x) { return x->budget ? x->budget->gpu_hours : NAN; }
static double cost(const field_ctx *x) { return x->budget && x->budget->has_cost ? x->budget->cost : NAN; }
static double energy(const field_ctx *x) { return x->budget && x->budget->has_energy ? x->budget->energy_kwh : NAN; }
static double co2(const field_ctx *x) { return x->budget && x->budget->has_co2 ? x->budget->co2_kg : NAN; }

/* ---- JSON values built whole ---- */

static cJSON *before_steady(const field_ctx *x) {
  const predict_result *p = x->p;
  char lb[64];
  cJSON *early = cJSON_CreateArray();
  for (int i = 0; early && i < p->nearly; i++) {
    cJSON *it = cJSON_CreateObject();
    if (!it) break;
    cJSON_AddNumberToObject(it, "ddp_iteration", i + 1);
    cJSON_AddNumberToObject(it, "iteration_s", p->early_s[i]);
    cJSON_AddStringToObject(it, "bucket_layout", reducer_iter_name(&p->early[i], lb, sizeof lb));
    cJSON_AddItemToArray(early, it);
  }
  return early;
}

/* FSDP's collectives of the reported iteration (sim_result.fsdp), in the order the host issued them. */
static cJSON *fsdp_collectives(const field_ctx *x) {
  const sim_result *r = &x->p->sim;
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < r->nfsdp; i++) {
    const sim_fsdp_coll *t = &r->fsdp[i];
    cJSON *j = cJSON_CreateObject();
    if (!j || !cJSON_AddItemToArray(a, j)) {
      cJSON_Delete(j);
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddStringToObject(j, "collective", coll_get((coll_kind)t->kind)->name);
    cJSON_AddStringToObject(j, "unit", t->unit[0] ? t->unit : "<root>");
    cJSON_AddStringToObject(j, "before", t->before);
    cJSON_AddNumberToObject(j, "bytes", t->bytes);
    cJSON_AddNumberToObject(j, "start_s", t->start_s);
    cJSON_AddNumberToObject(j, "end_s", t->end_s);
    cJSON_AddStringToObject(j, "algorithm", nccl_algo_name((nccl_algo)t->algo));
    cJSON_AddStringToObject(j, "protocol", nccl_proto_name((nccl_proto)t->proto));
    cJSON_AddNumberToObject(j, "nccl_estimate_s", t->nccl_estimate_s);
  }
  return a;
}

static cJSON *buckets(const field_ctx *x) {
  const sim_result *r = &x->p->sim;
  cJSON *bs = cJSON_CreateArray();
  for (int b = 0; bs && b < r->plan.n; b++) {
    const sim_bucket_time *t = &r->buckets[b];
    cJSON *j = cJSON_CreateObject();
    if (!j || !cJSON_AddItemToArray(bs, j)) {
      cJSON_Delete(j);
      cJSON_Delete(bs);
      return NULL;
    }
    cJSON_AddNumberToObject(j, "index", t->index);
    cJSON_AddNumberToObject(j, "bytes", (double)t->bytes);
    cJSON_AddNumberToObject(j, "wire_bytes", (double)t->wire_bytes);
    cJSON_AddItemToObject(j, "params", field_bucket_params(x->c->model, &r->plan.b[b], 1));
    cJSON_AddItemToObject(j, "param_indices", field_bucket_params(x->c->model, &r->plan.b[b], 0));
    cJSON_AddNumberToObject(j, "ready_s", t->ready_s);
    cJSON_AddNumberToObject(j, "comm_start_s", t->comm_start_s);
    cJSON_AddNumberToObject(j, "comm_end_s", t->comm_end_s);
    cJSON_AddNumberToObject(j, "wait_s", t->comm_start_s - t->ready_s);
    cJSON_AddStringToObject(j, "algorithm", nccl_algo_name((nccl_algo)t->algo));
    cJSON_AddStringToObject(j, "protocol", nccl_proto_name((nccl_proto)t->proto));
    cJSON_AddNumberToObject(j, "nccl_estimate_s", t->nccl_estimate_s);
    double alg, bus;
    field_bucket_bw(r, t, &alg, &bus);
    cJSON_AddNumberToObject(j, "algbw_GBps", alg);
    cJSON_AddNumberToObject(j, "busbw_GBps", bus);
  }
  return bs;
}

/* The `measured` object: the model's measured op times and whether they priced this run
 * (sim/cost.h, cost_measured). */
static cJSON *measured(const field_ctx *x) {
  cost_measured_info mi;
  cost_measured(x->c, x->p->sim.batch, x->p->sim.precision, &mi);
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddNumberToObject(o, "ops", mi.used ? mi.ops : 0) || !cJSON_AddNumberToObject(o, "recorded_ops", mi.ops) ||
      !cJSON_AddNumberToObject(o, "total_ops", mi.total) ||
      !(mi.ops ? cJSON_AddStringToObject(o, "device", mi.device) : cJSON_AddNullToObject(o, "device")) ||
      !(mi.ops && !mi.used ? cJSON_AddStringToObject(o, "ignored", mi.why) : cJSON_AddNullToObject(o, "ignored"))) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static int has_memory(const field_ctx *x) { return x->mem != NULL; }
static int has_budget(const field_ctx *x) { return x->budget != NULL; }
static int has_interval(const field_ctx *x) { return x->iv != NULL; }
static cJSON *memory(const field_ctx *x) { return memory_json(x->mem); }
static cJSON *budget(const field_ctx *x) { return budget_json(x->job, x->budget); }

/* The `interval` object: every field marked for it, those known (> 0: a cost without a price is
 * not), scaled with the iteration or against it. */
static cJSON *interval(const field_ctx *x) {
  const char *names[FIELD_COUNT + 1];
  double values[FIELD_COUNT];
  int time[FIELD_COUNT], n = 0;
  for (int k = 0; k < FIELD_COUNT; k++) {
    const field *f = &field_table[k];
    if (!f->interval) continue;
    names[n] = f->name;
    values[n] = field_value(f, x);
    if (isnan(values[n])) values[n] = 0;
    time[n++] = f->interval == FIELD_IV_TIME;
  }
  names[n] = NULL;
  return interval_json(x->iv, names, values, time);
}

/* ---- predict's table: when a line shows, what follows its value ---- */

static int loading_shown(const field_ctx *x) { return x->c->load_s > 0; }
static void loading_note(strbuf *s, const field_ctx *x) { strbuf_printf(s, "   (%d workers)", x->c->workers); }
static int transfer_shown(const field_ctx *x) { return x->p->sim.h2d != SIM_H2D_OFF; }
static void transfer_note(strbuf *s, const field_ctx *x) { strbuf_printf(s, "   (%s)", h2d_name(x->p->sim.h2d, NULL, 0)); }
static int broadcast_shown(const field_ctx *x) { return x->p->sim.buffer_broadcast_s > 0; }
static void broadcast_note(strbuf *s, const field_ctx *x) { strbuf_printf(s, "   (%ld bytes from rank 0)", x->c->model->buffer_bytes); }
static int copies_shown(const field_ctx *x) { return x->p->sim.bucket_copy_s > 0; }
/* Host noise is part of the host's issuing (host_busy_s), not a part of the iteration: its line
 * stands under "host issuing", and the wait for the slowest rank's noise under "waiting for
 * stragglers". */
static int noise_shown(const field_ctx *x) { return x->p->sim.host_jitter_s > 0; }
static void noise_note(strbuf *s, const field_ctx *x) {
  (void)x;
  strbuf_printf(s, "   (of the issuing: rank 0's host delay drawn; the slowest rank's is waited for)");
}
static int host_bound_shown(const field_ctx *x) { return x->p->sim.host_bound_s > 1e-9 * x->p->sim.iteration_s; }
/* Whether the ranks are CPU processes (device.kind cpu): their kernels, not a GPU, wait for the host. */
static int on_cpu(const field_ctx *x) {
  profile_device d;
  profile_get_device(x->c->profile, &d);
  return d.kind == PROFILE_DEVICE_CPU;
}
static void host_bound_note(strbuf *s, const field_ctx *x) {
  strbuf_printf(s, "   (of compute: %s, waiting for the host to issue)", on_cpu(x) ? "the kernels" : "the GPU idle");
}
/* A part of the iteration wherever there is jitter to wait for, compute's or the host's (host noise
 * alone makes the slowest rank's host late too; one GPU waits for none), and wherever it is not
 * zero: the parts shown are the JSON's and add up to the iteration. */
static int straggler_shown(const field_ctx *x) {
  const sim_result *r = &x->p->sim;
  return r->jitter_kind != PROFILE_JITTER_NONE || (r->host_jitter_s > 0 && r->gpus > 1) || r->straggler_wait_s > 0;
}
static void straggler_note(strbuf *s, const field_ctx *x) {
  const sim_result *r = &x->p->sim;
  if (r->jitter_kind != PROFILE_JITTER_NONE)
    strbuf_printf(s, "   (slowest %s's spread over the mean: %.6f s)", profile_rank_word(x->c->profile, 0), r->straggler_s);
  else strbuf_printf(s, "   (the slowest %s's host noise)", profile_rank_word(x->c->profile, 0));
}
static void tokens_note(strbuf *s, const field_ctx *x) {
  const model_t *m = x->c->model;
  if (strcmp(m->token_unit, "tokens") != 0)
    strbuf_printf(s, "   (%s/s: the model's tokens are %s, %ld a sample%s)", m->token_unit, m->token_unit, m->tokens_per_sample,
                  m->tokens_per_sample == 1 ? ", so this is samples/s" : "");
}
static void host_busy_note(strbuf *s, const field_ctx *x) {
  const char *w = on_cpu(x) ? "kernels" : "GPU";
  strbuf_printf(s, "   (%s busy %.6f s; the host waited for its %s %.6f s)", w, x->p->sim.device_busy_s, w, x->p->sim.device_bound_s);
}
static int channels_shown(const field_ctx *x) { return x->p->sim.gpus > 1 && x->c->framework == SIM_FRAMEWORK_DDP; }
/* NCCL's channels; gloo's and MPI's single ring (docs/simulation.md, "Communication backends"). */
static const char *channels_label(const field_ctx *x) {
  return x->c->backend == SIM_BACKEND_GLOO ? "gloo rings" : x->c->backend == SIM_BACKEND_MPI ? "MPI rings" : "NCCL channels";
}
static void channels_note(strbuf *s, const field_ctx *x) {
  const sim_result *r = &x->p->sim;
  strbuf_printf(s, "     x %.2f GB/s", r->channel_bw_Bps / 1e9);
  if (plan_gloo_tcp(x->c)) strbuf_printf(s, "   (TCP connections between the processes)");
  if (r->nics_used) strbuf_printf(s, "   (through %d NIC%s per node)", r->nics_used, r->nics_used > 1 ? "s" : "");
}
static void channels_after(strbuf *s, const field_ctx *x) {
  if (x->p->sim.channels_exhausted)
    strbuf_printf(s, "# note: the channel search stopped at its step budget: NCCL may find more bandwidth\n");
}
static void iteration_note(strbuf *s, const field_ctx *x) {
  (void)x;
  strbuf_printf(s, "   (the parts below indented by two add up to it)");
}
/* Under jitter, how the mean was taken; the iterations before the steady state, apart. */
static void iteration_after(strbuf *s, const field_ctx *x) {
  const predict_result *p = x->p;
  const sim_result *r = &p->sim;
  char lb[64];
  if (r->jittered && !isfinite(r->iteration_ci_s))
    strbuf_printf(s, "# jitter: the mean of %d iterations, too few steady cycles to know its confidence interval\n"
                     "# (--jitter-ci 0 runs exactly --iterations); the one-%s reference ran as many under the same jitter\n",
                  r->iterations_simulated, profile_rank_word(x->c->profile, 0));
  else if (r->jittered)
    strbuf_printf(s, "# jitter: the mean of %d iterations, +/- %.6f s (%.2f%%; 95%% confidence interval); the\n"
                     "# one-%s reference ran as many under the same jitter\n",
                  r->iterations_simulated, r->iteration_ci_s, 100 * r->iteration_ci_s / r->iteration_s, profile_rank_word(x->c->profile, 0));
  for (int i = 0; i < p->nearly; i++)
    strbuf_printf(s, "# iteration %d: %.6f s once (%s), before the steady state; not part of the mean\n", i + 1, p->early_s[i],
                  reducer_iter_name(&p->early[i], lb, sizeof lb));
}

/* ---- the table ---- */

#define AT(member, t) .type = t, .at = offsetof(predict_result, member)
#define FN(f) .type = FIELD_FN, .num = f
#define TIME "%14.6f s"

const field field_table[FIELD_COUNT] = {
    [FIELD_MODEL] = {"model", NULL, "name", FIELD_TEXT, FIELD_ALL, .text = model_text, .sweep = 1},
    [FIELD_TOPOLOGY] = {"topology", NULL, "name", FIELD_TEXT, FIELD_ALL, .text = topology_text, .sweep = 2},
    [FIELD_PROFILE] = {"profile", NULL, "name", FIELD_TEXT, FIELD_ALL, .text = profile_text, .sweep = 3},
    [FIELD_NODES] = {"nodes", NULL, "count", FIELD_NUMBER, FIELD_ALL, FN(nodes), .range = FIELD_ATLEAST1, .sweep = 4},
    [FIELD_GPUS_PER_NODE] = {"gpus_per_node", NULL, "count", FIELD_NUMBER, FIELD_ALL, FN(gpus_per_node), .sweep = 5},
    [FIELD_GPUS] = {"gpus", NULL, "count", FIELD_NUMBER, FIELD_ALL, AT(sim.gpus, FIELD_INT), .range = FIELD_ATLEAST1, .sweep = 6},
    [FIELD_BATCH_PER_GPU] = {"batch_per_gpu", NULL, "samples", FIELD_NUMBER, FIELD_ALL, AT(sim.batch, FIELD_LONG), .sweep = 7},
    [FIELD_PRECISION] = {"precision", NULL, "name", FIELD_NAME, FIELD_ALL, AT(sim.precision, FIELD_INT), .name_of = precision_name,
                         .sweep = 8},
    [FIELD_MODE] = {"mode", NULL, "name", FIELD_NAME, FIELD_DDP, FN(mode), .name_of = mode_name, .sweep = 10},
    [FIELD_FIDELITY] = {"fidelity", NULL, "name", FIELD_NAME, FIELD_DDP | FIELD_FSDP, FN(fidelity), .name_of = fidelity_name, .sweep = 11},
    [FIELD_PYTORCH] = {"pytorch", NULL, "release", FIELD_NAME, FIELD_ALL, FN(pytorch), .name_of = pytorch_name, .sweep = 12},
    [FIELD_BUCKET_CAP_MB] = {"bucket_cap_mb", NULL, "MB", FIELD_NUMBER, FIELD_DDP, FN(cap_mb), .range = FIELD_NONNEG, .sweep = 13},
    [FIELD_BUCKET_CAP_MB_GIVEN] = {"bucket_cap_mb_given", NULL, "0/1", FIELD_BOOL, FIELD_DDP, FN(cap_given), .sweep = 14},
    [FIELD_FIRST_BUCKET_BYTES] = {"first_bucket_bytes", NULL, "bytes", FIELD_NUMBER, FIELD_DDP, FN(first_bucket)},
    [FIELD_FIND_UNUSED_PARAMETERS] = {"find_unused_parameters", NULL, "0/1", FIELD_BOOL, FIELD_DDP, FN(find_unused)},
    [FIELD_STATIC_GRAPH] = {"static_graph", NULL, "0/1", FIELD_BOOL, FIELD_DDP, FN(static_graph)},
    [FIELD_DDP_ITERATION] = {"ddp_iteration", NULL, "iteration", FIELD_NUMBER, FIELD_DDP, FN(ddp_iteration)},
    [FIELD_BUCKET_LAYOUT] = {"bucket_layout", NULL, "name", FIELD_TEXT, FIELD_DDP, .text = layout_text},
    [FIELD_BEFORE_STEADY_STATE] = {"before_steady_state", NULL, "", FIELD_JSON, FIELD_DDP, .json = before_steady},
    [FIELD_ITERATIONS] = {"iterations", NULL, "iterations", FIELD_NUMBER, FIELD_ALL, FN(iterations)},
    [FIELD_NO_SYNC] = {"no_sync", NULL, "iterations", FIELD_NUMBER, FIELD_DDP, FN(no_sync), .sweep = 17},
    [FIELD_COMM_HOOK] = {"comm_hook", NULL, "name", FIELD_NAME, FIELD_DDP, FN(comm_hook), .name_of = hook_name, .sweep = 15},
    [FIELD_ITERATION_S] = {"iteration_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.iteration_s, FIELD_DOUBLE),
                           .interval = FIELD_IV_TIME, .range = FIELD_ITERATION, .sweep = 18, .line = 10, .label = "iteration",
                           .format = TIME, .note = iteration_note, .after = iteration_after},
    [FIELD_ITERATION_CI_S] = {"iteration_ci_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, FN(iteration_ci), .optional = 1,
                              .range = FIELD_NONNEG, .sweep = 53},
    [FIELD_SAMPLES_PER_S] = {"samples_per_s", NULL, "1/s", FIELD_NUMBER, FIELD_ALL, AT(samples_per_s, FIELD_DOUBLE),
                             .interval = FIELD_IV_RATE, .range = FIELD_RATE, .sweep = 19, .line = 160, .label = "samples/s",
                             .format = "%14.1f"},
    [FIELD_TOKENS_PER_S] = {"tokens_per_s", NULL, "1/s", FIELD_NUMBER, FIELD_ALL, AT(tokens_per_s, FIELD_DOUBLE),
                            .interval = FIELD_IV_RATE, .range = FIELD_RATE, .sweep = 20, .line = 170, .label = "tokens/s",
                            .format = "%14.0f", .note = tokens_note},
    [FIELD_TOKEN_UNIT] = {"token_unit", NULL, "name", FIELD_TEXT, FIELD_ALL, .text = token_unit_text, .sweep = 21},
    [FIELD_COMPUTE_S] = {"compute_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.compute_s, FIELD_DOUBLE), .range = FIELD_NONNEG,
                         .sweep = 24},
    [FIELD_FORWARD_S] = {"forward_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.forward_s, FIELD_DOUBLE), .range = FIELD_NONNEG,
                         .sweep = 25, .line = 50, .label = "  forward", .format = TIME},
    [FIELD_BACKWARD_S] = {"backward_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.backward_s, FIELD_DOUBLE),
                          .range = FIELD_NONNEG, .sweep = 26, .line = 60, .label = "  backward", .format = TIME},
    [FIELD_OPTIMIZER_S] = {"optimizer_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.optimizer_s, FIELD_DOUBLE),
                           .range = FIELD_NONNEG, .sweep = 27, .line = 70, .label = "  optimizer", .format = TIME},
    [FIELD_BUCKET_COPY_S] = {"bucket_copy_s", NULL, "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP, AT(sim.bucket_copy_s, FIELD_DOUBLE),
                             .range = FIELD_NONNEG, .sweep = 28, .line = 80, .label = "  bucket copies", .format = TIME,
                             .line_if = copies_shown},
    [FIELD_BUCKET_VIEW] = {"bucket_view", NULL, "0/1", FIELD_BOOL, FIELD_DDP, FN(bucket_view), .sweep = 16,
                           .column = "gradient_as_bucket_view"},
    [FIELD_HD_HOST_BUSY_S] = {"host_busy_s", "host_device", "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP, AT(sim.host_busy_s, FIELD_DOUBLE),
                              .range = FIELD_NONNEG, .line = 200, .label = "host issuing", .format = TIME,
                              .note = host_busy_note},
    [FIELD_HD_DEVICE_BUSY_S] = {"device_busy_s", "host_device", "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP,
                                AT(sim.device_busy_s, FIELD_DOUBLE), .range = FIELD_NONNEG},
    [FIELD_HD_HOST_BOUND_S] = {"host_bound_s", "host_device", "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP, AT(sim.host_bound_s, FIELD_DOUBLE),
                               .range = FIELD_NONNEG, .line = 205, .label = "host-bound", .format = TIME,
                               .line_if = host_bound_shown, .note = host_bound_note},
    [FIELD_HD_DEVICE_BOUND_S] = {"device_bound_s", "host_device", "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP,
                                 AT(sim.device_bound_s, FIELD_DOUBLE), .range = FIELD_NONNEG},
    [FIELD_HD_HOST_BOUND_MAX_S] = {"host_bound_max_s", "host_device", "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP,
                                   AT(sim.host_bound_max_s, FIELD_DOUBLE), .range = FIELD_NONNEG},
    [FIELD_HD_HOST_JITTER_S] = {"host_jitter_s", "host_device", "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP,
                                AT(sim.host_jitter_s, FIELD_DOUBLE), .range = FIELD_NONNEG, .line = 201,
                                .label = "  host noise", .format = TIME, .line_if = noise_shown, .note = noise_note},
    [FIELD_EXPOSED_COMM_S] = {"exposed_comm_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.exposed_comm_s, FIELD_DOUBLE),
                              .range = FIELD_NONNEG, .sweep = 29, .line = 90, .label = "  exposed communication", .format = TIME},
    [FIELD_STRAGGLER_WAIT_S] = {"straggler_wait_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.straggler_wait_s, FIELD_DOUBLE),
                                .range = FIELD_NONNEG, .sweep = 30, .line = 150, .label = "  waiting for stragglers",
                                .format = TIME, .line_if = straggler_shown, .note = straggler_note},
    [FIELD_STRAGGLER_S] = {"straggler_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.straggler_s, FIELD_DOUBLE),
                           .range = FIELD_NONNEG},
    [FIELD_FRAMEWORK] = {"framework", NULL, "name", FIELD_NAME, FIELD_ALL, FN(framework), .name_of = framework_name, .sweep = 9},
    [FIELD_BACKEND] = {"backend", NULL, "name", FIELD_NAME, FIELD_DDP | FIELD_FSDP, FN(backend), .name_of = backend_name},
    /* the host costs the run priced its ops with (predict_host: the profile's, the flags', or solved from a measured step) */
    [FIELD_HOST_LAUNCH_S] = {"host_launch_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(host_launch_s, FIELD_DOUBLE),
                             .range = FIELD_NONNEG},
    [FIELD_HOST_DISPATCH_S] = {"host_dispatch_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(host_dispatch_s, FIELD_DOUBLE),
                               .range = FIELD_NONNEG},
    [FIELD_MEASURED_STEP_S] = {"measured_step_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(measured_step_s, FIELD_DOUBLE),
                               .optional = 1, .range = FIELD_NONNEG, .line = 206, .label = "measured 1-GPU step",
                               .format = TIME, .line_if = measured_step_shown, .note = measured_step_note},
    [FIELD_HOST_SCALE] = {"host_scale", NULL, "factor", FIELD_NUMBER, FIELD_ALL, FN(host_scale), .optional = 1},
    [FIELD_DP_SCATTER_S] = {"scatter_s", "dataparallel", "s", FIELD_NUMBER, FIELD_DP, AT(sim.dp_scatter_s, FIELD_DOUBLE),
                            .range = FIELD_NONNEG, .sweep = 35, .column = "dp_scatter_s"},
    [FIELD_DP_REPLICATE_S] = {"replicate_s", "dataparallel", "s", FIELD_NUMBER, FIELD_DP, AT(sim.dp_replicate_s, FIELD_DOUBLE),
                              .range = FIELD_NONNEG, .sweep = 36, .column = "dp_replicate_s", .line = 100,
                              .label = "    replicate parameters", .format = TIME},
    [FIELD_DP_GATHER_S] = {"gather_s", "dataparallel", "s", FIELD_NUMBER, FIELD_DP, AT(sim.dp_gather_s, FIELD_DOUBLE),
                           .range = FIELD_NONNEG, .sweep = 37, .column = "dp_gather_s", .line = 110,
                           .label = "    gather outputs+grads", .format = TIME},
    [FIELD_DP_REDUCE_S] = {"reduce_s", "dataparallel", "s", FIELD_NUMBER, FIELD_DP, AT(sim.dp_reduce_s, FIELD_DOUBLE),
                           .range = FIELD_NONNEG, .sweep = 38, .column = "dp_reduce_s", .line = 120,
                           .label = "    reduce gradients", .format = TIME},
    [FIELD_DP_BACKWARD_GIL] = {"backward_gil", "dataparallel", "0/1", FIELD_BOOL, FIELD_DP, FN(backward_gil)},
    [FIELD_DP_GIL_SHARE] = {"gil_share", "dataparallel", "fraction", FIELD_NUMBER, FIELD_DP, FN(gil_share)},
    [FIELD_DP_HANDOVER_S] = {"handover_s", "dataparallel", "s", FIELD_NUMBER, FIELD_DP, FN(handover), .range = FIELD_NONNEG},
    [FIELD_DP_HOST_BUSY_S] = {"host_busy_s", "dataparallel", "s", FIELD_NUMBER, FIELD_DP, AT(sim.host_busy_s, FIELD_DOUBLE),
                              .range = FIELD_NONNEG},
    [FIELD_DP_HOST_BOUND_S] = {"host_bound_s", "dataparallel", "s", FIELD_NUMBER, FIELD_DP, AT(sim.host_bound_s, FIELD_DOUBLE),
                               .range = FIELD_NONNEG},
    [FIELD_LOADING_S] = {"loading_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.loading_s, FIELD_DOUBLE), .range = FIELD_NONNEG,
                         .sweep = 31, .line = 20, .label = "  loading (waiting)", .format = TIME, .line_if = loading_shown,
                         .note = loading_note},
    [FIELD_TRANSFER_S] = {"transfer_s", NULL, "s", FIELD_NUMBER, FIELD_ALL, AT(sim.transfer_s, FIELD_DOUBLE),
                          .range = FIELD_NONNEG, .sweep = 32, .line = 30, .label = "  host-to-device copy", .format = TIME,
                          .line_if = transfer_shown, .note = transfer_note},
    [FIELD_BUFFER_BROADCAST_S] = {"buffer_broadcast_s", NULL, "s", FIELD_NUMBER, FIELD_DDP,
                                  AT(sim.buffer_broadcast_s, FIELD_DOUBLE), .range = FIELD_NONNEG, .sweep = 33, .line = 40,
                                  .label = "  broadcast buffers", .format = TIME, .line_if = broadcast_shown,
                                  .note = broadcast_note},
    [FIELD_H2D] = {"h2d", NULL, "name", FIELD_NAME, FIELD_ALL, AT(sim.h2d, FIELD_INT), .name_of = h2d_name},
    [FIELD_NUM_WORKERS] = {"num_workers", NULL, "count", FIELD_NUMBER, FIELD_ALL, FN(num_workers)},
    [FIELD_LOAD_S_PER_BATCH] = {"load_s_per_batch", NULL, "s", FIELD_NUMBER, FIELD_ALL, FN(load_s)},
    [FIELD_JITTER] = {"jitter", NULL, "name", FIELD_NAME, FIELD_ALL, AT(sim.jitter_kind, FIELD_INT), .name_of = jitter_name},
    [FIELD_JITTER_CV] = {"jitter_cv", NULL, "fraction", FIELD_NUMBER, FIELD_ALL, AT(sim.jitter_cv, FIELD_DOUBLE)},
    [FIELD_SEED] = {"seed", NULL, "", FIELD_NUMBER, FIELD_ALL, FN(seed)},
    [FIELD_COMM_BUSY_S] = {"comm_busy_s", NULL, "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP, AT(sim.comm_busy_s, FIELD_DOUBLE),
                           .range = FIELD_NONNEG, .sweep = 34, .line = 190, .label = "communication busy", .format = TIME},
    [FIELD_COMM_SHARES_COMPUTE] = {"comm_shares_compute", NULL, "0/1", FIELD_BOOL, FIELD_ALL,
                                   AT(sim.shares_compute, FIELD_INT)},
    [FIELD_SINGLE_GPU_ITERATION_S] = {"single_gpu_iteration_s", NULL, "s", FIELD_NUMBER, FIELD_ALL,
                                      AT(single_gpu_iteration_s, FIELD_DOUBLE), .range = FIELD_ITERATION, .sweep = 23},
    [FIELD_SCALING_EFFICIENCY] = {"scaling_efficiency", NULL, "fraction", FIELD_NUMBER, FIELD_ALL,
                                  AT(scaling_efficiency, FIELD_DOUBLE), .range = FIELD_FRACTION, .sweep = 22, .line = 180,
                                  .label = "scaling efficiency", .format = "%14.1f %%", .scale = 100},
    [FIELD_GRADIENT_BYTES] = {"gradient_bytes", NULL, "bytes", FIELD_NUMBER, FIELD_ALL, FN(gradient_bytes), .line = 210,
                              .label = "gradients"},
    [FIELD_EXTRAPOLATED_OPS] = {"extrapolated_ops", NULL, "count", FIELD_NUMBER, FIELD_ALL,
                                AT(sim.extrapolated_ops, FIELD_INT)},
    [FIELD_MEASURED] = {"measured", NULL, "", FIELD_JSON, FIELD_ALL, .json = measured},
    [FIELD_LINKS_INTRA_BW_BPS] = {"intra_bw_Bps", "links", "B/s", FIELD_NUMBER, FIELD_ALL, AT(sim.intra_bw_Bps, FIELD_DOUBLE)},
    [FIELD_LINKS_INTRA_LAT_S] = {"intra_lat_s", "links", "s", FIELD_NUMBER, FIELD_ALL, AT(sim.intra_lat_s, FIELD_DOUBLE),
                                 .range = FIELD_NONNEG},
    [FIELD_LINKS_NIC_BW_BPS] = {"nic_bw_Bps", "links", "B/s", FIELD_NUMBER, FIELD_ALL, AT(sim.nic_bw_Bps, FIELD_DOUBLE)},
    [FIELD_LINKS_NIC_LAT_S] = {"nic_lat_s", "links", "s", FIELD_NUMBER, FIELD_ALL, AT(sim.nic_lat_s, FIELD_DOUBLE),
                               .range = FIELD_NONNEG},
    [FIELD_LINKS_CHANNELS] = {"channels", "links", "count", FIELD_NUMBER, FIELD_ALL, AT(sim.channels, FIELD_INT), .line = 220,
                              .label = "NCCL channels", .label_of = channels_label, .format = "%14.0f", .line_if = channels_shown,
                              .note = channels_note,
                              .after = channels_after},
    [FIELD_LINKS_CHANNEL_BW_BPS] = {"channel_bw_Bps", "links", "B/s", FIELD_NUMBER, FIELD_ALL,
                                    AT(sim.channel_bw_Bps, FIELD_DOUBLE)},
    [FIELD_LINKS_NICS_USED] = {"nics_used", "links", "count", FIELD_NUMBER, FIELD_ALL, AT(sim.nics_used, FIELD_INT)},
    [FIELD_LINKS_CHANNEL_SEARCH_EXHAUSTED] = {"channel_search_exhausted", "links", "0/1", FIELD_BOOL, FIELD_ALL,
                                              AT(sim.channels_exhausted, FIELD_INT)},
    [FIELD_BUCKETS_ITERATION_S] = {"buckets_iteration_s", NULL, "s", FIELD_NUMBER, FIELD_DDP | FIELD_FSDP,
                                   AT(sim.buckets_iteration_s, FIELD_DOUBLE), .range = FIELD_ITERATION},
    [FIELD_BUCKETS] = {"buckets", NULL, "", FIELD_JSON, FIELD_ALL, .json = buckets},
    [FIELD_FSDP_COLLECTIVES] = {"fsdp_collectives", NULL, "", FIELD_JSON, FIELD_FSDP, .json = fsdp_collectives},
    [FIELD_SIM_MESSAGES] = {"messages", "simulation", "count", FIELD_NUMBER, FIELD_ALL, AT(sim.messages, FIELD_LONG)},
    [FIELD_SIM_ITERATIONS] = {"iterations", "simulation", "iterations", FIELD_NUMBER, FIELD_ALL,
                              AT(sim.iterations_simulated, FIELD_INT)},
    [FIELD_SIM_RANKS_SIMULATED] = {"ranks_simulated", "simulation", "count", FIELD_NUMBER, FIELD_ALL,
                                   AT(sim.ranks_simulated, FIELD_INT)},
    [FIELD_SIM_WALL_S] = {"wall_s", "simulation", "s", FIELD_NUMBER, FIELD_ALL, AT(sim.wall_s, FIELD_DOUBLE),
                          .range = FIELD_NONNEG},
    [FIELD_SIM_PEAK_RSS_KB] = {"peak_rss_kb", "simulation", "KiB", FIELD_NUMBER, FIELD_ALL, AT(sim.peak_rss_kb, FIELD_LONG)},
    [FIELD_SIM_CLOSED_FORM] = {"closed_form", "simulation", "0/1", FIELD_BOOL, FIELD_ALL, AT(sim.closed_form, FIELD_INT)},
    [FIELD_MEMORY] = {"memory", NULL, "", FIELD_JSON, FIELD_ALL, .json = memory, .json_if = has_memory},
    [FIELD_BUDGET] = {"budget", NULL, "", FIELD_JSON, FIELD_ALL, .json = budget, .json_if = has_budget},
    [FIELD_INTERVAL] = {"interval", NULL, "", FIELD_JSON, FIELD_ALL, .json = interval, .json_if = has_interval},
    [FIELD_NBUCKETS] = {"buckets", NULL, "count", FIELD_NUMBER, 0, FN(nbuckets), .sweep = 39},
    [FIELD_MEMORY_PEAK_BYTES] = {"memory_peak_bytes", NULL, "bytes", FIELD_NUMBER, 0, FN(memory_peak), .sweep = 40},
    [FIELD_FITS] = {"fits", NULL, "0/1", FIELD_NUMBER, 0, FN(fits), .sweep = 41},
    [FIELD_MAX_BATCH_PER_GPU] = {"max_batch_per_gpu", NULL, "samples", FIELD_NUMBER, 0, FN(max_batch), .sweep = 42},
    [FIELD_TRAIN_S] = {"train_s", NULL, "s", FIELD_NUMBER, 0, FN(train_s), .interval = FIELD_IV_TIME, .range = FIELD_NONNEG,
                       .sweep = 43},
    [FIELD_GPU_HOURS] = {"gpu_hours", NULL, "GPU-hours", FIELD_NUMBER, 0, FN(gpu_hours), .interval = FIELD_IV_TIME, .sweep = 44},
    [FIELD_COST] = {"cost", NULL, "currency", FIELD_NUMBER, 0, FN(cost), .interval = FIELD_IV_TIME, .sweep = 45},
    [FIELD_CURRENCY] = {"currency", NULL, "name", FIELD_TEXT, 0, .text = currency_text, .sweep = 46},
    [FIELD_ENERGY_KWH] = {"energy_kwh", NULL, "kWh", FIELD_NUMBER, 0, FN(energy), .interval = FIELD_IV_TIME, .sweep = 47},
    [FIELD_CO2_KG] = {"co2_kg", NULL, "kg", FIELD_NUMBER, 0, FN(co2), .interval = FIELD_IV_TIME, .sweep = 48},
    [FIELD_ITERATION_S_LO] = {"iteration_s_lo", NULL, "s", FIELD_NUMBER, 0, FN(unknown), .range = FIELD_ITERATION, .sweep = 49},
    [FIELD_ITERATION_S_HI] = {"iteration_s_hi", NULL, "s", FIELD_NUMBER, 0, FN(unknown), .range = FIELD_ITERATION, .sweep = 50},
    [FIELD_SAMPLES_PER_S_LO] = {"samples_per_s_lo", NULL, "1/s", FIELD_NUMBER, 0, FN(unknown), .range = FIELD_RATE, .sweep = 51},
    [FIELD_SAMPLES_PER_S_HI] = {"samples_per_s_hi", NULL, "1/s", FIELD_NUMBER, 0, FN(unknown), .range = FIELD_RATE, .sweep = 52},
    /* the row's throughput over the first row's, and its paired interval (sweep_vs_first, sim/sweep.h) */
    [FIELD_SPEEDUP_VS_FIRST] = {"speedup_vs_first", NULL, "factor", FIELD_NUMBER, 0, FN(unknown), .sweep = 54},
    [FIELD_SPEEDUP_VS_FIRST_LO] = {"speedup_vs_first_lo", NULL, "factor", FIELD_NUMBER, 0, FN(unknown), .sweep = 55},
    [FIELD_SPEEDUP_VS_FIRST_HI] = {"speedup_vs_first_hi", NULL, "factor", FIELD_NUMBER, 0, FN(unknown), .sweep = 56},
};

int field_in_framework(const field *f, const field_ctx *x) {
  return (f->frameworks >> x->c->framework & 1u) != 0;
}

double field_value(const field *f, const field_ctx *x) {
  if (f->type == FIELD_FN) return f->num ? f->num(x) : NAN;
  const char *at = (const char *)x->p + f->at;
  switch (f->type) {
  case FIELD_DOUBLE: return *(const double *)at;
  case FIELD_INT: return *(const int *)at;
  case FIELD_LONG: return (double)*(const long *)at;
  default: return NAN;
  }
}

const char *field_text(const field *f, const field_ctx *x, double v, char *buf, size_t len) {
  if (f->kind == FIELD_TEXT) return f->text(x, buf, len);
  if (f->kind == FIELD_NAME) return f->name_of((int)v, buf, len);
  return NULL;
}

const char *field_column(const field *f) { return f->sweep ? (f->column ? f->column : f->name) : NULL; }

int field_sweep_columns(field_id *ids) {
  int n = 0;
  for (int k = 0; k < FIELD_COUNT; k++) n += field_table[k].sweep > 0;
  for (int k = 0; k < FIELD_COUNT; k++)
    if (field_table[k].sweep > 0 && field_table[k].sweep <= n) ids[field_table[k].sweep - 1] = (field_id)k;
  return n;
}

static int ends(const char *s, size_t n, const char *tail) {
  size_t t = strlen(tail);
  return n > t && strncmp(s + n - t, tail, t) == 0;
}

field_range field_range_of(const char *name) {
  size_t n = strlen(name);
  if (ends(name, n, "_lo") || ends(name, n, "_hi")) n -= 3;
  for (int k = 0; k < FIELD_COUNT; k++) {
    const field *f = &field_table[k];
    const char *col = field_column(f);
    if ((col && strlen(col) == n && !strncmp(col, name, n)) || (!f->group && strlen(f->name) == n && !strncmp(f->name, name, n)))
      return f->range;
  }
  if (ends(name, n, "_per_s")) return FIELD_RATE;
  if (ends(name, n, "iteration_s")) return FIELD_ITERATION; /* recommend's mean_iteration_s */
  if (ends(name, n, "_s")) return FIELD_NONNEG;
  return FIELD_ANY;
}

int field_range_ok(field_range r, double v, const char **must) {
  static const char *const what[] = {"", "a count >= 1", "a rate > 0", "an efficiency above 0 and at most 1 (100%)",
                                     "a number >= 0", "an iteration's length > 0"};
  *must = what[r];
  if (r == FIELD_ANY) return 1;
  if (!isfinite(v)) return 0;
  switch (r) {
  case FIELD_ATLEAST1: return v >= 1 && v == floor(v);
  case FIELD_RATE: return v > 0;
  case FIELD_FRACTION: return v > 0 && v <= 1 + 1e-9;
  case FIELD_NONNEG: return v >= 0;
  case FIELD_ITERATION: return v > 0;
  default: return 1;
  }
}
