/* cmd_comm: `ddpcalib comm`, the all-reduce sweep (MPI between processes, or NCCL between GPUs),
 * printed as nccl-tests prints it, fitted (calib/commfit.h) and written as comm.links.<class>.
 * --nccl-tuning is cmd_comm_tuning.c. docs/calib.md, "comm". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "calcmd.h"
#include "comm_mpi.h"
#include "data.h"
#include "fit.h"
#include "record.h"
#ifdef DDPCALIB_HAVE_CUDA
#include "comm_nccl.h"
#endif

static const char *usage =
    "usage: [mpirun -np N] ddpcalib comm --backend mpi|nccl -b MIN -e MAX -f FACTOR [-g GPUS]\n"
    "                      [-n ITERS] [-w WARMUPS] [-c] [--link-class NAME] [--topology T]\n"
    "                      [--nccl-tuning] [-o PROFILE]\n"
    "\n"
    "All-reduce (float, sum, out of place) sweep at sizes MIN, MIN*FACTOR, ... <= MAX, printed as\n"
    "nccl-tests prints it; then fits the ring model t(S) = 2(n-1)(lat + S/(n bw)) per size regime\n"
    "and writes it as comm.links.NAME.\n"
    "\n"
    "With --nccl-tuning (nccl only) the sweep runs once per NCCL algorithm x protocol (ring, tree x\n"
    "LL, LL128, Simple), NCCL_ALGO and NCCL_PROTO set before each combination's communicators are\n"
    "created; a combination NCCL refuses is left disabled. ring/Simple gives comm.links.NAME as\n"
    "above; every combination is fitted as t = c0 + c1 S and written as comm.nccl.<algo>.<proto>:\n"
    "  base_lat_s = c0 - hop terms    bw_factor = (2(n-1)/n ring | 2 tree) / (c1 bw)\n"
    "  ring hop terms: (2(n-1) - 2(nodes-1)) hop_intra + 2(nodes-1) hop_net\n"
    "  tree hop terms: 2 ((G-1) hop_intra + log2(nodes) hop_net)\n"
    "with bw ring/Simple's bandwidth. The hop latencies are assumed, not measured (one node count\n"
    "cannot separate them from the base): NCCL's tuning.cc hwLat, NVLink inside a host (PCI when\n"
    "NAME starts with pci), network between hosts; written as comm.links.NAME.hop_lat_s.\n"
    "\n";

static const char *const backends[] = {"mpi", "nccl", NULL};
enum { BACKEND_MPI, BACKEND_NCCL };

/* The plain sweep on an open backend b: table, fit, profile. Rank 0 prints and writes. */
static int sweep(cli_ctx *x, commbench_backend *b, const commbench_cfg *cfg, const char *link_class,
                 const char *topology, const char *output, int regimes, int nccl, int accept_poor) {
  err_t e = {{0}};
  commbench_result res = {0};
  cJSON *doc = NULL;
  commfit_span span;
  int rc = commfit_span_of(topology, b->nranks, b->nhosts, &span, &e);
  if (!rc) rc = commfit_link_class(&span, &link_class, b->nhosts, nccl, &e);
  if (rc) return calcmd_status(x, rc, &e);
  if (b->is_root) {
    char hdr[512];
    printf("# ddpcalib comm: backend %s (%s), %d ranks on %d host(s): %s\n", b->name, b->library, b->nranks,
           b->nhosts, b->hosts);
    printf("# link class %s; %d warm-up + %d timed iterations per size; time = mean per "
           "iteration, max over ranks\n#\n", link_class, cfg->warmups, cfg->iters);
    commbench_format_header(hdr, sizeof hdr);
    printf("%s\n", hdr);
    fflush(stdout);
  }
  if ((rc = commbench_run(cfg, b, calcmd_print_row, b, &res, &e)) || !b->is_root) goto done;
  char foot[256];
  commbench_format_footer(&res, foot, sizeof foot);
  printf("%s\n#\n", foot);
  if (res.wrong > 0) {
    rc = err_set(&e, ERR_RUNTIME, "%lld wrong elements in the all-reduce results", res.wrong);
    goto done;
  }
  if (res.nrows < 2 && !output) {
    printf("# fit: skipped (one size; give -e > -b to fit latency and bandwidth)\n");
    goto done;
  }
  fit_ring_result fit;
  if ((rc = commfit_ring(&res, b->nranks, (size_t)regimes, &fit, &e))) goto done;
  calcmd_print_ring_fit(link_class, &fit);
  calcmd_print_span(&span, link_class, fit.bw_Bps);
  char what[128], why[512];
  int keepable, poor = fit_ring_poor(&fit, why, sizeof why, &keepable);
  snprintf(what, sizeof what, "comm.links.%s", link_class);
  if (poor && (rc = calcmd_gate(what, why, keepable, accept_poor, &e))) goto done;
  if (output) {
    profilew_prov p = calcmd_prov("comm");
    p.devices = b->devices, p.hosts = b->hosts, p.libraries = b->library;
    doc = profilew_new("measured", &p);
    if (!doc) rc = err_set(&e, ERR_NOMEM, "out of memory");
    if (!rc) rc = record_comm(doc, link_class, b, cfg, &res, &fit, span.units, span.from[0] ? span.from : NULL, &e);
    if (!rc && poor) rc = calcmd_mark_poor(doc, what, why, &e);
    if (!rc) rc = calcmd_write(doc, output, &e);
  }
done:
  fflush(stdout);
  cJSON_Delete(doc);
  commbench_result_free(&res);
  return calcmd_status(x, rc, &e);
}

