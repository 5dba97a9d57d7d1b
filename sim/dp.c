#include "dp.h"

#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "pipe.h"
#include "plan.h"

double dp_gil_period(double host_s, double gil_s, int threads, double handover_s) {
  if (threads < 2 || gil_s <= 0) return host_s;
  double round = threads * (gil_s + handover_s);
  return round > host_s ? round : host_s;
}

/* The phases' ops of one iteration through one GPU's pipe (all replicas alike): each op run costs
 * the host dp_gil_period of its host time (a hand-over for each of its framework ops), the GIL's
 * share of it under the lock when `threads`
 * Python threads take turns; the copies (replicate, gather, reduce) cost the GPU their time and the
 * host nothing modelled. Records each phase's span on the stream. */
static int dp_chain(const sim_config *c, dp_plan *p, int G, err_t *e) {
  const model_t *m = c->model;
  pipe_t w;
  int rc = pipe_init(&w, c->launch_queue > 0 ? c->launch_queue : PIPE_QUEUE_DEFAULT, e);
  if (rc) return rc;
  double share = c->dp_gil_share, ho = c->dp_handover_s, mark = 0;
  double *span[] = {&p->forward_s, &p->backward_s, &p->optimizer_s};
  const double copy_after[] = {p->gather_s, p->reduce_s, 0};
  pipe_reset(&w, 0, 0);
  pipe_op(&w, 0, p->replicate_s, 1, 1);
  mark = w.D;
  for (int ph = MODEL_PHASE_FORWARD; ph <= MODEL_PHASE_OPTIMIZER; ph++) {
    /* Forward runs in G Python threads; backward in the autograd engine's device threads, which
     * need the GIL only where the autograd functions are Python (dp_backward_gil: all of their
     * host work); the optimizer steps once, on GPU 0. */
    int threads = ph == MODEL_PHASE_FORWARD || (ph == MODEL_PHASE_BACKWARD && p->backward_gil) ? G : 1;
    double under = ph == MODEL_PHASE_BACKWARD ? 1.0 : share;
    for (int o = 0; o < m->nops; o++) {
      const model_op *op = &m->ops[o];
      if ((int)op->phase != ph) continue;
      double dev, host;
      if ((rc = cost_op_sides(c, op, p->batch, p->precision, &dev, &host, &p->extrapolated_ops, e))) goto done;
      /* Each framework op takes the lock once: a hand-over per op while others wait. */
      double period = dp_gil_period(host, under * host, threads, ho * (double)op->fwops);
      pipe_op(&w, period, dev, op->count, op->launches);
      /* What the trace divides a phase by: the op's runs at the slower of its GPU and host sides. */
      p->op_s[o] = (dev > period ? dev : period) * (double)op->count;
    }
    *span[ph] = w.D - mark;
    if (copy_after[ph] > 0) pipe_op(&w, 0, copy_after[ph], 1, 1);
    mark = w.D;
  }
  p->host_busy_s = w.host_busy_s;
  p->host_bound_s = w.starved_s;
done:
  pipe_free(&w);
  return rc;
}

