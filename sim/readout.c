#include "readout.h"

#include <stdlib.h>
#include <string.h>

/* The plan's part of the result: what it says before anything is simulated. */
static void readout_plan(const plan_t *p, sim_result *r) {
  r->gpus = p->ranks;
  r->ranks_simulated = p->sim_ranks;
  r->batch = p->batch;
  r->precision = p->precision;
  r->extrapolated_ops = p->extrapolated_ops;
  r->jitter_kind = p->jitter_kind;
  r->jitter_cv = p->jitter_cv;
  r->straggler_s = p->straggler_s;
  r->h2d = p->h2d;
  r->shares_compute = p->shares_compute;
  r->channels = p->ch.count;
  r->channel_bw_Bps = p->ch.speed_Bps;
  r->nics_used = p->ch.nics_used;
  r->channels_exhausted = p->ch.exhausted;
  /* What the channels get: inside a node all of them; between nodes the NICs they cross. */
  r->intra_bw_Bps = p->gpus_per_node > 1 ? p->ring_bw_Bps : 0;
  r->intra_lat_s = p->intra_lat_s;
  r->nic_bw_Bps = p->nodes > 1 ? p->ring_bw_Bps : 0;
  r->nic_lat_s = p->nic_lat_s;
  r->iterations_simulated = p->iterations;
}

/* A part of the iteration found by subtraction: within rounding of the clock's sums (1 ns per
 * simulated second) of 0 it is 0; below that it is a fault of the model, never printed. */
static int snap_part(double *v, double iteration_s, const char *what, err_t *e) {
  double tol = 1e-9 * iteration_s;
  if (*v > tol) return ERR_OK;
  if (*v < -tol) return err_set(e, ERR_SIM, "internal: the iteration's %s came out negative (%.9g s)", what, *v);
  *v = 0;
  return ERR_OK;
}

/* Rank 0's compute as the engine played it: each phase times this GPU's draw in each steady
 * iteration (1 without jitter), averaged, so that the breakdown subtracts what was simulated, not
 * the mean the draws scatter around. *strag_s: per iteration, how much longer the slowest GPU
 * computed up to the final wait than rank 0 (the most rank 0 can have waited for it). */
static void drawn_compute(const plan_t *p, int first, sim_result *r, double *strag_s) {
  int K = p->iterations, cyc = p->no_sync, n = K - first;
  double copy_in = 0, bwd = 0;
  for (int s = 0; s < p->nseg; s++) copy_in += p->seg_copy_s[s], bwd += p->seg_s[s];
  r->forward_s = r->backward_s = r->optimizer_s = r->bucket_copy_s = *strag_s = 0;
  for (int it = first; it < K; it++) {
    int sync = p->ranks > 1 && it % cyc == cyc - 1;
    const double *row = p->jitter ? p->jitter + (size_t)it * (size_t)p->ranks : NULL;
    double d0 = row ? row[0] : 1.0, dmax = d0;
    for (int k = 1; row && sync && k < p->ranks; k++)
      if (row[k] > dmax) dmax = row[k];
    r->forward_s += p->forward_s * d0 / n;
    r->backward_s += bwd * d0 / n;
    r->optimizer_s += p->optimizer_s * d0 / n;
    if (sync) {
      r->bucket_copy_s += (copy_in + p->copy_back_s) * d0 / n;
      *strag_s += (dmax - d0) * (p->forward_s + bwd + copy_in) / n;
    }
  }
  r->compute_s = r->forward_s + r->backward_s + r->optimizer_s + r->bucket_copy_s;
}

/* The engine's spans with the plan's costs that name and divide them (sim/timeline.h): the spans
 * move from the record to the timeline. */
