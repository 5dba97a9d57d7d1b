/* ddpcalib: calibrates this machine and writes the profile ddpsim reads.
 *
 * A thin front end: parses flags, calls the calib library, prints, and maps status to exit code
 * with err_exit_code (sim/err.h: 0 success, 2 usage error, 1 runtime failure). Commands and flags:
 * docs/calib.md. */
#define _GNU_SOURCE
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "channels.h"
#include "commbench.h"
#include "computebench.h"
#include "gpucopy.h"
#include "comm_mpi.h"
#include "fit.h"
#include "nccltune.h"
#include "parse.h"
#include "data.h"
#include "profilew.h"
#include "record.h"
#include "topo.h"
#include "train.h"
#ifdef DDPCALIB_HAVE_CUDA
#include "comm_nccl.h"
#endif

static const char *usage_main =
    "usage: ddpcalib COMMAND [flags]   (ddpcalib COMMAND --help for each)\n"
    "\n"
    "Calibrates this machine with real kernels and real all-reduces, fits cost models, and writes\n"
    "the profile JSON that `ddpsim predict --profile FILE` reads (docs/calib.md, docs/profile.md).\n"
    "\n"
    "commands:\n"
    "  comm      all-reduce sweep (MPI between processes, or NCCL between GPUs); fits the link\n"
    "  compute   times the mLSTM kernels, a GEMM grid and elementwise copies; fits the ops\n"
    "  h2d       host-to-device copy bandwidth (CUDA only)\n"
    "  merge     merges two profiles (the second wins on conflicts)\n"
    "  validate  checks a profile against the schema\n"
    "  train     a real data-parallel training run (DDP buckets over MPI), timed\n"
    "\n"
    "exit status: 0 success, 1 runtime failure, 2 usage error\n";

static const char *usage_comm =
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
    "\n"
    "  --backend mpi|nccl  mpi: MPI_Allreduce between the processes of mpirun (CPU);\n"
    "                      nccl: all -g local GPUs in one process, or one GPU per mpirun process\n"
    "  -b, --minbytes MIN  smallest size in bytes, K/M/G suffixes (1024-based)   [8]\n"
    "  -e, --maxbytes MAX  largest size                                          [32M]\n"
    "  -f, --stepfactor F  size factor between steps, > 1                        [2]\n"
    "  -g, --ngpus GPUS    nccl: GPUs driven by this process                     [1]\n"
    "  -n, --iters N       timed iterations per size                             [20]\n"
    "  -w, --warmup_iters W  untimed warm-up iterations per size                 [5]\n"
    "  -c, --check         check every element of the result (#wrong column)\n"
    "  --link-class NAME   the link class written (must match the topology's name)\n"
    "                      [mpi: shm on one host, net across hosts;\n"
    "                       nccl: nvlink on one host, net across hosts]\n"
    "  --regimes K         at most K size regimes in the fit, 1..4               [3]\n"
    "  --topology T        the machine measured, as a ddpsim topology (file or bundled name): the\n"
    "                      fitted bandwidth is the ring's, spread over the links NCCL's channels\n"
    "                      span (6 NVLinks for 8 GPUs of a DGX-1V, the NICs between hosts);\n"
    "                      bw_Bps is written per link, divided by that count, and the link class\n"
    "                      defaults to the topology's. Without it the ring is taken as one link\n"
    "  --nccl-tuning       nccl: sweep every NCCL_ALGO x NCCL_PROTO, fit comm.nccl (above)\n"
    "  -o, --output FILE   profile to write (atomically); without it, only print\n"
    "  -h, --help          this text\n";

static const char *usage_compute =
    "usage: ddpcalib compute --backend cpu|cuda [--hidden LIST] [--batch LIST] [--seq T]\n"
    "                        [--precision fp32|fp16] [-n ITERS] [-w WARMUPS] [-o PROFILE]\n"
    "\n"
    "Times, with the real kernels (kernels/mlstm.h), the mLSTM forward and backward per step, the\n"
    "weight-gradient GEMMs, the decoder and loss at each hidden size x batch; then a GEMM grid\n"
    "(cblas_sgemm on cpu, cuBLAS on cuda) and elementwise copies of several sizes. Keeps every\n"
    "per-iteration time, fits compute.<precision>.gemm and .ewise as \"model\": \"table\" with a\n"
    "fitted roofline fallback.\n"
    "\n"
    "  --backend cpu|cuda    cpu: CBLAS reference kernels, monotonic clock; cuda: CUDA events\n"
    "  --hidden LIST         hidden sizes H, comma-separated                      [256]\n"
    "  --batch LIST          batch sizes B, comma-separated                       [8]\n"
    "  --seq T               sequence length of the timed mLSTM pass              [8]\n"
    "  --precision P         fp32 or fp16 (fp16: cuda only)                       [fp32]\n"
    "  -n, --iters N         timed iterations of each measurement                 [10]\n"
    "  -w, --warmup_iters W  untimed warm-up iterations                           [2]\n"
    "  --gemm-max D          largest GEMM dimension of the plain grid             [512]\n"
    "  -o, --output FILE     profile to write (atomically); without it, only print\n"
    "  -h, --help            this text\n";

static const char *usage_h2d =
    "usage: ddpcalib h2d --backend cuda [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUPS]\n"
    "                    [-o PROFILE]\n"
    "\n"
    "Host-to-device copy bandwidth with cudaMemcpy (pageable and pinned host memory, synchronous)\n"
    "and cudaMemcpyAsync (pinned, on a stream), timed with CUDA events; fits latency and bandwidth\n"
    "of each and writes them under h2d.<mode>. CUDA only: --backend cpu is a usage error.\n"
    "\n"
    "  --backend cuda       the only backend with a host-device copy\n"
    "  -b, -e, -f           sizes as in comm                                   [4K, 64M, 4]\n"
    "  -n, -w               timed and warm-up iterations                       [10, 2]\n"
    "  -o, --output FILE    profile to write (atomically)\n"
    "  -h, --help           this text\n";