int dp_plan_build(const sim_config *c, dp_plan *p, err_t *e) {
  memset(p, 0, sizeof *p);
  int G, rc;
  if ((rc = plan_job(c, &G, &p->batch, &p->precision, e))) return rc;
  if (c->framework != SIM_FRAMEWORK_DP) return err_set(e, ERR_INPUT, "not a DataParallel configuration");
  if (c->mode != SIM_MODE_DDP || c->no_sync != 1 || c->comm_hook != SIM_HOOK_NONE || c->layout != SIM_LAYOUT_REDUCER || c->static_graph ||
      c->find_unused || c->ncap_list || c->ddp_iteration || c->backend != SIM_BACKEND_NCCL ||
      c->fidelity != SIM_FIDELITY_FLOW)
    return err_set(e, ERR_USAGE, "DataParallel has no buckets, no_sync, communication hooks, backends or fidelities to choose");
  if (c->jitter_cv > 0) return err_set(e, ERR_USAGE, "compute jitter is not modelled for DataParallel");
  if (!(c->dp_gil_share >= 0 && c->dp_gil_share <= 1) || !(c->dp_handover_s >= 0 && c->dp_handover_s <= 1))
    return err_set(e, ERR_USAGE, "the GIL's share of the host cost must be 0 to 1 and its hand-over 0 to 1 s, got %g and %g",
                   c->dp_gil_share, c->dp_handover_s);
  const model_t *m = c->model;
  p->gpus = G;
  p->backward_gil = sim_dp_backward_gil(c);
  channels_t ch;
  platform_spec spec;
  double *pair = NULL;
  unsigned char *near = NULL;
  memset(&ch, 0, sizeof ch);
  rc = plan_network(c, G, &ch, &spec, &pair, &near, e);
  p->ring_bw_Bps = channels_bw_Bps(&ch);
  p->hop_s = spec.intra_lat_s;
  p->channels = ch.count;
  p->channel_bw_Bps = ch.speed_Bps;
  p->nics_used = ch.nics_used;
  p->channels_exhausted = ch.exhausted;
  channels_free(&ch);
  free(pair);
  free(near);
  if (rc) return rc;
  double copy_s;
  if ((rc = cost_input(c, m, p->batch, &p->h2d, &copy_s, e))) return rc;
  if (p->h2d == SIM_H2D_PREFETCH) return err_set(e, ERR_USAGE, "DataParallel scatters its input itself: no side-stream prefetch");
  if (G > 1 && m->output_elems_per_sample <= 0)
    return err_set(e, ERR_INPUT, "%s: DataParallel gathers the outputs to GPU 0, and the model has no 'output' line", m->path);
  p->nops = m->nops;
  if (!(p->op_s = calloc((size_t)(m->nops + 1), sizeof *p->op_s))) return err_set(e, ERR_NOMEM, "out of memory");
  double S = (double)model_total_bytes(m, p->precision), bw = p->ring_bw_Bps, hop = p->hop_s;
  double out = (double)m->output_elems_per_sample * (double)model_dtype_size(p->precision) * (double)p->batch;
  if (G > 1) {
    p->replicate_s = (G - 1) * hop + S / bw;                   /* broadcast, pipelined along the GPUs */
    p->gather_s = 2.0 * (G - 1) * out / bw;                    /* into GPU 0's links, and back */
    p->reduce_s = (G - 1) * hop + (double)(G - 1) / G * S / bw; /* a ring reduce to GPU 0 */
  }
  if ((rc = dp_chain(c, p, G, e))) {
    dp_plan_free(p);
    return rc;
  }
  p->scatter_s = G * copy_s;                                   /* one thread copies every chunk */
  if (c->load_s > 0) {
    /* The DataLoader's batch is all G replicas' samples. */
    double load = G * c->load_s;
    double rest = p->forward_s + p->backward_s + p->optimizer_s + p->scatter_s + p->replicate_s + p->gather_s + p->reduce_s;
    p->loading_s = c->workers == 0 ? load : (load / c->workers > rest ? load / c->workers - rest : 0);
  }
  return ERR_OK;
}

void dp_readout(const dp_plan *p, sim_result *r) {
  r->gpus = p->gpus;
  r->ranks_simulated = 0;
  r->batch = p->batch;
  r->precision = p->precision;
  r->forward_s = p->forward_s;
  r->backward_s = p->backward_s;
  r->optimizer_s = p->optimizer_s;
  r->compute_s = p->forward_s + p->backward_s + p->optimizer_s;
  r->host_busy_s = p->host_busy_s;
  r->host_bound_s = r->host_bound_max_s = p->host_bound_s;
  r->extrapolated_ops = p->extrapolated_ops;
  r->jitter_kind = PROFILE_JITTER_NONE;
  r->h2d = p->h2d;
  r->channels = p->channels;
  r->channel_bw_Bps = p->channel_bw_Bps;
  r->nics_used = p->nics_used;
  r->channels_exhausted = p->channels_exhausted;
  r->intra_bw_Bps = p->ring_bw_Bps;
  r->intra_lat_s = p->hop_s;
  r->dp_scatter_s = p->scatter_s;
  r->dp_replicate_s = p->replicate_s;
  r->dp_gather_s = p->gather_s;
  r->dp_reduce_s = p->reduce_s;
  r->transfer_s = p->scatter_s;
  r->loading_s = p->loading_s;
  r->exposed_comm_s = p->replicate_s + p->gather_s + p->reduce_s;
  r->iteration_s = r->loading_s + r->transfer_s + r->compute_s + r->exposed_comm_s;
  r->buckets_iteration_s = r->iteration_s;
}

void dp_plan_free(dp_plan *p) {
  if (!p) return;
  free(p->op_s);
  p->op_s = NULL;
}

