/* cmd_compare: `ddpsim compare`: one job on two or more setups, side by side (sim/compare.h). */
#include <stdlib.h>
#include <string.h>

#include "buyopts.h"
#include "cmd.h"
#include "compare.h"
#include "out.h"
#include "simopts.h"

static const char *usage =
    "usage: ddpsim compare --setup SETUP --setup SETUP [--setup ...] [options] [--json]\n"
    "\n"
    "Predicts one job (model, batch, precision, release and the scenario options) on two or more\n"
    "setups and prints them side by side: iteration, throughput, scaling efficiency, memory and\n"
    "whether it fits; with --samples or --epochs the time to train, GPU-hours, cost and energy;\n"
    "and their lo..hi (--no-interval: the nominal figures only). Then the decision's margin, the first setup against each other:\n"
    "  \"dgx1v-ib x4 saves 18.1% of the time for 2.4% more cost; within the uncertainty: yes\".\n"
    "A SETUP is KEY=VALUE,... with keys topology, profile, nodes, gpus-per-node, framework (ddp, dp or\n"
    "fsdp: \"DDP or FSDP?\" in one command), fsdp-reshard-after-forward, fsdp-replicate (as the flags),\n"
    "price (per GPU-hour: a number, auto or a class of the price table, as --price) and name (the\n"
    "column's label; setups labelled alike are told apart by what differs); each key at most once,\n"
    "a key left out takes the command's own flag; the --fsdp-* flags apply to the FSDP setups.\n"
    "--price auto prices each setup's card from the table.\n"
    "\n";

typedef struct {
  int n;
  const char *text[COMPARE_MAX_SETUPS];
} setup_list;

static int add_setup(const char *s, void *dest) {
  setup_list *l = dest;
  if (l->n >= COMPARE_MAX_SETUPS) return -1;
  l->text[l->n++] = s;
  return 0;
}

/* The price of a setup: its own price= (a number, auto or a class), else the command's --price;
 * a class is looked up for the setup's profile once it is loaded (buyopts_price). */
static int setup_price(cli_ctx *x, compare_entry *en, const buyopts *bo, int budget, const char **cls) {
  en->job.price_per_gpu_hour = bo->price;
  *cls = bo->price_class[0] ? bo->price_class : NULL;
  if (!en->setup.price[0]) return CLI_OK;
  if (buyopts_parse_price(en->setup.price, &en->job.price_per_gpu_hour, cls))
    return cli_usage(x, "--setup price= %s, got '%s'", BUYOPTS_PRICE_MUST, en->setup.price);
  if (!budget) return cli_usage(x, "--setup price= needs the samples to train: --samples N or --epochs E --dataset-size S");
  return CLI_OK;
}

