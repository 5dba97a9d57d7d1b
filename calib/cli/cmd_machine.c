/* cmd_machine: `ddpcalib machine`, this machine calibrated in one step into one complete profile
 * and the topology that names its link class, which `ddpsim predict` takes as they are:
 * compute (the real kernels, calib/computebench.h), the all-reduce between N processes of this
 * host (MPI, calib/commbench.h), fitted as comm.links.shm, gloo's all-reduce between them where
 * PyTorch is installed (calib/gloo_sweep.py), fitted as comm.links.tcp, and the host's cost per
 * call. Run plainly, it sweeps gloo, then runs itself under mpirun (exec: one process tree,
 * nothing left behind). docs/calib.md, "machine". */
#define _POSIX_C_SOURCE 200809L /* mkstemp, setenv, posix_spawn */
#include <errno.h>
#include <mpi.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "afile.h"
#include "calcmd.h"
#include "comm_mpi.h"
#include "commfit.h"
#include "computebench.h"
#include "data.h"
#include "fit.h"
#include "ncclog.h"
#include "profile.h"
#include "record.h"
#include "topo.h"
#include "txt.h"

extern char **environ;

/* The plain run's gloo sweep, handed to the ranks (its temporary log's path). */
#define GLOO_LOG_ENV "DDPCALIB_GLOO_LOG"
#define GLOO_HELPER "calib/gloo_sweep.py"

static const char *usage =
    "usage: ddpcalib machine -o PROFILE [--topology-out TOPO] [--procs N] [--quick] [--mpirun PATH]\n"
    "\n"
    "Calibrates this machine in one step: the mLSTM kernels, a GEMM grid and copies on the CPU\n"
    "(compute.fp32, with its jitter), the all-reduce between N processes of this host over MPI\n"
    "(comm.links.shm, shares_compute: the cores that compute also communicate), gloo's between\n"
    "them where python3 has PyTorch (comm.links.tcp, the link of --backend gloo) and the host's\n"
    "cost per call (compute.host). Writes one complete profile and, beside it, the topology of\n"
    "this machine (N ranks per node over the link class shm, no NIC), so that\n"
    "  ddpsim predict --profile PROFILE --topology TOPO --precision fp32 --model ...\n"
    "takes them as they are. Run plainly it runs itself under mpirun -np N; under mpirun it uses\n"
    "the processes it is given (one host). For a cluster of such nodes: ddpcalib cluster.\n"
    "\n";

/* What is measured, full or --quick (CI: a few seconds on two cores). */
static void machine_cfgs(int quick, computebench_cfg *cc, commbench_cfg *mc) {
  *cc = (computebench_cfg){.backend = 0, .hidden = {256}, .nhidden = 1, .batch = {8}, .nbatch = 1, .seq = 8,
                           .iters = 10, .warmups = 2, .gemm_max = 512, .copy_max_bytes = COMPUTEBENCH_COPY_MAX_BYTES};
  *mc = (commbench_cfg){.min_bytes = 1024, .max_bytes = 32u << 20, .factor = 2, .iters = 20, .warmups = 5};
  if (quick) {
    cc->hidden[0] = 64, cc->batch[0] = 4, cc->seq = 4, cc->iters = 5, cc->warmups = 1, cc->gemm_max = 64;
    cc->copy_max_bytes = 1 << 20;
    mc->max_bytes = 1u << 20, mc->factor = 4, mc->iters = 5, mc->warmups = 2;
  }
}

/* Plain run, before mpirun: gloo's all-reduce between n processes of this host (calib/gloo_sweep.py
 * with the python3 on PATH) into a temporary nccl-tests log whose path the ranks find in
 * GLOO_LOG_ENV. Without PyTorch's gloo (the helper's exit 3), or if the sweep fails, it says so and
 * the ranks write no comm.links.tcp: ddpsim then prices gloo over shm (docs/calib.md, "machine"). */
