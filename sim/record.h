/* record: what a run of a plan's stream program saw (rank 0's clock at every instruction, each
 * iteration's compute, every rank's host and device totals, the spans), the one structure that both
 * evaluators fill, the events engine (sim/engine.h) and the closed form (sim/maxplus.h), and that
 * the readout (sim/readout.h) reads. Below both: it knows the plan (sim/plan.h) and the program's
 * tail statistics (sim/program.h), nothing of SimGrid.
 *
 * Its one serializer (record_write, record_read) carries it from the engine's child process back to
 * the parent: a header, then every field by name and length, checked against the plan on reading. */
#ifndef DDPSIM_RECORD_H
#define DDPSIM_RECORD_H

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
   * buckets, the copy back in the tail and bucket by bucket before it (copy_early: DDP's
   * copy_per_bucket, sim/plan.h); when it reached its last wait, after its forward began (reach0),
   * and the latest any rank did in a synchronising iteration (reach_max; 0 otherwise). */
  double *fwd, *bwd, *copy_in, *copy_back, *copy_early, *reach0, *reach_max;
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
} record_t;

/* Allocates rec's arrays for K iterations, nb buckets, `ranks` ranks and nat instructions, zeroed (-1: out of memory;
 * free with record_free). */
int record_alloc(record_t *rec, int K, int nb, int ranks, long nat);

void record_free(record_t *rec); /* frees the contents; NULL is a no-op */

/* What PROG_TAIL records of rank r's iteration `it` (sync: it synchronised), the engine's and the
 * closed form's alike: rank 0's per-iteration figures, the latest reach, and in the steady
 * iterations the rank's host and device totals. stats: the rank's PROG_NSTATS values; t0 the
 * forward's start, d0 the end of the last wait, end the tail's end as computed, done the iteration's
 * end as played, cb the copy back played. */
void record_tail(const plan_t *p, record_t *rec, int r, int it, int sync, const double *stats, double t0, double d0,
                        double end, double done, double cb);

/* Writes rec to the file descriptor fd (the engine's pipe): -1 on a write error. */
int record_write(int fd, const record_t *rec);

/* Reads what record_write wrote for a plan of K iterations, nb buckets, `ranks` simulated ranks and nat
 * instructions into *rec (allocated here; free with record_free). ERR_SIM with what is wrong when
 * the record is missing, cut short or for another plan; ERR_NOMEM. */
int record_read(int fd, record_t *rec, int K, int nb, int ranks, long nat, err_t *e);

#endif
