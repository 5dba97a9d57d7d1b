/* simopts: the scenario options shared by predict, sweep, recommend and trace (simopts.h). */
#include "simopts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "cost.h"
#include "data.h"
#include "fsdp.h"
#include "ncclmodel.h"
#include "txt.h"

/* FSDP's knobs at sim_config_defaults' values. */
static void fsdp_defaults(simopts *o, const sim_config *d) {
  o->fsdp_units = d->fsdp_units;
  o->fsdp_reshard = d->fsdp_reshard;
  o->fsdp_param_dtype = d->fsdp_param_dtype;
  o->fsdp_reduce_dtype = d->fsdp_reduce_dtype;
  o->fsdp_forward_prefetch = d->fsdp_forward_prefetch;
  o->fsdp_replicate = d->fsdp_replicate;
}

const char *const simopts_ddp_knobs[] = {"bucket-cap-mb", "bucket-cap-mb-list", "first-bucket-mb", "find-unused-parameters",
                                         "static-graph", "ddp-iteration", "rebuilt", "gradient-as-bucket-view", "comm-hook",
                                         "mode", "no-broadcast-buffers", NULL};

void simopts_own_knobs(simopts *o, double *bucket_cap_mb) {
  if (o->framework != SIM_FRAMEWORK_FSDP) {
    sim_config d;
    sim_config_defaults(&d);
    fsdp_defaults(o, &d);
  }
  if (o->framework != SIM_FRAMEWORK_DDP) { /* simopts_ddp_knobs, back to simopts_init's values */
    simopts d;
    simopts_init(&d);
    o->find_unused = d.find_unused, o->static_graph = d.static_graph, o->ddp_iteration = d.ddp_iteration;
    o->rebuilt = d.rebuilt, o->bucket_view = d.bucket_view, o->hook = d.hook, o->first_mb = d.first_mb;
    o->mode = d.mode, o->no_broadcast_buffers = d.no_broadcast_buffers, o->ncap_list = d.ncap_list;
    if (bucket_cap_mb) *bucket_cap_mb = 0;
  }
}

/* The scenario's defaults are sim_config_defaults' (sim/scenario.c), read back here as simopts_config
 * maps them forward; only the inputs' names are the front end's own. */
void simopts_init(simopts *o) {
  sim_config d;
  sim_config_defaults(&d);
  memset(o, 0, sizeof *o);
  o->model = "mlstm-4k";
  o->topology = "dgx1v-ib";
  o->profile = "v100-dgx1v";
  o->gpus_per_node = d.gpus_per_node;
  o->batch = d.batch;
  o->precision = d.precision;
  o->iterations = d.iterations;
  o->no_sync = d.no_sync;
  o->hook = (int)d.comm_hook;
  o->jitter_cv = d.jitter_cv;
  o->seed = d.seed;
  o->jitter_ci = d.jitter_ci_rel;
  o->host_launch_us = d.host_launch_s < 0 ? -1 : d.host_launch_s * 1e6;
  o->host_dispatch_us = d.host_dispatch_s < 0 ? -1 : d.host_dispatch_s * 1e6;
  o->host_event_us = d.host_event_s < 0 ? -1 : d.host_event_s * 1e6;
  o->host_jitter_us = d.host_jitter_s < 0 ? -1 : d.host_jitter_s * 1e6;
  o->dp_gil_share = d.dp_gil_share;
  o->dp_handover_us = d.dp_handover_s * 1e6;
  o->dp_backward_gil = d.dp_backward_gil;
  o->mode = (int)d.mode;
  o->fidelity = (int)d.fidelity;
  o->framework = (int)d.framework;
  o->backend = -1; /* not given: the release's (sim_default_backend) */
  o->no_symmetry = !d.symmetry;
  o->no_broadcast_buffers = !d.broadcast_buffers;
  o->events = d.events;
  o->no_gpu_sharing = !d.gpu_sharing;
  o->load_ms = d.load_s * 1e3;
  o->workers = d.workers;
  fsdp_defaults(o, &d);
}

/* reshard_after_forward's values, as Python spells them. */
static const char *const fsdp_bool_names[] = {"false", "true", NULL};

