/* cmd_merge: `ddpcalib merge` and `ddpcalib validate`, the profile commands over
 * calib/profilew.h (no measurement). docs/calib.md, "merge, validate, atomic writes". */
#include <stdio.h>

#include "calcmd.h"

static const char *usage_merge =
    "usage: ddpcalib merge A.json B.json -o OUT.json\n"
    "\n"
    "Merges two profiles, e.g. compute from one run and comm from another. Objects merge key by key\n"
    "down to compute.<precision>.<kind>, comm.links.<class> and samples.<section>.<name>, which B\n"
    "replaces whole when both have them; the merged provenance lists both sources and every path\n"
    "B replaced.\n"
    "\n";

static const char *usage_validate =
    "usage: ddpcalib validate PROFILE.json\n"
    "\n"
    "Checks a profile against docs/profile.md (format, version, every field ddpsim reads present\n"
    "and positive); prints `FILE: ok` or `FILE: what is wrong` and exits 1.\n";

int cmd_merge(cli_ctx *x, int argc, char **argv) {
  const char *output = NULL;
  const cli_opt opts[] = {{"output", 'o', CLI_STRING, &output, "OUT.json", "the merged profile (required)"}, {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage_merge, .tables = tables, .max_args = 2};
  char *in[2];
  int n = 0, rc = cli_parse(x, &c, argc, argv, in, &n, stdout);
  if (rc) return rc;
  if (n != 2) return cli_usage(x, "needs exactly two input profiles");
  if (!output) return cli_usage(x, "-o OUT.json is required");
  err_t e = {{0}};
  cJSON *a = NULL, *b = NULL, *m = NULL;
  rc = profilew_load(in[0], &a, &e);
  if (!rc) rc = profilew_load(in[1], &b, &e);
  profilew_prov p = calcmd_prov("merge");
  if (!rc) rc = profilew_merge(a, in[0], b, in[1], &p, &m, &e);
  if (!rc) rc = profilew_write(m, output, &e);
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(m);
  if (!rc) printf("merged %s and %s (the latter wins on conflicts) into %s\n", in[0], in[1], output);
  return calcmd_status(x, rc, &e);
}

int cmd_validate(cli_ctx *x, int argc, char **argv) {
  const cli_opt none[] = {{0}};
  const cli_opt *tables[] = {none, NULL};
  const cli_cmd c = {.usage = usage_validate, .tables = tables, .max_args = 1};
  char *in[1];
  int n = 0, rc = cli_parse(x, &c, argc, argv, in, &n, stdout);
  if (rc) return rc;
  if (n != 1) return cli_usage(x, "needs exactly one profile");
  err_t e = {{0}};
  cJSON *d = NULL;
  rc = profilew_load(in[0], &d, &e);
  if (!rc) rc = profilew_validate(d, in[0], &e);
  cJSON_Delete(d);
  if (!rc) printf("%s: ok\n", in[0]);
  return calcmd_status(x, rc, &e);
}
