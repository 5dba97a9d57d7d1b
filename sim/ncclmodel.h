/* ncclmodel: NCCL's choice of algorithm and protocol for a collective, and what the chosen one costs.
 *
 * NCCL's algorithms are a table (ncclmodel.c, one row each: nccl_algo_desc below): its name, the
 * collectives and protocols it runs, the GPUs per node NCCL allows it, the release that introduced
 * it, and its hop and bandwidth terms in the form of NCCL's own tuning model (src/graph/tuning.cc):
 *
 *   ring: t = base + (nsteps - nInterSteps) hop_intra + nInterSteps hop_net + nsteps/n S / (f bw)
 *   tree: t = base + 2 ((G-1) hop_intra + log2(nodes) hop_net)               + 2 S / (f bw)
 *   pat:  t = base + log2(nodes) hop_net / 3.5 + n x 2.8 us                   + S / (f bw)
 *   hier: the sum of its phases, each a ring: reduce-scatter inside the nodes, all-reduce of each
 *         1/G shard between them, all-gather inside them (not one of NCCL's algorithms)
 *
 * (nsteps, nInterSteps: the collective's row in sim/coll.h; an all-reduce's are 2(n-1), 2(nodes-1)),
 * with bw what NCCL's channels together carry (channels x per-channel bandwidth, sim/channels.h),
 * f the protocol's bandwidth factor, and base and hop latencies per algorithm and protocol
 * from the profile (comm.nccl and comm.links.<class>.hop_lat_s). NCCL runs the fastest enabled
 * combination; NCCL_ALGO / NCCL_PROTO restrict the choice. Without comm.nccl in the profile only
 * ring/Simple exists, with no base latency and the links' lat_s per hop.
 *
 * PAT (NCCL 2.23+, tuning.cc at v2.23.4-1): all-gather and reduce-scatter only, Simple only, at one
 * GPU per node only; its network hop is the tree's (NCCL: "with ppn=1 latencies are fully exposed,
 * use the Tree network latency"). NCCL's own choice considers it where the profile lists
 * comm.nccl.pat (a profile whose tuning_model names an older release may not); forced (NCCL_ALGO),
 * it runs where NCCL's rules allow, at the profile's comm.nccl.pat.Simple or, without one, at
 * tuning.cc v2.23.4-1's own constants (base 8 us, bandwidth x 0.85). docs/simulation.md, "PAT".
 *
 * hier (a hierarchical all-reduce composed of NCCL collectives, as Horovod's HOROVOD_TORUS_ALLREDUCE
 * runs it): only when forced, never NCCL's own choice; each phase at the ring's costs
 * (comm.nccl.ring, hop_lat_s.ring) on its communicator. docs/simulation.md, "Hierarchical".
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
#ifndef DDPSIM_NCCLMODEL_H
#define DDPSIM_NCCLMODEL_H

#include "coll.h"
#include "err.h"
#include "topo.h"

typedef struct profile profile_t; /* sim/profile.h, which includes this header for nccl_algo, nccl_proto */

typedef enum { NCCL_ALGO_RING = 0, NCCL_ALGO_TREE = 1, NCCL_ALGO_PAT = 2, NCCL_ALGO_HIER = 3, NCCL_NALGO = 4 } nccl_algo;
typedef enum { NCCL_PROTO_LL = 0, NCCL_PROTO_LL128 = 1, NCCL_PROTO_SIMPLE = 2, NCCL_NPROTO = 3 } nccl_proto;

/* An algorithm mask is a set of 1u << nccl_algo (NCCL_ALGO forced) and/or NCCL_ALGOS_AUTO: what
 * NCCL itself considers without NCCL_ALGO (every algorithm the profile lists, nccl_model.auto_on). */
#define NCCL_ALGOS_AUTO (1u << 31)
#define NCCL_ALL_PROTOS ((1u << NCCL_NPROTO) - 1)

typedef struct nccl_model nccl_model;   /* below */
typedef struct nccl_choice nccl_choice; /* below */

/* One NCCL algorithm: a row of ncclmodel.c's table. Adding an algorithm is its enum value, its row
 * and its cost terms (docs/architecture.md). */