int simopts_parse_precision(const char *s, void *dest) {
  model_dtype d;
  if (model_dtype_parse(s, &d)) return -1;
  *(int *)dest = (int)d;
  return 0;
}
static int parse_pytorch(const char *s, void *dest) {
  err_t e;
  return reducer_version_parse(s, dest, &e) ? -1 : 0;
}
/* "10,25,50" into simopts.ncap_list and cap_list_mb: positive numbers, REDUCER_MAX_LIMITS at most. */
static int parse_cap_list(const char *s, void *dest) {
  simopts *o = dest;
  int n = 0;
  const char *p = s;
  for (;;) {
    char *end;
    double v = strtod(p, &end);
    if (end == p || !(v >= SIM_MIN_BUCKET_MB && v <= SIM_MAX_BUCKET_MB) || n == REDUCER_MAX_LIMITS) return -1;
    o->cap_list_mb[n++] = v;
    if (*end == 0) break;
    if (*end != ',') return -1;
    p = end + 1;
  }
  o->ncap_list = n;
  return 0;
}
static int parse_algos(const char *s, void *dest) { return nccl_parse_algos(s, dest) ? -1 : 0; }
static int parse_protos(const char *s, void *dest) { return nccl_parse_protos(s, dest) ? -1 : 0; }

void simopts_table(simopts *o, cli_opt t[SIMOPTS_COUNT]) {
  const cli_opt table[SIMOPTS_COUNT] = {
      {"model", 0, CLI_STRING, &o->model, "M", "model file or bundled name (default mlstm-4k)"},
      {"topology", 0, CLI_STRING, &o->topology, "T", "topology file or bundled name (default dgx1v-ib)"},
      {"profile", 0, CLI_STRING, &o->profile, "P", "profile file or bundled name (default v100-dgx1v)"},
      {"gpus-per-node", 0, CLI_INT, &o->gpus_per_node, "G", "GPUs per node (default: the topology's)", CLI_MIN | CLI_MAX, 1, 4096},
      {"batch", 0, CLI_LONG, &o->batch, "B", "per-GPU batch (default: the model's)", CLI_MIN | CLI_MAX, 1, SIM_MAX_BATCH,
       .must = "must be a per-GPU batch from 1 to 1073741824 (2^30) samples"},
      {"precision", 0, CLI_CUSTOM, &o->precision, "fp32|fp16|bf16", "run precision (default: the model's)",
       .parse = simopts_parse_precision, .must = "must be fp32, fp16 or bf16"},
      {"pytorch", 0, CLI_CUSTOM, &o->pytorch, "VERSION",
       "the PyTorch release modelled, 0.2 to 2.15 (default 2.15; docs/reducer.md): DDP's\nbuckets and their work (Python DDP before 1.1: 1 MiB buckets, a reduction\nthread each, gloo only before 0.4; 0.4's nccl after backward; 1.0's c10d) and\nthe host's behaviour (before 0.4 DataParallel's backward holds the GIL)",
       .parse = parse_pytorch, .must = "must be a release from 0.2 to 2.15, as MAJOR.MINOR"},
      {"find-unused-parameters", 0, CLI_FLAG, &o->find_unused, NULL,
       "DDP(find_unused_parameters=True): construction-time buckets, never rebuilt"},
      {"static-graph", 0, CLI_FLAG, &o->static_graph, NULL,
       "DDP(static_graph=True): iteration 1 all-reduces after backward, rebuilt\nbuckets from iteration 3"},
      {"gradient-as-bucket-view", 0, CLI_FLAG, &o->bucket_view, NULL,
       "DDP(gradient_as_bucket_view=True): no gradient copies into and out of\nbuckets (PyTorch's default copies them)"},
      {"bucket-view", 0, CLI_FLAG, &o->bucket_view, NULL, "the same as --gradient-as-bucket-view"},
      {"no-broadcast-buffers", 0, CLI_FLAG, &o->no_broadcast_buffers, NULL,
       "DDP(broadcast_buffers=False): no broadcast of the model's buffers before\nevery forward (PyTorch's default broadcasts them)"},
      {"bucket-cap-mb-list", 0, CLI_CUSTOM, o, "LIST",
       "DDP(bucket_cap_mb_list=[...]) (2.11 and later): each bucket's cap, MB", .parse = parse_cap_list,
       .must = "must list 1 to 64 caps, each from one byte (9.54e-07 MB) to 1e9 MB, comma-separated"},
      {"first-bucket-mb", 0, CLI_DOUBLE, &o->first_mb, "Y",
       "dist._DEFAULT_FIRST_BUCKET_BYTES in MB (default 1; used where the release\nuses it)", CLI_MIN | CLI_MAX, SIM_MIN_BUCKET_MB,
       SIM_MAX_BUCKET_MB, .must = SIM_BUCKET_MB_MUST},
      {"ddp-iteration", 0, CLI_INT, &o->ddp_iteration, "K",
       "simulate the buckets of DDP's K-th iteration (default: the steady state)", CLI_MIN | CLI_MAX, 1, 3},
      {"rebuilt", 0, CLI_FLAG, &o->rebuilt, NULL,
       "force buckets rebuilt in gradient-ready order with limits [first, cap],\nwhatever the release does"},
      {"mode", 0, CLI_ENUM, &o->mode, "ddp|flat",
       "ddp: bucketed all-reduces overlapping backward (default);\nflat: one all-reduce of all gradients after backward", .names = sim_mode_names},
      {"fidelity", 0, CLI_ENUM, &o->fidelity, "flow|step", "flow: one flow per ring edge (default, fast); step: every ring step",
       .names = sim_fidelity_names},
      {"iterations", 0, CLI_INT, &o->iterations, "K", "iterations simulated, steady state from the 2nd on (default 3; with\njitter at least 30, and more until the mean is known to --jitter-ci)",
       CLI_MIN | CLI_MAX, 1, 1000},
      {"no-sync", 0, CLI_INT, &o->no_sync, "K", "all-reduce every K-th iteration only (DDP's no_sync(); default 1)",
       CLI_MIN | CLI_MAX, 1, 1000},
      {"comm-hook", 0, CLI_ENUM, &o->hook, "none|fp16|bf16",
       "DDP's fp16_compress_hook or bf16_compress_hook (half the bytes, two casts)", .names = sim_comm_hook_names},
      {"jitter-cv", 0, CLI_DOUBLE, &o->jitter_cv, "X",
       "each GPU's compute per iteration varies (lognormal, this coefficient\nof variation; 0: none); default: the profile's "
       "compute.jitter, if any",
       CLI_MIN | CLI_MAX_OPEN, 0, 1},
      {"seed", 0, CLI_ULONG, &o->seed, "N", "seed of the jitter draws (default 1)"},
      {"jitter-ci", 0, CLI_DOUBLE, &o->jitter_ci, "X",
       "with jitter, simulate until the 95% confidence interval of the mean\niteration is within X of it (default 0.01); "
       "0: exactly --iterations",
       CLI_MIN | CLI_MAX_OPEN, 0, 1},
      {"nccl-algo", 0, CLI_CUSTOM, &o->nccl_algos, "LIST", "NCCL_ALGO: ring, tree, pat and/or hier (default auto: NCCL's\nown choice among those the profile lists; hier only when asked)",
       .parse = parse_algos, .must = "must list ring, tree, pat and/or hier (or auto)"},
      {"nccl-proto", 0, CLI_CUSTOM, &o->nccl_protos, "LIST", "NCCL_PROTO: LL, LL128, Simple (default auto); needs the profile's comm.nccl",
       .parse = parse_protos, .must = "must list LL, LL128 and/or Simple (or auto)"},
      {"num-workers", 0, CLI_INT, &o->workers, "W", "DataLoader workers loading batches (default 0: the training loop loads)",
       CLI_MIN | CLI_MAX, 0, 256},
      {"load-ms", 0, CLI_DOUBLE, &o->load_ms, "X", "time one worker takes to load one batch (default 0: loading not modelled)",
       CLI_MIN | CLI_MAX, 0, SIM_MAX_LOAD_MS, .must = "must be from 0 to 3600000 ms (an hour per batch)"},
      {"pin-memory", 0, CLI_FLAG, &o->pin, NULL, "batches in pinned memory (faster copies; default pageable, as PyTorch)"},
      {"non-blocking", 0, CLI_FLAG, &o->nonblocking, NULL, "copies with non_blocking=True (no effect without --pin-memory)"},
      {"prefetch", 0, CLI_FLAG, &o->prefetch, NULL, "pinned copies one batch ahead on a side stream, overlapping compute"},
      {"no-h2d", 0, CLI_FLAG, &o->no_h2d, NULL, "do not model the host-to-device copy of the batch"},
      {"framework", 0, CLI_ENUM, &o->framework, "ddp|dp|fsdp",
       "ddp: DistributedDataParallel (default); dp: DataParallel, one process with\none thread per GPU whose kernel launches take "
       "turns under Python's GIL;\nfsdp: FSDP2, fully_shard on each unit and the root (docs/fsdp.md)",
       .names = sim_framework_names},
      {"fsdp-units", 0, CLI_STRING, &o->fsdp_units, "GLOBS",
       "FSDP: the modules fully_shard is applied to, comma-separated module-path\nglobs (`*` within one name: 'h.*', 'layer*.*'); "
       "default: every numbered module\nat the shallowest depth (a ModuleList's blocks); the root is always one"},
      {"fsdp-reshard-after-forward", 0, CLI_ENUM, &o->fsdp_reshard, "true|false",
       "FSDP: the units' reshard_after_forward (default true; the root never reshards)", .names = fsdp_bool_names},
      {"fsdp-param-dtype", 0, CLI_CUSTOM, &o->fsdp_param_dtype, "fp32|fp16|bf16",
       "FSDP: MixedPrecisionPolicy(param_dtype): what is all-gathered (default: the\nparameters' own type)",
       .parse = simopts_parse_precision, .must = "must be fp32, fp16 or bf16"},
      {"fsdp-reduce-dtype", 0, CLI_CUSTOM, &o->fsdp_reduce_dtype, "fp32|fp16|bf16",
       "FSDP: MixedPrecisionPolicy(reduce_dtype): what is reduce-scattered (default:\nNone: the parameters' own type, whatever param_dtype)",
       .parse = simopts_parse_precision, .must = "must be fp32, fp16 or bf16"},
      {"fsdp-forward-prefetch", 0, CLI_INT, &o->fsdp_forward_prefetch, "K",
       "FSDP: set_modules_to_forward_prefetch of the next K units on each unit\n(default 0: none, FSDP's default)", CLI_MIN | CLI_MAX, 0, 64},
      {"fsdp-replicate", 0, CLI_INT, &o->fsdp_replicate, "R",
       "FSDP: HSDP with R replicas (a 2-D mesh (R, GPUs / R)): each shards the model\nwithin itself, the replicas all-reduce; "
       "modelled with one node per replica\n(R = --nodes); default: none", CLI_MIN | CLI_MAX, 1, 1 << 20},
      {"backend", 0, CLI_ENUM, &o->backend, "nccl|gloo|mpi",
       "DDP's process group: nccl (default; gloo for DDP before --pytorch 0.4, its only\none); gloo (staged through the host, its ring over TCP: the profile's\ncomm.links.tcp, summed on the CPU); mpi (CUDA-aware); gloo and mpi block\nthe host at the final wait",
       .names = sim_backend_names},
      {"host-jitter-us", 0, CLI_DOUBLE, &o->host_jitter_us, "X",
       "host noise: sd of an additive delay per rank and iteration, microseconds\n(exponential; default the profile's compute.host.jitter_s, or 0)", CLI_MIN | CLI_MAX, 0, 1e7},
      {"host-launch-us", 0, CLI_DOUBLE, &o->host_launch_us, "X",
       "host cost of one kernel launch (default: the profile's compute.host, or 0)", CLI_MIN | CLI_MAX, 0,
       SIM_MAX_HOST_US, .must = "must be from 0 to 1000000 us (1 s per launch; real ones take 2 to 10 us)"},
      {"host-dispatch-us", 0, CLI_DOUBLE, &o->host_dispatch_us, "X",
       "host cost of one framework op (a model op's fwops=; default: the profile's\ncompute.host.dispatch_s, or 0)", CLI_MIN | CLI_MAX, 0,
       SIM_MAX_HOST_US, .must = "must be from 0 to 1000000 us (1 s per op; real ones take 2 to 10 us)"},
      {"host-event-us", 0, CLI_DOUBLE, &o->host_event_us, "X",
       "host cost of one CUDA event call (record, stream wait) of NCCL's process group\naround each bucket's all-reduce (default: the profile's compute.host.event_s,\nor 0)",
       CLI_MIN | CLI_MAX, 0, SIM_MAX_HOST_US, .must = "must be from 0 to 1000000 us (1 s per call; real ones take under 1 us)"},
      {"measured-step-s", 0, CLI_DOUBLE, &o->measured_step_s, "T",
       "one GPU's measured training step of this job, seconds (a 1-GPU run's time per\niteration): the host's costs per launch and op are scaled by one factor so\nthat the simulated 1-GPU step takes T (the rest of the step beyond the GPU's\nwork is the host's; docs/calib.md, \"One measured step\")",
       CLI_MIN | CLI_MAX, 1e-6, SIM_MAX_STEP_S, .must = "must be a time from 1e-06 s to 86400 s (a day)"},
      {"dp-backward-gil", 0, CLI_FLAG, &o->dp_backward_gil, NULL,
       "dp: backward's launches take turns under the GIL too (autograd functions\nwritten in Python, as in 2017 PyTorch; default: before --pytorch 0.4, else "
       "C++ threads)"},
      {"dp-gil-share", 0, CLI_DOUBLE, &o->dp_gil_share, "X",
       "dp: the share of forward's host cost held under the GIL, 0 to 1 (default 1)", CLI_MIN | CLI_MAX, 0, 1},
      {"dp-handover-us", 0, CLI_DOUBLE, &o->dp_handover_us, "X",
       "dp: one GIL hand-over between waiting threads, microseconds (default 0)", CLI_MIN | CLI_MAX, 0,
       SIM_MAX_HOST_US, .must = "must be from 0 to 1000000 us (1 s)"},
      {"no-symmetry", 0, CLI_FLAG, &o->no_symmetry, NULL,
       "simulate every GPU (default: with no jitter every node does the same,\nso 2 simulated nodes stand for all; same results, faster)"},
      {"events", 0, CLI_FLAG, &o->events, NULL,
       "play every event even where the closed form applies (default: the closed\nform, same results, faster)"},
      {"no-gpu-sharing", 0, CLI_FLAG, &o->no_gpu_sharing, NULL,
       "compute beside NCCL's kernels as if it had the GPU to itself (default: it\nloses the SMs and memory bandwidth they take; an ablation)"},
      {0},
  };
  memcpy(t, table, sizeof table);
}

