#include "nccl.h"

#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const algo_names[NCCL_NALGO] = {"ring", "tree"};
static const char *const proto_names[NCCL_NPROTO] = {"LL", "LL128", "Simple"};

const char *nccl_algo_name(nccl_algo a) { return algo_names[a]; }
const char *nccl_proto_name(nccl_proto p) { return proto_names[p]; }

static int parse_list(const char *s, const char *const *names, int count, unsigned *mask) {
  if (strcasecmp(s, "auto") == 0) {
    *mask = (1u << count) - 1;
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
      if (strcasecmp(t, names[i]) == 0) found = i;
    if (found < 0) return -1;
    *mask |= 1u << found;
  }
  return *mask ? 0 : -1;
}

int nccl_parse_algos(const char *s, unsigned *mask) { return parse_list(s, algo_names, NCCL_NALGO, mask); }
int nccl_parse_protos(const char *s, unsigned *mask) { return parse_list(s, proto_names, NCCL_NPROTO, mask); }

int nccl_model_init(nccl_model *m, const profile_t *p, const topo_t *t, int nodes, int gpus_per_node, int channels,
                    double intra_bw_Bps, double nic_bw_Bps, err_t *e) {
  memset(m, 0, sizeof *m);
  m->channels = channels > 0 ? channels : 1;
  m->refine = profile_nccl_tuning_model(p);
  m->arch = profile_nccl_gpu_arch(p);
  m->nodes = nodes;
  m->gpus_per_node = gpus_per_node;
  m->n = nodes * gpus_per_node;
  m->bw_Bps = INFINITY;
  if (gpus_per_node > 1) m->bw_Bps = intra_bw_Bps;
  if (nodes > 1 && nic_bw_Bps < m->bw_Bps) m->bw_Bps = nic_bw_Bps;
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) {
      int rc = profile_nccl(p, (nccl_algo)a, (nccl_proto)q, &m->enabled[a][q], &m->base_lat_s[a][q], &m->bw_factor[a][q], e);
      if (rc) return rc;
      if (!m->enabled[a][q]) continue;
      if (gpus_per_node > 1 && (rc = profile_hop_lat(p, t->intra_class, (nccl_algo)a, (nccl_proto)q, &m->hop_intra_s[a][q], e)))
        return rc;
      if (nodes > 1 && (rc = profile_hop_lat(p, t->nic_class, (nccl_algo)a, (nccl_proto)q, &m->hop_net_s[a][q], e)))
        return rc;
    }
  return ERR_OK;
}

/* log2 rounded down, as NCCL's log2i. */
static int log2i(long v) {
  int l = 0;
  while (v >>= 1) l++;
  return l;
}

/* NCCL 2.7's tuning.cc constants (Volta and Pascal). */
#define LL128_MAX_BW_PER_CH_Bps 16.7e9 /* ll128MaxBwPerCh, all-reduce */
static const double tree_correction[NCCL_NPROTO][22] = {
    /* powers of two of S / 64 B, 64 B to 128 MB: trees fall short of the model at medium sizes */
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0},  /* LL */
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0}, /* LL128 */
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9}};     /* Simple */

/* The bus bandwidth factor f (of C bw) NCCL 2.7 reaches for algorithm a, protocol q, with the
 * profile's factor f0, and its latency adjustments (nccl.h). */
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

