/* nccltune: fits NCCL's per-algorithm/protocol cost parameters (the profile's comm.nccl and
 * comm.links.<class>.hop_lat_s, docs/profile.md) to all-reduce sweeps measured with NCCL_ALGO and
 * NCCL_PROTO forced, in the form ddpsim evaluates them (sim/nccl.h; derivation docs/calib.md):
 *
 *   ring: t = base + (2(n-1) - 2(nodes-1)) hop_intra + 2(nodes-1) hop_net + 2(n-1)/n S / (f bw)
 *   tree: t = base + 2 ((G-1) hop_intra + log2i(nodes) hop_net)          + 2 S / (f bw)
 *
 * (n ranks, nodes hosts, G = n / nodes ranks per host, log2i rounded down as NCCL's, S bytes,
 * bw the link bandwidth, f the combination's bw_factor.) Each combination's sweep is fitted as a
 * straight line t = c0 + c1 S by fit_ring (weighted least squares, relative errors, size regimes):
 * c0 from the smallest-size regime, c1 from the largest. Then
 *
 *   base_lat_s = c0 - (the hop terms above)      bw_factor = (edge bytes per byte of S) / (c1 bw)
 *
 * with edge bytes per byte 2(n-1)/n (ring) or 2 (tree).
 *
 * What is measured and what is assumed: one (n, nodes) gives one intercept c0 per combination, in
 * which the base and the hops cannot be told apart. The hop latencies are therefore inputs (NCCL's
 * own tuning.cc hwLat table, nccltune_hw_hops, the values the bundled profiles carry) and the base
 * is what the measured latency leaves. bw is the ring/Simple sweep's fit_ring bandwidth, so
 * ring/Simple's bw_factor comes out 1.
 *
 * Two results ddpsim's profile loader would refuse are clamped, never silently: a base below 0 (the
 * assumed hops exceed the measured latency) is recorded as 0 and a bw_factor above 1 (the
 * combination outruns ring/Simple's bandwidth) as 1; both keep the unclamped value and set a flag,
 * and the residuals are those of the clamped model, so the cost of clamping is visible.
 *
 * Pure: no GPU, no I/O; the caller owns every array. Functions return ERR_OK or an ERR_* code (sim/err.h)
 * with a message in `e` that names the combination. */
#ifndef DDPCALIB_NCCLTUNE_H
#define DDPCALIB_NCCLTUNE_H

#include <stddef.h>

#include "err.h"
#include "fit.h"

/* Indices as in sim/nccl.h, names as in the profile. */
enum { NCCLTUNE_RING = 0, NCCLTUNE_TREE = 1, NCCLTUNE_NALGO = 2 };
enum { NCCLTUNE_LL = 0, NCCLTUNE_LL128 = 1, NCCLTUNE_SIMPLE = 2, NCCLTUNE_NPROTO = 3 };

/* A line needs residuals to be judged: fewer sizes than this in a sweep is an error. */
enum { NCCLTUNE_MIN_POINTS = 3 };

const char *nccltune_algo_name(int algo);   /* "ring", "tree" (profile keys) */
const char *nccltune_algo_env(int algo);    /* "Ring", "Tree" (NCCL_ALGO's spelling) */
const char *nccltune_proto_name(int proto); /* "LL", "LL128", "Simple" (profile and NCCL_PROTO) */

/* The hardware rows of NCCL's tuning.cc hwLat table. */
typedef enum { NCCLTUNE_HW_NVLINK = 0, NCCLTUNE_HW_PCI = 1, NCCLTUNE_HW_NET = 2 } nccltune_hw;
const char *nccltune_hw_name(nccltune_hw hw); /* "NVLink", "PCI", "network" */

/* NCCL's tuning.cc hwLat for that hardware, in seconds per hop, [algo][proto]. */
void nccltune_hw_hops(nccltune_hw hw, double hop_s[NCCLTUNE_NALGO][NCCLTUNE_NPROTO]);

/* The measured configuration and the assumed hop latencies. */
typedef struct {
  int nranks, nodes, gpus_per_node; /* nranks = nodes x gpus_per_node >= 2 */
  double bw_Bps;                    /* the link's bandwidth (fit_ring of the ring/Simple sweep) */
  double hop_intra_s[NCCLTUNE_NALGO][NCCLTUNE_NPROTO]; /* per hop inside a node (assumed) */
  double hop_net_s[NCCLTUNE_NALGO][NCCLTUNE_NPROTO];   /* per hop between nodes (assumed) */
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
  nccltune_combo c[NCCLTUNE_NALGO][NCCLTUNE_NPROTO];
  int nenabled;
} nccltune_result;

/* The hop terms of the model for (algo, proto) under s, in seconds. */
double nccltune_hops_s(const nccltune_setup *s, int algo, int proto);

/* Bytes each edge carries per byte of the all-reduce: 2(n-1)/n (ring) or 2 (tree). */
double nccltune_edge_per_byte(const nccltune_setup *s, int algo);

/* ddpsim's time for an all-reduce of `bytes` with the given base and bandwidth factor. */
double nccltune_time(const nccltune_setup *s, int algo, int proto, double base_lat_s,
                     double bw_factor, double bytes);

/* Fits every combination not refused. Errors (ERR_RUNTIME): an invalid setup (nranks < 2,
 * nranks != nodes x gpus_per_node, bw_Bps <= 0, a negative or non-finite hop latency); every
 * combination refused; a sweep with fewer than NCCLTUNE_MIN_POINTS sizes; a sweep whose time does
 * not grow with size in its largest sizes (no bandwidth to fit); anything fit_ring refuses.
 * opts as fit_ring's (NULL: fit_ring_defaults()). *out is complete only on ERR_OK. */
int nccltune_fit(const nccltune_setup *s, const nccltune_sweep sweep[NCCLTUNE_NALGO][NCCLTUNE_NPROTO],
                 const fit_ring_opts *opts, nccltune_result *out, err_t *e);

#endif
