/* channels: the rings NCCL builds through the GPUs of a node and out through its NICs.
 *
 * NCCL splits every all-reduce evenly over several channels; each channel is a ring with its own
 * order of the GPUs, and across nodes it leaves and enters each node through one NIC. Its search
 * (src/graph/search.cc) picks a per-channel bandwidth, starting high, and finds as many channels as
 * the links can carry at that bandwidth (every channel takes that much of every link it crosses);
 * it then tries lower bandwidths while they are more than 0.49 of the best found, and keeps the
 * highest total. This module does the same on the topology's link graph:
 *
 *   - inside a node either explicit GPU pairs with their link capacity (the NVLink hybrid
 *     cube-mesh of a DGX-1 is not a crossbar: a GPU reaches only four of the seven others), or a
 *     switch (PCIe) where each GPU has one link up and one down;
 *   - across nodes a channel enters at a GPU near its NIC and leaves from a GPU near the same NIC
 *     (NCCL's default, no cross-NIC rings), so a node's inter-node bandwidth is what its rings put
 *     through its NICs: the sum of the NICs when there are as many rings as NICs.
 *
 * Every node uses the same channels (identical nodes). Candidate per-channel bandwidths are each
 * link capacity divided by 1 to 4. docs/simulation.md derives and tests it. */
#ifndef DDPSIM_CHANNELS_H
#define DDPSIM_CHANNELS_H

#include "err.h"
#include "topo.h"

#define CHANNELS_MAX 16 /* channels per ring graph */

typedef struct {
  int gpus;                  /* G: GPUs per node, >= 1 */
  int nodes;                 /* >= 1 */
  const double *pair_Bps;    /* (G x G) direct link capacity from u to v, per direction (0: none);
                                NULL: a switch, every GPU with gpu_Bps up and gpu_Bps down */
  double gpu_Bps;            /* switched nodes only */
  int nics;                  /* NICs per node (used when nodes > 1) */
  double nic_Bps;            /* each NIC, per direction */
  const unsigned char *near; /* (nics x G) near[k * G + g]: GPU g is near NIC k; NULL: all near */
} channels_spec;

typedef struct {
  int count;                 /* C >= 1 */
  int gpus;                  /* G */
  double speed_Bps;          /* each channel's bandwidth */
  int *order;                /* (C x G) local GPUs in ring order; across nodes [0] is where the
                                channel enters the node and [G-1] where it leaves */
  int *pos;                  /* (C x G) pos[c * G + g]: where GPU g sits in channel c's order */
  int nic[CHANNELS_MAX];     /* the NIC a channel crosses (nodes > 1), else -1 */
  int nics_used;             /* distinct NICs the channels cross (0 on one node) */
  int exhausted;             /* the search hit its step budget: a better set may exist */
} channels_t;

/* The channels for spec, into *out (free with channels_free). ERR_INPUT when there is no ring at
 * all: no path through every GPU over the node's links (the message says so), or no NIC when nodes
 * > 1; ERR_NOMEM. The search is bounded; with 8 GPUs it is exhaustive. */
int channels_search(const channels_spec *spec, channels_t *out, err_t *e);

/* The spec for GPUs 0..gpus-1 of topology t's node on `nodes` nodes, every link of the intra class
 * carrying link_Bps and every NIC nic_Bps per direction. *pair and *near are allocated for the
 * spec (the caller frees both; NULL when the topology has no pair graph or no NIC placement).
 * ERR_INPUT when the topology's pairs or nic_near lines describe fewer GPUs than asked for, or it
 * has no NIC and nodes > 1; ERR_NOMEM. */
int channels_spec_from_topo(const topo_t *t, int gpus, int nodes, double link_Bps, double nic_Bps, channels_spec *s,
                            double **pair, unsigned char **near, err_t *e);

/* How many links of the topology NCCL's channels span together, for `gpus` GPUs per node on
 * `nodes` nodes: channels_bw_Bps with every intra link (one node) or every NIC (several nodes) of
 * bandwidth 1. A ring all-reduce measured over those GPUs runs at this many links' bandwidth; what
 * one link gives is the measured bandwidth divided by it (ddpcalib comm --topology). */
int channels_link_units(const topo_t *t, int gpus, int nodes, double *units, err_t *e);

/* The rank after `rank` on channel c, with ranks numbered node-major (rank = node * G + local). */
int channels_next(const channels_t *ch, int nodes, int c, int rank);

/* C x speed: the bandwidth all channels together give an all-reduce. */
double channels_bw_Bps(const channels_t *ch);

void channels_free(channels_t *ch); /* frees the contents; NULL is a no-op */

#endif
