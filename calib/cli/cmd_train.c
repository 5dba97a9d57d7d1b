/* cmd_train: `ddpcalib train`, a real data-parallel training run (calib/train.h) under MPI, printed
 * as a table or JSON (calib/trainreport.h). docs/validation.md. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "calcmd.h"
#include "sim.h"
#include "train.h"
#include "trainreport.h"

static const char *usage =
    "usage: [mpirun -np N] ddpcalib train [--hidden H] [--embed E] [--vocab V] [--seq T] [--batch B]\n"
    "                      [--mode ddp|flat] [--bucket-cap-mb X] [--first-bucket-mb Y] [--rebuilt]\n"
    "                      [--no-sync K] [-n ITERS] [-w WARMUPS] [--optimizer sgd|adam] [--lr LR]\n"
    "                      [--seed S] [--no-poll] [--json] [--dump-params FILE]\n"
    "\n"
    "A real data-parallel training run of the CPU mLSTM (kernels/), one model replica per MPI\n"
    "process, each on its own B sequences of a seeded synthetic byte stream. Gradients are reduced as\n"
    "PyTorch DDP does: DDP's buckets (the code of `ddpsim buckets`), gradients copied into them as they\n"
    "become ready during backward, each ready bucket's MPI_Iallreduce started in bucket order while\n"
    "backward goes on, the final wait, division by the world size, the optimizer step.\n"
    "Prints per-iteration times, each bucket's ready / all-reduce start / end, and throughput.\n"
    "\n";

static const char *const optims[] = {"sgd", "adam", NULL};  /* train_optim's order */

static void report_table(const train_cfg *c, const train_result *r, const double stats[4]) {
  printf("# ddpcalib train: %d rank(s), mlstm H %d E %d V %d T %d, batch %d per rank, %s", r->nranks, c->shape.H,
         c->shape.E, c->shape.V, c->shape.T, c->shape.B, sim_mode_name(c->mode));
  if (c->mode == SIM_MODE_DDP)
    printf(" (bucket cap %g MB, first %g MB%s)", c->bucket_cap_mb, c->first_bucket_mb, c->rebuilt ? ", rebuilt" : "");
  printf(", no_sync %d, %s lr %g, polling %s\n", c->no_sync, c->optim == TRAIN_ADAM ? "adam" : "sgd", c->lr,
         c->poll ? "on" : "off");
  printf("# %zu parameters, %zu gradient bytes, %d bucket(s); %d warm-up + %d timed iterations\n#\n", r->nparams,
         r->grad_bytes, r->nbuckets, c->warmups, c->iters);
  printf("# %4s %10s %10s %10s %10s %10s %10s %9s\n", "iter", "time", "forward", "backward", "wait", "step", "cpu", "loss");
  printf("# %4s %10s %10s %10s %10s %10s %10s %9s\n", "", "(ms)", "(ms)", "(ms)", "(ms)", "(ms)", "(ms)", "");
  for (int i = 0; i < c->iters; i++) {
    const train_iter *it = &r->iter[i];
    printf("  %4d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %9.4f%s\n", i, it->time_s * 1e3, it->forward_s * 1e3,
           it->backward_s * 1e3, it->wait_s * 1e3, it->step_s * 1e3, it->cpu_s * 1e3, it->loss,
           it->synced ? "" : "  (no sync)");
  }
  printf("#\n# bucket (reduction order), medians over synced iterations, from the iteration start\n");
  printf("# %6s %10s %10s %10s %10s %10s  tensors\n", "bucket", "bytes", "ready(ms)", "start(ms)", "end(ms)", "comm(ms)");
  int k = 0;
  for (int b = 0; b < r->nbuckets; b++) {
    double med[3];
    trainreport_bucket_medians(c, r, b, med);
    printf("  %6d %10zu %10.3f %10.3f %10.3f %10.3f  ", b, r->bucket_bytes[b], med[0] * 1e3, med[1] * 1e3,
           med[2] * 1e3, (med[2] - med[1]) * 1e3);
    for (int t = 0; t < r->bucket_ntensors[b]; t++) printf("%s%s", t ? "," : "", trainreport_param_name(r->bucket_tensors[k++]));
    printf("\n");
  }
  double samples = (double)c->iters * r->nranks * c->shape.B;
  printf("#\n# iteration: median %.3f ms, mean %.3f, min %.3f, max %.3f\n", stats[0] * 1e3, stats[1] * 1e3,
         stats[2] * 1e3, stats[3] * 1e3);
  printf("# throughput: %.1f samples/s, %.0f chars/s\n", samples / r->elapsed_s, samples * c->shape.T / r->elapsed_s);
  printf("# CPU share of the least served rank: %.1f%%\n", r->cpu_share * 100);
  printf("# parameters: max difference between ranks %.3g\n", r->param_rank_maxdiff);
}

/* The run, after MPI_Init; rank 0 reports. */
static int run(cli_ctx *x, const train_cfg *c, int json, const char *dump) {
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  train_result r;
  err_t e = {{0}};
  int rc = train_run(c, &r, &e);
  if (rc) {
    rc = cli_fail(x, rc, "rank %d: %s", rank, e.msg);
    /* The other ranks may be waiting in a collective: report, then abort them all. */
    if (nranks > 1) fflush(stdout), MPI_Abort(MPI_COMM_WORLD, cli_exit(x, rc));
    return rc;
  }
  if (rank == 0) {
    double stats[4];
    trainreport_stats(c, &r, stats);
    if (json) {
      cJSON *j = trainreport_json(c, &r, stats);
      char *s = j ? cJSON_Print(j) : NULL;
      if (s) printf("%s\n", s);
      else rc = cli_fail(x, ERR_NOMEM, "out of memory while formatting the report");
      free(s);
      cJSON_Delete(j);
    } else {
      report_table(c, &r, stats);
    }
    if (!rc && dump && trainreport_dump_params(dump, r.params, r.nparams, &e)) rc = cli_fail(x, ERR_IO, "%s", e.msg);
    fflush(stdout);
  }
  train_result_free(&r);
  return rc;
}

