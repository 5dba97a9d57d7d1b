/* nccltune: NCCL's per-algorithm/protocol parameters from forced sweeps. Derivation: docs/calib.md. */
#include "nccltune.h"

#include <math.h>
#include <string.h>

#include "coll.h"

/* The hop terms of sim/ncclmodel.h's model for combination (a, q) under s. */
static double hops_of(const nccltune_setup *s, int a, int q) {
  return nccl_hops_s(COLL_ALLREDUCE, (nccl_algo)a, s->nodes, s->gpus_per_node, s->hop_intra_s[a][q], s->hop_net_s[a][q]);
}

static int check_setup(const nccltune_setup *s, err_t *e) {
  if (s->nranks < 2)
    return err_set(e, ERR_RUNTIME, "nccltune: an all-reduce needs at least 2 ranks, got %d", s->nranks);
  if (s->nodes < 1 || s->gpus_per_node < 1 || s->nodes * s->gpus_per_node != s->nranks)
    return err_set(e, ERR_RUNTIME, "nccltune: %d ranks are not %d node(s) x %d per node", s->nranks,
                   s->nodes, s->gpus_per_node);
  if (!(s->bw_Bps > 0) || !isfinite(s->bw_Bps))
    return err_set(e, ERR_RUNTIME, "nccltune: the link bandwidth must be > 0, got %g B/s", s->bw_Bps);
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++)
      if (!(s->hop_intra_s[a][q] >= 0) || !isfinite(s->hop_intra_s[a][q]) || !(s->hop_net_s[a][q] >= 0) ||
          !isfinite(s->hop_net_s[a][q]))
        return err_set(e, ERR_RUNTIME, "nccltune: %s/%s: hop latencies must be finite and >= 0",
                       nccl_algo_name((nccl_algo)a), nccl_proto_name((nccl_proto)q));
  return ERR_OK;
}

/* One combination: the line from fit_ring, then base and factor from it. */
static int fit_combo(const nccltune_setup *s, int a, int q, const nccltune_sweep *w,
                     const fit_ring_opts *opts, nccltune_combo *c, err_t *e) {
  const char *an = nccl_algo_name((nccl_algo)a), *qn = nccl_proto_name((nccl_proto)q);
  if (!w->bytes || !w->time_s || w->n < NCCLTUNE_MIN_POINTS)
    return err_set(e, ERR_RUNTIME, "nccltune: %s/%s: %zu size(s) measured; the fit needs at least %d", an,
                   qn, w->bytes && w->time_s ? w->n : 0, NCCLTUNE_MIN_POINTS);
  fit_ring_result r;
  err_t fe = {{0}};
  int rc = fit_ring(w->bytes, w->time_s, w->n, s->nranks, opts, &r, &fe);
  if (rc) return err_set(e, rc, "nccltune: %s/%s: %s", an, qn, fe.msg);
  /* fit_ring reports per ring step; undo its scaling to get the line's own coefficients. Its
   * summary latency already falls back to the smallest time when the first intercept is <= 0. */
  double steps = (double)coll_ring_steps(COLL_ALLREDUCE, (long)s->nranks);
  c->c0_s = steps * r.lat_s;
  c->c1_s_per_B = steps / ((double)s->nranks * r.bw_Bps);
  if (!(c->c1_s_per_B > 0) || !isfinite(c->c1_s_per_B))
    return err_set(e, ERR_RUNTIME, "nccltune: %s/%s: slope %g s/B is not positive: no bandwidth to fit", an,
                   qn, c->c1_s_per_B);
  c->enabled = 1;
  c->points = w->n;
  c->nregimes = r.nregimes;
  c->min_bytes = w->bytes[0];
  c->max_bytes = w->bytes[w->n - 1];
  c->hops_s = hops_of(s, a, q);
  c->base_fit_s = c->c0_s - c->hops_s;
  c->base_clamped = c->base_fit_s < 0;
  c->base_lat_s = c->base_clamped ? 0 : c->base_fit_s;
  c->bw_factor_fit = nccl_edge_per_byte(COLL_ALLREDUCE, (nccl_algo)a, s->nranks) / (c->c1_s_per_B * s->bw_Bps);
  /* ring/Simple divides its own slope by itself: 1 up to rounding, which is no clamp. */
  c->bw_clamped = c->bw_factor_fit > 1 + 1e-9;
  c->bw_factor = c->bw_factor_fit > 1 ? 1 : c->bw_factor_fit;
  double sum = 0, m = 0;
  for (size_t i = 0; i < w->n; i++) {
    double t = nccl_time_s(COLL_ALLREDUCE, (nccl_algo)a, s->nodes, s->gpus_per_node, c->base_lat_s, s->hop_intra_s[a][q],
                           s->hop_net_s[a][q], c->bw_factor, s->bw_Bps, w->bytes[i]);
    double d = fabs((t - w->time_s[i]) / w->time_s[i]);
    sum += d * d;
    if (d > m) m = d;
  }
  c->rms_rel = sqrt(sum / (double)w->n);
  c->max_rel = m;
  return ERR_OK;
}

int nccltune_fit(const nccltune_setup *s, const nccltune_sweep sweep[NCCL_NALGO][NCCL_NPROTO],
                 const fit_ring_opts *opts, nccltune_result *out, err_t *e) {
  memset(out, 0, sizeof *out);
  int rc = check_setup(s, e);
  if (rc) return rc;
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) {
      if (sweep[a][q].refused || !nccl_algo_swept((nccl_algo)a, (nccl_proto)q)) continue;
      if ((rc = fit_combo(s, a, q, &sweep[a][q], opts, &out->c[a][q], e))) return rc;
      out->nenabled++;
    }
  if (!out->nenabled)
    return err_set(e, ERR_RUNTIME,
                   "nccltune: NCCL refused every algorithm/protocol combination: nothing to fit");
  return ERR_OK;
}
