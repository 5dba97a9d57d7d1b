/* topo: what the job runs on.
 *
 * A topology describes one kind of node (GPUs per node, the links a GPU uses inside the node, the
 * NICs) and the switch between nodes; the node count comes from the command line. Numbers here are
 * nominal hardware figures; the profile says what fraction of them is achieved and what a hop costs
 * in latency. The text format is documented in topologies/README.md. */
#ifndef DDPSIM_TOPO_H
#define DDPSIM_TOPO_H

#include "err.h"

#define TOPO_NAME_MAX 64
#define TOPO_MAX_GRAPH_GPUS 64 /* GPUs per node a pair graph or nic_near lines may describe */
#define TOPO_MAX_PAIRS (TOPO_MAX_GRAPH_GPUS * (TOPO_MAX_GRAPH_GPUS - 1) / 2)
#define TOPO_MAX_NICS 64

typedef struct {
  char name[TOPO_NAME_MAX];
  char path[512];
  int gpus_per_node;
  char intra_class[TOPO_NAME_MAX]; /* link class inside a node: "nvlink", "pcie", "shm" */
  int intra_links;                 /* links of that class a GPU drives ring traffic over, per direction */
  double intra_bw_Bps;             /* nominal bandwidth of one such link, per direction */
  int has_nic;                     /* 0: single-node only ("nic none") */
  char nic_class[TOPO_NAME_MAX];   /* "ib-edr", "10gbe", ... */
  int nic_count;                   /* NICs per node */
  double nic_bw_Bps;               /* nominal bandwidth of one NIC, per direction */
  double switch_bw_Bps;            /* 0: non-blocking switch; else a backbone shared by all traffic */
  /* Optional: the links inside a node as a graph ("pair A B links=N" lines). Without pairs the
   * GPUs sit behind a switch: each reaches any other over its intra_links links. */
  int npairs;
  struct {
    int a, b, links;                /* GPUs a and b joined by `links` links of the intra class */
  } pairs[TOPO_MAX_PAIRS];
  /* Optional: which GPUs each NIC is near ("nic_near K GPU,GPU..." lines); without them every GPU
   * is near every NIC. near[k][g] for k < nic_count, g < gpus_per_node. */
  int has_near;
  unsigned char near[TOPO_MAX_NICS][TOPO_MAX_GRAPH_GPUS];
} topo_t;

/* Links from local GPU u to v in the pair graph (0 if none, or no graph). */
int topo_pair_links(const topo_t *t, int u, int v);

/* Loads a topology file into *out (caller frees with topo_destroy). ERR_IO if unreadable,
 * ERR_INPUT with `path:line: reason` if malformed; nothing allocated on failure. */
int topo_load(const char *path, topo_t **out, err_t *e);
int topo_parse(const char *text, const char *origin, topo_t **out, err_t *e);
void topo_destroy(topo_t *t); /* NULL is a no-op */

#endif
