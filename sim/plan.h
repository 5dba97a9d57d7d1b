/* plan: what every simulated rank does in one DDP run, built from a sim_config before the engine
 * starts (sim/engine.h runs it; sim/readout.h turns the engine's record into a sim_result).
 *
 * A plan holds the network (NCCL's channels and the platform they become), each rank's compute as
 * forward, backward segments ending in gradient-ready events, and the optimizer step; the buckets
 * with the collective each one runs (sim/coll.h: kind, NCCL's algorithm and protocol, bytes per
 * edge, steps, latency); the input pipeline; the compute jitter; and the totals the readout reports.
 * Everything is computed here, once, for the whole job; the engine only plays it.
 *
 * Symmetry. Where nothing tells the ranks of one node from those of another (no jitter; every node
 * alike, as every topology here is), every node of an N-node job does the same thing at the same
 * time, so the engine simulates 2 nodes whose rings close on each other, with every collective's
 * steps, bytes and latency those of the N-node job and a shared switch backbone scaled to 2/N of its
 * bandwidth. The full and reduced runs solve the same equations (docs/simulation.md);
 * tests/sim/test_engine.c checks them against each other. sim_config.symmetry = 0 turns it off. */
#ifndef DDPSIM_PLAN_H
#define DDPSIM_PLAN_H

#include <stdio.h>

#include "bucket.h"
#include "channels.h"
#include "coll.h"
#include "err.h"
#include "ncclmodel.h"
#include "pipe.h"
#include "platform.h"
#include "program.h"
#include "scenario.h"

/* One phase of a composed collective (a hierarchical all-reduce): a ring collective of its group's
 * ranks (sim/ncclmodel.h's nccl_group), played as the whole collective is, on that group's rings
 * (nch channels: the node's own rings inside a node, the job's count between the nodes). */
typedef struct {
  nccl_group group;
  int nch;
  int solo;           /* its group is one rank (one GPU per node, or one node): only a delay of
                         lat_s, NCCL's estimate of it */
  double lat_s;
  long edge_bytes, steps, step_bytes; /* per channel, as plan_coll's */
} plan_phase;

/* One collective a bucket runs. */
typedef struct {
  coll_kind kind;
  nccl_algo algo;
  nccl_proto proto;
  double bytes;      /* S: what the collective reduces (the bucket, or half under the fp16 hook) */
  double estimate_s; /* NCCL's estimate on an idle network */
  double lat_s;      /* NCCL's latency term: both fidelities wait it once per collective */
  long edge_bytes;   /* flow fidelity: what each edge of each channel carries */
  long steps;        /* step fidelity: messages per edge and channel */
  long step_bytes;   /* each of them */
  /* What its kernels take of each rank's GPU while it runs (docs/simulation.md, "Work sharing the
   * GPU"): the share of the SMs (its thread blocks) and of the memory bandwidth (its traffic). */
  double sm_frac, hbm_frac;
  int nphase;        /* a composed collective's phases (edge_bytes, steps, step_bytes and lat_s above
                        are then the whole's, unused by the engine), or 0 */
  plan_phase phase[NCCL_MAX_PHASES];
} plan_coll;

/* One op of the iteration as the host issues it (sim/pipe.h): one run's host and GPU time. */
typedef struct {
  double host_s, dev_s;
  long count, kernels;
  int phase;          /* model_phase */
  int seg;            /* the backward segment this op ends (its gradients are final), or -1 */
} plan_step;

/* One iteration of one rank on its compute stream, relative to the start of its forward (t0):
 * what plan_timeline computes and the engine plays. */
typedef struct {
  double fwd_end;        /* the stream at the end of forward */
  double *seg_end;       /* (nseg) the stream when segment s (and its bucket copy) is done */
  double *lag;           /* (nb) how long after its ready event bucket b's collective is launched by
                            the host (0 when the host was ahead) */
  double bwd_end;        /* the stream at the end of backward */
  double copy_in_s;      /* of which DDP's copies into buckets (GPU time) */
  /* After backward the stream waits for the all-reduces (an event: the host does not wait); with
   * D0 the stream's time then, the iteration's compute ends at max(D0 + tail_a, t0 + tail_b). */
  double tail_a, tail_b;
  double tail_dev_s;     /* the tail's GPU time (copy back, optimizer) */
  double host_busy_s, dev_busy_s; /* the iteration's host work (launches, hooks, host jitter) and GPU work */
  double starved_s;      /* up to the end of backward: the stream idle waiting for the host */
  /* The host's clock (relative to t0) when it has issued forward, backward, and the tail (the
   * last: when DDP's final wait does not block the host, else -1): the trace's host track. */
  double host_fwd_end, host_bwd_end, host_tail_end;
} plan_row;