typedef struct {
  const char *name;      /* "ring": --nccl-algo, comm.nccl.<name>, reports */
  const char *env;       /* NCCL_ALGO's spelling (init.cc's ncclAlgoStr): "Ring"; NULL: not one of NCCL's
                            algorithms (never NCCL's own choice, not in a profile, not swept) */
  unsigned colls;        /* the collectives it runs: bits 1u << coll_kind */
  unsigned protos;       /* the protocols it runs: bits 1u << nccl_proto */
  int max_gpus_per_node; /* NCCL refuses it with more GPUs per node; 0: no limit */
  int since;             /* the NCCL release that introduced it, major x 100 + minor (2.23: 223; 0: the first) */
  nccl_algo hops_of;     /* whose per-hop latencies (hop_lat_s.<algo>.<proto>) it pays */
  double base_lat_s, bw_factor; /* tuning.cc's own constants where a profile lacks comm.nccl.<name>; both 0: it
                                   runs only where the profile lists it */
  /* The hop terms (seconds) of collective coll over nodes x gpus_per_node ranks; the bytes every edge
   * carries per byte of the collective (S: the full buffer); step fidelity's messages per edge. */
  double (*hops_s)(coll_kind coll, int nodes, int gpus_per_node, double hop_intra_s, double hop_net_s);
  double (*edge_per_byte)(coll_kind coll, int n);
  long (*steps)(coll_kind coll, int n);
  /* A composed algorithm's estimate (its edge_per_byte and steps NULL: they need nodes and G apart):
   * the sum of its phases, each another row's collective on part of the ranks, at the costs of
   * hops_of; NULL for the others. */
  void (*compose)(const nccl_model *m, coll_kind coll, int q, double bytes, nccl_choice *out);
} nccl_algo_desc;

/* The row of an algorithm; NULL outside the table. */
const nccl_algo_desc *nccl_algo_get(nccl_algo a);

/* 1 if algorithm a runs collective coll with protocol q (its row; not the GPUs per node). */
int nccl_algo_runs(nccl_algo a, coll_kind coll, nccl_proto q);

/* 1 if ddpcalib's sweep (all-reduces with NCCL_ALGO and NCCL_PROTO forced) measures (a, q): one of
 * NCCL's own algorithms (an NCCL_ALGO spelling) that runs an all-reduce with q, at any GPUs per
 * node. */
int nccl_algo_swept(nccl_algo a, nccl_proto q);

const char *nccl_algo_name(nccl_algo a);   /* the row's name: "ring", "tree", "pat", "hier" */
const char *nccl_proto_name(nccl_proto p); /* "LL", "LL128", "Simple" */

/* Parses an NCCL_ALGO / NCCL_PROTO style list ("ring", "Tree,Ring", case-insensitive) into a bit
 * mask; "auto" is NCCL_ALGOS_AUTO (algorithms) or every protocol. 0 on success, -1 for an unknown
 * name. */
int nccl_parse_algos(const char *s, unsigned *mask);
int nccl_parse_protos(const char *s, unsigned *mask);

/* The algorithm names, ", "-separated ("ring, tree, pat, hier"), for messages and help. */
const char *nccl_algo_list(void);

struct nccl_model {
  int n, nodes, gpus_per_node;
  double bw_Bps;                       /* the bottleneck edge: min over the edges in use */
  int enabled[NCCL_NALGO][NCCL_NPROTO]; /* runs here (the profile's costs or the row's), forced or not */
  int auto_on[NCCL_NALGO][NCCL_NPROTO]; /* NCCL's own choice considers it: the profile lists it */
  double base_lat_s[NCCL_NALGO][NCCL_NPROTO];
  double bw_factor[NCCL_NALGO][NCCL_NPROTO];
  double hop_intra_s[NCCL_NALGO][NCCL_NPROTO], hop_net_s[NCCL_NALGO][NCCL_NPROTO];
  int channels;                        /* NCCL's channels (the per-channel caps) */
  int refine;                          /* PROFILE_NCCL_*: whose refinements apply (profile.h) */
  int arch;                            /* PROFILE_ARCH_* for nccl-2.18, -1 otherwise */
  int version;                         /* the release of the refinements, as nccl_algo_desc.since; 0: unknown */
  double intra_bw_Bps, nic_bw_Bps;     /* as given to nccl_model_init (a composed algorithm's phases) */
};

/* Builds the model for n = nodes x gpus_per_node ranks whose `channels` channels together carry
 * intra_bw_Bps inside a node and nic_bw_Bps between nodes (effective). ERR_INPUT if the profile
 * lacks a link class the topology uses, or lists an algorithm its tuning_model's release predates. */
int nccl_model_init(nccl_model *m, const profile_t *p, const topo_t *t, int nodes, int gpus_per_node, int channels,
                    double intra_bw_Bps, double nic_bw_Bps, err_t *e);

/* Makes m a ring that is not NCCL's (gloo's over TCP, sim/plan.c): ring/Simple alone, without NCCL's
 * base latency, bandwidth factor or tuning refinements, at one-hop latencies hop_intra_s inside a
 * node and hop_net_s between nodes; bandwidths as nccl_model_init set them. */
void nccl_model_plain_ring(nccl_model *m, double hop_intra_s, double hop_net_s);

/* Who takes part in a phase of a composed collective: every rank (the job's rings), the ranks of
 * one node (a ring inside each node), or the ranks of one local index across the nodes (a ring per
 * local GPU between the nodes). */
typedef enum { NCCL_GROUP_ALL = 0, NCCL_GROUP_NODE = 1, NCCL_GROUP_RAIL = 2, NCCL_GROUPS = 3 } nccl_group;

