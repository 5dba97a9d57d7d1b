#include "readout.h"

#include <stdlib.h>
#include <string.h>

/* The plan's part of the result: what it says before anything is simulated. */
static void readout_plan(const plan_t *p, sim_result *r) {
  r->gpus = p->ranks;
  r->ranks_simulated = p->sim_ranks;
  r->batch = p->batch;
  r->precision = p->precision;
  r->forward_s = p->forward_s;
  r->backward_s = p->backward_s;
  r->optimizer_s = p->optimizer_s;
  r->bucket_copy_s = p->bucket_copy_s;
  /* Compute on the GPU: the model's ops, and DDP's bucket copies (in synchronised iterations). */
  r->compute_s = p->forward_s + p->backward_s + p->optimizer_s + p->bucket_copy_s / p->no_sync;
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

int readout_ddp(plan_t *p, const engine_record *rec, sim_result *r, err_t *e) {
  int K = p->iterations, nb = p->nb, cyc = p->no_sync;
  if (rec->iterations != K || rec->nb != nb) return err_set(e, ERR_SIM, "the engine's record does not fit the plan");
  readout_plan(p, r);
  r->buckets = calloc((size_t)(nb ? nb : 1), sizeof *r->buckets);
  if (!r->buckets) return err_set(e, ERR_NOMEM, "out of memory");
  r->iteration_s = K == cyc ? (rec->iter_end[K - 1] - rec->iter_start[0]) / K
                            : (rec->iter_end[K - 1] - rec->iter_start[cyc]) / (K - cyc);
  int first = K == cyc ? 0 : cyc;
  for (int it = first; it < K; it++) {
    r->loading_s += rec->load_wait[it] / (K - first);
    r->transfer_s += rec->copy_wait[it] / (K - first);
  }
  r->exposed_comm_s = r->iteration_s - r->compute_s - r->loading_s - r->transfer_s;
  if (r->exposed_comm_s < 0 && r->exposed_comm_s > -1e-9 * r->iteration_s) r->exposed_comm_s = 0;
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
  return ERR_OK;
}
