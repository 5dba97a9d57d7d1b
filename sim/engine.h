/* engine: plays a plan's stream program (sim/plan.h, sim/program.h) and records what happened.
 *
 * Where the closed form applies (sim/maxplus.h) the program is evaluated in this process. Else its
 * events are played on SimGrid (sim/events.h: one actor per stream and rank, flows or messages per
 * channel) in a forked child: SimGrid's engine lives once per process. The events engine is a module
 * (ddpsim-events.so, with SimGrid and ns-3) loaded the first time a plan needs it, before the fork,
 * so a program that plays no events never loads SimGrid. The child sends its record back through a
 * pipe with the record's one serializer (sim/record.h: every field named and sized), and the parent
 * checks it. The child builds the platform through SimGrid's API (sim/platform.h: no file, no XML),
 * and it dies with its parent (PR_SET_PDEATHSIG): an interrupted ddpsim leaves neither behind.
 * Links carry no latency in either fidelity.
 *
 * Where the plan asks (record_spans), every actor also records its activities as spans
 * (sim/timeline.h): start and end on the simulated clock, for every simulated rank. */
#ifndef DDPSIM_ENGINE_H
#define DDPSIM_ENGINE_H

#include <stddef.h>

#include "err.h"
#include "plan.h"
#include "record.h"

/* Fills *rec (free with record_free) from p: in closed form where it applies (sim/maxplus.h) and
 * p->events is 0, else from its events in a child process, with the same record. ERR_INPUT for a
 * platform spec platform_check refuses, ERR_IO when the pipe cannot be made, ERR_SIM when the
 * events module cannot be loaded (the message says why), the engine died, failed, could not build
 * its platform, or an actor did not finish (a deadlock: the message says how many did), ERR_NOMEM. */
int engine_run(const plan_t *p, record_t *rec, err_t *e);

/* The events module's path (into buf, or a constant): beside an installed program,
 * <its directory>/DDPSIM_REL_EVENTS_MODULE, where that file exists; else the build tree's. */
const char *engine_events_path(char *buf, size_t len);

#endif