typedef struct plan_s {
  /* The job and what is simulated of it. */
  int nodes, gpus_per_node, ranks; /* the whole job (ranks = nodes x gpus_per_node) */
  int sim_nodes, sim_ranks;        /* simulated: all, or 2 nodes standing for all (symmetry) */
  long batch;
  model_dtype precision;
  sim_fidelity fidelity;
  int iterations;                  /* in all: cycles x no_sync (whole rounds of DataLoader workers) */
  int no_sync;                     /* gradients are all-reduced in every no_sync-th iteration only */

  /* Each rank's compute, seconds. */
  double forward_s, optimizer_s;
  int nseg;
  double *seg_s;       /* (nseg) backward segments: compute up to a gradient-ready event */
  double *seg_copy_s;  /* (nseg) DDP's copies of the gradients ready after segment s into buckets
                        (flat mode: the flatten, after the last segment; with gradient_as_bucket_view
                        their division in place) */
  long *seg_copy_k;    /* (nseg) in how many kernels: one per gradient (flat mode's flatten: one) */
  double copy_back_s;  /* DDP's copy of the reduced buckets back into the gradients, after the wait
                        (flat mode: the division and the copy back; 0 with gradient_as_bucket_view) */
  long copy_back_k;    /* in how many kernels: one per gradient (flat mode: one more) */
  int copy_per_bucket; /* 1: the copy back runs bucket by bucket, each after its own all-reduce
                          (reducer.cpp's finalize_backward waits for bucket b, then copies it
                          back, then waits for b + 1: NCCL's stream waits, from 1.1), so that a
                          bucket's copies overlap the later buckets' all-reduces; 0: after the
                          final wait (gloo and MPI, whose wait blocks the host; flat mode; 0.2-1.0) */
  double *copy_bucket_s; /* (nb, with copy_per_bucket) bucket b's share of copy_back_s, by its bytes */
  double *jitter;      /* (iterations x ranks) compute multipliers, or NULL */
  double *host_jitter; /* (iterations x ranks) additive host delays, seconds, or NULL */
  double host_jitter_sd_s; /* their standard deviation (0: none) */

  /* Host and device (sim/pipe.h): the iteration as the host issues it. forward_s, seg_s, copies and
   * optimizer_s above are GPU time; what the stream actually takes is plan_timeline's. */
  plan_step *steps;    /* (nsteps) forward, backward, then the optimizer's ops, in program order */
  int nsteps, first_tail; /* steps[first_tail ..]: after DDP's final wait */
  int copies;          /* DDP copies gradients into buckets and back (synchronising iterations) */
  double launch_host_s; /* the host cost of one kernel launch (bucket copies, NCCL's launches) */
  double pg_call_host_s; /* ProcessGroupNCCL's host work around each bucket's all-reduce beyond its
                            launch (event records, stream waits: docs/reducer.md); 0 but with NCCL
                            under the C++ Reducer */
  double pg_wait_host_s; /* the same at the final wait, per bucket (its stream wait) */
  int *launch_seg;     /* (nb) the segment after whose hook the host launches bucket b (in order) */
  int queue;           /* CUDA's launch queue, kernels */
  int host_waits;      /* DDP's final wait blocks the host (gloo, MPI), not only the stream */
  plan_row base[2];    /* without jitter: every rank's non-synchronising [0] and synchronising [1]
                          iteration */
  double host_s;       /* the iteration's host work (synchronising iteration, rank 0) */
  int nops;            /* the model's ops */
  double *op_s;        /* (nops) each op's time as summed above (without jitter) */
  int *op_seg;         /* (nops) the backward segment an op belongs to; -1 forward, -2 optimizer */
  /* Work sharing the GPU with NCCL's kernels (docs/simulation.md, "Work sharing the GPU"): whether
   * it is modelled (NCCL, the card's SMs and bandwidth known, sim_config.gpu_sharing), those of the
   * card, and the memory-bound share of forward's and each backward segment's GPU time. */
  int gpu_sharing;
  double sm_count, hbm_Bps;
  double fwd_mem, *seg_mem; /* seg_mem: (nseg) */
  int record_spans;    /* the engine records every rank's spans (sim_config.record_spans) */
  int events;          /* the engine plays every event even where its closed form applies
                          (sim/maxplus.h; sim_config.events) */
  int shares_compute;  /* collectives and compute take turns on the same cores (MPI on CPUs) */
  double cpu_share;    /* instead, where the links say how much of the cores a collective keeps busy
                          (comm.links.<cls>.cpu_share): compute beside it runs at 1 - cpu_share of its
                          rate (as beside NCCL's kernels on a GPU, gpu_sharing), or 0 */

  /* Buckets, in reduction order, each with its collective. */
  bucket_plan buckets;
  int nb;
  int *ready_seg;                   /* (nb) segment after which the bucket is ready */
  reducer_iter reducer;             /* what the Reducer all-reduces in the iteration simulated (sim/reducer.h);
                                       .delayed: every bucket ready at the end of backward */
  int flat;                         /* flat mode: one bucket per dtype after backward, no Reducer */
  double buffers_s;                 /* DDP's broadcast of the module's buffers before every forward */
  double *hook_pre_s, *hook_post_s; /* (nb) communication-hook work around the collective */
  plan_coll *coll;                  /* (nb) */

  /* Network: NCCL's channels, its cost model, and the platform. */
  channels_t ch;
  nccl_model nccl;      /* for the whole job */
  unsigned algos, protos; /* what NCCL may choose from (NCCL_ALGO, NCCL_PROTO) */
  int *next;            /* (ch.count x sim_ranks) each simulated rank's successor on each channel */
  channels_t ch_node;   /* a composed collective's rings inside a node (a one-node job's channels;
                           count 0: none, where no collective is composed) */
  int *next_node;       /* (ch_node.count x sim_ranks) each rank's successor on them, in its node */
  int *next_rail;       /* (ch.count x sim_ranks) the same local GPU on the next node, on every
                           channel (a composed collective's phases between the nodes) */
  int nch_max;          /* the most channels a collective or phase uses */
  int phased;           /* a collective may be composed of phases (hier forced): next_rail is set,
                           and next_node where a node has several GPUs */
  platform_spec platform; /* the simulated nodes; links carry no latency (collectives wait lat_s) */
  double *pair_Bps;     /* owned by the plan: the platform's pair graph, or NULL */
  unsigned char *near;  /* owned: NIC placement, or NULL */
  double intra_lat_s, nic_lat_s; /* one hop of each class (ring/Simple), as reported */
  double ring_bw_Bps;   /* what the channels carry together */

  /* Input pipeline. */
  double load_s;        /* loading one batch by one worker; 0: not modelled */
  int workers;          /* DataLoader workers (0: loading in the training loop) */
  double copy_s;        /* the host-to-device copy of a batch; 0: not modelled */
  int prefetch;         /* the copy runs ahead on a side stream */
  sim_h2d h2d;          /* the copy simulated */

  /* The stream program every rank plays (sim/program.h), built from everything above by
   * plan_build; its values per rank and iteration come from plan_values. */
  prog_t prog;
  /* Its values (plan_values dispatches here): the builder's, which read the builder's own data. */
  void (*values)(const struct plan_s *p, int it, int r, pipe_t *w, plan_row *row, double *val);
  void *fw;                   /* a builder's own data (FSDP's units: sim/fsdp.h), or NULL */
  void (*fw_free)(void *fw);  /* frees it (plan_free calls it) */
  int slot_seg, slot_bwd_rest, slot_lag, slot_tail, slot_copy; /* the program's slots: segment s's duration,
                                          backward's rest, bucket b's launch lag, the tail's a, b and copy back,
                                          bucket b's copy back (copy_per_bucket) */
  long *at_ready, *at_start, *at_end; /* (nb) bucket b's ready event, the end of its launch wait
                                         and of its collective (with hooks) in the record's `at`; a
                                         builder without buckets (nb 0, FSDP's): at_start and at_end
                                         (prog.ncoll) of each collective alone */

  /* Totals the readout reports (per iteration, rank 0's view without jitter). */
  double backward_s, bucket_copy_s;
  int extrapolated_ops;
  profile_jitter_kind jitter_kind;
  double jitter_cv, straggler_s;
} plan_t;

