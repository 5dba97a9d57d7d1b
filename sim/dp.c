#include "dp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "pipe.h"
#include "readout.h"

double dp_gil_period(double host_s, double gil_s, int threads, double handover_s) {
  if (threads < 2 || gil_s <= 0) return host_s;
  double round = threads * (gil_s + handover_s);
  return round > host_s ? round : host_s;
}

/* The copies between the GPUs, in the order they run: the plan's collectives 0, 1, 2. */
enum { DP_REPLICATE, DP_GATHER, DP_REDUCE, DP_NCOPIES };

/* The program's slots after the stats (sim/program.h): the loading, GPU g's wait for the scatter's
 * earlier chunks, its own chunk, the wait for the later ones; forward, backward; the optimizer (GPU
 * 0's; the others wait as long); the GIL held in forward and backward (GPU 0's track); zero. */
enum { S_LOAD = PROG_NSTATS, S_PRE, S_CHUNK, S_POST, S_FWD, S_BWD, S_OPT, S_IDLE, S_GIL_FWD, S_GIL_BWD, S_ZERO, DP_NSLOTS };

/* The phases' boundaries: rank 0's compute stream after its instruction, in the record's `at`. */
enum { AT_BEGIN, AT_LOADED, AT_SCATTERED, AT_REPLICATED, AT_FORWARD, AT_GATHERED, AT_BACKWARD, AT_REDUCED, AT_STEPPED, DP_NAT };

/* The builder's own data (plan_t.fw): the phases as planned, per iteration. */
typedef struct {
  int gpus, backward_gil;
  double loading_s, scatter_s;                /* exposed loading; the scatter (G copies by one thread) */
  double forward_s, backward_s, optimizer_s;  /* each phase's span on the stream, the GIL's turns in it */
  double copy_s[DP_NCOPIES];                  /* each copy as priced (dp_build) */
  double host_busy_s, host_bound_s;           /* GPU 0's host thread; its stream idle for it */
  long at[DP_NAT];
} dp_data;

/* The phases' ops of one iteration through one GPU's pipe (all replicas alike): each op run costs
 * the host dp_gil_period of its host time (a hand-over for each of its framework ops), the GIL's
 * share of it under the lock when `threads` Python threads take turns; the copies (replicate,
 * gather, reduce) cost the GPU their time and the host nothing modelled. Each phase's span on the
 * stream (what follows the copy before it) and each op's time in its phase go to d and p. */
static int dp_chain(const sim_config *c, plan_t *p, dp_data *d, err_t *e) {
  const model_t *m = c->model;
  pipe_t w;
  int rc = pipe_init(&w, p->queue, e), G = d->gpus;
  if (rc) return rc;
  double share = c->dp_gil_share, ho = c->dp_handover_s, mark = 0;
  double *span[] = {&d->forward_s, &d->backward_s, &d->optimizer_s};
  const double copy_after[] = {d->copy_s[DP_GATHER], d->copy_s[DP_REDUCE], 0};
  pipe_reset(&w, 0, 0);
  pipe_op(&w, 0, d->copy_s[DP_REPLICATE], 1, 1);
  mark = w.D;
  for (int ph = MODEL_PHASE_FORWARD; ph <= MODEL_PHASE_OPTIMIZER; ph++) {
    /* Forward runs in G Python threads; backward in the autograd engine's device threads, which
     * need the GIL only where the autograd functions are Python (dp_backward_gil: all of their
     * host work); the optimizer steps once, on GPU 0. */
    int threads = ph == MODEL_PHASE_FORWARD || (ph == MODEL_PHASE_BACKWARD && d->backward_gil) ? G : 1;
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
      p->op_seg[o] = ph == MODEL_PHASE_FORWARD ? -1 : ph == MODEL_PHASE_OPTIMIZER ? -2 : 0;
    }
    *span[ph] = w.D - mark;
    if (copy_after[ph] > 0) pipe_op(&w, 0, copy_after[ph], 1, 1);
    mark = w.D;
  }
  d->host_busy_s = w.host_busy_s;
  d->host_bound_s = w.starved_s;
done:
  pipe_free(&w);
  return rc;
}