void simopts_job_table(int *nodes, double *cap, cli_opt t[SIMOPTS_JOB_COUNT]) {
  *nodes = 1;
  *cap = 0;
  const cli_opt table[SIMOPTS_JOB_COUNT] = {
      {"nodes", 0, CLI_INT, nodes, "N", "number of nodes (default 1)", CLI_MIN, 1},
      {"bucket-cap-mb", 0, CLI_DOUBLE, cap, "X", "DDP's bucket_cap_mb (default: not given, DDP's " CLI_TEXT(REDUCER_DEFAULT_CAP) ")", CLI_MIN | CLI_MAX,
       SIM_MIN_BUCKET_MB, SIM_MAX_BUCKET_MB, .must = SIM_BUCKET_MB_MUST},
      {0}};
  memcpy(t, table, sizeof table);
}

const char *const simopts_known[] = {
    "model", "topology", "profile", "gpus-per-node", "batch", "precision", "first-bucket-mb", "rebuilt", "bucket-view",
    "static-graph", "pytorch", "find-unused-parameters", "gradient-as-bucket-view", "bucket-cap-mb-list", "ddp-iteration", "no-broadcast-buffers", "mode", "fidelity", "iterations", "no-sync", "comm-hook", "jitter-cv", "jitter-ci", "seed", "nccl-algo",
    "nccl-proto", "num-workers", "load-ms", "pin-memory", "non-blocking", "prefetch", "no-h2d", "framework", "fsdp-units",
    "fsdp-reshard-after-forward", "fsdp-param-dtype", "fsdp-reduce-dtype", "fsdp-forward-prefetch", "fsdp-replicate",
    "backend", "host-jitter-us", "host-launch-us", "host-dispatch-us", "measured-step-s", "dp-backward-gil", "dp-gil-share", "dp-handover-us", "no-symmetry", "events", "no-gpu-sharing", "nodes", "bucket-cap-mb", "json", "csv", "trace",
    /* sim/cli/buyopts.c */
    "optimizer", "allow-oom", "samples", "epochs", "dataset-size", "price", "prices", "grid-kgco2-per-kwh", "max-hours",
    /* sim/cli/cmd_compare.c */
    "setup", NULL};

