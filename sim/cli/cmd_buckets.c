/* cmd_buckets: `ddpsim buckets`, DDP's gradient bucket assignment for a model. */
#include "bucket.h"
#include "cmd.h"
#include "out.h"
#include "plan.h"
#include "report.h"
#include "simopts.h"

static const char *usage_buckets =
    "usage: ddpsim buckets [--model M] [--bucket-cap-mb X] [--pytorch VERSION] [--ddp-iteration K]\n"
    "                      [--find-unused-parameters] [--static-graph] [--bucket-cap-mb-list LIST]\n"
    "                      [--first-bucket-mb Y] [--precision fp32|fp16] [--rebuilt] [--mode ddp|flat]\n"
    "                      [--backend nccl|gloo|mpi]\n"
    "                      [--nodes N [--gpus-per-node G] [--topology T] [--profile P]] [--json]\n"
    "\n"
    "Prints the gradient buckets DDP all-reduces in its steady state (or in iteration K), in\n"
    "reduction order, with bytes and parameter names and registration indices (0-based), exactly\n"
    "as the Reducer of that PyTorch release assigns them (docs/reducer.md). With --nodes, each\n"
    "bucket's all-reduce on that job as NCCL's model prices it on an idle network (sim/ncclmodel.c),\n"
    "with algbw and busbw as nccl-tests defines them, to set beside an all_reduce_perf log.\n"
    "\n";

int cmd_buckets(cli_ctx *x, int argc, char **argv) {
  simopts o;
  simopts_init(&o);
  int json = 0, nodes = 0;
  double cap = 0;
  cli_opt common[SIMOPTS_COUNT], shared[16];
  simopts_table(&o, common);
  cli_select(common,
             (const char *const[]){"model", "pytorch", "find-unused-parameters", "static-graph", "bucket-cap-mb-list",
                                   "first-bucket-mb", "ddp-iteration", "precision", "rebuilt", "mode", "gpus-per-node",
                                   "topology", "profile", "backend", NULL},
             shared);
  const cli_opt own[] = {
      {"bucket-cap-mb", 0, CLI_DOUBLE, &cap, "X", "DDP's bucket_cap_mb (default: not given, DDP's " CLI_TEXT(REDUCER_DEFAULT_CAP) ")",
       CLI_MIN | CLI_MAX, SIM_MIN_BUCKET_MB, SIM_MAX_BUCKET_MB, .must = SIM_BUCKET_MB_MUST},
      {"nodes", 0, CLI_INT, &nodes, "N", "price each bucket's all-reduce on N nodes (algbw, busbw)", CLI_MIN | CLI_MAX, 1,
       PLAN_MAX_GPUS},
      {0}};
  const cli_opt tail[] = {{"json", 0, CLI_FLAG, &json, NULL, "print one JSON object instead of the table"}, {0}};
  const cli_opt *tables[] = {shared, own, tail, NULL};
  const cli_cmd c = {.usage = usage_buckets, .tables = tables, .elsewhere = simopts_known};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (!rc) rc = simopts_check(x, &o);
  model_t *m = NULL;
  if (rc || (rc = simopts_load_model(x, o.model, &m))) return rc;
  model_dtype prec = o.precision >= 0 ? (model_dtype)o.precision : m->precision;
  simopts_inputs in = {.model = m};
  sim_config cfg;
  simopts_config(&o, &in, &cfg);
  cfg.bucket_cap_mb = cap;
  {
    /* the cap is this command's own option: checked against the release here */
    reducer_knobs k;
    err_t ke;
    sim_reducer_knobs(&cfg, &k);
    if (reducer_check(&k, o.bucket_view, o.hook, &ke)) {
      model_destroy(m);
      return cli_usage(x, "%s", ke.msg);
    }
  }
  reducer_iter it;
  sim_reducer_iteration(&cfg, &it);
  bucket_plan plan;
  err_t e;
  bucket_walk w;
  reducer_walk(&it, &w);
  rc = o.mode == SIM_MODE_FLAT ? bucket_plan_flat(m, prec, &plan, &e) : bucket_plan_walk(m, prec, &w, &plan, &e);
  if (rc) {
    model_destroy(m);
    return cli_fail(x, rc, "%s", e.msg);
  }
  /* With --nodes: the job's plan, whose buckets are these, prices each one's collective. */
  simopts_inputs job = {.model = m};
  plan_t p;
  int planned = 0;
  char what[256];
  report_bucket_comm comm = {0};
  if (nodes > 0 && !(rc = simopts_load_topo(x, o.topology, &job.topo)) && !(rc = simopts_load_profile(x, o.profile, &job.profile))) {
    simopts_config(&o, &job, &cfg);
    cfg.nodes = nodes;
    cfg.bucket_cap_mb = cap;
    if ((rc = plan_build(&cfg, &p, &e))) {
      rc = cli_fail(x, rc, "%s", e.msg);
    } else {
      planned = 1;
      if (p.nb != plan.n) rc = cli_fail(x, ERR_SIM, "internal: the job's plan has %d buckets, not %d", p.nb, plan.n);
      snprintf(what, sizeof what, "%d nodes x %d GPUs, %s, %s", nodes, p.gpus_per_node, job.topo->name, profile_name(job.profile));
      comm = (report_bucket_comm){.ranks = p.ranks, .coll = p.coll, .job = what};
    }
  }
  const report_bucket_comm *cp = nodes > 0 ? &comm : NULL;
  if (!rc) rc = json ? out_json(x, report_buckets_json(m, prec, &plan, cp)) : out_text(x, report_buckets_table(m, prec, &plan, cp));
  if (planned) plan_free(&p);
  topo_destroy(job.topo);
  profile_destroy(job.profile);
  bucket_plan_free(&plan);
  model_destroy(m);
  return rc;
}
