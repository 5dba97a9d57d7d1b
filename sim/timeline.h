/* timeline: what every simulated rank did, span by span, and what a reader needs to name the spans.
 *
 * The engine (sim/engine.h) records one span per activity it plays when the plan asks for it
 * (plan_t.record_spans, from sim_config.record_spans): the training loop's phases on the compute
 * stream, each bucket's collective (and its hook work) on the NCCL stream, DataLoader workers'
 * loads, the prefetcher's host-to-device copies, and each bucket's ready instant; DataParallel's
 * (sim/dp.h) phases on each GPU and the GIL's turns on GPU 0's GIL track. Times are the simulation's
 * own clock, absolute seconds.
 *
 * What the engine plays as one activity (forward, a backward segment: the ops up to a
 * gradient-ready event and DDP's copies of those gradients into their buckets) is one span here;
 * the per-op costs the plan summed into it travel beside the spans (op_s, op_seg, seg_s,
 * seg_copy_s) so that a reader (sim/trace.h) can divide it, and must say it divided it.
 *
 * The readout (sim/readout.h) hands the timeline to sim_result.timeline; sim_result_free frees it. */
#ifndef DDPSIM_TIMELINE_H
#define DDPSIM_TIMELINE_H

#include <stdint.h>

/* Where a span runs: a rank's tracks. */
typedef enum {
  TIMELINE_TRACK_COMPUTE = 0, /* the compute stream (the training loop's thread) */
  TIMELINE_TRACK_COMM,        /* the NCCL stream */
  TIMELINE_TRACK_COPY,        /* a side stream for host-to-device copies (prefetch) */
  TIMELINE_TRACK_LOADER,      /* DataLoader worker `index` */
  TIMELINE_TRACK_GIL,         /* DataParallel: Python's GIL in the one process */
  TIMELINE_TRACK_HOST,        /* the host thread issuing the compute stream's ops (sim/pipe.h) */
  TIMELINE_TRACK_COMM2,       /* a second NCCL stream (FSDP's reduce-scatters) */
  TIMELINE_TRACK_COMM3,       /* a third (HSDP's all-reduces) */
  TIMELINE_TRACK_COUNT
} timeline_track;

/* What a span is. `index` says which: an iteration, a backward segment, a bucket, a worker. */
typedef enum {
  TIMELINE_ITERATION = 0, /* compute: iteration `iter` of the training loop */
  TIMELINE_INPUT_WAIT,    /* compute: waiting for a loaded batch (or for the prefetched copy) */
  TIMELINE_H2D,           /* compute or copy: the batch's host-to-device copy */
  TIMELINE_BROADCAST,     /* compute: DDP's broadcast of the module's buffers */
  TIMELINE_FORWARD,       /* compute: every forward op, one activity */
  TIMELINE_SEGMENT,       /* compute: backward segment `index`, its ops and bucket copies */
  TIMELINE_FINAL_WAIT,    /* compute: DDP's wait for every bucket's collective */
  TIMELINE_COPY_BACK,     /* compute: the reduced buckets copied back into the gradients */
  TIMELINE_OPTIMIZER,     /* compute: every optimizer op */
  TIMELINE_HOOK_PRE,      /* comm: the compression hook's cast of bucket `index` */
  TIMELINE_COLLECTIVE,    /* comm: bucket `index`'s collective */
  TIMELINE_HOOK_POST,     /* comm: the cast back */
  TIMELINE_LOAD,          /* loader: worker `index` loading the batch of iteration `iter` */
  TIMELINE_READY,         /* compute, an instant: bucket `index` has all its gradients */
  TIMELINE_DP_SCATTER,    /* DataParallel, compute: this GPU's chunk of the inputs copied to it */
  TIMELINE_DP_REPLICATE,  /* the parameters broadcast from GPU 0 */
  TIMELINE_DP_GATHER,     /* the outputs gathered to GPU 0 and their gradients scattered back */
  TIMELINE_DP_BACKWARD,   /* every backward op */
  TIMELINE_DP_REDUCE,     /* the gradients reduced to GPU 0 */
  TIMELINE_GIL_HELD,      /* GIL: the replicas' threads take turns launching kernels */
  TIMELINE_BACKWARD_REST, /* compute: backward after the last gradient-ready event (ops that end no
                             segment, and the stream waiting for the host to issue them) */
  TIMELINE_HOST_FORWARD,  /* host: issuing forward's ops (its clock from the plan's pipeline) */
  TIMELINE_HOST_BACKWARD, /* host: issuing backward's ops, DDP's hooks and NCCL's launches */
  TIMELINE_HOST_TAIL,     /* host: issuing the copy back and the optimizer's ops */
  TIMELINE_HOST_SYNC,     /* host: blocked until the GPU catches up (the loop's loss.item()) */
  TIMELINE_FSDP_OPS,      /* compute: FSDP's piece `index` of forward or backward (a unit's ops, or the
                             root's between units): the ops with op_seg == index, named pieces[index] */
  TIMELINE_FSDP_COPY,     /* compute: FSDP's copy of unit `index`'s parameters out of an all-gather, or
                             of its gradients into a reduce-scatter */
  TIMELINE_FSDP_WAIT,     /* compute: waiting for FSDP's collective `index` */
  TIMELINE_FSDP_COLL,     /* comm: FSDP's collective `index` (colls[index]) */
  TIMELINE_KIND_COUNT
} timeline_kind;

