/* cmd_recommend: `ddpsim recommend`, the bucket cap to use, robust to the profile's uncertainty, and
 * the other knobs that help (the method: sim/recommend.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_sort.h>

#include "cmd.h"
#include "data.h"
#include "err.h"
#include "out.h"
#include "recommend.h"
#include "simopts.h"
#include "txt.h"

#define RECOMMEND_CAPS "0.5,1,2,5,10,25,50,100,200"

static const char *usage_recommend =
    "usage: ddpsim recommend [--nodes N] [--bucket-cap-mb LIST] [options] [--json]\n"
    "\n"
    "Simulates one configuration at every bucket cap of LIST (default " RECOMMEND_CAPS " MB;\n"
    "PyTorch's default, bucket_cap_mb not given, is always included as " CLI_TEXT(REDUCER_DEFAULT_CAP) ") with the nominal\n"
    "profile and with --samples profiles drawn from the uncertainty of its numbers (the same draws\n"
    "for every cap), and recommends the cap of least regret (worst case over the draws, or\n"
    "--quantile) when its gain over the default is meaningful: the low end of its interval at\n"
    "least --min-gain; otherwise it says plainly that no cap is meaningfully better. Then tries\n"
    "the other knobs on the recommended configuration: a first bucket of its own\n"
    "(bucket_cap_mb_list), gradient_as_bucket_view, the fp16/bf16 compression hooks,\n"
    "broadcast_buffers=False, no_sync (under --framework fsdp, FSDP's), ranked by their gain.\n"
    "\n";

int cmd_recommend(cli_ctx *x, int argc, char **argv) {
  simopts o;
  simopts_init(&o);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int nodes = 1, json = 0, samples = 32, jobs = ncpu > 0 ? (int)ncpu : 1, no_advice = 0, show = 0;
  unsigned long sample_seed = 1;
  double quantile = 1, level = 0.9, min_gain_pct = 1;
  cli_list caps = {.text = RECOMMEND_CAPS};
  cli_opt common[SIMOPTS_COUNT];
  simopts_table(&o, common);
  const cli_opt own[] = {
      {"nodes", 0, CLI_INT, &nodes, "N", "number of nodes (default 1)", CLI_MIN, 1},
      {"bucket-cap-mb", 0, CLI_DOUBLE, &caps, "LIST", "the caps to compare, MB (default " RECOMMEND_CAPS ")", CLI_MIN | CLI_MAX,
       SIM_MIN_BUCKET_MB, SIM_MAX_BUCKET_MB, .list = CLI_MAX_LIST - 1, .must = SIM_BUCKET_MB_MUST},
      {"samples", 0, CLI_INT, &samples, "N", "profiles drawn from the profile's uncertainty (default 32; 0: nominal only)",
       CLI_MIN | CLI_MAX, 0, 100000},
      {"sample-seed", 0, CLI_ULONG, &sample_seed, "N", "seed of the draws (default 1)"},
      {"quantile", 0, CLI_DOUBLE, &quantile, "Q", "the quantile of each cap's regret over the draws to minimise\n(default 1: the worst case)",
       CLI_MIN_OPEN | CLI_MAX, 0, 1},
      {"level", 0, CLI_DOUBLE, &level, "L", "the central interval reported for a gain (default 0.9: 5% to 95%)", CLI_MIN_OPEN | CLI_MAX_OPEN,
       0, 1},
      {"min-gain", 0, CLI_DOUBLE, &min_gain_pct, "PCT",
       "a gain counts when its interval starts at or above PCT percent (default 1)", CLI_MIN | CLI_MAX, 0, 1000,
       .must = "must be from 0 to 1000 percent (an 11-fold speed-up)"},
      {"no-advice", 0, CLI_FLAG, &no_advice, NULL, "only the cap: do not try the other knobs"},
      {"jobs", 'j', CLI_INT, &jobs, "N", "simulations at once, each in its own process (default: the cores online)", CLI_MIN | CLI_MAX,
       1, 1024},
      {"progress", 0, CLI_FLAG, &show, NULL, "a progress line on stderr (default: on a terminal, past 3 s)"},
      {0}};
  const cli_opt tail[] = {{"json", 0, CLI_FLAG, &json, NULL, "one JSON object (fields: docs/cli.md)"}, {0}};
  const cli_opt *tables[] = {own, common, tail, NULL};
  const cli_cmd c = {.usage = usage_recommend, .tables = tables, .elsewhere = simopts_known};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (!rc) rc = simopts_check(x, &o);
  if (rc) return rc;
  if (o.framework == SIM_FRAMEWORK_DDP && o.pytorch > 0 && o.pytorch < REDUCER_VERSION_C10D) {
    char rel[16];
    return cli_usage(x, "--pytorch %s: recommend chooses DDP's bucket_cap_mb, an argument from PyTorch 1.0 (before, the buckets "
                        "were the release's own: docs/reducer.md)", reducer_version_name(o.pytorch, rel, sizeof rel));
  }
  double cap[CLI_MAX_LIST];
  int nc = caps.n, have_default = 0;
  if (o.framework == SIM_FRAMEWORK_FSDP) { /* no buckets: FSDP's knobs alone (sim/recommend.h) */
    if (strcmp(caps.text, RECOMMEND_CAPS) != 0) return cli_usage(x, "--bucket-cap-mb: FSDP has no buckets");
    nc = 0;
  }
  for (int i = 0; i < nc; i++) {
    cap[i] = caps.d[i];
    for (int j = 0; j < i; j++)
      if (cap[j] == cap[i]) return cli_usage(x, "--bucket-cap-mb: %g is listed twice", cap[i]);
    have_default |= cap[i] == REDUCER_DEFAULT_CAP_MB;
  }
  if (!have_default) cap[nc++] = REDUCER_DEFAULT_CAP_MB;
  gsl_sort(cap, 1, (size_t)nc);
  simopts_inputs in;
  cJSON *doc = NULL;
  char path[1024];
  if ((rc = simopts_load(x, &o, &in))) return rc;
  if ((rc = simopts_read_profile_doc(x, o.profile, path, sizeof path, &doc))) goto done;
  sim_config cfg;
  simopts_config(&o, &in, &cfg);
  cfg.nodes = nodes;
  simopts_warn_measured(x, &cfg);
  simopts_warn_fp32_math(x, &cfg);
  out_progress pr = {.x = x, .what = "simulations", .forced = show};
  recommend_opts ro = {.base = &cfg, .profile_doc = doc, .profile_origin = path, .ncaps = nc, .caps_mb = cap,
                       .default_mb = REDUCER_DEFAULT_CAP_MB, .samples = samples, .seed = sample_seed, .quantile = quantile,
                       .level = level, .min_gain = min_gain_pct / 100, .advise = !no_advice,
                       .run = {.jobs = jobs, .progress = out_progress_line, .progress_arg = &pr}};
  recommend_result r;
  err_t e;
  if ((rc = recommend_run(&ro, &r, &e))) rc = cli_fail(x, rc, "%s", e.msg);
  else rc = json ? out_json(x, recommend_json(&ro, &r)) : out_text(x, recommend_table(&ro, &r));
done:
  cJSON_Delete(doc);
  simopts_inputs_free(&in);
  return rc;
}
