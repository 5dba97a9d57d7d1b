/* buyopts: the buyer's options (will it fit, how long, how much) that predict and sweep share:
 * the optimizer whose state is counted, whether an OOM is refused, the samples to train (or epochs
 * of a dataset), the price per GPU-hour and the grid's CO2 intensity; and what predict does with
 * them (sim/memory.h, sim/budget.h). Front-end code: messages go into the caller's cli_ctx. */
#ifndef DDPSIM_BUYOPTS_H
#define DDPSIM_BUYOPTS_H

#include "accuracy.h"
#include "budget.h"
#include "cli.h"
#include "interval.h"
#include "memory.h"
#include "sim.h"

typedef struct {
  int optim;          /* model_optim; MODEL_OPTIM_UNKNOWN (0): the model file's */
  int allow_oom;      /* 1: warn instead of refusing a configuration that does not fit */
  double samples;     /* 0: not given */
  double epochs, dataset_size; /* 0: not given */
  double price;       /* per GPU-hour; 0: not given (or given as a class) */
  /* Held as text, not pointers into argv: sweep copies one buyopts per configuration, parsed from
   * buffers it reuses for the next. */
  char price_class[32];    /* --price auto or CLASS: the row of the price table (sim/prices.h); "": none */
  char prices_file[1024];  /* --prices FILE; "": the bundled profiles/prices.tsv */
  double grid;        /* kg CO2 per kWh; 0: not given */
  int interval;       /* 1 (the default): lo/hi of the main figures (sim/interval.h); 0: --no-interval
                         (buyopts_check sets it from the flags below) */
  int interval_asked, no_interval; /* --interval, --no-interval as given */
  int draws;          /* profiles drawn for it (BUYOPTS_DRAWS; -1 until buyopts_check: not given) */
  double level;       /* of the interval, both parts (BUYOPTS_LEVEL; -1 until checked) */
} buyopts;

/* The interval's defaults (their text in --help: CLI_TEXT). */
#define BUYOPTS_DRAWS 16
#define BUYOPTS_LEVEL ACCURACY_LEVEL /* the level `ddpsim accuracy` measures the coverage at */

#define BUYOPTS_COUNT 13 /* entries of the table, its end included */

void buyopts_init(buyopts *b);
void buyopts_table(buyopts *b, cli_opt t[BUYOPTS_COUNT]);

/* What no single option can check: --epochs needs --dataset-size and excludes --samples; --price
 * and --grid-kgco2-per-kwh need one of them; --interval excludes --no-interval. Sets b->interval
 * from those two. CLI_USAGE with the message in x, or CLI_OK. */
int buyopts_check(cli_ctx *x, buyopts *b);

/* --price's value: a number in (0, 1e6] into *price, or `auto` or a class word (a-z, 0-9, '-') into
 * *cls (the text itself). 0, or -1 for anything else. */
int buyopts_parse_price(const char *text, double *price, const char **cls);
#define BUYOPTS_PRICE_MUST "must be a price per GPU-hour in (0, 1e6], auto, or a class of the price table"

/* The price of a class (cls: `auto` or a class word) for profile p, from b's price table, into j:
 * price_per_gpu_hour, currency, and price_source pointing at note (prices_note: date, offer,
 * source; the caller's, len bytes). CLI_OK; a failure (exit 1) naming the table and the classes it
 * has for p when it has no such row, or the table's own error. */
int buyopts_price(cli_ctx *x, const buyopts *b, const char *cls, const profile_t *p, budget_job *j, char *note, size_t len);

/* 1 when a time to train was asked for (--samples, or --epochs with --dataset-size), its job in *j. */
int buyopts_job(const buyopts *b, budget_job *j);

/* The memory of c with b's optimizer. On OOM: refused (the message, exit 1) unless --allow-oom,
 * then a warning on stderr. The status, with *m filled on CLI_OK. */
int buyopts_memory(cli_ctx *x, const buyopts *b, const sim_config *c, memory_parts *m);

/* The validated parts already found, by profile and precision: predicting the published points is
 * the same work for every configuration of one profile and precision (a sweep has many). Zeroed
 * by the caller; nothing to free. */
typedef struct {
  int n;
  struct {
    const profile_t *profile;
    int precision;
    accuracy_error m; /* the validated error model (validate/accuracy.h) */
    int cached;
  } e[16];
} buyopts_validated;

/* The profiles already drawn, by profile and draws: one profile document's draws are the same
 * for every configuration of it (a sweep's rows share them). Zeroed by the caller; free with
 * buyopts_draws_free once the configurations drawn from it are simulated. */
typedef struct {
  int n, cap;
  struct {
    const profile_t *profile;
    int draws;
    profile_draws d;
  } *e;
} buyopts_draws;
void buyopts_draws_free(buyopts_draws *k);

/* The interval's parts apart, for a caller that simulates many configurations' draws at once:
 * buyopts_interval_configs gives the configurations to simulate for c (interval_draws': *cfgs,
 * *n; the caller frees *cfgs), drawing profile_arg's document once into *drawn; then
 * buyopts_interval_finish takes their iteration times t[0..n-1] and adds the measured and
 * validated parts as buyopts_interval does. Each returns the status. */
int buyopts_interval_configs(cli_ctx *x, const buyopts *b, const char *profile_arg, const sim_config *c, int jittered,
                             buyopts_draws *drawn, sim_config **cfgs, int *n);
int buyopts_interval_finish(cli_ctx *x, const buyopts *b, const sim_config *c, double nominal_s, int jittered,
                            const double *t, int n, buyopts_validated *known, interval_t *iv);

/* The interval of c's prediction (nominal iteration nominal_s, jittered as sim_result.jittered
 * says): profile_arg's (a file or bundled name) document drawn b->draws times, simulated in `jobs`
 * processes (sim/interval.h), and the validated error of the published points
 * (validate/published.txt in the data dir: centred on those of the same profile and precision,
 * spread over all), taken from *known when it has them, else from the program's cache
 * (validate/accuracy.h) when its inputs are the ones in use, else predicted; then added to *known
 * (known may be NULL). The status; *iv filled on CLI_OK. */
int buyopts_interval(cli_ctx *x, const buyopts *b, const char *profile_arg, const sim_config *c, double nominal_s,
                     int jittered, int jobs, buyopts_validated *known, interval_t *iv);

#endif
