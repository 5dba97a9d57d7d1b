/* fsdp: PyTorch's FSDP2 (torch.distributed.fsdp.fully_shard) as a builder of the stream program
 * (sim/program.h), beside DDP's (sim/plan.c). docs/fsdp.md cites the source every rule below is read
 * from (torch/distributed/fsdp/_fully_shard/ at the release pinned by scripts/setup_python.sh).
 *
 * Units. fully_shard is applied to each unit module and then to the root: a unit's parameters are
 * sharded together (each one cut along dim 0 into `world` chunks of ceil(dim0 / world) rows, the
 * last ones padded), all-gathered before the unit's forward (and again before its backward when it
 * reshards after forward) and reduce-scattered after its backward; the root owns every parameter no
 * unit holds. Units are module paths (the parameters' names up to a dot): those matching
 * sim_config.fsdp_units (comma-separated globs whose `*` stays within one dotted name), or by
 * default every module whose name ends in a number at the shallowest depth where one does (a
 * ModuleList's blocks, a Sequential's stages). A model op belongs to the unit whose path, or a
 * tail of it holding a name that is not a number, begins the op's name (the exporter names ops by
 * module path; the generators by the block's name); a unit's ops run between its first and last.
 * Where the backward ops' names disagree with the gradients (ready=), each unit's backward runs from
 * the end of the one before it to its last gradient.
 *
 * The iteration on each rank (docs/fsdp.md, "The program"): the compute stream runs forward, waiting
 * before each unit for its all-gather and copying the gathered parameters out; backward, each unit
 * waiting for its all-gather when it resharded, then after its ops waiting for the previous
 * reduce-scatter (FSDP keeps one reduce-scatter input buffer) and copying its gradients in; then
 * waits for the last reduce-scatter and runs the optimizer on the local shard. A copy-in stream
 * copies each all-gather's input in the order the host issued them (never before the host issued
 * one; in forward not before the copy-out two units back, whose buffer it reuses), an all-gather
 * stream plays each once its copy is done; a reduce-scatter stream plays each reduce-scatter once
 * the compute stream has copied its input (HSDP: an all-reduce stream each all-reduce after its
 * reduce-scatter).
 * The host issues everything in the order FSDP's hooks do; its clock is sim/pipe.h's. */
#ifndef DDPSIM_FSDP_H
#define DDPSIM_FSDP_H

#include <stdio.h>

#include "engine.h"
#include "err.h"
#include "model.h"
#include "plan.h"
#include "scenario.h"

/* The first PyTorch release with FSDP (torch.distributed.fsdp, FullyShardedDataParallel: 1.11,
 * docs/fsdp.md), in sim_config.pytorch's numbering (sim/reducer.h): an FSDP run of an older one is
 * misuse. The releases from 1.11 on are modelled as FSDP2 at the pinned release (docs/fsdp.md). */
#define FSDP_VERSION_FIRST 111

/* One unit: the root (index 0, path "") or a module fully_shard was applied to. */
typedef struct {
  char path[MODEL_NAME_MAX];
  int nparams;
  long numel;                 /* its parameters' elements, unsharded */
  long shard_numel;           /* one rank's shard, padding included */
  int nreduced;               /* its parameters that get a gradient (not `unused`): reduce-scattered */
  long reduced_shard_numel;   /* their shard */
  double ag_bytes, rs_bytes;  /* the all-gather's output (every parameter), the reduce-scatter's input
                                 (the reduced ones: FSDP skips a parameter without a gradient,
                                 reduce_scatter_unused_params False) */
  double param_bytes;         /* unsharded, at the parameters' own types (the memory model's) */
  model_dtype dtype;          /* its parameters' own type (FSDP requires one per unit) */
  int first_param;            /* its first parameter's index in registration order (trainable, then
                                 frozen): named_modules() order */
  int late;                   /* its forward inputs took no gradient (the model's no_input_grad): FSDP
                                 hooks no post-backward on it, so it reduces in the final callback */
  int fwd_first, fwd_last;    /* its ops' first and last index in forward and backward (-1: none) */
  int ready_first, ready_last; /* the first and last op making one of its gradients final (-1: none) */
  int bwd_first, bwd_last;
} fsdp_unit;

/* The ranks a parameter is sharded over: every rank, or under HSDP (fsdp_replicate > 1) one replica's. */
int fsdp_shard_world(const sim_config *c);

/* One rank's shard of parameter pm among `world` ranks, padding included: ceil(dim0 / world) rows
 * of dim 0 (FSDPParam's torch.chunk along dim 0; a scalar is one row). */
long fsdp_shard_numel(const model_param *pm, int world);

/* The units of the config's model for `world` ranks, root first, the others in forward order
 * (*units: caller frees). ERR_USAGE for a pattern that matches nothing or nested units; ERR_INPUT
 * for a unit no op names, or units whose ops interleave. */
int fsdp_units(const sim_config *c, int world, fsdp_unit **units, int *n, err_t *e);

/* Builds FSDP's plan (plan_begin, its units, collectives and program, plan_end) into *p; free with
 * plan_free. ERR_USAGE for a combination FSDP or this model does not have (another backend, no_sync,
 * a trace), others as plan_build. */
int fsdp_build(const sim_config *c, plan_t *p, err_t *e);

/* Adds to *r (after readout_ddp, sim/readout.h) each collective of the last iteration as rank 0
 * played it, in the order the host issued them (sim_result.fsdp). ERR_NOMEM. */
int fsdp_readout(const plan_t *p, const record_t *rec, sim_result *r, err_t *e);

/* Writes the plan (`ddpsim plan`): the job, each unit, what each rank's host issues in order (the
 * `fsdp_issue` lines: all_gather UNIT BYTES, forward UNIT, backward, reduce_scatter UNIT BYTES, UNIT
 * `<root>` for the root; tests/torch/fsdp_oracle.py compares them with real FSDP's) and the program.
 * ERR_IO if writing fails. */
int fsdp_write(FILE *f, const plan_t *p, err_t *e);

#endif
