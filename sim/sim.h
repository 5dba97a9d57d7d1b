/* sim: one simulated run of a training configuration, from its config to its result.
 *
 * sim_run is three steps, each its own module: a plan says what every rank does (sim/plan.h for
 * DDP and flat mode, sim/dp.h for DataParallel); the engine plays a plan on SimGrid in a child
 * process (sim/engine.h); the readout turns the engine's record into the result (sim/readout.h).
 * The config and the result are sim/scenario.h's. The model and its derivation are in
 * docs/simulation.md; docs/architecture.md says where each kind of change goes. sim_run can be
 * called any number of times from one program. */
#ifndef DDPSIM_SIM_H
#define DDPSIM_SIM_H

#include "err.h"
#include "scenario.h" /* sim_config, sim_result, their enums and defaults */

/* Runs one simulation (plan, engine, readout). Every input is validated before the engine starts:
 * ERR_USAGE for a scenario value out of range (a node count below 1 or a job above PLAN_MAX_GPUS,
 * a batch, a bucket cap, ...), ERR_INPUT for inputs that do not fit (a link class missing from the
 * profile, ...). ERR_SIM if the
 * engine failed or an actor did not finish (a deadlock). On success the caller frees *r with
 * sim_result_free. */
int sim_run(const sim_config *c, sim_result *r, err_t *e);

/* The validation of sim_run alone: builds c's plan (its framework's) and frees it, without the
 * engine: ERR_OK, or the status and message sim_run would give for that config. Cheap beside the
 * run (no actor is played), so a caller can refuse what needs no simulation (memory) first. */
int sim_check(const sim_config *c, err_t *e);

/* The analytic time of one ring all-reduce of `bytes` over n ranks whose slowest hop has latency
 * lat_s and bandwidth bw_Bps: 2(n-1) (lat + bytes / (n bw)). 0 for n == 1. */
double sim_ring_time(int n, double bytes, double lat_s, double bw_Bps);

#endif
