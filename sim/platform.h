/* platform: the SimGrid platform for a topology, a node count and NCCL's channels.
 *
 *   node 0                                           node 1
 *   gpu0 =nvl= gpu1 =nvl= ... gpuG-1 --nicup-->[backbone]--nicdown--> gpu8 ...
 *
 * One host per GPU, ranks numbered node-major (rank = node * G + local). Inside a node either one
 * link per direction for every GPU pair of the topology's graph (the pair's links together), or,
 * for switched nodes, a link up and a link down per GPU. Each NIC of a node is a link up and a link
 * down; NICs that two channels would reach from the same pair of GPUs are merged into one link of
 * their summed bandwidth (SimGrid has one route per pair of hosts). Only the routes the channels
 * use exist: from every rank to its successor on each channel (and, where the spec asks, on each
 * node ring and rail of a composed collective's phases). The hop latency sits on the first
 * link of each route (the others have none), so a route's latency is exactly one hop of its class.
 * Several channels crossing one link share it (max-min fairness). See docs/simulation.md.
 *
 * Where every GPU leaves and enters its node through one NIC (after merging), each node is a zone
 * of its own with a router: a GPU's route to the router is its NIC up, the router's to a GPU that
 * NIC down, and node zones reach each other through a star whose routes up cross the backbone (or
 * nothing, for a non-blocking switch). SimGrid's all-pairs route tables then hold G^2 entries per
 * node and one up and one down route per node between nodes, not (N G)^2 or N^2. Otherwise every
 * GPU is in one zone with its (N G)^2 table. The links each route crosses are the same either way. */
#ifndef DDPSIM_PLATFORM_H
#define DDPSIM_PLATFORM_H

#include <simgrid/forward.h>
#include <stddef.h>

#include "channels.h"
#include "err.h"

typedef struct {
  int nodes;
  int gpus_per_node;
  const double *pair_Bps;   /* (G x G) link capacity from local GPU u to v, per direction; NULL:
                               switched nodes */
  double gpu_Bps;           /* switched nodes: each GPU's link to the switch, per direction */
  double intra_lat_s;       /* one hop inside a node */
  int nics;                 /* NICs per node */
  double nic_Bps, nic_lat_s; /* each NIC, per direction; one hop between nodes */
  double backbone_bw_Bps;   /* 0: non-blocking switch, no backbone link */
  const channels_t *ch;     /* the rings (channels_search for the same G and nodes) */
  /* A composed collective's phases (sim/ncclmodel.h, hier): the rings inside each node (a one-node
   * job's channels; NULL: none) and, with rails set, a ring per local GPU between the nodes, each
   * GPU through the first NIC near it (near: nics x G, NULL: all near). */
  const channels_t *ch_node;
  int rails;
  const unsigned char *near;
} platform_spec;

/* Checks spec: ERR_INPUT if it is inconsistent (no NIC with more than one node, non-positive or
 * non-finite numbers, no channels). */
int platform_check(const platform_spec *spec, err_t *e);

/* Builds spec's platform in SimGrid's engine (after simgrid_init, before any actor; sim/platform_build.c,
 * in the events module: sim/events.h) through
 * SimGrid's API (sim/platform_s4u.h): every link and route made from handles, nothing written out or
 * looked up by name. hosts (nodes x gpus_per_node) receives each rank's host. platform_check's
 * errors, ERR_NOMEM, ERR_SIM when SimGrid refuses an element (its message). */
int platform_build(const platform_spec *spec, sg_host_t *hosts, err_t *e);

/* One (rank, successor) pair that channels use: its route's flows and narrowest link; where its
 * links carry other pairs' flows too, its group and its links. */
typedef struct {
  int src, dst;
  int flows;      /* channels using the pair: that many flows share its route */
  double min_Bps; /* the narrowest link of the route */
  int group;      /* -1: no link of its route carries another pair's flows; else its group: the
                     pairs joined by links they share (platform_net's groups) */
  int nlinks;     /* grouped pairs: the links of its route (platform_net's link numbers) */
  int link[3];
} platform_pair;

/* The pairs spec's channels use, as the built platform routes them, and how they share links. */
typedef struct {
  platform_pair *pairs; /* (npairs) sorted by src, then dst */
  size_t npairs;
  int ngroups;          /* groups of pairs sharing links: pairs linked by a link two of them cross */
  size_t *group_at;     /* (ngroups + 1) group g's pairs are group_pair[group_at[g] .. group_at[g + 1]) */
  size_t *group_pair;   /* indices into pairs */
  int nlinks;           /* the links grouped pairs cross, numbered 0 .. nlinks - 1 */
  double *link_Bps;     /* (nlinks) each one's bandwidth */
  int exclusive;        /* no group: no link is crossed by two pairs, so a pair's flows share their
                           links with no other, each at min_Bps / flows while they run, whenever
                           the others start */
  int one_node;         /* every group's pairs leave from one node (their sources are its GPUs):
                           a group has at most a node's pairs, whatever the nodes */
} platform_net;

/* The pairs of spec's channels and their groups into *net (free with platform_net_free).
 * platform_check's errors, ERR_NOMEM. */
int platform_pairs(const platform_spec *spec, platform_net *net, err_t *e);

void platform_net_free(platform_net *net); /* frees the contents; NULL is a no-op */

/* ---- the layout: what platform_check and platform_pairs compute of a platform and platform_build
 * (sim/platform_build.c, in the events module: sim/events.h) builds in SimGrid: the pairs the
 * channels use, the merged NICs, the zones and the links' numbering. ---- */

typedef struct {
  long long key; /* src * n + dst */
  int channel;   /* the job's channel using it, or -1 (a phase's ring) */
  int nic;       /* the NIC it crosses between nodes (before merging): its channel's, or a rail's;
                    -1: none (a node ring) */
} route_use;

/* What the build works from: the pairs the channels use, the merged NICs, and the zones. */
typedef struct {
  const platform_spec *s;
  int n;
  route_use *use; /* (nroute) every (rank, successor) pair a channel uses, sorted; duplicates kept */
  size_t nroute;
  int parent[64], members[64]; /* NICs merged into one link: union-find, and each root's members */
  int hier;                    /* node zones behind routers (else one zone) */
  int *exit_nic, *entry_nic;   /* (G) hier: the merged NIC each local GPU leaves / enters through */
  /* Links are numbered (link_id): the GPUs' (pair graph: rank's link to local v at rank * G + v;
   * switched nodes: rank * G its link up, + 1 down), then each node's merged NICs up and down, then
   * the backbone. */
  size_t nlinks;
  struct psg_link **link;      /* (nlinks) platform_build: each link's handle */
} layout;

/* The pairs the channels use, the merged NICs and the zones of s (free with layout_free; link is
 * left NULL for the build). platform_check's errors, ERR_NOMEM. */
int layout_init(layout *L, const platform_spec *s, err_t *e);
void layout_free(layout *L);

/* The ids of node's k-th merged NIC up and down, and of the backbone. */
size_t layout_nic_up(const layout *L, int node, int k);
size_t layout_nic_down(const layout *L, int node, int k);
size_t layout_backbone(const layout *L);

/* The links of the route from rank src to dst crossing NIC `nic` between nodes: ids[] (returns how
 * many). */
int layout_route_links(layout *L, int src, int dst, int nic, size_t ids[3]);

#endif
