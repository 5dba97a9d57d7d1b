/* ncclsweep: the measurement behind `ddpcalib comm --backend nccl --nccl-tuning`: the all-reduce
 * sweep once per NCCL algorithm x protocol, each on communicators of its own, then comm.nccl fitted
 * from them (nccltune.h) against ring/Simple's link. docs/calib.md, "NCCL's algorithms and
 * protocols". Built only with CUDA; the caller initialises and finalises MPI. Never prints: what
 * happens is reported through hooks, called on MPI rank 0 only. */
#ifndef DDPCALIB_NCCLSWEEP_H
#define DDPCALIB_NCCLSWEEP_H

#include <stddef.h>

#include "commbench.h"
#include "commfit.h"
#include "err.h"
#include "fit.h"
#include "ncclmodel.h"
#include "nccltune.h"

/* Each may be NULL; all get arg. */
typedef struct {
  void (*refused)(int algo, int proto, const char *why, void *arg); /* NCCL refused it: disabled */
  /* Once, when ring/Simple's communicators are open: the backend and the link class written. */
  void (*opened)(const commbench_backend *b, const char *link_class, void *arg);
  void (*start)(int algo, int proto, void *arg);                   /* before a combination's sweep */
  void (*row)(const commbench_row *row, void *arg);                /* each size of it */
  void (*done)(int algo, int proto, const commbench_result *res, void *arg); /* after it */
  void *arg;
} ncclsweep_hooks;

typedef struct {
  commbench_result res[NCCL_NALGO][NCCL_NPROTO]; /* each swept combination's sweep */
  int refused[NCCL_NALGO][NCCL_NPROTO];          /* 1: NCCL refused it, disabled */
  commbench_backend info;                        /* ring/Simple's description (ctx NULL: closed) */
  commfit_span span;                             /* commfit_span_of(topology) for this run */
  const char *link_class;                        /* the class written (commfit_link_class) */
} ncclsweep_result;

/* Sweeps every combination, ring/Simple first: NCCL_ALGO and NCCL_PROTO set (the user's restored
 * at the end), communicators opened, a one-float probe, the sweep, communicators closed. A runtime
 * error at the open or the probe on any process is NCCL refusing the combination (the processes
 * agree over MPI): it is marked refused, not a failure. Failures: ring/Simple refused, no device
 * (ERR_NODEV), any other process failing to open, an error during a sweep, a wrong element
 * (ERR_RUNTIME), commfit's errors for topology and link_class (NULL: the default). Collective over
 * MPI_COMM_WORLD. The caller frees *out with ncclsweep_result_free, also on failure. */
int ncclsweep_run(const commbench_cfg *cfg, int ngpus, const char *topology, const char *link_class,
                  const ncclsweep_hooks *h, ncclsweep_result *out, err_t *e);

void ncclsweep_result_free(ncclsweep_result *r);

/* What is fitted from the sweeps: ring/Simple's link and every enabled combination's comm.nccl. */
typedef struct {
  fit_ring_result ring;    /* ring/Simple, as a plain comm sweep (comm.links.<class>) */
  nccltune_setup setup;    /* ranks, nodes, bw from ring, NCCL's assumed hops */
  nccl_hw intra;           /* the hops inside a host: PCI when the class starts with "pci", else NVLink */
  nccltune_result tune;    /* per combination */
  char hops_source[512];   /* the `source` written with hop_lat_s */
} ncclsweep_fit;

/* Fits r (regimes: at most that many size regimes per fit). Pure. fit_ring's and nccltune_fit's
 * errors; ERR_RUNTIME when the ranks are not the same number per host. */
int ncclsweep_fit_all(const ncclsweep_result *r, size_t regimes, ncclsweep_fit *f, err_t *e);

#endif
