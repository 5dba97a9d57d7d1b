/* scenario: what one simulated run is given and what it gives back: the config (sim_config) and
 * the result (sim_result), the enums they use with each one's names, and the defaults.
 *
 * The one place for these (docs/architecture.md): a default is written once (sim_config_defaults;
 * DDP's own, which the Reducer needs below this module, in sim/reducer.h), an enum's names once
 * (the sim_*_names tables below, what flags take, reports print and sweeps write). The types keep
 * the `sim_` prefix of the simulation they configure: sim/sim.h (sim_run) includes this header, and
 * the plan builders, the readout and the cost model include this one rather than sim.h, so that
 * nothing below sim_run depends on it. */
#ifndef DDPSIM_SCENARIO_H
#define DDPSIM_SCENARIO_H

#include "bucket.h"
#include "err.h"
#include "model.h"
#include "profile.h"
#include "reducer.h"
#include "timeline.h"
#include "topo.h"

/* DDP's bucketed all-reduces overlapping backward, or one all-reduce of every gradient after
 * backward ("flat after backward", sentiment-discovery's wrapper). */
typedef enum { SIM_MODE_DDP = 0, SIM_MODE_FLAT = 1 } sim_mode;
/* Communication as flows sharing links (max-min), or as NCCL's per-step messages. */
typedef enum { SIM_FIDELITY_FLOW = 0, SIM_FIDELITY_STEP = 1 } sim_fidelity;
typedef enum { SIM_HOOK_NONE = 0, SIM_HOOK_FP16 = 1, SIM_HOOK_BF16 = 2 } sim_comm_hook;
typedef enum { SIM_FRAMEWORK_DDP = 0, SIM_FRAMEWORK_DP = 1, SIM_FRAMEWORK_FSDP = 2 } sim_framework;
#define SIM_FRAMEWORK_COUNT 3
/* DDP's process group backend (docs/simulation.md, "Communication backends"): NCCL on the GPUs;
 * gloo staged through the host (copy out, ring over TCP, sum on the CPU, copy back); MPI
 * (CUDA-aware) ring. gloo and MPI run on a worker thread whose wait blocks the host. */
typedef enum { SIM_BACKEND_NCCL = 0, SIM_BACKEND_GLOO = 1, SIM_BACKEND_MPI = 2 } sim_backend;

/* The buckets: the Reducer's for the release and iteration (default), or a layout forced with the
 * limits [first_bucket_mb or REDUCER_FIRST_BUCKET_MB, sim_bucket_cap_mb] whatever the release would
 * do (`ddpsim validate` compares with our own trainer, calib/train.c, which builds them so). */
typedef enum { SIM_LAYOUT_REDUCER = 0, SIM_LAYOUT_CONSTRUCTION, SIM_LAYOUT_REBUILT } sim_layout;

/* How a batch reaches the GPU (docs/simulation.md): not modelled; pageable memory (synchronous);
 * pinned, synchronous; pinned and non_blocking on the compute stream; pinned and prefetched on a
 * side stream one batch ahead. AUTO: pageable (PyTorch's default) when the profile has h2d costs
 * and the model an `input` size, else not modelled. */
typedef enum {
  SIM_H2D_AUTO = 0, SIM_H2D_OFF, SIM_H2D_PAGEABLE, SIM_H2D_PINNED, SIM_H2D_PINNED_ASYNC, SIM_H2D_PREFETCH
} sim_h2d;

/* Each enum's names, indexed by its values and ended by NULL (the form common/cli.h's CLI_ENUM
 * options take): the words flags accept, reports print and sweeps write. */
extern const char *const sim_mode_names[];      /* "ddp", "flat" */
extern const char *const sim_fidelity_names[];  /* "flow", "step" */
extern const char *const sim_comm_hook_names[]; /* "none", "fp16", "bf16" */
extern const char *const sim_framework_names[]; /* "ddp", "dp", "fsdp" */
extern const char *const sim_backend_names[];   /* "nccl", "gloo", "mpi" */
extern const char *const sim_h2d_names[];       /* "auto", "none", "pageable", "pinned", "pinned-async", "prefetch" */
const char *sim_mode_name(sim_mode m);
const char *sim_fidelity_name(sim_fidelity f);
const char *sim_comm_hook_name(sim_comm_hook h);
const char *sim_framework_name(sim_framework f);
const char *sim_backend_name(sim_backend b);
const char *sim_h2d_name(sim_h2d h);
/* The index of word s in a NULL-ended names table (one of the above), or -1 for any other word. */
int sim_name_index(const char *const *names, const char *s);