/* Validates the config and builds DDP's plan (or flat mode's) into *p; free with plan_free.
 * ERR_INPUT with a message for bad values, ERR_NOMEM. DataParallel has its own (sim/dp.h), FSDP
 * its own (sim/fsdp.h): this refuses those frameworks. */
int plan_build(const sim_config *c, plan_t *p, err_t *e);

/* What every framework whose ranks run collectives shares, for its builder (plan_build, sim/fsdp.c):
 * plan_begin checks the job and fills the network, NCCL's model and masks, the backend, the GPU's
 * sharing, the iterations, the launch queue and host cost (on failure *p is freed); after the
 * builder's compute, plan_end draws the jitter (compute_s: one iteration's compute, which the
 * draws scale) and host noise, prices the input, decides what is simulated (symmetry) and each
 * simulated rank's successors (the caller frees *p on failure). The builder then sets `values`
 * and builds `prog`. */
int plan_begin(const sim_config *c, plan_t *p, err_t *e);
int plan_end(const sim_config *c, plan_t *p, double compute_s, err_t *e);

void plan_free(plan_t *p); /* frees the contents; NULL is a no-op */

/* Makes bucket b run collective `kind` over its bytes (S as sim/coll.h defines it for that kind):
 * NCCL's choice for it and what each edge and step carries. plan_build calls it with
 * COLL_ALLREDUCE for every bucket; a caller may set another kind before engine_run. ERR_INPUT when
 * NCCL has no algorithm for it within the plan's masks. */
