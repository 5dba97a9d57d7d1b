#include "report.h"

#include <math.h>

#include "coll.h"
#include "cost.h"
#include "fields.h"
#include "ncclmodel.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static field_ctx context(const sim_config *c, const predict_result *p, const report_buyer *b) {
  field_ctx x = {.c = c, .p = p};
  if (b) x.mem = b->mem, x.job = b->job, x.budget = b->budget, x.iv = b->iv;
  return x;
}

/* A row's value as JSON; NULL when out of memory. */
static cJSON *json_value(const field *f, const field_ctx *x) {
  char buf[64];
  double v = f->kind == FIELD_TEXT || f->kind == FIELD_JSON ? 0 : field_value(f, x);
  switch (f->kind) {
  case FIELD_NUMBER: return cJSON_CreateNumber(v);
  case FIELD_BOOL: return cJSON_CreateBool(v != 0);
  case FIELD_NAME:
  case FIELD_TEXT: return cJSON_CreateString(field_text(f, x, v, buf, sizeof buf));
  default: return f->json(x);
  }
}

cJSON *report_predict_json(const sim_config *c, const predict_result *p, const report_buyer *b) {
  field_ctx x = context(c, p, b);
  cJSON *o = cJSON_CreateObject();
  for (int k = 0; o && k < FIELD_COUNT; k++) {
    const field *f = &field_table[k];
    if (!field_in_framework(f, &x) || (f->json_if && !f->json_if(&x))) continue;
    if (f->optional && isnan(field_value(f, &x))) continue;
    cJSON *in = o;
    if (f->group && !(in = cJSON_GetObjectItemCaseSensitive(o, f->group)) && !(in = cJSON_AddObjectToObject(o, f->group))) goto fail;
    cJSON *v = json_value(f, &x);
    if (!v || !cJSON_AddItemToObject(in, f->name, v)) {
      cJSON_Delete(v);
      goto fail;
    }
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

static void fmt_bytes(char *buf, size_t len, double b) {
  if (b >= 1024.0 * 1024.0) snprintf(buf, len, "%.2f MiB", b / (1024.0 * 1024.0));
  else if (b >= 1024.0) snprintf(buf, len, "%.1f KiB", b / 1024.0);
  else snprintf(buf, len, "%.0f B", b);
}

/* What the table says of the run before its lines: the job, the scenario. */
static void table_head(strbuf *s, const field_ctx *x) {
  const sim_config *c = x->c;
  const predict_result *p = x->p;
  const sim_result *r = &p->sim;
  char vb[16], lb[64];
  const char *fid = field_text(&field_table[FIELD_FIDELITY], x, c->fidelity, vb, sizeof vb);
  const char *per = profile_rank_word(c->profile, 0);
  strbuf_printf(s, "# %s on %d x %d %s (%s, profile %s)%s\n", c->model->name, c->nodes, r->gpus / c->nodes,
                profile_rank_word(c->profile, 1), c->topo->name, profile_name(c->profile),
                c->framework == SIM_FRAMEWORK_DP ? ", DataParallel" : "");
  if (c->framework == SIM_FRAMEWORK_DDP) {
    strbuf_printf(s, "# batch %ld/%s, %s, %s fidelity", r->batch, per, model_dtype_name(r->precision), fid);
    if (c->mode == SIM_MODE_FLAT) {
      strbuf_printf(s, ", flat: one all-reduce of every gradient after backward");
    } else {
      if (c->pytorch > 0 && c->pytorch < REDUCER_VERSION_C10D) /* no bucket_cap_mb: the release's own MiB */
        strbuf_printf(s, "\n# PyTorch %s DDP, %g MiB buckets (no bucket_cap_mb before 1.0), %s: ",
                      reducer_version_name(c->pytorch, vb, sizeof vb), sim_bucket_cap_mb(c), sim_backend_name(c->backend));
      else
        strbuf_printf(s, "\n# PyTorch %s DDP, bucket_cap_mb %g%s%s%s: ", reducer_version_name(c->pytorch, vb, sizeof vb),
                      sim_bucket_cap_mb(c), c->bucket_cap_mb > 0 ? "" : " (default)",
                      c->find_unused ? ", find_unused_parameters" : "", c->static_graph ? ", static_graph" : "");
      if (c->ddp_iteration > 0) strbuf_printf(s, "iteration %d, ", c->ddp_iteration);
      else strbuf_printf(s, "steady state, ");
      strbuf_printf(s, "%s", reducer_iter_name(&p->steady, lb, sizeof lb));
    }
    if (c->no_sync > 1) strbuf_printf(s, ", all-reduce every %d iterations", c->no_sync);
    const char *hook = field_text(&field_table[FIELD_COMM_HOOK], x, c->comm_hook, vb, sizeof vb);
    if (c->comm_hook != SIM_HOOK_NONE) strbuf_printf(s, ", %s compression hook", hook);
  } else if (c->framework == SIM_FRAMEWORK_FSDP) {
    strbuf_printf(s, "# batch %ld/%s, %s, %s fidelity\n# FSDP2 (fully_shard), units %s, reshard_after_forward %s", r->batch, per,
                  model_dtype_name(r->precision), fid, c->fsdp_units ? c->fsdp_units : "the numbered blocks (default)",
                  c->fsdp_reshard ? "True" : "False");
    if (c->fsdp_param_dtype >= 0) strbuf_printf(s, ", param_dtype %s", model_dtype_name((model_dtype)c->fsdp_param_dtype));
    if (c->fsdp_reduce_dtype >= 0) strbuf_printf(s, ", reduce_dtype %s", model_dtype_name((model_dtype)c->fsdp_reduce_dtype));
    if (c->fsdp_forward_prefetch) strbuf_printf(s, ", forward prefetch %d", c->fsdp_forward_prefetch);
    strbuf_printf(s, "\n# \"bucket copies\": FSDP's copies out of the all-gathers and into the reduce-scatters");
  } else {
    strbuf_printf(s, "# batch %ld/%s, %s, phases in order, one after another%s", r->batch, per, model_dtype_name(r->precision),
                  sim_dp_backward_gil(c) ? ", backward under the GIL" : "");
  }
  strbuf_printf(s, "\n");
}

/* The table's lines: each row with a line, in line order. */
static void table_lines(strbuf *s, const field_ctx *x) {
  for (int last = 0;;) {
    const field *f = NULL;
    for (int k = 0; k < FIELD_COUNT; k++)
      if (field_table[k].line > last && (!f || field_table[k].line < f->line)) f = &field_table[k];
    if (!f) return;
    last = f->line;
    if (!field_in_framework(f, x) || (f->line_if && !f->line_if(x))) continue;
    double v = field_value(f, x) * (f->scale ? f->scale : 1);
    strbuf_printf(s, "%-24s ", f->label_of ? f->label_of(x) : f->label);
    if (f->format) {
      strbuf_printf(s, f->format, v);
    } else {
      char bb[32];
      fmt_bytes(bb, sizeof bb, v);
      strbuf_printf(s, "%14s", bb);
    }
    if (f->note) f->note(s, x);
    strbuf_printf(s, "\n");
    if (f->after) f->after(s, x);
  }
}

/* The buyer's lines: the memory, the budget, the interval of the main figures. */
static void table_buyer(strbuf *s, const report_buyer *b, double samples_per_s, int *whole) {
  char *mt = memory_table(b->mem), *bt = b->budget ? budget_table(b->job, b->budget) : NULL;
  *whole = mt && (bt || !b->budget);
  if (*whole) strbuf_printf(s, "#\n%s%s%s", mt, bt ? "#\n" : "", bt ? bt : "");
  free(mt), free(bt);
  const interval_t *iv = b->iv;
  if (!*whole || !iv) return;
  strbuf_printf(s, "#\n%-24s %14.6f .. %.6f s   (%.0f%%; profile: %d draws; validated: %d published point%s of this kind, spread of %d",
                "iteration interval", iv->lo_s, iv->hi_s, 100 * iv->level, iv->draws, iv->validated_points,
                iv->validated_points == 1 ? "" : "s", iv->validated_all_points);
  if (iv->measured_steps > 0)
    strbuf_printf(s, "; measured: %ld steps, spread %.1f%%", iv->measured_steps, 100 * iv->measured_rel_sd);
  strbuf_printf(s, ")\n");
  double lo, hi;
  interval_scale(iv, samples_per_s, 0, &lo, &hi);
  strbuf_printf(s, "%-24s %14.1f .. %.1f\n", "samples/s interval", lo, hi);
  if (b->budget) {
    /* what follows the iteration at the same power and price scales with it (docs/memory.md) */
    const budget_result *r = b->budget;
    interval_scale(iv, r->train_s / 3600, 1, &lo, &hi);
    strbuf_printf(s, "%-24s %14.2f .. %.2f h\n", "time to train interval", lo, hi);
    interval_scale(iv, r->gpu_hours, 1, &lo, &hi);
    strbuf_printf(s, "%-24s %14.1f .. %.1f\n", "GPU-hours interval", lo, hi);
    if (r->has_cost) {
      interval_scale(iv, r->cost, 1, &lo, &hi);
      strbuf_printf(s, "%-24s %14.2f .. %.2f\n", "cost interval", lo, hi);
    }
    if (r->has_energy) {
      interval_scale(iv, r->energy_kwh, 1, &lo, &hi);
      strbuf_printf(s, "%-24s %14.1f .. %.1f kWh\n", "energy interval", lo, hi);
    }
    if (r->has_co2) {
      interval_scale(iv, r->co2_kg, 1, &lo, &hi);
      strbuf_printf(s, "%-24s %14.1f .. %.1f kg\n", "CO2 interval", lo, hi);
    }
  }
  /* Without published runs of the kind, the validated part is centred on all of them; without any
   * (a data dir of the user's own), the interval holds none of ddpsim's own error. Said either way,
   * lest it read as what it is not. */
  if (!iv->validated_all_points)
    strbuf_printf(s, "# note: no published run to validate against (the data dir has no validate/published.txt): the\n"
                     "#   interval is the profile's stated uncertainty alone, not ddpsim's own error (docs/accuracy.md)\n");
  else if (!iv->validated_points)
    strbuf_printf(s, "# note: no published run of this profile and precision: the validated part is the error over all %d\n"
                     "#   published points, centred on their mean (docs/memory.md, \"How sure\")\n", iv->validated_all_points);
}

/* The bucket or collective times below are the last simulated iteration's (sim_result's
 * buckets_iteration_s), from its start: said with its length wherever it is not the mean above by
 * more than rounding (jitter, no_sync, DataLoader's batches arriving in bursts of its workers). */
static void last_iteration(strbuf *s, const sim_config *c, const sim_result *r, const char *what) {
  if (fabs(r->buckets_iteration_s - r->iteration_s) <= 1e-9 * r->iteration_s) return;
  strbuf_printf(s, "#\n# %s of the last simulated iteration (%.6f s; the mean above is over every steady one%s)\n", what,
                r->buckets_iteration_s, r->jittered ? ", under jitter" : c->load_s > 0 ? ", the DataLoader's batches arriving unevenly" : "");
}

char *report_predict_table(const sim_config *c, const predict_result *p, const report_buyer *b) {
  const sim_result *r = &p->sim;
  field_ctx x = context(c, p, b);
  strbuf s = {0};
  table_head(&s, &x);
  table_lines(&s, &x);
  if (r->ranks_simulated > 0 && r->ranks_simulated < r->gpus)
    strbuf_printf(&s, "# simulated %d of the %d %s: every node does the same (no jitter), so 2 nodes stand for all\n",
                  r->ranks_simulated, r->gpus, profile_rank_word(c->profile, 1));
  if (r->extrapolated_ops) strbuf_printf(&s, "# note: %d op cost(s) extrapolated outside the profile's measured range\n", r->extrapolated_ops);
  cost_measured_info mi;
  cost_measured(c, r->batch, r->precision, &mi);
  if (mi.used)
    strbuf_printf(&s, "# measured: %d of %d ops priced from their times measured on %s (torch %s, median of %ld steps, %s)\n",
                  mi.ops, mi.total, mi.device, c->model->measured.torch, c->model->measured.steps, c->model->measured.date);
  else if (mi.ops)
    strbuf_printf(&s, "# warning: the model's measured times (%d ops, on %s) were ignored: %s\n", mi.ops, mi.device, mi.why);
  if (c->framework == SIM_FRAMEWORK_DDP) {
    last_iteration(&s, c, r, "buckets");
    strbuf_printf(&s, "#\n# %-4s %12s %9s %12s %12s %12s %12s %8s %8s  %s\n", "bkt", "bytes", "params", "ready_s", "start_s",
                  "end_s", "wait_s", "algbw", "busbw", "algorithm");
    for (int k = 0; k < r->plan.n; k++) {
      const sim_bucket_time *t = &r->buckets[k];
      char bb[32];
      fmt_bytes(bb, sizeof bb, (double)t->bytes);
      double alg, bus;
      field_bucket_bw(r, t, &alg, &bus);
      strbuf_printf(&s, "  %-4d %12s %9d %12.6f %12.6f %12.6f %12.6f %8.2f %8.2f  ", k, bb, r->plan.b[k].ntensors, t->ready_s,
                    t->comm_start_s, t->comm_end_s, t->comm_start_s - t->ready_s, alg, bus);
      /* NCCL's algorithm and protocol; gloo's and MPI's own ring (docs/simulation.md) */
      if (c->backend == SIM_BACKEND_NCCL)
        strbuf_printf(&s, "%s/%s\n", nccl_algo_name((nccl_algo)t->algo), nccl_proto_name((nccl_proto)t->proto));
      else strbuf_printf(&s, "%s ring\n", sim_backend_name(c->backend));
    }
  }
  if (c->framework == SIM_FRAMEWORK_FSDP && r->nfsdp > 0) {
    last_iteration(&s, c, r, "collectives");
    strbuf_printf(&s, "#\n# %-4s %-14s %-28s %-8s %12s %12s %12s  %s\n", "coll", "collective", "unit", "before", "bytes", "start_s",
                  "end_s", "nccl");
    for (int k = 0; k < r->nfsdp; k++) {
      const sim_fsdp_coll *t = &r->fsdp[k];
      char bb[32];
      fmt_bytes(bb, sizeof bb, t->bytes);
      strbuf_printf(&s, "  %-4d %-14s %-28.28s %-8s %12s %12.6f %12.6f  %s/%s\n", k, coll_get((coll_kind)t->kind)->name,
                    t->unit[0] ? t->unit : "<root>", t->before, bb, t->start_s, t->end_s, nccl_algo_name((nccl_algo)t->algo),
                    nccl_proto_name((nccl_proto)t->proto));
    }
  }
  int whole = 1;
  if (b && b->mem) table_buyer(&s, b, p->samples_per_s, &whole);
  if (!whole) {
    strbuf_free(&s);
    return NULL;
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
    cJSON_AddItemToObject(j, "params", field_bucket_params(m, &plan->b[b], 1));
    cJSON_AddItemToObject(j, "param_indices", field_bucket_params(m, &plan->b[b], 0));
    if (!comm) continue;
    const plan_coll *pc = &comm->coll[b];
    double alg, bus;
    coll_nccl_tests_bw(COLL_ALLREDUCE, pc->bytes, pc->estimate_s, comm->ranks, &alg, &bus);
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
  /* The gradients' own types, as the buckets hold them (autocast: fp32 gradients of an fp16 run). */
  char types[64] = "";
  int seen[MODEL_DTYPE_COUNT] = {0};
  for (int b = 0; b < plan->n; b++) {
    int d = plan->b[b].dtype_key;
    if (d < 0 || d >= MODEL_DTYPE_COUNT || seen[d]++) continue;
    size_t used = strlen(types);
    snprintf(types + used, sizeof types - used, "%s%s", used ? "+" : "", model_dtype_name((model_dtype)d));
  }
  strbuf_printf(&s, "# %s, %s run, %s gradients, %d buckets in reduction order\n", m->name, model_dtype_name(run),
                types[0] ? types : model_dtype_name(run), plan->n);
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
      coll_nccl_tests_bw(COLL_ALLREDUCE, pc->bytes, pc->estimate_s, comm->ranks, &alg, &bus);
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

char *report_sweep_best(const double *caps_mb, const double *iteration_s, const sim_config *cfgs, const interval_t *ivs, int n) {
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
  else {
    double lo, hi, r = iteration_s[second] / iteration_s[best];
    strbuf_printf(&s, "# best bucket cap: %g MB, %.2f%% faster than the next best (%g MB", caps_mb[best], 100.0 * margin,
                  caps_mb[second]);
    if (cfgs && ivs && interval_pair(&cfgs[best], &ivs[best], &cfgs[second], &ivs[second], &lo, &hi))
      strbuf_printf(&s, "; paired %.0f%% interval %+.2f%% .. %+.2f%%", 100 * ivs[best].level, 100 * (r * lo - 1),
                    100 * (r * hi - 1));
    strbuf_printf(&s, ")\n");
  }
  return strbuf_take(&s);
}