/* plan_values: GPU r's values (no jitter: the same every iteration). The scatter's chunks are copied
 * by one thread in turn, GPU r's r-th. */
static void dp_values(const plan_t *p, int it, int r, pipe_t *w, plan_row *row, double *val) {
  (void)it, (void)w, (void)row;
  const dp_data *d = p->fw;
  double chunk = d->scatter_s / d->gpus;
  memset(val, 0, (size_t)p->prog.nslots * sizeof *val);
  val[PROG_STAT_FWD] = d->forward_s;
  val[PROG_STAT_BWD] = d->backward_s;
  val[PROG_STAT_HOST_BUSY] = d->host_busy_s;
  val[PROG_STAT_STARVED] = d->host_bound_s;
  val[S_LOAD] = d->loading_s;
  val[S_PRE] = r * chunk;
  val[S_CHUNK] = chunk;
  val[S_POST] = (d->gpus - 1 - r) * chunk;
  val[S_FWD] = d->forward_s;
  val[S_BWD] = d->backward_s;
  val[S_OPT] = r == 0 ? d->optimizer_s : 0;
  val[S_IDLE] = r == 0 ? 0 : d->optimizer_s;
  val[S_GIL_FWD] = r == 0 ? d->forward_s : 0;
  val[S_GIL_BWD] = r == 0 && d->backward_gil ? d->backward_s : 0;
}

/* Appends an instruction to stream st; its index there (-1 and *bad set when out of memory). */
static int emit(prog_t *g, int st, prog_op op, int span, int dur, int ev, int *bad) {
  prog_instr x = {.op = op, .span = span, .index = -1, .ev = ev, .coll = -1, .dur = dur, .lag = -1, .a = -1, .b = -1};
  if (prog_emit(g, st, &x)) {
    *bad = 1;
    return -1;
  }
  return g->streams[st].n - 1;
}

/* Copy k on the copies' stream cp, the compute stream waiting for it (the Python thread blocks
 * until the copy is done); the index of the compute stream's last instruction. */
static int copy(prog_t *g, int cp, int k, int span, int *ev, int *bad) {
  if (cp < 0) return g->streams[0].n - 1;
  int go = (*ev)++, done = (*ev)++;
  emit(g, 0, PROG_RECORD, -1, -1, go, bad);
  emit(g, cp, PROG_WAIT, -1, -1, go, bad);
  prog_instr x = {.op = PROG_COLL, .span = span, .index = -1, .ev = -1, .coll = k, .dur = -1, .lag = -1, .a = -1, .b = -1};
  if (prog_emit(g, cp, &x)) *bad = 1;
  emit(g, cp, PROG_RECORD, -1, -1, done, bad);
  return emit(g, 0, PROG_WAIT, -1, -1, done, bad);
}

