#include "ncclmodel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "profile.h"

/* log2 rounded down, as NCCL's log2i. */
static int log2i(long v) {
  int l = 0;
  while (v >>= 1) l++;
  return l;
}

/* ---- the algorithms: each one's cost terms, then the table ---- */

/* Ring (tuning.cc): (nsteps - nInterSteps) intraLat + nInterSteps interLat; busBw x nRanks / nsteps
 * to algorithm bandwidth, so every edge carries nsteps / n of S (sim/coll.h). */
static double ring_hops(coll_kind coll, int nodes, int gpn, double hop_intra_s, double hop_net_s) {
  long steps = coll_ring_steps(coll, (long)nodes * gpn), inter = coll_ring_inter_steps(coll, nodes);
  return (double)(steps - inter) * hop_intra_s + (double)inter * hop_net_s;
}
static double ring_edge(coll_kind coll, int n) { return (double)coll_ring_steps(coll, n) / n; }
static long ring_steps(coll_kind coll, int n) { return coll_ring_steps(coll, n); }

/* Tree (tuning.cc, all-reduce): 2 ((nRanks/nNodes - 1) intraLat + log2i(nNodes) interLat), reduce
 * up and broadcast down; busBw x 1/2 to algorithm bandwidth: 2 S per edge. Step fidelity plays it
 * as the ring's steps. */
static double tree_hops(coll_kind coll, int nodes, int gpn, double hop_intra_s, double hop_net_s) {
  (void)coll;
  return 2.0 * ((gpn - 1) * hop_intra_s + log2i(nodes) * hop_net_s);
}
static double tree_edge(coll_kind coll, int n) {
  (void)coll, (void)n;
  return 2.0;
}

/* PAT (tuning.cc at v2.23.4-1, lines 276-282): latency 8 + log2i(nNodes) interLat / 3.5 + nRanks x
 * 2.8 us, the 8 us being the row's base. Its bus bandwidth is not turned into an algorithm bandwidth
 * for all-gather and reduce-scatter (lines 220-227), so the time's bandwidth term is nBytes / busBw
 * with nBytes the full buffer (enqueue.cc, ncclFuncMaxSendRecvCount: nRanks x count): S per edge.
 * Each rank takes in the other n - 1 ranks' chunks, one a step before aggregation
 * (src/include/collectives.h, PatAGAlgorithm and PatRSAlgorithm: peers at power-of-two distances). */
#define PAT_RANK_LAT_S 2.8e-6
static double pat_hops(coll_kind coll, int nodes, int gpn, double hop_intra_s, double hop_net_s) {
  (void)coll, (void)hop_intra_s;
  return log2i(nodes) * hop_net_s / 3.5 + (double)nodes * gpn * PAT_RANK_LAT_S;
}
static double pat_edge(coll_kind coll, int n) {
  (void)coll, (void)n;
  return 1.0;
}
static long pat_steps(coll_kind coll, int n) {
  (void)coll;
  return n > 1 ? n - 1 : 0;
}

/* hier: its phases' hops, 2 (G-1) inside the nodes (reduce-scatter and all-gather rings of G) and
 * 2 (nodes-1) between them (the all-reduce rings of `nodes`); its estimate is hier_compose's. */
static double hier_hops(coll_kind coll, int nodes, int gpn, double hop_intra_s, double hop_net_s) {
  (void)coll;
  return 2.0 * (gpn - 1) * hop_intra_s + 2.0 * (nodes - 1) * hop_net_s;
}
static void hier_compose(const nccl_model *m, coll_kind coll, int q, double bytes, nccl_choice *out);

#define ALL_COLLS ((1u << COLL_NKINDS) - 1)
#define GATHERS ((1u << COLL_ALLGATHER) | (1u << COLL_REDUCESCATTER))
#define SIMPLE (1u << NCCL_PROTO_SIMPLE)