int simopts_check(cli_ctx *x, const simopts *o) {
  if (o->no_h2d && (o->pin || o->nonblocking || o->prefetch))
    return cli_usage(x, "--no-h2d contradicts --pin-memory, --non-blocking and --prefetch");
  /* The Reducer's knobs as the config will carry them (nothing loaded is needed for these). */
  sim_config c;
  reducer_knobs k;
  simopts_config(o, &(simopts_inputs){0}, &c);
  sim_reducer_knobs(&c, &k);
  err_t e;
  if (o->framework == SIM_FRAMEWORK_DDP && reducer_check(&k, o->bucket_view, o->hook, &e)) return cli_usage(x, "%s", e.msg);
  if (o->framework == SIM_FRAMEWORK_DDP && o->rebuilt && c.pytorch > 0 && c.pytorch < REDUCER_VERSION_CPP) {
    char rel[16];
    return cli_usage(x, "--rebuilt: rebuilt buckets are the C++ Reducer's (PyTorch 1.1 on); PyTorch %s's DDP has buckets of its own "
                        "(docs/reducer.md)", reducer_version_name(c.pytorch, rel, sizeof rel));
  }
  if (o->framework == SIM_FRAMEWORK_DP && (o->find_unused || o->static_graph || o->ncap_list || o->ddp_iteration || o->rebuilt))
    return cli_usage(x, "DataParallel has no Reducer: --find-unused-parameters, --static-graph, --bucket-cap-mb-list,\n"
                        "--ddp-iteration and --rebuilt are DDP's");
  if (o->framework == SIM_FRAMEWORK_FSDP &&
      (o->find_unused || o->static_graph || o->ncap_list || o->ddp_iteration || o->rebuilt || o->bucket_view || o->hook || o->first_mb > 0))
    return cli_usage(x, "FSDP has no Reducer: --find-unused-parameters, --static-graph, --bucket-cap-mb-list, --ddp-iteration,\n"
                        "--rebuilt, --gradient-as-bucket-view, --comm-hook and --first-bucket-mb are DDP's");
  if (o->framework == SIM_FRAMEWORK_FSDP && (o->mode != SIM_MODE_DDP || o->no_broadcast_buffers))
    return cli_usage(x, "%s is DDP's: FSDP shards the gradients it reduce-scatters and broadcasts no buffers",
                     o->mode != SIM_MODE_DDP ? "--mode flat" : "--no-broadcast-buffers");
  if (o->framework == SIM_FRAMEWORK_FSDP && c.pytorch > 0 && c.pytorch < FSDP_VERSION_FIRST) {
    char rel[16];
    return cli_usage(x, "--pytorch %s has no FSDP: torch.distributed.fsdp first shipped in PyTorch 1.11 (docs/fsdp.md)",
                     reducer_version_name(c.pytorch, rel, sizeof rel));
  }
  if (o->framework != SIM_FRAMEWORK_FSDP &&
      (o->fsdp_units || o->fsdp_reshard != 1 || o->fsdp_param_dtype >= 0 || o->fsdp_reduce_dtype >= 0 || o->fsdp_forward_prefetch || o->fsdp_replicate))
    return cli_usage(x, "--fsdp-* options are FSDP's: give --framework fsdp");
  return CLI_OK;
}

