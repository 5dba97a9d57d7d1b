/* maxplus: the engine's closed form (sim/engine.h calls it). A pair (src -> successor) whose links
 * carry no other pair's flows runs its flows at one rate from start to end, whatever the others do:
 * they start when both ranks have posted, and each takes edge bytes x flows / narrowest link.
 * Pairs that share links (platform_net's groups: a switched node's GPU links, which carry a GPU's
 * flows to its successors on different channels; NICs merged into one link) are played together,
 * per group, as SimGrid's network model shares links: max-min fair rates, constant between one
 * pair's start or end and the next, each pair's flows starting when both its ranks have posted. The
 * closed form applies where every group leaves from one node (platform_net.one_node), so that a
 * group is at most a node's pairs; a link shared by pairs of many nodes (a switch's backbone) is
 * left to the events. The plan's stream program (sim/program.h) is then max-plus
 * algebra over ranks: every rank's streams run as far as their events allow (a WAIT ends at the
 * latest of the stream, the event, and the event plus the launch lag), and a collective, once every
 * rank posted it, ends for all at the latest pair's end plus NCCL's latency term (the engine's
 * barrier). Work sharing the GPU with collectives runs piecewise at the rate
 * the collectives beside it leave, once every collective that may start before it ends is resolved.
 * Each rank's durations are its values (plan_values): jitter and host noise enter there; no event
 * is simulated, nothing is forked. It records what the engine records. docs/simulation.md, "Closed
 * form".
 *
 * It applies to flow fidelity without spans (traces need the actors), without DataLoader workers'
 * loading (load_s > 0), where collectives do not share the compute cores and links carry no
 * latency (the plan's), whatever the ranks simulated: every rank, the 2 nodes that stand for all by
 * symmetry, one node, one GPU; elsewhere the engine plays events (sim_config.events forces them). tests/sim/test_full_golden.sh checks it against the events and the engine before it. */
#ifndef DDPSIM_MAXPLUS_H
#define DDPSIM_MAXPLUS_H

#include "err.h"
#include "plan.h"
#include "record.h"

/* Whether the plan's kind allows the closed form (the network's check comes in maxplus_run). */
int maxplus_applies(const plan_t *p);

/* Evaluates p into *rec as engine_run would (free with record_free); *done = 0 (and rec
 * untouched) when pairs of several nodes share a link, so the events must be played.
 * peak_rss_kb is this process's. ERR_NOMEM, platform_check's errors. */
int maxplus_run(const plan_t *p, record_t *rec, int *done, err_t *e);

#endif
