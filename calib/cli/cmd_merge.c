/* cmd_merge: `ddpcalib merge` and `ddpcalib validate`, the profile commands over
 * calib/profilew.h (no measurement). docs/calib.md, "merge, validate, atomic writes". */
#include <stdio.h>

#include "calcmd.h"
#include "profile.h"

static const char *usage_merge =
    "usage: ddpcalib merge A.json B.json -o OUT.json [--jitter auto|first|second|none]\n"
    "\n"
    "Merges two profiles, e.g. compute from one run and comm from another. Objects merge key by key\n"
    "down to compute.<precision>.<kind>, comm.links.<class>, h2d.<mode> and samples.<section>.<name>\n"
    "(compute.host and comm.nccl whole), which B replaces whole when both have them. Says on stderr\n"
    "which parts came from which file; the merged provenance records it, both sources and every\n"
    "path B replaced. compute.jitter (a machine's run-to-run noise) is kept only when the file it\n"
    "comes from also gave all the merged compute, unless --jitter says otherwise.\n"
    "\n";

static const char *usage_validate =
    "usage: ddpcalib validate PROFILE.json [--part] [--precision LIST] [--links LIST]\n"
    "\n"
    "Checks a profile with ddpsim's own loader (docs/profile.md: types, ranges, duplicate keys,\n"
    "trailing data): by default a whole profile, as ddpsim --profile reads it; prints\n"
    "`FILE: ok: what it holds`, or `FILE: what is wrong` and exits 1. With --precision and --links\n"
    "it also refuses, with ddpsim's message, a profile a run at those precisions over those link\n"
    "classes would meet without a cost.\n"
    "\n";

static const char *const jitter_names[] = {"auto", "first", "second", "none", NULL};
static const char *const precision_names[] = {"fp32", "fp16", NULL};

/* What the merge took from each side, from its provenance, on stderr (stdout is for the result). */
static void print_taken(const cJSON *m) {
  const cJSON *prov = cJSON_GetObjectItemCaseSensitive(m, "provenance"), *s;
  cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(prov, "sources")) {
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(s, "file"), *u;
    const cJSON *took = cJSON_GetObjectItemCaseSensitive(s, "took");
    fprintf(stderr, "ddpcalib merge: from %s:%s", file->valuestring, cJSON_GetArraySize(took) ? "" : " nothing");
    int i = 0;
    cJSON_ArrayForEach(u, took) fprintf(stderr, "%s %s", i++ ? "," : "", u->valuestring);
    fputc('\n', stderr);
  }
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(prov, "jitter");
  if (cJSON_IsString(j)) fprintf(stderr, "ddpcalib merge: %s\n", j->valuestring);
}

int cmd_merge(cli_ctx *x, int argc, char **argv) {
  const char *output = NULL;
  int jitter = PROFILEW_JITTER_AUTO;
  const cli_opt opts[] = {{"output", 'o', CLI_STRING, &output, "OUT.json", "the merged profile (required)"},
                          {"jitter", 0, CLI_ENUM, &jitter, "auto|first|second|none",
                           "compute.jitter: auto (default): the side's that gave all the compute,\n"
                           "else none; first/second: A's/B's regardless; none: left out",
                           .names = jitter_names},
                          {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage_merge, .tables = tables, .max_args = 2};
  char *in[2];
  int n = 0, rc = cli_parse(x, &c, argc, argv, in, &n, stdout);
  if (rc) return rc;
  if (n != 2) return cli_usage(x, "needs exactly two input profiles");
  if (!output) return cli_usage(x, "-o OUT.json is required");
  /* Write the merge to a new file (then move it): -o over an input would replace what it merges. */
  const char *in_flags[] = {"input A", "input B"}, *ins[] = {in[0], in[1]};
  if ((rc = calcmd_check_output(x, output)) || (rc = calcmd_not_input(x, "-o", output, in_flags, ins, 2))) return rc;
  err_t e = {{0}};
  cJSON *a = NULL, *b = NULL, *m = NULL;
  rc = profilew_load(in[0], &a, &e);
  if (!rc) rc = profilew_load(in[1], &b, &e);
  profilew_prov p = calcmd_prov("merge");
  if (!rc) rc = profilew_merge(a, in[0], b, in[1], (profilew_jitter)jitter, &p, &m, &e);
  if (!rc) rc = profilew_write(m, output, &e);
  if (!rc) print_taken(m);
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(m);
  if (!rc) printf("merged %s and %s (the latter wins on conflicts) into %s\n", in[0], in[1], output);
  return calcmd_status(x, rc, &e);
}

int cmd_validate(cli_ctx *x, int argc, char **argv) {
  int part = 0;
  cli_list precs = {0}, links = {0};
  const cli_opt opts[] = {
      {"part", 0, CLI_FLAG, &part, NULL, "a part for `merge`: compute or comm may be missing (not both)"},
      {"precision", 0, CLI_ENUM, &precs, "LIST", "precisions a run needs (fp32, fp16): their compute must be there",
       .names = precision_names, .list = 2},
      {"links", 0, CLI_STRING, &links, "LIST", "link classes a run's topology names: each must be in comm.links",
       .list = CLI_MAX_LIST},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage_validate, .tables = tables, .max_args = 1};
  char *in[1];
  int n = 0, rc = cli_parse(x, &c, argc, argv, in, &n, stdout);
  if (rc) return rc;
  if (n != 1) return cli_usage(x, "needs exactly one profile");
  err_t e = {{0}};
  cJSON *d = NULL;
  profile_t *p = NULL;
  model_dtype need[2];
  for (int i = 0; i < precs.n; i++) need[i] = (model_dtype)precs.i[i];
  rc = profilew_load(in[0], &d, &e);
  if (!rc) rc = profilew_validate(d, in[0], part ? PROFILE_PART : PROFILE_WHOLE, &e);
  if (!rc) rc = profile_from_json(d, in[0], part ? PROFILE_PART : PROFILE_WHOLE, &p, &e);
  if (!rc) rc = profile_require(p, need, precs.n, links.s, links.n, &e);
  if (!rc) {
    char what[1024];
    profile_summary(p, what, sizeof what);
    printf("%s: ok (%s): %s\n", in[0], part ? "a part" : "a whole profile", what);
  }
  profile_destroy(p);
  cJSON_Delete(d);
  return calcmd_status(x, rc, &e);
}