/* One row per algorithm (nccl_algo_desc, ncclmodel.h). Where NCCL runs what (tuning.cc at
 * v2.23.4-1, ncclTopoTuneModel, lines 169-180): broadcast and reduce only as a ring; all-gather and
 * reduce-scatter as a ring or PAT (and NVLS, CollNet: not modelled); no PAT all-reduce; PAT Simple
 * only, and only where ncclPatEnable holds: one GPU per node (nNodes == nRanks). The tree came with
 * NCCL 2.4 (v2.4.2-1, src/enqueue.cu: ncclPatternTreeUpDown; none in v2.3.7-1), PAT with 2.23
 * (NCCL_ALGO_PAT: in v2.23.4-1, none in v2.22.3-1). PAT's constants where the profile has no
 * comm.nccl.pat: base 8 us (line 278) and busBw x 0.85 (line 193; 0.75 from v2.24.3-1 on). */
static const nccl_algo_desc algos[NCCL_NALGO] = {
    [NCCL_ALGO_RING] = {"ring", "Ring", ALL_COLLS, NCCL_ALL_PROTOS, 0, 0, NCCL_ALGO_RING, 0, 0, ring_hops, ring_edge, ring_steps, NULL},
    [NCCL_ALGO_TREE] = {"tree", "Tree", 1u << COLL_ALLREDUCE, NCCL_ALL_PROTOS, 0, 204, NCCL_ALGO_TREE, 0, 0, tree_hops, tree_edge,
                        ring_steps, NULL},
    [NCCL_ALGO_PAT] = {"pat", "PAT", GATHERS, SIMPLE, 1, 223, NCCL_ALGO_TREE, 8e-6, 0.85, pat_hops, pat_edge, pat_steps, NULL},
    [NCCL_ALGO_HIER] = {"hier", NULL, 1u << COLL_ALLREDUCE, NCCL_ALL_PROTOS, 0, 0, NCCL_ALGO_RING, 0, 0, hier_hops, NULL, NULL,
                        hier_compose},
};

static const char *const proto_names[NCCL_NPROTO] = {"LL", "LL128", "Simple"};

const nccl_algo_desc *nccl_algo_get(nccl_algo a) { return (int)a >= 0 && a < NCCL_NALGO ? &algos[a] : NULL; }

int nccl_algo_runs(nccl_algo a, coll_kind coll, nccl_proto q) {
  const nccl_algo_desc *d = nccl_algo_get(a);
  return d && (d->colls >> coll & 1u) && (d->protos >> q & 1u);
}

int nccl_algo_swept(nccl_algo a, nccl_proto q) {
  const nccl_algo_desc *d = nccl_algo_get(a);
  return d && d->env && d->max_gpus_per_node == 0 && nccl_algo_runs(a, COLL_ALLREDUCE, q);
}

const char *nccl_algo_name(nccl_algo a) { return algos[a].name; }
const char *nccl_algo_env(nccl_algo a) { return algos[a].env; }
const char *nccl_proto_name(nccl_proto p) { return proto_names[p]; }

const char *nccl_algo_list(void) {
  static char list[128];
  if (!*list)
    for (int a = 0; a < NCCL_NALGO; a++) {
      size_t l = strlen(list);
      snprintf(list + l, sizeof list - l, "%s%s", a ? ", " : "", algos[a].name);
    }
  return list;
}

/* A comma-separated list of names (case-insensitive) into bits 1u << index; "auto" is auto_mask. */
static int parse_list(const char *s, const char *(*name)(int), int count, unsigned auto_mask, unsigned *mask) {
  if (strcasecmp(s, "auto") == 0) {
    *mask = auto_mask;
    return 0;
  }
  char buf[128];
  if (strlen(s) >= sizeof buf) return -1;
  strcpy(buf, s);
  *mask = 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int found = -1;
    for (int i = 0; i < count; i++)
      if (strcasecmp(t, name(i)) == 0) found = i;
    if (found < 0) return -1;
    *mask |= 1u << found;
  }
  return *mask ? 0 : -1;
}

static const char *algo_name_i(int i) { return algos[i].name; }
static const char *proto_name_i(int i) { return proto_names[i]; }
int nccl_parse_algos(const char *s, unsigned *mask) { return parse_list(s, algo_name_i, NCCL_NALGO, NCCL_ALGOS_AUTO, mask); }
int nccl_parse_protos(const char *s, unsigned *mask) { return parse_list(s, proto_name_i, NCCL_NPROTO, NCCL_ALL_PROTOS, mask); }

