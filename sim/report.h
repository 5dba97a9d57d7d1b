/* report: predictions and bucket plans as JSON (cJSON) and as text tables.
 *
 * Builders return new objects or malloc'd strings the caller frees (cJSON_Delete / free), or NULL
 * when out of memory. Nothing here prints. */
#ifndef DDPSIM_REPORT_H
#define DDPSIM_REPORT_H

#include <cjson/cJSON.h>

#include "budget.h"
#include "interval.h"
#include "memory.h"
#include "plan.h"
#include "predict.h"

/* What predict adds to the prediction for a buyer (each NULL where not asked for): the memory per
 * GPU, the budget of a job (job and budget together) and the interval of the main figures. */
typedef struct {
  const memory_parts *mem;
  const budget_job *job;
  const budget_result *budget;
  const interval_t *iv;
} report_buyer;

/* The `ddpsim predict --json` object: every field of sim/fields.c's table that is in the run's
 * framework, in the table's order (documented in docs/cli.md); with b (NULL: none) the buyer's
 * `memory`, `budget` and `interval` objects. */
cJSON *report_predict_json(const sim_config *c, const predict_result *p, const report_buyer *b);
/* Traces are sim/trace.h's. */

/* The human table of `ddpsim predict`: the table's lines in their order, each bucket's timeline,
 * then with b the memory per GPU, the budget and the interval's lines. */
char *report_predict_table(const sim_config *c, const predict_result *p, const report_buyer *b);

/* Each bucket's collective as NCCL's model prices it on a job of `ranks` GPUs (`ddpsim buckets
 * --nodes`): coll[b] for bucket b of the plan (sim/plan.h's plan_coll, its idle-network estimate). */
typedef struct {
  int ranks;
  const plan_coll *coll;
  const char *job; /* "2 nodes x 8 GPUs, dgx1v-ib, v100-dgx1v" */
} report_bucket_comm;

/* The `ddpsim buckets --json` object: buckets in reduction order with bytes, parameter names and
 * registration indices; with comm (non-NULL) each bucket's collective too: algorithm, protocol,
 * the bytes it reduces, NCCL's estimate and the algbw and busbw that gives, as nccl-tests defines
 * them. */
cJSON *report_buckets_json(const model_t *m, model_dtype run, const bucket_plan *plan, const report_bucket_comm *comm);
char *report_buckets_table(const model_t *m, model_dtype run, const bucket_plan *plan, const report_bucket_comm *comm);

/* "# best bucket cap: X MB, Y% faster than the next best (Z MB)" for n >= 2 caps with their
 * iteration times; says so when caps tie with the best (within 1e-9 relative). With the caps'
 * configurations cfgs and intervals ivs (NULL: none), the margin's paired interval
 * (interval_pair, sim/interval.h) follows where both have one. */
char *report_sweep_best(const double *caps_mb, const double *iteration_s, const sim_config *cfgs, const interval_t *ivs, int n);

#endif