int simopts_check_cap(cli_ctx *x, const simopts *o, double bucket_cap_mb) {
  if (bucket_cap_mb > 0 && o->framework != SIM_FRAMEWORK_DDP)
    return cli_usage(x, "--bucket-cap-mb is DDP's bucket_cap_mb: %s has no gradient buckets",
                     o->framework == SIM_FRAMEWORK_FSDP ? "FSDP (one reduce-scatter per unit)" : "DataParallel");
  return CLI_OK;
}

/* Resolves a name (data.h) and loads it with load; the status, the message in x. */
#define LOAD(kind, name, load, out)                                          \
  do {                                                                       \
    char path_[1024];                                                        \
    err_t e_;                                                                \
    int rc_ = data_resolve(kind, name, path_, sizeof path_, &e_);            \
    if (!rc_) rc_ = load(path_, out, &e_);                                   \
    return rc_ ? cli_fail(x, rc_, "%s", e_.msg) : CLI_OK;                    \
  } while (0)

int simopts_load_model(cli_ctx *x, const char *name, model_t **m) { LOAD(DATA_MODEL, name, model_load, m); }
int simopts_load_topo(cli_ctx *x, const char *name, topo_t **t) { LOAD(DATA_TOPOLOGY, name, topo_load, t); }
static int load_profile(cli_ctx *x, const char *name, profile_t **p) { LOAD(DATA_PROFILE, name, profile_load, p); }

