#include "coll.h"

#include <stddef.h>
#include <strings.h>

/* NCCL's tuning.cc: nsteps = 2(n-1) for all-reduce, n-1 for all-gather and reduce-scatter, n for
 * broadcast (nInterSteps = nNodes). */
static const coll_desc table[COLL_NKINDS] = {
    [COLL_ALLREDUCE] = {"allreduce", 2, 0},
    [COLL_ALLGATHER] = {"allgather", 1, 0},
    [COLL_REDUCESCATTER] = {"reducescatter", 1, 0},
    [COLL_BROADCAST] = {"broadcast", 1, 1},
};

const coll_desc *coll_get(coll_kind k) { return (int)k >= 0 && k < COLL_NKINDS ? &table[k] : NULL; }

int coll_by_name(const char *name) {
  for (int k = 0; k < COLL_NKINDS; k++)
    if (strcasecmp(name, table[k].name) == 0) return k;
  return -1;
}

long coll_ring_steps(coll_kind k, long n) { return n > 1 ? table[k].ring_k * (n - 1) + table[k].ring_c : 0; }

long coll_ring_inter_steps(coll_kind k, long nodes) {
  return nodes > 1 ? table[k].ring_k * (nodes - 1) + table[k].ring_c : table[k].ring_c;
}

double coll_bus_factor(coll_kind k, long n) { return n > 1 ? (double)coll_ring_steps(k, n) / (double)n : 0; }

void coll_nccl_tests_bw(coll_kind k, double bytes, double secs, long n, double *alg_GBps, double *bus_GBps) {
  *alg_GBps = secs > 0 && n > 1 ? bytes / secs / 1e9 : 0;
  *bus_GBps = *alg_GBps * coll_bus_factor(k, n);
}