/* The release of a profile's tuning_model (PROFILE_NCCL_*), as nccl_algo_desc.since; 0: unknown. */
static int refine_release(int refine) { return refine == PROFILE_NCCL_2_7 ? 207 : refine == PROFILE_NCCL_2_18 ? 218 : 0; }

int nccl_model_init(nccl_model *m, const profile_t *p, const topo_t *t, int nodes, int gpus_per_node, int channels,
                    double intra_bw_Bps, double nic_bw_Bps, err_t *e) {
  memset(m, 0, sizeof *m);
  m->channels = channels > 0 ? channels : 1;
  m->refine = profile_nccl_tuning_model(p);
  m->arch = profile_nccl_gpu_arch(p);
  m->version = refine_release(m->refine);
  m->intra_bw_Bps = intra_bw_Bps;
  m->nic_bw_Bps = nic_bw_Bps;
  m->nodes = nodes;
  m->gpus_per_node = gpus_per_node;
  m->n = nodes * gpus_per_node;
  m->bw_Bps = INFINITY;
  if (gpus_per_node > 1) m->bw_Bps = intra_bw_Bps;
  if (nodes > 1 && nic_bw_Bps < m->bw_Bps) m->bw_Bps = nic_bw_Bps;
  for (int a = 0; a < NCCL_NALGO; a++) {
    const nccl_algo_desc *d = &algos[a];
    const char *hops = algos[d->hops_of].name; /* for messages */
    int allowed = d->max_gpus_per_node == 0 || gpus_per_node <= d->max_gpus_per_node;
    for (int q = 0; q < NCCL_NPROTO; q++) {
      int listed, rc = profile_nccl(p, (nccl_algo)a, (nccl_proto)q, &listed, &m->base_lat_s[a][q], &m->bw_factor[a][q], e);
      if (rc) return rc;
      if (!d->env) {
        /* Not NCCL's: it runs where the row whose costs it pays does, and never as NCCL's choice. */
        if (listed)
          return err_set(e, ERR_INPUT, "profile %s: comm.nccl.%s: not one of NCCL's algorithms (it runs at comm.nccl.%s's costs)",
                         profile_name(p), d->name, hops);
        m->enabled[a][q] = m->enabled[d->hops_of][q] && (d->protos >> q & 1u);
        continue;
      }
      if (listed && m->version && m->version < d->since)
        return err_set(e, ERR_INPUT, "profile %s: comm.nccl.%s.%s: %s came with NCCL %d.%d, after its tuning_model's NCCL %d.%d",
                       profile_name(p), d->name, proto_names[q], d->name, d->since / 100, d->since % 100, m->version / 100,
                       m->version % 100);
      if (!listed && d->bw_factor > 0) m->base_lat_s[a][q] = d->base_lat_s, m->bw_factor[a][q] = d->bw_factor;
      if (!allowed || !(d->protos >> q & 1u) || !(listed || d->bw_factor > 0)) continue;
      /* Its hops: a combination the profile lists must have them; one priced by its row alone runs
       * only where they are there. */
      err_t quiet = {{0}}, *he = listed ? e : &quiet;
      if ((gpus_per_node > 1 && (rc = profile_hop_lat(p, t->intra_class, d->hops_of, (nccl_proto)q, &m->hop_intra_s[a][q], he))) ||
          (nodes > 1 && (rc = profile_hop_lat(p, t->nic_class, d->hops_of, (nccl_proto)q, &m->hop_net_s[a][q], he)))) {
        if (listed) return rc;
        continue;
      }
      m->enabled[a][q] = 1;
      m->auto_on[a][q] = listed;
    }
  }
  return ERR_OK;
}