static const char *usage_merge =
    "usage: ddpcalib merge A.json B.json -o OUT.json\n"
    "\n"
    "Merges two profiles, e.g. compute from one run and comm from another. Objects merge key by key\n"
    "down to compute.<precision>.<kind>, comm.links.<class> and samples.<section>.<name>, which B\n"
    "replaces whole when both have them; the merged provenance lists both sources and every path\n"
    "B replaced.\n";

static const char *usage_validate =
    "usage: ddpcalib validate PROFILE.json\n"
    "\n"
    "Checks a profile against docs/profile.md (format, version, every field ddpsim reads present\n"
    "and positive); prints `FILE: ok` or `FILE: what is wrong` and exits 1.\n";

/* Under mpirun every rank would repeat a usage message; only rank 0 (or a plain run) prints. */
/* The whole command line as typed, for the profile's provenance. */
static int g_argc;
static char **g_argv;

static int quiet_rank(void) {
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r) r = getenv("PMI_RANK");
  return r && strcmp(r, "0") != 0;
}

static int fail(int code, const err_t *e) {
  if (!quiet_rank() || code != ERR_USAGE) fprintf(stderr, "ddpcalib: %s\n", e->msg);
  return err_exit_code(code);
}

static int usage_error(const char *cmd, const char *fmt, const char *arg) {
  if (!quiet_rank()) {
    fprintf(stderr, "ddpcalib %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(ddpcalib %s --help for usage)\n", cmd);
  }
  return err_exit_code(ERR_USAGE);
}

/* getopt_long's '?' and ':' into a message naming the offending flag. */
static int bad_flag(const char *cmd, int c, int argc, char **argv) {
  const char *arg = optind - 1 < argc ? argv[optind - 1] : "?";
  return usage_error(cmd, c == ':' ? "flag '%s' needs a value" : "unknown flag '%s'", arg);
}

/* ---------------------------------------------------------------- comm */

static void print_row(const commbench_row *row, void *arg) {
  const commbench_backend *b = arg;
  if (!b->is_root) return;
  char line[256];
  commbench_format_row(row, line, sizeof line);
  printf("%s\n", line);
  fflush(stdout);
}

/* The sweep's median times as (bytes, time) arrays; the caller frees both. */
static int sweep_points(const commbench_result *res, double **bytes, double **t, err_t *e) {
  *bytes = malloc(res->nrows * sizeof **bytes);
  *t = malloc(res->nrows * sizeof **t);
  if (!*bytes || !*t) {
    free(*bytes), free(*t);
    *bytes = *t = NULL;
    return err_set(e, ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < res->nrows; i++) {
    (*bytes)[i] = (double)res->rows[i].bytes;
    (*t)[i] = res->rows[i].median_s;
  }
  return ERR_OK;
}

/* The ring model fitted to the sweep's median times (docs/calib.md "Fitting the link"). */
static int fit_sweep(const commbench_result *res, int nranks, size_t regimes, fit_ring_result *fit, err_t *e) {
  double *bytes, *t;
  int rc = sweep_points(res, &bytes, &t, e);
  if (rc) return rc;
  fit_ring_opts fo = fit_ring_defaults();
  fo.max_regimes = regimes;
  rc = fit_ring(bytes, t, res->nrows, nranks, &fo, fit, e);
  free(bytes);
  free(t);
  return rc;
}

static void print_ring_fit(const char *link_class, const fit_ring_result *fit) {
  printf("# fit (ring model on median times, %zu regime(s)):\n", fit->nregimes);
  for (size_t i = 0; i < fit->nregimes; i++) {
    const fit_regime *g = &fit->regime[i];
    printf("#   %10.0f .. %10.0f B: lat %.3f us/hop, bw %.3f GB/s/link, residual rms %.1f%% max %.1f%%\n",
           g->min_bytes, g->max_bytes, g->lat_s * 1e6, g->bw_Bps / 1e9, g->rms_rel * 100,
           g->max_rel * 100);
  }
  printf("# comm.links.%s: lat_s %.4g, bw_Bps %.4g (residual over the sweep: rms %.1f%%, max %.1f%%)\n",
         link_class, fit->lat_s, fit->bw_Bps, fit->rms_rel * 100, fit->max_rel * 100);
}

/* What one link of the measured ring gives (--topology): the links NCCL's channels span for this
 * run's ranks per host and hosts (channels_link_units), and the link class that is (the topology's
 * intra class on one host, its NIC class across hosts). */
typedef struct {
  double units;         /* >= 1 */
  char from[320];       /* for the profile's source; "" without a topology */
  char cls[64];         /* the topology's class for this measurement */
} link_span;

static int span_of(const char *topology, int nranks, int nhosts, link_span *sp, err_t *e) {
  memset(sp, 0, sizeof *sp);
  sp->units = 1;
  if (!topology) return ERR_OK;
  char path[1024];
  err_t se;
  topo_t *t = NULL;
  if (nranks % nhosts) return err_set(e, ERR_RUNTIME, "%d ranks on %d hosts are not the same number per host", nranks, nhosts);
  int G = nranks / nhosts, rc;
  if ((rc = data_resolve(DATA_TOPOLOGY, topology, path, sizeof path, &se)) || (rc = topo_load(path, &t, &se)))
    return err_set(e, ERR_USAGE, "--topology: %s", se.msg);
  if ((rc = channels_link_units(t, G, nhosts, &sp->units, &se))) {
    topo_destroy(t);
    return err_set(e, ERR_USAGE, "--topology: %s", se.msg);
  }
  snprintf(sp->cls, sizeof sp->cls, "%s", nhosts > 1 ? t->nic_class : t->intra_class);
  snprintf(sp->from, sizeof sp->from, "topology %s, %d GPU(s) per host on %d host(s)", t->name, G, nhosts);
  topo_destroy(t);
  return ERR_OK;
}

/* The link class written: the user's, which must be the topology's when one is given. */
static int span_class(const link_span *sp, const char **link_class, int nhosts, int nccl, err_t *e) {
  if (sp->cls[0] && *link_class && strcmp(*link_class, sp->cls) != 0)
    return err_set(e, ERR_USAGE, "--link-class %s, but the measured ring's links are the topology's '%s' (%s)",
                   *link_class, sp->cls, sp->from);
  if (!*link_class) *link_class = sp->cls[0] ? sp->cls : nhosts > 1 ? "net" : nccl ? "nvlink" : "shm";
  return ERR_OK;
}

static void print_span(const link_span *sp, const char *link_class, double ring_bw_Bps) {
  if (sp->from[0])
    printf("# the ring spans %g %s link(s) (%s): bw_Bps per link %.4g\n", sp->units, link_class, sp->from,
           ring_bw_Bps / sp->units);
}

#ifdef DDPCALIB_HAVE_CUDA
/* Every process agrees on the worst of its `mine` (0 ok, 1 refused, 2 failed). */
static int agree(int mine) {
  int worst = mine;
  if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) return 2;
  return worst;
}

