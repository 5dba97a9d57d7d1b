/* cmd_host: `ddpcalib host`, the framework's host cost per op and the host's noise, measured with
 * the installed PyTorch (calib/hostbench.h) and written as compute.host. docs/calib.md, "host". */
#include <stdio.h>

#include "calcmd.h"
#include "hostbench.h"
#include "launchbench.h"

static const char *usage =
    "usage: ddpcalib host [--device cpu|cuda] [--ops N] [-n ITERS] [-w WARMUPS] [--python PY]\n"
    "                     [--helper FILE] [-o PROFILE]\n"
    "\n"
    "Times the host's side of PyTorch with the PyTorch installed here (a small Python helper,\n"
    "calib/host_overhead.py): one framework op called from Python (a 1-element add into a\n"
    "preallocated output: Python, the dispatcher, the kernel or its launch) and the spread of a\n"
    "fixed host workload of N such ops, and the CPU summing two float32 buffers (gloo's\n"
    "reduction). Writes compute.host.dispatch_s (the median per op), jitter_s (the workload's\n"
    "standard deviation) and reduce_Bps with the framework's version; with --device cuda also\n"
    "the raw launch of an empty kernel (compute.host.launch_s). Merge it into a\n"
    "machine's profile with `ddpcalib merge`.\n"
    "\n";

static const char *const devices[] = {"cpu", "cuda", NULL};

int cmd_host(cli_ctx *x, int argc, char **argv) {
  int device = 0, ops = 2000, iters = 30, warmups = 5;
  const char *output = NULL, *python = NULL, *helper = NULL;
  const cli_opt opts[] = {
      {"device", 0, CLI_ENUM, &device, "cpu|cuda", "where the ops run (default cpu)", .names = devices, .must = "must be cpu or cuda"},
      {"ops", 0, CLI_INT, &ops, "N", "framework ops per timed batch (default 2000)", CLI_MIN | CLI_MAX, 1, 10000000,
       .must = "must be an integer from 1 to 10000000"},
      {"iters", 'n', CLI_INT, &iters, "N", "timed batches (default 30)", CLI_MIN | CLI_MAX, 2, CALCMD_MAX_ITERS,
       .must = "(-n) must be an integer from 2 to 1000000"},
      {"warmup_iters", 'w', CLI_INT, &warmups, "W", "untimed batches (default 5)", CLI_MIN | CLI_MAX, 0, CALCMD_MAX_ITERS,
       .must = "(-w) must be an integer from 0 to 1000000"},
      {"python", 0, CLI_STRING, &python, "PY", "the Python with PyTorch (default python3 on PATH)"},
      {"helper", 0, CLI_STRING, &helper, "FILE", "the helper script (default the one built in)"},
      {"output", 'o', CLI_STRING, &output, "FILE", "profile to write (atomically)"},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage, .tables = tables};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (rc) return rc;
  const char *in_flags[] = {"--helper", "--python"}, *in[] = {helper, python};
  if ((rc = calcmd_check_output(x, output)) || (rc = calcmd_not_input(x, "-o", output, in_flags, in, 2))) return rc;
  err_t e = {{0}};
  hostbench_cfg cfg = {.python = python, .helper = helper, .device = devices[device], .ops = ops, .iters = iters, .warmups = warmups};
  hostbench_result r;
  double launch_s = 0;
  char gpu[256] = "";
  /* On a GPU, the raw launch first: without one this fails at once, before Python starts. */
  if (device == 1 && (rc = launchbench_time(iters, &launch_s, gpu, sizeof gpu, &e))) return calcmd_status(x, rc, &e);
  if ((rc = hostbench_run(&cfg, &r, &e))) return calcmd_status(x, rc, &e);
  r.launch_s = launch_s;
  printf("# ddpcalib host: %s on %s, %d batches of %d ops\n", r.framework, r.device, iters, ops);
  printf("# %-22s %12s\n", "quantity", "us");
  printf("  %-22s %12.3f\n", "dispatch per op", r.dispatch_s * 1e6);
  if (launch_s > 0) printf("  %-22s %12.3f   (%s, %d launches per batch)\n", "empty kernel launch", launch_s * 1e6, gpu, LAUNCHBENCH_BATCH);
  printf("  %-22s %12.3f\n", "workload mean", r.workload_s * 1e6);
  printf("  %-22s %12.3f\n", "workload sd (jitter)", r.jitter_s * 1e6);
  printf("# CPU sum of float32 buffers (gloo's reduction): %.2f GB/s\n", r.reduce_Bps / 1e9);
  if (output) {
    profilew_prov p = calcmd_prov("host");
    p.devices = r.device, p.libraries = r.framework;
    cJSON *doc = profilew_new("measured", &p);
    rc = doc ? hostbench_write(doc, &r, &e) : err_set(&e, ERR_NOMEM, "out of memory");
    if (!rc) rc = calcmd_write(doc, output, &e);
    cJSON_Delete(doc);
  }
  hostbench_free(&r);
  return calcmd_status(x, rc, &e);
}
