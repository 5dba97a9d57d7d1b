/* cmd_accuracy: `ddpsim accuracy`, every published point predicted (validate/accuracy.h).
 * Exit 0 ok, 1 failure (or a summary outside the bounds given), 2 misuse. docs/accuracy.md. */
#include <stdio.h>
#include <stdlib.h>

#include "accuracy.h"
#include "afile.h"
#include "cmd.h"
#include "data.h"
#include "out.h"

static const char *usage_accuracy =
    "usage: ddpsim accuracy [--points FILE] [--json | --markdown | --ratios FILE] [--no-gpu-sharing] [--no-host-costs]\n"
    "                       [--median-min PCT] [--median-max PCT] [--worst-max PCT] [--validated-min N]\n"
    "                       [--coverage-min PCT] [--coverage-max PCT]\n"
    "\n"
    "Predicts every point of a file of published real-run figures (default: the bundled\n"
    "validate/published.txt; format in validate/README.md) and prints each one's published and\n"
    "predicted figure and the signed error (predicted - published) / published, then the median\n"
    "and worst |error| over the validation points, and how often the validated part of predict's\n"
    "interval holds the truth when each source's points are left out of it (leave-one-source-out\n"
    "coverage, docs/accuracy.md). Points that fitted a bundled profile (a `fits`\n"
    "line) and unsupported points are listed and kept out of the summary. With bounds given, a\n"
    "summary outside them exits 1 after the report (the test suite holds them so).\n"
    "--ratios writes, instead of a report, the cache of the validated error that predict's intervals\n"
    "read (validate/accuracy.h; the build writes the one the program uses).\n"
    "\n";

/* --ratios is none of the files the points are predicted from: the points file, and each point's
 * model, topology and profile (bundled names resolved to their files), before the long run. */
static int ratios_not_input(const char *ratios, const char *points, const accuracy_set *s, err_t *e) {
  const char *flag[] = {"--points"}, *in[] = {points};
  int rc = afile_not_input("--ratios", ratios, flag, in, 1, e);
  for (int i = 0; i < s->n && !rc; i++) {
    const accuracy_point *p = &s->points[i];
    const char *names[3] = {p->model, p->topology, p->profile};
    static const char *const kinds[3] = {"model", "topology", "profile"};
    for (int k = 0; k < 3 && !rc; k++) {
      char path[1024], what[ACCURACY_NAME_MAX + 32];
      const char *pth[] = {names[k][0] ? data_resolved((data_kind)k, names[k], path, sizeof path) : NULL};
      if (!pth[0]) continue;
      snprintf(what, sizeof what, "point %s's %s", p->name, kinds[k]);
      const char *f[] = {what};
      rc = afile_not_input("--ratios", ratios, f, pth, 1, e);
    }
  }
  return rc;
}