/* One combination: NCCL_ALGO and NCCL_PROTO set, fresh communicators (NCCL reads both when a
 * communicator is created, in tuning.cc, so they cannot change under an open one), one probe
 * all-reduce of a single float, then the sweep. A runtime error at the open or at the probe, on any
 * process, is NCCL refusing the combination: *refused is set, `why` says why, and the status is
 * ERR_OK. No device, a bad -g or no memory stay failures, as does any error during the sweep.
 * On success the backend is left open in *b (the caller closes it). */
static int tuning_open(int ngpus, int a, int q, commbench_backend *b, int *refused, char *why, size_t why_len,
                       err_t *e) {
  *refused = 0;
  setenv("NCCL_ALGO", nccl_algo_env(a), 1);
  setenv("NCCL_PROTO", nccl_proto_name(q), 1);
  int rc = comm_nccl_open(b, ngpus, e);
  int worst = agree(rc == ERR_OK ? 0 : rc == ERR_RUNTIME ? 1 : 2);
  if (worst == 0) {
    double dt;
    rc = b->alloc(b->ctx, 1, e);
    if (!rc) rc = b->fill(b->ctx, 1, e);
    int mine = rc ? 2 : 0;
    if (!rc && (rc = b->allreduce(b->ctx, 1, &dt, e))) mine = 1;
    worst = agree(mine);
  }
  if (worst == 0) return ERR_OK;
  if (worst == 2) {
    comm_nccl_close(b);
    return rc ? rc : err_set(e, ERR_RUNTIME, "nccl: another process failed to open NCCL");
  }
  snprintf(why, why_len, "%s", rc ? e->msg : "refused on another process");
  comm_nccl_close(b);
  *refused = 1;
  return ERR_OK;
}

/* `ddpcalib comm --backend nccl --nccl-tuning`: the sweep per algorithm x protocol, the link from
 * ring/Simple, comm.nccl from all (calib/nccltune.h, docs/calib.md). Returns the exit status. */