static int dp_program(plan_t *p, dp_data *d, err_t *e) {
  prog_t *g = &p->prog;
  int rc = prog_init(g, DP_NSLOTS, e);
  if (rc) return rc;
  int cp = d->gpus > 1 ? prog_stream_add(g, PROG_STREAM_NCCL) : -1, gil = prog_stream_add(g, PROG_STREAM_COMPUTE);
  if ((d->gpus > 1 && cp < 0) || gil < 0) return err_set(e, ERR_NOMEM, "out of memory");
  /* One Python process: a GPU's copies show on its own thread (sim/trace.c), the GIL on GPU 0's. */
  if (cp >= 0) g->streams[cp].track = TIMELINE_TRACK_COMPUTE;
  g->streams[gil].track = TIMELINE_TRACK_GIL;
  int bad = 0, ev = 0, at[DP_NAT];
  int gil_fwd = ev++, gil_bwd = ev++;
  at[AT_BEGIN] = emit(g, 0, PROG_BEGIN, -1, -1, -1, &bad);
  at[AT_LOADED] = emit(g, 0, PROG_SLEEP, TIMELINE_INPUT_WAIT, S_LOAD, -1, &bad);
  emit(g, 0, PROG_SLEEP, -1, S_PRE, -1, &bad);
  emit(g, 0, PROG_SLEEP, TIMELINE_DP_SCATTER, S_CHUNK, -1, &bad);
  at[AT_SCATTERED] = emit(g, 0, PROG_SLEEP, -1, S_POST, -1, &bad);
  at[AT_REPLICATED] = copy(g, cp, DP_REPLICATE, TIMELINE_DP_REPLICATE, &ev, &bad);
  emit(g, 0, PROG_RECORD, -1, -1, gil_fwd, &bad);
  at[AT_FORWARD] = emit(g, 0, PROG_COMPUTE, TIMELINE_FORWARD, S_FWD, -1, &bad);
  at[AT_GATHERED] = copy(g, cp, DP_GATHER, TIMELINE_DP_GATHER, &ev, &bad);
  emit(g, 0, PROG_RECORD, -1, -1, gil_bwd, &bad);
  at[AT_BACKWARD] = emit(g, 0, PROG_COMPUTE, TIMELINE_DP_BACKWARD, S_BWD, -1, &bad);
  at[AT_REDUCED] = copy(g, cp, DP_REDUCE, TIMELINE_DP_REDUCE, &ev, &bad);
  emit(g, 0, PROG_COMPUTE, TIMELINE_OPTIMIZER, S_OPT, -1, &bad);
  at[AT_STEPPED] = emit(g, 0, PROG_SLEEP, -1, S_IDLE, -1, &bad);
  /* No host track: the host's side is the GIL's stream. The mark at the end leaves the tail (and
   * the host spans it would lay out) empty. */
  emit(g, 0, PROG_MARK, -1, -1, -1, &bad);
  int t = emit(g, 0, PROG_TAIL, -1, S_ZERO, -1, &bad);
  if (t >= 0) g->streams[0].ins[t].a = g->streams[0].ins[t].b = S_ZERO;
  emit(g, gil, PROG_WAIT, -1, -1, gil_fwd, &bad);
  emit(g, gil, PROG_SLEEP, TIMELINE_GIL_HELD, S_GIL_FWD, -1, &bad);
  emit(g, gil, PROG_WAIT, -1, -1, gil_bwd, &bad);
  emit(g, gil, PROG_SLEEP, TIMELINE_GIL_HELD, S_GIL_BWD, -1, &bad);
  if (bad) return err_set(e, ERR_NOMEM, "out of memory");
  if ((rc = prog_finish(g, e))) return rc;
  for (int k = 0; k < DP_NAT; k++) d->at[k] = prog_at_index(g, 0, at[k]);
  return ERR_OK;
}

