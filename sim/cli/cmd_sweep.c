/* cmd_sweep: `ddpsim sweep`, predictions over lists of node counts, bucket caps and topologies. */
#include <stdio.h>

#include "cmd.h"
#include "err.h"
#include "out.h"
#include "predict.h"
#include "report.h"
#include "simopts.h"

static const char *usage_sweep =
    "usage: ddpsim sweep [--nodes LIST] [--bucket-cap-mb LIST] [--topology LIST] [options] [--csv]\n"
    "\n"
    "Predicts every combination of the comma-separated lists (e.g. --nodes 1,2,4,8,16\n"
    "--bucket-cap-mb 1,25,100 --topology dgx1v-ib,dgx1v-10gbe) and prints a table, or CSV.\n"
    "\n";

/* --bucket-cap-mb's default: one cap, DDP's when bucket_cap_mb is not given (recognised by address). */
static const char default_caps[] = "25";

/* One topology's rows: every node count at every cap, and the best cap of each node count. */
static int sweep_topology(cli_ctx *x, const simopts *o, simopts_inputs *in, const cli_list *nodes, const cli_list *caps,
                          int csv) {
  int rc = CLI_OK, caps_given = caps->text != default_caps;
  for (int i = 0; i < nodes->n && !rc; i++) {
    double iter_s[CLI_MAX_LIST];
    for (int j = 0; j < caps->n && !rc; j++) {
      sim_config c;
      simopts_config(o, in, &c);
      c.nodes = (int)nodes->i[i];
      c.bucket_cap_mb = caps_given ? caps->d[j] : 0; /* not given: DDP's default */
      predict_result p;
      err_t e;
      if ((rc = predict_run(&c, &p, &e))) return cli_fail(x, rc, "%s", e.msg);
      iter_s[j] = p.sim.iteration_s;
      rc = out_text(x, report_sweep_row(csv, in->topo->name, c.nodes, caps->d[j], &c, &p));
      fflush(stdout);
      predict_result_free(&p);
    }
    if (!rc && caps->n > 1 && !csv) rc = out_text(x, report_sweep_best(caps->d, iter_s, caps->n));
  }
  return rc;
}

int cmd_sweep(cli_ctx *x, int argc, char **argv) {
  simopts o;
  simopts_init(&o);
  int csv = 0;
  cli_list nodes = {.text = "1"}, caps = {.text = default_caps}, topos = {.text = "dgx1v-ib"};
  cli_opt common[SIMOPTS_COUNT];
  simopts_table(&o, common);
  const cli_opt own[] = {
      {"nodes", 0, CLI_INT, &nodes, "LIST", "node counts (default 1)", CLI_MIN, 1, .list = CLI_MAX_LIST},
      {"bucket-cap-mb", 0, CLI_DOUBLE, &caps, "LIST", "DDP's bucket_cap_mb values (default: not given, DDP's 25)", CLI_MIN_OPEN | CLI_MAX, 0, SIM_MAX_BUCKET_MB,
       .list = CLI_MAX_LIST},
      {"topology", 0, CLI_STRING, &topos, "LIST", "topology files or bundled names (default dgx1v-ib)", .list = CLI_MAX_LIST},
      {0}};
  const cli_opt tail[] = {{"csv", 0, CLI_FLAG, &csv, NULL, "comma-separated output with a header line"}, {0}};
  const cli_opt *tables[] = {own, common, tail, NULL};
  const cli_cmd c = {.usage = usage_sweep, .tables = tables, .elsewhere = simopts_known};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (!rc) rc = simopts_check(x, &o);
  if (rc) return rc;
  simopts_inputs in = {0};
  topo_t *topo[CLI_MAX_LIST] = {0};
  if ((rc = simopts_load_model(x, o.model, &in.model)) || (rc = simopts_load_profile(x, o.profile, &in.profile))) goto done;
  for (int t = 0; t < topos.n; t++)
    if ((rc = simopts_load_topo(x, topos.s[t], &topo[t]))) goto done;
  rc = out_text(x, report_sweep_header(csv));
  for (int t = 0; t < topos.n && !rc; t++) {
    in.topo = topo[t];
    rc = sweep_topology(x, &o, &in, &nodes, &caps, csv);
  }
done:
  in.topo = NULL;
  for (int t = 0; t < topos.n; t++) topo_destroy(topo[t]);
  simopts_inputs_free(&in);
  return rc;
}
