/* framework: the frameworks as a table, one row each (DDP, DataParallel, FSDP2), as sim/coll.c's
 * collectives and sim/ncclmodel.c's algorithms are: what `sim_run` (sim/sim.c), `ddpsim plan`, the
 * memory per GPU (sim/memory.c) and predict's 1-GPU twin (sim/predict.c) do differently for each,
 * read from its row, never by testing which framework it is.
 *
 * A row holds the framework's plan builder (below the engine: sim/plan.h's plan_build, sim/dp.h,
 * sim/fsdp.h), its readout of the engine's record (above it: sim/readout.h, and a framework's own
 * part after or instead of it), its printout of the plan (`ddpsim plan`) and, for a framework that
 * shards the model, the ranks a shard is of and each parameter's shard. Its name is the scenario's
 * (sim_framework_names, sim/scenario.c); which report fields it has is the field table's
 * `frameworks` bits, 1 << its sim_framework value (sim/fields.h). Adding a framework is its enum
 * value and name (sim/scenario.{h,c}), its builder module and its row here (docs/architecture.md). */
#ifndef DDPSIM_FRAMEWORK_H
#define DDPSIM_FRAMEWORK_H

#include <stdio.h>

#include "err.h"
#include "plan.h"
#include "record.h"
#include "scenario.h"

typedef struct {
  sim_framework id;
  /* The plan of c (free with plan_free); ERR_USAGE for a configuration it cannot simulate. */
  int (*build)(const sim_config *c, plan_t *p, err_t *e);
  /* *r from the engine's record of the built plan (r zeroed by the caller). */
  int (*readout)(plan_t *p, record_t *rec, sim_result *r, err_t *e);
  /* The plan as `ddpsim plan` prints it. */
  int (*write)(FILE *f, const plan_t *p, err_t *e);
  /* A framework that shards the model: the ranks a shard is of, and parameter pm's elements in one
   * rank's shard of `world`; NULL, NULL for one that keeps every parameter whole on every rank. */
  int (*shard_world)(const sim_config *c);
  long (*shard_numel)(const model_param *pm, int world);
} framework_row;

/* The row of framework f; NULL outside the table. */
const framework_row *framework_get(sim_framework f);

/* The ranks one shard of c's model is of (1 where its framework does not shard). */
int framework_shard_world(const sim_config *c);

#endif
