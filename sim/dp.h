/* dp: PyTorch's DataParallel on one node, planned on its own (docs/simulation.md).
 *
 * One process, one Python thread per GPU. Every iteration scatters the inputs, replicates the
 * parameters from GPU 0, runs the replicas' forward with their host work taking turns under the
 * GIL, gathers the outputs to GPU 0 (and scatters their gradients back), runs backward (C++
 * threads, no GIL unless dp_backward_gil), reduces the gradients to GPU 0, and steps the optimizer
 * there. The replicas are alike, so one GPU's host and stream (sim/pipe.h) stand for all, computed
 * here in closed form; the phases follow each other on the stream, each reported as its span. */
#ifndef DDPSIM_DP_H
#define DDPSIM_DP_H

#include <stdio.h>

#include "err.h"
#include "scenario.h"

typedef struct {
  int gpus;
  long batch;
  model_dtype precision;
  double forward_s, backward_s, optimizer_s;             /* with the GIL's turns */
  double scatter_s, replicate_s, gather_s, reduce_s;     /* per iteration */
  double loading_s;                                      /* exposed loading per iteration */
  double ring_bw_Bps, hop_s;                             /* the node's channels together, one hop */
  int channels, nics_used, channels_exhausted;
  double channel_bw_Bps;
  int extrapolated_ops;
  sim_h2d h2d;
  int backward_gil;
  int nops;
  double *op_s;                                          /* (nops) each model op's time in its phase */
  double host_busy_s, host_bound_s;                      /* GPU 0's host thread; its stream idle for it */
} dp_plan;

/* Validates the config for DataParallel (no buckets, no_sync, hooks, fidelities, jitter or
 * prefetch; one node; an `output` line in the model with more than one GPU) and builds its plan.
 * ERR_INPUT with a message. */
int dp_plan_build(const sim_config *c, dp_plan *p, err_t *e);

/* The iteration as a result: every phase summed. */
void dp_readout(const dp_plan *p, sim_result *r);

/* DataParallel's iteration as a timeline (sim/timeline.h): the phases of dp_readout laid end to end
 * on every GPU in the order they run, every span derived (nothing is simulated), forward (and under
 * dp_backward_gil backward) also on the GIL's track. m: the model planned. *out is new (the caller
 * frees it with timeline_free); ERR_NOMEM. */
int dp_timeline(const dp_plan *p, const model_t *m, sim_timeline **out, err_t *e);

void dp_plan_free(dp_plan *p); /* frees the contents; NULL is a no-op */

/* The host time per op run of one of `threads` Python threads taking turns under the GIL: host_s of
 * which gil_s is held under the lock, its acquisitions (one per framework op) handing the lock over
 * at handover_s in all while others wait.
 * Round-robin among identical threads: max(host_s, threads x (gil_s + handover_s)); host_s for one
 * thread or nothing under the lock (docs/simulation.md, "DataParallel"). */
double dp_gil_period(double host_s, double gil_s, int threads, double handover_s);

/* Writes the plan as text; ERR_IO if writing fails. */
int dp_plan_write(FILE *f, const dp_plan *p, err_t *e);

#endif