static void machine_gloo(int quick, int n) {
  char log[] = "/tmp/ddpcalib-gloo.XXXXXX", helper[4200], np[16];
  snprintf(helper, sizeof helper, "%s/%s", data_dir(), GLOO_HELPER);
  snprintf(np, sizeof np, "%d", n);
  /* quick: 1 KiB .. 16 MiB by 4, 5 calls a size (seconds); else 1 KiB .. 128 MiB by 2, 10 calls */
  char *av[] = {"python3", helper, "--procs", np, "--max-bytes", quick ? "16777216" : "134217728", "--factor", quick ? "4" : "2",
                "--iters", quick ? "5" : "10", "--warmup", quick ? "1" : "3", NULL};
  printf("# comm.links.tcp: gloo's all-reduce between %d processes (%s)\n", n, helper);
  fflush(stdout);
  int fd = mkstemp(log);
  if (fd < 0) {
    printf("# comm.links.tcp: not measured: no temporary file: %s\n", strerror(errno));
    return;
  }
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int status = 0, rc = posix_spawn_file_actions_init(&fa);
  if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, fd, 1);
  if (!rc) rc = posix_spawnp(&pid, "python3", &fa, NULL, av, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd);
  if (!rc && waitpid(pid, &status, 0) < 0) rc = errno;
  if (!rc && WIFEXITED(status) && WEXITSTATUS(status) == 0 && setenv(GLOO_LOG_ENV, log, 1) == 0) return;
  unlink(log);
  if (rc) printf("# comm.links.tcp: not measured: cannot run python3: %s\n", strerror(rc));
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
    printf("# comm.links.tcp: not measured: PyTorch with its gloo backend is not installed for python3\n");
  else printf("# comm.links.tcp: not measured: the gloo sweep failed (exit status %d)\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Rank 0: the plain run's gloo sweep (machine_gloo) fitted into doc as comm.links.tcp, the class
 * ddpsim prices gloo's ring on, with shares_compute (gloo's worker thread runs on the cores that
 * compute, and taking turns fits real DDP best: docs/validation.md). A sweep without a bandwidth
 * to fit, or a fit comm's quality gate refuses, is not written and said so: the profile is whole
 * without it. A log the helper wrote malformed is an error. */
static int record_gloo(cJSON *doc, const commbench_backend *mpi, int accept_poor, err_t *e) {
  const char *path = getenv(GLOO_LOG_ENV);
  if (!path) {
    printf("# comm.links.tcp: not measured (machine sweeps gloo when run plainly, before mpirun)\n");
    return ERR_OK;
  }
  size_t len = 0;
  char *text = txt_read_file(path, &len);
  unlink(path);
  if (!text) return err_set(e, ERR_IO, "%s: cannot read gloo's sweep: %s", path, strerror(errno));
  ncclog l = {0};
  commbench_cfg cfg;
  commbench_result res = {0};
  fit_ring_result fit;
  int rc = ncclog_parse(text, "gloo_sweep.py's log", -1, &l, e);
  free(text);
  if (!rc) rc = ncclog_to_sweep(&l, 1, &cfg, &res, e);
  if (rc) goto done;
  err_t why_fit;
  char what[] = "comm.links." PROFILE_LINK_TCP, why[512];
  if (commfit_ring(&res, l.nranks, 3, &fit, &why_fit)) {
    printf("# %s: not written: %s\n", what, why_fit.msg);
    goto done;
  }
  printf("# %s: gloo, %d processes, %.2f us per step, %.2f GB/s (residual rms %.1f%%)\n", what, l.nranks, fit.lat_s * 1e6,
         fit.bw_Bps / 1e9, fit.rms_rel * 100);
  int keepable, poor = fit_ring_poor(&fit, why, sizeof why, &keepable);
  if (poor && !(keepable && accept_poor)) {
    printf("# %s: poor fit, not written: %s (measure again, or keep it with --accept-poor-fit); gloo is priced over shm\n",
           what, why);
    goto done;
  }
  if (poor) printf("# warning: %s: poor fit kept (--accept-poor-fit): %s\n", what, why);
  commbench_backend b = {.name = "gloo", .nranks = l.nranks, .nhosts = 1};
  snprintf(b.hosts, sizeof b.hosts, "%s", mpi->hosts);
  snprintf(b.devices, sizeof b.devices, "cpu (one rank per process)");
  snprintf(b.library, sizeof b.library, "PyTorch's gloo (calib/gloo_sweep.py)");
  if ((rc = record_comm(doc, PROFILE_LINK_TCP, &b, &cfg, &res, &fit, 1, NULL, e))) goto done;
  cJSON *link = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "comm"), "links"),
                                                 PROFILE_LINK_TCP);
  rc = profilew_str(link, "source",
                    "ddpcalib machine: PyTorch's gloo all-reduce between this host's processes (calib/gloo_sweep.py, in place, "
                    "mean per size), scaled to the ring's 2(n-1) steps and fitted per size regime; shares_compute: gloo's "
                    "worker thread runs on the cores that compute (docs/calib.md)", e);
  if (!rc && poor) rc = calcmd_mark_poor(doc, what, why, e);