/* One derived span of GPU g from *t for dur_s; advances *t. */
static int dp_span(sim_timeline *t, int g, timeline_track track, timeline_kind kind, double *at, double dur_s) {
  timeline_span s = {.rank = g, .track = track, .kind = kind, .index = -1, .iter = 0, .derived = 1, .start_s = *at,
                     .end_s = *at + dur_s};
  *at += dur_s;
  return dur_s > 0 ? timeline_add(t, &s) : 0;
}

int dp_timeline(const dp_plan *p, const model_t *m, sim_timeline **out, err_t *e) {
  sim_timeline *t = timeline_new();
  int G = p->gpus, bad = !t;
  if (t) {
    t->dataparallel = 1;
    t->ranks = t->sim_ranks = t->gpus_per_node = G;
    t->sim_nodes = t->iterations = t->no_sync = 1;
    t->nops = p->nops;
    t->op_s = timeline_dup_d(p->op_s, p->nops);
    t->op_seg = calloc((size_t)(p->nops + 1), sizeof *t->op_seg);
    t->nseg = 1; /* backward as one segment: DataParallel reduces after it */
    t->seg_s = timeline_dup_d(&p->backward_s, 1);
    t->seg_copy_s = calloc(1, sizeof(double));
    t->ready_seg = calloc(1, sizeof(int));
    bad = !t->op_s || !t->op_seg || !t->seg_s || !t->seg_copy_s || !t->ready_seg;
    for (int o = 0; !bad && o < p->nops; o++)
      t->op_seg[o] = m->ops[o].phase == MODEL_PHASE_FORWARD ? -1 : m->ops[o].phase == MODEL_PHASE_OPTIMIZER ? -2 : 0;
  }
  /* The phases in dp_readout's order; one thread scatters every GPU's chunk in turn (scatter_s is
   * G copies), and the optimizer steps GPU 0's parameters only. */
  double chunk = G > 0 ? p->scatter_s / G : 0;
  for (int g = 0; !bad && g < G; g++) {
    double at = 0, it_s = p->loading_s + p->scatter_s + p->replicate_s + p->forward_s + p->gather_s + p->backward_s +
                          p->reduce_s + p->optimizer_s;
    bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_ITERATION, &at, it_s);
    at = 0;
    bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_INPUT_WAIT, &at, p->loading_s);
    double sc = at + g * chunk;
    bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_DP_SCATTER, &sc, chunk);
    at += p->scatter_s;
    bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_DP_REPLICATE, &at, p->replicate_s);
    if (g == 0) {
      double gil = at;
      bad |= dp_span(t, 0, TIMELINE_TRACK_GIL, TIMELINE_GIL_HELD, &gil, p->forward_s);
      gil += p->gather_s;
      if (p->backward_gil) bad |= dp_span(t, 0, TIMELINE_TRACK_GIL, TIMELINE_GIL_HELD, &gil, p->backward_s);
    }
    bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_FORWARD, &at, p->forward_s);
    bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_DP_GATHER, &at, p->gather_s);
    bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_DP_BACKWARD, &at, p->backward_s);
    bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_DP_REDUCE, &at, p->reduce_s);
    if (g == 0) bad |= dp_span(t, g, TIMELINE_TRACK_COMPUTE, TIMELINE_OPTIMIZER, &at, p->optimizer_s);
  }
  if (bad) {
    timeline_free(t);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  *out = t;
  return ERR_OK;
}

int dp_plan_write(FILE *f, const dp_plan *p, err_t *e) {
  fprintf(f, "# ddpsim plan (DataParallel: phases in order, summed)\n");
  fprintf(f, "job 1 process x %d GPUs, batch %ld/GPU, %s%s\n", p->gpus, p->batch, model_dtype_name(p->precision),
          p->backward_gil ? ", backward under the GIL" : "");
  fprintf(f, "load %.9g s\nscatter %.9g s\nreplicate %.9g s\nforward %.9g s\ngather %.9g s\nbackward %.9g s\n", p->loading_s,
          p->scatter_s, p->replicate_s, p->forward_s, p->gather_s, p->backward_s);
  fprintf(f, "reduce %.9g s\noptimizer %.9g s\n", p->reduce_s, p->optimizer_s);
  if (ferror(f)) return err_set(e, ERR_IO, "cannot write the plan");
  return ERR_OK;
}