void nccl_model_plain_ring(nccl_model *m, double hop_intra_s, double hop_net_s) {
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) {
      int on = a == NCCL_ALGO_RING && q == NCCL_PROTO_SIMPLE;
      m->enabled[a][q] = m->auto_on[a][q] = on;
      m->base_lat_s[a][q] = 0;
      m->bw_factor[a][q] = on ? 1.0 : 0;
      m->hop_intra_s[a][q] = on ? hop_intra_s : 0;
      m->hop_net_s[a][q] = on ? hop_net_s : 0;
    }
  m->refine = PROFILE_NCCL_NONE;
  m->arch = -1;
  m->version = 0;
}

/* NCCL 2.7's tuning.cc constants (Volta and Pascal). */
#define LL128_MAX_BW_PER_CH_Bps 16.7e9 /* ll128MaxBwPerCh, all-reduce */
static const double tree_correction[NCCL_NPROTO][22] = {
    /* powers of two of S / 64 B, 64 B to 128 MB: trees fall short of the model at medium sizes */
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0},  /* LL */
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0}, /* LL128 */
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9}};     /* Simple */

/* The bus bandwidth factor f (of C bw) NCCL 2.7 reaches for algorithm a, protocol q, with the
 * profile's factor f0, and its latency adjustments (ncclmodel.h). */
static double refined_factor(const nccl_model *m, int a, int q, double bytes, double f0) {
  double bw = m->bw_Bps, f = f0, cap = INFINITY;
  int C = m->channels;
  if (a == NCCL_ALGO_RING && q == NCCL_PROTO_LL128) {
    if (m->gpus_per_node < 2) f *= 0.7 / 0.92; /* sending and receiving through the NIC at one GPU */
    cap = LL128_MAX_BW_PER_CH_Bps * C;
  }
  if (a == NCCL_ALGO_TREE) {
    double max_tree = m->nodes > 2 ? 80e9 : 110e9;
    if (q == NCCL_PROTO_SIMPLE) cap = max_tree;
    if (q == NCCL_PROTO_LL) cap = max_tree / 3.8;
    if (q == NCCL_PROTO_LL128) {
      if (m->nodes == 1) f *= (7.0 / 9.0) / 0.915;
      cap = fmin(max_tree * (m->nodes == 1 ? 7.0 / 9.0 : 0.915), LL128_MAX_BW_PER_CH_Bps * C * 7.0 / 9.0);
    }
    int ls = log2i((long)bytes >> 6);
    if (ls < 22) f *= tree_correction[q][ls], cap *= tree_correction[q][ls];
  }
  double bus = fmin(bw * f, cap);
  return bus / bw;
}

/* NCCL 2.18's tuning.cc (v2.18.3-1, ncclTopoTuneModel and ncclTopoGetAlgoTime): per-channel caps in
 * GB/s keyed by GPU architecture (Volta, Ampere, Hopper) and by 1, 2 or more nodes. */
static const double ll_max_bws[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}};
static const double ring_ll128_bws[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}};
static const double tree_ll128_bws[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
static const double tree_bws[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};
static const double tree_correction_218[NCCL_NPROTO][23] = {
    /* powers of two of S / 64 B, 64 B to 256 MB */
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},      /* LL */
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},     /* LL128 */
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};           /* Simple */

/* NCCL 2.18's bus bandwidth factor (of C bw) for algorithm a, protocol q with the profile's f0 (ring
 * LL 1/4, ring LL128 0.92, tree Simple 0.92, tree LL 0.92/3.8, tree LL128 0.92 x 120/128): the
 * multi-node LL cap is NCCL's for Intel CPUs (AMD hosts differ); tree's pattern factor 0.85 (NCCL's
 * unbalanced-tree graphs) is not applied. */