done:
  commbench_result_free(&res);
  ncclog_free(&l);
  return rc;
}

/* Runs this command again under mpirun with n processes (never returns on success). */
static int exec_mpirun(cli_ctx *x, const char *mpirun, int n, int argc, char **argv) {
  char self[4096], np[16];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return cli_fail(x, ERR_RUNTIME, "cannot find this program's path: %s", strerror(errno));
  self[len] = 0;
  snprintf(np, sizeof np, "%d", n);
  char **av = calloc((size_t)argc + 6, sizeof *av);
  if (!av) return cli_fail(x, ERR_NOMEM, "out of memory");
  int k = 0;
  av[k++] = (char *)mpirun, av[k++] = "-np", av[k++] = np, av[k++] = "--oversubscribe", av[k++] = self;
  for (int i = 0; i < argc; i++) av[k++] = argv[i]; /* "machine" and its flags */
  fflush(NULL);
  execvp(mpirun, av);
  int err = errno;
  free(av);
  return cli_fail(x, ERR_RUNTIME, "cannot run %s: %s (install Open MPI, or give --mpirun PATH)", mpirun, strerror(err));
}

/* The other ranks wait for rank 0's compute measurement without spinning on a core it uses. */
static void idle_barrier(void) {
  MPI_Request rq;
  int done = 0;
  MPI_Ibarrier(MPI_COMM_WORLD, &rq);
  struct timespec ts = {0, 5 * 1000 * 1000};
  while (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) nanosleep(&ts, NULL);
}

/* Rank 0: compute measured and fitted into doc, and the host's cost per call. */
static int measure_compute(const computebench_cfg *cc, cJSON *doc, int accept_poor, err_t *e) {
  computebench_result res = {0};
  record_compute_fit fit;
  int rc = computebench_run(cc, NULL, NULL, &res, e);
  if (!rc) rc = record_compute(doc, cc, &res, &fit, e);
  if (!rc) {
    /* On the CPU the host is the device: what one call costs it is the ewise fit's launch term. */
    cJSON *host = profilew_obj(profilew_obj(doc, "compute"), "host");
    if (!host) rc = err_set(e, ERR_NOMEM, "out of memory");
    else if (!(rc = profilew_num(host, "launch_s", fit.ewise.launch_s, e)))
      rc = profilew_str(host, "source",
                        "ddpcalib machine: the CPU runs the ops itself; its cost per call is the launch term of the "
                        "compute.fp32.ewise fallback fit", e);
    printf("# compute.fp32: %zu GEMM shapes (%.2f GFLOP/s fitted), %zu copy sizes (%.2f GB/s); host %.2f us per call\n",
           fit.gemm_points, fit.gemm.rate_flops / 1e9, fit.ewise_points, fit.ewise.mem_bw_Bps / 1e9,
           fit.ewise.launch_s * 1e6);
    char dev[512];
    devinfo_summary(&res.dev, dev, sizeof dev);
    printf("# device: %s\n", dev);
    if (fit.jitter_left_out[0]) printf("# warning: %s\n", fit.jitter_left_out);
    if (!rc) rc = calcmd_gate_compute(doc, "fp32", &fit, accept_poor, e); /* compute's gate */
  }
  computebench_result_free(&res);
  return rc;
}

