/* commfit: what a comm sweep gives ddpsim: the ring model fitted to its median times, and what one
 * link of the measured ring is (--topology). docs/calib.md, "Fitting the link" and "One link, not
 * the ring". Pure: no MPI, no GPU, never prints. */
#ifndef DDPCALIB_COMMFIT_H
#define DDPCALIB_COMMFIT_H

#include <stddef.h>

#include "commbench.h"
#include "err.h"
#include "fit.h"

/* The sweep's median times as two arrays of res->nrows (bytes, seconds); the caller frees both
 * (both NULL on failure: ERR_NOMEM). */
int commfit_points(const commbench_result *res, double **bytes, double **t, err_t *e);

/* The ring model fitted to the sweep's median times over nranks, in at most `regimes` size regimes
 * (fit_ring with its defaults otherwise). fit_ring's errors. */
int commfit_ring(const commbench_result *res, int nranks, size_t regimes, fit_ring_result *fit, err_t *e);

/* One link of the measured ring: the links NCCL's channels span for this run's ranks per host and
 * hosts (channels_link_units, sim/channels.h), and the link class that is (the topology's intra
 * class on one host, its NIC class across hosts). */
typedef struct {
  double units;   /* >= 1; 1 without a topology */
  char from[320]; /* for the profile's source; "" without a topology */
  char cls[64];   /* the topology's class for this measurement; "" without a topology */
} commfit_span;

/* The span of a ring of nranks on nhosts over `topology` (a file or bundled name; NULL: none, the
 * ring is one link). ERR_RUNTIME when nranks is not a multiple of nhosts; ERR_USAGE ("--topology:
 * ...") when the topology cannot be loaded or laid out. */
int commfit_span_of(const char *topology, int nranks, int nhosts, commfit_span *sp, err_t *e);

/* The link class written: *link_class (the user's, or NULL) must be the span's when it has one
 * (ERR_USAGE otherwise); NULL becomes the span's, else "net" across hosts, "nvlink" for NCCL on one
 * host, "shm" for MPI on one host. *link_class then points at a static string or sp->cls. */
int commfit_link_class(const commfit_span *sp, const char **link_class, int nhosts, int nccl, err_t *e);

#endif