static int readout_timeline(const plan_t *p, engine_record *rec, sim_result *r, err_t *e) {
  sim_timeline *t = timeline_new();
  if (!t) return err_set(e, ERR_NOMEM, "out of memory");
  t->spans = rec->spans;
  t->n = t->cap = rec->nspans;
  rec->spans = NULL;
  rec->nspans = 0;
  t->ranks = p->ranks;
  t->gpus_per_node = p->gpus_per_node;
  t->sim_nodes = p->sim_nodes;
  t->sim_ranks = p->sim_ranks;
  t->iterations = p->iterations;
  t->no_sync = p->no_sync;
  t->nops = p->nops;
  t->op_s = timeline_dup_d(p->op_s, p->nops);
  t->op_seg = timeline_dup_i(p->op_seg, p->nops);
  t->nseg = p->nseg;
  t->seg_s = timeline_dup_d(p->seg_s, p->nseg);
  t->seg_copy_s = timeline_dup_d(p->seg_copy_s, p->nseg);
  t->nb = p->nb;
  t->ready_seg = timeline_dup_i(p->ready_seg, p->nb);
  if (!t->op_s || !t->op_seg || !t->seg_s || !t->seg_copy_s || !t->ready_seg) {
    timeline_free(t);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  r->timeline = t;
  return ERR_OK;
}

int readout_ddp(plan_t *p, engine_record *rec, sim_result *r, err_t *e) {
  int K = p->iterations, nb = p->nb, cyc = p->no_sync;
  if (rec->iterations != K || rec->nb != nb) return err_set(e, ERR_SIM, "the engine's record does not fit the plan");
  readout_plan(p, r);
  r->buckets = calloc((size_t)(nb ? nb : 1), sizeof *r->buckets);
  if (!r->buckets) return err_set(e, ERR_NOMEM, "out of memory");
  r->iteration_s = K == cyc ? (rec->iter_end[K - 1] - rec->iter_start[0]) / K
                            : (rec->iter_end[K - 1] - rec->iter_start[cyc]) / (K - cyc);
  r->buckets_iteration_s = rec->iter_end[K - 1] - rec->iter_start[K - 1];
  int first = K == cyc ? 0 : cyc;
  for (int it = first; it < K; it++) {
    r->loading_s += rec->load_wait[it] / (K - first);
    r->transfer_s += rec->copy_wait[it] / (K - first);
  }
  double strag_s;
  drawn_compute(p, first, r, &strag_s);
  /* What is left of the iteration is communication not hidden behind compute, and waiting for the
   * slowest GPU (the straggler estimate, as far as there was waiting at all). */
  r->buffer_broadcast_s = p->buffers_s;
  double rest = r->iteration_s - r->compute_s - r->loading_s - r->transfer_s - r->buffer_broadcast_s;
  int rc = snap_part(&rest, r->iteration_s, "exposed communication", e);
  if (rc) {
    free(r->buckets);
    r->buckets = NULL;
    return rc;
  }
  r->straggler_wait_s = strag_s < rest ? strag_s : rest;
  r->exposed_comm_s = rest - r->straggler_wait_s;
  snap_part(&r->exposed_comm_s, r->iteration_s, "", e);
  snap_part(&r->straggler_wait_s, r->iteration_s, "", e);
  double base = rec->iter_start[K - 1];
  for (int b = 0; b < nb; b++) {
    sim_bucket_time *bt = &r->buckets[b];
    const plan_coll *pc = &p->coll[b];
    bt->index = b;
    bt->bytes = p->buckets.b[b].bytes;
    bt->wire_bytes = (size_t)pc->bytes;
    bt->algo = pc->algo;
    bt->proto = pc->proto;
    bt->nccl_estimate_s = pc->estimate_s;
    bt->ready_s = rec->ready[b] - base;
    bt->comm_start_s = rec->start[b] - base;
    bt->comm_end_s = rec->end[b] - base;
    r->comm_busy_s += rec->end[b] - rec->start[b];
  }
  r->plan = p->buckets;
  memset(&p->buckets, 0, sizeof p->buckets);
  r->messages = rec->messages;
  r->peak_rss_kb = rec->peak_rss_kb;
  if (p->record_spans && (rc = readout_timeline(p, rec, r, e))) {
    free(r->buckets);
    r->buckets = NULL;
    bucket_plan_free(&r->plan);
    return rc;
  }
  return ERR_OK;
}
