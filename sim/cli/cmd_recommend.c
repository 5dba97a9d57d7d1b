/* cmd_recommend: `ddpsim recommend`, the bucket cap to use, from a sweep of caps. */
#include <gsl/gsl_sort.h>

#include "cmd.h"
#include "err.h"
#include "out.h"
#include "predict.h"
#include "report.h"
#include "simopts.h"

#define RECOMMEND_CAPS "0.5,1,2,5,10,25,50,100,200"
#define DEFAULT_CAP_MB 25.0 /* PyTorch's */

static const char *usage_recommend =
    "usage: ddpsim recommend [--nodes N] [--bucket-cap-mb LIST] [options] [--json]\n"
    "\n"
    "Simulates one configuration at every bucket cap of LIST (default " RECOMMEND_CAPS " MB;\n"
    "PyTorch's default, bucket_cap_mb not given, is always included as 25) in DDP's steady state\n"
    "and recommends the fastest: its gain over the\n"
    "default and the caps within 1% of it.\n"
    "\n";

int cmd_recommend(cli_ctx *x, int argc, char **argv) {
  simopts o;
  simopts_init(&o);
  int nodes = 1, json = 0;
  cli_list caps = {.text = RECOMMEND_CAPS};
  cli_opt common[SIMOPTS_COUNT];
  simopts_table(&o, common);
  const cli_opt own[] = {
      {"nodes", 0, CLI_INT, &nodes, "N", "number of nodes (default 1)", CLI_MIN, 1},
      {"bucket-cap-mb", 0, CLI_DOUBLE, &caps, "LIST", "the caps to compare, MB (default " RECOMMEND_CAPS ")", CLI_MIN_OPEN | CLI_MAX,
       0, SIM_MAX_BUCKET_MB, .list = CLI_MAX_LIST - 1},
      {0}};
  const cli_opt tail[] = {
      {"json", 0, CLI_FLAG, &json, NULL, "one JSON object: caps, recommended_bucket_cap_mb, gain_over_default"}, {0}};
  const cli_opt *tables[] = {own, common, tail, NULL};
  const cli_cmd c = {.usage = usage_recommend, .tables = tables, .elsewhere = simopts_known};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (!rc) rc = simopts_check(x, &o);
  if (rc) return rc;
  double cap[CLI_MAX_LIST], iter_s[CLI_MAX_LIST];
  int nc = caps.n, have_default = 0;
  for (int i = 0; i < nc; i++) {
    cap[i] = caps.d[i];
    for (int j = 0; j < i; j++)
      if (cap[j] == cap[i]) return cli_usage(x, "--bucket-cap-mb: %g is listed twice", cap[i]);
    have_default |= cap[i] == DEFAULT_CAP_MB;
  }
  if (!have_default) cap[nc++] = DEFAULT_CAP_MB;
  gsl_sort(cap, 1, (size_t)nc);
  simopts_inputs in;
  if ((rc = simopts_load(x, &o, &in))) return rc;
  sim_config cfg;
  for (int i = 0; i < nc && !rc; i++) {
    simopts_config(&o, &in, &cfg);
    cfg.nodes = nodes;
    /* The default is DDP's with bucket_cap_mb not given (from 2.4 its first bucket stays 1 MiB);
     * every other cap is one the user passes, which from 2.4 also caps the first bucket. */
    cfg.bucket_cap_mb = cap[i] == DEFAULT_CAP_MB ? 0 : cap[i];
    predict_result p;
    err_t e;
    if ((rc = predict_run(&cfg, &p, &e))) rc = cli_fail(x, rc, "%s", e.msg);
    else iter_s[i] = p.sim.iteration_s, predict_result_free(&p);
  }
  if (!rc)
    rc = json ? out_json(x, report_recommend_json(&cfg, cap, iter_s, nc, DEFAULT_CAP_MB))
              : out_text(x, report_recommend_table(&cfg, cap, iter_s, nc, DEFAULT_CAP_MB));
  simopts_inputs_free(&in);
  return rc;
}