int nccl_choose(const nccl_model *m, coll_kind coll, double bytes, unsigned algo_mask, unsigned proto_mask,
                nccl_choice *out, err_t *e) {
  const coll_desc *cd = coll_get(coll);
  if (!cd) return err_set(e, ERR_INPUT, "unknown collective %d", (int)coll);
  long steps = coll_ring_steps(coll, m->n);
  int found = 0;
  for (int a = 0; a < NCCL_NALGO; a++) {
    if (!(algo_mask & (1u << a)) || (a == NCCL_ALGO_TREE && !cd->has_tree)) continue;
    for (int q = 0; q < NCCL_NPROTO; q++) {
      if (!(proto_mask & (1u << q)) || !m->enabled[a][q]) continue;
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
        lat = m->base_lat_s[a][q] + nccl_hops_s(coll, (nccl_algo)a, m->nodes, m->gpus_per_node, hop_intra, m->hop_net_s[a][q]);
        /* The ring "plateau": across nodes, from n/16 x 64 KiB up, an all-reduce's Simple latency is
         * 1.9x. */
        if (m->refine == PROFILE_NCCL_2_7 && coll == COLL_ALLREDUCE && a == NCCL_ALGO_RING && q == NCCL_PROTO_SIMPLE &&
            m->nodes > 1 && bytes >= m->n / 16.0 * 65536)
          lat *= 1.9;
        /* 2.18: from 64 bytes per channel and rank up, 1.9x before Ampere, 1.4x from Ampere on. */
        if (m->refine == PROFILE_NCCL_2_18 && coll == COLL_ALLREDUCE && a == NCCL_ALGO_RING && q == NCCL_PROTO_SIMPLE &&
            m->nodes > 1 && bytes / ((double)m->channels * m->n) >= 64)
          lat *= m->arch >= PROFILE_ARCH_AMPERE ? 1.4 : 1.9;
        edge = nccl_edge_per_byte(coll, (nccl_algo)a, m->n) * bytes / f;
      }
      double t = lat + (m->n > 1 ? edge / m->bw_Bps : 0);
      if (!found || t < out->time_s) {
        out->algo = (nccl_algo)a;
        out->proto = (nccl_proto)q;
        out->time_s = t;
        out->lat_s = lat;
        out->edge_bytes = edge;
        out->steps = steps;
        found = 1;
      }
    }
  }
  if (found) return ERR_OK;
  char avail[256] = "";
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++)
      if (m->enabled[a][q] && (a != NCCL_ALGO_TREE || cd->has_tree)) {
        size_t l = strlen(avail);
        snprintf(avail + l, sizeof avail - l, "%s%s/%s", l ? ", " : "", algo_names[a], proto_names[q]);
      }
  return err_set(e, ERR_INPUT, "no NCCL algorithm and protocol left to choose from for %s (the profile enables: %s)", cd->name, avail);
}

/* ---- the model's pieces (nccl.h) ---- */

static const char *const algo_env[NCCL_NALGO] = {"Ring", "Tree"};
static const char *const hw_names[NCCL_NHW] = {"NVLink", "PCI", "network"};

const char *nccl_algo_env(nccl_algo a) { return algo_env[a]; }
const char *nccl_hw_name(nccl_hw hw) { return hw_names[hw]; }

void nccl_hw_hops(nccl_hw hw, double hop_s[NCCL_NALGO][NCCL_NPROTO]) {
  /* NCCL src/graph/tuning.cc, hwLat[hw][algo][proto] in microseconds (2.7-era table, unchanged in
   * the versions since for these rows). */
  static const double us[NCCL_NHW][NCCL_NALGO][NCCL_NPROTO] = {
      /* NVLink */ {/* ring */ {0.47, 1.9, 3.4}, /* tree */ {0.52, 1.2, 28}},
      /* PCI */ {/* ring */ {1.0, 2.5, 5.7}, /* tree */ {1.0, 1.9, 28}},
      /* network */ {/* ring */ {2.7, 4.0, 9.6}, /* tree */ {5.0, 8.5, 50}},
  };
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) hop_s[a][q] = us[hw][a][q] * 1e-6;
}

double nccl_hops_s(coll_kind coll, nccl_algo a, int nodes, int gpus_per_node, double hop_intra_s, double hop_net_s) {
  if (a == NCCL_ALGO_RING) {
    long steps = coll_ring_steps(coll, (long)nodes * gpus_per_node), inter = coll_ring_inter_steps(coll, nodes);
    return (double)(steps - inter) * hop_intra_s + (double)inter * hop_net_s;
  }
  return 2.0 * ((gpus_per_node - 1) * hop_intra_s + log2i(nodes) * hop_net_s);
}

double nccl_edge_per_byte(coll_kind coll, nccl_algo a, int n) {
  return a == NCCL_ALGO_RING ? (double)coll_ring_steps(coll, n) / n : 2.0;
}

double nccl_time_s(coll_kind coll, nccl_algo a, int nodes, int gpus_per_node, double base_lat_s, double hop_intra_s,
                   double hop_net_s, double bw_factor, double bw_Bps, double bytes) {
  return base_lat_s + nccl_hops_s(coll, a, nodes, gpus_per_node, hop_intra_s, hop_net_s) +
         nccl_edge_per_byte(coll, a, nodes * gpus_per_node) * bytes / (bw_factor * bw_Bps);
}