int dp_build(const sim_config *c, plan_t *p, err_t *e) {
  memset(p, 0, sizeof *p);
  int G, rc;
  long batch;
  model_dtype prec;
  if ((rc = plan_job(c, &G, &batch, &prec, e))) return rc;
  if (c->framework != SIM_FRAMEWORK_DP) return err_set(e, ERR_INPUT, "not a DataParallel configuration");
  if (c->mode != SIM_MODE_DDP || c->no_sync != 1 || c->comm_hook != SIM_HOOK_NONE || c->layout != SIM_LAYOUT_REDUCER || c->static_graph ||
      c->find_unused || c->ncap_list || c->ddp_iteration || c->backend != SIM_BACKEND_NCCL ||
      c->fidelity != SIM_FIDELITY_FLOW)
    return err_set(e, ERR_USAGE, "DataParallel has no buckets, no_sync, communication hooks, backends or fidelities to choose");
  if (c->jitter_cv > 0) return err_set(e, ERR_USAGE, "compute jitter is not modelled for DataParallel");
  if (c->host_jitter_s > 0) return err_set(e, ERR_USAGE, "--host-jitter-us: host noise is not modelled for DataParallel");
  if (!(c->dp_gil_share >= 0 && c->dp_gil_share <= 1) || !(c->dp_handover_s >= 0 && c->dp_handover_s <= 1))
    return err_set(e, ERR_USAGE, "the GIL's share of the host cost must be 0 to 1 and its hand-over 0 to 1 s, got %g and %g",
                   c->dp_gil_share, c->dp_handover_s);
  if ((rc = plan_begin(c, p, e))) return rc;
  const model_t *m = c->model;
  dp_data *d = calloc(1, sizeof *d);
  if (!d) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  p->fw = d;
  p->fw_free = free;
  p->values = dp_values;
  d->gpus = G;
  d->backward_gil = sim_dp_backward_gil(c);
  /* The copies are GPU copies: no sharing of the SMs or the cores with compute is modelled. */
  p->gpu_sharing = p->shares_compute = 0;
  p->cpu_share = 0;
  /* Every rank's values are the same function of its GPU: no jitter or host noise (refused above;
   * the profile's own are not drawn either). */
  sim_config q = *c;
  q.jitter_cv = 0;
  q.host_jitter_s = 0;
  if ((rc = plan_end(&q, p, 0, e))) goto fail;
  if (p->h2d == SIM_H2D_PREFETCH) {
    rc = err_set(e, ERR_USAGE, "DataParallel scatters its input itself: no side-stream prefetch");
    goto fail;
  }
  if (G > 1 && m->output_elems_per_sample <= 0) {
    rc = err_set(e, ERR_INPUT, "%s: DataParallel gathers the outputs to GPU 0, and the model has no 'output' line", m->path);
    goto fail;
  }
  p->nops = m->nops;
  p->op_s = calloc((size_t)(m->nops + 1), sizeof *p->op_s);
  p->op_seg = calloc((size_t)(m->nops + 1), sizeof *p->op_seg);
  p->coll = calloc(DP_NCOPIES, sizeof *p->coll);
  p->seg_s = calloc(1, sizeof *p->seg_s);
  p->seg_copy_s = calloc(1, sizeof *p->seg_copy_s);
  if (!p->op_s || !p->op_seg || !p->coll || !p->seg_s || !p->seg_copy_s) {
    rc = err_set(e, ERR_NOMEM, "out of memory");
    goto fail;
  }
  /* The copies over the node's channels together (bw) at one hop (hop) each: the replication a
   * broadcast pipelined along the GPUs, the gather into GPU 0's links and back, the reduction a ring
   * reduce to GPU 0. */
  double S = (double)model_total_bytes(m, p->precision), bw = p->ring_bw_Bps, hop = p->intra_lat_s;
  double out = (double)m->output_elems_per_sample * (double)model_dtype_size(p->precision) * (double)p->batch;
  const double wire[DP_NCOPIES] = {S, 2.0 * (G - 1) * out, (double)(G - 1) / G * S};
  const double lat[DP_NCOPIES] = {(G - 1) * hop, 0, (G - 1) * hop};
  const coll_kind kind[DP_NCOPIES] = {COLL_BROADCAST, COLL_ALLGATHER, COLL_REDUCESCATTER};
  for (int k = 0; G > 1 && k < DP_NCOPIES; k++) {
    plan_coll *pc = &p->coll[k];
    d->copy_s[k] = lat[k] + wire[k] / bw;
    /* Played as every channel edge carrying its share at once (flow fidelity), then the latency. */
    pc->kind = kind[k];
    pc->algo = NCCL_ALGO_RING;
    pc->proto = NCCL_PROTO_SIMPLE;
    pc->bytes = wire[k];
    pc->estimate_s = d->copy_s[k];
    pc->lat_s = lat[k];
    pc->edge_bytes = lround(wire[k] / p->ch.count);
    pc->steps = 1;
    pc->step_bytes = pc->edge_bytes;
  }
  if ((rc = dp_chain(c, p, d, e))) goto fail;
  p->forward_s = d->forward_s;
  p->backward_s = p->seg_s[0] = d->backward_s; /* backward as one segment: DataParallel reduces after it */
  p->optimizer_s = d->optimizer_s;
  p->nseg = 1;
  d->scatter_s = G * p->copy_s; /* one thread copies every chunk */
  if (c->load_s > 0) {
    /* The DataLoader's batch is all G replicas' samples. */
    double load = G * c->load_s, rest = d->forward_s + d->backward_s + d->optimizer_s + d->scatter_s;
    for (int k = 0; k < DP_NCOPIES; k++) rest += d->copy_s[k];
    d->loading_s = c->workers == 0 ? load : (load / c->workers > rest ? load / c->workers - rest : 0);
  }
  /* The input is the program's (loading and scatter as laid out above), not the engine's pipeline. */
  p->load_s = p->copy_s = 0;
  p->workers = p->prefetch = 0;
  if ((rc = dp_program(p, d, e))) goto fail;
  return ERR_OK;
fail:
  plan_free(p);
  return rc;
}