static double refined_factor_218(const nccl_model *m, int a, int q, double bytes, double f0) {
  int arch = m->arch >= 0 && m->arch < 3 ? m->arch : 0, n2 = m->nodes <= 2 ? m->nodes - 1 : 2, C = m->channels;
  double bw = m->bw_Bps, f = f0, cap = INFINITY, gb = 1e9;
  double ll_max = ll_max_bws[m->nodes == 1 ? arch : 0][n2] * gb, tree_cap = C * tree_bws[arch][n2] * gb;
  if (a == NCCL_ALGO_RING && q == NCCL_PROTO_LL) cap = ll_max;
  if (a == NCCL_ALGO_RING && q == NCCL_PROTO_LL128) {
    if (m->gpus_per_node < 2) f *= 0.7 / 0.92;
    cap = C * ring_ll128_bws[arch][n2] * gb;
  }
  if (a == NCCL_ALGO_TREE) {
    if (q == NCCL_PROTO_SIMPLE) cap = tree_cap;
    if (q == NCCL_PROTO_LL) cap = fmin(tree_cap / 3.8, ll_max);
    if (q == NCCL_PROTO_LL128) {
      double g = m->nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
      f *= g / (120.0 / 128.0);
      cap = fmin(tree_cap * g, C * tree_ll128_bws[arch][n2] * gb);
    }
    int ls = log2i((long)bytes >> 6);
    if (ls < 23) f *= tree_correction_218[q][ls], cap *= tree_correction_218[q][ls];
  }
  return fmin(bw * f, cap) / bw;
}

/* NCCL's estimate of combination (a, q) for collective coll of `bytes` on m: the row's terms with the
 * release's refinements (for a row whose terms are hops_s, edge_per_byte and steps). */
static void estimate(const nccl_model *m, coll_kind coll, int a, int q, double bytes, nccl_choice *out) {
  const nccl_algo_desc *d = &algos[a];
  out->nphase = 0;
  double lat, edge;
  double f = m->n <= 1 ? m->bw_factor[a][q]
           : m->refine == PROFILE_NCCL_2_7 ? refined_factor(m, a, q, bytes, m->bw_factor[a][q])
           : m->refine == PROFILE_NCCL_2_18 ? refined_factor_218(m, a, q, bytes, m->bw_factor[a][q])
                                             : m->bw_factor[a][q];
  double hop_intra = m->hop_intra_s[a][q];
  if (m->refine == PROFILE_NCCL_2_7 && m->nodes > 1 && q == NCCL_PROTO_LL) hop_intra *= 1.8;
  /* 2.18: across nodes a ring step costs at least the network's post overhead, 1 us (Intel
   * hosts), 3 us for Simple (not for broadcast, whose latency NCCL counts apart). */
  if (m->refine == PROFILE_NCCL_2_18 && m->nodes > 1 && a == NCCL_ALGO_RING && coll != COLL_BROADCAST)
    hop_intra = fmax(hop_intra, q == NCCL_PROTO_SIMPLE ? 3e-6 : 1e-6);
  if (m->n <= 1) {
    lat = 0;
    edge = 0;
  } else {
    lat = m->base_lat_s[a][q] + d->hops_s(coll, m->nodes, m->gpus_per_node, hop_intra, m->hop_net_s[a][q]);
    /* The ring "plateau": across nodes, from n/16 x 64 KiB up, an all-reduce's Simple latency is
     * 1.9x. */
    if (m->refine == PROFILE_NCCL_2_7 && coll == COLL_ALLREDUCE && a == NCCL_ALGO_RING && q == NCCL_PROTO_SIMPLE &&
        m->nodes > 1 && bytes >= m->n / 16.0 * 65536)
      lat *= 1.9;
    /* 2.18: from 64 bytes per channel and rank up, 1.9x before Ampere, 1.4x from Ampere on. */
    if (m->refine == PROFILE_NCCL_2_18 && coll == COLL_ALLREDUCE && a == NCCL_ALGO_RING && q == NCCL_PROTO_SIMPLE &&
        m->nodes > 1 && bytes / ((double)m->channels * m->n) >= 64)
      lat *= m->arch >= PROFILE_ARCH_AMPERE ? 1.4 : 1.9;
    edge = d->edge_per_byte(coll, m->n) * bytes / f;
  }
  out->algo = (nccl_algo)a;
  out->proto = (nccl_proto)q;
  out->time_s = lat + (m->n > 1 ? edge / m->bw_Bps : 0);
  out->lat_s = lat;
  out->edge_bytes = edge;
  out->steps = d->steps(coll, m->n);
}