int cmd_accuracy(cli_ctx *x, int argc, char **argv) {
  const char *file = NULL, *ratios = NULL;
  int json = 0, markdown = 0, validated_min = 0, no_sharing = 0, no_host = 0;
  double median_min = -1, median_max = -1, worst_max = -1, coverage_min = -1, coverage_max = -1;
  const cli_opt t[] = {
      {"points", 0, CLI_STRING, &file, "FILE", "the points file (default: <data dir>/validate/published.txt)"},
      {"json", 0, CLI_FLAG, &json, NULL, "print one JSON object: every point and the summary"},
      {"markdown", 0, CLI_FLAG, &markdown, NULL, "print docs/accuracy.md's generated table"},
      {"ratios", 0, CLI_STRING, &ratios, "FILE", "write the validated error of every profile and precision to FILE, the\ncache predict's intervals read (docs/memory.md, \"How sure\"); no report"},
      {"no-gpu-sharing", 0, CLI_FLAG, &no_sharing, NULL, "predict every point with compute beside NCCL's kernels as if it had the\nGPU to itself (predict's flag; an ablation)"},
      {"no-host-costs", 0, CLI_FLAG, &no_host, NULL, "predict every point with the host's launch, dispatch and jitter costs 0, as\n--host-launch-us 0 --host-dispatch-us 0 --host-jitter-us 0 would (an ablation)"},
      {"median-min", 0, CLI_DOUBLE, &median_min, "PCT", "fail if the median |error| is below PCT percent", CLI_MIN | CLI_MAX, 0, 1e6},
      {"median-max", 0, CLI_DOUBLE, &median_max, "PCT", "fail if the median |error| is above PCT percent", CLI_MIN | CLI_MAX, 0, 1e6},
      {"worst-max", 0, CLI_DOUBLE, &worst_max, "PCT", "fail if any validation point's |error| is above PCT percent", CLI_MIN | CLI_MAX, 0, 1e6},
      {"validated-min", 0, CLI_INT, &validated_min, "N", "fail if fewer than N points were predicted and validated", CLI_MIN | CLI_MAX, 0, 1 << 20},
      {"coverage-min", 0, CLI_DOUBLE, &coverage_min, "PCT", "fail if the validated intervals' leave-one-source-out coverage is below\nPCT percent", CLI_MIN | CLI_MAX, 0, 100},
      {"coverage-max", 0, CLI_DOUBLE, &coverage_max, "PCT", "fail if that coverage is above PCT percent", CLI_MIN | CLI_MAX, 0, 100},
      {0}};
  const cli_opt *tables[] = {t, NULL};
  const cli_cmd c = {.usage = usage_accuracy, .tables = tables};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (rc) return rc;
  if (json + markdown + (ratios != NULL) > 1) return cli_usage(x, "--json, --markdown and --ratios are three outputs: give one");
  if (ratios && (no_sharing || no_host))
    return cli_usage(x, "--ratios writes what predict uses: not with an ablation (--no-gpu-sharing, --no-host-costs)");
  err_t e;
  if (ratios && afile_check(ratios, &e)) return cli_fail(x, ERR_IO, "--ratios: %s", e.msg);
  if (median_min >= 0 && median_max >= 0 && median_min > median_max)
    return cli_usage(x, "--median-min %g%% is above --median-max %g%%: no median can pass both", median_min, median_max);
  if (coverage_min >= 0 && coverage_max >= 0 && coverage_min > coverage_max)
    return cli_usage(x, "--coverage-min %g%% is above --coverage-max %g%%: no coverage can pass both", coverage_min, coverage_max);
  char path[1024];
  if (!file) {
    snprintf(path, sizeof path, "%s/validate/published.txt", data_dir());
    file = path;
  }
  accuracy_set *s = NULL;
  if (!(rc = accuracy_load(file, &s, &e))) {
    s->no_gpu_sharing = no_sharing;
    s->no_host_costs = no_host;
    if (ratios) rc = ratios_not_input(ratios, file, s, &e);
  }
  if (rc || (rc = accuracy_run(s, &e))) {
    accuracy_destroy(s);
    return cli_fail(x, rc, "%s", e.msg);
  }
  accuracy_summary sum;
  accuracy_summarize(s, &sum);
  if (ratios) {
    char *text = accuracy_ratios_text(s, &e);
    rc = text ? out_write_atomic(x, ratios, text) : cli_fail(x, ERR_NOMEM, "%s", e.msg);
    free(text);
  } else {
    rc = json ? out_json(x, accuracy_json(s, &sum)) : out_text(x, markdown ? accuracy_markdown(s, &sum) : accuracy_table(s, &sum));
  }
  if (!rc && sum.failed)
    rc = cli_fail(x, ERR_SIM, "%d points could not be predicted (their messages are in the report)", sum.failed);
  if (!rc && sum.validated < validated_min)
    rc = cli_fail(x, ERR_RUNTIME, "%d points validated, fewer than --validated-min %d", sum.validated, validated_min);
  if (!rc && median_min >= 0 && 100 * sum.median_abs < median_min)
    rc = cli_fail(x, ERR_RUNTIME, "median |error| %.2f%% is below --median-min %g%%: tighten the bounds", 100 * sum.median_abs, median_min);
  if (!rc && median_max >= 0 && 100 * sum.median_abs > median_max)
    rc = cli_fail(x, ERR_RUNTIME, "median |error| %.2f%% is above --median-max %g%%", 100 * sum.median_abs, median_max);
  if (!rc && worst_max >= 0 && 100 * sum.worst_abs > worst_max)
    rc = cli_fail(x, ERR_RUNTIME, "worst |error| %.2f%% (%s) is above --worst-max %g%%", 100 * sum.worst_abs,
                  s->points[sum.worst].name, worst_max);
  double cov = sum.coverage.points ? 100.0 * sum.coverage.covered / sum.coverage.points : 0;
  if (!rc && (coverage_min >= 0 || coverage_max >= 0) && !sum.coverage.points)
    rc = cli_fail(x, ERR_RUNTIME, "no point has an interval from other sources: no coverage to hold to --coverage-min/--coverage-max");
  if (!rc && coverage_min >= 0 && cov < coverage_min)
    rc = cli_fail(x, ERR_RUNTIME, "coverage %.1f%% is below --coverage-min %g%%", cov, coverage_min);
  if (!rc && coverage_max >= 0 && cov > coverage_max)
    rc = cli_fail(x, ERR_RUNTIME, "coverage %.1f%% is above --coverage-max %g%%", cov, coverage_max);
  accuracy_destroy(s);
  return rc;
}
