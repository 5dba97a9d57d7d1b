/* train_cli: `ddpcalib train`, the front end of train.c: flags, MPI, the table or the JSON report.
 * Exit status 0 success, 1 runtime failure, 2 usage error (docs/validation.md). */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <getopt.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "train.h"

static const char *usage_train =
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
    "\n"
    "  --hidden H, --embed E, --vocab V, --seq T   model sizes                  [256, 64, 256, 8]\n"
    "  --batch B            sequences per process and iteration                [4]\n"
    "  --mode ddp|flat      ddp: bucketed, overlapping backward; flat: one blocking\n"
    "                       MPI_Allreduce of all gradients after backward     [ddp]\n"
    "  --bucket-cap-mb X    DDP's bucket_cap_mb                                [25]\n"
    "  --first-bucket-mb Y  the first bucket's cap                             [1]\n"
    "  --rebuilt            buckets rebuilt in gradient-ready order (DDP after iteration 1)\n"
    "  --no-sync K          communicate (and step) every K iterations           [1]\n"
    "  -n, --iters N        timed iterations                                   [20]\n"
    "  -w, --warmup_iters W untimed iterations first                           [3]\n"
    "  --optimizer sgd|adam plain SGD, or Adam (betas 0.9, 0.999, eps 1e-8)      [sgd]\n"
    "  --lr LR              learning rate                                      [0.01]\n"
    "  --seed S             parameters and data                                [1234]\n"
    "  --no-poll            do not call MPI_Test during backward (no progress of the\n"
    "                       all-reduces until the final wait)\n"
    "  --json               print one JSON object (rank 0)\n"
    "  --dump-params FILE   rank 0 writes the final parameters (raw float32, layout order)\n"
    "  -h, --help           this text\n";

static int is_quiet(void) {
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r) r = getenv("PMI_RANK");
  return r && strcmp(r, "0") != 0;
}

static int usage_fail(const err_t *e) {
  if (!is_quiet()) fprintf(stderr, "ddpcalib train: %s\n(ddpcalib train --help for usage)\n", e->msg);
  return err_exit_code(ERR_USAGE);
}