/* The hierarchical all-reduce's phases (Horovod v0.28.1's NCCLTorusAllreduce, docs/simulation.md),
 * each NCCL's ring with protocol q (refinements included) on its communicator: a reduce-scatter of S inside each node (G ranks at the intra-node bandwidth), an
 * all-reduce of each S/G shard between the nodes (G rings of `nodes` ranks, one per local GPU,
 * sharing the node's network bandwidth: nic_bw / G each), an all-gather of S inside each node. Its
 * estimate is their sum. The engine plays the phases (plan.h's plan_coll), each on its group's
 * rings; edge_bytes and steps, for a caller that plays it as one collective of every rank, are the
 * phases' bandwidth time on the job's bottleneck edge and the ring's steps. */
void nccl_model_group(const nccl_model *m, nccl_group g, nccl_model *out) {
  *out = *m;
  if (g == NCCL_GROUP_NODE) out->nodes = 1, out->n = m->gpus_per_node, out->bw_Bps = m->intra_bw_Bps;
  if (g == NCCL_GROUP_RAIL) out->gpus_per_node = 1, out->n = m->nodes, out->bw_Bps = m->nic_bw_Bps / m->gpus_per_node;
}

static void hier_compose(const nccl_model *m, coll_kind coll, int q, double bytes, nccl_choice *out) {
  (void)coll; /* all-reduce only (its row) */
  nccl_model intra, inter;
  nccl_model_group(m, NCCL_GROUP_NODE, &intra);
  nccl_model_group(m, NCCL_GROUP_RAIL, &inter);
  int G = m->gpus_per_node;
  nccl_choice rs, ar, ag;
  estimate(&intra, COLL_REDUCESCATTER, NCCL_ALGO_RING, q, bytes, &rs);
  estimate(&inter, COLL_ALLREDUCE, NCCL_ALGO_RING, q, bytes / G, &ar);
  estimate(&intra, COLL_ALLGATHER, NCCL_ALGO_RING, q, bytes, &ag);
  out->algo = NCCL_ALGO_HIER;
  out->proto = (nccl_proto)q;
  out->time_s = rs.time_s + ar.time_s + ag.time_s;
  out->lat_s = rs.lat_s + ar.lat_s + ag.lat_s;
  out->edge_bytes = m->n > 1 ? (out->time_s - out->lat_s) * m->bw_Bps : 0;
  out->steps = coll_ring_steps(COLL_ALLREDUCE, m->n); /* played as a ring's flows: the ring's steps */
  const nccl_choice *ph[NCCL_MAX_PHASES] = {&rs, &ar, &ag};
  const nccl_group grp[NCCL_MAX_PHASES] = {NCCL_GROUP_NODE, NCCL_GROUP_RAIL, NCCL_GROUP_NODE};
  const coll_kind kind[NCCL_MAX_PHASES] = {COLL_REDUCESCATTER, COLL_ALLREDUCE, COLL_ALLGATHER};
  out->nphase = NCCL_MAX_PHASES;
  for (int i = 0; i < NCCL_MAX_PHASES; i++)
    out->phase[i] = (nccl_phase){.coll = kind[i], .group = grp[i], .time_s = ph[i]->time_s, .lat_s = ph[i]->lat_s,
                                 .edge_bytes = ph[i]->edge_bytes, .steps = ph[i]->steps};
}