/* A profile, and on stderr each poor fit it carries (kept by ddpcalib --accept-poor-fit), every
 * time it is used: its numbers are then the user's risk, and they are told so. */
int simopts_load_profile(cli_ctx *x, const char *name, profile_t **p) {
  int rc = load_profile(x, name, p);
  if (rc) return rc;
  int n = profile_nwarnings(*p), shown = 0;
  for (; shown < n && profile_warning(*p, shown); shown++)
    fprintf(stderr, "%s %s: warning: profile %s: %s\n", x->prog, x->where, name, profile_warning(*p, shown));
  if (shown < n) fprintf(stderr, "%s %s: warning: profile %s: %d more poor fits\n", x->prog, x->where, name, n - shown);
  return CLI_OK;
}

int simopts_warn_unused(const cli_ctx *x, const simopts *o, const model_t *m) {
  /* A parameter the recorded step gave no gradient (the `unused` marker): without
   * find_unused_parameters DDP's Reducer waits for its gradient and the next iteration raises
   * ("Expected to have finished reduction in the prior iteration", reducer.cpp); the prediction
   * is for the run that passes the flag. DataParallel has no Reducer. */
  int unused = 0, first = -1;
  for (int i = 0; i < m->nparams; i++)
    if (m->params[i].unused && unused++ == 0) first = i;
  if (!(unused && o->framework == SIM_FRAMEWORK_DDP && !o->find_unused)) return 0;
  fprintf(stderr,
          "%s %s: warning: model %s records %d parameter(s) that get no gradient ('%s'%s): real DDP stops with an\n"
          "  error for them unless DDP(find_unused_parameters=True); give --find-unused-parameters to predict that run\n",
          x->prog, x->where, m->name, unused, m->params[first].name, unused > 1 ? ", ..." : "");
  return 1;
}

