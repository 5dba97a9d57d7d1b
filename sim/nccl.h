/* nccl: NCCL's choice of all-reduce algorithm and protocol, and what the chosen one costs.
 *
 * The form of NCCL's own tuning model (src/graph/tuning.cc): for each algorithm (ring, tree) and
 * protocol (LL, LL128, Simple),
 *
 *   ring: t = base + (2(n-1) - 2(nodes-1)) hop_intra + 2(nodes-1) hop_net + 2(n-1)/n S / (f bw)
 *   tree: t = base + 2 ((G-1) hop_intra + log2(nodes) hop_net)            + 2 S / (f bw)
 *
 * for an all-reduce; other collectives take their steps from the table in sim/coll.h (all-gather:
 * n-1 steps, nodes-1 of them between nodes, (n-1)/n S per edge; ring only).
 *
 * with bw what NCCL's channels together carry (channels x per-channel bandwidth, sim/channels.h),
 * f the protocol's bandwidth factor, and base and hop latencies per algorithm and protocol
 * from the profile (comm.nccl and comm.links.<class>.hop_lat_s). NCCL runs the fastest enabled
 * combination; NCCL_ALGO / NCCL_PROTO restrict the choice. Without comm.nccl in the profile only
 * ring/Simple exists, with no base latency and the links' lat_s per hop.
 *
 * With comm.nccl.tuning_model "nccl-2.7", NCCL 2.7's refinements of that model apply too (its
 * tuning.cc, for Volta and Pascal): the bus bandwidth f C bw is capped (ring LL128 at 16.7 GB/s per
 * channel; tree at 110 GB/s on up to 2 nodes and 80 beyond, /3.8 for LL, x0.915 for LL128 and at
 * 16.7 x 7/9 GB/s per channel); tree LL128 on one node runs at 7/9 instead of 0.915 and ring LL128
 * with one GPU per node at 0.7 instead of 0.92 (the profile's factors being the general case);
 * trees get NCCL's per-size correction factor (64 B to 128 MB); LL's intra-node hops cost 1.8x
 * across nodes; and an all-reduce's ring/Simple latency is 1.9x across nodes from n x 4 KiB up (the
 * "plateau").
 *
 * With tuning_model "nccl-2.18" (tuning.cc at v2.18.3-1) the refinements are that release's, keyed
 * by comm.nccl.gpu_arch as NCCL keys them by compute capability: per-channel caps for ring LL128,
 * tree, tree LL128 and LL per architecture and for 1, 2 or more nodes; the tree correction factors
 * to 256 MB; a ring step across nodes costs at least the network's post overhead (1 us, 3 us for
 * Simple); and the plateau (from 64 bytes per channel and rank) is 1.4x from Ampere on, 1.9x
 * before. Its base and hop latencies (baseLat, hwLat: tree LL 6.8 us, ...) are the profile's.
 * docs/simulation.md. */
#ifndef DDPSIM_NCCL_H
#define DDPSIM_NCCL_H

#include "coll.h"
#include "err.h"
#include "topo.h"

typedef struct profile profile_t; /* sim/profile.h, which includes this header for the enums below */

typedef enum { NCCL_ALGO_RING = 0, NCCL_ALGO_TREE = 1, NCCL_NALGO = 2 } nccl_algo;
typedef enum { NCCL_PROTO_LL = 0, NCCL_PROTO_LL128 = 1, NCCL_PROTO_SIMPLE = 2, NCCL_NPROTO = 3 } nccl_proto;

#define NCCL_ALL_ALGOS ((1u << NCCL_NALGO) - 1)
#define NCCL_ALL_PROTOS ((1u << NCCL_NPROTO) - 1)

const char *nccl_algo_name(nccl_algo a);   /* "ring", "tree" */
const char *nccl_proto_name(nccl_proto p); /* "LL", "LL128", "Simple" */

/* Parses an NCCL_ALGO / NCCL_PROTO style list ("ring", "Tree,Ring", case-insensitive) into a bit
 * mask; "auto" is every one. 0 on success, -1 for an unknown name. */
int nccl_parse_algos(const char *s, unsigned *mask);
int nccl_parse_protos(const char *s, unsigned *mask);

