/* engine: plays a plan's stream program (sim/plan.h, sim/program.h) on SimGrid and records what
 * happened.
 *
 * Every simulated rank is a host with one actor per stream of the program (DDP: the compute stream
 * with its host, and the NCCL stream), each playing its instructions every iteration, waiting for
 * events the other streams record; and where the plan says so DataLoader workers and a prefetcher.
 * A collective is, in flow fidelity, one flow per channel edge carrying the plan's edge bytes, a
 * barrier for the slowest edge, then NCCL's latency term; in step fidelity NCCL's latency term,
 * then the plan's steps as messages around each channel (a step's send waits for the previous
 * step's chunk to arrive; at most 8 sends in flight per channel, NCCL_STEPS). docs/simulation.md.
 *
 * SimGrid's engine lives once per process, so each run forks a child; the child sends its record
 * back through a pipe with the record's one serializer (sim/record.h: every field named and sized), and the parent
 * checks it. The child builds the platform through SimGrid's API (sim/platform.h: no file, no XML),
 * and it dies with its parent (PR_SET_PDEATHSIG): an interrupted ddpsim leaves neither behind. Links carry
 * no latency in either fidelity.
 *
 * Where the plan asks (record_spans), every actor also records its activities as spans
 * (sim/timeline.h): start and end on the simulated clock, for every simulated rank. */
#ifndef DDPSIM_ENGINE_H
#define DDPSIM_ENGINE_H

#include "err.h"
#include "plan.h"
#include "record.h"



/* Runs p in a child process and fills *rec (free with record_free); where the closed form
 * applies (sim/maxplus.h: full simulations, no link shared by pairs of several nodes) and p->events is
 * 0, evaluates it in this process instead, with the same record. ERR_INPUT for a platform spec
 * platform_check refuses, ERR_IO when the pipe cannot be made, ERR_SIM when the engine died,
 * failed, could not build its platform, or an actor did not finish (a deadlock: the message says
 * how many did), ERR_NOMEM. */
int engine_run(const plan_t *p, record_t *rec, err_t *e);




#endif
