/* memory: DDP's memory per GPU, part by part (memory.h; derivation and sources: docs/memory.md). */
#include "memory.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "bucket.h"
#include "framework.h"
#include "fsdp.h"
#include "profile.h"
#include "strbuf.h"

/* State copies per parameter element, by optimizer (torch/optim/sgd.py, adam.py, adamw.py, rmsprop.py, adagrad.py at v2.5.0: SGD keeps
 * momentum_buffer only with momentum; Adam and AdamW exp_avg and exp_avg_sq (amsgrad adds a third,
 * not modelled); RMSprop square_avg, plus momentum_buffer with momentum (and grad_avg when
 * centered, not modelled); Adagrad sum). Their `step` counters are host tensors: not GPU memory. */
static const int optim_states[MODEL_OPTIM_COUNT] = {
    [MODEL_OPTIM_UNKNOWN] = -1, [MODEL_OPTIM_NONE] = 0, [MODEL_OPTIM_SGD] = 0, [MODEL_OPTIM_SGD_MOMENTUM] = 1,
    [MODEL_OPTIM_ADAM] = 2, [MODEL_OPTIM_ADAMW] = 2, [MODEL_OPTIM_RMSPROP] = 1, [MODEL_OPTIM_RMSPROP_MOMENTUM] = 2,
    [MODEL_OPTIM_ADAGRAD] = 1};

int memory_optim_states(model_optim o) { return o >= 0 && o < MODEL_OPTIM_COUNT ? optim_states[o] : -1; }

/* PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp; c10/core/AllocatorConfig.h in
 * 2.x): every block is rounded up to kMinBlockSize (512 B); requests up to kSmallSize (1 MiB) are
 * packed into 2 MiB segments, those below kMinLargeAlloc (10 MiB) into 20 MiB segments, larger
 * ones get their own segment rounded up to kRoundLarge (2 MiB). What a persistent tensor of
 * `bytes` reserves beyond its bytes: */
static double alloc_slack(double bytes) {
  const double min_block = 512, min_large = 10.0 * 1024 * 1024, round_large = 2.0 * 1024 * 1024;
  if (bytes <= 0) return 0;
  double r = bytes < min_large ? ceil(bytes / min_block) * min_block : ceil(bytes / round_large) * round_large;
  return r - bytes;
}