static int comm_tuning(const commbench_cfg *cfg, int ngpus, const char *link_class, const char *topology,
                       const char *output, size_t regimes) {
  /* Ring/Simple first: it is the one that must work (the link's bandwidth comes from it). */
  static const int order[NCCL_NALGO * NCCL_NPROTO][2] = {
      {NCCL_ALGO_RING, NCCL_PROTO_SIMPLE}, {NCCL_ALGO_RING, NCCL_PROTO_LL}, {NCCL_ALGO_RING, NCCL_PROTO_LL128},
      {NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE}, {NCCL_ALGO_TREE, NCCL_PROTO_LL}, {NCCL_ALGO_TREE, NCCL_PROTO_LL128}};
  const char *env_names[2] = {"NCCL_ALGO", "NCCL_PROTO"};
  char *saved[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++)
    if (getenv(env_names[i])) saved[i] = strdup(getenv(env_names[i]));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  commbench_result res[NCCL_NALGO][NCCL_NPROTO];
  nccltune_sweep sweep[NCCL_NALGO][NCCL_NPROTO];
  double *pts_bytes[NCCL_NALGO][NCCL_NPROTO], *pts_t[NCCL_NALGO][NCCL_NPROTO];
  memset(res, 0, sizeof res);
  memset(sweep, 0, sizeof sweep);
  memset(pts_bytes, 0, sizeof pts_bytes);
  memset(pts_t, 0, sizeof pts_t);
  commbench_backend info = {0}; /* ring/Simple's description, kept after its communicators close */
  err_t e = {{0}};
  cJSON *doc = NULL;
  int rc = ERR_OK, status = 0;
  link_span span;

  for (int k = 0; k < NCCL_NALGO * NCCL_NPROTO; k++) {
    int a = order[k][0], q = order[k][1], refused;
    char why[sizeof e.msg];
    commbench_backend b;
    if ((rc = tuning_open(ngpus, a, q, &b, &refused, why, sizeof why, &e))) goto done;
    if (refused) {
      if (a == NCCL_ALGO_RING && q == NCCL_PROTO_SIMPLE) {
        rc = err_set(&e, ERR_RUNTIME, "nccl: ring/Simple was refused (%s); it gives the link's bandwidth", why);
        goto done;
      }
      sweep[a][q].refused = 1;
      if (rank == 0) printf("# NCCL_ALGO=%s NCCL_PROTO=%s: refused by NCCL (%s): comm.nccl.%s.%s disabled\n#\n",
                            nccl_algo_env(a), nccl_proto_name(q), why, nccl_algo_name(a),
                            nccl_proto_name(q));
      continue;
    }
    if (k == 0) {
      info = b;
      info.ctx = NULL;
      if ((rc = span_of(topology, b.nranks, b.nhosts, &span, &e)) || (rc = span_class(&span, &link_class, b.nhosts, 1, &e))) {
        comm_nccl_close(&b);
        goto done;
      }
      if (rank == 0)
        printf("# ddpcalib comm --nccl-tuning: backend %s (%s), %d ranks on %d host(s): %s\n"
               "# link class %s; %d warm-up + %d timed iterations per size; time = mean per iteration, "
               "max over ranks\n#\n",
               b.name, b.library, b.nranks, b.nhosts, b.hosts, link_class, cfg->warmups, cfg->iters);
    }
    if (rank == 0) {
      char hdr[512];
      commbench_format_header(hdr, sizeof hdr);
      printf("# NCCL_ALGO=%s NCCL_PROTO=%s (comm.nccl.%s.%s)\n%s\n", nccl_algo_env(a), nccl_proto_name(q),
             nccl_algo_name(a), nccl_proto_name(q), hdr);
      fflush(stdout);
    }
    rc = commbench_run(cfg, &b, print_row, &b, &res[a][q], &e);
    comm_nccl_close(&b);
    if (rc) goto done;
    if (rank == 0) {
      char foot[256];
      commbench_format_footer(&res[a][q], foot, sizeof foot);
      printf("%s\n#\n", foot);
    }
    if (res[a][q].wrong > 0) {
      rc = err_set(&e, ERR_RUNTIME, "comm: %s/%s: %lld wrong elements in the all-reduce results",
                   nccl_algo_name(a), nccl_proto_name(q), res[a][q].wrong);
      goto done;
    }
  }
  if (rank != 0) goto done;

  fit_ring_result fit;
  if ((rc = fit_sweep(&res[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], info.nranks, regimes, &fit, &e))) goto done;
  print_ring_fit(link_class, &fit);
  print_span(&span, link_class, fit.bw_Bps);
  if (info.nranks % info.nhosts) {
    rc = err_set(&e, ERR_RUNTIME, "nccl: %d ranks on %d hosts are not the same number per host", info.nranks,
                 info.nhosts);
    goto done;
  }
  nccltune_setup setup = {.nranks = info.nranks, .nodes = info.nhosts, .gpus_per_node = info.nranks / info.nhosts,
                          .bw_Bps = fit.bw_Bps};
  nccl_hw intra = strncmp(link_class, "pci", 3) == 0 ? NCCL_HW_PCI : NCCL_HW_NVLINK;
  nccl_hw_hops(intra, setup.hop_intra_s);
  nccl_hw_hops(NCCL_HW_NET, setup.hop_net_s);
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) {
      if (sweep[a][q].refused) continue;
      if ((rc = sweep_points(&res[a][q], &pts_bytes[a][q], &pts_t[a][q], &e))) goto done;
      sweep[a][q].bytes = pts_bytes[a][q];
      sweep[a][q].time_s = pts_t[a][q];
      sweep[a][q].n = res[a][q].nrows;
    }
  fit_ring_opts fo = fit_ring_defaults();
  fo.max_regimes = regimes;
  nccltune_result tr;
  if ((rc = nccltune_fit(&setup, (const nccltune_sweep(*)[NCCL_NPROTO])sweep, &fo, &tr, &e))) goto done;
  char hops_src[512];
  snprintf(hops_src, sizeof hops_src,
           "assumed, not measured: NCCL src/graph/tuning.cc hwLat (%s) per algorithm and protocol; "
           "ddpcalib comm --nccl-tuning subtracted them from the measured latency to get comm.nccl base_lat_s",
           nccl_hw_name(setup.nodes > 1 ? NCCL_HW_NET : intra));
  printf("# fit comm.nccl (t = c0 + c1 S per combination; hops assumed from NCCL tuning.cc hwLat: %s inside a "
         "host, network between hosts; bw %.4g B/s from ring/Simple):\n",
         nccl_hw_name(intra), setup.bw_Bps);
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) {
      const nccltune_combo *cb = &tr.c[a][q];
      if (!cb->enabled) {
        printf("#   %s/%-6s disabled (refused by NCCL)\n", nccl_algo_name(a), nccl_proto_name(q));
        continue;
      }
      printf("#   %s/%-6s c0 %9.3f us, hops %9.3f us -> base_lat_s %.4g%s; bw_factor %.4g%s; residual rms %.1f%% "
             "max %.1f%%\n",
             nccl_algo_name(a), nccl_proto_name(q), cb->c0_s * 1e6, cb->hops_s * 1e6, cb->base_lat_s,
             cb->base_clamped ? " (clamped: fit below 0)" : "", cb->bw_factor,
             cb->bw_clamped ? " (clamped: fit above 1)" : "", cb->rms_rel * 100, cb->max_rel * 100);
    }
  if (output) {
    profilew_prov p = {.subcommand = "comm", .argc = g_argc, .argv = g_argv, .devices = info.devices,
                       .hosts = info.hosts, .libraries = info.library};
    doc = profilew_new("measured", &p);
    if (!doc) rc = err_set(&e, ERR_NOMEM, "out of memory");
    if (!rc)
      rc = record_comm(doc, link_class, &info, cfg, &res[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], &fit, span.units,
                       span.from[0] ? span.from : NULL, &e);
    if (!rc)
      rc = record_nccl(doc, link_class, hops_src, &setup, &tr, cfg, (const commbench_result(*)[NCCL_NPROTO])res,
                       &e);
    if (!rc) rc = profilew_write(doc, output, &e);
    if (!rc) printf("# wrote %s\n", output);
  }
done:
  if (rc) status = fail(rc, &e);
  fflush(stdout);
  cJSON_Delete(doc);
  for (int a = 0; a < NCCL_NALGO; a++)
    for (int q = 0; q < NCCL_NPROTO; q++) {
      commbench_result_free(&res[a][q]);
      free(pts_bytes[a][q]);
      free(pts_t[a][q]);
    }
  for (int i = 0; i < 2; i++) {
    if (saved[i]) setenv(env_names[i], saved[i], 1);
    else unsetenv(env_names[i]);
    free(saved[i]);
  }
  return status;
}
#endif

