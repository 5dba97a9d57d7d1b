#include "plan.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"

int plan_job(const sim_config *c, int *gpn_out, long *batch_out, model_dtype *prec_out, err_t *e) {
  const model_t *m = c->model;
  if (!m || !c->topo || !c->profile) return err_set(e, ERR_INPUT, "a model, a topology and a profile are needed");
  int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : c->topo->gpus_per_node;
  long batch = sim_batch(c);
  if (c->nodes < 1 || c->nodes > PLAN_MAX_GPUS)
    return err_set(e, ERR_USAGE, "node count must be between 1 and %ld, got %d", PLAN_MAX_GPUS, c->nodes);
  if (gpn > 4096) return err_set(e, ERR_USAGE, "GPUs per node must be at most 4096, got %d", gpn);
  if ((long)c->nodes * gpn > PLAN_MAX_GPUS) return err_set(e, ERR_USAGE, "at most %ld GPUs can be simulated", PLAN_MAX_GPUS);
  if (c->iterations < 1 || c->iterations > 1000) return err_set(e, ERR_USAGE, "iterations must be between 1 and 1000, got %d", c->iterations);
  if (!(c->jitter_cv < 1.0) || isnan(c->jitter_cv)) return err_set(e, ERR_USAGE, "jitter cv must be below 1, got %g", c->jitter_cv);
  if (c->no_sync < 1 || c->no_sync > 1000) return err_set(e, ERR_USAGE, "no-sync cycle must be between 1 and 1000, got %d", c->no_sync);
  if (batch > SIM_MAX_BATCH) return err_set(e, ERR_USAGE, "the per-GPU batch must be at most %ld (2^30), got %ld", SIM_MAX_BATCH, batch);
  if (!(c->host_launch_s <= SIM_MAX_HOST_US * 1e-6) || !(c->host_dispatch_s <= SIM_MAX_HOST_US * 1e-6) ||
      !(c->host_event_s <= SIM_MAX_HOST_US * 1e-6) ||
      !(c->load_s <= SIM_MAX_LOAD_MS * 1e-3))
    return err_set(e, ERR_USAGE, "host costs must be at most %g s per launch or op and loading %g s per batch", SIM_MAX_HOST_US * 1e-6,
                   SIM_MAX_LOAD_MS * 1e-3);
  if (c->framework == SIM_FRAMEWORK_DDP) {
    reducer_knobs k;
    err_t why;
    sim_reducer_knobs(c, &k);
    if (reducer_check(&k, c->bucket_view, (int)c->comm_hook, &why)) return err_set(e, ERR_USAGE, "%s", why.msg);
    if (c->ddp_iteration < 0 || c->ddp_iteration > 3)
      return err_set(e, ERR_USAGE, "the DDP iteration simulated must be 0 (steady state) to 3, got %d", c->ddp_iteration);
  }
  /* <= 0: not given (DDP's default; the release's first bucket) */
  if (!(c->bucket_cap_mb <= SIM_MAX_BUCKET_MB) || !(c->first_bucket_mb <= SIM_MAX_BUCKET_MB))
    return err_set(e, ERR_USAGE, "bucket caps must be at most %g MB (0: not given), got %g and %g (first)", SIM_MAX_BUCKET_MB,
                   c->bucket_cap_mb, c->first_bucket_mb);
  if (c->dp_backward_gil > 0 && c->framework != SIM_FRAMEWORK_DP)
    return err_set(e, ERR_USAGE, "a backward under the GIL is DataParallel's (framework dp), not DDP's");
  if (c->framework == SIM_FRAMEWORK_DP && c->nodes != 1)
    return err_set(e, ERR_USAGE, "DataParallel runs in one process: one node only, not %d", c->nodes);
  *gpn_out = gpn;
  *batch_out = batch;
  *prec_out = sim_precision(c);
  return ERR_OK;
}

/* 1 with a CPU profile (device.kind "cpu": the tensors are in host memory, nothing is staged). */
static int cpu_profile(const sim_config *c) {
  profile_device dev;
  profile_get_device(c->profile, &dev);
  return dev.kind == PROFILE_DEVICE_CPU;
}

int plan_gloo_tcp(const sim_config *c) {
  return c->backend == SIM_BACKEND_GLOO && (!cpu_profile(c) || profile_has_link(c->profile, PROFILE_LINK_TCP));
}

/* gloo between the processes of GPUs (ProcessGroupGloo; THD's gloo before 1.0) sends through host
 * memory over TCP sockets, not over NVLink or the NICs' RDMA (docs/simulation.md, "Communication
 * backends"): the node as a switch where each GPU's process has one connection of the profile's
 * `tcp` link class (its bw_Bps and lat_s), one NIC per node (gloo binds one interface), no faster
 * than a connection. *view: a copy of the topology so changed (the caller frees it). */
static int gloo_view(const sim_config *c, topo_t **view, double *tcp_Bps, double *tcp_lat_s, err_t *e) {
  err_t why;
  int rc = profile_link(c->profile, PROFILE_LINK_TCP, 0, tcp_Bps, tcp_lat_s, &why);
  if (rc)
    return err_set(e, rc, "gloo sends between processes over TCP sockets: %s (comm.links.%s: bw_Bps and lat_s of one connection)",
                   why.msg, PROFILE_LINK_TCP);
  if (!(*tcp_Bps > 0))
    return err_set(e, ERR_INPUT, "%s: comm.links.%s needs bw_Bps (a connection's throughput, not an efficiency)",
                   profile_name(c->profile), PROFILE_LINK_TCP);
  topo_t *v = malloc(sizeof *v);
  if (!v) return err_set(e, ERR_NOMEM, "out of memory");
  *v = *c->topo;
  v->npairs = 0;
  v->has_near = 0;
  snprintf(v->intra_class, sizeof v->intra_class, "%s", PROFILE_LINK_TCP);
  v->intra_links = 1;
  v->intra_bw_Bps = *tcp_Bps;
  if (v->has_nic) v->nic_count = 1;
  *view = v;
  return ERR_OK;
}

int plan_network(const sim_config *c, int gpn, channels_t *ch, platform_spec *spec, double **pair, unsigned char **near,
                 err_t *e) {
  const topo_t *t = c->topo;
  topo_t *view = NULL;
  int rc;
  double link_bw = 0, nic_bw = 0, lat, tcp_Bps = 0, tcp_lat = 0;
  memset(spec, 0, sizeof *spec);
  spec->nodes = c->nodes;
  spec->gpus_per_node = gpn;
  if (plan_gloo_tcp(c)) {
    if ((rc = gloo_view(c, &view, &tcp_Bps, &tcp_lat, e))) return rc;
    t = view;
  }
  if (gpn > 1) {
    if (view) link_bw = tcp_Bps, lat = tcp_lat;
    else if ((rc = profile_link(c->profile, t->intra_class, t->intra_bw_Bps, &link_bw, &lat, e)) ||
             (rc = profile_hop_lat(c->profile, t->intra_class, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, &lat, e)))
      return rc;
    spec->intra_lat_s = lat;
  }
  if (c->nodes > 1 && t->has_nic) {
    if ((rc = profile_link(c->profile, t->nic_class, t->nic_bw_Bps, &nic_bw, &lat, e)) ||
        (!view && (rc = profile_hop_lat(c->profile, t->nic_class, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, &lat, e)))) {
      free(view);
      return rc;
    }
    /* over TCP: the socket's latency (the stack's, which the wire's few microseconds hide in), and
     * no more than a connection carries */
    if (view) lat = tcp_lat, nic_bw = nic_bw < tcp_Bps ? nic_bw : tcp_Bps;
    spec->nic_lat_s = lat;
    spec->backbone_bw_Bps = t->switch_bw_Bps;
  }
  channels_spec cs;
  rc = channels_spec_from_topo(t, gpn, c->nodes, link_bw, nic_bw, &cs, pair, near, e);
  free(view);
  if (rc) return rc;
  spec->pair_Bps = cs.pair_Bps;
  spec->gpu_Bps = cs.gpu_Bps;
  spec->nics = cs.nics;
  spec->nic_Bps = cs.nic_Bps;
  err_t ce;
  if ((rc = channels_search(&cs, ch, &ce))) return err_set(e, rc, "%s: %s", c->topo->path, ce.msg);
  spec->ch = ch;
  return ERR_OK;
}