/* The largest bucket cap, MB: 1e9 MB (about a PB), far above any model's gradients (one bucket
 * then holds them all), and its bytes (< 2^53) exact in a double and a size_t. */
#define SIM_MAX_BUCKET_MB 1e9
/* The smallest: one byte (DDP's cap in bytes is bucket_cap_mb * 2^20, truncated; a cap of 0 bytes
 * is refused, sim/bucket.c). */
#define SIM_MIN_BUCKET_MB (1.0 / 1048576.0)
/* What a bucket cap flag must be (--bucket-cap-mb, --first-bucket-mb, and the lists of recommend,
 * buckets, validate and ddpcalib train): SIM_MIN_BUCKET_MB to SIM_MAX_BUCKET_MB, in words. */
#define SIM_BUCKET_MB_MUST "must be a cap from one byte (9.54e-07 MB) to 1e9 MB"

/* Physical ranges of the host's times a user may give (docs/cli.md, "Ranges"): a kernel launch or
 * a framework op's host cost of 1 s (measured: 2 to 10 us, docs/profiles.md) is already 10^5 times
 * any real one, as is a GIL hand-over of 1 s; a DataLoader worker taking an hour per batch is far
 * beyond any real pipeline. Beyond these a report would print times with hundreds of digits. */
#define SIM_MAX_HOST_US 1e6
/* The first PyTorch release whose torch.optim steps CUDA parameters with the foreach implementation
 * by default (torch/optim/optimizer.py, _default_to_fused_or_foreach, from v2.0.0); before it every
 * optimizer ran its for-loop, a kernel per parameter and op. */
#define SIM_FOREACH_FIRST 200
/* The longest measured step (--measured-step-s), seconds: a day. */
#define SIM_MAX_STEP_S 86400.0
#define SIM_MAX_LOAD_MS 3.6e6
/* The largest per-GPU batch: 2^30 samples (plan.c; the model loader's bound). */
#define SIM_MAX_BATCH (1L << 30)