int memory_estimate(const sim_config *c, model_optim optim, memory_parts *out, err_t *e) {
  const model_t *m = c->model;
  memory_parts *o = out;
  *o = (memory_parts){0};
  profile_device dev;
  profile_get_device(c->profile, &dev);
  o->host_memory = dev.kind == PROFILE_DEVICE_CPU;
  o->batch = sim_batch(c);
  o->precision = sim_precision(c);
  o->optim = optim != MODEL_OPTIM_UNKNOWN ? optim : m->optim;
  o->optim_states = memory_optim_states(o->optim);
  int states = o->optim_states < 0 ? 0 : o->optim_states; /* unknown: not counted, and said */
  int half = o->precision != MODEL_FP32;
  /* A framework that shards (FSDP) keeps one shard of every parameter, its gradient and its optimizer
   * state: its row's shard of each (FSDP2: ceil(dim0 / world) rows of dim 0, sim/fsdp.h). */
  const framework_row *fw = framework_get(c->framework);
  int world = framework_shard_world(c), shards = fw && fw->shard_numel;
  for (int i = 0; i < m->nparams; i++) {
    const model_param *pm = &m->params[i];
    double share = shards ? (double)fw->shard_numel(pm, world) / (double)pm->numel : 1.0;
    double n = (double)pm->numel * share, b = (double)model_param_bytes(m, i, o->precision) * share;
    /* A parameter that runs in 16 bits keeps an fp32 master copy and fp32 master gradient; the
     * optimizer steps the master copy, so its state is fp32 too. */
    int master = half && model_param_dtype(&m->params[i], o->precision) != MODEL_FP32;
    double state_elem = master ? 4.0 : b / n;
    o->params_bytes += b;
    o->grads_bytes += b;
    o->allocator_bytes += 2 * alloc_slack(b);
    if (master) {
      o->master_bytes += 2 * 4.0 * n;
      o->allocator_bytes += 2 * alloc_slack(4.0 * n);
    }
    o->optim_bytes += states * state_elem * n;
    o->allocator_bytes += states * alloc_slack(state_elem * n);
  }
  /* Frozen parameters (requires_grad=False): the parameter alone, no gradient, master copy or state. */
  for (int i = 0; i < m->nfrozen; i++) {
    const model_param *pm = &m->frozen[i];
    double share = shards ? (double)fw->shard_numel(pm, world) / (double)pm->numel : 1.0;
    double b = (double)pm->numel * (double)model_dtype_size(model_param_dtype(pm, o->precision)) * share;
    o->params_bytes += b;
    o->allocator_bytes += alloc_slack(b);
  }
  /* DDP's buckets: one flat tensor each (reducer.cpp, initialize_buckets), a second copy of the
   * gradients unless they are views of it; flat mode flattens every gradient into one buffer. */
  if (c->framework == SIM_FRAMEWORK_DDP && (!c->bucket_view || c->mode == SIM_MODE_FLAT)) {
    bucket_plan plan;
    reducer_iter it;
    int rc;
    sim_reducer_iteration(c, &it);
    if (c->mode == SIM_MODE_FLAT) rc = bucket_plan_flat(m, o->precision, &plan, e);
    else {
      bucket_walk w;
      reducer_walk(&it, &w);
      rc = bucket_plan_walk(m, o->precision, &w, &plan, e);
    }
    if (rc) return rc;
    for (int b = 0; b < plan.n; b++) {
      o->buckets_bytes += (double)plan.b[b].bytes;
      o->allocator_bytes += alloc_slack((double)plan.b[b].bytes);
    }
    bucket_plan_free(&plan);
  }
  /* FSDP's unsharded parameters at the end of forward: the root's (it never reshards); with
   * reshard_after_forward the unit computing and the one whose all-gather buffer FSDP retains for
   * the next (two of the largest), else every unit's (docs/fsdp.md, "Memory"). */
  if (shards && world > 1) {
    fsdp_unit *u = NULL;
    int nu = 0, rc = fsdp_units(c, world, &u, &nu, e);
    if (rc) return rc;
    double big = 0, all = 0;
    for (int k = 1; k < nu; k++) {
      all += u[k].param_bytes;
      if (u[k].param_bytes > big) big = u[k].param_bytes;
    }
    o->unsharded_bytes = u[0].param_bytes + (c->fsdp_reshard ? fmin(2 * big, all) : all);
    o->allocator_bytes += alloc_slack(o->unsharded_bytes);
    free(u);
  }
  o->buffers_bytes = (double)m->buffer_bytes;
  o->allocator_bytes += alloc_slack(o->buffers_bytes);
  if (m->has_saved) {
    double run = (double)model_dtype_size(o->precision);
    o->activations_known = 1;
    o->activations_bytes = run * (double)model_dim_value(m->saved_elems, o->batch) + (double)model_dim_value(m->saved_bytes, o->batch);
    o->per_sample_bytes = run * (m->saved_elems.per_batch ? (double)m->saved_elems.v : 0) +
                          (m->saved_bytes.per_batch ? (double)m->saved_bytes.v : 0);
  }
  profile_device d;
  profile_get_device(c->profile, &d);
  o->context_bytes = d.cuda_context_bytes;
  o->device_bytes = d.memory_bytes;
  o->peak_bytes = o->params_bytes + o->unsharded_bytes + o->grads_bytes + o->buckets_bytes + o->master_bytes + o->optim_bytes +
                  o->activations_bytes + o->buffers_bytes + o->context_bytes + o->allocator_bytes;
  return ERR_OK;
}

long memory_max_batch(const memory_parts *m) {
  if (!(m->device_bytes > 0) || !m->activations_known) return -1;
  double fixed = m->peak_bytes - m->per_sample_bytes * (double)m->batch;
  if (fixed + m->per_sample_bytes > m->device_bytes) return 0;
  if (!(m->per_sample_bytes > 0)) return MODEL_BATCH_MAX;
  double b = floor((m->device_bytes - fixed) / m->per_sample_bytes);
  return b > (double)MODEL_BATCH_MAX ? MODEL_BATCH_MAX : (long)b;
}

int memory_oom(const memory_parts *m) { return m->device_bytes > 0 && m->peak_bytes > m->device_bytes; }

void memory_oom_message(const memory_parts *m, char *buf, size_t len) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  long fit = memory_max_batch(m);
  char tail[160];
  double fixed = m->peak_bytes - m->per_sample_bytes * (double)m->batch;
  if (fit > 0) snprintf(tail, sizeof tail, "largest batch that fits: %ld", fit);
  else if (fit == 0 && fixed > m->device_bytes)
    snprintf(tail, sizeof tail, "no batch fits (the parts that do not grow with the batch exceed it)");
  else if (fit == 0)
    snprintf(tail, sizeof tail, "no batch fits (the parts that do not grow with the batch, %.2f GiB, and one sample's activations, %.2f GiB, exceed it)",
             fixed / gib, m->per_sample_bytes / gib);
  else snprintf(tail, sizeof tail, "the activations are unknown (the model file has no saved line)");
  snprintf(buf, len, "OOM at batch %ld: %.2f of %.2f GiB; %s", m->batch, m->peak_bytes / gib, m->device_bytes / gib, tail);
}

