/* simopts: the scenario options that ddpsim's simulating commands (predict, sweep, recommend,
 * trace) share, as one cli table, and what the front end does with them: load the model, topology
 * and profile they name, and fill a sim_config.
 * Front-end code: messages go into the caller's cli_ctx (cli.h), never to a stream of its own. */
#ifndef DDPSIM_SIMOPTS_H
#define DDPSIM_SIMOPTS_H

#include "cli.h"
#include "model.h"
#include "profile.h"
#include "sim.h"
#include "topo.h"

/* The values of the shared options, as given (defaults from simopts_init; -1: "the input's"). */
typedef struct {
  const char *model, *topology, *profile;
  int gpus_per_node, iterations, rebuilt, no_sync, static_graph, bucket_view;
  int pytorch;          /* release (reducer.h); 0: the latest */
  int find_unused, ddp_iteration, no_broadcast_buffers;
  int ncap_list;        /* --bucket-cap-mb-list */
  double cap_list_mb[REDUCER_MAX_LIMITS];
  double jitter_cv;     /* -1: the profile's */
  double jitter_ci;     /* sim_config.jitter_ci_rel */
  unsigned long seed;
  unsigned nccl_algos, nccl_protos;
  int workers, pin, nonblocking, prefetch, no_h2d, dp_backward_gil;
  int no_symmetry;      /* simulate every GPU even where 2 nodes could stand for all */
  int events;           /* play every event even where the closed form applies */
  int no_gpu_sharing;   /* compute beside NCCL's kernels as if it had the GPU to itself */
  int framework, hook, mode, fidelity; /* sim_framework, sim_comm_hook, sim_mode, sim_fidelity */
  double host_launch_us; /* -1: the profile's */
  double host_dispatch_us; /* -1: the profile's */
  double host_event_us; /* -1: the profile's */
  double measured_step_s; /* 0: none */
  double dp_gil_share, dp_handover_us; /* DataParallel's GIL */
  int backend;           /* sim_backend */
  double host_jitter_us; /* -1: the profile's */
  double load_ms;
  long batch;           /* 0: the model's */
  int precision;        /* model_dtype, -1: the model's */
  double first_mb;
  const char *fsdp_units; /* FSDP's knobs (sim_config's fsdp_*): NULL, the default units */
  int fsdp_reshard, fsdp_param_dtype, fsdp_reduce_dtype, fsdp_forward_prefetch, fsdp_replicate;
} simopts;

#define SIMOPTS_COUNT 52 /* entries of the shared table, its end included */

/* Fills o with the documented defaults (docs/cli.md). */
void simopts_init(simopts *o);

/* Writes the shared options' table, pointing into o, to t (SIMOPTS_COUNT entries, NULL-ended). */
void simopts_table(simopts *o, cli_opt t[SIMOPTS_COUNT]);

/* One configuration's size options, pointing at nodes and cap (defaults 1 and 0: bucket_cap_mb not
 * given, DDP's default) and ended: t
 * needs SIMOPTS_JOB_COUNT entries. predict, trace and plan take them; sweep and recommend take lists. */
#define SIMOPTS_JOB_COUNT 3
void simopts_job_table(int *nodes, double *cap, cli_opt t[SIMOPTS_JOB_COUNT]);

/* --precision's parser (cli_opt.parse): fp32, fp16 or bf16 into an int (model_dtype). */
int simopts_parse_precision(const char *s, void *dest);

/* Every option name some ddpsim command takes (NULL-ended): cli_cmd.elsewhere. */
extern const char *const simopts_known[];

/* Where a command mixes frameworks (sweep's --framework ddp,fsdp, compare's framework= setups), each
 * framework's options apply to its own configurations: this sets the --fsdp-* options back to their
 * defaults in o unless o's framework is FSDP, and DDP's (simopts_ddp_knobs, the options' names; the
 * cap in *bucket_cap_mb where not NULL) unless it is DDP, so that simopts_check and
 * simopts_check_cap pass the others. */