/* The median of v[0..n) (0 if empty), sorting v in place. */
static double median(double *v, int n) {
  if (n < 1) return 0;
  gsl_sort(v, 1, (size_t)n);
  return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

static const char *param_name(int p) {
  static const char *names[MLSTM_NPARAMS] = {"encoder.weight", "decoder.weight", "decoder.bias", "b_ih", "b_hh",
                                             "w_ih_g", "w_ih_v", "w_hh_g", "w_hh_v", "w_mih_g", "w_mih_v",
                                             "w_mhh_g", "w_mhh_v"};
  return p >= 0 && p < MLSTM_NPARAMS ? names[p] : "?";
}

/* Medians over the synced timed iterations of a bucket's three times. */
static void bucket_medians(const train_cfg *c, const train_result *r, int b, double out[3]) {
  double *v = malloc((size_t)c->iters * sizeof *v);
  out[0] = out[1] = out[2] = 0;
  if (!v) return;
  for (int f = 0; f < 3; f++) {
    int n = 0;
    for (int i = 0; i < c->iters; i++) {
      if (!r->iter[i].synced) continue;
      const train_bucket_time *t = &r->bucket[(size_t)i * (size_t)r->nbuckets + (size_t)b];
      v[n++] = f == 0 ? t->ready_s : f == 1 ? t->start_s : t->end_s;
    }
    out[f] = median(v, n);
  }
  free(v);
}

static cJSON *report_json(const train_cfg *c, const train_result *r, const double stats[5]) {
  cJSON *j = cJSON_CreateObject(), *o;
  if (!j) return NULL;
  cJSON_AddStringToObject(j, "tool", "ddpcalib train");
  cJSON_AddNumberToObject(j, "ranks", r->nranks);
  cJSON_AddStringToObject(j, "mode", c->mode == TRAIN_DDP ? "ddp" : "flat");
  o = cJSON_AddObjectToObject(j, "shape");
  cJSON_AddNumberToObject(o, "hidden", c->shape.H);
  cJSON_AddNumberToObject(o, "embed", c->shape.E);
  cJSON_AddNumberToObject(o, "vocab", c->shape.V);
  cJSON_AddNumberToObject(o, "seq", c->shape.T);
  cJSON_AddNumberToObject(o, "batch", c->shape.B);
  cJSON_AddNumberToObject(j, "bucket_cap_mb", c->bucket_cap_mb);
  cJSON_AddNumberToObject(j, "first_bucket_mb", c->first_bucket_mb);
  cJSON_AddBoolToObject(j, "rebuilt", c->rebuilt);
  cJSON_AddNumberToObject(j, "no_sync", c->no_sync);
  cJSON_AddStringToObject(j, "optimizer", c->optim == TRAIN_ADAM ? "adam" : "sgd");
  cJSON_AddNumberToObject(j, "lr", c->lr);
  cJSON_AddBoolToObject(j, "poll", c->poll);
  cJSON_AddNumberToObject(j, "iters", c->iters);
  cJSON_AddNumberToObject(j, "warmups", c->warmups);
  cJSON_AddNumberToObject(j, "params", (double)r->nparams);
  cJSON_AddNumberToObject(j, "grad_bytes", (double)r->grad_bytes);
  cJSON *bs = cJSON_AddArrayToObject(j, "buckets");
  int k = 0;
  for (int b = 0; b < r->nbuckets; b++) {
    cJSON *bo = cJSON_CreateObject();
    cJSON_AddItemToArray(bs, bo);
    cJSON_AddNumberToObject(bo, "index", b);
    cJSON_AddNumberToObject(bo, "bytes", (double)r->bucket_bytes[b]);
    cJSON *names = cJSON_AddArrayToObject(bo, "tensors");
    for (int t = 0; t < r->bucket_ntensors[b]; t++)
      cJSON_AddItemToArray(names, cJSON_CreateString(param_name(r->bucket_tensors[k++])));
    double med[3];
    bucket_medians(c, r, b, med);
    cJSON_AddNumberToObject(bo, "ready_s", med[0]);
    cJSON_AddNumberToObject(bo, "start_s", med[1]);
    cJSON_AddNumberToObject(bo, "end_s", med[2]);
    cJSON_AddNumberToObject(bo, "comm_s", med[2] - med[1]);
  }
  cJSON *its = cJSON_AddArrayToObject(j, "iterations");
  for (int i = 0; i < c->iters; i++) {
    const train_iter *it = &r->iter[i];
    cJSON *io = cJSON_CreateObject();
    cJSON_AddItemToArray(its, io);
    cJSON_AddNumberToObject(io, "time_s", it->time_s);
    cJSON_AddNumberToObject(io, "forward_s", it->forward_s);
    cJSON_AddNumberToObject(io, "backward_s", it->backward_s);
    cJSON_AddNumberToObject(io, "wait_s", it->wait_s);
    cJSON_AddNumberToObject(io, "step_s", it->step_s);
    cJSON_AddNumberToObject(io, "cpu_s", it->cpu_s);
    cJSON_AddNumberToObject(io, "loss", it->loss);
    cJSON_AddBoolToObject(io, "synced", it->synced);
    if (!it->synced) continue;
    cJSON *ib = cJSON_AddArrayToObject(io, "buckets");
    for (int b = 0; b < r->nbuckets; b++) {
      const train_bucket_time *t = &r->bucket[(size_t)i * (size_t)r->nbuckets + (size_t)b];
      cJSON *to = cJSON_CreateObject();
      cJSON_AddItemToArray(ib, to);
      cJSON_AddNumberToObject(to, "ready_s", t->ready_s);
      cJSON_AddNumberToObject(to, "start_s", t->start_s);
      cJSON_AddNumberToObject(to, "end_s", t->end_s);
    }
  }
  o = cJSON_AddObjectToObject(j, "iteration_s");
  cJSON_AddNumberToObject(o, "median", stats[0]);
  cJSON_AddNumberToObject(o, "mean", stats[1]);
  cJSON_AddNumberToObject(o, "min", stats[2]);
  cJSON_AddNumberToObject(o, "max", stats[3]);
  o = cJSON_AddObjectToObject(j, "phases_median_s");
  static const char *ph[5] = {"forward", "backward", "wait", "step", "cpu"};
  for (int f = 0; f < 5; f++) {
    double *v = malloc((size_t)c->iters * sizeof *v);
    if (!v) break;
    for (int i = 0; i < c->iters; i++)
      v[i] = f == 0 ? r->iter[i].forward_s : f == 1 ? r->iter[i].backward_s : f == 2 ? r->iter[i].wait_s
           : f == 3 ? r->iter[i].step_s : r->iter[i].cpu_s;
    cJSON_AddNumberToObject(o, ph[f], median(v, c->iters));
    free(v);
  }
  double samples = (double)c->iters * r->nranks * c->shape.B;
  cJSON_AddNumberToObject(j, "cpu_share", r->cpu_share);
  cJSON_AddNumberToObject(j, "elapsed_s", r->elapsed_s);
  cJSON_AddNumberToObject(j, "samples_per_s", samples / r->elapsed_s);
  cJSON_AddNumberToObject(j, "chars_per_s", samples * c->shape.T / r->elapsed_s);
  cJSON_AddNumberToObject(j, "final_loss", r->iter[c->iters - 1].loss);
  cJSON_AddNumberToObject(j, "param_rank_maxdiff", r->param_rank_maxdiff);
  (void)stats[4];
  return j;
}

static void report_table(const train_cfg *c, const train_result *r, const double stats[5]) {
  printf("# ddpcalib train: %d rank(s), mlstm H %d E %d V %d T %d, batch %d per rank, %s", r->nranks, c->shape.H,
         c->shape.E, c->shape.V, c->shape.T, c->shape.B, c->mode == TRAIN_DDP ? "ddp" : "flat");
  if (c->mode == TRAIN_DDP)
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
    bucket_medians(c, r, b, med);
    printf("  %6d %10zu %10.3f %10.3f %10.3f %10.3f  ", b, r->bucket_bytes[b], med[0] * 1e3, med[1] * 1e3,
           med[2] * 1e3, (med[2] - med[1]) * 1e3);
    for (int t = 0; t < r->bucket_ntensors[b]; t++) printf("%s%s", t ? "," : "", param_name(r->bucket_tensors[k++]));
    printf("\n");
  }
  double samples = (double)c->iters * r->nranks * c->shape.B;
  printf("#\n# iteration: median %.3f ms, mean %.3f, min %.3f, max %.3f\n", stats[0] * 1e3, stats[1] * 1e3,
         stats[2] * 1e3, stats[3] * 1e3);
  printf("# throughput: %.1f samples/s, %.0f chars/s\n", samples / r->elapsed_s, samples * c->shape.T / r->elapsed_s);
  printf("# CPU share of the least served rank: %.1f%%\n", r->cpu_share * 100);
  printf("# parameters: max difference between ranks %.3g\n", r->param_rank_maxdiff);
}