static int cmd_comm(int argc, char **argv) {
  commbench_cfg cfg = {.min_bytes = 8, .max_bytes = 32u << 20, .factor = 2, .iters = 20, .warmups = 5};
  const char *backend = NULL, *link_class = NULL, *output = NULL, *topology = NULL;
  long ngpus = 1, regimes = 3, v;
  err_t e = {{0}};
  int rc;
  int tuning = 0;
  enum { OPT_BACKEND = 256, OPT_LINK, OPT_REGIMES, OPT_TUNING, OPT_TOPO };
  static const struct option opts[] = {
      {"backend", required_argument, 0, OPT_BACKEND}, {"minbytes", required_argument, 0, 'b'},
      {"maxbytes", required_argument, 0, 'e'},        {"stepfactor", required_argument, 0, 'f'},
      {"ngpus", required_argument, 0, 'g'},           {"iters", required_argument, 0, 'n'},
      {"warmup_iters", required_argument, 0, 'w'},    {"check", no_argument, 0, 'c'},
      {"link-class", required_argument, 0, OPT_LINK}, {"regimes", required_argument, 0, OPT_REGIMES},
      {"output", required_argument, 0, 'o'},          {"help", no_argument, 0, 'h'},
      {"nccl-tuning", no_argument, 0, OPT_TUNING},    {"topology", required_argument, 0, OPT_TOPO},
      {0, 0, 0, 0}};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":b:e:f:g:n:w:co:h", opts, NULL)) != -1) {
    rc = ERR_OK;
    switch (c) {
    case OPT_BACKEND: backend = optarg; break;
    case OPT_LINK: link_class = optarg; break;
    case OPT_TUNING: tuning = 1; break;
    case OPT_TOPO: topology = optarg; break;
    case OPT_REGIMES: rc = parse_int(optarg, "--regimes", 1, FIT_MAX_REGIMES, &regimes, &e); break;
    case 'b': rc = parse_bytes(optarg, "-b", &cfg.min_bytes, &e); break;
    case 'e': rc = parse_bytes(optarg, "-e", &cfg.max_bytes, &e); break;
    case 'f': rc = parse_double(optarg, "-f", &cfg.factor, &e); break;
    case 'g': rc = parse_int(optarg, "-g", 1, 64, &ngpus, &e); break;
    case 'n': rc = parse_int(optarg, "-n", 1, 1000000, &v, &e), cfg.iters = (int)v; break;
    case 'w': rc = parse_int(optarg, "-w", 0, 1000000, &v, &e), cfg.warmups = (int)v; break;
    case 'c': cfg.check = 1; break;
    case 'o': output = optarg; break;
    case 'h': fputs(usage_comm, stdout); return 0;
    default: return bad_flag("comm", c, argc, argv);
    }
    if (rc) return fail(rc, &e);
  }
  if (optind < argc) return usage_error("comm", "unexpected argument '%s'", argv[optind]);
  if (!backend) return usage_error("comm", "%s", "--backend mpi|nccl is required");
  int nccl = strcmp(backend, "nccl") == 0;
  if (!nccl && strcmp(backend, "mpi") != 0)
    return usage_error("comm", "--backend: '%s' is not mpi or nccl", backend);
  if (!nccl && ngpus != 1) return usage_error("comm", "%s", "-g applies to --backend nccl only");
  if (!nccl && tuning)
    return usage_error("comm", "%s",
                       "--nccl-tuning applies to --backend nccl only (it sets NCCL_ALGO and NCCL_PROTO)");
  if (link_class && (!*link_class || strpbrk(link_class, ". \t\"\\")))
    return usage_error("comm", "--link-class: '%s' must be a plain name (no dots, spaces, quotes)", link_class);
  if ((rc = commbench_check_cfg(&cfg, &e))) return fail(rc, &e);
#ifndef DDPCALIB_HAVE_CUDA
  if (nccl) {
    fprintf(stderr, "ddpcalib: comm --backend nccl: this ddpcalib was built without CUDA/NCCL\n");
    return 1;
  }
#endif

  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "ddpcalib: MPI_Init failed\n");
    return 1;
  }
#ifdef DDPCALIB_HAVE_CUDA
  if (tuning) {
    int st = comm_tuning(&cfg, (int)ngpus, link_class, topology, output, (size_t)regimes);
    MPI_Finalize();
    return st;
  }
#endif
  commbench_backend b;
  commbench_result res = {0};
  cJSON *doc = NULL;
  int status = 0;
#ifdef DDPCALIB_HAVE_CUDA
  if (nccl)
    rc = comm_nccl_open(&b, (int)ngpus, &e);
  else
#endif
    rc = comm_mpi_open(&b, &e);
  if (rc) {
    status = fail(rc, &e);
    goto done;
  }
  link_span span;
  if ((rc = span_of(topology, b.nranks, b.nhosts, &span, &e)) || (rc = span_class(&span, &link_class, b.nhosts, nccl, &e))) {
    status = fail(rc, &e);
    goto done;
  }
  if (b.is_root) {
    char hdr[512];
    printf("# ddpcalib comm: backend %s (%s), %d ranks on %d host(s): %s\n", b.name, b.library,
           b.nranks, b.nhosts, b.hosts);
    printf("# link class %s; %d warm-up + %d timed iterations per size; time = mean per "
           "iteration, max over ranks\n#\n", link_class, cfg.warmups, cfg.iters);
    commbench_format_header(hdr, sizeof hdr);
    printf("%s\n", hdr);
    fflush(stdout);
  }
  rc = commbench_run(&cfg, &b, print_row, &b, &res, &e);
  if (rc) {
    status = fail(rc, &e);
    goto done;
  }
  if (!b.is_root) goto done;
  char foot[256];
  commbench_format_footer(&res, foot, sizeof foot);
  printf("%s\n#\n", foot);
  if (res.wrong > 0) {
    fprintf(stderr, "ddpcalib: comm: %lld wrong elements in the all-reduce results\n", res.wrong);
    status = 1;
    goto done;
  }
  if (res.nrows < 2 && !output) {
    printf("# fit: skipped (one size; give -e > -b to fit latency and bandwidth)\n");
    goto done;
  }
  fit_ring_result fit;
  if ((rc = fit_sweep(&res, b.nranks, (size_t)regimes, &fit, &e))) {
    status = fail(rc, &e);
    goto done;
  }
  print_ring_fit(link_class, &fit);
  print_span(&span, link_class, fit.bw_Bps);
  if (output) {
    char libs[256];
    snprintf(libs, sizeof libs, "%s", b.library);
    profilew_prov p = {.subcommand = "comm", .argc = g_argc, .argv = g_argv, .devices = b.devices,
                       .hosts = b.hosts, .libraries = libs};
    doc = profilew_new("measured", &p);
    if (!doc) rc = err_set(&e, ERR_NOMEM, "out of memory");
    if (!rc) rc = record_comm(doc, link_class, &b, &cfg, &res, &fit, span.units, span.from[0] ? span.from : NULL, &e);
    if (!rc) rc = profilew_write(doc, output, &e);
    if (rc) {
      status = fail(rc, &e);
      goto done;
    }
    printf("# wrote %s\n", output);
  }