void simopts_own_knobs(simopts *o, double *bucket_cap_mb);
extern const char *const simopts_ddp_knobs[]; /* NULL-ended */

/* Misuse (exit 2, naming the flag) where a --bucket-cap-mb (> 0: given) meets a framework without
 * DDP's buckets; simopts_setup calls it, as sweep does for each configuration. */
int simopts_check_cap(cli_ctx *x, const simopts *o, double bucket_cap_mb);

/* Checks what no single option can: CLI_USAGE with the message in x, or CLI_OK. */
int simopts_check(cli_ctx *x, const simopts *o);

/* The inputs the options name, loaded. */
typedef struct {
  model_t *model;
  topo_t *topo;
  profile_t *profile;
} simopts_inputs;

/* Loads a model, topology or profile from a path or bundled name (data.h); the status, with the
 * message in x on failure. The caller destroys what was loaded. */
int simopts_load_model(cli_ctx *x, const char *name, model_t **m);
int simopts_load_topo(cli_ctx *x, const char *name, topo_t **t);
int simopts_load_profile(cli_ctx *x, const char *name, profile_t **p);

/* A profile's JSON document (its uncertainty), resolved and read as simopts_load_profile reads
 * it; its path in path. The status, the message in x; on CLI_OK the caller cJSON_Deletes *doc. */
int simopts_read_profile_doc(cli_ctx *x, const char *name, char *path, size_t len, cJSON **doc);

/* Refuses (exit 1, common/afile.h's afile_not_input) an output `out` (named by out_flag) that is the
 * file of one of the inputs o names (--model, --topology, --profile, bundled names resolved to
 * their files) or of `extra` (named by extra_flag; NULL: none). CLI_OK, or the failure in x. */
int simopts_not_input(cli_ctx *x, const simopts *o, const char *out_flag, const char *out, const char *extra_flag,
                      const char *extra);

/* All three (topology: o->topology), or the status with nothing left loaded. */
int simopts_load(cli_ctx *x, const simopts *o, simopts_inputs *in);
/* On stderr: a model that records parameters without a gradient (`unused` markers) run as DDP
 * without --find-unused-parameters, which real DDP refuses; 1 if it warned (simopts_load calls it;
 * sweep once per model). */
int simopts_warn_unused(const cli_ctx *x, const simopts *o, const model_t *m);
/* On stderr: a model whose measured op times the run cannot use (sim/cost.h, cost_measured: another
 * device, batch or precision) and why; 1 if it warned (simopts_setup and recommend call it; sweep at
 * its first configuration that ignores them). */
int simopts_warn_measured(const cli_ctx *x, const sim_config *c);
/* On stderr, where an fp32 run's GEMMs are priced at another math than PyTorch runs them
 * (cost_fp32_math); returns 1 when it warned. */
int simopts_warn_fp32_math(const cli_ctx *x, const sim_config *c);
/* Warns (1) where the model's optimizer is the foreach step (model_foreach_ops) and the release
 * predicted is before SIM_FOREACH_FIRST, which ran the for-loop one; 0 otherwise. */
int simopts_warn_optimizer(const cli_ctx *x, const sim_config *c);
void simopts_inputs_free(simopts_inputs *in); /* zeroes it; a zeroed one is a no-op */

/* A sim_config from the defaults, the inputs and the options; nodes and bucket_cap_mb are the
 * caller's (left at their defaults). */
void simopts_config(const simopts *o, const simopts_inputs *in, sim_config *c);

/* One configuration's command line, start to end: parses argv against c (whose tables hold the
 * shared ones, pointing into o), checks it (when `required` is non-NULL, a *required still NULL
 * after parsing is the misuse `missing`), loads the inputs into *in and fills *cfg, nodes and
 * bucket_cap_mb included. The status (CLI_HELP after the help); on CLI_OK the caller frees *in. */
int simopts_setup(cli_ctx *x, const cli_cmd *c, int argc, char **argv, simopts *o, const char *const *required,
                  const char *missing, int *nodes, double *bucket_cap_mb, simopts_inputs *in, sim_config *cfg);

#endif