typedef struct {
  int32_t rank;          /* the simulated rank (DataParallel: the GPU) */
  int32_t track;         /* timeline_track */
  int32_t kind;          /* timeline_kind */
  int32_t index;         /* bucket, segment or worker; -1 where none */
  int32_t iter;          /* the training iteration it belongs to */
  int32_t derived;       /* 1: laid out from the plan, not played by the engine */
  double start_s, end_s; /* simulated clock; equal for an instant */
} timeline_span;

/* One of FSDP's collectives as a trace names it. */
typedef struct {
  char name[96];         /* "all-gather transformer.h.0 (forward)" */
  int kind;              /* coll_kind */
  int dtype;             /* model_dtype it moves */
  double bytes;          /* S as sim/coll.h defines it */
  int algo, proto;       /* NCCL's choice */
} timeline_coll;

typedef struct {
  timeline_span *spans; /* (n) in the order they were recorded */
  long n, cap;
  /* The job, and what of it was simulated: ranks 0 .. sim_ranks-1 (nodes 0 .. sim_nodes-1). */
  int ranks, gpus_per_node, sim_nodes, sim_ranks;
  int iterations, no_sync; /* an iteration it all-reduced iff ranks > 1 && it % no_sync == no_sync - 1 */
  int steady_from;         /* the first iteration of the steady state the report averages (sim/readout.c) */
  int dataparallel;        /* 1: DataParallel's (sim/dp.h): one process, each GPU a thread of it */
  /* The plan's costs, to divide what was played as one activity. */
  int nops;
  double *op_s;            /* (nops) each model op's planned time (the model's order) */
  int *op_seg;             /* (nops) its backward segment; -1 forward, -2 optimizer */
  int nseg;
  double *seg_s, *seg_copy_s; /* (nseg) a segment's ops, and DDP's copies into buckets after it */
  int nb;
  int *ready_seg;          /* (nb) the segment after which each bucket is ready */
  /* FSDP (sim/fsdp.h): its pieces' names ("forward: transformer.h.0") and its collectives. */
  int npieces;
  char (*pieces)[96];
  int ncolls;
  timeline_coll *colls;
} sim_timeline;

/* Appends s; 0, or -1 when out of memory (nothing appended). */
int timeline_add(sim_timeline *t, const timeline_span *s);

/* A new empty timeline (calloc'd), or NULL when out of memory. */
sim_timeline *timeline_new(void);

/* Copies n doubles or ints into a new array of at least one element; NULL when out of memory. */
double *timeline_dup_d(const double *src, int n);
int *timeline_dup_i(const int *src, int n);

/* Frees the timeline and everything it owns; NULL is a no-op. */
void timeline_free(sim_timeline *t);

/* The model's ops of one phase (op_seg == seg: a backward segment, -1 forward, -2 optimizer) laid
 * inside a span [a_s, b_s] that the engine played as one activity, in proportion to their planned
 * costs, followed by DDP's copies into buckets where extra_s > 0: fn(user, op, start_s, end_s) for
 * each op in the model's order, then fn(user, -1, ...) for the copies. The pieces tile [a_s, b_s]
 * exactly. Nothing is called when the phase has no cost. This is the one division every trace
 * format shows (sim/trace.c, sim/kineto.c), and every piece it makes is derived. */
void timeline_divide(const sim_timeline *t, int seg, double extra_s, double a_s, double b_s,
                     void (*fn)(void *user, int op, double start_s, double end_s), void *user);

/* A short name of a span kind ("forward", "all-reduce", ...); "?" for a value out of range. */
const char *timeline_kind_name(int kind);

#endif