int nccl_choose(const nccl_model *m, coll_kind coll, double bytes, unsigned algo_mask, unsigned proto_mask,
                nccl_choice *out, err_t *e) {
  const coll_desc *cd = coll_get(coll);
  if (!cd) return err_set(e, ERR_INPUT, "unknown collective %d", (int)coll);
  int found = 0, own = (algo_mask & NCCL_ALGOS_AUTO) != 0;
  for (int a = 0; a < NCCL_NALGO; a++) {
    const nccl_algo_desc *d = &algos[a];
    int forced = algo_mask >> a & 1u;
    for (int q = 0; q < NCCL_NPROTO; q++) {
      if (!(proto_mask >> q & 1u) || !nccl_algo_runs((nccl_algo)a, coll, (nccl_proto)q) ||
          !((forced && m->enabled[a][q]) || (own && m->auto_on[a][q])))
        continue;
      nccl_choice c;
      if (d->compose) d->compose(m, coll, q, bytes, &c);
      else estimate(m, coll, a, q, bytes, &c);
      if (!found || c.time_s < out->time_s) {
        *out = c;
        found = 1;
      }
    }
  }
  if (found) return ERR_OK;
  /* Nothing left: what is available for this collective, and why each algorithm forced is not. */
  char avail[256] = "", why[512] = "";
  for (int a = 0; a < NCCL_NALGO; a++) {
    const nccl_algo_desc *d = &algos[a];
    int any = 0;
    for (int q = 0; q < NCCL_NPROTO; q++)
      if (m->enabled[a][q] && nccl_algo_runs((nccl_algo)a, coll, (nccl_proto)q)) {
        size_t l = strlen(avail);
        snprintf(avail + l, sizeof avail - l, "%s%s/%s", l ? ", " : "", d->name, proto_names[q]);
        any = 1;
      }
    if (!(algo_mask >> a & 1u) || any) continue;
    size_t l = strlen(why);
    if (!(d->colls >> coll & 1u))
      snprintf(why + l, sizeof why - l, "; %s runs no %s", d->name, cd->name);
    else if (d->max_gpus_per_node && m->gpus_per_node > d->max_gpus_per_node)
      snprintf(why + l, sizeof why - l, "; NCCL runs %s at up to %d GPU(s) per node, not %d", d->name, d->max_gpus_per_node,
               m->gpus_per_node);
    else
      snprintf(why + l, sizeof why - l, "; the profile has no %s (comm.nccl.%s and its links' hop_lat_s.%s)", d->name, d->name,
               algos[d->hops_of].name);
  }
  return err_set(e, ERR_INPUT, "no NCCL algorithm and protocol left to choose from for %s (available: %s)%s", cd->name,
                 *avail ? avail : "none", why);
}

/* ---- the model's pieces (ncclmodel.h) ---- */

static const char *const hw_names[NCCL_NHW] = {"NVLink", "PCI", "network"};

const char *nccl_hw_name(nccl_hw hw) { return hw_names[hw]; }

void nccl_hw_hops(nccl_hw hw, double hop_s[NCCL_NALGO][NCCL_NPROTO]) {
  /* NCCL src/graph/tuning.cc, hwLat[hw][algo][proto] in microseconds (2.7-era table, unchanged in
   * the versions since for these rows; PAT has none of its own). */
  static const double us[NCCL_NHW][NCCL_NALGO][NCCL_NPROTO] = {
      /* NVLink */ {/* ring */ {0.47, 1.9, 3.4}, /* tree */ {0.52, 1.2, 28}},
      /* PCI */ {/* ring */ {1.0, 2.5, 5.7}, /* tree */ {1.0, 1.9, 28}},
      /* network */ {/* ring */ {2.7, 4.0, 9.6}, /* tree */ {5.0, 8.5, 50}},
  };
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) hop_s[a][q] = us[hw][a][q] * 1e-6;
}

double nccl_hops_s(coll_kind coll, nccl_algo a, int nodes, int gpus_per_node, double hop_intra_s, double hop_net_s) {
  return algos[a].hops_s(coll, nodes, gpus_per_node, hop_intra_s, hop_net_s);
}

double nccl_edge_per_byte(coll_kind coll, nccl_algo a, int n) {
  return algos[a].edge_per_byte ? algos[a].edge_per_byte(coll, n) : NAN;
}

double nccl_time_s(coll_kind coll, nccl_algo a, int nodes, int gpus_per_node, double base_lat_s, double hop_intra_s,
                   double hop_net_s, double bw_factor, double bw_Bps, double bytes) {
  return base_lat_s + nccl_hops_s(coll, a, nodes, gpus_per_node, hop_intra_s, hop_net_s) +
         nccl_edge_per_byte(coll, a, nodes * gpus_per_node) * bytes / (bw_factor * bw_Bps);
}