int simopts_warn_measured(const cli_ctx *x, const sim_config *c) {
  /* Measured op times another profile or scenario cannot use: the ops are priced by the profile's
   * cost models instead (sim/cost.h); the report says so too. */
  cost_measured_info mi;
  cost_measured(c, sim_batch(c), sim_precision(c), &mi);
  if (!mi.ops || mi.used) return 0;
  fprintf(stderr, "%s %s: warning: model %s: its measured op times (%d ops, on %s) are ignored: %s; the profile's cost "
                  "models price every op\n", x->prog, x->where, c->model->name, mi.ops, mi.device, mi.why);
  return 1;
}

int simopts_warn_fp32_math(const cli_ctx *x, const sim_config *c) {
  cost_fp32_math_info fi;
  char rel[32];
  cost_fp32_math(c, sim_precision(c), &fi);
  reducer_version_name(c->pytorch, rel, sizeof rel);
  if (fi.matmuls)
    fprintf(stderr, "%s %s: warning: model %s: %d fp32 matmul(s) priced by profile %s's TF32 GEMM costs "
                    "(compute.fp32.gemm.math), but PyTorch %s runs fp32 matmuls strict unless\n"
                    "  torch.backends.cuda.matmul.allow_tf32 is set: predicted too fast (docs/profile.md, \"fp32 math\")\n",
            x->prog, x->where, c->model->name, fi.matmuls, profile_name(c->profile), rel);
  if (fi.convs)
    fprintf(stderr, "%s %s: warning: model %s: %d fp32 convolution(s) priced by profile %s's strict-fp32 GEMM costs "
                    "(compute.fp32.gemm.math), but cuDNN runs\n  them in TF32 (torch.backends.cudnn.allow_tf32, on "
                    "since PyTorch 1.7): predicted too slow (docs/profile.md, \"fp32 math\")\n",
            x->prog, x->where, c->model->name, fi.convs, profile_name(c->profile));
  return fi.matmuls || fi.convs;
}

int simopts_read_profile_doc(cli_ctx *x, const char *name, char *path, size_t len, cJSON **doc) {
  err_t e;
  int rc = data_resolve(DATA_PROFILE, name, path, len, &e);
  size_t n = 0;
  char *text = rc ? NULL : txt_read_file(path, &n);
  if (!rc && !text) return cli_fail(x, ERR_IO, "%s: cannot read", path);
  if (!rc) rc = profile_json_parse(text, n, path, doc, &e);
  free(text);
  return rc ? cli_fail(x, rc, "%s", e.msg) : CLI_OK;
}

int simopts_not_input(cli_ctx *x, const simopts *o, const char *out_flag, const char *out, const char *extra_flag,
                      const char *extra) {
  char paths[3][1024];
  const char *flags[4] = {"--model", "--topology", "--profile", extra_flag}, *in[4] = {NULL, NULL, NULL, extra};
  const char *names[3] = {o->model, o->topology, o->profile};
  err_t e;
  for (int i = 0; i < 3; i++) in[i] = data_resolved((data_kind)i, names[i], paths[i], sizeof paths[i]);
  int rc = afile_not_input(out_flag, out, flags, in, 4, &e);
  return rc ? cli_fail(x, rc, "%s", e.msg) : CLI_OK;
}

int simopts_load(cli_ctx *x, const simopts *o, simopts_inputs *in) {
  memset(in, 0, sizeof *in);
  int rc;
  if ((rc = simopts_load_model(x, o->model, &in->model)) || (rc = simopts_load_topo(x, o->topology, &in->topo)) ||
      (rc = simopts_load_profile(x, o->profile, &in->profile))) {
    simopts_inputs_free(in);
    return rc;
  }
  simopts_warn_unused(x, o, in->model);
  return CLI_OK;
}

void simopts_inputs_free(simopts_inputs *in) {
  model_destroy(in->model);
  topo_destroy(in->topo);
  profile_destroy(in->profile);
  memset(in, 0, sizeof *in);
}

