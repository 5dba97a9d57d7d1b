/* cmd_predict: `ddpsim predict`, and the simulation `ddpsim trace` shares with it. */
#include <stdlib.h>

#include "cmd.h"
#include "err.h"
#include "out.h"
#include "predict.h"
#include "report.h"
#include "simopts.h"

static const char *usage_predict =
    "usage: ddpsim predict [--nodes N] [--bucket-cap-mb X] [options] [--json]\n"
    "\n"
    "Simulates DDP training on N nodes and prints throughput (samples/s and tokens/s),\n"
    "scaling efficiency against one GPU, the time breakdown and every bucket's timeline.\n"
    "\n";

static const char *usage_trace =
    "usage: ddpsim trace -o FILE [--nodes N] [--bucket-cap-mb X] [options]\n"
    "\n"
    "Writes the reported iteration of rank 0 (compute and communication streams, every bucket) as\n"
    "a Chrome trace to FILE, atomically (chrome://tracing or ui.perfetto.dev): `predict --trace FILE`\n"
    "without the report.\n"
    "\n";

/* The reported iteration as a Chrome trace, written atomically to path. */
static int write_trace(cli_ctx *x, const sim_config *c, const predict_result *p, const char *path) {
  cJSON *tj = report_trace_json(c, p);
  char *text = tj ? cJSON_Print(tj) : NULL;
  cJSON_Delete(tj);
  int rc = text ? out_write_atomic(x, path, text) : out_text(x, NULL);
  free(text);
  return rc;
}

int cmd_predict_run(cli_ctx *x, int argc, char **argv, int trace_only) {
  simopts o;
  simopts_init(&o);
  int nodes, json = 0;
  double cap;
  const char *trace = NULL;
  cli_opt common[SIMOPTS_COUNT];
  simopts_table(&o, common);
  cli_opt own[SIMOPTS_JOB_COUNT];
  simopts_job_table(&nodes, &cap, own);
  const cli_opt predict_out[] = {
      {"json", 0, CLI_FLAG, &json, NULL, "print one JSON object instead of the table"},
      {"trace", 0, CLI_STRING, &trace, "FILE",
       "also write the reported iteration of rank 0 as a Chrome trace\n(chrome://tracing or ui.perfetto.dev), atomically"},
      {0}};
  const cli_opt trace_out[] = {
      {"output", 'o', CLI_STRING, &trace, "FILE", "the trace file (required)"},
      {"trace", 0, CLI_STRING, &trace, "FILE", NULL}, /* as predict's */
      {0}};
  const cli_opt *tables[] = {own, common, trace_only ? trace_out : predict_out, NULL};
  const cli_cmd c = {.usage = trace_only ? usage_trace : usage_predict, .tables = tables, .elsewhere = simopts_known};
  simopts_inputs in;
  sim_config cfg;
  int rc = simopts_setup(x, &c, argc, argv, &o, trace_only ? &trace : NULL, "-o FILE is required", &nodes, &cap, &in, &cfg);
  if (rc) return rc;
  predict_result p;
  err_t e;
  if ((rc = predict_run(&cfg, &p, &e))) {
    simopts_inputs_free(&in);
    return cli_fail(x, rc, "%s", e.msg);
  }
  if (trace) rc = write_trace(x, &cfg, &p, trace);
  if (!rc && !trace_only) rc = json ? out_json(x, report_predict_json(&cfg, &p)) : out_text(x, report_predict_table(&cfg, &p));
  else if (!rc) printf("wrote %s\n", trace);
  predict_result_free(&p);
  simopts_inputs_free(&in);
  return rc;
}

int cmd_predict(cli_ctx *x, int argc, char **argv) { return cmd_predict_run(x, argc, argv, 0); }
