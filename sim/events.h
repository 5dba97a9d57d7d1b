/* events: the engine's SimGrid side (sim/engine.h), built as a module of its own
 * (ddpsim-events.so) that engine_run loads the first time a plan needs its events: a program that
 * evaluates everything in closed form, or simulates nothing, never loads SimGrid and ns-3
 * (docs/simulation.md, "Start-up"). The module takes the rest of the simulator (the plan's values,
 * the record's serializer, the platform's layout) from the program that loads it.
 *
 * Every simulated rank is a host with one actor per stream of the program (DDP: the compute stream
 * with its host, and the NCCL stream), each playing its instructions every iteration, waiting for
 * events the other streams record; and where the plan says so DataLoader workers and a prefetcher.
 * A collective is, in flow fidelity, one flow per channel edge carrying the plan's edge bytes, a
 * barrier for the slowest edge, then NCCL's latency term; in step fidelity NCCL's latency term,
 * then the plan's steps as messages around each channel (a step's send waits for the previous
 * step's chunk to arrive; at most 8 sends in flight per channel, NCCL_STEPS). docs/simulation.md. */
#ifndef DDPSIM_EVENTS_H
#define DDPSIM_EVENTS_H

#include <sys/types.h>

#include "plan.h"

/* The child's exit statuses besides 0 and the ones of a failed allocation (3) or a record it could
 * not write (5): SimGrid refused the platform; a stream read its rank's values in another iteration
 * than theirs; the parent was gone before the child asked to die with it. */
#define EVENTS_EXIT_PLATFORM 4
#define EVENTS_EXIT_PROGRAM 7
#define EVENTS_EXIT_ORPHAN 6

/* Runs in the forked child: plays plan's events on SimGrid and writes rank 0's record to fd
 * (record_write), then _exit(0); never returns. It dies with its parent `parent`
 * (PR_SET_PDEATHSIG). The name engine_run looks up in the module. */
void events_child(const plan_t *plan, int fd, pid_t parent);
typedef void events_child_fn(const plan_t *plan, int fd, pid_t parent);
#define EVENTS_CHILD_SYMBOL "events_child"

#endif
