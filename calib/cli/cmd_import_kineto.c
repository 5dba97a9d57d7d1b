/* cmd_import_kineto: `ddpcalib import kineto TRACE...`, what PyTorch profiler traces of one run's
 * ranks measured (calib/ktrace.h): the device card, the all-reduce kernels fitted as `ddpcalib
 * comm` fits its own sweep (the same fit, gate and record), and a "kineto" section with the rest.
 * docs/calib.md, "import kineto". Dispatched from cmd_import.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afile.h"
#include "calcmd.h"
#include "commfit.h"
#include "fit.h"
#include "ktrace.h"
#include "record.h"

#define KINETO_MAX_TRACES 64 /* ranks read at once */

static const char *usage =
    "usage: ddpcalib import kineto [--topology T] [--link-class NAME] [--hosts N] [--regimes K]\n"
    "                              [--accept-poor-fit] -o PROFILE TRACE...\n"
    "\n"
    "Reads PyTorch profiler (Kineto) traces of GPU training, .json or .json.gz, one or more ranks of one\n"
    "run: the device (deviceProperties), the run (distributedInfo), each ProfilerStep's wall time and\n"
    "the GPU's idle wait at its start, every NCCL kernel with its bytes and thread blocks, compute\n"
    "kernels beside NCCL or apart, and the cudaLaunchKernel costs. The all-reduce kernels are fitted\n"
    "as `ddpcalib comm` fits its sweep (the fastest kernel of each size; same ring model and quality\n"
    "gate). Writes the device card, comm.links.<class> when the fit passes the gate, and a \"kineto\"\n"
    "section with the rest, a profile part to merge (ddpcalib merge) with a compute profile.\n"
    "\n";

static int add_num(cJSON *o, const char *k, double v) { return cJSON_AddNumberToObject(o, k, v) != NULL; }
static int add_str(cJSON *o, const char *k, const char *v) { return cJSON_AddStringToObject(o, k, v) != NULL; }
static cJSON *add_nums(cJSON *o, const char *k, const double *v, size_t n) {
  cJSON *a = cJSON_AddArrayToObject(o, k);
  for (size_t i = 0; a && i < n; i++)
    if (!cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]))) return NULL;
  return a;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median_of(const double *v, size_t n) {
  double *c = malloc((n + 1) * sizeof *c);
  if (!c || !n) return free(c), 0;
  memcpy(c, v, n * sizeof *c);
  qsort(c, n, sizeof *c, cmp_d);
  double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
  free(c);
  return m;
}

