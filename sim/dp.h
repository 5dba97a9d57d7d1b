/* dp: PyTorch's DataParallel on one node, as a builder of the stream program (sim/program.h) that
 * the engine plays (docs/simulation.md, "DataParallel").
 *
 * One process, one Python thread per GPU. Every iteration scatters the inputs, replicates the
 * parameters from GPU 0, runs the replicas' forward with their host work taking turns under the
 * GIL, gathers the outputs to GPU 0 (and scatters their gradients back), runs backward (C++
 * threads, no GIL unless dp_backward_gil), reduces the gradients to GPU 0, and steps the optimizer
 * there. The phases follow each other: the one Python thread waits for each.
 *
 * The program. Every GPU is a rank of the plan (one node, G ranks) with a compute stream, a stream
 * for the copies between the GPUs (the replication, the gather and the reduction: each a transfer
 * of every GPU at once over the node's channels, played by the engine as a collective of
 * dp_build's bytes per channel edge and latency; their kind is a label, NCCL's choice is not
 * consulted), and a stream for the GIL's track (GPU 0's: when the replicas' threads take turns).
 * The host's side (the Python threads issuing ops, taking turns under the lock) is evaluated in
 * closed form by the builder, through one GPU's host pipeline (sim/pipe.h), as DDP's host is: the
 * replicas are alike (jitter and host noise are refused), so the turns are a round-robin
 * (dp_gil_period), and each phase enters the program as its span's duration. */
#ifndef DDPSIM_DP_H
#define DDPSIM_DP_H

#include <stdio.h>

#include "engine.h"
#include "err.h"
#include "plan.h"
#include "scenario.h"

/* Validates the config for DataParallel (no buckets, no_sync, hooks, backends, fidelities, jitter,
 * host noise or prefetch; one node; an `output` line in the model with more than one GPU) and
 * builds its plan and program into *p (free with plan_free). ERR_USAGE for a flag DataParallel does
 * not take, ERR_INPUT for the model, ERR_NOMEM. */
int dp_build(const sim_config *c, plan_t *p, err_t *e);

/* Fills *r from the engine's record of dp_build's plan: every phase is rank 0's span in the last
 * iteration (the phases as played: the copies as the engine timed them), the iteration the steady
 * iterations' mean, exposed communication the three copies; where the plan recorded spans, the
 * timeline (sim/readout.h readout_timeline) marked DataParallel's. ERR_NOMEM, ERR_SIM when the
 * record does not fit. On failure r holds nothing to free. */
int dp_readout(const plan_t *p, record_t *rec, sim_result *r, err_t *e);

/* Writes the plan as text: the job, each phase's planned duration, then the program. ERR_IO. */
int dp_write(FILE *f, const plan_t *p, err_t *e);

/* The host time per op run of one of `threads` Python threads taking turns under the GIL: host_s of
 * which gil_s is held under the lock, its acquisitions (one per framework op) handing the lock over
 * at handover_s in all while others wait.
 * Round-robin among identical threads: max(host_s, threads x (gil_s + handover_s)); host_s for one
 * thread or nothing under the lock (docs/simulation.md, "DataParallel"). */
double dp_gil_period(double host_s, double gil_s, int threads, double handover_s);

#endif