void plan_free(plan_t *p) {
  if (!p) return;
  free(p->seg_s);
  free(p->seg_copy_s);
  free(p->seg_copy_k);
  free(p->copy_bucket_s);
  free(p->seg_mem);
  free(p->jitter);
  free(p->op_s);
  free(p->op_seg);
  free(p->host_jitter);
  bucket_plan_free(&p->buckets);
  free(p->ready_seg);
  free(p->hook_pre_s);
  free(p->hook_post_s);
  free(p->coll);
  free(p->steps);
  free(p->launch_seg);
  plan_row_free(&p->base[0]);
  plan_row_free(&p->base[1]);
  channels_free(&p->ch);
  channels_free(&p->ch_node);
  free(p->next);
  free(p->next_node);
  free(p->next_rail);
  free(p->pair_Bps);
  free(p->near);
  prog_free(&p->prog);
  if (p->fw && p->fw_free) p->fw_free(p->fw);
  free(p->at_ready);
  free(p->at_start);
  free(p->at_end);
  memset(p, 0, sizeof *p);
}

/* Fills p->jitter (NULL when there is no jitter) and the straggler summary. compute_s: one
 * iteration's compute, which the draws scale. */
static int draw_jitter(const sim_config *c, plan_t *p, double compute_s, err_t *e) {
  profile_jitter j;
  int rc = profile_get_jitter(c->profile, &j, e);
  if (rc) return rc;
  if (c->jitter_cv >= 0) {
    j.kind = c->jitter_cv > 0 ? PROFILE_JITTER_LOGNORMAL : PROFILE_JITTER_NONE;
    j.cv = c->jitter_cv;
  }
  p->jitter_kind = j.kind;
  p->jitter_cv = j.kind == PROFILE_JITTER_LOGNORMAL ? j.cv : 0;
  if (j.kind == PROFILE_JITTER_NONE) return ERR_OK;
  int n = p->ranks;
  size_t count = (size_t)p->iterations * (size_t)n;
  p->jitter = malloc(count * sizeof *p->jitter);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!p->jitter || !rng) {
    gsl_rng_free(rng);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  /* Rank-major: a rank's draws for iterations 0..K-1 come in a row, so they do not depend on how
   * many ranks there are. Rank 0 of any run draws what a one-GPU run of the same seed draws:
   * predict's one-GPU twin, under the same jitter, shares rank 0's (common random numbers), and
   * the run, which waits for its slowest rank, is never faster than its twin (sim/predict.h). */
  gsl_rng_set(rng, c->seed);
  for (int k = 0; k < n; k++)
    for (int it = 0; it < p->iterations; it++) p->jitter[(size_t)it * (size_t)n + (size_t)k] = profile_jitter_draw(&j, rng);
  gsl_rng_free(rng);
  /* What synchronising costs: in each iteration every GPU waits for the slowest one's compute.
   * Reported as the mean over the steady-state iterations of (slowest - mean) compute. */
  int first = p->iterations > c->no_sync ? c->no_sync : 0;
  double sum = 0;
  for (int it = first; it < p->iterations; it++) {
    const double *row = p->jitter + (size_t)it * (size_t)n;
    double mx = row[0], mean = 0;
    for (int k = 0; k < n; k++) {
      if (row[k] > mx) mx = row[k];
      mean += row[k] / n;
    }
    sum += mx - mean;
  }
  p->straggler_s = compute_s * sum / (p->iterations - first);
  return ERR_OK;
}

/* Every bucket all-reduced once backward is done, its copies on the compute stream: flat mode, and
 * 0.4's nccl path (reduction_fn_nccl, a callback queued for the end of backward). */
static int after_backward(const plan_t *p) { return p->flat || p->reducer.work == REDUCER_WORK_AFTER; }

/* DDP's copies of gradients (`arrays` passes over each, sim/cost.h cost_copy): the n parameters
 * idx[0..n) (all of them with idx NULL), each gradient at its own type, a parameter's or the run
 * precision where it follows it, so that fp32 gradients under autocast move 4 bytes an element;
 * in one kernel per gradient (per_gradient) and `extra` more (flat mode's cat, its division), at
 * least one per dtype: *kernels of them. */
static int grad_copy(const sim_config *c, plan_t *p, const int *idx, int n, long arrays, int per_gradient, long extra,
                     double *t, long *kernels, err_t *e) {
  long numel[MODEL_DTYPE_COUNT] = {0}, count[MODEL_DTYPE_COUNT] = {0};
  for (int k = 0; k < n; k++) {
    const model_param *q = &c->model->params[idx ? idx[k] : k];
    model_dtype d = q->follows_run ? p->precision : q->dtype;
    numel[d] += q->numel;
    count[d]++;
  }
  *t = 0;
  *kernels = 0;
  for (int d = 0; d < MODEL_DTYPE_COUNT; d++) {
    if (!(numel[d] > 0)) continue;
    double x;
    long k = (per_gradient ? count[d] : 0) + (*kernels ? 0 : extra);
    if (k < 1) k = 1;
    int rc = cost_copy(c, "ddp_bucket_copy", numel[d], arrays, k, p->batch, (model_dtype)d, &x, &p->extrapolated_ops, e);
    if (rc) return rc;
    *t += x;
    *kernels += k;
  }
  return ERR_OK;
}

/* The ops as the host issues them (p->steps), backward's segments and the per-phase GPU totals;
 * param_seg[i]: the segment after which parameter i's gradient is ready. copies: DDP copies
 * gradients into buckets and back, or flat mode flattens them and divides and unflattens the
 * result (docs/simulation.md, "Buckets"). */
static int plan_compute(const sim_config *c, plan_t *p, int copies, int *param_seg, err_t *e) {
  const model_t *m = c->model;
  int rc, last_bwd = -1, flat = after_backward(p), reducer = p->reducer.work == REDUCER_WORK_REDUCER;
  double pending = 0, pending_mem = 0, fwd_mem = 0;
  p->copies = copies;
  /* The Reducer's work per gradient (docs/reducer.md, "Per-gradient work"): from 1.7 one pass that
   * divides while copying, or with gradient_as_bucket_view a division in place and nothing to copy
   * back; before, a copy (the bucket's division is plan_buckets'): 2 arrays, a kernel each. After
   * the final wait DDP copies each gradient back from its bucket (2 arrays, a kernel each); flat
   * mode divides the flat buffer by the world size and copies it back into the gradients (4
   * arrays, 1 + P kernels), as 0.4 did with nccl after its all-reduce. Before 1.1 nothing happens
   * on the compute stream when a gradient is ready; 0.2-0.4's reduction threads copy each bucket
   * back on their own streams (plan_buckets). */
  int view = !flat && c->bucket_view;
  if (copies && !view && p->reducer.work != REDUCER_WORK_THREAD && (rc = grad_copy(c, p, NULL, m->nparams, flat ? 4 : 2, 1, flat ? 1 : 0, &p->copy_back_s, &p->copy_back_k, e)))
    return rc;
  p->bucket_copy_s = p->copy_back_s;
  p->first_tail = -1;
  for (int o = 0; o < m->nops; o++) {
    const model_op *op = &m->ops[o];
    plan_step *st = &p->steps[p->nsteps++];
    if ((rc = cost_op_sides(c, op, p->batch, p->precision, &st->dev_s, &st->host_s, &p->extrapolated_ops, e))) return rc;
    st->count = op->count;
    st->kernels = op->launches;
    st->phase = (int)op->phase;
    st->seg = -1;
    double t = st->dev_s * (double)op->count;
    /* Memory-bound: elementwise work (a GEMM or convolution is bound by the SMs' arithmetic). */
    double tm = op->kind == MODEL_OP_EWISE ? t : 0;
    p->op_s[o] = t;
    p->op_seg[o] = op->phase == MODEL_PHASE_FORWARD ? -1 : op->phase == MODEL_PHASE_OPTIMIZER ? -2 : p->nseg;
    if (op->phase == MODEL_PHASE_FORWARD) {
      p->forward_s += t;
      fwd_mem += tm;
    } else if (op->phase == MODEL_PHASE_OPTIMIZER) {
      if (p->first_tail < 0) p->first_tail = p->nsteps - 1;
      p->optimizer_s += t;
    } else {
      last_bwd = p->nsteps - 1;
      p->backward_s += t;
      pending += t;
      pending_mem += tm;
      if (!op->ready_count) continue;
      if (copies && !flat && reducer) {
        /* The Reducer's hook works on each ready gradient (above), on the compute stream. */
        double ct;
        if ((rc = grad_copy(c, p, &m->ready[op->ready_first], op->ready_count, 2, 1, 0, &ct, &p->seg_copy_k[p->nseg], e)))
          return rc;
        p->bucket_copy_s += ct;
        p->seg_copy_s[p->nseg] = ct;
      }
      for (int k = 0; k < op->ready_count; k++) param_seg[m->ready[op->ready_first + k]] = p->nseg;
      st->seg = p->nseg;
      /* The bucket copies are memory-bound too. */
      double all = pending + p->seg_copy_s[p->nseg];
      p->seg_mem[p->nseg] = all > 0 ? (pending_mem + p->seg_copy_s[p->nseg]) / all : 0;
      p->seg_s[p->nseg++] = pending;
      pending = pending_mem = 0;
    }
  }
  if (p->first_tail < 0) p->first_tail = p->nsteps;
  if (pending > 0) { /* backward work after the last gradient */
    p->steps[last_bwd].seg = p->nseg;
    p->seg_mem[p->nseg] = pending_mem / pending;
    p->seg_s[p->nseg++] = pending;
  }
  p->fwd_mem = p->forward_s > 0 ? fwd_mem / p->forward_s : 0;
  if (copies && flat && p->nseg > 0) {
    /* _flatten_dense_tensors: every gradient read and written into the flat buffer once backward
     * is done, before its all-reduce. */
    double ct;
    long k;
    if ((rc = grad_copy(c, p, NULL, m->nparams, 2, 0, 1, &ct, &k, e))) return rc; /* one cat */
    p->bucket_copy_s += ct;
    p->seg_copy_k[p->nseg - 1] += k;
    double all = p->seg_s[p->nseg - 1] + p->seg_copy_s[p->nseg - 1];
    p->seg_mem[p->nseg - 1] = (p->seg_mem[p->nseg - 1] * all + ct) / (all + ct);
    p->seg_copy_s[p->nseg - 1] += ct;
  }
  return ERR_OK;
}

