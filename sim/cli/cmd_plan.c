/* cmd_plan: `ddpsim plan`, what the engine would run for one configuration, without running it. */
#include <stdio.h>

#include "cmd.h"
#include "framework.h"
#include "plan.h"
#include "simopts.h"

static const char *usage =
    "usage: ddpsim plan [--nodes N] [--bucket-cap-mb X] [options]\n"
    "\n"
    "Prints the simulation plan of one configuration (what `ddpsim predict` would simulate): the\n"
    "job and how many of its GPUs are simulated, NCCL's channels, each rank's compute, and one line\n"
    "per bucket with its collective (algorithm, protocol, latency term, bytes per edge and per step).\n"
    "\n";

int cmd_plan(cli_ctx *x, int argc, char **argv) {
  simopts o;
  simopts_init(&o);
  int nodes;
  double cap;
  cli_opt common[SIMOPTS_COUNT];
  simopts_table(&o, common);
  cli_opt own[SIMOPTS_JOB_COUNT];
  simopts_job_table(&nodes, &cap, own);
  const cli_opt *tables[] = {own, common, NULL};
  const cli_cmd c = {.usage = usage, .tables = tables, .elsewhere = simopts_known};
  simopts_inputs in;
  sim_config cfg;
  int rc = simopts_setup(x, &c, argc, argv, &o, NULL, NULL, &nodes, &cap, &in, &cfg);
  if (rc) return rc;
  err_t e;
  plan_t p;
  const framework_row *fw = framework_get(cfg.framework); /* simopts_setup took a known name */
  if (!(rc = fw->build(&cfg, &p, &e))) {
    rc = fw->write(stdout, &p, &e);
    plan_free(&p);
  }
  simopts_inputs_free(&in);
  return rc ? cli_fail(x, rc, "%s", e.msg) : CLI_OK;
}