/* The topology of this machine: n ranks over the link class shm, no NIC. The nominal bandwidth is
 * the measured one (the profile's bw_Bps is what ddpsim uses either way). */
static int machine_topo(const char *path, const char *host, int n, double bw_Bps, err_t *e) {
  char text[1024], name[64];
  snprintf(name, sizeof name, "%.40s-%dp", host, n);
  for (char *c = name; *c; c++)
    if (*c == ',' || *c == ' ') *c = '_';
  snprintf(text, sizeof text,
           "ddpsim-topology 1\n"
           "# Written by ddpcalib machine: %d processes of host %s, each a \"GPU\" of ddpsim, joined by\n"
           "# MPI through shared memory (link class shm, as the profile beside this file names it).\n"
           "name %s\ngpus_per_node %d\nintra shm links=1 bw=%.6gBps\nnic none\n",
           n, host, name, n, bw_Bps);
  topo_t *t = NULL;
  int rc = topo_parse(text, path, &t, e);
  topo_destroy(t);
  return rc ? rc : afile_write(path, text, strlen(text), e);
}

/* All ranks: the all-reduce sweep; rank 0 fits it into doc. *bw_Bps: the link's fitted bandwidth. */
static int measure_comm(commbench_backend *b, const commbench_cfg *mc, cJSON *doc, int accept_poor, double *bw_Bps, err_t *e) {
  commbench_result res = {0};
  fit_ring_result fit;
  int rc = commbench_run(mc, b, NULL, NULL, &res, e);
  if (!rc && b->is_root && !(rc = commfit_ring(&res, b->nranks, 3, &fit, e))) {
    printf("# comm.links.shm: %d processes, %.2f us per step, %.2f GB/s (residual rms %.1f%%)\n", b->nranks,
           fit.lat_s * 1e6, fit.bw_Bps / 1e9, fit.rms_rel * 100);
    /* comm's quality gate (calib/fit.h): a link fitted at 577% rms residual is not written silently. */
    char why[512];
    int keepable, poor = fit_ring_poor(&fit, why, sizeof why, &keepable);
    if (!(rc = poor ? calcmd_gate("comm.links.shm", why, keepable, accept_poor, e) : ERR_OK)) {
      rc = record_comm(doc, "shm", b, mc, &res, &fit, 1, NULL, e);
      if (!rc && poor) rc = calcmd_mark_poor(doc, "comm.links.shm", why, e);
    }
    *bw_Bps = fit.bw_Bps;
  }
  commbench_result_free(&res);
  return rc;
}

