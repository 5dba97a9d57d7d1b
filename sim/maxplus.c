#include "maxplus.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "platform.h"

int maxplus_applies(const plan_t *p) {
  /* Links without latency (the plan's: collectives wait NCCL's latency term instead), so that a
   * flow takes its bytes over its rate and nothing else. */
  int no_lat = p->platform.intra_lat_s == 0 && p->platform.nic_lat_s == 0;
  return no_lat && p->fidelity == SIM_FIDELITY_FLOW && !p->record_spans && !p->shares_compute && !(p->load_s > 0) && p->sim_ranks > 1 &&
         (plan_varies(p) || (p->sim_ranks == p->ranks && p->sim_nodes > 2));
}

/* A sleep of s from t, as the actors take it (none unless positive). */
static double after(double t, double s) { return s > 0 ? t + s : t; }

/* Per rank, what one iteration's row gives the buckets and the tail. */
typedef struct {
  double *ready, *lag; /* (n x nb) */
  double *t0, *bwd, *tail_a, *tail_b, *tail_dev, *host_busy, *dev_busy, *starved; /* (n) */
  double *clock;       /* (n) the compute actor's clock */
  double *copied, *taken; /* (n) prefetch: the last batch copied, and taken by the loop */
  double *post;        /* (n) when the rank posted the collective in progress */
} ranks_t;

static void ranks_free(ranks_t *R) {
  double **a[] = {&R->ready, &R->lag, &R->t0, &R->bwd, &R->tail_a, &R->tail_b, &R->tail_dev, &R->host_busy,
                  &R->dev_busy, &R->starved, &R->clock, &R->copied, &R->taken, &R->post};
  for (size_t i = 0; i < sizeof a / sizeof *a; i++) {
    free(*a[i]);
    *a[i] = NULL;
  }
}

static int ranks_alloc(ranks_t *R, size_t n, size_t nb) {
  memset(R, 0, sizeof *R);
  R->ready = calloc(n * nb + 1, sizeof(double));
  R->lag = calloc(n * nb + 1, sizeof(double));
  double **a[] = {&R->t0, &R->bwd, &R->tail_a, &R->tail_b, &R->tail_dev, &R->host_busy,
                  &R->dev_busy, &R->starved, &R->clock, &R->copied, &R->taken, &R->post};
  int bad = !R->ready || !R->lag;
  for (size_t i = 0; i < sizeof a / sizeof *a; i++) bad |= !(*a[i] = calloc(n, sizeof(double)));
  if (bad) ranks_free(R);
  return bad ? -1 : 0;
}

