/* readout: the engine's record of a plan turned into the typed results users read (sim_result).
 *
 * The steady-state iteration is the mean over no_sync cycles 2..C (every iteration starts where the
 * previous ended; with one cycle, that cycle); loading and copy waits are averaged over the same
 * iterations; compute is rank 0's as played (each phase times its jitter draw, averaged over the
 * same iterations); what the iteration holds beyond compute, loading and copying is split into
 * waiting for stragglers (the slowest GPU's extra compute up to the final wait, as far as there was
 * waiting) and exposed communication (the rest). Parts within rounding of 0 (1e-9 of the
 * iteration) are 0; a part below that is ERR_SIM, never reported. Bucket times are the last
 * iteration's, relative to its start, on rank 0 (buckets_iteration_s is its length). The plan's totals (compute phases,
 * buckets, channels, jitter) are copied. docs/simulation.md. */
#ifndef DDPSIM_READOUT_H
#define DDPSIM_READOUT_H

#include "engine.h"
#include "plan.h"
#include "scenario.h"

/* Fills *r from plan p and record rec. Moves p's bucket plan into r (p->buckets is left empty), and
 * where the plan recorded spans, rec's spans into r->timeline with the plan's per-op costs.
 * ERR_NOMEM; ERR_SIM when the record does not fit the plan. On failure r holds nothing to free. */
int readout_ddp(plan_t *p, record_t *rec, sim_result *r, err_t *e);

/* The engine's spans with the plan's costs that name and divide them (sim/timeline.h: op_s, op_seg,
 * seg_s, seg_copy_s, ready_seg): the spans move from rec into a new r->timeline. Every builder's
 * readout that records spans calls it (readout_ddp, sim/dp.h). ERR_NOMEM (r->timeline untouched). */
int readout_timeline(const plan_t *p, record_t *rec, sim_result *r, err_t *e);

#endif
