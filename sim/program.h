/* program: what one rank does in one iteration, as streams of instructions with explicit waits
 * between them (events): the form in which a framework's builder hands its plan to the engine
 * (sim/engine.h plays it with events, sim/maxplus.h evaluates it in closed form; both record the
 * same things). DDP's builder is sim/plan.c (`plan_program`); docs/simulation.md, "Stream programs".
 *
 * Streams. A rank has one compute stream (with the host thread that feeds it: the host's pipeline
 * is evaluated in closed form by the builder, sim/pipe.h, and enters the program as durations) and
 * any number of NCCL streams, each playing its instructions in order. A stream runs its list once
 * per iteration; instructions marked `sync` run only in iterations that synchronise (under
 * no_sync(), DDP's last iteration of each cycle).
 *
 * Durations. An instruction's duration is either a constant (`dur_s`, the same for every rank and
 * iteration) or a slot (`dur` >= 0) of the rank's values for the iteration, which the builder
 * computes per rank and iteration (`plan_values`: jitter and host noise enter there); the stats
 * slots below say where the values that the readout and the trace need are.
 *
 * Events. RECORD e on one stream marks event e done for this iteration (at the stream's clock);
 * WAIT e on another blocks until it is, then for the slot `lag` (the host launching what follows
 * after the event: DDP's hook, then the launch). Every event has one recording stream and at most
 * one waiting stream (prog_finish). A COLL instruction is a collective that every rank's stream of
 * the same index runs together (the plan's `coll[c]`), one after another in program order.
 *
 * What is recorded (sim/engine.h's record): for rank 0 and the last iteration, the clock at the end
 * of every instruction of every stream (`at`, indexed by prog_at_index); per iteration the stats
 * slots' values as played. The readout reads only that record. */
#ifndef DDPSIM_PROGRAM_H
#define DDPSIM_PROGRAM_H

#include <stdio.h>

#include "err.h"
#include "timeline.h"

typedef enum {
  PROG_STREAM_COMPUTE, /* the compute stream and its host */
  PROG_STREAM_NCCL,    /* an NCCL stream: collectives in order */
} prog_stream_kind;

typedef enum {
  PROG_BEGIN,   /* compute: the iteration starts (the rank's values are computed) */
  PROG_INPUT,   /* compute: takes the iteration's batch (loading, the host-to-device copy) */
  PROG_SLEEP,   /* the stream is busy for the duration, not holding the cores */
  PROG_COMPUTE, /* the stream computes for the duration's work (holding the cores where collectives
                   share them; where it shares the GPU, at a reduced rate while a collective of the
                   rank runs: 1 - ((1 - mem) x sm_frac + mem x hbm_frac), at least PROG_MIN_RATE) */
  PROG_MARK,    /* compute: the start of forward, which the tail and the host's track count from */
  PROG_RECORD,  /* marks event `ev` done */
  PROG_WAIT,    /* waits for event `ev`, then for slot `lag` after it (when lag >= 0) */
  PROG_TAKE_CORES, /* takes the cores compute and collectives share (sim_link shares_compute) */
  PROG_GIVE_CORES,
  PROG_COLL,    /* collective `coll` with every rank */
  PROG_TAIL,    /* compute: after the last wait, in synchronising iterations the duration's copy
                   back (at most the tail), then the rest until max(wait's end + slot a, mark +
                   slot b) */
} prog_op;

typedef struct {
  prog_op op;
  int sync;       /* only in synchronising iterations */
  int span;       /* the timeline_kind of the span it records, or -1: none (SLEEP, COMPUTE: when it
                     lasted; WAIT: when it waited; RECORD: an instant; COLL: always) */
  int index;      /* the span's index (segment, bucket), or -1 */
  int ev;         /* RECORD, WAIT */
  int coll;       /* COLL: the collective's index in the plan (each runs once per iteration) */
  int dur;        /* the duration's slot, or -1: dur_s */
  double dur_s;
  int lag;        /* WAIT: the slot of the launch lag after the event, or -1 */
  int a, b;       /* TAIL: slots */
  int shares;     /* COMPUTE: slowed while a collective of the rank runs (the GPU's SMs and memory
                     bandwidth shared with NCCL's kernels: plan_coll's sm_frac and hbm_frac) */
  double mem;     /* COMPUTE: the share of its time that is memory-bound (0 to 1; the rest is
                     bound by the SMs' arithmetic) */
} prog_instr;