static int eval(const plan_t *p, const platform_pair *pairs, size_t npairs, engine_record *rec, err_t *e) {
  int n = p->sim_ranks, nb = p->nb, K = p->iterations;
  int first = K == p->no_sync ? 0 : p->no_sync;
  ranks_t R;
  pipe_t w;
  plan_row row;
  if (ranks_alloc(&R, (size_t)n, (size_t)nb)) return err_set(e, ERR_NOMEM, "out of memory");
  int rc = pipe_init(&w, p->queue, e);
  if (rc) {
    ranks_free(&R);
    return rc;
  }
  if ((rc = plan_row_alloc(p, &row, e))) {
    pipe_free(&w);
    ranks_free(&R);
    return rc;
  }
  for (int it = 0; it < K; it++) {
    int sync = p->ranks > 1 && it % p->no_sync == p->no_sync - 1, last = it == K - 1;
    /* Each rank up to the end of its backward: input, buffers, forward, segments (ready events). */
    for (int r = 0; r < n; r++) {
      double it0 = R.clock[r], now = it0, cw;
      if (p->prefetch) {
        /* The side stream copies batch it once it copied the previous one and the loop took that
         * (one GPU buffer); the loop takes it when both it and the copy are there. */
        double start = it == 0 ? 0 : (R.copied[r] > R.taken[r] ? R.copied[r] : R.taken[r]);
        R.copied[r] = after(start, p->copy_s);
        if (R.copied[r] > now) now = R.copied[r];
        R.taken[r] = now;
        cw = now - it0;
      } else {
        now = after(now, p->copy_s);
        cw = p->copy_s;
      }
      if (r == 0) {
        rec->iter_start[it] = it0;
        rec->load_wait[it] = 0;
        rec->copy_wait[it] = cw;
      }
      now = after(now, p->buffers_s);
      const plan_row *row_r = plan_timeline(p, it, r, &w, &row);
      double t0 = now, prev = row_r->fwd_end;
      now = after(now, row_r->fwd_end);
      for (int s = 0; s < p->nseg; s++) {
        now = after(now, row_r->seg_end[s] - prev);
        prev = row_r->seg_end[s];
        for (int b = 0; b < nb; b++)
          if (p->ready_seg[b] == s) {
            R.ready[(size_t)r * nb + b] = now;
            R.lag[(size_t)r * nb + b] = row_r->lag[b];
            if (r == 0 && last) rec->ready[b] = rec->start[b] = rec->end[b] = now;
          }
      }
      now = after(now, row_r->bwd_end - prev);
      R.t0[r] = t0;
      R.bwd[r] = now;
      R.tail_a[r] = row_r->tail_a;
      R.tail_b[r] = row_r->tail_b;
      R.tail_dev[r] = row_r->tail_dev_s;
      R.host_busy[r] = row_r->host_busy_s;
      R.dev_busy[r] = row_r->dev_busy_s;
      R.starved[r] = row_r->starved_s;
    }
    /* The buckets, in order: the collective ends on every rank at once (the engine's barrier). */
    double done = -1; /* every rank's NCCL stream done with the previous bucket (-1: none yet) */
    for (int b = 0; sync && b < nb; b++) {
      const plan_coll *pc = &p->coll[b];
      for (int r = 0; r < n; r++) {
        double rd = R.ready[(size_t)r * nb + b], launch = rd + R.lag[(size_t)r * nb + b];
        if (rd > launch) launch = rd;
        if (done > launch) launch = done;
        if (r == 0 && last) rec->start[b] = launch;
        R.post[r] = after(launch, p->hook_pre_s[b]);
      }
      double end = 0;
      for (size_t i = 0; i < npairs; i++) {
        double a = R.post[pairs[i].src], z = R.post[pairs[i].dst];
        double t = (a > z ? a : z) + (double)pc->edge_bytes * pairs[i].flows / pairs[i].min_Bps;
        if (t > end) end = t;
      }
      done = after(after(end, pc->lat_s), p->hook_post_s[b]);
      rec->messages += (long)n * p->ch.count;
      if (last) rec->end[b] = done;
    }
    /* Each rank's final wait and tail. */
    for (int r = 0; r < n; r++) {
      double d0 = R.bwd[r];
      if (sync && nb > 0 && done > d0) d0 = done;
      double end = d0 + R.tail_a[r];
      if (R.t0[r] + R.tail_b[r] > end) end = R.t0[r] + R.tail_b[r];
      double cb = sync && p->copies ? p->copy_back_s : 0;
      if (cb > end - d0) cb = end - d0;
      double now = after(d0, cb);
      now = after(now, end - now);
      R.clock[r] = now;
      if (r == 0) {
        rec->iter_end[it] = now;
        rec->tail_span[it] = now - d0;
      }
      if (it >= first) {
        double tail_idle = end - d0 - R.tail_dev[r], busy = end - R.t0[r];
        rec->host_busy[r] += R.host_busy[r];
        rec->device_busy[r] += R.dev_busy[r];
        rec->host_bound[r] += R.starved[r] + (tail_idle > 0 ? tail_idle : 0);
        rec->device_bound[r] += busy > R.host_busy[r] ? busy - R.host_busy[r] : 0;
      }
    }
  }
  rec->expected = rec->finished = n * (2 + (p->prefetch ? 1 : 0));
  plan_row_free(&row);
  pipe_free(&w);
  ranks_free(&R);
  return ERR_OK;
}

int maxplus_run(const plan_t *p, engine_record *rec, int *done, err_t *e) {
  *done = 0;
  platform_pair *pairs;
  size_t npairs;
  int exclusive;
  int rc = platform_pairs(&p->platform, &pairs, &npairs, &exclusive, e);
  if (rc) return rc;
  for (size_t i = 0; i < npairs; i++) exclusive &= pairs[i].min_Bps > 0;
  if (!exclusive) {
    free(pairs);
    return ERR_OK;
  }
  memset(rec, 0, sizeof *rec);
  if (engine_record_alloc(rec, p->iterations, p->nb, p->sim_ranks)) {
    free(pairs);
    engine_record_free(rec);
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  rc = eval(p, pairs, npairs, rec, e);
  free(pairs);
  if (rc) {
    engine_record_free(rec);
    return rc;
  }
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) rec->peak_rss_kb = ru.ru_maxrss;
  rec->closed_form = 1;
  *done = 1;
  return ERR_OK;
}