/* Under mpirun: measure, write, check that ddpsim takes the pair. */
static int run_ranks(cli_ctx *x, int quick, int accept_poor, const char *output, const char *topo_out, int argc, char **argv) {
  int rc = calcmd_mpi_init(x, &argc, &argv);
  if (rc) return rc;
  err_t e = {{0}};
  commbench_backend b = {0};
  cJSON *doc = NULL;
  computebench_cfg cc;
  commbench_cfg mc;
  machine_cfgs(quick, &cc, &mc);
  if ((rc = comm_mpi_open(&b, &e))) goto done;
  if (b.nranks < 2 || b.nhosts != 1) {
    rc = err_set(&e, ERR_USAGE, "machine measures one host's processes: run it with 2 or more processes on one host "
                                "(got %d on %d hosts)", b.nranks, b.nhosts);
    goto done;
  }
  if (b.is_root) {
    printf("# ddpcalib machine: %s, %d processes%s\n", b.hosts, b.nranks, quick ? ", quick" : "");
    fflush(stdout);
    profilew_prov p = calcmd_prov("machine");
    p.devices = "cpu (one rank per process)", p.hosts = b.hosts, p.libraries = b.library;
    doc = profilew_new("measured", &p);
    rc = doc ? measure_compute(&cc, doc, accept_poor, &e) : err_set(&e, ERR_NOMEM, "out of memory");
  }
  idle_barrier(); /* a non-blocking barrier matches only its kind: every rank takes this one */
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD); /* a failed compute ends every rank */
  if (rc) goto done;
  double bw_Bps = 0;
  if ((rc = measure_comm(&b, &mc, doc, accept_poor, &bw_Bps, &e)) || !b.is_root) goto done;
  if ((rc = record_gloo(doc, &b, accept_poor, &e))) goto done;
  if ((rc = profile_check_json(doc, output, PROFILE_WHOLE, &e))) goto done; /* complete, as ddpsim reads it */
  if ((rc = profilew_write(doc, output, &e)) || (rc = machine_topo(topo_out, b.hosts, b.nranks, bw_Bps, &e))) goto done;
  printf("# wrote %s and %s\n# next: ddpsim predict --profile %s --topology %s --precision fp32 --model ...\n", output,
         topo_out, output, topo_out);
done:
  fflush(stdout);
  cJSON_Delete(doc);
  comm_mpi_close(&b);
  MPI_Finalize();
  return calcmd_status(x, rc, &e);
}

int cmd_machine(cli_ctx *x, int argc, char **argv) {
  const char *output = NULL, *topo_out = NULL, *mpirun = "mpirun";
  int quick = 0, procs = 2, accept_poor = 0;
  const cli_opt opts[] = {
      {"output", 'o', CLI_STRING, &output, "FILE", "the profile to write (required)"},
      {"topology-out", 0, CLI_STRING, &topo_out, "FILE", "the topology to write (default: FILE's .json replaced by .topo)"},
      {"procs", 0, CLI_INT, &procs, "N", "processes, each a rank of ddpsim (default 2)", CLI_MIN | CLI_MAX, 2, 256},
      {"quick", 0, CLI_FLAG, &quick, NULL, "small sweeps (a few seconds: CI); the profile is coarser"},
      {"mpirun", 0, CLI_STRING, &mpirun, "PATH", "the MPI launcher (default mpirun)"},
      {"accept-poor-fit", 0, CLI_FLAG, &accept_poor, NULL, CALCMD_ACCEPT_POOR_HELP},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd c = {.usage = usage, .tables = tables};
  int rc = cli_parse(x, &c, argc, argv, NULL, NULL, stdout);
  if (rc) return rc;
  if (!output) return cli_usage(x, "-o PROFILE is required");
  char topo_buf[4096];
  if (!topo_out) {
    size_t n = strlen(output);
    if (n > 5 && strcmp(output + n - 5, ".json") == 0) n -= 5;
    if (n + 6 > sizeof topo_buf) return cli_usage(x, "-o: the file name is too long");
    snprintf(topo_buf, sizeof topo_buf, "%.*s.topo", (int)n, output);
    topo_out = topo_buf;
  }
  if (strcmp(topo_out, output) == 0) return cli_usage(x, "--topology-out must differ from -o");
  if ((rc = calcmd_check_output(x, output)) || (rc = calcmd_check_output(x, topo_out))) return rc;
  if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE")) {
    machine_gloo(quick, procs);
    return exec_mpirun(x, mpirun, procs, argc, argv);
  }
  return run_ranks(x, quick, accept_poor, output, topo_out, argc, argv);
}
