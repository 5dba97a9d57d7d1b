/* cmd_import: `ddpcalib import nccl-tests LOG...`, a cluster's links fitted from the nccl-tests
 * logs its owners already have (calib/ncclog.h), through the same fit, quality gate and record as
 * `ddpcalib comm`. docs/calib.md, "import nccl-tests". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "afile.h"
#include "calcmd.h"
#include "commfit.h"
#include "fit.h"
#include "ncclog.h"
#include "record.h"
#include "txt.h"

static const char *usage =
    "usage: ddpcalib import nccl-tests [--collective C] [--in-place] [--topology T] [--link-class NAME]\n"
    "                                  [--regimes K] [--accept-poor-fit] -o PROFILE LOG...\n"
    "\n"
    "Reads nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf;\n"
    "any GPU and node count, as printed to stdout by any release, v1.0 to v2.19, with srun -l, Open MPI\n"
    "or MPICH prefixes; as many logs as the command line holds) and fits each log's ring as `ddpcalib\n"
    "comm` fits its own sweep: t(S) = 2(n-1)(lat + S/(n bw)) on the all-reduce-equivalent time of each\n"
    "size, per size regime, with the same quality gate. A log on one host gives the link class inside a\n"
    "node (nvlink, or the topology's), one across hosts the network's (net, or the topology's).\n"
    "Of several logs of one class, the one with the most ranks is written (the ring DDP runs); the\n"
    "others are fitted and printed. Writes the comm half of a profile: merge it with a compute\n"
    "profile (ddpcalib merge) to predict.\n"
    "\n";

static const char *const colls[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", NULL};

/* The logs in order of ranks (fewest first): the last of a class is the one written. */
typedef struct {
  ncclog log;
  const char *arg;
} item;

static int by_ranks(const void *a, const void *b) { return ((const item *)a)->log.nranks - ((const item *)b)->log.nranks; }

static int one(const item *it, int in_place, const char *topology, const char *user_class, int regimes,
               int accept_poor, cJSON *doc, err_t *e) {
  const ncclog *l = &it->log;
  commbench_cfg cfg;
  commbench_result res;
  commfit_span span;
  const char *link_class = user_class;
  int rc = ncclog_to_sweep(l, in_place, &cfg, &res, e);
  if (!rc) rc = commfit_span_of(topology, l->nranks, l->nhosts, &span, e);
  if (!rc) rc = commfit_link_class(&span, &link_class, l->nhosts, 1, e);
  if (rc) goto done;
  printf("# %s: %s_perf (nccl-tests %s layout), %d ranks on %d host(s) (%s), %s %s, %zu sizes %zu..%zu B, %s; link class %s\n",
         l->path, ncclog_coll_name(l->coll), l->release, l->nranks, l->nhosts, l->hosts, l->type, l->redop, res.nrows,
         res.rows[0].bytes, res.rows[res.nrows - 1].bytes, in_place ? "in place" : "out of place", link_class);
  if (res.wrong > 0) {
    rc = err_set(e, ERR_INPUT, "%s: %lld wrong elements: the run it records was broken", l->path, res.wrong);
    goto done;
  }
  fit_ring_result fit;
  if ((rc = commfit_ring(&res, l->nranks, (size_t)regimes, &fit, e))) goto done;
  calcmd_print_ring_fit(link_class, &fit);
  calcmd_print_span(&span, link_class, fit.bw_Bps);
  char what[128], why[512], src[1024];
  int keepable, poor = fit_ring_poor(&fit, why, sizeof why, &keepable);
  snprintf(what, sizeof what, "comm.links.%s", link_class);
  if (poor && (rc = calcmd_gate(what, why, keepable, accept_poor, e))) goto done;
  commbench_backend b = {.name = "nccl-tests", .nranks = l->nranks, .nhosts = l->nhosts};
  snprintf(b.hosts, sizeof b.hosts, "%s", l->hosts);
  snprintf(b.devices, sizeof b.devices, "%s", l->devices);
  snprintf(b.library, sizeof b.library, "nccl-tests log");
  if ((rc = record_comm(doc, link_class, &b, &cfg, &res, &fit, span.units, span.from[0] ? span.from : NULL, e))) goto done;
  snprintf(src, sizeof src,
           "ddpcalib import nccl-tests %s: %s_perf (%s %s), %d ranks on %d host(s), %zu..%zu B, %s time as nccl-tests "
           "printed it (mean per size), scaled to an all-reduce's 2(n-1) steps; ring model fitted per size regime "
           "(docs/calib.md)", it->arg, ncclog_coll_name(l->coll), l->type, l->redop, l->nranks, l->nhosts,
           res.rows[0].bytes, res.rows[res.nrows - 1].bytes, in_place ? "in-place" : "out-of-place");
  cJSON *link = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "comm"), "links"), link_class);
  if ((rc = profilew_str(link, "source", src, e))) goto done;
  if (poor) rc = calcmd_mark_poor(doc, what, why, e);