int dp_readout(const plan_t *p, record_t *rec, sim_result *r, err_t *e) {
  const dp_data *d = p->fw;
  int K = p->iterations, first = plan_first_steady(p);
  if (!d || rec->iterations != K || rec->nat != prog_at_count(&p->prog))
    return err_set(e, ERR_SIM, "the engine's record does not fit the plan");
  r->gpus = p->ranks;
  r->ranks_simulated = p->sim_ranks;
  r->iterations_simulated = K;
  r->batch = p->batch;
  r->precision = p->precision;
  r->extrapolated_ops = p->extrapolated_ops;
  r->jitter_kind = PROFILE_JITTER_NONE;
  r->h2d = p->h2d;
  r->channels = p->ch.count;
  r->channel_bw_Bps = p->ch.speed_Bps;
  r->nics_used = p->ch.nics_used;
  r->channels_exhausted = p->ch.exhausted;
  r->intra_bw_Bps = p->ring_bw_Bps;
  r->intra_lat_s = p->intra_lat_s;
  /* The last iteration's phases on rank 0's compute stream, as played. */
  double at[DP_NAT];
  for (int k = 0; k < DP_NAT; k++) at[k] = rec->at[d->at[k]];
  r->loading_s = at[AT_LOADED] - at[AT_BEGIN];
  r->dp_scatter_s = r->transfer_s = at[AT_SCATTERED] - at[AT_LOADED];
  r->dp_replicate_s = at[AT_REPLICATED] - at[AT_SCATTERED];
  r->forward_s = at[AT_FORWARD] - at[AT_REPLICATED];
  r->dp_gather_s = at[AT_GATHERED] - at[AT_FORWARD];
  r->backward_s = at[AT_BACKWARD] - at[AT_GATHERED];
  r->dp_reduce_s = at[AT_REDUCED] - at[AT_BACKWARD];
  r->optimizer_s = at[AT_STEPPED] - at[AT_REDUCED];
  r->compute_s = r->forward_s + r->backward_s + r->optimizer_s;
  r->exposed_comm_s = r->dp_replicate_s + r->dp_gather_s + r->dp_reduce_s;
  r->iteration_s = (rec->iter_end[K - 1] - rec->iter_start[first]) / (K - first);
  r->buckets_iteration_s = rec->iter_end[K - 1] - rec->iter_start[K - 1];
  r->host_busy_s = rec->host_busy[0] / (K - first);
  r->host_bound_s = r->host_bound_max_s = rec->host_bound[0] / (K - first);
  r->messages = rec->messages;
  r->peak_rss_kb = rec->peak_rss_kb;
  r->closed_form = rec->closed_form;
  if (p->record_spans) {
    int rc = readout_timeline(p, rec, r, e);
    if (rc) return rc;
    r->timeline->dataparallel = 1;
  }
  return ERR_OK;
}

int dp_write(FILE *f, const plan_t *p, err_t *e) {
  const dp_data *d = p->fw;
  fprintf(f, "# ddpsim plan (DataParallel: one process, its phases in order)\n");
  fprintf(f, "job 1 process x %d GPUs, batch %ld/GPU, %s%s\n", d->gpus, p->batch, model_dtype_name(p->precision),
          d->backward_gil ? ", backward under the GIL" : "");
  fprintf(f, "channels %d x %.6g GB/s, one hop %.9g s\n", p->ch.count, p->ch.speed_Bps / 1e9, p->intra_lat_s);
  fprintf(f, "load %.9g s\nscatter %.9g s\nreplicate %.9g s\nforward %.9g s\ngather %.9g s\nbackward %.9g s\n", d->loading_s,
          d->scatter_s, d->copy_s[DP_REPLICATE], d->forward_s, d->copy_s[DP_GATHER], d->backward_s);
  fprintf(f, "reduce %.9g s\noptimizer %.9g s\n", d->copy_s[DP_REDUCE], d->optimizer_s);
  if (ferror(f)) return err_set(e, ERR_IO, "cannot write the plan");
  return prog_write(f, &p->prog, e);
}