static int dump_params(const char *path, const float *p, size_t n, err_t *e) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) return err_set(e, ERR_IO, "%s: cannot create a temporary file", path);
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    close(fd);
    unlink(tmp);
    return err_set(e, ERR_IO, "%s: cannot write", path);
  }
  int bad = fwrite(p, sizeof *p, n, f) != n;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    return err_set(e, ERR_IO, "%s: cannot write", path);
  }
  return ERR_OK;
}

int train_main(int argc, char **argv) {
  train_cfg c;
  train_cfg_defaults(&c);
  int json = 0;
  const char *dump = NULL;
  err_t e = {{0}};
  long v;
  double d;
  enum {
    O_H = 256, O_E, O_V, O_T, O_B, O_MODE, O_CAP, O_FIRST, O_REBUILT, O_NOSYNC, O_OPT, O_LR, O_SEED, O_NOPOLL,
    O_JSON, O_DUMP
  };
  static const struct option opts[] = {
      {"hidden", required_argument, 0, O_H},       {"embed", required_argument, 0, O_E},
      {"vocab", required_argument, 0, O_V},        {"seq", required_argument, 0, O_T},
      {"batch", required_argument, 0, O_B},        {"mode", required_argument, 0, O_MODE},
      {"bucket-cap-mb", required_argument, 0, O_CAP}, {"first-bucket-mb", required_argument, 0, O_FIRST},
      {"rebuilt", no_argument, 0, O_REBUILT},      {"no-sync", required_argument, 0, O_NOSYNC},
      {"iters", required_argument, 0, 'n'},        {"warmup_iters", required_argument, 0, 'w'},
      {"optimizer", required_argument, 0, O_OPT},  {"lr", required_argument, 0, O_LR},
      {"seed", required_argument, 0, O_SEED},      {"no-poll", no_argument, 0, O_NOPOLL},
      {"json", no_argument, 0, O_JSON},            {"dump-params", required_argument, 0, O_DUMP},
      {"help", no_argument, 0, 'h'},               {0, 0, 0, 0}};
  opterr = 0;
  optind = 1;
  int ch;
  while ((ch = getopt_long(argc, argv, ":n:w:h", opts, NULL)) != -1) {
    int rc = ERR_OK;
    switch (ch) {
    case O_H: rc = parse_int(optarg, "--hidden", 1, 1 << 16, &v, &e), c.shape.H = (int)v; break;
    case O_E: rc = parse_int(optarg, "--embed", 1, 1 << 16, &v, &e), c.shape.E = (int)v; break;
    case O_V: rc = parse_int(optarg, "--vocab", 1, 256, &v, &e), c.shape.V = (int)v; break;
    case O_T: rc = parse_int(optarg, "--seq", 1, 1 << 16, &v, &e), c.shape.T = (int)v; break;
    case O_B: rc = parse_int(optarg, "--batch", 1, 1 << 16, &v, &e), c.shape.B = (int)v; break;
    case O_MODE:
      if (strcmp(optarg, "ddp") == 0) c.mode = TRAIN_DDP;
      else if (strcmp(optarg, "flat") == 0) c.mode = TRAIN_FLAT;
      else rc = err_set(&e, ERR_USAGE, "--mode: '%s' is not ddp or flat", optarg);
      break;
    case O_CAP: rc = parse_double(optarg, "--bucket-cap-mb", &c.bucket_cap_mb, &e); break;
    case O_FIRST: rc = parse_double(optarg, "--first-bucket-mb", &c.first_bucket_mb, &e); break;
    case O_REBUILT: c.rebuilt = 1; break;
    case O_NOSYNC: rc = parse_int(optarg, "--no-sync", 1, 1000000, &v, &e), c.no_sync = (int)v; break;
    case 'n': rc = parse_int(optarg, "-n", 1, 1000000, &v, &e), c.iters = (int)v; break;
    case 'w': rc = parse_int(optarg, "-w", 0, 1000000, &v, &e), c.warmups = (int)v; break;
    case O_OPT:
      if (strcmp(optarg, "adam") == 0) c.optim = TRAIN_ADAM;
      else if (strcmp(optarg, "sgd") == 0) c.optim = TRAIN_SGD;
      else rc = err_set(&e, ERR_USAGE, "--optimizer: '%s' is not adam or sgd", optarg);
      break;
    case O_LR: rc = parse_double(optarg, "--lr", &d, &e), c.lr = (float)d; break;
    case O_SEED: rc = parse_int(optarg, "--seed", 0, 0x7fffffffL, &v, &e), c.seed = (uint64_t)v; break;
    case O_NOPOLL: c.poll = 0; break;
    case O_JSON: json = 1; break;
    case O_DUMP: dump = optarg; break;
    case 'h': fputs(usage_train, stdout); return 0;
    default: {
      const char *arg = optind - 1 < argc ? argv[optind - 1] : "?";
      rc = err_set(&e, ERR_USAGE, ch == ':' ? "flag '%s' needs a value" : "unknown flag '%s'", arg);
    }
    }
    if (rc) return usage_fail(&e);
  }
  if (optind < argc) {
    err_set(&e, ERR_USAGE, "unexpected argument '%s'", argv[optind]);
    return usage_fail(&e);
  }
  if (train_cfg_check(&c, &e)) return usage_fail(&e);

  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "ddpcalib: MPI_Init failed\n");
    return 1;
  }
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  train_result r;
  int rc = train_run(&c, &r, &e);
  if (rc) {
    fprintf(stderr, "ddpcalib: train (rank %d): %s\n", rank, e.msg);
    fflush(stderr);
    if (nranks > 1) MPI_Abort(MPI_COMM_WORLD, 1); /* the other ranks may be waiting in a collective */
    MPI_Finalize();
    return err_exit_code(rc);
  }
  int status = 0;
  if (rank == 0) {
    double *t = malloc((size_t)c.iters * sizeof *t), stats[5] = {0};
    if (t) {
      double sum = 0;
      stats[2] = 1e300;
      for (int i = 0; i < c.iters; i++) {
        t[i] = r.iter[i].time_s;
        sum += t[i];
        if (t[i] < stats[2]) stats[2] = t[i];
        if (t[i] > stats[3]) stats[3] = t[i];
      }
      stats[1] = sum / c.iters;
      stats[0] = median(t, c.iters);
      free(t);
    }
    if (json) {
      cJSON *j = report_json(&c, &r, stats);
      char *s = j ? cJSON_Print(j) : NULL;
      if (s) printf("%s\n", s);
      else status = 1, fprintf(stderr, "ddpcalib: out of memory while formatting the report\n");
      free(s);
      cJSON_Delete(j);
    } else {
      report_table(&c, &r, stats);
    }
    if (dump && dump_params(dump, r.params, r.nparams, &e)) {
      fprintf(stderr, "ddpcalib: %s\n", e.msg);
      status = 1;
    }
    fflush(stdout);
  }
  train_result_free(&r);
  MPI_Finalize();
  return status;
}