done:
  commbench_result_free(&res);
  return rc;
}

static int import(cli_ctx *x, const char *output, const char *topology, const char *link_class, int coll, int in_place,
                  int regimes, int accept_poor, char **args, int nargs) {
  int rc;
  if (nargs < 1 || strcmp(args[0], "nccl-tests") != 0)
    return cli_usage(x, "%s%s%s: the format comes first; known: nccl-tests, kineto", nargs ? "unknown format '" : "no format",
                     nargs ? args[0] : "", nargs ? "'" : "");
  if (nargs < 2) return cli_usage(x, "no log given: ddpcalib import nccl-tests -o PROFILE LOG...");
  if (!output) return cli_usage(x, "-o PROFILE is required");
  if (link_class && nargs > 2) return cli_usage(x, "--link-class names the class of one log, not of %d", nargs - 1);
  if (link_class && (!*link_class || strpbrk(link_class, ". \t\"\\")))
    return cli_usage(x, "--link-class must be a plain name (no dots, spaces, quotes), got '%s'", link_class);
  int n = nargs - 1;
  err_t e = {{0}};
  for (int i = 0; i < n; i++) {
    const char *flag = "LOG";
    if (afile_not_input("-o", output, &flag, (const char *const *)&args[i + 1], 1, &e)) return cli_fail(x, ERR_IO, "%s", e.msg);
  }
  if ((rc = calcmd_check_output(x, output))) return rc;
  item *items = calloc((size_t)n, sizeof *items);
  cJSON *doc = NULL;
  if (!items) return cli_fail(x, ERR_NOMEM, "out of memory");
  for (int i = 0; i < n && !rc; i++) {
    items[i].arg = args[i + 1];
    char *text = NULL;
    struct stat st;
    if (stat(args[i + 1], &st) == 0 && S_ISDIR(st.st_mode))
      rc = err_set(&e, ERR_INPUT, "%s: a directory, not an nccl-tests log (give the log files: DIR/*.log)", args[i + 1]);
    else if (!(rc = txt_read_text(args[i + 1], &text, &e))) rc = ncclog_parse(text, args[i + 1], coll, &items[i].log, &e);
    free(text);
  }
  if (!rc) {
    qsort(items, (size_t)n, sizeof *items, by_ranks);
    profilew_prov p = calcmd_prov("import nccl-tests");
    if (n > 0) p.devices = items[n - 1].log.devices, p.hosts = items[n - 1].log.hosts, p.libraries = "nccl-tests logs";
    if (!(doc = profilew_new("imported", &p))) rc = err_set(&e, ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < n && !rc; i++) rc = one(&items[i], in_place, topology, link_class, regimes, accept_poor, doc, &e);
  if (!rc) rc = calcmd_write(doc, output, &e);
  for (int i = 0; i < n; i++) ncclog_free(&items[i].log);
  free(items);
  cJSON_Delete(doc);
  fflush(stdout);
  return calcmd_status(x, rc, &e);
}

int cmd_import(cli_ctx *x, int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "kineto") == 0) return cmd_import_kineto(x, argc - 1, argv + 1); /* its own options */
  const char *output = NULL, *topology = NULL, *link_class = NULL;
  int coll = -1, in_place = 0, regimes = 3, accept_poor = 0, nargs = 0;
  const cli_opt opts[] = {
      {"collective", 0, CLI_ENUM, &coll, "C",
       "the logs' collective where they do not say it (nccl-tests v2.16.7 on\nsay it in \"# Collective test concluded\"; "
       "before, the rows' redop,\nroot and busbw / algbw may fit two programs): all_reduce, all_gather,\nreduce_scatter, broadcast",
       .names = colls},
      {"in-place", 0, CLI_FLAG, &in_place, NULL, "fit the in-place columns (default: out of place, as ddpcalib comm)"},
      {"topology", 0, CLI_STRING, &topology, "T", "the machine measured, as ddpcalib comm's --topology (links per ring)"},
      {"link-class", 0, CLI_STRING, &link_class, "NAME", "the link class written (one log only; default as ddpcalib comm's)"},
      CALCMD_FIT_OPTS(&regimes, &output, &accept_poor),
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  /* as many logs as the command line holds: every argument could be one */
  const cli_cmd c = {.usage = usage, .tables = tables, .max_args = argc > 1 ? argc : 1};
  char **args = malloc((size_t)(argc > 1 ? argc : 1) * sizeof *args);
  if (!args) return cli_fail(x, ERR_NOMEM, "out of memory");
  int rc = cli_parse(x, &c, argc, argv, args, &nargs, stdout);
  if (!rc) rc = import(x, output, topology, link_class, coll, in_place, regimes, accept_poor, args, nargs);
  free(args);
  return rc;
}