int cmd_train(cli_ctx *x, int argc, char **argv) {
  train_cfg c;
  train_cfg_defaults(&c);
  int json = 0, mode = (int)c.mode, optim = (int)c.optim, nopoll = !c.poll;
  long seed = (long)c.seed;
  double lr = c.lr;
  const char *dump = NULL;
  const cli_opt opts[] = {
      {"hidden", 0, CLI_INT, &c.shape.H, "H", "hidden size (default 256)", CLI_MIN | CLI_MAX, 1, 1 << 16},
      {"embed", 0, CLI_INT, &c.shape.E, "E", "embedding size (default 64)", CLI_MIN | CLI_MAX, 1, 1 << 16},
      {"vocab", 0, CLI_INT, &c.shape.V, "V", "vocabulary size, <= 256 (default 256)", CLI_MIN | CLI_MAX, 1, 256},
      {"seq", 0, CLI_INT, &c.shape.T, "T", "sequence length (default 8)", CLI_MIN | CLI_MAX, 1, 1 << 16},
      {"batch", 0, CLI_INT, &c.shape.B, "B", "sequences per process and iteration (default 4)", CLI_MIN | CLI_MAX, 1,
       1 << 16},
      {"mode", 0, CLI_ENUM, &mode, "ddp|flat",
       "ddp: bucketed, overlapping backward; flat: one blocking\nMPI_Allreduce of all gradients after backward (default ddp)",
       .names = sim_mode_names},
      {"bucket-cap-mb", 0, CLI_DOUBLE, &c.bucket_cap_mb, "X", "DDP's bucket_cap_mb (default " CLI_TEXT(REDUCER_DEFAULT_CAP) ")", CLI_MIN | CLI_MAX, SIM_MIN_BUCKET_MB,
       SIM_MAX_BUCKET_MB, .must = SIM_BUCKET_MB_MUST},
      {"first-bucket-mb", 0, CLI_DOUBLE, &c.first_bucket_mb, "Y", "the first bucket's cap (default 1)", CLI_MIN | CLI_MAX, SIM_MIN_BUCKET_MB,
       SIM_MAX_BUCKET_MB, .must = SIM_BUCKET_MB_MUST},
      {"rebuilt", 0, CLI_FLAG, &c.rebuilt, NULL, "buckets rebuilt in gradient-ready order (DDP after iteration 1)"},
      {"no-sync", 0, CLI_INT, &c.no_sync, "K", "communicate (and step) every K iterations (default 1)",
       CLI_MIN | CLI_MAX, 1, CALCMD_MAX_ITERS},
      {"iters", 'n', CLI_INT, &c.iters, "N", "timed iterations (default 20)", CLI_MIN | CLI_MAX, 1, CALCMD_MAX_ITERS,
       .must = "(-n) must be an integer from 1 to 1000000"},
      {"warmup_iters", 'w', CLI_INT, &c.warmups, "W", "untimed iterations first (default 3)", CLI_MIN | CLI_MAX, 0,
       CALCMD_MAX_ITERS, .must = "(-w) must be an integer from 0 to 1000000"},
      {"optimizer", 0, CLI_ENUM, &optim, "sgd|adam", "plain SGD, or Adam (betas 0.9, 0.999, eps 1e-8; default sgd)",
       .names = optims},
      {"lr", 0, CLI_DOUBLE, &lr, "LR", "learning rate (default 0.01)", CLI_MIN_OPEN | CLI_MAX, 0, 100,
       .must = "must be a learning rate above 0 and at most 100 (SGD diverges long before)"},
      {"seed", 0, CLI_LONG, &seed, "S", "parameters and data (default 1234)", CLI_MIN | CLI_MAX, 0, 0x7fffffff},
      {"no-poll", 0, CLI_FLAG, &nopoll, NULL,
       "do not call MPI_Test during backward (no progress of the\nall-reduces until the final wait)"},
      {"json", 0, CLI_FLAG, &json, NULL, "print one JSON object (rank 0)"},
      {"dump-params", 0, CLI_STRING, &dump, "FILE", "rank 0 writes the final parameters (raw float32, layout order)"},
      {0}};
  const cli_opt *tables[] = {opts, NULL};
  const cli_cmd cmd = {.usage = usage, .tables = tables};
  int rc = cli_parse(x, &cmd, argc, argv, NULL, NULL, stdout);
  if (rc) return rc;
  c.mode = (sim_mode)mode;
  c.optim = (train_optim)optim;
  c.poll = !nopoll;
  c.seed = (uint64_t)seed;
  c.lr = (float)lr;
  err_t e = {{0}};
  if ((rc = train_cfg_check(&c, &e))) return cli_usage(x, "%s", e.msg);
  if ((rc = calcmd_check_output(x, dump))) return rc;
  if ((rc = calcmd_mpi_init(x, &argc, &argv))) return rc;
  rc = run(x, &c, json, dump);
  MPI_Finalize();
  return rc;
}