typedef struct {
  const model_t *model;
  const topo_t *topo;
  const profile_t *profile;
  int nodes;
  int gpus_per_node;       /* <= 0: the topology's */
  long batch;              /* per GPU; <= 0: the model's */
  int precision;           /* model_dtype, or -1: the model's */
  /* DDP's Reducer (sim/reducer.h): which buckets each iteration all-reduces depends on these and
   * on the PyTorch release. */
  int pytorch;             /* release, major*100+minor (205 for 2.5); 0: REDUCER_VERSION_LATEST */
  double bucket_cap_mb;    /* DDP's bucket_cap_mb; <= 0: not given (DDP's default, REDUCER_DEFAULT_CAP_MB;
                              sim_bucket_cap_mb says which cap is simulated) */
  double first_bucket_mb;  /* dist._DEFAULT_FIRST_BUCKET_BYTES in MB; <= 0: the release's (1) */
  int ncap_list;           /* bucket_cap_mb_list (2.11 and later); 0: none */
  double cap_list_mb[REDUCER_MAX_LIMITS];
  int find_unused;         /* DDP(find_unused_parameters=True) */
  int static_graph;        /* DDP(static_graph=True) */
  int bucket_view;         /* DDP(gradient_as_bucket_view=True): no copies into and out of buckets */
  int broadcast_buffers;   /* DDP(broadcast_buffers=True), PyTorch's default (sim_config_defaults: 1):
                              the model's buffers broadcast from rank 0 before every forward */
  int ddp_iteration;       /* the DDP iteration simulated: 0 the steady state; k >= 1 the k-th */
  sim_layout layout;       /* SIM_LAYOUT_REDUCER: as the release's Reducer does in that iteration */
  sim_mode mode;
  sim_fidelity fidelity;
  int iterations;          /* >= 1 cycles of no_sync iterations; the steady state is the mean
                              iteration over cycles 2..K (cycle 1 if K == 1) */
  int no_sync;             /* >= 1: gradients are all-reduced every no_sync-th iteration only
                              (DDP's no_sync() for the others) */
  sim_comm_hook comm_hook; /* DDP's fp16_compress_hook / bf16_compress_hook on fp32 buckets */
  double jitter_cv;        /* < 0: compute jitter from the profile (if any); 0: none; > 0:
                              lognormal with this coefficient of variation */
  unsigned long seed;      /* for the jitter draws */
  double jitter_ci_rel;    /* with jitter, predict simulates until the 95% confidence interval of
                              the mean iteration is within this fraction of it (sim/predict.h;
                              sim_config_defaults: SIM_JITTER_CI_REL); 0: exactly `iterations` */
  double host_jitter_s;    /* < 0: the profile's compute.host.jitter_s (0 if absent); 0: none; > 0: the
                              sd of an additive host delay per rank and iteration, seconds */
  unsigned nccl_algos;     /* NCCL_ALGO: bit mask of nccl_algo (ncclmodel.h); 0: NCCL's own choice */
  unsigned nccl_protos;    /* NCCL_PROTO: bit mask of nccl_proto; 0: all */
  double load_s;           /* loading one batch by one DataLoader worker; 0: not modelled */
  int workers;             /* DataLoader num_workers (0: loading in the training loop) */
  sim_h2d h2d;             /* the host-to-device copy of each batch */
  double host_launch_s;    /* < 0: the profile's compute.host.launch_s (0 if absent); else this host
                              cost per kernel launch */
  double host_dispatch_s;  /* < 0: the profile's compute.host.dispatch_s (0 if absent); else this host
                              cost per framework op (a model op's fwops=) */
  double host_event_s;     /* < 0: the profile's compute.host.event_s (0 if absent); else this host
                              cost per CUDA event call (ProcessGroupNCCL's, docs/reducer.md) */
  double measured_step_s;  /* > 0: one GPU's measured iteration of this job (--measured-step-s); predict
                              scales the host costs above (launch, dispatch) by one factor so that the
                              simulated 1-GPU iteration equals it (sim/predict.h); 0: none */
  sim_backend backend;     /* DDP's process group (default NCCL) */
  sim_framework framework; /* DDP (one process per GPU), DataParallel (one process, one thread
                              per GPU, Python's GIL) or FSDP2 (fully_shard, sim/fsdp.h) */
  /* FSDP's knobs under PyTorch's names (sim/fsdp.h, docs/fsdp.md): which modules are units
   * (comma-separated module-path globs; NULL: every numbered module at the shallowest depth),
   * reshard_after_forward of the units (1, FSDP's default, or 0; the root never reshards), the
   * MixedPrecisionPolicy's param_dtype and reduce_dtype (< 0: None, the parameters' own type, for
   * reduce_dtype too whatever param_dtype), and set_modules_to_forward_prefetch of the next K units
   * (0: none, FSDP's default). */
  const char *fsdp_units;
  int fsdp_reshard;
  int fsdp_param_dtype, fsdp_reduce_dtype;
  int fsdp_forward_prefetch;
  int fsdp_replicate;      /* HSDP: > 0, the replicas (shard within groups of ranks / fsdp_replicate
                              GPUs, all-reduce across them); 0: FSDP over every rank */
  int fsdp_shard_world;    /* the ranks the optimizer's shard is of (0: the job's): predict's 1-GPU
                              twin of an FSDP job is one rank's work, its optimizer on its shard */
  int dp_backward_gil;     /* < 0 (default): the release's (reducer_backward_gil: before 0.4); 1:
                              DataParallel: backward's launches take turns under the GIL too (autograd
                              functions written in Python: 2017 PyTorch, pytorch#3275) */
  int launch_queue;        /* CUDA's pending launches per stream before a launch blocks; <= 0: 1024
                              (sim/pipe.h) */
  double dp_gil_share;     /* DataParallel: the share of forward's (and the optimizer's) host cost held
                              under the GIL, 0..1 (default 1: all of it) */
  double dp_handover_s;    /* DataParallel: the cost of one GIL hand-over between waiting threads
                              (default 0) */
  int symmetry;            /* 1 (default): where no jitter tells the nodes apart, simulate 2 nodes
                              standing for all (sim/plan.h); 0: simulate every rank */
  int record_spans;        /* 1: keep every simulated rank's spans in sim_result.timeline (traces) */
  int events;              /* 1: the engine plays every event even where its closed form applies
                              (sim/maxplus.h; default 0) */
  int gpu_sharing;         /* 1 (default): backward's compute shares each GPU with NCCL's kernels
                              beside it (docs/simulation.md, "Work sharing the GPU"); 0: as if free */
} sim_config;