int cmd_compare(cli_ctx *x, int argc, char **argv) {
  simopts o;
  simopts_init(&o);
  int nodes, json = 0;
  double cap;
  setup_list setups = {0};
  cli_opt common[SIMOPTS_COUNT], own[SIMOPTS_JOB_COUNT];
  simopts_table(&o, common);
  simopts_job_table(&nodes, &cap, own);
  const cli_opt out[] = {
      {"setup", 0, CLI_CUSTOM, &setups, "SETUP",
       "a setup: topology=T,profile=P,nodes=N[,gpus-per-node=G][,framework=F][,price=X][,name=L]\n(two or more; keys left out: the flags below)",
       .parse = add_setup, .must = "must be given at most 16 times"},
      {"json", 0, CLI_FLAG, &json, NULL, "print one JSON object instead of the table"},
      {0}};
  buyopts bo;
  buyopts_init(&bo);
  cli_opt buy_all[BUYOPTS_COUNT], buy[BUYOPTS_COUNT];
  buyopts_table(&bo, buy_all);
  static const char *const buy_names[] = {"optimizer", "samples",  "epochs", "dataset-size", "price", "prices",
                                          "grid-kgco2-per-kwh", "interval", "no-interval", "draws", "level", NULL};
  cli_select(buy_all, buy_names, buy);
  const cli_opt *tables[] = {out, own, common, buy, NULL};
  const cli_cmd c = {.usage = usage, .tables = tables, .elsewhere = simopts_known};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  /* Each setup's options are checked with its framework (below); the command's own as given where
   * no setup is FSDP, and with a setup's framework where none is DDP, so that an --fsdp-* flag or a
   * DDP flag no setup can use is refused. */
  int any_fsdp = o.framework == SIM_FRAMEWORK_FSDP, any_ddp = 0, other = o.framework;
  for (int i = 0; !rc && i < setups.n; i++) { /* a setup's own errors are reported below */
    compare_setup t;
    err_t e;
    int f = !compare_setup_parse(setups.text[i], &t, &e) && t.framework >= 0 ? t.framework : o.framework;
    any_fsdp |= f == SIM_FRAMEWORK_FSDP;
    any_ddp |= f == SIM_FRAMEWORK_DDP;
    if (f != SIM_FRAMEWORK_DDP) other = f;
  }
  if (!rc && !any_fsdp) rc = simopts_check(x, &o);
  if (!rc && !any_ddp) { /* DDP's flags where no setup is DDP: checked with a setup's framework */
    simopts t = o;
    t.framework = other;
    if (!(rc = simopts_check(x, &t))) rc = simopts_check_cap(x, &t, cap);
  }
  if (!rc) rc = buyopts_check(x, &bo);
  if (!rc && setups.n < 2) rc = cli_usage(x, "--setup: give two or more setups to compare (got %d)", setups.n);
  if (rc) return rc;
  budget_job job;
  int budget = buyopts_job(&bo, &job);

  compare_entry *v = calloc((size_t)setups.n, sizeof *v);
  simopts_inputs *in = calloc((size_t)setups.n, sizeof *in);
  model_t *model = NULL;
  buyopts_validated known = {0};
  const char *cls[COMPARE_MAX_SETUPS] = {0};
  int done = 0;
  if (!v || !in) {
    rc = out_text(x, NULL);
    goto end;
  }
  for (int i = 0; i < setups.n; i++) {
    err_t e;
    if ((rc = compare_setup_parse(setups.text[i], &v[i].setup, &e))) {
      rc = cli_usage(x, "--setup '%s': %s", setups.text[i], e.msg);
      goto end;
    }
    if ((rc = setup_price(x, &v[i], &bo, budget, &cls[i]))) goto end;
  }
  if ((rc = simopts_load_model(x, o.model, &model))) goto end;
  simopts_warn_unused(x, &o, model);
  for (int i = 0; i < setups.n; i++) {
    compare_entry *en = &v[i];
    const compare_setup *s = &en->setup;
    simopts os = o;
    if (s->topology[0]) os.topology = s->topology;
    if (s->profile[0]) os.profile = s->profile;
    if (s->gpus_per_node) os.gpus_per_node = s->gpus_per_node;
    if (s->framework >= 0) os.framework = s->framework;
    if (s->fsdp_reshard >= 0) os.fsdp_reshard = s->fsdp_reshard;
    if (s->fsdp_replicate) os.fsdp_replicate = s->fsdp_replicate;
    if (os.framework != SIM_FRAMEWORK_FSDP && (s->fsdp_reshard >= 0 || s->fsdp_replicate)) {
      rc = cli_usage(x, "setup %d: fsdp-reshard-after-forward= and fsdp-replicate= are FSDP's: give framework=fsdp", i + 1);
      goto end;
    }
    /* The --fsdp-* flags apply to the FSDP setups alone, DDP's (--bucket-cap-mb too) to the DDP ones. */
    double scap = cap;
    if (any_fsdp) {
      simopts_own_knobs(&os, &scap);
      if ((rc = simopts_check(x, &os)) || (rc = simopts_check_cap(x, &os, scap))) goto end;
    }
    if ((rc = simopts_load_topo(x, os.topology, &in[i].topo)) || (rc = simopts_load_profile(x, os.profile, &in[i].profile))) goto end;
    if (o.measured_step_s > 0 && i > 0 && in[i].profile != in[0].profile) {
      rc = cli_usage(x, "--measured-step-s is one GPU's step on one card: setups %d and 1 have different profiles (%s, %s)", i + 1,
                     profile_name(in[i].profile), profile_name(in[0].profile));
      goto end;
    }
    in[i].model = model;
    en->profile_arg = s->profile[0] ? s->profile : o.profile;
    simopts_config(&os, &in[i], &en->cfg);
    en->cfg.nodes = s->nodes ? s->nodes : nodes;
    en->cfg.bucket_cap_mb = scap;
    en->optim = (model_optim)bo.optim;
    en->has_budget = budget;
    double price = en->job.price_per_gpu_hour;
    en->job = job;
    en->job.price_per_gpu_hour = price;
    if (budget && cls[i]) {
      if ((rc = buyopts_price(x, &bo, cls[i], en->cfg.profile, &en->job, en->price_note, sizeof en->price_note))) goto end;
    }
    err_t e;
    if ((rc = compare_entry_run(en, &e))) {
      rc = rc == ERR_USAGE ? cli_usage(x, "setup %d: %s", i + 1, e.msg) : cli_fail(x, rc, "setup %d: %s", i + 1, e.msg);
      goto end;
    }
    done = i + 1;
    if (bo.interval) {
      if ((rc = buyopts_interval(x, &bo, os.profile, &en->cfg, en->p.sim.iteration_s, en->p.sim.jittered, 1, &known, &en->iv))) goto end;
      en->has_iv = 1;
    }
  }
  compare_labels_distinct(v, setups.n);
  rc = json ? out_json(x, compare_json(v, setups.n)) : out_text(x, compare_table(v, setups.n));
end:
  for (int i = 0; v && i < done; i++) compare_entry_free(&v[i]);
  for (int i = 0; in && i < setups.n; i++) {
    in[i].model = NULL; /* shared: destroyed once below */
    simopts_inputs_free(&in[i]);
  }
  model_destroy(model);
  free(in);
  free(v);
  return rc;
}