/* The model of group g's communicator within m's job: every rank (m itself); one node's G ranks at
 * the bandwidth inside a node; one local GPU's rank on every node, the G rails sharing the node's
 * network bandwidth (nic_bw / G each). A composed collective's phases (hier) and a framework's
 * collectives on sub-groups (HSDP, sim/fsdp.h) are costed on these. */
void nccl_model_group(const nccl_model *m, nccl_group g, nccl_model *out);

/* One phase of a composed collective (hier): a ring collective of its group, as NCCL costs it on
 * that communicator. */
typedef struct {
  coll_kind coll;
  nccl_group group;
  double time_s, lat_s; /* its estimate and latency part */
  double edge_bytes;    /* what each edge of its ring carries, all channels together */
  long steps;           /* step fidelity's messages per edge */
} nccl_phase;

#define NCCL_MAX_PHASES 3

struct nccl_choice {
  nccl_algo algo;
  nccl_proto proto;
  double time_s;     /* NCCL's estimate on an idle network */
  double lat_s;      /* its latency part */
  double edge_bytes; /* what each edge carries: the row's edge_per_byte S / f (ring nsteps/n S / f, tree
                        2 S / f, pat S / f), f the effective factor (with the refinements: bus
                        bandwidth / (C bw)); hier: its phases' bandwidth time x bw */
  long steps;        /* step fidelity's messages per edge (the row's steps: ring and tree the
                        collective's ring steps, sim/coll.h; pat n - 1; hier the all-reduce ring's) */
  int nphase;        /* a composed algorithm's phases, in order (0: one collective of every rank) */
  nccl_phase phase[NCCL_MAX_PHASES];
};

/* The fastest combination within the masks for collective `coll` (sim/coll.h) of `bytes`: among the
 * algorithms forced in algo_mask, those m enables; with NCCL_ALGOS_AUTO, those m->auto_on has too.
 * ERR_INPUT when the masks leave nothing for that collective (the message says what is available
 * and why a forced algorithm is refused: the collective, the GPUs per node, the profile). */
int nccl_choose(const nccl_model *m, coll_kind coll, double bytes, unsigned algo_mask, unsigned proto_mask,
                nccl_choice *out, err_t *e);

/* ---- The model's pieces, one definition for the simulator (nccl_model_init, nccl_choose above)
 * and for calib/nccltune.h, which fits comm.nccl to sweeps measured with NCCL (docs/calib.md). ---- */

/* NCCL_ALGO's spelling of an algorithm: "Ring", "Tree", "PAT"; NULL for hier, not NCCL's. (NCCL_PROTO's
 * is nccl_proto_name's.) */
const char *nccl_algo_env(nccl_algo a);

/* The hardware rows of NCCL's tuning.cc hwLat table. */
typedef enum { NCCL_HW_NVLINK = 0, NCCL_HW_PCI = 1, NCCL_HW_NET = 2, NCCL_NHW = 3 } nccl_hw;
const char *nccl_hw_name(nccl_hw hw); /* "NVLink", "PCI", "network" */

/* NCCL's tuning.cc hwLat for that hardware, in seconds per hop, [algo][proto]: the hop latencies
 * the bundled profiles carry and ddpcalib comm --nccl-tuning assumes (ring and tree; 0 for PAT,
 * which has no row of its own: it pays the tree's). */
void nccl_hw_hops(nccl_hw hw, double hop_s[NCCL_NALGO][NCCL_NPROTO]);

/* The hop terms of the model (the formulas at the top: the row's hops_s) for collective coll over
 * nodes x gpus_per_node ranks, seconds (nsteps, nInterSteps: sim/coll.h):
 *   ring: (nsteps - nInterSteps) hop_intra + nInterSteps hop_net   (all-reduce: 2(n-1), 2(nodes-1))
 *   tree: 2 ((G-1) hop_intra + log2i(nodes) hop_net)                (log2i rounded down, as NCCL's)
 *   pat:  log2i(nodes) hop_net / 3.5 + n x 2.8 us
 *   hier: 2 (G-1) hop_intra + 2 (nodes-1) hop_net (its phases') */
double nccl_hops_s(coll_kind coll, nccl_algo a, int nodes, int gpus_per_node, double hop_intra_s, double hop_net_s);

/* Bytes each edge carries per byte of collective coll over n ranks (the row's edge_per_byte):
 * nsteps/n (ring; 2(n-1)/n for an all-reduce), 2 (tree), 1 (pat); NAN for hier (its phases run at
 * two bandwidths). */
double nccl_edge_per_byte(coll_kind coll, nccl_algo a, int n);

/* The model's time for collective coll of `bytes` over nodes x gpus_per_node >= 2 ranks, without
 * NCCL 2.7's refinements: base + hops + edge_per_byte bytes / (bw_factor bw). */
double nccl_time_s(coll_kind coll, nccl_algo a, int nodes, int gpus_per_node, double base_lat_s, double hop_intra_s,
                   double hop_net_s, double bw_factor, double bw_Bps, double bytes);

#endif