typedef struct {
  int index;             /* position in reduction order */
  size_t bytes;
  size_t wire_bytes;     /* bytes all-reduced (half of `bytes` for fp32 under the fp16 hook) */
  int algo, proto;       /* NCCL's choice (nccl_algo, nccl_proto) */
  double nccl_estimate_s; /* NCCL's own estimate of the all-reduce on an idle network */
  double ready_s;        /* relative to the start of the reported iteration (rank 0) */
  double comm_start_s;
  double comm_end_s;
} sim_bucket_time;

/* One of FSDP's collectives in the reported iteration (sim/fsdp.h), rank 0's. */
typedef struct {
  char unit[64];          /* the unit's module path ("" the root) */
  int kind;               /* coll_kind: all-gather, reduce-scatter, HSDP's all-reduce */
  const char *before;     /* an all-gather's: "forward" or "backward"; else "-" */
  double bytes;           /* S as sim/coll.h defines it for the kind */
  int algo, proto;        /* NCCL's choice */
  double nccl_estimate_s;
  double start_s, end_s;  /* relative to the start of the reported iteration (the last simulated,
                             as DDP's buckets): in [0, buckets_iteration_s] */
} sim_fsdp_coll;

typedef struct {
  int gpus;
  long batch;
  model_dtype precision;
  double iteration_s;      /* steady-state iteration time: loading_s + transfer_s + buffer_broadcast_s +
                              compute_s + exposed_comm_s + straggler_wait_s, every part >= 0 */
  double buffer_broadcast_s; /* per iteration, DDP's broadcast of the module's buffers before forward */
  double forward_s, backward_s, optimizer_s; /* per iteration, rank 0's as simulated (its jitter
                              draws included) */
  double compute_s;        /* forward + backward + optimizer + DDP's bucket copies (per iteration) */
  double exposed_comm_s;   /* communication not hidden behind compute: what is left of the iteration
                              after compute, input and waiting for stragglers */
  double straggler_wait_s; /* per iteration, rank 0 waiting for slower GPUs (jitter): how much longer
                              the slowest computed up to the final wait, bounded by what was left */
  double buckets_iteration_s; /* the length of the iteration the bucket times (and FSDP's
                              collectives') come from: the last one; it differs from iteration_s,
                              a mean, under jitter and where DataLoader's batches arrive unevenly */
  int jittered;            /* compute or host jitter made iterations differ (every rank simulated) */
  double iteration_ci_s;   /* with jitter: the half-width of the 95% confidence interval of the
                              mean iteration_s (Student's t over the steady cycles' lengths); 0
                              without jitter; NAN (unknown) with fewer than two steady cycles */
  double comm_busy_s;      /* time the communication stream was busy in the reported iteration */
  int extrapolated_ops;    /* ops whose cost fell outside a measured table */
  profile_jitter_kind jitter_kind; /* the compute jitter simulated */
  double jitter_cv;        /* its coefficient of variation (lognormal) */
  double straggler_s;      /* the jitter's spread: mean over steady iterations of (slowest - mean
                              GPU compute); not a part of the iteration (straggler_wait_s is) */
  /* The host and the compute stream (docs/simulation.md, "Host and device"), per steady iteration,
   * rank 0's: the host issuing ops (framework dispatch, launches, NCCL's launches); the GPU running
   * them; host-bound: the GPU idle waiting for the host (part of compute_s, which is the stream's
   * span); device-bound: the host waiting for its GPU (a full launch queue, the end-of-iteration
   * sync, exposed communication included). host_bound_max_s: the most host-bound rank's. DDP only. */
  double host_busy_s, device_busy_s, host_bound_s, device_bound_s, host_bound_max_s;
  double host_jitter_s;    /* per steady iteration, rank 0's host delay drawn (host noise; part of its
                              host_busy_s); the slowest rank's shows in straggler_wait_s */
  double bucket_copy_s;    /* DDP's gradient copies into buckets (during backward) and back (after
                              the final wait), or flat mode's flatten and its division and copy
                              back, per iteration (1/no_sync of a synchronised iteration's); part
                              of compute_s */
  double loading_s;        /* per iteration, waiting for a loaded batch (rank 0, steady state) */
  double transfer_s;       /* per iteration, waiting for the host-to-device copy */
  sim_h2d h2d;             /* the copy simulated (never AUTO) */
  int shares_compute;      /* all-reduces took turns with compute on the same cores */
  /* DataParallel only (0 for DDP): per iteration, scattering the inputs to the GPUs, replicating the
   * parameters from GPU 0, gathering the outputs to GPU 0 (and scattering their gradients back),
   * and reducing the gradients to GPU 0. */
  double dp_scatter_s, dp_replicate_s, dp_gather_s, dp_reduce_s;
  int channels;            /* NCCL's rings, each carrying an equal share of every all-reduce */
  double channel_bw_Bps;   /* each channel's bandwidth (NCCL's per-channel speed) */
  int nics_used;           /* NICs per node the channels cross (0 on one node) */
  int channels_exhausted;  /* the channel search stopped at its step budget: a better set may exist */
  double intra_bw_Bps, intra_lat_s, nic_bw_Bps, nic_lat_s; /* effective, as simulated: the
                              channels' bandwidth together (0 where not crossed), one hop */
  bucket_plan plan;        /* reduction order (owned; freed by sim_result_free) */
  sim_bucket_time *buckets; /* (plan.n) for the reported iteration */
  sim_fsdp_coll *fsdp;     /* (nfsdp) FSDP's collectives, in the order the host issued them; else NULL */
  int nfsdp;
  long messages;           /* network messages simulated */
  int iterations_simulated; /* in all (no_sync cycles, and whole rounds of DataLoader workers) */
  int ranks_simulated;     /* GPUs the engine simulated: all, or 2 nodes' by symmetry (0: summed,
                              not simulated, as DataParallel) */
  double wall_s;           /* wall-clock time of the simulation (in predict_result.sim: of every
                              simulation predict ran, its 1-GPU twin and early iterations too) */
  long peak_rss_kb;        /* largest resident set of any simulation child so far, KiB */
  int closed_form;         /* 1: the engine evaluated the run in closed form (sim/maxplus.h) */
  sim_timeline *timeline;  /* sim/timeline.h: every simulated rank's spans (owned), when
                              sim_config.record_spans asked for them; else NULL */
} sim_result;

