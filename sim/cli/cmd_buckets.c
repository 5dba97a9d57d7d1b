/* cmd_buckets: `ddpsim buckets`, DDP's gradient bucket assignment for a model. */
#include "bucket.h"
#include "cmd.h"
#include "out.h"
#include "report.h"
#include "simopts.h"

static const char *usage_buckets =
    "usage: ddpsim buckets [--model M] [--bucket-cap-mb X] [--first-bucket-mb Y]\n"
    "                      [--precision fp32|fp16] [--rebuilt] [--mode ddp|flat] [--json]\n"
    "\n"
    "Prints DDP's gradient buckets in reduction order, with bytes and parameter names and\n"
    "registration indices (0-based), exactly as PyTorch's Reducer assigns them.\n"
    "\n";

int cmd_buckets(cli_ctx *x, int argc, char **argv) {
  simopts o;
  simopts_init(&o);
  int json = 0;
  double cap = 25;
  cli_opt common[SIMOPTS_COUNT], shared[8];
  simopts_table(&o, common);
  cli_select(common, (const char *const[]){"model", "first-bucket-mb", "precision", "rebuilt", "mode", NULL}, shared);
  const cli_opt own[] = {{"bucket-cap-mb", 0, CLI_DOUBLE, &cap, "X", "DDP's bucket_cap_mb (default 25)", CLI_MIN_OPEN | CLI_MAX, 0, SIM_MAX_BUCKET_MB}, {0}};
  const cli_opt tail[] = {{"json", 0, CLI_FLAG, &json, NULL, "print one JSON object instead of the table"}, {0}};
  const cli_opt *tables[] = {shared, own, tail, NULL};
  const cli_cmd c = {.usage = usage_buckets, .tables = tables, .elsewhere = simopts_known};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  model_t *m = NULL;
  if (rc || (rc = simopts_load_model(x, o.model, &m))) return rc;
  model_dtype prec = o.precision >= 0 ? (model_dtype)o.precision : m->precision;
  bucket_plan plan;
  err_t e;
  rc = o.mode == SIM_MODE_FLAT ? bucket_plan_flat(m, prec, &plan, &e)
                               : bucket_plan_for_model(m, prec, o.first_mb, cap, o.rebuilt, &plan, &e);
  if (rc) {
    model_destroy(m);
    return cli_fail(x, rc, "%s", e.msg);
  }
  rc = json ? out_json(x, report_buckets_json(m, prec, &plan)) : out_text(x, report_buckets_table(m, prec, &plan));
  bucket_plan_free(&plan);
  model_destroy(m);
  return rc;
}