int cmd_comm(cli_ctx *x, int argc, char **argv) {
  commbench_cfg cfg = {.min_bytes = 8, .max_bytes = 32u << 20, .factor = 2, .iters = 20, .warmups = 5};
  const char *link_class = NULL, *output = NULL, *topology = NULL;
  int backend = -1, ngpus = 1, regimes = 3, tuning = 0, accept_poor = 0;
  const cli_opt opts[] = {
      {"backend", 0, CLI_ENUM, &backend, "mpi|nccl",
       "mpi: MPI_Allreduce between the processes of mpirun (CPU);\n"
       "nccl: all -g local GPUs in one process, or one GPU per mpirun process", .names = backends},
      {"minbytes", 'b', CLI_CUSTOM, &cfg.min_bytes, "MIN", "smallest size in bytes, K/M/G suffixes (1024-based; default 8)",
       .parse = calcmd_bytes, .must = "(-b) " CALCMD_BYTES_MUST},
      {"maxbytes", 'e', CLI_CUSTOM, &cfg.max_bytes, "MAX", "largest size (default 32M)",
       .parse = calcmd_bytes, .must = "(-e) " CALCMD_BYTES_MUST},
      {"stepfactor", 'f', CLI_DOUBLE, &cfg.factor, "F", "size factor between steps, > 1 (default 2)",
       CLI_MIN_OPEN, 1, .must = "(-f) must be a number > 1"},
      {"ngpus", 'g', CLI_INT, &ngpus, "GPUS", "nccl: GPUs driven by this process (default 1)", CLI_MIN | CLI_MAX, 1,
       64, .must = "(-g) must be an integer from 1 to 64"},
      {"iters", 'n', CLI_INT, &cfg.iters, "N", "timed iterations per size (default 20)", CLI_MIN | CLI_MAX, 1,
       CALCMD_MAX_ITERS, .must = "(-n) must be an integer from 1 to 1000000"},
      {"warmup_iters", 'w', CLI_INT, &cfg.warmups, "W", "untimed warm-up iterations per size (default 5)",
       CLI_MIN | CLI_MAX, 0, CALCMD_MAX_ITERS, .must = "(-w) must be an integer from 0 to 1000000"},
      {"check", 'c', CLI_FLAG, &cfg.check, NULL, "check every element of the result (#wrong column)"},
      {"link-class", 0, CLI_STRING, &link_class, "NAME",
       "the link class written (must match the topology's name)\n"
       "[mpi: shm on one host, net across hosts;\n nccl: nvlink on one host, net across hosts]"},
      {"regimes", 0, CLI_INT, &regimes, "K", "at most K size regimes in the fit, 1..4 (default 3)", CLI_MIN | CLI_MAX, 1,
       FIT_MAX_REGIMES},
      {"topology", 0, CLI_STRING, &topology, "T",
       "the machine measured, as a ddpsim topology (file or bundled name): the\n"
       "fitted bandwidth is the ring's, spread over the links NCCL's channels\n"
       "span (6 NVLinks for 8 GPUs of a DGX-1V, the NICs between hosts);\n"
       "bw_Bps is written per link, divided by that count, and the link class\n"
       "defaults to the topology's. Without it the ring is taken as one link"},
      {"nccl-tuning", 0, CLI_FLAG, &tuning, NULL, "nccl: sweep every NCCL_ALGO x NCCL_PROTO, fit comm.nccl (above)"},
      {"output", 'o', CLI_STRING, &output, "FILE", "profile to write (atomically); without it, only print"},
      {"accept-poor-fit", 0, CLI_FLAG, &accept_poor, NULL, CALCMD_ACCEPT_POOR_HELP},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage, .tables = tables};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (rc) return rc;
  int nccl = backend == BACKEND_NCCL;
  if (backend < 0) return cli_usage(x, "--backend mpi|nccl is required");
  if (!nccl && ngpus != 1) return cli_usage(x, "-g applies to --backend nccl only");
  if (!nccl && tuning)
    return cli_usage(x, "--nccl-tuning applies to --backend nccl only (it sets NCCL_ALGO and NCCL_PROTO)");
  if (link_class && (!*link_class || strpbrk(link_class, ". \t\"\\")))
    return cli_usage(x, "--link-class must be a plain name (no dots, spaces, quotes), got '%s'", link_class);
  err_t e = {{0}};
  if ((rc = commbench_check_cfg(&cfg, &e))) return calcmd_status(x, rc, &e);
  char tpath[4096];
  const char *tin = data_resolved(DATA_TOPOLOGY, topology, tpath, sizeof tpath);
  if ((rc = calcmd_check_output(x, output)) || (rc = calcmd_not_input(x, "-o", output, (const char *[]){"--topology"}, &tin, 1)))
    return rc;
#ifndef DDPCALIB_HAVE_CUDA
  if (nccl) return cli_fail(x, ERR_RUNTIME, "--backend nccl: this ddpcalib was built without CUDA/NCCL");
#endif
  if ((rc = calcmd_mpi_init(x, &argc, &argv))) return rc;
  commbench_backend b = {0};
#ifdef DDPCALIB_HAVE_CUDA
  if (tuning) {
    rc = cmd_comm_tuning(x, &cfg, ngpus, link_class, topology, output, regimes, accept_poor);
    MPI_Finalize();
    return rc;
  }
  if (nccl) {
    if (!(rc = comm_nccl_open(&b, ngpus, &e))) rc = sweep(x, &b, &cfg, link_class, topology, output, regimes, 1, accept_poor);
    else rc = calcmd_status(x, rc, &e);
    comm_nccl_close(&b);
    MPI_Finalize();
    return rc;
  }
#endif
  if (!(rc = comm_mpi_open(&b, &e))) rc = sweep(x, &b, &cfg, link_class, topology, output, regimes, 0, accept_poor);
  else rc = calcmd_status(x, rc, &e);
  comm_mpi_close(&b);
  MPI_Finalize();
  return rc;
}