done:
  fflush(stdout);
  cJSON_Delete(doc);
  commbench_result_free(&res);
#ifdef DDPCALIB_HAVE_CUDA
  if (nccl)
    comm_nccl_close(&b);
  else
#endif
    comm_mpi_close(&b);
  MPI_Finalize();
  return status;
}

/* ---------------------------------------------------------------- merge, validate */

static int cmd_merge(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                       {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  const char *output = NULL;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
    if (c == 'o') output = optarg;
    else if (c == 'h') return fputs(usage_merge, stdout), 0;
    else return bad_flag("merge", c, argc, argv);
  }
  if (argc - optind != 2) return usage_error("merge", "%s", "needs exactly two input profiles");
  if (!output) return usage_error("merge", "%s", "-o OUT.json is required");
  const char *fa = argv[optind], *fb = argv[optind + 1];
  err_t e = {{0}};
  cJSON *a = NULL, *b = NULL, *m = NULL;
  int rc = profilew_load(fa, &a, &e);
  if (!rc) rc = profilew_load(fb, &b, &e);
  profilew_prov p = {.subcommand = "merge", .argc = g_argc, .argv = g_argv};
  if (!rc) rc = profilew_merge(a, fa, b, fb, &p, &m, &e);
  if (!rc) rc = profilew_write(m, output, &e);
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(m);
  if (rc) return fail(rc, &e);
  printf("merged %s and %s (the latter wins on conflicts) into %s\n", fa, fb, output);
  return 0;
}

static int cmd_validate(int argc, char **argv) {
  static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    if (c == 'h') return fputs(usage_validate, stdout), 0;
    return bad_flag("validate", c, argc, argv);
  }
  if (argc - optind != 1) return usage_error("validate", "%s", "needs exactly one profile");
  err_t e = {{0}};
  cJSON *d = NULL;
  int rc = profilew_load(argv[optind], &d, &e);
  if (!rc) rc = profilew_validate(d, argv[optind], &e);
  cJSON_Delete(d);
  if (rc) return fail(rc, &e);
  printf("%s: ok\n", argv[optind]);
  return 0;
}

/* ---------------------------------------------------------------- compute */

static void print_meas(const computebench_meas *m, void *arg) {
  (void)arg;
  char shape[64] = "", rate[32] = "";
  if (m->m)
    snprintf(shape, sizeof shape, "%ldx%ldx%ld", m->m, m->n, m->k);
  else if (m->kind == COMPUTEBENCH_EWISE)
    snprintf(shape, sizeof shape, "%.0f B", m->bytes);
  if (m->flops > 0) snprintf(rate, sizeof rate, "%.2f", m->flops / m->median_s / 1e9);
  else if (m->bytes > 0) snprintf(rate, sizeof rate, "%.2f GB/s", m->bytes / m->median_s / 1e9);
  printf("%-12s %5d %4d %4d  %-18s %6zu %11.2f %11.2f %9.2f  %s\n", m->name, m->H, m->B, m->T, shape,
         m->nsamples, m->median_s * 1e6, m->mean_s * 1e6, m->stdev_s * 1e6, rate);
  fflush(stdout);
}