/* predict's default precision for a jittered mean (--jitter-ci): 1% of it, at 95% confidence. */
#define SIM_JITTER_CI_REL 0.01

/* Fills a config with the documented defaults (bucket caps not given: DDP's, ddp, flow, 3
 * iterations, no_sync 1, no hook, jitter from the profile, SIM_JITTER_CI_REL, seed 1, symmetry on,
 * buffers broadcast); model, topo, profile and nodes are the caller's to set. */
void sim_config_defaults(sim_config *c);

/* The bucket cap simulated, MB: the config's, or DDP's default (REDUCER_DEFAULT_CAP_MB) when not
 * given. What reports and sweeps print as the cap. */
double sim_bucket_cap_mb(const sim_config *c);

/* The run's batch per GPU and precision: the config's where given (batch > 0, precision >= 0), else
 * the model's file's. */
long sim_batch(const sim_config *c);
model_dtype sim_precision(const sim_config *c);

/* Whether DataParallel's backward takes turns under the GIL: the config's, or its release's. */
int sim_dp_backward_gil(const sim_config *c);

/* The Reducer's knobs of a config (sim/reducer.h). */
void sim_reducer_knobs(const sim_config *c, reducer_knobs *k);
/* The process group when none is named: the default's (nccl), or gloo for DDP before PyTorch 0.4,
 * the only one its DDP worked with (reducer_default_pg). */
sim_backend sim_default_backend(sim_framework f, int pytorch);

/* The buckets iteration c->ddp_iteration all-reduces: the Reducer's, or the forced layout. */
void sim_reducer_iteration(const sim_config *c, reducer_iter *it);

void sim_result_free(sim_result *r); /* frees the contents; NULL is a no-op */

#endif
