#include "readout.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
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

/* Rank 0's compute as the engine played it (its record of each iteration: the program's values,
 * jitter draws included), averaged over the steady iterations, so that the breakdown subtracts what
 * was simulated. Each phase is its span on the compute stream (host-bound gaps included); the
 * tail's span is the engine's. *strag_s: per iteration, how much later the slowest GPU reached the
 * final wait than rank 0 (the most rank 0 can have waited for it). */
static void drawn_compute(const plan_t *p, const record_t *rec, int first, sim_result *r, double *strag_s) {
  int K = p->iterations, n = K - first;
  r->forward_s = r->backward_s = r->optimizer_s = r->bucket_copy_s = *strag_s = 0;
  for (int it = first; it < K; it++) {
    r->forward_s += rec->fwd[it] / n;
    r->backward_s += (rec->bwd[it] + rec->slowed[it]) / n; /* backward as it ran beside the collectives */
    r->bucket_copy_s += (rec->copy_in[it] + rec->copy_back[it] + rec->copy_early[it]) / n;
    r->optimizer_s += (rec->tail_span[it] - rec->copy_back[it]) / n;
    if (p->host_jitter) r->host_jitter_s += p->host_jitter[(size_t)it * (size_t)p->ranks] / n;
    if (plan_sync(p, it) && rec->reach_max[it] > rec->reach0[it]) *strag_s += (rec->reach_max[it] - rec->reach0[it]) / n;
  }
  r->compute_s = r->forward_s + r->backward_s + r->optimizer_s + r->bucket_copy_s;
  /* Host and device, per iteration: rank 0's, and the most host-bound rank's. */
  for (int k = 0; k < rec->ranks; k++) {
    double hb = rec->host_bound[k] / n;
    if (k == 0) {
      r->host_busy_s = rec->host_busy[0] / n;
      r->device_busy_s = rec->device_busy[0] / n;
      r->host_bound_s = hb;
      r->device_bound_s = rec->device_bound[0] / n;
    }
    if (hb > r->host_bound_max_s) r->host_bound_max_s = hb;
  }
}

int readout_timeline(const plan_t *p, record_t *rec, sim_result *r, err_t *e) {
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
  t->steady_from = plan_first_steady(p);
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

/* The half-width of the 95% confidence interval of the mean iteration: the steady cycles' lengths
 * (per iteration) as a sample, Student's t with n - 1 degrees of freedom. Each cycle's draws are
 * independent of the others'; NAN (unknown) with fewer than two steady cycles. */
static double mean_ci_s(const plan_t *p, const record_t *rec) {
  int cyc = p->no_sync, first = plan_first_steady(p) / cyc, n = p->iterations / cyc - first;
  if (n < 2) return NAN;
  double sum = 0, sq = 0;
  for (int j = first; j < first + n; j++) {
    double d = (rec->iter_end[(j + 1) * cyc - 1] - rec->iter_start[j * cyc]) / cyc;
    sum += d;
    sq += d * d;
  }
  double mean = sum / n, var = (sq - n * mean * mean) / (n - 1);
  return gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(var > 0 ? var : 0) / sqrt(n);
}

/* qsort: intervals (start, end) by start. */
static int by_start(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int readout_ddp(plan_t *p, record_t *rec, sim_result *r, err_t *e) {
  int K = p->iterations, nb = p->nb;
  if (rec->iterations != K || rec->nb != nb) return err_set(e, ERR_SIM, "the engine's record does not fit the plan");
  readout_plan(p, r);
  r->buckets = calloc((size_t)(nb ? nb : 1), sizeof *r->buckets);
  if (!r->buckets) return err_set(e, ERR_NOMEM, "out of memory");
  int first = plan_first_steady(p);
  r->iteration_s = (rec->iter_end[K - 1] - rec->iter_start[first]) / (K - first);
  r->buckets_iteration_s = rec->iter_end[K - 1] - rec->iter_start[K - 1];
  r->jittered = plan_varies(p);
  r->iteration_ci_s = r->jittered ? mean_ci_s(p, rec) : 0;
  for (int it = first; it < K; it++) {
    r->loading_s += rec->load_wait[it] / (K - first);
    r->transfer_s += rec->copy_wait[it] / (K - first);
  }
  double strag_s;
  drawn_compute(p, rec, first, r, &strag_s);
  int rc;
  /* What is left of the iteration is communication not hidden behind compute, and waiting for the
   * slowest GPU (the straggler estimate, as far as there was waiting at all). */
  r->buffer_broadcast_s = p->buffers_s;
  double rest = r->iteration_s - r->compute_s - r->loading_s - r->transfer_s - r->buffer_broadcast_s;
  rc = snap_part(&rest, r->iteration_s, "exposed communication", e);
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
  int synced = plan_sync(p, K - 1);
  for (int b = 0; b < nb; b++) {
    sim_bucket_time *bt = &r->buckets[b];
    const plan_coll *pc = &p->coll[b];
    bt->index = b;
    bt->bytes = p->buckets.b[b].bytes;
    bt->wire_bytes = (size_t)pc->bytes;
    bt->algo = pc->algo;
    bt->proto = pc->proto;
    bt->nccl_estimate_s = pc->estimate_s;
    /* The last iteration's events (sim/program.h): where it does not synchronise, nothing is
     * all-reduced and each bucket's collective is empty at its ready time. */
    double ready = rec->at[p->at_ready[b]], start = synced ? rec->at[p->at_start[b]] : ready;
    double end = synced ? rec->at[p->at_end[b]] : ready;
    bt->ready_s = ready - base;
    bt->comm_start_s = start - base;
    bt->comm_end_s = end - base;
    r->comm_busy_s += end - start;
  }
  /* A program whose collectives are not buckets' (FSDP's, on several streams): the time any of them
   * ran in the last iteration, their intervals' union (two streams' overlaps counted once). */
  if (nb == 0 && p->prog.ncoll > 0 && p->at_start && p->at_end) {
    int n = p->prog.ncoll;
    double *iv = malloc((size_t)n * 2 * sizeof *iv);
    if (!iv) return err_set(e, ERR_NOMEM, "out of memory");
    for (int c = 0; c < n; c++) iv[2 * c] = rec->at[p->at_start[c]], iv[2 * c + 1] = rec->at[p->at_end[c]];
    qsort(iv, (size_t)n, 2 * sizeof *iv, by_start);
    double hi = -INFINITY;
    for (int c = 0; c < n; c++) {
      double a = fmax(iv[2 * c], hi), b = iv[2 * c + 1];
      if (b > a) r->comm_busy_s += b - a;
      hi = fmax(hi, b);
    }
    free(iv);
  }
  r->plan = p->buckets;
  memset(&p->buckets, 0, sizeof p->buckets);
  r->messages = rec->messages;
  r->peak_rss_kb = rec->peak_rss_kb;
  r->closed_form = rec->closed_form;
  if (p->record_spans && (rc = readout_timeline(p, rec, r, e))) {
    free(r->buckets);
    r->buckets = NULL;
    bucket_plan_free(&r->plan);
    return rc;
  }
  return ERR_OK;
}