void simopts_config(const simopts *o, const simopts_inputs *in, sim_config *c) {
  sim_config_defaults(c);
  c->model = in->model;
  c->topo = in->topo;
  c->profile = in->profile;
  c->gpus_per_node = o->gpus_per_node;
  c->batch = o->batch;
  c->precision = o->precision;
  c->pytorch = o->pytorch;
  c->first_bucket_mb = o->first_mb;
  c->layout = o->rebuilt ? SIM_LAYOUT_REBUILT : SIM_LAYOUT_REDUCER;
  c->find_unused = o->find_unused;
  c->broadcast_buffers = !o->no_broadcast_buffers;
  c->static_graph = o->static_graph;
  c->ddp_iteration = o->ddp_iteration;
  c->ncap_list = o->ncap_list;
  for (int i = 0; i < o->ncap_list; i++) c->cap_list_mb[i] = o->cap_list_mb[i];
  c->bucket_view = o->bucket_view;
  c->mode = (sim_mode)o->mode;
  c->fidelity = (sim_fidelity)o->fidelity;
  c->iterations = o->iterations;
  c->no_sync = o->no_sync;
  c->comm_hook = (sim_comm_hook)o->hook;
  c->jitter_cv = o->jitter_cv;
  c->seed = o->seed;
  c->jitter_ci_rel = o->jitter_ci;
  c->nccl_algos = o->nccl_algos;
  c->nccl_protos = o->nccl_protos;
  c->workers = o->workers;
  c->framework = (sim_framework)o->framework;
  c->fsdp_units = o->fsdp_units;
  c->fsdp_reshard = o->fsdp_reshard;
  c->fsdp_param_dtype = o->fsdp_param_dtype;
  c->fsdp_reduce_dtype = o->fsdp_reduce_dtype;
  c->fsdp_forward_prefetch = o->fsdp_forward_prefetch;
  c->fsdp_replicate = o->fsdp_replicate;
  c->host_launch_s = o->host_launch_us < 0 ? -1 : o->host_launch_us * 1e-6;
  c->host_dispatch_s = o->host_dispatch_us < 0 ? -1 : o->host_dispatch_us * 1e-6;
  c->host_event_s = o->host_event_us < 0 ? -1 : o->host_event_us * 1e-6;
  c->measured_step_s = o->measured_step_s;
  c->dp_backward_gil = o->dp_backward_gil;
  c->backend = o->backend >= 0 ? (sim_backend)o->backend : sim_default_backend(c->framework, c->pytorch);
  c->host_jitter_s = o->host_jitter_us < 0 ? -1 : o->host_jitter_us * 1e-6;
  c->dp_gil_share = o->dp_gil_share;
  c->dp_handover_s = o->dp_handover_us * 1e-6;
  c->symmetry = !o->no_symmetry;
  c->events = o->events;
  c->gpu_sharing = !o->no_gpu_sharing;
  c->load_s = o->load_ms * 1e-3;
  /* PyTorch: non_blocking only matters for pinned memory; a prefetcher copies pinned batches. */
  c->h2d = o->no_h2d ? SIM_H2D_OFF
         : o->prefetch ? SIM_H2D_PREFETCH
         : o->pin && o->nonblocking ? SIM_H2D_PINNED_ASYNC
         : o->pin ? SIM_H2D_PINNED
         : o->nonblocking ? SIM_H2D_PAGEABLE
                          : SIM_H2D_AUTO;
}

int simopts_warn_optimizer(const cli_ctx *x, const sim_config *c) {
  int n = model_foreach_ops(c->model);
  int rel_v = c->pytorch > 0 ? c->pytorch : REDUCER_VERSION_LATEST;
  if (!n || rel_v >= SIM_FOREACH_FIRST) return 0;
  char rel[32];
  reducer_version_name(c->pytorch, rel, sizeof rel);
  fprintf(stderr, "%s %s: warning: model %s: its optimizer is torch.optim's foreach step (%d ops), the default on CUDA from "
                  "PyTorch 2.0; PyTorch %s ran the for-loop\n  one (a kernel per parameter and op): export with "
                  "--optimizer-impl forloop to predict that run\n",
          x->prog, x->where, c->model->name, n, rel);
  return 1;
}

int simopts_setup(cli_ctx *x, const cli_cmd *c, int argc, char **argv, simopts *o, const char *const *required,
                  const char *missing, int *nodes, double *bucket_cap_mb, simopts_inputs *in, sim_config *cfg) {
  int rc = cli_parse(x, c, argc, argv, NULL, NULL, stdout);
  if (!rc) rc = simopts_check(x, o);
  if (!rc) rc = simopts_check_cap(x, o, *bucket_cap_mb);
  if (!rc && required && !*required) rc = cli_usage(x, "%s", missing);
  if (rc || (rc = simopts_load(x, o, in))) return rc;
  simopts_config(o, in, cfg);
  cfg->nodes = *nodes;
  cfg->bucket_cap_mb = *bucket_cap_mb;
  simopts_warn_measured(x, cfg);
  simopts_warn_fp32_math(x, cfg);
  simopts_warn_optimizer(x, cfg);
  return CLI_OK;
}