int plan_bucket_coll(plan_t *p, int b, coll_kind kind, double bytes, err_t *e);

/* Makes b a collective `kind` of group g's ranks alone (sim/ncclmodel.h's nccl_group: one node's, or
 * one rail's; ALL: plan_bucket_coll): NCCL's choice on that communicator (nccl_model_group), played
 * as a one-phase collective on the group's rings. The plan must have them (p->phased). */
int plan_group_coll(plan_t *p, int b, coll_kind kind, double bytes, nccl_group g, err_t *e);

/* The config's GPUs per node, batch and precision, its defaults applied, checked. Shared with
 * DataParallel's builder. A value the user chose out of range (nodes, GPUs, batch, bucket caps,
 * iterations, a framework's impossible combination) is ERR_USAGE: each is a flag of ddpsim's. */
int plan_job(const sim_config *c, int *gpn, long *batch, model_dtype *prec, err_t *e);

/* Whether the config's collectives are gloo's over TCP (plan_network prices them on the profile's
 * PROFILE_LINK_TCP class, not the topology's links): always between GPU processes (the profile must
 * have the class); between CPU processes where the profile has the class (else the topology's
 * links, as measured by ddpcalib machine). */
int plan_gloo_tcp(const sim_config *c);

/* The network for `gpn` GPUs per node: NCCL's channels (into *ch), the platform spec for `nodes`
 * nodes, the one-hop latencies and the pair graph / NIC placement the spec points to (the caller
 * frees *pair, *near and ch). Shared with DataParallel's builder. */
int plan_network(const sim_config *c, int gpn, channels_t *ch, platform_spec *spec, double **pair, unsigned char **near,
                 err_t *e);

/* Rows: plan_row_alloc gives one the plan's sizes (ERR_NOMEM); plan_row_free frees its arrays. */
int plan_row_alloc(const plan_t *p, plan_row *row, err_t *e);
void plan_row_free(plan_row *row);

/* Whether ranks or iterations differ (compute or host jitter): rows then come from plan_timeline's
 * workspace, not the plan's base rows. */
int plan_varies(const plan_t *p);

/* Rank r's iteration `it` on its compute stream: the plan's base row without jitter, else *row
 * (allocated for p) computed in workspace w (a pipe of p->queue) with rank r's draws. Pure; the
 * engine and the readout call it. */
const plan_row *plan_timeline(const plan_t *p, int it, int r, pipe_t *w, plan_row *row);

/* Rank r's values for iteration `it` (p->prog.nslots of them, sim/program.h) into val: its row
 * (plan_timeline, in workspace w and *row as there) as the program's durations and stats. Pure. */
void plan_values(const plan_t *p, int it, int r, pipe_t *w, plan_row *row, double *val);

/* Whether iteration `it` synchronises (all-reduces): with more than one rank, the last of each
 * no_sync cycle. */
int plan_sync(const plan_t *p, int it);

/* The first iteration of the steady state the report averages: all of them when the run is one
 * no_sync cycle, else those after the first cycle. */
int plan_first_steady(const plan_t *p);

/* Writes the plan as text: the job, what is simulated, each rank's compute, and one line per
 * bucket with its collective. ERR_IO if writing fails. */
int plan_write(FILE *f, const plan_t *p, err_t *e);

/* Largest job sim_run accepts. */
#define PLAN_MAX_GPUS (1L << 20)

#endif
