/* nccltune: NCCL's per-algorithm/protocol parameters from forced sweeps. Derivation: docs/calib.md. */
#include "nccltune.h"

#include <math.h>
#include <string.h>

static const char *const algo_names[NCCLTUNE_NALGO] = {"ring", "tree"};
static const char *const algo_env[NCCLTUNE_NALGO] = {"Ring", "Tree"};
static const char *const proto_names[NCCLTUNE_NPROTO] = {"LL", "LL128", "Simple"};
static const char *const hw_names[3] = {"NVLink", "PCI", "network"};

const char *nccltune_algo_name(int algo) { return algo_names[algo]; }
const char *nccltune_algo_env(int algo) { return algo_env[algo]; }
const char *nccltune_proto_name(int proto) { return proto_names[proto]; }
const char *nccltune_hw_name(nccltune_hw hw) { return hw_names[hw]; }

void nccltune_hw_hops(nccltune_hw hw, double hop_s[NCCLTUNE_NALGO][NCCLTUNE_NPROTO]) {
  /* NCCL src/graph/tuning.cc, hwLat[hw][algo][proto] in microseconds (2.7-era table, unchanged in
   * the versions since for these rows); the same numbers the bundled profiles carry. */
  static const double us[3][NCCLTUNE_NALGO][NCCLTUNE_NPROTO] = {
      /* NVLink */ {/* ring */ {0.47, 1.9, 3.4}, /* tree */ {0.52, 1.2, 28}},
      /* PCI */ {/* ring */ {1.0, 2.5, 5.7}, /* tree */ {1.0, 1.9, 28}},
      /* network */ {/* ring */ {2.7, 4.0, 9.6}, /* tree */ {5.0, 8.5, 50}},
  };
  for (int a = 0; a < NCCLTUNE_NALGO; a++)
    for (int q = 0; q < NCCLTUNE_NPROTO; q++) hop_s[a][q] = us[hw][a][q] * 1e-6;
}

/* log2 rounded down, as NCCL's log2i and sim/nccl.c. */
static int log2i(int v) {
  int l = 0;
  while (v >>= 1) l++;
  return l;
}

double nccltune_hops_s(const nccltune_setup *s, int algo, int proto) {
  if (algo == NCCLTUNE_RING) {
    int inter = 2 * (s->nodes - 1);
    return (double)(2 * (s->nranks - 1) - inter) * s->hop_intra_s[algo][proto] +
           (double)inter * s->hop_net_s[algo][proto];
  }
  return 2.0 * ((s->gpus_per_node - 1) * s->hop_intra_s[algo][proto] +
                log2i(s->nodes) * s->hop_net_s[algo][proto]);
}

double nccltune_edge_per_byte(const nccltune_setup *s, int algo) {
  return algo == NCCLTUNE_RING ? 2.0 * (s->nranks - 1) / s->nranks : 2.0;
}

double nccltune_time(const nccltune_setup *s, int algo, int proto, double base_lat_s,
                     double bw_factor, double bytes) {
  return base_lat_s + nccltune_hops_s(s, algo, proto) +
         nccltune_edge_per_byte(s, algo) * bytes / (bw_factor * s->bw_Bps);
}

static int check_setup(const nccltune_setup *s, err_t *e) {
  if (s->nranks < 2)
    return err_set(e, ERR_RUNTIME, "nccltune: an all-reduce needs at least 2 ranks, got %d", s->nranks);
  if (s->nodes < 1 || s->gpus_per_node < 1 || s->nodes * s->gpus_per_node != s->nranks)
    return err_set(e, ERR_RUNTIME, "nccltune: %d ranks are not %d node(s) x %d per node", s->nranks,
                    s->nodes, s->gpus_per_node);
  if (!(s->bw_Bps > 0) || !isfinite(s->bw_Bps))
    return err_set(e, ERR_RUNTIME, "nccltune: the link bandwidth must be > 0, got %g B/s", s->bw_Bps);
  for (int a = 0; a < NCCLTUNE_NALGO; a++)
    for (int q = 0; q < NCCLTUNE_NPROTO; q++)
      if (!(s->hop_intra_s[a][q] >= 0) || !isfinite(s->hop_intra_s[a][q]) || !(s->hop_net_s[a][q] >= 0) ||
          !isfinite(s->hop_net_s[a][q]))
        return err_set(e, ERR_RUNTIME, "nccltune: %s/%s: hop latencies must be finite and >= 0",
                        algo_names[a], proto_names[q]);
  return ERR_OK;
}

/* One combination: the line from fit_ring, then base and factor from it. */
static int fit_combo(const nccltune_setup *s, int a, int q, const nccltune_sweep *w,
                     const fit_ring_opts *opts, nccltune_combo *c, err_t *e) {
  const char *an = algo_names[a], *qn = proto_names[q];
  if (!w->bytes || !w->time_s || w->n < NCCLTUNE_MIN_POINTS)
    return err_set(e, ERR_RUNTIME, "nccltune: %s/%s: %zu size(s) measured; the fit needs at least %d", an,
                    qn, w->bytes && w->time_s ? w->n : 0, NCCLTUNE_MIN_POINTS);
  fit_ring_result r;
  err_t fe = {{0}};
  int rc = fit_ring(w->bytes, w->time_s, w->n, s->nranks, opts, &r, &fe);
  if (rc) return err_set(e, rc, "nccltune: %s/%s: %s", an, qn, fe.msg);
  /* fit_ring reports per ring step; undo its scaling to get the line's own coefficients. Its
   * summary latency already falls back to the smallest time when the first intercept is <= 0. */
  double steps = 2.0 * (s->nranks - 1);
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
  c->hops_s = nccltune_hops_s(s, a, q);
  c->base_fit_s = c->c0_s - c->hops_s;
  c->base_clamped = c->base_fit_s < 0;
  c->base_lat_s = c->base_clamped ? 0 : c->base_fit_s;
  c->bw_factor_fit = nccltune_edge_per_byte(s, a) / (c->c1_s_per_B * s->bw_Bps);
  /* ring/Simple divides its own slope by itself: 1 up to rounding, which is no clamp. */
  c->bw_clamped = c->bw_factor_fit > 1 + 1e-9;
  c->bw_factor = c->bw_factor_fit > 1 ? 1 : c->bw_factor_fit;
  double sum = 0, m = 0;
  for (size_t i = 0; i < w->n; i++) {
    double d = fabs((nccltune_time(s, a, q, c->base_lat_s, c->bw_factor, w->bytes[i]) - w->time_s[i]) /
                    w->time_s[i]);
    sum += d * d;
    if (d > m) m = d;
  }
  c->rms_rel = sqrt(sum / (double)w->n);
  c->max_rel = m;
  return ERR_OK;
}

int nccltune_fit(const nccltune_setup *s, const nccltune_sweep sweep[NCCLTUNE_NALGO][NCCLTUNE_NPROTO],
                 const fit_ring_opts *opts, nccltune_result *out, err_t *e) {
  memset(out, 0, sizeof *out);
  int rc = check_setup(s, e);
  if (rc) return rc;
  for (int a = 0; a < NCCLTUNE_NALGO; a++)
    for (int q = 0; q < NCCLTUNE_NPROTO; q++) {
      if (sweep[a][q].refused) continue;
      if ((rc = fit_combo(s, a, q, &sweep[a][q], opts, &out->c[a][q], e))) return rc;
      out->nenabled++;
    }
  if (!out->nenabled)
    return err_set(e, ERR_RUNTIME,
                    "nccltune: NCCL refused every algorithm/protocol combination: nothing to fit");
  return ERR_OK;
}
