/* platform: the SimGrid platform (XML) for a topology and a node count.
 *
 *   node 0                                   node 1
 *   gpu0 --nvl0--> gpu1 --nvl1--> ... gpuG-1 --nicup0--[backbone]--nicdown1--> gpu0 ...
 *
 * One host per GPU, ranks numbered node-major (rank = node * G + local). Only the routes the ring
 * uses exist: rank r to rank r+1 (mod n). Inside a node a GPU sends over its own link (the
 * aggregate of the links it drives, per direction); across nodes over the sending node's NIC uplink
 * (all its NICs together), the optional shared backbone, and the receiving node's NIC downlink. The
 * hop latency sits on the first link of each route (the others have none), so a route's latency is
 * exactly one hop of its class. See docs/simulation.md. */
#ifndef DDPSIM_PLATFORM_H
#define DDPSIM_PLATFORM_H

#include <stdio.h>

#include "err.h"

typedef struct {
  int nodes;
  int gpus_per_node;
  double intra_bw_Bps, intra_lat_s; /* per GPU, per direction */
  double nic_bw_Bps, nic_lat_s;     /* per node (all NICs), per direction */
  double backbone_bw_Bps;           /* 0: non-blocking switch, no backbone link */
} platform_spec;

/* Host name of a rank ("gpu<rank>"), written into buf. */
void platform_host_name(int rank, char *buf, size_t len);

/* Writes the platform XML for spec to f. ERR_INPUT if the spec is inconsistent (no NIC bandwidth
 * with more than one node, non-positive numbers), ERR_IO if writing fails. */
int platform_write(FILE *f, const platform_spec *spec, err_t *e);

#endif