typedef struct {
  prog_stream_kind kind;
  int track;      /* the timeline_track its spans go to; -1 (prog_stream_add's): by its kind */
  prog_instr *ins;
  int n, cap;
} prog_stream;

/* The slots every builder fills besides its durations: what the readout and the trace need. */
typedef enum {
  PROG_STAT_FWD,       /* the compute stream's forward (seconds after the mark) */
  PROG_STAT_BWD,       /* backward's compute, bucket copies excluded */
  PROG_STAT_COPY_IN,   /* DDP's copies into buckets within backward */
  PROG_STAT_COPY_EARLY, /* DDP's copies back played bucket by bucket before the tail (copy_per_bucket) */
  PROG_STAT_REACH,     /* when the rank reaches its last wait, seconds after its mark (stragglers) */
  PROG_STAT_TAIL_DEV,  /* the tail's GPU time */
  PROG_STAT_HOST_BUSY, /* the iteration's host work */
  PROG_STAT_DEV_BUSY,  /* its GPU work */
  PROG_STAT_STARVED,   /* the stream idle for the host before the last wait */
  PROG_STAT_HOST_FWD,  /* the host's clock at the end of forward, backward and the tail (after the
                          mark; the tail's < 0: the last wait blocks the host) */
  PROG_STAT_HOST_BWD,
  PROG_STAT_HOST_TAIL,
  PROG_NSTATS
} prog_stat;

typedef struct {
  prog_stream *streams; /* [0]: the compute stream */
  int nstreams;
  int nevents;
  int nslots;           /* values per rank and iteration: PROG_NSTATS first, then the builder's */
  int ncoll;            /* collectives named by COLL */
  int shares_gpu;       /* some COMPUTE shares the GPU with collectives (prog_finish sets it) */
} prog_t;

/* An empty program of `nslots` values (>= PROG_NSTATS) with a compute stream. ERR_NOMEM. */
int prog_init(prog_t *p, int nslots, err_t *e);
void prog_free(prog_t *p); /* NULL is a no-op */

/* Adds a stream of `kind`; its index, or -1 when out of memory. */
int prog_stream_add(prog_t *p, prog_stream_kind kind);

/* Appends an instruction to stream s (copied); -1 when out of memory. prog_finish completes the
 * program once every instruction is in. */
int prog_emit(prog_t *p, int s, const prog_instr *in);

/* Counts the program's events and collectives, and checks what the engine relies on: events recorded once and waited for at most once, by another
 * stream; slots within nslots; COLL only on NCCL streams, each collective on one stream; BEGIN
 * first and TAIL last on the compute stream. ERR_INPUT naming the instruction ("internal"). */
int prog_finish(prog_t *p, err_t *e);

/* Writes the program, one instruction per line (`ddpsim plan`). ERR_IO if writing fails. */
int prog_write(FILE *f, const prog_t *p, err_t *e);

/* The record's index of instruction i of stream s (`at` has prog_at_count entries). */
long prog_at_index(const prog_t *p, int s, int i);
long prog_at_count(const prog_t *p);

/* The least rate work sharing the GPU keeps, whatever the collectives beside it take. */
#define PROG_MIN_RATE 0.05

/* The rate of COMPUTE `in` beside collectives taking sm of the SMs and hbm of the memory bandwidth. */
static inline double prog_rate(const prog_instr *in, double sm, double hbm) {
  double r = 1 - ((1 - in->mem) * sm + in->mem * hbm);
  return r > PROG_MIN_RATE ? r : PROG_MIN_RATE;
}

/* The duration of an instruction for a rank whose values are `val`. */
static inline double prog_dur(const prog_instr *in, const double *val) { return in->dur >= 0 ? val[in->dur] : in->dur_s; }

#endif