/* kineto.traces[i]: what one rank's trace measured. NULL when out of memory. */
static cJSON *trace_json(const ktrace *t) {
  cJSON *o = cJSON_CreateObject(), *d = cJSON_AddObjectToObject(o, "device"), *r = cJSON_AddObjectToObject(o, "run");
  cJSON *s = cJSON_AddObjectToObject(o, "steps"), *k = cJSON_AddObjectToObject(o, "kernels");
  cJSON *l = cJSON_AddObjectToObject(o, "launch"), *n = cJSON_AddObjectToObject(o, "nccl");
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", t->cc_major, t->cc_minor);
  int ok = d && r && s && k && l && n && add_str(o, "file", t->path) && add_str(d, "name", t->device) &&
           add_num(d, "id", t->device_id) && add_num(d, "sm_count", t->sm_count) &&
           add_num(d, "memory_bytes", t->memory_bytes) && add_str(d, "compute_capability", cc);
  if (ok && *t->backend) ok = add_str(r, "backend", t->backend);
  if (ok && t->rank >= 0) ok = add_num(r, "rank", t->rank) && add_num(r, "world_size", t->world_size);
  if (ok && *t->nccl_version) ok = add_str(r, "nccl_version", t->nccl_version);
  if (ok) ok = add_str(r, "pytorch", "not recorded in the trace");
  ok = ok && add_num(s, "count", (double)t->nsteps) && add_nums(s, "wall_s", t->step_s, t->nsteps) &&
       add_num(s, "median_wall_s", median_of(t->step_s, t->nsteps)) &&
       add_nums(s, "input_wait_s", t->input_wait_s, t->nsteps) &&
       add_num(s, "median_input_wait_s", median_of(t->input_wait_s, t->nsteps));
  ok = ok && add_num(o, "cpu_ops", (double)t->ncpu_ops) && add_num(o, "backward_ops", (double)t->nbackward);
  ok = ok && add_num(k, "count", (double)t->nkernels) && add_num(k, "nccl", (double)t->nnccl) &&
       add_num(k, "compute", (double)t->ncompute) && add_num(k, "compute_s", t->compute_s) &&
       add_num(k, "overlapping_nccl", (double)t->noverlap) && add_num(k, "overlapping_nccl_s", t->overlap_s) &&
       add_num(k, "apart", (double)(t->ncompute - t->noverlap)) && add_num(k, "apart_s", t->compute_s - t->overlap_s);
  ok = ok && add_num(l, "calls", (double)t->nlaunch) && add_num(l, "median_s", t->launch_median_s) &&
       add_num(l, "queue_blocked", (double)t->nblocked) && add_num(l, "blocked_above_x_median", KTRACE_BLOCKED_X) &&
       add_num(l, "unblocked_median_s", t->launch_unblocked_median_s) && add_num(l, "max_s", t->launch_max_s);
  cJSON *ks = ok ? cJSON_AddArrayToObject(n, "kernels") : NULL;
  ok = ok && ks;
  for (size_t i = 0; ok && i < t->nnccl; i++) {
    const ktrace_nccl *c = &t->nccl[i];
    cJSON *e = cJSON_CreateObject();
    ok = e && cJSON_AddItemToArray(ks, e) && add_str(e, "collective", c->coll) && add_num(e, "time_s", c->dur_s) &&
         add_num(e, "thread_blocks", (double)c->blocks) && add_num(e, "bytes", c->bytes) && add_num(e, "step", c->step);
    if (ok && *c->bytes_from) ok = add_str(e, "bytes_from", c->bytes_from);
    if (ok && *c->dtype) ok = add_str(e, "dtype", c->dtype);
    if (ok && c->in_nelems >= 0) ok = add_num(e, "in_nelems", (double)c->in_nelems);
    if (ok && c->out_nelems >= 0) ok = add_num(e, "out_nelems", (double)c->out_nelems);
    if (ok && c->group_size >= 0) ok = add_num(e, "group_size", c->group_size);
  }
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

static void print_trace(const ktrace *t) {
  long bmin = -1, bmax = -1; /* the all-reduces' thread blocks */
  size_t nar = 0;
  for (size_t i = 0; i < t->nnccl; i++) {
    long b = t->nccl[i].blocks;
    if (strcmp(t->nccl[i].coll, "all_reduce")) continue;
    nar++;
    if (b > 0 && (bmin < 0 || b < bmin)) bmin = b;
    if (b > bmax) bmax = b;
  }
  printf("# %s: %s (%d SMs, %.1f GiB, sm_%d%d)", t->path, t->device, t->sm_count, t->memory_bytes / 1073741824.0,
         t->cc_major, t->cc_minor);
  if (t->rank >= 0)
    printf(", rank %d of %d (%s%s%s)", t->rank, t->world_size, t->backend, *t->nccl_version ? ", NCCL " : "",
           t->nccl_version);
  printf("\n#   %zu steps, median %.2f ms, input wait median %.2f ms; %zu kernels: %zu compute (%zu beside NCCL, "
         "%.2f ms), %zu NCCL", t->nsteps, median_of(t->step_s, t->nsteps) * 1e3,
         median_of(t->input_wait_s, t->nsteps) * 1e3, t->nkernels, t->ncompute, t->noverlap, t->overlap_s * 1e3,
         t->nnccl);
  if (nar) printf(" (%zu all-reduce, thread blocks %ld..%ld)", nar, bmin, bmax);
  printf("\n#   %zu launch calls: median %.2f us, %zu queue-blocked (> %g x median), longest %.1f us\n", t->nlaunch,
         t->launch_median_s * 1e6, t->nblocked, KTRACE_BLOCKED_X, t->launch_max_s * 1e6);
}

/* The traces must be ranks of one run: one device kind, world size and NCCL, distinct ranks. */
static int same_run(const ktrace *t, size_t n, err_t *e) {
  for (size_t i = 1; i < n; i++) {
    if (strcmp(t[i].device, t[0].device) || t[i].world_size != t[0].world_size ||
        strcmp(t[i].nccl_version, t[0].nccl_version))
      return err_set(e, ERR_INPUT, "%s: not the run of %s (device, world size or NCCL differ)", t[i].path, t[0].path);
    for (size_t j = 0; j < i; j++)
      if (t[i].rank == t[j].rank)
        return err_set(e, ERR_INPUT, "%s: rank %d again (%s): give each rank's trace once", t[i].path, t[i].rank,
                       t[j].path);
  }
  return ERR_OK;
}

/* comm.links.<class> from the all-reduce kernels, through comm's fit, gate and record; a fit the
 * data cannot give, or the gate refuses, is said in kineto.fit instead, and nothing else fails. */
static int comm_fit(const ktrace *t, size_t n, const char *topology, const char *user_class, int hosts,
                    int regimes, int accept_poor, cJSON *doc, cJSON *kfit, err_t *e) {
  commbench_cfg cfg;
  commbench_result res;
  commfit_span span;
  fit_ring_result fit;
  err_t why = {{0}};
  const char *link_class = user_class;
  char what[128], poor_why[512], src[1024];
  int nranks, keepable = 1, poor = 0, rc = ktrace_allreduce_sweep(t, n, &cfg, &res, &nranks, &why);
  if (!rc && (rc = commfit_span_of(topology, nranks, hosts, &span, e))) goto done;
  if (!rc && (rc = commfit_link_class(&span, &link_class, hosts, 1, e))) goto done;
  if (!rc) rc = commfit_ring(&res, nranks, (size_t)regimes, &fit, &why);
  if (!rc) {
    calcmd_print_ring_fit(link_class, &fit);
    calcmd_print_span(&span, link_class, fit.bw_Bps);
    if (n == 1 && t[0].world_size > 1)
      printf("# note: one rank's trace: a kernel that waited for a late peer counts as transfer time; the traces of\n"
             "#   every rank give each size's fastest kernel over the ranks\n");
    poor = fit_ring_poor(&fit, poor_why, sizeof poor_why, &keepable);
    snprintf(what, sizeof what, "comm.links.%s", link_class);
    if (poor) rc = calcmd_gate(what, poor_why, keepable, accept_poor, &why);
  }
  if (rc == ERR_RUNTIME) { /* the data's limit, not a failure of the import */
    printf("# no comm fit: %s\n", why.msg);
    if (!add_str(kfit, "refused", why.msg) || !add_num(kfit, "sizes", (double)res.nrows))
      rc = err_set(e, ERR_NOMEM, "out of memory");
    else
      rc = ERR_OK;
    goto done;
  }
  if (rc) {
    *e = why;
    goto done;
  }
  commbench_backend b = {.name = "kineto", .nranks = nranks, .nhosts = hosts};
  snprintf(b.devices, sizeof b.devices, "%s x %d", t[0].device, nranks);
  snprintf(b.library, sizeof b.library, "NCCL %s (as traced)", *t[0].nccl_version ? t[0].nccl_version : "?");
  if ((rc = record_comm(doc, link_class, &b, &cfg, &res, &fit, span.units, span.from[0] ? span.from : NULL, e))) goto done;
  snprintf(src, sizeof src,
           "ddpcalib import kineto: %zu trace(s), the NCCL all-reduce kernels of %d ranks, %zu sizes %zu..%zu B, the "
           "fastest kernel of each size (a kernel that waited for a late peer lasts longer); ring model fitted per size "
           "regime (docs/calib.md, \"import kineto\")", n, nranks, res.nrows, res.rows[0].bytes,
           res.rows[res.nrows - 1].bytes);
  cJSON *link = profilew_obj(profilew_obj(profilew_obj(doc, "comm"), "links"), link_class); /* record_comm's */
  if ((rc = profilew_str(link, "source", src, e))) goto done;
  if (poor && (rc = calcmd_mark_poor(doc, what, poor_why, e))) goto done;
  if (!add_str(kfit, "link", what) || !add_num(kfit, "lat_s", fit.lat_s) || !add_num(kfit, "ring_bw_Bps", fit.bw_Bps) ||
      !add_num(kfit, "sizes", (double)res.nrows))
    rc = err_set(e, ERR_NOMEM, "out of memory");
done:
  commbench_result_free(&res);
  return rc;
}

/* device: the card as the trace's deviceProperties give it (docs/profile.md, "The card"); a figure
 * outside the card's ranges stays in the kineto section only. */
static int card(cJSON *doc, const ktrace *t, err_t *e) {
  cJSON *d = profilew_obj(doc, "device");
  char src[700];
  size_t len = strlen(t->device), ctl = 0;
  for (size_t i = 0; i < len; i++) ctl += (unsigned char)t->device[i] < 0x20;
  snprintf(src, sizeof src, "%s: deviceProperties[id %d] (name, totalGlobalMem, numSms), as the PyTorch profiler "
           "recorded them", t->path, t->device_id);
  if (!d || profilew_str(d, "kind", "gpu", e) || profilew_str(d, "source", src, e) ||
      (len >= 1 && len <= 127 && !ctl && profilew_str(d, "name", t->device, e)) ||
      (t->memory_bytes >= 1048576 && t->memory_bytes <= 1e15 && profilew_num(d, "memory_bytes", t->memory_bytes, e)) ||
      (t->sm_count >= 1 && t->sm_count <= 100000 && profilew_num(d, "sm_count", t->sm_count, e)))
    return err_set(e, ERR_NOMEM, "out of memory");
  return ERR_OK;
}

int cmd_import_kineto(cli_ctx *x, int argc, char **argv) {
  const char *output = NULL, *topology = NULL, *link_class = NULL;
  int regimes = 3, accept_poor = 0, hosts = 1, nargs = 0;
  const cli_opt opts[] = {
      {"topology", 0, CLI_STRING, &topology, "T", "the machine traced, as ddpcalib comm's --topology (links per ring)"},
      {"link-class", 0, CLI_STRING, &link_class, "NAME", "the link class written (default as ddpcalib comm's)"},
      {"hosts", 0, CLI_INT, &hosts, "N", "hosts the run's ranks spanned (the trace does not say; default 1)",
       CLI_MIN | CLI_MAX, 1, 100000},
      CALCMD_FIT_OPTS(&regimes, &output, &accept_poor),
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  /* one trace per rank; a 65th is parsed so that the limit can be said, not "unexpected argument" */
  const cli_cmd c = {.usage = usage, .tables = tables, .max_args = KINETO_MAX_TRACES + 1};
  char *args[KINETO_MAX_TRACES + 1];
  int rc = cli_parse(x, &c, argc, argv, args, &nargs, stdout);
  if (rc) return rc;
  if (nargs > KINETO_MAX_TRACES)
    return cli_usage(x, "more than %d traces given: import at most %d ranks of a run at a time (a sample of its ranks "
                     "measures its collectives as well)", KINETO_MAX_TRACES, KINETO_MAX_TRACES);
  if (nargs < 1) return cli_usage(x, "no trace given: ddpcalib import kineto -o PROFILE TRACE...");
  if (!output) return cli_usage(x, "-o PROFILE is required");
  if (link_class && (!*link_class || strpbrk(link_class, ". \t\"\\")))
    return cli_usage(x, "--link-class must be a plain name (no dots, spaces, quotes), got '%s'", link_class);
  if ((rc = calcmd_check_output(x, output))) return rc;
  const char *in_flags[KINETO_MAX_TRACES];
  for (int i = 0; i < nargs; i++) in_flags[i] = "trace";
  err_t e = {{0}};
  if ((rc = afile_not_input("-o", output, in_flags, (const char *const *)args, nargs, &e)))
    return calcmd_status(x, rc, &e);
  ktrace *t = calloc((size_t)nargs, sizeof *t);
  cJSON *doc = NULL;
  if (!t) return cli_fail(x, ERR_NOMEM, "out of memory");
  for (int i = 0; i < nargs && !rc; i++)
    if (!(rc = ktrace_read(args[i], &t[i], &e))) print_trace(&t[i]);
  if (!rc) rc = same_run(t, (size_t)nargs, &e);
  if (!rc) {
    char devices[200];
    snprintf(devices, sizeof devices, "%s x %d", t[0].device, t[0].world_size > 0 ? t[0].world_size : 1);
    profilew_prov p = calcmd_prov("import kineto");
    p.devices = devices, p.libraries = "PyTorch profiler (Kineto) trace";
    if (!(doc = profilew_new("imported", &p))) rc = err_set(&e, ERR_NOMEM, "out of memory");
  }
  cJSON *k = NULL, *ts = NULL, *kfit = NULL;
  if (!rc) {
    k = profilew_obj(doc, "kineto");
    ts = k ? cJSON_AddArrayToObject(k, "traces") : NULL;
    kfit = k ? cJSON_AddObjectToObject(k, "fit") : NULL;
    if (!ts || !kfit || !add_str(k, "source", "ddpcalib import kineto (docs/calib.md, \"import kineto\")"))
      rc = err_set(&e, ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < nargs && !rc; i++) {
    cJSON *o = trace_json(&t[i]);
    if (!o || !cJSON_AddItemToArray(ts, o)) rc = err_set(&e, ERR_NOMEM, "out of memory");
  }
  if (!rc) rc = card(doc, &t[0], &e);
  if (!rc) rc = comm_fit(t, (size_t)nargs, topology, link_class, hosts, regimes, accept_poor, doc, kfit, &e);
  if (!rc) rc = calcmd_write(doc, output, &e);
  for (int i = 0; i < nargs; i++) ktrace_free(&t[i]);
  free(t);
  cJSON_Delete(doc);
  fflush(stdout);
  return calcmd_status(x, rc, &e);
}
