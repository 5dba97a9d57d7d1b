/* sweep: many configurations simulated, on several local cores at once, their results in order.
 *
 * sweep_run runs an array of configurations (each a sim_config with its own model, topology and
 * profile) and fills one sweep_row per configuration, at the configuration's index, whatever the
 * number of workers: with jobs == 1 in this process, else in `jobs` forked worker processes that
 * take the next configuration as they finish one and write their rows into memory shared with the
 * parent (the simulations themselves already run in a child each, sim/engine.h, so a worker is a
 * process, never a thread). A worker dies with its parent. Rows are plain data (no pointers): they
 * can be copied between processes and machines (sim/sweep_mpi.h) as bytes.
 *
 * sweep_csv and sweep_json write the rows with every column named and its unit in the name
 * (docs/cli.md, "sweep": the column table). Library code: it never prints; progress goes to the
 * caller's callback. */
#ifndef DDPSIM_SWEEP_H
#define DDPSIM_SWEEP_H

#include <cjson/cJSON.h>

#include "err.h"
#include "budget.h"
#include "fields.h"
#include "predict.h"

/* One configuration's result: the number of every column of sim/fields.h's table by field_id
 * (NaN for fields that are not sweep's columns; a name as its enum value: a precision, a
 * framework); times per iteration, seconds. The buyer's figures (sweep_row_buy; NaN where not
 * known or not asked for: null in JSON, empty in CSV): the memory per GPU, whether it fits the card
 * (1, 0), the largest batch that fits; with a budget, the time to train, GPU-hours, cost, energy,
 * CO2 (sim/budget.h); with the interval (sim/interval.h, set by the caller) the iteration's and the
 * throughput's lo/hi. iteration_ci_s is NaN without jitter, or where unknown. */
typedef struct {
  int done;                 /* 1 once the configuration ran (or failed) */
  int status;               /* ERR_OK, or the failure, with msg */
  char msg[1024];           /* err_t's */
  double value[FIELD_COUNT];
  char currency[8];         /* the job's price's currency (budget_job's; "": none or a number given) */
} sweep_row;

typedef enum {
  SWEEP_PREDICT = 0,  /* predict_run: throughput and scaling efficiency (a 1-GPU twin each) */
  SWEEP_ITERATION = 1 /* sim_run only: the iteration and its parts; samples_per_s from it,
                         scaling_efficiency and single_gpu_iteration_s 0 */
} sweep_what;

/* Called in the calling process every `every_s` seconds of wall time (and once at the end) with
 * the configurations done so far. */
typedef void (*sweep_progress_fn)(void *arg, int done, int n, double elapsed_s);

typedef struct {
  int jobs;                 /* >= 1 worker processes; 1: this process */
  sweep_what what;
  sweep_progress_fn progress; /* NULL: none */
  void *progress_arg;
  double every_s;           /* <= 0: 0.5 s */
} sweep_opts;

/* Runs cfgs[0..n-1] and fills rows[0..n-1] (the caller's). When a configuration fails, the others
 * after it are not started; the status is the failure of the lowest-numbered configuration that
 * failed, its message in e (prefixed "configuration K: "), the same for any number of jobs.
 * ERR_IO when workers cannot be started, ERR_SIM when a worker died. */
int sweep_run(const sim_config *cfgs, int n, const sweep_opts *o, sweep_row *rows, err_t *e);

/* A row from the prediction p of configuration c (done, status ERR_OK). */
void sweep_row_fill(const sim_config *c, const predict_result *p, sweep_row *row);

/* Fills a done row's buyer's figures for its configuration c: the memory with optimizer `optim`
 * (sim/memory.h; MODEL_OPTIM_UNKNOWN: the model's), and with a job j (NULL: none) its budget
 * (sim/budget.h). ERR_INPUT (a model with no optimizer) or ERR_USAGE with the message in e. */
int sweep_row_buy(const sim_config *c, model_optim optim, const budget_job *j, sweep_row *row, err_t *e);

/* Each row's throughput over the first row's (rows[0], the reference: 1 there) into its
 * speedup_vs_first column, and where both rows have an interval (ivs[i], NULL: none; nominal_s 0:
 * that row has none) its paired interval (interval_pair, sim/interval.h: the draws and the
 * validated error the two share cancel) into speedup_vs_first_lo/hi, NaN without. */
void sweep_vs_first(const sim_config *cfgs, sweep_row *rows, const interval_t *ivs, int n);

/* One configuration, in this process: the row's status (its message in row->msg). */
int sweep_run_one(const sim_config *c, sweep_what what, sweep_row *row);

/* A CSV of the rows, with a header line: first one column per axis (axis_names[0..naxes-1], the
 * value of row i in axis_values[i * naxes + a]; a name that is one of the columns is left out, the
 * column has it), then the columns of sim/fields.h's table (field_sweep_columns: first the
 * configuration's, then the results'; docs/cli.md lists each with its unit). NULL when out of
 * memory; the caller frees it. */
char *sweep_csv(const sim_config *cfgs, const sweep_row *rows, int n, const char *const *axis_names, int naxes,
                const char *const *axis_values);

/* The same as a JSON object {"axes": [names], "columns": [...], "rows": [{column: value}]}:
 * numbers as numbers, names as strings. NULL when out of memory. */
cJSON *sweep_json(const sim_config *cfgs, const sweep_row *rows, int n, const char *const *axis_names, int naxes,
                  const char *const *axis_values);

#endif
