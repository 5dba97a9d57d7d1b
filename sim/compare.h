/* compare: one job predicted on two or more setups (a topology, a profile, a number of nodes),
 * side by side, and the decision's margin in words (`ddpsim compare`, docs/cli.md).
 *
 * A setup is written "topology=T,profile=P,nodes=N[,gpus-per-node=G][,price=X][,name=L]"; a key left
 * out keeps the command's own flag (--topology, --profile, --nodes, --gpus-per-node, --price).
 * Each setup's figures are those of predict (sim/predict.h), its memory (sim/memory.h), its budget
 * (sim/budget.h) and, where asked, its interval (sim/interval.h); the columns are the rows of
 * sim/fields.c's table that sweep writes, read through field_value.
 *
 * The margin of setup b against setup a (the first setup against each other one):
 *   time   train_s with a budget, else the time per sample of all GPUs together (1 / samples_per_s):
 *          the one that takes less is the faster; saved = (t_slow - t_fast) / t_slow
 *   cost   the cost where both have a price, else the GPU-hours (gpu_hours, or gpus / samples_per_s
 *          per sample): change = (c_fast - c_slow) / c_slow, "more" when positive
 *   with both intervals, the time saved's own interval, paired (interval_ratio, sim/interval.h):
 *          setups of one profile document share its draws (draw k is the same profile on both) and,
 *          at one precision, the validated error (the same card's); what they do not share adds in
 *          quadrature. "within the uncertainty: yes" when that interval reaches 0 (which is faster
 *          is then not sure), "no" when it does not. Where that interval has no width though both
 *          are paired (the profile states no uncertainty of what differs), the text says so.
 * "IB saves 18.1% of the time (90%: 17.6% .. 18.4%) for 2.4% more cost; within the uncertainty: no"
 * (resnet50, 90 epochs of ImageNet on 4 DGX-1V, IB at 2.5 and 10 GbE at 2.15 per GPU-hour: docs/cli.md).
 * Library code: never prints. */
#ifndef DDPSIM_COMPARE_H
#define DDPSIM_COMPARE_H

#include <cjson/cJSON.h>

#include "budget.h"
#include "err.h"
#include "interval.h"
#include "memory.h"
#include "predict.h"

#define COMPARE_MAX_SETUPS 16
#define COMPARE_NAME_LEN 64

typedef struct {
  char name[COMPARE_NAME_LEN];  /* name=, else "" (compare_label gives the label shown) */
  char topology[256], profile[256]; /* "" where not given: the command's */
  int nodes;                    /* 0: not given */
  int gpus_per_node;            /* 0: not given */
  char price[64];               /* "" where not given; a number or, as --price takes, a price table's word */
  int framework;                /* sim_framework, or -1: not given ("DDP or FSDP?" in one command) */
  int fsdp_reshard;             /* FSDP's reshard_after_forward (1/0), or -1: not given */
  int fsdp_replicate;           /* HSDP's replicas, or 0: not given */
} compare_setup;

/* Parses one setup's text into *s (zeroed first, framework and fsdp_reshard -1). ERR_USAGE naming
 * the key for an unknown key, a key given twice, an empty value, a nodes/gpus-per-node/fsdp-replicate
 * that is not an integer in 1..1e6, a framework not ddp, dp or fsdp, a reshard not true or false. */
int compare_setup_parse(const char *text, compare_setup *s, err_t *e);

/* One setup predicted: the caller sets setup and cfg (its inputs loaded, owned by the caller), job
 * (has_budget) and optim, runs compare_entry_run, then may set iv (has_iv) from the prediction. */
typedef struct {
  compare_setup setup;
  char label[COMPARE_NAME_LEN]; /* the name, else the topology's name and "xN" nodes (compare_entry_run) */
  sim_config cfg;
  model_optim optim;
  int has_budget;
  budget_job job;
  char price_note[512];         /* where the price came from (prices_note; "": given as a number) */
  predict_result p;
  memory_parts mem;
  budget_result budget;
  int has_iv;
  interval_t iv;
  const char *profile_arg;      /* the profile as given (file or bundled name): which setups share its draws */
} compare_entry;

/* Predicts x->cfg (predict_run), its memory with x->optim (memory_estimate: a setup that does not
 * fit is reported, not refused) and, with has_budget, its budget; fills the label. Errors as those;
 * on failure nothing is left to free. On success compare_entry_free frees the prediction. */
int compare_entry_run(compare_entry *x, err_t *e);
void compare_entry_free(compare_entry *x); /* NULL is a no-op */

/* Makes the labels of v[0..n-1] (after compare_entry_run) distinct: a label two setups share gets
 * what differs between them, "a (profile=p100-dgx1,nodes=2)", the keys among profile, topology,
 * nodes, gpus-per-node, framework and price whose values differ; setups whose labels still meet
 * get their place, "a (setup 2)". Labels no other setup has are kept. */
void compare_labels_distinct(compare_entry *v, int n);

typedef struct {
  int faster, slower;   /* indices into the entries */
  double time_saved;    /* (t_slow - t_fast) / t_slow, in [0, 1) */
  double cost_change;   /* (c_fast - c_slow) / c_slow */
  int by_cost;          /* 1: of the cost; 0: of the GPU-hours (no price for both, or prices in two currencies) */
  int within;           /* 1 yes, 0 no, -1: no interval */
  int paired_draws, paired_kind; /* what the two share (interval_ratio's same_draws, same_kind) */
  double saved_lo, saved_hi;     /* time_saved's interval (with intervals; may reach below 0) */
  char text[320];
} compare_margin;

/* The margin between entries a and b of v (the header's rules). */
void compare_margin_of(const compare_entry *v, int a, int b, compare_margin *m);

/* The `ddpsim compare --json` object: "setups" (each: its name, the setup's columns by sweep's names,
 * null where not known, `<column>_lo`/`_hi` with intervals, the price's note) and "decisions" (the
 * first setup against each other one). NULL when out of memory. */
cJSON *compare_json(const compare_entry *v, int n);

/* The side-by-side table and the decision lines (malloc'd; NULL when out of memory). */
char *compare_table(const compare_entry *v, int n);

#endif
