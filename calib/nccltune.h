/* nccltune: fits NCCL's per-algorithm/protocol cost parameters (the profile's comm.nccl and
 * comm.links.<class>.hop_lat_s, docs/profile.md) to all-reduce sweeps measured with NCCL_ALGO and
 * NCCL_PROTO forced, in the form ddpsim evaluates them. The model itself is sim/ncclmodel.h's, not
 * written again here: its algorithm and protocol indices and names (nccl_algo, nccl_proto,
 * nccl_*_name, nccl_algo_env), NCCL's hop latencies (nccl_hw_hops), the hop terms (nccl_hops_s),
 * the edge bytes per byte (nccl_edge_per_byte) and the time t = base + hops + edge S / (f bw)
 * (nccl_time_s). The combinations are those an all-reduce sweep measures (nccl_algo_swept: ring and
 * tree, not PAT); the others' entries of every array here stay unused. This module only fits (derivation docs/calib.md): each combination's sweep is
 * fitted as a straight line t = c0 + c1 S by fit_ring (weighted least squares, relative errors,
 * size regimes): c0 from the smallest-size regime, c1 from the largest. Then
 *
 *   base_lat_s = c0 - nccl_hops_s(...)      bw_factor = nccl_edge_per_byte(...) / (c1 bw)
 *
 * What is measured and what is assumed: one (n, nodes) gives one intercept c0 per combination, in
 * which the base and the hops cannot be told apart. The hop latencies are therefore inputs (NCCL's
 * own tuning.cc hwLat table, nccl_hw_hops, the values the bundled profiles carry) and the base
 * is what the measured latency leaves. bw is the ring/Simple sweep's fit_ring bandwidth, so
 * ring/Simple's bw_factor comes out 1.
 *
 * Two results ddpsim's profile loader would refuse are clamped, never silently: a base below 0 (the
 * assumed hops exceed the measured latency) is recorded as 0 and a bw_factor above 1 (the
 * combination outruns ring/Simple's bandwidth) as 1; both keep the unclamped value and set a flag,
 * and the residuals are those of the clamped model, so the cost of clamping is visible.
 *
 * Pure: no GPU, no I/O; the caller owns every array. Functions return ERR_OK or an ERR_* code
 * (common/err.h) with a message in `e` that names the combination. */
#ifndef DDPCALIB_NCCLTUNE_H
#define DDPCALIB_NCCLTUNE_H

#include <stddef.h>

#include "err.h"
#include "fit.h"
#include "ncclmodel.h"

/* A line needs residuals to be judged: fewer sizes than this in a sweep is an error. */
enum { NCCLTUNE_MIN_POINTS = 3 };

/* The measured configuration and the assumed hop latencies. */
typedef struct {
  int nranks, nodes, gpus_per_node; /* nranks = nodes x gpus_per_node >= 2 */
  double bw_Bps;                    /* the link's bandwidth (fit_ring of the ring/Simple sweep) */
  double hop_intra_s[NCCL_NALGO][NCCL_NPROTO]; /* per hop inside a node (assumed) */
  double hop_net_s[NCCL_NALGO][NCCL_NPROTO];   /* per hop between nodes (assumed) */
} nccltune_setup;

/* One combination's sweep. */
typedef struct {
  int refused;          /* NCCL refused the combination: it stays disabled, not an error */
  const double *bytes;  /* [n] strictly increasing */
  const double *time_s; /* [n] > 0, the median time per size */
  size_t n;
} nccltune_sweep;

/* One combination's fit. */
typedef struct {
  int enabled;                 /* measured and fitted (0: refused) */
  size_t points, nregimes;     /* sizes fitted; size regimes fit_ring found */
  double min_bytes, max_bytes;
  double c0_s, c1_s_per_B;     /* t = c0 + c1 S: c0 of the smallest-size regime, c1 of the largest */
  double hops_s;               /* the hop terms subtracted from c0 (assumed latencies) */
  double base_fit_s;           /* c0 - hops_s, may be negative */
  double base_lat_s;           /* base_fit_s clamped at 0 */
  double bw_factor_fit;        /* edge bytes per byte / (c1 bw), may exceed 1 */
  double bw_factor;            /* bw_factor_fit clamped at 1 */
  int base_clamped, bw_clamped;
  double rms_rel, max_rel;     /* relative residuals of ddpsim's model (clamped values), all sizes */
} nccltune_combo;

typedef struct {
  nccltune_combo c[NCCL_NALGO][NCCL_NPROTO];
  int nenabled;
} nccltune_result;

/* Fits every combination not refused. Errors (ERR_RUNTIME): an invalid setup (nranks < 2,
 * nranks != nodes x gpus_per_node, bw_Bps <= 0, a negative or non-finite hop latency); every
 * combination refused; a sweep with fewer than NCCLTUNE_MIN_POINTS sizes; a sweep whose time does
 * not grow with size in its largest sizes (no bandwidth to fit); anything fit_ring refuses.
 * opts as fit_ring's (NULL: fit_ring_defaults()). *out is complete only on ERR_OK. */
int nccltune_fit(const nccltune_setup *s, const nccltune_sweep sweep[NCCL_NALGO][NCCL_NPROTO],
                 const fit_ring_opts *opts, nccltune_result *out, err_t *e);

#endif