/* The parts in one table: JSON name, table label, offset in memory_parts. */
static const struct {
  const char *json, *label;
  size_t off;
} parts[] = {
    {"params_bytes", "parameters", offsetof(memory_parts, params_bytes)},
    {"grads_bytes", "gradients", offsetof(memory_parts, grads_bytes)},
    {"unsharded_bytes", "FSDP unsharded units", offsetof(memory_parts, unsharded_bytes)},
    {"buckets_bytes", "DDP buckets", offsetof(memory_parts, buckets_bytes)},
    {"master_bytes", "fp32 master copies", offsetof(memory_parts, master_bytes)},
    {"optim_bytes", "optimizer state", offsetof(memory_parts, optim_bytes)},
    {"activations_bytes", "activations (saved)", offsetof(memory_parts, activations_bytes)},
    {"buffers_bytes", "buffers", offsetof(memory_parts, buffers_bytes)},
    {"context_bytes", "CUDA context", offsetof(memory_parts, context_bytes)},
    {"allocator_bytes", "allocator rounding", offsetof(memory_parts, allocator_bytes)},
};
#define NPARTS (sizeof parts / sizeof *parts)

static double part(const memory_parts *m, size_t i) { return *(const double *)((const char *)m + parts[i].off); }

cJSON *memory_json(const memory_parts *m) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "batch_per_gpu", (double)m->batch);
  cJSON_AddStringToObject(o, "optimizer", model_optim_name(m->optim));
  cJSON_AddNumberToObject(o, "optimizer_states", m->optim_states);
  for (size_t i = 0; i < NPARTS; i++) cJSON_AddNumberToObject(o, parts[i].json, part(m, i));
  cJSON_AddBoolToObject(o, "activations_known", m->activations_known);
  cJSON_AddNumberToObject(o, "per_sample_bytes", m->per_sample_bytes);
  cJSON_AddNumberToObject(o, "peak_bytes", m->peak_bytes);
  if (m->device_bytes > 0) {
    cJSON_AddNumberToObject(o, "device_bytes", m->device_bytes);
    cJSON_AddBoolToObject(o, "fits", !memory_oom(m));
  } else {
    cJSON_AddNullToObject(o, "device_bytes");
    cJSON_AddNullToObject(o, "fits");
  }
  long b = memory_max_batch(m);
  if (b >= 0) cJSON_AddNumberToObject(o, "max_batch_per_gpu", (double)b);
  else cJSON_AddNullToObject(o, "max_batch_per_gpu");
  return o;
}

char *memory_table(const memory_parts *m) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  strbuf s = {0};
  strbuf_printf(&s, "%-24s %14.3f GiB (per %s at batch %ld, %s, %s; the parts below add up to it)\n", "memory peak",
                m->peak_bytes / gib, m->host_memory ? "process" : "GPU", m->batch, model_dtype_name(m->precision), model_optim_name(m->optim));
  for (size_t i = 0; i < NPARTS; i++) {
    int unknown = (parts[i].off == offsetof(memory_parts, activations_bytes) && !m->activations_known) ||
                  (parts[i].off == offsetof(memory_parts, optim_bytes) && m->optim_states < 0);
    if (part(m, i) == 0 && !unknown) continue;
    char label[40];
    snprintf(label, sizeof label, "  %s", parts[i].label);
    strbuf_printf(&s, "%-24s %14.3f GiB%s\n", label, part(m, i) / gib,
                  !unknown ? "" : parts[i].off == offsetof(memory_parts, activations_bytes) ? "   (unknown: the model file has no saved line)"
                                         : "   (unknown: the model file has no optim line; give --optimizer)");
  }
  if (m->device_bytes > 0) {
    long b = memory_max_batch(m);
    strbuf_printf(&s, "%-24s %14.3f GiB   (%s", m->host_memory ? "host memory" : "card memory", m->device_bytes / gib,
                  memory_oom(m) ? "does NOT fit" : "fits");
    if (b >= 0) strbuf_printf(&s, "; largest batch that fits: %ld", b);
    strbuf_printf(&s, ")\n");
  } else {
    strbuf_printf(&s, "# the profile does not say the card's memory (device.memory_bytes): fit not checked\n");
  }
  return strbuf_take(&s);
}