typedef struct {
  int n, nodes, gpus_per_node;
  double bw_Bps;                       /* the bottleneck edge: min over the edges in use */
  int enabled[NCCL_NALGO][NCCL_NPROTO];
  double base_lat_s[NCCL_NALGO][NCCL_NPROTO];
  double bw_factor[NCCL_NALGO][NCCL_NPROTO];
  double hop_intra_s[NCCL_NALGO][NCCL_NPROTO], hop_net_s[NCCL_NALGO][NCCL_NPROTO];
  int channels;                        /* NCCL's channels (the per-channel caps) */
  int refine;                          /* PROFILE_NCCL_*: whose refinements apply (profile.h) */
  int arch;                            /* PROFILE_ARCH_* for nccl-2.18, -1 otherwise */
} nccl_model;

/* Builds the model for n = nodes x gpus_per_node ranks whose `channels` channels together carry
 * intra_bw_Bps inside a node and nic_bw_Bps between nodes (effective). ERR_INPUT if the profile
 * lacks a link class the topology uses. */
int nccl_model_init(nccl_model *m, const profile_t *p, const topo_t *t, int nodes, int gpus_per_node, int channels,
                    double intra_bw_Bps, double nic_bw_Bps, err_t *e);

typedef struct {
  nccl_algo algo;
  nccl_proto proto;
  double time_s;     /* NCCL's estimate on an idle network */
  double lat_s;      /* its latency part */
  double edge_bytes; /* what each edge carries: nsteps/n S / f (ring; 2(n-1)/n for all-reduce) or
                        2 S / f (tree), f the effective factor (with the refinements: bus bandwidth /
                        (C bw)) */
  long steps;        /* the collective's ring steps (sim/coll.h): step fidelity's messages per edge */
} nccl_choice;

/* The fastest enabled combination within the masks for collective `coll` (sim/coll.h) of `bytes`.
 * ERR_INPUT when the masks leave nothing the profile enables for that collective (the message says
 * what is available). */
int nccl_choose(const nccl_model *m, coll_kind coll, double bytes, unsigned algo_mask, unsigned proto_mask,
                nccl_choice *out, err_t *e);

/* ---- The model's pieces, one definition for the simulator (nccl_model_init, nccl_choose above)
 * and for calib/nccltune.h, which fits comm.nccl to sweeps measured with NCCL (docs/calib.md). ---- */

/* NCCL_ALGO's spelling of an algorithm: "Ring", "Tree". (NCCL_PROTO's is nccl_proto_name's.) */
const char *nccl_algo_env(nccl_algo a);

/* The hardware rows of NCCL's tuning.cc hwLat table. */
typedef enum { NCCL_HW_NVLINK = 0, NCCL_HW_PCI = 1, NCCL_HW_NET = 2, NCCL_NHW = 3 } nccl_hw;
const char *nccl_hw_name(nccl_hw hw); /* "NVLink", "PCI", "network" */

/* NCCL's tuning.cc hwLat for that hardware, in seconds per hop, [algo][proto]: the hop latencies
 * the bundled profiles carry and ddpcalib comm --nccl-tuning assumes. */
void nccl_hw_hops(nccl_hw hw, double hop_s[NCCL_NALGO][NCCL_NPROTO]);

/* The hop terms of the model (the formulas at the top) for collective coll over nodes x
 * gpus_per_node ranks, seconds (nsteps, nInterSteps: sim/coll.h):
 *   ring: (nsteps - nInterSteps) hop_intra + nInterSteps hop_net   (all-reduce: 2(n-1), 2(nodes-1))
 *   tree: 2 ((G-1) hop_intra + log2i(nodes) hop_net)                (log2i rounded down, as NCCL's) */
double nccl_hops_s(coll_kind coll, nccl_algo a, int nodes, int gpus_per_node, double hop_intra_s, double hop_net_s);

/* Bytes each edge carries per byte of collective coll over n ranks: nsteps/n (ring; 2(n-1)/n for an
 * all-reduce) or 2 (tree). */
double nccl_edge_per_byte(coll_kind coll, nccl_algo a, int n);

/* The model's time for collective coll of `bytes` over nodes x gpus_per_node >= 2 ranks, without
 * NCCL 2.7's refinements: base + hops + edge_per_byte bytes / (bw_factor bw). */
double nccl_time_s(coll_kind coll, nccl_algo a, int nodes, int gpus_per_node, double base_lat_s, double hop_intra_s,
                   double hop_net_s, double bw_factor, double bw_Bps, double bytes);

#endif
