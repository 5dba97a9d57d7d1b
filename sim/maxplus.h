/* maxplus: the engine's closed form (sim/engine.h calls it). Where no link is shared between ranks
 * whose collectives may start at different times, every flow of a collective runs at one rate from
 * start to end, whatever the others do: the flows of the pair (src -> successor) share only their
 * own route (platform_pairs' exclusive), all start when both ranks have posted, and each takes
 * edge bytes x flows / narrowest link. The plan's stream program (sim/program.h) is then max-plus
 * algebra over ranks: every rank's streams run as far as their events allow (a WAIT ends at the
 * latest of the stream, the event, and the event plus the launch lag), and a collective, once every
 * rank posted it, ends for all at the latest (both ends posted + the pair's time) plus NCCL's
 * latency (the engine's barrier). Work sharing the GPU with collectives runs piecewise at the rate
 * the collectives beside it leave, once every collective that may start before it ends is resolved.
 * Each rank's durations are its values (plan_values): jitter and host noise enter there; no event
 * is simulated, nothing is forked. It records what the engine records. docs/simulation.md, "Closed
 * form".
 *
 * It applies to flow fidelity without spans (traces need the actors), without DataLoader workers'
 * loading (load_s > 0), where collectives do not share the compute cores and links carry no
 * latency (the plan's), and to plans that simulate every rank of more than two nodes or vary
 * between ranks (jitter, host noise); elsewhere the engine plays events (sim_config.events forces
 * them). tests/sim/test_full_golden.sh checks it against the events and the engine before it. */
#ifndef DDPSIM_MAXPLUS_H
#define DDPSIM_MAXPLUS_H

#include "engine.h"
#include "err.h"
#include "plan.h"

/* Whether the plan's kind allows the closed form (the network's check comes in maxplus_run). */
int maxplus_applies(const plan_t *p);

/* Evaluates p into *rec as engine_run would (free with engine_record_free); *done = 0 (and rec
 * untouched) when the network shares a link between pairs, so the events must be played.
 * peak_rss_kb is this process's. ERR_NOMEM, platform_check's errors. */
int maxplus_run(const plan_t *p, engine_record *rec, int *done, err_t *e);

#endif
