/* readout: the engine's record of a plan turned into the typed results users read (sim_result).
 *
 * The steady-state iteration is the mean over no_sync cycles 2..C (every iteration starts where the
 * previous ended; with one cycle, that cycle); loading and copy waits are averaged over the same
 * iterations; exposed communication is what the iteration holds beyond compute, loading and copying
 * (never below zero by rounding: a tiny negative from summing is reported as 0); bucket times are
 * the last iteration's, relative to its start, on rank 0. The plan's totals (compute phases,
 * buckets, channels, jitter) are copied. docs/simulation.md. */
#ifndef DDPSIM_READOUT_H
#define DDPSIM_READOUT_H

#include "engine.h"
#include "plan.h"
#include "sim.h"

/* Fills *r from plan p and record rec. Moves p's bucket plan into r (p->buckets is left empty).
 * ERR_NOMEM; ERR_SIM when the record does not fit the plan. On failure r holds nothing to free. */
int readout_ddp(plan_t *p, const engine_record *rec, sim_result *r, err_t *e);

#endif
