/* trace: a prediction's timeline (sim/timeline.h) as a Chrome trace-event JSON object, for Perfetto
 * (ui.perfetto.dev) and chrome://tracing. docs/trace.md describes what it shows.
 *
 * One process per rank shown (pid = the job's rank), with a thread per stream: the compute stream
 * (tid 1: iterations, input, forward and backward op by op, DDP's bucket copies, the final wait,
 * the optimizer), the NCCL stream (tid 2: one span per bucket's collective, with its bytes,
 * algorithm and protocol), the prefetch copy stream (tid 3) and one thread per DataLoader worker
 * (tid 100 + k). Gradient-ready and bucket-ready instants sit on the compute stream, and a flow
 * arrow ("s" -> "f", category "bucket") goes from each bucket becoming ready to its collective.
 * DataParallel is one process (pid 0) with a thread per GPU (tid 1 + g) and the GIL (tid 1000).
 * Every ts and dur is in microseconds of simulated time from the start of the run.
 *
 * What was simulated and what is derived is said in every span's args ("source"): the engine plays
 * forward and each backward segment as one activity, so the op spans inside them divide the
 * simulated span in proportion to the plan's per-op costs ("derived"), as DDP's bucket copies in
 * a segment; DataParallel's spans are all derived (its phases are summed, not simulated). With
 * symmetry (sim/plan.h) the engine simulates 2 nodes: a rank on node n >= 2 shows the spans of its
 * twin, the rank with the same GPU on node n mod 2, and says so in its process's name and labels
 * and in otherData. Nothing here prints. */
#ifndef DDPSIM_TRACE_H
#define DDPSIM_TRACE_H

#include <cjson/cJSON.h>

#include "err.h"
#include "predict.h"

/* The most ranks one trace shows. */
#define TRACE_MAX_RANKS 4096

/* Builds the trace of p (run with c->record_spans set, so p->sim.timeline is there) showing the
 * job's ranks in ranks[0..nranks-1] (each once, 0 <= rank < the job's GPUs), or with ranks NULL
 * the ranks the engine simulated. On success *out is new (the caller deletes it). ERR_USAGE for a
 * rank outside the job, a rank listed twice or more than TRACE_MAX_RANKS; ERR_INPUT when p has no
 * timeline; ERR_NOMEM. */
int trace_build(const sim_config *c, const predict_result *p, const int *ranks, int nranks, cJSON **out, err_t *e);

/* ERR_USAGE for more than TRACE_MAX_RANKS ranks, one outside the job of t or listed twice. */
int trace_check_ranks(const sim_timeline *t, const int *ranks, int nranks, err_t *e);

/* The simulated rank that job rank `rank` is shown from: itself, or with symmetry its twin, the
 * same GPU on node (node mod the simulated nodes). */
int trace_twin(const sim_timeline *t, int rank);

/* Parses a --ranks value: "all" (every rank of a job of `job_ranks`), "simulated" (*n = -1: the
 * simulated ones), or a comma-separated list of ranks and ranges "0,3,8-15". Writes at most
 * TRACE_MAX_RANKS ranks into out. ERR_USAGE with a message naming the bad item. */
int trace_parse_ranks(const char *text, int job_ranks, int *out, int *n, err_t *e);

/* Adds o[key] = t_s in microseconds (a trace's "ts"), written so that it reads back as the same
 * double: cJSON's own printing keeps 15 digits where they come within an epsilon of the value,
 * which can move a time by one ulp, enough to put a launch after the kernel end it coincides with.
 * 0 when out of memory. */
int trace_json_us(cJSON *o, const char *key, double t_s);
/* Adds o["dur"] for a span from a_s to b_s: b in microseconds less a in microseconds, so that a
 * reader's ts + dur gives the end exactly (the subtraction of two close doubles is exact) and spans
 * meeting at one instant meet in the file too. 0 when out of memory. */
int trace_json_dur(cJSON *o, double a_s, double b_s);

#endif