static int cmd_compute(int argc, char **argv) {
  computebench_cfg cfg = {.hidden = {256}, .nhidden = 1, .batch = {8}, .nbatch = 1, .seq = 8,
                          .iters = 10, .warmups = 2, .gemm_max = 512, .copy_max_bytes = 16 << 20};
  const char *output = NULL, *backend = NULL, *prec = "fp32";
  long v;
  err_t e = {{0}};
  int rc;
  enum { OPT_BACKEND = 256, OPT_HIDDEN, OPT_BATCH, OPT_SEQ, OPT_PREC, OPT_GEMM_MAX };
  static const struct option opts[] = {
      {"backend", required_argument, 0, OPT_BACKEND}, {"hidden", required_argument, 0, OPT_HIDDEN},
      {"batch", required_argument, 0, OPT_BATCH},     {"seq", required_argument, 0, OPT_SEQ},
      {"precision", required_argument, 0, OPT_PREC},  {"gemm-max", required_argument, 0, OPT_GEMM_MAX},
      {"iters", required_argument, 0, 'n'},           {"warmup_iters", required_argument, 0, 'w'},
      {"output", required_argument, 0, 'o'},          {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":n:w:o:h", opts, NULL)) != -1) {
    rc = ERR_OK;
    switch (c) {
    case OPT_BACKEND: backend = optarg; break;
    case OPT_HIDDEN:
      rc = parse_int_list(optarg, "--hidden", 1, 65536, cfg.hidden, COMPUTEBENCH_MAX_LIST, &cfg.nhidden, &e);
      break;
    case OPT_BATCH:
      rc = parse_int_list(optarg, "--batch", 1, 65536, cfg.batch, COMPUTEBENCH_MAX_LIST, &cfg.nbatch, &e);
      break;
    case OPT_SEQ: rc = parse_int(optarg, "--seq", 1, 100000, &v, &e), cfg.seq = (int)v; break;
    case OPT_PREC: prec = optarg; break;
    case OPT_GEMM_MAX: rc = parse_int(optarg, "--gemm-max", 16, 65536, &cfg.gemm_max, &e); break;
    case 'n': rc = parse_int(optarg, "-n", 1, 1000000, &v, &e), cfg.iters = (int)v; break;
    case 'w': rc = parse_int(optarg, "-w", 0, 1000000, &v, &e), cfg.warmups = (int)v; break;
    case 'o': output = optarg; break;
    case 'h': fputs(usage_compute, stdout); return 0;
    default: return bad_flag("compute", c, argc, argv);
    }
    if (rc) return fail(rc, &e);
  }
  if (optind < argc) return usage_error("compute", "unexpected argument '%s'", argv[optind]);
  if (!backend) return usage_error("compute", "%s", "--backend cpu|cuda is required");
  if (strcmp(backend, "cpu") == 0) cfg.backend = COMPUTEBENCH_CPU;
  else if (strcmp(backend, "cuda") == 0) cfg.backend = COMPUTEBENCH_CUDA;
  else return usage_error("compute", "--backend: '%s' is not cpu or cuda", backend);
  if (strcmp(prec, "fp32") == 0) cfg.precision = COMPUTEBENCH_FP32;
  else if (strcmp(prec, "fp16") == 0) cfg.precision = COMPUTEBENCH_FP16;
  else return usage_error("compute", "--precision: '%s' is not fp32 or fp16", prec);
  if ((rc = computebench_check_cfg(&cfg, &e))) return fail(rc, &e);

  printf("# ddpcalib compute: backend %s, %s, %d warm-up + %d timed runs per measurement\n", backend,
         prec, cfg.warmups, cfg.iters);
  printf("# %-10s %5s %4s %4s  %-18s %6s %11s %11s %9s  %s\n", "op", "H", "B", "T", "m x n x k | size",
         "runs", "median(us)", "mean(us)", "sd(us)", "GFLOP/s | GB/s");
  computebench_result res = {0};
  cJSON *doc = NULL;
  int status = 0;
  record_compute_fit fit;
  rc = computebench_run(&cfg, print_meas, NULL, &res, &e);
  if (!rc) {
    profilew_prov p = {.subcommand = "compute", .argc = g_argc, .argv = g_argv,
                       .devices = res.device, .libraries = res.library};
    doc = profilew_new("measured", &p);
    rc = doc ? record_compute(doc, &cfg, &res, &fit, &e) : err_set(&e, ERR_NOMEM, "out of memory");
  }
  if (rc) {
    status = fail(rc, &e);
    goto done;
  }
  printf("# fit compute.%s.gemm: table of %zu shapes (leave-one-out error rms %.1f%%, max %.1f%%);\n"
         "#   fallback roofline launch %.2f us, %.2f GFLOP/s, %zu compute-bound; residual rms %.1f%% max %.1f%%\n",
         prec, fit.gemm_points, fit.gemm_loo_rms * 100, fit.gemm_loo_max * 100, fit.gemm.launch_s * 1e6,
         fit.gemm.rate_flops / 1e9, fit.gemm.compute_bound, fit.gemm.rms_rel * 100, fit.gemm.max_rel * 100);
  printf("# fit compute.%s.ewise: table of %zu sizes (leave-one-out error rms %.1f%%, max %.1f%%);\n"
         "#   fallback roofline launch %.2f us, %.2f GB/s; residual rms %.1f%% max %.1f%%\n",
         prec, fit.ewise_points, fit.ewise_loo_rms * 100, fit.ewise_loo_max * 100, fit.ewise.launch_s * 1e6,
         fit.ewise.mem_bw_Bps / 1e9, fit.ewise.rms_rel * 100, fit.ewise.max_rel * 100);
  if (output) {
    if ((rc = profilew_write(doc, output, &e))) {
      status = fail(rc, &e);
      goto done;
    }
    printf("# wrote %s\n", output);
  }
done:
  cJSON_Delete(doc);
  computebench_result_free(&res);
  return status;
}

/* ---------------------------------------------------------------- h2d */

