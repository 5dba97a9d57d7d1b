/* coll: the collectives the simulator can run, as a table.
 *
 * A collective is a row of this table: its name, how many pipeline steps it takes around the
 * channels' rings, how many of those cross nodes, and so how many bytes each ring edge carries per
 * byte of the collective's size S. Everything else (NCCL's choice of algorithm and protocol in
 * sim/ncclmodel.c, whose algorithm rows say which collectives each runs; both fidelities of the
 * engine in sim/events.c; the plan's printout) reads the row, so adding a collective is one enum
 * value, one row, and its test.
 *
 * The form is NCCL's own (src/graph/tuning.cc, 2.7 to 2.18): a ring collective of n ranks on
 * `nodes` nodes takes nsteps = k (n - 1) steps, nInterSteps = k (nodes - 1) of them between nodes
 * (broadcast: nsteps = n, nInterSteps = nodes, even on one node, as tuning.cc writes it; ring only),
 * and reaches an algorithm bandwidth of busBw x n / nsteps, i.e. every edge carries nsteps / n x S
 * bytes (k = 2 for all-reduce, 1 for all-gather and reduce-scatter; S is the full buffer: the
 * reduced buffer, or the gathered output). The other algorithms' forms are their rows in
 * sim/ncclmodel.c.
 *
 * Routes: every algorithm runs over the channels' ring edges (sim/channels.h); the edges of the
 * others (a tree's) are laid on the same links (docs/simulation.md says what that leaves out). */
#ifndef DDPSIM_COLL_H
#define DDPSIM_COLL_H

typedef enum { COLL_ALLREDUCE = 0, COLL_ALLGATHER = 1, COLL_REDUCESCATTER = 2, COLL_BROADCAST = 3, COLL_NKINDS } coll_kind;

typedef struct {
  const char *name;  /* "allreduce", as NCCL_ALGO-style names and the plan printout spell it */
  int ring_k;        /* ring: nsteps = ring_k (n - 1) + ring_c, nInterSteps = ring_k (nodes - 1) + ring_c */
  int ring_c;        /* 1 for broadcast (NCCL: nsteps = nRanks, nInterSteps = nNodes), else 0 */
} coll_desc;

/* The row of a collective; NULL for a kind outside the table. */
const coll_desc *coll_get(coll_kind k);

/* The kind named `name` (case-insensitive), or -1. */
int coll_by_name(const char *name);

/* nccl-tests' bus bandwidth factor, busbw = algbw x factor (doc/PERFORMANCE.md): the bytes every
 * ring edge carries per byte of the collective, nsteps / n: 2(n-1)/n for all-reduce, (n-1)/n for
 * all-gather and reduce-scatter, 1 for broadcast; 0 for n <= 1. */
double coll_bus_factor(coll_kind k, long n);

/* A collective of `bytes` taking `secs` over n ranks as nccl-tests reports one (doc/PERFORMANCE.md):
 * algbw = bytes / time, busbw = algbw x coll_bus_factor, in GB/s = 1e9 B/s; both 0 when none ran
 * (one rank, no time). */
void coll_nccl_tests_bw(coll_kind k, double bytes, double secs, long n, double *alg_GBps, double *bus_GBps);

/* Ring steps of a collective over n ranks (0 for n <= 1), and how many cross nodes. */
long coll_ring_steps(coll_kind k, long n);
long coll_ring_inter_steps(coll_kind k, long nodes);

#endif