int plan_row_alloc(const plan_t *p, plan_row *row, err_t *e) {
  memset(row, 0, sizeof *row);
  row->seg_end = calloc((size_t)p->nseg + 1, sizeof *row->seg_end);
  row->lag = calloc((size_t)p->nb + 1, sizeof *row->lag);
  if (!row->seg_end || !row->lag) {
    plan_row_free(row);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  return ERR_OK;
}

void plan_row_free(plan_row *row) {
  if (!row) return;
  free(row->seg_end);
  free(row->lag);
  memset(row, 0, sizeof *row);
}

/* The optimizer's ops (and the copy back) after the final wait, from the pipe's state; in a
 * synchronising iteration the host first makes the stream wait for each bucket's work. With
 * device_copies 0 the copy back's kernels are launched (host work, each taking its place in the
 * launch queue) but their GPU time is not the tail's: copy_per_bucket plays it bucket by bucket
 * before the last wait. */
static double run_tail(const plan_t *p, pipe_t *w, double scale, int sync, int device_copies) {
  double dev = 0;
  int copies = sync && p->copies;
  if (sync && p->nb > 0 && p->pg_wait_host_s > 0) pipe_host(w, p->nb * p->pg_wait_host_s);
  if (copies && p->copy_back_k > 0) { /* a kernel per gradient (plan_compute) */
    double d = device_copies ? p->copy_back_s * scale : 0;
    pipe_op(w, p->launch_host_s, d / (double)p->copy_back_k, p->copy_back_k, 1);
    dev += d;
  }
  for (int i = p->first_tail; i < p->nsteps; i++) {
    const plan_step *st = &p->steps[i];
    pipe_op(w, st->host_s, st->dev_s * scale, st->count, st->kernels);
    dev += st->dev_s * scale * (double)st->count;
  }
  return dev;
}

/* One iteration through the pipe (docs/simulation.md, "Host and device"): GPU times scaled by
 * `scale` (compute jitter), the host starting host_delay_s late. */
static void timeline_eval(const plan_t *p, pipe_t *w, double scale, double host_delay_s, int sync, plan_row *row) {
  int copies = sync && p->copies, next = 0;
  pipe_reset(w, host_delay_s, 0);
  w->host_busy_s = host_delay_s;
  row->fwd_end = row->copy_in_s = row->host_fwd_end = 0;
  for (int i = 0; i < p->first_tail; i++) {
    const plan_step *st = &p->steps[i];
    pipe_op(w, st->host_s, st->dev_s * scale, st->count, st->kernels);
    if (st->phase == MODEL_PHASE_FORWARD) row->fwd_end = w->D, row->host_fwd_end = w->H;
    if (st->seg < 0) continue;
    int s = st->seg;
    if (copies && p->seg_copy_s[s] > 0) {
      long k = p->seg_copy_k[s] > 0 ? p->seg_copy_k[s] : 1;
      pipe_op(w, p->launch_host_s, p->seg_copy_s[s] * scale / (double)k, k, 1);
      row->copy_in_s += p->seg_copy_s[s] * scale;
    }
    row->seg_end[s] = w->D;
    /* The hook launches every bucket now ready whose predecessors are launched: NCCL's launch is
     * host work, and the collective cannot start before it. */
    for (; sync && next < p->nb && p->launch_seg[next] <= s; next++) {
      pipe_host(w, p->launch_host_s + p->pg_call_host_s);
      double lag = w->H - row->seg_end[p->ready_seg[next]];
      row->lag[next] = lag > 0 ? lag : 0;
    }
  }
  row->bwd_end = w->D;
  row->host_bwd_end = w->H;
  row->starved_s = w->starved_s;
  /* The tail is max-plus linear in the stream's time D0 after the final wait: its coefficient
   * (tail_a) with everything else at -infinity, and the rest (tail_b) with D0 at -infinity. The
   * end-of-iteration sync (the loop's loss.item()) waits for the host too. */
  w->D = -INFINITY;
  int dc = !p->copy_per_bucket;
  row->tail_dev_s = run_tail(p, w, scale, sync, dc);
  row->tail_b = w->D > w->H ? w->D : w->H;
  row->host_tail_end = p->host_waits && sync ? -1 : w->H;
  row->host_busy_s = w->host_busy_s;
  row->dev_busy_s = w->dev_busy_s + (copies && p->copy_per_bucket ? p->copy_back_s * scale : 0); /* played before the tail */
  /* A wait that blocks the host (gloo, MPI): the host too starts the tail at D0. */
  pipe_reset(w, p->host_waits && sync ? 0 : -INFINITY, 0);
  run_tail(p, w, scale, sync, dc);
  row->tail_a = w->D > w->H ? w->D : w->H;
  if (p->host_waits && sync) row->tail_b = row->bwd_end;
  if (getenv("DBG_TAIL") && sync) fprintf(stderr, "bwd_end %.6f host_bwd_end %.6f tail_a %.6f tail_b %.6f devtail %.6f\n", row->bwd_end, row->host_bwd_end, row->tail_a, row->tail_b, row->tail_dev_s);
}

int plan_varies(const plan_t *p) { return p->jitter || p->host_jitter; }

int plan_sync(const plan_t *p, int it) { return p->ranks > 1 && it % p->no_sync == p->no_sync - 1; }

int plan_first_steady(const plan_t *p) { return p->iterations == p->no_sync ? 0 : p->no_sync; }

void plan_values(const plan_t *p, int it, int r, pipe_t *w, plan_row *row, double *val) { p->values(p, it, r, w, row, val); }

/* DDP's values (plan_values): the row's segments, launch lags and tail as the program's slots. */
static void ddp_values(const plan_t *p, int it, int r, pipe_t *w, plan_row *row, double *val) {
  const plan_row *x = plan_timeline(p, it, r, w, row);
  double prev = x->fwd_end;
  val[PROG_STAT_FWD] = x->fwd_end;
  for (int s = 0; s < p->nseg; s++) {
    val[p->slot_seg + s] = x->seg_end[s] - prev;
    prev = x->seg_end[s];
  }
  val[p->slot_bwd_rest] = x->bwd_end - prev;
  for (int b = 0; b < p->nb; b++) val[p->slot_lag + b] = x->lag[b];
  val[p->slot_tail] = x->tail_a;
  val[p->slot_tail + 1] = x->tail_b;
  /* DDP's copy back, scaled by the rank's compute jitter as the tail it starts is: the tail's, or
   * bucket by bucket before it (copy_per_bucket). */
  double cj = p->jitter ? p->jitter[(size_t)it * (size_t)p->ranks + (size_t)r] : 1.0;
  val[p->slot_tail + 2] = p->copies && !p->copy_per_bucket ? p->copy_back_s * cj : 0;
  val[PROG_STAT_COPY_EARLY] = 0;
  for (int b = 0; p->copy_per_bucket && b < p->nb; b++) {
    val[p->slot_copy + b] = p->copy_bucket_s[b] * cj;
    if (plan_sync(p, it)) val[PROG_STAT_COPY_EARLY] += val[p->slot_copy + b];
  }
  val[PROG_STAT_BWD] = x->bwd_end - x->fwd_end - x->copy_in_s;
  val[PROG_STAT_COPY_IN] = x->copy_in_s;
  val[PROG_STAT_REACH] = x->bwd_end;
  val[PROG_STAT_TAIL_DEV] = x->tail_dev_s;
  val[PROG_STAT_HOST_BUSY] = x->host_busy_s;
  val[PROG_STAT_DEV_BUSY] = x->dev_busy_s;
  val[PROG_STAT_STARVED] = x->starved_s;
  val[PROG_STAT_HOST_FWD] = x->host_fwd_end;
  val[PROG_STAT_HOST_BWD] = x->host_bwd_end;
  val[PROG_STAT_HOST_TAIL] = x->host_tail_end;
}

/* Appends an instruction with no event, collective, slots or constant duration to stream st, for
 * the caller to complete; when out of memory, *bad is set and a scratch instruction returned. */
static prog_instr *add(prog_t *g, int st, prog_op op, int sync, int span, int index, int *bad) {
  static prog_instr scratch;
  prog_instr x = {.op = op, .sync = sync, .span = span, .index = index, .ev = -1, .coll = -1, .dur = -1, .lag = -1, .a = -1, .b = -1};
  if (prog_emit(g, st, &x)) {
    *bad = 1;
    return &scratch;
  }
  return &g->streams[st].ins[g->streams[st].n - 1];
}

/* Whether DDP copies back bucket by bucket (plan_t's copy_per_bucket: the C++ Reducer with NCCL,
 * whose waits are the stream's), and each bucket's share of the copy back, by its bytes (the copy
 * back is priced as one pass over every gradient: plan_compute). After plan_buckets (the backend). */
static int plan_copy_per_bucket(plan_t *p, err_t *e) {
  int nb = p->nb;
  p->copy_per_bucket = p->copies && p->copy_back_s > 0 && !p->host_waits && nb > 0 &&
                       p->reducer.work == REDUCER_WORK_REDUCER && !after_backward(p);
  if (!p->copy_per_bucket) return ERR_OK;
  double all = 0;
  for (int b = 0; b < nb; b++) all += (double)p->buckets.b[b].bytes;
  if (!(p->copy_bucket_s = calloc((size_t)nb, sizeof *p->copy_bucket_s))) return err_set(e, ERR_NOMEM, "out of memory");
  for (int b = 0; b < nb; b++) p->copy_bucket_s[b] = all > 0 ? p->copy_back_s * (double)p->buckets.b[b].bytes / all : p->copy_back_s / nb;
  return ERR_OK;
}

/* DDP's stream program (sim/program.h; docs/simulation.md, "Stream programs"). The compute stream:
 * the batch, the buffer broadcast forward waits for, forward, each backward segment followed by the
 * ready events of the buckets it completes, the rest of backward, DDP's final wait for the NCCL
 * stream (an event the stream waits on) and the tail. The NCCL stream, in synchronising
 * iterations: each bucket in order once its ready event and the host's launch lag are past, its
 * hook work and collective (holding the cores where collectives share them), then the event the
 * final wait waits for. Event b: bucket b ready; event nb: every collective done. */
static int plan_program(plan_t *p, err_t *e) {
  int nb = p->nb, rc;
  p->slot_seg = PROG_NSTATS;
  p->slot_bwd_rest = p->slot_seg + p->nseg;
  p->slot_lag = p->slot_bwd_rest + 1;
  p->slot_tail = p->slot_lag + nb;
  p->slot_copy = p->slot_tail + 3;
  if ((rc = prog_init(&p->prog, p->slot_copy + (p->copy_per_bucket ? nb : 0), e))) return rc;
  size_t n = (size_t)(nb ? nb : 1);
  p->at_ready = calloc(n, sizeof *p->at_ready);
  p->at_start = calloc(n, sizeof *p->at_start);
  p->at_end = calloc(n, sizeof *p->at_end);
  if (!p->at_ready || !p->at_start || !p->at_end) return err_set(e, ERR_NOMEM, "out of memory");
  prog_t *g = &p->prog;
  int bad = 0, nccl = p->sim_ranks > 1 ? prog_stream_add(g, PROG_STREAM_NCCL) : -1;
  if (p->sim_ranks > 1 && nccl < 0) return err_set(e, ERR_NOMEM, "out of memory");
  add(g, 0, PROG_BEGIN, 0, -1, -1, &bad);
  add(g, 0, PROG_INPUT, 0, -1, -1, &bad);
  add(g, 0, PROG_SLEEP, 0, TIMELINE_BROADCAST, -1, &bad)->dur_s = p->buffers_s;
  add(g, 0, PROG_MARK, 0, -1, -1, &bad);
  prog_instr *x = add(g, 0, PROG_COMPUTE, 0, TIMELINE_FORWARD, -1, &bad);
  x->dur = PROG_STAT_FWD;
  x->shares = p->gpu_sharing;
  x->mem = p->fwd_mem;
  for (int s = 0; s < p->nseg; s++) {
    x = add(g, 0, PROG_COMPUTE, 0, TIMELINE_SEGMENT, s, &bad);
    x->dur = p->slot_seg + s;
    x->shares = p->gpu_sharing;
    x->mem = p->seg_mem[s];
    for (int b = 0; b < nb; b++)
      if (p->ready_seg[b] == s) {
        p->at_ready[b] = g->streams[0].n;
        add(g, 0, PROG_RECORD, 1, TIMELINE_READY, b, &bad)->ev = b;
      }
  }
  x = add(g, 0, PROG_COMPUTE, 0, TIMELINE_BACKWARD_REST, -1, &bad);
  x->dur = p->slot_bwd_rest;
  x->shares = p->gpu_sharing;
  x->mem = p->nseg > 0 ? p->seg_mem[p->nseg - 1] : 0; /* the stream waiting for the host after the last segment's ops */
  /* DDP's final wait: for every bucket's work at once, or bucket by bucket, each copied back before
   * the next is waited for (copy_per_bucket; events nb + 1 + b). */
  for (int b = 0; nccl >= 0 && p->copy_per_bucket && b < nb; b++) {
    add(g, 0, PROG_WAIT, 1, TIMELINE_FINAL_WAIT, -1, &bad)->ev = nb + 1 + b;
    x = add(g, 0, PROG_COMPUTE, 1, TIMELINE_COPY_BACK, b, &bad);
    x->dur = p->slot_copy + b;
    x->shares = p->gpu_sharing;
    x->mem = 1; /* a copy: memory-bound */
  }
  if (nccl >= 0 && !p->copy_per_bucket) add(g, 0, PROG_WAIT, 1, TIMELINE_FINAL_WAIT, -1, &bad)->ev = nb;
  x = add(g, 0, PROG_TAIL, 0, -1, -1, &bad);
  x->dur = p->slot_tail + 2;
  x->a = p->slot_tail;
  x->b = p->slot_tail + 1;
  for (int b = 0; nccl >= 0 && b < nb; b++) {
    p->at_start[b] = g->streams[nccl].n;
    x = add(g, nccl, PROG_WAIT, 1, -1, -1, &bad);
    x->ev = b;
    x->lag = p->slot_lag + b;
    if (p->shares_compute) add(g, nccl, PROG_TAKE_CORES, 1, -1, -1, &bad);
    add(g, nccl, PROG_SLEEP, 1, TIMELINE_HOOK_PRE, b, &bad)->dur_s = p->hook_pre_s[b];
    add(g, nccl, PROG_COLL, 1, TIMELINE_COLLECTIVE, b, &bad)->coll = b;
    p->at_end[b] = g->streams[nccl].n;
    add(g, nccl, PROG_SLEEP, 1, TIMELINE_HOOK_POST, b, &bad)->dur_s = p->hook_post_s[b];
    if (p->shares_compute) add(g, nccl, PROG_GIVE_CORES, 1, -1, -1, &bad);
    if (p->copy_per_bucket) add(g, nccl, PROG_RECORD, 1, -1, -1, &bad)->ev = nb + 1 + b;
  }
  if (nccl >= 0 && !p->copy_per_bucket) add(g, nccl, PROG_RECORD, 1, -1, -1, &bad)->ev = nb;
  if (bad) return err_set(e, ERR_NOMEM, "out of memory");
  for (int b = 0; b < nb; b++) {
    p->at_ready[b] = prog_at_index(g, 0, (int)p->at_ready[b]);
    p->at_start[b] = nccl >= 0 ? prog_at_index(g, nccl, (int)p->at_start[b]) : -1;
    p->at_end[b] = nccl >= 0 ? prog_at_index(g, nccl, (int)p->at_end[b]) : -1;
  }
  return prog_finish(g, e);
}

const plan_row *plan_timeline(const plan_t *p, int it, int r, pipe_t *w, plan_row *row) {
  int sync = p->ranks > 1 && it % p->no_sync == p->no_sync - 1;
  if (!plan_varies(p)) return &p->base[sync];
  size_t k = (size_t)it * (size_t)p->ranks + (size_t)r;
  timeline_eval(p, w, p->jitter ? p->jitter[k] : 1.0, p->host_jitter ? p->host_jitter[k] : 0, sync, row);
  return row;
}

/* Host noise (docs/simulation.md, "Host noise"): every rank's host starts each iteration late by an
 * exponential draw whose standard deviation (and mean) is the profile's compute.host.jitter_s or
 * the config's; seeded apart from the compute jitter's draws, so adding one leaves the other's. */
static int draw_host_jitter(const sim_config *c, plan_t *p, err_t *e) {
  double sd = c->host_jitter_s >= 0 ? c->host_jitter_s : profile_host_jitter_s(c->profile);
  if (!(sd >= 0 && sd <= 10)) return err_set(e, ERR_USAGE, "host jitter must be 0 to 10 s, got %g", sd);
  p->host_jitter_sd_s = sd;
  if (sd == 0) return ERR_OK;
  size_t count = (size_t)p->iterations * (size_t)p->ranks;
  p->host_jitter = malloc(count * sizeof *p->host_jitter);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!p->host_jitter || !rng) {
    gsl_rng_free(rng);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  gsl_rng_set(rng, c->seed ^ 0x9e3779b9UL); /* rank-major, as draw_jitter's */
  for (int k = 0; k < p->ranks; k++)
    for (int it = 0; it < p->iterations; it++)
      p->host_jitter[(size_t)it * (size_t)p->ranks + (size_t)k] = gsl_ran_exponential(rng, sd);
  gsl_rng_free(rng);
  return ERR_OK;
}

/* What collective pc's kernels take of each GPU while it runs (docs/simulation.md, "Work sharing the
 * GPU"; sources in docs/nccl.md's citations there). SMs: NCCL launches one thread block per channel
 * (src/enqueue.cc: grid = the channels used), 544-640 threads at up to 96 registers each
 * (makefiles/common.mk -maxrregcount=96) and 40-80 KiB of shared memory: most of one SM each, so
 * channels / SMs of the card. Memory: per byte a GPU sends (edge_bytes: busBw x time), the ring's
 * Simple protocol moves 2 + n/(n-1) bytes through its memory (the peer's writes into its FIFO and
 * its reads of them, 4(n-1)S/n, plus the bucket read and written, 2S: runRing in
 * src/device/all_reduce.h with prims_simple.h), LL 4 + n/(n-1) (half of each 16-byte line is
 * flags), LL128 2 x 16/15 + n/(n-1); a tree's middle node 3 (6S per 2S sent). Averaged over the
 * collective's time (NCCL's estimate, its latency included), against the card's bandwidth. An
 * upper bound: what L2 absorbs of the FIFOs is not known. */
static void plan_coll_share(const plan_t *p, plan_coll *pc, double edge_bytes) {
  pc->sm_frac = pc->hbm_frac = 0;
  if (!p->gpu_sharing || p->ranks < 2 || !(pc->estimate_s > 0)) return;
  if (p->cpu_share > 0) { /* the cores: every op beside it slowed alike */
    pc->sm_frac = pc->hbm_frac = p->cpu_share;
    return;
  }
  double n = p->ranks, ring = n / (n - 1), k;
  if (pc->algo == NCCL_ALGO_TREE) k = 3;
  else if (pc->proto == NCCL_PROTO_LL) k = 4 + ring;
  else if (pc->proto == NCCL_PROTO_LL128) k = 2 * 16.0 / 15 + ring;
  else k = 2 + ring;
  pc->sm_frac = fmin(1, p->ch.count / p->sm_count);
  pc->hbm_frac = k * edge_bytes / pc->estimate_s / p->hbm_Bps;
}

/* What each channel's edge carries of `edge` bytes (all channels together) in `steps` messages:
 * whole bytes per channel message, each edge's share rounded up ((1 - 1e-12): a share that is a
 * whole number of bytes stays one when the division rounds up). */
static void per_channel(double edge, long steps, int nch, long *edge_bytes, long *step_bytes) {
  double per_edge = edge / nch;
  *edge_bytes = (long)ceil(per_edge * (1 - 1e-12));
  if (*edge_bytes < 1) *edge_bytes = 1;
  *step_bytes = steps > 0 ? (long)ceil(per_edge / (double)steps * (1 - 1e-12)) : 1;
  if (*step_bytes < 1) *step_bytes = 1;
}

/* Collective b as NCCL's choice ch for it: what each edge and step carries, its phases. */
static int fill_coll(plan_t *p, int b, coll_kind kind, double bytes, const nccl_choice *cp, err_t *e) {
  const nccl_choice ch = *cp;
  int nch = p->ch.count;
  plan_coll *pc = &p->coll[b];
  pc->kind = kind;
  pc->algo = ch.algo;
  pc->proto = ch.proto;
  pc->bytes = bytes;
  pc->estimate_s = ch.time_s;
  pc->lat_s = ch.lat_s;
  pc->steps = ch.steps;
  per_channel(ch.edge_bytes, ch.steps, nch, &pc->edge_bytes, &pc->step_bytes);
  pc->nphase = ch.nphase;
  for (int i = 0; i < ch.nphase; i++) {
    const nccl_phase *f = &ch.phase[i];
    plan_phase *g = &pc->phase[i];
    g->group = f->group;
    g->solo = f->group == NCCL_GROUP_NODE ? p->gpus_per_node < 2 : f->group == NCCL_GROUP_RAIL ? p->nodes < 2 : p->ranks < 2;
    g->nch = f->group == NCCL_GROUP_NODE ? p->ch_node.count : nch;
    g->lat_s = g->solo ? f->time_s : f->lat_s;
    g->steps = f->steps;
    if (!g->solo && f->group == NCCL_GROUP_NODE && g->nch < 1)
      return err_set(e, ERR_INPUT, "internal: a phase inside the nodes without the node's rings");
    per_channel(f->edge_bytes, f->steps, g->nch > 0 ? g->nch : 1, &g->edge_bytes, &g->step_bytes);
  }
  plan_coll_share(p, pc, ch.edge_bytes);
  return ERR_OK;
}

/* Nothing left to choose under the user's NCCL_ALGO / NCCL_PROTO (a framework whose collectives an
 * algorithm does not run, an algorithm the profile cannot price) is a misuse of that flag:
 * ERR_USAGE naming it, nccl_choose's reason kept. Under NCCL's own choice it stays ERR_INPUT. */
static int forced_refusal(const plan_t *p, int rc, err_t *e) {
  int algo = !(p->algos & NCCL_ALGOS_AUTO), proto = p->protos != NCCL_ALL_PROTOS;
  if (rc != ERR_INPUT || (!algo && !proto)) return rc;
  char why[sizeof e->msg];
  snprintf(why, sizeof why, "%s", e->msg);
  return err_set(e, ERR_USAGE, "%s: %s", algo && proto ? "--nccl-algo/--nccl-proto" : algo ? "--nccl-algo" : "--nccl-proto", why);
}

int plan_bucket_coll(plan_t *p, int b, coll_kind kind, double bytes, err_t *e) {
  nccl_choice ch;
  int rc = nccl_choose(&p->nccl, kind, bytes, p->algos, p->protos, &ch, e);
  return rc ? forced_refusal(p, rc, e) : fill_coll(p, b, kind, bytes, &ch, e);
}

int plan_group_coll(plan_t *p, int b, coll_kind kind, double bytes, nccl_group g, err_t *e) {
  if (g == NCCL_GROUP_ALL) return plan_bucket_coll(p, b, kind, bytes, e);
  if (!p->phased) return err_set(e, ERR_INPUT, "internal: a collective of a group in a plan without the groups' rings");
  nccl_model sub;
  nccl_choice one, ch;
  nccl_model_group(&p->nccl, g, &sub);
  int rc = nccl_choose(&sub, kind, bytes, p->algos & ~(1u << NCCL_ALGO_HIER), p->protos, &one, e);
  if (rc) return forced_refusal(p, rc, e);
  /* One phase: the group's collective, played on the group's rings. */
  ch = one;
  ch.nphase = 1;
  ch.phase[0] = (nccl_phase){.coll = kind, .group = g, .time_s = one.time_s, .lat_s = one.lat_s, .edge_bytes = one.edge_bytes,
                             .steps = one.steps};
  return fill_coll(p, b, kind, bytes, &ch, e);
}

/* What a non-NCCL backend adds to bucket b's all-reduce of `bytes` (docs/simulation.md,
 * "Communication backends"). gloo (ProcessGroupGloo's CUDA all-reduce): copy the bucket to pinned
 * host memory, the ring over the TCP connections (plan_network, gloo_view), each rank summing
 * (n-1)/n of the bytes on its CPU, the copy back: D2H + ring + (n-1)/n S / reduce_Bps + H2D, both
 * copies at the profile's pinned host-device cost. gloo on a CPU profile (device.kind "cpu": the
 * tensors are in host memory) and MPI (CUDA-aware): the ring alone. */
static int plan_backend(const sim_config *c, plan_t *p, int b, double bytes, err_t *e) {
  if (c->backend != SIM_BACKEND_GLOO || p->ranks < 2 || cpu_profile(c)) return ERR_OK;
  int have = 0, rc;
  double lat = 0, bw = 0, red = profile_host_reduce_Bps(c->profile);
  if ((rc = profile_h2d(c->profile, PROFILE_H2D_PINNED_SYNC, &have, &lat, &bw, e))) return rc;
  if (!have)
    return err_set(e, ERR_INPUT, "%s: gloo stages buckets through the host: the profile needs h2d.pinned_sync (ddpcalib h2d)",
                   profile_name(c->profile));
  if (!(red > 0))
    return err_set(e, ERR_INPUT, "%s: gloo sums on the CPU: the profile needs compute.host.reduce_Bps (ddpcalib host)",
                   profile_name(c->profile));
  double copy = lat + bytes / bw;
  p->hook_pre_s[b] += copy;
  p->hook_post_s[b] += (double)(p->ranks - 1) / p->ranks * bytes / red + copy;
  return ERR_OK;
}

/* Each bucket's ready segment, hook work and collective. */
static int plan_buckets(const sim_config *c, plan_t *p, const int *param_seg, err_t *e) {
  int rc, last = 0;
  for (int i = 0; i < c->model->nparams; i++)
    if (param_seg[i] > last) last = param_seg[i];
  for (int b = 0; b < p->nb; b++) {
    const bucket_t *bk = &p->buckets.b[b];
    int seg = 0;
    for (int k = 0; k < bk->ntensors; k++)
      if (param_seg[bk->tensors[k]] > seg) seg = param_seg[bk->tensors[k]];
    /* static_graph's first iteration: every bucket waits for the model's last gradient
     * (delay_all_reduce); flat mode's all-reduce comes after backward returns, its flatten copy
     * included. */
    p->ready_seg[b] = after_backward(p) ? (p->nseg > 0 ? p->nseg - 1 : 0) : p->reducer.delayed ? last : seg;
    reducer_work work = p->flat ? REDUCER_WORK_AFTER : p->reducer.work;
    if (p->copies && (work == REDUCER_WORK_THREAD || work == REDUCER_WORK_QUEUED)) {
      /* Before 1.1, off the compute stream once the bucket is ready (docs/reducer.md, "Per-gradient
       * work"): _flatten_dense_tensors (one cat, 2 arrays) and the division by the world size (2
       * arrays) before the all-reduce, on the reduction thread's stream (0.2-0.4) or a worker stream
       * (1.0, queueReduction); 0.2-0.4 then copy each gradient back on that stream (a kernel each).
       * Played on the collectives' stream beside its collective (their span, not "bucket copies");
       * issued by those threads, not by the host thread that runs forward and backward. */
      double t;
      long k;
      if ((rc = grad_copy(c, p, bk->tensors, bk->ntensors, 4, 0, 2, &t, &k, e))) return rc;
      p->hook_pre_s[b] += t;
      if (work == REDUCER_WORK_THREAD) {
        if ((rc = grad_copy(c, p, bk->tensors, bk->ntensors, 2, 1, 0, &t, &k, e))) return rc;
        p->hook_post_s[b] += t;
      }
    }
    if (p->copies && work == REDUCER_WORK_REDUCER && !reducer_fused_copy(c->pytorch)) {
      /* Before 1.7 the Reducer divided the whole bucket by the world size (div_, one kernel, read
       * and write) once its last gradient was copied in ("Prescale bucket contents", reducer.cpp;
       * docs/reducer.md, "Per-gradient work"): after the segment that makes it ready. */
      int s = p->ready_seg[b];
      double t, all = p->seg_s[s] + p->seg_copy_s[s];
      model_dtype d = (model_dtype)bk->dtype_key;
      if ((rc = cost_copy(c, "ddp_bucket_copy", (long)(bk->bytes / model_dtype_size(d)), 2, 1, p->batch, d, &t, &p->extrapolated_ops, e)))
        return rc;
      p->seg_mem[s] = (p->seg_mem[s] * all + t) / (all + t);
      p->seg_copy_s[s] += t;
      p->seg_copy_k[s] += 1;
      p->bucket_copy_s += t;
    }
    double bytes = (double)bk->bytes;
    if (c->comm_hook != SIM_HOOK_NONE && bk->dtype_key == MODEL_FP32) {
      /* fp16_compress_hook (bf16_compress_hook the same bytes): cast the bucket to 16 bits (read 4, write 2 bytes per element), all-reduce
       * half the bytes, cast back (read 2, write 4). Each cast costs an ewise pass of the profile. */
      model_op cast = {.kind = MODEL_OP_EWISE, .elems = {(long)(bk->bytes / 4), 0}, .arrays = 3, .count = 1,
                       .follows_run = 0, .dtype = MODEL_FP16};
      snprintf(cast.name, sizeof cast.name, "fp16_compress_cast");
      double t;
      if ((rc = cost_op(c, &cast, p->batch, p->precision, &t, &p->extrapolated_ops, e))) return rc;
      p->hook_pre_s[b] += t;
      p->hook_post_s[b] += t;
      bytes = (double)(bk->bytes / 2);
    }
    if ((rc = plan_bucket_coll(p, b, COLL_ALLREDUCE, bytes, e))) return rc;
    if ((rc = plan_backend(c, p, b, bytes, e))) return rc;
  }
  return ERR_OK;
}

int plan_begin(const sim_config *c, plan_t *p, err_t *e) {
  memset(p, 0, sizeof *p);
  int gpn, rc;
  long batch;
  model_dtype prec;
  if ((rc = plan_job(c, &gpn, &batch, &prec, e))) return rc;
  p->nodes = c->nodes;
  p->gpus_per_node = gpn;
  p->ranks = c->nodes * gpn;
  p->batch = batch;
  p->precision = prec;
  p->fidelity = c->fidelity;
  p->no_sync = c->no_sync;
  p->record_spans = c->record_spans;
  p->events = c->events;

  if ((rc = plan_network(c, gpn, &p->ch, &p->platform, &p->pair_Bps, &p->near, e))) goto fail;
  p->intra_lat_s = p->platform.intra_lat_s;
  p->nic_lat_s = p->platform.nic_lat_s;
  /* NCCL splits each collective evenly over its channels: together they give C x their bandwidth. */
  p->ring_bw_Bps = channels_bw_Bps(&p->ch);
  /* Inside a node the job's rings are as fast as their bottleneck; a composed all-reduce's phases
   * inside the nodes (hier, forced) run on the node's own rings: a one-node job's channels. */
  double intra_Bps = p->ring_bw_Bps;
  /* The groups' rings: for the hierarchical all-reduce (forced), and HSDP's shard groups and replicas. */
  p->phased = (c->nccl_algos & (1u << NCCL_ALGO_HIER)) != 0 || (c->framework == SIM_FRAMEWORK_FSDP && c->fsdp_replicate > 1);
  if (gpn > 1 && p->phased) {
    sim_config one = *c;
    one.nodes = 1;
    platform_spec spec1;
    double *pair1 = NULL;
    unsigned char *near1 = NULL;
    rc = plan_network(&one, gpn, &p->ch_node, &spec1, &pair1, &near1, e);
    free(pair1);
    free(near1);
    if (rc) goto fail;
    if (c->nodes > 1) intra_Bps = channels_bw_Bps(&p->ch_node);
  }
  if ((rc = nccl_model_init(&p->nccl, c->profile, c->topo, c->nodes, gpn, p->ch.count, intra_Bps, p->ring_bw_Bps, e)))
    goto fail;
  int gloo_tcp = plan_gloo_tcp(c);
  if (gloo_tcp) nccl_model_plain_ring(&p->nccl, p->intra_lat_s, p->nic_lat_s);
  p->algos = c->nccl_algos ? c->nccl_algos : NCCL_ALGOS_AUTO;
  p->protos = c->nccl_protos ? c->nccl_protos : NCCL_ALL_PROTOS;
  if (c->backend != SIM_BACKEND_NCCL) {
    /* gloo and MPI: one ring (gloo's over TCP: plan_network), waited for by the host (plan_backend). */
    if (c->nccl_algos || c->nccl_protos) {
      rc = err_set(e, ERR_USAGE, "NCCL_ALGO and NCCL_PROTO choose among NCCL's algorithms: not with the %s backend",
                   sim_backend_name(c->backend));
      goto fail;
    }
    p->algos = 1u << NCCL_ALGO_RING;
    p->protos = 1u << NCCL_PROTO_SIMPLE;
    p->host_waits = 1;
  }
  /* Work sharing the GPU with NCCL's kernels: with NCCL, where the card's SMs and memory bandwidth
   * are known (gloo and MPI stage through the host or the CPU's cores: "Communication backends"). */
  {
    profile_device dev;
    profile_get_device(c->profile, &dev);
    p->sm_count = dev.sm_count;
    p->hbm_Bps = dev.hbm_Bps;
    p->gpu_sharing = c->gpu_sharing && c->backend == SIM_BACKEND_NCCL && dev.sm_count > 0 && dev.hbm_Bps > 0;
  }
  /* the classes the collectives cross: gloo's TCP connections, or the topology's links */
  const char *intra_cls = gloo_tcp ? PROFILE_LINK_TCP : c->topo->intra_class;
  const char *nic_cls = gloo_tcp ? PROFILE_LINK_TCP : c->topo->nic_class;
  p->shares_compute = (gpn > 1 && profile_link_shares_compute(c->profile, intra_cls)) ||
                      (c->nodes > 1 && profile_link_shares_compute(c->profile, nic_cls));
  if (p->shares_compute && c->gpu_sharing) {
    /* Where every link the job uses that shares the cores says how much of them its collective
     * keeps busy, compute runs beside the collective at the rest of its rate instead of waiting for
     * it (docs/simulation.md, "Communication backends"); the largest share speaks for all. */
    double f[2] = {gpn > 1 ? profile_link_cpu_share(c->profile, intra_cls) : 0,
                   c->nodes > 1 ? profile_link_cpu_share(c->profile, nic_cls) : 0};
    int known = (!(gpn > 1 && profile_link_shares_compute(c->profile, intra_cls)) || f[0] > 0) &&
                (!(c->nodes > 1 && profile_link_shares_compute(c->profile, nic_cls)) || f[1] > 0);
    if (known) {
      p->cpu_share = fmax(f[0], f[1]);
      p->shares_compute = 0;
      p->gpu_sharing = 1;
    }
  }
  p->iterations = c->iterations * c->no_sync;
  if (c->load_s > 0 && c->workers > 1) {
    /* W workers hand out batches in rounds of W: average over whole rounds, or the mean is off. */
    int first = c->iterations > 1 ? c->no_sync : 0, steady = p->iterations - first;
    int round = c->workers * c->no_sync;
    p->iterations = first + (steady + round - 1) / round * round;
  }
  p->queue = c->launch_queue > 0 ? c->launch_queue : PIPE_QUEUE_DEFAULT;
  p->launch_host_s = cost_host_launch(c);
  return ERR_OK;
fail:
  plan_free(p);
  return rc;
}

int plan_end(const sim_config *c, plan_t *p, double compute_s, err_t *e) {
  int rc, gpn = p->gpus_per_node;
  /* Stragglers: every GPU's compute in every iteration scaled by a draw from the profile's
   * distribution (or --jitter-cv), seeded, so runs are reproducible. */
  if ((rc = draw_jitter(c, p, compute_s, e))) return rc;
  if ((rc = draw_host_jitter(c, p, e))) return rc;
  if ((rc = cost_input(c, c->model, p->batch, &p->h2d, &p->copy_s, e))) return rc;
  p->load_s = c->load_s;
  p->workers = c->workers;
  p->prefetch = p->h2d == SIM_H2D_PREFETCH;

  /* What is simulated: every node, or two standing for all (plan.h). */
  p->sim_nodes = c->nodes;
  if (c->symmetry && !plan_varies(p) && c->nodes > 2) {
    p->sim_nodes = 2;
    p->platform.nodes = 2;
    p->platform.backbone_bw_Bps *= 2.0 / c->nodes;
  }
  p->sim_ranks = p->sim_nodes * gpn;
  /* Links carry no latency: each collective waits NCCL's latency term itself, in both fidelities. */
  p->platform.intra_lat_s = p->platform.nic_lat_s = 0;
  p->next = malloc((size_t)p->ch.count * (size_t)p->sim_ranks * sizeof *p->next);
  if (!p->next) return err_set(e, ERR_NOMEM, "out of memory");
  for (int k = 0; k < p->ch.count; k++)
    for (int q = 0; q < p->sim_ranks; q++) p->next[(size_t)k * p->sim_ranks + q] = channels_next(&p->ch, p->sim_nodes, k, q);
  p->nch_max = p->ch.count > p->ch_node.count ? p->ch.count : p->ch_node.count;
  if (p->phased) {
    /* A composed collective's rings (docs/simulation.md, "Hierarchical"): the node's own rings
     * inside each node, and a ring per local GPU between the nodes. */
    size_t n = (size_t)p->sim_ranks;
    p->next_node = malloc(((size_t)p->ch_node.count * n + 1) * sizeof *p->next_node);
    p->next_rail = malloc((size_t)p->ch.count * n * sizeof *p->next_rail);
    if (!p->next_node || !p->next_rail) return err_set(e, ERR_NOMEM, "out of memory");
    for (int q = 0; q < p->sim_ranks; q++) {
      for (int k = 0; k < p->ch_node.count; k++) p->next_node[(size_t)k * n + q] = q / gpn * gpn + channels_next(&p->ch_node, 1, k, q % gpn);
      for (int k = 0; k < p->ch.count; k++) p->next_rail[(size_t)k * n + q] = (q / gpn + 1) % p->sim_nodes * gpn + q % gpn;
    }
    p->platform.ch_node = p->ch_node.count > 0 ? &p->ch_node : NULL;
    p->platform.rails = p->sim_nodes > 1;
    p->platform.near = p->near;
  }
  return ERR_OK;
}

int plan_build(const sim_config *c, plan_t *p, err_t *e) {
  int rc, *param_seg = NULL;
  if ((rc = plan_begin(c, p, e))) return rc;
  if (c->framework != SIM_FRAMEWORK_DDP) {
    rc = err_set(e, ERR_INPUT, "%s is planned by its own builder, not here", sim_framework_name(c->framework));
    goto fail;
  }
  const model_t *m = c->model;
  int n = p->ranks, gpn = p->gpus_per_node;
  model_dtype prec = p->precision;
  /* DDP(broadcast_buffers=True), PyTorch's default: before every forward, rank 0's module buffers are
   * broadcast (_sync_module_buffers: dist._broadcast_coalesced in chunks of broadcast_bucket_size,
   * 250 MiB; the release's chunks before 1.0, none in 0.2: reducer_buffer_chunk_bytes) and forward
   * waits for them. The previous iteration's all-reduces have been waited for, so the network is
   * idle: NCCL's own estimate of a broadcast (a ring, sim/coll.c) is its time. */
  p->buffers_s = 0;
  size_t chunk_bytes = reducer_buffer_chunk_bytes(c->pytorch);
  if (c->mode == SIM_MODE_DDP && c->broadcast_buffers && chunk_bytes > 0 && m->buffer_bytes > 0 && c->nodes * gpn > 1) {
    const double chunk = chunk_bytes == SIZE_MAX ? (double)m->buffer_bytes : (double)chunk_bytes;
    for (double left = (double)m->buffer_bytes; left > 0; left -= chunk) {
      nccl_choice ch;
      if ((rc = nccl_choose(&p->nccl, COLL_BROADCAST, fmin(left, chunk), 1u << NCCL_ALGO_RING, p->protos, &ch, e))) goto fail;
      p->buffers_s += ch.time_s;
    }
  }

  /* Buckets: those the release's Reducer all-reduces in the iteration simulated (sim/reducer.h). */
  sim_reducer_iteration(c, &p->reducer);
  p->flat = c->mode == SIM_MODE_FLAT;
  const reducer_iter *it = &p->reducer;
  if (p->flat) rc = bucket_plan_flat(m, prec, &p->buckets, e);
  else {
    bucket_walk w;
    reducer_walk(it, &w);
    rc = bucket_plan_walk(m, prec, &w, &p->buckets, e);
  }
  if (rc) goto fail;
  p->nb = p->buckets.n;

  size_t nb = (size_t)(p->nb ? p->nb : 1);
  param_seg = malloc((size_t)(m->nparams ? m->nparams : 1) * sizeof *param_seg);
  p->seg_s = malloc((size_t)(m->nops + 1) * sizeof *p->seg_s);
  p->seg_copy_s = calloc((size_t)(m->nops + 1), sizeof *p->seg_copy_s);
  p->seg_copy_k = calloc((size_t)(m->nops + 1), sizeof *p->seg_copy_k);
  p->seg_mem = calloc((size_t)(m->nops + 1), sizeof *p->seg_mem);
  p->ready_seg = calloc(nb, sizeof *p->ready_seg);
  p->hook_pre_s = calloc(nb, sizeof *p->hook_pre_s);
  p->hook_post_s = calloc(nb, sizeof *p->hook_post_s);
  p->coll = calloc(nb, sizeof *p->coll);
  p->steps = calloc((size_t)(m->nops + 1), sizeof *p->steps);
  p->launch_seg = calloc(nb, sizeof *p->launch_seg);
  p->nops = m->nops;
  p->op_s = calloc((size_t)(m->nops + 1), sizeof *p->op_s);
  p->op_seg = calloc((size_t)(m->nops + 1), sizeof *p->op_seg);
  if (!param_seg || !p->seg_s || !p->seg_copy_s || !p->seg_copy_k || !p->seg_mem || !p->ready_seg || !p->hook_pre_s || !p->hook_post_s || !p->coll || !p->steps ||
      !p->launch_seg || !p->op_s || !p->op_seg) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  /* With more than one GPU DDP works on every gradient: copies it into its bucket and, after the
   * all-reduce, back into .grad (gradient_as_bucket_view=False, PyTorch's default), or divides it in
   * its bucket in place (True); flat mode flattens and unflattens (docs/simulation.md). */
  int copies = n > 1;
  if (c->backend == SIM_BACKEND_NCCL && !p->flat && it->work == REDUCER_WORK_REDUCER) {
    /* ProcessGroupNCCL's host work around each all-reduce and at the final wait, in CUDA event
     * calls (docs/reducer.md, "ProcessGroupNCCL's host work"); gloo and MPI run theirs on worker
     * threads. No GPU time: a stream's wait only orders it. */
    int issue, wait;
    reducer_pg_nccl_calls(c->pytorch, &issue, &wait);
    p->pg_call_host_s = issue * cost_host_event(c);
    p->pg_wait_host_s = wait * cost_host_event(c);
  }
  if ((rc = plan_compute(c, p, copies, param_seg, e))) goto fail;
  if ((rc = plan_buckets(c, p, param_seg, e))) goto fail;
  if ((rc = plan_copy_per_bucket(p, e))) goto fail;
  /* The host launches the all-reduces in bucket order: bucket b at the hook that makes the last of
   * buckets 0..b ready. */
  for (int b = 0, s = 0; b < p->nb; b++) {
    if (p->ready_seg[b] > s) s = p->ready_seg[b];
    p->launch_seg[b] = s;
  }
  {
    pipe_t w;
    if ((rc = pipe_init(&w, p->queue, e))) goto fail;
    for (int sync = 0; sync < 2 && rc == 0; sync++)
      if ((rc = plan_row_alloc(p, &p->base[sync], e)) == 0) timeline_eval(p, &w, 1.0, 0, sync, &p->base[sync]);
    pipe_free(&w);
    if (rc) goto fail;
    p->host_s = p->base[n > 1].host_busy_s;
  }
  if ((rc = plan_end(c, p, p->forward_s + p->backward_s + p->optimizer_s + p->bucket_copy_s / c->no_sync, e))) goto fail;
  p->values = ddp_values;
  if ((rc = plan_program(p, e))) goto fail;
  free(param_seg);
  return ERR_OK;
fail:
  free(param_seg);
  plan_free(p);
  return rc;
}

int plan_write(FILE *f, const plan_t *p, err_t *e) {
  fprintf(f, "# ddpsim plan\n");
  fprintf(f, "job %d nodes x %d GPUs = %d ranks, batch %ld/GPU, %s\n", p->nodes, p->gpus_per_node, p->ranks, p->batch,
          model_dtype_name(p->precision));
  fprintf(f, "simulated %d nodes (%d ranks)%s, %s fidelity, %d iterations (no_sync %d)\n", p->sim_nodes, p->sim_ranks,
          p->sim_nodes < p->nodes ? ", standing for all by symmetry" : "", sim_fidelity_name(p->fidelity),
          p->iterations, p->no_sync);
  fprintf(f, "channels %d x %.6g GB/s, %d NICs per node used%s\n", p->ch.count, p->ch.speed_Bps / 1e9, p->ch.nics_used,
          p->shares_compute ? ", collectives share the compute cores" : "");
  fprintf(f, "compute forward %.9g s, backward %.9g s in %d segments, optimizer %.9g s, bucket copies %.9g s\n", p->forward_s,
          p->backward_s, p->nseg, p->optimizer_s, p->bucket_copy_s);
  const plan_row *row = &p->base[p->ranks > 1];
  fprintf(f, "host %.9g s issuing (launch queue %d kernels); stream busy %.9g s, idle for the host %.9g s, ends %.9g s after forward starts\n",
          row->host_busy_s, p->queue, row->dev_busy_s, row->starved_s + (row->tail_b - row->bwd_end - row->tail_dev_s > 0 ? row->tail_b - row->bwd_end - row->tail_dev_s : 0),
          row->tail_b > row->bwd_end + row->tail_a ? row->tail_b : row->bwd_end + row->tail_a);
  if (p->load_s > 0 || p->copy_s > 0)
    fprintf(f, "input load %.9g s by %d workers, copy %.9g s%s\n", p->load_s, p->workers, p->copy_s, p->prefetch ? " (prefetched)" : "");
  if (p->jitter) fprintf(f, "jitter lognormal cv %.4g\n", p->jitter_cv);
  if (p->host_jitter) fprintf(f, "host jitter exponential, sd %.6g s per rank and iteration\n", p->host_jitter_sd_s);
  if (p->buffers_s > 0) fprintf(f, "buffer broadcast %.9g s before every forward\n", p->buffers_s);
  char rb[64];
  fprintf(f, "buckets %d: %s\n", p->nb, p->flat ? "flat, one per dtype after backward" : reducer_iter_name(&p->reducer, rb, sizeof rb));
  fprintf(f, "# bucket bytes ready_after_segment collective algo proto lat_s edge_bytes steps step_bytes nccl_estimate_s\n");
  for (int b = 0; b < p->nb; b++) {
    const plan_coll *c = &p->coll[b];
    fprintf(f, "bucket %d %zu %d %s %s %s %.9g %ld %ld %ld %.9g\n", b, p->buckets.b[b].bytes, p->ready_seg[b],
            coll_get(c->kind)->name, nccl_algo_name(c->algo), nccl_proto_name(c->proto), c->lat_s, c->edge_bytes, c->steps,
            c->step_bytes, c->estimate_s);
  }
  if (ferror(f)) return err_set(e, ERR_IO, "cannot write the plan");
  return prog_write(f, &p->prog, e);
}