static int cmd_h2d(int argc, char **argv) {
  size_t minb = 4096, maxb = 64u << 20;
  double factor = 4;
  long iters = 10, warmups = 2;
  const char *output = NULL, *backend = NULL;
  err_t e = {{0}};
  int rc;
  enum { OPT_BACKEND = 256 };
  static const struct option opts[] = {
      {"backend", required_argument, 0, OPT_BACKEND}, {"minbytes", required_argument, 0, 'b'},
      {"maxbytes", required_argument, 0, 'e'},        {"stepfactor", required_argument, 0, 'f'},
      {"iters", required_argument, 0, 'n'},           {"warmup_iters", required_argument, 0, 'w'},
      {"output", required_argument, 0, 'o'},          {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":b:e:f:n:w:o:h", opts, NULL)) != -1) {
    rc = ERR_OK;
    switch (c) {
    case OPT_BACKEND: backend = optarg; break;
    case 'b': rc = parse_bytes(optarg, "-b", &minb, &e); break;
    case 'e': rc = parse_bytes(optarg, "-e", &maxb, &e); break;
    case 'f': rc = parse_double(optarg, "-f", &factor, &e); break;
    case 'n': rc = parse_int(optarg, "-n", 1, 1000000, &iters, &e); break;
    case 'w': rc = parse_int(optarg, "-w", 0, 1000000, &warmups, &e); break;
    case 'o': output = optarg; break;
    case 'h': fputs(usage_h2d, stdout); return 0;
    default: return bad_flag("h2d", c, argc, argv);
    }
    if (rc) return fail(rc, &e);
  }
  if (optind < argc) return usage_error("h2d", "unexpected argument '%s'", argv[optind]);
  if (!backend) return usage_error("h2d", "%s", "--backend cuda is required");
  if (strcmp(backend, "cpu") == 0)
    return usage_error("h2d", "%s", "--backend cpu: a host-to-device copy needs a GPU; use --backend cuda");
  if (strcmp(backend, "cuda") != 0) return usage_error("h2d", "--backend: '%s' is not cuda", backend);
  if (maxb < minb) return usage_error("h2d", "%s", "-e: max size is below min size");
  if (!(factor > 1)) return usage_error("h2d", "%s", "-f: the factor must be > 1");

  char dev[256], ver[128];
  if ((rc = gpucopy_probe(dev, sizeof dev, ver, sizeof ver, &e))) return fail(rc, &e);
  size_t nsizes = 0;
  for (double s = (double)minb; s <= (double)maxb; s *= factor) nsizes++;
  double *bytes = calloc(nsizes, sizeof *bytes), *med = calloc(nsizes, sizeof *med);
  double *t = calloc((size_t)iters, sizeof *t);
  profilew_prov p = {.subcommand = "h2d", .argc = g_argc, .argv = g_argv, .devices = dev, .libraries = ver};
  cJSON *doc = profilew_new("measured", &p);
  cJSON *h2d = doc ? profilew_obj(doc, "h2d") : NULL;
  cJSON *samples = doc ? profilew_obj(profilew_obj(doc, "samples"), "h2d") : NULL;
  int status = 0;
  if (!bytes || !med || !t || !h2d || !samples) {
    rc = err_set(&e, ERR_NOMEM, "out of memory");
    goto done;
  }
  printf("# ddpcalib h2d: %s, %s; median of %ld timed copies (CUDA events)\n", dev, ver, iters);
  printf("# %-14s %12s %12s %10s\n", "mode", "size(B)", "median(us)", "GB/s");
  for (int mode = GPUCOPY_H2D_PAGEABLE; mode < GPUCOPY_NMODES; mode++) {
    cJSON *sm = profilew_obj(samples, gpucopy_mode_name(mode)), *arr = cJSON_AddArrayToObject(sm, "sizes");
    if (!arr) {
      rc = err_set(&e, ERR_NOMEM, "out of memory");
      goto done;
    }
    size_t k = 0;
    for (double s = (double)minb; k < nsizes; s *= factor, k++) {
      bytes[k] = (double)(size_t)s;
      if ((rc = gpucopy_time(mode, (size_t)s, (int)warmups, (int)iters, t, &e))) goto done;
      double *sorted = malloc((size_t)iters * sizeof *sorted);
      if (!sorted) {
        rc = err_set(&e, ERR_NOMEM, "out of memory");
        goto done;
      }
      memcpy(sorted, t, (size_t)iters * sizeof *t);
      for (long i = 1; i < iters; i++)
        for (long j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
          double x = sorted[j];
          sorted[j] = sorted[j - 1];
          sorted[j - 1] = x;
        }
      med[k] = iters % 2 ? sorted[iters / 2] : 0.5 * (sorted[iters / 2 - 1] + sorted[iters / 2]);
      free(sorted);
      printf("  %-14s %12.0f %12.2f %10.2f\n", gpucopy_mode_name(mode), bytes[k], med[k] * 1e6,
             bytes[k] / med[k] / 1e9);
      cJSON *o = cJSON_CreateObject();
      if (!o) {
        rc = err_set(&e, ERR_NOMEM, "out of memory");
        goto done;
      }
      cJSON_AddItemToArray(arr, o);
      cJSON_AddNumberToObject(o, "bytes", bytes[k]);
      cJSON_AddNumberToObject(o, "median_s", med[k]);
      cJSON_AddItemToObject(o, "times_s", cJSON_CreateDoubleArray(t, (int)iters));
    }
    fit_line l;
    if (nsizes < 2) continue;
    if ((rc = fit_line_rel(bytes, med, nsizes, &l, &e))) goto done;
    cJSON *m = profilew_obj(h2d, gpucopy_mode_name(mode));
    if (!m || (rc = profilew_num(m, "lat_s", l.c0 > 0 ? l.c0 : 0, &e)) ||
        (rc = profilew_num(m, "bw_Bps", l.c1 > 0 ? 1.0 / l.c1 : 0, &e)) ||
        (rc = profilew_num(m, "rms_rel_resid", l.rms_rel, &e)) ||
        (rc = profilew_num(m, "max_rel_resid", l.max_rel, &e)))
      goto done;
    printf("# fit %s: lat %.2f us, bw %.2f GB/s, residual rms %.1f%% max %.1f%%\n", gpucopy_mode_name(mode),
           l.c0 * 1e6, l.c1 > 0 ? 1e-9 / l.c1 : 0, l.rms_rel * 100, l.max_rel * 100);
  }
  if (output && (rc = profilew_write(doc, output, &e))) goto done;
  if (output) printf("# wrote %s\n", output);
done:
  if (rc) status = fail(rc, &e);
  free(bytes), free(med), free(t);
  cJSON_Delete(doc);
  return status;
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  g_argc = argc;
  g_argv = argv;
  if (argc < 2) {
    fputs(usage_main, stderr);
    return err_exit_code(ERR_USAGE);
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
    fputs(usage_main, stdout);
    return 0;
  }
  /* Each command parses argv[1..]: its own name stands where the program name was. */
  if (strcmp(cmd, "comm") == 0) return cmd_comm(argc - 1, argv + 1);
  if (strcmp(cmd, "merge") == 0) return cmd_merge(argc - 1, argv + 1);
  if (strcmp(cmd, "validate") == 0) return cmd_validate(argc - 1, argv + 1);
  if (strcmp(cmd, "compute") == 0) return cmd_compute(argc - 1, argv + 1);
  if (strcmp(cmd, "h2d") == 0) return cmd_h2d(argc - 1, argv + 1);
  if (strcmp(cmd, "train") == 0) return train_main(argc - 1, argv + 1);
  if (!quiet_rank()) fprintf(stderr, "ddpcalib: unknown command '%s'\n%s", cmd, usage_main);
  return err_exit_code(ERR_USAGE);
}
