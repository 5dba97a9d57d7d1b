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
 * back through a pipe with the one serializer below (every field named and sized), and the parent
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
#include "timeline.h"

/* What the engine saw: rank 0's clock at each event, absolute simulated seconds. */
typedef struct {
  int iterations;      /* K: the plan's */
  int nb;              /* the plan's buckets */
  double *iter_start, *iter_end; /* (K) */
  long nat;            /* the program's instructions, all streams (prog_at_count) */
  double *at;          /* (nat) rank 0, last iteration: each instruction's end (sim/program.h) */
  /* (K) rank 0's compute as played: forward, backward (bucket copies excluded), the copies into
   * buckets, the copy back; when it reached its last wait, after its forward began (reach0), and
   * the latest any rank did in a synchronising iteration (reach_max; 0 otherwise). */
  double *fwd, *bwd, *copy_in, *copy_back, *reach0, *reach_max;
  double *slowed;      /* (K) rank 0: what its compute lost to collectives sharing the GPU */
  double *load_wait, *copy_wait; /* (K) what the training loop waited for its input */
  double *tail_span;   /* (K) rank 0: from the end of the final wait to the end of the iteration */
  int ranks;           /* the plan's simulated ranks */
  /* (ranks) each rank's host and compute stream, summed over the steady iterations (sim/pipe.h):
   * the host issuing; the stream running ops; the stream idle waiting for the host (host-bound);
   * the host waiting for its GPU (device-bound: a full launch queue or the end-of-iteration sync,
   * exposed communication included). */
  double *host_busy, *device_busy, *host_bound, *device_bound;
  long messages;       /* network messages simulated */
  int finished;        /* actors that finished their work */
  int expected;        /* actors started */
  long peak_rss_kb;    /* the child's largest resident set (closed form: this process's) */
  int closed_form;     /* 1: evaluated in closed form (sim/maxplus.h), no event played */
  timeline_span *spans; /* (nspans) every simulated rank's spans, every iteration, when
                          plan_t.record_spans asked for them (sim/timeline.h); else NULL, 0 */
  long nspans;
} engine_record;

/* Runs p in a child process and fills *rec (free with engine_record_free); where the closed form
 * applies (sim/maxplus.h: full simulations, no link shared by pairs of several nodes) and p->events is
 * 0, evaluates it in this process instead, with the same record. ERR_INPUT for a platform spec
 * platform_check refuses, ERR_IO when the pipe cannot be made, ERR_SIM when the engine died,
 * failed, could not build its platform, or an actor did not finish (a deadlock: the message says
 * how many did), ERR_NOMEM. */
int engine_run(const plan_t *p, engine_record *rec, err_t *e);

void engine_record_free(engine_record *rec); /* frees the contents; NULL is a no-op */

/* What PROG_TAIL records of rank r's iteration `it` (sync: it synchronised), the engine's and the
 * closed form's alike: rank 0's per-iteration figures, the latest reach, and in the steady
 * iterations the rank's host and device totals. stats: the rank's PROG_NSTATS values; t0 the
 * forward's start, d0 the end of the last wait, end the tail's end as computed, done the iteration's
 * end as played, cb the copy back played. */
void engine_record_tail(const plan_t *p, engine_record *rec, int r, int it, int sync, const double *stats, double t0, double d0,
                        double end, double done, double cb);

/* Allocates rec's arrays for K iterations, nb buckets, `ranks` ranks and nat instructions, zeroed (-1: out of memory;
 * free with engine_record_free). For the closed form (sim/maxplus.h), which fills a record too. */
int engine_record_alloc(engine_record *rec, int K, int nb, int ranks, long nat);

#endif
